// SPDX-License-Identifier: GPL-2.0

//! A simulated adapter as ib_core sees it: its identity (from its model),
//! its ports, and the verbs objects kernel ULPs make on it.

use super::queues::{SimCq, SimQp};
use crate::ib::driver::{
    self, Cq, CqNotifier, DeviceAttr, Driver, Mr, MrKeys, Pd, PortAttr, PortImmutable, PortState,
    Qp, QpAttr, QpInitAttr, RecvWr, SendWr, WcSink, CORE_CAP_PROT_IB,
};
use crate::sim::{
    control::NewDevice,
    fabric::{self, Key, WrOpcode},
    model::{Model, MAX_PORTS},
};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::{prelude::*, sync::Arc};

/// Mellanox's OUI in the top bytes of a GUID (`00:02:c9`), as mlx4 GUIDs
/// (`0002:c903:00xx:xxxx`) have it.
const GUID_BASE: u64 = 0x0002_c903_0000_0000;
/// The LID of the simulated subnet manager; adapters' ports get 2 and up.
pub(super) const SM_LID: u32 = 1;
/// Limits of a simulated adapter: what a small ConnectX reports, scaled to
/// a test VM.
const MAX_QP: u32 = 1024;
const MAX_QP_WR: u32 = 1024;
const MAX_SGE: u32 = 4;
const MAX_CQ: u32 = 1024;
const MAX_CQE: u32 = 4096;
const MAX_MR: u32 = 4096;
const MAX_PD: u32 = 1024;
const MAX_RD_ATOM: u32 = 16;
const MAX_FRWR_PAGES: u32 = 256;
const GID_TBL_LEN: u32 = 1;
const PKEY_DEFAULT: u16 = 0xffff;
/// The link-local subnet prefix of InfiniBand GIDs.
const SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// The kinds of objects the adapter counts, for leaks and for
/// `fail_create`.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Pd = 0,
    Cq = 1,
    Qp = 2,
    Mr = 3,
}

/// What the adapter and its debugfs knobs share.
pub(super) struct State {
    /// Whether each port is up.
    pub(super) port_up: [AtomicBool; MAX_PORTS as usize],
    /// How many more object creations fail (`ENOMEM`).
    pub(super) fail_create: AtomicU32,
    /// Live objects by [`Kind`].
    pub(super) live: [AtomicU32; 4],
}

impl State {
    /// Takes one injected failure, if any is left.
    fn take_fault(&self) -> bool {
        self.fail_create
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// A simulated adapter: the driver data of its ib_device.
pub(super) struct Adapter {
    id: u32,
    model: &'static Model,
    ports: u8,
    state: Arc<State>,
    next_qpn: AtomicU32,
    next_key: AtomicU32,
}

/// A counted object: decrements its kind's count when dropped.
pub(super) struct Counted {
    state: Arc<State>,
    kind: Kind,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.state.live[self.kind as usize].fetch_sub(1, Ordering::AcqRel);
    }
}

/// The driver's data of a memory region.
pub(super) struct SimMr {
    _counted: Counted,
}

impl Adapter {
    pub(super) fn new(req: &NewDevice) -> Result<Self> {
        Ok(Self {
            id: req.id,
            model: req.model,
            ports: req.ports,
            state: Arc::new(
                State {
                    port_up: [AtomicBool::new(true), AtomicBool::new(true)],
                    fail_create: AtomicU32::new(0),
                    live: [
                        AtomicU32::new(0),
                        AtomicU32::new(0),
                        AtomicU32::new(0),
                        AtomicU32::new(0),
                    ],
                },
                GFP_KERNEL,
            )?,
            // QPs 0 and 1 are the special QPs of InfiniBand.
            next_qpn: AtomicU32::new(2),
            next_key: AtomicU32::new(1),
        })
    }

    pub(super) fn state(&self) -> Arc<State> {
        self.state.clone()
    }

    pub(super) fn node_guid(&self) -> u64 {
        GUID_BASE | (u64::from(self.id) << 8)
    }

    fn port_guid(&self, port: u32) -> u64 {
        self.node_guid() | u64::from(port)
    }

    /// The LID of `port`: unique on the simulated fabric.
    pub(super) fn lid(&self, port: u32) -> u32 {
        SM_LID + self.id * u32::from(MAX_PORTS) + port
    }

    fn check_port(&self, port: u32) -> Result<usize> {
        if port == 0 || port > u32::from(self.ports) {
            return Err(EINVAL);
        }
        usize::try_from(port - 1).map_err(|_| EINVAL)
    }

    /// Counts a new object of `kind`, unless a failure is injected.
    fn create(&self, kind: Kind) -> Result<Counted> {
        if self.state.take_fault() {
            return Err(ENOMEM);
        }
        self.state.live[kind as usize].fetch_add(1, Ordering::AcqRel);
        Ok(Counted {
            state: self.state.clone(),
            kind,
        })
    }

    fn new_key(&self) -> Result<Key> {
        let index = self.next_key.fetch_add(1, Ordering::Relaxed);
        if index > Key::MAX_INDEX {
            return Err(ENOMEM);
        }
        Ok(Key::new(index, 0))
    }
}

#[vtable]
impl Driver for Adapter {
    type Pd = Counted;
    type Cq = SimCq;
    type Qp = SimQp;
    type Mr = SimMr;

    fn query_device(&self) -> DeviceAttr {
        let m = self.model;
        DeviceAttr {
            fw_ver: m.fw_ver,
            sys_image_guid: self.node_guid(),
            vendor_id: m.vendor_id,
            vendor_part_id: m.vendor_part_id,
            hw_ver: m.hw_ver,
            max_mr_size: u64::MAX,
            page_size_cap: 0xffff_f000,
            max_qp: MAX_QP,
            max_qp_wr: MAX_QP_WR,
            max_sge: MAX_SGE,
            max_cq: MAX_CQ,
            max_cqe: MAX_CQE,
            max_mr: MAX_MR,
            max_pd: MAX_PD,
            max_qp_rd_atom: MAX_RD_ATOM,
            max_qp_init_rd_atom: MAX_RD_ATOM,
            max_fast_reg_page_list_len: MAX_FRWR_PAGES,
            max_pkeys: 1,
            atomic_cap: m.atomic_cap,
            masked_atomic_cap: m.masked_atomic_cap,
            device_cap_flags: 0,
            kernel_cap_flags: 0,
        }
    }

    fn query_port(&self, port: u32) -> Result<PortAttr> {
        let i = self.check_port(port)?;
        let up = self.state.port_up[i].load(Ordering::Acquire);
        Ok(PortAttr {
            state: if up {
                PortState::Active
            } else {
                PortState::Down
            },
            lid: self.lid(port),
            sm_lid: SM_LID,
            gid_tbl_len: GID_TBL_LEN,
            pkey_tbl_len: 1,
            port_cap_flags: 0,
            max_msg_sz: 1 << 31,
            subnet_prefix: SUBNET_PREFIX,
        })
    }

    fn port_immutable(&self, port: u32) -> Result<PortImmutable> {
        self.check_port(port)?;
        Ok(PortImmutable {
            pkey_tbl_len: 1,
            gid_tbl_len: GID_TBL_LEN,
            // No MAD, CM or SA yet: ib_mad would make QP0 and QP1 on the
            // device at registration.
            core_cap_flags: CORE_CAP_PROT_IB,
            max_mad_size: 0,
        })
    }

    fn query_pkey(&self, port: u32, index: u16) -> Result<u16> {
        self.check_port(port)?;
        if index != 0 {
            return Err(EINVAL);
        }
        Ok(PKEY_DEFAULT)
    }

    fn query_gid(&self, port: u32, index: u32) -> Result<[u8; 16]> {
        self.check_port(port)?;
        if index >= GID_TBL_LEN {
            return Err(EINVAL);
        }
        let mut gid = [0u8; 16];
        gid[..8].copy_from_slice(&SUBNET_PREFIX.to_be_bytes());
        gid[8..].copy_from_slice(&self.port_guid(port).to_be_bytes());
        Ok(gid)
    }

    fn alloc_pd(&self) -> Result<Counted> {
        self.create(Kind::Pd)
    }

    fn create_cq(&self, entries: u32, notifier: CqNotifier) -> Result<SimCq> {
        if entries == 0 || entries > MAX_CQE {
            return Err(EINVAL);
        }
        SimCq::new(self.create(Kind::Cq)?, entries, notifier)
    }

    fn poll_cq(&self, cq: &Cq<Self>, out: &mut WcSink<'_>) {
        cq.data().poll(out);
    }

    fn req_notify_cq(
        &self,
        cq: &Cq<Self>,
        solicited_only: bool,
        report_missed: bool,
    ) -> Result<bool> {
        Ok(cq.data().arm(solicited_only, report_missed))
    }

    fn create_qp(
        &self,
        _pd: &Pd<Self>,
        send_cq: &Cq<Self>,
        recv_cq: &Cq<Self>,
        init: &QpInitAttr,
    ) -> Result<(SimQp, u32)> {
        if !init.rc || init.srq_or_xrc || init.create_flags != 0 {
            return Err(crate::ib::eopnotsupp());
        }
        if init.max_send_wr > MAX_QP_WR
            || init.max_recv_wr > MAX_QP_WR
            || init.max_send_sge > MAX_SGE
            || init.max_recv_sge > MAX_SGE
        {
            return Err(EINVAL);
        }
        let counted = self.create(Kind::Qp)?;
        let qpn = self.next_qpn.fetch_add(1, Ordering::Relaxed);
        let qp = SimQp::new(counted, qpn, init, send_cq.data(), recv_cq.data())?;
        Ok((qp, qpn))
    }

    fn modify_qp(&self, qp: &Qp<Self>, attr: &QpAttr, mask: u32) -> Result {
        if mask & driver::qp_mask::PORT != 0 {
            self.check_port(attr.port)?;
        }
        if mask & driver::qp_mask::MAX_QP_RD_ATOMIC != 0
            && u32::from(attr.max_rd_atomic) > MAX_RD_ATOM
            || mask & driver::qp_mask::MAX_DEST_RD_ATOMIC != 0
                && u32::from(attr.max_dest_rd_atomic) > MAX_RD_ATOM
        {
            return Err(EINVAL);
        }
        qp.data().modify(qp.as_ref(), attr, mask)
    }

    fn destroy_qp(&self, qp: &Qp<Self>) {
        qp.data().destroy(qp.as_ref());
    }

    fn post_send(&self, qp: &Qp<Self>, wr: &SendWr<'_>) -> Result {
        let opcode = WrOpcode::from_raw(wr.opcode).ok_or(EINVAL)?;
        fabric::post_check(self.model, opcode).map_err(|e| Error::from_errno(-e.errno()))?;
        qp.data().post_send(wr)
    }

    fn post_recv(&self, qp: &Qp<Self>, wr: &RecvWr<'_>) -> Result {
        qp.data().post_recv(qp.as_ref(), wr)
    }

    fn get_dma_mr(&self, _pd: &Pd<Self>, _access: u32) -> Result<(SimMr, MrKeys)> {
        let counted = self.create(Kind::Mr)?;
        let key = self.new_key()?.raw();
        Ok((
            SimMr { _counted: counted },
            MrKeys {
                lkey: key,
                rkey: key,
            },
        ))
    }

    fn dereg_mr(&self, _mr: &Mr<Self>) {}
}
