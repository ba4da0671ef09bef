// SPDX-License-Identifier: GPL-2.0

//! Entry and record indexes: checked once where they come in, and converted
//! into each other without a check.

use mlx_ext_core::guid::{EntryIdx, GuidError, RecordIdx, GUIDS_PER_RECORD, PORT_GUIDS, RECORDS};

#[test]
fn entries_are_0_to_127() {
    for n in 0..=u8::MAX {
        let entry = EntryIdx::new(n);
        assert_eq!(entry.is_some(), usize::from(n) < PORT_GUIDS, "{n}");
        assert_eq!(
            EntryIdx::try_from(n),
            entry.ok_or(GuidError::NoSuchEntry),
            "{n}"
        );
        assert_eq!(EntryIdx::try_from(usize::from(n)), EntryIdx::try_from(n));
        if let Some(entry) = entry {
            assert_eq!((entry.get(), u8::from(entry)), (n, n));
            assert_eq!(entry.index(), usize::from(n));
            assert_eq!(entry.to_string(), n.to_string());
        }
    }
    for n in [256usize, 1 << 16, usize::MAX] {
        assert_eq!(EntryIdx::try_from(n), Err(GuidError::NoSuchEntry));
    }
    assert_eq!(EntryIdx::HW_GUID.get(), 0);
    let all: Vec<u8> = EntryIdx::all().map(EntryIdx::get).collect();
    assert_eq!(all, (0..128).collect::<Vec<u8>>());
}

#[test]
fn records_are_0_to_15() {
    for n in 0..=u8::MAX {
        let record = RecordIdx::new(n);
        assert_eq!(record.is_some(), usize::from(n) < RECORDS, "{n}");
        if let Some(record) = record {
            assert_eq!((record.get(), u8::from(record)), (n, n));
            assert_eq!(record.to_string(), n.to_string());
        }
    }
    let all: Vec<u8> = RecordIdx::all().map(RecordIdx::get).collect();
    assert_eq!(all, (0..16).collect::<Vec<u8>>());
}

#[test]
fn an_entry_is_a_slot_of_a_record() {
    for entry in EntryIdx::all() {
        let n = entry.get();
        assert_eq!(entry.record().get(), n / 8, "entry {n}");
        assert_eq!(entry.slot(), usize::from(n % 8), "entry {n}");
        assert_eq!(entry.bit(), 1 << (n % 8), "entry {n}");
    }
    let mut seen = Vec::new();
    for record in RecordIdx::all() {
        let entries: Vec<EntryIdx> = record.entries().collect();
        assert_eq!(entries.len(), GUIDS_PER_RECORD);
        assert_eq!(record.first_entry(), entries[0]);
        for (slot, entry) in entries.iter().enumerate() {
            assert_eq!(entry.get(), record.get() * 8 + slot as u8);
            assert_eq!((entry.record(), entry.slot()), (record, slot));
        }
        seen.extend(entries);
    }
    assert_eq!(seen, EntryIdx::all().collect::<Vec<_>>(), "each entry once");
}
