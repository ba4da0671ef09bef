// SPDX-License-Identifier: GPL-2.0

//! A device's ports, and the GUIDs of its SR-IOV VFs on them: what ib_core
//! tells of a port (`ib_query_port`, its GID cache) and the driver's VF
//! GUID ops (`ib_set_vf_guid`, `ib_get_vf_guid`).
//!
//! C headers: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`include/rdma/ib_cache.h`](srctree/include/rdma/ib_cache.h).

use super::{bindings, Device};
use kernel::prelude::*;

/// What [`Device::port_info`] tells of a port.
#[derive(Clone, Copy, Debug)]
pub struct PortInfo {
    /// `IB_PORT_ACTIVE`.
    pub active: bool,
    /// `IB_PORT_DOWN`: the link is down, the SM cannot reach the port.
    pub down: bool,
    /// The port's LID.
    pub lid: u32,
    /// The subnet prefix of its GIDs.
    pub subnet_prefix: u64,
}

/// Which GUID of a VF's vport: its node GUID or its port GUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VfGuid {
    /// `IFLA_VF_IB_NODE_GUID`.
    Node,
    /// `IFLA_VF_IB_PORT_GUID`.
    Port,
}

impl Device {
    /// The GUID of InfiniBand `port`: the lower half of its GID 0 in
    /// ib_core's cache (`rdma_query_gid`), read once ib_core's refresh of
    /// the table after a GID change let it be. Sleeps.
    pub fn port_guid(&self, port: u32) -> Result<u64> {
        let mut guid = 0u64;
        // SAFETY: The device is valid (type invariant); the helper writes
        // `guid` on success.
        kernel::error::to_result(unsafe {
            bindings::mlx_ext_ib_port_guid(self.as_raw(), port, &mut guid)
        })?;
        Ok(guid)
    }

    /// GID `index` of `port` as the VF GUID tree's `gids/<n>` shows it:
    /// ib_core's cached copy of the port's table (`rdma_query_gid`), or for
    /// an entry it has not (no GUID, or for a moment while ib_core
    /// refreshes the table) the port's subnet prefix and zeros; `EINVAL`
    /// past the port's table only. Does not sleep.
    pub fn port_gid(&self, port: u32, index: u32) -> Result<[u8; 16]> {
        let mut gid = [0u8; 16];
        // SAFETY: The device is valid (type invariant); the helper writes 16
        // bytes into `gid`.
        kernel::error::to_result(unsafe {
            bindings::mlx_ext_ib_port_gid(self.as_raw(), port, index, gid.as_mut_ptr())
        })?;
        Ok(gid)
    }

    /// Tells the GUID-change notifiers of `include/mlx_ext/mlx_ext.h` that
    /// `function`'s GUIDs on `port` changed (`count` events so far; `up`:
    /// its base entry is valid). Process context: the notifiers may sleep.
    pub fn guid_event(&self, port: u32, function: u16, up: bool, count: u32) {
        // SAFETY: The device is valid (type invariant); the helper passes it to
        // the notifiers during the call only.
        unsafe { bindings::mlx_ext_guid_notify(self.as_raw(), port, function, up, count) };
    }

    /// Sets the node or port GUID of SR-IOV VF `vf` (from 0) on `port`
    /// through the driver's `set_vf_guid` (`ib_set_vf_guid`): `EOPNOTSUPP`
    /// if it has none. Process context: the driver may sleep (mlx5 runs a
    /// firmware command).
    pub fn set_vf_guid(&self, vf: u16, port: u32, guid: u64, which: VfGuid) -> Result {
        // SAFETY: The device is valid (type invariant).
        kernel::error::to_result(unsafe {
            bindings::mlx_ext_ib_set_vf_guid(
                self.as_raw(),
                kernel::ffi::c_int::from(vf),
                port,
                guid,
                which == VfGuid::Port,
            )
        })
    }

    /// The node and port GUIDs of SR-IOV VF `vf` (from 0) on `port`, from
    /// the driver's `get_vf_guid` (`ib_get_vf_guid`; mlx5 answers 0 for
    /// one never set): `EOPNOTSUPP` if it has none. Process context.
    pub fn get_vf_guids(&self, vf: u16, port: u32) -> Result<(u64, u64)> {
        let (mut node, mut port_guid) = (0u64, 0u64);
        // SAFETY: The device is valid (type invariant); both outputs are ours.
        kernel::error::to_result(unsafe {
            bindings::mlx_ext_ib_get_vf_guid(
                self.as_raw(),
                kernel::ffi::c_int::from(vf),
                port,
                &mut node,
                &mut port_guid,
            )
        })?;
        Ok((node, port_guid))
    }

    /// `ib_query_port`: sleeps.
    pub fn port_info(&self, port: u32) -> Result<PortInfo> {
        let mut attr = bindings::ib_port_attr::default();
        // SAFETY: The device is valid (type invariant); `attr` is ours.
        kernel::error::to_result(unsafe {
            bindings::ib_query_port(self.as_raw(), port, &mut attr)
        })?;
        Ok(PortInfo {
            active: attr.state == bindings::ib_port_state_IB_PORT_ACTIVE,
            down: attr.state == bindings::ib_port_state_IB_PORT_DOWN,
            lid: attr.lid,
            subnet_prefix: attr.subnet_prefix,
        })
    }
}

impl Device {
    /// The number of the device's last port (ports are numbered from 1).
    pub fn port_count(&self) -> u32 {
        // SAFETY: The device is valid (type invariant); its port data is set
        // up before registration.
        unsafe { bindings::mlx_ext_ib_port_count(self.as_raw()) }
    }

    /// Whether `port` is InfiniBand (not RoCE or iWARP).
    pub fn port_is_ib(&self, port: u32) -> bool {
        if port == 0 || port > self.port_count() {
            return false;
        }
        // SAFETY: As above, and `port` is one of the device's ports.
        unsafe { bindings::mlx_ext_ib_port_is_ib(self.as_raw(), port) }
    }

    /// The GID table length of `port` (`gid_tbl_len`, as the driver told
    /// ib_core at registration), 0 for a port the device does not have.
    pub fn port_gid_tbl_len(&self, port: u32) -> u32 {
        if port == 0 || port > self.port_count() {
            return 0;
        }
        // SAFETY: As above, and `port` is one of the device's ports.
        unsafe { bindings::mlx_ext_ib_port_gid_tbl_len(self.as_raw(), port) }
    }
}
