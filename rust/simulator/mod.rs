// SPDX-License-Identifier: GPL-2.0

//! The simulator: the bus's control files, and the simulated adapters they
//! make and remove.
//!
//! Its modules depend one way, each only on those before it in this
//! order (rustfmt sorts the declarations below): `sa` and `vf`, `shared`,
//! `wr`, `gsi`, `fabric`, `cq`, `qp`, `adapter`, `knobs`
//! (`Documentation/simulator.rst`).

mod adapter;
mod cq;
mod fabric;
mod gsi;
mod knobs;
mod qp;
mod sa;
mod shared;
mod vf;
mod wr;

use crate::ib::{
    debugfs,
    provider::bus::{Bus, BusDevice, BusOps, ParentId},
    provider::driver::{DeviceParams, Registration},
    provider::wq::OwnedQueue,
    DirOps, File, ShowBuf,
};
use crate::sim::control::{self, NewDevice};
use adapter::Adapter;
use kernel::{
    c_str,
    init::InPlaceInit,
    new_mutex,
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
    str::CString,
    sync::{Arc, Mutex},
    ThisModule,
};

/// A simulated adapter: its ib_device and its debugfs knobs.
struct SimDevice {
    /// Dropped first: no knob runs while the device goes.
    _knobs: Option<debugfs::Dir<knobs::Knobs>>,
    _reg: Registration<Adapter>,
    /// Its PCI parent, if it has one.
    pci: Option<ParentId>,
}

struct Devices {
    /// Set when the module goes: every later control write is refused.
    closing: bool,
    by_id: RBTree<u32, SimDevice>,
}

/// The state of the module: every simulated adapter.
pub struct Simulator {
    module: &'static ThisModule,
    /// `/sys/kernel/debug/mlx_ext_sim/`; the simulator works without it.
    debugfs: Option<Arc<debugfs::Root>>,
    /// `/sys/kernel/debug/mlx_ext_sim/selftest/`.
    _selftest: Option<debugfs::Dir<LayerSelftest>>,
    devices: Pin<KBox<Mutex<Devices>>>,
    /// What connects the adapters' QPs.
    fabric: Arc<qp::SimFabric>,
    /// Where send requests execute; after `devices`: dropped (and drained)
    /// once every adapter is gone.
    wq: Arc<OwnedQueue>,
}

impl Simulator {
    /// The simulator with no adapter.
    pub fn new(module: &'static ThisModule) -> Result<Self> {
        let debugfs = debugfs::Root::new(c_str!("mlx_ext_sim"))
            .inspect_err(|e| pr_warn!("no debugfs knobs ({:?})\n", e))
            .ok();
        let wq = Arc::new(OwnedQueue::new(c_str!("mlx_ext_sim"))?, GFP_KERNEL)?;
        let selftest = debugfs.as_ref().and_then(|root| {
            debugfs::Dir::new_in(root, c_str!("selftest"), LayerSelftest, &SELFTEST_FILES)
                .inspect_err(|e| pr_warn!("no debugfs selftest ({:?})\n", e))
                .ok()
        });
        Ok(Self {
            module,
            debugfs,
            _selftest: selftest,
            fabric: fabric::Fabric::new()?,
            wq,
            devices: KBox::pin_init(
                new_mutex!(
                    Devices {
                        closing: false,
                        by_id: RBTree::new(),
                    },
                    "mlx_ext_sim::devices"
                ),
                GFP_KERNEL,
            )?,
        })
    }

    fn create(&self, devices: &Devices, req: &NewDevice) -> Result<SimDevice> {
        let name = CString::try_from_fmt(format_args!("mlxsim{}", req.id))?;
        let parent = match &req.pci {
            Some(addr) => {
                let pci = CString::try_from_fmt(format_args!(
                    "{}",
                    core::str::from_utf8(addr.as_bytes()).map_err(|_| EINVAL)?
                ))?;
                let parent = BusDevice::pci(&pci).inspect_err(|e| {
                    let why = if *e == ENOENT {
                        "no such PCI function"
                    } else {
                        "not bound to the mlx_ext_sim PCI driver (write mlx_ext_sim to its driver_override, then bind it)"
                    };
                    pr_err!("new_device: {}: pci:{}: {}\n", &*name, &*pci, why)
                })?;
                let id = parent.id();
                if devices.by_id.values().any(|d| d.pci == Some(id)) {
                    pr_err!(
                        "new_device: {}: pci:{} is the parent of another adapter already\n",
                        &*name,
                        &*pci
                    );
                    return Err(EBUSY);
                }
                parent
            }
            None => BusDevice::new(req.id, req.num_vfs)
                .inspect_err(|e| pr_err!("new_device: {}: no bus device ({:?})\n", &*name, e))?,
        };
        let pci = req.pci.map(|_| parent.id());
        let adapter = Adapter::new(req, self.fabric.clone(), self.wq.clone())?;
        let state = adapter.state();
        let sa = adapter.sa();
        let vf = adapter.vf_guids();
        let params = DeviceParams {
            name: &name,
            node_guid: adapter.node_guid(),
            ports: u32::from(req.ports),
            comp_vectors: 1,
        };
        let mut reg =
            Registration::new(self.module, parent, &params, adapter).inspect_err(|e| {
                pr_err!(
                    "new_device: {}: ib_register_device failed ({:?})\n",
                    &*name,
                    e
                )
            })?;
        sa.set_events(reg.events());
        let knobs = self.debugfs.as_ref().and_then(|root| {
            knobs::Knobs::create(root, &name, state, sa, vf, reg.events(), req.ports)
                .inspect_err(|e| pr_warn!("{}: no debugfs knobs ({:?})\n", &*name, e))
                .ok()
        });
        // Port 1's, as ib_ipoib's first netdev; mlx5 keeps a VF's GUIDs
        // whatever the port. A failure leaves the adapter without it.
        if req.pci.is_some() && req.model.set_vf_guid {
            // The IPoIB netdev of an mlx5-family adapter on a PCI PF, as
            // ib_ipoib makes one on a real one: how `ip link set <pf> vf N
            // node_guid` reaches `set_vf_guid`.
            let _ = reg
                .add_ipoib_netdev(1)
                .inspect_err(|e| pr_warn!("{}: no IPoIB netdev ({:?})\n", &*name, e));
        }
        Ok(SimDevice {
            _knobs: knobs,
            _reg: reg,
            pci,
        })
    }
}

impl BusOps for Simulator {
    fn new_device(&self, text: &[u8]) -> Result {
        let req = control::parse_new_device(text).map_err(|e| {
            pr_err!(
                "new_device: {} (expected \"ID MODEL [PORTS [NUM_VFS|pci:DDDD:BB:DD.F [GUIDS]]]\")\n",
                e.message()
            );
            Error::from_errno(-e.errno())
        })?;
        let mut devices = self.devices.lock();
        if devices.closing {
            return Err(ENODEV);
        }
        if devices.by_id.get(&req.id).is_some() {
            pr_err!("new_device: mlxsim{} exists\n", req.id);
            return Err(EEXIST);
        }
        // Allocated first: once the device exists, nothing may fail.
        let node = RBTreeNodeReservation::new(GFP_KERNEL)?;
        let dev = self.create(&devices, &req)?;
        devices.by_id.insert(node.into_node(req.id, dev));
        match &req.pci {
            Some(addr) => pr_info!(
                "mlxsim{}: {} ({}), {} port(s) of {} GUIDs, on PCI function {} (its VFs the PCI core's)\n",
                req.id,
                req.model.name,
                req.model.description,
                req.ports,
                req.port_guids,
                core::str::from_utf8(addr.as_bytes()).unwrap_or("?")
            ),
            None => pr_info!(
                "mlxsim{}: {} ({}), {} port(s) of {} GUIDs, {} VF(s)\n",
                req.id,
                req.model.name,
                req.model.description,
                req.ports,
                req.port_guids,
                req.num_vfs
            ),
        }
        Ok(())
    }

    fn del_device(&self, text: &[u8]) -> Result {
        let id = control::parse_del_device(text).map_err(|e| {
            pr_err!("del_device: {} (expected \"ID\")\n", e.message());
            Error::from_errno(-e.errno())
        })?;
        let mut devices = self.devices.lock();
        if devices.closing {
            return Err(ENODEV);
        }
        let Some(dev) = devices.by_id.remove(&id) else {
            pr_err!("del_device: no device mlxsim{}\n", id);
            return Err(ENOENT);
        };
        // Unregistering calls every client's `remove` (which destroy what
        // they made on the device) and waits for all users.
        drop(dev);
        pr_info!("mlxsim{}: removed\n", id);
        Ok(())
    }

    fn parent_removed(&self, parent: ParentId) {
        let mut devices = self.devices.lock();
        // One adapter at most (`create`).
        let id = devices
            .by_id
            .iter()
            .find(|(_, d)| d.pci == Some(parent))
            .map(|(&id, _)| id);
        if let Some(id) = id {
            drop(devices.by_id.remove(&id));
            pr_info!("mlxsim{}: removed with its PCI parent\n", id);
        }
    }

    fn shutdown(&self) {
        let mut devices = self.devices.lock();
        devices.closing = true;
        // Every device is unregistered before the bus goes.
        drop(core::mem::take(&mut devices.by_id));
    }
}

/// `/sys/kernel/debug/mlx_ext_sim/selftest/layer`: rules of the `ib` layer
/// no other path of the simulator reaches (a test interface, no stable
/// ABI). A read registers a second simulator bus while the module's lives
/// and shows `bus ERRNO`: `-16` (`EBUSY`), as it must (one static
/// `bus_type`, which a second `bus_register` would corrupt).
struct LayerSelftest;

static SELFTEST_FILES: [File<'static>; 1] = [File {
    name: c_str!("layer"),
    mode: 0o400,
    id: 0,
}];

/// A bus whose control files refuse everything.
struct NoBus;

impl BusOps for NoBus {
    fn new_device(&self, _text: &[u8]) -> Result {
        Err(EPERM)
    }

    fn del_device(&self, _text: &[u8]) -> Result {
        Err(EPERM)
    }

    fn parent_removed(&self, _parent: ParentId) {}

    fn shutdown(&self) {}
}

impl DirOps for LayerSelftest {
    fn show(&self, _id: u32, out: &mut ShowBuf<'_>) -> Result {
        let errno = match Bus::new(NoBus) {
            Ok(_second) => 0,
            Err(e) => e.to_errno(),
        };
        core::fmt::Write::write_fmt(out, format_args!("bus {errno}\n")).map_err(|_| ENOSPC)
    }
}
