// SPDX-License-Identifier: GPL-2.0

//! The rules of mlx_ext's atomic API for kernel ULPs
//! (`include/mlx_ext/mlx_ext.h`, `Documentation/ulp-api.rst`): which QP
//! create flags are accepted, how a request becomes work requests on a
//! device, what each failure returns, and the per-QP guess cache of the
//! emulation. Pure, so that every rule is tested on the host; the kernel
//! side only carries the decisions out.

use crate::atomics::wr::{AtomicOp, WcStatus, WrOpcode};
use crate::atomics::{Emulation, MaskedOp};
use crate::caps::{AtomicCap, MaskedMode, Record};

/// The API's version, `MLX_EXT_API_VERSION` in the header: the major number
/// changes when an existing call or structure changes, the minor one when
/// something is added.
pub const API_VERSION: (u32, u32) = (1, 5);

/// `MLX_EXT_ATOMIC_FENCE`, a bit of `struct mlx_ext_atomic`'s `flags`
/// (since 1.3): the operation's work requests carry `IB_SEND_FENCE`.
pub const ATOMIC_FENCE: u32 = 1 << 0;

/// Every bit of `flags` this version knows.
pub const ATOMIC_FLAGS: u32 = ATOMIC_FENCE;

/// Why a call that takes a structure is refused before it looks at it:
/// the ULP was built against another header (`MLX_EXT_API_VERSION` and the
/// structure's `sizeof` travel with each such call, since 1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbiRefusal {
    /// Another major version: the calls or structures changed.
    Major,
    /// A newer minor version than this module's: the ULP may use what
    /// this module does not have.
    Newer,
    /// The structure's size differs from this module's.
    Size,
}

impl AbiRefusal {
    /// The code the C wrappers get (`mlx_ext_rs_abi_check`): 0 is "fine".
    pub const fn code(self) -> i32 {
        match self {
            Self::Major => 1,
            Self::Newer => 2,
            Self::Size => 3,
        }
    }
}

/// Checks what a ULP's call carries: `version`, the `MLX_EXT_API_VERSION`
/// it was built with, and `size`, its header's `sizeof` of the structure
/// this module knows as `ours` bytes. Within one major version the
/// structures have kept their size so far; when one grows, the versioned
/// call learns to take the older size.
pub const fn abi_check(version: u32, size: usize, ours: usize) -> Result<(), AbiRefusal> {
    let (major, minor) = API_VERSION;
    if version >> 16 != major {
        Err(AbiRefusal::Major)
    } else if version & 0xffff > minor {
        Err(AbiRefusal::Newer)
    } else if size != ours {
        Err(AbiRefusal::Size)
    } else {
        Ok(())
    }
}

/// `MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY`: bit 27 of `ib_qp_init_attr.create_flags`,
/// in the range upstream reserves for drivers (26..=31), clear of the bits
/// mlx4 (26, 30, 31: `drivers/infiniband/hw/mlx4/mlx4_ib.h:177,188-189`)
/// and mlx5 (26: `drivers/infiniband/hw/mlx5/mlx5_ib.h:345`) take there.
pub const QP_CREATE_ATOMIC_BE_REPLY: u32 = 1 << 27;

/// The create flags bits ib_core reserves for drivers
/// (`IB_QP_CREATE_RESERVED_START` to `IB_QP_CREATE_RESERVED_END`).
pub const DRIVER_RESERVED_FLAGS: u32 = 0xfc00_0000;

/// The errnos the API's rules return: the one copy in [`crate::errno`].
pub use crate::errno;

/// What mlx_ext remembers of a QP's extended create flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpFlags {
    /// The ULP created the QP with [`QP_CREATE_ATOMIC_BE_REPLY`]: it accepts
    /// a device that replies big-endian (mlx_ext converts).
    pub be_reply: bool,
}

/// Why a call that makes or takes a QP refuses it (each `EINVAL`): what
/// the log says, after the device's name and the call's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpRefusal {
    /// Not an RC QP.
    NotRc,
    /// `max_send_wr` plus the operations kept in flight overflows.
    SendCapOverflow,
    /// The send CQ is not in the `ib_cqe` model.
    SendCqModel,
    /// A group's member belongs to another device.
    OtherDevice,
    /// A group's QPs do not share one send CQ.
    GroupSendCq,
    /// `mlx_ext_create_qp` with an SRQ.
    Srq,
    /// `mlx_ext_create_qp` with CQs not from `ib_alloc_cq()`, or polled
    /// directly.
    CqsUnusable,
    /// `MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY` on a device that replies in host
    /// order.
    BeReplyNotBe,
}

impl QpRefusal {
    /// The errno, positive: the call returns its negation.
    pub const fn errno(self) -> i32 {
        errno::EINVAL
    }

    /// What was wrong, in words.
    pub const fn text(self) -> &'static str {
        match self {
            Self::NotRc => "only RC QPs carry atomics",
            Self::SendCapOverflow => "max_send_wr + max_ops does not fit in 32 bits",
            Self::SendCqModel => {
                "the send CQ must come from ib_alloc_cq() or the CQ pool (not ib_create_cq() with a comp_handler)"
            }
            Self::OtherDevice => "the member is a QP of another device",
            Self::GroupSendCq => "the group's QPs must share one send CQ",
            Self::Srq => "QPs with an SRQ are not supported",
            Self::CqsUnusable => {
                "the send and receive CQs must come from ib_alloc_cq() and not be IB_POLL_DIRECT"
            }
            Self::BeReplyNotBe => {
                "MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY on a device that does not reply big-endian"
            }
        }
    }
}

/// Checks the create flags a ULP gives for a QP on a device with record
/// `record`. Returns the flags to pass to the driver (mlx_ext's own taken
/// out: no driver ever sees them) and what to remember, or why not:
/// [`QP_CREATE_ATOMIC_BE_REPLY`] on a device that is not `hca_reply_be`
/// (`Documentation/atomics.rst`, "Byte order of the response").
pub fn create_flags(record: &Record, flags: u32) -> Result<(u32, QpFlags), QpRefusal> {
    let be_reply = flags & QP_CREATE_ATOMIC_BE_REPLY != 0;
    if be_reply && record.atomic_cap != AtomicCap::HcaReplyBe {
        return Err(QpRefusal::BeReplyNotBe);
    }
    Ok((flags & !QP_CREATE_ATOMIC_BE_REPLY, QpFlags { be_reply }))
}

/// `MLX_EXT_QP_ATOMIC_BE_REPLY`, the flag of `mlx_ext_attach_qp`.
pub const ATTACH_ATOMIC_BE_REPLY: u32 = 1 << 0;

/// Why `mlx_ext_attach_qp` refuses its flags (each `EINVAL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachRefusal {
    /// A bit the header does not define.
    UnknownFlags,
    /// `MLX_EXT_QP_ATOMIC_BE_REPLY` on a device that replies in host order.
    BeReplyNotBe,
    /// No `MLX_EXT_QP_ATOMIC_BE_REPLY` on a device that replies big-endian.
    BeReplyMissing,
}

impl AttachRefusal {
    /// What the log says.
    pub fn text(self) -> &'static str {
        match self {
            Self::UnknownFlags => "flags other than MLX_EXT_QP_ATOMIC_BE_REPLY",
            Self::BeReplyNotBe => {
                "MLX_EXT_QP_ATOMIC_BE_REPLY on a device that does not reply big-endian"
            }
            Self::BeReplyMissing => {
                "the device replies big-endian: attach with MLX_EXT_QP_ATOMIC_BE_REPLY"
            }
        }
    }
}

/// Checks the flags of `mlx_ext_attach_qp` on a device with record
/// `record`. Unlike a QP mlx_ext creates, which may do without atomics on a
/// big-endian-reply device, a QP a ULP attaches is attached for atomics: the
/// flag must be given exactly when the device replies big-endian.
pub fn attach_flags(record: &Record, flags: u32) -> Result<QpFlags, AttachRefusal> {
    if flags & !ATTACH_ATOMIC_BE_REPLY != 0 {
        return Err(AttachRefusal::UnknownFlags);
    }
    let be_reply = flags & ATTACH_ATOMIC_BE_REPLY != 0;
    match (be_reply, record.atomic_cap == AtomicCap::HcaReplyBe) {
        (true, false) => Err(AttachRefusal::BeReplyNotBe),
        (false, true) => Err(AttachRefusal::BeReplyMissing),
        _ => Ok(QpFlags { be_reply }),
    }
}

/// The send queue capabilities `mlx_ext_init_qp_attr` asks for: the ULP's
/// `max_send_wr` plus one work request per operation kept in flight (each
/// has at most one posted at a time), and at least one scatter/gather
/// entry (the reply buffer), unless the sum does not fit.
pub fn init_send_cap(
    max_send_wr: u32,
    max_send_sge: u32,
    max_ops: u32,
) -> Result<(u32, u32), QpRefusal> {
    let wr = max_send_wr
        .checked_add(max_ops)
        .ok_or(QpRefusal::SendCapOverflow)?;
    Ok((wr, max_send_sge.max(1)))
}

/// The operation a ULP asks for (`enum mlx_ext_atomic_opcode`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    /// `MLX_EXT_ATOMIC_CMP_SWP`.
    CmpSwap = 0,
    /// `MLX_EXT_ATOMIC_FETCH_ADD`.
    FetchAdd = 1,
    /// `MLX_EXT_MASKED_CMP_SWP`.
    MaskedCmpSwap = 2,
    /// `MLX_EXT_MASKED_FETCH_ADD`.
    MaskedFetchAdd = 3,
}

impl Opcode {
    /// Every opcode, in numeric order.
    pub const ALL: [Self; 4] = [
        Self::CmpSwap,
        Self::FetchAdd,
        Self::MaskedCmpSwap,
        Self::MaskedFetchAdd,
    ];

    /// Converts the header's value.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|o| *o as u32 == raw)
    }

    /// The work request opcode of the operation.
    pub const fn wr_opcode(self) -> WrOpcode {
        match self {
            Self::CmpSwap => WrOpcode::AtomicCmpAndSwp,
            Self::FetchAdd => WrOpcode::AtomicFetchAndAdd,
            Self::MaskedCmpSwap => WrOpcode::MaskedAtomicCmpAndSwp,
            Self::MaskedFetchAdd => WrOpcode::MaskedAtomicFetchAndAdd,
        }
    }
}

/// A request as a ULP fills `struct mlx_ext_atomic`: the operands have the
/// names and meaning of `struct ib_atomic_wr` (the table of
/// `Documentation/atomics.rst`, "Semantics").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// `enum mlx_ext_atomic_opcode`, unchecked.
    pub opcode: u32,
    /// The operand size in bytes.
    pub size: u32,
    /// The remote word's address.
    pub remote_addr: u64,
    /// The remote key of the region holding it.
    pub rkey: u32,
    /// Compare (CAS, masked CAS) or add (FA, masked FA).
    pub compare_add: u64,
    /// Compare mask (masked CAS) or field boundary (masked FA).
    pub compare_add_mask: u64,
    /// Swap value (CAS, masked CAS).
    pub swap: u64,
    /// Swap mask (masked CAS).
    pub swap_mask: u64,
    /// `MLX_EXT_ATOMIC_*` bits (since 1.3).
    pub flags: u32,
    /// The structure's reserved field: must be zero.
    pub reserved: u32,
}

impl Request {
    /// Whether the operation's work requests carry `IB_SEND_FENCE`.
    pub const fn fence(&self) -> bool {
        self.flags & ATOMIC_FENCE != 0
    }

    /// The operation with its operands, if the opcode is one of the four.
    pub fn op(&self) -> Option<AtomicOp> {
        let opcode = Opcode::from_raw(self.opcode)?;
        AtomicOp::from_wr(
            opcode.wr_opcode(),
            self.compare_add,
            self.compare_add_mask,
            self.swap,
            self.swap_mask,
        )
    }
}

/// Why a request is refused at post time, before any work request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not one of the four opcodes (`EINVAL`).
    BadOpcode,
    /// An operand size other than 4 or 8 bytes (`EINVAL`).
    BadSize,
    /// A 4-byte operation's operand does not fit in 32 bits (`EINVAL`).
    WideOperand,
    /// The remote address is not aligned to the operand size (`EINVAL`).
    Misaligned,
    /// The device replies big-endian and the QP was created without
    /// `MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY` (`EOPNOTSUPP`).
    BeReplyNotAccepted,
    /// The driver posts no standard atomics for kernel ULPs (`EOPNOTSUPP`).
    NoStandard,
    /// Masked atomics are unavailable on the device (`EOPNOTSUPP`).
    NoMasked,
    /// A bit of `flags` this version does not know (`EINVAL`).
    UnknownFlags,
    /// A reserved field is not zero (`EINVAL`).
    Reserved,
}

impl Refusal {
    /// The errno, positive: the call returns its negation.
    pub const fn errno(self) -> i32 {
        match self {
            Self::BadOpcode
            | Self::BadSize
            | Self::Misaligned
            | Self::UnknownFlags
            | Self::Reserved
            | Self::WideOperand => errno::EINVAL,
            Self::BeReplyNotAccepted | Self::NoStandard | Self::NoMasked => errno::EOPNOTSUPP,
        }
    }

    /// What was wrong, in words.
    pub const fn text(self) -> &'static str {
        match self {
            Self::BadOpcode => "unknown opcode",
            Self::BadSize => "operand size must be 4 or 8",
            Self::WideOperand => "a 4-byte operation's operand does not fit in 32 bits",
            Self::Misaligned => "remote address not aligned to the operand size",
            Self::BeReplyNotAccepted => {
                "the device replies big-endian: create the QP with MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY"
            }
            Self::NoStandard => "the driver posts no atomics for kernel ULPs",
            Self::NoMasked => "masked atomics are unavailable on this device",
            Self::UnknownFlags => "unknown bits in flags",
            Self::Reserved => "a reserved field is not zero",
        }
    }
}

/// How a request is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// One work request with the request's own opcode and operands.
    Direct(AtomicOp),
    /// A masked operation emulated with compare-and-swap work requests.
    Emulate(MaskedOp),
}

/// The status of an emulated operation that waited for its word's next
/// compare-and-swap when the one in flight failed with `status` (a
/// negative errno): it never reached the wire. Where `status` leaves the
/// outcome unknown (`ECANCELED` flushed, `ETIMEDOUT` retries exceeded), the
/// waiting one's is known: not begun, `ESHUTDOWN` if a detach or destroy
/// stopped it, `ECONNABORTED` otherwise. Any other status already means
/// "not carried out" and is passed on.
pub const fn not_begun(status: i32, closing: bool) -> i32 {
    if status == -errno::ECANCELED || status == -errno::ETIMEDOUT {
        if closing {
            -errno::ESHUTDOWN
        } else {
            -errno::ECONNABORTED
        }
    } else {
        status
    }
}

/// Where a 4-byte operation's operand lies in its aligned 8-byte word: the
/// word's bits `shift..shift + 32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Half {
    /// 0 or 32.
    pub shift: u32,
}

fn check_header(req: &Request) -> Result<(), Refusal> {
    if req.flags & !ATOMIC_FLAGS != 0 {
        return Err(Refusal::UnknownFlags);
    }
    if req.reserved != 0 {
        return Err(Refusal::Reserved);
    }
    Ok(())
}

/// A 4-byte operation (MLNX_OFED's other size) as the 8-byte masked
/// operation on its aligned word that has the same effect on its 4 bytes
/// and leaves the other 4 alone, and the half whose bits are its response;
/// an 8-byte request unchanged. The 4 bytes at `remote_addr` are the word's
/// low half on a little-endian host (`host_big_endian` false) when
/// `remote_addr` is 8-aligned, its high half at `remote_addr + 4`: the
/// adapter computes on the word in host order, as every device whose reply
/// is in host order (or converted to it) does.
///
/// Standard operations become masked ones: compare-and-swap compares and
/// swaps the half only; fetch-and-add adds within the half (a field
/// boundary at its top bit, and at the other half's, which adds 0). Masked
/// ones keep the low 32 bits of their masks and field boundaries (the
/// higher ones are ignored), shifted, with the half's top bit a boundary
/// (a 32-bit add carries nothing out). The values (compare, add, swap)
/// must fit in 32 bits.
pub fn widen(req: &Request, host_big_endian: bool) -> Result<(Request, Option<Half>), Refusal> {
    if req.size != 4 {
        return Ok((*req, None));
    }
    check_header(req)?;
    let opcode = Opcode::from_raw(req.opcode).ok_or(Refusal::BadOpcode)?;
    if req.remote_addr % 4 != 0 {
        return Err(Refusal::Misaligned);
    }
    // The values must fit in 32 bits; of the masks only the low 32 bits
    // are read, as a 32-bit masked segment holds no more: UCX sets
    // `swap_mask = UINT64_MAX` and the XOR boundary `UINT64_MAX` for its
    // 4-byte operations (rc_verbs_impl.h:230-236, rc_mlx5.inl:1855-1869),
    // and means "every bit".
    let fits = |v: u64| v <= u64::from(u32::MAX);
    let low = |v: u64| v & u64::from(u32::MAX);
    let values = match opcode {
        Opcode::CmpSwap | Opcode::MaskedCmpSwap => [req.compare_add, req.swap],
        Opcode::FetchAdd | Opcode::MaskedFetchAdd => [req.compare_add, 0],
    };
    if !values.iter().all(|&v| fits(v)) {
        return Err(Refusal::WideOperand);
    }
    let upper = (req.remote_addr % 8 == 4) != host_big_endian;
    let shift = if upper { 32 } else { 0 };
    let half = u64::from(u32::MAX) << shift;
    let tops = 1 << 31 | 1 << 63;
    let (opcode, compare_add, compare_add_mask, swap, swap_mask) = match opcode {
        Opcode::CmpSwap => (
            Opcode::MaskedCmpSwap,
            req.compare_add << shift,
            half,
            req.swap << shift,
            half,
        ),
        Opcode::FetchAdd => (Opcode::MaskedFetchAdd, req.compare_add << shift, tops, 0, 0),
        Opcode::MaskedCmpSwap => (
            Opcode::MaskedCmpSwap,
            req.compare_add << shift,
            low(req.compare_add_mask) << shift,
            req.swap << shift,
            low(req.swap_mask) << shift,
        ),
        Opcode::MaskedFetchAdd => (
            Opcode::MaskedFetchAdd,
            req.compare_add << shift,
            low(req.compare_add_mask) << shift | tops,
            0,
            0,
        ),
    };
    let wide = Request {
        opcode: opcode as u32,
        size: 8,
        remote_addr: req.remote_addr & !7,
        compare_add,
        compare_add_mask,
        swap,
        swap_mask,
        ..*req
    };
    Ok((wide, Some(Half { shift })))
}

/// The response of an operation from its word's `value`: the half's bits
/// for a 4-byte operation ([`widen`]), the word otherwise.
pub const fn narrow(value: u64, half: Option<Half>) -> u64 {
    match half {
        Some(h) => (value >> h.shift) & 0xffff_ffff,
        None => value,
    }
}

/// Decides how `req` (8-byte, as [`widen`] leaves it) is carried out on a
/// QP with `flags` of a device whose record is `record` (after any runtime
/// downgrade), or why it is refused.
pub fn plan(record: &Record, flags: QpFlags, req: &Request) -> Result<Plan, Refusal> {
    check_header(req)?;
    let op = req.op().ok_or(Refusal::BadOpcode)?;
    if req.size != 8 {
        return Err(Refusal::BadSize);
    }
    if req.remote_addr % 8 != 0 {
        return Err(Refusal::Misaligned);
    }
    if record.atomic_cap == AtomicCap::HcaReplyBe && !flags.be_reply {
        return Err(Refusal::BeReplyNotAccepted);
    }
    match op {
        AtomicOp::CmpSwap { .. } if record.posts.standard => Ok(Plan::Direct(op)),
        AtomicOp::FetchAdd { .. } if record.posts.fetch_add => Ok(Plan::Direct(op)),
        // A fetch-and-add is a masked one with a single 64-bit field.
        AtomicOp::FetchAdd { add } if record.posts.standard => {
            Ok(Plan::Emulate(MaskedOp::FetchAdd {
                add,
                field_boundary: 0,
            }))
        }
        AtomicOp::CmpSwap { .. } | AtomicOp::FetchAdd { .. } => Err(Refusal::NoStandard),
        AtomicOp::MaskedCmpSwap {
            compare,
            compare_mask,
            swap,
            swap_mask,
        } => masked(
            record,
            op,
            MaskedOp::CmpSwap {
                compare,
                compare_mask,
                swap,
                swap_mask,
            },
        ),
        AtomicOp::MaskedFetchAdd {
            add,
            field_boundary,
        } => masked(
            record,
            op,
            MaskedOp::FetchAdd {
                add,
                field_boundary,
            },
        ),
    }
}

fn masked(record: &Record, op: AtomicOp, emulated: MaskedOp) -> Result<Plan, Refusal> {
    match record.mode {
        MaskedMode::Native => Ok(Plan::Direct(op)),
        MaskedMode::Emulated => Ok(Plan::Emulate(emulated)),
        MaskedMode::Unavailable => Err(Refusal::NoMasked),
    }
}

/// The compare-and-swap operands of an emulation's next work request.
pub fn cas_op(emulation: &Emulation) -> AtomicOp {
    let cas = emulation.cas();
    AtomicOp::CmpSwap {
        compare: cas.compare,
        swap: cas.swap,
    }
}

/// Combining: several emulated operations of one QP on one word carried out
/// by one compare-and-swap. From the guess `g`, the operations are applied
/// in the order they were posted: the compare-and-swap is
/// `CAS(g, f_n(... f_1(g)))`. When it succeeds, the word went from `g` to
/// the result in one atomic step, and the operations are linearized one
/// after the other at that instant: operation `i` answers the value the
/// operations before it left, exactly as if they had run alone in that
/// order. When it fails, the returned value is the next guess and the walk
/// starts again (more operations may join).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchWalk {
    value: u64,
}

impl BatchWalk {
    /// Starts from the guess.
    pub const fn new(guess: u64) -> Self {
        Self { value: guess }
    }

    /// Applies the next operation; returns its response (the value before
    /// it).
    pub fn step(&mut self, op: MaskedOp) -> u64 {
        let before = self.value;
        self.value = op.apply(before);
        before
    }

    /// The word's value after the operations so far: the swap value of the
    /// batch's compare-and-swap.
    pub const fn value(&self) -> u64 {
        self.value
    }
}

/// The bound on compare-and-swaps of one emulated operation; past it the
/// operation fails with `EAGAIN` and has not taken place.
pub const MAX_ATTEMPTS: u32 = 1024;

/// The errno a ULP gets for a work completion status (0 for success).
pub fn completion_errno(status: u32) -> i32 {
    match WcStatus::from_raw(status) {
        Some(WcStatus::Success) => 0,
        Some(WcStatus::WrFlushErr) => errno::ECANCELED,
        Some(WcStatus::RemAccessErr) => errno::EACCES,
        Some(WcStatus::RemInvReqErr) | Some(WcStatus::RemOpErr) => errno::EREMOTEIO,
        Some(WcStatus::LocLenErr) => errno::EINVAL,
        Some(WcStatus::LocProtErr) | Some(WcStatus::LocAccessErr) => errno::EFAULT,
        Some(WcStatus::RetryExcErr)
        | Some(WcStatus::RnrRetryExcErr)
        | Some(WcStatus::RespTimeoutErr) => errno::ETIMEDOUT,
        _ => errno::EIO,
    }
}

/// The number of entries of a [`GuessCache`].
pub const GUESS_ENTRIES: usize = 64;

/// What one QP last learnt of the remote words it operated on: for each
/// word (by rkey and address), the value it held right after the QP's last
/// atomic on it. An emulated operation starts from this guess, so that on a
/// word nobody else changed it costs one compare-and-swap; a wrong or
/// missing guess costs one more (the failed CAS returns the real value).
///
/// Direct-mapped: a word may evict another, which only costs a round trip.
/// A QP talks to one remote node, so rkey and address name a word.
#[derive(Clone, Debug)]
pub struct GuessCache {
    slots: [Option<(u32, u64, u64)>; GUESS_ENTRIES],
}

impl Default for GuessCache {
    fn default() -> Self {
        Self::new()
    }
}

impl GuessCache {
    /// An empty cache.
    pub const fn new() -> Self {
        Self {
            slots: [None; GUESS_ENTRIES],
        }
    }

    /// The word's slot: consecutive words of one region never collide
    /// (up to [`GUESS_ENTRIES`] of them), and regions are spread by rkey.
    fn slot(rkey: u32, addr: u64) -> usize {
        let spread = u64::from(rkey).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58;
        ((addr >> 3) ^ spread) as usize % GUESS_ENTRIES
    }

    /// The guess for the word at `addr` under `rkey`, if one is known.
    pub fn get(&self, rkey: u32, addr: u64) -> Option<u64> {
        match self.slots.get(Self::slot(rkey, addr)) {
            Some(Some((k, a, v))) if *k == rkey && *a == addr => Some(*v),
            _ => None,
        }
    }

    /// Records that the word at `addr` under `rkey` holds `value`.
    pub fn put(&mut self, rkey: u32, addr: u64, value: u64) {
        if let Some(s) = self.slots.get_mut(Self::slot(rkey, addr)) {
            *s = Some((rkey, addr, value));
        }
    }

    /// Forgets the word (its operation failed: the value is unknown).
    pub fn forget(&mut self, rkey: u32, addr: u64) {
        if let Some(s) = self.slots.get_mut(Self::slot(rkey, addr)) {
            if matches!(s, Some((k, a, _)) if *k == rkey && *a == addr) {
                *s = None;
            }
        }
    }
}
