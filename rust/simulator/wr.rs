// SPDX-License-Identifier: GPL-2.0

//! A send request as a simulated QP queues it: a copy of what the ULP
//! posted, which the QP's work item executes later.

use super::shared::Reg;
use crate::ib::provider::driver::{Driver, SendWr, Sge, UdWr};
use crate::sim::fabric::{AtomicOp, WrOpcode};
use kernel::prelude::*;

/// The most SGEs a simulated adapter takes per work request.
pub(super) const MAX_SGE: usize = 4;

/// A send request as queued: a copy of what the ULP posted (its WR may be
/// gone once `post_send` returns).
#[derive(Clone)]
pub(super) struct Pending {
    pub(super) wr_id: u64,
    pub(super) opcode: WrOpcode,
    pub(super) signaled: bool,
    pub(super) sges: [Option<Sge>; MAX_SGE],
    pub(super) remote_addr: u64,
    pub(super) rkey: u32,
    pub(super) atomic: Option<AtomicOp>,
    pub(super) reg: Option<Reg>,
    pub(super) invalidate_rkey: u32,
    /// The address of a send on the GSI QP.
    pub(super) ud: Option<UdWr>,
}

/// `IB_SEND_FENCE` (`enum ib_send_flags`). The simulated adapter executes
/// a QP's send queue in order, one request after the other completed, so
/// every request is fenced already: the flag is only counted.
pub(super) const SEND_FENCE: u32 = 1 << 0;
/// `IB_SEND_SIGNALED` (`enum ib_send_flags`).
const SEND_SIGNALED: u32 = 1 << 1;

impl Pending {
    /// Copies `wr`, with the registration `reg` its `IB_WR_REG_MR` asks
    /// for (found by the caller, which knows its MRs).
    pub(super) fn new<D: Driver>(
        opcode: WrOpcode,
        wr: &SendWr<'_, D>,
        reg: Option<Reg>,
    ) -> Result<Self> {
        if wr.sges.len() > MAX_SGE {
            return Err(EINVAL);
        }
        let mut sges = [None; MAX_SGE];
        for (slot, sge) in sges.iter_mut().zip(wr.sges.iter()) {
            *slot = Some(*sge);
        }
        if reg.is_none() && opcode == WrOpcode::RegMr {
            return Err(EINVAL);
        }
        Ok(Self {
            wr_id: wr.wr_id,
            opcode,
            signaled: wr.send_flags & SEND_SIGNALED != 0,
            sges,
            remote_addr: wr.remote_addr,
            rkey: wr.rkey,
            atomic: AtomicOp::from_wr(
                opcode,
                wr.compare_add,
                wr.compare_add_mask,
                wr.swap,
                wr.swap_mask,
            ),
            reg,
            invalidate_rkey: wr.invalidate_rkey,
            ud: wr.ud,
        })
    }

    pub(super) fn sge_count(&self) -> usize {
        self.sges.iter().filter(|s| s.is_some()).count()
    }

    /// The request's scatter/gather list.
    pub(super) fn sges(&self) -> impl Iterator<Item = &Sge> {
        self.sges.iter().flatten()
    }
}
