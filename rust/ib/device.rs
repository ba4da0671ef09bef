// SPDX-License-Identifier: GPL-2.0

//! RDMA devices.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).

use super::{bindings, compat::AlwaysRefCounted, sync::IrqSpinLock};
use crate::new_irq_spinlock;
use core::fmt::{self, Write as _};
use core::ptr::NonNull;
use kernel::{init::InPlaceInit, prelude::*, sync::Arc, types::Opaque};

/// An RDMA device registered with ib_core (`struct ib_device`).
///
/// # Invariants
///
/// The wrapped `ib_device` is valid for the lifetime of the reference, and
/// its `attrs` are filled and no longer change: references are only handed
/// out to ib_client callbacks. ib_core holds a reference on the device from
/// before `add` until after `remove` returns (`add_client_context`,
/// `remove_client_context`), or for the `add` call alone when `add` fails;
/// it calls clients only after `setup_device` filled `attrs`, during
/// `ib_register_device`. During `remove` the device may already be
/// unregistered, but it is still valid.
///
/// An owned reference, `ARef<Device>` ([`super::compat::ARef`]), is one
/// registration reference (`ib_device_try_get`/`ib_device_put`): what the
/// objects that call ib_core about a device later keep. ib_core's
/// unregistration waits for the count to reach zero after its clients'
/// `remove` (`disable_device` in `drivers/infiniband/core/device.c`, an
/// unbounded `wait_for_completion`), so a reference kept past `remove` by
/// mistake holds the unregistration up, and never lets the device be freed
/// under it. Such a hang names the unregistering task (the hung-task
/// detector's report, after its timeout), not the holder.
///
/// The invariant `inc_ref` rests on: a `&Device` exists only while a
/// registration reference is held (ib_core's around a client callback, a
/// ULP's device between its add and remove, or an `ARef`), so the count
/// is never zero where another is taken, and `ib_device_try_get` cannot
/// fail there. It is not checked at run time but by that construction:
/// nothing in this layer makes a `&Device` from a pointer that no held
/// reference covers. A failure would be a bug of this layer, with a
/// warning and no reference taken.
#[repr(transparent)]
pub struct Device(Opaque<bindings::ib_device>);

// SAFETY: ib_core's calls on a device, `ib_device_put` included, may come
// from any thread.
unsafe impl Send for Device {}
// SAFETY: As above; `&Device` only reads what no longer changes, or calls
// ib_core, which locks what it changes.
unsafe impl Sync for Device {}

// SAFETY: A `Device` is only ever reached while ib_core holds a
// registration reference on it (from `enable_device_and_get` until after
// the clients' `remove`): through a reference handed to a client callback,
// the device of a PD a ULP passes in ([`super::qp::Pd::device`], of a
// device between the ULP's add and remove), or an `ARef`. The count is
// never zero while one exists, so `inc_ref` can always take another, and
// the device is not freed before the count drops to zero (the invariant
// stated at the type).
unsafe impl AlwaysRefCounted for Device {
    fn inc_ref(&self) {
        // SAFETY: The device is valid and its count is not zero (above).
        unsafe { bindings::mlx_ext_ib_device_get(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller gives back a reference it holds (the trait's
        // contract); `Device` is a transparent wrapper of `ib_device`.
        unsafe { bindings::ib_device_put(obj.as_ptr().cast()) };
    }
}

/// How far a device's atomic operations are atomic (`enum ib_atomic_cap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum AtomicCap {
    /// `IB_ATOMIC_NONE`: no atomic operations.
    None = bindings::ib_atomic_cap_IB_ATOMIC_NONE,
    /// `IB_ATOMIC_HCA`: atomic among the QPs of this adapter.
    Hca = bindings::ib_atomic_cap_IB_ATOMIC_HCA,
    /// `IB_ATOMIC_GLOB`: atomic with the CPUs' and other adapters' accesses too.
    Glob = bindings::ib_atomic_cap_IB_ATOMIC_GLOB,
}

impl AtomicCap {
    /// The value of `raw`; `None` for one ib_core does not define.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            bindings::ib_atomic_cap_IB_ATOMIC_NONE => Some(Self::None),
            bindings::ib_atomic_cap_IB_ATOMIC_HCA => Some(Self::Hca),
            bindings::ib_atomic_cap_IB_ATOMIC_GLOB => Some(Self::Glob),
            _ => None,
        }
    }
}

impl Device {
    /// Creates a reference to a device from a pointer ib_core passed in.
    ///
    /// # Safety
    ///
    /// `ptr` points to an `ib_device` that ib_core passed to a client
    /// callback (or that a PD of a ULP belongs to), whose `attrs`
    /// `setup_device` filled, on which ib_core holds a registration
    /// reference for `'a`, and that stays valid for `'a`.
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
        // SAFETY: The device is valid and `attrs` no longer changes (type
        // invariant): the driver fills it in its `query_device` op, which
        // ib_core's `setup_device` calls during `ib_register_device` before
        // any client sees the device, and nothing writes it afterwards.
        unsafe { &(*self.as_raw()).attrs }
    }

    /// `atomic_cap` as ib_core reports it; `None` for a value it does not define.
    pub fn atomic_cap(&self) -> Option<AtomicCap> {
        AtomicCap::from_raw(self.attrs().atomic_cap)
    }

    /// `masked_atomic_cap` as ib_core reports it; `None` for a value it does not define.
    pub fn masked_atomic_cap(&self) -> Option<AtomicCap> {
        AtomicCap::from_raw(self.attrs().masked_atomic_cap)
    }

    /// The driver's `enum rdma_driver_id` (`ops.driver_id`).
    pub fn driver_id(&self) -> u32 {
        // SAFETY: The device is valid (type invariant); `ops` is set before
        // registration (`ib_set_device_ops`) and no longer changes.
        unsafe { (*self.as_raw()).ops.driver_id }
    }

    /// The device's `node_type` (`enum rdma_node_type`; `RDMA_NODE_RNIC`
    /// for an iWARP device).
    pub fn node_type(&self) -> u32 {
        // SAFETY: The device is valid (type invariant); `node_type` is set
        // before registration and no longer changes.
        u32::from(unsafe { (*self.as_raw()).node_type })
    }

    /// The device's node GUID, in host order.
    pub fn node_guid(&self) -> u64 {
        // SAFETY: The device is valid (type invariant), so the field is
        // readable. Drivers set it before registration; one may store it
        // again later (a plain `__be64` store, as ib_core's own sysfs reads
        // it): read once, as READ_ONCE would.
        u64::from_be(unsafe { core::ptr::addr_of!((*self.as_raw()).node_guid).read_volatile() })
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
        // SAFETY: The device is valid (type invariant); the helper only
        // computes the address of a field.
        unsafe { bindings::mlx_ext_ib_device_kobj(self.as_raw()) }
    }

    /// Copies the device's current name.
    ///
    /// # Safety
    ///
    /// The caller holds ib_core's `devices_rwsem` (in either mode), which
    /// `ib_device_rename` takes for writing around its changes of the name:
    /// ib_core holds it while it calls a client's `add` and `rename`.
    pub(super) unsafe fn name_locked(&self) -> Name {
        // SAFETY: The device is valid (type invariant), and by the caller's
        // lock no rename writes `name` while it is read. `name` is an array
        // in the `ib_device`, always NUL-terminated by `strscpy`.
        let raw = unsafe { &(*self.as_raw()).name };
        let mut name = Name::EMPTY;
        for (dst, &src) in name.bytes.iter_mut().zip(raw.iter()) {
            // `kernel::ffi::c_char` is `u8` (the kernel builds with
            // `-funsigned-char`).
            let b = src;
            if b == 0 {
                break;
            }
            *dst = b;
            name.len += 1;
        }
        name
    }
}

/// The most bytes of an ib_core device name (`IB_DEVICE_NAME_MAX`), its NUL
/// included.
const NAME_MAX: usize = bindings::IB_DEVICE_NAME_MAX as usize;

/// A copy of a device name, without its NUL.
#[derive(Clone, Copy)]
pub struct Name {
    bytes: [u8; NAME_MAX],
    len: usize,
}

impl Name {
    const EMPTY: Self = Self {
        bytes: [0; NAME_MAX],
        len: 0,
    };

    /// The name's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // ib_core names are ASCII (`ib_device_rename` takes them from
        // netlink as strings); anything else is shown escaped.
        for &b in self.as_bytes() {
            if b.is_ascii_graphic() {
                f.write_char(char::from(b))?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

/// The name of a device as a client sees it, kept up to date across renames.
///
/// The name inside `struct ib_device` may only be read under ib_core's
/// `devices_rwsem`, which is static in ib_core: from work items, sysfs
/// callbacks or `remove`, a client cannot take it. So the `ib` layer keeps a
/// copy for each device a client has, made in `add` and refreshed in
/// `rename` (both run under `devices_rwsem`), and hands out clones of this
/// handle. Cheap to clone; [`DeviceName::get`] copies the current value.
///
/// # Context
///
/// Any: [`DeviceName::get`] and formatting may be used from process,
/// softirq or hardirq context (a completion handler logging a driver's
/// refusal, say). The copy is guarded by a spinlock taken with interrupts
/// disabled, held for the 64-byte copy only; `rename` (process context,
/// under `devices_rwsem`) takes it the same way, so a reader in an
/// interrupt on the CPU that holds it cannot deadlock.
#[derive(Clone)]
pub struct DeviceName(Arc<IrqSpinLock<Name>>);

impl DeviceName {
    /// Makes the handle of `dev`'s name.
    ///
    /// # Safety
    ///
    /// As [`Device::name_locked`]: the caller holds `devices_rwsem`.
    pub(super) unsafe fn new(dev: &Device) -> Result<Self> {
        // SAFETY: The caller holds `devices_rwsem`.
        let name = unsafe { dev.name_locked() };
        Ok(Self(Arc::pin_init(
            new_irq_spinlock!(name, "mlx_ext::ib::DeviceName"),
            GFP_KERNEL,
        )?))
    }

    /// Refreshes the copy from the device.
    ///
    /// # Safety
    ///
    /// As [`Device::name_locked`]: the caller holds `devices_rwsem`.
    pub(super) unsafe fn refresh(&self, dev: &Device) {
        // SAFETY: The caller holds `devices_rwsem`.
        let name = unsafe { dev.name_locked() };
        *self.0.lock() = name;
    }

    /// The device's name as of the last `add` or `rename`.
    pub fn get(&self) -> Name {
        *self.0.lock()
    }
}

crate::kernel_display!(DeviceName);

impl fmt::Display for DeviceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Formats a copy: the lock is not held while `f` runs.
        self.get().fmt(f)
    }
}
