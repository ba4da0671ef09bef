// SPDX-License-Identifier: GPL-2.0

//! The masked atomics written bit by bit, as the pseudocode of
//! `Documentation/atomics.rst`, "Semantics", states them. They are slow on
//! purpose: they are the oracle against which the word-parallel functions of
//! [`super`] are tested, and the self-test compares the two inside the kernel.
//!
//! Like the fast versions, each function returns the new value of the word;
//! the response of the operation is always the old value. The source
//! documents' pseudocode for MFetchAdd disagrees with this (see
//! `Documentation/atomics.rst`): seed 003 starts the result from `*va` and
//! so computes `old | sum`, and seeds 000/002 call the sum the "atomic
//! response". Neither is followed here.

/// Whether any bit of `mask` is set in `value`: `MASK_IS_SET` of the seeds.
#[inline]
fn is_set<T: Copy + core::ops::BitAnd<Output = T> + PartialEq + Default>(
    value: T,
    mask: T,
) -> bool {
    value & mask != T::default()
}

/// A one-bit full adder: returns the sum bit and the carry out.
#[inline]
fn bit_adder(carry_in: bool, a: bool, b: bool) -> (bool, bool) {
    let value = u8::from(carry_in) + u8::from(a) + u8::from(b);
    (value & 1 == 1, value & 2 == 2)
}

macro_rules! reference_ops {
    ($t:ty, $cmp_swap:ident, $fetch_add:ident) => {
        #[doc = concat!(
            "Returns the new value of a ", stringify!($t), " word after a masked compare-and-swap, ",
            "computed one bit at a time: the reference for [`super::", stringify!($cmp_swap), "`]."
        )]
        #[inline]
        pub fn $cmp_swap(old: $t, compare: $t, compare_mask: $t, swap: $t, swap_mask: $t) -> $t {
            let mut bit_position: $t = 1;
            let mut equal = true;
            let mut new: $t = 0;
            while bit_position != 0 {
                if is_set(compare_mask, bit_position)
                    && is_set(compare, bit_position) != is_set(old, bit_position)
                {
                    equal = false;
                }
                let from = if is_set(swap_mask, bit_position) { swap } else { old };
                if is_set(from, bit_position) {
                    new |= bit_position;
                }
                bit_position <<= 1;
            }
            if equal {
                new
            } else {
                old
            }
        }

        #[doc = concat!(
            "Returns the new value of a ", stringify!($t), " word after a masked fetch-and-add, ",
            "computed by a ripple-carry adder whose carry is dropped after every bit set in ",
            "`field_boundary`: the reference for [`super::", stringify!($fetch_add), "`]."
        )]
        #[inline]
        pub fn $fetch_add(old: $t, add: $t, field_boundary: $t) -> $t {
            let mut bit_position: $t = 1;
            let mut carry = false;
            let mut new: $t = 0;
            while bit_position != 0 {
                let (sum, carry_out) =
                    bit_adder(carry, is_set(old, bit_position), is_set(add, bit_position));
                if sum {
                    new |= bit_position;
                }
                carry = carry_out && !is_set(field_boundary, bit_position);
                bit_position <<= 1;
            }
            new
        }
    };
}

reference_ops!(u64, masked_cmp_swap, masked_fetch_add);
reference_ops!(u32, masked_cmp_swap32, masked_fetch_add32);
reference_ops!(u16, masked_cmp_swap16, masked_fetch_add16);
reference_ops!(u8, masked_cmp_swap8, masked_fetch_add8);
