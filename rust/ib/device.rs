// SPDX-License-Identifier: GPL-2.0

//! RDMA devices.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).

use super::bindings;
use crate::caps::AtomicCap;
use kernel::{str::CStr, types::Opaque};

/// An RDMA device registered with ib_core (`struct ib_device`).
///
/// # Invariants
///
/// The wrapped `ib_device` is registered with ib_core for the lifetime of the
/// reference: references are only handed out to ib_client callbacks, between
/// `add` and the return of `remove`.
#[repr(transparent)]
pub struct Device(Opaque<bindings::ib_device>);

impl Device {
    /// Creates a reference to a device from a pointer ib_core passed in.
    ///
    /// # Safety
    ///
    /// `ptr` points to a registered `ib_device` that stays registered for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // SAFETY: `Device` is `repr(transparent)` over the C struct, and the
        // caller guarantees the pointer is valid for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The raw pointer, for the abstractions.
    pub(super) fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    fn attrs(&self) -> &bindings::ib_device_attr {
        // SAFETY: by the type invariant the device is registered, and drivers
        // fill `attrs` before `ib_register_device` and never change it after.
        unsafe { &(*self.as_raw()).attrs }
    }

    /// The device's name, as in `/sys/class/infiniband/<name>`.
    pub fn name(&self) -> &CStr {
        // SAFETY: the device is valid (type invariant); `dev_name` returns the
        // NUL-terminated name of its `struct device`, which lives as long as
        // the device (a rename only happens with clients notified).
        unsafe { CStr::from_char_ptr(bindings::mlx_ext_ib_device_name(self.as_raw())) }
    }

    /// `atomic_cap` as ib_core reports it; `None` for a value it does not define.
    pub fn atomic_cap(&self) -> Option<AtomicCap> {
        AtomicCap::from_ib(self.attrs().atomic_cap)
    }

    /// `masked_atomic_cap` as ib_core reports it; `None` for a value it does not define.
    pub fn masked_atomic_cap(&self) -> Option<AtomicCap> {
        AtomicCap::from_ib(self.attrs().masked_atomic_cap)
    }

    /// The IEEE OUI of the adapter's vendor (`0x02c9` Mellanox, `0xffffff` rxe).
    pub fn vendor_id(&self) -> u32 {
        self.attrs().vendor_id
    }

    /// The vendor's part number (PCI device ID on Mellanox adapters).
    pub fn vendor_part_id(&self) -> u32 {
        self.attrs().vendor_part_id
    }

    /// The device's kobject, parent of its sysfs directory.
    pub(super) fn kobj(&self) -> *mut bindings::kobject {
        // SAFETY: the device is valid (type invariant).
        unsafe { bindings::mlx_ext_ib_device_kobj(self.as_raw()) }
    }
}
