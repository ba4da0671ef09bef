// SPDX-License-Identifier: GPL-2.0

//! The objects of a driver: ib_core's struct first, the driver's data after
//! it, as C drivers lay them out (`INIT_RDMA_OBJ_SIZE`).

use super::super::bindings;
use super::types::QpRef;
use super::Driver;
use core::{mem::MaybeUninit, ptr::NonNull};
use kernel::{
    init::InPlaceInit,
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
        // SAFETY: the size covers `struct ib_device`, which is at offset 0
        // (`repr(C)`, first field), as `ib_alloc_device` requires.
        let raw = unsafe { bindings::_ib_alloc_device(core::mem::size_of::<Self>()) };
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
        // SAFETY: per the caller, the data is initialised and lives for 'a.
        unsafe { &(*obj.as_ptr()).data }
    }

    /// The data of the device of an op.
    ///
    /// # Safety
    ///
    /// `ib` is the `ib_device` of a `DevObj<T>` ib_core passed to an op of
    /// `T`, valid for `'a`.
    pub(super) unsafe fn from_ib<'a>(ib: *mut bindings::ib_device) -> &'a T {
        // SAFETY: the device is at offset 0 of its `DevObj<T>`.
        unsafe { Self::data(NonNull::new_unchecked(ib.cast())) }
    }

    /// Drops the data and frees the device.
    ///
    /// # Safety
    ///
    /// `obj` was made by `alloc`, is not registered and no op runs on it.
    pub(super) unsafe fn free(obj: NonNull<Self>) {
        // SAFETY: per the caller, nothing uses the data any more.
        unsafe { core::ptr::drop_in_place(core::ptr::addr_of_mut!((*obj.as_ptr()).data)) };
        // SAFETY: made by `_ib_alloc_device`; ib_core frees it when its last
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
            /// What this layer keeps for the object.
            layer: MaybeUninit<$layer>,
            data: MaybeUninit<T::$data>,
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
                // SAFETY: per the caller; `Self` starts with the C struct.
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
                // SAFETY: the object is ours while its create op runs, and
                // ib_core never reads past its own struct.
                unsafe {
                    core::ptr::addr_of!(self.layer)
                        .cast_mut()
                        .cast::<$layer>()
                        .write(layer);
                    core::ptr::addr_of!(self.data)
                        .cast_mut()
                        .cast::<T::$data>()
                        .write(data)
                };
            }

            /// What this layer keeps for the object.
            #[allow(dead_code)]
            pub(super) fn layer(&self) -> &$layer {
                // SAFETY: as for `data`.
                unsafe { self.layer.assume_init_ref() }
            }

            /// Drops the driver's data and this layer's.
            ///
            /// # Safety
            ///
            /// The data is initialised, and nothing uses it after this.
            pub(super) unsafe fn drop_data(&self) {
                // SAFETY: per the caller.
                unsafe {
                    core::ptr::drop_in_place(
                        core::ptr::addr_of!(self.data).cast_mut().cast::<T::$data>(),
                    );
                    core::ptr::drop_in_place(
                        core::ptr::addr_of!(self.layer).cast_mut().cast::<$layer>(),
                    );
                };
            }

            /// The driver's data.
            pub fn data(&self) -> &T::$data {
                // SAFETY: references to the object are only handed to the
                // driver between `init` and `drop_data` (`from_raw`).
                unsafe { self.data.assume_init_ref() }
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

impl<T: Driver> Qp<T> {
    /// The QP as completions name it.
    pub fn as_ref(&self) -> QpRef {
        // `Opaque::get` is never null.
        QpRef(NonNull::new(self.raw()).unwrap_or(NonNull::dangling()))
    }
}

/// A memory region of a device of driver `T`, allocated by this layer.
#[repr(C)]
pub struct Mr<T: Driver> {
    ib: Opaque<bindings::ib_mr>,
    data: T::Mr,
}

impl<T: Driver> Mr<T> {
    /// Allocates an MR with the driver's data and keys.
    pub(super) fn alloc(data: T::Mr, lkey: u32, rkey: u32) -> Result<*mut bindings::ib_mr> {
        let mr = KBox::new(
            Self {
                ib: Opaque::new(bindings::ib_mr {
                    lkey,
                    rkey,
                    ..Default::default()
                }),
                data,
            },
            GFP_KERNEL,
        )?;
        Ok(KBox::into_raw(mr).cast())
    }

    /// The MR ib_core passed to an op.
    ///
    /// # Safety
    ///
    /// `raw` was returned by [`Mr::alloc`] for `T`, not freed, valid for `'a`.
    pub(super) unsafe fn from_raw<'a>(raw: *mut bindings::ib_mr) -> &'a Self {
        // SAFETY: per the caller; `Self` starts with the C struct.
        unsafe { &*raw.cast::<Self>() }
    }

    /// Frees an MR made by [`Mr::alloc`].
    ///
    /// # Safety
    ///
    /// As `from_raw`, and nothing uses it afterwards.
    pub(super) unsafe fn free(raw: *mut bindings::ib_mr) {
        // SAFETY: made by `KBox::into_raw` in `alloc`.
        drop(unsafe { KBox::from_raw(raw.cast::<Self>()) });
    }

    /// The driver's data.
    pub fn data(&self) -> &T::Mr {
        &self.data
    }
}

/// Calls a CQ's completion handler, as a device's interrupt does.
///
/// Cheap to clone; keep one wherever completions are made. Once the CQ is
/// destroyed, [`CqNotifier::notify`] does nothing.
#[derive(Clone)]
pub struct CqNotifier(Arc<NotifierInner>);

#[pin_data]
struct NotifierInner {
    cq: NonNull<bindings::ib_cq>,
    /// Whether the CQ exists; held while its handler runs.
    #[pin]
    alive: SpinLock<bool>,
}

// SAFETY: `cq` is only dereferenced under `alive`, while the CQ exists.
unsafe impl Send for NotifierInner {}
// SAFETY: as above.
unsafe impl Sync for NotifierInner {}

impl CqNotifier {
    pub(super) fn new(cq: *mut bindings::ib_cq) -> Result<Self> {
        let cq = NonNull::new(cq).ok_or(EINVAL)?;
        Ok(Self(Arc::pin_init(
            pin_init!(NotifierInner {
                cq,
                alive <- new_spinlock!(true, "mlx_ext::ib::CqNotifier"),
            }),
            GFP_KERNEL,
        )?))
    }

    /// Runs the CQ's completion handler (`cq->comp_handler`), unless the CQ
    /// was destroyed. The driver calls it when a completion arrives on an
    /// armed CQ, and disarms the CQ.
    pub fn notify(&self) {
        let alive = self.0.alive.lock();
        if !*alive {
            return;
        }
        let cq = self.0.cq.as_ptr();
        // SAFETY: the CQ exists while `alive` is true, and `kill` waits for
        // this lock before ib_core frees it. ib_core set `comp_handler` and
        // `cq_context` before the CQ could have completions (before it
        // handed the CQ to its ULP); completion handlers may run in atomic
        // context (drivers call them from interrupts).
        unsafe {
            if let Some(handler) = (*cq).comp_handler {
                handler(cq, (*cq).cq_context);
            }
        }
    }

    /// Stops the notifier: the CQ is being destroyed.
    pub(super) fn kill(&self) {
        *self.0.alive.lock() = false;
    }
}
