// SPDX-License-Identifier: GPL-2.0

//! The interface of `sim` that the kernel module `mlx_ext_sim` is written
//! against: these names and signatures must not change without it.

use mlx_ext_core::atomics::ReplyOrder;
use mlx_ext_core::caps::AtomicCap;
use mlx_ext_core::sim::control::{self, ControlError, NewDevice};
use mlx_ext_core::sim::fabric::{
    self, Access, AtomicOp, Key, PostError, QpState, Region, RegionState, WcOpcode, WcStatus,
    WrOpcode,
};
use mlx_ext_core::sim::model::{self, Model, MAX_NUM_VFS, MAX_PORTS, MODELS};

/// The type of `check_remote`.
type CheckRemote = fn(Option<&Region>, u32, u32, u64, u64, Access) -> Result<u64, WcStatus>;

#[test]
fn signatures() {
    let _: fn(&[u8]) -> Option<&'static Model> = model::find;
    let _: &'static [Model; 4] = &MODELS;
    let _: (u8, u16) = (MAX_PORTS, MAX_NUM_VFS);
    let _: fn(&[u8]) -> Result<NewDevice, ControlError> = control::parse_new_device;
    let _: fn(&[u8]) -> Result<u32, ControlError> = control::parse_del_device;
    let _: fn(&ControlError) -> i32 = ControlError::errno;
    let _: fn(&ControlError) -> &'static str = ControlError::message;
    let _: CheckRemote = fabric::check_remote;
    let _: fn(Option<&Region>, u32, u32, u64) -> Result<u64, WcStatus> = fabric::check_atomic;
    let _: fn(u32) -> Option<WrOpcode> = WrOpcode::from_raw;
    let _: fn(WrOpcode) -> WcOpcode = WrOpcode::wc_opcode;
    let _: fn(WrOpcode, u64, u64, u64, u64) -> Option<AtomicOp> = AtomicOp::from_wr;
    let _: fn(&AtomicOp) -> bool = AtomicOp::is_masked;
    let _: fn(&AtomicOp, u64) -> u64 = AtomicOp::new_value;
    let _: fn(u64, ReplyOrder) -> [u8; 8] = fabric::reply_bytes;
    let _: fn(&Model, WrOpcode) -> Result<(), PostError> = fabric::post_check;
    let _: fn(QpState) -> bool = fabric::can_post_send;
    let _: fn(QpState) -> bool = fabric::can_post_recv;
    let _: fn(QpState) -> bool = fabric::flushes;
    let _: fn(u32, u8) -> Key = Key::new;
    let _: fn(Key) -> u32 = Key::index;
    let _: fn(Key) -> u8 = Key::variant;
    let _: fn(Key, u8) -> Key = Key::with_variant;
    let _: fn(Access, Access) -> bool = Access::contains;
}

#[test]
fn a_device_from_the_control_line_to_an_atomic_reply() {
    // echo "1 connectib 2 4" > new_device
    let dev = control::parse_new_device(b"1 connectib 2 4\n").unwrap();
    assert_eq!((dev.id, dev.ports, dev.num_vfs), (1, 2, 4));
    let m = dev.model;
    assert_eq!((m.vendor_id, m.vendor_part_id), (0x02c9, 4113));
    assert_eq!(m.atomic_cap, AtomicCap::Hca);

    // A masked fetch-and-add on a registered FRWR region.
    fabric::post_check(m, WrOpcode::MaskedAtomicFetchAndAdd).unwrap();
    let region = Region {
        key: Key::new(1, 0),
        pd: 9,
        iova: 0x4000,
        length: 64,
        access: Access::LOCAL_WRITE | Access::REMOTE_ATOMIC,
        state: RegionState::Valid,
    };
    let rkey = region.key.raw();
    let offset = fabric::check_atomic(Some(&region), rkey, 9, 0x4008).unwrap();
    assert_eq!(offset, 8);
    let op = AtomicOp::from_wr(WrOpcode::MaskedAtomicFetchAndAdd, 1, 1 << 31, 0, 0).unwrap();
    let old = 0x0000_0000_ffff_ffff;
    assert_eq!(op.new_value(old), 0);
    // Connect-IB writes the response big-endian.
    assert_eq!(
        fabric::reply_bytes(old, m.reply_order),
        [0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]
    );
    assert_eq!(
        WrOpcode::MaskedAtomicFetchAndAdd.wc_opcode() as u32,
        12 // IB_WC_MASKED_FETCH_ADD
    );

    // After an invalidation and re-registration with a new variant, the old
    // rkey is refused.
    let rereg = Region {
        key: region.key.with_variant(1),
        ..region
    };
    assert_eq!(
        fabric::check_atomic(Some(&rereg), rkey, 9, 0x4008),
        Err(WcStatus::RemAccessErr)
    );
    assert!(fabric::flushes(QpState::Err));

    // echo 1 > del_device
    assert_eq!(control::parse_del_device(b"1\n"), Ok(1));
    assert_eq!(
        control::parse_new_device(b"1 cx4 3").unwrap_err().errno(),
        22
    );
}
