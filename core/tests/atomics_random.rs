// SPDX-License-Identifier: GPL-2.0

//! Millions of random cases, biased towards special masks: the word-parallel
//! masked atomics must equal the bit-serial reference on every one.

use mlx_ext_core::atomics::{self, reference, selftest::SplitMix64};

const CASES: u32 = 10_000_000;

#[test]
fn random_64bit_cases() {
    let mut rng = SplitMix64::new(0x6d61_736b_6564_3634);
    for _ in 0..CASES {
        let c = rng.case(64);
        assert_eq!(
            atomics::masked_cmp_swap(c.old, c.compare, c.compare_mask, c.swap, c.swap_mask),
            reference::masked_cmp_swap(c.old, c.compare, c.compare_mask, c.swap, c.swap_mask),
            "{c:x?}"
        );
        assert_eq!(
            atomics::masked_fetch_add(c.old, c.add, c.field_boundary),
            reference::masked_fetch_add(c.old, c.add, c.field_boundary),
            "{c:x?}"
        );
    }
}

#[test]
fn random_32bit_cases() {
    let mut rng = SplitMix64::new(0x6d61_736b_6564_3332);
    for _ in 0..CASES {
        let c = rng.case(32);
        let (old, compare, compare_mask) = (c.old as u32, c.compare as u32, c.compare_mask as u32);
        let (swap, swap_mask) = (c.swap as u32, c.swap_mask as u32);
        let (add, boundary) = (c.add as u32, c.field_boundary as u32);
        assert_eq!(
            atomics::masked_cmp_swap32(old, compare, compare_mask, swap, swap_mask),
            reference::masked_cmp_swap32(old, compare, compare_mask, swap, swap_mask),
            "{c:x?}"
        );
        assert_eq!(
            atomics::masked_fetch_add32(old, add, boundary),
            reference::masked_fetch_add32(old, add, boundary),
            "{c:x?}"
        );
    }
}

#[test]
fn random_16bit_cases() {
    let mut rng = SplitMix64::new(0x6d61_736b_6564_3136);
    for _ in 0..CASES / 10 {
        let c = rng.case(16);
        let (old, compare, compare_mask) = (c.old as u16, c.compare as u16, c.compare_mask as u16);
        let (swap, swap_mask) = (c.swap as u16, c.swap_mask as u16);
        let (add, boundary) = (c.add as u16, c.field_boundary as u16);
        assert_eq!(
            atomics::masked_cmp_swap16(old, compare, compare_mask, swap, swap_mask),
            reference::masked_cmp_swap16(old, compare, compare_mask, swap, swap_mask),
            "{c:x?}"
        );
        assert_eq!(
            atomics::masked_fetch_add16(old, add, boundary),
            reference::masked_fetch_add16(old, add, boundary),
            "{c:x?}"
        );
    }
}

/// Hand-picked 64-bit vectors: adjacent boundaries, bit 63, and the two
/// degenerate boundaries.
#[test]
fn fetch_add_known_vectors() {
    let f = atomics::masked_fetch_add;
    // No boundary: a plain wrapping add, carry out of bit 63 dropped.
    assert_eq!(f(u64::MAX, 1, 0), 0);
    assert_eq!(f(0x00ff, 0x0001, 0), 0x0100);
    // Every bit a boundary: XOR.
    assert_eq!(f(0b1100, 0b1010, u64::MAX), 0b0110);
    // Bytes as fields.
    let bytes = 0x8080_8080_8080_8080;
    assert_eq!(
        f(0x01ff_7f00_ff00_0000, 0x0101_0101_0101_0101, bytes),
        0x0200_8001_0001_0101
    );
    // Adjacent boundaries at bits 3 and 4: fields [0..=3], [4], [5..=63].
    let b = 0b1_1000;
    assert_eq!(f(0b0_1111, 0b0_0001, b), 0b0_0000);
    assert_eq!(f(0b1_0000, 0b1_0000, b), 0b0_0000);
    assert_eq!(f(0b01_1111, 0b01_0001, b), 0b00_0000);
    // A boundary at bit 63 only: same as no boundary.
    assert_eq!(f(u64::MAX, 1, 1 << 63), 0);
    // A boundary at bit 62: the top field is bit 63 alone.
    assert_eq!(f(1 << 62, 1 << 62, 1 << 62), 0);
    assert_eq!(f(3 << 62, 1 << 62, 1 << 62), 1 << 63);
    for (old, add, b) in [
        (0x01ff_7f00_ff00_0000u64, 0x0101_0101_0101_0101u64, bytes),
        (0b1111, 1, 0b1_1000),
        (u64::MAX, u64::MAX, 0x5555_5555_5555_5555),
        (u64::MAX, u64::MAX, 0xaaaa_aaaa_aaaa_aaaa),
        (u64::MAX, 1, 1 << 63),
    ] {
        assert_eq!(f(old, add, b), reference::masked_fetch_add(old, add, b));
    }
}

#[test]
fn cmp_swap_known_vectors() {
    let f = atomics::masked_cmp_swap;
    // The low byte matches: the high byte is swapped.
    assert_eq!(f(0x1234, 0x0034, 0x00ff, 0xab00, 0xff00), 0xab34);
    // The low byte differs: nothing changes.
    assert_eq!(f(0x1235, 0x0034, 0x00ff, 0xab00, 0xff00), 0x1235);
    // Full masks: standard compare-and-swap.
    assert_eq!(f(7, 7, u64::MAX, 9, u64::MAX), 9);
    assert_eq!(f(7, 8, u64::MAX, 9, u64::MAX), 7);
}
