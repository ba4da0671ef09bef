// SPDX-License-Identifier: GPL-2.0

//! The engine's side of the exchange with the subnet manager: the
//! [`Action`]s [`Engine::next_action`] hands out, the request it builds for
//! the record due earliest and the answer watchdog, what an answer, a failed
//! send or a timeout does to the request's entries and to the port's SA
//! backoff, and [`Engine::run`], which performs the actions over an
//! [`SmBackend`].
//!
//! The table, its per-entry state and the request in flight are in
//! `engine/mod.rs`, which also says how the engine is driven and locked.

use super::super::{
    is_valid_guid, Answer, AnswerStatus, EntryIdx, GuidError, Method, Request, RequestId, Set128,
    SmBackend, SubmitError, ERROR_DELAY_SECS, GUIDS_PER_RECORD, GUID_ASSIGN, GUID_DELETE,
    MAX_BACKOFF_SECS, PORT_DOWN_DELAY_SECS, RECORDS,
};
// Only named in the docs of `Engine::next_action`.
#[cfg(doc)]
use super::super::ANSWER_WATCHDOG_SECS;
use super::{secs, Engine, Entry, InFlight, Outstanding};

/// What an [`Answer`] did, for logging and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnswerOutcome {
    /// The entries of the request (bit `i` is entry `8 * record + i`) the SM
    /// accepted.
    pub accepted: u8,
    /// The entries the SM declined; each is retried after its backoff.
    pub declined: u8,
    /// The functions whose GUIDs changed.
    pub changed: Set128,
}

/// What the caller of [`Engine::next_action`] must do next.
#[must_use = "a request to send or cancel must not be dropped"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Submit the request to the SM. It is outstanding from now on: report
    /// a failure to submit it with [`Engine::send_failed`], and hand its
    /// answer to [`Engine::answer`].
    Send(Request),
    /// Cancel the request (`ib_sa_cancel_query`): the engine no longer waits
    /// for it, and its answer, if it still comes, is stale.
    Cancel(Request),
    /// Nothing to do now: run again at this time (nanoseconds, as `now`),
    /// or with `None` only once something happens. Either way, run again
    /// after an admin write, an answer or a port event.
    Sleep(Option<u64>),
}

/// Returns the next per-entry retry delay after a decline: 1, 2, 4, 8, 16,
/// 32, 60, 60, ... seconds.
pub const fn next_backoff(backoff: u8) -> u8 {
    if backoff == 0 {
        1
    } else if backoff >= MAX_BACKOFF_SECS / 2 {
        MAX_BACKOFF_SECS
    } else {
        backoff * 2
    }
}

/// The most actions [`Engine::run`] performs in one call. A cancel (of a
/// dropped or an overdue request) comes at most once. A send that fails as
/// an SA error holds the port (see [`Engine::send_failed`]), so at most one
/// does per call; one that finds the port down reschedules the due entries
/// of its method in its record 5 s later, so a record fails at most twice
/// (SET and DELETE); then the engine sleeps.
const MAX_RUN_ACTIONS: usize = 2 * RECORDS + 2;

impl Engine {
    /// Returns when the engine next needs to run: at once (0) while the
    /// cancel of a request dropped by [`Engine::reset`] waits to be handed
    /// out; while a request is outstanding, the time the watchdog gives it
    /// up; otherwise the earliest time a pending entry may be sent. `None`
    /// when there is nothing to do.
    pub fn next_wakeup(&self) -> Option<u64> {
        match &self.in_flight {
            InFlight::Dropped(_) => Some(0),
            InFlight::Outstanding(out) => Some(out.deadline()),
            InFlight::Idle => EntryIdx::all()
                .filter_map(|e| self.due(e))
                .min()
                .map(|due| due.max(self.sa_hold_until)),
        }
    }

    /// Returns the request that is outstanding, if any.
    pub fn outstanding(&self) -> Option<&Request> {
        match &self.in_flight {
            InFlight::Outstanding(out) => Some(&out.request),
            InFlight::Idle | InFlight::Dropped(_) => None,
        }
    }

    /// Returns what the caller must do next at `now`, in this order:
    ///
    /// 1. [`Action::Cancel`] of the request [`Engine::reset`] or
    ///    [`Engine::retire`] dropped, if any;
    /// 2. [`Action::Cancel`] of the outstanding request once it has waited
    ///    [`ANSWER_WATCHDOG_SECS`] for its answer: it is given up as timed
    ///    out, and the port's SA backoff rises (see [`Engine::answer`]);
    /// 3. [`Action::Sleep`] until the watchdog while a request is
    ///    outstanding;
    /// 4. [`Action::Send`] of the next due request, which becomes
    ///    outstanding;
    /// 5. otherwise [`Action::Sleep`] until [`Engine::next_wakeup`].
    ///
    /// The request sent is for the record whose time to run is earliest
    /// (ties to the lowest record), and only once that time has come. Within
    /// the record, the pending entry with the earliest due time (ties to the
    /// lowest entry) decides the method, DELETE when its admin value is
    /// [`GUID_DELETE`] and SET otherwise, and the request covers every due
    /// entry of the record with that method.
    pub fn next_action(&mut self, now: u64) -> Action {
        match self.in_flight {
            InFlight::Dropped(request) => {
                self.in_flight = InFlight::Idle;
                Action::Cancel(request)
            }
            InFlight::Outstanding(out) if now >= out.deadline() => {
                self.in_flight = InFlight::Idle;
                self.settle(
                    &out,
                    AnswerStatus::Timeout,
                    &[0; GUIDS_PER_RECORD],
                    true,
                    now,
                );
                Action::Cancel(out.request)
            }
            InFlight::Outstanding(out) => Action::Sleep(Some(out.deadline())),
            InFlight::Idle => match self.next_request(now) {
                Some(request) => Action::Send(request),
                None => Action::Sleep(self.next_wakeup()),
            },
        }
    }

    /// Builds the next due request (see [`Engine::next_action`]) and marks it
    /// outstanding. The engine must be idle.
    fn next_request(&mut self, now: u64) -> Option<Request> {
        // The earliest pending entry (ties to the lowest) is in the record
        // with the earliest time to run (ties to the lowest record), and
        // decides the method there.
        let (time, first) = EntryIdx::all()
            .filter_map(|entry| self.due(entry).map(|due| (due, entry)))
            .min()?;
        if time > now || now < self.sa_hold_until {
            return None;
        }
        let method_of = |e: &Entry| match e.admin {
            GUID_DELETE => Method::Delete,
            _ => Method::Set,
        };
        let method = method_of(self.entry(first));
        let mut request = Request {
            id: self.next_id,
            record: first.record(),
            method,
            mask: 0,
            guids: [0; GUIDS_PER_RECORD],
        };
        let mut generations = [0; GUIDS_PER_RECORD];
        for entry in request.record.entries() {
            let e = self.entry(entry);
            let due_now = matches!(self.due(entry), Some(due) if due <= now);
            if !due_now || method_of(e) != method {
                continue;
            }
            request.mask |= entry.bit();
            request.guids[entry.slot()] = if method == Method::Set { e.admin } else { 0 };
            generations[entry.slot()] = e.generation;
        }
        self.next_id = self.next_id.next();
        self.in_flight = InFlight::Outstanding(Outstanding {
            request,
            generations,
            sent_at: now,
        });
        Some(request)
    }

    /// Reports that the backend could not send request `id`, which
    /// [`Engine::next_action`] handed out. [`SubmitError::Failed`] counts as
    /// an SA error: the port's SA backoff rises (1, 2, 4, ... 60 s) and no
    /// request goes out before it has passed. [`SubmitError::PortDown`]
    /// retries the request's entries after 5 s, and the next request may go
    /// out at once. The entries' own backoff is unchanged either way. A
    /// request that was never sent cannot have been carried out: its
    /// entries are not made unsure (see [`Engine::is_pending`]).
    ///
    /// A request that is not outstanding (dropped by a reset meanwhile) is
    /// [`GuidError::StaleAnswer`] and changes nothing.
    pub fn send_failed(
        &mut self,
        id: RequestId,
        error: SubmitError,
        now: u64,
    ) -> Result<(), GuidError> {
        let status = match error {
            SubmitError::PortDown => AnswerStatus::PortDown,
            SubmitError::Failed => AnswerStatus::Error,
        };
        let out = self.take_outstanding(|r| r.id == id)?;
        // It never left: the SM cannot have carried it out.
        self.settle(&out, status, &[0; GUIDS_PER_RECORD], false, now);
        Ok(())
    }

    /// Takes the outstanding request if `matches` says it is the one meant,
    /// leaving the engine idle.
    fn take_outstanding(
        &mut self,
        matches: impl FnOnce(&Request) -> bool,
    ) -> Result<Outstanding, GuidError> {
        match self.in_flight {
            InFlight::Outstanding(out) if matches(&out.request) => {
                self.in_flight = InFlight::Idle;
                Ok(out)
            }
            _ => Err(GuidError::StaleAnswer),
        }
    }

    /// Applies the SM's answer to the outstanding request.
    ///
    /// Accepted entries become operational (an SM-assigned GUID is also kept
    /// as the admin value, so that the SM is asked for the same GUID again
    /// later, as upstream does) and their backoff starts over. Declined
    /// entries wait their next backoff: 1, 2, 4, ... 60 s. A failed or timed
    /// out query raises the port's SA backoff (1, 2, 4, ... 60 s): no request
    /// for any record goes out before it has passed, and the query's entries
    /// are due when it ends, after the records that waited meanwhile; an
    /// answer, an admin write or a port event ends it early, and makes them
    /// due then. A
    /// port that is not active retries the query's entries after 5 s. Neither
    /// touches the entries' own backoff. An entry written by the
    /// administrator since the request was sent keeps the write's schedule.
    ///
    /// An answer for a request that is not outstanding (never sent, already
    /// answered, given up by the watchdog, dropped by a reset) is
    /// [`GuidError::StaleAnswer`] and changes nothing.
    pub fn answer(&mut self, answer: &Answer, now: u64) -> Result<AnswerOutcome, GuidError> {
        let out = self.take_outstanding(|r| r.id == answer.id && r.record == answer.record)?;
        Ok(self.settle(&out, answer.status, &answer.guids, true, now))
    }

    /// Applies the outcome of request `out`, which is no longer outstanding:
    /// `status`, and with [`AnswerStatus::Ok`] the record's GUIDs `got`.
    /// `sent`: the request left (it was answered or timed out), so that the
    /// SM may have carried out one that failed.
    fn settle(
        &mut self,
        out: &Outstanding,
        status: AnswerStatus,
        got: &[u64; GUIDS_PER_RECORD],
        sent: bool,
        now: u64,
    ) -> AnswerOutcome {
        let request = &out.request;
        let before = self.changed;
        self.changed = Set128::EMPTY;
        let mut outcome = AnswerOutcome::default();
        let retry_in = match status {
            AnswerStatus::Ok => {
                self.clear_sa_backoff(now);
                None
            }
            AnswerStatus::Error | AnswerStatus::Timeout => {
                // The SA failed the request (an error status, no answer):
                // the port waits 1, 2, 4, ... 60 s before its next request,
                // whichever record it is for.
                self.sa_backoff = if self.sa_backoff == 0 {
                    ERROR_DELAY_SECS
                } else {
                    next_backoff(self.sa_backoff)
                };
                self.sa_hold_until = now.saturating_add(secs(self.sa_backoff));
                // The request's entries are due when the hold ends, after
                // the records that waited meanwhile (a record the SA keeps
                // failing does not starve the others); whatever ends the
                // hold early brings them back to then.
                Some(self.sa_backoff)
            }
            AnswerStatus::PortDown => Some(PORT_DOWN_DELAY_SECS),
        };
        let reached_sm = sent && status != AnswerStatus::PortDown;
        for entry in request.entries() {
            let fresh = self.entry(entry).generation == out.generations[entry.slot()];
            if let Some(delay) = retry_in {
                let e = self.entry_mut(entry);
                // After an error or a timeout the SM may have applied it.
                e.unsure |= reached_sm;
                if fresh {
                    e.due = now.saturating_add(secs(delay));
                }
                continue;
            }
            self.entry_mut(entry).unsure = false;
            let asked = request.guids[entry.slot()];
            let got = got[entry.slot()];
            let accepted = match request.method {
                Method::Delete => true,
                Method::Set if asked == GUID_ASSIGN => is_valid_guid(got),
                Method::Set => got == asked,
            };
            if accepted {
                outcome.accepted |= entry.bit();
                let value = match request.method {
                    Method::Delete => 0,
                    Method::Set => got,
                };
                self.change_oper(entry, value);
                let e = self.entry_mut(entry);
                // A GUID the SM assigned because it was asked to (even if 0
                // was written again since) fulfils a 0.
                if e.admin == GUID_ASSIGN && request.method == Method::Set && asked == GUID_ASSIGN {
                    e.admin = value;
                }
                // An entry written since the request was sent had its backoff
                // reset by the write, and only an answer raises it, so this
                // holds for fresh and rewritten entries alike.
                e.backoff = 0;
            } else {
                outcome.declined |= entry.bit();
                if fresh {
                    let e = self.entry_mut(entry);
                    e.backoff = next_backoff(e.backoff);
                    e.due = now.saturating_add(secs(e.backoff));
                }
            }
        }
        outcome.changed = self.changed;
        self.changed = self.changed.union(&before);
        outcome
    }

    /// Performs [`Engine::next_action`]s at `now` through `sm` until the
    /// engine sleeps, and returns when to run again (`None`: only after the
    /// next admin write, answer or port event).
    ///
    /// A cancel goes to [`SmBackend::cancel`], a request to
    /// [`SmBackend::submit`], whose failure is reported with
    /// [`Engine::send_failed`]. It performs at most a bounded number of
    /// actions (one cancel, and at most two failed sends per record), so it
    /// returns even if every send fails.
    pub fn run<S: SmBackend + ?Sized>(&mut self, sm: &mut S, now: u64) -> Option<u64> {
        for _ in 0..MAX_RUN_ACTIONS {
            match self.next_action(now) {
                Action::Sleep(wakeup) => return wakeup,
                Action::Cancel(request) => sm.cancel(&request),
                Action::Send(request) => {
                    if let Err(error) = sm.submit(&request) {
                        // Just handed out, so still outstanding: never stale.
                        let _ = self.send_failed(request.id, error, now);
                    }
                }
            }
        }
        self.next_wakeup()
    }
}
