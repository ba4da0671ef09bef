// SPDX-License-Identifier: GPL-2.0

//! mlx_ext's ib_client and its registry of devices: it makes and owns each
//! device's state ([`crate::dev_state`]) and its `/sys/class/infiniband/<dev>/mlx_ext/`
//! directory, what mlx_ext reports for the device.

use crate::{
    caps::{DeviceFacts, Record},
    declare_ib_client,
    dev_state::DevState,
    guid::switch_text,
    ib::{self, sysfs::Dir, DeviceName, DirOps, File, ShowBuf},
    vf_guids::{DeviceGuids, Slot},
};
use core::fmt::Write;
use kernel::{c_str, prelude::*, sync::Arc};

/// The ib_core client that gives every device its `mlx_ext` directory.
pub struct DeviceReports;

declare_ib_client!(DeviceReports, "mlx_ext");

/// The files of a device's `mlx_ext` directory.
#[derive(Clone, Copy)]
#[repr(u32)]
enum FileId {
    AtomicCap,
    MaskedAtomicCap,
    MaskedAtomicMode,
    Reason,
    VfGuidTables,
}

const FILES: [File<'static>; 5] = [
    File {
        name: c_str!("atomic_cap"),
        mode: 0o444,
        id: FileId::AtomicCap as u32,
    },
    File {
        name: c_str!("masked_atomic_cap"),
        mode: 0o444,
        id: FileId::MaskedAtomicCap as u32,
    },
    File {
        name: c_str!("masked_atomic_mode"),
        mode: 0o444,
        id: FileId::MaskedAtomicMode as u32,
    },
    File {
        name: c_str!("reason"),
        mode: 0o444,
        id: FileId::Reason as u32,
    },
    File {
        name: c_str!("vf_guid_tables"),
        mode: 0o644,
        id: FileId::VfGuidTables as u32,
    },
];

/// A device's capability record, derived when the device is added (and
/// downgraded if its driver refuses atomics at run time).
pub struct Caps {
    state: Arc<DevState>,
    /// The VF GUID tables' switch, `vf_guid_tables`.
    guids: Option<Arc<Slot>>,
}

impl DirOps for Caps {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let r = &self.state.record();
        let text = match id {
            x if x == FileId::AtomicCap as u32 => r.atomic_cap.name(),
            x if x == FileId::MaskedAtomicCap as u32 => r.masked_atomic_cap.name(),
            x if x == FileId::MaskedAtomicMode as u32 => r.mode.name(),
            x if x == FileId::Reason as u32 => {
                return writeln!(out, "{}", r.reasons).map_err(|_| ENOSPC);
            }
            x if x == FileId::VfGuidTables as u32 => {
                switch_text(self.guids.as_ref().ok_or(ENODEV)?.switch())
            }
            _ => return Err(EINVAL),
        };
        writeln!(out, "{}", text).map_err(|_| ENOSPC)
    }

    fn store(&self, id: u32, data: &[u8]) -> Result {
        if id != FileId::VfGuidTables as u32 {
            return Err(EPERM);
        }
        self.guids.as_ref().ok_or(ENODEV)?.write_switch(data)
    }
}

/// What mlx_ext keeps for each device.
pub struct DeviceData {
    /// Dropped first: no switch write runs once the tables go.
    dir: Dir<Caps>,
    /// The device's VF GUID tables, made and removed as its switch and its
    /// VFs say.
    _guids: Option<DeviceGuids>,
}

impl DeviceData {
    /// The device's state, shared with the QPs of the ULP API.
    pub fn state(&self) -> &Arc<DevState> {
        &self.dir.data().state
    }
}

impl ib::Client for DeviceReports {
    type DeviceData = DeviceData;

    fn add(dev: &ib::Device, name: &DeviceName) -> Result<DeviceData> {
        let record = Record::derive(&DeviceFacts {
            driver_id: dev.driver_id(),
            vendor_id: dev.vendor_id(),
            vendor_part_id: dev.vendor_part_id(),
            atomic_cap: dev.atomic_cap().map(crate::ties::atomic_cap),
            masked_atomic_cap: dev.masked_atomic_cap().map(crate::ties::atomic_cap),
            host_big_endian: cfg!(target_endian = "big"),
            iwarp: dev.node_type() == crate::caps::RDMA_NODE_RNIC,
        });
        // A device whose tables cannot be made is otherwise fine.
        let guids = DeviceGuids::new(dev, name)
            .inspect_err(|e| pr_warn!("{}: no VF GUID tables ({:?})\n", name, e))
            .ok();
        let caps = Caps {
            state: Arc::new(DevState::new(record, name.clone()), GFP_KERNEL)?,
            guids: guids.as_ref().map(|g| g.slot().clone()),
        };
        let dir = Dir::new(dev, c_str!("mlx_ext"), caps, &FILES, crate::attr_class!())
            .inspect_err(|e| {
                pr_warn!(
                    "{}: cannot create the mlx_ext directory ({:?}); the device has no report\n",
                    name,
                    e
                )
            })?;
        let r = &dir.data().state.record();
        pr_info!(
            "{}: atomic_cap {}, masked_atomic_cap {}, masked atomics {}\n",
            name,
            r.atomic_cap.name(),
            r.masked_atomic_cap.name(),
            r.mode.name()
        );
        if !r.reasons.is_empty() {
            pr_info!("{}: {}\n", name, r.reasons);
        }
        Ok(DeviceData { dir, _guids: guids })
    }

    fn rename(_dev: &ib::Device, _data: &DeviceData, name: &DeviceName) {
        pr_info!("{}: device renamed\n", name);
    }

    fn remove(_dev: &ib::Device, _data: &DeviceData, name: &DeviceName) {
        pr_info!("{}: removed\n", name);
    }
}
