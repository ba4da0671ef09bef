// SPDX-License-Identifier: GPL-2.0

//! A digest of many masked operations, to check the word-parallel functions
//! as compiled into the kernel module against the bit-serial reference. The
//! module computes [`digest`] when the debugfs file `atomics_selftest` is
//! read (`rust/selftest.rs`), not at load time; the VM tests compare it with
//! [`digest_reference`] computed on the host (`examples/atomics_digest.rs`).
//!
//! Each case draws its operands from [`SplitMix64`], biased towards the values
//! where masked arithmetic goes wrong (masks that are 0, all ones, one bit,
//! sparse, dense or regular fields), runs the four operations (64-bit and
//! 32-bit compare-and-swap and fetch-and-add), and folds every result into the
//! digest. The fold is a bijection of the result for a fixed digest and of the
//! digest for a fixed result, so a single differing result always changes the
//! final digest.

/// The splitmix64 generator: small, fast, and good enough to draw test cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

/// The splitmix64 output function, a bijection of `u64` with good avalanche.
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl SplitMix64 {
    /// Creates a generator from a seed.
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// Returns the next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }

    /// Returns an operand of `bits` bits (1 to 64), in the low bits of the
    /// result: 0, all ones, a single bit, sparse, dense, a regular field
    /// boundary pattern, or uniformly random, each about equally often.
    pub fn operand(&mut self, bits: u32) -> u64 {
        let bits = if bits == 0 || bits > 64 { 64 } else { bits };
        let width_mask = u64::MAX >> (64 - bits);
        let r = self.next_u64();
        // A bit position below `bits` by multiply-shift: no division.
        let k = (((r >> 32) * u64::from(bits)) >> 32) as u32;
        let v = match r & 7 {
            0 => 0,
            1 => u64::MAX,
            2 => 1u64 << k,
            3 => self.next_u64() & self.next_u64() & self.next_u64(),
            4 => self.next_u64() | self.next_u64() | self.next_u64(),
            5 => {
                // The most significant bit of each field of width k + 1.
                let width = k + 1;
                let mut m = 0u64;
                let mut p = k;
                while p < bits {
                    m |= 1u64 << p;
                    p += width;
                }
                m
            }
            _ => self.next_u64(),
        };
        v & width_mask
    }

    /// Draws one case of operands of `bits` bits.
    pub fn case(&mut self, bits: u32) -> Case {
        let old = self.operand(bits);
        let compare_mask = self.operand(bits);
        // Half the time compare against a value close to `old`, so that the
        // comparison holds often enough.
        let compare = if self.next_u64() & 1 == 0 {
            old ^ self.operand(bits)
        } else {
            self.operand(bits)
        };
        Case {
            old,
            compare,
            compare_mask,
            swap: self.operand(bits),
            swap_mask: self.operand(bits),
            add: self.operand(bits),
            field_boundary: self.operand(bits),
        }
    }
}

/// The operands of one self-test case, for both operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    /// The word's value before the operation.
    pub old: u64,
    /// The compare operand of the masked compare-and-swap.
    pub compare: u64,
    /// The compare mask of the masked compare-and-swap.
    pub compare_mask: u64,
    /// The swap operand of the masked compare-and-swap.
    pub swap: u64,
    /// The swap mask of the masked compare-and-swap.
    pub swap_mask: u64,
    /// The add operand of the masked fetch-and-add.
    pub add: u64,
    /// The field boundaries of the masked fetch-and-add.
    pub field_boundary: u64,
}

trait Ops {
    fn cmp_swap(old: u64, compare: u64, compare_mask: u64, swap: u64, swap_mask: u64) -> u64;
    fn fetch_add(old: u64, add: u64, field_boundary: u64) -> u64;
    fn cmp_swap32(old: u32, compare: u32, compare_mask: u32, swap: u32, swap_mask: u32) -> u32;
    fn fetch_add32(old: u32, add: u32, field_boundary: u32) -> u32;
}

struct Fast;
struct Reference;

impl Ops for Fast {
    fn cmp_swap(old: u64, compare: u64, compare_mask: u64, swap: u64, swap_mask: u64) -> u64 {
        super::masked_cmp_swap(old, compare, compare_mask, swap, swap_mask)
    }
    fn fetch_add(old: u64, add: u64, field_boundary: u64) -> u64 {
        super::masked_fetch_add(old, add, field_boundary)
    }
    fn cmp_swap32(old: u32, compare: u32, compare_mask: u32, swap: u32, swap_mask: u32) -> u32 {
        super::masked_cmp_swap32(old, compare, compare_mask, swap, swap_mask)
    }
    fn fetch_add32(old: u32, add: u32, field_boundary: u32) -> u32 {
        super::masked_fetch_add32(old, add, field_boundary)
    }
}

impl Ops for Reference {
    fn cmp_swap(old: u64, compare: u64, compare_mask: u64, swap: u64, swap_mask: u64) -> u64 {
        super::reference::masked_cmp_swap(old, compare, compare_mask, swap, swap_mask)
    }
    fn fetch_add(old: u64, add: u64, field_boundary: u64) -> u64 {
        super::reference::masked_fetch_add(old, add, field_boundary)
    }
    fn cmp_swap32(old: u32, compare: u32, compare_mask: u32, swap: u32, swap_mask: u32) -> u32 {
        super::reference::masked_cmp_swap32(old, compare, compare_mask, swap, swap_mask)
    }
    fn fetch_add32(old: u32, add: u32, field_boundary: u32) -> u32 {
        super::reference::masked_fetch_add32(old, add, field_boundary)
    }
}

#[inline]
fn fold(digest: u64, result: u64) -> u64 {
    mix64(digest ^ result)
}

fn run<O: Ops>(seed: u64, count: u32) -> u64 {
    let mut rng = SplitMix64::new(seed);
    let mut d = mix64(seed ^ 0x6d6c_785f_6578_7400);
    for _ in 0..count {
        let c = rng.case(64);
        d = fold(
            d,
            O::cmp_swap(c.old, c.compare, c.compare_mask, c.swap, c.swap_mask),
        );
        d = fold(d, O::fetch_add(c.old, c.add, c.field_boundary));
        let c = rng.case(32);
        // Operands of a 32-bit case fit in 32 bits: the casts lose nothing.
        d = fold(
            d,
            u64::from(O::cmp_swap32(
                c.old as u32,
                c.compare as u32,
                c.compare_mask as u32,
                c.swap as u32,
                c.swap_mask as u32,
            )),
        );
        d = fold(
            d,
            u64::from(O::fetch_add32(
                c.old as u32,
                c.add as u32,
                c.field_boundary as u32,
            )),
        );
    }
    fold(d, u64::from(count))
}

/// Returns the digest of `count` cases drawn from `seed`, computed with the
/// word-parallel functions.
pub fn digest(seed: u64, count: u32) -> u64 {
    run::<Fast>(seed, count)
}

/// Returns the digest of `count` cases drawn from `seed`, computed with the
/// bit-serial reference functions; it must equal [`digest`].
pub fn digest_reference(seed: u64, count: u32) -> u64 {
    run::<Reference>(seed, count)
}
