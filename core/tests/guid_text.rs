// SPDX-License-Identifier: GPL-2.0

//! What `admin_guids/<n>` accepts and what the sysfs files show.

use mlx_ext_core::guid::{
    parse_admin_guid, parse_switch, parse_vport_guid, switch_text, AdminGuid, Config, Engine,
    EntryIdx, Gid, GuidError, VportGuid, DEFAULT_SUBNET_PREFIX,
};

fn ent(n: u8) -> EntryIdx {
    EntryIdx::new(n).unwrap()
}

#[test]
fn well_formed_inputs() {
    let cases: &[(&[u8], u64)] = &[
        (b"0", 0),
        (b"0\n", 0),
        (b"ffffffffffffffff", u64::MAX),
        (b"ffffffffffffffff\n", u64::MAX),
        (b"0xffffffffffffffff", u64::MAX),
        (b"0XFFFFFFFFFFFFFFFF\n", u64::MAX),
        (b"2c90300001234", 0x0002_c903_0000_1234),
        (b"0x0002C90300001234", 0x0002_c903_0000_1234),
        (b"1", 1),
        (b"0x1\n", 1),
        (b"0000000000000001", 1),
        // The colon form of ip link, ib-sriov-cni and MLNX_OFED.
        (b"00:11:22:33:44:55:66:77", 0x0011_2233_4455_6677),
        (b"00:02:C9:03:00:00:12:34\n", 0x0002_c903_0000_1234),
        (b"ff:ff:ff:ff:ff:ff:ff:ff", u64::MAX),
        (b"FF:FF:FF:FF:FF:FF:FF:FF\n", u64::MAX),
        (b"00:00:00:00:00:00:00:00", 0),
    ];
    for &(input, want) in cases {
        assert_eq!(
            parse_admin_guid(input),
            Ok(want),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

const MALFORMED: &[&[u8]] = &[
    b"",
    b"\n",
    b"0x",
    b"0x\n",
    b"0X",
    b"x12",
    b"-1",
    b"+1",
    b"-0x1",
    b" 12",
    b"12 ",
    b"1 2",
    b"12\t",
    b"0x 12",
    b"12\n\n",
    b"\n12",
    b"12\r\n",
    b"12345678901234567",
    b"0x12345678901234567",
    b"00000000000000000",
    b"g",
    b"0xg1",
    b"12z",
    b"1\x002",
    b"0x0x12",
    b"\xff",
    // 7 or 9 octets, an octet of one or three digits, stray colons.
    b"00:11:22:33:44:55:66",
    b"00:11:22:33:44:55:66:77:88",
    b"0:11:22:33:44:55:66:77",
    b"000:11:22:33:44:55:66:77",
    b"00:11:22:33:44:55:66:7",
    b"00:11:22:33:44:55:66:77:",
    b":00:11:22:33:44:55:66:77",
    b"00::11:22:33:44:55:66:77",
    b"0x00:11:22:33:44:55:66:77",
    b"00-11-22-33-44-55-66-77",
    b"00:11:22:33:44:55:66:7g",
    b"+0:11:22:33:44:55:66:77",
    b" 0:11:22:33:44:55:66:77",
    b"00:11:22:33:44:55:66:77\n\n",
    b":",
];

#[test]
fn malformed_inputs_are_rejected() {
    for &input in MALFORMED {
        assert_eq!(
            parse_admin_guid(input),
            Err(GuidError::Malformed),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
    assert_eq!(GuidError::Malformed.errno(), -22);
}

#[test]
fn malformed_writes_change_nothing() {
    let mut engine = Engine::new(Config {
        port_guids: 128,
        num_vfs: 4,
        sm_guid_assign: true,
        hw_guid: 0x1234,
    })
    .unwrap();
    engine.set_admin(ent(5), 0xabcd, 7).unwrap();
    let before = format!("{engine:?}");
    for &input in MALFORMED {
        for entry in [0u8, 1, 5, 127] {
            let err = engine.write_admin(ent(entry), input, 99).unwrap_err();
            let want = if entry == 0 {
                GuidError::ReadOnly
            } else {
                GuidError::Malformed
            };
            assert_eq!(err, want);
        }
    }
    // Past the port there is no entry to write: the index is refused where
    // it comes in, before the engine.
    for index in [128u8, 200, 255] {
        assert_eq!(EntryIdx::try_from(index), Err(GuidError::NoSuchEntry));
    }
    assert_eq!(
        format!("{engine:?}"),
        before,
        "a rejected write changed the engine"
    );
}

#[test]
fn the_pf_hardware_guid_is_read_only() {
    let mut engine = Engine::new(Config {
        port_guids: 128,
        num_vfs: 2,
        sm_guid_assign: false,
        hw_guid: 0x77,
    })
    .unwrap();
    for input in [&b"0"[..], b"ffffffffffffffff", b"1234\n"] {
        assert_eq!(
            engine.write_admin(ent(0), input, 0),
            Err(GuidError::ReadOnly)
        );
    }
    assert_eq!(engine.set_admin(ent(0), 1, 0), Err(GuidError::ReadOnly));
    assert_eq!(GuidError::ReadOnly.errno(), -1);
    assert_eq!(engine.admin(ent(0)), 0x77);
    assert_eq!(engine.oper(ent(0)), 0x77);
}

/// `admin_guids` shows 16 digits, leading zeros included, so that
/// networking-mlnx's `^[0-9a-fA-F]{16}$` takes every value, OpenSM's
/// (`0x001405...`) among them.
#[test]
fn admin_values_show_sixteen_digits() {
    assert_eq!(AdminGuid(u64::MAX).to_string(), "ffffffffffffffff");
    assert_eq!(AdminGuid(0).to_string(), "0000000000000000");
    assert_eq!(
        AdminGuid(0x0002_c903_00ab_cdef).to_string(),
        "0002c90300abcdef"
    );
    assert_eq!(
        AdminGuid(0x0014_0500_0000_0002).to_string(),
        "0014050000000002"
    );
    for v in [
        0u64,
        1,
        0x0014_0500_0000_0002,
        0xfa16_3e00_0000_0001,
        u64::MAX,
    ] {
        let shown = AdminGuid(v).to_string();
        assert_eq!(shown.len(), 16, "{shown}");
        assert!(shown.bytes().all(|c| c.is_ascii_hexdigit()), "{shown}");
    }
}

/// The vport files show the colon form of `ip link show` and MLNX_OFED's
/// `sriov/<vf>/node`, which both the files and `ip link set` take back.
#[test]
fn vport_values_show_the_colon_form() {
    assert_eq!(VportGuid(0).to_string(), "00:00:00:00:00:00:00:00");
    assert_eq!(VportGuid(u64::MAX).to_string(), "ff:ff:ff:ff:ff:ff:ff:ff");
    assert_eq!(
        VportGuid(0x0002_c903_00ab_cdef).to_string(),
        "00:02:c9:03:00:ab:cd:ef"
    );
    for v in [
        0u64,
        1,
        0x10,
        0x0002_c903_00ab_cdef,
        0x8000_0000_0000_0000,
        u64::MAX,
    ] {
        let shown = format!("{}\n", VportGuid(v));
        assert_eq!(parse_vport_guid(shown.as_bytes()), Ok(v));
    }
}

#[test]
fn gids_follow_upstream_mlx4() {
    let gid = Gid {
        prefix: DEFAULT_SUBNET_PREFIX,
        guid: 0,
    };
    assert_eq!(gid.to_string(), "fe80:0000:0000:0000:0000:0000:0000:0000");
    let gid = Gid {
        prefix: DEFAULT_SUBNET_PREFIX,
        guid: 0x0002_c903_00ab_cdef,
    };
    assert_eq!(gid.to_string(), "fe80:0000:0000:0000:0002:c903:00ab:cdef");
    // As `union ib_gid` holds it (rdma_query_gid): network order.
    let raw = [
        0xfe, 0x80, 0, 0, 0, 0, 0, 0x01, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xab, 0xcd, 0xef,
    ];
    assert_eq!(
        Gid::from_raw(raw).to_string(),
        "fe80:0000:0000:0001:0002:c903:00ab:cdef"
    );
}

#[test]
fn shown_admin_values_parse_back() {
    for v in [0u64, 1, 0x10, 0xdead_beef, u64::MAX, 0x8000_0000_0000_0000] {
        let shown = format!("{}\n", AdminGuid(v));
        assert_eq!(parse_admin_guid(shown.as_bytes()), Ok(v));
    }
}

/// `mlx_ext/vf_guid_tables`: what an administrator may write, and what the
/// file shows back (which parses to the same switch).
#[test]
fn the_device_switch() {
    for (input, want) in [
        (&b"on"[..], true),
        (b"on\n", true),
        (b"1", true),
        (b"1\n", true),
        (b"off", false),
        (b"off\n", false),
        (b"0", false),
        (b"0\n", false),
    ] {
        assert_eq!(parse_switch(input), Some(want), "{:?}", input);
    }
    for bad in [
        &b""[..],
        b"\n",
        b"On",
        b"ON",
        b"yes",
        b"y",
        b"2",
        b"01",
        b" on",
        b"on ",
        b"on\n\n",
        b"off\0",
        b"true",
        b"-1",
    ] {
        assert_eq!(parse_switch(bad), None, "{:?}", bad);
    }
    for on in [true, false] {
        assert_eq!(parse_switch(switch_text(on).as_bytes()), Some(on));
    }
}

#[test]
fn a_vports_guid_is_a_guid() {
    use mlx_ext_core::guid::parse_vport_guid;
    assert_eq!(
        parse_vport_guid(b"0x2c90300abcdef\n"),
        Ok(0x2_c903_00ab_cdef)
    );
    assert_eq!(parse_vport_guid(b"1"), Ok(1));
    assert_eq!(parse_vport_guid(b"fffffffffffffffe"), Ok(u64::MAX - 1));
    // 0 and all ones, in any form: what the clients write to release a
    // VF's GUID, passed to the driver as mlx5_ib passes them.
    for zero in [
        &b"0"[..],
        b"0x0\n",
        b"0000000000000000",
        b"00:00:00:00:00:00:00:00",
    ] {
        assert_eq!(parse_vport_guid(zero), Ok(0), "{zero:?}");
    }
    for ones in [
        &b"ffffffffffffffff"[..],
        b"0xFFFFFFFFFFFFFFFF\n",
        b"FF:FF:FF:FF:FF:FF:FF:FF",
    ] {
        assert_eq!(parse_vport_guid(ones), Ok(u64::MAX), "{ones:?}");
    }
    assert_eq!(
        parse_vport_guid(b"00:02:c9:03:00:ab:cd:ef\n"),
        Ok(0x2_c903_00ab_cdef)
    );
    // Malformed input is malformed, as for admin_guids.
    for bad in [
        &b""[..],
        b"0x",
        b"-1",
        b" 1",
        b"12345678901234567",
        b"1\n\n",
    ] {
        assert_eq!(parse_vport_guid(bad), Err(GuidError::Malformed), "{bad:?}");
    }
}
