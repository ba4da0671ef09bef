// SPDX-License-Identifier: GPL-2.0

//! The work-request view of atomics: the values of `enum ib_wc_status`,
//! `enum ib_wc_opcode` and `enum ib_wr_opcode`, and [`AtomicOp`], an atomic
//! read from the four operand fields of `struct ib_atomic_wr` (the table of
//! `Documentation/atomics.rst`, "Semantics", pinned here). Shared by mlx_ext,
//! which posts these work requests for ULPs, and by the simulator, which
//! executes them, so that the two cannot read the table differently; the kernel
//! ties the values to ib_core's at compile time.

use super::{masked_cmp_swap, masked_fetch_add};

/// The status of a work completion, as `enum ib_wc_status`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcStatus {
    /// `IB_WC_SUCCESS`.
    Success = 0,
    /// `IB_WC_LOC_LEN_ERR`.
    LocLenErr = 1,
    /// `IB_WC_LOC_QP_OP_ERR`.
    LocQpOpErr = 2,
    /// `IB_WC_LOC_EEC_OP_ERR`.
    LocEecOpErr = 3,
    /// `IB_WC_LOC_PROT_ERR`.
    LocProtErr = 4,
    /// `IB_WC_WR_FLUSH_ERR`.
    WrFlushErr = 5,
    /// `IB_WC_MW_BIND_ERR`.
    MwBindErr = 6,
    /// `IB_WC_BAD_RESP_ERR`.
    BadRespErr = 7,
    /// `IB_WC_LOC_ACCESS_ERR`.
    LocAccessErr = 8,
    /// `IB_WC_REM_INV_REQ_ERR`.
    RemInvReqErr = 9,
    /// `IB_WC_REM_ACCESS_ERR`.
    RemAccessErr = 10,
    /// `IB_WC_REM_OP_ERR`.
    RemOpErr = 11,
    /// `IB_WC_RETRY_EXC_ERR`.
    RetryExcErr = 12,
    /// `IB_WC_RNR_RETRY_EXC_ERR`.
    RnrRetryExcErr = 13,
    /// `IB_WC_LOC_RDD_VIOL_ERR`.
    LocRddViolErr = 14,
    /// `IB_WC_REM_INV_RD_REQ_ERR`.
    RemInvRdReqErr = 15,
    /// `IB_WC_REM_ABORT_ERR`.
    RemAbortErr = 16,
    /// `IB_WC_INV_EECN_ERR`.
    InvEecnErr = 17,
    /// `IB_WC_INV_EEC_STATE_ERR`.
    InvEecStateErr = 18,
    /// `IB_WC_FATAL_ERR`.
    FatalErr = 19,
    /// `IB_WC_RESP_TIMEOUT_ERR`.
    RespTimeoutErr = 20,
    /// `IB_WC_GENERAL_ERR`.
    GeneralErr = 21,
}

impl WcStatus {
    /// Every status, in numeric order: `ALL[n]` has the value `n`.
    pub const ALL: [Self; 22] = [
        Self::Success,
        Self::LocLenErr,
        Self::LocQpOpErr,
        Self::LocEecOpErr,
        Self::LocProtErr,
        Self::WrFlushErr,
        Self::MwBindErr,
        Self::BadRespErr,
        Self::LocAccessErr,
        Self::RemInvReqErr,
        Self::RemAccessErr,
        Self::RemOpErr,
        Self::RetryExcErr,
        Self::RnrRetryExcErr,
        Self::LocRddViolErr,
        Self::RemInvRdReqErr,
        Self::RemAbortErr,
        Self::InvEecnErr,
        Self::InvEecStateErr,
        Self::FatalErr,
        Self::RespTimeoutErr,
        Self::GeneralErr,
    ];

    /// Converts a value of `enum ib_wc_status`.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|s| *s as u32 == raw)
    }
}

/// The opcode of a work completion, as `enum ib_wc_opcode`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcOpcode {
    /// `IB_WC_SEND`.
    Send = 0,
    /// `IB_WC_RDMA_WRITE`.
    RdmaWrite = 1,
    /// `IB_WC_RDMA_READ`.
    RdmaRead = 2,
    /// `IB_WC_COMP_SWAP`.
    CompSwap = 3,
    /// `IB_WC_FETCH_ADD`.
    FetchAdd = 4,
    /// `IB_WC_BIND_MW`.
    BindMw = 5,
    /// `IB_WC_LOCAL_INV`.
    LocalInv = 6,
    /// `IB_WC_LSO` (`IB_UVERBS_WC_TSO`).
    Lso = 7,
    /// `IB_WC_FLUSH` (`IB_UVERBS_WC_FLUSH`).
    Flush = 8,
    /// `IB_WC_ATOMIC_WRITE` (`IB_UVERBS_WC_ATOMIC_WRITE`).
    AtomicWrite = 9,
    /// `IB_WC_REG_MR`: the first kernel-only value, after `ATOMIC_WRITE`.
    RegMr = 10,
    /// `IB_WC_MASKED_COMP_SWAP`.
    MaskedCompSwap = 11,
    /// `IB_WC_MASKED_FETCH_ADD`.
    MaskedFetchAdd = 12,
    /// `IB_WC_RECV`: `1 << 7`, so that `opcode & IB_WC_RECV` tests for a
    /// receive.
    Recv = 1 << 7,
    /// `IB_WC_RECV_RDMA_WITH_IMM`.
    RecvRdmaWithImm = (1 << 7) + 1,
}

/// The opcode of a send work request, as `enum ib_wr_opcode`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrOpcode {
    /// `IB_WR_RDMA_WRITE`.
    RdmaWrite = 0,
    /// `IB_WR_RDMA_WRITE_WITH_IMM`.
    RdmaWriteWithImm = 1,
    /// `IB_WR_SEND`.
    Send = 2,
    /// `IB_WR_SEND_WITH_IMM`.
    SendWithImm = 3,
    /// `IB_WR_RDMA_READ`.
    RdmaRead = 4,
    /// `IB_WR_ATOMIC_CMP_AND_SWP`.
    AtomicCmpAndSwp = 5,
    /// `IB_WR_ATOMIC_FETCH_AND_ADD`.
    AtomicFetchAndAdd = 6,
    /// `IB_WR_LOCAL_INV`.
    LocalInv = 7,
    /// `IB_WR_BIND_MW`.
    BindMw = 8,
    /// `IB_WR_SEND_WITH_INV`.
    SendWithInv = 9,
    /// `IB_WR_LSO` (`IB_UVERBS_WR_TSO`).
    Lso = 10,
    /// `IB_WR_RDMA_READ_WITH_INV`.
    RdmaReadWithInv = 11,
    /// `IB_WR_MASKED_ATOMIC_CMP_AND_SWP`.
    MaskedAtomicCmpAndSwp = 12,
    /// `IB_WR_MASKED_ATOMIC_FETCH_AND_ADD`.
    MaskedAtomicFetchAndAdd = 13,
    /// `IB_WR_FLUSH`.
    Flush = 14,
    /// `IB_WR_ATOMIC_WRITE`.
    AtomicWrite = 15,
    /// `IB_WR_REG_MR`: kernel only.
    RegMr = 0x20,
    /// `IB_WR_REG_MR_INTEGRITY`: kernel only.
    RegMrIntegrity = 0x21,
}

impl WrOpcode {
    /// Every opcode, in numeric order.
    pub const ALL: [Self; 18] = [
        Self::RdmaWrite,
        Self::RdmaWriteWithImm,
        Self::Send,
        Self::SendWithImm,
        Self::RdmaRead,
        Self::AtomicCmpAndSwp,
        Self::AtomicFetchAndAdd,
        Self::LocalInv,
        Self::BindMw,
        Self::SendWithInv,
        Self::Lso,
        Self::RdmaReadWithInv,
        Self::MaskedAtomicCmpAndSwp,
        Self::MaskedAtomicFetchAndAdd,
        Self::Flush,
        Self::AtomicWrite,
        Self::RegMr,
        Self::RegMrIntegrity,
    ];

    /// Converts a value of `enum ib_wr_opcode`. The values reserved for
    /// drivers (`IB_WR_RESERVED1` = 0xf0 and on) and unassigned ones give
    /// `None`.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|o| *o as u32 == raw)
    }

    /// Returns the opcode of the completion of a work request with this
    /// opcode, as rxe's `wr_to_wc_opcode` and mlx4's CQ code map them. The
    /// immediate and invalidate variants complete as their base operation;
    /// `REG_MR_INTEGRITY` completes as `REG_MR`.
    pub const fn wc_opcode(self) -> WcOpcode {
        match self {
            Self::RdmaWrite | Self::RdmaWriteWithImm => WcOpcode::RdmaWrite,
            Self::Send | Self::SendWithImm | Self::SendWithInv => WcOpcode::Send,
            Self::RdmaRead | Self::RdmaReadWithInv => WcOpcode::RdmaRead,
            Self::AtomicCmpAndSwp => WcOpcode::CompSwap,
            Self::AtomicFetchAndAdd => WcOpcode::FetchAdd,
            Self::LocalInv => WcOpcode::LocalInv,
            Self::BindMw => WcOpcode::BindMw,
            Self::Lso => WcOpcode::Lso,
            Self::MaskedAtomicCmpAndSwp => WcOpcode::MaskedCompSwap,
            Self::MaskedAtomicFetchAndAdd => WcOpcode::MaskedFetchAdd,
            Self::Flush => WcOpcode::Flush,
            Self::AtomicWrite => WcOpcode::AtomicWrite,
            Self::RegMr | Self::RegMrIntegrity => WcOpcode::RegMr,
        }
    }

    /// Whether this is one of the two standard atomics (CAS, FA).
    pub const fn is_standard_atomic(self) -> bool {
        matches!(self, Self::AtomicCmpAndSwp | Self::AtomicFetchAndAdd)
    }

    /// Whether this is one of the two masked atomics.
    pub const fn is_masked_atomic(self) -> bool {
        matches!(
            self,
            Self::MaskedAtomicCmpAndSwp | Self::MaskedAtomicFetchAndAdd
        )
    }
}

/// An atomic operation with its operands, read from a `struct ib_atomic_wr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// `IB_WR_ATOMIC_CMP_AND_SWP`.
    CmpSwap {
        /// Swap if the word equals this.
        compare: u64,
        /// The value to store.
        swap: u64,
    },
    /// `IB_WR_ATOMIC_FETCH_AND_ADD`.
    FetchAdd {
        /// The value to add, modulo 2^64.
        add: u64,
    },
    /// `IB_WR_MASKED_ATOMIC_CMP_AND_SWP` (MskCmpSwap,
    /// `Documentation/atomics.rst`).
    MaskedCmpSwap {
        /// The value to compare with.
        compare: u64,
        /// The bits that take part in the comparison.
        compare_mask: u64,
        /// The value to store.
        swap: u64,
        /// The bits that are stored.
        swap_mask: u64,
    },
    /// `IB_WR_MASKED_ATOMIC_FETCH_AND_ADD` (MFetchAdd,
    /// `Documentation/atomics.rst`).
    MaskedFetchAdd {
        /// The value to add, field by field.
        add: u64,
        /// A set bit marks the most significant bit of a field.
        field_boundary: u64,
    },
}

impl AtomicOp {
    /// Reads the operands of an atomic work request from the four fields of
    /// `struct ib_atomic_wr`, as mlx4 (`qp.c`) and RDS (`ib_send.c`) read
    /// them (`Documentation/atomics.rst`, "Semantics"):
    ///
    /// | opcode | `compare_add` | `compare_add_mask` | `swap` | `swap_mask` |
    /// |---|---|---|---|---|
    /// | CMP_AND_SWP | compare | — | swap | — |
    /// | FETCH_AND_ADD | add | — | — | — |
    /// | MASKED_CMP_AND_SWP | compare | compare_mask | swap | swap_mask |
    /// | MASKED_FETCH_AND_ADD | add | field_boundary | — | — |
    ///
    /// Returns `None` for an opcode that is not an atomic of these four.
    pub const fn from_wr(
        opcode: WrOpcode,
        compare_add: u64,
        compare_add_mask: u64,
        swap: u64,
        swap_mask: u64,
    ) -> Option<Self> {
        match opcode {
            WrOpcode::AtomicCmpAndSwp => Some(Self::CmpSwap {
                compare: compare_add,
                swap,
            }),
            WrOpcode::AtomicFetchAndAdd => Some(Self::FetchAdd { add: compare_add }),
            WrOpcode::MaskedAtomicCmpAndSwp => Some(Self::MaskedCmpSwap {
                compare: compare_add,
                compare_mask: compare_add_mask,
                swap,
                swap_mask,
            }),
            WrOpcode::MaskedAtomicFetchAndAdd => Some(Self::MaskedFetchAdd {
                add: compare_add,
                field_boundary: compare_add_mask,
            }),
            _ => None,
        }
    }

    /// Returns the opcode and the four operand fields of `struct
    /// ib_atomic_wr` (`compare_add`, `compare_add_mask`, `swap`,
    /// `swap_mask`) that carry this operation: the inverse of
    /// [`AtomicOp::from_wr`], with unused fields zero.
    pub const fn to_wr(&self) -> (WrOpcode, u64, u64, u64, u64) {
        match *self {
            Self::CmpSwap { compare, swap } => (WrOpcode::AtomicCmpAndSwp, compare, 0, swap, 0),
            Self::FetchAdd { add } => (WrOpcode::AtomicFetchAndAdd, add, 0, 0, 0),
            Self::MaskedCmpSwap {
                compare,
                compare_mask,
                swap,
                swap_mask,
            } => (
                WrOpcode::MaskedAtomicCmpAndSwp,
                compare,
                compare_mask,
                swap,
                swap_mask,
            ),
            Self::MaskedFetchAdd {
                add,
                field_boundary,
            } => (WrOpcode::MaskedAtomicFetchAndAdd, add, field_boundary, 0, 0),
        }
    }

    /// Whether this is a masked operation.
    pub const fn is_masked(&self) -> bool {
        matches!(
            self,
            Self::MaskedCmpSwap { .. } | Self::MaskedFetchAdd { .. }
        )
    }

    /// Returns the work request opcode of this operation.
    pub const fn opcode(&self) -> WrOpcode {
        match self {
            Self::CmpSwap { .. } => WrOpcode::AtomicCmpAndSwp,
            Self::FetchAdd { .. } => WrOpcode::AtomicFetchAndAdd,
            Self::MaskedCmpSwap { .. } => WrOpcode::MaskedAtomicCmpAndSwp,
            Self::MaskedFetchAdd { .. } => WrOpcode::MaskedAtomicFetchAndAdd,
        }
    }

    /// Returns the new value of the word whose value was `old`. The response
    /// of every atomic is `old` itself.
    pub const fn new_value(&self, old: u64) -> u64 {
        match *self {
            // A standard CAS is a masked one comparing and swapping all bits,
            // a standard FA a masked one with no field boundary.
            Self::CmpSwap { compare, swap } => masked_cmp_swap(old, compare, !0, swap, !0),
            Self::FetchAdd { add } => masked_fetch_add(old, add, 0),
            Self::MaskedCmpSwap {
                compare,
                compare_mask,
                swap,
                swap_mask,
            } => masked_cmp_swap(old, compare, compare_mask, swap, swap_mask),
            Self::MaskedFetchAdd {
                add,
                field_boundary,
            } => masked_fetch_add(old, add, field_boundary),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomics::reference;

    #[test]
    fn wc_status_values_are_ib_wc_status() {
        let pinned = [
            (WcStatus::Success, 0),
            (WcStatus::LocLenErr, 1),
            (WcStatus::LocQpOpErr, 2),
            (WcStatus::LocProtErr, 4),
            (WcStatus::WrFlushErr, 5),
            (WcStatus::RemInvReqErr, 9),
            (WcStatus::RemAccessErr, 10),
            (WcStatus::RemOpErr, 11),
            (WcStatus::RetryExcErr, 12),
            (WcStatus::RnrRetryExcErr, 13),
            (WcStatus::FatalErr, 19),
            (WcStatus::RespTimeoutErr, 20),
            (WcStatus::GeneralErr, 21),
        ];
        for (s, v) in pinned {
            assert_eq!(s as u32, v);
            assert_eq!(WcStatus::from_raw(v), Some(s));
        }
        for (n, s) in WcStatus::ALL.iter().enumerate() {
            assert_eq!(*s as usize, n);
        }
        assert_eq!(WcStatus::from_raw(22), None);
    }

    #[test]
    fn wc_opcode_values_are_ib_wc_opcode() {
        let pinned = [
            (WcOpcode::Send, 0),
            (WcOpcode::RdmaWrite, 1),
            (WcOpcode::RdmaRead, 2),
            (WcOpcode::CompSwap, 3),
            (WcOpcode::FetchAdd, 4),
            (WcOpcode::BindMw, 5),
            (WcOpcode::LocalInv, 6),
            (WcOpcode::Lso, 7),
            (WcOpcode::Flush, 8),
            (WcOpcode::AtomicWrite, 9),
            (WcOpcode::RegMr, 10),
            (WcOpcode::MaskedCompSwap, 11),
            (WcOpcode::MaskedFetchAdd, 12),
            (WcOpcode::Recv, 128),
            (WcOpcode::RecvRdmaWithImm, 129),
        ];
        for (o, v) in pinned {
            assert_eq!(o as u32, v);
        }
    }

    #[test]
    fn wr_opcode_values_are_ib_wr_opcode() {
        let pinned = [
            (WrOpcode::RdmaWrite, 0),
            (WrOpcode::RdmaWriteWithImm, 1),
            (WrOpcode::Send, 2),
            (WrOpcode::SendWithImm, 3),
            (WrOpcode::RdmaRead, 4),
            (WrOpcode::AtomicCmpAndSwp, 5),
            (WrOpcode::AtomicFetchAndAdd, 6),
            (WrOpcode::LocalInv, 7),
            (WrOpcode::BindMw, 8),
            (WrOpcode::SendWithInv, 9),
            (WrOpcode::Lso, 10),
            (WrOpcode::RdmaReadWithInv, 11),
            (WrOpcode::MaskedAtomicCmpAndSwp, 12),
            (WrOpcode::MaskedAtomicFetchAndAdd, 13),
            (WrOpcode::Flush, 14),
            (WrOpcode::AtomicWrite, 15),
            (WrOpcode::RegMr, 0x20),
            (WrOpcode::RegMrIntegrity, 0x21),
        ];
        assert_eq!(pinned.len(), WrOpcode::ALL.len());
        for (o, v) in pinned {
            assert_eq!(o as u32, v);
            assert_eq!(WrOpcode::from_raw(v), Some(o));
        }
        for raw in [16, 0x1f, 0x22, 0xf0, 0xf9, u32::MAX] {
            assert_eq!(WrOpcode::from_raw(raw), None, "{raw:#x}");
        }
    }

    #[test]
    fn wr_to_wc_opcodes() {
        use WcOpcode as C;
        use WrOpcode as R;
        let pinned = [
            (R::RdmaWrite, C::RdmaWrite),
            (R::RdmaWriteWithImm, C::RdmaWrite),
            (R::Send, C::Send),
            (R::SendWithImm, C::Send),
            (R::SendWithInv, C::Send),
            (R::RdmaRead, C::RdmaRead),
            (R::RdmaReadWithInv, C::RdmaRead),
            (R::AtomicCmpAndSwp, C::CompSwap),
            (R::AtomicFetchAndAdd, C::FetchAdd),
            (R::LocalInv, C::LocalInv),
            (R::BindMw, C::BindMw),
            (R::Lso, C::Lso),
            (R::MaskedAtomicCmpAndSwp, C::MaskedCompSwap),
            (R::MaskedAtomicFetchAndAdd, C::MaskedFetchAdd),
            (R::Flush, C::Flush),
            (R::AtomicWrite, C::AtomicWrite),
            (R::RegMr, C::RegMr),
            (R::RegMrIntegrity, C::RegMr),
        ];
        assert_eq!(pinned.len(), WrOpcode::ALL.len());
        for (r, c) in pinned {
            assert_eq!(r.wc_opcode(), c, "{r:?}");
        }
    }

    #[test]
    fn ib_atomic_wr_fields_map_as_mlx4_reads_them() {
        // Four distinct values, so that any swapped field shows.
        let (ca, cam, s, sm) = (0x1111, 0x2222, 0x3333, 0x4444);
        let from = |op| AtomicOp::from_wr(op, ca, cam, s, sm);
        assert_eq!(
            from(WrOpcode::AtomicCmpAndSwp),
            Some(AtomicOp::CmpSwap {
                compare: ca,
                swap: s
            })
        );
        assert_eq!(
            from(WrOpcode::AtomicFetchAndAdd),
            Some(AtomicOp::FetchAdd { add: ca })
        );
        assert_eq!(
            from(WrOpcode::MaskedAtomicCmpAndSwp),
            Some(AtomicOp::MaskedCmpSwap {
                compare: ca,
                compare_mask: cam,
                swap: s,
                swap_mask: sm
            })
        );
        // The add value is compare_add, the boundary compare_add_mask.
        assert_eq!(
            from(WrOpcode::MaskedAtomicFetchAndAdd),
            Some(AtomicOp::MaskedFetchAdd {
                add: ca,
                field_boundary: cam
            })
        );
        for op in WrOpcode::ALL {
            let atomic = op.is_standard_atomic() || op.is_masked_atomic();
            assert_eq!(from(op).is_some(), atomic, "{op:?}");
            if let Some(a) = from(op) {
                assert_eq!(a.opcode(), op);
                assert_eq!(a.is_masked(), op.is_masked_atomic());
            }
        }
    }

    #[test]
    fn new_values_by_hand() {
        let cases = [
            // CAS: equal swaps, unequal keeps.
            (
                AtomicOp::CmpSwap {
                    compare: 5,
                    swap: 9,
                },
                5,
                9,
            ),
            (
                AtomicOp::CmpSwap {
                    compare: 5,
                    swap: 9,
                },
                6,
                6,
            ),
            // FA wraps.
            (AtomicOp::FetchAdd { add: 1 }, u64::MAX, 0),
            (AtomicOp::FetchAdd { add: 0x10 }, 0xff0, 0x1000),
            // Masked CAS: only the masked bits compare and swap.
            (
                AtomicOp::MaskedCmpSwap {
                    compare: 0x00ab,
                    compare_mask: 0x00ff,
                    swap: 0xcd00,
                    swap_mask: 0xff00,
                },
                0x12ab,
                0xcdab,
            ),
            (
                AtomicOp::MaskedCmpSwap {
                    compare: 0x00ab,
                    compare_mask: 0x00ff,
                    swap: 0xcd00,
                    swap_mask: 0xff00,
                },
                0x12ac,
                0x12ac,
            ),
            // compare_mask 0 always swaps; swap_mask 0 never changes.
            (
                AtomicOp::MaskedCmpSwap {
                    compare: 1,
                    compare_mask: 0,
                    swap: 7,
                    swap_mask: !0,
                },
                2,
                7,
            ),
            (
                AtomicOp::MaskedCmpSwap {
                    compare: 2,
                    compare_mask: !0,
                    swap: 7,
                    swap_mask: 0,
                },
                2,
                2,
            ),
            // field_boundary 0: a plain add, carries cross every byte.
            (
                AtomicOp::MaskedFetchAdd {
                    add: 1,
                    field_boundary: 0,
                },
                0x00ff_ffff,
                0x0100_0000,
            ),
            // field_boundary !0: XOR.
            (
                AtomicOp::MaskedFetchAdd {
                    add: 0xff00_ff00,
                    field_boundary: !0,
                },
                0x0ff0_0ff0,
                0xf0f0_f0f0,
            ),
            // Two 32-bit fields: the low one wraps without carrying.
            (
                AtomicOp::MaskedFetchAdd {
                    add: 0x0000_0001_0000_0001,
                    field_boundary: 0x8000_0000_8000_0000,
                },
                0x0000_0005_ffff_ffff,
                0x0000_0006_0000_0000,
            ),
        ];
        for (op, old, new) in cases {
            assert_eq!(op.new_value(old), new, "{op:?} on {old:#x}");
        }
    }

    #[test]
    fn new_values_match_the_reference() {
        let words = [
            0,
            1,
            u64::MAX,
            0x8000_0000_0000_0000,
            0x0123_4567_89ab_cdef,
            0xfedc_ba98_7654_3210,
            0x00ff_00ff_00ff_00ff,
        ];
        for &old in &words {
            for &a in &words {
                for &b in &words {
                    let cas = AtomicOp::CmpSwap {
                        compare: a,
                        swap: b,
                    };
                    assert_eq!(
                        cas.new_value(old),
                        reference::masked_cmp_swap(old, a, !0, b, !0)
                    );
                    assert_eq!(cas.new_value(old), if old == a { b } else { old });
                    let fa = AtomicOp::FetchAdd { add: a };
                    assert_eq!(fa.new_value(old), old.wrapping_add(a));
                    let mfa = AtomicOp::MaskedFetchAdd {
                        add: a,
                        field_boundary: b,
                    };
                    assert_eq!(mfa.new_value(old), reference::masked_fetch_add(old, a, b));
                    let mcas = AtomicOp::MaskedCmpSwap {
                        compare: a,
                        compare_mask: b,
                        swap: !a,
                        swap_mask: b ^ old,
                    };
                    assert_eq!(
                        mcas.new_value(old),
                        reference::masked_cmp_swap(old, a, b, !a, b ^ old)
                    );
                }
            }
        }
    }

    #[test]
    fn to_wr_is_from_wr_inverted() {
        let ops = [
            AtomicOp::CmpSwap {
                compare: 1,
                swap: 2,
            },
            AtomicOp::FetchAdd { add: 3 },
            AtomicOp::MaskedCmpSwap {
                compare: 4,
                compare_mask: 5,
                swap: 6,
                swap_mask: 7,
            },
            AtomicOp::MaskedFetchAdd {
                add: 8,
                field_boundary: 9,
            },
        ];
        for op in ops {
            let (o, a, am, b, bm) = op.to_wr();
            assert_eq!(AtomicOp::from_wr(o, a, am, b, bm), Some(op));
        }
        // Masked FA: the add value in compare_add, the boundary in
        // compare_add_mask (`Documentation/atomics.rst`, "Semantics"), never in
        // swap.
        assert_eq!(
            ops[3].to_wr(),
            (WrOpcode::MaskedAtomicFetchAndAdd, 8, 9, 0, 0)
        );
    }
}
