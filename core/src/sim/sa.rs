// SPDX-License-Identifier: GPL-2.0

//! The simulator's subnet administrator (`Documentation/vf-guids.rst`): what it
//! answers to the SubnAdm MADs ib_sa sends on a port's GSI QP, decided here
//! without a kernel so that every rule is tested on the host. What is here
//! must match OpenSM's behaviour (`osm_sa_guidinfo_record.c`); the bytes
//! (the MAD layout of `core/sa_query.c`) are [`super::mad`]'s, re-exported
//! here.
//!
//! - [`Sa`]: one port's SA. It keeps the port's alias GUID table as the SM
//!   grants it, answers GuidInfoRecord SET and DELETE and ClassPortInfo GET,
//!   and is programmable: accept (the default), decline given entries N
//!   times, answer with an error status, never answer, port down.
//! - Requests are counted by TID, not by MAD: ib_sa resends an unanswered
//!   MAD every tenth of the timeout with the same TID
//!   (`drivers/infiniband/core/sa_query.c:1341-1350`), so a resend
//!   is logged as a copy of its request, and a request that was answered
//!   gets the same answer again without counting a decline twice.

// Every item of the codec, so that `sim::sa::MAD_LEN` and the like keep
// naming what they named before the codec had a file of its own.
pub use super::mad::*;

/// How a port's SA answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaMode {
    /// Grants what it is asked (except entries told to decline).
    Accept,
    /// Answers every request with this MAD status (non-zero).
    Status(u16),
    /// Never answers.
    Silent,
    /// The port is down: requests are not delivered (nothing answers, as
    /// [`SaMode::Silent`], but the log says why).
    PortDown,
}

/// What the log holds of one request (by TID).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// The transaction id.
    pub tid: u64,
    /// When the first copy arrived (the caller's clock, in ms).
    pub first_ms: u64,
    /// The MAD's method and attribute.
    pub method: u8,
    /// The attribute.
    pub attr: u16,
    /// For GuidInfoRecords: the block and the GUIDs asked for.
    pub block: u8,
    /// See [`SaRequest::GuidInfo`].
    pub mask: u8,
    /// How many copies arrived (resends of an unanswered MAD).
    pub copies: u32,
    /// The status answered, `None` while unanswered.
    pub status: Option<u16>,
    /// The entries of the request that were declined (bit `i`: GUID `i`).
    pub declined: u8,
}

/// A command to a port's SA, as written to the simulator's debugfs file
/// `sa<port>` (one per write, a final newline allowed):
///
/// - `accept`: grant what is asked (the default);
/// - `status N`: answer every request with MAD status `N` (decimal,
///   1..=65535);
/// - `silent`: never answer (ib_sa's query times out);
/// - `port_down`: as `silent`, logged as the port being down;
/// - `decline ENTRY TIMES`: decline the next `TIMES` (0..=255) SET requests
///   that include GUID `ENTRY` (0..=127), counted per request;
/// - `clear_log`: forget the logged requests;
/// - `program hold`: the SM answers, but programs nothing into the port's
///   GUIDInfo table until `program now`, which programs what it holds and
///   goes on programming at each change. OpenSM answers a SET or DELETE
///   from its own records and only queues the port's GUIDInfo block for its
///   SubnSet (`osm_sa_guidinfo_record.c`, `set_guidinfo` and
///   `del_guidinfo`: `osm_queue_guidinfo`, then `gir_respond`), so the
///   port's table follows the answer, later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaCommand {
    /// `accept`, `status N`, `silent`, `port_down`.
    Mode(SaMode),
    /// `decline ENTRY TIMES`.
    Decline {
        /// The GUID index, 0..=127.
        entry: usize,
        /// How many requests to decline.
        times: u8,
    },
    /// `clear_log`.
    ClearLog,
    /// `program hold` (true) or `program now` (false).
    HoldProgramming(bool),
}

/// Parses a command (see [`SaCommand`]); `None` for anything else.
pub fn parse_command(text: &[u8]) -> Option<SaCommand> {
    use super::text::{decimal, fields};
    let mut f = fields(text).ok()?;
    let cmd = match f.next()? {
        b"accept" => SaCommand::Mode(SaMode::Accept),
        b"silent" => SaCommand::Mode(SaMode::Silent),
        b"port_down" => SaCommand::Mode(SaMode::PortDown),
        b"clear_log" => SaCommand::ClearLog,
        b"program" => match f.next()? {
            b"hold" => SaCommand::HoldProgramming(true),
            b"now" => SaCommand::HoldProgramming(false),
            _ => return None,
        },
        b"status" => {
            let n = u16::try_from(decimal(f.next()?)?).ok()?;
            if n == 0 {
                return None;
            }
            SaCommand::Mode(SaMode::Status(n))
        }
        b"decline" => {
            let entry = usize::try_from(decimal(f.next()?)?).ok()?;
            let times = u8::try_from(decimal(f.next()?)?).ok()?;
            if entry >= PORT_GUIDS {
                return None;
            }
            SaCommand::Decline { entry, times }
        }
        _ => return None,
    };
    if f.next().is_some() {
        return None;
    }
    Some(cmd)
}

/// The log's capacity: the oldest requests are forgotten.
pub const LOG_LEN: usize = 64;

/// One port's SA.
#[derive(Clone, Debug)]
pub struct Sa {
    lid: u16,
    guid_base: u64,
    /// The port's GUIDCap (PortInfo), at most [`PORT_GUIDS`]: its entries
    /// are 0 to `guid_cap - 1`, in `ceil(guid_cap / 8)` blocks.
    guid_cap: usize,
    mode: SaMode,
    /// The SM's records: what it answers.
    table: [u64; PORT_GUIDS],
    /// The port's GUIDInfo table, as the SM programmed it.
    port: [u64; PORT_GUIDS],
    /// The port GUID of each VF's vport on the port (by VF, from 0; 0 for
    /// none), as mlx5 firmware shows its vports to the SM (OpenSM's
    /// virtualization support discovers them as ports of their own).
    vports: [u64; MAX_VPORTS],
    /// `program hold`: the port's table is not programmed.
    hold: bool,
    declines: [u8; PORT_GUIDS],
    log: [Option<LogEntry>; LOG_LEN],
    next: usize,
    answers: [Option<(u64, [u8; MAD_LEN])>; 4],
    next_answer: usize,
    changes: u64,
    requests: u64,
    copies: u64,
}

/// The most vports a port has: one per VF the simulator makes.
pub const MAX_VPORTS: usize = super::model::MAX_NUM_VFS as usize;

/// The GUID asked for that means "assign one" (`0`).
pub const GUID_ASSIGN: u64 = 0;

impl Sa {
    /// The SA of a port whose LID is `lid` and whose GUIDCap is `guid_cap`
    /// (at most [`PORT_GUIDS`]: more is taken as that); it assigns
    /// `guid_base + n` to entry `n` when asked to assign one.
    pub const fn new(lid: u16, guid_base: u64, guid_cap: usize) -> Self {
        Self {
            lid,
            guid_base,
            guid_cap: if guid_cap < PORT_GUIDS {
                guid_cap
            } else {
                PORT_GUIDS
            },
            mode: SaMode::Accept,
            table: [0; PORT_GUIDS],
            port: [0; PORT_GUIDS],
            vports: [0; MAX_VPORTS],
            hold: false,
            declines: [0; PORT_GUIDS],
            log: [None; LOG_LEN],
            next: 0,
            answers: [None; 4],
            next_answer: 0,
            changes: 0,
            requests: 0,
            copies: 0,
        }
    }

    /// The port's blocks: `ceil(guid_cap / 8)`, as OpenSM's `max_block`
    /// (`set_guidinfo`, `del_guidinfo`, `sa_gir_by_comp_mask_cb`).
    const fn blocks(&self) -> usize {
        self.guid_cap.div_ceil(GUIDS_PER_RECORD)
    }

    /// How many requests (TIDs) and how many MADs (copies) reached the SA
    /// since it was made, the forgotten ones included.
    pub const fn totals(&self) -> (u64, u64) {
        (self.requests, self.copies)
    }

    /// Sets `entry` as the SM holds it without a request: the port's own
    /// GUID in entry 0, as a subnet manager finds it.
    pub fn preset(&mut self, entry: usize, guid: u64) {
        if let (Some(t), Some(p)) = (self.table.get_mut(entry), self.port.get_mut(entry)) {
            *t = guid;
            *p = guid;
        }
    }

    /// How many times the port's table changed: a port tells ib_core its
    /// GID table changed when this moves.
    pub const fn changes(&self) -> u64 {
        self.changes
    }

    /// Forgets every logged request (and the answers kept for resends).
    pub fn clear_log(&mut self) {
        self.log = [None; LOG_LEN];
        self.next = 0;
        self.answers = [None; 4];
        self.next_answer = 0;
    }

    /// Carries out a command written to the simulator's control file.
    pub fn command(&mut self, cmd: SaCommand) {
        match cmd {
            SaCommand::Mode(mode) => self.set_mode(mode),
            SaCommand::Decline { entry, times } => self.decline(entry, times),
            SaCommand::ClearLog => self.clear_log(),
            SaCommand::HoldProgramming(hold) => {
                self.hold = hold;
                self.program();
            }
        }
    }

    /// Programs the port's table with the SM's records, unless held.
    fn program(&mut self) {
        if self.hold || self.port == self.table {
            return;
        }
        self.port = self.table;
        self.changes = self.changes.wrapping_add(1);
    }

    /// Whether the SM holds back programming the port (`program hold`).
    pub const fn programming_held(&self) -> bool {
        self.hold
    }

    /// Sets how the SA answers from now on.
    pub fn set_mode(&mut self, mode: SaMode) {
        self.mode = mode;
    }

    /// How the SA answers.
    pub const fn mode(&self) -> SaMode {
        self.mode
    }

    /// Makes the SA decline the next `times` SET requests that include
    /// `entry` (per request: resends do not count).
    pub fn decline(&mut self, entry: usize, times: u8) {
        if let Some(d) = self.declines.get_mut(entry) {
            *d = times;
        }
    }

    /// The declines left for `entry`.
    pub fn declines_left(&self, entry: usize) -> u8 {
        self.declines.get(entry).copied().unwrap_or(0)
    }

    /// GUID `entry` of the port's table (what its GID table shows): the
    /// SM's record once programmed.
    pub fn guid(&self, entry: usize) -> u64 {
        self.port.get(entry).copied().unwrap_or(0)
    }

    /// Sets the port GUID of VF `vf`'s vport (0: none), as the SM sees it
    /// once the firmware has it; out of range is ignored.
    pub fn set_vport(&mut self, vf: usize, port_guid: u64) {
        if let Some(v) = self.vports.get_mut(vf) {
            *v = port_guid;
        }
    }

    /// The SM's record of `entry` (what it answers).
    pub fn record(&self, entry: usize) -> u64 {
        self.table.get(entry).copied().unwrap_or(0)
    }

    /// The log, oldest first.
    pub fn log(&self) -> impl Iterator<Item = &LogEntry> {
        let (newer, older) = self.log.split_at(self.next);
        older.iter().chain(newer.iter()).flatten()
    }

    fn log_find(&mut self, tid: u64) -> Option<&mut LogEntry> {
        self.log.iter_mut().flatten().find(|e| e.tid == tid)
    }

    fn log_add(&mut self, entry: LogEntry) {
        self.requests = self.requests.wrapping_add(1);
        if let Some(slot) = self.log.get_mut(self.next) {
            *slot = Some(entry);
        }
        self.next = (self.next + 1) % LOG_LEN;
    }

    fn remember(&mut self, tid: u64, answer: [u8; MAD_LEN]) {
        if let Some(slot) = self.answers.get_mut(self.next_answer) {
            *slot = Some((tid, answer));
        }
        self.next_answer = (self.next_answer + 1) % self.answers.len();
    }

    /// Takes one MAD sent to the SA at `now_ms`. Returns whether to send
    /// an answer, which is then in `out`.
    pub fn handle(&mut self, mad: &[u8; MAD_LEN], now_ms: u64, out: &mut [u8; MAD_LEN]) -> bool {
        let (tid, method, attr) = (be64(mad, 8), mad[3], be16(mad, 16));
        let decoded = decode(mad);
        if decoded == Err(MadError::NotForSa) {
            return false;
        }
        self.copies = self.copies.wrapping_add(1);
        // A resend: the same request, counted once.
        if let Some(e) = self.log_find(tid) {
            e.copies = e.copies.saturating_add(1);
            if e.status.is_some() {
                // Answered: the same answer again (never applied twice);
                // nothing if it is no longer kept.
                return match self.answers.iter().flatten().find(|(t, _)| *t == tid) {
                    Some((_, a)) => {
                        *out = *a;
                        true
                    }
                    None => false,
                };
            }
            if !matches!(self.mode, SaMode::Accept | SaMode::Status(_)) {
                return false;
            }
            // Unanswered so far and answerable now: answer it below, as a
            // request whose log entry exists.
        } else {
            let (block, mask) = match decoded {
                Ok(SaRequest::GuidInfo { block, mask, .. }) => (block, mask),
                _ => (0, 0),
            };
            self.log_add(LogEntry {
                tid,
                first_ms: now_ms,
                method,
                attr,
                block,
                mask,
                copies: 1,
                status: None,
                declined: 0,
            });
        }
        let (status, data, declined) = match (self.mode, decoded) {
            (SaMode::Silent | SaMode::PortDown, _) => return false,
            (SaMode::Status(s), _) => (s, [0u8; GUID_INFO_REC_LEN], 0),
            (SaMode::Accept, Err(_)) => (STATUS_UNSUP_METHOD_ATTR, [0u8; GUID_INFO_REC_LEN], 0),
            (SaMode::Accept, Ok(SaRequest::ClassPortInfo { .. })) => {
                // ClassPortInfo: BaseVersion, ClassVersion, CapabilityMask
                // (none), RespTimeValue 18 (about 1 s); nothing else set.
                let mut cpi = [0u8; GUID_INFO_REC_LEN];
                cpi[0] = BASE_VERSION;
                cpi[1] = SA_CLASS_VERSION;
                cpi[9] = 18;
                (0, cpi, 0)
            }
            (
                SaMode::Accept,
                Ok(SaRequest::GuidInfo {
                    method,
                    keys,
                    lid,
                    block,
                    mask,
                    guids,
                    ..
                }),
            ) => match self.check(method, keys, lid, block, mask, &guids) {
                Err(status) => (status, [0u8; GUID_INFO_REC_LEN], 0),
                Ok(()) if method == METHOD_GET => {
                    let base = usize::from(block) * GUIDS_PER_RECORD;
                    let mut held = [0u64; GUIDS_PER_RECORD];
                    for (i, g) in held.iter_mut().enumerate() {
                        *g = self.record(base + i);
                    }
                    (0, guid_info_rec(self.lid, block, &held), 0)
                }
                Ok(()) => {
                    let (out, declined) = self.apply(method, block, mask, &guids);
                    (0, guid_info_rec(lid, block, &out), declined)
                }
            },
        };
        let answer = encode_answer(mad, status, &data);
        if let Some(e) = self.log_find(tid) {
            e.status = Some(status);
            e.declined = declined;
        }
        self.remember(tid, answer);
        *out = answer;
        true
    }

    /// OpenSM's checks of a GuidInfoRecord request before it touches
    /// anything (`osm_sa_guidinfo_record.c`): a SET or DELETE names its
    /// record by LID and block (`check_mod_comp_mask`, else
    /// `ERR_REQ_INSUFFICIENT_COMPONENTS`); the LID is a port's (else
    /// `ERR_NO_RECORDS`); the block is within the port's GUIDCap
    /// (`set_guidinfo`, `del_guidinfo`: else `ERR_NO_RECORDS`); GUID 0 of
    /// block 0, the port's own, is neither set nor deleted (else
    /// `ERR_REQ_INVALID`, the whole request). A GET (`get_guidinfo`,
    /// `sa_gir_by_comp_mask_cb`) matches the port's records by LID and
    /// block when given, GUID 0 of block 0 when given equal to the port's
    /// GUID and other GUIDs when given equal to 0: none is
    /// `ERR_NO_RECORDS`, more than one `ERR_TOO_MANY_RECORDS` (a GET
    /// answers one record).
    fn check(
        &self,
        method: u8,
        keys: u64,
        lid: u16,
        block: u8,
        mask: u8,
        guids: &[u64; GUIDS_PER_RECORD],
    ) -> Result<(), u16> {
        let has_lid = keys & COMP_MASK_LID != 0;
        let has_block = keys & COMP_MASK_BLOCK_NUM != 0;
        if method == METHOD_GET {
            if has_lid && lid != self.lid {
                return Err(STATUS_NO_RECORDS);
            }
            if !has_block {
                return Err(STATUS_TOO_MANY_RECORDS);
            }
            if usize::from(block) >= self.blocks() {
                return Err(STATUS_NO_RECORDS);
            }
            let port_guid = if block == 0 { self.record(0) } else { 0 };
            let matches = (0..GUIDS_PER_RECORD)
                .all(|i| mask & (1 << i) == 0 || guids[i] == if i == 0 { port_guid } else { 0 });
            return if matches {
                Ok(())
            } else {
                Err(STATUS_NO_RECORDS)
            };
        }
        if !has_lid || !has_block {
            return Err(STATUS_INSUF_COMPS);
        }
        if lid != self.lid || usize::from(block) >= self.blocks() {
            return Err(STATUS_NO_RECORDS);
        }
        if block == 0 && mask & 1 != 0 {
            return Err(STATUS_REQ_INVALID);
        }
        Ok(())
    }

    /// Applies a GuidInfoRecord SET or DELETE to the table; returns the
    /// record as answered (every GUID of the record as the SM now holds it;
    /// a declined entry reads 0, as mlx4's alias GUID code expects) and the
    /// declined entries.
    fn apply(
        &mut self,
        method: u8,
        block: u8,
        mask: u8,
        guids: &[u64; GUIDS_PER_RECORD],
    ) -> ([u64; GUIDS_PER_RECORD], u8) {
        let base = usize::from(block) * GUIDS_PER_RECORD;
        let mut out = [0u64; GUIDS_PER_RECORD];
        let mut declined = 0u8;
        for (i, g) in out.iter_mut().enumerate() {
            let entry = base + i;
            // OpenSM's loops stop at GUIDCap in the last block: what is
            // past it is neither set nor deleted, and answers 0.
            if entry >= self.guid_cap {
                continue;
            }
            let asked = mask & (1 << i) != 0;
            let held = self.table.get(entry).copied().unwrap_or(0);
            if !asked {
                *g = held;
                continue;
            }
            let value = if method == METHOD_DELETE {
                0
            } else {
                let d = self.declines.get_mut(entry);
                match d {
                    Some(d) if *d > 0 => {
                        *d -= 1;
                        declined |= 1 << i;
                        *g = 0;
                        continue;
                    }
                    _ => {}
                }
                // As OpenSM's set_guidinfo: 0 asks for a GUID, and an
                // entry that holds one keeps it; a GUID the port holds at
                // another entry, or a port's own (a vport's: OpenSM keeps
                // every port's GUID in its alias table), is a duplicate,
                // not set (the answer shows what the entry holds); any
                // other value is set as it is, all ones included (OpenSM
                // checks nothing more).
                let v = match guids.get(i).copied().unwrap_or(0) {
                    GUID_ASSIGN if held != 0 => held,
                    GUID_ASSIGN => self.guid_base.wrapping_add(entry as u64),
                    v => v,
                };
                let duplicate = self
                    .table
                    .iter()
                    .enumerate()
                    .any(|(e, &t)| e != entry && t == v)
                    || self.vports.contains(&v);
                if duplicate {
                    *g = held;
                    continue;
                }
                v
            };
            if let Some(t) = self.table.get_mut(entry) {
                *t = value;
            }
            *g = value;
        }
        self.program();
        (out, declined)
    }
}
