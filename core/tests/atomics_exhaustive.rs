// SPDX-License-Identifier: GPL-2.0

//! Exhaustive comparison of the word-parallel masked atomics with the
//! bit-serial reference, on the 8-bit variants (stamped from the same macro as
//! the 32- and 64-bit ones).

use mlx_ext_core::atomics::{self, reference};
use std::hint::black_box;

type Cas8 = fn(u8, u8, u8, u8, u8) -> u8;
type Add8 = fn(u8, u8, u8) -> u8;

/// The functions behind opaque pointers: every case really runs the compiled
/// functions, instead of letting the optimiser reason about both at once.
fn opaque_cas8() -> (Cas8, Cas8) {
    black_box((atomics::masked_cmp_swap8, reference::masked_cmp_swap8))
}

fn opaque_add8() -> (Add8, Add8) {
    black_box((atomics::masked_fetch_add8, reference::masked_fetch_add8))
}

#[test]
fn fetch_add8_all_triples() {
    let (fast_fn, slow_fn) = opaque_add8();
    for old in 0..=u8::MAX {
        for add in 0..=u8::MAX {
            for boundary in 0..=u8::MAX {
                let fast = fast_fn(old, add, boundary);
                let slow = slow_fn(old, add, boundary);
                assert_eq!(
                    fast, slow,
                    "old {old:#04x} add {add:#04x} boundary {boundary:#04x}"
                );
            }
        }
    }
}

/// The result of a compare-and-swap depends on (old, compare, compare_mask)
/// only through whether the comparison holds, and given that, on (old, swap,
/// swap_mask) bit by bit. So: every (old, compare, compare_mask) with swap
/// operands that make the outcome of the comparison visible, then every (old,
/// swap, swap_mask) with the comparison forced to hold and to fail.
#[test]
fn cmp_swap8_all_compare_triples() {
    let (fast_fn, slow_fn) = opaque_cas8();
    for old in 0..=u8::MAX {
        // Swap operands as functions of `old`: every one but the first two
        // changes the word when the comparison holds.
        let swaps: [(u8, u8); 8] = [
            (0, 0),
            (!old, 0),
            (!old, 0xff),
            (!old, 0x0f),
            (!old, 0x80),
            (old ^ 0x01, 0x01),
            (0, 0xff),
            (0xff, 0xff),
        ];
        for compare in 0..=u8::MAX {
            for compare_mask in 0..=u8::MAX {
                for &(swap, swap_mask) in &swaps {
                    let fast = fast_fn(old, compare, compare_mask, swap, swap_mask);
                    let slow = slow_fn(old, compare, compare_mask, swap, swap_mask);
                    assert_eq!(
                        fast, slow,
                        "old {old:#04x} compare {compare:#04x}/{compare_mask:#04x} swap {swap:#04x}/{swap_mask:#04x}"
                    );
                }
            }
        }
    }
}

#[test]
fn cmp_swap8_all_swap_triples() {
    let (fast_fn, slow_fn) = opaque_cas8();
    for old in 0..=u8::MAX {
        let compares: [(u8, u8); 6] = [
            (0, 0),
            (!old, 0),
            (old, 0xff),
            (!old, 0xff),
            (old ^ 0x80, 0x7f),
            (old ^ 0x80, 0x80),
        ];
        for swap in 0..=u8::MAX {
            for swap_mask in 0..=u8::MAX {
                for &(compare, compare_mask) in &compares {
                    let fast = fast_fn(old, compare, compare_mask, swap, swap_mask);
                    let slow = slow_fn(old, compare, compare_mask, swap, swap_mask);
                    assert_eq!(
                        fast, slow,
                        "old {old:#04x} compare {compare:#04x}/{compare_mask:#04x} swap {swap:#04x}/{swap_mask:#04x}"
                    );
                }
            }
        }
    }
}

/// The reference itself against the definition: the sum of each field taken
/// alone, modulo its width, on every 8-bit triple.
#[test]
fn fetch_add8_reference_is_fieldwise_add() {
    for boundary in 0..=u8::MAX {
        // Fields as (low bit, width): a field ends at a boundary bit or bit 7.
        let mut fields = [(0u32, 0u32); 8];
        let mut n = 0;
        let mut lo = 0;
        for bit in 0..8 {
            if boundary >> bit & 1 == 1 || bit == 7 {
                fields[n] = (lo, bit + 1 - lo);
                n += 1;
                lo = bit + 1;
            }
        }
        for old in 0..=u8::MAX {
            for add in 0..=u8::MAX {
                let mut expect = 0u32;
                for &(lo, width) in &fields[..n] {
                    let m = (1u32 << width) - 1;
                    let sum = ((u32::from(old) >> lo & m) + (u32::from(add) >> lo & m)) & m;
                    expect |= sum << lo;
                }
                assert_eq!(
                    u32::from(reference::masked_fetch_add8(old, add, boundary)),
                    expect,
                    "old {old:#04x} add {add:#04x} boundary {boundary:#04x}"
                );
            }
        }
    }
}

#[test]
fn cmp_swap8_reference_is_the_pseudocode() {
    for old in 0..=u8::MAX {
        for compare in 0..=u8::MAX {
            for compare_mask in [0u8, 0xff, 0x01, 0x80, 0x5a, 0xf0] {
                for swap_mask in 0..=u8::MAX {
                    let swap = !old ^ compare;
                    let expect = if (compare ^ old) & compare_mask == 0 {
                        (old & !swap_mask) | (swap & swap_mask)
                    } else {
                        old
                    };
                    assert_eq!(
                        reference::masked_cmp_swap8(old, compare, compare_mask, swap, swap_mask),
                        expect
                    );
                }
            }
        }
    }
}

/// Every (old, compare, compare_mask, swap_mask) quadruple, with a swap
/// value that differs from `old` in every bit (2^32 cases). The functions are
/// inlined here, so the optimiser may merge both sides of the comparison; the
/// opaque sweeps above run each case through the compiled functions.
#[test]
fn cmp_swap8_all_quadruples() {
    for old in 0..=u8::MAX {
        let swap = !old;
        for compare in 0..=u8::MAX {
            for compare_mask in 0..=u8::MAX {
                for swap_mask in 0..=u8::MAX {
                    let fast =
                        atomics::masked_cmp_swap8(old, compare, compare_mask, swap, swap_mask);
                    let slow =
                        reference::masked_cmp_swap8(old, compare, compare_mask, swap, swap_mask);
                    assert_eq!(
                        fast, slow,
                        "old {old:#04x} compare {compare:#04x}/{compare_mask:#04x} swap {swap:#04x}/{swap_mask:#04x}"
                    );
                }
            }
        }
    }
}
