// SPDX-License-Identifier: GPL-2.0

//! A set of small indexes (functions or physical entries), without `u128`.

/// A set of indexes below 128: functions (0 is the PF) or physical entries.
///
/// Bit `i % 64` of word `i / 64` stands for index `i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Set128(pub [u64; 2]);

impl Set128 {
    /// The empty set.
    pub const EMPTY: Self = Self([0; 2]);

    fn locate(index: u16) -> Option<(usize, u64)> {
        let word = usize::from(index / 64);
        (word < 2).then(|| (word, 1u64.wrapping_shl(u32::from(index % 64))))
    }

    /// Returns the word that holds `index` and its bit there.
    fn word_mut(&mut self, index: u16) -> Option<(&mut u64, u64)> {
        let (w, bit) = Self::locate(index)?;
        self.0.get_mut(w).map(|v| (v, bit))
    }

    /// Adds `index`; returns `false` (and changes nothing) when it is 128 or more.
    pub fn insert(&mut self, index: u16) -> bool {
        match self.word_mut(index) {
            Some((v, bit)) => {
                *v |= bit;
                true
            }
            None => false,
        }
    }

    /// Removes `index` if present.
    pub fn remove(&mut self, index: u16) {
        if let Some((v, bit)) = self.word_mut(index) {
            *v &= !bit;
        }
    }

    /// Returns whether `index` is in the set.
    pub fn contains(&self, index: u16) -> bool {
        Self::locate(index)
            .and_then(|(w, bit)| self.0.get(w).map(|v| v & bit != 0))
            .unwrap_or(false)
    }

    /// Returns whether the set is empty.
    pub const fn is_empty(&self) -> bool {
        self.0[0] == 0 && self.0[1] == 0
    }

    /// Returns the number of indexes in the set.
    pub const fn len(&self) -> u32 {
        self.0[0]
            .count_ones()
            .saturating_add(self.0[1].count_ones())
    }

    /// Returns the union of two sets.
    pub const fn union(&self, other: &Self) -> Self {
        Self([self.0[0] | other.0[0], self.0[1] | other.0[1]])
    }

    /// Returns the indexes in the set, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (0u16..128).filter(move |&i| self.contains(i))
    }
}
