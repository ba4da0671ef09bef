// SPDX-License-Identifier: GPL-2.0

//! A simulated subnet manager with programmable answers, for host tests and
//! for the module's simulated SM backend.

use super::{
    Answer, AnswerStatus, EntryIdx, Method, Request, SmBackend, SubmitError, GUIDS_PER_RECORD,
    GUID_ASSIGN, PORT_GUIDS,
};

/// How a [`SimSm`] answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimMode {
    /// Sets, assigns and deletes what it is asked to (except the entries
    /// told to decline with [`SimSm::decline`]).
    Accept,
    /// Declines every entry of a SET, fails every DELETE.
    Decline,
    /// Every query fails.
    Error,
    /// Every query times out.
    Timeout,
    /// Every query finds the port not active.
    PortDown,
}

/// A simulated SM: it holds the port's GUID table as the SM sees it, takes
/// one request at a time through [`SmBackend::submit`], and answers it when
/// told to with [`SimSm::reply`], according to its [`SimMode`]. A cancelled
/// request is never answered.
#[derive(Clone, Debug)]
pub struct SimSm {
    mode: SimMode,
    guid_base: u64,
    table: [u64; PORT_GUIDS],
    declines: [u8; PORT_GUIDS],
    inflight: Option<Request>,
    requests: u64,
    cancels: u64,
}

impl SimSm {
    /// Returns an SM in [`SimMode::Accept`] that assigns `guid_base + n` to
    /// entry `n` when asked to assign one.
    pub const fn new(guid_base: u64) -> Self {
        Self {
            mode: SimMode::Accept,
            guid_base,
            table: [0; PORT_GUIDS],
            declines: [0; PORT_GUIDS],
            inflight: None,
            requests: 0,
            cancels: 0,
        }
    }

    /// Sets how the SM answers from now on.
    pub fn set_mode(&mut self, mode: SimMode) {
        self.mode = mode;
    }

    /// Returns how the SM answers.
    pub const fn mode(&self) -> SimMode {
        self.mode
    }

    /// Makes the SM decline the next `times` SETs of `entry` even in
    /// [`SimMode::Accept`].
    pub fn decline(&mut self, entry: EntryIdx, times: u8) {
        self.declines[entry.index()] = times;
    }

    /// Returns the GUID the SM holds for `entry`.
    pub fn guid(&self, entry: EntryIdx) -> u64 {
        self.table[entry.index()]
    }

    /// Returns the GUID the SM assigns to `entry`.
    pub const fn assigned_guid(&self, entry: EntryIdx) -> u64 {
        self.guid_base.wrapping_add(entry.get() as u64)
    }

    /// Returns how many requests the SM has received.
    pub const fn requests(&self) -> u64 {
        self.requests
    }

    /// Returns how many cancels the SM has received, whether or not they
    /// found the request still waiting.
    pub const fn cancels(&self) -> u64 {
        self.cancels
    }

    /// Returns the request waiting for an answer, if any.
    pub const fn inflight(&self) -> Option<&Request> {
        self.inflight.as_ref()
    }

    /// Forgets the waiting request without answering it, as a lost MAD.
    pub fn lose(&mut self) -> Option<Request> {
        self.inflight.take()
    }

    /// Answers the waiting request, if any, according to the mode.
    pub fn reply(&mut self) -> Option<Answer> {
        let request = self.inflight.take()?;
        let status = match (self.mode, request.method) {
            (SimMode::Accept, _) | (SimMode::Decline, Method::Set) => AnswerStatus::Ok,
            (SimMode::Decline, Method::Delete) | (SimMode::Error, _) => AnswerStatus::Error,
            (SimMode::Timeout, _) => AnswerStatus::Timeout,
            (SimMode::PortDown, _) => AnswerStatus::PortDown,
        };
        if status != AnswerStatus::Ok {
            return Some(Answer::failed(&request, status));
        }
        let mut guids = [0; GUIDS_PER_RECORD];
        for entry in request.entries() {
            let asked = request.guids[entry.slot()];
            let assigned = self.assigned_guid(entry);
            let held = &mut self.table[entry.index()];
            let declines = &mut self.declines[entry.index()];
            let answer = match request.method {
                Method::Delete => {
                    *held = 0;
                    0
                }
                // Scripted declines are kept for when the SM accepts again.
                Method::Set if self.mode == SimMode::Decline => 0,
                Method::Set if *declines > 0 => {
                    *declines = declines.saturating_sub(1);
                    0
                }
                Method::Set => {
                    *held = if asked == GUID_ASSIGN {
                        assigned
                    } else {
                        asked
                    };
                    *held
                }
            };
            guids[entry.slot()] = answer;
        }
        Some(Answer {
            id: request.id,
            record: request.record,
            status,
            guids,
        })
    }
}

impl SmBackend for SimSm {
    fn submit(&mut self, request: &Request) -> Result<(), SubmitError> {
        // The engine cancels a request it gave up on before it sends the
        // next; should it not, the new request replaces the old one.
        self.inflight = Some(*request);
        self.requests = self.requests.wrapping_add(1);
        Ok(())
    }

    fn cancel(&mut self, request: &Request) {
        self.cancels = self.cancels.wrapping_add(1);
        if self.inflight.is_some_and(|r| r.id == request.id) {
            self.inflight = None;
        }
    }
}
