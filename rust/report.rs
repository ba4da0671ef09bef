// SPDX-License-Identifier: GPL-2.0

//! `/sys/class/infiniband/<dev>/mlx_ext/`: what mlx_ext reports for a device.

use crate::{
    caps::AtomicCap,
    declare_ib_client,
    ib::{self, sysfs::Dir, DirOps, ShowBuf},
};
use core::fmt::Write;
use kernel::{c_str, prelude::*};

/// The ib_core client that gives every device its `mlx_ext` directory.
pub struct DeviceReports;

declare_ib_client!(DeviceReports, "mlx_ext");

/// The files of a device's `mlx_ext` directory, in the order they are made.
#[derive(Clone, Copy)]
#[repr(u32)]
enum File {
    AtomicCap,
    MaskedAtomicCap,
}

const FILES: [(File, &CStr); 2] = [
    (File::AtomicCap, c_str!("atomic_cap")),
    (File::MaskedAtomicCap, c_str!("masked_atomic_cap")),
];

/// A device's capability record, read from ib_core when the device is added.
pub struct Caps {
    atomic: AtomicCap,
    masked_atomic: AtomicCap,
}

impl DirOps for Caps {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let cap = match id {
            x if x == File::AtomicCap as u32 => self.atomic,
            x if x == File::MaskedAtomicCap as u32 => self.masked_atomic,
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

    fn add(dev: &ib::Device) -> Result<DeviceData> {
        let caps = Caps {
            atomic: known_cap(dev, "atomic_cap", dev.atomic_cap()),
            masked_atomic: known_cap(dev, "masked_atomic_cap", dev.masked_atomic_cap()),
        };
        pr_info!(
            "{}: atomic_cap {}, masked_atomic_cap {}\n",
            dev.name(),
            caps.atomic.name(),
            caps.masked_atomic.name()
        );
        let dir = Dir::new(dev, c_str!("mlx_ext"), caps)?;
        for (file, name) in FILES {
            dir.add_file(name, 0o444, file as u32)?;
        }
        Ok(DeviceData { _dir: dir })
    }
}

/// A capability ib_core does not define is reported as `none`, with a warning.
fn known_cap(dev: &ib::Device, what: &str, cap: Option<AtomicCap>) -> AtomicCap {
    cap.unwrap_or_else(|| {
        pr_warn!("{}: unknown {} value, reporting none\n", dev.name(), what);
        AtomicCap::None
    })
}
