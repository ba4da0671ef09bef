// SPDX-License-Identifier: GPL-2.0

//! The split of a port's 128 GUID entries, checked against an independent
//! construction for every VF count.

use mlx_ext_core::guid::{guid_split, EntryIdx, GuidError, MAX_VFS, PORT_GUIDS};

fn ent(n: u8) -> EntryIdx {
    EntryIdx::new(n).unwrap()
}

/// Deals the 126 shared entries out one at a time, round robin from VF 1,
/// then lays the functions out contiguously: PF first, then VF 1, VF 2, ...
fn dealt(num_vfs: u16) -> (Vec<u8>, Vec<Option<(u16, u8)>>) {
    let mut counts = vec![2u8];
    counts.extend(std::iter::repeat(0).take(usize::from(num_vfs)));
    if num_vfs > 0 {
        for j in 0..126usize {
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

#[test]
fn every_vf_count_matches_the_dealt_split() {
    for num_vfs in 0..=MAX_VFS {
        let split = guid_split(num_vfs).unwrap();
        let (counts, owners) = dealt(num_vfs);
        let total: u32 = counts.iter().map(|&c| u32::from(c)).sum();
        assert_eq!(total, if num_vfs == 0 { 2 } else { 128 }, "{num_vfs} VFs");
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
            assert_eq!(
                split.owner(ent(index)),
                *owner,
                "{num_vfs} VFs, entry {index}"
            );
            if let Some((f, n)) = *owner {
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
    let split = guid_split(5).unwrap();
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
    let one = guid_split(1).unwrap();
    assert_eq!((one.count(0), one.count(1)), (2, 126));
    let full = guid_split(126).unwrap();
    assert!((1..=126).all(|vf| full.count(vf) == 1 && full.base(vf) == Some(ent(vf as u8 + 1))));
}

#[test]
fn more_than_126_vfs_is_refused() {
    for n in [127, 128, 200, u16::MAX] {
        let err = guid_split(n).unwrap_err();
        assert_eq!(err, GuidError::TooManyVfs);
        assert_eq!(err.errno(), -34);
        assert!(err.message().contains("126"));
    }
}

#[test]
fn no_vfs_leaves_the_shared_entries_unowned() {
    let split = guid_split(0).unwrap();
    assert_eq!(split.count(0), 2);
    assert_eq!(split.count(1), 0);
    assert_eq!(split.owner(ent(1)), Some((0, 1)));
    assert_eq!(split.owner(ent(2)), None);
    assert_eq!(split.base(1), None);
}
