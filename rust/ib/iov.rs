// SPDX-License-Identifier: GPL-2.0

//! What the VF GUID tables need of the kernel and ib_core: a delayed work
//! item, a port event handler, GuidInfoRecord queries through ib_sa, a
//! port's state, and the module parameter `sm_guid_assign`.
//!
//! C headers: [`include/rdma/ib_sa.h`](srctree/include/rdma/ib_sa.h),
//! [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).
//!
//! Every object here that calls back into feature code holds an [`Arc`] of
//! its target while it can call back, and stops calling back when it is
//! dropped: the delayed work is cancelled (and waited for), the event
//! handler unregistered (and waited for). An SA query is the exception: it
//! always calls back exactly once, a cancelled one too, so whoever submits
//! queries counts them and waits for their answers before it goes away.

use super::{bindings, compat, sync::IrqSpinLock, Device};
use crate::guid::PciVfs;
use crate::new_irq_spinlock;
use core::{ffi::c_void, marker::PhantomData, ptr::NonNull};
use kernel::{prelude::*, str::CStr, sync::Arc};

/// The module parameter `sm_guid_assign` (`rust/helpers/iov.c`).
pub fn sm_guid_assign() -> bool {
    // SAFETY: reads a module parameter.
    unsafe { bindings::mlx_ext_sm_guid_assign() }
}

/// A counted reference to a device (`ib_device_try_get`/`ib_device_put`):
/// what the objects of this module keep to call ib_core about it later.
///
/// Not `Copy`: each handle is one reference, given back on drop, and
/// `Clone` takes another. ib_core's unregistration waits for the count to
/// reach zero after its clients' `remove` (`disable_device` in
/// `drivers/infiniband/core/device.c`), so a handle kept past `remove` by
/// mistake holds the unregistration up (a hang that says where it is),
/// never lets the device be freed under it.
///
/// # Invariants
///
/// `raw` is a device on which this handle holds one registration reference.
pub struct DeviceRef {
    raw: NonNull<bindings::ib_device>,
}

// SAFETY: ib_core's calls on a device, `ib_device_put` included, may come
// from any thread.
unsafe impl Send for DeviceRef {}
// SAFETY: as above.
unsafe impl Sync for DeviceRef {}

impl Clone for DeviceRef {
    fn clone(&self) -> Self {
        // SAFETY: `raw` is valid and its count is not zero: this handle
        // holds a reference (invariant).
        unsafe { bindings::mlx_ext_ib_device_get(self.raw.as_ptr()) };
        // INVARIANT: the reference was taken above.
        Self { raw: self.raw }
    }
}

impl Drop for DeviceRef {
    fn drop(&mut self) {
        // SAFETY: gives back the reference this handle holds (invariant).
        unsafe { bindings::ib_device_put(self.raw.as_ptr()) };
    }
}

/// What [`DeviceRef::port_info`] tells of a port.
#[derive(Clone, Copy, Debug)]
pub struct PortInfo {
    /// `IB_PORT_ACTIVE`.
    pub active: bool,
    /// `IB_PORT_DOWN`: the link is down, the SM cannot reach the port.
    pub down: bool,
    /// The port's LID.
    pub lid: u32,
    /// The subnet prefix of its GIDs.
    pub subnet_prefix: u64,
}

impl DeviceRef {
    /// A reference to `dev`; `ENODEV` if it is being unregistered (its
    /// count is zero). From a client's `add` or `remove`, where ib_core
    /// holds one, it cannot fail.
    pub fn new(dev: &Device) -> Result<Self> {
        // SAFETY: `dev` is valid (its type's invariant).
        if !unsafe { bindings::mlx_ext_ib_device_try_get(dev.as_raw()) } {
            return Err(ENODEV);
        }
        // INVARIANT: the reference was taken above; `Opaque::get` is never
        // null.
        Ok(Self {
            raw: NonNull::new(dev.as_raw()).ok_or(ENODEV)?,
        })
    }

    /// The device, for as long as the handle is borrowed.
    pub fn device(&self) -> &Device {
        // SAFETY: the device is valid while this handle holds its
        // reference (invariant); `Device` is a transparent wrapper of
        // `ib_device`.
        unsafe { Device::from_raw(self.raw.as_ptr()) }
    }

    /// The GUID of InfiniBand `port`: the lower half of its GID 0 in
    /// ib_core's cache (`rdma_query_gid`), read once ib_core's refresh of
    /// the table after a GID change let it be. Sleeps.
    pub fn port_guid(&self, port: u32) -> Result<u64> {
        let mut guid = 0u64;
        // SAFETY: the device is valid (invariant); the helper writes
        // `guid` on success.
        kernel::error::to_result(unsafe {
            bindings::mlx_ext_ib_port_guid(self.raw.as_ptr(), port, &mut guid)
        })?;
        Ok(guid)
    }

    /// GID `index` of `port` as the VF GUID tree's `gids/<n>` shows it:
    /// ib_core's cached copy of the port's table (`rdma_query_gid`), or for
    /// an entry it has not (no GUID, or for a moment while ib_core
    /// refreshes the table) the port's subnet prefix and zeros; `EINVAL`
    /// past the port's table only. Does not sleep.
    pub fn port_gid(&self, port: u32, index: u32) -> Result<[u8; 16]> {
        let mut gid = [0u8; 16];
        // SAFETY: the device is valid (invariant); the helper writes 16
        // bytes into `gid`.
        kernel::error::to_result(unsafe {
            bindings::mlx_ext_ib_port_gid(self.raw.as_ptr(), port, index, gid.as_mut_ptr())
        })?;
        Ok(gid)
    }

    /// Tells the GUID-change notifiers of `include/mlx_ext/mlx_ext.h` that
    /// `function`'s GUIDs on `port` changed (`count` events so far; `up`:
    /// its base entry is valid). Process context: the notifiers may sleep.
    pub fn guid_event(&self, port: u32, function: u16, up: bool, count: u32) {
        // SAFETY: the device is valid (invariant); the helper passes it to
        // the notifiers during the call only.
        unsafe { bindings::mlx_ext_guid_notify(self.raw.as_ptr(), port, function, up, count) };
    }

    /// Sets the node or port GUID of SR-IOV VF `vf` (from 0) on `port`
    /// through the driver's `set_vf_guid` (`ib_set_vf_guid`): `EOPNOTSUPP`
    /// if it has none. Process context: the driver may sleep (mlx5 runs a
    /// firmware command).
    pub fn set_vf_guid(&self, vf: u16, port: u32, guid: u64, which: VfGuid) -> Result {
        // SAFETY: the device is valid (invariant).
        kernel::error::to_result(unsafe {
            bindings::mlx_ext_ib_set_vf_guid(
                self.raw.as_ptr(),
                kernel::ffi::c_int::from(vf),
                port,
                guid,
                which == VfGuid::Port,
            )
        })
    }

    /// The node and port GUIDs of SR-IOV VF `vf` (from 0) on `port`, from
    /// the driver's `get_vf_guid` (`ib_get_vf_guid`; mlx5 answers 0 for
    /// one never set): `EOPNOTSUPP` if it has none. Process context.
    pub fn get_vf_guids(&self, vf: u16, port: u32) -> Result<(u64, u64)> {
        let (mut node, mut port_guid) = (0u64, 0u64);
        // SAFETY: the device is valid (invariant); both outputs are ours.
        kernel::error::to_result(unsafe {
            bindings::mlx_ext_ib_get_vf_guid(
                self.raw.as_ptr(),
                kernel::ffi::c_int::from(vf),
                port,
                &mut node,
                &mut port_guid,
            )
        })?;
        Ok((node, port_guid))
    }
}

/// Which GUID of a VF's vport: its node GUID or its port GUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VfGuid {
    /// `IFLA_VF_IB_NODE_GUID`.
    Node,
    /// `IFLA_VF_IB_PORT_GUID`.
    Port,
}

impl DeviceRef {
    /// `ib_query_port`: sleeps.
    pub fn port_info(&self, port: u32) -> Result<PortInfo> {
        let mut attr = bindings::ib_port_attr::default();
        // SAFETY: the device is valid (invariant); `attr` is ours.
        kernel::error::to_result(unsafe {
            bindings::ib_query_port(self.raw.as_ptr(), port, &mut attr)
        })?;
        Ok(PortInfo {
            active: attr.state == bindings::ib_port_state_IB_PORT_ACTIVE,
            down: attr.state == bindings::ib_port_state_IB_PORT_DOWN,
            lid: attr.lid,
            subnet_prefix: attr.subnet_prefix,
        })
    }
}

/// What a [`DelayedWork`] runs.
pub trait DelayedRun: Send + Sync + 'static {
    /// Runs the work (process context; may sleep).
    fn run(this: &Arc<Self>);
}

/// Schedules a [`DelayedWork`] from anywhere, also from the code it runs;
/// does nothing once the work is dropped. Cheap to clone.
#[derive(Clone)]
pub struct Kicker(Arc<KickerInner>);

#[pin_data]
struct KickerInner {
    /// The work's C item while it exists.
    #[pin]
    raw: IrqSpinLock<Option<NonNull<bindings::mlx_ext_dwork>>>,
}

// SAFETY: the pointer is only used under the lock, while the item exists.
unsafe impl Send for KickerInner {}
// SAFETY: as above.
unsafe impl Sync for KickerInner {}

impl Kicker {
    /// A kicker of no work yet: give it to [`DelayedWork::new`].
    pub fn new() -> Result<Self> {
        Ok(Self(Arc::pin_init(
            pin_init!(KickerInner {
                raw <- new_irq_spinlock!(None, "mlx_ext::ib::iov::Kicker"),
            }),
            GFP_KERNEL,
        )?))
    }

    /// Runs the work in `delay_ms` milliseconds (or earlier, if it was due
    /// earlier). Any context.
    pub fn kick(&self, delay_ms: u64) {
        self.0.kick(delay_ms);
    }
}

impl KickerInner {
    fn kick(&self, delay_ms: u64) {
        let raw = self.raw.lock();
        if let Some(raw) = *raw {
            let ms = kernel::ffi::c_ulong::try_from(delay_ms).unwrap_or(kernel::ffi::c_ulong::MAX);
            // SAFETY: the item exists while it is in the lock (`DelayedWork`
            // takes it out, under the lock, before destroying it).
            unsafe { bindings::mlx_ext_dwork_schedule(raw.as_ptr(), ms) };
        }
    }
}

/// A delayed work item that runs `T::run`; cancelled, and waited for, when
/// dropped.
///
/// # Invariants
///
/// `raw` was made by `mlx_ext_dwork_create` with `target` as its private
/// pointer and [`Self::run_callback`] as its function; `target` came from
/// `Arc::<T>::into_foreign`, and its reference is this object's.
pub struct DelayedWork<T: DelayedRun> {
    raw: NonNull<bindings::mlx_ext_dwork>,
    kicker: Kicker,
    target: *mut c_void,
    _target: PhantomData<Arc<T>>,
}

// SAFETY: the C item may be scheduled and destroyed from any thread; `T` is
// `Send + Sync`.
unsafe impl<T: DelayedRun> Send for DelayedWork<T> {}
// SAFETY: `&DelayedWork` only schedules, which any thread may.
unsafe impl<T: DelayedRun> Sync for DelayedWork<T> {}

impl<T: DelayedRun> DelayedWork<T> {
    /// Makes the work of `target`, scheduled through `kicker` (and its
    /// clones) until it is dropped. It does not run until kicked.
    ///
    /// `name` and `key` are the item's lockdep class, one per kind of work
    /// ([`kernel::static_lock_class!`]): waiting for the item counts as
    /// taking it.
    pub fn new(
        target: Arc<T>,
        kicker: &Kicker,
        name: &'static CStr,
        key: compat::LockClass,
    ) -> Result<Self> {
        let target = compat::into_foreign(target);
        let key = compat::lock_class_ptr(key).cast();
        // SAFETY: `run_callback` takes the private pointer as the `T` of
        // `target`, whose reference this object keeps until `drop` has
        // cancelled the item. `name` and `key` are static, as lockdep
        // requires.
        let raw = unsafe {
            bindings::mlx_ext_dwork_create(
                Some(Self::run_callback),
                target,
                name.as_char_ptr(),
                key,
            )
        };
        let Some(raw) = NonNull::new(raw) else {
            // SAFETY: from `into_foreign` just above, given back once.
            drop(unsafe { compat::from_foreign::<Arc<T>>(target) });
            return Err(ENOMEM);
        };
        *kicker.0.raw.lock() = Some(raw);
        // INVARIANT: made just above.
        Ok(Self {
            raw,
            kicker: kicker.clone(),
            target,
            _target: PhantomData,
        })
    }

    /// The C item's function.
    ///
    /// # Safety
    ///
    /// Called by the C item only, with its private pointer.
    unsafe extern "C" fn run_callback(priv_: *mut c_void) {
        // SAFETY: `priv_` is the `target` of a live `DelayedWork` (its drop
        // cancels the item and waits for this call first), whose reference
        // it holds. `ArcBorrow` gives the callee an `Arc` to clone.
        let this = unsafe { compat::borrow_foreign::<Arc<T>>(priv_) };
        let arc: Arc<T> = this.into();
        T::run(&arc);
    }
}

impl<T: DelayedRun> Drop for DelayedWork<T> {
    fn drop(&mut self) {
        // No kick reaches the item from now on.
        *self.kicker.0.raw.lock() = None;
        // SAFETY: made by `mlx_ext_dwork_create` (invariant), destroyed only
        // here; nothing schedules it any more. It waits for a run in progress.
        unsafe { bindings::mlx_ext_dwork_destroy(self.raw.as_ptr()) };
        // SAFETY: from `into_foreign` in `new` (invariant), given back
        // once; the item that used it is gone.
        drop(unsafe { compat::from_foreign::<Arc<T>>(self.target) });
    }
}

/// A watch on the VFs of a device's parent (a simulated adapter's
/// `sriov_numvfs`, or a PCI PF's VFs added to and removed from the bus) that
/// kicks a [`DelayedWork`] at once when they changed; unregistered, and
/// waited for, when dropped. A PCI PF's watch keeps which VFs are on the
/// bus ([`VfWatch::pci_vfs`]).
///
/// # Invariants
///
/// `raw` was made by `mlx_ext_vf_watch_register` with `target` as its
/// private pointer; `target` came from `Arc::<KickerInner>::into_foreign`,
/// and its reference is this object's.
pub struct VfWatch {
    raw: NonNull<bindings::mlx_ext_vf_watch>,
    target: *mut c_void,
}

// SAFETY: registration and unregistration may happen on any thread.
unsafe impl Send for VfWatch {}
// SAFETY: nothing is done through `&VfWatch`.
unsafe impl Sync for VfWatch {}

impl VfWatch {
    /// Watches the parent of `dev` for `kicker`; `Ok(None)` if the parent
    /// has no VFs to watch.
    pub fn new(dev: &DeviceRef, kicker: &Kicker) -> Result<Option<Self>> {
        let target = compat::into_foreign(kicker.0.clone());
        // SAFETY: the device is valid (`DeviceRef` invariant), and so is its
        // parent, which its holder drops in the client's `remove`; `target`
        // stays valid until `drop` unregistered the watch.
        let raw = kernel::error::from_err_ptr(unsafe {
            bindings::mlx_ext_vf_watch_register(dev.raw.as_ptr(), Some(Self::callback), target)
        });
        match raw {
            // INVARIANT: made just above.
            Ok(raw) if !raw.is_null() => Ok(NonNull::new(raw).map(|raw| Self { raw, target })),
            r => {
                // SAFETY: from `into_foreign` above, given back once; no
                // watch was registered with it.
                drop(unsafe { compat::from_foreign::<Arc<KickerInner>>(target) });
                r.map(|_| None)
            }
        }
    }

    /// What a PCI PF's watch saw of its VFs; `None` for a simulated
    /// adapter's.
    pub fn pci_vfs(&self) -> Option<PciVfs> {
        let mut out = bindings::mlx_ext_pci_vfs::default();
        // SAFETY: registered (invariant), unregistered only by `drop`;
        // `out` is writable.
        let ret = unsafe { bindings::mlx_ext_vf_watch_pci_vfs(self.raw.as_ptr(), &mut out) };
        (ret == 0).then_some(PciVfs {
            present: out.present,
            first_absent: out.first_absent,
            num_vfs: out.num_vfs,
            initial: out.initial,
            enabled: out.enabled,
        })
    }

    /// The C watch's function.
    ///
    /// # Safety
    ///
    /// Called by the C watch only, with its private pointer.
    unsafe extern "C" fn callback(priv_: *mut c_void) {
        // SAFETY: `priv_` is the `target` of a live watch (its drop waits
        // for this call), kept alive by its `Arc`.
        let this = unsafe { compat::borrow_foreign::<Arc<KickerInner>>(priv_) };
        this.kick(0);
    }
}

impl Drop for VfWatch {
    fn drop(&mut self) {
        // SAFETY: registered (invariant), unregistered only here; returns
        // once no callback runs.
        unsafe { bindings::mlx_ext_vf_watch_unregister(self.raw.as_ptr()) };
        // SAFETY: from `into_foreign` in `new` (invariant), given back once.
        drop(unsafe { compat::from_foreign::<Arc<KickerInner>>(self.target) });
    }
}

/// What a [`PortEvents`] handler is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortEvent {
    /// `IB_EVENT_PORT_ACTIVE`.
    Active,
    /// `IB_EVENT_PORT_ERR`.
    Down,
    /// The port has another SM (`IB_EVENT_SM_CHANGE`), the SM asked its
    /// clients to register again (`IB_EVENT_CLIENT_REREGISTER`), or the
    /// port's LID changed (`IB_EVENT_LID_CHANGE`).
    SmChanged,
    /// The P_Keys or the GIDs changed.
    Changed,
}

/// Takes a device's port events.
pub trait PortEvents: Send + Sync + 'static {
    /// `event` happened on `port` (process context).
    fn port_event(&self, port: u32, event: PortEvent);
}

/// An ib event handler of a device that calls `T::port_event`;
/// unregistered, and waited for, when dropped.
///
/// # Invariants
///
/// `raw` was made by `mlx_ext_events_register` with `target` as its private
/// pointer; `target` came from `Arc::<T>::into_foreign`, and its reference
/// is this object's.
pub struct EventHandler<T: PortEvents> {
    raw: NonNull<bindings::mlx_ext_events>,
    target: *mut c_void,
    _target: PhantomData<Arc<T>>,
}

// SAFETY: registration and unregistration may happen on any thread.
unsafe impl<T: PortEvents> Send for EventHandler<T> {}
// SAFETY: nothing is done through `&EventHandler`.
unsafe impl<T: PortEvents> Sync for EventHandler<T> {}

impl<T: PortEvents> EventHandler<T> {
    /// Registers `target` for the port events of `dev`.
    pub fn new(dev: &DeviceRef, target: Arc<T>) -> Result<Self> {
        let target = compat::into_foreign(target);
        // SAFETY: the device is valid (`DeviceRef` invariant) and outlives
        // the handler, which its holder drops in the client's `remove`;
        // `target` stays valid until `drop` unregistered the handler.
        let raw = kernel::error::from_err_ptr(unsafe {
            bindings::mlx_ext_events_register(dev.raw.as_ptr(), Some(Self::callback), target)
        });
        match raw.ok().and_then(NonNull::new) {
            // INVARIANT: made just above.
            Some(raw) => Ok(Self {
                raw,
                target,
                _target: PhantomData,
            }),
            None => {
                // SAFETY: from `into_foreign` above, given back once; no
                // handler was registered with it.
                drop(unsafe { compat::from_foreign::<Arc<T>>(target) });
                Err(ENOMEM)
            }
        }
    }

    /// The C handler's function.
    ///
    /// # Safety
    ///
    /// Called by the C handler only, with its private pointer.
    unsafe extern "C" fn callback(priv_: *mut c_void, port: u32, event: u32) {
        // SAFETY: `priv_` is the `T` of a live handler (its drop waits for
        // this call), kept alive by its `Arc`.
        let this = unsafe { compat::borrow_foreign::<Arc<T>>(priv_) };
        let event = match event {
            bindings::ib_event_type_IB_EVENT_PORT_ACTIVE => PortEvent::Active,
            bindings::ib_event_type_IB_EVENT_PORT_ERR => PortEvent::Down,
            bindings::ib_event_type_IB_EVENT_SM_CHANGE
            | bindings::ib_event_type_IB_EVENT_CLIENT_REREGISTER
            | bindings::ib_event_type_IB_EVENT_LID_CHANGE => PortEvent::SmChanged,
            _ => PortEvent::Changed,
        };
        this.port_event(port, event);
    }
}

impl<T: PortEvents> Drop for EventHandler<T> {
    fn drop(&mut self) {
        // SAFETY: registered (invariant), unregistered only here; returns
        // once no callback runs.
        unsafe { bindings::mlx_ext_events_unregister(self.raw.as_ptr()) };
        // SAFETY: from `into_foreign` in `new` (invariant), given back once.
        drop(unsafe { compat::from_foreign::<Arc<T>>(self.target) });
    }
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
        // SAFETY: registers the helper's static client, unless it is
        // registered already (then it fails and changes nothing); `drop`
        // unregisters it.
        kernel::error::to_result(unsafe { bindings::mlx_ext_sa_register() })?;
        // INVARIANT: registered above, by this `SaClient` only.
        Ok(Self(()))
    }
}

impl Drop for SaClient {
    fn drop(&mut self) {
        // SAFETY: registered in `register`, by this `SaClient` alone. It
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
const ETIMEDOUT: i32 = 110;
const EINTR: i32 = 4;

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
// SAFETY: as above.
unsafe impl Sync for SaQuery {}

impl SaQuery {
    /// Cancels the query if its answer has not come: it then ends with
    /// `EINTR`. Any context.
    pub fn cancel(&self) {
        let done = self.state.done.lock();
        if !*done {
            // SAFETY: the callback has not started (it sets `done` under
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
    dev: &DeviceRef,
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
            done <- new_irq_spinlock!(false, "mlx_ext::ib::iov::QueryState"),
        }),
        GFP_KERNEL,
    )?;
    let ctx = KBox::new(
        QueryCtx {
            target,
            tag,
            state: state.clone(),
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
    // SAFETY: reads whether the client is registered.
    let client = unsafe { bindings::mlx_ext_sa_client() };
    if client.is_null() {
        // SAFETY: not submitted: no callback will take `ctx`.
        drop(unsafe { compat::from_foreign::<KBox<QueryCtx<T>>>(ctx) });
        return Err(ENODEV);
    }
    // SAFETY: the client is registered (and stays so until every query
    // made through it ended: unregistering waits for them), the device valid (`DeviceRef`
    // invariant) with `port` one of its ports (checked by the caller
    // when it made the tree), `raw_rec` is read during the call only;
    // ib_sa calls `callback` exactly once with `ctx` if this succeeds.
    let id = unsafe {
        bindings::ib_sa_guid_info_rec_query(
            client,
            dev.raw.as_ptr(),
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
        // SAFETY: not submitted: no callback will take `ctx`.
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
        // SAFETY: with status 0, ib_sa passes the answered record,
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
