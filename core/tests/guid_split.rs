// SPDX-License-Identifier: GPL-2.0

//! The split of a port's GUID entries, checked against an independent
//! construction for every VF count, on ports of 128 entries and smaller.

use mlx_ext_core::guid::{guid_split, EntryIdx, GuidError, NoTree, MAX_VFS, PORT_GUIDS};

fn ent(n: u8) -> EntryIdx {
    EntryIdx::new(n).unwrap()
}

/// Deals the `len - 2` shared entries out one at a time, round robin from
/// VF 1, then lays the functions out contiguously: PF first, then VF 1,
/// VF 2, ...
fn dealt(len: usize, num_vfs: u16) -> (Vec<u8>, Vec<Option<(u16, u8)>>) {
    let mut counts = vec![2u8];
    counts.extend(std::iter::repeat(0).take(usize::from(num_vfs)));
    if num_vfs > 0 {
        for j in 0..len - 2 {
            counts[1 + j % usize::from(num_vfs)] += 1;
        }
    }
    let mut owners = vec![None; PORT_GUIDS];
    let mut next = 0usize;
    for (f, &c) in counts.iter().enumerate() {
        for n in 0..c {
            owners[next] = Some((f as u16, n));
            next += 1;
        }
    }
    (counts, owners)
}

/// The port sizes the tests take: a ConnectX-3's 128, and smaller ones,
/// whole records or not.
const SIZES: [u16; 9] = [128, 127, 100, 64, 17, 16, 9, 8, 3];

#[test]
fn every_vf_count_matches_the_dealt_split() {
    for len in SIZES {
        every_vf_count_of(len);
    }
}

fn every_vf_count_of(len: u16) {
    let max_vfs = len - 2;
    for num_vfs in 0..=max_vfs {
        let split = guid_split(len, num_vfs).unwrap();
        assert_eq!(u16::from(split.port_guids()), len);
        let (counts, owners) = dealt(usize::from(len), num_vfs);
        let total: u32 = counts.iter().map(|&c| u32::from(c)).sum();
        assert_eq!(
            total,
            if num_vfs == 0 { 2 } else { u32::from(len) },
            "{len} GUIDs, {num_vfs} VFs"
        );
        for f in 0..=num_vfs {
            assert_eq!(
                split.count(f),
                counts[usize::from(f)],
                "{num_vfs} VFs, function {f}"
            );
        }
        assert_eq!(split.count(num_vfs + 1), 0);
        for (index, owner) in owners.iter().enumerate() {
            let index = index as u8;
            let owner = if u16::from(index) < len { *owner } else { None };
            assert_eq!(
                split.owner(ent(index)),
                owner,
                "{len} GUIDs, {num_vfs} VFs, entry {index}"
            );
            assert_eq!(split.holds(ent(index)), u16::from(index) < len);
            if let Some((f, n)) = owner {
                assert_eq!(
                    split.physical_index(f, n),
                    Some(index),
                    "{num_vfs} VFs, {f}/{n}"
                );
                assert_eq!(split.entry(f, n), Some(ent(index)));
            }
        }
        for f in 0..=num_vfs + 1 {
            let c = split.count(f);
            assert_eq!(
                split.physical_index(f, c),
                None,
                "one past the last entry of {f}"
            );
            assert_eq!(split.entry(f, c), None);
            assert_eq!(split.base(f), split.entry(f, 0));
        }
    }
}

#[test]
fn the_seeds_five_vf_example() {
    let split = guid_split(128, 5).unwrap();
    let counts: Vec<u8> = (0..=5).map(|f| split.count(f)).collect();
    assert_eq!(counts, [2, 26, 25, 25, 25, 25]);
    assert_eq!(split.base(1), Some(ent(2)));
    assert_eq!(split.base(2), Some(ent(28)));
    assert_eq!(split.base(5), Some(ent(103)));
    assert_eq!(split.physical_index(5, 24), Some(127));
    assert_eq!(split.physical_index(0, 1), Some(1));
    assert_eq!(split.physical_index(0, 2), None);
}

#[test]
fn one_and_126_vfs() {
    let one = guid_split(128, 1).unwrap();
    assert_eq!((one.count(0), one.count(1)), (2, 126));
    let full = guid_split(128, MAX_VFS).unwrap();
    assert!((1..=126).all(|vf| full.count(vf) == 1 && full.base(vf) == Some(ent(vf as u8 + 1))));
}

#[test]
fn more_vfs_than_the_port_has_guids_for_is_refused() {
    for (len, n) in [
        (128, 127),
        (128, 128),
        (128, 200),
        (128, u16::MAX),
        (16, 15),
        (3, 2),
        (2, 1),
        (1, 0),
        (0, 0),
        (0, 1),
    ] {
        let err = guid_split(len, n).unwrap_err();
        assert_eq!(err, GuidError::TooManyVfs, "{len} GUIDs, {n} VFs");
        assert_eq!(err.errno(), -34);
        assert!(err
            .message()
            .contains("more VFs than the port has GUIDs for"));
    }
}

#[test]
fn a_port_of_more_than_128_is_taken_as_128() {
    for len in [129, 255, u16::MAX] {
        let split = guid_split(len, 5).unwrap();
        assert_eq!(split.port_guids(), PORT_GUIDS as u8);
        assert_eq!(split, guid_split(128, 5).unwrap());
        assert_eq!(guid_split(len, 127), Err(GuidError::TooManyVfs));
    }
}

#[test]
fn a_port_of_16_with_3_vfs() {
    let split = guid_split(16, 3).unwrap();
    let counts: Vec<u8> = (0..=3).map(|f| split.count(f)).collect();
    assert_eq!(counts, [2, 5, 5, 4]);
    assert_eq!(split.base(3), Some(ent(12)));
    assert_eq!(split.owner(ent(15)), Some((3, 3)));
    assert_eq!(split.owner(ent(16)), None, "past the port");
}

#[test]
fn the_reason_for_no_tree_says_the_numbers() {
    let few = NoTree::TooFewGuids {
        port_guids: 16,
        num_vfs: 15,
    };
    assert_eq!(
        few.to_string(),
        "the port has 16 GUIDs: too few for the PF's 2 and one for each of 15 VFs"
    );
    assert_eq!(NoTree::NoVfs.to_string(), NoTree::NoVfs.text());
}

#[test]
fn no_vfs_leaves_the_shared_entries_unowned() {
    let split = guid_split(128, 0).unwrap();
    assert_eq!(split.count(0), 2);
    assert_eq!(split.count(1), 0);
    assert_eq!(split.owner(ent(1)), Some((0, 1)));
    assert_eq!(split.owner(ent(2)), None);
    assert_eq!(split.base(1), None);
}
