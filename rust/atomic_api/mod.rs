// SPDX-License-Identifier: GPL-2.0

//! The atomic API for kernel ULPs (`include/mlx_ext/mlx_ext.h`,
//! `Documentation/ulp-api.rst`): QPs whose atomics mlx_ext carries out,
//! natively or by emulation, with responses in host order.
//!
//! The rules (flags, plans, errnos, the guess cache) are pure and
//! host-tested in `core/src/api.rs`; this file carries them out on
//! [`crate::ib::qp`]'s QPs and [`crate::ib::request`]'s requests.

use crate::{
    api::{self, errno, Plan, QpRefusal},
    caps::{AtomicCap, MaskedMode, WrClass},
    dev_state::DevState,
    ib::{
        export::{AtomicApi, Caps, UlpOp},
        qp::{Pd, Qp, QpInit},
        request::{Gfp, Request},
        values::wc_status::SUCCESS as WC_SUCCESS,
    },
    registry::DeviceReports,
};
use core::sync::atomic::Ordering;
use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
};

mod chain;
mod qp;
mod words;

use qp::{fail_chain, Chain};
pub use qp::{ExtQp, OpState, Words};

/// The API's implementation.
pub struct Api;

fn errno_err(errno: i32) -> Error {
    Error::from_errno(-errno)
}

/// Logs why `what` (the C function's name) refuses a QP on `dev`, and
/// returns the error.
fn refuse(dev: &DevState, what: &str, why: QpRefusal) -> Error {
    pr_info!("{}: {}: {}\n", dev.name(), what, why.text());
    errno_err(why.errno())
}

// SAFETY: `device` only clones an `Arc`: it does not sleep.
unsafe impl AtomicApi for Api {
    type Client = DeviceReports;
    type Dev = DevState;
    type Qp = ExtQp;

    fn abi_check(version: u32, size: usize, ours: usize) -> i32 {
        match api::abi_check(version, size, ours) {
            Ok(()) => 0,
            Err(r) => r.code(),
        }
    }

    fn device(data: &crate::registry::DeviceData) -> Arc<DevState> {
        data.state().clone()
    }

    fn query(dev: &DevState) -> Caps {
        let r = dev.record();
        let cap = |c: AtomicCap| match c {
            AtomicCap::None => 0,
            AtomicCap::Hca => 1,
            AtomicCap::Glob => 2,
            AtomicCap::HcaReplyBe => 3,
        };
        Caps {
            atomic_cap: cap(r.atomic_cap),
            masked_atomic_cap: cap(r.masked_atomic_cap),
            masked_mode: match r.mode {
                MaskedMode::Native => 0,
                MaskedMode::Emulated => 1,
                MaskedMode::Unavailable => 2,
            },
            standard: r.posts.standard,
            // 4-byte operations are masked ones on their word, carried out
            // wherever those are (natively or emulated).
            sizes: match r.mode {
                MaskedMode::Unavailable if r.posts.standard => 8,
                MaskedMode::Unavailable => 0,
                _ => 8 | 4,
            },
        }
    }

    fn init_qp_attr(dev: &DevState, init: &mut QpInit, max_ops: u32) -> Result {
        const WHAT: &str = "mlx_ext_init_qp_attr";
        if !init.is_rc() {
            return Err(refuse(dev, WHAT, QpRefusal::NotRc));
        }
        let (wr, sge) = init.send_cap();
        let cap = api::init_send_cap(wr, sge, max_ops).map_err(|r| {
            pr_info!(
                "{}: {}: {} ({} + {})\n",
                dev.name(),
                WHAT,
                r.text(),
                wr,
                max_ops
            );
            errno_err(r.errno())
        })?;
        init.set_send_cap(cap);
        Ok(())
    }

    fn attach_qp(
        dev: Arc<DevState>,
        qp: Qp,
        flags: u32,
        member: Option<ArcBorrow<'_, ExtQp>>,
    ) -> Result<Arc<ExtQp>> {
        let what = match member {
            Some(_) => "mlx_ext_attach_qp_group",
            None => "mlx_ext_attach_qp",
        };
        if !qp.is_rc() {
            return Err(refuse(&dev, what, QpRefusal::NotRc));
        }
        if !qp.send_cq_in_cqe_model() {
            return Err(refuse(&dev, what, QpRefusal::SendCqModel));
        }
        let flags = api::attach_flags(&dev.record(), flags).map_err(|r| {
            pr_info!("{}: {}: {}\n", dev.name(), what, r.text());
            EINVAL
        })?;
        let group = match member {
            None => None,
            Some(m) => {
                // (A device's record decides the flags a QP must have,
                // so two QPs of one device have the same.)
                // The member is a live handle (the header's contract: not
                // one being detached or destroyed, which frees it). The
                // group is its QPs' shared words, which outlive any one of
                // them: it goes on while other members come and go. Its
                // QPs share one send CQ: an operation is completed by
                // whichever QP's compare-and-swap carries it, so the
                // contexts its `done` runs in, their serialisation, and
                // what waiting for it may deadlock on stay those of its
                // own QP's CQ.
                if !Arc::ptr_eq(&m.dev, &dev) {
                    return Err(refuse(&dev, what, QpRefusal::OtherDevice));
                }
                if !qp.shares_send_cq(&m.qp) {
                    return Err(refuse(&dev, what, QpRefusal::GroupSendCq));
                }
                Some(m)
            }
        };
        let words = group.as_ref().map(|m| m.words.clone());
        let xqp = ExtQp::new(dev, qp, flags, words)?;
        if let Some(m) = group {
            m.grouped.store(true, Ordering::Release);
        }
        Ok(xqp)
    }

    fn detach_qp(qp: &ExtQp) {
        qp.quiesce();
    }

    fn create_qp(dev: Arc<DevState>, pd: &Pd, init: &mut QpInit) -> Result<Arc<ExtQp>> {
        const WHAT: &str = "mlx_ext_create_qp";
        if !init.is_rc() {
            return Err(refuse(&dev, WHAT, QpRefusal::NotRc));
        }
        if init.has_srq() {
            return Err(refuse(&dev, WHAT, QpRefusal::Srq));
        }
        if !init.send_cq_usable() || !init.recv_cq_usable() {
            return Err(refuse(&dev, WHAT, QpRefusal::CqsUnusable));
        }
        let asked = init.create_flags();
        let (driver_flags, flags) =
            api::create_flags(&dev.record(), asked).map_err(|r| refuse(&dev, WHAT, r))?;
        init.set_create_flags(driver_flags);
        // Room for the markers `mlx_ext_destroy_qp`'s drain posts, which the
        // ULP does not count: without it a full queue would make the drain
        // give up and the QP be destroyed with requests still posted.
        init.reserve_drain();
        let qp = Qp::create(pd, init);
        init.unreserve_drain();
        init.set_create_flags(asked);
        ExtQp::new(dev, qp?, flags, None)
    }

    fn ib_qp(qp: &ExtQp) -> &Qp {
        &qp.qp
    }

    fn destroy_qp(qp: &ExtQp) {
        if !qp.qp.is_owned() {
            // A handle from mlx_ext_attach_qp: the QP is the ULP's to
            // destroy; what the ULP can rely on is a detach.
            pr_warn!(
                "{}: mlx_ext_destroy_qp on an attached QP: detached, not destroyed (use mlx_ext_detach_qp)\n",
                qp.dev.name()
            );
            return qp.quiesce();
        }
        qp.close();
        // ERR and drain: every request posted before `dying` was set
        // completes (flushed) before this returns, and its handler, which
        // posts nothing more, has returned.
        qp.qp.destroy();
        // After a drain nothing of this QP waits behind its own batches
        // (each ended with its last completion); if the QP could not be
        // drained, whatever of it still waits was never posted: it ends
        // here.
        let left_waiting = qp.words.take_waiting_of(qp);
        let grouped = qp.grouped.load(Ordering::Acquire);
        if !grouped {
            // Its own words: none is in flight any more.
            for w in qp.words.inner.lock().words.iter_mut() {
                w.key = None;
            }
        }
        fail_chain(
            left_waiting,
            -errno::ESHUTDOWN,
            WC_SUCCESS,
            qp.dev.reply_order(),
        );
        let left = qp.inner.lock().in_flight;
        if left == 0 {
            return;
        }
        if grouped {
            // Operations of this QP that batches of the group's other QPs
            // carry: they end with those QPs' completions.
            return qp.wait_idle("mlx_ext_destroy_qp");
        }
        pr_warn!(
            "{}: mlx_ext_destroy_qp: {} operations did not complete before the QP was destroyed (a driver bug)\n",
            qp.dev.name(),
            left
        );
    }

    fn post(qp: ArcBorrow<'_, ExtQp>, op: UlpOp, gfp: Gfp) -> Result {
        // (Checked again under the lock where the request is posted.)
        if qp.closing.load(Ordering::Acquire) {
            return Err(Error::from_errno(-errno::ESHUTDOWN));
        }
        if !op.has_done() {
            return Err(EINVAL);
        }
        // A 4-byte operation becomes the 8-byte masked one on its word.
        let (req, half) = api::widen(
            &crate::ties::request(op.request()),
            cfg!(target_endian = "big"),
        )
        .map_err(|r| errno_err(r.errno()))?;
        let plan = api::plan(&qp.dev.record(), qp.flags, &req).map_err(|r| {
            if r.errno() == errno::EOPNOTSUPP {
                qp.dev.tell(r.text());
            }
            errno_err(r.errno())
        })?;
        let (direct, masked) = match plan {
            Plan::Direct(op) => (Some(op), None),
            Plan::Emulate(m) => (None, Some(m)),
        };
        let state = OpState {
            ulp: op,
            qp: qp.into(),
            req,
            direct,
            masked,
            guess: 0,
            active: false,
            fence: req.fence(),
            half,
            followers: Chain::new(),
            next: Chain::new(),
            attempts: 0,
            status: 0,
        };
        let request = qp.pool.take(state, gfp)?;
        // On failure the request is dropped: the ULP's `done` is not called.
        // `qp_sends`: as `ExtQp::post_locked` takes it.
        let start = |request: Request<OpState>, qp_sends: bool| match direct {
            Some(op) => qp.send(request, op, true, qp_sends),
            None => qp.start_emulated(request, qp_sends),
        };
        let (mut e, mut request) = match start(request, false) {
            Ok(()) => return Ok(()),
            Err(failed) => failed,
        };
        // Refused: maybe by a QP not in RTS (in RESET, INIT or RTR: a post
        // racing rdma_cm's ESTABLISHED event, a QP taken back through RESET
        // to be reused, or a ULP's bug), which is no reason to think the
        // driver lacks the opcode. Only a query tells, and only a refusal
        // that follows a query answered "RTS" is learnt: one query per
        // refused post, by a caller whose gfp allows blocking (the
        // contract in mlx_ext.h and ulp-api.rst).
        let mut qp_sends = false;
        let code = e.to_errno();
        if code == -errno::EINVAL || code == -errno::EOPNOTSUPP {
            let rts = if gfp.can_sleep() {
                qp.query_rts()?
            } else {
                None
            };
            match rts {
                // Not in RTS: the ULP's error.
                Some(false) => return Err(e),
                // In RTS: the request is posted again; a second refusal is
                // the opcode's, and is learnt.
                Some(true) => {
                    qp_sends = true;
                    (e, request) = match start(request, true) {
                        Ok(()) => return Ok(()),
                        Err(failed) => failed,
                    };
                }
                // It cannot be asked (a caller that may not block, a
                // driver without query_qp): nothing is learnt. A masked
                // request or a fetch-and-add is carried out by the
                // emulation this once; where the QP does not send, its
                // compare-and-swap fails as the request did. A
                // compare-and-swap fails as the driver failed it.
                None => {
                    let class = direct.and_then(|op| WrClass::of(op.to_wr().0));
                    let Some(class) = class.filter(|c| *c != WrClass::CmpSwap) else {
                        return Err(e);
                    };
                    let mut once = crate::caps::Refusals::default();
                    once.note(class, -code);
                    let record = qp.dev.record().with_refusals(once);
                    return match api::plan(&record, qp.flags, &request.data().req) {
                        Ok(Plan::Emulate(m)) => qp.emulate_instead(request, m, false),
                        _ => Err(e),
                    };
                }
            }
        }
        if direct.is_none() {
            return Err(e);
        }
        // A masked request or a fetch-and-add the driver just refused (its
        // refusal is now in the record, and the error EOPNOTSUPP) is
        // emulated over compare-and-swap, when the record still posts that.
        if e.to_errno() != -errno::EOPNOTSUPP {
            return Err(e);
        }
        match api::plan(&qp.dev.record(), qp.flags, &request.data().req) {
            Ok(Plan::Emulate(m)) => qp.emulate_instead(request, m, qp_sends),
            Ok(Plan::Direct(_)) => Err(e),
            Err(r) => Err(errno_err(r.errno())),
        }
    }
}

crate::export_atomic_api!(Api);
