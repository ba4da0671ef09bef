// SPDX-License-Identifier: GPL-2.0

//! The expected result of the test ULP's `atomics` command
//! (`tests/ulp/test_ulp.c`): the same random operations on 8 words,
//! computed with the host's bit-serial reference arithmetic.
//!
//! Usage: `ulp_digest SEED COUNT std|masked`; prints the digest in hex.

use mlx_ext_core::atomics::{
    reference,
    selftest::{mix64, SplitMix64},
};

const NWORDS: usize = 8;

fn digest(seed: u64, count: u32, masked: bool) -> u64 {
    let mut rng = SplitMix64::new(seed);
    let mut mem = [0u64; NWORDS];
    for w in mem.iter_mut() {
        *w = rng.next_u64();
    }
    let mut digest = seed;
    for _ in 0..count {
        let r = rng.next_u64();
        let (mut a, b, c, d) = (
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64(),
        );
        let first = (r >> 8) & 1 == 1;
        let take_mem = (r >> 9) & 1 == 1;
        let w = usize::try_from(r % NWORDS as u64).expect("a word index");
        let old = mem[w];
        if take_mem {
            a = old;
        }
        let new = match (masked, first) {
            (false, true) => reference::masked_cmp_swap(old, a, u64::MAX, b, u64::MAX),
            (false, false) => reference::masked_fetch_add(old, a, 0),
            (true, true) => reference::masked_cmp_swap(old, a, c, b, d),
            (true, false) => reference::masked_fetch_add(old, a, c),
        };
        digest = mix64(digest ^ old);
        mem[w] = new;
    }
    for w in mem {
        digest = mix64(digest ^ w);
    }
    digest
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: ulp_digest SEED COUNT std|masked";
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).expect(usage);
    let count: u32 = args.get(2).and_then(|s| s.parse().ok()).expect(usage);
    let masked = match args.get(3).map(String::as_str) {
        Some("std") => false,
        Some("masked") => true,
        _ => panic!("{usage}"),
    };
    println!("{:016x}", digest(seed, count, masked));
}
