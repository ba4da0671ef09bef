// SPDX-License-Identifier: GPL-2.0

//! The SR-IOV side of a device's parent: a simulated adapter's facts
//! (`include/mlx_ext/sim.h`) or a PCI physical function's VFs, their names,
//! and a watch on them ([`VfWatch`]).
//!
//! C headers: [`include/linux/pci.h`](srctree/include/linux/pci.h),
//! [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).

use super::work::{Kicker, KickerInner};
use super::{bindings, compat, compat::ARef, Device};
use core::{ffi::c_void, ptr::NonNull};
use kernel::{prelude::*, sync::Arc};

impl Device {
    /// What the device's parent says about SR-IOV functions: a simulated
    /// adapter's facts (`include/mlx_ext/sim.h`), a PCI PF's number of VFs,
    /// or nothing.
    pub fn sriov(&self) -> Sriov {
        let mut num_vfs = 0u16;
        let (ret, name) = PfName::fill(|buf, len| {
            // SAFETY: The device is valid and registered (type invariant),
            // so its parent, and the module of the parent's bus, are alive;
            // the helper writes at most `len` bytes, NUL included, at `buf`
            // (`PfName::fill`).
            unsafe { bindings::mlx_ext_ib_sim_info(self.as_raw(), &mut num_vfs, buf, len) }
        });
        if ret == 0 {
            return Sriov::Sim { num_vfs, name };
        }
        let (vfs, name) = PfName::fill(|buf, len| {
            // SAFETY: As above.
            unsafe { bindings::mlx_ext_ib_pci_vfs(self.as_raw(), buf, len) }
        });
        match u16::try_from(vfs) {
            Ok(num_vfs) => Sriov::PciPf { num_vfs, name },
            Err(_) => Sriov::None,
        }
    }

    /// The PCI name of VF `vf` (from 0) of the device's parent, a PCI PF;
    /// `None` if the parent is not one, or the VF is not on the bus.
    pub fn pci_vf_name(&self, vf: u16) -> Option<PfName> {
        let (ret, name) = PfName::fill(|buf, len| {
            // SAFETY: The device is valid and registered (type invariant),
            // so is its parent; the helper writes at most `len` bytes, NUL
            // included, at `buf` (`PfName::fill`).
            unsafe { bindings::mlx_ext_ib_pci_vf_name(self.as_raw(), vf, buf, len) }
        });
        (ret == 0).then_some(name)
    }
}

/// What a device's parent says about SR-IOV functions.
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
        /// count them through their watch ([`VfWatch`]).
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
pub struct PfName {
    bytes: [u8; PfName::SIZE],
    len: usize,
}

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

/// What a PCI PF's watch saw of its VFs on the bus.
#[derive(Clone, Copy, Debug)]
pub struct PciVfState {
    /// The PF's VFs on the bus.
    pub present: u16,
    /// The lowest VF number (`pci_iov_vf_id()`) not on the bus: VFs
    /// `0..first_absent` are all there.
    pub first_absent: u16,
    /// The SR-IOV capability's NumVFs register: what the PF's driver
    /// enabled.
    pub num_vfs: u16,
    /// The capability's InitialVFs register.
    pub initial: u16,
    /// VF Enable is set in the capability's control register.
    pub enabled: bool,
}

/// A watch on the VFs of a device's parent (a simulated adapter's
/// `sriov_numvfs`, or a PCI PF's VFs added to and removed from the bus) that
/// kicks a [`DelayedWork`] at once when they changed; unregistered, and
/// waited for, when dropped. A PCI PF's watch keeps which VFs are on the
/// bus ([`VfWatch::pci_vfs`]).
///
/// # Invariants
///
/// `raw` was made by `mlx_ext_vf_watch_register` with `target` as its
/// private pointer; `target` came from `Arc::<KickerInner>::into_foreign`,
/// and its reference is this object's.
pub struct VfWatch {
    raw: NonNull<bindings::mlx_ext_vf_watch>,
    target: *mut c_void,
    /// The device, held while the watch is registered (dropped after
    /// `drop` unregistered it).
    _dev: ARef<Device>,
}

// SAFETY: Registration and unregistration may happen on any thread.
unsafe impl Send for VfWatch {}
// SAFETY: Nothing is done through `&VfWatch`.
unsafe impl Sync for VfWatch {}

impl VfWatch {
    /// Watches the parent of `dev` for `kicker`; `Ok(None)` if the parent
    /// has no VFs to watch.
    pub fn new(dev: &ARef<Device>, kicker: &Kicker) -> Result<Option<Self>> {
        let target = compat::into_foreign(kicker.0.clone());
        // SAFETY: The device is valid, and stays so while the watch is
        // registered: the watch holds a reference to it, given back only
        // after `drop` unregistered it. Its parent outlives its
        // registration. `target` stays valid until `drop` unregistered the
        // watch.
        let raw = kernel::error::from_err_ptr(unsafe {
            bindings::mlx_ext_vf_watch_register(dev.as_raw(), Some(Self::callback), target)
        });
        match raw {
            // INVARIANT: Made just above.
            Ok(raw) if !raw.is_null() => Ok(NonNull::new(raw).map(|raw| Self {
                raw,
                target,
                _dev: dev.clone(),
            })),
            r => {
                // SAFETY: From `into_foreign` above, given back once; no
                // watch was registered with it.
                drop(unsafe { compat::from_foreign::<Arc<KickerInner>>(target) });
                r.map(|_| None)
            }
        }
    }

    /// What a PCI PF's watch saw of its VFs; `None` for a simulated
    /// adapter's.
    pub fn pci_vfs(&self) -> Option<PciVfState> {
        let mut out = bindings::mlx_ext_pci_vfs::default();
        // SAFETY: Registered (type invariant), unregistered only by `drop`;
        // `out` is writable.
        let ret = unsafe { bindings::mlx_ext_vf_watch_pci_vfs(self.raw.as_ptr(), &mut out) };
        (ret == 0).then_some(PciVfState {
            present: out.present,
            first_absent: out.first_absent,
            num_vfs: out.num_vfs,
            initial: out.initial,
            enabled: out.enabled,
        })
    }

    /// The C watch's function.
    ///
    /// # Safety
    ///
    /// Called by the C watch only, with its private pointer.
    unsafe extern "C" fn callback(priv_: *mut c_void) {
        // SAFETY: `priv_` is the `target` of a live watch (its drop waits
        // for this call), kept alive by its `Arc`.
        let this = unsafe { compat::borrow_foreign::<Arc<KickerInner>>(priv_) };
        this.kick(0);
    }
}

impl Drop for VfWatch {
    fn drop(&mut self) {
        // SAFETY: Registered (type invariant), unregistered only here; returns
        // once no callback runs.
        unsafe { bindings::mlx_ext_vf_watch_unregister(self.raw.as_ptr()) };
        // SAFETY: From `into_foreign` in `new` (type invariant), given back once.
        drop(unsafe { compat::from_foreign::<Arc<KickerInner>>(self.target) });
    }
}
