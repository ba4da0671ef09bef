// SPDX-License-Identifier: GPL-2.0

//! The rules of mlx_ext's atomic API for kernel ULPs: create and attach
//! flags, the ABI check, plans by device, 4-byte operations, completion
//! errnos, the guess cache and combined batches.

use mlx_ext_core::api::*;
use mlx_ext_core::atomics::wr::{AtomicOp, WcStatus};
use mlx_ext_core::atomics::{Emulation, MaskedOp};
use mlx_ext_core::caps::{AtomicCap, DeviceFacts, Record, DRIVER_MLX4, DRIVER_MLX5, DRIVER_RXE};

#[test]
fn attach_flags_follow_the_device() {
    let be = connectib();
    assert_eq!(be.atomic_cap, AtomicCap::HcaReplyBe);
    let host = rxe();
    let f = ATTACH_ATOMIC_BE_REPLY;
    assert_eq!(attach_flags(&be, f), Ok(QpFlags { be_reply: true }));
    assert_eq!(attach_flags(&be, 0), Err(AttachRefusal::BeReplyMissing));
    assert_eq!(attach_flags(&host, 0), Ok(QpFlags { be_reply: false }));
    assert_eq!(attach_flags(&host, f), Err(AttachRefusal::BeReplyNotBe));
    // Unknown bits first, whatever the device; the create flag's bit
    // means nothing here.
    for bits in [1 << 1, 1 << 31, QP_CREATE_ATOMIC_BE_REPLY] {
        assert_eq!(
            attach_flags(&be, f | bits),
            Err(AttachRefusal::UnknownFlags)
        );
        assert_eq!(attach_flags(&host, bits), Err(AttachRefusal::UnknownFlags));
    }
}

#[test]
fn init_send_cap_adds_room() {
    assert_eq!(init_send_cap(16, 1, 8), Ok((24, 1)));
    assert_eq!(init_send_cap(16, 0, 8), Ok((24, 1)));
    assert_eq!(init_send_cap(16, 3, 0), Ok((16, 3)));
    assert_eq!(init_send_cap(u32::MAX - 2, 1, 2), Ok((u32::MAX, 1)));
    assert_eq!(
        init_send_cap(u32::MAX - 2, 1, 3),
        Err(QpRefusal::SendCapOverflow)
    );
}

fn record(driver_id: u32, part: u32, atomic: u32, masked: u32) -> Record {
    Record::derive(&DeviceFacts {
        driver_id,
        vendor_id: 0x02c9,
        vendor_part_id: part,
        atomic_cap: AtomicCap::from_ib(atomic),
        masked_atomic_cap: AtomicCap::from_ib(masked),
        ..Default::default()
    })
}

fn rxe() -> Record {
    record(DRIVER_RXE, 0, 1, 0)
}
fn cx3() -> Record {
    record(DRIVER_MLX4, 4099, 1, 1)
}
fn connectib() -> Record {
    record(0, 4113, 1, 1)
}
fn cx4_mlx5() -> Record {
    record(DRIVER_MLX5, 4115, 1, 0)
}

#[test]
fn the_flag_is_bit_27_and_free_on_mlx4_and_mlx5() {
    assert_eq!(QP_CREATE_ATOMIC_BE_REPLY, 1 << 27);
    assert_ne!(QP_CREATE_ATOMIC_BE_REPLY & DRIVER_RESERVED_FLAGS, 0);
    // mlx4: 26 (NETIF), 30, 31 (TUNNEL/PROXY); mlx5: 26.
    for taken in [26, 30, 31] {
        assert_ne!(QP_CREATE_ATOMIC_BE_REPLY, 1 << taken);
    }
    // Not MLNX_OFED's bit 8, which is IB_QP_CREATE_SCATTER_FCS upstream.
    assert_ne!(QP_CREATE_ATOMIC_BE_REPLY, 1 << 8);
}

#[test]
fn flag_rules() {
    let f = QP_CREATE_ATOMIC_BE_REPLY;
    // On a device that is not hca_reply_be: EINVAL.
    for r in [rxe(), cx3(), cx4_mlx5()] {
        assert_eq!(create_flags(&r, f), Err(QpRefusal::BeReplyNotBe));
        assert_eq!(create_flags(&r, f | 1), Err(QpRefusal::BeReplyNotBe));
        assert_eq!(create_flags(&r, 0), Ok((0, QpFlags { be_reply: false })));
    }
    // On Connect-IB: accepted, and taken out of what the driver sees;
    // every other bit passes through (the driver judges them).
    let cib = connectib();
    assert_eq!(create_flags(&cib, f), Ok((0, QpFlags { be_reply: true })));
    assert_eq!(
        create_flags(&cib, f | (1 << 26) | (1 << 1)),
        Ok(((1 << 26) | (1 << 1), QpFlags { be_reply: true }))
    );
    assert_eq!(create_flags(&cib, 0), Ok((0, QpFlags { be_reply: false })));
}

fn req(opcode: Opcode) -> Request {
    Request {
        opcode: opcode as u32,
        size: 8,
        remote_addr: 0x1000,
        rkey: 7,
        compare_add: 1,
        compare_add_mask: 2,
        swap: 3,
        swap_mask: 4,
        flags: 0,
        reserved: 0,
    }
}

/// What a driver refused at run time changes the plan: a refused
/// masked request or fetch-and-add is emulated over compare-and-swap (a
/// fetch-and-add as a masked one with one 64-bit field); a refused
/// compare-and-swap leaves nothing but native masked requests.
#[test]
fn plans_after_refusals() {
    use mlx_ext_core::caps::Refusals;
    let none = QpFlags::default();
    let cx3 = record(0, 4099, 1, 1);
    let masked = cx3.with_refusals(Refusals {
        masked: Some(errno::EINVAL),
        ..Default::default()
    });
    assert_eq!(
        plan(&masked, none, &req(Opcode::MaskedFetchAdd)),
        Ok(Plan::Emulate(MaskedOp::FetchAdd {
            add: 1,
            field_boundary: 2
        }))
    );
    assert!(matches!(
        plan(&masked, none, &req(Opcode::FetchAdd)),
        Ok(Plan::Direct(AtomicOp::FetchAdd { add: 1 }))
    ));
    let fa = cx3.with_refusals(Refusals {
        fetch_add: Some(errno::EOPNOTSUPP),
        ..Default::default()
    });
    assert_eq!(
        plan(&fa, none, &req(Opcode::FetchAdd)),
        Ok(Plan::Emulate(MaskedOp::FetchAdd {
            add: 1,
            field_boundary: 0
        }))
    );
    assert!(matches!(
        plan(&fa, none, &req(Opcode::CmpSwap)),
        Ok(Plan::Direct(_))
    ));
    let cas = cx3.with_refusals(Refusals {
        cmp_swap: Some(errno::EINVAL),
        ..Default::default()
    });
    for o in [Opcode::CmpSwap, Opcode::FetchAdd] {
        assert_eq!(plan(&cas, none, &req(o)), Err(Refusal::NoStandard));
    }
    assert!(matches!(
        plan(&cas, none, &req(Opcode::MaskedCmpSwap)),
        Ok(Plan::Direct(_))
    ));
    // A fetch-and-add emulated as one field adds as the hardware does.
    let whole = MaskedOp::FetchAdd {
        add: 0x8000_0000_0000_0001,
        field_boundary: 0,
    };
    assert_eq!(whole.apply(u64::MAX), 0x8000_0000_0000_0000);
    assert_eq!(whole.apply(0x7fff_ffff_ffff_ffff), 0);
}

#[test]
fn opcode_values_are_the_headers() {
    let v: [u32; 4] = Opcode::ALL.map(|o| o as u32);
    assert_eq!(v, [0, 1, 2, 3]);
    assert_eq!(Opcode::from_raw(4), None);
}

/// SPEC section 2's table, as the API reads `struct mlx_ext_atomic`.
#[test]
fn request_fields_map_as_ib_atomic_wr() {
    let r = |o| req(o).op().unwrap();
    assert_eq!(
        r(Opcode::CmpSwap),
        AtomicOp::CmpSwap {
            compare: 1,
            swap: 3
        }
    );
    assert_eq!(r(Opcode::FetchAdd), AtomicOp::FetchAdd { add: 1 });
    assert_eq!(
        r(Opcode::MaskedCmpSwap),
        AtomicOp::MaskedCmpSwap {
            compare: 1,
            compare_mask: 2,
            swap: 3,
            swap_mask: 4
        }
    );
    assert_eq!(
        r(Opcode::MaskedFetchAdd),
        AtomicOp::MaskedFetchAdd {
            add: 1,
            field_boundary: 2
        }
    );
}

#[test]
fn plans_by_device() {
    let none = QpFlags::default();
    let be = QpFlags { be_reply: true };
    let mcas = MaskedOp::CmpSwap {
        compare: 1,
        compare_mask: 2,
        swap: 3,
        swap_mask: 4,
    };
    let mfa = MaskedOp::FetchAdd {
        add: 1,
        field_boundary: 2,
    };
    // rxe: standard direct, masked emulated.
    let r = rxe();
    assert!(matches!(
        plan(&r, none, &req(Opcode::CmpSwap)),
        Ok(Plan::Direct(_))
    ));
    assert!(matches!(
        plan(&r, none, &req(Opcode::FetchAdd)),
        Ok(Plan::Direct(_))
    ));
    assert_eq!(
        plan(&r, none, &req(Opcode::MaskedCmpSwap)),
        Ok(Plan::Emulate(mcas))
    );
    assert_eq!(
        plan(&r, none, &req(Opcode::MaskedFetchAdd)),
        Ok(Plan::Emulate(mfa))
    );
    // cx3: all direct.
    for o in Opcode::ALL {
        assert!(matches!(plan(&cx3(), none, &req(o)), Ok(Plan::Direct(_))));
    }
    // Connect-IB: refused without the flag, direct with it.
    for o in Opcode::ALL {
        assert_eq!(
            plan(&connectib(), none, &req(o)),
            Err(Refusal::BeReplyNotAccepted)
        );
        assert!(matches!(
            plan(&connectib(), be, &req(o)),
            Ok(Plan::Direct(_))
        ));
    }
    // mlx5_ib: nothing.
    assert_eq!(
        plan(&cx4_mlx5(), none, &req(Opcode::CmpSwap)),
        Err(Refusal::NoStandard)
    );
    assert_eq!(
        plan(&cx4_mlx5(), none, &req(Opcode::MaskedFetchAdd)),
        Err(Refusal::NoMasked)
    );
}

#[test]
fn flags_and_reserved() {
    let none = QpFlags::default();
    let mut r = req(Opcode::MaskedCmpSwap);
    r.flags = ATOMIC_FENCE;
    assert!(r.fence());
    assert!(plan(&cx3(), none, &r).is_ok());
    for bit in 1..32 {
        r.flags = ATOMIC_FENCE | 1 << bit;
        assert_eq!(plan(&cx3(), none, &r), Err(Refusal::UnknownFlags));
    }
    r.flags = 0;
    assert!(!r.fence());
    for v in [1, 0x8000_0000, u32::MAX] {
        r.reserved = v;
        assert_eq!(plan(&cx3(), none, &r), Err(Refusal::Reserved));
    }
    // Before anything else: a bad opcode with bad flags is bad flags.
    let mut r = req(Opcode::FetchAdd);
    r.opcode = 9;
    r.flags = 2;
    assert_eq!(plan(&cx3(), none, &r), Err(Refusal::UnknownFlags));
    assert_eq!(Refusal::UnknownFlags.errno(), errno::EINVAL);
    assert_eq!(Refusal::Reserved.errno(), errno::EINVAL);
}

#[test]
fn abi_rules() {
    let (major, minor) = API_VERSION;
    let v = |ma: u32, mi: u32| ma << 16 | mi;
    assert_eq!(abi_check(v(major, minor), 104, 104), Ok(()));
    // Older minors of the same major: fine.
    for mi in 0..minor {
        assert_eq!(abi_check(v(major, mi), 104, 104), Ok(()));
    }
    assert_eq!(
        abi_check(v(major, minor + 1), 104, 104),
        Err(AbiRefusal::Newer)
    );
    assert_eq!(abi_check(v(major + 1, 0), 104, 104), Err(AbiRefusal::Major));
    assert_eq!(
        abi_check(v(major - 1, minor), 104, 104),
        Err(AbiRefusal::Major)
    );
    assert_eq!(abi_check(0, 104, 104), Err(AbiRefusal::Major));
    for size in [0, 96, 103, 105, 112] {
        assert_eq!(abi_check(v(major, minor), size, 104), Err(AbiRefusal::Size));
    }
    let codes = [AbiRefusal::Major, AbiRefusal::Newer, AbiRefusal::Size].map(AbiRefusal::code);
    assert_eq!(codes, [1, 2, 3]);
}

#[test]
fn bad_requests() {
    let none = QpFlags::default();
    let mut r = req(Opcode::FetchAdd);
    r.opcode = 9;
    assert_eq!(plan(&cx3(), none, &r), Err(Refusal::BadOpcode));
    let mut r = req(Opcode::FetchAdd);
    // A 4-byte request reaches the plan only widened.
    for size in [0, 1, 2, 3, 4, 5, 16, u32::MAX] {
        r.size = size;
        assert_eq!(plan(&cx3(), none, &r), Err(Refusal::BadSize));
    }
    let mut r = req(Opcode::MaskedCmpSwap);
    for off in 1..8 {
        r.remote_addr = 0x1000 + off;
        assert_eq!(plan(&rxe(), none, &r), Err(Refusal::Misaligned));
    }
    assert_eq!(Refusal::WideOperand.errno(), errno::EINVAL);
    assert_eq!(Refusal::Misaligned.errno(), errno::EINVAL);
    assert_eq!(Refusal::BeReplyNotAccepted.errno(), 95);
    for x in [
        Refusal::BadOpcode,
        Refusal::BadSize,
        Refusal::WideOperand,
        Refusal::Misaligned,
        Refusal::BeReplyNotAccepted,
        Refusal::NoStandard,
        Refusal::NoMasked,
    ] {
        assert!(!x.text().is_empty());
    }
}

/// 4-byte operations, widened to the 8-byte masked operation on their
/// word: against the host's bit-serial 32-bit reference, on random
/// words and operands, for both halves and both host orders; the other
/// half never changes, and the response is the half's old value.
#[test]
fn narrow_operations_match_the_32_bit_reference() {
    use mlx_ext_core::atomics::{reference, selftest::SplitMix64};
    let mut rng = SplitMix64::new(4);
    for i in 0..200_000u32 {
        let word = rng.next_u64();
        let (a, b, c, d) = (
            rng.next_u64() as u32,
            rng.next_u64() as u32,
            rng.next_u64() as u32,
            rng.next_u64() as u32,
        );
        let opcode = Opcode::ALL[(i % 4) as usize];
        let upper_addr = i & 4 != 0;
        let big = i & 8 != 0;
        let r = Request {
            opcode: opcode as u32,
            size: 4,
            remote_addr: 0x1000 + if upper_addr { 4 } else { 0 },
            rkey: 7,
            compare_add: a.into(),
            compare_add_mask: c.into(),
            swap: b.into(),
            swap_mask: d.into(),
            flags: ATOMIC_FENCE,
            reserved: 0,
        };
        let (w, half) = widen(&r, big).unwrap();
        let half = half.unwrap();
        assert_eq!(
            (w.size, w.remote_addr, w.rkey, w.flags),
            (8, 0x1000, 7, ATOMIC_FENCE)
        );
        // The bytes at the address: the low half on a little-endian
        // host at +0, the high half at +4; the reverse on a big one.
        assert_eq!(half.shift, if upper_addr != big { 32 } else { 0 });
        let old = narrow(word, Some(half)) as u32;
        let want = match opcode {
            Opcode::CmpSwap => reference::masked_cmp_swap32(old, a, !0, b, !0),
            Opcode::FetchAdd => reference::masked_fetch_add32(old, a, 0),
            Opcode::MaskedCmpSwap => reference::masked_cmp_swap32(old, a, c, b, d),
            Opcode::MaskedFetchAdd => reference::masked_fetch_add32(old, a, c),
        };
        let m = match w.op().unwrap() {
            AtomicOp::MaskedCmpSwap {
                compare,
                compare_mask,
                swap,
                swap_mask,
            } => MaskedOp::CmpSwap {
                compare,
                compare_mask,
                swap,
                swap_mask,
            },
            AtomicOp::MaskedFetchAdd {
                add,
                field_boundary,
            } => MaskedOp::FetchAdd {
                add,
                field_boundary,
            },
            other => panic!("{other:?} is not masked"),
        };
        let new = m.apply(word);
        assert_eq!(narrow(new, Some(half)) as u32, want, "{r:?} on {word:#x}");
        let other = Half {
            shift: 32 - half.shift,
        };
        assert_eq!(narrow(new, Some(other)), narrow(word, Some(other)), "{r:?}");
    }
}

#[test]
fn narrow_refusals() {
    let mut r = req(Opcode::CmpSwap);
    r.size = 4;
    assert_eq!(
        widen(&r, false).map(|(_, h)| h),
        Ok(Some(Half { shift: 0 }))
    );
    r.remote_addr = 0x1004;
    assert_eq!(
        widen(&r, false).map(|(_, h)| h),
        Ok(Some(Half { shift: 32 }))
    );
    for off in [1, 2, 3, 5, 6, 7] {
        r.remote_addr = 0x1000 + off;
        assert_eq!(widen(&r, false), Err(Refusal::Misaligned));
    }
    r.remote_addr = 0x1000;
    r.swap = 1 << 32;
    assert_eq!(widen(&r, false), Err(Refusal::WideOperand));
    // Operands an opcode does not use may hold anything.
    let mut f = req(Opcode::FetchAdd);
    f.size = 4;
    f.swap = u64::MAX;
    f.compare_add_mask = u64::MAX;
    assert!(widen(&f, false).is_ok());
    f.compare_add = 1 << 32;
    assert_eq!(widen(&f, false), Err(Refusal::WideOperand));
    let mut m = req(Opcode::MaskedFetchAdd);
    m.size = 4;
    m.compare_add = 1 << 40;
    assert_eq!(widen(&m, false), Err(Refusal::WideOperand));
    m.compare_add = 0;
    m.opcode = 9;
    assert_eq!(widen(&m, false), Err(Refusal::BadOpcode));
    m.flags = 2;
    assert_eq!(widen(&m, false), Err(Refusal::UnknownFlags));
    // 8-byte requests pass unchanged, whatever they hold.
    let mut e = req(Opcode::MaskedCmpSwap);
    e.remote_addr = 3;
    assert_eq!(widen(&e, true), Ok((e, None)));
    assert_eq!(narrow(0x1234_5678_9abc_def0, None), 0x1234_5678_9abc_def0);
    // Widened, it is planned as a masked operation: native on cx3,
    // emulated on rxe.
    let none = QpFlags::default();
    r.swap = 3;
    let (w, _) = widen(&r, false).unwrap();
    assert!(matches!(
        plan(&cx3(), none, &w),
        Ok(Plan::Direct(AtomicOp::MaskedCmpSwap { .. }))
    ));
    assert!(matches!(
        plan(&rxe(), none, &w),
        Ok(Plan::Emulate(MaskedOp::CmpSwap { .. }))
    ));
}

#[test]
fn waiting_operations_know_they_did_not_begin() {
    use errno::*;
    assert_eq!(not_begun(-ECANCELED, false), -ECONNABORTED);
    assert_eq!(not_begun(-ETIMEDOUT, false), -ECONNABORTED);
    assert_eq!(not_begun(-ECANCELED, true), -ESHUTDOWN);
    for known in [-EACCES, -EREMOTEIO, -EINVAL, -EFAULT, -EIO, -ENOMEM] {
        assert_eq!(not_begun(known, false), known);
        assert_eq!(not_begun(known, true), known);
    }
}

#[test]
fn completion_errnos() {
    let e = |s: WcStatus| completion_errno(s as u32);
    assert_eq!(e(WcStatus::Success), 0);
    assert_eq!(e(WcStatus::WrFlushErr), 125);
    assert_eq!(e(WcStatus::RemAccessErr), 13);
    assert_eq!(e(WcStatus::RemInvReqErr), 121);
    assert_eq!(e(WcStatus::RetryExcErr), 110);
    assert_eq!(e(WcStatus::LocLenErr), 22);
    assert_eq!(e(WcStatus::LocProtErr), 14);
    assert_eq!(e(WcStatus::GeneralErr), 5);
    assert_eq!(completion_errno(99), 5);
}

#[test]
fn emulation_cas_is_the_guess_and_the_op_applied() {
    let op = MaskedOp::FetchAdd {
        add: 0x0101,
        field_boundary: 0x80,
    };
    let e = Emulation::with_max_attempts(op, 0x00ff, MAX_ATTEMPTS);
    assert_eq!(
        cas_op(&e),
        AtomicOp::CmpSwap {
            compare: 0x00ff,
            swap: 0x0100
        }
    );
}

#[test]
fn guess_cache() {
    let mut c = GuessCache::new();
    assert_eq!(c.get(1, 8), None);
    c.put(1, 8, 42);
    assert_eq!(c.get(1, 8), Some(42));
    assert_eq!(c.get(2, 8), None);
    assert_eq!(c.get(1, 16), None);
    c.put(1, 8, 43);
    assert_eq!(c.get(1, 8), Some(43));
    c.forget(1, 8);
    assert_eq!(c.get(1, 8), None);
    // Consecutive words of one region all fit, from any start.
    for base in [0x4000u64, 0x4008, 0xfff8] {
        let mut c = GuessCache::new();
        for w in 0..GUESS_ENTRIES as u64 {
            c.put(5, base + 8 * w, w);
        }
        for w in 0..GUESS_ENTRIES as u64 {
            assert_eq!(c.get(5, base + 8 * w), Some(w));
        }
    }
    for w in 0..8u64 {
        c.put(5, 0x4000 + 8 * w, w);
    }
    // Forgetting another word leaves a slot alone.
    let before = c.get(5, 0x4000);
    c.forget(9, 0x4000);
    assert_eq!(c.get(5, 0x4000), before);
}

/// A batch answers what the operations, run alone one after the other,
/// would have answered, and leaves what they would have left.
#[test]
fn a_batch_is_its_operations_in_order() {
    use mlx_ext_core::atomics::selftest::SplitMix64;
    let mut rng = SplitMix64::new(7);
    for _ in 0..2000 {
        let n = (rng.next_u64() % 5) as usize + 1;
        let mut ops = [MaskedOp::FetchAdd {
            add: 0,
            field_boundary: 0,
        }; 5];
        for op in ops.iter_mut().take(n) {
            let (a, b, c, d) = (
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
            );
            *op = if a & 1 == 0 {
                MaskedOp::FetchAdd {
                    add: b,
                    field_boundary: c,
                }
            } else {
                MaskedOp::CmpSwap {
                    compare: b,
                    compare_mask: c & d,
                    swap: d,
                    swap_mask: c,
                }
            };
        }
        let guess = rng.next_u64();
        let mut walk = BatchWalk::new(guess);
        let mut word = guess;
        for op in ops.iter().take(n) {
            // The reference: the operation alone on the word.
            let expect = word;
            word = op.apply(word);
            assert_eq!(walk.step(*op), expect);
        }
        assert_eq!(walk.value(), word);
    }
    // By hand: two adds into one field, then a CAS that sees them.
    let mut w = BatchWalk::new(0x10);
    let add = MaskedOp::FetchAdd {
        add: 1,
        field_boundary: 0x80,
    };
    assert_eq!(w.step(add), 0x10);
    assert_eq!(w.step(add), 0x11);
    let cas = MaskedOp::CmpSwap {
        compare: 0x12,
        compare_mask: 0xff,
        swap: 0xaa,
        swap_mask: 0xff,
    };
    assert_eq!(w.step(cas), 0x12);
    assert_eq!(w.value(), 0xaa);
}

/// A 4-byte operation's masks: only their low 32 bits are read, so that
/// UCX's all-ones masks (its 4-byte SWAP and XOR) mean what they mean
/// in 32 bits; its values stay strict.
#[test]
fn four_byte_masks_ignore_their_upper_bits() {
    for (opcode, upper) in [
        (Opcode::MaskedCmpSwap, 0xdead_beef_0000_0000),
        (Opcode::MaskedFetchAdd, u64::MAX << 32),
    ] {
        for addr in [0x1000, 0x1004] {
            let mut r = req(opcode);
            r.size = 4;
            r.remote_addr = addr;
            r.compare_add = 0x8000_0001;
            r.compare_add_mask = 0xffff_0000;
            r.swap = 0x1234_5678;
            r.swap_mask = 0xffff_ffff;
            let want = widen(&r, false).unwrap();
            let mut wide = r;
            wide.compare_add_mask |= upper;
            wide.swap_mask |= upper;
            assert_eq!(widen(&wide, false), Ok(want), "{opcode:?} at {addr:#x}");
            // UCX's SWAP (compare mask 0, swap mask all ones) and XOR
            // (boundary all ones).
            let mut all = r;
            all.compare_add_mask = u64::MAX;
            all.swap_mask = u64::MAX;
            let mut low = r;
            low.compare_add_mask = u64::from(u32::MAX);
            low.swap_mask = u64::from(u32::MAX);
            assert_eq!(widen(&all, false), widen(&low, false));
            // Values over 32 bits are refused still.
            let mut v = wide;
            v.compare_add = 1 << 32;
            assert_eq!(widen(&v, false), Err(Refusal::WideOperand));
            if opcode == Opcode::MaskedCmpSwap {
                let mut v = wide;
                v.swap = 1 << 32;
                assert_eq!(widen(&v, false), Err(Refusal::WideOperand));
            }
        }
    }
}

/// Every refusal of a QP is EINVAL and says what was wrong in its own
/// words: one line, no newline (the log adds it), distinct from the others.
#[test]
fn qp_refusals_say_what_was_wrong() {
    let all = [
        QpRefusal::NotRc,
        QpRefusal::SendCapOverflow,
        QpRefusal::SendCqModel,
        QpRefusal::OtherDevice,
        QpRefusal::GroupSendCq,
        QpRefusal::Srq,
        QpRefusal::CqsUnusable,
        QpRefusal::BeReplyNotBe,
    ];
    for (i, r) in all.iter().enumerate() {
        assert_eq!(r.errno(), errno::EINVAL, "{r:?}");
        let t = r.text();
        assert!(
            !t.is_empty() && !t.contains('\n') && !t.ends_with('.'),
            "{r:?}: {t:?}"
        );
        for other in &all[i + 1..] {
            assert_ne!(t, other.text(), "{r:?} and {other:?}");
        }
    }
    assert!(QpRefusal::NotRc.text().contains("RC"));
    assert!(QpRefusal::Srq.text().contains("SRQ"));
    assert!(QpRefusal::BeReplyNotBe
        .text()
        .starts_with("MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY"));
    // The rules return them.
    assert_eq!(
        init_send_cap(u32::MAX, 1, 1),
        Err(QpRefusal::SendCapOverflow)
    );
    assert_eq!(
        create_flags(&rxe(), QP_CREATE_ATOMIC_BE_REPLY),
        Err(QpRefusal::BeReplyNotBe)
    );
}
