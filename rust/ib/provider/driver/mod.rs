// SPDX-License-Identifier: GPL-2.0

//! RDMA device drivers: the provider side of ib_core.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).
//!
//! A driver implements [`Driver`], a `#[vtable]` trait in the manner of
//! `kernel::net::phy::Driver`: the ops it implements become the entries of
//! its `struct ib_device_ops`, and [`Registration`] registers a device that
//! runs them, unregistering it on drop.
//!
//! The objects ib_core allocates for the driver (PD, CQ, QP: the
//! `INIT_RDMA_OBJ_SIZE` objects) carry the driver's data for them after the
//! core's struct, as C drivers embed it; memory regions are allocated here.
//! The driver sees them as [`Pd`], [`Cq`], [`Qp`] and [`Mr`], which give
//! its data and what ib_core keeps in them, and never as pointers.
//!
//! What this layer does not offer: user space (no `alloc_ucontext`, so
//! uverbs and the provider libraries never bind to these devices), SRQs,
//! UD QPs other than the GSI QP, memory windows, and every optional op not
//! in [`Driver`]. Address handles are InfiniBand LID addresses, which this
//! layer keeps for the driver ([`Ah`]).

pub mod dma;
mod netdev;
mod objects;
mod ops;
mod types;

pub use super::bus::BusDevice;
pub use netdev::rtnl_held;
use netdev::IpoibNetdev;
pub use objects::Ah;
pub use objects::{Cq, CqNotifier, Mr, Pd, Qp};
pub use types::{
    qp_mask, AhAttr, DeviceAttr, MrKeys, MrMap, PortAttr, PortImmutable, PortState, QpAttr,
    QpInitAttr, QpRef, QpState, QpType, RecvWr, RegWr, SendWr, Sge, UdWr, Wc, WcSink,
    CORE_CAP_IB_NO_SMI, CORE_CAP_PROT_IB, MGMT_MAD_SIZE,
};

use crate::ib::bindings;
use core::ptr::NonNull;
use kernel::{
    build_error,
    error::{to_result, VTABLE_DEFAULT_ERROR},
    init::InPlaceInit,
    new_mutex,
    prelude::*,
    str::CStr,
    sync::{Arc, Mutex},
    ThisModule,
};
use objects::DevObj;

/// An RDMA device driver: what its devices do for ib_core.
///
/// `Self` is a device's data; every op runs with `&self`. The methods that
/// are not provided are the ops ib_core requires of a device that offers
/// kernel verbs (`ib_device_check_mandatory` and the kverbs list of
/// `core/device.c`); the others are optional, and left out of the ops table
/// unless implemented (`#[vtable]`).
#[vtable]
pub trait Driver: Send + Sync + Sized + 'static {
    /// The driver's data of a protection domain.
    type Pd: Send + Sync;
    /// The driver's data of a completion queue.
    type Cq: Send + Sync;
    /// The driver's data of a queue pair.
    type Qp: Send + Sync;
    /// The driver's data of a memory region.
    type Mr: Send + Sync;
    /// The driver's data of an address handle.
    type Ah: Send + Sync;

    /// The device's attributes, asked once during registration.
    fn query_device(&self) -> DeviceAttr;

    /// The attributes of port `port` (1-based, checked by ib_core).
    fn query_port(&self, port: u32) -> Result<PortAttr>;

    /// What never changes on port `port`, asked during registration.
    fn port_immutable(&self, port: u32) -> Result<PortImmutable>;

    /// Entry `index` of the P_Key table of `port`.
    fn query_pkey(&self, port: u32, index: u16) -> Result<u16>;

    /// Entry `index` of the GID table of an InfiniBand `port`, as 16 bytes
    /// in network order.
    fn query_gid(&self, port: u32, index: u32) -> Result<[u8; 16]>;

    /// Makes a protection domain.
    fn alloc_pd(&self) -> Result<Self::Pd>;

    /// Makes a completion queue. `notifier` calls the CQ's completion
    /// handler; it stops working when the CQ is destroyed.
    fn create_cq(&self, entries: u32, notifier: CqNotifier) -> Result<Self::Cq>;

    /// Called before the CQ's data is dropped: nothing may complete on it
    /// afterwards.
    fn destroy_cq(&self, _cq: &Cq<Self>) {}

    /// Moves completions of `cq` into `out`, oldest first, until it is full
    /// or none is left.
    fn poll_cq(&self, cq: &Cq<Self>, out: &mut WcSink<'_>);

    /// Arms `cq`: its completion handler runs at the next completion (the
    /// next solicited one if `solicited_only`). With `report_missed`,
    /// returns whether completions are already waiting.
    fn req_notify_cq(
        &self,
        cq: &Cq<Self>,
        solicited_only: bool,
        report_missed: bool,
    ) -> Result<bool>;

    /// Makes queue pair `qp` (how its completions name it) in `pd`,
    /// completing on `send_cq` and `recv_cq` (which ib_core keeps until the
    /// QP is destroyed), in the RESET state; returns its data and its
    /// number.
    fn create_qp(
        &self,
        qp: QpRef,
        pd: &Pd<Self>,
        send_cq: &Cq<Self>,
        recv_cq: &Cq<Self>,
        init: &QpInitAttr,
    ) -> Result<(Self::Qp, u32)>;

    /// Changes the attributes in `mask` (`IB_QP_*`) of `qp`.
    fn modify_qp(&self, qp: &Qp<Self>, attr: &QpAttr, mask: u32) -> Result;

    /// The state of `qp` now: what `ib_query_qp` answers in `qp_state`
    /// and `cur_qp_state`.
    fn qp_state(&self, qp: &Qp<Self>) -> QpState;

    /// Called before the QP's data is dropped: when it returns, nothing
    /// completes for the QP any more.
    fn destroy_qp(&self, _qp: &Qp<Self>) {}

    /// Posts one send work request.
    fn post_send(&self, qp: &Qp<Self>, wr: &SendWr<'_, Self>) -> Result;

    /// Posts one receive work request.
    fn post_recv(&self, qp: &Qp<Self>, wr: &RecvWr<'_>) -> Result;

    /// Makes the memory region of all memory (the core's local DMA lkey,
    /// and `IB_PD_UNSAFE_GLOBAL_RKEY`) with `access` (`IB_ACCESS_*`).
    fn get_dma_mr(&self, pd: &Pd<Self>, access: u32) -> Result<(Self::Mr, MrKeys)>;

    /// Called before the MR's data is dropped.
    fn dereg_mr(&self, _mr: &Mr<Self>) {}

    /// Makes a fast-registration MR (`ib_alloc_mr`, `IB_MR_TYPE_MEM_REG`) of
    /// up to `max_pages` pages, registered by a later `IB_WR_REG_MR`.
    /// Implementing it also provides `map_mr_sg`, which calls
    /// [`Driver::map_mr`].
    fn alloc_mr(&self, _pd: &Pd<Self>, _max_pages: u32) -> Result<(Self::Mr, MrKeys)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Takes the pages `ib_map_mr_sg` mapped an FRWR MR to.
    fn map_mr(&self, _mr: &Mr<Self>, _map: &MrMap<'_>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Makes an address handle for `attr` (may be called in atomic
    /// context: no sleeping). Implementing it also provides `query_ah`
    /// (which answers `attr`) and `destroy_ah`; ib_sa needs all three.
    fn create_ah(&self, _attr: &AhAttr) -> Result<Self::Ah> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Takes a change of the capability mask of `port` (`ib_modify_port`:
    /// ib_cm sets `IB_PORT_CM_SUP`), which ib_cm needs to attach.
    fn modify_port(&self, _port: u32) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets the node or port GUID of SR-IOV VF `vf` (from 0) on `port`
    /// (`ib_set_vf_guid`, process context).
    fn set_vf_guid(&self, _vf: u32, _port: u32, _guid: u64, _kind: VfGuidKind) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Returns the node and port GUIDs of SR-IOV VF `vf` (from 0) on `port`
    /// (`ib_get_vf_guid`, process context), each 0 where none was set, as
    /// mlx5's `mlx5_ib_get_vf_guid` answers.
    fn get_vf_guid(&self, _vf: u32, _port: u32) -> Result<(u64, u64)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// Which GUID of a VF `set_vf_guid` sets (`IFLA_VF_IB_NODE_GUID`,
/// `IFLA_VF_IB_PORT_GUID`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VfGuidKind {
    /// The VF's node GUID.
    Node,
    /// The VF's port GUID.
    Port,
}

/// The settings of a device that are not asked through an op.
pub struct DeviceParams<'a> {
    /// The device's name in ib_core (`%d` is not expanded).
    pub name: &'a CStr,
    /// Its node GUID, in host order.
    pub node_guid: u64,
    /// Its number of ports.
    pub ports: u32,
    /// Its number of completion vectors.
    pub comp_vectors: u32,
}

/// A device registered with ib_core; unregistered on drop.
///
/// # Invariants
///
/// `raw` is a `DevObj<T>` made by `_ib_alloc_device`, its data written, and
/// registered with ib_core with `T`'s ops; it stays so until `drop`.
pub struct Registration<T: Driver> {
    raw: NonNull<DevObj<T>>,
    events: Events,
    /// The IPoIB netdev of [`Self::add_ipoib_netdev`], if any: owned here,
    /// so that it goes before the device whose ops it calls (`drop`).
    netdev: Option<IpoibNetdev>,
    /// The device's parent, deleted after it.
    _parent: super::bus::BusDevice,
}

// SAFETY: A `Registration` owns its device, which ib_core lets any thread
// unregister, and hands out `&T` only, which is `Sync`.
unsafe impl<T: Driver> Send for Registration<T> {}
// SAFETY: Through `&Registration` one only gets `&T` and dispatches events,
// which ib_core allows from any context.
unsafe impl<T: Driver> Sync for Registration<T> {}

impl<T: Driver> Registration<T> {
    /// Allocates a device with `data`, below `parent` in the device tree
    /// (which it deletes after unregistering the device), and registers it
    /// with ib_core. ib_core calls `T`'s ops from inside
    /// this call (`query_device`, the ports), and tells its clients.
    pub fn new(
        module: &'static ThisModule,
        parent: super::bus::BusDevice,
        params: &DeviceParams<'_>,
        data: T,
    ) -> Result<Self> {
        let obj = DevObj::<T>::alloc(data)?;
        let ib = DevObj::ib(obj);
        // Made before registration: nothing may fail once it succeeded.
        let events = match Events::new(ib) {
            Ok(events) => events,
            Err(e) => {
                // SAFETY: Not registered; nothing else has the device.
                unsafe { DevObj::free(obj) };
                return Err(e);
            }
        };
        let ops = ops::Adapter::<T>::ops(module);
        // SAFETY: `ib` is a device just allocated and not registered; the
        // fields written here are the driver's to set before registration
        // (as rxe's `rxe_register_device` sets them). `ib_set_device_ops`
        // copies `ops`.
        let ret = unsafe {
            (*ib).node_type = bindings::RDMA_NODE_IB_CA as u8;
            (*ib).node_guid = params.node_guid.to_be();
            (*ib).phys_port_cnt = params.ports;
            (*ib).num_comp_vectors = params.comp_vectors.try_into().unwrap_or(1);
            (*ib).local_dma_lkey = 0;
            bindings::ib_set_device_ops(ib, &ops);
            bindings::mlx_ext_ib_device_set_parent(ib, parent.as_raw());
            // No DMA device: with INFINIBAND_VIRT_DMA, ULPs' DMA addresses
            // are kernel virtual addresses (as for rxe and siw).
            bindings::ib_register_device(ib, params.name.as_char_ptr(), core::ptr::null_mut())
        };
        if let Err(e) = to_result(ret) {
            // SAFETY: Registration failed: ib_core no longer uses the device
            // and the data is ours to drop before the device is freed.
            unsafe { DevObj::free(obj) };
            return Err(e);
        }
        // INVARIANT: Allocated, data written and registered above.
        Ok(Self {
            raw: obj,
            events,
            netdev: None,
            _parent: parent,
        })
    }

    /// The device's data.
    pub fn data(&self) -> &T {
        // SAFETY: The data is written and lives until `drop` (invariant).
        unsafe { DevObj::data(self.raw) }
    }

    /// The registered `struct ib_device`.
    pub(super) fn ib(&self) -> *mut bindings::ib_device {
        DevObj::ib(self.raw)
    }

    /// A handle that raises the device's asynchronous events while it is
    /// registered.
    pub fn events(&self) -> Events {
        self.events.clone()
    }

    /// Registers `<device>ib<port>`, an IPoIB netdev on port `port` whose
    /// VF operations call the device's (`rust/helpers/simnet.c`), owned by
    /// this registration and unregistered before the device is. The
    /// device's parent must be a PCI function (`EINVAL` otherwise); one
    /// netdev per device (`EBUSY` for a second). Process context; takes
    /// RTNL.
    pub fn add_ipoib_netdev(&mut self, port: u32) -> Result {
        if self.netdev.is_some() {
            return Err(EBUSY);
        }
        // SAFETY: The netdev is kept in `self.netdev`, which `drop` empties
        // before it unregisters the device.
        self.netdev = Some(unsafe { IpoibNetdev::new(self, port) }?);
        Ok(())
    }
}

impl<T: Driver> Drop for Registration<T> {
    fn drop(&mut self) {
        // First the netdev, whose VF operations call the device.
        drop(self.netdev.take());
        let ib = DevObj::ib(self.raw);
        // No event is raised from here on, nor while one is being raised.
        self.events.kill();
        // SAFETY: Registered (invariant). `ib_unregister_device` calls every
        // client's `remove`, which destroy the objects they made on the
        // device through our ops, and waits for every user to go: no op runs
        // after it returns.
        unsafe { bindings::ib_unregister_device(ib) };
        // SAFETY: Unregistered above; ib_core no longer calls our ops.
        unsafe { DevObj::free(self.raw) };
    }
}

/// Raises the asynchronous events of a registered device (`ib_dispatch_event`)
/// as a driver does from its interrupt handler. Cheap to clone; once the
/// device is unregistered it does nothing.
#[derive(Clone)]
pub struct Events(Arc<EventsInner>);

#[pin_data]
struct EventsInner {
    ib: NonNull<bindings::ib_device>,
    /// Whether the device is registered; held while an event is raised
    /// (`ib_dispatch_event` may sleep: a mutex).
    #[pin]
    alive: Mutex<bool>,
}

// SAFETY: `ib` is only dereferenced under `alive`, while the device is
// registered.
unsafe impl Send for EventsInner {}
// SAFETY: As above.
unsafe impl Sync for EventsInner {}

impl Events {
    fn new(ib: *mut bindings::ib_device) -> Result<Self> {
        let ib = NonNull::new(ib).ok_or(EINVAL)?;
        Ok(Self(Arc::pin_init(
            pin_init!(EventsInner {
                ib,
                alive <- new_mutex!(true, "mlx_ext::ib::Events"),
            }),
            GFP_KERNEL,
        )?))
    }

    /// Tells ib_core and its clients that `port` went active or down
    /// (`IB_EVENT_PORT_ACTIVE`, `IB_EVENT_PORT_ERR`), as a driver does when
    /// the link changes. Sleeps.
    pub fn port_event(&self, port: u32, active: bool) {
        self.dispatch(
            port,
            if active {
                bindings::ib_event_type_IB_EVENT_PORT_ACTIVE
            } else {
                bindings::ib_event_type_IB_EVENT_PORT_ERR
            },
        );
    }

    /// Tells ib_core and its clients that the GID table of `port` changed
    /// (`IB_EVENT_GID_CHANGE`): ib_core's cache reads it again. Sleeps.
    pub fn gid_change(&self, port: u32) {
        self.dispatch(port, bindings::ib_event_type_IB_EVENT_GID_CHANGE);
    }

    fn dispatch(&self, port: u32, kind: bindings::ib_event_type) {
        let alive = self.0.alive.lock();
        if !*alive {
            return;
        }
        let mut event = bindings::ib_event {
            device: self.0.ib.as_ptr(),
            event: kind,
            ..Default::default()
        };
        event.element.port_num = port;
        // SAFETY: The device is registered while `alive` is held true
        // (`Registration::drop` clears it first). `ib_dispatch_event` copies
        // the event into a work item on `ib_wq` (GFP_ATOMIC) that runs the
        // handlers later; `ib_unregister_device` flushes `ib_wq`
        // (`ib_cache_cleanup_one`) before the device can be freed.
        unsafe { bindings::ib_dispatch_event(&event) };
    }

    fn kill(&self) {
        *self.0.alive.lock() = false;
    }
}
