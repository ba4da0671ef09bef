// SPDX-License-Identifier: GPL-2.0

//! The GUID table of one port and the state machine that brings every
//! administrative value to the subnet manager until it is operational.
//!
//! Per physical entry the engine keeps the admin value (what `admin_guids`
//! shows), the operational value (what `gids` shows), the entry's retry
//! backoff and the time it may next be sent. An entry is *pending* while its
//! operational value does not yet reflect its admin value; pending entries go
//! to the SM one GUIDInfo record at a time, the record whose time to run is
//! earliest first. One request is outstanding at a time. Upstream mlx4 sends
//! its next record from the answer's handler, so it mostly has one too, but
//! a record stays IDLE while its query is out (`set_guid_rec()`,
//! `alias_GUID.c` 485-575) and an admin write or a port event runs the work
//! at once (`mlx4_ib_init_alias_guid_work()`, 774-791): it then sends
//! again, the same record included, with the first query still out.
//!
//! This file holds the table: its [`Config`], the per-entry state and its
//! rules (pending, due), the request in flight, and what resets, retires,
//! writes and reads it. The exchange with the SM, the [`Action`]s, the
//! request built for the earliest due record, the answer watchdog, what an
//! answer or a failed send does to the entries and to the port's SA backoff,
//! and [`Engine::run`], is in `engine/requests.rs`.
//!
//! # Driving the engine
//!
//! The engine never calls the SM: [`Engine::next_action`] tells the caller
//! what to do next, and the caller reports what came of it.
//!
//! - [`Action::Cancel`]: cancel a request the engine no longer waits for,
//!   because [`Engine::reset`] or [`Engine::retire`] dropped it or the
//!   answer watchdog gave it up.
//!   Its answer, if it still comes, is stale.
//! - [`Action::Send`]: submit a request; it is outstanding from now on. If it
//!   cannot be sent, say so with [`Engine::send_failed`]; otherwise hand its
//!   answer to [`Engine::answer`] when it comes.
//! - [`Action::Sleep`]: nothing to do before the given time, or before the
//!   next admin write, answer or port event.
//!
//! [`Engine::run`] performs these actions over an [`SmBackend`] until the
//! engine sleeps, and returns when to run it again.
//!
//! # Locking
//!
//! The engine is not synchronised: the kernel (`rust/vf_guids/`) keeps one
//! per port behind a sleeping lock, a `kernel::sync::Mutex`, held across
//! [`Engine::next_action`] and the backend call each action asks for, that
//! is across [`Engine::run`]. A spinlock cannot be held there, because
//! submitting an SA query may sleep (`ib_sa_guid_info_rec_query` allocates
//! with the gfp mask it is given, and may sleep with `GFP_KERNEL`).
//! Cancelling under the mutex is fine: `ib_sa_cancel_query` takes a
//! spinlock and never sleeps. The mutex's users are all in process context:
//! the port's delayed work item (which runs the engine and gives it the SA's
//! answers), sysfs reads and writes, the ib event handler (run from
//! `ib_wq`) and teardown.
//!
//! The SA's answer callback does not take the mutex: it runs on ib_mad's
//! workers, shared by every MAD user of the port, which must not wait while
//! a submission sleeps in the allocator. It leaves the answer in a mailbox
//! (a spinlock; the answer with the newest identifier is kept, and the
//! request the engine waits for is always the newest sent) and kicks the
//! work item, which hands it to [`Engine::answer`] under the mutex.
//!
//! What follows:
//!
//! - A sysfs write or a port event waits while a submission sleeps in the
//!   allocator; an answer waits in the mailbox.
//! - A request's answer can only reach the engine once its submission has
//!   returned and the backend has recorded the query: the SA may complete,
//!   and call back from another context, before `ib_sa_guid_info_rec_query`
//!   returns, but the work item that takes the answer from the mailbox
//!   needs the mutex. The SA does not call back for a query it failed to
//!   send: that is [`Engine::send_failed`], from within the same locked
//!   section.
//! - A cancel always comes after its submission. The cancelled query's
//!   callback still runs later, with `-EINTR`; the engine has forgotten the
//!   request, so [`Engine::answer`] says [`GuidError::StaleAnswer`] and
//!   changes nothing.
//! - Teardown first retires the table ([`Engine::retire`]) and waits, at
//!   most 2 s and without the mutex, until the work item finds the engine
//!   idle ([`Engine::is_idle`]). Then, with the table's sysfs files and
//!   event handler gone, it marks the port dying under the mutex (nothing
//!   runs the engine or submits afterwards) and cancels the outstanding
//!   query, cancels the work item and waits for it, and then waits for the
//!   callback of every query the backend submitted before it frees the
//!   engine.
//!
//! The alternative, a spinlock with each action performed after unlocking,
//! would let a request handed out by [`Engine::next_action`] race a
//! [`Engine::reset`] before it is submitted: its [`Action::Cancel`] could
//! reach the backend before the query exists, when there is nothing to
//! cancel yet. The query would then go out anyway; its answer is stale and
//! ignored by identifier, but the SM may still carry it out, and the backend
//! would have to remember cancels for queries not yet submitted and, at
//! teardown, cancel and wait for every query it submitted, not only those the
//! engine names. The answer, too, could arrive before the backend has
//! recorded its query.

mod requests;

pub use requests::{next_backoff, Action, AnswerOutcome};

use super::{
    guid_split, is_valid_guid, EntryIdx, GuidError, RecordIdx, Request, RequestId, Set128, Split,
    ANSWER_WATCHDOG_SECS, GUIDS_PER_RECORD, GUID_ASSIGN, GUID_DELETE, NSEC_PER_SEC, PORT_GUIDS,
};

/// How a port's table starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The port's GUID entries: its GID table length (128 on a ConnectX-3;
    /// more is taken as [`PORT_GUIDS`]).
    pub port_guids: u16,
    /// The number of VFs the GUIDs are split among (at most
    /// `port_guids - 2`).
    pub num_vfs: u16,
    /// The `sm_guid_assign` module parameter: `true` asks the SM for every
    /// VF's base GUID at start, `false` leaves them to the administrator.
    pub sm_guid_assign: bool,
    /// The port's hardware GUID, the PF's read-only entry 0.
    pub hw_guid: u64,
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
    /// Takes `value` as the admin value at `now`: due at once, its backoff
    /// over, and an answer to a request sent before it stale for it.
    fn write(&mut self, value: u64, now: u64) {
        self.admin = value;
        self.due = now;
        self.backoff = 0;
        self.generation = self.generation.wrapping_add(1);
    }

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
    /// The generation of each entry of the request when it was sent,
    /// indexed by [`EntryIdx::slot`].
    generations: [u32; GUIDS_PER_RECORD],
    sent_at: u64,
}

impl Outstanding {
    /// When the answer watchdog gives the request up.
    const fn deadline(&self) -> u64 {
        self.sent_at.saturating_add(secs(ANSWER_WATCHDOG_SECS))
    }
}

/// The request the engine is concerned with: at most one at a time, whether
/// it waits for its answer or for its cancel to be handed out.
#[derive(Clone, Copy, Debug)]
enum InFlight {
    Idle,
    /// Sent, waiting for its answer.
    Outstanding(Outstanding),
    /// Dropped by [`Engine::reset`] or [`Engine::retire`]:
    /// [`Engine::next_action`] hands out its cancel before anything else,
    /// and before any request is sent.
    Dropped(Request),
}

/// The number of functions a port can have: the PF and 126 VFs.
const MAX_FUNCTIONS: usize = 127;

const fn secs(s: u8) -> u64 {
    // At most 255 s: no overflow.
    s as u64 * NSEC_PER_SEC
}

/// The GUID table of one port and its SM retry state.
///
/// Time is always passed in (`now`, nanoseconds on a monotonic clock: the
/// module's is `ktime_get()`, which stops in suspend as the delayed work
/// that runs the engine does; upstream mlx4 stamps `time_to_run` with
/// `ktime_get_boottime_ns()`); the engine never reads a clock.
#[derive(Clone, Debug)]
pub struct Engine {
    split: Split,
    entries: [Entry; PORT_GUIDS],
    in_flight: InFlight,
    /// The port's SA backoff in seconds: raised (1, 2, 4, ... 60) by each
    /// request that failed or timed out, 0 again after an answer, an admin
    /// write or a port event. An SA that fails fails every record alike, so
    /// the backoff is the port's, not an entry's.
    sa_backoff: u8,
    /// No request is sent before this time (nanoseconds): the last failed
    /// request's time plus `sa_backoff`.
    sa_hold_until: u64,
    next_id: RequestId,
    changed: Set128,
    event_counts: [u32; MAX_FUNCTIONS],
    /// Set by [`Engine::retire`]: the table is going, its GUIDs are being
    /// deleted, and admin writes are refused.
    retired: bool,
}

impl Engine {
    /// An engine with no VFs and a hardware GUID of 0, to be configured in
    /// place with [`Engine::reset`]. The engine is several KiB: the kernel
    /// allocates it on the heap and resets it there rather than moving one
    /// built by [`Engine::new`] through its small stack.
    pub const EMPTY: Self = Self {
        split: Split::NO_VFS,
        entries: [Entry::DELETED; PORT_GUIDS],
        in_flight: InFlight::Idle,
        sa_backoff: 0,
        sa_hold_until: 0,
        next_id: RequestId::FIRST,
        changed: Set128::EMPTY,
        event_counts: [0; MAX_FUNCTIONS],
        retired: false,
    };

    /// Returns the table of a port that starts as `Documentation/vf-guids.rst`
    /// says (see [`Engine::reset`]).
    pub fn new(config: Config) -> Result<Self, GuidError> {
        let mut engine = Self::EMPTY;
        engine.reset(config)?;
        Ok(engine)
    }

    /// Starts the table over, in place, as `Documentation/vf-guids.rst` says.
    ///
    /// The PF's entry 0 holds `hw_guid` in both columns. With
    /// `sm_guid_assign`, every VF's base entry asks the SM for a GUID (admin
    /// value 0) and is sent at once; every other entry is deleted (admin
    /// `ffffffffffffffff`, operational 0). Without it, the VFs' base entries
    /// are deleted too, until an administrator writes them. The event counts
    /// restart at 0.
    ///
    /// An outstanding request is dropped: the next [`Engine::next_action`]
    /// is its [`Action::Cancel`], before any request of the new table, and
    /// its answer is stale. With more VFs than the port has GUIDs for
    /// ([`GuidError::TooManyVfs`]) nothing changes.
    pub fn reset(&mut self, config: Config) -> Result<(), GuidError> {
        let split = guid_split(config.port_guids, config.num_vfs)?;
        self.split = split;
        self.entries.fill(Entry::DELETED);
        let pf = self.entry_mut(EntryIdx::HW_GUID);
        pf.admin = config.hw_guid;
        pf.oper = config.hw_guid;
        if config.sm_guid_assign {
            for entry in EntryIdx::all() {
                // The base entry of a VF: entry 0 of a function other than the PF.
                if matches!(split.owner(entry), Some((vf, 0)) if vf != 0) {
                    self.entry_mut(entry).admin = GUID_ASSIGN;
                }
            }
        }
        if let InFlight::Outstanding(out) = self.in_flight {
            self.in_flight = InFlight::Dropped(out.request);
        }
        self.sa_backoff = 0;
        self.sa_hold_until = 0;
        self.changed = Set128::EMPTY;
        self.event_counts.fill(0);
        self.retired = false;
        Ok(())
    }

    /// Deletes at the SM every GUID the table holds or may hold, before the
    /// table goes: its VFs are disabled or their number changes (the new
    /// table starts with every entry deleted), its device's switch goes
    /// `off`, or mlx_ext lets the device go. mlx4 does the same for one VF
    /// when it shuts down (`alias_GUID.c`,
    /// `mlx4_ib_slave_alias_guid_event()` with `slave_init` 0: the slave's
    /// entry is set to `MLX4_GUID_FOR_DELETE_VAL` and sent at once).
    ///
    /// Every entry but the PF's entry 0 gets the admin value
    /// [`GUID_DELETE`], due at `now` with a fresh backoff, and the port's SA
    /// backoff is forgotten. Only entries that hold a GUID, or whose last
    /// request failed or was not answered (the SM may have carried it out),
    /// are sent: an entry that never held one costs no request. An
    /// outstanding request is dropped (its cancel is the next action) and
    /// its entries are deleted whatever their value, since the SM may carry
    /// it out.
    ///
    /// From then on admin writes are refused ([`GuidError::Retired`]);
    /// [`Engine::is_idle`] says when the SM has answered for every entry.
    /// [`Engine::reset`] makes a table of it again.
    pub fn retire(&mut self, now: u64) {
        if let InFlight::Outstanding(out) = self.in_flight {
            for entry in out.request.entries() {
                self.entry_mut(entry).unsure = true;
            }
            self.in_flight = InFlight::Dropped(out.request);
        }
        for entry in EntryIdx::all().filter(|&e| e != EntryIdx::HW_GUID) {
            self.entry_mut(entry).write(GUID_DELETE, now);
        }
        self.clear_sa_backoff(now);
        self.retired = true;
    }

    /// Returns whether [`Engine::retire`] was called since the last reset.
    pub const fn is_retired(&self) -> bool {
        self.retired
    }

    /// Returns whether the engine has nothing left to do: no request
    /// outstanding or to cancel, and no entry pending.
    pub fn is_idle(&self) -> bool {
        self.next_wakeup().is_none()
    }

    /// Returns the number of pending entries (see [`Engine::is_pending`]).
    pub fn pending_count(&self) -> usize {
        EntryIdx::all().filter(|&e| self.is_pending(e)).count()
    }

    fn entry(&self, entry: EntryIdx) -> &Entry {
        &self.entries[entry.index()]
    }

    fn entry_mut(&mut self, entry: EntryIdx) -> &mut Entry {
        &mut self.entries[entry.index()]
    }

    /// Checks that `entry` may be changed from outside the engine: it is one
    /// of the port's ([`GuidError::NoSuchEntry`]), and not the PF's
    /// read-only entry 0.
    fn check_writable(&self, entry: EntryIdx) -> Result<(), GuidError> {
        if !self.split.holds(entry) {
            Err(GuidError::NoSuchEntry)
        } else if entry == EntryIdx::HW_GUID {
            Err(GuidError::ReadOnly)
        } else {
            Ok(())
        }
    }

    /// Checks that the table is not retired (see [`Engine::retire`]).
    const fn check_live(&self) -> Result<(), GuidError> {
        if self.retired {
            Err(GuidError::Retired)
        } else {
            Ok(())
        }
    }

    /// Returns the split the table was made with.
    pub const fn split(&self) -> &Split {
        &self.split
    }

    /// Returns the admin value of `entry` (`admin_guids/<n>`).
    pub fn admin(&self, entry: EntryIdx) -> u64 {
        self.entry(entry).admin
    }

    /// Returns the operational GUID of `entry` (the GUID part of
    /// `gids/<n>`).
    pub fn oper(&self, entry: EntryIdx) -> u64 {
        self.entry(entry).oper
    }

    /// Returns the entry's current retry delay in seconds (0: not declined
    /// since its last success or admin write).
    pub fn backoff_secs(&self, entry: EntryIdx) -> u8 {
        self.entry(entry).backoff
    }

    /// Returns whether the entry's operational value does not yet reflect its
    /// admin value, so that it still has to go to the SM.
    pub fn is_pending(&self, entry: EntryIdx) -> bool {
        entry != EntryIdx::HW_GUID && Self::needs_request(self.entry(entry))
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
    pub fn due(&self, entry: EntryIdx) -> Option<u64> {
        self.is_pending(entry).then(|| self.entry(entry).due)
    }

    /// Sets the admin value of `entry`, as a write to `admin_guids/<n>` does:
    /// [`GUID_ASSIGN`] asks the SM for a GUID, [`GUID_DELETE`] deletes the
    /// entry, anything else asks for that GUID.
    ///
    /// The entry is due at once and its backoff starts over. An entry past
    /// the port's is [`GuidError::NoSuchEntry`]; the PF's entry 0 is
    /// read-only: [`GuidError::ReadOnly`]; a retired table takes no writes:
    /// [`GuidError::Retired`]. Either way nothing changes.
    pub fn set_admin(&mut self, entry: EntryIdx, value: u64, now: u64) -> Result<(), GuidError> {
        self.check_writable(entry)?;
        self.check_live()?;
        self.entry_mut(entry).write(value, now);
        // An administrator's write goes out at once, SA failures or not.
        self.clear_sa_backoff(now);
        Ok(())
    }

    /// Forgets the port's SA backoff at `now`: the next request may go out
    /// at once, and the entries that the last failure put off to the end of
    /// its hold are due now.
    fn clear_sa_backoff(&mut self, now: u64) {
        let until = self.sa_hold_until;
        if until > now {
            for e in self.entries.iter_mut().filter(|e| e.due == until) {
                e.due = now;
            }
        }
        self.sa_backoff = 0;
        self.sa_hold_until = 0;
    }

    /// The port's SA backoff in seconds (0: the last request did not fail).
    pub fn sa_backoff_secs(&self) -> u8 {
        self.sa_backoff
    }

    /// Parses what user space wrote to `admin_guids/<n>` and sets it (see
    /// [`super::parse_admin_guid`] and [`Engine::set_admin`]). On error
    /// nothing changes.
    pub fn write_admin(
        &mut self,
        entry: EntryIdx,
        input: &[u8],
        now: u64,
    ) -> Result<(), GuidError> {
        // The entry is checked before the input, so that a write to entry 0
        // is EPERM whatever it holds.
        self.check_writable(entry)?;
        self.check_live()?;
        let value = super::parse_admin_guid(input)?;
        self.set_admin(entry, value, now)
    }

    /// Records an operational value seen on the port outside an SM answer
    /// (for instance the port's GUID table read back after an SMP), raising
    /// a GUID-change event for its function when it changed. An entry that
    /// this makes pending goes to the SM at once, with a fresh backoff. The
    /// PF's entry 0 is the hardware GUID: [`GuidError::ReadOnly`].
    pub fn set_oper(&mut self, entry: EntryIdx, value: u64, now: u64) -> Result<(), GuidError> {
        self.check_writable(entry)?;
        let was_pending = self.is_pending(entry);
        self.change_oper(entry, value);
        if !was_pending && self.is_pending(entry) {
            let e = self.entry_mut(entry);
            e.due = now;
            e.backoff = 0;
        }
        Ok(())
    }

    fn change_oper(&mut self, entry: EntryIdx, value: u64) {
        let e = self.entry_mut(entry);
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
            .is_some_and(|base| is_valid_guid(self.oper(base)))
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
        self.clear_sa_backoff(now);
    }

    /// Sends every entry that holds or asks for a GUID to the SM again, at
    /// `now`, even where the SM confirmed it, keeping its backoff: after the
    /// port came back up, the SM changed or asked its clients to register
    /// again, the SM may have lost what it granted (upstream's
    /// `mlx4_ib_invalidate_all_guid_record`). Deleted entries stay as they
    /// are; nothing changes in the operational values until the SM answers.
    pub fn invalidate_all(&mut self, now: u64) {
        for (i, e) in self.entries.iter_mut().enumerate() {
            if i == usize::from(EntryIdx::HW_GUID.get()) || e.admin == GUID_DELETE {
                continue;
            }
            e.unsure = true;
            e.due = e.due.min(now);
        }
        self.clear_sa_backoff(now);
    }

    /// Returns the time to run of `record`: the earliest time one of its
    /// pending entries may be sent, or `None` when none is pending.
    pub fn record_time(&self, record: RecordIdx) -> Option<u64> {
        record.entries().filter_map(|entry| self.due(entry)).min()
    }
}
