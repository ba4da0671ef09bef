// SPDX-License-Identifier: GPL-2.0

//! A spinlock that disables interrupts while held (`spin_lock_irqsave`),
//! which the 6.12 kernel crate lacks: for data that verbs may touch from any
//! context (posting and polling may happen in softirq or hardirq context,
//! as ib_core's `IB_POLL_SOFTIRQ` CQs do).
//!
//! C header: [`include/linux/spinlock.h`](srctree/include/linux/spinlock.h).

use super::bindings;
use kernel::sync::lock::{Backend, Lock};

/// A spinlock taken with interrupts disabled.
pub type IrqSpinLock<T> = Lock<T, IrqSpinLockBackend>;

/// Makes an [`IrqSpinLock`] initialiser with a static lock class.
#[macro_export]
macro_rules! new_irq_spinlock {
    ($inner:expr, $name:literal $(,)?) => {
        $crate::ib::sync::IrqSpinLock::new(
            $inner,
            ::kernel::c_str!($name),
            ::kernel::static_lock_class!(),
        )
    };
}

/// The backend of [`IrqSpinLock`].
pub struct IrqSpinLockBackend;

// SAFETY: `lock` and `unlock` take and release the spinlock that `init` set
// up, with interrupts disabled in between: only one owner at a time.
unsafe impl Backend for IrqSpinLockBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = kernel::ffi::c_ulong;

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: per the trait's contract, `ptr` is valid for writes and
        // `name` and `key` live forever.
        unsafe { kernel::bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: initialised (the trait's contract); the two crates'
        // bindings name the same C type.
        unsafe { bindings::mlx_ext_spin_lock_irqsave(ptr.cast()) }
    }

    unsafe fn unlock(ptr: *mut Self::State, flags: &Self::GuardState) {
        // SAFETY: the caller owns the lock, taken by `lock`, which returned
        // `flags`.
        unsafe { bindings::mlx_ext_spin_unlock_irqrestore(ptr.cast(), *flags) }
    }
}
