// SPDX-License-Identifier: GPL-2.0

//! The words with a combining batch in flight: a fixed table of slots,
//! each holding the operations that wait for its word's next
//! compare-and-swap.

use super::chain::{Chain, Linked};
use crate::api::GuessCache;

/// How many words of one QP (or group of QPs) can have a combining batch in
/// flight at once. An emulated operation on a further word runs on its own,
/// and is not ordered with later operations on its word.
pub(super) const ACTIVE_WORDS: usize = 32;

/// A word with a batch in flight, and the operations waiting for its next
/// compare-and-swap.
pub(super) struct Word<T: Linked> {
    pub(super) key: Option<(u32, u64)>,
    /// Newest first, so that joining is O(1); reversed when taken.
    pub(super) waiting_rev: Chain<T>,
}

/// The words of a QP (or of a group of QPs) with a batch in flight, and
/// its guess cache.
pub(super) struct WordsInner<T: Linked> {
    pub(super) cache: GuessCache,
    /// The words (rkey, address) with an emulated compare-and-swap in
    /// flight: a new emulated operation on one of them waits there and
    /// joins that word's next compare-and-swap.
    pub(super) words: [Word<T>; ACTIVE_WORDS],
}

impl<T: Linked> WordsInner<T> {
    /// No word in flight, and `cache`.
    pub(super) fn new(cache: GuessCache) -> Self {
        Self {
            cache,
            words: core::array::from_fn(|_| Word {
                key: None,
                waiting_rev: Chain::new(),
            }),
        }
    }

    pub(super) fn word(&mut self, key: (u32, u64)) -> Option<&mut Word<T>> {
        self.words.iter_mut().find(|w| w.key == Some(key))
    }

    /// Claims a slot for `key`; false if none is free.
    pub(super) fn activate(&mut self, key: (u32, u64)) -> bool {
        match self.words.iter_mut().find(|w| w.key.is_none()) {
            Some(w) => {
                w.key = Some(key);
                true
            }
            None => false,
        }
    }

    /// Takes the operations waiting for `key`'s next compare-and-swap, in
    /// the order they were posted.
    pub(super) fn take_waiting(&mut self, key: (u32, u64)) -> Chain<T> {
        match self.word(key) {
            Some(w) => core::mem::take(&mut w.waiting_rev).reversed(),
            None => Chain::new(),
        }
    }

    /// Puts `older` back in front of what waits for `key`, whose slot the
    /// caller holds (it is never taken from under it: only the batch
    /// holding a slot ends it, but for the destroy of a QP of its own,
    /// which waits for its batches). What cannot be put back is returned.
    pub(super) fn wait_again(&mut self, key: (u32, u64), older: Chain<T>) -> Chain<T> {
        match self.word(key) {
            Some(w) => {
                w.waiting_rev.append(older.reversed());
                Chain::new()
            }
            None => older,
        }
    }

    /// Frees `key`'s slot and takes what waited for it, in one step: nothing
    /// joins a word whose batch has ended.
    pub(super) fn end_word(&mut self, key: (u32, u64)) -> Chain<T> {
        match self.word(key) {
            Some(w) => {
                w.key = None;
                core::mem::take(&mut w.waiting_rev).reversed()
            }
            None => Chain::new(),
        }
    }
}
