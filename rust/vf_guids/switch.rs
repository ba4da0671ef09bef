// SPDX-License-Identifier: GPL-2.0

//! A device's tables as its switch (`mlx_ext/vf_guid_tables`) and its
//! parent's VFs
//! make them, from the device's `add` to its `remove`.

use super::tree::{
    driver_iov, model_of, parent_of, port_guids, tree_ports, DeviceIov, Tables, TreePorts, VportIov,
};
use crate::guid::{
    can_switch_on, on_by_default, parse_switch, switch_text, GuidModel, PciVfs, PortFacts,
};
use crate::ib::compat::ARef;
use crate::ib::pci_iov::{PciVfState, VfWatch};
use crate::ib::work::{DelayedRun, DelayedWork, Kicker};
use crate::ib::{Device, DeviceName};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex};

/// A device's VF GUID tables as its switch and its parent's number of VFs
/// make them, at any time from the device's `add` to its `remove`: made,
/// made again for another number of VFs (a new tree with the new split,
/// every admin value dropped with the VFs they were for), removed.
pub struct DeviceGuids {
    pub(super) slot: Arc<Slot>,
    /// The rebuild after a change of VFs.
    pub(super) work: Option<DelayedWork<Slot>>,
}

/// What [`DeviceGuids`], its switch file and its work item share.
#[pin_data]
pub struct Slot {
    pub(super) dev: ARef<Device>,
    pub(super) name: DeviceName,
    pub(super) kick: Kicker,
    #[pin]
    pub(super) inner: Mutex<SlotInner>,
}

pub(super) struct SlotInner {
    /// The device's switch, `mlx_ext/vf_guid_tables`.
    pub(super) on: bool,
    /// Set by teardown: nothing is made any more.
    pub(super) gone: bool,
    /// What kicks the work when the VFs change; taken by teardown first.
    pub(super) watch: Option<VfWatch>,
    pub(super) tables: Option<Tables>,
}

impl DeviceGuids {
    /// Starts watching `dev` and makes its tables if it gets any now.
    pub fn new(dev: &Device, name: &DeviceName) -> Result<Self> {
        let devref = ARef::from(dev);
        let slot_dev = devref.clone();
        let kick = Kicker::new()?;
        let on = on_by_default(&parent_of(&dev.sriov()));
        let slot = Arc::pin_init(
            pin_init!(Slot {
                dev: slot_dev,
                name: name.clone(),
                kick,
                inner <- new_mutex!(
                    SlotInner {
                        on,
                        gone: false,
                        watch: None,
                        tables: None,
                    },
                    "mlx_ext::vf_guids::Slot::inner"
                ),
            }),
            GFP_KERNEL,
        )?;
        let work = DelayedWork::new(
            slot.clone(),
            &slot.kick,
            c_str!("mlx_ext::vf_guids::Slot::work"),
            kernel::static_lock_class!(),
        )?;
        {
            // Registered under the lock, which the work takes first: no
            // update runs without it. Without a watch the tables stay as
            // they are made now.
            let mut inner = slot.inner.lock();
            inner.watch = VfWatch::new(&devref, &slot.kick)
                .inspect_err(|e| {
                    pr_warn!(
                        "{}: changes of the number of VFs will not be seen ({:?})\n",
                        name,
                        e
                    )
                })
                .ok()
                .flatten();
            // Said by `update`; the device is fine without.
            let _ = slot.update(&mut inner, true);
        }
        Ok(Self {
            slot,
            work: Some(work),
        })
    }

    /// What the device's `mlx_ext/vf_guid_tables` file acts on.
    pub fn slot(&self) -> &Arc<Slot> {
        &self.slot
    }
}

impl Drop for DeviceGuids {
    fn drop(&mut self) {
        // No change of VFs kicks the work any more.
        let watch = self.slot.inner.lock().watch.take();
        drop(watch);
        drop(self.work.take());
        let tables = {
            let mut inner = self.slot.inner.lock();
            inner.gone = true;
            inner.tables.take()
        };
        drop(tables);
    }
}

impl Slot {
    /// Makes the tables again if they are not what the switch and the VFs
    /// ask for now; says why a device has none when it changed, or always
    /// with `tell`. An error if new tables could not be made (and were
    /// not: the device is otherwise fine).
    fn update(&self, inner: &mut SlotInner, tell: bool) -> Result {
        if inner.gone {
            return Ok(());
        }
        let name = &self.name;
        // A PCI PF's watch that cannot read the PF (its capability gone, a
        // surprise removal) counts no VFs; a simulated adapter's has none.
        let pci = inner
            .watch
            .as_ref()
            .map(|w| w.pci_vfs().map(pci_vfs).unwrap_or_default());
        let TreePorts {
            sriov,
            changing,
            tree,
            why_not,
        } = tree_ports(&self.dev, name, inner.on, pci);
        let same = match &inner.tables {
            Some(t) => t.is(&tree),
            None => tree.is_empty(),
        };
        if same && !tell {
            return Ok(());
        }
        let (changed, removed) = match inner.tables.take() {
            Some(old) if !same => {
                let n = old.num_vfs();
                drop(old);
                (true, Some(n))
            }
            t => {
                inner.tables = t;
                (!same, None)
            }
        };
        if let Some(n) = removed {
            pr_info!(
                "{}: VF GUID tables for {} VFs removed (their admin values with them)\n",
                name,
                n
            );
        }
        if let Some(c) = changing {
            if changed || tell {
                pr_info!("{}: no VF GUID tables while {}\n", name, c);
            }
        }
        for &(port, why) in why_not.iter() {
            if why.is_logged() && (changed || tell) {
                pr_info!("{}: port {}: no VF GUID tree: {}\n", name, port, why);
            }
        }
        if !changed || tree.is_empty() {
            return Ok(());
        }
        let t = match model_of(&self.dev) {
            GuidModel::Alias => {
                DeviceIov::build(self.dev.clone(), name, &sriov, &tree).map(Tables::Alias)
            }
            GuidModel::Vport => VportIov::build(&self.dev, name, &sriov, &tree).map(Tables::Vport),
        }
        .inspect_err(|e| pr_warn!("{}: no VF GUID tables ({:?})\n", name, e))?;
        inner.tables = Some(t);
        Ok(())
    }

    /// The switch, as `mlx_ext/vf_guid_tables` shows it.
    pub fn switch(&self) -> bool {
        self.inner.lock().on
    }

    /// An administrator wrote the switch: `-EINVAL` for anything but
    /// `on`, `off`, `1`, `0`; `-EOPNOTSUPP` to switch on a device none of
    /// whose ports could ever have tables; the error of making them if they
    /// cannot be (and the switch as it was).
    pub fn write_switch(&self, data: &[u8]) -> Result {
        let on = parse_switch(data).ok_or(EINVAL)?;
        let name = &self.name;
        let dev = &self.dev;
        if on {
            let sriov = dev.sriov();
            let parent = parent_of(&sriov);
            let driver_iov = driver_iov(dev, &sriov);
            let mut first = None;
            let mut ok = false;
            for port in 1..=dev.port_count() {
                let facts = PortFacts {
                    parent,
                    driver_iov,
                    infiniband: dev.port_is_ib(port),
                    switched_on: true,
                    port_guids: port_guids(dev, port),
                    model: model_of(dev),
                };
                match can_switch_on(&facts) {
                    Ok(()) => ok = true,
                    Err(why) => {
                        first.get_or_insert(why);
                    }
                }
            }
            if !ok {
                pr_info!(
                    "{}: vf_guid_tables: cannot be switched on: {}\n",
                    name,
                    first.map_or("the device has no ports", |w| w.text())
                );
                return Err(crate::ib::eopnotsupp());
            }
        }
        let mut inner = self.inner.lock();
        if inner.gone {
            return Err(ENODEV);
        }
        if inner.on == on {
            return Ok(());
        }
        let was = inner.on;
        inner.on = on;
        pr_info!("{}: vf_guid_tables switched {}\n", name, switch_text(on));
        self.update(&mut inner, true)
            .inspect_err(|_| inner.on = was)
    }
}

impl DelayedRun for Slot {
    fn run(this: &Arc<Self>) {
        let mut inner = this.inner.lock();
        // Said by `update`; the next change tries again.
        let _ = this.update(&mut inner, false);
    }
}

/// What the watch of a PCI PF saw, as the placement rules take it.
pub(super) fn pci_vfs(v: PciVfState) -> PciVfs {
    PciVfs {
        present: v.present,
        first_absent: v.first_absent,
        num_vfs: v.num_vfs,
        initial: v.initial,
        enabled: v.enabled,
    }
}
