// SPDX-License-Identifier: GPL-2.0

//! The `struct ib_device_ops` of a [`Driver`]: C callbacks that find the
//! driver's data and call its methods.
//!
//! Every callback is only ever called by ib_core, for a device registered by
//! [`super::Registration`] with these ops, with objects it allocated with the
//! sizes set here (or MRs made here). ib_core serialises the create and
//! destroy of each object against its other uses (a ULP may not use an
//! object it is destroying); the rest may run concurrently, which `T`'s
//! `Sync` data allows.

use super::objects::{Ah, Cq, CqNotifier, DevObj, Mr, Pd, Qp};
use super::types::{
    AhAttr, MrMap, QpAttr, QpInitAttr, QpState, QpType, RecvWr, RegWr, SendWr, Sge, UdWr, WcSink,
};
use super::{Driver, VfGuidKind};
use crate::ib::bindings;
use core::{ffi::c_int, marker::PhantomData};
use kernel::{error::from_result, prelude::*, ThisModule};

pub(super) struct Adapter<T: Driver>(PhantomData<T>);

/// `IB_FW_VERSION_NAME_MAX`, defined as `ETHTOOL_FWVERS_LEN`.
const FW_STR_MAX: usize = bindings::ETHTOOL_FWVERS_LEN as usize;

/// Formats into a C buffer, keeping the last byte for the NUL.
struct CBuf<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl core::fmt::Write for CBuf<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.buf.len().saturating_sub(self.len + 1);
        let n = s.len().min(room);
        let dst = self
            .buf
            .get_mut(self.len..self.len + n)
            .ok_or(core::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes().get(..n).ok_or(core::fmt::Error)?);
        self.len += n;
        if n < s.len() {
            return Err(core::fmt::Error);
        }
        Ok(())
    }
}

/// The scatter/gather list of a work request.
///
/// # Safety
///
/// `sg_list` points to `num_sge` entries valid for `'a` (if `num_sge > 0`).
unsafe fn sges<'a>(sg_list: *const bindings::ib_sge, num_sge: c_int) -> Result<&'a [Sge]> {
    let n = usize::try_from(num_sge).map_err(|_| EINVAL)?;
    if n == 0 || sg_list.is_null() {
        return Ok(&[]);
    }
    // SAFETY: Per the caller; `Sge` has `ib_sge`'s layout (checked in
    // `types`).
    Ok(unsafe { core::slice::from_raw_parts(sg_list.cast::<Sge>(), n) })
}

/// `Some(op)` if the driver implements it (`has`), else `None`: the
/// optional entries of the ops table (`bool::then_some` would keep the fn
/// item's own type, which does not coerce to the entry's pointer type).
macro_rules! op_if {
    ($has:expr, $op:expr) => {
        if $has {
            Some($op)
        } else {
            None
        }
    };
}

// The callbacks' safety contract is the one in the module comment: called by
// ib_core only, for a device of `T`, with objects of `T`.
#[allow(clippy::missing_safety_doc)]
impl<T: Driver> Adapter<T> {
    /// The ops table, for `ib_set_device_ops` (which copies it).
    pub(super) fn ops(module: &'static ThisModule) -> bindings::ib_device_ops {
        bindings::ib_device_ops {
            owner: module.as_ptr().cast(),
            driver_id: bindings::rdma_driver_id_RDMA_DRIVER_UNKNOWN,
            query_device: Some(Self::query_device),
            query_port: Some(Self::query_port),
            get_port_immutable: Some(Self::get_port_immutable),
            query_pkey: Some(Self::query_pkey),
            query_gid: Some(Self::query_gid),
            get_dev_fw_str: Some(Self::get_dev_fw_str),
            alloc_pd: Some(Self::alloc_pd),
            dealloc_pd: Some(Self::dealloc_pd),
            create_cq: Some(Self::create_cq),
            pre_destroy_cq: Some(Self::pre_destroy_cq),
            destroy_cq: Some(Self::destroy_cq),
            poll_cq: Some(Self::poll_cq),
            req_notify_cq: Some(Self::req_notify_cq),
            create_qp: Some(Self::create_qp),
            modify_qp: Some(Self::modify_qp),
            query_qp: Some(Self::query_qp),
            destroy_qp: Some(Self::destroy_qp),
            post_send: Some(Self::post_send),
            post_recv: Some(Self::post_recv),
            get_dma_mr: Some(Self::get_dma_mr),
            alloc_mr: op_if!(T::HAS_ALLOC_MR, Self::alloc_mr),
            map_mr_sg: op_if!(T::HAS_ALLOC_MR, Self::map_mr_sg),
            // SAFETY: A constant the C helper defines (simbus.c).
            reg_user_mr: unsafe { bindings::mlx_ext_reg_user_mr_unsupported },
            dereg_mr: Some(Self::dereg_mr),
            create_ah: op_if!(T::HAS_CREATE_AH, Self::create_ah),
            query_ah: op_if!(T::HAS_CREATE_AH, Self::query_ah),
            destroy_ah: op_if!(T::HAS_CREATE_AH, Self::destroy_ah),
            modify_port: op_if!(T::HAS_MODIFY_PORT, Self::modify_port),
            set_vf_guid: op_if!(T::HAS_SET_VF_GUID, Self::set_vf_guid),
            get_vf_guid: op_if!(T::HAS_GET_VF_GUID, Self::get_vf_guid),
            size_ib_ah: if T::HAS_CREATE_AH { Ah::<T>::SIZE } else { 0 },
            size_ib_pd: Pd::<T>::SIZE,
            size_ib_cq: Cq::<T>::SIZE,
            size_ib_qp: Qp::<T>::SIZE,
            ..Default::default()
        }
    }

    unsafe extern "C" fn query_device(
        ib: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: See the module comment; `attr` is ib_core's, zeroed by
        // `setup_device` (or `ib_uverbs`, which cannot reach this device).
        let (dev, attr) = unsafe { (DevObj::<T>::from_ib(ib), &mut *attr) };
        dev.query_device().write(attr);
        0
    }

    unsafe extern "C" fn query_port(
        ib: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> c_int {
        from_result(|| {
            // SAFETY: See the module comment; `__ib_query_port` zeroed `attr`.
            let (dev, attr) = unsafe { (DevObj::<T>::from_ib(ib), &mut *attr) };
            dev.query_port(port)?.write(attr);
            Ok(0)
        })
    }

    unsafe extern "C" fn get_port_immutable(
        ib: *mut bindings::ib_device,
        port: u32,
        imm: *mut bindings::ib_port_immutable,
    ) -> c_int {
        from_result(|| {
            // SAFETY: See the module comment.
            let (dev, imm) = unsafe { (DevObj::<T>::from_ib(ib), &mut *imm) };
            let p = dev.port_immutable(port)?;
            imm.pkey_tbl_len = p.pkey_tbl_len.try_into()?;
            imm.gid_tbl_len = p.gid_tbl_len.try_into()?;
            imm.core_cap_flags = p.core_cap_flags;
            imm.max_mad_size = p.max_mad_size;
            Ok(0)
        })
    }

    unsafe extern "C" fn query_pkey(
        ib: *mut bindings::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> c_int {
        from_result(|| {
            // SAFETY: See the module comment.
            let dev = unsafe { DevObj::<T>::from_ib(ib) };
            let value = dev.query_pkey(port, index)?;
            // SAFETY: ib_core passes a `u16` to fill.
            unsafe { pkey.write(value) };
            Ok(0)
        })
    }

    unsafe extern "C" fn query_gid(
        ib: *mut bindings::ib_device,
        port: u32,
        index: c_int,
        gid: *mut bindings::ib_gid,
    ) -> c_int {
        const { assert!(core::mem::size_of::<bindings::ib_gid>() == 16) };
        from_result(|| {
            // SAFETY: See the module comment.
            let dev = unsafe { DevObj::<T>::from_ib(ib) };
            let value = dev.query_gid(port, index.try_into()?)?;
            // SAFETY: `union ib_gid` is 16 bytes (checked above), `raw`
            // among them; ib_core passes one to fill.
            unsafe { gid.cast::<[u8; 16]>().write(value) };
            Ok(0)
        })
    }

    /// The firmware version of `attrs.fw_ver` as Mellanox drivers print
    /// it: `major.minor.subminor` from bits 63..32, 31..16 and 15..0.
    unsafe extern "C" fn get_dev_fw_str(
        ib: *mut bindings::ib_device,
        out: *mut kernel::ffi::c_char,
    ) {
        use core::fmt::Write;
        // SAFETY: See the module comment; `attrs` was filled at
        // registration.
        let fw = unsafe { (*ib).attrs.fw_ver };
        // Formatted here first: ib_core's buffer is uninitialised, and a
        // `&mut [u8]` over it would claim it initialised.
        let mut bytes = [0u8; FW_STR_MAX];
        let mut w = CBuf {
            buf: &mut bytes,
            len: 0,
        };
        // A version that does not fit is cut short, still NUL-terminated
        // (`CBuf` keeps the last byte, and `bytes` starts zeroed).
        let _ = write!(w, "{}.{}.{}", fw >> 32, (fw >> 16) & 0xffff, fw & 0xffff);
        let len = w.len + 1;
        // SAFETY: `out` is ib_core's buffer of `IB_FW_VERSION_NAME_MAX`
        // (= `FW_STR_MAX`) bytes, writable; `len <= FW_STR_MAX` (`CBuf`
        // keeps the last byte for the NUL) and `bytes` is a local.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), len) };
    }

    unsafe extern "C" fn alloc_pd(
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            if !udata.is_null() {
                return Err(crate::ib::eopnotsupp());
            }
            // SAFETY: See the module comment; the data is initialised below,
            // before any other use.
            let (pd, dev) = unsafe {
                let pd = Pd::<T>::from_raw(pd);
                (pd, DevObj::<T>::from_ib((*pd.raw()).device))
            };
            let data = dev.alloc_pd()?;
            // SAFETY: Not initialised yet; ib_core uses the PD only after.
            unsafe { pd.init((), data) };
            Ok(0)
        })
    }

    unsafe extern "C" fn dealloc_pd(
        pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: See the module comment; ib_core frees the PD after this
        // returns and never uses it again.
        unsafe { Pd::<T>::from_raw(pd).drop_data() };
        0
    }

    unsafe extern "C" fn create_cq(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> c_int {
        from_result(|| {
            if !attrs.is_null() {
                return Err(crate::ib::eopnotsupp());
            }
            // SAFETY: See the module comment; the data is initialised below,
            // before any other use.
            let (obj, dev, entries) = unsafe {
                let obj = Cq::<T>::from_raw(cq);
                (obj, DevObj::<T>::from_ib((*cq).device), (*attr).cqe)
            };
            let notifier = CqNotifier::new(cq)?;
            let data = dev.create_cq(entries, notifier.clone())?;
            // SAFETY: Not initialised yet; `cqe` is the driver's to report.
            unsafe {
                obj.init(notifier, data);
                (*cq).cqe = entries.try_into().unwrap_or(i32::MAX);
            }
            Ok(0)
        })
    }

    /// Called by `ib_free_cq` (`drivers/infiniband/core/cq.c`) before it
    /// stops its own poller (`irq_poll_disable`, `cancel_work_sync`): from
    /// here on no completion handler of ours runs, so none can schedule
    /// that poller again on a CQ about to be freed.
    unsafe extern "C" fn pre_destroy_cq(cq: *mut bindings::ib_cq) -> c_int {
        // SAFETY: See the module comment.
        let obj = unsafe { Cq::<T>::from_raw(cq) };
        obj.layer().kill();
        0
    }

    unsafe extern "C" fn destroy_cq(
        cq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: See the module comment.
        let (obj, dev) = unsafe { (Cq::<T>::from_raw(cq), DevObj::<T>::from_ib((*cq).device)) };
        // First: no completion handler runs from here on, so none runs while
        // the driver tears the CQ down, nor after ib_core frees it. From
        // `ib_free_cq`, `pre_destroy_cq` did it already (idempotent); this
        // covers `ib_destroy_cq_user`, which has no such step.
        obj.layer().kill();
        // And ib_core's own poller is done with the CQ: `ib_free_cq` stops
        // it, but its handler can still be re-arming the CQ (the helper).
        // SAFETY: `cq` is valid until this returns.
        unsafe { bindings::mlx_ext_ib_cq_quiesce(cq) };
        dev.destroy_cq(obj);
        // SAFETY: ib_core frees the CQ after this returns, unused.
        unsafe { obj.drop_data() };
        0
    }

    unsafe extern "C" fn poll_cq(
        cq: *mut bindings::ib_cq,
        num: c_int,
        wc: *mut bindings::ib_wc,
    ) -> c_int {
        // SAFETY: See the module comment.
        let (obj, dev) = unsafe { (Cq::<T>::from_raw(cq), DevObj::<T>::from_ib((*cq).device)) };
        let Ok(cap) = usize::try_from(num) else {
            return 0;
        };
        // SAFETY: The caller passes an array of `num` completions.
        let mut sink = unsafe { WcSink::new(wc, cap) };
        dev.poll_cq(obj, &mut sink);
        sink.len().try_into().unwrap_or(0)
    }

    unsafe extern "C" fn req_notify_cq(
        cq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> c_int {
        from_result(|| {
            // SAFETY: See the module comment.
            let (obj, dev) = unsafe { (Cq::<T>::from_raw(cq), DevObj::<T>::from_ib((*cq).device)) };
            let solicited = flags & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK
                == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED;
            let report = flags & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0;
            Ok(c_int::from(dev.req_notify_cq(obj, solicited, report)?))
        })
    }

    unsafe extern "C" fn create_qp(
        qp: *mut bindings::ib_qp,
        init: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            if !udata.is_null() {
                return Err(crate::ib::eopnotsupp());
            }
            // SAFETY: ib_core passes the ULP's attributes, valid during the
            // call.
            let init = unsafe { &*init };
            if init.send_cq.is_null() || init.recv_cq.is_null() {
                return Err(EINVAL);
            }
            // SAFETY: The CQs are live CQs the ULP made; `device` is set by
            // ib_core when it makes one. A CQ of another device is not a
            // `Cq<T>`.
            let foreign = unsafe {
                (*init.send_cq).device != (*qp).device || (*init.recv_cq).device != (*qp).device
            };
            if foreign {
                return Err(EINVAL);
            }
            // SAFETY: See the module comment; `create_qp` in verbs.c set the
            // QP's device and PD before calling us, and the CQs are the
            // ULP's, of this device (ib_core takes a use count on them for
            // the QP's life). The data is initialised below, before any
            // other use.
            let (obj, dev, pd, send_cq, recv_cq) = unsafe {
                (
                    Qp::<T>::from_raw(qp),
                    DevObj::<T>::from_ib((*qp).device),
                    Pd::<T>::from_raw((*qp).pd),
                    Cq::<T>::from_raw(init.send_cq),
                    Cq::<T>::from_raw(init.recv_cq),
                )
            };
            let attr = QpInitAttr {
                qp_type: QpType::from_raw(init.qp_type),
                port: init.port_num,
                max_send_wr: init.cap.max_send_wr,
                max_recv_wr: init.cap.max_recv_wr,
                max_send_sge: init.cap.max_send_sge,
                max_recv_sge: init.cap.max_recv_sge,
                signal_all: init.sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR,
                create_flags: init.create_flags,
                srq_or_xrc: !init.srq.is_null() || !init.xrcd.is_null(),
            };
            let (data, qpn) = dev.create_qp(obj.as_ref(), pd, send_cq, recv_cq, &attr)?;
            // SAFETY: Not initialised yet; `qp_num` is the driver's to set.
            unsafe {
                obj.init((), data);
                (*qp).qp_num = qpn;
            }
            Ok(0)
        })
    }

    unsafe extern "C" fn modify_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: c_int,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            if !udata.is_null() {
                return Err(crate::ib::eopnotsupp());
            }
            // SAFETY: See the module comment.
            let (obj, dev, a) = unsafe {
                (
                    Qp::<T>::from_raw(qp),
                    DevObj::<T>::from_ib((*qp).device),
                    &*attr,
                )
            };
            let mask = u32::try_from(mask).map_err(|_| EINVAL)?;
            let state = |raw, bit| -> Result<Option<QpState>> {
                if mask & bit == 0 {
                    return Ok(None);
                }
                QpState::from_raw(raw).map(Some).ok_or(EINVAL)
            };
            let dlid = if mask & bindings::ib_qp_attr_mask_IB_QP_AV != 0 {
                // SAFETY: `ah_attr` is valid when `IB_QP_AV` is set.
                unsafe { bindings::mlx_ext_ah_attr_dlid(&a.ah_attr) }
            } else {
                0
            };
            let attr = QpAttr {
                state: state(a.qp_state, bindings::ib_qp_attr_mask_IB_QP_STATE)?,
                cur_state: state(a.cur_qp_state, bindings::ib_qp_attr_mask_IB_QP_CUR_STATE)?,
                access_flags: if mask & bindings::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS != 0 {
                    u32::try_from(a.qp_access_flags).map_err(|_| EINVAL)?
                } else {
                    0
                },
                port: a.port_num,
                dlid,
                dest_qp_num: a.dest_qp_num,
                max_rd_atomic: a.max_rd_atomic,
                max_dest_rd_atomic: a.max_dest_rd_atomic,
            };
            dev.modify_qp(obj, &attr, mask)?;
            Ok(0)
        })
    }

    /// Answers the QP's state (`qp_state`, `cur_qp_state`); every other
    /// attribute reads zero. Both structures are zeroed first: callers
    /// pass them uninitialised (ib_core's `fill_res_qp_entry_query`, for
    /// `rdma res show qp`, copies fields of them to user space), and real
    /// drivers fill them whatever the mask (rxe_qp_to_attr,
    /// mlx5_ib_query_qp).
    unsafe extern "C" fn query_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        _mask: c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> c_int {
        // SAFETY: See the module comment; `attr` and `init` (where not
        // null) are the caller's, writable, and all-zero is a valid value
        // of each.
        let (obj, dev, attr) = unsafe {
            core::ptr::write_bytes(attr, 0, 1);
            if !init.is_null() {
                core::ptr::write_bytes(init, 0, 1);
            }
            (
                Qp::<T>::from_raw(qp),
                DevObj::<T>::from_ib((*qp).device),
                &mut *attr,
            )
        };
        let state = dev.qp_state(obj) as u32;
        attr.qp_state = state;
        attr.cur_qp_state = state;
        0
    }

    unsafe extern "C" fn destroy_qp(
        qp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: See the module comment.
        let (obj, dev) = unsafe { (Qp::<T>::from_raw(qp), DevObj::<T>::from_ib((*qp).device)) };
        dev.destroy_qp(obj);
        // SAFETY: ib_core frees the QP after this returns, unused.
        unsafe { obj.drop_data() };
        0
    }

    unsafe extern "C" fn post_send(
        qp: *mut bindings::ib_qp,
        mut wr: *const bindings::ib_send_wr,
        bad: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        // SAFETY: See the module comment.
        let (obj, dev) = unsafe { (Qp::<T>::from_raw(qp), DevObj::<T>::from_ib((*qp).device)) };
        while !wr.is_null() {
            // SAFETY: The ULP's chain of WRs is valid during the call; the
            // QP's type is set by ib_core before `create_qp`.
            let r = unsafe { Self::send_wr((*qp).device, (*qp).qp_type, wr) }
                .and_then(|w| dev.post_send(obj, &w));
            if let Err(e) = r {
                // SAFETY: ib_core passes where to report the failed WR.
                unsafe { bad.write(wr) };
                return e.to_errno();
            }
            // SAFETY: As above.
            wr = unsafe { (*wr).next };
        }
        0
    }

    /// Reads a send WR, with the fields of the larger struct its opcode
    /// says it is embedded in (as rxe's `init_send_wr` does).
    ///
    /// # Safety
    ///
    /// `wr` is a WR a ULP posted on a QP of type `qp_type` of device `ib`,
    /// valid during the call.
    unsafe fn send_wr<'a>(
        ib: *mut bindings::ib_device,
        qp_type: u32,
        wr: *const bindings::ib_send_wr,
    ) -> Result<SendWr<'a, T>> {
        use bindings::{ib_atomic_wr, ib_rdma_wr};
        const CMP_SWAP: u32 = bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP;
        const FETCH_ADD: u32 = bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD;
        const MASKED_CMP_SWAP: u32 = bindings::ib_wr_opcode_IB_WR_MASKED_ATOMIC_CMP_AND_SWP;
        const MASKED_FETCH_ADD: u32 = bindings::ib_wr_opcode_IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;
        const RDMA_WRITE: u32 = bindings::ib_wr_opcode_IB_WR_RDMA_WRITE;
        const RDMA_WRITE_IMM: u32 = bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM;
        const RDMA_READ: u32 = bindings::ib_wr_opcode_IB_WR_RDMA_READ;
        const LOCAL_INV: u32 = bindings::ib_wr_opcode_IB_WR_LOCAL_INV;
        const REG_MR: u32 = bindings::ib_wr_opcode_IB_WR_REG_MR;
        // SAFETY: Per the caller.
        let w = unsafe { &*wr };
        let mut out = SendWr {
            // SAFETY: Both members of the union are 64 bits; the driver only
            // hands the value back.
            wr_id: unsafe { w.__bindgen_anon_1.wr_id },
            opcode: w.opcode,
            send_flags: u32::try_from(w.send_flags).map_err(|_| EINVAL)?,
            // SAFETY: The ULP's list, valid during the call.
            sges: unsafe { sges(w.sg_list, w.num_sge) }?,
            remote_addr: 0,
            rkey: 0,
            compare_add: 0,
            compare_add_mask: 0,
            swap: 0,
            swap_mask: 0,
            invalidate_rkey: 0,
            reg: None,
            ud: None,
        };
        if QpType::from_raw(qp_type) == QpType::Gsi {
            // Only a SEND is a datagram: anything else (a drain's RDMA
            // WRITE...) is not an `ib_ud_wr`, and the driver refuses it.
            if w.opcode != bindings::ib_wr_opcode_IB_WR_SEND {
                return Ok(out);
            }
            // SAFETY: A SEND posted on a GSI QP is the `wr` of an
            // `ib_ud_wr` (`ud_wr()`), at offset 0.
            let u = unsafe { &*wr.cast::<bindings::ib_ud_wr>() };
            // SAFETY: A live address handle of the ULP's (ib_mad's); ib_core
            // set its device when it was made. Only one of this device is
            // an `Ah<T>`: another is refused.
            if u.ah.is_null() || unsafe { bindings::mlx_ext_ah_device(u.ah) } != ib {
                return Err(EINVAL);
            }
            // SAFETY: An address handle of this device, made by `create_ah`
            // for `T`, live while the WR is posted.
            let ah = unsafe { Ah::<T>::from_raw(u.ah) };
            out.ud = Some(UdWr {
                ah: ah.attr(),
                remote_qpn: u.remote_qpn,
                remote_qkey: u.remote_qkey,
                pkey_index: u.pkey_index,
            });
            return Ok(out);
        }
        match w.opcode {
            CMP_SWAP | FETCH_ADD | MASKED_CMP_SWAP | MASKED_FETCH_ADD => {
                // SAFETY: A WR with an atomic opcode is the `wr` of an
                // `ib_atomic_wr` (`atomic_wr()`), at offset 0.
                let a = unsafe { &*wr.cast::<ib_atomic_wr>() };
                out.remote_addr = a.remote_addr;
                out.rkey = a.rkey;
                out.compare_add = a.compare_add;
                out.compare_add_mask = a.compare_add_mask;
                out.swap = a.swap;
                out.swap_mask = a.swap_mask;
            }
            RDMA_WRITE | RDMA_WRITE_IMM | RDMA_READ => {
                // SAFETY: As above, `ib_rdma_wr` (`rdma_wr()`).
                let r = unsafe { &*wr.cast::<ib_rdma_wr>() };
                out.remote_addr = r.remote_addr;
                out.rkey = r.rkey;
            }
            LOCAL_INV => {
                // SAFETY: `LOCAL_INV` carries its key in `ex`.
                out.invalidate_rkey = unsafe { w.ex.invalidate_rkey };
            }
            REG_MR => {
                // SAFETY: As above, `ib_reg_wr` (`reg_wr()`).
                let r = unsafe { &*wr.cast::<bindings::ib_reg_wr>() };
                // SAFETY: A live MR of the ULP's; ib_core set its device
                // when it was made. Only an MR of this device is a `Mr<T>`:
                // another is refused.
                if r.mr.is_null() || unsafe { (*r.mr).device } != ib {
                    return Err(EINVAL);
                }
                out.reg = Some(RegWr {
                    // SAFETY: An MR of this device, made by `alloc_mr` or
                    // `get_dma_mr` for `T`, live while the WR is posted.
                    mr: unsafe { Mr::<T>::from_raw(r.mr) },
                    key: r.key,
                    access: u32::try_from(r.access).map_err(|_| EINVAL)?,
                });
            }
            _ => {}
        }
        Ok(out)
    }

    unsafe extern "C" fn post_recv(
        qp: *mut bindings::ib_qp,
        mut wr: *const bindings::ib_recv_wr,
        bad: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        // SAFETY: See the module comment.
        let (obj, dev) = unsafe { (Qp::<T>::from_raw(qp), DevObj::<T>::from_ib((*qp).device)) };
        while !wr.is_null() {
            // SAFETY: The ULP's chain of WRs is valid during the call.
            let w = unsafe { &*wr };
            // SAFETY: As above.
            let r = unsafe { sges(w.sg_list, w.num_sge) }.and_then(|sges| {
                dev.post_recv(
                    obj,
                    &RecvWr {
                        // SAFETY: Both members of the union are 64 bits.
                        wr_id: unsafe { w.__bindgen_anon_1.wr_id },
                        sges,
                    },
                )
            });
            if let Err(e) = r {
                // SAFETY: ib_core passes where to report the failed WR.
                unsafe { bad.write(wr) };
                return e.to_errno();
            }
            wr = w.next;
        }
        0
    }

    unsafe extern "C" fn get_dma_mr(
        pd: *mut bindings::ib_pd,
        access: c_int,
    ) -> *mut bindings::ib_mr {
        // SAFETY: See the module comment.
        let (pd, dev) = unsafe { (Pd::<T>::from_raw(pd), DevObj::<T>::from_ib((*pd).device)) };
        let r = u32::try_from(access)
            .map_err(|_| EINVAL)
            .and_then(|access| dev.get_dma_mr(pd, access))
            .and_then(|(data, keys)| Mr::<T>::alloc(data, keys, 0));
        r.unwrap_or_else(|e| e.to_ptr())
    }

    unsafe extern "C" fn alloc_mr(
        pd: *mut bindings::ib_pd,
        mr_type: bindings::ib_mr_type,
        max_num_sg: u32,
    ) -> *mut bindings::ib_mr {
        // SAFETY: See the module comment.
        let (pd, dev) = unsafe { (Pd::<T>::from_raw(pd), DevObj::<T>::from_ib((*pd).device)) };
        if mr_type != bindings::ib_mr_type_IB_MR_TYPE_MEM_REG {
            return crate::ib::eopnotsupp().to_ptr();
        }
        let r = usize::try_from(max_num_sg)
            .map_err(|_| EINVAL)
            .and_then(|max| {
                let (data, keys) = dev.alloc_mr(pd, max_num_sg)?;
                Mr::<T>::alloc(data, keys, max)
            });
        r.unwrap_or_else(|e| e.to_ptr())
    }

    /// `ib_sg_to_pages`'s callback: one page of the MR being mapped.
    unsafe extern "C" fn set_page(mr: *mut bindings::ib_mr, addr: u64) -> c_int {
        // SAFETY: `map_mr_sg` passes one of our MRs to `ib_sg_to_pages`,
        // which passes it back here.
        let obj = unsafe { Mr::<T>::from_raw(mr) };
        let mut buf = obj.page_buf().lock();
        let used = buf.used;
        match buf.slots.get_mut(used) {
            Some(slot) => {
                *slot = addr;
                buf.used += 1;
                0
            }
            None => ENOMEM.to_errno(),
        }
    }

    unsafe extern "C" fn map_mr_sg(
        mr: *mut bindings::ib_mr,
        sg: *mut bindings::scatterlist,
        nents: c_int,
        offset: *mut kernel::ffi::c_uint,
    ) -> c_int {
        // SAFETY: See the module comment; the ULP maps an MR it owns, once
        // at a time.
        let (obj, dev) = unsafe { (Mr::<T>::from_raw(mr), DevObj::<T>::from_ib((*mr).device)) };
        obj.page_buf().lock().used = 0;
        // SAFETY: `sg` is the ULP's DMA-mapped list of `nents` entries;
        // `set_page` fills this MR's page buffer, and `ib_sg_to_pages` sets
        // the MR's `iova` and `length`.
        let n = unsafe { bindings::ib_sg_to_pages(mr, sg, nents, offset, Some(Self::set_page)) };
        if n < 0 {
            return n;
        }
        // SAFETY: `ib_sg_to_pages` just set these; the ULP does not use the
        // MR concurrently with mapping it.
        let (iova, length, page_size) = unsafe { ((*mr).iova, (*mr).length, (*mr).page_size) };
        let buf = obj.page_buf().lock();
        let map = MrMap {
            iova,
            length,
            page_size,
            pages: buf.slots.get(..buf.used).unwrap_or(&[]),
        };
        match dev.map_mr(obj, &map) {
            Ok(()) => n,
            Err(e) => e.to_errno(),
        }
    }

    unsafe extern "C" fn create_ah(
        ah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            if !udata.is_null() {
                return Err(crate::ib::eopnotsupp());
            }
            let mut raw = bindings::mlx_ext_ah::default();
            // SAFETY: ib_core passes the caller's attributes, valid during
            // the call.
            kernel::error::to_result(unsafe { bindings::mlx_ext_ah_init_read(init, &mut raw) })?;
            let attr = AhAttr::from_raw(&raw);
            // SAFETY: See the module comment; ib_core set the AH's device
            // before calling us. The data is initialised below, before any
            // other use.
            let (obj, dev) = unsafe {
                (
                    Ah::<T>::from_raw(ah),
                    DevObj::<T>::from_ib(bindings::mlx_ext_ah_device(ah)),
                )
            };
            let data = dev.create_ah(&attr)?;
            // SAFETY: Not initialised yet; ib_core uses the AH only after.
            unsafe { obj.init(attr, data) };
            Ok(0)
        })
    }

    unsafe extern "C" fn query_ah(
        ah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: See the module comment; `attr` is the caller's, zeroed by
        // `rdma_query_ah`.
        unsafe {
            let raw = Ah::<T>::from_raw(ah).attr().raw();
            bindings::mlx_ext_ah_attr_write(attr, &raw);
        }
        0
    }

    unsafe extern "C" fn destroy_ah(ah: *mut bindings::ib_ah, _flags: u32) -> c_int {
        // SAFETY: See the module comment; ib_core frees the AH after this
        // returns and never uses it again.
        unsafe { Ah::<T>::from_raw(ah).drop_data() };
        0
    }

    unsafe extern "C" fn modify_port(
        ib: *mut bindings::ib_device,
        port: u32,
        _mask: c_int,
        _modify: *mut bindings::ib_port_modify,
    ) -> c_int {
        from_result(|| {
            // SAFETY: See the module comment.
            let dev = unsafe { DevObj::<T>::from_ib(ib) };
            dev.modify_port(port)?;
            Ok(0)
        })
    }

    unsafe extern "C" fn set_vf_guid(
        ib: *mut bindings::ib_device,
        vf: c_int,
        port: u32,
        guid: u64,
        type_: c_int,
    ) -> c_int {
        from_result(|| {
            // SAFETY: See the module comment.
            let dev = unsafe { DevObj::<T>::from_ib(ib) };
            let vf = u32::try_from(vf).map_err(|_| EINVAL)?;
            // SAFETY: A pure C call.
            let kind = match unsafe { bindings::mlx_ext_vf_guid_kind(type_) } {
                0 => VfGuidKind::Node,
                1 => VfGuidKind::Port,
                _ => return Err(EINVAL),
            };
            dev.set_vf_guid(vf, port, guid, kind)?;
            Ok(0)
        })
    }

    unsafe extern "C" fn get_vf_guid(
        ib: *mut bindings::ib_device,
        vf: c_int,
        port: u32,
        node_guid: *mut bindings::ifla_vf_guid,
        port_guid: *mut bindings::ifla_vf_guid,
    ) -> c_int {
        from_result(|| {
            // SAFETY: See the module comment.
            let dev = unsafe { DevObj::<T>::from_ib(ib) };
            let vf = u32::try_from(vf).map_err(|_| EINVAL)?;
            let (node, port_g) = dev.get_vf_guid(vf, port)?;
            // SAFETY: The caller's (ib_get_vf_guid's) two structs, valid
            // for writes for the call.
            unsafe {
                bindings::mlx_ext_ifla_vf_guid_set(node_guid, node);
                bindings::mlx_ext_ifla_vf_guid_set(port_guid, port_g);
            }
            Ok(0)
        })
    }

    unsafe extern "C" fn dereg_mr(
        mr: *mut bindings::ib_mr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: See the module comment; ib_core set the MR's device.
        let (obj, dev) = unsafe { (Mr::<T>::from_raw(mr), DevObj::<T>::from_ib((*mr).device)) };
        dev.dereg_mr(obj);
        // SAFETY: Made by `get_dma_mr`; ib_core never uses it again.
        unsafe { Mr::<T>::free(mr) };
        0
    }
}
