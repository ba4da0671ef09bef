// SPDX-License-Identifier: GPL-2.0

//! Queue pairs as a kernel ULP sees them: the protection domain and
//! attributes it passes in, and a QP mlx_ext posts atomic work requests on,
//! each with its own `ib_cqe` and reply buffer ([`super::request`]).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).

use super::bindings;
use super::request::{Handler, Request, RequestPool};
use super::Device;
use core::{
    mem::MaybeUninit,
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{
    error::{from_err_ptr, to_result},
    ffi::{c_int, c_void},
    prelude::*,
    types::Opaque,
};

/// The opcode of an atomic work request (`enum ib_wr_opcode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum AtomicOpcode {
    /// `IB_WR_ATOMIC_CMP_AND_SWP`.
    CmpAndSwp = bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP,
    /// `IB_WR_ATOMIC_FETCH_AND_ADD`.
    FetchAndAdd = bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD,
    /// `IB_WR_MASKED_ATOMIC_CMP_AND_SWP`.
    MaskedCmpAndSwp = bindings::ib_wr_opcode_IB_WR_MASKED_ATOMIC_CMP_AND_SWP,
    /// `IB_WR_MASKED_ATOMIC_FETCH_AND_ADD`.
    MaskedFetchAndAdd = bindings::ib_wr_opcode_IB_WR_MASKED_ATOMIC_FETCH_AND_ADD,
}

/// The operands of an atomic work request (`struct ib_atomic_wr`), as the
/// driver reads them: for a fetch-and-add `compare_add` is the addend and
/// `compare_add_mask` the field boundaries of a masked one.
#[derive(Clone, Copy, Debug)]
pub struct AtomicWr {
    /// The operation.
    pub opcode: AtomicOpcode,
    /// `compare_add`.
    pub compare_add: u64,
    /// `compare_add_mask`.
    pub compare_add_mask: u64,
    /// `swap`.
    pub swap: u64,
    /// `swap_mask`.
    pub swap_mask: u64,
}

/// A protection domain a ULP passed in, borrowed for the call.
#[repr(transparent)]
pub struct Pd(Opaque<bindings::ib_pd>);

impl Pd {
    /// The device the PD belongs to.
    pub fn device(&self) -> &Device {
        // SAFETY: A ULP's PD belongs to a registered device, which outlives
        // it; its `attrs` were filled before registration (Device's
        // invariant).
        unsafe { Device::from_raw((*self.0.get()).device) }
    }
}

/// The attributes a ULP gave for a new QP: a copy mlx_ext may edit before
/// it passes them on.
pub struct QpInit(pub(super) bindings::ib_qp_init_attr);

impl QpInit {
    /// `create_flags`.
    pub fn create_flags(&self) -> u32 {
        self.0.create_flags
    }

    /// Sets `create_flags`.
    pub fn set_create_flags(&mut self, flags: u32) {
        self.0.create_flags = flags;
    }

    /// Whether the QP is a reliable connected one.
    pub fn is_rc(&self) -> bool {
        self.0.qp_type == bindings::ib_qp_type_IB_QPT_RC
    }

    /// Whether the send CQ calls `ib_cqe` done callbacks by itself: from
    /// `ib_alloc_cq` or the CQ pool, and not `IB_POLL_DIRECT`.
    pub fn send_cq_usable(&self) -> bool {
        // SAFETY: The helper only reads the CQ the ULP passed, if any; a
        // ULP's CQ is valid while it creates a QP with it.
        unsafe { bindings::mlx_ext_ib_cq_usable(self.0.send_cq) }
    }

    /// Whether the receive CQ does too (what `ib_drain_qp` needs of it).
    pub fn recv_cq_usable(&self) -> bool {
        // SAFETY: As above.
        unsafe { bindings::mlx_ext_ib_cq_usable(self.0.recv_cq) }
    }

    /// Whether the QP takes its receives from a shared receive queue.
    pub fn has_srq(&self) -> bool {
        !self.0.srq.is_null()
    }

    /// Adds room for the drain's marker to each work queue (`ib_drain_qp`
    /// posts one on the send queue and one on the receive queue); undone in
    /// what the ULP is told by [`QpInit::unreserve_drain`].
    pub fn reserve_drain(&mut self) {
        self.0.cap.max_send_wr = self.0.cap.max_send_wr.saturating_add(1);
        self.0.cap.max_recv_wr = self.0.cap.max_recv_wr.saturating_add(1);
    }

    /// Takes the drain's room back out of the capabilities the driver
    /// granted.
    pub fn unreserve_drain(&mut self) {
        self.0.cap.max_send_wr = self.0.cap.max_send_wr.saturating_sub(1);
        self.0.cap.max_recv_wr = self.0.cap.max_recv_wr.saturating_sub(1);
    }

    /// The send queue's capabilities asked for: `(max_send_wr,
    /// max_send_sge)`.
    pub fn send_cap(&self) -> (u32, u32) {
        (self.0.cap.max_send_wr, self.0.cap.max_send_sge)
    }

    /// Sets them.
    pub fn set_send_cap(&mut self, (wr, sge): (u32, u32)) {
        self.0.cap.max_send_wr = wr;
        self.0.cap.max_send_sge = sge;
    }
}

/// A QP mlx_ext posts on: one it created for a ULP and owns
/// (`mlx_ext_create_qp`), or one a ULP created and keeps owning
/// (`mlx_ext_attach_qp`).
pub struct Qp {
    raw: NonNull<bindings::ib_qp>,
    /// mlx_ext created it: [`Qp::destroy`] destroys it.
    owned: bool,
    destroyed: AtomicBool,
}

// SAFETY: Verbs on one QP may be called from any thread (drivers lock their
// queues); `destroyed` is atomic.
unsafe impl Send for Qp {}
// SAFETY: As above.
unsafe impl Sync for Qp {}

impl Qp {
    /// `ib_create_qp` in `pd`; copies the capabilities the driver granted
    /// back into `init`.
    pub fn create(pd: &Pd, init: &mut QpInit) -> Result<Self> {
        // SAFETY: `pd` is a valid PD (the ULP's) and `init.0` a valid,
        // writable `ib_qp_init_attr` whose CQs are the ULP's.
        let raw = from_err_ptr(unsafe { bindings::mlx_ext_ib_create_qp(pd.0.get(), &mut init.0) })?;
        Ok(Self {
            raw: NonNull::new(raw).ok_or(ENOMEM)?,
            owned: true,
            destroyed: AtomicBool::new(false),
        })
    }

    /// A QP the ULP created and keeps owning: mlx_ext posts on it and
    /// never changes its state nor destroys it.
    ///
    /// # Safety
    ///
    /// `raw` is a valid QP that stays valid until the result is last used
    /// to reach it: the header's contract is that the ULP destroys the QP
    /// only after `mlx_ext_detach_qp` returned, by when no operation of
    /// the QP is pending and none can be posted. The result itself may be
    /// dropped later (the last reference to its handle can go with a
    /// completion handler that just finished), and dropping an attached
    /// `Qp` does not touch the QP.
    pub unsafe fn attach(raw: NonNull<bindings::ib_qp>) -> Self {
        Self {
            raw,
            owned: false,
            destroyed: AtomicBool::new(false),
        }
    }

    /// Whether mlx_ext created it (and destroys it).
    pub fn is_owned(&self) -> bool {
        self.owned
    }

    /// Whether it is a reliable connected QP.
    pub fn is_rc(&self) -> bool {
        // SAFETY: The QP is valid while `self` lives.
        unsafe { (*self.raw.as_ptr()).qp_type == bindings::ib_qp_type_IB_QPT_RC }
    }

    /// Whether its send CQ is in the `ib_cqe` model (from `ib_alloc_cq` or
    /// the CQ pool, any polling context), which mlx_ext's work requests
    /// complete through.
    pub fn send_cq_in_cqe_model(&self) -> bool {
        // SAFETY: The QP and its send CQ are valid while `self` lives.
        unsafe { bindings::mlx_ext_ib_cq_cqe_model((*self.raw.as_ptr()).send_cq) }
    }

    /// Whether `other` completes its send work requests through the same
    /// CQ.
    pub fn shares_send_cq(&self, other: &Qp) -> bool {
        // SAFETY: Both QPs are valid while they live; only the pointers
        // are read.
        unsafe { (*self.raw.as_ptr()).send_cq == (*other.raw.as_ptr()).send_cq }
    }

    /// Whether the QP is in RTS now, where the send work requests posted
    /// on it execute (`ib_query_qp`); `None` if the driver cannot say (it
    /// has no `query_qp`, or it failed). Process context: drivers may sleep
    /// to answer (mlx5 asks the firmware).
    pub fn is_in_rts(&self) -> Option<bool> {
        // SAFETY: All-zero is a valid `ib_qp_attr` and `ib_qp_init_attr`.
        let mut attr: bindings::ib_qp_attr = unsafe { MaybeUninit::zeroed().assume_init() };
        // SAFETY: As above.
        let mut init: bindings::ib_qp_init_attr = unsafe { MaybeUninit::zeroed().assume_init() };
        // SAFETY: The QP is valid until its detach returns (`attach`), and
        // the caller counts this query as pending, which the detach waits
        // for; both structures are writable and live across the call,
        // which only fills them.
        let ret = unsafe {
            bindings::ib_query_qp(
                self.raw.as_ptr(),
                &mut attr,
                bindings::ib_qp_attr_mask_IB_QP_STATE as c_int,
                &mut init,
            )
        };
        (ret == 0).then_some(attr.qp_state == bindings::ib_qp_state_IB_QPS_RTS)
    }

    /// The `struct ib_qp`, for the ULP.
    pub fn as_ptr(&self) -> *mut c_void {
        self.raw.as_ptr().cast()
    }

    pub(super) fn device_raw(&self) -> *mut bindings::ib_device {
        // SAFETY: The QP is valid until `destroy`, which takes the last use.
        unsafe { (*self.raw.as_ptr()).device }
    }

    /// Posts the atomic `op` on `remote_addr` under `rkey`, signalled (and
    /// with `IB_SEND_FENCE` if `fence`), with `req`'s own `ib_cqe` and reply
    /// buffer: [`Handler::done`] gets `req` back with the completion. On
    /// failure `req` comes back at once.
    pub fn post_atomic<T: Handler>(
        &self,
        req: Request<T>,
        op: AtomicWr,
        remote_addr: u64,
        rkey: u32,
        fence: bool,
    ) -> core::result::Result<(), (Error, Request<T>)> {
        let (dev, dma) = req.reply_dma();
        if dev != self.device_raw() {
            // A request of another device's pool: its reply is not mapped
            // for this one.
            return Err((EINVAL, req));
        }
        // SAFETY: The reply is in a mapping of its pool on `dev`, free until
        // this work request completes.
        unsafe { bindings::mlx_ext_ib_dma_sync_reply(dev, dma, false) };
        let mut sge = bindings::ib_sge {
            addr: dma,
            length: 8,
            // SAFETY: The QP and its PD are valid.
            lkey: unsafe { (*(*self.raw.as_ptr()).pd).local_dma_lkey },
        };
        // SAFETY: All-zero is a valid `ib_atomic_wr` (no next, no SGE).
        let mut wr: bindings::ib_atomic_wr = unsafe { MaybeUninit::zeroed().assume_init() };
        wr.wr.opcode = op.opcode as u32;
        wr.wr.__bindgen_anon_1.wr_cqe = req.cqe();
        wr.wr.send_flags = bindings::ib_send_flags_IB_SEND_SIGNALED
            | if fence {
                bindings::ib_send_flags_IB_SEND_FENCE
            } else {
                0
            };
        wr.wr.sg_list = &mut sge;
        wr.wr.num_sge = 1;
        wr.remote_addr = remote_addr;
        wr.rkey = rkey;
        wr.compare_add = op.compare_add;
        wr.compare_add_mask = op.compare_add_mask;
        wr.swap = op.swap;
        wr.swap_mask = op.swap_mask;
        let cqe = req.into_posted();
        // SAFETY: The QP is valid; `wr` and `sge` live across the call
        // (drivers copy them); the `ib_cqe` lives until its completion.
        let ret = to_result(unsafe { bindings::mlx_ext_ib_post_send(self.raw.as_ptr(), &wr.wr) });
        if let Err(e) = ret {
            // SAFETY: The driver refused it: it is ours again, taken back
            // once.
            return Err((e, unsafe { Request::from_posted(cqe) }));
        }
        super::request::count_posted();
        Ok(())
    }

    /// A pool for the requests posted on this QP (see
    /// [`super::request`]), with room for a first few. Process context.
    pub fn request_pool<T: Handler>(&self) -> Result<RequestPool<T>> {
        // SAFETY: The QP's device is registered and outlives the QP, whose
        // requests all complete before it is destroyed or detached.
        unsafe { RequestPool::new(self.device_raw()) }
    }

    /// Moves the QP to ERR and drains it (every work request posted on it
    /// completes or is flushed, and their callbacks return), then destroys
    /// it. A QP still in RESET (RESET to ERR is not a legal transition, and
    /// nothing can be posted in RESET) is destroyed at once. Runs once; may
    /// sleep. Does nothing to an attached QP, which is the ULP's.
    pub fn destroy(&self) {
        if !self.owned || self.destroyed.swap(true, Ordering::AcqRel) {
            return;
        }
        let qp = self.raw.as_ptr();
        // SAFETY: All-zero is a valid `ib_qp_attr`.
        let mut attr: bindings::ib_qp_attr = unsafe { MaybeUninit::zeroed().assume_init() };
        attr.qp_state = bindings::ib_qp_state_IB_QPS_ERR;
        // SAFETY: The QP is valid and not destroyed (the flag above).
        let to_err = unsafe {
            bindings::ib_modify_qp(qp, &mut attr, bindings::ib_qp_attr_mask_IB_QP_STATE as i32)
        };
        if to_err == 0 {
            // SAFETY: As above; the QP is in ERR, and its CQs (not
            // IB_POLL_DIRECT for the send CQ) are the ULP's, alive.
            unsafe { bindings::ib_drain_qp(qp) };
        }
        // SAFETY: As above; nothing completes on it afterwards.
        let ret = unsafe { bindings::mlx_ext_ib_destroy_qp(qp) };
        if ret != 0 {
            pr_warn!(
                "mlx_ext: ib_destroy_qp failed ({}); the QP is leaked\n",
                ret
            );
        }
    }
}

impl Drop for Qp {
    fn drop(&mut self) {
        self.destroy();
    }
}
