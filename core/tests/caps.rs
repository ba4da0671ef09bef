// SPDX-License-Identifier: GPL-2.0

//! The capability rules: records by device and driver, the drivers' rows,
//! reasons, and what is learnt from refusals at run time.

use mlx_ext_core::caps::*;
// The errnos drivers refuse an opcode with, as `caps` takes them.
use mlx_ext_core::api::errno::{EINVAL, EOPNOTSUPP};

#[test]
fn ib_values_map_to_names() {
    let names: [&str; 3] = [0, 1, 2].map(|v| AtomicCap::from_ib(v).map_or("?", AtomicCap::name));
    assert_eq!(names, ["none", "hca", "glob"]);
    assert_eq!(AtomicCap::from_ib(3), None);
    assert_eq!(AtomicCap::HcaReplyBe.name(), "hca_reply_be");
}

const MELLANOX: u32 = 0x02c9;

fn facts(driver_id: u32, part: u32, atomic: u32, masked: u32) -> DeviceFacts {
    DeviceFacts {
        driver_id,
        vendor_id: if driver_id == DRIVER_RXE {
            0xffffff
        } else {
            MELLANOX
        },
        vendor_part_id: part,
        atomic_cap: AtomicCap::from_ib(atomic),
        masked_atomic_cap: AtomicCap::from_ib(masked),
        ..Default::default()
    }
}

fn row(f: DeviceFacts) -> (&'static str, &'static str, &'static str) {
    let r = Record::derive(&f);
    (
        r.atomic_cap.name(),
        r.masked_atomic_cap.name(),
        r.mode.name(),
    )
}

fn reason(f: DeviceFacts) -> String {
    Record::derive(&f).reasons.to_string()
}

/// The devices of the simulator and the Mellanox parts, row by row
/// (driver_id 0 is the simulator's RDMA_DRIVER_UNKNOWN: its attributes
/// decide).
#[test]
fn records_row_by_row() {
    // rxe0: HCA, NONE.
    assert_eq!(row(facts(DRIVER_RXE, 0, 1, 0)), ("hca", "none", "emulated"));
    // Simulated ConnectX-3, Connect-IB, ConnectX-4.
    assert_eq!(row(facts(0, 4099, 1, 1)), ("hca", "hca", "native"));
    assert_eq!(
        row(facts(0, 4113, 1, 1)),
        ("hca_reply_be", "hca_reply_be", "native")
    );
    assert_eq!(row(facts(0, 4115, 1, 0)), ("hca", "none", "emulated"));
    // A real ConnectX-3 under mlx4_ib (masked = atomic), and one whose
    // firmware has no atomics.
    assert_eq!(
        row(facts(DRIVER_MLX4, 4099, 1, 1)),
        ("hca", "hca", "native")
    );
    let bare = Record::derive(&facts(DRIVER_MLX4, 4099, 0, 0));
    assert_eq!(bare.mode, MaskedMode::Unavailable);
    assert_eq!(bare.posts, KernelAtomics::default());
    assert!(bare.reasons.no_atomics);
    // A real Connect-IB under mlx5_ib on x86: NONE from ib_core, yet the
    // silicon replies big-endian; mlx5_ib posts no kernel atomics.
    let cib = Record::derive(&facts(DRIVER_MLX5, 4113, 0, 0));
    assert_eq!(
        (
            cib.atomic_cap.name(),
            cib.masked_atomic_cap.name(),
            cib.mode.name()
        ),
        ("hca_reply_be", "hca_reply_be", "unavailable")
    );
    // Its VF too.
    assert_eq!(row(facts(DRIVER_MLX5, 4114, 0, 0)).2, "unavailable");
    // A ConnectX-4 under mlx5_ib: HCA from ib_core, but unavailable, and
    // the reason says why.
    let cx4 = Record::derive(&facts(DRIVER_MLX5, 4115, 1, 0));
    assert_eq!(cx4.mode, MaskedMode::Unavailable);
    assert!(reason(facts(DRIVER_MLX5, 4115, 1, 0)).contains("mlx5_ib"));
    // An unknown driver with no atomics.
    let none = Record::derive(&facts(0, 1, 0, 0));
    assert_eq!(
        (none.mode, none.reasons.no_atomics),
        (MaskedMode::Unavailable, true)
    );
    // An unknown driver with masked atomics but no standard ones.
    assert_eq!(row(facts(0, 1, 0, 1)), ("none", "hca", "native"));
    // An unknown driver with GLOB standard atomics.
    assert_eq!(row(facts(0, 1, 2, 0)), ("glob", "none", "emulated"));
}

/// Every driver with a row, with the attributes it reports (RDMA-NOTES section
/// 1, `drivers.rs`): what a kernel ULP gets, and that the reason names
/// the driver where the row takes something away.
#[test]
fn every_driver_with_its_attributes() {
    // (driver, atomic_cap, masked_atomic_cap, iwarp, mode, standard
    // posted, the reason names the driver)
    let cases: [(u32, u32, u32, bool, MaskedMode, bool, bool); 27] = [
        (DRIVER_MLX4, 1, 1, false, MaskedMode::Native, true, false),
        (
            DRIVER_MLX4,
            0,
            0,
            false,
            MaskedMode::Unavailable,
            false,
            false,
        ),
        (
            DRIVER_MLX5,
            1,
            0,
            false,
            MaskedMode::Unavailable,
            false,
            true,
        ),
        (
            DRIVER_MLX5,
            0,
            0,
            false,
            MaskedMode::Unavailable,
            false,
            true,
        ),
        (
            DRIVER_CXGB4,
            0,
            0,
            true,
            MaskedMode::Unavailable,
            false,
            true,
        ),
        (DRIVER_MTHCA, 1, 0, false, MaskedMode::Emulated, true, false),
        (
            DRIVER_MTHCA,
            0,
            0,
            false,
            MaskedMode::Unavailable,
            false,
            false,
        ),
        (
            DRIVER_BNXT_RE,
            2,
            2,
            false,
            MaskedMode::Emulated,
            true,
            true,
        ),
        (
            DRIVER_BNXT_RE,
            0,
            0,
            false,
            MaskedMode::Unavailable,
            false,
            false,
        ),
        (
            DRIVER_OCRDMA,
            0,
            0,
            false,
            MaskedMode::Unavailable,
            false,
            true,
        ),
        // 6.12's irdma, and 7.3's without the firmware's atomics.
        (
            DRIVER_IRDMA,
            0,
            0,
            true,
            MaskedMode::Unavailable,
            false,
            false,
        ),
        (
            DRIVER_IRDMA,
            0,
            0,
            false,
            MaskedMode::Unavailable,
            false,
            false,
        ),
        // 7.3's irdma with them: masked refused; none on iWARP.
        (DRIVER_IRDMA, 1, 1, false, MaskedMode::Emulated, true, true),
        (
            DRIVER_IRDMA,
            1,
            1,
            true,
            MaskedMode::Unavailable,
            false,
            true,
        ),
        (
            DRIVER_MANA,
            0,
            0,
            false,
            MaskedMode::Unavailable,
            false,
            true,
        ),
        (DRIVER_IONIC, 2, 2, false, MaskedMode::Emulated, true, true),
        (
            DRIVER_VMW_PVRDMA,
            1,
            1,
            false,
            MaskedMode::Emulated,
            true,
            true,
        ),
        (DRIVER_QEDR, 2, 0, false, MaskedMode::Emulated, true, false),
        (
            DRIVER_QEDR,
            2,
            0,
            true,
            MaskedMode::Unavailable,
            false,
            false,
        ),
        (DRIVER_HNS, 1, 0, false, MaskedMode::Emulated, true, false),
        (DRIVER_RXE, 1, 0, false, MaskedMode::Emulated, true, false),
        (DRIVER_HFI1, 2, 0, false, MaskedMode::Emulated, true, false),
        (DRIVER_QIB, 2, 0, false, MaskedMode::Emulated, true, false),
        (DRIVER_SIW, 0, 0, true, MaskedMode::Unavailable, false, true),
        (DRIVER_ERDMA, 2, 0, false, MaskedMode::Emulated, true, false),
        // erdma's source settles its iWARP mode: its atomics are posted.
        (DRIVER_ERDMA, 2, 0, true, MaskedMode::Emulated, true, false),
        (
            DRIVER_ERDMA,
            0,
            0,
            true,
            MaskedMode::Unavailable,
            false,
            false,
        ),
    ];
    for (driver_id, atomic, masked, iwarp, mode, standard, named) in cases {
        let f = DeviceFacts {
            iwarp,
            ..facts(driver_id, 1, atomic, masked)
        };
        let r = Record::derive(&f);
        let d = known_driver(driver_id).unwrap();
        let why = r.reasons.to_string();
        let case = (d.name, atomic, masked, iwarp, &why);
        assert_eq!(r.mode, mode, "{case:?}");
        assert_eq!(r.posts.standard, standard, "{case:?}");
        assert_eq!(why.contains(d.name), named, "{case:?}");
        assert_eq!(
            r.reasons.iwarp,
            iwarp && atomic != 0 && !d.iwarp_atomics,
            "{case:?}"
        );
        // Unavailable always says why; a record as the attributes
        // say needs no reason.
        assert_eq!(
            why.is_empty(),
            mode != MaskedMode::Unavailable && !named,
            "{case:?}"
        );
    }
}

/// Never post what a row says is refused or sent wrong, whatever the
/// attributes claim.
#[test]
fn rows_are_never_exceeded() {
    for d in KNOWN_DRIVERS.iter() {
        let r = Record::derive(&facts(d.driver_id, 1, 2, 2));
        assert_eq!(r.posts.standard, d.cmp_swap == Fate::Executed, "{}", d.name);
        assert_eq!(
            r.posts.fetch_add,
            d.fetch_add == Fate::Executed,
            "{}",
            d.name
        );
        assert_eq!(
            r.posts.masked,
            d.masked_cmp_swap == Fate::Executed && d.masked_fetch_add == Fate::Executed,
            "{}",
            d.name
        );
    }
    // The broken ones by name.
    let pvrdma = Record::derive(&facts(DRIVER_VMW_PVRDMA, 1, 1, 1));
    assert!(!pvrdma.posts.masked);
    let mlx5 = Record::derive(&facts(DRIVER_MLX5, 4115, 1, 1));
    assert_eq!(mlx5.posts, KernelAtomics::default());
}

/// The rows themselves: one per driver id, each note naming its driver
/// and the errno of each refusal it records.
#[test]
fn rows_are_consistent() {
    for (i, d) in KNOWN_DRIVERS.iter().enumerate() {
        assert!(d.driver_id != 0, "{}", d.name);
        assert!(
            KNOWN_DRIVERS[i + 1..]
                .iter()
                .all(|e| e.driver_id != d.driver_id),
            "{} twice",
            d.name
        );
        assert!(d.note.starts_with(d.name), "{}", d.note);
        for fate in [
            d.cmp_swap,
            d.fetch_add,
            d.masked_cmp_swap,
            d.masked_fetch_add,
        ] {
            if let Fate::Refused(e) = fate {
                assert!(d.note.contains(errno_name(e)), "{}", d.note);
            }
        }
    }
}

#[test]
fn reply_be_never_on_a_big_endian_host() {
    let mut f = facts(0, 4113, 1, 1);
    f.host_big_endian = true;
    assert_eq!(row(f), ("hca", "hca", "native"));
    assert!(Record::derive(&f).reasons.is_empty());
}

#[test]
fn reasons_tell_everything_that_applies() {
    assert!(Record::derive(&facts(0, 4099, 1, 1)).reasons.is_empty());
    assert!(Record::derive(&facts(DRIVER_RXE, 0, 1, 0))
        .reasons
        .is_empty());
    assert_eq!(
        Record::derive(&facts(0, 4113, 1, 1)).reasons.reply_be,
        Some("Connect-IB")
    );
    // A Connect-IB under mlx5_ib: big-endian *and* no kernel atomics.
    let why = reason(facts(DRIVER_MLX5, 4113, 0, 0));
    assert!(why.contains("big-endian"), "{why}");
    assert!(why.contains("no atomics"), "{why}");
    assert!(why.contains("mlx5_ib"), "{why}");
    assert_eq!(why.matches("; ").count(), 2, "{why}");
    let cx4 = reason(facts(DRIVER_MLX5, 4113, 1, 0));
    assert!(
        cx4.contains("big-endian") && cx4.contains("mlx5_ib"),
        "{cx4}"
    );
    assert_eq!(cx4.matches("; ").count(), 1, "{cx4}");
    let odd = Record::derive(&facts(0, 1, 7, 0));
    assert_eq!(odd.atomic_cap, AtomicCap::None);
    assert!(odd.reasons.unknown_cap && !odd.reasons.no_atomics);
    assert_eq!(Reasons::default().to_string(), "");
}

#[test]
fn refusals_are_einval_or_eopnotsupp_once() {
    let mut r = Refusals::default();
    assert!(r.is_empty());
    for other in [0, 5, 12, 16, 108, -22] {
        assert!(!r.note(WrClass::Masked, other), "{other}");
    }
    assert!(r.is_empty());
    assert!(r.note(WrClass::Masked, EINVAL));
    assert!(!r.note(WrClass::Masked, EOPNOTSUPP), "once");
    assert!(r.note(WrClass::CmpSwap, EOPNOTSUPP));
    assert_eq!(
        r,
        Refusals {
            cmp_swap: Some(EOPNOTSUPP),
            fetch_add: None,
            masked: Some(EINVAL)
        }
    );
    for bits in 0..64u32 {
        let r = Refusals::unpack(bits);
        if bits & 0b11 != 3 && bits >> 2 & 0b11 != 3 && bits >> 4 & 0b11 != 3 {
            assert_eq!(r.pack(), bits);
        }
        assert_eq!(Refusals::unpack(r.pack()), r);
    }
}

#[test]
fn refusals_at_run_time() {
    let cx3 = Record::derive(&facts(0, 4099, 1, 1));
    let cx4 = Record::derive(&facts(0, 4115, 1, 0));
    let masked = Refusals {
        masked: Some(EINVAL),
        ..Default::default()
    };
    let fa = Refusals {
        fetch_add: Some(EOPNOTSUPP),
        ..Default::default()
    };
    let cas = Refusals {
        cmp_swap: Some(EINVAL),
        ..Default::default()
    };
    // A refused masked request: native becomes emulated; the caps stay.
    let r = cx3.with_refusals(masked);
    assert_eq!(
        (r.mode, r.atomic_cap, r.masked_atomic_cap),
        (MaskedMode::Emulated, AtomicCap::Hca, AtomicCap::Hca)
    );
    assert!(r.posts.standard && r.posts.fetch_add);
    assert!(r
        .reasons
        .to_string()
        .contains("masked atomic work request (EINVAL)"));
    // A refused fetch-and-add: emulated from then on, CAS still posted.
    let r = cx4.with_refusals(fa);
    assert_eq!(
        (r.mode, r.posts.standard, r.posts.fetch_add),
        (MaskedMode::Emulated, true, false)
    );
    assert!(r.reasons.to_string().contains("fetch-and-add (EOPNOTSUPP)"));
    // A refused compare-and-swap: standard atomics and the emulation
    // are off; native masked atomics stay.
    let r = cx4.with_refusals(cas);
    assert_eq!(
        (r.mode, r.posts),
        (MaskedMode::Unavailable, KernelAtomics::default())
    );
    let r = cx3.with_refusals(cas);
    assert_eq!(r.mode, MaskedMode::Native);
    assert!(!r.posts.standard);
    // Everything refused, every reason told.
    let all = Refusals {
        cmp_swap: Some(EOPNOTSUPP),
        fetch_add: Some(EINVAL),
        masked: Some(EOPNOTSUPP),
    };
    let r = cx3.with_refusals(all);
    assert_eq!(r.mode, MaskedMode::Unavailable);
    assert_eq!(r.reasons.to_string().matches("; ").count(), 2);
}

#[test]
fn classes_of_opcodes() {
    use mlx_ext_core::atomics::wr::WrOpcode;
    for op in WrOpcode::ALL {
        let want = if op.is_masked_atomic() {
            Some(WrClass::Masked)
        } else if op == WrOpcode::AtomicCmpAndSwp {
            Some(WrClass::CmpSwap)
        } else if op == WrOpcode::AtomicFetchAndAdd {
            Some(WrClass::FetchAdd)
        } else {
            None
        };
        assert_eq!(WrClass::of(op), want, "{op:?}");
        assert_eq!(
            WrClass::of(op).is_some(),
            op.is_standard_atomic() || op.is_masked_atomic()
        );
    }
}

#[test]
fn only_unknown_drivers_are_learnt_about() {
    let cx4 = Record::derive(&facts(0, 4115, 1, 0));
    assert!(cx4.learns(WrClass::CmpSwap, 0, true) && cx4.learns(WrClass::FetchAdd, 0, true));
    // Not what is not posted.
    assert!(!cx4.learns(WrClass::Masked, 0, true));
    assert!(Record::derive(&facts(0, 4099, 1, 1)).learns(WrClass::Masked, 0, true));
    // Not a kind the driver accepted before: its refusal is about the
    // QP (its state), not the opcode. Other kinds still are.
    let cas = WrClass::CmpSwap.bit();
    assert!(!cx4.learns(WrClass::CmpSwap, cas, true));
    assert!(cx4.learns(WrClass::FetchAdd, cas, true));
    assert_eq!(
        [WrClass::CmpSwap, WrClass::FetchAdd, WrClass::Masked].map(WrClass::bit),
        [1, 2, 4]
    );
    // Once learnt, not again.
    let down = cx4.with_refusals(Refusals {
        cmp_swap: Some(EINVAL),
        ..Default::default()
    });
    assert!(!down.learns(WrClass::CmpSwap, 0, true));
    // Known drivers: their rows say already; an EINVAL from them is
    // about the QP (its state, its SGE), not the opcode.
    for d in KNOWN_DRIVERS.iter() {
        let r = Record::derive(&facts(d.driver_id, 1, 1, 1));
        for c in [WrClass::CmpSwap, WrClass::FetchAdd, WrClass::Masked] {
            assert!(!r.learns(c, 0, true), "{}", d.name);
        }
    }
    // Nothing to learn on a device without atomics.
    let none = Record::derive(&facts(0, 1, 0, 0));
    assert!(!none.learns(WrClass::CmpSwap, 0, true));
}

/// A refusal on a QP not found in RTS just before is not learnt, whatever
/// else holds: a masked fetch-and-add posted in INIT on a fresh adapter
/// whose driver has no row is the ULP's error, not a missing opcode.
/// Found in RTS, the same refusal of the same first request is.
#[test]
fn refusals_before_rts_are_not_learnt() {
    let cx3 = Record::derive(&facts(0, 4099, 1, 1));
    for c in [WrClass::CmpSwap, WrClass::FetchAdd, WrClass::Masked] {
        assert!(!cx3.learns(c, 0, false), "{c:?}");
        assert!(cx3.learns(c, 0, true), "{c:?}");
    }
    // The emulation's compare-and-swap refused on that QP too: the
    // device keeps its standard atomics.
    let mut r = Refusals::default();
    for c in [WrClass::Masked, WrClass::CmpSwap] {
        if cx3.with_refusals(r).learns(c, 0, false) {
            r.note(c, EINVAL);
        }
    }
    assert!(r.is_empty());
    assert_eq!(cx3.with_refusals(r).mode, cx3.mode);
}
