// SPDX-License-Identifier: GPL-2.0

//! RDMA devices.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).

use super::{bindings, sync::IrqSpinLock};
use crate::caps::AtomicCap;
use crate::new_irq_spinlock;
use core::fmt::{self, Write as _};
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
#[repr(transparent)]
pub struct Device(Opaque<bindings::ib_device>);

impl Device {
    /// Creates a reference to a device from a pointer ib_core passed in.
    ///
    /// # Safety
    ///
    /// `ptr` points to an `ib_device` that ib_core passed to a client
    /// callback, whose `attrs` `setup_device` filled, and that stays valid
    /// for `'a`.
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
        // SAFETY: the device is valid and `attrs` no longer changes (type
        // invariant): the driver fills it in its `query_device` op, which
        // ib_core's `setup_device` calls during `ib_register_device` before
        // any client sees the device, and nothing writes it afterwards.
        unsafe { &(*self.as_raw()).attrs }
    }

    /// `atomic_cap` as ib_core reports it; `None` for a value it does not define.
    pub fn atomic_cap(&self) -> Option<AtomicCap> {
        AtomicCap::from_ib(self.attrs().atomic_cap)
    }

    /// `masked_atomic_cap` as ib_core reports it; `None` for a value it does not define.
    pub fn masked_atomic_cap(&self) -> Option<AtomicCap> {
        AtomicCap::from_ib(self.attrs().masked_atomic_cap)
    }

    /// The driver's `enum rdma_driver_id` (`ops.driver_id`).
    pub fn driver_id(&self) -> u32 {
        // SAFETY: the device is valid (type invariant); `ops` is set before
        // registration (`ib_set_device_ops`) and no longer changes.
        unsafe { (*self.as_raw()).ops.driver_id }
    }

    /// The device's `node_type` (`enum rdma_node_type`; `RDMA_NODE_RNIC`
    /// for an iWARP device).
    pub fn node_type(&self) -> u32 {
        // SAFETY: the device is valid (type invariant); `node_type` is set
        // before registration and no longer changes.
        u32::from(unsafe { (*self.as_raw()).node_type })
    }

    /// The device's node GUID, in host order.
    pub fn node_guid(&self) -> u64 {
        // SAFETY: the device is valid (type invariant), so the field is
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

    /// What the device's parent says about SR-IOV functions: a simulated
    /// adapter's facts (`include/mlx_ext/sim.h`), a PCI PF's number of VFs,
    /// or nothing.
    #[cfg(not(mlx_ext_provider))]
    pub fn sriov(&self) -> Sriov {
        let mut num_vfs = 0u16;
        let (ret, name) = PfName::fill(|buf, len| {
            // SAFETY: the device is valid and registered (type invariant),
            // so its parent, and the module of the parent's bus, are alive;
            // the helper writes at most `len` bytes, NUL included, at `buf`
            // (`PfName::fill`).
            unsafe { bindings::mlx_ext_ib_sim_info(self.as_raw(), &mut num_vfs, buf, len) }
        });
        if ret == 0 {
            return Sriov::Sim { num_vfs, name };
        }
        let (vfs, name) = PfName::fill(|buf, len| {
            // SAFETY: as above.
            unsafe { bindings::mlx_ext_ib_pci_vfs(self.as_raw(), buf, len) }
        });
        match u16::try_from(vfs) {
            Ok(num_vfs) => Sriov::PciPf { num_vfs, name },
            Err(_) => Sriov::None,
        }
    }

    /// The PCI name of VF `vf` (from 0) of the device's parent, a PCI PF;
    /// `None` if the parent is not one, or the VF is not on the bus.
    #[cfg(not(mlx_ext_provider))]
    pub fn pci_vf_name(&self, vf: u16) -> Option<PfName> {
        let (ret, name) = PfName::fill(|buf, len| {
            // SAFETY: the device is valid and registered (type invariant),
            // so is its parent; the helper writes at most `len` bytes, NUL
            // included, at `buf` (`PfName::fill`).
            unsafe { bindings::mlx_ext_ib_pci_vf_name(self.as_raw(), vf, buf, len) }
        });
        (ret == 0).then_some(name)
    }

    /// The number of the device's last port (ports are numbered from 1).
    #[cfg(not(mlx_ext_provider))]
    pub fn port_count(&self) -> u32 {
        // SAFETY: the device is valid (type invariant); its port data is set
        // up before registration.
        unsafe { bindings::mlx_ext_ib_port_count(self.as_raw()) }
    }

    /// Whether `port` is InfiniBand (not RoCE or iWARP).
    #[cfg(not(mlx_ext_provider))]
    pub fn port_is_ib(&self, port: u32) -> bool {
        if port == 0 || port > self.port_count() {
            return false;
        }
        // SAFETY: as above, and `port` is one of the device's ports.
        unsafe { bindings::mlx_ext_ib_port_is_ib(self.as_raw(), port) }
    }

    /// The GID table length of `port` (`gid_tbl_len`, as the driver told
    /// ib_core at registration), 0 for a port the device does not have.
    #[cfg(not(mlx_ext_provider))]
    pub fn port_gid_tbl_len(&self, port: u32) -> u32 {
        if port == 0 || port > self.port_count() {
            return 0;
        }
        // SAFETY: as above, and `port` is one of the device's ports.
        unsafe { bindings::mlx_ext_ib_port_gid_tbl_len(self.as_raw(), port) }
    }

    /// The device's kobject, parent of its sysfs directory.
    pub(super) fn kobj(&self) -> *mut bindings::kobject {
        // SAFETY: the device is valid (type invariant); the helper only
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
        // SAFETY: the device is valid (type invariant), and by the caller's
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

/// What a device's parent says about SR-IOV functions.
#[cfg(not(mlx_ext_provider))]
pub enum Sriov {
    /// A simulated adapter.
    Sim {
        /// Its VFs.
        num_vfs: u16,
        /// Its PF's PCI-style name.
        name: PfName,
    },
    /// A PCI physical function.
    PciPf {
        /// `pci_num_vf()`, which lags the VFs on the bus: the VF GUID tables
        /// count them through their watch (`crate::ib::iov::VfWatch`).
        num_vfs: u16,
        /// `pci_name()`.
        name: PfName,
    },
    /// Anything else.
    None,
}

/// A PCI (or PCI-style) function's name: `pci_name()` is
/// `"%04x:%02x:%02x.%d"` of a 32-bit domain (`drivers/pci/probe.c:1966`,
/// `pci_setup_device()`), 16 characters at most, and the helpers refuse a
/// name that does not fit rather than cut it.
#[cfg(not(mlx_ext_provider))]
pub struct PfName {
    bytes: [u8; PfName::SIZE],
    len: usize,
}

#[cfg(not(mlx_ext_provider))]
impl PfName {
    /// Room for the longest PCI name and its NUL, and more.
    pub const SIZE: usize = 24;

    /// A name `write` writes as a NUL-terminated string of at most `len`
    /// bytes at `buf`, zeroed before; and what `write` returned.
    fn fill<R>(write: impl FnOnce(*mut u8, usize) -> R) -> (R, Self) {
        let mut bytes = [0u8; Self::SIZE];
        let r = write(bytes.as_mut_ptr(), bytes.len());
        let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        (r, Self { bytes, len })
    }

    /// The name's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
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
        // SAFETY: the caller holds `devices_rwsem`.
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
        // SAFETY: the caller holds `devices_rwsem`.
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

// The capability rules name drivers by `enum rdma_driver_id` value: tie
// them to the values ib_core was built with.
const _: () = {
    use crate::caps::*;
    assert!(DRIVER_MLX4 == bindings::rdma_driver_id_RDMA_DRIVER_MLX4);
    assert!(DRIVER_MLX5 == bindings::rdma_driver_id_RDMA_DRIVER_MLX5);
    assert!(DRIVER_CXGB4 == bindings::rdma_driver_id_RDMA_DRIVER_CXGB4);
    assert!(DRIVER_MTHCA == bindings::rdma_driver_id_RDMA_DRIVER_MTHCA);
    assert!(DRIVER_BNXT_RE == bindings::rdma_driver_id_RDMA_DRIVER_BNXT_RE);
    assert!(DRIVER_OCRDMA == bindings::rdma_driver_id_RDMA_DRIVER_OCRDMA);
    assert!(DRIVER_IRDMA == bindings::rdma_driver_id_RDMA_DRIVER_IRDMA);
    assert!(DRIVER_VMW_PVRDMA == bindings::rdma_driver_id_RDMA_DRIVER_VMW_PVRDMA);
    assert!(DRIVER_QEDR == bindings::rdma_driver_id_RDMA_DRIVER_QEDR);
    assert!(DRIVER_HNS == bindings::rdma_driver_id_RDMA_DRIVER_HNS);
    assert!(DRIVER_RXE == bindings::rdma_driver_id_RDMA_DRIVER_RXE);
    assert!(DRIVER_HFI1 == bindings::rdma_driver_id_RDMA_DRIVER_HFI1);
    assert!(DRIVER_QIB == bindings::rdma_driver_id_RDMA_DRIVER_QIB);
    assert!(DRIVER_SIW == bindings::rdma_driver_id_RDMA_DRIVER_SIW);
    assert!(DRIVER_ERDMA == bindings::rdma_driver_id_RDMA_DRIVER_ERDMA);
    assert!(DRIVER_MANA == bindings::rdma_driver_id_RDMA_DRIVER_MANA);
    // DRIVER_IONIC (21) is not in 6.12's enum: see its definition.
    assert!(RDMA_NODE_RNIC == bindings::RDMA_NODE_RNIC);
};

// `AtomicCap::from_ib` (pure logic, also built on the host) decodes
// `enum ib_atomic_cap` by value: tie it to the values ib_core was built with.
const _: () = {
    use bindings::{
        ib_atomic_cap_IB_ATOMIC_GLOB as GLOB, ib_atomic_cap_IB_ATOMIC_HCA as HCA,
        ib_atomic_cap_IB_ATOMIC_NONE as NONE,
    };
    assert!(matches!(AtomicCap::from_ib(NONE), Some(AtomicCap::None)));
    assert!(matches!(AtomicCap::from_ib(HCA), Some(AtomicCap::Hca)));
    assert!(matches!(AtomicCap::from_ib(GLOB), Some(AtomicCap::Glob)));
};
