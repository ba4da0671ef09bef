// SPDX-License-Identifier: GPL-2.0

//! Masked atomics: the arithmetic of MskCmpSwap and MFetchAdd
//! (`Documentation/atomics.rst`, "Semantics"), the byte order of atomic replies
//! (`Documentation/atomics.rst`, "Byte order of the response"), and the
//! emulation of masked atomics with standard compare-and-swap.
//!
//! Both operations answer with the word's old value, exactly as the standard
//! InfiniBand atomics do, so the functions here return the *new* value of the
//! word: the caller already holds the old one. [`reference`] keeps the
//! bit-serial definitions as the oracle for the word-parallel versions below.
//!
//! The 8- and 16-bit variants are stamped from the same macro as the 32- and
//! 64-bit ones, so that tests can compare fast and reference exhaustively on a
//! width where that is feasible.
//!
//! See `Documentation/atomics.rst` for the semantics, the formulas and the
//! errata of the source documents.

pub mod byteorder;
pub mod emulation;
pub mod reference;
pub mod selftest;
pub mod wr;

pub use byteorder::{AtomicReply, Be32, Be64, ReplyOrder};
pub use emulation::{Cas, Emulation, MaskedOp, Step};

macro_rules! masked_ops {
    ($t:ty, $cmp_swap:ident, $fetch_add:ident) => {
        #[doc = concat!(
            "Returns the new value of a ", stringify!($t), " word after a masked compare-and-swap.\n\n",
            "The swap happens when `old` equals `compare` in every bit set in `compare_mask`; ",
            "it then replaces the bits of `old` selected by `swap_mask` with those of `swap`. ",
            "Otherwise the word keeps `old`. The response of the operation is `old`."
        )]
        #[inline]
        pub const fn $cmp_swap(
            old: $t,
            compare: $t,
            compare_mask: $t,
            swap: $t,
            swap_mask: $t,
        ) -> $t {
            // All ones when the compare matches, zero otherwise: no branch.
            let hit = ((((old ^ compare) & compare_mask) == 0) as $t).wrapping_neg();
            let m = swap_mask & hit;
            (old & !m) | (swap & m)
        }

        #[doc = concat!(
            "Returns the new value of a ", stringify!($t), " word after a masked fetch-and-add.\n\n",
            "A bit set in `field_boundary` marks the most significant bit of a field: the carry ",
            "out of that bit is dropped, so every field is added independently, modulo its width. ",
            "`field_boundary == 0` is a plain wrapping add, `field_boundary == !0` a bitwise XOR. ",
            "The response of the operation is `old`."
        )]
        #[inline]
        pub const fn $fetch_add(old: $t, add: $t, field_boundary: $t) -> $t {
            // With the boundary bits cleared in both operands, a carry into a
            // boundary bit stops there (0 + 0 + carry never carries on), and
            // the XOR puts back the boundary bits' own sum bits.
            let h = field_boundary;
            (old & !h).wrapping_add(add & !h) ^ ((old ^ add) & h)
        }
    };
}

masked_ops!(u64, masked_cmp_swap, masked_fetch_add);
masked_ops!(u32, masked_cmp_swap32, masked_fetch_add32);
masked_ops!(u16, masked_cmp_swap16, masked_fetch_add16);
masked_ops!(u8, masked_cmp_swap8, masked_fetch_add8);
