// SPDX-License-Identifier: GPL-2.0

//! Where the pure logic meets the `ib` layer: the conversions between the
//! layer's types (ib_core's and `include/mlx_ext/mlx_ext.h`'s) and the pure
//! code's, and the pure code's copies of kernel numbers tied at compile
//! time to the values this kernel was built with ([`crate::ib::values`]).
//! The pure code is built on the host too, without the kernel's headers,
//! so it keeps its own copies; a kernel that renumbered one would not
//! build here.

use crate::{
    api,
    atomics::wr::{AtomicOp, WcStatus, WrOpcode},
    caps,
    ib::{
        self,
        export::UlpRequest,
        qp::{AtomicOpcode, AtomicWr},
        values::{driver_id, wc_status},
    },
};

/// A device's atomic capability as ib_core reports it, in the capability
/// rules' terms (which add the big-endian reply ib_core has no value for).
pub(crate) fn atomic_cap(cap: ib::AtomicCap) -> caps::AtomicCap {
    match cap {
        ib::AtomicCap::None => caps::AtomicCap::None,
        ib::AtomicCap::Hca => caps::AtomicCap::Hca,
        ib::AtomicCap::Glob => caps::AtomicCap::Glob,
    }
}

/// The work request that carries out `op`.
pub(crate) fn atomic_wr(op: AtomicOp) -> AtomicWr {
    // The opcode `to_wr` gives each (tied to these below).
    let opcode = match op {
        AtomicOp::CmpSwap { .. } => AtomicOpcode::CmpAndSwp,
        AtomicOp::FetchAdd { .. } => AtomicOpcode::FetchAndAdd,
        AtomicOp::MaskedCmpSwap { .. } => AtomicOpcode::MaskedCmpAndSwp,
        AtomicOp::MaskedFetchAdd { .. } => AtomicOpcode::MaskedFetchAndAdd,
    };
    let (_, compare_add, compare_add_mask, swap, swap_mask) = op.to_wr();
    AtomicWr {
        opcode,
        compare_add,
        compare_add_mask,
        swap,
        swap_mask,
    }
}

/// A ULP's request as the API's rules take it.
pub(crate) fn request(r: UlpRequest) -> api::Request {
    api::Request {
        opcode: r.opcode,
        size: r.size,
        remote_addr: r.remote_addr,
        rkey: r.rkey,
        compare_add: r.compare_add,
        compare_add_mask: r.compare_add_mask,
        swap: r.swap,
        swap_mask: r.swap_mask,
        flags: r.flags,
        reserved: r.reserved,
    }
}

// The header's version and flags.
const _: () = {
    assert!(ib::export::API_VERSION.0 == api::API_VERSION.0);
    assert!(ib::export::API_VERSION.1 == api::API_VERSION.1);
    assert!(ib::export::ATOMIC_FENCE == api::ATOMIC_FENCE);
};

// The work-request vocabulary of the pure code is what the layer writes
// into and reads from ib_core's structures.
const _: () = {
    assert!(WrOpcode::AtomicCmpAndSwp as u32 == AtomicOpcode::CmpAndSwp as u32);
    assert!(WrOpcode::AtomicFetchAndAdd as u32 == AtomicOpcode::FetchAndAdd as u32);
    assert!(WrOpcode::MaskedAtomicCmpAndSwp as u32 == AtomicOpcode::MaskedCmpAndSwp as u32);
    assert!(WrOpcode::MaskedAtomicFetchAndAdd as u32 == AtomicOpcode::MaskedFetchAndAdd as u32);
    assert!(WcStatus::Success as u32 == wc_status::SUCCESS);
    assert!(WcStatus::LocLenErr as u32 == wc_status::LOC_LEN_ERR);
    assert!(WcStatus::LocProtErr as u32 == wc_status::LOC_PROT_ERR);
    assert!(WcStatus::WrFlushErr as u32 == wc_status::WR_FLUSH_ERR);
    assert!(WcStatus::LocAccessErr as u32 == wc_status::LOC_ACCESS_ERR);
    assert!(WcStatus::RemInvReqErr as u32 == wc_status::REM_INV_REQ_ERR);
    assert!(WcStatus::RemAccessErr as u32 == wc_status::REM_ACCESS_ERR);
    assert!(WcStatus::RemOpErr as u32 == wc_status::REM_OP_ERR);
    assert!(WcStatus::RetryExcErr as u32 == wc_status::RETRY_EXC_ERR);
    assert!(WcStatus::RnrRetryExcErr as u32 == wc_status::RNR_RETRY_EXC_ERR);
    assert!(WcStatus::RespTimeoutErr as u32 == wc_status::RESP_TIMEOUT_ERR);
    assert!(WcStatus::GeneralErr as u32 == wc_status::GENERAL_ERR);
};

// The pure code's errnos: those the API's rules return to ULPs, the
// capability rules' refusals, the VF GUID engine's and the simulator's.
crate::tie_errnos!(crate::errno);

// The capability rules name drivers by `enum rdma_driver_id` value, and
// decode `enum ib_atomic_cap` by value (`AtomicCap::from_ib`, which the
// host tests use).
const _: () = {
    use caps::*;
    assert!(DRIVER_MLX4 == driver_id::MLX4);
    assert!(DRIVER_MLX5 == driver_id::MLX5);
    assert!(DRIVER_CXGB4 == driver_id::CXGB4);
    assert!(DRIVER_MTHCA == driver_id::MTHCA);
    assert!(DRIVER_BNXT_RE == driver_id::BNXT_RE);
    assert!(DRIVER_OCRDMA == driver_id::OCRDMA);
    assert!(DRIVER_IRDMA == driver_id::IRDMA);
    assert!(DRIVER_VMW_PVRDMA == driver_id::VMW_PVRDMA);
    assert!(DRIVER_QEDR == driver_id::QEDR);
    assert!(DRIVER_HNS == driver_id::HNS);
    assert!(DRIVER_RXE == driver_id::RXE);
    assert!(DRIVER_HFI1 == driver_id::HFI1);
    assert!(DRIVER_QIB == driver_id::QIB);
    assert!(DRIVER_SIW == driver_id::SIW);
    assert!(DRIVER_ERDMA == driver_id::ERDMA);
    assert!(DRIVER_MANA == driver_id::MANA);
    // DRIVER_IONIC (21) is not in 6.12's enum: see its definition.
    assert!(RDMA_NODE_RNIC == ib::values::RDMA_NODE_RNIC);
    assert!(matches!(
        AtomicCap::from_ib(ib::AtomicCap::None as u32),
        Some(AtomicCap::None)
    ));
    assert!(matches!(
        AtomicCap::from_ib(ib::AtomicCap::Hca as u32),
        Some(AtomicCap::Hca)
    ));
    assert!(matches!(
        AtomicCap::from_ib(ib::AtomicCap::Glob as u32),
        Some(AtomicCap::Glob)
    ));
};
