// SPDX-License-Identifier: GPL-2.0

//! The C entry points of mlx_ext's ULP API (`include/mlx_ext/mlx_ext.h`):
//! [`crate::export_atomic_api`] defines them for an [`AtomicApi`], the
//! feature behind them, and `rust/helpers/export.c` exports them. What
//! crosses the boundary is turned into the types of [`super::qp`] here:
//! a ULP's `struct mlx_ext_atomic` ([`UlpOp`]), its capabilities record
//! ([`Caps`]), the handle of a QP (an [`Arc`] of [`AtomicApi::Qp`]).
//!
//! C header: [`include/mlx_ext/mlx_ext.h`](../../include/mlx_ext/mlx_ext.h).

use super::qp::{Pd, Qp, QpInit};
use super::request::Gfp;
use super::{bindings, compat, Client};
use core::ptr::NonNull;
use kernel::{
    error::to_result,
    ffi::{c_int, c_void},
    prelude::*,
    sync::{Arc, ArcBorrow},
};

/// `MLX_EXT_API_VERSION`, as major and minor: the version of the header
/// these entry points implement.
pub const API_VERSION: (u32, u32) = (
    bindings::MLX_EXT_API_VERSION_MAJOR,
    bindings::MLX_EXT_API_VERSION_MINOR,
);

/// `MLX_EXT_ATOMIC_FENCE`, a flag of `struct mlx_ext_atomic`.
pub const ATOMIC_FENCE: u32 = bindings::MLX_EXT_ATOMIC_FENCE;

/// What a ULP asks for in its `struct mlx_ext_atomic`, copied out.
#[derive(Clone, Copy, Debug)]
pub struct UlpRequest {
    /// `enum mlx_ext_atomic_opcode`.
    pub opcode: u32,
    /// `MLX_EXT_ATOMIC_SIZE_*`.
    pub size: u32,
    /// The remote word's address.
    pub remote_addr: u64,
    /// Its rkey.
    pub rkey: u32,
    /// The compare value, or the addend.
    pub compare_add: u64,
    /// The compare mask, or the field boundaries.
    pub compare_add_mask: u64,
    /// The swap value.
    pub swap: u64,
    /// The swap mask.
    pub swap_mask: u64,
    /// `MLX_EXT_ATOMIC_*` flags.
    pub flags: u32,
    /// Must be zero.
    pub reserved: u32,
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

// SAFETY: The ULP hands the structure over until `done`, from any thread.
unsafe impl Send for UlpOp {}

impl UlpOp {
    /// The request the ULP filled.
    pub fn request(&self) -> UlpRequest {
        // SAFETY: Valid and not changed by the ULP while it is ours.
        let a = unsafe { self.0.as_ref() };
        UlpRequest {
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
        // SAFETY: As above.
        unsafe { self.0.as_ref() }.done.is_some()
    }

    /// Writes the outcome and calls the ULP's `done`, which takes the
    /// structure back.
    pub fn finish(self, out: Outcome) {
        let p = self.0.as_ptr();
        // SAFETY: Valid and ours until `done` is called, which is last.
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

    /// Whether a caller built against `version` of the header, with `size`
    /// bytes of a structure that is `ours` bytes here, may pass it: 0, or
    /// the reason's code that `rust/helpers/export.c` explains.
    fn abi_check(version: u32, size: usize, ours: usize) -> i32;
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

/// The waiters of `mlx_ext_atomic()` (`rust/helpers/export.c`): their slab
/// cache and the mempool that keeps some for reuse, made by [`Self::new`]
/// and destroyed when this is dropped: at the module's exit, when no ULP is
/// left to have an operation pending. The module owns it for its life.
///
/// # Invariants
///
/// At most one exists: the C side refuses to make a second pool.
pub struct SyncWaiters(());

impl SyncWaiters {
    /// Makes the cache and the pool; `EBUSY` if a `SyncWaiters` exists.
    pub fn new() -> Result<Self> {
        // SAFETY: No precondition: it refuses (`EBUSY`) while the pool
        // exists, so that `drop` destroys only the pool this one made.
        to_result(unsafe { bindings::mlx_ext_sync_pool_create() })?;
        // INVARIANT: The pool did not exist, and now is this one's.
        Ok(Self(()))
    }
}

impl Drop for SyncWaiters {
    fn drop(&mut self) {
        // SAFETY: `new` made the pool, the only one (invariant). The module
        // exits: every ULP that could call mlx_ext_atomic() has gone, and
        // with it every QP and operation.
        unsafe { bindings::mlx_ext_sync_pool_destroy() };
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
        let (major, minor) = API_VERSION;
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
        // SAFETY: The header's contract: `dev` is a device the ULP holds
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
        // SAFETY: The caller's `caps` is a writable `struct mlx_ext_caps`.
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
        // SAFETY: A valid PD (the caller's contract); `Pd` is transparent.
        let pd = unsafe { &*pd.cast::<Pd>() };
        let Some(d) = device::<A>(pd.device().as_raw()) else {
            return err(ENODEV);
        };
        let attr = attr.cast::<bindings::ib_qp_init_attr>();
        // SAFETY: A valid `ib_qp_init_attr` (the caller's contract).
        let mut init = QpInit(unsafe { attr.read() });
        match A::create_qp(d, pd, &mut init) {
            Ok(qp) => {
                // Give back what ib_create_qp reports, as it would have.
                // SAFETY: As above.
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
        // SAFETY: A valid `ib_qp_init_attr` (the caller's contract).
        let mut init = QpInit(unsafe { attr.read() });
        match A::init_qp_attr(&d, &mut init, max_ops) {
            Ok(()) => {
                // Only the send queue's capabilities change.
                // SAFETY: As above.
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
        // SAFETY: The caller's contract.
        let qp = unsafe { Qp::attach(raw) };
        let Some(d) = device::<A>(qp.device_raw()) else {
            return err(ENODEV);
        };
        // A failed attach's ERR_PTR is no handle.
        if (member as usize) > usize::MAX - MAX_ERRNO {
            return err(EINVAL);
        }
        // SAFETY: The caller's contract.
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
        // SAFETY: The caller's contract.
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
            // SAFETY: The caller's contract: valid until given back below.
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
        // SAFETY: The caller's contract: `into_foreign` made it, and the
        // reference it carries lives while the result does.
        unsafe { compat::borrow_foreign::<Arc<A::Qp>>(qp) }
    }

    /// `mlx_ext_qp_ib`.
    ///
    /// # Safety
    ///
    /// As `borrow`.
    pub unsafe fn qp_ib<A: AtomicApi>(qp: *mut c_void) -> *mut c_void {
        // SAFETY: The caller's contract.
        let q = unsafe { borrow::<A>(qp) };
        A::ib_qp(&q).as_ptr()
    }

    /// Whether mlx_ext created the QP (`mlx_ext_create_qp`), so that
    /// `mlx_ext_destroy_qp` destroys and drains it.
    ///
    /// # Safety
    ///
    /// As `borrow`.
    pub unsafe fn qp_owned<A: AtomicApi>(qp: *mut c_void) -> bool {
        // SAFETY: The caller's contract.
        let q = unsafe { borrow::<A>(qp) };
        A::ib_qp(&q).is_owned()
    }

    /// `mlx_ext_destroy_qp`.
    ///
    /// # Safety
    ///
    /// As `borrow`; the handle is not used again.
    pub unsafe fn destroy_qp<A: AtomicApi>(qp: *mut c_void) {
        // SAFETY: The caller's contract.
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
        // SAFETY: The caller's contract.
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
            $crate::ib::export::entry::api_version()
        }

        /// `mlx_ext_rs_abi_check`: the API's `AtomicApi::abi_check` for
        /// the C wrappers of the calls that take a structure.
        #[no_mangle]
        pub extern "C" fn mlx_ext_rs_abi_check(version: u32, size: usize, ours: usize) -> i32 {
            <$api as $crate::ib::export::AtomicApi>::abi_check(version, size, ours)
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
            // SAFETY: The header's contract.
            unsafe { $crate::ib::export::entry::query_caps::<$api>(dev, caps) }
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
            // SAFETY: The header's contract.
            unsafe { $crate::ib::export::entry::create_qp::<$api>(pd, attr) }
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
            // SAFETY: The header's contract.
            unsafe { $crate::ib::export::entry::init_qp_attr::<$api>(dev, attr, max_ops) }
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
            // SAFETY: The header's contract.
            unsafe {
                $crate::ib::export::entry::attach_qp::<$api>(qp, flags, ::core::ptr::null_mut())
            }
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
            // SAFETY: The header's contract.
            unsafe { $crate::ib::export::entry::attach_qp::<$api>(qp, flags, member) }
        }

        /// `mlx_ext_detach_qp`, called by its C wrapper once it checked
        /// the context.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_rs_detach_qp(qp: *mut ::kernel::ffi::c_void) {
            // SAFETY: The header's contract.
            unsafe { $crate::ib::export::entry::detach_qp::<$api>(qp) }
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
            // SAFETY: The header's contract.
            unsafe { $crate::ib::export::entry::qp_ib::<$api>(qp) }
        }

        /// `mlx_ext_destroy_qp`, called by its C wrapper once it checked
        /// the context.
        ///
        /// # Safety
        ///
        /// As the header says.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_rs_destroy_qp(qp: *mut ::kernel::ffi::c_void) {
            // SAFETY: The header's contract.
            unsafe { $crate::ib::export::entry::destroy_qp::<$api>(qp) }
        }

        /// Whether `mlx_ext_destroy_qp` would destroy the QP (mlx_ext made
        /// it) rather than detach it.
        ///
        /// # Safety
        ///
        /// As the header says of a handle.
        #[no_mangle]
        pub unsafe extern "C" fn mlx_ext_rs_qp_owned(qp: *mut ::kernel::ffi::c_void) -> bool {
            // SAFETY: The header's contract.
            unsafe { $crate::ib::export::entry::qp_owned::<$api>(qp) }
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
            // SAFETY: The header's contract.
            unsafe { $crate::ib::export::entry::post_atomic::<$api>(qp, op, gfp) }
        }
    };
}
