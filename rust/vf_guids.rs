// SPDX-License-Identifier: GPL-2.0

//! The VF GUID tables (issue 12): which ports of a device get an `iov` tree,
//! decided when the device is added by the pure rule of
//! `core/src/guid/placement.rs`. The tree itself, its engine and the SA
//! backend are not built yet: for now the decision is logged, one line per
//! port that gets a tree or is refused for a reason an administrator should
//! see.

use crate::{
    caps::DRIVER_MLX4,
    guid::{function_name, guid_split, placement, Parent, PortFacts},
    ib::{Device, DeviceName, Sriov},
};
use kernel::prelude::*;

/// Logs, for each port of `dev`, whether it gets an `iov` tree and why not.
pub fn announce(dev: &Device, name: &DeviceName) {
    let sriov = dev.sriov();
    let parent = match &sriov {
        Sriov::Sim { num_vfs, .. } => Parent::Sim { num_vfs: *num_vfs },
        // Real PFs are opt-in; the switch is not built yet.
        Sriov::PciPf { num_vfs } => Parent::PciPf {
            num_vfs: *num_vfs,
            opted_in: false,
        },
        Sriov::None => Parent::Other,
    };
    // mlx4_ib runs its own engine on an SR-IOV master: a PF with VFs.
    let driver_iov =
        dev.driver_id() == DRIVER_MLX4 && matches!(sriov, Sriov::PciPf { num_vfs } if num_vfs > 0);
    for port in 1..=dev.port_count() {
        let facts = PortFacts {
            parent,
            driver_iov,
            infiniband: dev.port_is_ib(port),
        };
        match placement(&facts) {
            Ok(num_vfs) => {
                let Ok(split) = guid_split(num_vfs) else {
                    continue;
                };
                let mut last = [0u8; 24];
                let pf = match &sriov {
                    Sriov::Sim { name, .. } => name.as_bytes(),
                    _ => &[],
                };
                let n = function_name(pf, num_vfs, &mut last).unwrap_or(0);
                pr_info!(
                    "{}: port {}: {} VFs, functions {} to {}: {} GUIDs for the PF, {} for VF1, {} for VF{} (the iov tree is not built yet)\n",
                    name,
                    port,
                    num_vfs,
                    core::str::from_utf8(pf).unwrap_or("?"),
                    core::str::from_utf8(last.get(..n).unwrap_or(&[])).unwrap_or("?"),
                    split.count(0),
                    split.count(1),
                    split.count(num_vfs),
                    num_vfs
                );
            }
            Err(why) if why.is_logged() => {
                pr_info!("{}: port {}: no VF GUID tree: {}\n", name, port, why.text());
            }
            Err(_) => {}
        }
    }
}
