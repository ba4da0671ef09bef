// SPDX-License-Identifier: GPL-2.0

//! The codec of the simulator's subnet administrator
//! (`Documentation/vf-guids.rst`, "The kernel side"): the SubnAdm MADs ib_sa
//! sends on a port's GSI QP and the answers to them, as bytes. What is here
//! must match the kernel's side of the wire, not the subnet manager's behaviour
//! (that is [`super::sa`]'s):
//!
//! - The MAD layout: the common MAD header (IBA 13.4.3), the SA header
//!   (IBA 15.2.1.1) and the GuidInfoRecord attribute (IBA 15.2.5.18, `struct
//!   ib_sa_guidinfo_rec` in `core/sa_query.c`), big-endian on the wire.
//! - The method, attribute, component mask and MAD status values, as ib_core
//!   names them (`IB_MGMT_*`, `IB_SA_*`) and, for the SA statuses, OpenSM's
//!   `ib_types.h`.
//! - [`decode`] reads a request as `ib_sa_guid_info_rec_query` sends it;
//!   [`encode_answer`] and [`guid_info_rec`] write the answer ib_sa parses;
//!   [`encode_request`] builds requests for tests and self-checks.

/// The size of a MAD.
pub const MAD_LEN: usize = 256;
/// `IB_MGMT_BASE_VERSION`.
pub const BASE_VERSION: u8 = 1;
/// `IB_MGMT_CLASS_SUBN_ADM`.
pub const CLASS_SUBN_ADM: u8 = 0x03;
/// `IB_SA_CLASS_VERSION`.
pub const SA_CLASS_VERSION: u8 = 2;
/// `IB_MGMT_METHOD_GET`.
pub const METHOD_GET: u8 = 0x01;
/// `IB_MGMT_METHOD_SET`.
pub const METHOD_SET: u8 = 0x02;
/// `IB_SA_METHOD_DELETE`.
pub const METHOD_DELETE: u8 = 0x15;
/// The response bit of a method (`IB_MGMT_METHOD_RESP`).
pub const METHOD_RESP: u8 = 0x80;
/// `IB_MGMT_METHOD_GET_RESP`.
pub const METHOD_GET_RESP: u8 = METHOD_GET | METHOD_RESP;
/// `IB_SA_METHOD_DELETE_RESP`.
pub const METHOD_DELETE_RESP: u8 = METHOD_DELETE | METHOD_RESP;
/// `IB_SA_ATTR_CLASS_PORTINFO`.
pub const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
/// `IB_SA_ATTR_GUID_INFO_REC`.
pub const ATTR_GUID_INFO_REC: u16 = 0x0030;
/// MAD status "the method/attribute combination is not supported" (IBA
/// 13.4.7: 3 << 2; OpenSM's `IB_MAD_STATUS_UNSUP_METHOD_ATTR`), what
/// OpenSM answers to a method or attribute it does not serve
/// (`osm_sa_guidinfo_record.c`, `osm_gir_rcv_process`).
pub const STATUS_UNSUP_METHOD_ATTR: u16 = 0x000c;
/// The SA statuses of IBA 15.2.1.1, in the MAD status's class-specific
/// bits (8..14), as OpenSM's `ib_types.h` names them
/// (`IB_SA_MAD_STATUS_*`). `ERR_NO_RESOURCES`.
pub const STATUS_NO_RESOURCES: u16 = 1 << 8;
/// `ERR_REQ_INVALID`: OpenSM's answer to a SET or DELETE of GUID 0 of
/// block 0, the port's own GUID (read-only).
pub const STATUS_REQ_INVALID: u16 = 2 << 8;
/// `ERR_NO_RECORDS`: no port with the record's LID, or a block past the
/// port's GUIDCap.
pub const STATUS_NO_RECORDS: u16 = 3 << 8;
/// `ERR_TOO_MANY_RECORDS`: a GET that matches more than one record.
pub const STATUS_TOO_MANY_RECORDS: u16 = 4 << 8;
/// `ERR_REQ_INSUFFICIENT_COMPONENTS`: a SET or DELETE without the LID and
/// block number in its component mask.
pub const STATUS_INSUF_COMPS: u16 = 6 << 8;
/// `ERR_REQ_DENIED`.
pub const STATUS_DENIED: u16 = 7 << 8;

/// The offset of the SA header in a SubnAdm MAD (`struct ib_sa_mad`): after
/// the common MAD header (24 bytes) and the RMPP header (12).
pub const SA_HDR: usize = 36;
/// The offset of the SA header's AttributeOffset (after the 8-byte SM_Key).
pub const ATTR_OFFSET: usize = SA_HDR + 8;
/// The offset of the SA header's ComponentMask.
pub const COMP_MASK: usize = SA_HDR + 12;
/// The offset of the SA data: `IB_MGMT_SA_HDR` (56), after the 20-byte SA
/// header.
pub const SA_DATA: usize = SA_HDR + 20;
/// The length of a GuidInfoRecord.
pub const GUID_INFO_REC_LEN: usize = 72;
/// The GUIDs of one record.
pub const GUIDS_PER_RECORD: usize = 8;
pub use super::model::PORT_GUIDS;
/// A port's GuidInfoRecords (the SA's block numbers).
pub const RECORDS: usize = PORT_GUIDS / GUIDS_PER_RECORD;
/// Component mask bit of GUID `i` of a GuidInfoRecord
/// (`IB_SA_GUIDINFO_REC_GID0` is bit 4).
pub const fn comp_mask_gid(i: usize) -> u64 {
    1 << (4 + i)
}
/// Component mask bits of the LID and the block number.
pub const COMP_MASK_LID: u64 = 1 << 0;
/// See [`COMP_MASK_LID`].
pub const COMP_MASK_BLOCK_NUM: u64 = 1 << 1;

/// The big-endian `u16` at `at` (the SM reads the header with it too).
pub(super) fn be16(b: &[u8; MAD_LEN], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The big-endian `u64` at `at`.
pub(super) fn be64(b: &[u8; MAD_LEN], at: usize) -> u64 {
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

/// What a SubnAdm MAD asks, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaRequest {
    /// A GuidInfoRecord GET, SET or DELETE.
    GuidInfo {
        /// The transaction id (echoed in the answer).
        tid: u64,
        /// [`METHOD_GET`], [`METHOD_SET`] or [`METHOD_DELETE`].
        method: u8,
        /// The component mask's LID and block number bits
        /// ([`COMP_MASK_LID`], [`COMP_MASK_BLOCK_NUM`]).
        keys: u64,
        /// The record's LID.
        lid: u16,
        /// The record's block number.
        block: u8,
        /// The GUIDs of the record asked for: bit `i` is GUID `i`
        /// (component mask bits 4..11).
        mask: u8,
        /// The record's 8 GUIDs as sent.
        guids: [u64; GUIDS_PER_RECORD],
    },
    /// A ClassPortInfo GET.
    ClassPortInfo {
        /// The transaction id.
        tid: u64,
    },
}

impl SaRequest {
    /// The request's transaction id.
    pub const fn tid(&self) -> u64 {
        match self {
            Self::GuidInfo { tid, .. } | Self::ClassPortInfo { tid } => *tid,
        }
    }
}

/// Why a MAD is not a request this SA answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MadError {
    /// Not a SubnAdm request of class version 2 (for someone else: let it
    /// go, as an SA that does not know it).
    NotForSa,
    /// A SubnAdm request this SA does not implement: a method or an
    /// attribute other than the ones above (answered with an error status).
    Unsupported {
        /// Its transaction id.
        tid: u64,
        /// Its method.
        method: u8,
    },
}

/// Decodes a MAD sent to the SA.
pub fn decode(mad: &[u8; MAD_LEN]) -> Result<SaRequest, MadError> {
    if mad[0] != BASE_VERSION || mad[1] != CLASS_SUBN_ADM || mad[2] != SA_CLASS_VERSION {
        return Err(MadError::NotForSa);
    }
    let method = mad[3];
    if method & METHOD_RESP != 0 {
        return Err(MadError::NotForSa);
    }
    let tid = be64(mad, 8);
    let attr = be16(mad, 16);
    match (method, attr) {
        (METHOD_GET, ATTR_CLASS_PORT_INFO) => Ok(SaRequest::ClassPortInfo { tid }),
        (METHOD_GET | METHOD_SET | METHOD_DELETE, ATTR_GUID_INFO_REC) => {
            let comp = be64(mad, COMP_MASK);
            let d = SA_DATA;
            let mut guids = [0u64; GUIDS_PER_RECORD];
            for (i, g) in guids.iter_mut().enumerate() {
                *g = be64(mad, d + 8 + 8 * i);
            }
            let mut mask = 0u8;
            for i in 0..GUIDS_PER_RECORD {
                if comp & comp_mask_gid(i) != 0 {
                    mask |= 1 << i;
                }
            }
            Ok(SaRequest::GuidInfo {
                tid,
                method,
                keys: comp & (COMP_MASK_LID | COMP_MASK_BLOCK_NUM),
                lid: be16(mad, d),
                block: mad[d + 2],
                mask,
                guids,
            })
        }
        _ => Err(MadError::Unsupported { tid, method }),
    }
}

/// The method of the answer to a request with `method`: GetResp for a Get
/// and a Set (IBA 15.4), the method with the response bit otherwise
/// (DeleteResp for a Delete).
pub const fn response_method(method: u8) -> u8 {
    match method {
        METHOD_GET | METHOD_SET => METHOD_GET_RESP,
        m => m | METHOD_RESP,
    }
}

/// Builds the answer to a request MAD `req`: the same header with the
/// response method, `status`, and `data` as the SA data.
pub fn encode_answer(req: &[u8; MAD_LEN], status: u16, data: &[u8]) -> [u8; MAD_LEN] {
    let mut out = [0u8; MAD_LEN];
    out[..SA_DATA].copy_from_slice(&req[..SA_DATA]);
    out[3] = response_method(req[3]);
    put16(&mut out, 4, status);
    // AttributeOffset: the record's length in 8-byte words.
    put16(&mut out, ATTR_OFFSET, (GUID_INFO_REC_LEN / 8) as u16);
    let n = data.len().min(MAD_LEN - SA_DATA);
    out[SA_DATA..SA_DATA + n].copy_from_slice(&data[..n]);
    out
}

/// Encodes a GuidInfoRecord.
pub fn guid_info_rec(
    lid: u16,
    block: u8,
    guids: &[u64; GUIDS_PER_RECORD],
) -> [u8; GUID_INFO_REC_LEN] {
    let mut r = [0u8; GUID_INFO_REC_LEN];
    r[0..2].copy_from_slice(&lid.to_be_bytes());
    r[2] = block;
    for (i, g) in guids.iter().enumerate() {
        r[8 + 8 * i..16 + 8 * i].copy_from_slice(&g.to_be_bytes());
    }
    r
}

/// Builds a GuidInfoRecord request MAD as `ib_sa_guid_info_rec_query`
/// sends it (for tests and the simulator's self-checks).
pub fn encode_request(
    tid: u64,
    method: u8,
    lid: u16,
    block: u8,
    mask: u8,
    guids: &[u64; GUIDS_PER_RECORD],
) -> [u8; MAD_LEN] {
    let mut m = [0u8; MAD_LEN];
    m[0] = BASE_VERSION;
    m[1] = CLASS_SUBN_ADM;
    m[2] = SA_CLASS_VERSION;
    m[3] = method;
    put64(&mut m, 8, tid);
    put16(&mut m, 16, ATTR_GUID_INFO_REC);
    let mut comp = COMP_MASK_LID | COMP_MASK_BLOCK_NUM;
    for i in 0..GUIDS_PER_RECORD {
        if mask & (1 << i) != 0 {
            comp |= comp_mask_gid(i);
        }
    }
    put64(&mut m, COMP_MASK, comp);
    let rec = guid_info_rec(lid, block, guids);
    m[SA_DATA..SA_DATA + GUID_INFO_REC_LEN].copy_from_slice(&rec);
    m
}
