// SPDX-License-Identifier: GPL-2.0

//! The atomic API for kernel ULPs (`include/mlx_ext/mlx_ext.h`,
//! `Documentation/ulp-api.rst`): QPs whose atomics mlx_ext carries out,
//! natively or by emulation, with responses in host order.
//!
//! The rules (flags, plans, errnos, the guess cache) are pure and
//! host-tested in `core/src/api.rs`; this file carries them out on
//! [`crate::ib::ulp`]'s QPs and requests.

use crate::{
    api::{self, errno, GuessCache, Plan, QpFlags},
    atomics::{wr::AtomicOp, AtomicReply, Emulation, ReplyOrder, Step},
    caps::{AtomicCap, MaskedMode, Record},
    ib::{
        sync::IrqSpinLock,
        ulp::{AtomicApi, Caps, Completion, Handler, Outcome, Pd, Qp, QpInit, Request, UlpOp},
        DeviceName,
    },
    new_irq_spinlock,
    report::DeviceReports,
};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{alloc::Flags, prelude::*, sync::Arc};

/// `IB_WC_SUCCESS`.
const WC_SUCCESS: u32 = 0;

/// What mlx_ext knows of a device, shared by its sysfs report and its QPs.
pub struct DevState {
    record: Record,
    /// The driver refused an atomic work request at run time.
    refused: AtomicBool,
    /// The reason masked atomics are unavailable was logged.
    told: AtomicBool,
    name: DeviceName,
}

impl DevState {
    /// The state of a device whose record was derived as `record`.
    pub fn new(record: Record, name: DeviceName) -> Self {
        Self {
            record,
            refused: AtomicBool::new(false),
            told: AtomicBool::new(false),
            name,
        }
    }

    /// The record now: as derived, or downgraded after a refusal.
    pub fn record(&self) -> Record {
        if self.refused.load(Ordering::Acquire) {
            self.record.after_refusal().unwrap_or(self.record)
        } else {
            self.record
        }
    }

    fn reply_order(&self) -> ReplyOrder {
        if self.record.atomic_cap == AtomicCap::HcaReplyBe {
            ReplyOrder::BigEndian
        } else {
            ReplyOrder::Host
        }
    }

    /// Logs, once per device, why a ULP's atomics are refused.
    fn tell(&self, why: &str) {
        if !self.told.swap(true, Ordering::AcqRel) {
            pr_info!("{}: atomics refused to a ULP: {}\n", self.name, why);
        }
    }

    /// The driver refused an atomic work request with `EOPNOTSUPP`.
    fn driver_refused(&self) {
        if self.record.after_refusal().is_some() && !self.refused.swap(true, Ordering::AcqRel) {
            pr_warn!(
                "{}: the driver refused an atomic work request (EOPNOTSUPP): masked_atomic_mode is now unavailable\n",
                self.name
            );
        }
    }
}

/// The mutable state of a QP.
struct Inner {
    /// `mlx_ext_destroy_qp` started: nothing more is posted.
    dying: bool,
    /// Operations posted and not finished.
    in_flight: u32,
    cache: GuessCache,
}

/// A ULP's QP, as mlx_ext keeps it.
#[pin_data]
pub struct ExtQp {
    qp: Qp,
    dev: Arc<DevState>,
    flags: QpFlags,
    #[pin]
    inner: IrqSpinLock<Inner>,
}

impl ExtQp {
    /// Posts `op` for `req` unless the QP is being destroyed. Holding the
    /// lock across the post orders it against `destroy`: a request posted
    /// here is on the send queue before the drain's marker.
    fn send(
        &self,
        req: Request<OpState>,
        op: AtomicOp,
        new_op: bool,
    ) -> core::result::Result<(), (Error, Request<OpState>)> {
        let (addr, rkey) = {
            let r = &req.data().req;
            (r.remote_addr, r.rkey)
        };
        let mut inner = self.inner.lock();
        if inner.dying {
            return Err((Error::from_errno(-errno::ESHUTDOWN), req));
        }
        match self.qp.post_atomic(req, op, addr, rkey) {
            Ok(()) => {
                if new_op {
                    inner.in_flight += 1;
                }
                Ok(())
            }
            Err((e, req)) => {
                drop(inner);
                if e.to_errno() == -errno::EOPNOTSUPP {
                    self.dev.driver_refused();
                }
                Err((e, req))
            }
        }
    }

    fn learn(&self, rkey: u32, addr: u64, value: Option<u64>) {
        let mut inner = self.inner.lock();
        match value {
            Some(v) => inner.cache.put(rkey, addr, v),
            None => inner.cache.forget(rkey, addr),
        }
    }
}

/// One operation of a ULP while it is posted.
pub struct OpState {
    ulp: UlpOp,
    qp: Arc<ExtQp>,
    req: api::Request,
    /// The operation as posted directly, or `None` when emulated.
    direct: Option<AtomicOp>,
    emulation: Option<Emulation>,
    attempts: u32,
}

/// Ends an operation: tells the ULP, then lets the QP go.
fn finish(req: Request<OpState>, status: i32, wc_status: u32, reply: AtomicReply) {
    let st = req.into_data();
    {
        let mut inner = st.qp.inner.lock();
        inner.in_flight = inner.in_flight.saturating_sub(1);
    }
    st.ulp.finish(Outcome {
        status,
        wc_status,
        reply,
        attempts: st.attempts,
    });
}

impl Handler for OpState {
    fn done(mut req: Request<Self>, c: Completion) {
        let st = req.data_mut();
        st.attempts = st.attempts.saturating_add(1);
        let qp = st.qp.clone();
        let (rkey, addr) = (st.req.rkey, st.req.remote_addr);
        let reply = AtomicReply::new(c.raw_reply, qp.dev.reply_order());
        if c.status != WC_SUCCESS {
            qp.learn(rkey, addr, None);
            return finish(req, -api::completion_errno(c.status), c.status, reply);
        }
        let old = reply.value();
        if let Some(op) = st.direct {
            qp.learn(rkey, addr, Some(op.new_value(old)));
            return finish(req, 0, WC_SUCCESS, reply);
        }
        let Some(emulation) = st.emulation.as_mut() else {
            return finish(req, -errno::EIO, WC_SUCCESS, reply);
        };
        match emulation.complete(old) {
            Step::Done { response } => {
                qp.learn(rkey, addr, Some(emulation.op().apply(response)));
                finish(req, 0, WC_SUCCESS, reply)
            }
            Step::Exhausted { last_seen } => {
                qp.learn(rkey, addr, Some(last_seen));
                finish(req, -errno::EAGAIN, WC_SUCCESS, reply)
            }
            Step::Next(_) => {
                let cas = api::cas_op(emulation);
                if let Err((e, req)) = qp.send(req, cas, false) {
                    qp.learn(rkey, addr, None);
                    finish(req, e.to_errno(), WC_SUCCESS, reply);
                }
            }
        }
    }
}

/// The API's implementation.
pub struct Api;

fn errno_err(errno: i32) -> Error {
    Error::from_errno(-errno)
}

impl AtomicApi for Api {
    type Client = DeviceReports;
    type Qp = ExtQp;

    fn query(data: &crate::report::DeviceData) -> Caps {
        let r = data.state().record();
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
            sizes: if r.posts.standard || r.posts.masked {
                8
            } else {
                0
            },
        }
    }

    fn create_qp(
        data: &crate::report::DeviceData,
        pd: &Pd,
        init: &mut QpInit,
    ) -> Result<Arc<ExtQp>> {
        let dev = data.state().clone();
        if !init.is_rc() {
            pr_info!(
                "{}: mlx_ext_create_qp: only RC QPs carry atomics\n",
                dev.name
            );
            return Err(EINVAL);
        }
        if init.has_srq() {
            pr_info!(
                "{}: mlx_ext_create_qp: QPs with an SRQ are not supported\n",
                dev.name
            );
            return Err(EINVAL);
        }
        if !init.send_cq_usable() || !init.recv_cq_usable() {
            pr_info!(
                "{}: mlx_ext_create_qp: the send and receive CQs must come from ib_alloc_cq() and not be IB_POLL_DIRECT\n",
                dev.name
            );
            return Err(EINVAL);
        }
        let asked = init.create_flags();
        let (driver_flags, flags) = api::create_flags(&dev.record(), asked).map_err(|e| {
            pr_info!(
                "{}: mlx_ext_create_qp: MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY on a device that does not reply big-endian\n",
                dev.name
            );
            errno_err(e)
        })?;
        init.set_create_flags(driver_flags);
        // Room for the markers `mlx_ext_destroy_qp`'s drain posts, which the
        // ULP does not count: without it a full queue would make the drain
        // give up and the QP be destroyed with requests still posted.
        init.reserve_drain();
        let qp = Qp::create(pd, init);
        init.unreserve_drain();
        init.set_create_flags(asked);
        let qp = qp?;
        Arc::pin_init(
            pin_init!(ExtQp {
                qp,
                dev,
                flags,
                inner <- new_irq_spinlock!(
                    Inner {
                        dying: false,
                        in_flight: 0,
                        cache: GuessCache::new(),
                    },
                    "mlx_ext::ExtQp"
                ),
            }),
            GFP_KERNEL,
        )
    }

    fn ib_qp(qp: &ExtQp) -> &Qp {
        &qp.qp
    }

    fn destroy_qp(qp: Arc<ExtQp>) {
        qp.inner.lock().dying = true;
        // ERR and drain: every request posted before `dying` was set
        // completes (flushed) before this returns, and its handler, which
        // posts nothing more, has returned.
        qp.qp.destroy();
        let left = qp.inner.lock().in_flight;
        if left != 0 {
            pr_warn!(
                "{}: mlx_ext_destroy_qp: {} operations did not complete before the QP was destroyed (a driver bug)\n",
                qp.dev.name,
                left
            );
        }
    }

    fn post(qp: &Arc<ExtQp>, op: UlpOp, gfp: Flags) -> Result {
        if !op.has_done() {
            return Err(EINVAL);
        }
        let req = op.request();
        let plan = api::plan(&qp.dev.record(), qp.flags, &req).map_err(|r| {
            if r.errno() == errno::EOPNOTSUPP {
                qp.dev.tell(r.text());
            }
            errno_err(r.errno())
        })?;
        let (wr, direct, emulation) = match plan {
            Plan::Direct(op) => (op, Some(op), None),
            Plan::Emulate(m) => {
                let guess = qp
                    .inner
                    .lock()
                    .cache
                    .get(req.rkey, req.remote_addr)
                    .unwrap_or(0);
                let e = Emulation::with_max_attempts(m, guess, api::MAX_ATTEMPTS);
                (api::cas_op(&e), None, Some(e))
            }
        };
        let state = OpState {
            ulp: op,
            qp: qp.clone(),
            req,
            direct,
            emulation,
            attempts: 0,
        };
        let request = Request::new(state, gfp)?;
        // On failure the request is dropped: the ULP's `done` is not called.
        qp.send(request, wr, true).map_err(|(e, _)| e)
    }
}

crate::export_atomic_api!(Api);
