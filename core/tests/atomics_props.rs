// SPDX-License-Identifier: GPL-2.0

//! Property tests of the identities of SPEC section 2, on both the fast and
//! the reference functions, and the fuzz target: fast against
//! reference on 100 000 arbitrary operand tuples.

use mlx_ext_core::atomics::{self, reference};
use proptest::prelude::*;

/// Arbitrary words, biased towards the masks where masked arithmetic breaks.
fn word() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => any::<u64>(),
        1 => Just(0u64),
        1 => Just(u64::MAX),
        1 => (0u32..64).prop_map(|k| 1u64 << k),
        1 => (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(a, b, c)| a & b & c),
        1 => (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(a, b, c)| a | b | c),
        1 => (1u32..=64).prop_map(|w| {
            (0..64).filter(|p| p % w == w - 1).fold(0u64, |m, p| m | 1 << p)
        }),
    ]
}

/// The fields of a 64-bit word as (lowest bit, width): each ends at a bit set
/// in `boundary`, the last one at bit 63.
fn fields(boundary: u64) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut lo = 0;
    for bit in 0..64 {
        if boundary >> bit & 1 == 1 || bit == 63 {
            out.push((lo, bit + 1 - lo));
            lo = bit + 1;
        }
    }
    out
}

fn field_mask(width: u32) -> u64 {
    u64::MAX >> (64 - width)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn no_boundary_is_plain_add(old in word(), add in word()) {
        prop_assert_eq!(atomics::masked_fetch_add(old, add, 0), old.wrapping_add(add));
        prop_assert_eq!(reference::masked_fetch_add(old, add, 0), old.wrapping_add(add));
        let (o, a) = (old as u32, add as u32);
        prop_assert_eq!(atomics::masked_fetch_add32(o, a, 0), o.wrapping_add(a));
        prop_assert_eq!(reference::masked_fetch_add32(o, a, 0), o.wrapping_add(a));
    }

    #[test]
    fn all_boundaries_is_xor(old in word(), add in word()) {
        prop_assert_eq!(atomics::masked_fetch_add(old, add, u64::MAX), old ^ add);
        prop_assert_eq!(reference::masked_fetch_add(old, add, u64::MAX), old ^ add);
        let (o, a) = (old as u32, add as u32);
        prop_assert_eq!(atomics::masked_fetch_add32(o, a, u32::MAX), o ^ a);
        prop_assert_eq!(reference::masked_fetch_add32(o, a, u32::MAX), o ^ a);
    }

    #[test]
    fn fields_add_independently(old in word(), add in word(), boundary in word()) {
        let fast = atomics::masked_fetch_add(old, add, boundary);
        let slow = reference::masked_fetch_add(old, add, boundary);
        for (lo, width) in fields(boundary) {
            let m = field_mask(width);
            let expect = (old >> lo).wrapping_add(add >> lo) & m;
            prop_assert_eq!(fast >> lo & m, expect, "field at {} width {}", lo, width);
            prop_assert_eq!(slow >> lo & m, expect, "field at {} width {}", lo, width);
            // The field alone, every other field of `add` zero, gives the same.
            let alone = atomics::masked_fetch_add(old, add & (m << lo), boundary);
            prop_assert_eq!(alone >> lo & m, expect);
        }
    }

    #[test]
    fn zero_compare_mask_always_swaps(
        old in word(), compare in word(), swap in word(), swap_mask in word()
    ) {
        let expect = (old & !swap_mask) | (swap & swap_mask);
        prop_assert_eq!(atomics::masked_cmp_swap(old, compare, 0, swap, swap_mask), expect);
        prop_assert_eq!(reference::masked_cmp_swap(old, compare, 0, swap, swap_mask), expect);
        let (o, c, s, sm) = (old as u32, compare as u32, swap as u32, swap_mask as u32);
        prop_assert_eq!(atomics::masked_cmp_swap32(o, c, 0, s, sm), (o & !sm) | (s & sm));
        prop_assert_eq!(reference::masked_cmp_swap32(o, c, 0, s, sm), (o & !sm) | (s & sm));
    }

    #[test]
    fn zero_swap_mask_never_changes(
        old in word(), compare in word(), compare_mask in word(), swap in word()
    ) {
        prop_assert_eq!(atomics::masked_cmp_swap(old, compare, compare_mask, swap, 0), old);
        prop_assert_eq!(reference::masked_cmp_swap(old, compare, compare_mask, swap, 0), old);
        let (o, c, cm, s) = (old as u32, compare as u32, compare_mask as u32, swap as u32);
        prop_assert_eq!(atomics::masked_cmp_swap32(o, c, cm, s, 0), o);
        prop_assert_eq!(reference::masked_cmp_swap32(o, c, cm, s, 0), o);
    }

    #[test]
    fn full_masks_are_standard_cas(old in word(), delta in word(), swap in word()) {
        // `delta` is often 0, so the compare holds often.
        let compare = old ^ delta;
        let expect = if old == compare { swap } else { old };
        prop_assert_eq!(atomics::masked_cmp_swap(old, compare, !0, swap, !0), expect);
        prop_assert_eq!(reference::masked_cmp_swap(old, compare, !0, swap, !0), expect);
        let (o, c, s) = (old as u32, compare as u32, swap as u32);
        let expect = if o == c { s } else { o };
        prop_assert_eq!(atomics::masked_cmp_swap32(o, c, !0, s, !0), expect);
        prop_assert_eq!(reference::masked_cmp_swap32(o, c, !0, s, !0), expect);
    }

    #[test]
    fn cmp_swap_is_the_pseudocode(
        old in word(), delta in word(), compare_mask in word(), swap in word(), swap_mask in word()
    ) {
        let compare = old ^ delta;
        let expect = if (compare ^ old) & compare_mask == 0 {
            (old & !swap_mask) | (swap & swap_mask)
        } else {
            old
        };
        prop_assert_eq!(atomics::masked_cmp_swap(old, compare, compare_mask, swap, swap_mask), expect);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100_000))]

    /// The fuzz target of issue 3: fast against reference on arbitrary operands.
    #[test]
    fn fuzz_fast_equals_reference(
        old in any::<u64>(),
        a in word(),
        b in word(),
        c in word(),
        d in word(),
    ) {
        prop_assert_eq!(
            atomics::masked_cmp_swap(old, a, b, c, d),
            reference::masked_cmp_swap(old, a, b, c, d)
        );
        // The compare often holds when it is derived from `old`.
        prop_assert_eq!(
            atomics::masked_cmp_swap(old, old ^ a, b, c, d),
            reference::masked_cmp_swap(old, old ^ a, b, c, d)
        );
        prop_assert_eq!(atomics::masked_fetch_add(old, a, b), reference::masked_fetch_add(old, a, b));
        let (o, a, b, c, d) = (old as u32, a as u32, b as u32, c as u32, (d >> 32) as u32);
        prop_assert_eq!(
            atomics::masked_cmp_swap32(o, o ^ a, b, c, d),
            reference::masked_cmp_swap32(o, o ^ a, b, c, d)
        );
        prop_assert_eq!(
            atomics::masked_fetch_add32(o, a, b),
            reference::masked_fetch_add32(o, a, b)
        );
    }
}
