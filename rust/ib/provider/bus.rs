// SPDX-License-Identifier: GPL-2.0

//! The simulator's bus, `/sys/bus/mlx_ext_sim/`: its control files and the
//! struct device of each simulated adapter.
//!
//! C header: [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).
//!
//! The 6.12 kernel crate has no bus abstraction; `rust/helpers/simbus.c`
//! registers the bus, calls [`BusOps`] for writes to `new_device` and
//! `del_device`, and makes the devices. There is one such bus per kernel:
//! only one [`Bus`] may exist at a time.

use crate::ib::bindings;
use core::ffi::c_void;
use core::ptr::NonNull;
use kernel::ffi::c_char;
use kernel::{error::to_result, prelude::*, str::CStr};

/// What the bus's control files do.
pub trait BusOps: Send + Sync + 'static {
    /// Takes a write to `new_device`.
    fn new_device(&self, text: &[u8]) -> Result;

    /// Takes a write to `del_device`.
    fn del_device(&self, text: &[u8]) -> Result;

    /// The PCI parent `parent` is being unbound from the simulator's PCI
    /// driver: drop every [`BusDevice`] that is it before returning.
    fn parent_removed(&self, parent: ParentId);

    /// Called first when the bus goes: refuse every later write, and delete
    /// every device (drop every [`BusDevice`]) before returning.
    fn shutdown(&self);
}

/// The registered bus, served by `T`; unregistered on drop.
///
/// # Invariants
///
/// The bus is registered with `data` as its private pointer.
pub struct Bus<T: BusOps> {
    data: KBox<T>,
}

impl<T: BusOps> Bus<T> {
    const OPS: bindings::mlx_ext_simbus_ops = bindings::mlx_ext_simbus_ops {
        new_device: Some(Self::new_device_callback),
        del_device: Some(Self::del_device_callback),
        parent_removed: Some(Self::parent_removed_callback),
    };

    /// Registers the bus.
    pub fn new(data: T) -> Result<Self> {
        let data = KBox::new(data, GFP_KERNEL)?;
        let priv_: *const T = &*data;
        // SAFETY: The ops are static; `priv_` stays valid until `drop`
        // unregisters the bus, after which no callback runs.
        to_result(unsafe {
            bindings::mlx_ext_simbus_register(&Self::OPS, priv_.cast_mut().cast())
        })?;
        // INVARIANT: Registered above.
        Ok(Self { data })
    }

    /// The data serving the bus.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// # Safety
    ///
    /// Called by the C helper only, with the private pointer of a live `Bus<T>`
    /// and a NUL-terminated buffer of `len` bytes.
    unsafe extern "C" fn new_device_callback(
        priv_: *mut c_void,
        buf: *const c_char,
        len: usize,
    ) -> isize {
        // SAFETY: Per the function's contract.
        let (data, text) = unsafe { (&*priv_.cast::<T>(), text(buf, len)) };
        match data.new_device(text) {
            Ok(()) => len.try_into().unwrap_or(isize::MAX),
            Err(e) => e.to_errno() as isize,
        }
    }

    /// # Safety
    ///
    /// As `new_device_callback`.
    unsafe extern "C" fn del_device_callback(
        priv_: *mut c_void,
        buf: *const c_char,
        len: usize,
    ) -> isize {
        // SAFETY: Per the function's contract.
        let (data, text) = unsafe { (&*priv_.cast::<T>(), text(buf, len)) };
        match data.del_device(text) {
            Ok(()) => len.try_into().unwrap_or(isize::MAX),
            Err(e) => e.to_errno() as isize,
        }
    }

    /// # Safety
    ///
    /// Called by the C helper only, with the private pointer of a live
    /// `Bus<T>`.
    unsafe extern "C" fn parent_removed_callback(
        priv_: *mut c_void,
        parent: *mut bindings::device,
    ) {
        // SAFETY: Per the function's contract.
        let data = unsafe { &*priv_.cast::<T>() };
        data.parent_removed(ParentId(parent as usize));
    }
}

/// Which struct device a [`BusDevice`] is, to compare; never dereferenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParentId(usize);

/// # Safety
///
/// `buf` points to `len` readable bytes, valid for `'a`.
unsafe fn text<'a>(buf: *const c_char, len: usize) -> &'a [u8] {
    // SAFETY: Per the caller.
    unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), len) }
}

impl<T: BusOps> Drop for Bus<T> {
    fn drop(&mut self) {
        self.data.shutdown();
        // SAFETY: Registered (invariant). This waits for control writes in
        // progress (which `shutdown` made refuse) and for the release of
        // every device; no callback runs after it.
        unsafe { bindings::mlx_ext_simbus_unregister() };
    }
}

/// A simulated adapter's parent: its struct device on the bus,
/// `mlxsim<ID>`, deleted on drop; or a PCI function bound to the
/// simulator's PCI driver, whose reference is dropped on drop.
///
/// # Invariants
///
/// `raw` was returned by `mlx_ext_simdev_add` and not deleted yet (`pci`
/// false), or by `mlx_ext_simpci_get` and not put yet (`pci` true).
pub struct BusDevice {
    raw: NonNull<bindings::device>,
    pci: bool,
}

// SAFETY: The device may be deleted from any thread; `&BusDevice` only reads
// its address.
unsafe impl Send for BusDevice {}
// SAFETY: As above.
unsafe impl Sync for BusDevice {}

impl BusDevice {
    /// Adds device `mlxsim<id>` to the bus, telling mlx_ext it has
    /// `num_vfs` VFs (`include/mlx_ext/sim.h`). The bus must be registered
    /// (it is while a [`BusOps`] callback runs).
    pub fn new(id: u32, num_vfs: u16) -> Result<Self> {
        // SAFETY: A pure C call; the name is formatted by the helper.
        let raw =
            kernel::error::from_err_ptr(unsafe { bindings::mlx_ext_simdev_add(id, num_vfs) })?;
        // INVARIANT: Made above; an error pointer was turned into `Err`.
        Ok(Self {
            raw: NonNull::new(raw).ok_or(ENOMEM)?,
            pci: false,
        })
    }

    /// The PCI function `name` (`DDDD:BB:DD.F`), if it is bound to the
    /// simulator's PCI driver: `ENOENT` if there is no such function,
    /// `ENODEV` if it is not bound to the simulator.
    pub fn pci(name: &CStr) -> Result<Self> {
        // SAFETY: `name` is NUL-terminated; the helper takes a reference.
        let raw = kernel::error::from_err_ptr(unsafe {
            bindings::mlx_ext_simpci_get(name.as_char_ptr())
        })?;
        // INVARIANT: From `mlx_ext_simpci_get`, an error turned into `Err`.
        Ok(Self {
            raw: NonNull::new(raw).ok_or(ENOENT)?,
            pci: true,
        })
    }

    /// Which device it is.
    pub fn id(&self) -> ParentId {
        ParentId(self.raw.as_ptr() as usize)
    }

    pub(super) fn as_raw(&self) -> *mut bindings::device {
        self.raw.as_ptr()
    }
}

impl Drop for BusDevice {
    fn drop(&mut self) {
        if self.pci {
            // SAFETY: The reference `pci` took (invariant), put only here.
            unsafe { bindings::mlx_ext_simpci_put(self.raw.as_ptr()) };
            return;
        }
        // SAFETY: Live (invariant), deleted only here. Its memory is freed by
        // its release once the last reference (a child's) is gone.
        unsafe { bindings::mlx_ext_simdev_del(self.raw.as_ptr()) };
    }
}
