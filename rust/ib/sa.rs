// SPDX-License-Identifier: GPL-2.0

//! GuidInfoRecord queries to the subnet administrator through ib_sa, and
//! mlx_ext's registration as its client ([`SaClient`]). A query always
//! calls back exactly once, a cancelled one too, so whoever submits
//! queries counts them and waits for their answers before it goes away.
//!
//! C header: [`include/rdma/ib_sa.h`](srctree/include/rdma/ib_sa.h).

use super::{bindings, compat, compat::ARef, sync::IrqSpinLock, Device};
use crate::new_irq_spinlock;
use core::{ffi::c_void, ptr::NonNull};
use kernel::{prelude::*, sync::Arc};

/// The module parameter `sm_guid_assign` (`rust/helpers/iov.c`): whether
/// the subnet manager assigns the VFs' GUIDs.
pub fn sm_guid_assign() -> bool {
    // SAFETY: Reads a module parameter.
    unsafe { bindings::mlx_ext_sm_guid_assign() }
}

/// mlx_ext's registration as a client of ib_sa (`struct ib_sa_client`):
/// [`guid_info`] works while it lives; dropping it waits for every query
/// made through it to end. The module makes one, before its ib_core client,
/// and drops it after.
pub struct SaClient(());

impl SaClient {
    /// Registers the module's client: `EBUSY` while another `SaClient`
    /// lives (the client is one static object).
    pub fn register() -> Result<Self> {
        // SAFETY: Registers the helper's static client, unless it is
        // registered already (then it fails and changes nothing); `drop`
        // unregisters it.
        kernel::error::to_result(unsafe { bindings::mlx_ext_sa_register() })?;
        // INVARIANT: Registered above, by this `SaClient` only.
        Ok(Self(()))
    }
}

impl Drop for SaClient {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`, by this `SaClient` alone. It
        // waits for the queries.
        unsafe { bindings::mlx_ext_sa_unregister() };
    }
}

/// A GuidInfoRecord as sent and answered: its block and 8 GUIDs (host
/// order); the LID is the port's own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GuidInfo {
    /// The block number (0 to 15).
    pub block: u8,
    /// The record's GUIDs.
    pub guids: [u64; 8],
}

/// Why an SA query has no record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryError {
    /// No answer came in time (`-ETIMEDOUT`).
    TimedOut,
    /// The query was cancelled (`-EINTR`).
    Cancelled,
    /// Anything else: an SA error status (`-EINVAL`), a failed send...
    Failed,
}

/// What an SA query's submitter is told.
pub trait SaAnswer: Send + Sync + 'static {
    /// The answer to query `tag`: the record the SA answered with, or why
    /// there is none. Called exactly once per query [`guid_info`] made, in
    /// process context.
    fn guid_info_done(&self, tag: u64, result: Result<GuidInfo, QueryError>);
}

/// `ETIMEDOUT`, `EINTR`: what ib_sa calls back with for a query with no
/// answer and a cancelled one.
const ETIMEDOUT: i32 = kernel::bindings::ETIMEDOUT as i32;
const EINTR: i32 = kernel::bindings::EINTR as i32;

/// Whether a query's answer came, shared by the query and its callback.
#[pin_data]
struct QueryState {
    /// The callback ran (or is running past the point where it checked).
    #[pin]
    done: IrqSpinLock<bool>,
}

/// What a query's callback gets.
struct QueryCtx<T: SaAnswer> {
    target: Arc<T>,
    tag: u64,
    state: Arc<QueryState>,
    /// The device, held until the query's callback has run.
    _dev: ARef<Device>,
}

/// A query made by [`guid_info`], to cancel it.
pub struct SaQuery {
    id: i32,
    raw: NonNull<bindings::ib_sa_query>,
    state: Arc<QueryState>,
}

// SAFETY: `raw` is only passed to ib_sa, under `state`'s lock, while the
// query exists.
unsafe impl Send for SaQuery {}
// SAFETY: As above.
unsafe impl Sync for SaQuery {}

impl SaQuery {
    /// Cancels the query if its answer has not come: it then ends with
    /// `EINTR`. Any context.
    pub fn cancel(&self) {
        let done = self.state.done.lock();
        if !*done {
            // SAFETY: The callback has not started (it sets `done` under
            // this lock first), so ib_sa still holds the query: it frees it
            // only after the callback returns.
            unsafe { bindings::ib_sa_cancel_query(self.id, self.raw.as_ptr()) };
        }
    }
}

/// `IB_MGMT_METHOD_SET`.
const METHOD_SET: u8 = 0x02;
/// `IB_SA_METHOD_DELETE`.
const METHOD_DELETE: u8 = 0x15;

/// Sends a GuidInfoRecord SET (or, with `delete`, DELETE) of the entries
/// of `mask` (bit `i`: GUID `i` of `rec`) for `port` of `dev`, whose LID
/// is `lid`, with a timeout of `timeout_ms` (ib_sa resends every tenth
/// of it); `target.guid_info_done(tag, ..)` is called with the answer.
/// Sleeps (`GFP_KERNEL`). On error nothing was sent and nothing will be
/// called: `ENODEV` while the module's [`SaClient`] is not registered.
#[allow(clippy::too_many_arguments)]
pub fn guid_info<T: SaAnswer>(
    dev: &ARef<Device>,
    port: u32,
    lid: u16,
    delete: bool,
    rec: &GuidInfo,
    mask: u8,
    timeout_ms: u32,
    target: Arc<T>,
    tag: u64,
) -> Result<SaQuery> {
    let state = Arc::pin_init(
        pin_init!(QueryState {
            done <- new_irq_spinlock!(false, "mlx_ext::ib::sa::QueryState"),
        }),
        GFP_KERNEL,
    )?;
    let ctx = KBox::new(
        QueryCtx {
            target,
            tag,
            state: state.clone(),
            _dev: dev.clone(),
        },
        GFP_KERNEL,
    )?;
    let mut raw_rec = bindings::ib_sa_guidinfo_rec {
        lid: lid.to_be(),
        block_num: rec.block,
        ..Default::default()
    };
    // IB_SA_GUIDINFO_REC_LID | IB_SA_GUIDINFO_REC_BLOCK_NUM, then
    // IB_SA_GUIDINFO_REC_GID0 + i for each entry: IB_SA_COMP_MASK(n) is
    // bit n, big-endian.
    let mut comp: u64 = 0b11;
    for (i, g) in rec.guids.iter().enumerate() {
        if let Some(dst) = raw_rec.guid_info_list.get_mut(8 * i..8 * i + 8) {
            dst.copy_from_slice(&g.to_be_bytes());
        }
        if mask & (1 << i) != 0 {
            comp |= 1 << (4 + i);
        }
    }
    let ctx = compat::into_foreign(ctx);
    let mut query: *mut bindings::ib_sa_query = core::ptr::null_mut();
    // SAFETY: Reads whether the client is registered.
    let client = unsafe { bindings::mlx_ext_sa_client() };
    if client.is_null() {
        // SAFETY: Not submitted: no callback will take `ctx`.
        drop(unsafe { compat::from_foreign::<KBox<QueryCtx<T>>>(ctx) });
        return Err(ENODEV);
    }
    // SAFETY: The client is registered, and stays so until every query
    // made through it has ended (unregistering waits for them). The device
    // is valid until the callback has run (the query's context holds a
    // reference to it), and `port` is one of its ports
    // (checked by the caller when it made the tree). `raw_rec` is read
    // during the call only. ib_sa calls `callback` exactly once with `ctx`
    // if this succeeds.
    let id = unsafe {
        bindings::ib_sa_guid_info_rec_query(
            client,
            dev.as_raw(),
            port,
            &mut raw_rec,
            comp.to_be(),
            if delete { METHOD_DELETE } else { METHOD_SET },
            timeout_ms as kernel::ffi::c_ulong,
            kernel::bindings::GFP_KERNEL,
            Some(guid_info_callback::<T>),
            ctx,
            &mut query,
        )
    };
    if id < 0 {
        // SAFETY: Not submitted: no callback will take `ctx`.
        drop(unsafe { compat::from_foreign::<KBox<QueryCtx<T>>>(ctx) });
        return Err(Error::from_errno(id));
    }
    Ok(SaQuery {
        id,
        raw: NonNull::new(query).ok_or(EINVAL)?,
        state,
    })
}

/// ib_sa's callback of a query made by [`guid_info`].
///
/// # Safety
///
/// Called by ib_sa only, once per query, with the query's context.
unsafe extern "C" fn guid_info_callback<T: SaAnswer>(
    status: kernel::ffi::c_int,
    resp: *mut bindings::ib_sa_guidinfo_rec,
    context: *mut c_void,
) {
    // SAFETY: `context` is the `ctx` `guid_info` gave ib_sa, which calls
    // back once: it is ours again.
    let ctx = unsafe { compat::from_foreign::<KBox<QueryCtx<T>>>(context) };
    *ctx.state.done.lock() = true;
    let result = if status == -ETIMEDOUT {
        Err(QueryError::TimedOut)
    } else if status == -EINTR {
        Err(QueryError::Cancelled)
    } else if status != 0 || resp.is_null() {
        Err(QueryError::Failed)
    } else {
        // SAFETY: With status 0, ib_sa passes the answered record,
        // valid during the call.
        let r = unsafe { &*resp };
        let mut guids = [0u64; 8];
        for (i, g) in guids.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            if let Some(src) = r.guid_info_list.get(8 * i..8 * i + 8) {
                b.copy_from_slice(src);
            }
            *g = u64::from_be_bytes(b);
        }
        Ok(GuidInfo {
            block: r.block_num,
            guids,
        })
    };
    ctx.target.guid_info_done(ctx.tag, result);
}
