// SPDX-License-Identifier: GPL-2.0

//! One ULP QP as mlx_ext keeps it, and its data path: its pool of
//! requests, the count of operations pending that a detach or destroy
//! waits for, the posting of native operations, and combining, by which
//! the emulated operations of a QP (or of a group of QPs) on one word wait
//! for and join one batch, carried out by one compare-and-swap from the
//! guess cache's value; a batch's completion ends its operations or sends
//! the next.

use super::chain::Linked;
use super::words::WordsInner;
use crate::api::{self, errno, BatchWalk, GuessCache, QpFlags};
use crate::atomics::wr::AtomicOp;
use crate::atomics::{AtomicReply, Be64, MaskedOp, ReplyOrder};
use crate::caps::WrClass;
use crate::dev_state::DevState;
use crate::ib::export::{Outcome, UlpOp};
use crate::ib::qp::Qp;
use crate::ib::request::{Completion, Handler, Request, RequestPool};
use crate::ib::sync::{Event, IrqSpinLock};
use crate::ib::values::wc_status::SUCCESS as WC_SUCCESS;
use crate::new_irq_spinlock;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// A list of a QP's operations.
pub(super) type Chain = super::chain::Chain<OpState>;

/// The mutable state of a QP.
pub(super) struct Inner {
    /// `mlx_ext_destroy_qp` or `mlx_ext_detach_qp` started: nothing more is
    /// posted.
    pub(super) dying: bool,
    /// Operations posted and not finished (their `done` not returned).
    pub(super) in_flight: u32,
}

/// A ULP's QP, as mlx_ext keeps it.
#[pin_data]
pub struct ExtQp {
    pub(super) qp: Qp,
    /// Where its operations' requests come from: no allocation per
    /// operation.
    pub(super) pool: RequestPool<OpState>,
    pub(super) dev: Arc<DevState>,
    pub(super) flags: QpFlags,
    /// Its combining state: its own, or its group's.
    pub(super) words: Arc<Words>,
    /// Whether `words` is shared: the QP joined a group
    /// (`mlx_ext_attach_qp_group`), or another joined its own.
    pub(super) grouped: AtomicBool,
    #[pin]
    pub(super) inner: IrqSpinLock<Inner>,
    /// `Inner::dying`, readable without the lock: a post checks it first,
    /// so that one racing a detach or destroy gets `ESHUTDOWN` whatever
    /// else would refuse it.
    pub(super) closing: AtomicBool,
    /// Signalled when the QP is dying and its last operation has finished.
    #[pin]
    pub(super) idle: Event,
}

/// How long `mlx_ext_detach_qp` waits before it says that it still waits.
pub(super) const DETACH_WARN_MS: u32 = 10_000;

impl ExtQp {
    pub(super) fn new(
        dev: Arc<DevState>,
        qp: Qp,
        flags: QpFlags,
        group: Option<Arc<Words>>,
    ) -> Result<Arc<Self>> {
        let pool = qp.request_pool()?;
        let grouped = group.is_some();
        let words = match group {
            Some(w) => w,
            None => Words::new()?,
        };
        Arc::pin_init(
            pin_init!(ExtQp {
                qp,
                pool,
                dev,
                flags,
                words,
                grouped: AtomicBool::new(grouped),
                inner <- new_irq_spinlock!(
                    Inner {
                        dying: false,
                        in_flight: 0,
                    },
                    "mlx_ext::ExtQp"
                ),
                closing: AtomicBool::new(false),
                idle <- Event::new(),
            }),
            GFP_KERNEL,
        )
    }

    /// Refuses new operations from now on (`closing` and `dying` set
    /// together); returns how many are pending.
    pub(super) fn close(&self) -> u32 {
        self.closing.store(true, Ordering::Release);
        let mut inner = self.inner.lock();
        inner.dying = true;
        inner.in_flight
    }

    /// Waits until a closed QP's last operation has finished, saying so
    /// every [`DETACH_WARN_MS`] from `what`.
    pub(super) fn wait_idle(&self, what: &str) {
        while !self.idle.wait_ms(DETACH_WARN_MS) {
            pr_warn!(
                "{}: {}: still waiting for {} operations after {} s (is the QP, or in a group the QP that carries them, stuck in RTS with no peer? moving it to ERR ends them)\n",
                self.dev.name(),
                what,
                self.inner.lock().in_flight,
                DETACH_WARN_MS / 1000
            );
        }
    }

    /// Refuses new operations, then waits until every pending one has
    /// finished (its `done` returned). The operations a batch still waits
    /// to carry out end with `ESHUTDOWN` when its compare-and-swap in
    /// flight completes (nothing more is posted for them); the others
    /// complete as the QP (or, in a group, the QP that carries them)
    /// completes them.
    pub(super) fn quiesce(&self) {
        if self.close() == 0 {
            return;
        }
        self.wait_idle("mlx_ext_detach_qp");
    }

    /// Asks the driver whether the QP is in RTS (`None`: it cannot say),
    /// counted as a pending operation meanwhile, so that a detach or
    /// destroy racing it waits until the query is over. Process context.
    pub(super) fn query_rts(&self) -> Result<Option<bool>> {
        {
            let mut inner = self.inner.lock();
            if inner.dying {
                return Err(Error::from_errno(-errno::ESHUTDOWN));
            }
            inner.in_flight += 1;
        }
        let rts = self.qp.is_in_rts();
        self.end_one();
        Ok(rts)
    }

    /// Starts `req`, refused as a direct work request, as the emulation
    /// `m` instead.
    pub(super) fn emulate_instead(
        &self,
        mut req: Request<OpState>,
        m: MaskedOp,
        qp_sends: bool,
    ) -> Result {
        let st = req.data_mut();
        st.direct = None;
        st.masked = Some(m);
        self.start_emulated(req, qp_sends).map_err(|(e, _)| e)
    }

    /// One pending operation (or query) is over: a detach or destroy
    /// waiting for the last is woken.
    pub(super) fn end_one(&self) {
        let idle = {
            let mut inner = self.inner.lock();
            inner.in_flight = inner.in_flight.saturating_sub(1);
            inner.dying && inner.in_flight == 0
        };
        if idle {
            self.idle.signal();
        }
    }

    /// Posts `op` for `req` with the lock held, unless the QP is being
    /// destroyed. Holding the lock across the post orders it against
    /// `destroy`: a request posted here is on the send queue before the
    /// drain's marker. `qp_sends`: the QP was just found in RTS
    /// ([`Self::query_rts`], in the same call), so that a refusal is the
    /// driver's and is learnt (`Record::learns`); no older evidence is,
    /// since a ULP may take its QP back through RESET at any time.
    pub(super) fn post_locked(
        &self,
        inner: &Inner,
        req: Request<OpState>,
        op: AtomicOp,
        qp_sends: bool,
    ) -> core::result::Result<(), (Error, Request<OpState>)> {
        if inner.dying {
            return Err((Error::from_errno(-errno::ESHUTDOWN), req));
        }
        let (rkey, addr) = req.data().key();
        let fence = req.data().fence;
        // Every `AtomicOp` is one of the four atomic opcodes.
        let class = WrClass::of(op.to_wr().0).unwrap_or(WrClass::Masked);
        self.qp
            .post_atomic(req, crate::ties::atomic_wr(op), addr, rkey, fence)
            .inspect(|()| self.dev.driver_accepted(class))
            .map_err(|(e, req)| {
                self.dev.driver_refused(class, -e.to_errno(), qp_sends);
                // What the driver was just found to lack is unavailable,
                // whatever errno it said so with.
                if self.dev.record().posts_class(class) {
                    (e, req)
                } else {
                    (Error::from_errno(-errno::EOPNOTSUPP), req)
                }
            })
    }

    /// Posts `op` for `req`, one of this QP's; `new_op` counts it as a new
    /// operation.
    pub(super) fn send(
        &self,
        req: Request<OpState>,
        op: AtomicOp,
        new_op: bool,
        qp_sends: bool,
    ) -> core::result::Result<(), (Error, Request<OpState>)> {
        let mut inner = self.inner.lock();
        self.post_locked(&inner, req, op, qp_sends)?;
        if new_op {
            inner.in_flight += 1;
        }
        Ok(())
    }

    /// Starts an emulated operation: it joins the batch of its word if one
    /// is in flight (on this QP, or on another of its group), else it
    /// leads one (`qp_sends` as [`Self::post_locked`] takes it).
    pub(super) fn start_emulated(
        &self,
        mut req: Request<OpState>,
        qp_sends: bool,
    ) -> core::result::Result<(), (Error, Request<OpState>)> {
        let key = req.data().key();
        let mut words = self.words.inner.lock();
        let mut inner = self.inner.lock();
        if inner.dying {
            return Err((Error::from_errno(-errno::ESHUTDOWN), req));
        }
        if let Some(w) = words.word(key) {
            w.waiting_rev.push_front(req);
            inner.in_flight += 1;
            return Ok(());
        }
        let active = words.activate(key);
        let guess = words.cache.get(key.0, key.1).unwrap_or(0);
        {
            let st = req.data_mut();
            st.guess = guess;
            st.active = active;
        }
        let cas = batch_cas(&mut req);
        match self.post_locked(&inner, req, cas, qp_sends) {
            Ok(()) => {
                inner.in_flight += 1;
                Ok(())
            }
            Err(e) => {
                if active {
                    // Nothing can have joined: the lock was held throughout.
                    words.end_word(key);
                }
                Err(e)
            }
        }
    }
}

/// One operation of a ULP while it is posted.
pub struct OpState {
    pub(super) ulp: UlpOp,
    pub(super) qp: Arc<ExtQp>,
    pub(super) req: api::Request,
    /// The operation as posted directly, or `None` when emulated.
    pub(super) direct: Option<AtomicOp>,
    /// The masked operation emulated, when it is.
    pub(super) masked: Option<MaskedOp>,
    /// A batch's leader: the guess its compare-and-swap compares with.
    pub(super) guess: u64,
    /// A batch's leader: whether it holds its word's `active` slot.
    pub(super) active: bool,
    /// For a 4-byte operation, where its bits lie in the word.
    pub(super) half: Option<api::Half>,
    /// Whether its next work request carries `IB_SEND_FENCE`: the
    /// operation's own flag, or for a batch's leader, any of the batch's.
    pub(super) fence: bool,
    /// A batch's leader: the other operations of its batch, in order.
    pub(super) followers: Chain,
    /// The link in a [`Chain`].
    pub(super) next: Chain,
    pub(super) attempts: u32,
    /// How it ends when [`Words::lead`] ends it.
    pub(super) status: i32,
}

// A pool's chunk of 8 operations fits a page.
const _: () = assert!(crate::ib::request::chunk_bytes::<OpState>() <= 4096);

impl OpState {
    pub(super) fn key(&self) -> (u32, u64) {
        (self.req.rkey, self.req.remote_addr)
    }

    /// Whether it is an operation of `qp`.
    pub(super) fn is_of(&self, qp: &ExtQp) -> bool {
        core::ptr::eq(&*self.qp, qp)
    }
}

/// Ends an operation: tells the ULP, then lets the QP go (a detach waits
/// for the ULP's `done` to have returned).
pub(super) fn finish(req: Request<OpState>, status: i32, wc_status: u32, reply: AtomicReply) {
    let st = req.into_data();
    st.ulp.finish(Outcome {
        status,
        wc_status,
        response: api::narrow(reply.value(), st.half),
        raw_response: reply.raw(),
        attempts: st.attempts,
    });
    st.qp.end_one();
}

impl Handler for OpState {
    fn done(req: Request<Self>, c: Completion) {
        let qp = req.data().qp.clone();
        let reply = AtomicReply::new(c.raw_reply, qp.dev.reply_order());
        let Some(op) = req.data().direct else {
            return emulated_done(req, c, reply);
        };
        let (rkey, addr) = req.data().key();
        let mut req = req;
        req.data_mut().attempts = 1;
        if c.status != WC_SUCCESS {
            qp.words.learn(rkey, addr, None);
            return finish(req, -api::completion_errno(c.status), c.status, reply);
        }
        qp.words
            .learn(rkey, addr, Some(op.new_value(reply.value())));
        finish(req, 0, WC_SUCCESS, reply)
    }
}

/// The combining state of a QP, or of a group of QPs that
/// `mlx_ext_attach_qp_group` made: the words with a batch in flight and
/// the guess cache. In a group, the operations of every member on one word
/// wait for and join one batch, whose compare-and-swap its leader posts on
/// its own QP. Locked before a QP's [`Inner`], never after.
#[pin_data]
pub struct Words {
    #[pin]
    pub(super) inner: IrqSpinLock<WordsInner<OpState>>,
}

impl Words {
    pub(super) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Words {
                inner <- new_irq_spinlock!(
                    WordsInner::new(GuessCache::new()),
                    "mlx_ext::Words"
                ),
            }),
            GFP_KERNEL,
        )
    }

    pub(super) fn learn(&self, rkey: u32, addr: u64, value: Option<u64>) {
        let mut w = self.inner.lock();
        match value {
            Some(v) => w.cache.put(rkey, addr, v),
            None => w.cache.forget(rkey, addr),
        }
    }

    /// Takes, from every word, the operations of `qp` that wait (to end
    /// them), leaving those of the group's other QPs.
    pub(super) fn take_waiting_of(&self, qp: &ExtQp) -> Chain {
        let mut out = Chain::new();
        let mut w = self.inner.lock();
        for word in w.words.iter_mut() {
            let (mine, others) = core::mem::take(&mut word.waiting_rev)
                .reversed()
                .partition(|op| op.is_of(qp));
            word.waiting_rev = others.reversed();
            out.append(mine);
        }
        out
    }

    /// Starts `key`'s next batch from the word's `value`: `batch` (the
    /// operations carried over, in order) and then those that waited. The
    /// operations of a QP being detached or destroyed end with
    /// `ESHUTDOWN` (nothing more is posted for them); the first of the
    /// others leads, on its own QP, followed by the rest up to the first
    /// one of another QP that asks for a fence (which orders only on its
    /// own QP, so it waits to lead the batch after). When the leader's QP
    /// refuses the post, its operations of the batch end with that error
    /// and the others go on. The slot ends when nothing is left. The
    /// operations that end here do so once the slot has a batch in flight
    /// or has ended: one that a `done` posts again starts afresh, and
    /// cannot keep this loop going.
    pub(super) fn lead(&self, key: (u32, u64), value: u64, mut batch: Chain, order: ReplyOrder) {
        // The operations to end once the loop is over, each with its
        // `status`.
        let mut ended: Chain = Chain::new();
        loop {
            {
                let mut w = self.inner.lock();
                batch.append(w.take_waiting(key));
                if batch.is_empty() {
                    w.end_word(key);
                    break;
                }
            }
            let (closing, live) = batch.partition(|op| op.qp.closing.load(Ordering::Acquire));
            ended.append(with_status(closing, -errno::ESHUTDOWN));
            let mut live = live;
            let Some(mut leader) = live.pop_front() else {
                batch = Chain::new();
                continue;
            };
            let qp = leader.data().qp.clone();
            let (followers, rest) = live.split_before(|op| op.req.fence() && !op.is_of(&qp));
            if !rest.is_empty() {
                let lost = self.inner.lock().wait_again(key, rest);
                ended.append(with_status(lost, -errno::ESHUTDOWN));
            }
            {
                let st = leader.data_mut();
                st.guess = value;
                st.active = true;
                st.followers = followers;
            }
            let cas = batch_cas(&mut leader);
            let Err((e, mut leader)) = qp.send(leader, cas, false, false) else {
                break;
            };
            // Not posted: the leader's QP's operations of the batch end
            // with its error (none of them began); the others go on.
            let errno = e.to_errno();
            let followers = core::mem::take(&mut leader.data_mut().followers);
            let (mine, others) = followers.partition(|op| op.is_of(&qp));
            let mut failed = Chain::new();
            failed.push_front(leader);
            failed.append(mine);
            ended.append(with_status(failed, errno));
            batch = others;
        }
        while let Some(r) = ended.pop_front() {
            let status = r.data().status;
            finish(r, status, WC_SUCCESS, device_reply(order, 0));
        }
    }
}

/// Marks every operation of `chain` to end with `status` (see
/// [`Words::lead`]).
pub(super) fn with_status(mut chain: Chain, status: i32) -> Chain {
    chain.for_each(|op| op.status = status);
    chain
}

/// The reply a combined operation gets: its response as the adapter would
/// have written it (it wrote only the batch leader's).
pub(super) fn device_reply(order: ReplyOrder, value: u64) -> AtomicReply {
    match order {
        ReplyOrder::Host => AtomicReply::new(value, order),
        ReplyOrder::BigEndian => AtomicReply::new(Be64::from_host(value).raw(), order),
    }
}

/// Fails every operation of a chain.
pub(super) fn fail_chain(mut chain: Chain, status: i32, wc_status: u32, order: ReplyOrder) {
    while let Some(r) = chain.pop_front() {
        finish(r, status, wc_status, device_reply(order, 0));
    }
}

/// Fails a batch: its leader and its followers.
pub(super) fn fail_batch(
    mut leader: Request<OpState>,
    status: i32,
    wc_status: u32,
    order: ReplyOrder,
) {
    let followers = core::mem::take(&mut leader.data_mut().followers);
    finish(leader, status, wc_status, device_reply(order, 0));
    fail_chain(followers, status, wc_status, order);
}

/// The compare-and-swap that carries out a batch from its guess: the
/// leader's operation, then each follower's, in order.
pub(super) fn batch_cas(leader: &mut Request<OpState>) -> AtomicOp {
    let st = leader.data_mut();
    let mut walk = BatchWalk::new(st.guess);
    if let Some(m) = st.masked {
        walk.step(m);
    }
    let mut fence = st.req.fence();
    st.followers.for_each(|f| {
        fence |= f.req.fence();
        if let Some(m) = f.masked {
            walk.step(m);
        }
    });
    st.fence = fence;
    AtomicOp::CmpSwap {
        compare: st.guess,
        swap: walk.value(),
    }
}

/// The completion of a batch's compare-and-swap.
pub(super) fn emulated_done(mut req: Request<OpState>, c: Completion, reply: AtomicReply) {
    let qp = req.data().qp.clone();
    let words = &qp.words;
    let order = qp.dev.reply_order();
    let key = req.data().key();
    let active = req.data().active;
    {
        let st = req.data_mut();
        st.attempts = st.attempts.saturating_add(1);
        st.followers
            .for_each(|f| f.attempts = f.attempts.saturating_add(1));
    }
    if c.status != WC_SUCCESS {
        let errno = -api::completion_errno(c.status);
        // The batch's outcome is unknown. Those of this QP that waited
        // never reached the wire: their outcome is known. Those of the
        // group's other QPs go on, on their own QPs. The word's batches
        // end (or go on) before any callback runs: an operation a ULP
        // posts from one starts afresh, not failed by this error.
        let waiting = if active {
            let mut w = words.inner.lock();
            w.cache.forget(key.0, key.1);
            let (mine, others) = w.take_waiting(key).partition(|op| op.is_of(&qp));
            if others.is_empty() {
                w.end_word(key);
                drop(w);
            } else {
                drop(w);
                words.lead(key, 0, others, order);
            }
            mine
        } else {
            words.learn(key.0, key.1, None);
            Chain::new()
        };
        fail_batch(req, errno, c.status, order);
        let closing = qp.closing.load(Ordering::Acquire);
        fail_chain(waiting, api::not_begun(errno, closing), c.status, order);
        return;
    }
    let returned = reply.value();
    let guess = req.data().guess;
    if returned == guess {
        // The word went from `guess` to the batch's result in one step:
        // each operation answers what those before it left.
        let mut walk = BatchWalk::new(guess);
        if let Some(m) = req.data().masked {
            walk.step(m);
        }
        let mut followers = core::mem::take(&mut req.data_mut().followers);
        finish(req, 0, WC_SUCCESS, reply);
        while let Some(f) = followers.pop_front() {
            let response = f.data().masked.map_or(walk.value(), |m| walk.step(m));
            finish(f, 0, WC_SUCCESS, device_reply(order, response));
        }
        words.learn(key.0, key.1, Some(walk.value()));
        if active {
            words.lead(key, walk.value(), Chain::new(), order);
        }
        return;
    }
    if req.data().attempts >= api::MAX_ATTEMPTS {
        // The operations that lost the race every time are not carried
        // out; those that joined later go on, from the word's value.
        let mut followers = core::mem::take(&mut req.data_mut().followers);
        finish(req, -errno::EAGAIN, WC_SUCCESS, device_reply(order, 0));
        let mut survivors = Chain::new();
        while let Some(f) = followers.pop_front() {
            if f.data().attempts >= api::MAX_ATTEMPTS {
                finish(f, -errno::EAGAIN, WC_SUCCESS, device_reply(order, 0));
            } else {
                survivors.push_front(f);
            }
        }
        words.learn(key.0, key.1, Some(returned));
        if active {
            words.lead(key, returned, survivors.reversed(), order);
        }
        return;
    }
    // Lost the race: the returned value is the next guess, and operations
    // that waited join the batch.
    if active {
        let followers = core::mem::take(&mut req.data_mut().followers);
        let mut batch = Chain::new();
        batch.push_front(req);
        batch.append(followers);
        return words.lead(key, returned, batch, order);
    }
    req.data_mut().guess = returned;
    let cas = batch_cas(&mut req);
    if let Err((e, req)) = qp.send(req, cas, false, false) {
        fail_batch(req, e.to_errno(), WC_SUCCESS, order);
    }
}

impl Linked for OpState {
    fn next(&mut self) -> &mut Chain {
        &mut self.next
    }
}
