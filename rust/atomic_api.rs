// SPDX-License-Identifier: GPL-2.0

//! The atomic API for kernel ULPs (`include/mlx_ext/mlx_ext.h`,
//! `Documentation/ulp-api.rst`): QPs whose atomics mlx_ext carries out,
//! natively or by emulation, with responses in host order.
//!
//! The rules (flags, plans, errnos, the guess cache) are pure and
//! host-tested in `core/src/api.rs`; this file carries them out on
//! [`crate::ib::ulp`]'s QPs and requests.

use crate::{
    api::{self, errno, BatchWalk, GuessCache, Plan, QpFlags},
    atomics::{wr::AtomicOp, AtomicReply, Be64, MaskedOp, ReplyOrder},
    caps::{AtomicCap, MaskedMode, WrClass},
    dev_state::DevState,
    ib::{
        sync::{Event, IrqSpinLock},
        ulp::{
            AtomicApi, Caps, Completion, Gfp, Handler, Outcome, Pd, Qp, QpInit, Request,
            RequestPool, UlpOp,
        },
    },
    new_irq_spinlock,
    registry::DeviceReports,
};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
};

/// `IB_WC_SUCCESS`.
const WC_SUCCESS: u32 = 0;

/// How many words of one QP (or group of QPs) can have a combining batch in
/// flight at once. An emulated operation on a further word runs on its own,
/// and is not ordered with later operations on its word.
const ACTIVE_WORDS: usize = 32;

/// A word with a batch in flight, and the operations waiting for its next
/// compare-and-swap.
#[derive(Default)]
struct Word {
    key: Option<(u32, u64)>,
    /// Newest first, so that joining is O(1); reversed when taken.
    waiting_rev: Chain,
}

/// What [`Words`] guards.
struct WordsInner {
    cache: GuessCache,
    /// The words (rkey, address) with an emulated compare-and-swap in
    /// flight: a new emulated operation on one of them waits there and
    /// joins that word's next compare-and-swap.
    words: [Word; ACTIVE_WORDS],
}

impl WordsInner {
    fn word(&mut self, key: (u32, u64)) -> Option<&mut Word> {
        self.words.iter_mut().find(|w| w.key == Some(key))
    }

    /// Claims a slot for `key`; false if none is free.
    fn activate(&mut self, key: (u32, u64)) -> bool {
        match self.words.iter_mut().find(|w| w.key.is_none()) {
            Some(w) => {
                w.key = Some(key);
                true
            }
            None => false,
        }
    }

    /// Takes the operations waiting for `key`'s next compare-and-swap, in
    /// the order they were posted.
    fn take_waiting(&mut self, key: (u32, u64)) -> Chain {
        match self.word(key) {
            Some(w) => core::mem::take(&mut w.waiting_rev).reversed(),
            None => Chain(None),
        }
    }

    /// Puts `older` back in front of what waits for `key`, whose slot the
    /// caller holds (it is never taken from under it: only the batch
    /// holding a slot ends it, but for the destroy of a QP of its own,
    /// which waits for its batches). What cannot be put back is returned.
    fn wait_again(&mut self, key: (u32, u64), older: Chain) -> Chain {
        match self.word(key) {
            Some(w) => {
                w.waiting_rev.append(older.reversed());
                Chain(None)
            }
            None => older,
        }
    }

    /// Frees `key`'s slot and takes what waited for it, in one step: nothing
    /// joins a word whose batch has ended.
    fn end_word(&mut self, key: (u32, u64)) -> Chain {
        match self.word(key) {
            Some(w) => {
                w.key = None;
                core::mem::take(&mut w.waiting_rev).reversed()
            }
            None => Chain(None),
        }
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
    inner: IrqSpinLock<WordsInner>,
}

impl Words {
    fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Words {
                inner <- new_irq_spinlock!(
                    WordsInner {
                        cache: GuessCache::new(),
                        words: Default::default(),
                    },
                    "mlx_ext::Words"
                ),
            }),
            GFP_KERNEL,
        )
    }

    fn learn(&self, rkey: u32, addr: u64, value: Option<u64>) {
        let mut w = self.inner.lock();
        match value {
            Some(v) => w.cache.put(rkey, addr, v),
            None => w.cache.forget(rkey, addr),
        }
    }

    /// Takes, from every word, the operations of `qp` that wait (to end
    /// them), leaving those of the group's other QPs.
    fn take_waiting_of(&self, qp: &ExtQp) -> Chain {
        let mut out = Chain(None);
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
    fn lead(&self, key: (u32, u64), value: u64, mut batch: Chain, order: ReplyOrder) {
        // The operations to end once the loop is over, each with its
        // `status`.
        let mut ended: Chain = Chain(None);
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
                batch = Chain(None);
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
            let Err((e, mut leader)) = qp.send(leader, cas, false) else {
                break;
            };
            // Not posted: the leader's QP's operations of the batch end
            // with its error (none of them began); the others go on.
            let errno = e.to_errno();
            let followers = core::mem::take(&mut leader.data_mut().followers);
            let (mine, others) = followers.partition(|op| op.is_of(&qp));
            let mut failed = Chain(None);
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
fn with_status(mut chain: Chain, status: i32) -> Chain {
    chain.for_each(|op| op.status = status);
    chain
}

/// The mutable state of a QP.
struct Inner {
    /// `mlx_ext_destroy_qp` or `mlx_ext_detach_qp` started: nothing more is
    /// posted.
    dying: bool,
    /// Operations posted and not finished (their `done` not returned).
    in_flight: u32,
}

/// A list of operations, linked through `OpState::next`.
#[derive(Default)]
struct Chain(Option<Request<OpState>>);

impl Chain {
    fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    fn push_front(&mut self, mut req: Request<OpState>) {
        req.data_mut().next = Chain(self.0.take());
        self.0 = Some(req);
    }

    fn pop_front(&mut self) -> Option<Request<OpState>> {
        let mut head = self.0.take()?;
        self.0 = head.data_mut().next.0.take();
        Some(head)
    }

    fn reversed(mut self) -> Chain {
        let mut out = Chain(None);
        while let Some(r) = self.pop_front() {
            out.push_front(r);
        }
        out
    }

    /// Appends `other` (in its order) after the operations here.
    fn append(&mut self, other: Chain) {
        let mut all = core::mem::take(self).reversed();
        let mut other = other;
        while let Some(r) = other.pop_front() {
            all.push_front(r);
        }
        *self = all.reversed();
    }

    /// The operations for which `pred` holds, and the others, each in
    /// their order.
    fn partition(mut self, pred: impl Fn(&OpState) -> bool) -> (Chain, Chain) {
        let (mut yes, mut no) = (Chain(None), Chain(None));
        while let Some(r) = self.pop_front() {
            if pred(r.data()) {
                yes.push_front(r);
            } else {
                no.push_front(r);
            }
        }
        (yes.reversed(), no.reversed())
    }

    /// The operations before the first for which `pred` holds, and the
    /// rest from it on.
    fn split_before(mut self, pred: impl Fn(&OpState) -> bool) -> (Chain, Chain) {
        let mut head = Chain(None);
        while let Some(r) = self.pop_front() {
            if pred(r.data()) {
                self.push_front(r);
                break;
            }
            head.push_front(r);
        }
        (head.reversed(), self)
    }

    fn for_each(&mut self, mut f: impl FnMut(&mut OpState)) {
        let mut cur = &mut self.0;
        while let Some(r) = cur {
            f(r.data_mut());
            cur = &mut r.data_mut().next.0;
        }
    }
}

/// A ULP's QP, as mlx_ext keeps it.
#[pin_data]
pub struct ExtQp {
    qp: Qp,
    /// Where its operations' requests come from: no allocation per
    /// operation.
    pool: RequestPool<OpState>,
    dev: Arc<DevState>,
    flags: QpFlags,
    /// Its combining state: its own, or its group's.
    words: Arc<Words>,
    /// Whether `words` is shared: the QP joined a group
    /// (`mlx_ext_attach_qp_group`), or another joined its own.
    grouped: AtomicBool,
    /// Whether the QP is known to be in a state that sends: the driver
    /// accepted a request on it, or it was found in RTS (when attached, or
    /// by a caller that may sleep). Only a refusal of a request posted
    /// after that is learnt about the driver (`Record::learns`): before,
    /// it may be the QP's state's.
    sends: AtomicBool,
    #[pin]
    inner: IrqSpinLock<Inner>,
    /// `Inner::dying`, readable without the lock: a post checks it first,
    /// so that one racing a detach or destroy gets `ESHUTDOWN` whatever
    /// else would refuse it.
    closing: AtomicBool,
    /// Signalled when the QP is dying and its last operation has finished.
    #[pin]
    idle: Event,
}

/// How long `mlx_ext_detach_qp` waits before it says that it still waits.
const DETACH_WARN_MS: u32 = 10_000;

impl ExtQp {
    fn new(
        dev: Arc<DevState>,
        qp: Qp,
        flags: QpFlags,
        group: Option<Arc<Words>>,
    ) -> Result<Arc<Self>> {
        let pool = qp.request_pool()?;
        let sends = qp.is_in_rts() == Some(true);
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
                sends: AtomicBool::new(sends),
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
    fn close(&self) -> u32 {
        self.closing.store(true, Ordering::Release);
        let mut inner = self.inner.lock();
        inner.dying = true;
        inner.in_flight
    }

    /// Waits until a closed QP's last operation has finished, saying so
    /// every [`DETACH_WARN_MS`] from `what`.
    fn wait_idle(&self, what: &str) {
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
    fn quiesce(&self) {
        if self.close() == 0 {
            return;
        }
        self.wait_idle("mlx_ext_detach_qp");
    }

    /// Asks the driver whether the QP is in RTS (`None`: it cannot say),
    /// counted as a pending operation meanwhile, so that a detach or
    /// destroy racing it waits until the query is over. Process context.
    fn query_rts(&self) -> Result<Option<bool>> {
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
    fn emulate_instead(&self, mut req: Request<OpState>, m: MaskedOp) -> Result {
        let st = req.data_mut();
        st.direct = None;
        st.masked = Some(m);
        self.start_emulated(req).map_err(|(e, _)| e)
    }

    /// One pending operation (or query) is over: a detach or destroy
    /// waiting for the last is woken.
    fn end_one(&self) {
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
    /// drain's marker.
    fn post_locked(
        &self,
        inner: &Inner,
        req: Request<OpState>,
        op: AtomicOp,
    ) -> core::result::Result<(), (Error, Request<OpState>)> {
        if inner.dying {
            return Err((Error::from_errno(-errno::ESHUTDOWN), req));
        }
        let (rkey, addr) = req.data().key();
        let fence = req.data().fence;
        // Every `AtomicOp` is one of the four atomic opcodes.
        let class = WrClass::of(op.to_wr().0).unwrap_or(WrClass::Masked);
        // Read before the post: a refusal is learnt only if the QP was
        // known to send when the request was posted.
        let sends = self.sends.load(Ordering::Acquire);
        self.qp
            .post_atomic(req, op, addr, rkey, fence)
            .inspect(|()| {
                if !sends {
                    self.sends.store(true, Ordering::Release);
                }
                self.dev.driver_accepted(class)
            })
            .map_err(|(e, req)| {
                self.dev.driver_refused(class, -e.to_errno(), sends);
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
    fn send(
        &self,
        req: Request<OpState>,
        op: AtomicOp,
        new_op: bool,
    ) -> core::result::Result<(), (Error, Request<OpState>)> {
        let mut inner = self.inner.lock();
        self.post_locked(&inner, req, op)?;
        if new_op {
            inner.in_flight += 1;
        }
        Ok(())
    }

    /// Starts an emulated operation: it joins the batch of its word if one
    /// is in flight (on this QP, or on another of its group), else it
    /// leads one.
    fn start_emulated(
        &self,
        mut req: Request<OpState>,
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
        match self.post_locked(&inner, req, cas) {
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
    ulp: UlpOp,
    qp: Arc<ExtQp>,
    req: api::Request,
    /// The operation as posted directly, or `None` when emulated.
    direct: Option<AtomicOp>,
    /// The masked operation emulated, when it is.
    masked: Option<MaskedOp>,
    /// A batch's leader: the guess its compare-and-swap compares with.
    guess: u64,
    /// A batch's leader: whether it holds its word's `active` slot.
    active: bool,
    /// For a 4-byte operation, where its bits lie in the word.
    half: Option<api::Half>,
    /// Whether its next work request carries `IB_SEND_FENCE`: the
    /// operation's own flag, or for a batch's leader, any of the batch's.
    fence: bool,
    /// A batch's leader: the other operations of its batch, in order.
    followers: Chain,
    /// The link in a [`Chain`].
    next: Chain,
    attempts: u32,
    /// How it ends when [`Words::lead`] ends it.
    status: i32,
}

// A pool's chunk of 8 operations fits a page.
const _: () = assert!(crate::ib::request::chunk_bytes::<OpState>() <= 4096);

impl OpState {
    fn key(&self) -> (u32, u64) {
        (self.req.rkey, self.req.remote_addr)
    }

    /// Whether it is an operation of `qp`.
    fn is_of(&self, qp: &ExtQp) -> bool {
        core::ptr::eq(&*self.qp, qp)
    }
}

/// Ends an operation: tells the ULP, then lets the QP go (a detach waits
/// for the ULP's `done` to have returned).
fn finish(req: Request<OpState>, status: i32, wc_status: u32, reply: AtomicReply) {
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

/// The reply a combined operation gets: its response as the adapter would
/// have written it (it wrote only the batch leader's).
fn device_reply(order: ReplyOrder, value: u64) -> AtomicReply {
    match order {
        ReplyOrder::Host => AtomicReply::new(value, order),
        ReplyOrder::BigEndian => AtomicReply::new(Be64::from_host(value).raw(), order),
    }
}

/// Fails every operation of a chain.
fn fail_chain(mut chain: Chain, status: i32, wc_status: u32, order: ReplyOrder) {
    while let Some(r) = chain.pop_front() {
        finish(r, status, wc_status, device_reply(order, 0));
    }
}

/// Fails a batch: its leader and its followers.
fn fail_batch(mut leader: Request<OpState>, status: i32, wc_status: u32, order: ReplyOrder) {
    let followers = core::mem::take(&mut leader.data_mut().followers);
    finish(leader, status, wc_status, device_reply(order, 0));
    fail_chain(followers, status, wc_status, order);
}

/// The compare-and-swap that carries out a batch from its guess: the
/// leader's operation, then each follower's, in order.
fn batch_cas(leader: &mut Request<OpState>) -> AtomicOp {
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
fn emulated_done(mut req: Request<OpState>, c: Completion, reply: AtomicReply) {
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
            Chain(None)
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
            words.lead(key, walk.value(), Chain(None), order);
        }
        return;
    }
    if req.data().attempts >= api::MAX_ATTEMPTS {
        // The operations that lost the race every time are not carried
        // out; those that joined later go on, from the word's value.
        let mut followers = core::mem::take(&mut req.data_mut().followers);
        finish(req, -errno::EAGAIN, WC_SUCCESS, device_reply(order, 0));
        let mut survivors = Chain(None);
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
        let mut batch = Chain(None);
        batch.push_front(req);
        batch.append(followers);
        return words.lead(key, returned, batch, order);
    }
    req.data_mut().guess = returned;
    let cas = batch_cas(&mut req);
    if let Err((e, req)) = qp.send(req, cas, false) {
        fail_batch(req, e.to_errno(), WC_SUCCESS, order);
    }
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

/// The API's implementation.
pub struct Api;

fn errno_err(errno: i32) -> Error {
    Error::from_errno(-errno)
}

// SAFETY: `device` only clones an `Arc`: it does not sleep.
unsafe impl AtomicApi for Api {
    type Client = DeviceReports;
    type Dev = DevState;
    type Qp = ExtQp;

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
        if !init.is_rc() {
            pr_info!(
                "{}: mlx_ext_init_qp_attr: only RC QPs carry atomics\n",
                dev.name()
            );
            return Err(EINVAL);
        }
        let (wr, sge) = init.send_cap();
        let cap = api::init_send_cap(wr, sge, max_ops).map_err(|e| {
            pr_info!(
                "{}: mlx_ext_init_qp_attr: max_send_wr {} + max_ops {} does not fit\n",
                dev.name(),
                wr,
                max_ops
            );
            errno_err(e)
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
            pr_info!("{}: {}: only RC QPs carry atomics\n", dev.name(), what);
            return Err(EINVAL);
        }
        if !qp.send_cq_in_cqe_model() {
            pr_info!(
                "{}: {}: the send CQ must come from ib_alloc_cq() or the CQ pool (not ib_create_cq() with a comp_handler)\n",
                dev.name(),
                what
            );
            return Err(EINVAL);
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
                let why = if !Arc::ptr_eq(&m.dev, &dev) {
                    Some("the member is a QP of another device")
                } else if !qp.shares_send_cq(&m.qp) {
                    Some("the group's QPs must share one send CQ")
                } else {
                    None
                };
                if let Some(why) = why {
                    pr_info!("{}: {}: {}\n", dev.name(), what, why);
                    return Err(EINVAL);
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
        if !init.is_rc() {
            pr_info!(
                "{}: mlx_ext_create_qp: only RC QPs carry atomics\n",
                dev.name()
            );
            return Err(EINVAL);
        }
        if init.has_srq() {
            pr_info!(
                "{}: mlx_ext_create_qp: QPs with an SRQ are not supported\n",
                dev.name()
            );
            return Err(EINVAL);
        }
        if !init.send_cq_usable() || !init.recv_cq_usable() {
            pr_info!(
                "{}: mlx_ext_create_qp: the send and receive CQs must come from ib_alloc_cq() and not be IB_POLL_DIRECT\n",
                dev.name()
            );
            return Err(EINVAL);
        }
        let asked = init.create_flags();
        let (driver_flags, flags) = api::create_flags(&dev.record(), asked).map_err(|e| {
            pr_info!(
                "{}: mlx_ext_create_qp: MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY on a device that does not reply big-endian\n",
                dev.name()
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
        let (req, half) = api::widen(&op.request(), cfg!(target_endian = "big"))
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
            followers: Chain(None),
            next: Chain(None),
            attempts: 0,
            status: 0,
        };
        let request = qp.pool.take(state, gfp)?;
        // On failure the request is dropped: the ULP's `done` is not called.
        let start = |request: Request<OpState>| match direct {
            Some(op) => qp.send(request, op, true),
            None => qp.start_emulated(request),
        };
        // Read before the post, as `post_locked` reads it.
        let sent_before = qp.sends.load(Ordering::Acquire);
        let (mut e, mut request) = match start(request) {
            Ok(()) => return Ok(()),
            Err(failed) => failed,
        };
        // Refused on a QP not known to send: maybe in RTR, or INIT (a post
        // racing rdma_cm's ESTABLISHED event, or a ULP's bug), which is no
        // reason to think the driver lacks the opcode.
        let code = e.to_errno();
        if (code == -errno::EINVAL || code == -errno::EOPNOTSUPP) && !sent_before {
            let rts = if gfp.can_sleep() {
                qp.query_rts()?
            } else {
                None
            };
            match rts {
                // Not in RTS: the ULP's error.
                Some(false) => return Err(e),
                // In RTS: the request is posted again, on a QP now known
                // to send; a second refusal is the opcode's, and is
                // learnt.
                Some(true) => {
                    qp.sends.store(true, Ordering::Release);
                    (e, request) = match start(request) {
                        Ok(()) => return Ok(()),
                        Err(failed) => failed,
                    };
                }
                // It cannot be asked (an atomic caller, a driver without
                // query_qp). A masked request or a fetch-and-add is
                // carried out by the emulation this once, without learning
                // anything: where the QP sends, its compare-and-swap is
                // accepted and the QP known to send from then on, so that
                // a later refusal is learnt; where it does not, that
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
                        Ok(Plan::Emulate(m)) => qp.emulate_instead(request, m),
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
            Ok(Plan::Emulate(m)) => qp.emulate_instead(request, m),
            Ok(Plan::Direct(_)) => Err(e),
            Err(r) => Err(errno_err(r.errno())),
        }
    }
}

crate::export_atomic_api!(Api);
