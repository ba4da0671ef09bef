// SPDX-License-Identifier: GPL-2.0

//! One port's VF GUID table: the pure engine (`core/src/guid/`) behind a
//! mutex, driven by a delayed work item, talking to the subnet manager
//! through ib_sa. The SA's answers wait in a mailbox for the work item.

use crate::guid::{Answer, AnswerStatus, Config, Engine, Method, Request, SmBackend, SubmitError};
use crate::ib::compat::ARef;
use crate::ib::sa::{GuidInfo, QueryError, SaAnswer, SaQuery};
use crate::ib::sync::IrqSpinLock;
use crate::ib::sysfs::Notifier;
use crate::ib::work::{DelayedRun, Kicker};
use crate::ib::{sa, Device, DeviceName};
use crate::new_irq_spinlock;
use kernel::prelude::*;
use kernel::sync::lock::{Backend as LockBackend, Guard, Lock};
use kernel::sync::{Arc, CondVar, CondVarTimeoutResult, Mutex};
use kernel::{new_condvar, new_mutex};

/// The SA timeout of a GuidInfoRecord query (ib_sa resends every tenth of
/// it), as mlx4's alias GUID code uses.
pub(super) const SA_TIMEOUT_MS: u32 = 1000;
/// How long a teardown waits for the answers of a port's queries. ib_sa
/// answers each within its timeout ([`SA_TIMEOUT_MS`]), a cancelled one at
/// once: only a stuck MAD layer takes longer.
pub(super) const ANSWER_WAIT_MS: u32 = 10_000;
/// How often a teardown whose task has a signal pending looks again.
pub(super) const SIGNALLED_POLL_MS: u32 = 10;
/// How long a table that goes waits for the SM to delete its GUIDs
/// ([`Engine::retire`]), for all the device's ports at once: a healthy SA
/// answers in milliseconds; an SA that fails gets the first try and one
/// more after its 1 s backoff.
pub(super) const RETIRE_WAIT_MS: u32 = 2000;

/// How long after a port event the engine sends again: ib_sa makes the
/// port's SM address again after the same event, from ib_wq.
pub(super) const SM_ADDRESS_DELAY_MS: u64 = 200;

/// Nanoseconds on the monotonic clock: the engine's time.
pub(super) fn now_ns() -> u64 {
    crate::ib::ktime_get_ns()
}

/// What one port's engine and its SA queries share.
pub(super) struct PortState {
    pub(super) engine: KBox<Engine>,
    /// Set by teardown: nothing runs the engine or submits any more.
    pub(super) dying: bool,
    /// The request the engine waits for, and its query.
    pub(super) outstanding: Option<(Request, SaQuery)>,
    /// Each function's `guid_events` and `state` files, once the tree is
    /// made.
    pub(super) notifiers: KVec<(Notifier, Notifier)>,
}

/// A function whose GUIDs changed, to tell watchers once the lock is
/// dropped.
pub(super) struct Changed {
    pub(super) function: u16,
    pub(super) up: bool,
    pub(super) count: u32,
    /// Its `guid_events` and `state` files.
    pub(super) files: Option<(Notifier, Notifier)>,
}

/// What the SA's answers leave for the work item.
pub(super) struct Mailbox {
    /// Queries submitted whose answer has not come (cancelled ones too).
    pub(super) inflight: u32,
    /// The answer not taken yet with the newest tag. The request the engine
    /// waits for is always the newest one sent, so its answer is never
    /// pushed out by a stale one.
    pub(super) answer: Option<(u64, Result<GuidInfo, QueryError>)>,
}

/// One port's VF GUID table.
#[pin_data]
pub(super) struct PortGuids {
    pub(super) dev: ARef<Device>,
    /// The device's name, for messages.
    pub(super) name: DeviceName,
    pub(super) port: u32,
    pub(super) kick: Kicker,
    #[pin]
    pub(super) state: Mutex<PortState>,
    #[pin]
    pub(super) mailbox: IrqSpinLock<Mailbox>,
    /// Signalled when the mailbox's `inflight` drops to 0.
    #[pin]
    pub(super) idle: CondVar,
    /// Signalled by the work item when a retired engine has nothing left
    /// to do.
    #[pin]
    pub(super) retired: CondVar,
}

/// The SA backend of one `run()`: the port's query state, borrowed under
/// the port's lock.
pub(super) struct Backend<'a> {
    pub(super) port: &'a Arc<PortGuids>,
    pub(super) outstanding: &'a mut Option<(Request, SaQuery)>,
}

impl SmBackend for Backend<'_> {
    fn submit(&mut self, request: &Request) -> Result<(), SubmitError> {
        let p = self.port;
        let info = p.dev.port_info(p.port).map_err(|_| SubmitError::Failed)?;
        if !info.active {
            return Err(SubmitError::PortDown);
        }
        let lid = u16::try_from(info.lid).map_err(|_| SubmitError::Failed)?;
        let rec = GuidInfo {
            block: request.record.get(),
            guids: request.guids,
        };
        // Counted first: the answer may come before the call returns.
        p.mailbox.lock().inflight += 1;
        let query = sa::guid_info(
            &p.dev,
            p.port,
            lid,
            request.method == Method::Delete,
            &rec,
            request.mask,
            SA_TIMEOUT_MS,
            p.clone(),
            request.id.get(),
        )
        .inspect_err(|_| p.answered(None))
        .map_err(|_| SubmitError::Failed)?;
        *self.outstanding = Some((*request, query));
        Ok(())
    }

    fn cancel(&mut self, request: &Request) {
        if let Some((r, q)) = self.outstanding.take() {
            if r.id == request.id {
                // Its answer still comes, as EINTR: stale.
                q.cancel();
            } else {
                *self.outstanding = Some((r, q));
            }
        }
    }
}

impl PortGuids {
    pub(super) fn new(
        dev: ARef<Device>,
        name: &DeviceName,
        port: u32,
        config: Config,
    ) -> Result<Arc<Self>> {
        let mut engine = KBox::new(Engine::EMPTY, GFP_KERNEL)?;
        engine
            .reset(config)
            .map_err(|e| Error::from_errno(e.errno()))?;
        let kick = Kicker::new()?;
        Arc::pin_init(
            pin_init!(Self {
                dev,
                name: name.clone(),
                port,
                kick,
                state <- new_mutex!(
                    PortState {
                        engine,
                        dying: false,
                        outstanding: None,
                        notifiers: KVec::new(),
                    },
                    "mlx_ext::vf_guids::PortGuids::state"
                ),
                mailbox <- new_irq_spinlock!(
                    Mailbox {
                        inflight: 0,
                        answer: None,
                    },
                    "mlx_ext::vf_guids::PortGuids::mailbox"
                ),
                idle <- new_condvar!("mlx_ext::vf_guids::PortGuids::idle"),
                retired <- new_condvar!("mlx_ext::vf_guids::PortGuids::retired"),
            }),
            GFP_KERNEL,
        )
    }

    /// Runs the engine until it sleeps; returns when to run again, and adds
    /// to `wake` the functions whose GUIDs changed.
    fn run_locked(
        this: &Arc<Self>,
        s: &mut PortState,
        now: u64,
        wake: &mut KVec<Changed>,
    ) -> Option<u64> {
        if s.dying {
            return None;
        }
        let mail = this.mailbox.lock().answer.take();
        if let Some((tag, result)) = mail {
            Self::take_answer(s, tag, result, now);
        }
        let PortState {
            engine,
            outstanding,
            notifiers,
            ..
        } = s;
        let mut backend = Backend {
            port: this,
            outstanding,
        };
        let next = engine.run(&mut backend, now);
        for function in engine.take_events().iter() {
            let changed = Changed {
                function,
                up: engine.function_up(function),
                count: engine.event_count(function),
                files: notifiers.get(usize::from(function)).cloned(),
            };
            // Without room a watcher misses a wake-up, not the count.
            let _ = wake.push(changed, GFP_KERNEL);
        }
        next
    }

    /// Gives the engine the answer to query `tag`, if it is the one it
    /// waits for (a stale one changes nothing).
    fn take_answer(s: &mut PortState, tag: u64, result: Result<GuidInfo, QueryError>, now: u64) {
        let request = match &s.outstanding {
            Some((r, _)) if r.id.get() == tag => *r,
            // Cancelled, given up or dropped: stale.
            _ => return,
        };
        s.outstanding = None;
        let answer = match result {
            // An answer for another record is an SA error, as one past the
            // port's records.
            Ok(rec) if rec.block == request.record.get() => Answer {
                id: request.id,
                record: request.record,
                status: AnswerStatus::Ok,
                guids: rec.guids,
            },
            Ok(_) => Answer::failed(&request, AnswerStatus::Error),
            Err(QueryError::TimedOut) => Answer::failed(&request, AnswerStatus::Timeout),
            Err(_) => Answer::failed(&request, AnswerStatus::Error),
        };
        let _ = s.engine.answer(&answer, now);
    }

    /// A query is done: its answer came (and is left for the work item,
    /// unless a newer one is there), or its submission failed (`None`).
    fn answered(&self, answer: Option<(u64, Result<GuidInfo, QueryError>)>) {
        let mut m = self.mailbox.lock();
        if let Some((tag, result)) = answer {
            if !matches!(&m.answer, Some((t, _)) if *t > tag) {
                m.answer = Some((tag, result));
            }
        }
        m.inflight = m.inflight.saturating_sub(1);
        if m.inflight == 0 {
            self.idle.notify_all();
        }
    }

    /// Starts deleting the table's GUIDs at the SM ([`Engine::retire`]):
    /// admin writes are refused from now on.
    pub(super) fn retire(&self) {
        self.state.lock().engine.retire(now_ns());
        self.kick.kick(0);
    }

    /// Waits until the SM has answered for every GUID [`PortGuids::retire`]
    /// deletes, at most `ms`; says how many it has not.
    /// A port whose link is down is not waited for: nothing can reach the
    /// SM, and OpenSM drops the alias GUIDs of a port it no longer finds
    /// (`osm_drop_mgr.c`, `drop_mgr_remove_port()`).
    pub(super) fn wait_retired(&self, ms: u32) {
        let down = self.dev.port_info(self.port).is_ok_and(|i| i.down);
        let ms = if down { 0 } else { ms };
        let s = wait_while(&self.state, &self.retired, ms, |s| !s.engine.is_idle());
        let left = s.engine.pending_count();
        drop(s);
        if left > 0 && down {
            pr_info!(
                "{}: port {}: down: {} GUID(s) left to the SM, which drops a port's alias GUIDs once it no longer finds the port\n",
                self.name,
                self.port,
                left
            );
        } else if left > 0 {
            pr_warn!(
                "{}: port {}: {} GUID(s) not deleted at the SM within {} ms; the SM may keep them\n",
                self.name,
                self.port,
                left,
                // Every port started at once: each had all of it.
                RETIRE_WAIT_MS
            );
        }
    }

    /// The first half of teardown: nothing runs the engine or submits any
    /// more, and the outstanding query is cancelled.
    pub(super) fn stop(&self) {
        let mut s = self.state.lock();
        s.dying = true;
        if let Some((_, q)) = s.outstanding.take() {
            q.cancel();
        }
    }

    /// The second half, once the work item is gone: returns when every
    /// query the port made has been answered, or after [`ANSWER_WAIT_MS`]
    /// with a warning. Giving up is safe: each query's context holds an
    /// `Arc` of the port (and so a reference to the device), ib_sa answers
    /// every query in the end, and the module's ib_sa client waits for them
    /// all before the module goes (`ib_sa_unregister_client`). A signal
    /// does not cut the wait short.
    pub(super) fn wait_answers(&self) {
        let m = wait_while(&self.mailbox, &self.idle, ANSWER_WAIT_MS, |m| {
            m.inflight > 0
        });
        let n = m.inflight;
        drop(m);
        if n > 0 {
            pr_warn!(
                "{}: port {}: {} SA queries unanswered after {} ms; ib_sa will end them\n",
                self.name,
                self.port,
                n,
                ANSWER_WAIT_MS
            );
        }
    }
}

/// Waits on `cv` while `busy` says so of what `lock` guards, at most `ms`,
/// and returns the lock's guard: `busy` is false of it unless the time ran
/// out. A signal does not cut the wait short: teardown runs to its end.
pub(super) fn wait_while<'a, T, B: LockBackend>(
    lock: &'a Lock<T, B>,
    cv: &CondVar,
    ms: u32,
    busy: impl Fn(&T) -> bool,
) -> Guard<'a, T, B> {
    let mut left = kernel::time::msecs_to_jiffies(ms);
    let mut g = lock.lock();
    while left > 0 && busy(&g) {
        left = match cv.wait_interruptible_timeout(&mut g, left) {
            CondVarTimeoutResult::Timeout => 0,
            CondVarTimeoutResult::Woken { jiffies } => jiffies,
            CondVarTimeoutResult::Signal { jiffies } => {
                // Interruptible waits return at once now: sleep instead.
                drop(g);
                crate::ib::msleep(SIGNALLED_POLL_MS);
                g = lock.lock();
                jiffies.saturating_sub(kernel::time::msecs_to_jiffies(SIGNALLED_POLL_MS))
            }
        };
    }
    g
}

impl DelayedRun for PortGuids {
    fn run(this: &Arc<Self>) {
        let mut wake = KVec::new();
        let now = now_ns();
        let (next, retired) = {
            let mut s = this.state.lock();
            let next = Self::run_locked(this, &mut s, now, &mut wake);
            (next, s.engine.is_retired() && s.engine.is_idle())
        };
        if retired {
            this.retired.notify_all();
        }
        for c in wake.iter() {
            if let Some((events, state)) = &c.files {
                events.notify();
                state.notify();
            }
            this.dev.guid_event(this.port, c.function, c.up, c.count);
        }
        if let Some(t) = next {
            this.kick.kick(t.saturating_sub(now).div_ceil(1_000_000));
        }
    }
}

impl SaAnswer for PortGuids {
    fn guid_info_done(&self, tag: u64, result: Result<GuidInfo, QueryError>) {
        self.answered(Some((tag, result)));
        // The work item gives it to the engine, and sends the next request.
        self.kick.kick(0);
    }
}
