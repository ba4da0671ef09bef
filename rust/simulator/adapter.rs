// SPDX-License-Identifier: GPL-2.0

//! A simulated adapter as ib_core sees it: its identity (from its model),
//! its ports, and the verbs objects kernel ULPs make on it.

use super::cq::SimCq;
use super::gsi::GSI_QPN;
use super::qp::{executes, SimFabric, SimQp};
use super::sa::SimSa;
use super::shared::{
    lid, node_guid, take_fault, AdapterShared, Counted, Kind, MrEntry, MrKind, Reg, State,
    SM_GUID_BASE, SM_LID,
};
use super::vf::VfGuids;
use super::wr::Pending;
use crate::caps::WrClass;
use crate::ib::{
    provider::driver::{
        self, dma::MappedPages, rtnl_held, AhAttr, Cq, CqNotifier, DeviceAttr, Driver, Mr, MrKeys,
        MrMap, Pd, PortAttr, PortImmutable, PortState, Qp, QpAttr, QpInitAttr, QpRef, QpState,
        QpType, RecvWr, SendWr, VfGuidKind, WcSink, CORE_CAP_IB_NO_SMI, MGMT_MAD_SIZE,
    },
    provider::wq::OwnedQueue,
};
use crate::sim::{
    control::NewDevice,
    fabric::{self, Access, Key, Region, RegionState, WrOpcode},
    faults::OpcodeRefusal,
};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{prelude::*, sync::Arc};

/// Limits of a simulated adapter: what a small ConnectX reports, scaled to
/// a test VM.
const MAX_QP: u32 = 1024;
const MAX_QP_WR: u32 = 1024;
const MAX_SGE: u32 = super::wr::MAX_SGE as u32;
const MAX_CQ: u32 = 1024;
const MAX_CQE: u32 = 4096;
const MAX_MR: u32 = 4096;
const MAX_PD: u32 = 1024;
const MAX_RD_ATOM: u32 = 16;
const MAX_FRWR_PAGES: u32 = 256;
const PKEY_DEFAULT: u16 = 0xffff;
/// The link-local subnet prefix of InfiniBand GIDs.
const SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// `IB_DEVICE_MEM_MGT_EXTENSIONS`: FRWR (`enum ib_device_cap_flags`).
const DEVICE_MEM_MGT_EXTENSIONS: u64 = 1 << 21;

/// A simulated adapter: the driver data of its ib_device.
pub(super) struct Adapter {
    shared: Arc<AdapterShared>,
    /// What `set_vf_guid` set.
    vf: Arc<VfGuids>,
    ports: u8,
    fabric: Arc<SimFabric>,
    wq: Arc<OwnedQueue>,
    next_qpn: AtomicU32,
    next_key: AtomicU32,
    next_pd: AtomicU32,
}

/// The driver's data of a protection domain.
pub(super) struct SimPd {
    id: u32,
    _counted: Counted,
}

/// The driver's data of a memory region: its slot in the adapter's table,
/// emptied when it is dropped.
pub(super) struct SimMr {
    index: u32,
    adapter: Arc<AdapterShared>,
    _counted: Counted,
}

impl SimMr {
    pub(super) fn index(&self) -> u32 {
        self.index
    }
}

impl Drop for SimMr {
    fn drop(&mut self) {
        self.adapter.remove_mr(self.index);
    }
}

impl Adapter {
    pub(super) fn new(
        req: &NewDevice,
        fabric: Arc<SimFabric>,
        wq: Arc<OwnedQueue>,
    ) -> Result<Self> {
        let state = Arc::new(
            State {
                port_up: [AtomicBool::new(true), AtomicBool::new(true)],
                fail_create: AtomicU64::new(0),
                fail_atomics: AtomicU32::new(0),
                refuse_atomics: AtomicU64::new(0),
                refuse_opcodes: AtomicU32::new(0),
                opcode_refusals: AtomicU64::new(0),
                atomics: AtomicU64::new(0),
                fenced_atomics: AtomicU64::new(0),
                completion_delay_ms: AtomicU32::new(0),
                live: [
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                ],
            },
            GFP_KERNEL,
        )?;
        let id = req.id;
        let sa = SimSa::new(
            req.ports,
            usize::from(req.port_guids),
            |p| lid(id, p),
            |p| node_guid(id) | u64::from(p),
            |p| SM_GUID_BASE | u64::from(id) << 16 | u64::from(p) << 8,
        )?;
        let shared = AdapterShared::new(req, state, sa)?;
        Ok(Self {
            shared,
            vf: Arc::pin_init(VfGuids::new(), GFP_KERNEL)?,
            ports: req.ports,
            fabric,
            wq,
            // QPs 0 and 1 are the special QPs of InfiniBand.
            next_qpn: AtomicU32::new(2),
            next_key: AtomicU32::new(1),
            next_pd: AtomicU32::new(1),
        })
    }

    pub(super) fn state(&self) -> Arc<State> {
        self.shared.state.clone()
    }

    /// What `set_vf_guid` set, for the knobs.
    pub(super) fn vf_guids(&self) -> Arc<VfGuids> {
        self.vf.clone()
    }

    pub(super) fn node_guid(&self) -> u64 {
        node_guid(self.shared.id)
    }

    /// The SAs of the adapter's ports.
    pub(super) fn sa(&self) -> Arc<SimSa> {
        self.shared.sa.clone()
    }

    fn check_port(&self, port: u32) -> Result<usize> {
        if port == 0 || port > u32::from(self.ports) {
            return Err(EINVAL);
        }
        usize::try_from(port - 1).map_err(|_| EINVAL)
    }

    /// Counts a new object of `kind`, unless a failure is injected.
    fn create(&self, kind: Kind) -> Result<Counted> {
        if take_fault(&self.shared.state.fail_create) {
            return Err(ENOMEM);
        }
        Ok(Counted::new(self.shared.state.clone(), kind))
    }

    fn new_key(&self) -> Result<Key> {
        let index = self.next_key.fetch_add(1, Ordering::Relaxed);
        if index > Key::MAX_INDEX {
            return Err(ENOMEM);
        }
        Ok(Key::new(index, 0))
    }

    /// Makes an MR of PD `pd` in the table.
    fn new_mr(&self, pd: u32, kind: MrKind, access: u32) -> Result<(SimMr, MrKeys)> {
        let counted = self.create(Kind::Mr)?;
        let key = self.new_key()?;
        let dma = matches!(kind, MrKind::Dma);
        let region = Region {
            key,
            pd,
            iova: 0,
            length: if dma { u64::MAX } else { 0 },
            access: Access::from_bits(access),
            state: if dma {
                RegionState::Valid
            } else {
                RegionState::Free
            },
        };
        self.shared.add_mr(key.index(), MrEntry { region, kind })?;
        let mr = SimMr {
            index: key.index(),
            adapter: self.shared.clone(),
            _counted: counted,
        };
        Ok((
            mr,
            MrKeys {
                lkey: key.raw(),
                rkey: key.raw(),
            },
        ))
    }
}

#[vtable]
impl Driver for Adapter {
    type Pd = SimPd;
    type Cq = SimCq;
    type Qp = SimQp;
    type Mr = SimMr;
    type Ah = ();

    fn query_device(&self) -> DeviceAttr {
        let m = self.shared.model;
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
            atomic_cap: ib_atomic_cap(m.atomic_cap),
            masked_atomic_cap: ib_atomic_cap(m.masked_atomic_cap),
            device_cap_flags: DEVICE_MEM_MGT_EXTENSIONS,
            kernel_cap_flags: 0,
        }
    }

    fn query_port(&self, port: u32) -> Result<PortAttr> {
        let i = self.check_port(port)?;
        let up = self.shared.state.port_up[i].load(Ordering::Acquire);
        Ok(PortAttr {
            state: if up {
                PortState::Active
            } else {
                PortState::Down
            },
            lid: lid(self.shared.id, port),
            sm_lid: SM_LID,
            gid_tbl_len: self.shared.port_guids,
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
            gid_tbl_len: self.shared.port_guids,
            // MADs, CM and SA, no SMI: ib_mad makes QP1 on each port (and
            // no QP0), and ib_sa reaches the port's SA through it.
            core_cap_flags: CORE_CAP_IB_NO_SMI,
            max_mad_size: MGMT_MAD_SIZE,
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
        if index >= self.shared.port_guids {
            return Err(EINVAL);
        }
        // The port's subnet prefix and the entry's GUID, zero for an entry
        // without one, as both drivers read them from the firmware: mlx4_ib
        // (main.c, __mlx4_ib_query_gid(), lines 849-879: PortInfo's prefix,
        // GUIDInfo's GUID) and mlx5_ib on InfiniBand (mad.c,
        // mlx5_query_mad_ifc_gids(), lines 564-583). ib_core's cache then
        // holds every entry, and takes the port's subnet prefix from them
        // (cache.c, config_non_roce_gid_cache(): the last entry's). This is
        // mlx4's network view (netw_view 1), what its own iov `gids/` reads
        // (sysfs.c, show_port_gid()): in SR-IOV mode mlx4_ib gives ib_core
        // zero GUIDs past entry 0 (main.c, lines 861-867), but runs its own
        // tables there and mlx_ext makes none (`driver_iov` in
        // rust/vf_guids/tree.rs). The simulated ConnectX-3 stands for a
        // driver that reports the port's alias GUIDs to ib_core.
        let mut gid = [0u8; 16];
        gid[..8].copy_from_slice(&SUBNET_PREFIX.to_be_bytes());
        gid[8..].copy_from_slice(&self.shared.sa.guid(port, index).to_be_bytes());
        Ok(gid)
    }

    fn alloc_pd(&self) -> Result<SimPd> {
        Ok(SimPd {
            _counted: self.create(Kind::Pd)?,
            id: self.next_pd.fetch_add(1, Ordering::Relaxed),
        })
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
        me: QpRef,
        pd: &Pd<Self>,
        send_cq: &Cq<Self>,
        recv_cq: &Cq<Self>,
        init: &QpInitAttr,
    ) -> Result<(SimQp, u32)> {
        if init.qp_type == QpType::Other || init.srq_or_xrc || init.create_flags != 0 {
            return Err(crate::ib::eopnotsupp());
        }
        if init.max_send_wr > MAX_QP_WR
            || init.max_recv_wr > MAX_QP_WR
            || init.max_send_sge > MAX_SGE
            || init.max_recv_sge > MAX_SGE
        {
            return Err(EINVAL);
        }
        if init.qp_type == QpType::Gsi {
            // ib_mad makes one per port; nothing reaches it through the
            // fabric (its MADs go to the port's SA).
            self.check_port(init.port)?;
        }
        let counted = self.create(Kind::Qp)?;
        // QP numbers are 24 bits; 0 and 1 are the special QPs. After a
        // wrap, numbers still in use are skipped.
        let qpn = if init.qp_type == QpType::Gsi {
            GSI_QPN
        } else {
            let mut qpn = 0;
            while qpn < 2 || self.fabric.contains(self.shared.id, qpn) {
                qpn = self.next_qpn.fetch_add(1, Ordering::Relaxed) & 0x00ff_ffff;
            }
            qpn
        };
        let qp = SimQp::new(
            counted,
            self.shared.clone(),
            self.fabric.clone(),
            qpn,
            pd.data().id,
            me,
            init,
            send_cq.data(),
            recv_cq.data(),
        )?;
        if init.qp_type == QpType::Rc {
            self.fabric
                .add(self.shared.id, qp.shared.qpn, qp.shared.clone())?;
        }
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
        let shared = &qp.data().shared;
        if shared.modify(attr, mask)? {
            // Already queued is fine: it flushes whatever is there.
            let _ = self.wq.enqueue(shared.clone());
        }
        Ok(())
    }

    fn qp_state(&self, qp: &Qp<Self>) -> QpState {
        qp.data().shared.state()
    }

    fn destroy_qp(&self, qp: &Qp<Self>) {
        let shared = &qp.data().shared;
        // Unreachable first, then stopped.
        if shared.qp_type == QpType::Rc {
            self.fabric.remove(self.shared.id, shared.qpn);
        }
        shared.destroy();
    }

    fn post_send(&self, qp: &Qp<Self>, wr: &SendWr<'_, Self>) -> Result {
        let opcode = WrOpcode::from_raw(wr.opcode).ok_or(EINVAL)?;
        fabric::post_check(self.shared.model, opcode).map_err(|e| Error::from_errno(-e.errno()))?;
        if let Some(class) = WrClass::of(opcode) {
            let lacks =
                OpcodeRefusal::unpack(self.shared.state.refuse_opcodes.load(Ordering::Acquire));
            if let Some(errno) = lacks.refuses(class) {
                self.shared
                    .state
                    .opcode_refusals
                    .fetch_add(1, Ordering::Relaxed);
                return Err(Error::from_errno(-errno));
            }
            if take_fault(&self.shared.state.refuse_atomics) {
                return Err(crate::ib::eopnotsupp());
            }
        }
        let shared = &qp.data().shared;
        let reg = wr.reg.as_ref().map(|r| Reg {
            index: r.mr.data().index(),
            key: r.key,
            access: r.access,
        });
        let pending = Pending::new(opcode, wr, reg)?;
        let supported = executes(shared.qp_type, opcode);
        if shared.post_send(pending, wr.sges.len(), supported)? {
            // Already queued is fine: it runs the whole queue.
            let _ = self.wq.enqueue(shared.clone());
        }
        if WrClass::of(opcode).is_some() && wr.send_flags & super::wr::SEND_FENCE != 0 {
            self.shared
                .state
                .fenced_atomics
                .fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn post_recv(&self, qp: &Qp<Self>, wr: &RecvWr<'_>) -> Result {
        let shared = &qp.data().shared;
        if shared.post_recv(wr)? {
            let _ = self.wq.enqueue(shared.clone());
        }
        Ok(())
    }

    fn get_dma_mr(&self, pd: &Pd<Self>, access: u32) -> Result<(SimMr, MrKeys)> {
        self.new_mr(pd.data().id, MrKind::Dma, access)
    }

    fn alloc_mr(&self, pd: &Pd<Self>, max_pages: u32) -> Result<(SimMr, MrKeys)> {
        if max_pages == 0 || max_pages > MAX_FRWR_PAGES {
            return Err(EINVAL);
        }
        let kind = MrKind::Frwr(MappedPages::new(usize::try_from(max_pages)?)?);
        self.new_mr(pd.data().id, kind, 0)
    }

    fn map_mr(&self, mr: &Mr<Self>, map: &MrMap<'_>) -> Result {
        self.shared.map_mr(mr.data().index, map)
    }

    fn create_ah(&self, attr: &AhAttr) -> Result<()> {
        self.check_port(attr.port)?;
        // The fabric routes by LID: no GRH.
        if attr.grh {
            return Err(crate::ib::eopnotsupp());
        }
        Ok(())
    }

    fn modify_port(&self, port: u32) -> Result {
        self.check_port(port).map(|_| ())
    }

    /// As mlx5_ib's; a model whose driver has none (mlx4) refuses it as
    /// ib_core does where the op is missing.
    fn set_vf_guid(&self, vf: u32, port: u32, guid: u64, kind: VfGuidKind) -> Result {
        if !self.shared.model.set_vf_guid {
            return self.vf.refuse();
        }
        // What mlx5 keeps (vfs_ctx) only RTNL serialises: its callers hold
        // it, and a caller that does not is refused (and warned of once).
        if !rtnl_held() {
            return Err(EINVAL);
        }
        self.check_port(port)?;
        self.vf.set(vf, port, guid, kind)?;
        if kind == VfGuidKind::Port {
            // The vport is programmed on port 1, as mlx5's firmware command
            // names it (ib_virt.c: mlx5_core_modify_hca_vport_context(mdev,
            // 1, 1, vf + 1, ..)).
            self.shared.sa.set_vport(1, vf, guid);
        }
        Ok(())
    }

    /// As mlx5_ib's `mlx5_ib_get_vf_guid`: what was set, 0 where nothing
    /// was; a model without vports refuses it as ib_core does.
    fn get_vf_guid(&self, vf: u32, port: u32) -> Result<(u64, u64)> {
        if !self.shared.model.set_vf_guid {
            return Err(crate::ib::eopnotsupp());
        }
        // As `set_vf_guid`.
        if !rtnl_held() {
            return Err(EINVAL);
        }
        self.check_port(port)?;
        self.vf.get(vf, port)
    }
}

/// An atomic capability as a driver reports it to ib_core, which has no
/// value for a big-endian reply: a device that replies big-endian reports
/// what it executes, and mlx_ext tells the byte order by its identity.
const fn ib_atomic_cap(cap: crate::caps::AtomicCap) -> crate::ib::AtomicCap {
    use crate::caps::AtomicCap as Cap;
    match cap {
        Cap::None => crate::ib::AtomicCap::None,
        Cap::Hca | Cap::HcaReplyBe => crate::ib::AtomicCap::Hca,
        Cap::Glob => crate::ib::AtomicCap::Glob,
    }
}
