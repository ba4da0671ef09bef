// SPDX-License-Identifier: GPL-2.0

//! The GSI QP (QP1) of a simulated port: what ib_mad sends on it and what
//! comes back. A MAD addressed to the subnet manager (the SM's LID, QP1)
//! is answered by the port's SA (`sa.rs`); anything else leaves the port
//! and is lost, as an unanswered datagram is. The answer is delivered as a
//! receive on the same QP, after the send's completion, as the SA's reply
//! arrives on a real port: no GRH, from the SM's LID and QP1, P_Key index 0.

use super::shared::{AdapterShared, SM_LID};
use super::wr::Pending;
use crate::sim::fabric::{Access, WcStatus};
use crate::sim::sa::MAD_LEN;

/// The GRH room ib_mad leaves before every MAD it receives
/// (`struct ib_grh`): a receive is this plus the MAD.
pub(super) const GRH_LEN: usize = 40;

/// The GSI QP's number.
pub(super) const GSI_QPN: u32 = 1;

/// What a send on the GSI QP of `port` of `adapter`, in protection domain
/// `pd`, did: the completion's status and byte count, and whether an
/// answer was written to `answer`.
pub(super) fn send(
    adapter: &AdapterShared,
    pd: u32,
    port: u32,
    p: &Pending,
    answer: &mut [u8; MAD_LEN],
) -> (WcStatus, u32, bool) {
    let Some(ud) = p.ud else {
        return (WcStatus::LocQpOpErr, 0, false);
    };
    let mut mad = [0u8; MAD_LEN];
    let mut len = 0usize;
    for sge in p.sges() {
        let n = sge.length() as usize;
        let Some(dst) = mad.get_mut(len..len + n) else {
            return (WcStatus::LocLenErr, 0, false);
        };
        let read = adapter
            .translate_local(pd, sge, u64::from(sge.length()), Access::empty())
            .and_then(|src| src.read(dst).map_err(|_| WcStatus::LocProtErr));
        if let Err(status) = read {
            return (status, 0, false);
        }
        len += n;
    }
    let byte_len = u32::try_from(len).unwrap_or(u32::MAX);
    // Sent; only a MAD to the SM is answered, and only while the port is up.
    if ud.ah.dlid != SM_LID || ud.remote_qpn != GSI_QPN || len != MAD_LEN || !adapter.port_up(port)
    {
        return (WcStatus::Success, byte_len, false);
    }
    let answered = adapter.sa.handle(port, &mad, answer);
    (WcStatus::Success, byte_len, answered)
}
