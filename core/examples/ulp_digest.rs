// SPDX-License-Identifier: GPL-2.0

//! The expected result of the test ULP's `atomics` command
//! (`tests/ulp/datapath.c`): the same random operations on 8 words,
//! computed with the host's bit-serial reference arithmetic.
//!
//! Usage: `ulp_digest SEED COUNT std|masked|narrow`; prints the digest in
//! hex. `narrow` is the API's 4-byte operations: standard or masked (bit 11
//! of each draw) on the half of the word that bit 10 picks (the bytes at
//! offset 4 * bit, on this little-endian host the word's bits 32 * bit up).

use mlx_ext_core::atomics::{
    reference,
    selftest::{mix64, SplitMix64},
};

const NWORDS: usize = 8;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Std,
    Masked,
    Narrow,
}

fn digest(seed: u64, count: u32, kind: Kind) -> u64 {
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
        if kind == Kind::Narrow {
            let shift = ((r >> 10) & 1) * 32;
            let masked = (r >> 11) & 1 == 1;
            let old = (mem[w] >> shift) as u32;
            let (a, b, c, d) = (
                if take_mem { old } else { a as u32 },
                b as u32,
                c as u32,
                d as u32,
            );
            let new = match (masked, first) {
                (false, true) => reference::masked_cmp_swap32(old, a, u32::MAX, b, u32::MAX),
                (false, false) => reference::masked_fetch_add32(old, a, 0),
                (true, true) => reference::masked_cmp_swap32(old, a, c, b, d),
                (true, false) => reference::masked_fetch_add32(old, a, c),
            };
            digest = mix64(digest ^ u64::from(old));
            mem[w] = (mem[w] & !(u64::from(u32::MAX) << shift)) | u64::from(new) << shift;
            continue;
        }
        let masked = kind == Kind::Masked;
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
    let usage = "usage: ulp_digest SEED COUNT std|masked|narrow";
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).expect(usage);
    let count: u32 = args.get(2).and_then(|s| s.parse().ok()).expect(usage);
    let kind = match args.get(3).map(String::as_str) {
        Some("std") => Kind::Std,
        Some("masked") => Kind::Masked,
        Some("narrow") => Kind::Narrow,
        _ => panic!("{usage}"),
    };
    println!("{:016x}", digest(seed, count, kind));
}
