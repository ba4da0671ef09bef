// SPDX-License-Identifier: GPL-2.0

//! The simulator's subnet administrator (issue 12, SPEC section 4): what it
//! answers to the SubnAdm MADs ib_sa sends on a port's GSI QP, decided here
//! without a kernel so that every rule is tested on the host.
//!
//! - The MAD layout: the common MAD header (IBA 13.4.3), the SA header
//!   (IBA 15.2.1.1) and the GuidInfoRecord attribute (IBA 15.2.5.18, `struct
//!   ib_sa_guidinfo_rec` in `core/sa_query.c`), big-endian on the wire.
//! - [`Sa`]: one port's SA. It keeps the port's alias GUID table as the SM
//!   grants it, answers GuidInfoRecord SET and DELETE and ClassPortInfo GET,
//!   and is programmable: accept (the default), decline given entries N
//!   times, answer with an error status, never answer, port down.
//! - Requests are counted by TID, not by MAD: ib_sa resends an unanswered
//!   MAD every 100 ms with the same TID (RDMA-NOTES section 4), so a resend
//!   is logged as a copy of its request, and a request that was answered
//!   gets the same answer again without counting a decline twice.

/// The size of a MAD.
pub const MAD_LEN: usize = 256;
/// `IB_MGMT_BASE_VERSION`.
pub const BASE_VERSION: u8 = 1;
/// `IB_MGMT_CLASS_SUBN_ADM`.
pub const CLASS_SUBN_ADM: u8 = 0x03;
/// `IB_SA_CLASS_VERSION`.
pub const SA_CLASS_VERSION: u8 = 2;
/// `IB_MGMT_METHOD_GET`.
pub const METHOD_GET: u8 = 0x01;
/// `IB_MGMT_METHOD_SET`.
pub const METHOD_SET: u8 = 0x02;
/// `IB_SA_METHOD_DELETE`.
pub const METHOD_DELETE: u8 = 0x15;
/// The response bit of a method (`IB_MGMT_METHOD_RESP`).
pub const METHOD_RESP: u8 = 0x80;
/// `IB_MGMT_METHOD_GET_RESP`.
pub const METHOD_GET_RESP: u8 = METHOD_GET | METHOD_RESP;
/// `IB_SA_METHOD_DELETE_RESP`.
pub const METHOD_DELETE_RESP: u8 = METHOD_DELETE | METHOD_RESP;
/// `IB_SA_ATTR_CLASS_PORTINFO`.
pub const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
/// `IB_SA_ATTR_GUID_INFO_REC`.
pub const ATTR_GUID_INFO_REC: u16 = 0x0030;
/// MAD status "the method/attribute combination is not supported" (IBA
/// 13.4.7: 3 << 2; OpenSM's `IB_MAD_STATUS_UNSUP_METHOD_ATTR`), what
/// OpenSM answers to a method or attribute it does not serve
/// (`osm_sa_guidinfo_record.c`, `osm_gir_rcv_process`).
pub const STATUS_UNSUP_METHOD_ATTR: u16 = 0x000c;
/// The SA statuses of IBA 15.2.1.1, in the MAD status's class-specific
/// bits (8..14), as OpenSM's `ib_types.h` names them
/// (`IB_SA_MAD_STATUS_*`). `ERR_NO_RESOURCES`.
pub const STATUS_NO_RESOURCES: u16 = 1 << 8;
/// `ERR_REQ_INVALID`: OpenSM's answer to a SET or DELETE of GUID 0 of
/// block 0, the port's own GUID (read-only).
pub const STATUS_REQ_INVALID: u16 = 2 << 8;
/// `ERR_NO_RECORDS`: no port with the record's LID, or a block past the
/// port's GUIDCap.
pub const STATUS_NO_RECORDS: u16 = 3 << 8;
/// `ERR_TOO_MANY_RECORDS`: a GET that matches more than one record.
pub const STATUS_TOO_MANY_RECORDS: u16 = 4 << 8;
/// `ERR_REQ_INSUFFICIENT_COMPONENTS`: a SET or DELETE without the LID and
/// block number in its component mask.
pub const STATUS_INSUF_COMPS: u16 = 6 << 8;
/// `ERR_REQ_DENIED`.
pub const STATUS_DENIED: u16 = 7 << 8;

/// The offset of the SA header in a SubnAdm MAD (`struct ib_sa_mad`): after
/// the common MAD header (24 bytes) and the RMPP header (12).
pub const SA_HDR: usize = 36;
/// The offset of the SA header's AttributeOffset (after the 8-byte SM_Key).
pub const ATTR_OFFSET: usize = SA_HDR + 8;
/// The offset of the SA header's ComponentMask.
pub const COMP_MASK: usize = SA_HDR + 12;
/// The offset of the SA data: `IB_MGMT_SA_HDR` (56), after the 20-byte SA
/// header.
pub const SA_DATA: usize = SA_HDR + 20;
/// The length of a GuidInfoRecord.
pub const GUID_INFO_REC_LEN: usize = 72;
/// The GUIDs of one record.
pub const GUIDS_PER_RECORD: usize = 8;
pub use super::model::PORT_GUIDS;
/// A port's GuidInfoRecords (the SA's block numbers).
pub const RECORDS: usize = PORT_GUIDS / GUIDS_PER_RECORD;
/// Component mask bit of GUID `i` of a GuidInfoRecord
/// (`IB_SA_GUIDINFO_REC_GID0` is bit 4).
pub const fn comp_mask_gid(i: usize) -> u64 {
    1 << (4 + i)
}
/// Component mask bits of the LID and the block number.
pub const COMP_MASK_LID: u64 = 1 << 0;
/// See [`COMP_MASK_LID`].
pub const COMP_MASK_BLOCK_NUM: u64 = 1 << 1;

fn be16(b: &[u8; MAD_LEN], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be64(b: &[u8; MAD_LEN], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(x)
}

fn put16(b: &mut [u8; MAD_LEN], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

fn put64(b: &mut [u8; MAD_LEN], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// What a SubnAdm MAD asks, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaRequest {
    /// A GuidInfoRecord GET, SET or DELETE.
    GuidInfo {
        /// The transaction id (echoed in the answer).
        tid: u64,
        /// [`METHOD_GET`], [`METHOD_SET`] or [`METHOD_DELETE`].
        method: u8,
        /// The component mask's LID and block number bits
        /// ([`COMP_MASK_LID`], [`COMP_MASK_BLOCK_NUM`]).
        keys: u64,
        /// The record's LID.
        lid: u16,
        /// The record's block number.
        block: u8,
        /// The GUIDs of the record asked for: bit `i` is GUID `i`
        /// (component mask bits 4..11).
        mask: u8,
        /// The record's 8 GUIDs as sent.
        guids: [u64; GUIDS_PER_RECORD],
    },
    /// A ClassPortInfo GET.
    ClassPortInfo {
        /// The transaction id.
        tid: u64,
    },
}

impl SaRequest {
    /// The request's transaction id.
    pub const fn tid(&self) -> u64 {
        match self {
            Self::GuidInfo { tid, .. } | Self::ClassPortInfo { tid } => *tid,
        }
    }
}

/// Why a MAD is not a request this SA answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MadError {
    /// Not a SubnAdm request of class version 2 (for someone else: let it
    /// go, as an SA that does not know it).
    NotForSa,
    /// A SubnAdm request this SA does not implement: a method or an
    /// attribute other than the ones above (answered with an error status).
    Unsupported {
        /// Its transaction id.
        tid: u64,
        /// Its method.
        method: u8,
    },
}

/// Decodes a MAD sent to the SA.
pub fn decode(mad: &[u8; MAD_LEN]) -> Result<SaRequest, MadError> {
    if mad[0] != BASE_VERSION || mad[1] != CLASS_SUBN_ADM || mad[2] != SA_CLASS_VERSION {
        return Err(MadError::NotForSa);
    }
    let method = mad[3];
    if method & METHOD_RESP != 0 {
        return Err(MadError::NotForSa);
    }
    let tid = be64(mad, 8);
    let attr = be16(mad, 16);
    match (method, attr) {
        (METHOD_GET, ATTR_CLASS_PORT_INFO) => Ok(SaRequest::ClassPortInfo { tid }),
        (METHOD_GET | METHOD_SET | METHOD_DELETE, ATTR_GUID_INFO_REC) => {
            let comp = be64(mad, COMP_MASK);
            let d = SA_DATA;
            let mut guids = [0u64; GUIDS_PER_RECORD];
            for (i, g) in guids.iter_mut().enumerate() {
                *g = be64(mad, d + 8 + 8 * i);
            }
            let mut mask = 0u8;
            for i in 0..GUIDS_PER_RECORD {
                if comp & comp_mask_gid(i) != 0 {
                    mask |= 1 << i;
                }
            }
            Ok(SaRequest::GuidInfo {
                tid,
                method,
                keys: comp & (COMP_MASK_LID | COMP_MASK_BLOCK_NUM),
                lid: be16(mad, d),
                block: mad[d + 2],
                mask,
                guids,
            })
        }
        _ => Err(MadError::Unsupported { tid, method }),
    }
}

/// The method of the answer to a request with `method`: GetResp for a Get
/// and a Set (IBA 15.4), the method with the response bit otherwise
/// (DeleteResp for a Delete).
pub const fn response_method(method: u8) -> u8 {
    match method {
        METHOD_GET | METHOD_SET => METHOD_GET_RESP,
        m => m | METHOD_RESP,
    }
}

/// Builds the answer to a request MAD `req`: the same header with the
/// response method, `status`, and `data` as the SA data.
pub fn encode_answer(req: &[u8; MAD_LEN], status: u16, data: &[u8]) -> [u8; MAD_LEN] {
    let mut out = [0u8; MAD_LEN];
    out[..SA_DATA].copy_from_slice(&req[..SA_DATA]);
    out[3] = response_method(req[3]);
    put16(&mut out, 4, status);
    // AttributeOffset: the record's length in 8-byte words.
    put16(&mut out, ATTR_OFFSET, (GUID_INFO_REC_LEN / 8) as u16);
    let n = data.len().min(MAD_LEN - SA_DATA);
    out[SA_DATA..SA_DATA + n].copy_from_slice(&data[..n]);
    out
}

/// Encodes a GuidInfoRecord.
pub fn guid_info_rec(
    lid: u16,
    block: u8,
    guids: &[u64; GUIDS_PER_RECORD],
) -> [u8; GUID_INFO_REC_LEN] {
    let mut r = [0u8; GUID_INFO_REC_LEN];
    r[0..2].copy_from_slice(&lid.to_be_bytes());
    r[2] = block;
    for (i, g) in guids.iter().enumerate() {
        r[8 + 8 * i..16 + 8 * i].copy_from_slice(&g.to_be_bytes());
    }
    r
}

/// Builds a GuidInfoRecord request MAD as `ib_sa_guid_info_rec_query`
/// sends it (for tests and the simulator's self-checks).
pub fn encode_request(
    tid: u64,
    method: u8,
    lid: u16,
    block: u8,
    mask: u8,
    guids: &[u64; GUIDS_PER_RECORD],
) -> [u8; MAD_LEN] {
    let mut m = [0u8; MAD_LEN];
    m[0] = BASE_VERSION;
    m[1] = CLASS_SUBN_ADM;
    m[2] = SA_CLASS_VERSION;
    m[3] = method;
    put64(&mut m, 8, tid);
    put16(&mut m, 16, ATTR_GUID_INFO_REC);
    let mut comp = COMP_MASK_LID | COMP_MASK_BLOCK_NUM;
    for i in 0..GUIDS_PER_RECORD {
        if mask & (1 << i) != 0 {
            comp |= comp_mask_gid(i);
        }
    }
    put64(&mut m, COMP_MASK, comp);
    let rec = guid_info_rec(lid, block, guids);
    m[SA_DATA..SA_DATA + GUID_INFO_REC_LEN].copy_from_slice(&rec);
    m
}

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

#[cfg(test)]
mod tests {
    use super::*;

    const LID: u16 = 3;

    fn set(tid: u64, block: u8, mask: u8, guids: [u64; 8]) -> [u8; MAD_LEN] {
        encode_request(tid, METHOD_SET, LID, block, mask, &guids)
    }

    /// The SA's answer to `mad`, which must be one.
    fn answer(sa: &mut Sa, mad: &[u8; MAD_LEN], now: u64) -> [u8; MAD_LEN] {
        let mut out = [0u8; MAD_LEN];
        assert!(sa.handle(mad, now, &mut out), "no answer");
        out
    }

    /// Whether the SA answers `mad` at all.
    fn answers(sa: &mut Sa, mad: &[u8; MAD_LEN], now: u64) -> bool {
        sa.handle(mad, now, &mut [0u8; MAD_LEN])
    }

    fn answered_guids(a: &[u8; MAD_LEN]) -> [u64; 8] {
        let mut g = [0u64; 8];
        for (i, x) in g.iter_mut().enumerate() {
            *x = be64(a, SA_DATA + 8 + 8 * i);
        }
        g
    }

    #[test]
    fn decode_what_ib_sa_sends() {
        let g = [1, 2, 3, 4, 5, 6, 7, 8];
        let m = set(0x1234_5678_9abc_def0, 5, 0b1010_0001, g);
        // The layout, byte by byte where it matters.
        assert_eq!(&m[0..4], &[1, 3, 2, 2]);
        assert_eq!(&m[8..16], &0x1234_5678_9abc_def0u64.to_be_bytes());
        assert_eq!(&m[16..18], &[0x00, 0x30]);
        // The layout of `struct ib_sa_mad` (IBA 15.2.1.1; ib_sa.h): the
        // component mask at byte 48, the record at 56 (IB_MGMT_SA_HDR).
        assert_eq!(be64(&m, 48), 0b11 | (0b1010_0001 << 4));
        assert_eq!(&m[56..59], &[0, 3, 5]);
        assert_eq!(&m[64..72], &1u64.to_be_bytes());
        assert_eq!(
            decode(&m),
            Ok(SaRequest::GuidInfo {
                tid: 0x1234_5678_9abc_def0,
                method: METHOD_SET,
                keys: COMP_MASK_LID | COMP_MASK_BLOCK_NUM,
                lid: LID,
                block: 5,
                mask: 0b1010_0001,
                guids: g,
            })
        );
        let mut cpi = [0u8; MAD_LEN];
        cpi[..4].copy_from_slice(&[1, 3, 2, METHOD_GET]);
        cpi[17] = 1;
        assert_eq!(decode(&cpi), Ok(SaRequest::ClassPortInfo { tid: 0 }));
    }

    #[test]
    fn not_for_the_sa_or_unsupported() {
        let mut m = set(1, 0, 1, [0; 8]);
        m[1] = 0x81; // SMP
        assert_eq!(decode(&m), Err(MadError::NotForSa));
        let mut m = set(1, 0, 1, [0; 8]);
        m[2] = 1;
        assert_eq!(decode(&m), Err(MadError::NotForSa));
        let mut m = set(1, 0, 1, [0; 8]);
        m[3] = METHOD_GET_RESP;
        assert_eq!(decode(&m), Err(MadError::NotForSa));
        let mut m = set(7, 0, 1, [0; 8]);
        m[17] = 0x31;
        assert_eq!(
            decode(&m),
            Err(MadError::Unsupported {
                tid: 7,
                method: METHOD_SET
            })
        );
        // The SA answers those with an error status; others it ignores.
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        let a = answer(&mut sa, &m, 0);
        assert_eq!(
            (a[3], be16(&a, 4)),
            (METHOD_GET_RESP, STATUS_UNSUP_METHOD_ATTR)
        );
        let mut smp = set(8, 0, 1, [0; 8]);
        smp[1] = 0x81;
        assert!(!answers(&mut sa, &smp, 0));
    }

    #[test]
    fn set_assigns_and_answers_with_the_record() {
        let mut sa = Sa::new(LID, 0x0002_c903_0000_0100, PORT_GUIDS);
        let m = set(42, 1, 0b0000_0011, [0, 0xabc, 9, 9, 9, 9, 9, 9]);
        let a = answer(&mut sa, &m, 10);
        // Same TID, GetResp, status 0, the header otherwise kept.
        assert_eq!(be64(&a, 8), 42);
        assert_eq!(a[3], METHOD_GET_RESP);
        assert_eq!(be16(&a, 4), 0);
        assert_eq!(be16(&a, 16), ATTR_GUID_INFO_REC);
        assert_eq!(be16(&a, SA_DATA), LID);
        assert_eq!(a[SA_DATA + 2], 1);
        let g = answered_guids(&a);
        // Entry 8 (0 asked): assigned; entry 9: as asked; the others,
        // not asked for, as the SM holds them (0).
        assert_eq!(g[0], 0x0002_c903_0000_0100 + 8);
        assert_eq!(g[1], 0xabc);
        assert_eq!(&g[2..], &[0; 6]);
        assert_eq!(sa.guid(8), 0x0002_c903_0000_0108);
        assert_eq!(sa.guid(9), 0xabc);
        assert_eq!(sa.guid(10), 0);
        // All ones is set as it is (deleting is DELETE's, as OpenSM has
        // it).
        let a = answer(
            &mut sa,
            &set(43, 1, 0b10, [0, u64::MAX, 0, 0, 0, 0, 0, 0]),
            20,
        );
        assert_eq!(answered_guids(&a)[1], u64::MAX);
        assert_eq!(answered_guids(&a)[0], 0x0002_c903_0000_0108);
        assert_eq!(sa.guid(9), u64::MAX);
    }

    #[test]
    fn delete_answers_delete_resp() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        answer(&mut sa, &set(1, 0, 0b110, [0; 8]), 0);
        assert_eq!(sa.guid(1), 0x101);
        let d = encode_request(2, METHOD_DELETE, LID, 0, 0b010, &[0; 8]);
        let a = answer(&mut sa, &d, 1);
        assert_eq!(a[3], METHOD_DELETE_RESP);
        assert_eq!(sa.guid(1), 0);
        assert_eq!(sa.guid(2), 0x102);
    }

    #[test]
    fn declines_count_per_request_not_per_mad() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        sa.decline(17, 2);
        let m = set(5, 2, 0b11, [0, 0x77, 0, 0, 0, 0, 0, 0]);
        // First request: entry 17 declined (reads 0), entry 16 granted.
        let a = answer(&mut sa, &m, 0);
        assert_eq!(answered_guids(&a)[..2], [0x110, 0]);
        assert_eq!(sa.declines_left(17), 1);
        // A resend of the same TID gets the same answer; nothing counted.
        let again = answer(&mut sa, &m, 100);
        assert_eq!(again, a);
        assert_eq!(sa.declines_left(17), 1);
        assert_eq!(
            sa.log().next().map(|e| (e.copies, e.declined)),
            Some((2, 0b10))
        );
        // The next request is declined too, the third granted.
        let a = answer(&mut sa, &set(6, 2, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), 1000);
        assert_eq!(answered_guids(&a)[1], 0);
        let a = answer(&mut sa, &set(7, 2, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), 3000);
        assert_eq!(answered_guids(&a)[1], 0x77);
        let times: [u64; 3] = {
            let mut it = sa.log().map(|e| e.first_ms);
            [it.next().unwrap(), it.next().unwrap(), it.next().unwrap()]
        };
        assert_eq!(times, [0, 1000, 3000]);
    }

    #[test]
    fn error_silent_and_port_down() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        sa.set_mode(SaMode::Status(STATUS_REQ_INVALID));
        let a = answer(&mut sa, &set(1, 0, 0b10, [0; 8]), 0);
        assert_eq!(be16(&a, 4), STATUS_REQ_INVALID);
        assert_eq!(sa.guid(1), 0);
        sa.set_mode(SaMode::Silent);
        let m = set(2, 0, 0b10, [0; 8]);
        assert!(!answers(&mut sa, &m, 0));
        assert!(!answers(&mut sa, &m, 100));
        assert!(!answers(&mut sa, &m, 200));
        let e = sa.log().find(|e| e.tid == 2).copied().unwrap();
        assert_eq!((e.copies, e.status), (3, None));
        // Accepting again: the next resend of the same TID is answered.
        sa.set_mode(SaMode::Accept);
        let a = answer(&mut sa, &m, 300);
        assert_eq!(be64(&a, 8), 2);
        assert_eq!(sa.guid(1), 0x101);
        sa.set_mode(SaMode::PortDown);
        assert!(!answers(&mut sa, &set(3, 0, 0b100, [0; 8]), 0));
        assert_eq!(sa.guid(2), 0);
    }

    #[test]
    fn wrong_lid_or_block_is_no_records() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        let m = encode_request(1, METHOD_SET, LID + 1, 0, 1, &[0; 8]);
        assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_NO_RECORDS);
        let m = encode_request(2, METHOD_SET, LID, 16, 1, &[0; 8]);
        assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_NO_RECORDS);
        let m = encode_request(3, METHOD_DELETE, LID, 16, 1, &[0; 8]);
        assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_NO_RECORDS);
        assert!((0..PORT_GUIDS).all(|e| sa.guid(e) == 0));
    }

    /// `m` with its component mask's LID and block bits cleared but
    /// `keep`.
    fn keys_only(mut m: [u8; MAD_LEN], keep: u64) -> [u8; MAD_LEN] {
        let comp = be64(&m, COMP_MASK) & !(COMP_MASK_LID | COMP_MASK_BLOCK_NUM) | keep;
        put64(&mut m, COMP_MASK, comp);
        m
    }

    #[test]
    fn statuses_are_opensms() {
        // IBA 15.2.1.1 and 13.4.7, as OpenSM's ib_types.h has them.
        assert_eq!(
            [
                STATUS_NO_RESOURCES,
                STATUS_REQ_INVALID,
                STATUS_NO_RECORDS,
                STATUS_TOO_MANY_RECORDS,
                STATUS_INSUF_COMPS,
                STATUS_DENIED,
                STATUS_UNSUP_METHOD_ATTR
            ],
            [0x0100, 0x0200, 0x0300, 0x0400, 0x0600, 0x0700, 0x000c]
        );
    }

    #[test]
    fn set_and_delete_need_the_lid_and_block_components() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        for (tid, keep) in [(1, 0), (2, COMP_MASK_LID), (3, COMP_MASK_BLOCK_NUM)] {
            let m = keys_only(set(tid, 0, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), keep);
            assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_INSUF_COMPS);
            let m = encode_request(tid + 10, METHOD_DELETE, LID, 0, 0b10, &[0; 8]);
            let m = keys_only(m, keep);
            assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_INSUF_COMPS);
        }
        assert_eq!(sa.record(1), 0);
    }

    /// OpenSM's GUIDCap bound (`set_guidinfo`, `del_guidinfo`): blocks
    /// from `ceil(cap / 8)` on are `ERR_NO_RECORDS`; in the last block the
    /// entries past the cap are neither set nor deleted, and answer 0.
    #[test]
    fn the_guid_cap_bounds_the_port() {
        let mut sa = Sa::new(LID, 0x100, 20);
        let a = answer(
            &mut sa,
            &set(1, 2, 0xff, [0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67]),
            0,
        );
        assert_eq!(be16(&a, 4), 0);
        assert_eq!(answered_guids(&a), [0x60, 0x61, 0x62, 0x63, 0, 0, 0, 0]);
        assert_eq!((sa.record(19), sa.record(20), sa.guid(19)), (0x63, 0, 0x63));
        for method in [METHOD_SET, METHOD_DELETE, METHOD_GET] {
            let m = encode_request(2, method, LID, 3, 0b1, &[0x70, 0, 0, 0, 0, 0, 0, 0]);
            assert_eq!(
                be16(&answer(&mut sa, &m, 0), 4),
                STATUS_NO_RECORDS,
                "method {method}"
            );
        }
        let m = encode_request(3, METHOD_DELETE, LID, 2, 0xff, &[0; 8]);
        let a = answer(&mut sa, &m, 0);
        assert_eq!((be16(&a, 4), sa.record(19)), (0, 0));
        // More than 128 is taken as 128.
        let mut big = Sa::new(LID, 0x100, 255);
        let m = encode_request(4, METHOD_SET, LID, 15, 0x80, &[0, 0, 0, 0, 0, 0, 0, 0x7f]);
        assert_eq!(be16(&answer(&mut big, &m, 0), 4), 0);
        let m = encode_request(5, METHOD_SET, LID, 16, 0x1, &[0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(be16(&answer(&mut big, &m, 0), 4), STATUS_NO_RECORDS);
    }

    #[test]
    fn a_vports_guid_is_a_duplicate() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        sa.set_vport(0, 0x5151);
        let a = answer(
            &mut sa,
            &set(1, 1, 0b11, [0x5151, 0x77, 0, 0, 0, 0, 0, 0]),
            0,
        );
        assert_eq!(be16(&a, 4), 0);
        assert_eq!(answered_guids(&a)[..2], [0, 0x77]);
        assert_eq!((sa.record(8), sa.record(9)), (0, 0x77));
        sa.set_vport(0, 0);
        answer(&mut sa, &set(2, 1, 0b1, [0x5151, 0, 0, 0, 0, 0, 0, 0]), 0);
        assert_eq!(sa.record(8), 0x5151);
        sa.set_vport(MAX_VPORTS, 0x9);
    }

    #[test]
    fn gid_0_of_block_0_is_read_only() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        sa.preset(0, 0xfeed);
        // The whole request is refused, the other entries asked included.
        let a = answer(
            &mut sa,
            &set(1, 0, 0b11, [0xbad, 0x77, 0, 0, 0, 0, 0, 0]),
            0,
        );
        assert_eq!(be16(&a, 4), STATUS_REQ_INVALID);
        let m = encode_request(2, METHOD_DELETE, LID, 0, 0b1, &[0; 8]);
        assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_REQ_INVALID);
        assert_eq!((sa.record(0), sa.record(1)), (0xfeed, 0));
        // GUID 0 of another block is an alias like any other.
        answer(&mut sa, &set(3, 1, 0b1, [0x88, 0, 0, 0, 0, 0, 0, 0]), 0);
        assert_eq!(sa.record(8), 0x88);
    }

    #[test]
    fn duplicates_are_not_set_and_held_guids_are_kept() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        sa.preset(0, 0xfeed);
        answer(&mut sa, &set(1, 0, 0b110, [0, 0x77, 0, 0, 0, 0, 0, 0]), 0);
        assert_eq!((sa.record(1), sa.record(2)), (0x77, 0x102));
        // 0x77 again at entry 3, and the port's own GUID at entry 4: not
        // set, the answer shows what the entries hold.
        let a = answer(
            &mut sa,
            &set(2, 0, 0b11000, [0, 0, 0, 0x77, 0xfeed, 0, 0, 0]),
            0,
        );
        assert_eq!(be16(&a, 4), 0);
        assert_eq!(answered_guids(&a)[3..5], [0, 0]);
        assert_eq!((sa.record(3), sa.record(4)), (0, 0));
        // The same GUID at the same entry is no duplicate.
        let a = answer(&mut sa, &set(3, 0, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), 0);
        assert_eq!(answered_guids(&a)[1], 0x77);
        // Asking for a GUID where one is held keeps it.
        let a = answer(&mut sa, &set(4, 0, 0b10, [0; 8]), 0);
        assert_eq!(answered_guids(&a)[1], 0x77);
        // All ones is a GUID like another (OpenSM checks nothing more);
        // deleting is DELETE's.
        answer(
            &mut sa,
            &set(5, 0, 0b100000, [0, 0, 0, 0, 0, u64::MAX, 0, 0]),
            0,
        );
        assert_eq!(sa.record(5), u64::MAX);
        answer(
            &mut sa,
            &encode_request(6, METHOD_DELETE, LID, 0, 0b100000, &[0; 8]),
            0,
        );
        assert_eq!(sa.record(5), 0);
    }

    #[test]
    fn get_answers_one_record_as_opensm_matches_it() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        sa.preset(0, 0xfeed);
        answer(&mut sa, &set(1, 1, 0b1, [0x88, 0, 0, 0, 0, 0, 0, 0]), 0);
        let get = |tid, lid, block, mask, guids: [u64; 8]| {
            encode_request(tid, METHOD_GET, lid, block, mask, &guids)
        };
        let a = answer(&mut sa, &get(10, LID, 1, 0, [0; 8]), 0);
        assert_eq!((a[3], be16(&a, 4)), (METHOD_GET_RESP, 0));
        assert_eq!(answered_guids(&a)[0], 0x88);
        // GUID 0 of block 0 given: it must be the port's.
        let a = answer(
            &mut sa,
            &get(11, LID, 0, 0b1, [0xfeed, 0, 0, 0, 0, 0, 0, 0]),
            0,
        );
        assert_eq!((be16(&a, 4), answered_guids(&a)[0]), (0, 0xfeed));
        let a = answer(
            &mut sa,
            &get(12, LID, 0, 0b1, [0xbad, 0, 0, 0, 0, 0, 0, 0]),
            0,
        );
        assert_eq!(be16(&a, 4), STATUS_NO_RECORDS);
        // Another GUID given: only 0 matches.
        let a = answer(
            &mut sa,
            &get(13, LID, 1, 0b10, [0, 0x5, 0, 0, 0, 0, 0, 0]),
            0,
        );
        assert_eq!(be16(&a, 4), STATUS_NO_RECORDS);
        // Another LID, a block past the port, or no block (every block).
        assert_eq!(
            be16(&answer(&mut sa, &get(14, LID + 1, 1, 0, [0; 8]), 0), 4),
            STATUS_NO_RECORDS
        );
        assert_eq!(
            be16(&answer(&mut sa, &get(15, LID, 16, 0, [0; 8]), 0), 4),
            STATUS_NO_RECORDS
        );
        let m = keys_only(get(16, LID, 1, 0, [0; 8]), COMP_MASK_LID);
        assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_TOO_MANY_RECORDS);
        // GetTable needs RMPP: not served here.
        let mut m = get(17, LID, 1, 0, [0; 8]);
        m[3] = 0x12;
        assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_UNSUP_METHOD_ATTR);
    }

    #[test]
    fn class_port_info() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        let mut m = [0u8; MAD_LEN];
        m[..4].copy_from_slice(&[1, 3, 2, METHOD_GET]);
        put64(&mut m, 8, 99);
        put16(&mut m, 16, ATTR_CLASS_PORT_INFO);
        let a = answer(&mut sa, &m, 0);
        assert_eq!((a[3], be16(&a, 4), be64(&a, 8)), (METHOD_GET_RESP, 0, 99));
        assert_eq!(&a[SA_DATA..SA_DATA + 2], &[1, 2]);
    }

    #[test]
    fn the_log_keeps_the_latest() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        for tid in 0..(LOG_LEN as u64 + 10) {
            answer(&mut sa, &set(tid, 0, 1 << 1, [0; 8]), tid);
        }
        let tids: [u64; 2] = {
            let mut it = sa.log().map(|e| e.tid);
            [it.next().unwrap(), it.last().unwrap()]
        };
        assert_eq!(tids, [10, LOG_LEN as u64 + 9]);
        assert_eq!(sa.log().count(), LOG_LEN);
    }

    #[test]
    fn the_port_is_programmed_after_the_answer_and_can_be_held() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        sa.preset(0, 0xfeed);
        assert_eq!(
            parse_command(b"program hold\n"),
            Some(SaCommand::HoldProgramming(true))
        );
        assert_eq!(
            parse_command(b"program now"),
            Some(SaCommand::HoldProgramming(false))
        );
        for bad in [&b"program"[..], b"program later", b"program now now"] {
            assert_eq!(parse_command(bad), None, "{:?}", bad);
        }
        sa.command(SaCommand::HoldProgramming(true));
        assert!(sa.programming_held());
        // Answered from the SM's records, the port not programmed yet.
        let out = answer(&mut sa, &set(1, 0, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), 0);
        assert_eq!(answered_guids(&out)[1], 0x77);
        assert_eq!(sa.record(1), 0x77);
        assert_eq!(sa.guid(1), 0);
        assert_eq!(sa.guid(0), 0xfeed);
        assert_eq!(sa.changes(), 0);
        // Programmed at once, and from then on at each change.
        sa.command(SaCommand::HoldProgramming(false));
        assert_eq!(sa.guid(1), 0x77);
        assert_eq!(sa.changes(), 1);
        answer(&mut sa, &set(2, 0, 0b100, [0, 0, 0x88, 0, 0, 0, 0, 0]), 0);
        assert_eq!(sa.guid(2), 0x88);
        assert_eq!(sa.changes(), 2);
        // Releasing with nothing new changes nothing.
        sa.command(SaCommand::HoldProgramming(true));
        sa.command(SaCommand::HoldProgramming(false));
        assert_eq!(sa.changes(), 2);
    }

    #[test]
    fn commands_parse_and_refuse() {
        assert_eq!(
            parse_command(b"accept\n"),
            Some(SaCommand::Mode(SaMode::Accept))
        );
        assert_eq!(
            parse_command(b"silent"),
            Some(SaCommand::Mode(SaMode::Silent))
        );
        assert_eq!(
            parse_command(b"port_down\n"),
            Some(SaCommand::Mode(SaMode::PortDown))
        );
        assert_eq!(
            parse_command(b"status 28\n"),
            Some(SaCommand::Mode(SaMode::Status(28)))
        );
        assert_eq!(
            parse_command(b"decline 127 3\n"),
            Some(SaCommand::Decline {
                entry: 127,
                times: 3
            })
        );
        assert_eq!(parse_command(b"clear_log"), Some(SaCommand::ClearLog));
        for bad in [
            &b""[..],
            b"\n",
            b"accept now",
            b"status",
            b"status 0",
            b"status 65536",
            b"status 0x1c",
            b"decline 128 1",
            b"decline 5",
            b"decline 5 256",
            b"decline 5 1 2",
            b"Accept",
            b"accept\n\n",
        ] {
            assert_eq!(parse_command(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn commands_act_and_changes_count() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        sa.preset(0, 0xfeed);
        assert_eq!(sa.guid(0), 0xfeed);
        assert_eq!(sa.changes(), 0);
        sa.command(SaCommand::Decline { entry: 3, times: 1 });
        assert_eq!(sa.declines_left(3), 1);
        // A declined entry and an unchanged one are no change; an
        // assignment is.
        answer(&mut sa, &set(1, 0, 0b1000, [0; 8]), 0);
        assert_eq!(sa.changes(), 0);
        answer(&mut sa, &set(2, 0, 0b1000, [0; 8]), 0);
        assert_eq!(sa.changes(), 1);
        answer(&mut sa, &set(3, 0, 0b1000, [0, 0, 0, 0x103, 0, 0, 0, 0]), 0);
        assert_eq!(sa.changes(), 1);
        sa.command(SaCommand::Mode(SaMode::Silent));
        assert_eq!(sa.mode(), SaMode::Silent);
        assert_eq!(sa.log().count(), 3);
        sa.command(SaCommand::ClearLog);
        assert_eq!(sa.log().count(), 0);
        // A request answered before the log was cleared is a new one now.
        sa.command(SaCommand::Mode(SaMode::Accept));
        assert!(answers(&mut sa, &set(2, 0, 0b1000, [0; 8]), 5));
        assert_eq!(sa.log().next().map(|e| e.copies), Some(1));
    }

    #[test]
    fn totals_count_requests_and_copies_beyond_the_log() {
        let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
        for tid in 0..100u64 {
            let m = set(tid, 0, 0b10, [0; 8]);
            answer(&mut sa, &m, tid);
            if tid % 10 == 0 {
                answer(&mut sa, &m, tid);
            }
        }
        assert_eq!(sa.totals(), (100, 110));
        assert_eq!(sa.log().count(), LOG_LEN);
        // What is not for the SA is not counted.
        let mut other = [0u8; MAD_LEN];
        other[0] = 1;
        other[1] = 4;
        assert!(!answers(&mut sa, &other, 200));
        assert_eq!(sa.totals(), (100, 110));
    }
}
