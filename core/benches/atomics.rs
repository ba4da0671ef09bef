// SPDX-License-Identifier: GPL-2.0

//! Time per operation of the word-parallel masked atomics and of the
//! bit-serial reference, side by side. Run with
//! `cargo bench -p mlx-ext-core --bench atomics`.
//!
//! Each operation runs over the same table of biased random cases; every case
//! passes through `black_box`, so the compiler can neither hoist the work out
//! of the loop nor vectorize it across cases.

use mlx_ext_core::atomics::{
    self, reference,
    selftest::{Case, SplitMix64},
};
use std::hint::black_box;
use std::time::Instant;

const TABLE: usize = 4096;
const TARGET_NS: u128 = 300_000_000;

/// Returns nanoseconds per call of `op` over `cases`, running rounds until
/// about `TARGET_NS` have passed.
fn time_per_op(cases: &[Case], op: impl Fn(&Case) -> u64) -> f64 {
    let mut rounds: u64 = 1;
    loop {
        let start = Instant::now();
        let mut acc = 0u64;
        for _ in 0..rounds {
            for c in cases {
                acc ^= op(black_box(c));
            }
        }
        black_box(acc);
        let elapsed = start.elapsed().as_nanos();
        if elapsed >= TARGET_NS / 4 {
            return elapsed as f64 / (rounds as f64 * cases.len() as f64);
        }
        rounds *= 4;
    }
}

fn main() {
    let mut rng = SplitMix64::new(0x0062_656e_6368);
    let cases64: Vec<Case> = (0..TABLE).map(|_| rng.case(64)).collect();
    let cases32: Vec<Case> = (0..TABLE).map(|_| rng.case(32)).collect();

    type Op = fn(&Case) -> u64;
    let rows: [(&str, &[Case], Op, Op); 4] = [
        (
            "masked_cmp_swap",
            &cases64,
            |c| atomics::masked_cmp_swap(c.old, c.compare, c.compare_mask, c.swap, c.swap_mask),
            |c| reference::masked_cmp_swap(c.old, c.compare, c.compare_mask, c.swap, c.swap_mask),
        ),
        (
            "masked_fetch_add",
            &cases64,
            |c| atomics::masked_fetch_add(c.old, c.add, c.field_boundary),
            |c| reference::masked_fetch_add(c.old, c.add, c.field_boundary),
        ),
        (
            "masked_cmp_swap32",
            &cases32,
            |c| {
                u64::from(atomics::masked_cmp_swap32(
                    c.old as u32,
                    c.compare as u32,
                    c.compare_mask as u32,
                    c.swap as u32,
                    c.swap_mask as u32,
                ))
            },
            |c| {
                u64::from(reference::masked_cmp_swap32(
                    c.old as u32,
                    c.compare as u32,
                    c.compare_mask as u32,
                    c.swap as u32,
                    c.swap_mask as u32,
                ))
            },
        ),
        (
            "masked_fetch_add32",
            &cases32,
            |c| {
                u64::from(atomics::masked_fetch_add32(
                    c.old as u32,
                    c.add as u32,
                    c.field_boundary as u32,
                ))
            },
            |c| {
                u64::from(reference::masked_fetch_add32(
                    c.old as u32,
                    c.add as u32,
                    c.field_boundary as u32,
                ))
            },
        ),
    ];

    println!(
        "{:<20} {:>12} {:>16} {:>8}",
        "operation", "fast ns/op", "reference ns/op", "ratio"
    );
    for (name, cases, fast, slow) in rows {
        let f = time_per_op(cases, fast);
        let s = time_per_op(cases, slow);
        println!("{name:<20} {f:>12.2} {s:>16.2} {:>7.1}x", s / f);
    }
    let start = Instant::now();
    let d = black_box(atomics::selftest::digest(black_box(1), black_box(100_000)));
    let fast = start.elapsed();
    let start = Instant::now();
    let r = black_box(atomics::selftest::digest_reference(
        black_box(1),
        black_box(100_000),
    ));
    let slow = start.elapsed();
    println!(
        "selftest digest(1, 100000): fast {fast:?}, reference {slow:?}, {}",
        if d == r { "equal" } else { "DIFFERENT" }
    );
}
