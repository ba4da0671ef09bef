// SPDX-License-Identifier: GPL-2.0

//! `/sys/class/infiniband/<dev>/mlx_ext/`: what mlx_ext reports for a device.

use crate::{
    caps::AtomicCap,
    declare_ib_client,
    ib::{self, sysfs::Dir, DeviceName, DirOps, File, ShowBuf},
};
use core::fmt::Write;
use kernel::{c_str, prelude::*};

/// The ib_core client that gives every device its `mlx_ext` directory.
pub struct DeviceReports;

declare_ib_client!(DeviceReports, "mlx_ext");

/// The files of a device's `mlx_ext` directory.
#[derive(Clone, Copy)]
#[repr(u32)]
enum FileId {
    AtomicCap,
    MaskedAtomicCap,
}

const FILES: [File<'static>; 2] = [
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
];

/// A device's capability record, read from ib_core when the device is added.
pub struct Caps {
    atomic: AtomicCap,
    masked_atomic: AtomicCap,
}

impl DirOps for Caps {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let cap = match id {
            x if x == FileId::AtomicCap as u32 => self.atomic,
            x if x == FileId::MaskedAtomicCap as u32 => self.masked_atomic,
            _ => return Err(EINVAL),
        };
        writeln!(out, "{}", cap.name()).map_err(|_| ENOSPC)
    }
}

/// What mlx_ext keeps for each device.
pub struct DeviceData {
    _dir: Dir<Caps>,
}

impl ib::Client for DeviceReports {
    type DeviceData = DeviceData;

    fn add(dev: &ib::Device, name: &DeviceName) -> Result<DeviceData> {
        let caps = Caps {
            atomic: known_cap(name, "atomic_cap", dev.atomic_cap()),
            masked_atomic: known_cap(name, "masked_atomic_cap", dev.masked_atomic_cap()),
        };
        let dir = Dir::new(dev, c_str!("mlx_ext"), caps, &FILES).inspect_err(|e| {
            pr_warn!(
                "{}: cannot create the mlx_ext directory ({:?}); the device has no report\n",
                name,
                e
            )
        })?;
        pr_info!(
            "{}: atomic_cap {}, masked_atomic_cap {}\n",
            name,
            dir.data().atomic.name(),
            dir.data().masked_atomic.name()
        );
        Ok(DeviceData { _dir: dir })
    }

    fn rename(_dev: &ib::Device, _data: &DeviceData, name: &DeviceName) {
        pr_info!("{}: device renamed\n", name);
    }

    fn remove(_dev: &ib::Device, _data: &DeviceData, name: &DeviceName) {
        pr_info!("{}: removed\n", name);
    }
}

/// A capability ib_core does not define is reported as `none`, with a warning.
fn known_cap(name: &DeviceName, what: &str, cap: Option<AtomicCap>) -> AtomicCap {
    cap.unwrap_or_else(|| {
        pr_warn!("{}: unknown {} value, reporting none\n", name, what);
        AtomicCap::None
    })
}
