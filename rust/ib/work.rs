// SPDX-License-Identifier: GPL-2.0

//! Delayed work items that call back into feature code ([`DelayedWork`]),
//! scheduled from any context through a [`Kicker`]. The item is
//! cancelled, and waited for, when dropped.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h).

use super::{bindings, compat, sync::IrqSpinLock};
use crate::new_irq_spinlock;
use core::{ffi::c_void, marker::PhantomData, ptr::NonNull};
use kernel::{prelude::*, str::CStr, sync::Arc};

/// What a [`DelayedWork`] runs.
pub trait DelayedRun: Send + Sync + 'static {
    /// Runs the work (process context; may sleep).
    fn run(this: &Arc<Self>);
}

/// Schedules a [`DelayedWork`] from anywhere, also from the code it runs;
/// does nothing once the work is dropped. Cheap to clone.
#[derive(Clone)]
pub struct Kicker(pub(super) Arc<KickerInner>);

#[pin_data]
pub(super) struct KickerInner {
    /// The work's C item while it exists.
    #[pin]
    raw: IrqSpinLock<Option<NonNull<bindings::mlx_ext_dwork>>>,
}

// SAFETY: The pointer is only used under the lock, while the item exists.
unsafe impl Send for KickerInner {}
// SAFETY: As above.
unsafe impl Sync for KickerInner {}

impl Kicker {
    /// A kicker of no work yet: give it to [`DelayedWork::new`].
    pub fn new() -> Result<Self> {
        Ok(Self(Arc::pin_init(
            pin_init!(KickerInner {
                raw <- new_irq_spinlock!(None, "mlx_ext::ib::work::Kicker"),
            }),
            GFP_KERNEL,
        )?))
    }

    /// Runs the work in `delay_ms` milliseconds (or earlier, if it was due
    /// earlier). Any context.
    pub fn kick(&self, delay_ms: u64) {
        self.0.kick(delay_ms);
    }
}

impl KickerInner {
    pub(super) fn kick(&self, delay_ms: u64) {
        let raw = self.raw.lock();
        if let Some(raw) = *raw {
            let ms = kernel::ffi::c_ulong::try_from(delay_ms).unwrap_or(kernel::ffi::c_ulong::MAX);
            // SAFETY: The item exists while it is in the lock (`DelayedWork`
            // takes it out, under the lock, before destroying it).
            unsafe { bindings::mlx_ext_dwork_schedule(raw.as_ptr(), ms) };
        }
    }
}

/// A delayed work item that runs `T::run`; cancelled, and waited for, when
/// dropped.
///
/// # Invariants
///
/// `raw` was made by `mlx_ext_dwork_create` with `target` as its private
/// pointer and [`Self::run_callback`] as its function; `target` came from
/// `Arc::<T>::into_foreign`, and its reference is this object's.
pub struct DelayedWork<T: DelayedRun> {
    raw: NonNull<bindings::mlx_ext_dwork>,
    kicker: Kicker,
    target: *mut c_void,
    _target: PhantomData<Arc<T>>,
}

// SAFETY: The C item may be scheduled and destroyed from any thread; `T` is
// `Send + Sync`.
unsafe impl<T: DelayedRun> Send for DelayedWork<T> {}
// SAFETY: `&DelayedWork` only schedules, which any thread may.
unsafe impl<T: DelayedRun> Sync for DelayedWork<T> {}

impl<T: DelayedRun> DelayedWork<T> {
    /// Makes the work of `target`, scheduled through `kicker` (and its
    /// clones) until it is dropped. It does not run until kicked.
    ///
    /// `name` and `key` are the item's lockdep class, one per kind of work
    /// ([`kernel::static_lock_class!`]): waiting for the item counts as
    /// taking it.
    pub fn new(
        target: Arc<T>,
        kicker: &Kicker,
        name: &'static CStr,
        key: compat::LockClass,
    ) -> Result<Self> {
        let target = compat::into_foreign(target);
        let key = compat::lock_class_ptr(key).cast();
        // SAFETY: `run_callback` takes the private pointer as the `T` of
        // `target`, whose reference this object keeps until `drop` has
        // cancelled the item. `name` and `key` are static, as lockdep
        // requires.
        let raw = unsafe {
            bindings::mlx_ext_dwork_create(
                Some(Self::run_callback),
                target,
                name.as_char_ptr(),
                key,
            )
        };
        let Some(raw) = NonNull::new(raw) else {
            // SAFETY: From `into_foreign` just above, given back once.
            drop(unsafe { compat::from_foreign::<Arc<T>>(target) });
            return Err(ENOMEM);
        };
        *kicker.0.raw.lock() = Some(raw);
        // INVARIANT: Made just above.
        Ok(Self {
            raw,
            kicker: kicker.clone(),
            target,
            _target: PhantomData,
        })
    }

    /// The C item's function.
    ///
    /// # Safety
    ///
    /// Called by the C item only, with its private pointer.
    unsafe extern "C" fn run_callback(priv_: *mut c_void) {
        // SAFETY: `priv_` is the `target` of a live `DelayedWork` (its drop
        // cancels the item and waits for this call first), whose reference
        // it holds. `ArcBorrow` gives the callee an `Arc` to clone.
        let this = unsafe { compat::borrow_foreign::<Arc<T>>(priv_) };
        let arc: Arc<T> = this.into();
        T::run(&arc);
    }
}

impl<T: DelayedRun> Drop for DelayedWork<T> {
    fn drop(&mut self) {
        // No kick reaches the item from now on.
        *self.kicker.0.raw.lock() = None;
        // SAFETY: Made by `mlx_ext_dwork_create` (invariant), destroyed only
        // here; nothing schedules it any more. It waits for a run in progress.
        unsafe { bindings::mlx_ext_dwork_destroy(self.raw.as_ptr()) };
        // SAFETY: From `into_foreign` in `new` (invariant), given back
        // once; the item that used it is gone.
        drop(unsafe { compat::from_foreign::<Arc<T>>(self.target) });
    }
}
