// SPDX-License-Identifier: GPL-2.0

//! The simulator's subnet administrator, through `sim::sa` (the paths the
//! kernel side uses): the MAD codec as ib_sa's `core/sa_query.c` lays it
//! out, and the SM's answers as OpenSM gives them.

use mlx_ext_core::sim::sa::*;

// The codec's private byte accessors, for reading answers here.
fn be16(b: &[u8; MAD_LEN], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be64(b: &[u8; MAD_LEN], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(x)
}

fn put16(b: &mut [u8; MAD_LEN], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

fn put64(b: &mut [u8; MAD_LEN], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

const LID: u16 = 3;

fn set(tid: u64, block: u8, mask: u8, guids: [u64; 8]) -> [u8; MAD_LEN] {
    encode_request(tid, METHOD_SET, LID, block, mask, &guids)
}

/// The SA's answer to `mad`, which must be one.
fn answer(sa: &mut Sa, mad: &[u8; MAD_LEN], now: u64) -> [u8; MAD_LEN] {
    let mut out = [0u8; MAD_LEN];
    assert!(sa.handle(mad, now, &mut out), "no answer");
    out
}

/// Whether the SA answers `mad` at all.
fn answers(sa: &mut Sa, mad: &[u8; MAD_LEN], now: u64) -> bool {
    sa.handle(mad, now, &mut [0u8; MAD_LEN])
}

fn answered_guids(a: &[u8; MAD_LEN]) -> [u64; 8] {
    let mut g = [0u64; 8];
    for (i, x) in g.iter_mut().enumerate() {
        *x = be64(a, SA_DATA + 8 + 8 * i);
    }
    g
}

#[test]
fn decode_what_ib_sa_sends() {
    let g = [1, 2, 3, 4, 5, 6, 7, 8];
    let m = set(0x1234_5678_9abc_def0, 5, 0b1010_0001, g);
    // The layout, byte by byte where it matters.
    assert_eq!(&m[0..4], &[1, 3, 2, 2]);
    assert_eq!(&m[8..16], &0x1234_5678_9abc_def0u64.to_be_bytes());
    assert_eq!(&m[16..18], &[0x00, 0x30]);
    // The layout of `struct ib_sa_mad` (IBA 15.2.1.1; ib_sa.h): the
    // component mask at byte 48, the record at 56 (IB_MGMT_SA_HDR).
    assert_eq!(be64(&m, 48), 0b11 | (0b1010_0001 << 4));
    assert_eq!(&m[56..59], &[0, 3, 5]);
    assert_eq!(&m[64..72], &1u64.to_be_bytes());
    assert_eq!(
        decode(&m),
        Ok(SaRequest::GuidInfo {
            tid: 0x1234_5678_9abc_def0,
            method: METHOD_SET,
            keys: COMP_MASK_LID | COMP_MASK_BLOCK_NUM,
            lid: LID,
            block: 5,
            mask: 0b1010_0001,
            guids: g,
        })
    );
    let mut cpi = [0u8; MAD_LEN];
    cpi[..4].copy_from_slice(&[1, 3, 2, METHOD_GET]);
    cpi[17] = 1;
    assert_eq!(decode(&cpi), Ok(SaRequest::ClassPortInfo { tid: 0 }));
}

#[test]
fn not_for_the_sa_or_unsupported() {
    let mut m = set(1, 0, 1, [0; 8]);
    m[1] = 0x81; // SMP
    assert_eq!(decode(&m), Err(MadError::NotForSa));
    let mut m = set(1, 0, 1, [0; 8]);
    m[2] = 1;
    assert_eq!(decode(&m), Err(MadError::NotForSa));
    let mut m = set(1, 0, 1, [0; 8]);
    m[3] = METHOD_GET_RESP;
    assert_eq!(decode(&m), Err(MadError::NotForSa));
    let mut m = set(7, 0, 1, [0; 8]);
    m[17] = 0x31;
    assert_eq!(
        decode(&m),
        Err(MadError::Unsupported {
            tid: 7,
            method: METHOD_SET
        })
    );
    // The SA answers those with an error status; others it ignores.
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    let a = answer(&mut sa, &m, 0);
    assert_eq!(
        (a[3], be16(&a, 4)),
        (METHOD_GET_RESP, STATUS_UNSUP_METHOD_ATTR)
    );
    let mut smp = set(8, 0, 1, [0; 8]);
    smp[1] = 0x81;
    assert!(!answers(&mut sa, &smp, 0));
}

#[test]
fn set_assigns_and_answers_with_the_record() {
    let mut sa = Sa::new(LID, 0x0002_c903_0000_0100, PORT_GUIDS);
    let m = set(42, 1, 0b0000_0011, [0, 0xabc, 9, 9, 9, 9, 9, 9]);
    let a = answer(&mut sa, &m, 10);
    // Same TID, GetResp, status 0, the header otherwise kept.
    assert_eq!(be64(&a, 8), 42);
    assert_eq!(a[3], METHOD_GET_RESP);
    assert_eq!(be16(&a, 4), 0);
    assert_eq!(be16(&a, 16), ATTR_GUID_INFO_REC);
    assert_eq!(be16(&a, SA_DATA), LID);
    assert_eq!(a[SA_DATA + 2], 1);
    let g = answered_guids(&a);
    // Entry 8 (0 asked): assigned; entry 9: as asked; the others,
    // not asked for, as the SM holds them (0).
    assert_eq!(g[0], 0x0002_c903_0000_0100 + 8);
    assert_eq!(g[1], 0xabc);
    assert_eq!(&g[2..], &[0; 6]);
    assert_eq!(sa.guid(8), 0x0002_c903_0000_0108);
    assert_eq!(sa.guid(9), 0xabc);
    assert_eq!(sa.guid(10), 0);
    // All ones is set as it is (deleting is DELETE's, as OpenSM has
    // it).
    let a = answer(
        &mut sa,
        &set(43, 1, 0b10, [0, u64::MAX, 0, 0, 0, 0, 0, 0]),
        20,
    );
    assert_eq!(answered_guids(&a)[1], u64::MAX);
    assert_eq!(answered_guids(&a)[0], 0x0002_c903_0000_0108);
    assert_eq!(sa.guid(9), u64::MAX);
}

#[test]
fn delete_answers_delete_resp() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    answer(&mut sa, &set(1, 0, 0b110, [0; 8]), 0);
    assert_eq!(sa.guid(1), 0x101);
    let d = encode_request(2, METHOD_DELETE, LID, 0, 0b010, &[0; 8]);
    let a = answer(&mut sa, &d, 1);
    assert_eq!(a[3], METHOD_DELETE_RESP);
    assert_eq!(sa.guid(1), 0);
    assert_eq!(sa.guid(2), 0x102);
}

#[test]
fn declines_count_per_request_not_per_mad() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    sa.decline(17, 2);
    let m = set(5, 2, 0b11, [0, 0x77, 0, 0, 0, 0, 0, 0]);
    // First request: entry 17 declined (reads 0), entry 16 granted.
    let a = answer(&mut sa, &m, 0);
    assert_eq!(answered_guids(&a)[..2], [0x110, 0]);
    assert_eq!(sa.declines_left(17), 1);
    // A resend of the same TID gets the same answer; nothing counted.
    let again = answer(&mut sa, &m, 100);
    assert_eq!(again, a);
    assert_eq!(sa.declines_left(17), 1);
    assert_eq!(
        sa.log().next().map(|e| (e.copies, e.declined)),
        Some((2, 0b10))
    );
    // The next request is declined too, the third granted.
    let a = answer(&mut sa, &set(6, 2, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), 1000);
    assert_eq!(answered_guids(&a)[1], 0);
    let a = answer(&mut sa, &set(7, 2, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), 3000);
    assert_eq!(answered_guids(&a)[1], 0x77);
    let times: [u64; 3] = {
        let mut it = sa.log().map(|e| e.first_ms);
        [it.next().unwrap(), it.next().unwrap(), it.next().unwrap()]
    };
    assert_eq!(times, [0, 1000, 3000]);
}

#[test]
fn error_silent_and_port_down() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    sa.set_mode(SaMode::Status(STATUS_REQ_INVALID));
    let a = answer(&mut sa, &set(1, 0, 0b10, [0; 8]), 0);
    assert_eq!(be16(&a, 4), STATUS_REQ_INVALID);
    assert_eq!(sa.guid(1), 0);
    sa.set_mode(SaMode::Silent);
    let m = set(2, 0, 0b10, [0; 8]);
    assert!(!answers(&mut sa, &m, 0));
    assert!(!answers(&mut sa, &m, 100));
    assert!(!answers(&mut sa, &m, 200));
    let e = sa.log().find(|e| e.tid == 2).copied().unwrap();
    assert_eq!((e.copies, e.status), (3, None));
    // Accepting again: the next resend of the same TID is answered.
    sa.set_mode(SaMode::Accept);
    let a = answer(&mut sa, &m, 300);
    assert_eq!(be64(&a, 8), 2);
    assert_eq!(sa.guid(1), 0x101);
    sa.set_mode(SaMode::PortDown);
    assert!(!answers(&mut sa, &set(3, 0, 0b100, [0; 8]), 0));
    assert_eq!(sa.guid(2), 0);
}

#[test]
fn wrong_lid_or_block_is_no_records() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    let m = encode_request(1, METHOD_SET, LID + 1, 0, 1, &[0; 8]);
    assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_NO_RECORDS);
    let m = encode_request(2, METHOD_SET, LID, 16, 1, &[0; 8]);
    assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_NO_RECORDS);
    let m = encode_request(3, METHOD_DELETE, LID, 16, 1, &[0; 8]);
    assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_NO_RECORDS);
    assert!((0..PORT_GUIDS).all(|e| sa.guid(e) == 0));
}

/// `m` with its component mask's LID and block bits cleared but
/// `keep`.
fn keys_only(mut m: [u8; MAD_LEN], keep: u64) -> [u8; MAD_LEN] {
    let comp = be64(&m, COMP_MASK) & !(COMP_MASK_LID | COMP_MASK_BLOCK_NUM) | keep;
    put64(&mut m, COMP_MASK, comp);
    m
}

#[test]
fn statuses_are_opensms() {
    // IBA 15.2.1.1 and 13.4.7, as OpenSM's ib_types.h has them.
    assert_eq!(
        [
            STATUS_NO_RESOURCES,
            STATUS_REQ_INVALID,
            STATUS_NO_RECORDS,
            STATUS_TOO_MANY_RECORDS,
            STATUS_INSUF_COMPS,
            STATUS_DENIED,
            STATUS_UNSUP_METHOD_ATTR
        ],
        [0x0100, 0x0200, 0x0300, 0x0400, 0x0600, 0x0700, 0x000c]
    );
}

#[test]
fn set_and_delete_need_the_lid_and_block_components() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    for (tid, keep) in [(1, 0), (2, COMP_MASK_LID), (3, COMP_MASK_BLOCK_NUM)] {
        let m = keys_only(set(tid, 0, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), keep);
        assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_INSUF_COMPS);
        let m = encode_request(tid + 10, METHOD_DELETE, LID, 0, 0b10, &[0; 8]);
        let m = keys_only(m, keep);
        assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_INSUF_COMPS);
    }
    assert_eq!(sa.record(1), 0);
}

/// OpenSM's GUIDCap bound (`set_guidinfo`, `del_guidinfo`): blocks
/// from `ceil(cap / 8)` on are `ERR_NO_RECORDS`; in the last block the
/// entries past the cap are neither set nor deleted, and answer 0.
#[test]
fn the_guid_cap_bounds_the_port() {
    let mut sa = Sa::new(LID, 0x100, 20);
    let a = answer(
        &mut sa,
        &set(1, 2, 0xff, [0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67]),
        0,
    );
    assert_eq!(be16(&a, 4), 0);
    assert_eq!(answered_guids(&a), [0x60, 0x61, 0x62, 0x63, 0, 0, 0, 0]);
    assert_eq!((sa.record(19), sa.record(20), sa.guid(19)), (0x63, 0, 0x63));
    for method in [METHOD_SET, METHOD_DELETE, METHOD_GET] {
        let m = encode_request(2, method, LID, 3, 0b1, &[0x70, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            be16(&answer(&mut sa, &m, 0), 4),
            STATUS_NO_RECORDS,
            "method {method}"
        );
    }
    let m = encode_request(3, METHOD_DELETE, LID, 2, 0xff, &[0; 8]);
    let a = answer(&mut sa, &m, 0);
    assert_eq!((be16(&a, 4), sa.record(19)), (0, 0));
    // More than 128 is taken as 128.
    let mut big = Sa::new(LID, 0x100, 255);
    let m = encode_request(4, METHOD_SET, LID, 15, 0x80, &[0, 0, 0, 0, 0, 0, 0, 0x7f]);
    assert_eq!(be16(&answer(&mut big, &m, 0), 4), 0);
    let m = encode_request(5, METHOD_SET, LID, 16, 0x1, &[0x80, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(be16(&answer(&mut big, &m, 0), 4), STATUS_NO_RECORDS);
}

#[test]
fn a_vports_guid_is_a_duplicate() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    sa.set_vport(0, 0x5151);
    let a = answer(
        &mut sa,
        &set(1, 1, 0b11, [0x5151, 0x77, 0, 0, 0, 0, 0, 0]),
        0,
    );
    assert_eq!(be16(&a, 4), 0);
    assert_eq!(answered_guids(&a)[..2], [0, 0x77]);
    assert_eq!((sa.record(8), sa.record(9)), (0, 0x77));
    sa.set_vport(0, 0);
    answer(&mut sa, &set(2, 1, 0b1, [0x5151, 0, 0, 0, 0, 0, 0, 0]), 0);
    assert_eq!(sa.record(8), 0x5151);
    sa.set_vport(MAX_VPORTS, 0x9);
}

#[test]
fn gid_0_of_block_0_is_read_only() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    sa.preset(0, 0xfeed);
    // The whole request is refused, the other entries asked included.
    let a = answer(
        &mut sa,
        &set(1, 0, 0b11, [0xbad, 0x77, 0, 0, 0, 0, 0, 0]),
        0,
    );
    assert_eq!(be16(&a, 4), STATUS_REQ_INVALID);
    let m = encode_request(2, METHOD_DELETE, LID, 0, 0b1, &[0; 8]);
    assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_REQ_INVALID);
    assert_eq!((sa.record(0), sa.record(1)), (0xfeed, 0));
    // GUID 0 of another block is an alias like any other.
    answer(&mut sa, &set(3, 1, 0b1, [0x88, 0, 0, 0, 0, 0, 0, 0]), 0);
    assert_eq!(sa.record(8), 0x88);
}

#[test]
fn duplicates_are_not_set_and_held_guids_are_kept() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    sa.preset(0, 0xfeed);
    answer(&mut sa, &set(1, 0, 0b110, [0, 0x77, 0, 0, 0, 0, 0, 0]), 0);
    assert_eq!((sa.record(1), sa.record(2)), (0x77, 0x102));
    // 0x77 again at entry 3, and the port's own GUID at entry 4: not
    // set, the answer shows what the entries hold.
    let a = answer(
        &mut sa,
        &set(2, 0, 0b11000, [0, 0, 0, 0x77, 0xfeed, 0, 0, 0]),
        0,
    );
    assert_eq!(be16(&a, 4), 0);
    assert_eq!(answered_guids(&a)[3..5], [0, 0]);
    assert_eq!((sa.record(3), sa.record(4)), (0, 0));
    // The same GUID at the same entry is no duplicate.
    let a = answer(&mut sa, &set(3, 0, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), 0);
    assert_eq!(answered_guids(&a)[1], 0x77);
    // Asking for a GUID where one is held keeps it.
    let a = answer(&mut sa, &set(4, 0, 0b10, [0; 8]), 0);
    assert_eq!(answered_guids(&a)[1], 0x77);
    // All ones is a GUID like another (OpenSM checks nothing more);
    // deleting is DELETE's.
    answer(
        &mut sa,
        &set(5, 0, 0b100000, [0, 0, 0, 0, 0, u64::MAX, 0, 0]),
        0,
    );
    assert_eq!(sa.record(5), u64::MAX);
    answer(
        &mut sa,
        &encode_request(6, METHOD_DELETE, LID, 0, 0b100000, &[0; 8]),
        0,
    );
    assert_eq!(sa.record(5), 0);
}

#[test]
fn get_answers_one_record_as_opensm_matches_it() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    sa.preset(0, 0xfeed);
    answer(&mut sa, &set(1, 1, 0b1, [0x88, 0, 0, 0, 0, 0, 0, 0]), 0);
    let get = |tid, lid, block, mask, guids: [u64; 8]| {
        encode_request(tid, METHOD_GET, lid, block, mask, &guids)
    };
    let a = answer(&mut sa, &get(10, LID, 1, 0, [0; 8]), 0);
    assert_eq!((a[3], be16(&a, 4)), (METHOD_GET_RESP, 0));
    assert_eq!(answered_guids(&a)[0], 0x88);
    // GUID 0 of block 0 given: it must be the port's.
    let a = answer(
        &mut sa,
        &get(11, LID, 0, 0b1, [0xfeed, 0, 0, 0, 0, 0, 0, 0]),
        0,
    );
    assert_eq!((be16(&a, 4), answered_guids(&a)[0]), (0, 0xfeed));
    let a = answer(
        &mut sa,
        &get(12, LID, 0, 0b1, [0xbad, 0, 0, 0, 0, 0, 0, 0]),
        0,
    );
    assert_eq!(be16(&a, 4), STATUS_NO_RECORDS);
    // Another GUID given: only 0 matches.
    let a = answer(
        &mut sa,
        &get(13, LID, 1, 0b10, [0, 0x5, 0, 0, 0, 0, 0, 0]),
        0,
    );
    assert_eq!(be16(&a, 4), STATUS_NO_RECORDS);
    // Another LID, a block past the port, or no block (every block).
    assert_eq!(
        be16(&answer(&mut sa, &get(14, LID + 1, 1, 0, [0; 8]), 0), 4),
        STATUS_NO_RECORDS
    );
    assert_eq!(
        be16(&answer(&mut sa, &get(15, LID, 16, 0, [0; 8]), 0), 4),
        STATUS_NO_RECORDS
    );
    let m = keys_only(get(16, LID, 1, 0, [0; 8]), COMP_MASK_LID);
    assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_TOO_MANY_RECORDS);
    // GetTable needs RMPP: not served here.
    let mut m = get(17, LID, 1, 0, [0; 8]);
    m[3] = 0x12;
    assert_eq!(be16(&answer(&mut sa, &m, 0), 4), STATUS_UNSUP_METHOD_ATTR);
}

#[test]
fn class_port_info() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    let mut m = [0u8; MAD_LEN];
    m[..4].copy_from_slice(&[1, 3, 2, METHOD_GET]);
    put64(&mut m, 8, 99);
    put16(&mut m, 16, ATTR_CLASS_PORT_INFO);
    let a = answer(&mut sa, &m, 0);
    assert_eq!((a[3], be16(&a, 4), be64(&a, 8)), (METHOD_GET_RESP, 0, 99));
    assert_eq!(&a[SA_DATA..SA_DATA + 2], &[1, 2]);
}

#[test]
fn the_log_keeps_the_latest() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    for tid in 0..(LOG_LEN as u64 + 10) {
        answer(&mut sa, &set(tid, 0, 1 << 1, [0; 8]), tid);
    }
    let tids: [u64; 2] = {
        let mut it = sa.log().map(|e| e.tid);
        [it.next().unwrap(), it.last().unwrap()]
    };
    assert_eq!(tids, [10, LOG_LEN as u64 + 9]);
    assert_eq!(sa.log().count(), LOG_LEN);
}

#[test]
fn the_port_is_programmed_after_the_answer_and_can_be_held() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    sa.preset(0, 0xfeed);
    assert_eq!(
        parse_command(b"program hold\n"),
        Some(SaCommand::HoldProgramming(true))
    );
    assert_eq!(
        parse_command(b"program now"),
        Some(SaCommand::HoldProgramming(false))
    );
    for bad in [&b"program"[..], b"program later", b"program now now"] {
        assert_eq!(parse_command(bad), None, "{:?}", bad);
    }
    sa.command(SaCommand::HoldProgramming(true));
    assert!(sa.programming_held());
    // Answered from the SM's records, the port not programmed yet.
    let out = answer(&mut sa, &set(1, 0, 0b10, [0, 0x77, 0, 0, 0, 0, 0, 0]), 0);
    assert_eq!(answered_guids(&out)[1], 0x77);
    assert_eq!(sa.record(1), 0x77);
    assert_eq!(sa.guid(1), 0);
    assert_eq!(sa.guid(0), 0xfeed);
    assert_eq!(sa.changes(), 0);
    // Programmed at once, and from then on at each change.
    sa.command(SaCommand::HoldProgramming(false));
    assert_eq!(sa.guid(1), 0x77);
    assert_eq!(sa.changes(), 1);
    answer(&mut sa, &set(2, 0, 0b100, [0, 0, 0x88, 0, 0, 0, 0, 0]), 0);
    assert_eq!(sa.guid(2), 0x88);
    assert_eq!(sa.changes(), 2);
    // Releasing with nothing new changes nothing.
    sa.command(SaCommand::HoldProgramming(true));
    sa.command(SaCommand::HoldProgramming(false));
    assert_eq!(sa.changes(), 2);
}

#[test]
fn commands_parse_and_refuse() {
    assert_eq!(
        parse_command(b"accept\n"),
        Some(SaCommand::Mode(SaMode::Accept))
    );
    assert_eq!(
        parse_command(b"silent"),
        Some(SaCommand::Mode(SaMode::Silent))
    );
    assert_eq!(
        parse_command(b"port_down\n"),
        Some(SaCommand::Mode(SaMode::PortDown))
    );
    assert_eq!(
        parse_command(b"status 28\n"),
        Some(SaCommand::Mode(SaMode::Status(28)))
    );
    assert_eq!(
        parse_command(b"decline 127 3\n"),
        Some(SaCommand::Decline {
            entry: 127,
            times: 3
        })
    );
    assert_eq!(parse_command(b"clear_log"), Some(SaCommand::ClearLog));
    for bad in [
        &b""[..],
        b"\n",
        b"accept now",
        b"status",
        b"status 0",
        b"status 65536",
        b"status 0x1c",
        b"decline 128 1",
        b"decline 5",
        b"decline 5 256",
        b"decline 5 1 2",
        b"Accept",
        b"accept\n\n",
    ] {
        assert_eq!(parse_command(bad), None, "{:?}", bad);
    }
}

#[test]
fn commands_act_and_changes_count() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    sa.preset(0, 0xfeed);
    assert_eq!(sa.guid(0), 0xfeed);
    assert_eq!(sa.changes(), 0);
    sa.command(SaCommand::Decline { entry: 3, times: 1 });
    assert_eq!(sa.declines_left(3), 1);
    // A declined entry and an unchanged one are no change; an
    // assignment is.
    answer(&mut sa, &set(1, 0, 0b1000, [0; 8]), 0);
    assert_eq!(sa.changes(), 0);
    answer(&mut sa, &set(2, 0, 0b1000, [0; 8]), 0);
    assert_eq!(sa.changes(), 1);
    answer(&mut sa, &set(3, 0, 0b1000, [0, 0, 0, 0x103, 0, 0, 0, 0]), 0);
    assert_eq!(sa.changes(), 1);
    sa.command(SaCommand::Mode(SaMode::Silent));
    assert_eq!(sa.mode(), SaMode::Silent);
    assert_eq!(sa.log().count(), 3);
    sa.command(SaCommand::ClearLog);
    assert_eq!(sa.log().count(), 0);
    // A request answered before the log was cleared is a new one now.
    sa.command(SaCommand::Mode(SaMode::Accept));
    assert!(answers(&mut sa, &set(2, 0, 0b1000, [0; 8]), 5));
    assert_eq!(sa.log().next().map(|e| e.copies), Some(1));
}

#[test]
fn totals_count_requests_and_copies_beyond_the_log() {
    let mut sa = Sa::new(LID, 0x100, PORT_GUIDS);
    for tid in 0..100u64 {
        let m = set(tid, 0, 0b10, [0; 8]);
        answer(&mut sa, &m, tid);
        if tid % 10 == 0 {
            answer(&mut sa, &m, tid);
        }
    }
    assert_eq!(sa.totals(), (100, 110));
    assert_eq!(sa.log().count(), LOG_LEN);
    // What is not for the SA is not counted.
    let mut other = [0u8; MAD_LEN];
    other[0] = 1;
    other[1] = 4;
    assert!(!answers(&mut sa, &other, 200));
    assert_eq!(sa.totals(), (100, 110));
}
