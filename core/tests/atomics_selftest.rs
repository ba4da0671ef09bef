// SPDX-License-Identifier: GPL-2.0

//! The self-test digest: the word-parallel and bit-serial digests agree for
//! several seeds and counts, the digest depends on its seed and its count,
//! one digest is pinned, `mix64` is injective on a sample, and the operand
//! generator draws the special masks (0, all ones, one bit) often.

use mlx_ext_core::atomics::selftest::{self, mix64, SplitMix64};

#[test]
fn digest_equals_reference() {
    for seed in [0u64, 1, 2, 0xdead_beef, u64::MAX, 0x6d6c_785f_6578_7400] {
        for count in [0u32, 1, 7, 1000, 100_000] {
            assert_eq!(
                selftest::digest(seed, count),
                selftest::digest_reference(seed, count),
                "seed {seed:#x} count {count}"
            );
        }
    }
}

#[test]
fn digest_depends_on_seed_and_count() {
    let a = selftest::digest(1, 1000);
    assert_ne!(a, selftest::digest(2, 1000));
    assert_ne!(a, selftest::digest(1, 999));
    assert_ne!(selftest::digest(1, 0), selftest::digest(2, 0));
}

#[test]
fn digest_is_stable() {
    // Pinned so that a change of the generator or the fold is deliberate. The
    // kernel is not compared with this value: the VM test compares the
    // module's digest with the one the host computes with the bit-serial
    // reference at check time (scripts/check.sh, examples/atomics_digest.rs).
    assert_eq!(selftest::digest(1, 100_000), PINNED_1_100000);
}

const PINNED_1_100000: u64 = 0x3d85e972da23324d;

#[test]
fn mix64_is_a_bijection_on_a_sample() {
    let mut seen = std::collections::HashSet::new();
    for i in 0..100_000u64 {
        assert!(seen.insert(mix64(i << 40 | i)));
    }
}

#[test]
fn operands_cover_the_special_masks() {
    let mut rng = SplitMix64::new(3);
    let (mut zero, mut ones, mut single) = (0, 0, 0);
    for _ in 0..10_000 {
        let v = rng.operand(64);
        zero += usize::from(v == 0);
        ones += usize::from(v == u64::MAX);
        single += usize::from(v.count_ones() == 1);
        assert_eq!(rng.operand(32) >> 32, 0);
        assert_eq!(rng.operand(8) >> 8, 0);
    }
    assert!(
        zero > 1000 && ones > 1000 && single > 1000,
        "{zero} {ones} {single}"
    );
}
