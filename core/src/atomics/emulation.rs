// SPDX-License-Identifier: GPL-2.0

//! Emulation of the 64-bit masked atomics with standard compare-and-swap, for
//! devices that have standard atomics but no masked ones (rxe, upstream mlx5).
//!
//! [`Emulation`] is a pure state machine: it names the compare-and-swap to
//! issue, and the caller reports the value each one returned (the word's value
//! at that moment). Starting from a guess `g` of the word, it issues
//! `CAS(g, op(g))`. If the CAS returns `g`, it succeeded: the word went from
//! `g` to `op(g)` in one atomic step, which is the operation's linearization
//! point, and the response is `g`. Otherwise nothing was written, and the
//! returned value is the next guess.
//!
//! The guess is validated even when the operation would not change it (a
//! failing compare, `swap_mask == 0`, `add == 0`): the CAS is then
//! `CAS(g, g)`, which writes nothing but proves that the word held `g`.
//! Answering `g` without it could hand back a value the word no longer holds,
//! or never held.

/// A 64-bit masked atomic operation, with its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskedOp {
    /// Masked compare-and-swap (`IB_WR_MASKED_ATOMIC_CMP_AND_SWP`).
    CmpSwap {
        /// The value compared with the word.
        compare: u64,
        /// The bits of the word that take part in the comparison.
        compare_mask: u64,
        /// The value written into the word when the comparison holds.
        swap: u64,
        /// The bits of the word that the swap replaces.
        swap_mask: u64,
    },
    /// Masked fetch-and-add (`IB_WR_MASKED_ATOMIC_FETCH_AND_ADD`).
    FetchAdd {
        /// The value added, field by field.
        add: u64,
        /// The most significant bit of every field.
        field_boundary: u64,
    },
}

impl MaskedOp {
    /// Returns the word's new value when the operation runs on `old`.
    #[inline]
    pub const fn apply(self, old: u64) -> u64 {
        match self {
            Self::CmpSwap {
                compare,
                compare_mask,
                swap,
                swap_mask,
            } => super::masked_cmp_swap(old, compare, compare_mask, swap, swap_mask),
            Self::FetchAdd {
                add,
                field_boundary,
            } => super::masked_fetch_add(old, add, field_boundary),
        }
    }
}

/// A standard 64-bit compare-and-swap to issue on the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cas {
    /// The value the word is expected to hold.
    pub compare: u64,
    /// The value written when the word holds `compare`.
    pub swap: u64,
}

/// What the emulation needs next, after a compare-and-swap completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Issue this compare-and-swap and report its result.
    Next(Cas),
    /// The operation took place; `response` is the word's old value.
    Done {
        /// The response of the masked operation: the word's value just before it.
        response: u64,
    },
    /// The bound on attempts was reached and every compare-and-swap failed, so
    /// the operation did not take place. `last_seen` is the word's most
    /// recent value, a good guess for a new attempt.
    Exhausted {
        /// The value the last compare-and-swap returned.
        last_seen: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Pending,
    Done(u64),
    Exhausted,
}

/// The bound on compare-and-swap attempts used by [`Emulation::new`].
pub const DEFAULT_MAX_ATTEMPTS: u32 = 64;

/// A masked operation carried out as a loop of standard compare-and-swaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Emulation {
    op: MaskedOp,
    guess: u64,
    attempts: u32,
    max_attempts: u32,
    state: State,
}

impl Emulation {
    /// Starts `op` with `guess` as the presumed value of the word, allowing
    /// [`DEFAULT_MAX_ATTEMPTS`] compare-and-swaps.
    pub const fn new(op: MaskedOp, guess: u64) -> Self {
        Self::with_max_attempts(op, guess, DEFAULT_MAX_ATTEMPTS)
    }

    /// Starts `op` with `guess` as the presumed value of the word, allowing at
    /// most `max_attempts` compare-and-swaps (at least one).
    pub const fn with_max_attempts(op: MaskedOp, guess: u64, max_attempts: u32) -> Self {
        Self {
            op,
            guess,
            attempts: 0,
            max_attempts: if max_attempts == 0 { 1 } else { max_attempts },
            state: State::Pending,
        }
    }

    /// Returns the operation being emulated.
    pub const fn op(&self) -> MaskedOp {
        self.op
    }

    /// Returns the compare-and-swap to issue now: the current guess and the
    /// operation applied to it.
    pub const fn cas(&self) -> Cas {
        Cas {
            compare: self.guess,
            swap: self.op.apply(self.guess),
        }
    }

    /// Returns how many compare-and-swaps have completed so far.
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Returns the bound on compare-and-swaps.
    pub const fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// Returns the current state as a [`Step`]: the compare-and-swap to issue
    /// while the operation is pending, or its outcome.
    pub const fn step(&self) -> Step {
        match self.state {
            State::Pending => Step::Next(self.cas()),
            State::Done(response) => Step::Done { response },
            State::Exhausted => Step::Exhausted {
                last_seen: self.guess,
            },
        }
    }

    /// Reports the value returned by the compare-and-swap [`Emulation::cas`]
    /// named, and returns what comes next. Once the operation is done or
    /// exhausted, further reports change nothing and return that outcome.
    pub fn complete(&mut self, returned: u64) -> Step {
        if self.state != State::Pending {
            return self.step();
        }
        self.attempts = self.attempts.saturating_add(1);
        if returned == self.guess {
            self.state = State::Done(returned);
        } else {
            self.guess = returned;
            if self.attempts >= self.max_attempts {
                self.state = State::Exhausted;
            }
        }
        self.step()
    }

    /// Runs the operation to its end with a synchronous compare-and-swap:
    /// `cas` performs one on the word and returns the value it found there.
    /// Returns [`Step::Done`] or [`Step::Exhausted`].
    pub fn drive<F: FnMut(Cas) -> u64>(&mut self, mut cas: F) -> Step {
        loop {
            match self.step() {
                Step::Next(next) => {
                    self.complete(cas(next));
                }
                outcome => return outcome,
            }
        }
    }
}
