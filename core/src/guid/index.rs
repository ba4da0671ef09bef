// SPDX-License-Identifier: GPL-2.0

//! Physical entry and GUIDInfo record indexes, validated once where they
//! enter the engine.
//!
//! An [`EntryIdx`] is always below 128 and a [`RecordIdx`] below 16: the
//! constructors check it, and nothing else can make one. Inside the engine
//! they index the port's tables without a check that could fail, and the
//! conversions between them (an entry's record and slot in it, a record's 8
//! entries) need no check either.

use core::fmt;

use super::{GuidError, GUIDS_PER_RECORD, PORT_GUIDS, RECORDS};

/// A physical alias GUID entry of a port: 0 to 127.
///
/// Entry `n` is slot `n % 8` of GUIDInfo record `n / 8`. Built from a plain
/// index with [`EntryIdx::new`] or [`EntryIdx::try_from`]; sysfs code parses
/// the `<n>` of `admin_guids/<n>` into one and hands it to the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryIdx(u8);

/// A GUIDInfo record of a port, as the SA numbers its blocks: 0 to 15.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordIdx(u8);

// Both bounds are powers of two: the masks below are no-ops on a valid index
// and let the optimizer drop the bounds checks of the tables they index.
const ENTRY_MASK: u8 = PORT_GUIDS as u8 - 1;
const SLOT_MASK: u8 = GUIDS_PER_RECORD as u8 - 1;
const SLOT_BITS: u32 = GUIDS_PER_RECORD.trailing_zeros();

impl EntryIdx {
    /// The PF's entry 0, which holds the port's hardware GUID and is
    /// read-only.
    pub const HW_GUID: Self = Self(0);

    /// Returns entry `index`, or `None` past the port (128 or more).
    pub const fn new(index: u8) -> Option<Self> {
        if (index as usize) < PORT_GUIDS {
            Some(Self(index))
        } else {
            None
        }
    }

    /// Returns the entry as a plain number, 0 to 127.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// Returns the entry as an index into a table of the port's 128 entries;
    /// indexing a `[T; 128]` with it never fails.
    pub const fn index(self) -> usize {
        (self.0 & ENTRY_MASK) as usize
    }

    /// Returns the GUIDInfo record that holds the entry.
    pub const fn record(self) -> RecordIdx {
        RecordIdx(self.0 >> SLOT_BITS)
    }

    /// Returns the entry's slot in its record, 0 to 7, as an index into the
    /// record's 8 GUIDs (such as [`super::Request::guids`]); indexing a
    /// `[T; 8]` with it never fails.
    pub const fn slot(self) -> usize {
        (self.0 & SLOT_MASK) as usize
    }

    /// Returns the entry's bit in a record's entry mask
    /// ([`super::Request::mask`]): `1 << slot`.
    pub const fn bit(self) -> u8 {
        1 << (self.0 & SLOT_MASK)
    }

    /// Returns every entry of a port, in increasing order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..=ENTRY_MASK).map(Self)
    }
}

impl TryFrom<u8> for EntryIdx {
    type Error = GuidError;

    /// Returns entry `index`, or [`GuidError::NoSuchEntry`] past the port.
    fn try_from(index: u8) -> Result<Self, GuidError> {
        Self::new(index).ok_or(GuidError::NoSuchEntry)
    }
}

impl TryFrom<usize> for EntryIdx {
    type Error = GuidError;

    /// Returns entry `index`, or [`GuidError::NoSuchEntry`] past the port.
    fn try_from(index: usize) -> Result<Self, GuidError> {
        u8::try_from(index)
            .ok()
            .and_then(Self::new)
            .ok_or(GuidError::NoSuchEntry)
    }
}

impl From<EntryIdx> for u8 {
    fn from(entry: EntryIdx) -> Self {
        entry.0
    }
}

impl fmt::Display for EntryIdx {
    /// The entry in decimal, as sysfs names it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl RecordIdx {
    /// Returns record `index`, or `None` past the port (16 or more).
    pub const fn new(index: u8) -> Option<Self> {
        if (index as usize) < RECORDS {
            Some(Self(index))
        } else {
            None
        }
    }

    /// Returns the record as a plain number (the SA's block number), 0 to 15.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// Returns the record's first entry, `8 * record`.
    pub const fn first_entry(self) -> EntryIdx {
        EntryIdx(self.0 << SLOT_BITS)
    }

    /// Returns the record's 8 entries, `8 * record` to `8 * record + 7`, in
    /// increasing order.
    pub fn entries(self) -> impl Iterator<Item = EntryIdx> {
        let first = self.first_entry().0;
        (0..=SLOT_MASK).map(move |slot| EntryIdx(first | slot))
    }

    /// Returns every record of a port, in increasing order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..RECORDS as u8).map(Self)
    }
}

impl From<RecordIdx> for u8 {
    fn from(record: RecordIdx) -> Self {
        record.0
    }
}

impl fmt::Display for RecordIdx {
    /// The record in decimal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}
