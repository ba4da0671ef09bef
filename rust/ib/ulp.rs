// SPDX-License-Identifier: GPL-2.0

//! The client side of verbs that mlx_ext's ULP API needs (a QP it owns,
//! atomic work requests with their own `ib_cqe` and reply buffer), and the
//! API's C entry points (`include/mlx_ext/mlx_ext.h`), which
//! [`crate::export_atomic_api`] generates for an [`AtomicApi`].
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).

pub use super::request::{Completion, Gfp, Handler, Request, RequestPool};
use super::{bindings, compat, Client, Device};
use crate::atomics::wr::AtomicOp;
use core::{
    mem::MaybeUninit,
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{
    error::{from_err_ptr, to_result},
    ffi::{c_int, c_void},
    prelude::*,
    sync::{Arc, ArcBorrow},
    types::Opaque,
};

/// A protection domain a ULP passed in, borrowed for the call.
#[repr(transparent)]
pub struct Pd(Opaque<bindings::ib_pd>);

impl Pd {
    /// The device the PD belongs to.
    pub fn device(&self) -> &Device {
        // SAFETY: a ULP's PD belongs to a registered device, which outlives
        // it; its `attrs` were filled before registration (Device's
        // invariant).
        unsafe { Device::from_raw((*self.0.get()).device) }
    }
}

/// The attributes a ULP gave for a new QP: a copy mlx_ext may edit before
/// it passes them on.
pub struct QpInit(bindings::ib_qp_init_attr);

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
        // SAFETY: the helper only reads the CQ the ULP passed, if any; a
        // ULP's CQ is valid while it creates a QP with it.
        unsafe { bindings::mlx_ext_ib_cq_usable(self.0.send_cq) }
    }

    /// Whether the receive CQ does too (what `ib_drain_qp` needs of it).
    pub fn recv_cq_usable(&self) -> bool {
        // SAFETY: as above.
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

// SAFETY: verbs on one QP may be called from any thread (drivers lock their
// queues); `destroyed` is atomic.
unsafe impl Send for Qp {}
// SAFETY: as above.
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
        // SAFETY: the QP is valid while `self` lives.
        unsafe { (*self.raw.as_ptr()).qp_type == bindings::ib_qp_type_IB_QPT_RC }
    }

    /// Whether its send CQ is in the `ib_cqe` model (from `ib_alloc_cq` or
    /// the CQ pool, any polling context), which mlx_ext's work requests
    /// complete through.
    pub fn send_cq_in_cqe_model(&self) -> bool {
        // SAFETY: the QP and its send CQ are valid while `self` lives.
        unsafe { bindings::mlx_ext_ib_cq_cqe_model((*self.raw.as_ptr()).send_cq) }
    }

    /// Whether `other` completes its send work requests through the same
    /// CQ.
    pub fn shares_send_cq(&self, other: &Qp) -> bool {
        // SAFETY: both QPs are valid while they live; only the pointers
        // are read.
        unsafe { (*self.raw.as_ptr()).send_cq == (*other.raw.as_ptr()).send_cq }
    }

    /// Whether the QP is in RTS now, where the send work requests posted
    /// on it execute (`ib_query_qp`); `None` if the driver cannot say (it
    /// has no `query_qp`, or it failed). Process context: drivers may sleep
    /// to answer (mlx5 asks the firmware).
    pub fn is_in_rts(&self) -> Option<bool> {
        // SAFETY: all-zero is a valid `ib_qp_attr` and `ib_qp_init_attr`.
        let mut attr: bindings::ib_qp_attr = unsafe { MaybeUninit::zeroed().assume_init() };
        // SAFETY: as above.
        let mut init: bindings::ib_qp_init_attr = unsafe { MaybeUninit::zeroed().assume_init() };
        // SAFETY: the QP is valid until its detach returns (`attach`), and
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

    fn device_raw(&self) -> *mut bindings::ib_device {
        // SAFETY: the QP is valid until `destroy`, which takes the last use.
        unsafe { (*self.raw.as_ptr()).device }
    }

    /// Posts the atomic `op` on `remote_addr` under `rkey`, signalled (and
    /// with `IB_SEND_FENCE` if `fence`), with `req`'s own `ib_cqe` and reply
    /// buffer: [`Handler::done`] gets `req` back with the completion. On
    /// failure `req` comes back at once.
    pub fn post_atomic<T: Handler>(
        &self,
        req: Request<T>,
        op: AtomicOp,
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
        // SAFETY: the reply is in a mapping of its pool on `dev`, free until
        // this work request completes.
        unsafe { bindings::mlx_ext_ib_dma_sync_reply(dev, dma, false) };
        let (opcode, compare_add, compare_add_mask, swap, swap_mask) = op.to_wr();
        let mut sge = bindings::ib_sge {
            addr: dma,
            length: 8,
            // SAFETY: the QP and its PD are valid.
            lkey: unsafe { (*(*self.raw.as_ptr()).pd).local_dma_lkey },
        };
        // SAFETY: all-zero is a valid `ib_atomic_wr` (no next, no SGE).
        let mut wr: bindings::ib_atomic_wr = unsafe { MaybeUninit::zeroed().assume_init() };
        wr.wr.opcode = opcode as u32;
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
        wr.compare_add = compare_add;
        wr.compare_add_mask = compare_add_mask;
        wr.swap = swap;
        wr.swap_mask = swap_mask;
        let cqe = req.into_posted();
        // SAFETY: the QP is valid; `wr` and `sge` live across the call
        // (drivers copy them); the `ib_cqe` lives until its completion.
        let ret = to_result(unsafe { bindings::mlx_ext_ib_post_send(self.raw.as_ptr(), &wr.wr) });
        if let Err(e) = ret {
            // SAFETY: the driver refused it: it is ours again, taken back
            // once.
            return Err((e, unsafe { Request::from_posted(cqe) }));
        }
        super::request::count_posted();
        Ok(())
    }

    /// A pool for the requests posted on this QP (see
    /// [`super::request`]), with room for a first few. Process context.
    pub fn request_pool<T: Handler>(&self) -> Result<RequestPool<T>> {
        // SAFETY: the QP's device is registered and outlives the QP, whose
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
        // SAFETY: all-zero is a valid `ib_qp_attr`.
        let mut attr: bindings::ib_qp_attr = unsafe { MaybeUninit::zeroed().assume_init() };
        attr.qp_state = bindings::ib_qp_state_IB_QPS_ERR;
        // SAFETY: the QP is valid and not destroyed (the flag above).
        let to_err = unsafe {
            bindings::ib_modify_qp(qp, &mut attr, bindings::ib_qp_attr_mask_IB_QP_STATE as i32)
        };
        if to_err == 0 {
            // SAFETY: as above; the QP is in ERR, and its CQs (not
            // IB_POLL_DIRECT for the send CQ) are the ULP's, alive.
            unsafe { bindings::ib_drain_qp(qp) };
        }
        // SAFETY: as above; nothing completes on it afterwards.
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

/// The outcome a ULP's operation gets.
pub struct Outcome {
    /// 0 or a negative errno.
    pub status: i32,
    /// The last work completion's status (`IB_WC_SUCCESS` if none failed).
    pub wc_status: u32,
    /// The response in host order (meaningful when `status` is 0).
    pub response: u64,
    /// The 8 bytes the adapter wrote, unconverted.
    pub raw_response: u64,
    /// Work requests taken.
    pub attempts: u32,
}

/// A ULP's `struct mlx_ext_atomic`, between `mlx_ext_post_atomic` and its
/// `done` callback.
pub struct UlpOp(NonNull<bindings::mlx_ext_atomic>);

// SAFETY: the ULP hands the structure over until `done`, from any thread.
unsafe impl Send for UlpOp {}

impl UlpOp {
    /// The request the ULP filled.
    pub fn request(&self) -> crate::api::Request {
        // SAFETY: valid and not changed by the ULP while it is ours.
        let a = unsafe { self.0.as_ref() };
        crate::api::Request {
            opcode: a.opcode,
            size: a.size,
            remote_addr: a.remote_addr,
            rkey: a.rkey,
            compare_add: a.compare_add,
            compare_add_mask: a.compare_add_mask,
            swap: a.swap,
            swap_mask: a.swap_mask,
            flags: a.flags,
            reserved: a.reserved,
        }
    }

    /// Whether the ULP gave a `done` callback.
    pub fn has_done(&self) -> bool {
        // SAFETY: as above.
        unsafe { self.0.as_ref() }.done.is_some()
    }

    /// Writes the outcome and calls the ULP's `done`, which takes the
    /// structure back.
    pub fn finish(self, out: Outcome) {
        let p = self.0.as_ptr();
        // SAFETY: valid and ours until `done` is called, which is last.
        unsafe {
            (*p).status = out.status;
            (*p).wc_status = out.wc_status;
            (*p).response = out.response;
            (*p).raw_response = out.raw_response;
            (*p).attempts = out.attempts;
            if let Some(done) = (*p).done {
                done(p);
            }
        }
    }
}

/// A device's record as the API reports it (`struct mlx_ext_caps`).
pub struct Caps {
    /// `enum mlx_ext_atomic_cap` of standard atomics.
    pub atomic_cap: u32,
    /// Of masked atomics.
    pub masked_atomic_cap: u32,
    /// `enum mlx_ext_masked_mode`.
    pub masked_mode: u32,
    /// Standard atomics work through mlx_ext.
    pub standard: bool,
    /// `MLX_EXT_ATOMIC_SIZE_*` carried out.
    pub sizes: u32,
}

/// The feature behind the exported API (`include/mlx_ext/mlx_ext.h`).
///
/// # Safety
///
/// [`AtomicApi::device`] does not sleep: it runs in an RCU read-side
/// critical section, whose grace period is what keeps the client's data
/// alive while it runs.
pub unsafe trait AtomicApi: 'static {
    /// The ib_core client whose per-device data holds the records.
    type Client: Client;
    /// What the API keeps of a device, shared by its QPs: it outlives the
    /// client's data.
    type Dev: Send + Sync;
    /// mlx_ext's state of one QP; the C handle is an `Arc` of it.
    type Qp: Send + Sync;

    /// The device's API state from the client's data. Called in an RCU
    /// read-side critical section: must not sleep (the trait's safety
    /// contract).
    fn device(data: &<Self::Client as Client>::DeviceData) -> Arc<Self::Dev>;
    /// `mlx_ext_query_caps`.
    fn query(dev: &Self::Dev) -> Caps;
    /// `mlx_ext_init_qp_attr`: edits `init`'s send capabilities.
    fn init_qp_attr(dev: &Self::Dev, init: &mut QpInit, max_ops: u32) -> Result;
    /// `mlx_ext_attach_qp`, and `mlx_ext_attach_qp_group` with the
    /// group's `member`.
    fn attach_qp(
        dev: Arc<Self::Dev>,
        qp: Qp,
        flags: u32,
        member: Option<ArcBorrow<'_, Self::Qp>>,
    ) -> Result<Arc<Self::Qp>>;
    /// `mlx_ext_detach_qp`: returns once no operation of `qp` runs; the
    /// handle is dropped afterwards.
    fn detach_qp(qp: &Self::Qp);
    /// `mlx_ext_create_qp`.
    fn create_qp(dev: Arc<Self::Dev>, pd: &Pd, init: &mut QpInit) -> Result<Arc<Self::Qp>>;
    /// The QP's `struct ib_qp`.
    fn ib_qp(qp: &Self::Qp) -> &Qp;
    /// `mlx_ext_destroy_qp`: as `detach_qp`, and the QP destroyed if
    /// mlx_ext created it.
    fn destroy_qp(qp: &Self::Qp);
    /// `mlx_ext_post_atomic`: on error, `op`'s `done` is not called.
    /// `gfp` is the caller's, as it passed it.
    fn post(qp: ArcBorrow<'_, Self::Qp>, op: UlpOp, gfp: Gfp) -> Result;
}

/// The waiters `mlx_ext_atomic()` keeps for reuse (`rust/helpers/export.c`),
/// freed when this is dropped: at the module's exit, when no ULP is left
/// to have an operation pending.
/// The module owns it for its life (`Default`).
#[derive(Default)]
pub struct SyncWaiters(());

impl Drop for SyncWaiters {
    fn drop(&mut self) {
        // SAFETY: the module exits: every ULP that could call
        // mlx_ext_atomic() has gone, and with it every QP and operation.
        unsafe { bindings::mlx_ext_sync_pool_free() };
    }
}

/// `MAX_ERRNO` of `include/linux/err.h`: the last 4095 addresses are
/// error pointers.
const MAX_ERRNO: usize = 4095;

/// The entry points behind [`crate::export_atomic_api`].
pub mod entry {
    use super::*;

    /// `mlx_ext_api_version`.
    pub fn api_version() -> u32 {
        let (major, minor) = crate::api::API_VERSION;
        (major << 16) | minor
    }

    /// The API state of `dev`, while mlx_ext has the device (between its
    /// client's `add` and `remove`); `None` otherwise. Works for ULPs that
    /// are not nested ib_clients too (rdma_cm users hear of a removal after
    /// mlx_ext's `remove`): the lookup runs under RCU and `remove` takes the
    /// data out of ib_core's slot and waits for a grace period before it
    /// frees it (`rust/ib/client.rs`).
    fn device<A: AtomicApi>(dev: *mut bindings::ib_device) -> Option<Arc<A::Dev>> {
        if dev.is_null() {
            return None;
        }
        // SAFETY: the header's contract: `dev` is a device the ULP holds
        // (valid for the call); `A::device` does not sleep (the unsafe
        // trait's contract).
        unsafe { super::super::client::with_data_of::<A::Client, _>(dev, A::device) }
    }

    /// `mlx_ext_query_caps`.
    ///
    /// # Safety
    ///
    /// As the header says: `dev` a device between the ULP's add and remove,
    /// `caps` writable.
    pub unsafe fn query_caps<A: AtomicApi>(dev: *mut c_void, caps: *mut c_void) -> c_int {
        let Some(d) = device::<A>(dev.cast()) else {
            return ENODEV.to_errno();
        };
        if caps.is_null() {
            return EINVAL.to_errno();
        }
        let c = A::query(&d);
        // SAFETY: the caller's `caps` is a writable `struct mlx_ext_caps`.
        unsafe {
            caps.cast::<bindings::mlx_ext_caps>()
                .write(bindings::mlx_ext_caps {
                    atomic_cap: c.atomic_cap,
                    masked_atomic_cap: c.masked_atomic_cap,
                    masked_mode: c.masked_mode,
                    standard: u32::from(c.standard),
                    sizes: c.sizes,
                })
        };
        0
    }

    /// `mlx_ext_create_qp`.
    ///
    /// # Safety
    ///
    /// `pd` a PD of a device as for `query_caps`, `attr` a valid, writable
    /// `ib_qp_init_attr`.
    pub unsafe fn create_qp<A: AtomicApi>(pd: *mut c_void, attr: *mut c_void) -> *mut c_void {
        let err = |e: Error| e.to_ptr::<c_void>();
        if pd.is_null() || attr.is_null() {
            return err(EINVAL);
        }
        // SAFETY: a valid PD (the caller's contract); `Pd` is transparent.
        let pd = unsafe { &*pd.cast::<Pd>() };
        let Some(d) = device::<A>(pd.device().as_raw()) else {
            return err(ENODEV);
        };
        let attr = attr.cast::<bindings::ib_qp_init_attr>();
        // SAFETY: a valid `ib_qp_init_attr` (the caller's contract).
        let mut init = QpInit(unsafe { attr.read() });
        match A::create_qp(d, pd, &mut init) {
            Ok(qp) => {
                // Give back what ib_create_qp reports, as it would have.
                // SAFETY: as above.
                unsafe { (*attr).cap = init.0.cap };
                compat::into_foreign(qp)
            }
            Err(e) => err(e),
        }
    }

    /// `mlx_ext_init_qp_attr`.
    ///
    /// # Safety
    ///
    /// `dev` a device as for `query_caps`, `attr` a valid, writable
    /// `ib_qp_init_attr`.
    pub unsafe fn init_qp_attr<A: AtomicApi>(
        dev: *mut c_void,
        attr: *mut c_void,
        max_ops: u32,
    ) -> c_int {
        let Some(d) = device::<A>(dev.cast()) else {
            return ENODEV.to_errno();
        };
        if attr.is_null() {
            return EINVAL.to_errno();
        }
        let attr = attr.cast::<bindings::ib_qp_init_attr>();
        // SAFETY: a valid `ib_qp_init_attr` (the caller's contract).
        let mut init = QpInit(unsafe { attr.read() });
        match A::init_qp_attr(&d, &mut init, max_ops) {
            Ok(()) => {
                // Only the send queue's capabilities change.
                // SAFETY: as above.
                unsafe { (*attr).cap = init.0.cap };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// `mlx_ext_attach_qp`, and with a non-null `member`
    /// `mlx_ext_attach_qp_group`.
    ///
    /// # Safety
    ///
    /// `qp` a valid QP of a device as for `query_caps`, which the ULP does
    /// not destroy before it detaches the handle returned; `member` null or
    /// as `borrow`.
    pub unsafe fn attach_qp<A: AtomicApi>(
        qp: *mut c_void,
        flags: u32,
        member: *mut c_void,
    ) -> *mut c_void {
        let err = |e: Error| e.to_ptr::<c_void>();
        let Some(raw) = NonNull::new(qp.cast::<bindings::ib_qp>()) else {
            return err(EINVAL);
        };
        // SAFETY: the caller's contract.
        let qp = unsafe { Qp::attach(raw) };
        let Some(d) = device::<A>(qp.device_raw()) else {
            return err(ENODEV);
        };
        // A failed attach's ERR_PTR is no handle.
        if (member as usize) > usize::MAX - MAX_ERRNO {
            return err(EINVAL);
        }
        // SAFETY: the caller's contract.
        let member = (!member.is_null()).then(|| unsafe { borrow::<A>(member) });
        match A::attach_qp(d, qp, flags, member) {
            Ok(q) => compat::into_foreign(q),
            Err(e) => err(e),
        }
    }

    /// `mlx_ext_detach_qp`.
    ///
    /// # Safety
    ///
    /// As `borrow`; the handle is not used again.
    pub unsafe fn detach_qp<A: AtomicApi>(qp: *mut c_void) {
        // SAFETY: the caller's contract.
        unsafe { end::<A>(qp, A::detach_qp) }
    }

    /// Ends a handle with `f` (detach or destroy), then gives the ULP's
    /// reference back. The handle is borrowed while `f` waits: the `done`
    /// callbacks that post meanwhile borrow it too, and `f` returns only
    /// once the last of them has returned.
    ///
    /// # Safety
    ///
    /// As `borrow`; no thread but those callbacks uses the handle once
    /// this is called (the header's contract), and nothing does afterwards.
    unsafe fn end<A: AtomicApi>(qp: *mut c_void, f: fn(&A::Qp)) {
        if qp.is_null() {
            return;
        }
        {
            // SAFETY: the caller's contract: valid until given back below.
            let q = unsafe { borrow::<A>(qp) };
            f(&q);
        }
        // SAFETY: `into_foreign` made it; no borrow is left (`f` waited
        // for the last callback), and the caller does not use it again.
        drop(unsafe { compat::from_foreign::<Arc<A::Qp>>(qp) });
    }

    /// The `Arc` behind a handle, borrowed.
    ///
    /// # Safety
    ///
    /// `qp` came from `create_qp::<A>` and was not destroyed, and is not
    /// while the result lives (the ULP destroys a QP only once no call on it
    /// runs).
    unsafe fn borrow<'a, A: AtomicApi>(qp: *mut c_void) -> ArcBorrow<'a, A::Qp> {
        // SAFETY: the caller's contract: `into_foreign` made it, and the
        // reference it carries lives while the result does.
        unsafe { compat::borrow_foreign::<Arc<A::Qp>>(qp) }
    }

    /// `mlx_ext_qp_ib`.
    ///
    /// # Safety
    ///
    /// As `borrow`.
    pub unsafe fn qp_ib<A: AtomicApi>(qp: *mut c_void) -> *mut c_void {
        // SAFETY: the caller's contract.
        let q = unsafe { borrow::<A>(qp) };
        A::ib_qp(&q).as_ptr()
    }

    /// `mlx_ext_destroy_qp`.
    ///
    /// # Safety
    ///
    /// As `borrow`; the handle is not used again.
    pub unsafe fn destroy_qp<A: AtomicApi>(qp: *mut c_void) {
        // SAFETY: the caller's contract.
        unsafe { end::<A>(qp, A::destroy_qp) }
    }

    /// `mlx_ext_post_atomic`.
    ///
    /// # Safety
    ///
    /// As `borrow`; `op` valid and the ULP's to hand over.
    pub unsafe fn post_atomic<A: AtomicApi>(
        qp: *mut c_void,
        op: *mut c_void,
        gfp: bindings::gfp_t,
    ) -> c_int {
        let Some(op) = NonNull::new(op.cast::<bindings::mlx_ext_atomic>()) else {
            return EINVAL.to_errno();
        };
        if qp.is_null() {
            return EINVAL.to_errno();
        }
        // SAFETY: the caller's contract.
        let q = unsafe { borrow::<A>(qp) };
        match A::post(q, UlpOp(op), Gfp::from_raw(gfp)) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }
}

/// Defines the exported C functions of `include/mlx_ext/mlx_ext.h` for the
/// [`AtomicApi`] `$api` (exported by `rust/helpers/export.c`).
#[macro_export]
macro_rules! export_atomic_api {
    ($api:ty) => {
        /// `mlx_ext_api_version`.
        #[no_mangle]
        pub extern "C" fn mlx_ext_api_version() -> u32 {
            $crate::ib::ulp::entry::api_version()
        }

        /// `mlx_ext_rs_abi_check`: `crate::api::abi_check` for the C
        /// wrappers of the calls that take a structure.
        #[no_mangle]
        pub extern "C" fn mlx_ext_rs_abi_check(version: u32, size: usize, ours: usize) -> i32 {
            match $crate::api::abi_check(version, size, ours) {
                Ok(()) => 0,
                Err(r) => r.code(),
            }
        }

        /// `mlx_ext_query_caps`, called by its C wrapper once it checked
        /// the caller's header.
        ///
        /// # Safety
        ///
        /// As `include/mlx_ext/mlx_ext.h` says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_rs_query_caps(
            dev: *mut ::kernel::ffi::c_void,
            caps: *mut ::kernel::ffi::c_void,
        ) -> ::kernel::ffi::c_int {
            // SAFETY: the header's contract.
            unsafe { $crate::ib::ulp::entry::query_caps::<$api>(dev, caps) }
        }

        /// `mlx_ext_create_qp`.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_create_qp(
            pd: *mut ::kernel::ffi::c_void,
            attr: *mut ::kernel::ffi::c_void,
        ) -> *mut ::kernel::ffi::c_void {
            // SAFETY: the header's contract.
            unsafe { $crate::ib::ulp::entry::create_qp::<$api>(pd, attr) }
        }

        /// `mlx_ext_init_qp_attr`.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_init_qp_attr(
            dev: *mut ::kernel::ffi::c_void,
            attr: *mut ::kernel::ffi::c_void,
            max_ops: u32,
        ) -> ::kernel::ffi::c_int {
            // SAFETY: the header's contract.
            unsafe { $crate::ib::ulp::entry::init_qp_attr::<$api>(dev, attr, max_ops) }
        }

        /// `mlx_ext_attach_qp`.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_attach_qp(
            qp: *mut ::kernel::ffi::c_void,
            flags: u32,
        ) -> *mut ::kernel::ffi::c_void {
            // SAFETY: the header's contract.
            unsafe { $crate::ib::ulp::entry::attach_qp::<$api>(qp, flags, ::core::ptr::null_mut()) }
        }

        /// `mlx_ext_attach_qp_group`.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_attach_qp_group(
            qp: *mut ::kernel::ffi::c_void,
            flags: u32,
            member: *mut ::kernel::ffi::c_void,
        ) -> *mut ::kernel::ffi::c_void {
            // SAFETY: the header's contract.
            unsafe { $crate::ib::ulp::entry::attach_qp::<$api>(qp, flags, member) }
        }

        /// `mlx_ext_detach_qp`, called by its C wrapper once it checked
        /// the context.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_rs_detach_qp(qp: *mut ::kernel::ffi::c_void) {
            // SAFETY: the header's contract.
            unsafe { $crate::ib::ulp::entry::detach_qp::<$api>(qp) }
        }

        /// `mlx_ext_qp_ib`.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_qp_ib(
            qp: *mut ::kernel::ffi::c_void,
        ) -> *mut ::kernel::ffi::c_void {
            // SAFETY: the header's contract.
            unsafe { $crate::ib::ulp::entry::qp_ib::<$api>(qp) }
        }

        /// `mlx_ext_destroy_qp`.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_destroy_qp(qp: *mut ::kernel::ffi::c_void) {
            // SAFETY: the header's contract.
            unsafe { $crate::ib::ulp::entry::destroy_qp::<$api>(qp) }
        }

        /// `mlx_ext_post_atomic`, called by its C wrapper once it checked
        /// the caller's header, with the caller's `gfp`.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_rs_post_atomic(
            qp: *mut ::kernel::ffi::c_void,
            op: *mut ::kernel::ffi::c_void,
            gfp: ::kernel::ffi::c_uint,
        ) -> ::kernel::ffi::c_int {
            // SAFETY: the header's contract.
            unsafe { $crate::ib::ulp::entry::post_atomic::<$api>(qp, op, gfp) }
        }
    };
}

// The work-request vocabulary of the pure code (`crate::atomics::wr`) is
// what this layer writes into and reads from ib_core's structures: tie it
// to the values ib_core was built with.
const _: () = {
    assert!(bindings::MLX_EXT_API_VERSION_MAJOR == crate::api::API_VERSION.0);
    assert!(bindings::MLX_EXT_API_VERSION_MINOR == crate::api::API_VERSION.1);
    assert!(bindings::MLX_EXT_ATOMIC_FENCE == crate::api::ATOMIC_FENCE);
};

const _: () = {
    use crate::atomics::wr::{WcStatus, WrOpcode};
    assert!(WrOpcode::AtomicCmpAndSwp as u32 == bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP);
    assert!(
        WrOpcode::AtomicFetchAndAdd as u32 == bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD
    );
    assert!(
        WrOpcode::MaskedAtomicCmpAndSwp as u32
            == bindings::ib_wr_opcode_IB_WR_MASKED_ATOMIC_CMP_AND_SWP
    );
    assert!(
        WrOpcode::MaskedAtomicFetchAndAdd as u32
            == bindings::ib_wr_opcode_IB_WR_MASKED_ATOMIC_FETCH_AND_ADD
    );
    assert!(WcStatus::Success as u32 == bindings::ib_wc_status_IB_WC_SUCCESS);
    assert!(WcStatus::LocLenErr as u32 == bindings::ib_wc_status_IB_WC_LOC_LEN_ERR);
    assert!(WcStatus::LocProtErr as u32 == bindings::ib_wc_status_IB_WC_LOC_PROT_ERR);
    assert!(WcStatus::WrFlushErr as u32 == bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR);
    assert!(WcStatus::LocAccessErr as u32 == bindings::ib_wc_status_IB_WC_LOC_ACCESS_ERR);
    assert!(WcStatus::RemInvReqErr as u32 == bindings::ib_wc_status_IB_WC_REM_INV_REQ_ERR);
    assert!(WcStatus::RemAccessErr as u32 == bindings::ib_wc_status_IB_WC_REM_ACCESS_ERR);
    assert!(WcStatus::RemOpErr as u32 == bindings::ib_wc_status_IB_WC_REM_OP_ERR);
    assert!(WcStatus::RetryExcErr as u32 == bindings::ib_wc_status_IB_WC_RETRY_EXC_ERR);
    assert!(WcStatus::RnrRetryExcErr as u32 == bindings::ib_wc_status_IB_WC_RNR_RETRY_EXC_ERR);
    assert!(WcStatus::RespTimeoutErr as u32 == bindings::ib_wc_status_IB_WC_RESP_TIMEOUT_ERR);
    assert!(WcStatus::GeneralErr as u32 == bindings::ib_wc_status_IB_WC_GENERAL_ERR);
};
