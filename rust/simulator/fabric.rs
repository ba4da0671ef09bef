// SPDX-License-Identifier: GPL-2.0

//! The simulated fabric: how the QPs of simulated adapters reach each other
//! (by destination LID and QP number, as on InfiniBand), and what a send
//! request does when it executes. The rules (key and access checks, atomic
//! arithmetic, reply byte order, completion status) are `crate::sim::fabric`,
//! pure and tested on the host; this is their kernel side.

use super::adapter::{lid_to_device, Adapter};
use super::queues::QpShared;
use crate::ib::{
    driver::{SendWr, Sge, UdWr},
    sync::IrqSpinLock,
};
use crate::new_irq_spinlock;
use crate::sim::fabric::{reply_bytes, Access, AtomicOp, WcStatus, WrOpcode};
use kernel::{
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
    sync::Arc,
};

/// The most SGEs a simulated adapter takes per work request.
pub(super) const MAX_SGE: usize = 4;

/// Every QP of every simulated adapter, and the lock that makes atomics
/// atomic with respect to each other on the whole fabric.
#[pin_data]
pub(super) struct Fabric {
    /// QPs by `device ID << 32 | QP number`.
    #[pin]
    qps: IrqSpinLock<RBTree<u64, Arc<QpShared>>>,
    /// Held around the read-modify-write of every atomic the fabric
    /// executes (`IB_ATOMIC_HCA`: atomic among the adapters' own atomics).
    #[pin]
    atomics: IrqSpinLock<()>,
}

fn qp_key(dev: u32, qpn: u32) -> u64 {
    (u64::from(dev) << 32) | u64::from(qpn)
}

impl Fabric {
    pub(super) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                qps <- new_irq_spinlock!(RBTree::new(), "mlx_ext_sim::fabric::qps"),
                atomics <- new_irq_spinlock!((), "mlx_ext_sim::fabric::atomics"),
            }),
            GFP_KERNEL,
        )
    }

    /// Makes `qp` of device `dev` reachable; `EBUSY` if its number is
    /// taken (a live QP is never replaced).
    pub(super) fn add(&self, dev: u32, qp: Arc<QpShared>) -> Result {
        let key = qp_key(dev, qp.qpn);
        let node = RBTreeNodeReservation::new(GFP_KERNEL)?.into_node(key, qp);
        let mut qps = self.qps.lock();
        if qps.get(&key).is_some() {
            drop(qps);
            drop(node);
            return Err(EBUSY);
        }
        let old = qps.insert(node);
        drop(qps);
        drop(old);
        Ok(())
    }

    /// Whether device `dev` has a QP numbered `qpn`.
    pub(super) fn contains(&self, dev: u32, qpn: u32) -> bool {
        self.qps.lock().get(&qp_key(dev, qpn)).is_some()
    }

    /// Makes QP `qpn` of device `dev` unreachable.
    pub(super) fn remove(&self, dev: u32, qpn: u32) {
        let node = self.qps.lock().remove_node(&qp_key(dev, qpn));
        // Dropped without the lock: it may be the last reference.
        drop(node);
    }

    /// The QP a request to `dlid`, `qpn` reaches.
    fn lookup(&self, dlid: u32, qpn: u32) -> Option<Arc<QpShared>> {
        let dev = lid_to_device(dlid)?;
        self.qps.lock().get(&qp_key(dev, qpn)).cloned()
    }
}

/// A registration an `IB_WR_REG_MR` asks for.
#[derive(Clone, Copy)]
pub(super) struct Reg {
    /// The MR's slot in its adapter's table.
    pub(super) index: u32,
    pub(super) key: u32,
    pub(super) access: u32,
}

/// A send request as queued: a copy of what the ULP posted (its WR may be
/// gone once `post_send` returns).
#[derive(Clone)]
pub(super) struct Pending {
    pub(super) wr_id: u64,
    pub(super) opcode: WrOpcode,
    pub(super) signaled: bool,
    sges: [Option<Sge>; MAX_SGE],
    remote_addr: u64,
    rkey: u32,
    atomic: Option<AtomicOp>,
    reg: Option<Reg>,
    invalidate_rkey: u32,
    /// The address of a send on the GSI QP.
    pub(super) ud: Option<UdWr>,
}

/// `IB_SEND_FENCE` (`enum ib_send_flags`). The simulated adapter executes
/// a QP's send queue in order, one request after the other completed, so
/// every request is fenced already: the flag is only counted.
pub(super) const SEND_FENCE: u32 = 1 << 0;
/// `IB_SEND_SIGNALED` (`enum ib_send_flags`).
const SEND_SIGNALED: u32 = 1 << 1;

impl Pending {
    pub(super) fn new(opcode: WrOpcode, wr: &SendWr<'_, Adapter>) -> Result<Self> {
        if wr.sges.len() > MAX_SGE {
            return Err(EINVAL);
        }
        let mut sges = [None; MAX_SGE];
        for (slot, sge) in sges.iter_mut().zip(wr.sges.iter()) {
            *slot = Some(*sge);
        }
        let reg = match &wr.reg {
            Some(r) => Some(Reg {
                index: r.mr.data().index(),
                key: r.key,
                access: r.access,
            }),
            None if opcode == WrOpcode::RegMr => return Err(EINVAL),
            None => None,
        };
        Ok(Self {
            wr_id: wr.wr_id,
            opcode,
            signaled: wr.send_flags & SEND_SIGNALED != 0,
            sges,
            remote_addr: wr.remote_addr,
            rkey: wr.rkey,
            atomic: AtomicOp::from_wr(
                opcode,
                wr.compare_add,
                wr.compare_add_mask,
                wr.swap,
                wr.swap_mask,
            ),
            reg,
            invalidate_rkey: wr.invalidate_rkey,
            ud: wr.ud,
        })
    }

    fn sge_count(&self) -> usize {
        self.sges.iter().filter(|s| s.is_some()).count()
    }

    /// The request's scatter/gather list.
    pub(super) fn sges(&self) -> impl Iterator<Item = &Sge> {
        self.sges.iter().flatten()
    }
}

/// Executes `p`, posted on `qp`: the completion's status and byte count.
pub(super) fn execute(qp: &QpShared, p: &Pending) -> (WcStatus, u32) {
    let r = match p.opcode {
        WrOpcode::RegMr => match p.reg {
            Some(reg) => qp.adapter.reg_mr(qp.pd, reg).map(|()| 0),
            None => Err(WcStatus::LocQpOpErr),
        },
        WrOpcode::LocalInv => qp.adapter.invalidate(qp.pd, p.invalidate_rkey).map(|()| 0),
        _ => match p.atomic {
            Some(op) => atomic(qp, p, op),
            None => Err(WcStatus::LocQpOpErr),
        },
    };
    match r {
        Ok(len) => (WcStatus::Success, len),
        Err(status) => (status, 0),
    }
}

/// An atomic: executed on the responder's memory, its old value written to
/// the requester's 8-byte SGE in the requester adapter's reply byte order.
fn atomic(qp: &QpShared, p: &Pending, op: AtomicOp) -> Result<u32, WcStatus> {
    if qp.adapter.take_atomic_fault() {
        // The knob's injected failure: what a responder's operational
        // error looks like to the requester.
        return Err(WcStatus::RemOpErr);
    }
    let sge = match (p.sge_count(), p.sges[0]) {
        (1, Some(sge)) if sge.length() == 8 => sge,
        _ => return Err(WcStatus::LocLenErr),
    };
    let (dlid, dest_qpn, max_rd_atomic) = {
        let q = qp.inner.lock();
        (q.dlid, q.dest_qpn, q.max_rd_atomic)
    };
    if max_rd_atomic == 0 {
        // No RDMA READ or atomic may be outstanding: none can be sent.
        return Err(WcStatus::LocQpOpErr);
    }
    let local = qp
        .adapter
        .translate_local(qp.pd, &sge, 8, Access::LOCAL_WRITE)?;
    // A request nobody answers is retried until the retry count runs out.
    let resp = qp
        .fabric
        .lookup(dlid, dest_qpn)
        .ok_or(WcStatus::RetryExcErr)?;
    let (ready, access, max_dest) = {
        let r = resp.inner.lock();
        let ready = matches!(
            r.state,
            crate::ib::driver::QpState::Rtr | crate::ib::driver::QpState::Rts
        );
        (ready, r.access, r.max_dest_rd_atomic)
    };
    if !ready {
        return Err(WcStatus::RetryExcErr);
    }
    if !Access::from_bits(access).contains(Access::REMOTE_ATOMIC) || max_dest == 0 {
        // rxe: an opcode the responder QP does not allow is an invalid
        // request.
        return Err(WcStatus::RemInvReqErr);
    }
    let old = resp
        .adapter
        .with_atomic_target(p.rkey, resp.pd, p.remote_addr, |target| {
            let _serialised = qp.fabric.atomics.lock();
            target.update_u64(|old| op.new_value(old))
        })?
        .map_err(|_| WcStatus::RemAccessErr)?;
    local
        .write(&reply_bytes(old, qp.adapter.model.reply_order))
        .map_err(|_| WcStatus::LocProtErr)?;
    qp.adapter.count_atomic();
    Ok(8)
}
