// SPDX-License-Identifier: GPL-2.0

//! The rules of the simulated adapter's data path that need no kernel.
//!
//! The numeric values of every enum here are those of Linux 6.12's
//! `include/rdma/ib_verbs.h` (many derived from `include/uapi/rdma/
//! ib_user_verbs.h` and `ib_user_ioctl_verbs.h`), so that the kernel side can
//! convert with a plain `as u32` or `from_raw`.
//!
//! The responder's checks follow what a real RC adapter does, and rxe
//! (`drivers/infiniband/sw/rxe/rxe_resp.c`, `rxe_mr.c`, `rxe_comp.c`) as the
//! software reference: a failed check is a NAK, and the status here is the
//! one the *requester* finds in its completion.

use super::model::Model;
pub use crate::atomics::wr::{AtomicOp, WcOpcode, WcStatus, WrOpcode};
use crate::atomics::ReplyOrder;
use crate::caps::AtomicCap;

/// Memory access rights, as `enum ib_access_flags`.
///
/// Bits this type does not name are kept as they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Access(u32);

impl Access {
    /// `IB_ACCESS_LOCAL_WRITE`.
    pub const LOCAL_WRITE: Self = Self(1);
    /// `IB_ACCESS_REMOTE_WRITE`.
    pub const REMOTE_WRITE: Self = Self(1 << 1);
    /// `IB_ACCESS_REMOTE_READ`.
    pub const REMOTE_READ: Self = Self(1 << 2);
    /// `IB_ACCESS_REMOTE_ATOMIC`.
    pub const REMOTE_ATOMIC: Self = Self(1 << 3);
    /// `IB_ACCESS_MW_BIND`.
    pub const MW_BIND: Self = Self(1 << 4);
    /// `IB_ZERO_BASED`.
    pub const ZERO_BASED: Self = Self(1 << 5);
    /// `IB_ACCESS_ON_DEMAND`.
    pub const ON_DEMAND: Self = Self(1 << 6);
    /// `IB_ACCESS_HUGETLB`.
    pub const HUGETLB: Self = Self(1 << 7);
    /// `IB_ACCESS_FLUSH_GLOBAL`.
    pub const FLUSH_GLOBAL: Self = Self(1 << 8);
    /// `IB_ACCESS_FLUSH_PERSISTENT`.
    pub const FLUSH_PERSISTENT: Self = Self(1 << 9);
    /// `IB_ACCESS_RELAXED_ORDERING`: `IB_UVERBS_ACCESS_OPTIONAL_FIRST`, the
    /// first of the optional bits 20 to 29.
    pub const RELAXED_ORDERING: Self = Self(1 << 20);

    /// No rights at all.
    pub const fn empty() -> Self {
        Self(0)
    }

    /// Wraps an `int access_flags` as ib_core passes it, unknown bits included.
    pub const fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// Returns the bits, as ib_core takes them.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every right of `other` is in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The rights of both.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl core::ops::BitOr for Access {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        self.union(other)
    }
}

impl core::ops::BitOrAssign for Access {
    fn bitor_assign(&mut self, other: Self) {
        *self = self.union(other);
    }
}

/// A memory key (lkey or rkey) as hardware makes it: a 24-bit index into the
/// adapter's table of regions, and in the low 8 bits a variant that the
/// consumer changes at each fast registration, so that a stale key no longer
/// matches the region it once named.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Key(u32);

impl Key {
    /// The largest index a key can hold.
    pub const MAX_INDEX: u32 = 0x00ff_ffff;

    /// Makes the key `index << 8 | variant`. Bits of `index` above
    /// [`Key::MAX_INDEX`] do not fit and are dropped.
    pub const fn new(index: u32, variant: u8) -> Self {
        Self((index << 8) | variant as u32)
    }

    /// Wraps a key as it appears in a work request or an `ib_mr`.
    pub const fn from_raw(raw: u32) -> Self {
        Self(raw)
    }

    /// Returns the key as a work request or an `ib_mr` holds it.
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// Returns the index into the table of regions: the top 24 bits.
    pub const fn index(self) -> u32 {
        self.0 >> 8
    }

    /// Returns the variant: the low 8 bits.
    pub const fn variant(self) -> u8 {
        self.0.to_le_bytes()[0]
    }

    /// Returns the key with its variant replaced by `variant`, as
    /// `ib_update_fast_reg_key` does to an FRWR MR's keys.
    pub const fn with_variant(self, variant: u8) -> Self {
        Self((self.0 & !0xff) | variant as u32)
    }
}

/// The state of a memory region in the adapter's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionState {
    /// An FRWR MR allocated by `ib_alloc_mr` and not yet registered with
    /// `IB_WR_REG_MR`, or invalidated since: no access through its key.
    Free,
    /// Registered: its key grants the access of [`Region::access`].
    Valid,
}

/// A memory region as the responder's table holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// The region's current rkey, variant included.
    pub key: Key,
    /// The protection domain the region belongs to (any identifier the
    /// caller uses for PDs).
    pub pd: u32,
    /// The first address of the region in the requesters' address space.
    pub iova: u64,
    /// The length of the region in bytes.
    pub length: u64,
    /// The rights the region grants.
    pub access: Access,
    /// Whether the region is registered.
    pub state: RegionState,
}

impl Region {
    /// Returns the offset of `[iova, iova + len)` in the region, if the range
    /// lies wholly inside it. Never overflows, whatever the values: a range
    /// whose end would wrap past `u64::MAX` is outside every region.
    pub const fn offset_of(&self, iova: u64, len: u64) -> Option<u64> {
        // rxe's mr_check_range, in the same overflow-free form.
        if iova < self.iova || len > self.length {
            return None;
        }
        let offset = iova - self.iova;
        if offset > self.length - len {
            return None;
        }
        Some(offset)
    }
}

/// Where byte `offset` of a fast-registered region lies in its page list:
/// the index of the page and the offset in that page.
///
/// `ib_map_mr_sg` maps a region onto pages of `page_size` bytes (a power of
/// two), the first of which it starts `iova & (page_size - 1)` bytes into;
/// `pages` is how many there are. `None` if `page_size` is not a power of
/// two or the byte lies past the last page.
pub const fn locate(iova: u64, page_size: u64, pages: usize, offset: u64) -> Option<(usize, u64)> {
    if !page_size.is_power_of_two() {
        return None;
    }
    let shift = page_size.trailing_zeros();
    let Some(pos) = (iova & (page_size - 1)).checked_add(offset) else {
        return None;
    };
    let index = pos >> shift;
    if index >= pages as u64 {
        return None;
    }
    Some((index as usize, pos & (page_size - 1)))
}

/// The length of the word an atomic operates on.
pub const ATOMIC_LEN: u64 = 8;

/// Checks a remote access of `len` bytes at `iova` with rkey `rkey`, needing
/// the rights `need`, on a responder QP whose PD is `pd`. `region` is the
/// region the responder's table holds at `Key::from_raw(rkey).index()`, or
/// `None` if the slot is empty or out of the table.
///
/// Returns the offset of `iova` in the region, or the status the requester's
/// completion gets: `RemAccessErr` for every failure (rxe's
/// `RESPST_ERR_RKEY_VIOLATION`, a NAK "remote access error"): no region, a
/// key whose variant or index differs from the region's, another PD, a region
/// not registered, a right missing, or a range not wholly inside the region
/// (including one whose end wraps past `u64::MAX`).
///
/// A zero-length RDMA READ or WRITE checks nothing and returns `Ok(0)`
/// (IB spec C9-88: such a request need carry no valid address or rkey; rxe
/// does the same): the caller must not touch `region` then.
pub fn check_remote(
    region: Option<&Region>,
    rkey: u32,
    pd: u32,
    iova: u64,
    len: u64,
    need: Access,
) -> Result<u64, WcStatus> {
    if len == 0 {
        return Ok(0);
    }
    // rxe's lookup_mr: the whole key (variant included), the PD, the rights
    // and the state must all match.
    let region = match region {
        Some(r)
            if r.key.raw() == rkey
                && r.pd == pd
                && r.state == RegionState::Valid
                && r.access.contains(need) =>
        {
            r
        }
        _ => return Err(WcStatus::RemAccessErr),
    };
    region.offset_of(iova, len).ok_or(WcStatus::RemAccessErr)
}

/// Checks the target of an atomic (standard or masked): as [`check_remote`]
/// for the 8 bytes at `iova` with [`Access::REMOTE_ATOMIC`], then `iova` must
/// be 8-byte aligned.
///
/// A misaligned `iova` in a region that grants the access gives
/// `RemInvReqErr`: rxe's `rxe_mr_do_atomic_op` returns
/// `RESPST_ERR_MISALIGNED_ATOMIC`, which `rxe_responder` answers as a class C
/// error with NAK "invalid request" (`AETH_NAK_INVALID_REQ`), and the
/// requester's `rxe_comp.c` turns that NAK into `IB_WC_REM_INV_REQ_ERR`. rxe
/// checks the key, rights and range (in `check_rkey`) before alignment (in
/// `atomic_reply`), so a misaligned atomic that also fails those gets
/// `RemAccessErr`; the same order is kept here. (rxe tests the alignment of
/// the address within the page, which is that of `iova` when the region
/// starts at an 8-aligned address for an 8-aligned `iova`.)
pub fn check_atomic(
    region: Option<&Region>,
    rkey: u32,
    pd: u32,
    iova: u64,
) -> Result<u64, WcStatus> {
    let offset = check_remote(region, rkey, pd, iova, ATOMIC_LEN, Access::REMOTE_ATOMIC)?;
    if iova % ATOMIC_LEN != 0 {
        return Err(WcStatus::RemInvReqErr);
    }
    Ok(offset)
}

/// Returns the 8 bytes the adapter writes into the requester's SGE as the
/// response `old` of an atomic: in the host's order, or big-endian (most
/// significant byte first) for a device that replies big-endian.
pub const fn reply_bytes(old: u64, order: ReplyOrder) -> [u8; 8] {
    match order {
        ReplyOrder::Host => old.to_ne_bytes(),
        ReplyOrder::BigEndian => old.to_be_bytes(),
    }
}

/// Why `post_send` refused a work request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostError {
    /// The device does not execute this opcode (`EINVAL`, as rxe's "bad wr
    /// opcode for qp type").
    Inval,
}

impl PostError {
    /// Returns the Linux errno of the error, positive (`EINVAL`):
    /// `post_send` returns its negation.
    pub const fn errno(&self) -> i32 {
        match self {
            Self::Inval => crate::errno::EINVAL,
        }
    }

    /// Returns a short message for the kernel log.
    pub const fn message(&self) -> &'static str {
        match self {
            Self::Inval => "opcode not supported by this model",
        }
    }
}

/// Checks at post time that `model` executes `opcode`: a model without masked
/// atomics refuses the masked opcodes (as rxe does), and one whose
/// `atomic_cap` is `none` refuses the standard atomics too.
pub fn post_check(model: &Model, opcode: WrOpcode) -> Result<(), PostError> {
    if opcode.is_masked_atomic() && !model.masked_atomics {
        return Err(PostError::Inval);
    }
    if opcode.is_standard_atomic() && model.atomic_cap == AtomicCap::None {
        return Err(PostError::Inval);
    }
    Ok(())
}

/// The state of a queue pair, as `enum ib_qp_state`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    /// `IB_QPS_RESET`.
    Reset = 0,
    /// `IB_QPS_INIT`.
    Init = 1,
    /// `IB_QPS_RTR`: ready to receive.
    Rtr = 2,
    /// `IB_QPS_RTS`: ready to send.
    Rts = 3,
    /// `IB_QPS_SQD`: send queue drained.
    Sqd = 4,
    /// `IB_QPS_SQE`: send queue error.
    Sqe = 5,
    /// `IB_QPS_ERR`.
    Err = 6,
}

impl QpState {
    /// Every state, in numeric order.
    pub const ALL: [Self; 7] = [
        Self::Reset,
        Self::Init,
        Self::Rtr,
        Self::Rts,
        Self::Sqd,
        Self::Sqe,
        Self::Err,
    ];

    /// Converts a value of `enum ib_qp_state`.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|s| *s as u32 == raw)
    }
}

/// Whether the simulator executes send work requests posted in `state`: in
/// RTS only. (In ERR they are accepted and flushed: see [`flushes`].)
pub const fn can_post_send(state: QpState) -> bool {
    matches!(state, QpState::Rts)
}

/// Whether receive work requests may be posted in `state`: from INIT on, as
/// the IB spec says (the receive queue keeps working in SQD and SQE, whose
/// trouble is the send queue's). In ERR they are accepted and flushed: see
/// [`flushes`]; in RESET they are refused.
pub const fn can_post_recv(state: QpState) -> bool {
    matches!(
        state,
        QpState::Init | QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
    )
}

/// Whether work requests posted or outstanding in `state` complete at once
/// with [`WcStatus::WrFlushErr`]: in ERR.
pub const fn flushes(state: QpState) -> bool {
    matches!(state, QpState::Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomics::{AtomicReply, Be64};

    #[test]
    fn access_values_are_ib_access_flags() {
        let pinned = [
            (Access::LOCAL_WRITE, 1),
            (Access::REMOTE_WRITE, 2),
            (Access::REMOTE_READ, 4),
            (Access::REMOTE_ATOMIC, 8),
            (Access::MW_BIND, 16),
            (Access::ZERO_BASED, 32),
            (Access::ON_DEMAND, 64),
            (Access::HUGETLB, 128),
            (Access::FLUSH_GLOBAL, 256),
            (Access::FLUSH_PERSISTENT, 512),
            (Access::RELAXED_ORDERING, 0x0010_0000),
        ];
        for (a, v) in pinned {
            assert_eq!(a.bits(), v);
        }
    }

    #[test]
    fn access_contains() {
        let rw = Access::REMOTE_READ | Access::REMOTE_WRITE;
        assert!(rw.contains(Access::REMOTE_READ));
        assert!(rw.contains(rw));
        assert!(rw.contains(Access::empty()));
        assert!(!rw.contains(Access::REMOTE_ATOMIC));
        assert!(!rw.contains(rw | Access::REMOTE_ATOMIC));
        let mut a = Access::from_bits(0x8000_0000);
        a |= Access::LOCAL_WRITE;
        assert_eq!(a.bits(), 0x8000_0001);
        assert!(!Access::empty().contains(Access::LOCAL_WRITE));
    }

    #[test]
    fn keys_are_index_and_variant() {
        let k = Key::new(0x12_3456, 0x78);
        assert_eq!(k.raw(), 0x1234_5678);
        assert_eq!(k.index(), 0x12_3456);
        assert_eq!(k.variant(), 0x78);
        assert_eq!(Key::from_raw(0x1234_5678), k);
        assert_eq!(Key::new(Key::MAX_INDEX, 0xff).raw(), u32::MAX);
        // The index is 24 bits: the rest does not fit.
        assert_eq!(Key::new(0x0100_0001, 0).index(), 1);
    }

    #[test]
    fn with_variant_is_ib_update_fast_reg_key() {
        let k = Key::new(7, 0x11);
        let k2 = k.with_variant(0x12);
        assert_eq!(k2.raw(), (k.raw() & 0xffff_ff00) | 0x12);
        assert_eq!(k2.index(), 7);
        assert_eq!(k2.variant(), 0x12);
        assert_ne!(k2, k);
        assert_eq!(k2.with_variant(0x11), k);
        assert_eq!(Key::from_raw(u32::MAX).with_variant(0).raw(), 0xffff_ff00);
    }

    const PD: u32 = 3;

    fn region(access: Access) -> Region {
        Region {
            key: Key::new(5, 0x20),
            pd: PD,
            iova: 0x1000,
            length: 0x100,
            access,
            state: RegionState::Valid,
        }
    }

    fn all_remote() -> Access {
        Access::LOCAL_WRITE | Access::REMOTE_READ | Access::REMOTE_WRITE | Access::REMOTE_ATOMIC
    }

    #[test]
    fn check_remote_accepts_a_good_access() {
        let r = region(all_remote());
        let rkey = r.key.raw();
        assert_eq!(
            check_remote(Some(&r), rkey, PD, 0x1000, 0x100, Access::REMOTE_READ),
            Ok(0)
        );
        assert_eq!(
            check_remote(Some(&r), rkey, PD, 0x1010, 0x10, Access::REMOTE_WRITE),
            Ok(0x10)
        );
        assert_eq!(
            check_remote(Some(&r), rkey, PD, 0x10ff, 1, Access::REMOTE_READ),
            Ok(0xff)
        );
    }

    #[test]
    fn check_remote_refuses_bad_keys_and_states() {
        let r = region(all_remote());
        let rkey = r.key.raw();
        let read = Access::REMOTE_READ;
        let err = Err(WcStatus::RemAccessErr);
        // Unknown key: nothing in the slot.
        assert_eq!(check_remote(None, rkey, PD, 0x1000, 8, read), err);
        // The slot's region has moved on to another variant: the old key
        // no longer works, the new one does.
        let reregistered = Region {
            key: r.key.with_variant(0x21),
            ..r
        };
        assert_eq!(
            check_remote(Some(&reregistered), rkey, PD, 0x1000, 8, read),
            err
        );
        let new_key = reregistered.key.raw();
        assert_eq!(
            check_remote(Some(&reregistered), new_key, PD, 0x1000, 8, read),
            Ok(0)
        );
        // A key whose index is not the region's.
        let other = Key::new(6, 0x20).raw();
        assert_eq!(check_remote(Some(&r), other, PD, 0x1000, 8, read), err);
        // Another PD.
        assert_eq!(check_remote(Some(&r), rkey, PD + 1, 0x1000, 8, read), err);
        // Allocated but not registered, or invalidated.
        let free = Region {
            state: RegionState::Free,
            ..r
        };
        assert_eq!(check_remote(Some(&free), rkey, PD, 0x1000, 8, read), err);
    }

    #[test]
    fn check_remote_needs_every_right() {
        let r = region(Access::LOCAL_WRITE | Access::REMOTE_READ);
        let rkey = r.key.raw();
        let err = Err(WcStatus::RemAccessErr);
        assert_eq!(
            check_remote(Some(&r), rkey, PD, 0x1000, 8, Access::REMOTE_READ),
            Ok(0)
        );
        assert_eq!(
            check_remote(Some(&r), rkey, PD, 0x1000, 8, Access::REMOTE_WRITE),
            err
        );
        assert_eq!(
            check_remote(
                Some(&r),
                rkey,
                PD,
                0x1000,
                8,
                Access::REMOTE_READ | Access::REMOTE_WRITE
            ),
            err
        );
    }

    #[test]
    fn check_remote_bounds() {
        let r = region(all_remote());
        let rkey = r.key.raw();
        let read = Access::REMOTE_READ;
        let err = Err(WcStatus::RemAccessErr);
        assert_eq!(check_remote(Some(&r), rkey, PD, 0xfff, 1, read), err);
        assert_eq!(check_remote(Some(&r), rkey, PD, 0xfff, 2, read), err);
        assert_eq!(check_remote(Some(&r), rkey, PD, 0x1000, 0x101, read), err);
        assert_eq!(check_remote(Some(&r), rkey, PD, 0x10f9, 8, read), err);
        assert_eq!(check_remote(Some(&r), rkey, PD, 0x1100, 1, read), err);
        // iova + len wraps to 4, inside the region by a naive check.
        assert_eq!(check_remote(Some(&r), rkey, PD, u64::MAX - 3, 8, read), err);
        assert_eq!(
            check_remote(Some(&r), rkey, PD, 0x1000, u64::MAX, read),
            err
        );
    }

    #[test]
    fn check_remote_bounds_at_the_top_of_the_address_space() {
        // A region ending exactly at 2^64.
        let top = Region {
            iova: u64::MAX - 15,
            length: 16,
            ..region(all_remote())
        };
        let rkey = top.key.raw();
        let read = Access::REMOTE_READ;
        assert_eq!(
            check_remote(Some(&top), rkey, PD, u64::MAX - 7, 8, read),
            Ok(8)
        );
        assert_eq!(
            check_remote(Some(&top), rkey, PD, u64::MAX, 1, read),
            Ok(15)
        );
        assert_eq!(
            check_remote(Some(&top), rkey, PD, u64::MAX - 7, 9, read),
            Err(WcStatus::RemAccessErr)
        );
        assert_eq!(
            check_remote(Some(&top), rkey, PD, u64::MAX, 2, read),
            Err(WcStatus::RemAccessErr)
        );
        // The largest region: everything but address 0.
        let huge = Region {
            iova: 1,
            length: u64::MAX,
            ..top
        };
        assert_eq!(
            check_remote(Some(&huge), rkey, PD, u64::MAX, 1, read),
            Ok(u64::MAX - 1)
        );
        assert_eq!(
            check_remote(Some(&huge), rkey, PD, 1, u64::MAX, read),
            Ok(0)
        );
        assert_eq!(
            check_remote(Some(&huge), rkey, PD, u64::MAX, 2, read),
            Err(WcStatus::RemAccessErr)
        );
        assert_eq!(
            check_remote(Some(&huge), rkey, PD, 0, 1, read),
            Err(WcStatus::RemAccessErr)
        );
    }

    #[test]
    fn zero_length_checks_nothing() {
        assert_eq!(
            check_remote(None, 0, 0, u64::MAX, 0, Access::REMOTE_WRITE),
            Ok(0)
        );
    }

    #[test]
    fn check_atomic_rules() {
        let r = region(all_remote());
        let rkey = r.key.raw();
        assert_eq!(check_atomic(Some(&r), rkey, PD, 0x1000), Ok(0));
        assert_eq!(check_atomic(Some(&r), rkey, PD, 0x10f8), Ok(0xf8));
        // Misaligned, inside a region that grants atomics.
        for iova in [0x1001, 0x1004, 0x1007, 0x10f0 + 1] {
            assert_eq!(
                check_atomic(Some(&r), rkey, PD, iova),
                Err(WcStatus::RemInvReqErr),
                "{iova:#x}"
            );
        }
        // The 8 bytes must be inside: the last aligned word is 0x10f8.
        assert_eq!(
            check_atomic(Some(&r), rkey, PD, 0x1100),
            Err(WcStatus::RemAccessErr)
        );
        // Misaligned and past the end: the range check comes first, as in rxe.
        assert_eq!(
            check_atomic(Some(&r), rkey, PD, 0x10fc),
            Err(WcStatus::RemAccessErr)
        );
        // Read and write rights are not atomic rights.
        let rw = region(Access::LOCAL_WRITE | Access::REMOTE_READ | Access::REMOTE_WRITE);
        assert_eq!(
            check_atomic(Some(&rw), rkey, PD, 0x1000),
            Err(WcStatus::RemAccessErr)
        );
        // Misaligned without the right: access error first.
        assert_eq!(
            check_atomic(Some(&rw), rkey, PD, 0x1001),
            Err(WcStatus::RemAccessErr)
        );
        // A stale variant.
        assert_eq!(
            check_atomic(Some(&r), r.key.with_variant(0x1f).raw(), PD, 0x1000),
            Err(WcStatus::RemAccessErr)
        );
        assert_eq!(
            check_atomic(None, rkey, PD, 0x1000),
            Err(WcStatus::RemAccessErr)
        );
    }

    #[test]
    fn reply_bytes_orders() {
        let old = 0x0102_0304_0506_0708;
        assert_eq!(
            reply_bytes(old, ReplyOrder::BigEndian),
            [1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(reply_bytes(old, ReplyOrder::Host), old.to_ne_bytes());
        if cfg!(target_endian = "little") {
            assert_eq!(reply_bytes(old, ReplyOrder::Host), [8, 7, 6, 5, 4, 3, 2, 1]);
        }
        // What mlx_ext reads back from the SGE gives the old value again.
        for order in [ReplyOrder::Host, ReplyOrder::BigEndian] {
            let raw = u64::from_ne_bytes(reply_bytes(old, order));
            assert_eq!(AtomicReply::new(raw, order).value(), old);
        }
        assert_eq!(
            Be64::from_bytes(reply_bytes(old, ReplyOrder::BigEndian)).to_host(),
            old
        );
    }

    #[test]
    fn post_check_by_model() {
        use super::super::model::MODELS;
        let [cx3, cib, cx4, cx4lx] = &MODELS;
        for op in WrOpcode::ALL {
            let atomic = op.is_masked_atomic() || op.is_standard_atomic();
            let want = if atomic {
                Err(PostError::Inval)
            } else {
                Ok(())
            };
            assert_eq!(post_check(cx4lx, op), want, "{op:?}");
            assert_eq!(post_check(cx3, op), Ok(()), "{op:?}");
            assert_eq!(post_check(cib, op), Ok(()), "{op:?}");
            let want = if op.is_masked_atomic() {
                Err(PostError::Inval)
            } else {
                Ok(())
            };
            assert_eq!(post_check(cx4, op), want, "{op:?}");
        }
        let no_atomics = Model {
            atomic_cap: AtomicCap::None,
            ..*cx4
        };
        assert_eq!(
            post_check(&no_atomics, WrOpcode::AtomicFetchAndAdd),
            Err(PostError::Inval)
        );
        assert_eq!(post_check(&no_atomics, WrOpcode::RdmaRead), Ok(()));
        assert_eq!(PostError::Inval.errno(), 22);
    }

    #[test]
    fn qp_state_values_and_rules() {
        for (n, s) in QpState::ALL.iter().enumerate() {
            assert_eq!(*s as usize, n);
            assert_eq!(QpState::from_raw(*s as u32), Some(*s));
        }
        assert_eq!(QpState::from_raw(7), None);
        assert_eq!(QpState::Err as u32, 6);
        let send = QpState::ALL.map(can_post_send);
        assert_eq!(send, [false, false, false, true, false, false, false]);
        let recv = QpState::ALL.map(can_post_recv);
        assert_eq!(recv, [false, true, true, true, true, true, false]);
        let flush = QpState::ALL.map(flushes);
        assert_eq!(flush, [false, false, false, false, false, false, true]);
    }

    #[test]
    fn locate_walks_the_page_list() {
        // A region starting 0x10 into its first 4 KiB page, three pages.
        let iova = 0xffff_8880_0000_1010;
        assert_eq!(locate(iova, 4096, 3, 0), Some((0, 0x10)));
        assert_eq!(locate(iova, 4096, 3, 4096 - 0x10 - 1), Some((0, 4095)));
        assert_eq!(locate(iova, 4096, 3, 4096 - 0x10), Some((1, 0)));
        assert_eq!(locate(iova, 4096, 3, 3 * 4096 - 0x10 - 1), Some((2, 4095)));
        assert_eq!(locate(iova, 4096, 3, 3 * 4096 - 0x10), None);
        assert_eq!(locate(iova, 4096, 0, 0), None);
        assert_eq!(locate(iova, 3000, 3, 0), None);
        assert_eq!(locate(iova, 0, 3, 0), None);
        assert_eq!(locate(iova, 4096, 3, u64::MAX), None);
    }
}
