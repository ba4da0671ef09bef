// SPDX-License-Identifier: GPL-2.0

//! The `iov` tree of a device: its directories, the port events its engines
//! take, and how it is built for the ports and VFs of the moment (the
//! GUID-table model of mlx4, or the vport model of mlx5).

use super::files::{
    index_files, index_names, FunctionPortFiles, GidIdxFiles, NoFiles, TableFiles, TableKind,
    VportFiles, FILE_EVENTS, FILE_STATE, FUNCTION_PORT_FILES, PF_VPORT_FILES, VPORT_FILES,
};
use super::port::{now_ns, PortGuids, RETIRE_WAIT_MS, SM_ADDRESS_DELAY_MS};
use crate::caps::DRIVER_MLX4;
use crate::guid::{
    function_name, guid_model, pci_vf_count, placement, Config, GuidModel, NoTree, Parent, PciVfs,
    PortFacts, VfsChanging,
};
use crate::ib::compat::ARef;
use crate::ib::event::{EventHandler, PortEvent, PortEvents};
use crate::ib::pci_iov::Sriov;
use crate::ib::sysfs::Dir;
use crate::ib::work::DelayedWork;
use crate::ib::{sa, Device, DeviceName, File};
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::Arc;

/// The port events of a device, for its ports' engines.
pub(super) struct DeviceEvents {
    pub(super) ports: KVec<Arc<PortGuids>>,
}

impl PortEvents for DeviceEvents {
    fn port_event(&self, port: u32, event: PortEvent) {
        // A port going down makes sends fail as PortDown, which the engine
        // retries after 5 s. Back up, or with another SM (or one that asks
        // its clients to register again), the SM may have lost what it
        // granted: everything is sent again, as mlx4 does. ib_sa makes its
        // SM address again from its own handler of the same event, on
        // ib_wq: the requests go a little later, not to fail at once.
        if !matches!(event, PortEvent::Active | PortEvent::SmChanged) {
            return;
        }
        for p in self.ports.iter().filter(|p| p.port == port) {
            let now = now_ns();
            let mut s = p.state.lock();
            s.engine.invalidate_all(now);
            s.engine.retry_all(now);
            drop(s);
            p.kick.kick(SM_ADDRESS_DELAY_MS);
        }
    }
}

/// The sysfs directories of one port, children first (the order they go).
pub(super) struct PortDirs {
    /// Per function: `iov/<function>/ports/<p>/gid_idx/` and
    /// `iov/<function>/ports/<p>/`.
    pub(super) _functions: KVec<(Dir<GidIdxFiles>, Dir<FunctionPortFiles>)>,
    pub(super) _admin: Dir<TableFiles>,
    pub(super) _gids: Dir<TableFiles>,
    /// `iov/ports/<p>/`.
    pub(super) _port: Dir<NoFiles>,
}

/// A function's directories: `iov/<function>/ports/` and `iov/<function>/`.
pub(super) struct FunctionDirs {
    pub(super) ports: Dir<NoFiles>,
    pub(super) _function: Dir<NoFiles>,
}

/// The vport model's tree of a device (Connect-IB, ConnectX-4 and later,
/// as mlx5 gives each VF a vport): `iov/<function>/ports/<port>/node_guid`
/// and `port_guid`. Nothing in it talks to the SM, and nothing is set but
/// what an administrator writes. Fields drop in order: children first.
pub(super) struct VportIov {
    pub(super) made_for: KVec<TreePort>,
    pub(super) _ports: KVec<Dir<VportFiles>>,
    pub(super) _functions: KVec<FunctionDirs>,
    pub(super) _iov: Dir<NoFiles>,
}

impl VportIov {
    pub(super) fn build(
        devref: &ARef<Device>,
        name: &DeviceName,
        sriov: &Sriov,
        tree: &[TreePort],
    ) -> Result<Self> {
        let Some(&TreePort { num_vfs, .. }) = tree.first() else {
            return Err(EINVAL);
        };
        let made_for = copy_tree(tree)?;
        let iov = Dir::new_empty(&**devref, c_str!("iov"), NoFiles)?;
        let functions = function_dirs(devref, name, &iov, sriov, num_vfs.saturating_add(1))?;
        let mut ports = KVec::new();
        // mlx5 keeps one node and one port GUID per VF whatever the port
        // (ib_virt.c: `vfs_ctx[vf]`, the firmware command on port 1): one
        // pair of files, under the first port, not one per port that
        // would show and set the same pair.
        for t in tree.iter().take(1) {
            let pname = CString::try_from_fmt(format_args!("{}", t.port))?;
            for (f, fd) in functions.iter().enumerate() {
                let function = u16::try_from(f)?;
                let files: &[File<'_>] = if function == 0 {
                    &PF_VPORT_FILES
                } else {
                    &VPORT_FILES
                };
                let dir = Dir::new(
                    &fd.ports,
                    &pname,
                    VportFiles {
                        dev: devref.clone(),
                        port: t.port,
                        function,
                    },
                    files,
                    crate::attr_class!(),
                )?;
                ports.push(dir, GFP_KERNEL)?;
            }
            pr_info!(
                "{}: port {}: VF GUIDs on vports for {} VFs, one pair per VF (set through the driver's set_vf_guid; nothing sent to the SM)\n",
                name,
                t.port,
                num_vfs
            );
        }
        Ok(Self {
            made_for,
            _ports: ports,
            _functions: functions,
            _iov: iov,
        })
    }
}

/// The function directories `iov/<function>/` and their `ports/`, for
/// `count` functions (the PF first): a PCI PF's and its VFs' own PCI names
/// (`pci_name()`), or on a simulated adapter the names mlx4 would make from
/// its PF's.
pub(super) fn function_dirs(
    dev: &Device,
    name: &DeviceName,
    iov: &Dir<NoFiles>,
    sriov: &Sriov,
    count: u16,
) -> Result<KVec<FunctionDirs>> {
    let pf_name = match sriov {
        Sriov::Sim { name, .. } | Sriov::PciPf { name, .. } => name.as_bytes(),
        Sriov::None => &[],
    };
    let mut dirs = KVec::with_capacity(usize::from(count), GFP_KERNEL)?;
    for f in 0..count {
        let mut buf = [0u8; 24];
        let bytes = match (sriov, f) {
            (Sriov::PciPf { .. }, 0) => pf_name,
            (Sriov::PciPf { .. }, vf) => {
                let Some(n) = dev.pci_vf_name(vf - 1) else {
                    // Gone since it was counted: the watch kicks again.
                    pr_info!("{}: VF {} is not on the PCI bus any more\n", name, vf - 1);
                    return Err(ENODEV);
                };
                let b = n.as_bytes();
                let dst = buf.get_mut(..b.len()).ok_or(EINVAL)?;
                dst.copy_from_slice(b);
                buf.get(..b.len()).unwrap_or(&[])
            }
            _ => {
                let n = function_name(pf_name, f, &mut buf).ok_or(EINVAL)?;
                buf.get(..n).unwrap_or(&[])
            }
        };
        let fname = CString::try_from_fmt(format_args!(
            "{}",
            core::str::from_utf8(bytes).map_err(|_| EINVAL)?
        ))?;
        let function = Dir::new_empty(iov, &fname, NoFiles)?;
        let ports = Dir::new_empty(&function, c_str!("ports"), NoFiles)?;
        dirs.push(
            FunctionDirs {
                ports,
                _function: function,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(dirs)
}

/// What a device's tables are made for, kept to compare with what the
/// switch and the VFs ask for later.
pub(super) fn copy_tree(tree: &[TreePort]) -> Result<KVec<TreePort>> {
    let mut made_for = KVec::with_capacity(tree.len(), GFP_KERNEL)?;
    for &t in tree.iter() {
        made_for.push(t, GFP_KERNEL)?;
    }
    Ok(made_for)
}

/// A device's tables, of its model.
pub(super) enum Tables {
    Alias(DeviceIov),
    Vport(VportIov),
}

impl Tables {
    /// Whether they are what `tree` asks for.
    pub(super) fn is(&self, tree: &[TreePort]) -> bool {
        self.made_for() == tree
    }

    fn made_for(&self) -> &[TreePort] {
        match self {
            Self::Alias(t) => t.made_for.as_slice(),
            Self::Vport(t) => t.made_for.as_slice(),
        }
    }

    /// The number of VFs they were made for.
    pub(super) fn num_vfs(&self) -> u16 {
        self.made_for().first().map_or(0, |t| t.num_vfs)
    }
}

/// The VF GUID tables of a device for one number of VFs: its `iov` tree
/// and its ports' engines. Dropping it tears them down.
pub(super) struct DeviceIov {
    /// The ports it was made for, with their VFs and GUIDs.
    pub(super) made_for: KVec<TreePort>,
    pub(super) events: Option<EventHandler<DeviceEvents>>,
    pub(super) works: KVec<DelayedWork<PortGuids>>,
    pub(super) port_dirs: KVec<PortDirs>,
    pub(super) functions: KVec<FunctionDirs>,
    pub(super) ports_dir: Option<Dir<NoFiles>>,
    pub(super) iov: Option<Dir<NoFiles>>,
    pub(super) ports: KVec<Arc<PortGuids>>,
}

impl Drop for DeviceIov {
    fn drop(&mut self) {
        // The SM deletes the GUIDs first, while the tree still shows them
        // going (admin writes are refused): once the tree is gone, so are
        // they, or the wait has said which were not.
        let start = now_ns();
        for p in self.ports.iter() {
            p.retire();
        }
        for p in self.ports.iter() {
            let spent = u32::try_from(now_ns().saturating_sub(start) / 1_000_000);
            p.wait_retired(RETIRE_WAIT_MS.saturating_sub(spent.unwrap_or(u32::MAX)));
        }
        // No port event, then no sysfs access, runs from here on.
        drop(self.events.take());
        drop(core::mem::take(&mut self.port_dirs));
        drop(core::mem::take(&mut self.functions));
        drop(self.ports_dir.take());
        drop(self.iov.take());
        // The ports: no new work, no query left, no work item running,
        // every answer in.
        for p in self.ports.iter() {
            p.stop();
        }
        drop(core::mem::take(&mut self.works));
        for p in self.ports.iter() {
            p.wait_answers();
        }
    }
}

/// A port that gets a tree.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct TreePort {
    pub(super) port: u32,
    pub(super) num_vfs: u16,
    /// Its GUID entries (its GID table length).
    pub(super) port_guids: u16,
}

/// What [`tree_ports`] finds.
pub(super) struct TreePorts {
    pub(super) sriov: Sriov,
    /// A PCI PF's VFs in the middle of a change (counted as none).
    pub(super) changing: Option<VfsChanging>,
    /// The ports that get a tree.
    pub(super) tree: KVec<TreePort>,
    /// Why the others do not.
    pub(super) why_not: KVec<(u32, NoTree)>,
}

/// Which ports of `dev` get a tree, with the device's switch `on`; a PCI
/// PF's VFs as its watch saw them (`pci`), when it has one.
pub(super) fn tree_ports(
    dev: &Device,
    name: &DeviceName,
    on: bool,
    pci: Option<PciVfs>,
) -> TreePorts {
    let mut sriov = dev.sriov();
    let mut changing = None;
    if let (Sriov::PciPf { num_vfs, .. }, Some(pci)) = (&mut sriov, pci) {
        *num_vfs = pci_vf_count(&pci).unwrap_or_else(|c| {
            changing = Some(c);
            0
        });
    }
    let parent = parent_of(&sriov);
    let driver_iov = driver_iov(dev, &sriov);
    let mut ports = KVec::new();
    let mut why_not = KVec::new();
    for port in 1..=dev.port_count() {
        let facts = PortFacts {
            parent,
            driver_iov,
            infiniband: dev.port_is_ib(port),
            switched_on: on,
            port_guids: port_guids(dev, port),
            model: model_of(dev),
        };
        match placement(&facts) {
            Ok(num_vfs) => {
                let tp = TreePort {
                    port,
                    num_vfs,
                    port_guids: facts.port_guids,
                };
                if ports.push(tp, GFP_KERNEL).is_err() {
                    pr_warn!("{}: port {}: no VF GUID tree: no memory\n", name, port);
                }
            }
            Err(why) => {
                // Without room, a reason is not told.
                let _ = why_not.push((port, why), GFP_KERNEL);
            }
        }
    }
    TreePorts {
        sriov,
        changing,
        tree: ports,
        why_not,
    }
}

/// The device's GUID model, by its identity.
pub(super) fn model_of(dev: &Device) -> GuidModel {
    guid_model(dev.vendor_id(), dev.vendor_part_id())
}

/// The GUID entries of `port`: its GID table length.
pub(super) fn port_guids(dev: &Device, port: u32) -> u16 {
    u16::try_from(dev.port_gid_tbl_len(port)).unwrap_or(u16::MAX)
}

pub(super) fn parent_of(sriov: &Sriov) -> Parent {
    match sriov {
        Sriov::Sim { num_vfs, .. } => Parent::Sim { num_vfs: *num_vfs },
        Sriov::PciPf { num_vfs, .. } => Parent::PciPf { num_vfs: *num_vfs },
        Sriov::None => Parent::Other,
    }
}

/// mlx4_ib runs its own engine on an SR-IOV master: a PF with VFs.
pub(super) fn driver_iov(dev: &Device, sriov: &Sriov) -> bool {
    dev.driver_id() == DRIVER_MLX4 && matches!(sriov, Sriov::PciPf { num_vfs, .. } if *num_vfs > 0)
}

impl DeviceIov {
    /// Makes the tables of `dev` on the ports of `tree`: the engines, the
    /// tree that shows them, then the events that drive them.
    pub(super) fn build(
        devref: ARef<Device>,
        name: &DeviceName,
        sriov: &Sriov,
        tree: &[TreePort],
    ) -> Result<Self> {
        // Every port has the device's VFs.
        let Some(&TreePort { num_vfs, .. }) = tree.first() else {
            return Err(EINVAL);
        };
        let mut d = DeviceIov {
            made_for: copy_tree(tree)?,
            events: None,
            works: KVec::new(),
            port_dirs: KVec::new(),
            functions: KVec::new(),
            ports_dir: None,
            iov: None,
            ports: KVec::new(),
        };
        // The engines first: the tree shows them.
        d.add_engines(&devref, name, tree)?;
        d.add_tree(&devref, name, sriov, num_vfs.saturating_add(1))?;
        d.start(&devref, name, num_vfs)?;
        Ok(d)
    }

    /// One engine per port of `tree`, with its work item.
    fn add_engines(&mut self, dev: &ARef<Device>, name: &DeviceName, tree: &[TreePort]) -> Result {
        let sm_guid_assign = sa::sm_guid_assign();
        for t in tree.iter() {
            let hw_guid = dev.port_guid(t.port).unwrap_or(0);
            let p = PortGuids::new(
                dev.clone(),
                name,
                t.port,
                Config {
                    port_guids: t.port_guids,
                    num_vfs: t.num_vfs,
                    sm_guid_assign,
                    hw_guid,
                },
            )?;
            self.works.push(
                DelayedWork::new(
                    p.clone(),
                    &p.kick,
                    c_str!("mlx_ext::vf_guids::PortGuids::work"),
                    kernel::static_lock_class!(),
                )?,
                GFP_KERNEL,
            )?;
            self.ports.push(p, GFP_KERNEL)?;
        }
        Ok(())
    }

    /// The `iov` tree of the engines: the functions' directories, then each
    /// port's tables.
    fn add_tree(
        &mut self,
        dev: &Device,
        name: &DeviceName,
        sriov: &Sriov,
        num_functions: u16,
    ) -> Result {
        let names = index_names()?;
        let iov_dir = Dir::new_empty(dev, c_str!("iov"), NoFiles)?;
        let ports_dir = Dir::new_empty(&iov_dir, c_str!("ports"), NoFiles)?;
        self.functions = function_dirs(dev, name, &iov_dir, sriov, num_functions)?;
        for p in self.ports.iter() {
            let dirs = port_dirs(p, &names, &ports_dir, &self.functions)?;
            self.port_dirs.push(dirs, GFP_KERNEL)?;
        }
        self.ports_dir = Some(ports_dir);
        self.iov = Some(iov_dir);
        Ok(())
    }

    /// The engines start: the device's port events reach them, and each
    /// asks the SM for what it needs.
    fn start(&mut self, dev: &ARef<Device>, name: &DeviceName, num_vfs: u16) -> Result {
        let mut ports = KVec::new();
        for p in self.ports.iter() {
            ports.push(p.clone(), GFP_KERNEL)?;
        }
        self.events = Some(EventHandler::new(
            dev,
            Arc::new(DeviceEvents { ports }, GFP_KERNEL)?,
        )?);
        for p in self.ports.iter() {
            p.kick.kick(0);
        }
        for p in self.ports.iter() {
            let split = *p.state.lock().engine.split();
            pr_info!(
                "{}: port {}: VF GUID table of {} GUIDs for {} VFs: the PF has {}, VF1 {}, VF{} {}\n",
                name,
                p.port,
                split.port_guids(),
                num_vfs,
                split.count(0),
                split.count(1),
                num_vfs,
                split.count(num_vfs)
            );
        }
        Ok(())
    }
}

/// The directories of port `p`'s tables: `iov/ports/<p>/admin_guids/` and
/// `gids/`, and each function's `iov/<function>/ports/<p>/` with its
/// `gid_idx/`. The port's engine gets the notifiers of the functions'
/// files.
fn port_dirs(
    p: &Arc<PortGuids>,
    names: &[CString],
    ports_dir: &Dir<NoFiles>,
    function_dirs: &[FunctionDirs],
) -> Result<PortDirs> {
    let split = *p.state.lock().engine.split();
    let entries = usize::from(split.port_guids());
    let admin_files = index_files(names, entries, 0o644)?;
    let gid_files = index_files(names, entries, 0o444)?;
    let pname = CString::try_from_fmt(format_args!("{}", p.port))?;
    let port_dir = Dir::new_empty(ports_dir, &pname, NoFiles)?;
    let admin = Dir::new(
        &port_dir,
        c_str!("admin_guids"),
        TableFiles {
            port: p.clone(),
            kind: TableKind::Admin,
        },
        &admin_files,
        crate::attr_class!(),
    )?;
    let gids = Dir::new(
        &port_dir,
        c_str!("gids"),
        TableFiles {
            port: p.clone(),
            kind: TableKind::Gids,
        },
        &gid_files,
        crate::attr_class!(),
    )?;
    let mut functions = KVec::new();
    let mut notifiers = KVec::new();
    for (f, fd) in function_dirs.iter().enumerate() {
        let function = u16::try_from(f)?;
        let fp = Dir::new(
            &fd.ports,
            &pname,
            FunctionPortFiles {
                port: p.clone(),
                function,
            },
            &FUNCTION_PORT_FILES,
            crate::attr_class!(),
        )?;
        let idx_files = index_files(names, usize::from(split.count(function)), 0o444)?;
        let idx = Dir::new(
            &fp,
            c_str!("gid_idx"),
            GidIdxFiles {
                port: p.clone(),
                function,
            },
            &idx_files,
            crate::attr_class!(),
        )?;
        notifiers.push(
            (fp.notifier(FILE_EVENTS), fp.notifier(FILE_STATE)),
            GFP_KERNEL,
        )?;
        functions.push((idx, fp), GFP_KERNEL)?;
    }
    p.state.lock().notifiers = notifiers;
    Ok(PortDirs {
        _functions: functions,
        _admin: admin,
        _gids: gids,
        _port: port_dir,
    })
}
