// SPDX-License-Identifier: GPL-2.0

//! What a driver's ops take and return, as Rust values: attributes, work
//! requests, completions.

use super::{Driver, Mr};
use crate::ib::bindings;
use crate::ib::AtomicCap;
use core::{marker::PhantomData, ptr::NonNull};

/// What a device reports in `query_device` (`struct ib_device_attr`); the
/// fields left out are zero.
#[derive(Clone, Copy)]
pub struct DeviceAttr {
    /// Firmware version, `major << 32 | minor << 16 | subminor`.
    pub fw_ver: u64,
    /// System image GUID, host order.
    pub sys_image_guid: u64,
    /// IEEE OUI of the vendor.
    pub vendor_id: u32,
    /// The vendor's part number.
    pub vendor_part_id: u32,
    /// Hardware version.
    pub hw_ver: u32,
    /// Largest memory region, in bytes.
    pub max_mr_size: u64,
    /// Page sizes supported, one bit per size.
    pub page_size_cap: u64,
    /// Limits on objects and work requests.
    pub max_qp: u32,
    /// Most work requests per queue.
    pub max_qp_wr: u32,
    /// Most scatter/gather entries per work request.
    pub max_sge: u32,
    /// Most completion queues.
    pub max_cq: u32,
    /// Most entries per completion queue.
    pub max_cqe: u32,
    /// Most memory regions.
    pub max_mr: u32,
    /// Most protection domains.
    pub max_pd: u32,
    /// Most RDMA READ and atomic requests a QP may have outstanding as
    /// responder.
    pub max_qp_rd_atom: u32,
    /// The same as initiator.
    pub max_qp_init_rd_atom: u32,
    /// Most pages of a fast-registration MR.
    pub max_fast_reg_page_list_len: u32,
    /// Size of the P_Key table.
    pub max_pkeys: u16,
    /// Standard atomics.
    pub atomic_cap: AtomicCap,
    /// Masked atomics.
    pub masked_atomic_cap: AtomicCap,
    /// `IB_DEVICE_*` capability flags.
    pub device_cap_flags: u64,
    /// `IBK_*` kernel capability flags.
    pub kernel_cap_flags: u64,
}

impl DeviceAttr {
    pub(super) fn write(&self, raw: &mut bindings::ib_device_attr) {
        raw.fw_ver = self.fw_ver;
        raw.sys_image_guid = self.sys_image_guid.to_be();
        raw.vendor_id = self.vendor_id;
        raw.vendor_part_id = self.vendor_part_id;
        raw.hw_ver = self.hw_ver;
        raw.max_mr_size = self.max_mr_size;
        raw.page_size_cap = self.page_size_cap;
        raw.max_qp = AttrLimit::clamp(self.max_qp);
        raw.max_qp_wr = AttrLimit::clamp(self.max_qp_wr);
        raw.max_send_sge = AttrLimit::clamp(self.max_sge);
        raw.max_recv_sge = AttrLimit::clamp(self.max_sge);
        raw.max_sge_rd = AttrLimit::clamp(self.max_sge);
        raw.max_cq = AttrLimit::clamp(self.max_cq);
        raw.max_cqe = AttrLimit::clamp(self.max_cqe);
        raw.max_mr = AttrLimit::clamp(self.max_mr);
        raw.max_pd = AttrLimit::clamp(self.max_pd);
        raw.max_qp_rd_atom = AttrLimit::clamp(self.max_qp_rd_atom);
        raw.max_qp_init_rd_atom = AttrLimit::clamp(self.max_qp_init_rd_atom);
        raw.max_res_rd_atom = raw.max_qp_rd_atom.saturating_mul(raw.max_qp);
        raw.max_fast_reg_page_list_len = self.max_fast_reg_page_list_len;
        raw.max_pkeys = self.max_pkeys;
        raw.atomic_cap = self.atomic_cap as u32;
        raw.masked_atomic_cap = self.masked_atomic_cap as u32;
        raw.device_cap_flags = self.device_cap_flags;
        raw.kernel_cap_flags = self.kernel_cap_flags;
    }
}

/// A limit of `struct ib_device_attr`: `int` in 6.12, `u32` in 7.x (the
/// header's type decides which, with no version in sight).
trait AttrLimit {
    /// `v`, or the type's largest value if it does not fit.
    fn clamp(v: u32) -> Self;
}

impl AttrLimit for i32 {
    fn clamp(v: u32) -> Self {
        i32::try_from(v).unwrap_or(i32::MAX)
    }
}

impl AttrLimit for u32 {
    fn clamp(v: u32) -> Self {
        v
    }
}

/// The state of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortState {
    /// `IB_PORT_DOWN`: no link.
    Down,
    /// `IB_PORT_ACTIVE`: up, configured by the subnet manager.
    Active,
}

/// What a device reports in `query_port` for an InfiniBand port.
#[derive(Clone, Copy)]
pub struct PortAttr {
    /// Whether the port is up.
    pub state: PortState,
    /// Its LID.
    pub lid: u32,
    /// The LID of its subnet manager.
    pub sm_lid: u32,
    /// Size of the GID table.
    pub gid_tbl_len: u32,
    /// Size of the P_Key table.
    pub pkey_tbl_len: u16,
    /// `IB_PORT_*` capability mask bits.
    pub port_cap_flags: u32,
    /// Largest message, in bytes.
    pub max_msg_sz: u32,
    /// The subnet prefix of its GIDs, host order.
    pub subnet_prefix: u64,
}

impl PortAttr {
    pub(super) fn write(&self, raw: &mut bindings::ib_port_attr) {
        let up = self.state == PortState::Active;
        raw.state = if up {
            bindings::ib_port_state_IB_PORT_ACTIVE
        } else {
            bindings::ib_port_state_IB_PORT_DOWN
        };
        raw.phys_state = if up {
            bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP as u8
        } else {
            bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED as u8
        };
        raw.max_mtu = bindings::ib_mtu_IB_MTU_4096;
        raw.active_mtu = bindings::ib_mtu_IB_MTU_4096;
        raw.phys_mtu = 4096;
        raw.gid_tbl_len = AttrLimit::clamp(self.gid_tbl_len);
        raw.port_cap_flags = self.port_cap_flags;
        raw.max_msg_sz = self.max_msg_sz;
        raw.pkey_tbl_len = self.pkey_tbl_len;
        raw.lid = self.lid;
        raw.sm_lid = self.sm_lid;
        raw.lmc = 0;
        raw.max_vl_num = 4;
        raw.sm_sl = 0;
        raw.subnet_timeout = 18;
        raw.active_width = bindings::ib_port_width_IB_WIDTH_4X as u8;
        raw.active_speed = bindings::ib_port_speed_IB_SPEED_EDR as u16;
        raw.subnet_prefix = self.subnet_prefix;
    }
}

/// What never changes on a port (`struct ib_port_immutable`).
#[derive(Clone, Copy)]
pub struct PortImmutable {
    /// Size of the P_Key table.
    pub pkey_tbl_len: u32,
    /// Size of the GID table.
    pub gid_tbl_len: u32,
    /// `RDMA_CORE_CAP_*` and `RDMA_CORE_PORT_*` flags.
    pub core_cap_flags: u32,
    /// The largest MAD the port takes; 0 without `RDMA_CORE_CAP_IB_MAD`.
    pub max_mad_size: u32,
}

/// The core capability flag of an InfiniBand port without MADs, CM or SA.
pub const CORE_CAP_PROT_IB: u32 = bindings::RDMA_CORE_CAP_PROT_IB;

/// The core capabilities of an InfiniBand port with MADs, CM and SA but no
/// SMI (`RDMA_CORE_PORT_IBA_IB` without `RDMA_CORE_CAP_IB_SMI`): ib_mad
/// makes the GSI QP (QP1) on it and no QP0, ib_sa and ib_cm attach.
pub const CORE_CAP_IB_NO_SMI: u32 = bindings::RDMA_CORE_CAP_PROT_IB
    | bindings::RDMA_CORE_CAP_IB_MAD
    | bindings::RDMA_CORE_CAP_IB_CM
    | bindings::RDMA_CORE_CAP_IB_SA
    | bindings::RDMA_CORE_CAP_AF_IB;

/// `IB_MGMT_MAD_SIZE`: the `max_mad_size` of a port with
/// `RDMA_CORE_CAP_IB_MAD`.
pub const MGMT_MAD_SIZE: u32 = 256;

/// The type of a queue pair (`enum ib_qp_type`), as far as drivers of this
/// layer tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpType {
    /// `IB_QPT_RC`.
    Rc,
    /// `IB_QPT_GSI`: QP1 of a port, which ib_mad makes.
    Gsi,
    /// Anything else (the driver refuses it).
    Other,
}

impl QpType {
    pub(super) fn from_raw(raw: u32) -> Self {
        match raw {
            bindings::ib_qp_type_IB_QPT_RC => Self::Rc,
            bindings::ib_qp_type_IB_QPT_GSI => Self::Gsi,
            _ => Self::Other,
        }
    }

    fn raw(self) -> u32 {
        match self {
            Self::Rc => bindings::ib_qp_type_IB_QPT_RC,
            Self::Gsi => bindings::ib_qp_type_IB_QPT_GSI,
            Self::Other => bindings::ib_qp_type_IB_QPT_MAX,
        }
    }
}

/// An InfiniBand address (`struct rdma_ah_attr` of type IB), as an address
/// handle keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AhAttr {
    /// Destination LID.
    pub dlid: u32,
    /// The local port.
    pub port: u32,
    /// Service level.
    pub sl: u8,
    /// Whether a GRH was asked for.
    pub grh: bool,
}

impl AhAttr {
    pub(super) fn from_raw(raw: &bindings::mlx_ext_ah) -> Self {
        Self {
            dlid: raw.dlid,
            port: raw.port,
            sl: raw.sl,
            grh: raw.grh,
        }
    }

    pub(super) fn raw(&self) -> bindings::mlx_ext_ah {
        bindings::mlx_ext_ah {
            dlid: self.dlid,
            port: self.port,
            sl: self.sl,
            grh: self.grh,
        }
    }
}

/// What a send on a UD or GSI QP carries besides the common fields
/// (`struct ib_ud_wr`).
#[derive(Clone, Copy, Debug)]
pub struct UdWr {
    /// Where it goes: the address handle's address.
    pub ah: AhAttr,
    /// The destination QP.
    pub remote_qpn: u32,
    /// The destination's Q_Key.
    pub remote_qkey: u32,
    /// The P_Key index (GSI only).
    pub pkey_index: u16,
}

/// The state of a queue pair (`enum ib_qp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum QpState {
    /// `IB_QPS_RESET`.
    Reset = bindings::ib_qp_state_IB_QPS_RESET,
    /// `IB_QPS_INIT`.
    Init = bindings::ib_qp_state_IB_QPS_INIT,
    /// `IB_QPS_RTR`.
    Rtr = bindings::ib_qp_state_IB_QPS_RTR,
    /// `IB_QPS_RTS`.
    Rts = bindings::ib_qp_state_IB_QPS_RTS,
    /// `IB_QPS_SQD`.
    Sqd = bindings::ib_qp_state_IB_QPS_SQD,
    /// `IB_QPS_SQE`.
    Sqe = bindings::ib_qp_state_IB_QPS_SQE,
    /// `IB_QPS_ERR`.
    Err = bindings::ib_qp_state_IB_QPS_ERR,
}

impl QpState {
    pub(super) fn from_raw(raw: u32) -> Option<Self> {
        [
            Self::Reset,
            Self::Init,
            Self::Rtr,
            Self::Rts,
            Self::Sqd,
            Self::Sqe,
            Self::Err,
        ]
        .into_iter()
        .find(|s| *s as u32 == raw)
    }

    /// Whether ib_core's table of the IB specification allows going from
    /// `self` to `next` on a QP of type `qp_type` with the attributes of
    /// `mask` (`ib_modify_qp_is_ok`). Never for [`QpType::Other`].
    pub fn transition_ok(self, next: Self, qp_type: QpType, mask: u32) -> bool {
        if qp_type == QpType::Other {
            return false;
        }
        // SAFETY: A pure function of its arguments; every state value is
        // one of `enum ib_qp_state`, and the type one of `enum ib_qp_type`.
        unsafe { bindings::ib_modify_qp_is_ok(self as u32, next as u32, qp_type.raw(), mask) }
    }
}

/// The `IB_QP_*` attribute mask bits a driver reads.
pub mod qp_mask {
    use super::bindings;
    /// `IB_QP_STATE`.
    pub const STATE: u32 = bindings::ib_qp_attr_mask_IB_QP_STATE;
    /// `IB_QP_CUR_STATE`.
    pub const CUR_STATE: u32 = bindings::ib_qp_attr_mask_IB_QP_CUR_STATE;
    /// `IB_QP_ACCESS_FLAGS`.
    pub const ACCESS_FLAGS: u32 = bindings::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS;
    /// `IB_QP_PORT`.
    pub const PORT: u32 = bindings::ib_qp_attr_mask_IB_QP_PORT;
    /// `IB_QP_AV`.
    pub const AV: u32 = bindings::ib_qp_attr_mask_IB_QP_AV;
    /// `IB_QP_DEST_QPN`.
    pub const DEST_QPN: u32 = bindings::ib_qp_attr_mask_IB_QP_DEST_QPN;
    /// `IB_QP_MAX_QP_RD_ATOMIC`.
    pub const MAX_QP_RD_ATOMIC: u32 = bindings::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC;
    /// `IB_QP_MAX_DEST_RD_ATOMIC`.
    pub const MAX_DEST_RD_ATOMIC: u32 = bindings::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC;
}

/// What a kernel ULP asks of a new QP (`struct ib_qp_init_attr`).
#[derive(Clone, Copy, Debug)]
pub struct QpInitAttr {
    /// Its type; those the driver does not take are its to refuse.
    pub qp_type: QpType,
    /// `port_num`: the port of a GSI QP.
    pub port: u32,
    /// Send queue depth.
    pub max_send_wr: u32,
    /// Receive queue depth.
    pub max_recv_wr: u32,
    /// Scatter/gather entries per send WR.
    pub max_send_sge: u32,
    /// Scatter/gather entries per receive WR.
    pub max_recv_sge: u32,
    /// Whether every send WR completes (`IB_SIGNAL_ALL_WR`), not only those
    /// with `IB_SEND_SIGNALED`.
    pub signal_all: bool,
    /// `create_flags`, for the driver to refuse what it does not know.
    pub create_flags: u32,
    /// Whether an SRQ or XRC was asked for.
    pub srq_or_xrc: bool,
}

/// The attributes of a `modify_qp` (`struct ib_qp_attr`); only those in the
/// mask are meaningful.
#[derive(Clone, Copy, Debug)]
pub struct QpAttr {
    /// `qp_state`.
    pub state: Option<QpState>,
    /// `cur_qp_state`.
    pub cur_state: Option<QpState>,
    /// `qp_access_flags` (`IB_ACCESS_*`).
    pub access_flags: u32,
    /// `port_num`.
    pub port: u32,
    /// The destination LID of `ah_attr`.
    pub dlid: u32,
    /// `dest_qp_num`.
    pub dest_qp_num: u32,
    /// `max_rd_atomic`: outstanding RDMA READ and atomics as initiator.
    pub max_rd_atomic: u8,
    /// `max_dest_rd_atomic`: the same as responder.
    pub max_dest_rd_atomic: u8,
}

/// A scatter/gather entry (`struct ib_sge`) of a work request a ULP posted.
/// Only this layer makes one (read in place from the ULP's `sg_list`): its
/// bytes are memory the ULP handed the device ([`Sge::dma`]).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Sge {
    addr: u64,
    length: u32,
    lkey: u32,
}

impl Sge {
    /// Address: with no DMA device, a kernel virtual address; with an FRWR
    /// lkey, an address in the region's IOVA space.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// Length in bytes.
    pub fn length(&self) -> u32 {
        self.length
    }

    /// Local key of the region it is in.
    pub fn lkey(&self) -> u32 {
        self.lkey
    }

    /// Its bytes, taken as kernel addresses: what a device reaches through
    /// a key that maps kernel addresses one to one (the PD's DMA MR). The
    /// driver checks first that the lkey is such a key (with an FRWR lkey,
    /// `addr` is in the region's IOVA space: use
    /// [`super::dma::MappedPages::span`]). `None` if they are not a
    /// plausible kernel range.
    pub fn dma(&self) -> Option<super::dma::DmaRange> {
        super::dma::DmaRange::from_ulp(self.addr, u64::from(self.length))
    }
}

// `Sge` is read in place from the ULP's `sg_list`.
const _: () = {
    assert!(core::mem::size_of::<Sge>() == core::mem::size_of::<bindings::ib_sge>());
    assert!(core::mem::align_of::<Sge>() == core::mem::align_of::<bindings::ib_sge>());
    assert!(core::mem::offset_of!(Sge, addr) == core::mem::offset_of!(bindings::ib_sge, addr));
    assert!(core::mem::offset_of!(Sge, length) == core::mem::offset_of!(bindings::ib_sge, length));
    assert!(core::mem::offset_of!(Sge, lkey) == core::mem::offset_of!(bindings::ib_sge, lkey));
};

/// Keys of a new memory region.
#[derive(Clone, Copy, Debug)]
pub struct MrKeys {
    /// Local key.
    pub lkey: u32,
    /// Remote key.
    pub rkey: u32,
}

/// A send work request, as posted.
pub struct SendWr<'a, T: Driver> {
    /// `wr_id` (or the `ib_cqe` pointer, as a number): returned in the
    /// completion.
    pub wr_id: u64,
    /// `opcode` (`IB_WR_*`).
    pub opcode: u32,
    /// `send_flags` (`IB_SEND_*`).
    pub send_flags: u32,
    /// The scatter/gather list.
    pub sges: &'a [Sge],
    /// Remote address and key (RDMA and atomic opcodes; zero otherwise).
    pub remote_addr: u64,
    /// The remote key.
    pub rkey: u32,
    /// Atomic operands (`struct ib_atomic_wr`; zero for other opcodes).
    pub compare_add: u64,
    /// `compare_add_mask`.
    pub compare_add_mask: u64,
    /// `swap`.
    pub swap: u64,
    /// `swap_mask`.
    pub swap_mask: u64,
    /// `ex.invalidate_rkey` of `IB_WR_LOCAL_INV`.
    pub invalidate_rkey: u32,
    /// What `IB_WR_REG_MR` registers (`struct ib_reg_wr`).
    pub reg: Option<RegWr<'a, T>>,
    /// The address of a send on a GSI QP (`struct ib_ud_wr`).
    pub ud: Option<UdWr>,
}

/// The registration an `IB_WR_REG_MR` asks for.
pub struct RegWr<'a, T: Driver> {
    /// The MR, mapped by `ib_map_mr_sg`.
    pub mr: &'a Mr<T>,
    /// Its new key (`ib_update_fast_reg_key` may have changed the low byte).
    pub key: u32,
    /// The access it grants (`IB_ACCESS_*`).
    pub access: u32,
}

/// The mapping of an FRWR MR after `ib_map_mr_sg`, made by this layer only:
/// a driver keeps it in a [`super::dma::MappedPages`].
pub struct MrMap<'a> {
    /// Its first address.
    pub(super) iova: u64,
    /// Its length in bytes.
    pub(super) length: u64,
    /// The size of its pages.
    pub(super) page_size: u32,
    /// The DMA address of each page, in order.
    pub(super) pages: &'a [u64],
}

impl MrMap<'_> {
    /// How many pages it has.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }
}

/// A receive work request, as posted.
pub struct RecvWr<'a> {
    /// `wr_id`, returned in the completion.
    pub wr_id: u64,
    /// The scatter/gather list.
    pub sges: &'a [Sge],
}

/// The QP a completion belongs to, as ib_core's `struct ib_qp *`.
///
/// A completion must not be left in a CQ once its QP is destroyed: ULPs
/// read `wc->qp`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct QpRef(pub(super) NonNull<bindings::ib_qp>);

// SAFETY: Only an address, never dereferenced by Rust.
unsafe impl Send for QpRef {}
// SAFETY: As above.
unsafe impl Sync for QpRef {}

/// A completion (`struct ib_wc`).
#[derive(Clone, Copy)]
pub struct Wc {
    /// The work request's `wr_id`.
    pub wr_id: u64,
    /// `enum ib_wc_status`.
    pub status: u32,
    /// `enum ib_wc_opcode`.
    pub opcode: u32,
    /// Bytes transferred.
    pub byte_len: u32,
    /// The QP.
    pub qp: QpRef,
    /// The source QP (receives).
    pub src_qp: u32,
    /// The source LID (receives).
    pub slid: u32,
    /// The P_Key index the receive came with (GSI receives).
    pub pkey_index: u16,
}

/// Where `poll_cq` writes completions: the ULP's array.
pub struct WcSink<'a> {
    raw: *mut bindings::ib_wc,
    cap: usize,
    len: usize,
    _array: PhantomData<&'a mut [bindings::ib_wc]>,
}

impl<'a> WcSink<'a> {
    /// # Safety
    ///
    /// `raw` points to `cap` writable `ib_wc`s, valid for `'a`.
    pub(super) unsafe fn new(raw: *mut bindings::ib_wc, cap: usize) -> Self {
        Self {
            raw,
            cap,
            len: 0,
            _array: PhantomData,
        }
    }

    /// How many more completions fit.
    pub fn room(&self) -> usize {
        self.cap - self.len
    }

    /// Writes `wc`; returns `false` (writing nothing) when full.
    pub fn push(&mut self, wc: &Wc) -> bool {
        if self.len >= self.cap {
            return false;
        }
        let mut raw = bindings::ib_wc {
            status: wc.status,
            opcode: wc.opcode,
            byte_len: wc.byte_len,
            qp: wc.qp.0.as_ptr(),
            src_qp: wc.src_qp,
            slid: wc.slid,
            pkey_index: wc.pkey_index,
            ..Default::default()
        };
        raw.__bindgen_anon_1.wr_id = wc.wr_id;
        // SAFETY: `len < cap`, so the slot is in the array (`new`'s
        // contract).
        unsafe { self.raw.add(self.len).write(raw) };
        self.len += 1;
        true
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }
}
