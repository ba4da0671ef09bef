// SPDX-License-Identifier: GPL-2.0

//! The subnet manager as the engine sees it: GUIDInfo requests and their
//! answers, and the [`SmBackend`] trait that carries them.
//!
//! The kernel layer implements [`SmBackend`] twice: over the real SA
//! (`ib_sa_guid_info_rec_query`, one request per GUIDInfo record, the entry
//! mask becoming the component mask bits `IB_SA_COMP_MASK(4 + i)`, and
//! `ib_sa_cancel_query` for [`SmBackend::cancel`]), and over a simulated SM
//! for tests and demos (see [`super::SimSm`]).

use core::fmt;

use super::{EntryIdx, RecordIdx, GUIDS_PER_RECORD};

/// The engine's identifier of a [`Request`], echoed in its [`Answer`]: an
/// answer is applied only to the outstanding request with the same
/// identifier.
///
/// Only the engine makes new ones; a backend keeps the identifier of each
/// request it sent (or the whole [`Request`]) to build the answer and to find
/// the query to cancel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(u64);

impl RequestId {
    /// The first identifier a port's engine hands out.
    pub(super) const FIRST: Self = Self(1);

    /// Returns the identifier after this one.
    pub(super) const fn next(self) -> Self {
        Self(self.0.wrapping_add(1))
    }

    /// Returns the identifier as a number, for logs.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for RequestId {
    /// The identifier in decimal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// What a GUIDInfo request asks of the SA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Set the entries to the given GUIDs; a GUID of 0 asks the SM to assign one.
    Set,
    /// Delete the entries.
    Delete,
}

/// One request to the SM: some entries of one GUIDInfo record, all with the
/// same method (SET and DELETE are never mixed in one request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The engine's identifier of this request, echoed in the [`Answer`].
    pub id: RequestId,
    /// The GUIDInfo record (the SA's block number).
    pub record: RecordIdx,
    /// SET or DELETE.
    pub method: Method,
    /// The entries of the record that the request covers: bit `i` is
    /// physical entry `8 * record + i`.
    pub mask: u8,
    /// The GUID asked for each entry in `mask` (0: let the SM assign one),
    /// indexed by [`EntryIdx::slot`]; entries outside `mask` are 0.
    pub guids: [u64; GUIDS_PER_RECORD],
}

impl Request {
    /// Returns the physical entries the request covers, in increasing order.
    pub fn entries(&self) -> impl Iterator<Item = EntryIdx> {
        let mask = self.mask;
        self.record
            .entries()
            .filter(move |entry| mask & entry.bit() != 0)
    }
}

/// How the SA answered a request as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerStatus {
    /// The SA answered; the record tells, entry by entry, what the SM did.
    Ok,
    /// The SA query failed: the port's SA backoff rises (1, 2, 4, ... 60 s)
    /// and the request's entries are retried when it has passed.
    Error,
    /// The SA query timed out: as [`AnswerStatus::Error`].
    Timeout,
    /// The port is not active: retry the request's entries after 5 s.
    PortDown,
}

/// The SM's answer to a [`Request`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The [`Request::id`] answered.
    pub id: RequestId,
    /// The GUIDInfo record the answer is for (the SA's block number), which
    /// must be the request's. A block number past the port is no record: the
    /// backend answers such a reply with [`AnswerStatus::Error`].
    pub record: RecordIdx,
    /// The outcome of the query as a whole.
    pub status: AnswerStatus,
    /// With [`AnswerStatus::Ok`], the record's GUIDs as the SA returned them.
    /// For a SET, an entry holding the GUID asked for (or any valid GUID when
    /// 0 was asked for) was accepted; anything else was declined. For a
    /// DELETE, every entry of the request was deleted.
    pub guids: [u64; GUIDS_PER_RECORD],
}

impl Answer {
    /// Returns the answer to `request` with `status` and no GUIDs, for the
    /// failures.
    pub const fn failed(request: &Request, status: AnswerStatus) -> Self {
        Self {
            id: request.id,
            record: request.record,
            status,
            guids: [0; GUIDS_PER_RECORD],
        }
    }
}

/// Why a backend could not send a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitError {
    /// The port is not active (retried after 5 s).
    PortDown,
    /// Any other failure, such as no memory (an SA error: the port's SA
    /// backoff).
    Failed,
}

/// A way to reach the subnet manager, for [`super::Engine::run`].
///
/// [`submit`](SmBackend::submit) only sends: the answer comes back later,
/// from whatever context the backend completes in, and is handed to
/// [`super::Engine::answer`]. A backend must answer every request it accepted
/// exactly once, a cancelled one included (its answer is then stale and the
/// engine ignores it); the engine itself gives a request up after
/// [`super::ANSWER_WATCHDOG_SECS`] and asks for it to be cancelled.
pub trait SmBackend {
    /// Sends `request` to the SM. On error the request was not sent and
    /// will not be answered.
    fn submit(&mut self, request: &Request) -> Result<(), SubmitError>;

    /// Cancels `request`, which the engine no longer waits for: it was given
    /// up by the answer watchdog or dropped by [`super::Engine::reset`]. It
    /// must not sleep (`ib_sa_cancel_query` takes a spinlock), and a request
    /// that was already answered, or never sent, is no error.
    fn cancel(&mut self, request: &Request);
}
