// SPDX-License-Identifier: GPL-2.0

//! Queue pairs of a simulated adapter (their completion queues are
//! [`super::cq`]'s).
//!
//! Posting puts a work request on the QP's send queue and kicks the QP's
//! work item, which executes the queue in order on the simulator's
//! workqueue ([`execute`]) and completes each request on the send CQ. The
//! rules of execution (key and access checks, atomic arithmetic, reply
//! byte order, completion status) are `crate::sim::fabric`, pure and
//! tested on the host; this is their kernel side.
//! Lock order: QP (`inner`) before CQ (`ring`); the QP's `exec` mutex,
//! held by the work item while it executes and completes a request, before
//! both; an atomic's responder MR table (`mrs`) before the fabric's
//! `atomics`. Verbs may be called in any context: `inner` and `ring` disable
//! interrupts.

use super::cq::{CqShared, Pushed, Ring, SimCq};
use super::fabric::Fabric;
use super::gsi;
use super::shared::{AdapterShared, Counted, SM_LID};
use super::wr::Pending;
use crate::ib::{
    provider::driver::{qp_mask, QpAttr, QpInitAttr, QpRef, QpState, QpType, RecvWr, Sge, Wc},
    sync::IrqSpinLock,
};
use crate::new_irq_spinlock;
use crate::sim::fabric::{
    reply_bytes, Access, AtomicOp, QpState as RuleState, WcOpcode, WcStatus, WrOpcode,
};
use crate::sim::sa::MAD_LEN;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    new_mutex, new_work,
    prelude::*,
    sync::{Arc, Mutex},
    workqueue::{impl_has_work, Work, WorkItem},
};

/// The fabric of the simulator's QPs.
pub(super) type SimFabric = Fabric<QpShared>;

/// The state of a QP that verbs change.
pub(super) struct QpInner {
    pub(super) state: QpState,
    /// Where it sends: the destination LID and QP number.
    pub(super) dlid: u32,
    pub(super) dest_qpn: u32,
    /// `qp_access_flags`: what remote peers may do through it.
    pub(super) access: u32,
    /// Outstanding RDMA READ/atomic requests it may have as initiator.
    pub(super) max_rd_atomic: u8,
    /// The same as responder.
    pub(super) max_dest_rd_atomic: u8,
    /// Posted send requests, oldest first; the head may be executing.
    sq: Ring<Pending>,
    /// Whether the work item is executing the head of `sq`.
    executing: bool,
    /// Bumped by every move to RESET: a request executing then completes
    /// into nothing.
    generation: u32,
    /// Posted receives, oldest first.
    rq: Ring<RecvBuf>,
}

/// A posted receive: its `wr_id`, and the buffer a GSI QP's receive fills
/// (RC QPs receive nothing: the fabric has no SEND).
pub(super) struct RecvBuf {
    wr_id: u64,
    sge: Option<Sge>,
}

/// A QP as the fabric sees it; the driver's data of a QP holds it.
#[pin_data]
pub(super) struct QpShared {
    pub(super) adapter: Arc<AdapterShared>,
    pub(super) fabric: Arc<SimFabric>,
    pub(super) qpn: u32,
    pub(super) pd: u32,
    /// RC, or the GSI QP of `port`.
    pub(super) qp_type: QpType,
    port: u32,
    me: QpRef,
    signal_all: bool,
    max_send_sge: usize,
    max_recv_sge: usize,
    send_cq: Arc<CqShared>,
    recv_cq: Arc<CqShared>,
    #[pin]
    pub(super) inner: IrqSpinLock<QpInner>,
    /// Held while the work item runs; `true` once the QP is destroyed,
    /// after which nothing executes or completes.
    #[pin]
    exec: Mutex<bool>,
    /// Set when `destroy` starts: the work item stops after the request
    /// it is executing.
    dying: AtomicBool,
    #[pin]
    work: Work<QpShared>,
}

impl_has_work! {
    impl HasWork<Self> for QpShared { self.work }
}

impl WorkItem for QpShared {
    type Pointer = Arc<QpShared>;

    fn run(this: Arc<QpShared>) {
        this.run_send_queue();
    }
}

/// The completion of `wr_id` with `status`.
fn wc(wr_id: u64, status: WcStatus, opcode: WcOpcode, byte_len: u32, qp: QpRef) -> Wc {
    Wc {
        wr_id,
        status: status as u32,
        opcode: opcode as u32,
        byte_len,
        qp,
        src_qp: 0,
        slid: 0,
        pkey_index: 0,
    }
}

impl QpShared {
    /// The rule-side state of `q`.
    fn rule_state(q: &QpInner) -> RuleState {
        RuleState::from_raw(q.state as u32).unwrap_or(RuleState::Err)
    }

    /// Completes every receive of `q` with a flush error.
    fn flush_rq(&self, q: &mut QpInner) -> Pushed {
        let mut p = Pushed::default();
        while let Some(r) = q.rq.pop() {
            let w = wc(r.wr_id, WcStatus::WrFlushErr, WcOpcode::Recv, 0, self.me);
            p = p.and(self.recv_cq.push(w, true));
        }
        p
    }

    /// Completes every send request of `q` with a flush error (the work
    /// item calls it when none is executing).
    fn flush_sq(&self, q: &mut QpInner) -> Pushed {
        let mut p = Pushed::default();
        while let Some(r) = q.sq.pop() {
            let w = wc(
                r.wr_id,
                WcStatus::WrFlushErr,
                r.opcode.wc_opcode(),
                0,
                self.me,
            );
            p = p.and(self.send_cq.push(w, true));
        }
        p
    }

    /// The QP's state now (`query_qp`).
    pub(super) fn state(&self) -> QpState {
        self.inner.lock().state
    }

    /// Applies a `modify_qp`: the state machine of the IB specification
    /// (ib_core's table), and the attributes the fabric uses. `Ok(true)`
    /// if the work item must run: it flushes a QP moved to ERR (completions
    /// never run the ULP's handler inside its own verb call).
    pub(super) fn modify(&self, attr: &QpAttr, mask: u32) -> Result<bool> {
        let mut q = self.inner.lock();
        let cur = if mask & qp_mask::CUR_STATE != 0 {
            attr.cur_state.ok_or(EINVAL)?
        } else {
            q.state
        };
        let next = if mask & qp_mask::STATE != 0 {
            attr.state.ok_or(EINVAL)?
        } else {
            cur
        };
        if !cur.transition_ok(next, self.qp_type, mask) {
            return Err(EINVAL);
        }
        if mask & qp_mask::AV != 0 {
            q.dlid = attr.dlid;
        }
        if mask & qp_mask::DEST_QPN != 0 {
            q.dest_qpn = attr.dest_qp_num;
        }
        if mask & qp_mask::ACCESS_FLAGS != 0 {
            q.access = attr.access_flags;
        }
        if mask & qp_mask::MAX_QP_RD_ATOMIC != 0 {
            q.max_rd_atomic = attr.max_rd_atomic;
        }
        if mask & qp_mask::MAX_DEST_RD_ATOMIC != 0 {
            q.max_dest_rd_atomic = attr.max_dest_rd_atomic;
        }
        q.state = next;
        if next == QpState::Reset {
            // RESET discards every request and completion of the QP; a
            // request executing now completes into nothing (`generation`).
            while q.rq.pop().is_some() {}
            while q.sq.pop().is_some() {}
            q.generation = q.generation.wrapping_add(1);
            self.send_cq.purge(self.me);
            self.recv_cq.purge(self.me);
        }
        let err = next == QpState::Err;
        drop(q);
        if next == QpState::Reset {
            // As rxe's reset stops its tasks first (rxe_qp_reset,
            // drivers/infiniband/sw/rxe/rxe_qp.c:517-518): a request the
            // work item is executing ends before this returns, so nothing
            // touches the ULP's buffers after it. (It completes into
            // nothing: `generation`.)
            drop(self.exec.lock());
        }
        Ok(err)
    }

    /// Queues a send request; `Ok(true)` if the work item must be kicked.
    /// In ERR every request is taken, to be flushed by the work item in
    /// order (ib_drain_sq posts an RDMA WRITE); otherwise only in RTS, and
    /// only what the adapter executes (`supported`).
    pub(super) fn post_send(&self, p: Pending, num_sge: usize, supported: bool) -> Result<bool> {
        if num_sge > self.max_send_sge {
            return Err(EINVAL);
        }
        let mut q = self.inner.lock();
        let state = Self::rule_state(&q);
        if !crate::sim::fabric::flushes(state) {
            if !crate::sim::fabric::can_post_send(state) {
                return Err(EINVAL);
            }
            if !supported {
                return Err(crate::ib::eopnotsupp());
            }
        }
        q.sq.push(p).map_err(|_| ENOMEM)?;
        Ok(true)
    }

    /// Queues a receive; `Ok(true)` if the work item must run (to flush it,
    /// in ERR).
    pub(super) fn post_recv(&self, wr: &RecvWr<'_>) -> Result<bool> {
        if wr.sges.len() > self.max_recv_sge {
            return Err(EINVAL);
        }
        let mut q = self.inner.lock();
        let state = Self::rule_state(&q);
        let flush = crate::sim::fabric::flushes(state);
        if !flush && !crate::sim::fabric::can_post_recv(state) {
            return Err(EINVAL);
        }
        let buf = RecvBuf {
            wr_id: wr.wr_id,
            sge: wr.sges.first().copied(),
        };
        q.rq.push(buf).map_err(|_| ENOMEM)?;
        Ok(flush)
    }

    /// The work item: executes the send queue in order while the QP is in
    /// RTS, flushes both queues in ERR. All completions are made here.
    fn run_send_queue(&self) {
        let dead = self.exec.lock();
        if *dead {
            return;
        }
        loop {
            // `destroy` is waiting: stop at once.
            if self.dying.load(Ordering::Acquire) {
                return;
            }
            let (p, generation) = {
                let mut q = self.inner.lock();
                match q.state {
                    QpState::Err => {
                        let sq = self.flush_sq(&mut q);
                        let rq = self.flush_rq(&mut q);
                        drop(q);
                        self.send_cq.signal(sq);
                        self.recv_cq.signal(rq);
                        return;
                    }
                    QpState::Rts => {}
                    // Nothing executes in another state; a later post or
                    // modify kicks the work item again.
                    _ => return,
                }
                let Some(p) = q.sq.front().cloned() else {
                    return;
                };
                q.executing = true;
                (p, q.generation)
            };
            let delay = self.adapter.completion_delay_ms();
            if delay > 0 {
                crate::ib::msleep(delay);
            }
            let mut answer = [0u8; MAD_LEN];
            let (status, byte_len, answered) = if self.qp_type == QpType::Gsi {
                gsi::send(&self.adapter, self.pd, self.port, &p, &mut answer)
            } else {
                let (status, byte_len) = execute(self, &p);
                (status, byte_len, false)
            };
            let done = {
                let mut q = self.inner.lock();
                q.executing = false;
                if q.generation != generation {
                    // Reset meanwhile: the request and its completion are
                    // gone with the queue.
                    continue;
                }
                let _ = q.sq.pop();
                // A request that was executing when the QP went to ERR took
                // effect at the responder, but its completion is flushed:
                // rxe's completer, once its QP is in ERR, drops the
                // responses that arrived and flushes every WQE of the send
                // queue, sent or not (6.12 rxe_comp.c:654-659,
                // drain_resp_pkts and flush_send_queue), as adapters do (a
                // QP in the IBA's Error state completes its outstanding
                // work requests with flush errors). So a flushed atomic may
                // have been carried out.
                let status = if self.qp_type == QpType::Rc && q.state == QpState::Err {
                    WcStatus::WrFlushErr
                } else {
                    status
                };
                if status != WcStatus::Success && self.qp_type == QpType::Rc {
                    // An error moves an RC QP to ERR; the next round
                    // flushes the rest. (A datagram QP stays in RTS.)
                    q.state = QpState::Err;
                }
                // Send completions are not solicited events (only errors
                // fire an IB_CQ_SOLICITED arm).
                if status != WcStatus::Success || p.signaled || self.signal_all {
                    let w = wc(p.wr_id, status, p.opcode.wc_opcode(), byte_len, self.me);
                    self.send_cq.push(w, false)
                } else {
                    Pushed::default()
                }
            };
            self.send_cq.signal(done);
            if answered {
                self.receive_mad(&answer);
            }
        }
    }

    /// Delivers `mad` to the GSI QP's oldest receive, as an answer from the
    /// SM; lost if none is posted (a datagram with no receive) or the QP
    /// does not receive.
    fn receive_mad(&self, mad: &[u8; MAD_LEN]) {
        let buf = {
            let mut q = self.inner.lock();
            if !matches!(q.state, QpState::Rtr | QpState::Rts) {
                return;
            }
            let Some(buf) = q.rq.pop() else { return };
            buf
        };
        let len = gsi::GRH_LEN + MAD_LEN;
        let status = match buf.sge {
            Some(sge) if sge.length() as usize >= len => self
                .adapter
                .translate_local(self.pd, &sge, len as u64, Access::LOCAL_WRITE)
                .and_then(|dst| {
                    // No GRH: its room is left as zeroes.
                    dst.write(&[0u8; gsi::GRH_LEN])
                        .and_then(|()| {
                            dst.sub(gsi::GRH_LEN as u64, MAD_LEN as u64)
                                .ok_or(EFAULT)?
                                .write(mad)
                        })
                        .map_err(|_| WcStatus::LocProtErr)
                }),
            _ => Err(WcStatus::LocLenErr),
        };
        let (status, byte_len) = match status {
            Ok(()) => (WcStatus::Success, len as u32),
            Err(s) => (s, 0),
        };
        let mut w = wc(buf.wr_id, status, WcOpcode::Recv, byte_len, self.me);
        w.src_qp = gsi::GSI_QPN;
        w.slid = SM_LID;
        let pushed = self.recv_cq.push(w, false);
        self.recv_cq.signal(pushed);
    }

    /// The QP is being destroyed: when this returns, nothing of it executes
    /// or completes, and none of its completions is left in its CQs. The
    /// request executing, if any, finishes first; the rest are dropped.
    pub(super) fn destroy(&self) {
        self.dying.store(true, Ordering::Release);
        *self.exec.lock() = true;
        self.send_cq.purge(self.me);
        self.recv_cq.purge(self.me);
    }
}

/// The driver's data of a QP.
pub(super) struct SimQp {
    pub(super) shared: Arc<QpShared>,
    _counted: Counted,
}

impl SimQp {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        counted: Counted,
        adapter: Arc<AdapterShared>,
        fabric: Arc<SimFabric>,
        qpn: u32,
        pd: u32,
        me: QpRef,
        init: &QpInitAttr,
        send_cq: &SimCq,
        recv_cq: &SimCq,
    ) -> Result<Self> {
        let sq = Ring::new(usize::try_from(init.max_send_wr)?)?;
        let rq = Ring::new(usize::try_from(init.max_recv_wr)?)?;
        let max_send_sge = usize::try_from(init.max_send_sge)?;
        let max_recv_sge = usize::try_from(init.max_recv_sge)?;
        let shared = Arc::pin_init(
            pin_init!(QpShared {
                adapter,
                fabric,
                qpn,
                pd,
                qp_type: init.qp_type,
                port: init.port,
                me,
                signal_all: init.signal_all,
                max_send_sge,
                max_recv_sge,
                send_cq: send_cq.shared.clone(),
                recv_cq: recv_cq.shared.clone(),
                inner <- new_irq_spinlock!(
                    QpInner {
                        state: QpState::Reset,
                        dlid: 0,
                        dest_qpn: 0,
                        access: 0,
                        max_rd_atomic: 0,
                        max_dest_rd_atomic: 0,
                        sq,
                        executing: false,
                        generation: 0,
                        rq,
                    },
                    "mlx_ext_sim::qp"
                ),
                exec <- new_mutex!(false, "mlx_ext_sim::qp::exec"),
                dying: AtomicBool::new(false),
                work <- new_work!("mlx_ext_sim::qp::work"),
            }),
            GFP_KERNEL,
        )?;
        Ok(Self {
            shared,
            _counted: counted,
        })
    }
}

/// Whether `opcode` is one the simulated adapters execute on a QP of type
/// `qp_type`: sends on the GSI QP, atomics and memory registration on RC
/// QPs.
pub(super) fn executes(qp_type: QpType, opcode: WrOpcode) -> bool {
    if qp_type == QpType::Gsi {
        return opcode == WrOpcode::Send;
    }
    opcode.is_standard_atomic()
        || opcode.is_masked_atomic()
        || matches!(opcode, WrOpcode::RegMr | WrOpcode::LocalInv)
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
            crate::ib::provider::driver::QpState::Rtr | crate::ib::provider::driver::QpState::Rts
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
