// SPDX-License-Identifier: GPL-2.0

//! Completion queues and queue pairs of a simulated adapter.

use super::adapter::Counted;
use crate::ib::driver::{
    qp_mask, CqNotifier, QpAttr, QpInitAttr, QpRef, QpState, RecvWr, SendWr, Wc, WcSink,
};
use crate::sim::fabric::{self, WcOpcode, WcStatus};
use kernel::{
    init::InPlaceInit,
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
};

/// How a CQ is armed (`req_notify_cq`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arm {
    /// Not armed: completions are queued silently.
    Off,
    /// The next completion runs the handler.
    Next,
    /// The next solicited completion (or error) runs the handler.
    Solicited,
}

struct CqRing {
    /// `entries` slots; `None` where empty.
    slots: KVec<Option<Wc>>,
    head: usize,
    len: usize,
    arm: Arm,
    /// Completions lost because the CQ was full (a real adapter raises a
    /// CQ error event; the count is kept for debugging).
    overflows: u32,
}

/// A CQ's queue, shared with the QPs completing on it.
#[pin_data]
pub(super) struct CqShared {
    notifier: CqNotifier,
    #[pin]
    ring: SpinLock<CqRing>,
}

impl CqShared {
    /// Queues `wc`; runs the handler if the CQ is armed for it (errors count
    /// as solicited, as the IB spec says).
    pub(super) fn push(&self, wc: Wc, solicited: bool) {
        let notify = {
            let mut r = self.ring.lock();
            let cap = r.slots.len();
            if r.len == cap {
                r.overflows = r.overflows.saturating_add(1);
                return;
            }
            let tail = wrap(r.head + r.len, cap);
            if let Some(slot) = r.slots.get_mut(tail) {
                *slot = Some(wc);
            }
            r.len += 1;
            let fire = match r.arm {
                Arm::Off => false,
                Arm::Next => true,
                Arm::Solicited => solicited || wc.status != WcStatus::Success as u32,
            };
            if fire {
                r.arm = Arm::Off;
            }
            fire
        };
        if notify {
            self.notifier.notify();
        }
    }

    /// Removes every completion of `qp`: it is being destroyed.
    fn purge(&self, qp: QpRef) {
        let mut r = self.ring.lock();
        let cap = r.slots.len();
        let (head, len) = (r.head, r.len);
        let mut kept = 0;
        for i in 0..len {
            let wc = r.slots.get_mut(wrap(head + i, cap)).and_then(Option::take);
            if let Some(wc) = wc.filter(|wc| wc.qp != qp) {
                if let Some(slot) = r.slots.get_mut(wrap(head + kept, cap)) {
                    *slot = Some(wc);
                }
                kept += 1;
            }
        }
        r.len = kept;
    }
}

/// Index `i` (below `2 * cap`) of a ring of `cap` slots. Not `%`: its
/// division-by-zero panic path trips objtool on Rust code in 6.12.
fn wrap(i: usize, cap: usize) -> usize {
    if i >= cap {
        i - cap
    } else {
        i
    }
}

/// The driver's data of a CQ.
pub(super) struct SimCq {
    shared: Arc<CqShared>,
    _counted: Counted,
}

impl SimCq {
    pub(super) fn new(counted: Counted, entries: u32, notifier: CqNotifier) -> Result<Self> {
        let n = usize::try_from(entries)?;
        let slots = KVec::from_elem(None, n, GFP_KERNEL)?;
        Ok(Self {
            shared: Arc::pin_init(
                pin_init!(CqShared {
                    notifier,
                    ring <- new_spinlock!(
                        CqRing {
                            slots,
                            head: 0,
                            len: 0,
                            arm: Arm::Off,
                            overflows: 0,
                        },
                        "mlx_ext_sim::cq"
                    ),
                }),
                GFP_KERNEL,
            )?,
            _counted: counted,
        })
    }

    pub(super) fn poll(&self, out: &mut WcSink<'_>) {
        let mut r = self.shared.ring.lock();
        let cap = r.slots.len();
        while r.len > 0 && out.room() > 0 {
            let head = r.head;
            if let Some(wc) = r.slots.get_mut(head).and_then(Option::take) {
                out.push(&wc);
            }
            r.head = wrap(head + 1, cap);
            r.len -= 1;
        }
    }

    /// Arms the CQ; returns whether completions are waiting (asked for with
    /// `report_missed`).
    pub(super) fn arm(&self, solicited_only: bool, report_missed: bool) -> bool {
        let mut r = self.shared.ring.lock();
        r.arm = if solicited_only {
            Arm::Solicited
        } else {
            Arm::Next
        };
        report_missed && r.len > 0
    }
}

struct QpInner {
    state: QpState,
    dlid: u32,
    dest_qpn: u32,
    access: u32,
    /// Posted receives, oldest first (`wr_id`s).
    rq: KVec<u64>,
    rq_head: usize,
}

/// The driver's data of a QP.
pub(super) struct SimQp {
    _qpn: u32,
    max_recv_wr: usize,
    send_cq: Arc<CqShared>,
    recv_cq: Arc<CqShared>,
    inner: Pin<KBox<SpinLock<QpInner>>>,
    _counted: Counted,
}

impl SimQp {
    pub(super) fn new(
        counted: Counted,
        qpn: u32,
        init: &QpInitAttr,
        send_cq: &SimCq,
        recv_cq: &SimCq,
    ) -> Result<Self> {
        let max_recv_wr = usize::try_from(init.max_recv_wr)?;
        Ok(Self {
            _qpn: qpn,
            max_recv_wr,
            send_cq: send_cq.shared.clone(),
            recv_cq: recv_cq.shared.clone(),
            inner: KBox::pin_init(
                new_spinlock!(
                    QpInner {
                        state: QpState::Reset,
                        dlid: 0,
                        dest_qpn: 0,
                        access: 0,
                        rq: KVec::with_capacity(max_recv_wr, GFP_KERNEL)?,
                        rq_head: 0,
                    },
                    "mlx_ext_sim::qp"
                ),
                GFP_KERNEL,
            )?,
            _counted: counted,
        })
    }

    /// Applies a `modify_qp`: the state machine of the IB specification
    /// (ib_core's table), and the attributes the fabric uses.
    pub(super) fn modify(&self, me: QpRef, attr: &QpAttr, mask: u32) -> Result {
        let flushed = {
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
            if !cur.transition_ok(next, mask) {
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
            q.state = next;
            match next {
                // Outstanding receives complete with a flush error.
                QpState::Err => take_rq(&mut q)?,
                // RESET discards them without completions.
                QpState::Reset => {
                    drop(take_rq(&mut q)?);
                    KVec::new()
                }
                _ => KVec::new(),
            }
        };
        for wr_id in flushed.iter() {
            self.recv_cq.push(flush(*wr_id, WcOpcode::Recv, me), true);
        }
        Ok(())
    }

    pub(super) fn post_recv(&self, me: QpRef, wr: &RecvWr<'_>) -> Result {
        let mut q = self.inner.lock();
        let state = fabric::QpState::from_raw(q.state as u32).ok_or(EINVAL)?;
        if fabric::flushes(state) {
            drop(q);
            self.recv_cq.push(flush(wr.wr_id, WcOpcode::Recv, me), true);
            return Ok(());
        }
        if !fabric::can_post_recv(state) {
            return Err(EINVAL);
        }
        if q.rq.len() - q.rq_head >= self.max_recv_wr {
            return Err(ENOMEM);
        }
        q.rq.push(wr.wr_id, GFP_ATOMIC)?;
        Ok(())
    }

    pub(super) fn post_send(&self, _wr: &SendWr<'_>) -> Result {
        let q = self.inner.lock();
        let state = fabric::QpState::from_raw(q.state as u32).ok_or(EINVAL)?;
        if !fabric::can_post_send(state) {
            return Err(EINVAL);
        }
        // The fabric that executes send work requests is not there yet.
        Err(crate::ib::eopnotsupp())
    }

    /// The QP is being destroyed: nothing of it may stay in its CQs.
    pub(super) fn destroy(&self, me: QpRef) {
        self.send_cq.purge(me);
        self.recv_cq.purge(me);
    }
}

/// Takes the outstanding receives of `q`, oldest first.
fn take_rq(q: &mut QpInner) -> Result<KVec<u64>> {
    let mut out = KVec::with_capacity(q.rq.len() - q.rq_head, GFP_ATOMIC)?;
    out.extend_from_slice(q.rq.get(q.rq_head..).unwrap_or(&[]), GFP_ATOMIC)?;
    q.rq = KVec::new();
    q.rq_head = 0;
    Ok(out)
}

/// The completion of a work request flushed by the error state.
fn flush(wr_id: u64, opcode: WcOpcode, qp: QpRef) -> Wc {
    Wc {
        wr_id,
        status: WcStatus::WrFlushErr as u32,
        opcode: opcode as u32,
        byte_len: 0,
        qp,
        src_qp: 0,
        slid: 0,
    }
}
