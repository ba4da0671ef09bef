// SPDX-License-Identifier: GPL-2.0

//! The byte order of atomic responses: `Be64`, `Be32` and `AtomicReply`.

use mlx_ext_core::atomics::{AtomicReply, Be32, Be64, ReplyOrder};

#[test]
fn be64_known_vector() {
    // The adapter wrote 01 02 .. 08: big-endian for 0x0102030405060708.
    let bytes = [1u8, 2, 3, 4, 5, 6, 7, 8];
    let be = Be64::from_bytes(bytes);
    assert_eq!(be.to_host(), 0x0102_0304_0506_0708);
    assert_eq!(be.raw(), u64::from_ne_bytes(bytes));
    assert_eq!(be.to_bytes(), bytes);
    assert_eq!(Be64::from_host(0x0102_0304_0506_0708), be);
    assert_eq!(Be64::from_raw(u64::from_ne_bytes(bytes)), be);
}

#[test]
fn be32_known_vector() {
    let be = Be32::from_bytes([0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(be.to_host(), 0xdead_beef);
    assert_eq!(
        Be32::from_host(0xdead_beef).to_bytes(),
        [0xde, 0xad, 0xbe, 0xef]
    );
}

#[test]
fn be64_round_trips() {
    for v in [
        0u64,
        1,
        u64::MAX,
        0x0102_0304_0506_0708,
        1 << 63,
        0x8000_0000_0000_00ff,
    ] {
        assert_eq!(Be64::from_host(v).to_host(), v);
        assert_eq!(Be64::from_raw(v).raw(), v);
        assert_eq!(Be64::from_raw(Be64::from_host(v).raw()).to_host(), v);
        assert_eq!(
            Be64::from_bytes(Be64::from_host(v).to_bytes()),
            Be64::from_host(v)
        );
        assert_eq!(Be64::from_host(v).to_bytes(), v.to_be_bytes());
    }
}

#[test]
fn be64_on_this_host() {
    let v = 0x0102_0304_0506_0708u64;
    if cfg!(target_endian = "little") {
        // A big-endian reply read natively on a little-endian host is swapped.
        assert_eq!(Be64::from_host(v).raw(), 0x0807_0605_0403_0201);
        assert_eq!(Be64::from_raw(v).to_host(), 0x0807_0605_0403_0201);
    } else {
        assert_eq!(Be64::from_host(v).raw(), v);
    }
}

#[test]
fn be_conversions_are_const() {
    const BE: Be64 = Be64::from_host(0x1122_3344_5566_7788);
    const HOST: u64 = BE.to_host();
    assert_eq!(HOST, 0x1122_3344_5566_7788);
}

#[test]
fn reply_in_host_order_and_raw() {
    let value = 0x0102_0304_0506_0708u64;
    let raw_be = Be64::from_host(value).raw();
    let reply = AtomicReply::new(raw_be, ReplyOrder::BigEndian);
    assert_eq!(reply.value(), value);
    assert_eq!(reply.raw(), raw_be);
    assert_eq!(reply.order(), ReplyOrder::BigEndian);
    let reply = AtomicReply::new(value, ReplyOrder::Host);
    assert_eq!(reply.value(), value);
    assert_eq!(reply.raw(), value);
    assert_eq!(AtomicReply::from_host(value), reply);
}
