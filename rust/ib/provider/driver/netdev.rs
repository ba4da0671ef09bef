// SPDX-License-Identifier: GPL-2.0

//! An IPoIB netdev on a registered device whose parent is a PCI PF, for
//! the VF GUIDs that `ip link` and the orchestrators set through netlink
//! (`rust/helpers/simnet.c`, whose VF operations are ib_ipoib's: they call
//! `ib_set_vf_guid` and `ib_get_vf_guid`, and so the device's
//! `set_vf_guid` and `get_vf_guid`).
//!
//! C header: [`include/mlx_ext/helpers.h`](../../../include/mlx_ext/helpers.h).

use super::{Driver, Registration};
use crate::ib::bindings;
use core::{ffi::c_void, ptr::NonNull};
use kernel::{error::from_err_ptr, prelude::*};

/// A registered netdev, unregistered and freed on drop; a
/// [`Registration`]'s (`Registration::add_ipoib_netdev`), which drops it
/// before its device.
///
/// # Invariants
///
/// `raw` came from `mlx_ext_simnet_add` and is deleted only by `drop`,
/// before the device it calls is unregistered (the contract of [`new`]).
///
/// [`new`]: IpoibNetdev::new
pub(super) struct IpoibNetdev {
    raw: NonNull<c_void>,
}

// SAFETY: The netdev may be unregistered from any thread in process
// context; nothing else is reached through it.
unsafe impl Send for IpoibNetdev {}
// SAFETY: `&IpoibNetdev` gives access to nothing.
unsafe impl Sync for IpoibNetdev {}

impl IpoibNetdev {
    /// Registers `<device>ib<port>` on port `port` of `reg`'s device, whose
    /// parent must be a PCI function (`EINVAL` otherwise). Process
    /// context; takes RTNL.
    ///
    /// # Safety
    ///
    /// The result is dropped before `reg`: its operations call the device.
    pub(super) unsafe fn new<T: Driver>(reg: &Registration<T>, port: u32) -> Result<Self> {
        // SAFETY: The device is registered while `reg` lives, and the
        // netdev goes before it (the caller's contract).
        let raw = from_err_ptr(unsafe { bindings::mlx_ext_simnet_add(reg.ib(), port) })?;
        // INVARIANT: From `mlx_ext_simnet_add`, an error turned into `Err`.
        Ok(Self {
            raw: NonNull::new(raw).ok_or(ENOMEM)?,
        })
    }
}

impl Drop for IpoibNetdev {
    fn drop(&mut self) {
        // SAFETY: Made by `mlx_ext_simnet_add` and deleted only here
        // (invariant).
        unsafe { bindings::mlx_ext_simnet_del(self.raw.as_ptr()) };
    }
}

/// Whether the calling task holds RTNL, as the callers of a driver's
/// `set_vf_guid` and `get_vf_guid` guarantee (`rust/helpers/simnet.c` says
/// which they are): lockdep's answer, or without lockdep whether any task
/// holds it. Warns once when it does not.
pub fn rtnl_held() -> bool {
    // SAFETY: No precondition; it reads lock state.
    unsafe { bindings::mlx_ext_simnet_rtnl_held() }
}
