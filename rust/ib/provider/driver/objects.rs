// SPDX-License-Identifier: GPL-2.0

//! The objects of a driver: ib_core's struct first, the driver's data after
//! it, as C drivers lay them out (`INIT_RDMA_OBJ_SIZE`).

use super::types::{AhAttr, MrKeys, QpRef};
use super::Driver;
use crate::ib::bindings;
use core::{
    cell::UnsafeCell,
    mem::MaybeUninit,
    ptr::NonNull,
    sync::atomic::{AtomicBool, AtomicU32, Ordering},
};
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
    types::Opaque,
};

/// The largest alignment ib_core's allocations (`kzalloc`) give.
const KMALLOC_ALIGN: usize = 8;

/// A device: `struct ib_device`, then the driver's data.
#[repr(C)]
pub(super) struct DevObj<T: Driver> {
    ib: Opaque<bindings::ib_device>,
    data: T,
}

impl<T: Driver> DevObj<T> {
    const LAYOUT_OK: () = assert!(core::mem::align_of::<Self>() <= KMALLOC_ALIGN);

    /// Allocates a device with `_ib_alloc_device` and moves `data` in.
    pub(super) fn alloc(data: T) -> Result<NonNull<Self>> {
        #[allow(clippy::let_unit_value)]
        let () = Self::LAYOUT_OK;
        // SAFETY: The size covers `struct ib_device`, which is at offset 0
        // (`repr(C)`, first field), as `ib_alloc_device` requires.
        let raw = unsafe { bindings::mlx_ext_ib_alloc_device(core::mem::size_of::<Self>()) };
        let obj = NonNull::new(raw.cast::<Self>()).ok_or(ENOMEM)?;
        // SAFETY: `obj` is a fresh allocation of `Self`'s size and (checked
        // above) alignment; `data` is not initialised yet.
        unsafe { core::ptr::addr_of_mut!((*obj.as_ptr()).data).write(data) };
        Ok(obj)
    }

    /// The `ib_device` of `obj`.
    pub(super) fn ib(obj: NonNull<Self>) -> *mut bindings::ib_device {
        obj.as_ptr().cast()
    }

    /// The data of a device made by [`DevObj::alloc`].
    ///
    /// # Safety
    ///
    /// `obj` was made by `alloc` and not freed, for `'a`.
    pub(super) unsafe fn data<'a>(obj: NonNull<Self>) -> &'a T {
        // SAFETY: Per the caller, the data is initialised and lives for 'a.
        unsafe { &(*obj.as_ptr()).data }
    }

    /// The data of the device of an op.
    ///
    /// # Safety
    ///
    /// `ib` is the `ib_device` of a `DevObj<T>` ib_core passed to an op of
    /// `T`, valid for `'a`.
    pub(super) unsafe fn from_ib<'a>(ib: *mut bindings::ib_device) -> &'a T {
        // SAFETY: The device is at offset 0 of its `DevObj<T>`.
        unsafe { Self::data(NonNull::new_unchecked(ib.cast())) }
    }

    /// Drops the data and frees the device.
    ///
    /// # Safety
    ///
    /// `obj` was made by `alloc`, is not registered and no op runs on it.
    pub(super) unsafe fn free(obj: NonNull<Self>) {
        // SAFETY: Per the caller, nothing uses the data any more.
        unsafe { core::ptr::drop_in_place(core::ptr::addr_of_mut!((*obj.as_ptr()).data)) };
        // SAFETY: Made by `_ib_alloc_device`; ib_core frees it when its last
        // reference goes, with no driver code (`ib_device_release`).
        unsafe { bindings::ib_dealloc_device(obj.as_ptr().cast()) };
    }
}

macro_rules! core_object {
    ($(#[$doc:meta])* $name:ident, $raw:ident, $data:ident, $layer:ty) => {
        $(#[$doc])*
        #[repr(C)]
        pub struct $name<T: Driver> {
            ib: Opaque<bindings::$raw>,
            /// What this layer keeps for the object (written through
            /// `&self` by `init` and `drop_data`: in an `UnsafeCell`).
            layer: UnsafeCell<MaybeUninit<$layer>>,
            data: UnsafeCell<MaybeUninit<T::$data>>,
        }

        impl<T: Driver> $name<T> {
            /// ib_core allocates these with `kzalloc(size_of)` and puts its
            /// struct at offset 0.
            pub(super) const SIZE: usize = {
                assert!(core::mem::align_of::<Self>() <= KMALLOC_ALIGN);
                core::mem::size_of::<Self>()
            };

            /// The object ib_core passed to an op.
            ///
            /// # Safety
            ///
            /// `raw` is an object of this type that ib_core allocated with
            /// [`Self::SIZE`] for `T`'s device, valid for `'a`; its data is
            /// initialised unless `'a` only covers the call that initialises
            /// it (and only `init` is used then).
            pub(super) unsafe fn from_raw<'a>(raw: *mut bindings::$raw) -> &'a Self {
                // SAFETY: Per the caller; `Self` starts with the C struct.
                unsafe { &*raw.cast::<Self>() }
            }

            // Not every object type uses every accessor.
            #[allow(dead_code)]
            pub(super) fn raw(&self) -> *mut bindings::$raw {
                self.ib.get()
            }

            /// Moves the driver's data in.
            ///
            /// # Safety
            ///
            /// The data is not initialised, and nothing reads it before this.
            pub(super) unsafe fn init(&self, layer: $layer, data: T::$data) {
                // SAFETY: The object is ours while its create op runs, and
                // ib_core never reads past its own struct; the fields are
                // `UnsafeCell`s and nothing else refers to them yet.
                unsafe {
                    (*self.layer.get()).write(layer);
                    (*self.data.get()).write(data);
                };
            }

            /// What this layer keeps for the object.
            #[allow(dead_code)]
            pub(super) fn layer(&self) -> &$layer {
                // SAFETY: As for `data`.
                unsafe { (*self.layer.get()).assume_init_ref() }
            }

            /// Drops the driver's data and this layer's.
            ///
            /// # Safety
            ///
            /// The data is initialised, and nothing uses it after this.
            pub(super) unsafe fn drop_data(&self) {
                // SAFETY: Per the caller: initialised, and no reference to
                // either field is used afterwards.
                unsafe {
                    (*self.data.get()).assume_init_drop();
                    (*self.layer.get()).assume_init_drop();
                };
            }

            /// The driver's data.
            pub fn data(&self) -> &T::$data {
                // SAFETY: References to the object are only handed to the
                // driver between `init` and `drop_data` (`from_raw`), which
                // alone write the cell.
                unsafe { (*self.data.get()).assume_init_ref() }
            }
        }
    };
}

core_object!(
    /// A protection domain of a device of driver `T`.
    Pd,
    ib_pd,
    Pd,
    ()
);
core_object!(
    /// A completion queue of a device of driver `T`.
    Cq,
    ib_cq,
    Cq,
    CqNotifier
);
core_object!(
    /// A queue pair of a device of driver `T`.
    Qp,
    ib_qp,
    Qp,
    ()
);

core_object!(
    /// An address handle of a device of driver `T`.
    Ah,
    ib_ah,
    Ah,
    AhAttr
);

impl<T: Driver> Ah<T> {
    /// The address it was made for.
    pub fn attr(&self) -> AhAttr {
        *self.layer()
    }
}

impl<T: Driver> Qp<T> {
    /// The QP as completions name it.
    pub fn as_ref(&self) -> QpRef {
        // `Opaque::get` is never null.
        QpRef(NonNull::new(self.raw()).unwrap_or(NonNull::dangling()))
    }
}

/// A memory region of a device of driver `T`, allocated by this layer.
#[repr(C)]
#[pin_data]
pub struct Mr<T: Driver> {
    ib: Opaque<bindings::ib_mr>,
    /// The pages `ib_sg_to_pages` finds, for `map_mr_sg` (FRWR MRs only;
    /// empty for others).
    #[pin]
    pages: SpinLock<PageBuf>,
    data: T::Mr,
}

/// The page list of an FRWR MR being mapped: `max` slots, `used` of them
/// filled by the current `map_mr_sg`.
pub(super) struct PageBuf {
    pub(super) slots: KVec<u64>,
    pub(super) used: usize,
}

impl<T: Driver> Mr<T> {
    /// Allocates an MR with the driver's data and keys, and room for
    /// `max_pages` pages.
    pub(super) fn alloc(
        data: T::Mr,
        keys: MrKeys,
        max_pages: usize,
    ) -> Result<*mut bindings::ib_mr> {
        let slots = KVec::from_elem(0u64, max_pages, GFP_KERNEL)?;
        let mr = KBox::pin_init(
            pin_init!(Self {
                ib: Opaque::new(bindings::ib_mr {
                    lkey: keys.lkey,
                    rkey: keys.rkey,
                    ..Default::default()
                }),
                pages <- new_spinlock!(PageBuf { slots, used: 0 }, "mlx_ext::ib::Mr::pages"),
                data,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: The MR is never moved out of its box: `free` rebuilds the
        // pinned box from this pointer.
        Ok(KBox::into_raw(unsafe { Pin::into_inner_unchecked(mr) }).cast())
    }

    /// The MR ib_core passed to an op.
    ///
    /// # Safety
    ///
    /// `raw` was returned by [`Mr::alloc`] for `T`, not freed, valid for `'a`.
    pub(super) unsafe fn from_raw<'a>(raw: *mut bindings::ib_mr) -> &'a Self {
        // SAFETY: Per the caller; `Self` starts with the C struct.
        unsafe { &*raw.cast::<Self>() }
    }

    /// Frees an MR made by [`Mr::alloc`].
    ///
    /// # Safety
    ///
    /// As `from_raw`, and nothing uses it afterwards.
    pub(super) unsafe fn free(raw: *mut bindings::ib_mr) {
        // SAFETY: Made by `KBox::into_raw` in `alloc`.
        drop(unsafe { KBox::from_raw(raw.cast::<Self>()) });
    }

    pub(super) fn page_buf(&self) -> &SpinLock<PageBuf> {
        &self.pages
    }

    /// The driver's data.
    pub fn data(&self) -> &T::Mr {
        &self.data
    }
}

/// Calls a CQ's completion handler, and its event handler on overflow, as a
/// device's interrupt does.
///
/// Cheap to clone; keep one wherever completions are made. Call
/// [`CqNotifier::notify`] only for a CQ the ULP armed (`req_notify_cq`):
/// `ib_alloc_cq` sets the handler after `create_cq` returns and arms the CQ
/// after that. Once the CQ is destroyed, the notifier does nothing.
#[derive(Clone)]
pub struct CqNotifier(Arc<NotifierInner>);

struct NotifierInner {
    cq: NonNull<bindings::ib_cq>,
    /// Whether the CQ exists.
    alive: AtomicBool,
    /// Handlers running now; `kill` waits for none.
    running: AtomicU32,
}

// SAFETY: `cq` is only dereferenced while `alive` and counted in `running`,
// which `kill` waits out before ib_core frees the CQ.
unsafe impl Send for NotifierInner {}
// SAFETY: As above.
unsafe impl Sync for NotifierInner {}

impl CqNotifier {
    pub(super) fn new(cq: *mut bindings::ib_cq) -> Result<Self> {
        let cq = NonNull::new(cq).ok_or(EINVAL)?;
        Ok(Self(Arc::new(
            NotifierInner {
                cq,
                alive: AtomicBool::new(true),
                running: AtomicU32::new(0),
            },
            GFP_KERNEL,
        )?))
    }

    /// Runs `f` with the CQ, if it still exists. No lock is held: a handler
    /// may post, which may complete and notify again.
    fn with_cq(&self, f: impl FnOnce(*mut bindings::ib_cq)) {
        let n = &self.0;
        // Announce first, then check: `kill` clears `alive` first, then
        // waits for `running` to drop to zero (both sequentially
        // consistent), so either this sees `alive` false or `kill` sees us.
        n.running.fetch_add(1, Ordering::SeqCst);
        if n.alive.load(Ordering::SeqCst) {
            f(n.cq.as_ptr());
        }
        n.running.fetch_sub(1, Ordering::SeqCst);
    }

    /// Runs the CQ's completion handler (`cq->comp_handler`), unless the CQ
    /// was destroyed. Any context.
    pub fn notify(&self) {
        self.with_cq(|cq| {
            // SAFETY: The CQ exists (`with_cq`); the handler was set before
            // the CQ was armed, which is when the driver calls this. ib_core's
            // handlers and ULPs' may run in any context (drivers call them
            // from interrupts).
            unsafe {
                if let Some(handler) = (*cq).comp_handler {
                    handler(cq, (*cq).cq_context);
                }
            }
        });
    }

    /// Raises `IB_EVENT_CQ_ERR` on the CQ (`cq->event_handler`), as an
    /// adapter does when a CQ overflows. Any context.
    pub fn error(&self) {
        self.with_cq(|cq| {
            // SAFETY: As for `notify`; `event_handler` and `cq_context` were
            // set by ib_core when it made the CQ.
            unsafe {
                if let Some(handler) = (*cq).event_handler {
                    let mut event = bindings::ib_event {
                        device: (*cq).device,
                        event: bindings::ib_event_type_IB_EVENT_CQ_ERR,
                        ..Default::default()
                    };
                    event.element.cq = cq;
                    handler(&mut event, (*cq).cq_context);
                }
            }
        });
    }

    /// Stops the notifier: the CQ is being destroyed (process context).
    /// Returns once no handler runs.
    pub(super) fn kill(&self) {
        self.0.alive.store(false, Ordering::SeqCst);
        while self.0.running.load(Ordering::SeqCst) != 0 {
            crate::ib::msleep(1);
        }
    }
}
