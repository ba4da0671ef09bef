// SPDX-License-Identifier: GPL-2.0

//! Byte order of atomic responses (`Documentation/atomics.rst`, "Byte order of
//! the response").
//!
//! An adapter writes the 8-byte response of an atomic into the requester's
//! buffer. Connect-IB writes it big-endian whatever the host is, which on a
//! little-endian host contradicts the host's order; such a device reports the
//! capability `hca_reply_be`. A value loaded from that buffer with a native
//! load is the *raw* value. [`Be64`] and [`Be32`] hold raw big-endian values
//! as a type, so that they cannot be mistaken for host-order ones, and
//! [`AtomicReply`] is what mlx_ext hands a ULP: the response in host order,
//! with the raw value still reachable.

macro_rules! be_type {
    ($name:ident, $t:ty, $bytes:literal) => {
        #[doc = concat!(
                    "A ", stringify!($t), " stored big-endian, as the adapter wrote it: its raw ",
                    "value is what a native load of the ", stringify!($bytes), " bytes gives."
                )]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct $name($t);

        impl $name {
            /// Wraps a raw value, loaded natively from memory the adapter wrote
            /// big-endian.
            #[inline]
            pub const fn from_raw(raw: $t) -> Self {
                Self(raw)
            }

            /// Returns the raw value: the bytes in memory read as a native
            /// integer, with no conversion.
            #[inline]
            pub const fn raw(self) -> $t {
                self.0
            }

            /// Converts a value in host order into its big-endian form.
            #[inline]
            pub const fn from_host(value: $t) -> Self {
                Self(value.to_be())
            }

            /// Returns the value in host order.
            #[inline]
            pub const fn to_host(self) -> $t {
                <$t>::from_be(self.0)
            }

            /// Wraps the bytes as they lie in memory.
            #[inline]
            pub const fn from_bytes(bytes: [u8; $bytes]) -> Self {
                Self(<$t>::from_ne_bytes(bytes))
            }

            /// Returns the bytes as they lie in memory, most significant first.
            #[inline]
            pub const fn to_bytes(self) -> [u8; $bytes] {
                self.0.to_ne_bytes()
            }
        }
    };
}

be_type!(Be64, u64, 8);
be_type!(Be32, u32, 4);

/// The byte order in which a device writes atomic responses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyOrder {
    /// The response is in the host's byte order (every device but the one below).
    Host,
    /// The response is big-endian whatever the host: Connect-IB, whose
    /// capability is `hca_reply_be` on a little-endian host. On a big-endian
    /// host this is the host's order too, and the conversion is the identity.
    BigEndian,
}

/// The response of a 64-bit atomic as mlx_ext hands it to a ULP.
///
/// [`AtomicReply::value`] is always in host order; [`AtomicReply::raw`] is the
/// value exactly as the adapter wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicReply {
    raw: u64,
    order: ReplyOrder,
}

impl AtomicReply {
    /// Wraps a raw response written by a device that replies in `order`.
    #[inline]
    pub const fn new(raw: u64, order: ReplyOrder) -> Self {
        Self { raw, order }
    }

    /// Wraps a response in host order, as the emulation produces it.
    #[inline]
    pub const fn from_host(value: u64) -> Self {
        Self::new(value, ReplyOrder::Host)
    }

    /// Returns the response in host order: the old value of the word.
    #[inline]
    pub const fn value(self) -> u64 {
        match self.order {
            ReplyOrder::Host => self.raw,
            ReplyOrder::BigEndian => Be64::from_raw(self.raw).to_host(),
        }
    }

    /// Returns the response exactly as the adapter wrote it.
    #[inline]
    pub const fn raw(self) -> u64 {
        self.raw
    }

    /// Returns the byte order the adapter wrote the response in.
    #[inline]
    pub const fn order(self) -> ReplyOrder {
        self.order
    }
}
