// SPDX-License-Identifier: GPL-2.0

//! The GUID table of one port and the state machine that brings every
//! administrative value to the subnet manager until it is operational.
//!
//! Per physical entry the engine keeps the admin value (what `admin_guids`
//! shows), the operational value (what `gids` shows), the entry's retry
//! backoff and the time it may next be sent. An entry is *pending* while its
//! operational value does not yet reflect its admin value; pending entries go
//! to the SM one GUIDInfo record at a time, the record whose time to run is
//! earliest first. One request is outstanding at a time, as upstream mlx4's
//! ordered work queue does.

use super::{
    guid_split, is_valid_guid, record_entries, Answer, AnswerStatus, GuidError, Method, Request,
    Set128, SmBackend, Split, SubmitError, ANSWER_WATCHDOG_SECS, ERROR_DELAY_SECS,
    GUIDS_PER_RECORD, GUID_ASSIGN, GUID_DELETE, MAX_BACKOFF_SECS, NSEC_PER_SEC,
    PORT_DOWN_DELAY_SECS, PORT_GUIDS, RECORDS,
};

/// How a port's table starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The number of VFs the GUIDs are split among (at most 126).
    pub num_vfs: u16,
    /// The `sm_guid_assign` module parameter: `true` asks the SM for every
    /// VF's base GUID at start, `false` leaves them to the administrator.
    pub sm_guid_assign: bool,
    /// The port's hardware GUID, the PF's read-only entry 0.
    pub hw_guid: u64,
}

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

#[derive(Clone, Copy, Debug)]
struct Entry {
    admin: u64,
    oper: u64,
    /// When the entry may next be sent, in nanoseconds.
    due: u64,
    /// The last retry delay in seconds; 0 when the entry was never declined
    /// since its last success or admin write.
    backoff: u8,
    /// Bumped by every admin write, so that an answer to a request sent
    /// before the write does not overrule it.
    generation: u32,
    /// A request for the entry failed or timed out, so the SM may or may not
    /// have carried it out: the entry is sent again even if its admin and
    /// operational values agree, until the SM answers for it.
    unsure: bool,
}

impl Entry {
    const DELETED: Self = Self {
        admin: GUID_DELETE,
        oper: 0,
        due: 0,
        backoff: 0,
        generation: 0,
        unsure: false,
    };
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    request: Request,
    generations: [u32; GUIDS_PER_RECORD],
    sent_at: u64,
}

/// The number of functions a port can have: the PF and 126 VFs.
const MAX_FUNCTIONS: usize = 127;

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

const fn secs(s: u8) -> u64 {
    // At most 255 s: no overflow.
    s as u64 * NSEC_PER_SEC
}

/// Returns the array index of a physical entry, or `None` past the port.
fn slot(entry: u8) -> Option<usize> {
    let i = usize::from(entry);
    (i < PORT_GUIDS).then_some(i)
}

/// The GUID table of one port and its SM retry state.
///
/// Time is always passed in (`now`, nanoseconds on a monotonic clock such as
/// `ktime_get_boottime_ns()`); the engine never reads a clock.
#[derive(Clone, Debug)]
pub struct Engine {
    split: Split,
    entries: [Entry; PORT_GUIDS],
    outstanding: Option<Outstanding>,
    next_id: u64,
    changed: Set128,
    event_counts: [u32; MAX_FUNCTIONS],
}

impl Engine {
    /// An engine with no VFs and a hardware GUID of 0, to be configured in
    /// place with [`Engine::reset`]. The engine is several KiB: the kernel
    /// allocates it on the heap and resets it there rather than moving one
    /// built by [`Engine::new`] through its small stack.
    pub const EMPTY: Self = Self {
        split: Split::NO_VFS,
        entries: [Entry::DELETED; PORT_GUIDS],
        outstanding: None,
        next_id: 1,
        changed: Set128::EMPTY,
        event_counts: [0; MAX_FUNCTIONS],
    };

    /// Returns the table of a port that starts as SPEC section 4 says (see
    /// [`Engine::reset`]).
    pub fn new(config: Config) -> Result<Self, GuidError> {
        let mut engine = Self::EMPTY;
        engine.reset(config)?;
        Ok(engine)
    }

    /// Starts the table over, in place, as SPEC section 4 says.
    ///
    /// The PF's entry 0 holds `hw_guid` in both columns. With
    /// `sm_guid_assign`, every VF's base entry asks the SM for a GUID (admin
    /// value 0) and is sent at once; every other entry is deleted (admin
    /// `ffffffffffffffff`, operational 0). Without it, the VFs' base entries
    /// are deleted too, until an administrator writes them. An outstanding
    /// request is forgotten (its answer will be stale) and the event counts
    /// restart at 0. With more than 126 VFs nothing changes.
    pub fn reset(&mut self, config: Config) -> Result<(), GuidError> {
        let split = guid_split(config.num_vfs)?;
        self.split = split;
        self.entries.fill(Entry::DELETED);
        if let Some(pf) = self.entries.first_mut() {
            pf.admin = config.hw_guid;
            pf.oper = config.hw_guid;
        }
        if config.sm_guid_assign {
            for vf in 1..=config.num_vfs {
                if let Some(e) = split.base(vf).and_then(|b| self.entry_mut(b)) {
                    e.admin = GUID_ASSIGN;
                }
            }
        }
        self.outstanding = None;
        self.changed = Set128::EMPTY;
        self.event_counts.fill(0);
        Ok(())
    }

    fn entry(&self, entry: u8) -> Option<&Entry> {
        slot(entry).and_then(|i| self.entries.get(i))
    }

    fn entry_mut(&mut self, entry: u8) -> Option<&mut Entry> {
        slot(entry).and_then(|i| self.entries.get_mut(i))
    }

    /// Checks that `entry` may be changed from outside the engine: it exists
    /// and is not the PF's read-only entry 0.
    fn check_writable(&self, entry: u8) -> Result<(), GuidError> {
        if entry == 0 {
            Err(GuidError::ReadOnly)
        } else if self.entry(entry).is_none() {
            Err(GuidError::NoSuchEntry)
        } else {
            Ok(())
        }
    }

    /// Returns the split the table was made with.
    pub const fn split(&self) -> &Split {
        &self.split
    }

    /// Returns the admin value of physical entry `entry` (`admin_guids/<n>`).
    pub fn admin(&self, entry: u8) -> Option<u64> {
        self.entry(entry).map(|e| e.admin)
    }

    /// Returns the operational GUID of physical entry `entry` (the GUID part
    /// of `gids/<n>`).
    pub fn oper(&self, entry: u8) -> Option<u64> {
        self.entry(entry).map(|e| e.oper)
    }

    /// Returns the entry's current retry delay in seconds (0: not declined
    /// since its last success or admin write).
    pub fn backoff_secs(&self, entry: u8) -> Option<u8> {
        self.entry(entry).map(|e| e.backoff)
    }

    /// Returns whether the entry's operational value does not yet reflect its
    /// admin value, so that it still has to go to the SM.
    pub fn is_pending(&self, entry: u8) -> bool {
        entry != 0 && self.entry(entry).is_some_and(Self::needs_request)
    }

    fn needs_request(e: &Entry) -> bool {
        e.unsure
            || match e.admin {
                GUID_DELETE => e.oper != 0,
                // Asking the SM always asks, even when the entry has a GUID:
                // the answer replaces the 0 with the GUID the SM assigned.
                GUID_ASSIGN => true,
                wanted => e.oper != wanted,
            }
    }

    /// Returns when the pending entry may next be sent, or `None` when it is
    /// not pending.
    pub fn due(&self, entry: u8) -> Option<u64> {
        if self.is_pending(entry) {
            self.entry(entry).map(|e| e.due)
        } else {
            None
        }
    }

    /// Sets the admin value of physical entry `entry`, as a write to
    /// `admin_guids/<n>` does: [`GUID_ASSIGN`] asks the SM for a GUID,
    /// [`GUID_DELETE`] deletes the entry, anything else asks for that GUID.
    ///
    /// The entry is due at once and its backoff starts over. The PF's entry 0
    /// is read-only. On error nothing changes.
    pub fn set_admin(&mut self, entry: u8, value: u64, now: u64) -> Result<(), GuidError> {
        self.check_writable(entry)?;
        let e = self.entry_mut(entry).ok_or(GuidError::NoSuchEntry)?;
        e.admin = value;
        e.due = now;
        e.backoff = 0;
        e.generation = e.generation.wrapping_add(1);
        Ok(())
    }

    /// Parses what user space wrote to `admin_guids/<n>` and sets it (see
    /// [`super::parse_admin_guid`] and [`Engine::set_admin`]). On error
    /// nothing changes.
    pub fn write_admin(&mut self, entry: u8, input: &[u8], now: u64) -> Result<(), GuidError> {
        // The entry is checked before the input, so that a write to entry 0
        // is EPERM whatever it holds.
        self.check_writable(entry)?;
        let value = super::parse_admin_guid(input)?;
        self.set_admin(entry, value, now)
    }

    /// Records an operational value seen on the port outside an SM answer
    /// (for instance the port's GUID table read back after an SMP), raising
    /// a GUID-change event for its function when it changed. An entry that
    /// this makes pending goes to the SM at once, with a fresh backoff. The
    /// PF's entry 0 is the hardware GUID: [`GuidError::ReadOnly`].
    pub fn set_oper(&mut self, entry: u8, value: u64, now: u64) -> Result<(), GuidError> {
        self.check_writable(entry)?;
        let was_pending = self.is_pending(entry);
        self.change_oper(entry, value);
        if !was_pending && self.is_pending(entry) {
            if let Some(e) = self.entry_mut(entry) {
                e.due = now;
                e.backoff = 0;
            }
        }
        Ok(())
    }

    fn change_oper(&mut self, entry: u8, value: u64) {
        let Some(e) = self.entry_mut(entry) else {
            return;
        };
        if e.oper == value {
            return;
        }
        e.oper = value;
        if let Some((function, _)) = self.split.owner(entry) {
            self.changed.insert(function);
            if let Some(count) = self.event_counts.get_mut(usize::from(function)) {
                *count = count.wrapping_add(1);
            }
        }
    }

    /// Returns whether `function`'s port is up: its base entry holds a valid
    /// GUID. The PF is up while its hardware GUID is valid.
    pub fn function_up(&self, function: u16) -> bool {
        self.split
            .base(function)
            .and_then(|b| self.oper(b))
            .is_some_and(is_valid_guid)
    }

    /// Returns the functions whose port is up.
    pub fn up_functions(&self) -> Set128 {
        let mut up = Set128::EMPTY;
        for f in 0..self.split.num_functions() {
            if self.function_up(f) {
                up.insert(f);
            }
        }
        up
    }

    /// Returns the number of GUID-change events `function` has had.
    pub fn event_count(&self, function: u16) -> u32 {
        self.event_counts
            .get(usize::from(function))
            .copied()
            .unwrap_or(0)
    }

    /// Returns the functions that had a GUID change (of any of their entries)
    /// since the last call, and forgets them.
    pub fn take_events(&mut self) -> Set128 {
        core::mem::take(&mut self.changed)
    }

    /// Makes every pending entry due at `now`, keeping its backoff, as after
    /// the port became active again (upstream's
    /// `mlx4_ib_invalidate_all_guid_record`).
    pub fn retry_all(&mut self, now: u64) {
        for e in self.entries.iter_mut() {
            e.due = e.due.min(now);
        }
    }

    /// Returns the time to run of `record`: the earliest time one of its
    /// pending entries may be sent, or `None` when none is pending.
    pub fn record_time(&self, record: u8) -> Option<u64> {
        record_entries(record)
            .filter(|&entry| self.is_pending(entry))
            .filter_map(|entry| self.entry(entry).map(|e| e.due))
            .min()
    }

    /// Returns when the engine next needs to run: the earliest record time,
    /// or while a request is outstanding, the time the engine gives it up.
    /// `None` when there is nothing to do.
    pub fn next_wakeup(&self) -> Option<u64> {
        if let Some(out) = &self.outstanding {
            return Some(out.sent_at.saturating_add(secs(ANSWER_WATCHDOG_SECS)));
        }
        (0..RECORDS as u8).filter_map(|r| self.record_time(r)).min()
    }

    /// Returns the request that is outstanding, if any.
    pub fn outstanding(&self) -> Option<&Request> {
        self.outstanding.as_ref().map(|o| &o.request)
    }

    /// Returns the next request to send at `now` and marks it outstanding,
    /// or `None` when a request is outstanding or nothing is due.
    ///
    /// The record is the one whose time to run is earliest (ties to the
    /// lowest record). Within it, the due entry sent the longest ago decides
    /// the method (ties to the lowest entry), and the request covers every
    /// due entry of that record with that method.
    pub fn next_request(&mut self, now: u64) -> Option<Request> {
        if self.outstanding.is_some() {
            return None;
        }
        // Tuples compare time first, then record: ties go to the lowest.
        let (time, record) = (0..RECORDS as u8)
            .filter_map(|r| self.record_time(r).map(|t| (t, r)))
            .min()?;
        if time > now {
            return None;
        }
        // `due()` is `None` for an entry that is not pending.
        let due = |entry: u8| self.due(entry).is_some_and(|d| d <= now);
        let method_of = |entry: u8| match self.admin(entry) {
            Some(GUID_DELETE) => Method::Delete,
            _ => Method::Set,
        };
        let first = record_entries(record)
            .filter(|&entry| due(entry))
            .min_by_key(|&entry| (self.due(entry).unwrap_or(u64::MAX), entry))?;
        let method = method_of(first);
        let mut request = Request {
            id: self.next_id,
            record,
            method,
            mask: 0,
            guids: [0; GUIDS_PER_RECORD],
        };
        let mut generations = [0; GUIDS_PER_RECORD];
        for (i, entry) in (0..GUIDS_PER_RECORD as u8).zip(record_entries(record)) {
            if !due(entry) || method_of(entry) != method {
                continue;
            }
            let Some(e) = self.entry(entry) else {
                continue;
            };
            request.mask |= 1u8.wrapping_shl(u32::from(i));
            if let Some(g) = request.guids.get_mut(usize::from(i)) {
                *g = if method == Method::Set { e.admin } else { 0 };
            }
            if let Some(g) = generations.get_mut(usize::from(i)) {
                *g = e.generation;
            }
        }
        self.next_id = self.next_id.wrapping_add(1);
        self.outstanding = Some(Outstanding {
            request,
            generations,
            sent_at: now,
        });
        Some(request)
    }

    /// Applies the SM's answer to the outstanding request.
    ///
    /// Accepted entries become operational (an SM-assigned GUID is also kept
    /// as the admin value, so that the SM is asked for the same GUID again
    /// later, as upstream does) and their backoff starts over. Declined
    /// entries wait their next backoff: 1, 2, 4, ... 60 s. A failed or timed
    /// out query retries its entries after 1 s, a port that is not active
    /// after 5 s, without touching their backoff. An entry written by the
    /// administrator since the request was sent keeps the write's schedule.
    ///
    /// An answer for a request that is not outstanding is
    /// [`GuidError::StaleAnswer`] and changes nothing.
    pub fn answer(&mut self, answer: &Answer, now: u64) -> Result<AnswerOutcome, GuidError> {
        let out = match self.outstanding {
            Some(out) if out.request.id == answer.id && out.request.record == answer.record => out,
            _ => return Err(GuidError::StaleAnswer),
        };
        self.outstanding = None;
        let request = out.request;
        let before = self.changed;
        self.changed = Set128::EMPTY;
        let mut outcome = AnswerOutcome::default();
        let retry_in = match answer.status {
            AnswerStatus::Ok => None,
            AnswerStatus::Error | AnswerStatus::Timeout => Some(ERROR_DELAY_SECS),
            AnswerStatus::PortDown => Some(PORT_DOWN_DELAY_SECS),
        };
        let reached_sm = answer.status != AnswerStatus::PortDown;
        for entry in request.entries() {
            let bit = 1u8 << (entry % 8);
            let slot_in_record = usize::from(entry % 8);
            let fresh = self.entry(entry).map(|e| e.generation)
                == out.generations.get(slot_in_record).copied();
            if let Some(delay) = retry_in {
                if let Some(e) = self.entry_mut(entry) {
                    // After an error or a timeout the SM may have applied it.
                    e.unsure |= reached_sm;
                    if fresh {
                        e.due = now.saturating_add(secs(delay));
                    }
                }
                continue;
            }
            if let Some(e) = self.entry_mut(entry) {
                e.unsure = false;
            }
            let asked = request.guids.get(slot_in_record).copied().unwrap_or(0);
            let got = answer.guids.get(slot_in_record).copied().unwrap_or(0);
            let accepted = match request.method {
                Method::Delete => true,
                Method::Set if asked == GUID_ASSIGN => is_valid_guid(got),
                Method::Set => got == asked,
            };
            if accepted {
                outcome.accepted |= bit;
                let value = match request.method {
                    Method::Delete => 0,
                    Method::Set => got,
                };
                self.change_oper(entry, value);
                if let Some(e) = self.entry_mut(entry) {
                    // A GUID the SM assigned because it was asked to
                    // (even if 0 was written again since) fulfils a 0.
                    if e.admin == GUID_ASSIGN
                        && request.method == Method::Set
                        && asked == GUID_ASSIGN
                    {
                        e.admin = value;
                    }
                    if fresh || !Self::needs_request(e) {
                        e.backoff = 0;
                    }
                }
            } else {
                outcome.declined |= bit;
                if fresh {
                    if let Some(e) = self.entry_mut(entry) {
                        e.backoff = next_backoff(e.backoff);
                        e.due = now.saturating_add(secs(e.backoff));
                    }
                }
            }
        }
        outcome.changed = self.changed;
        self.changed = self.changed.union(&before);
        Ok(outcome)
    }

    /// Gives up the outstanding request when it has waited
    /// [`ANSWER_WATCHDOG_SECS`] for an answer, as if it had timed out.
    /// Returns whether it did.
    pub fn expire(&mut self, now: u64) -> bool {
        let Some(out) = self.outstanding else {
            return false;
        };
        if now < out.sent_at.saturating_add(secs(ANSWER_WATCHDOG_SECS)) {
            return false;
        }
        self.answer(&Answer::failed(&out.request, AnswerStatus::Timeout), now)
            .is_ok()
    }

    /// Runs the engine at `now`: gives up an answer that is overdue, sends
    /// the next due request through `sm` (a send that fails counts as the
    /// matching failed answer), and returns when to run again (`None`:
    /// nothing to do until the next admin write or answer).
    pub fn poll<S: SmBackend + ?Sized>(&mut self, sm: &mut S, now: u64) -> Option<u64> {
        self.expire(now);
        // A failed send reschedules its entries at least 1 s later, so each
        // record fails at most once per poll.
        for _ in 0..=RECORDS {
            let Some(request) = self.next_request(now) else {
                break;
            };
            let status = match sm.submit(&request) {
                Ok(()) => break,
                Err(SubmitError::PortDown) => AnswerStatus::PortDown,
                Err(SubmitError::Failed) => AnswerStatus::Error,
            };
            let _ = self.answer(&Answer::failed(&request, status), now);
        }
        self.next_wakeup()
    }
}
