// SPDX-License-Identifier: GPL-2.0

//! ib_core clients: code told of every RDMA device as it comes and goes.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).

use super::{bindings, compat, Device, DeviceName};
use core::{
    marker::PhantomData,
    mem::MaybeUninit,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{
    error::{from_result, to_result},
    prelude::*,
    str::CStr,
    types::Opaque,
};

/// What an ib_core client does for each device.
///
/// Implement it, and give the type its `struct ib_client` with
/// [`crate::declare_ib_client`]. ib_core never runs two of these callbacks
/// for the same device at once.
pub trait Client: HasClientVTable + 'static {
    /// What the client keeps for a device from [`Client::add`] until the
    /// device or the client goes away, when it is dropped.
    type DeviceData: Send + Sync;

    /// Called once for each device that offers kernel verbs (ib_core skips
    /// the others for clients like this one), those present at
    /// registration included.
    ///
    /// `name` is the device's name, kept up to date across renames: clone
    /// it into the data to name the device later (the name inside the
    /// device may only be read under a lock that is private to ib_core).
    /// An error leaves the device without this client: no data is kept and
    /// no `rename` or `remove` follows.
    fn add(dev: &Device, name: &DeviceName) -> Result<Self::DeviceData>;

    /// Called after the device was renamed; `name` already holds the new name.
    fn rename(_dev: &Device, _data: &Self::DeviceData, _name: &DeviceName) {}

    /// Called when the device is unregistered or the client unregisters,
    /// before `data` is dropped.
    fn remove(_dev: &Device, _data: &Self::DeviceData, _name: &DeviceName) {}
}

/// Ties a [`Client`] type to its one [`ClientVTable`].
///
/// # Safety
///
/// `vtable()` returns a static made by `ClientVTable::new::<Self>`: the
/// callbacks then store and free `Self::DeviceData` in the slot of the client
/// that is actually registered. Implement it with [`crate::declare_ib_client`].
pub unsafe trait HasClientVTable {
    /// The type's `struct ib_client`.
    fn vtable() -> &'static ClientVTable;
}

/// The `struct ib_client` of a [`Client`] type, in static memory as ib_core
/// wants it.
///
/// Made by [`crate::declare_ib_client`], registered by [`Registration`].
pub struct ClientVTable {
    raw: Opaque<bindings::ib_client>,
    registered: AtomicBool,
    /// Whether `with_data_of` may look the client's data up: set once the
    /// client is registered, cleared (and a grace period waited for) before
    /// it unregisters, so that no lookup runs while its client id may be
    /// freed and given to another client (`remove_client_id`).
    lookups: AtomicBool,
}

// SAFETY: After registration only ib_core touches `raw`, under its own locks;
// `registered` is atomic.
unsafe impl Sync for ClientVTable {}

impl ClientVTable {
    /// Builds the vtable of client `T` named `name`.
    ///
    /// Use [`crate::declare_ib_client`], which also ties it to `T`.
    pub const fn new<T: Client>(name: &'static CStr) -> Self {
        Self {
            raw: Opaque::new(bindings::ib_client {
                name: compat::cstr_ptr(name),
                add: Some(add_callback::<T>),
                remove: Some(remove_callback::<T>),
                rename: Some(rename_callback::<T>),
                // SAFETY: An all-zero `ib_client` is a valid value: null
                // pointers, no callbacks, and state ib_register_client sets up.
                ..unsafe { MaybeUninit::<bindings::ib_client>::zeroed().assume_init() }
            }),
            registered: AtomicBool::new(false),
            lookups: AtomicBool::new(false),
        }
    }

    fn as_raw(&self) -> *mut bindings::ib_client {
        self.raw.get()
    }
}

/// Gives a [`Client`] type its `struct ib_client`, named `$name` in ib_core.
///
/// ```ignore
/// declare_ib_client!(MyClient, "my_client");
/// ```
#[macro_export]
macro_rules! declare_ib_client {
    ($client:ty, $name:literal) => {
        // SAFETY: The vtable is built for `$client` itself.
        unsafe impl $crate::ib::HasClientVTable for $client {
            fn vtable() -> &'static $crate::ib::ClientVTable {
                static VTABLE: $crate::ib::ClientVTable =
                    $crate::ib::ClientVTable::new::<$client>(::kernel::c_str!($name));
                &VTABLE
            }
        }
    };
}

/// A registered ib_core client; unregisters on drop.
///
/// Unregistering calls [`Client::remove`] for every device and drops its data
/// before [`Registration`]'s drop returns.
pub struct Registration<T: Client> {
    _client: PhantomData<T>,
}

impl<T: Client> Registration<T> {
    /// Registers client `T`: [`Client::add`] runs for each present device
    /// before this returns. Fails with `EBUSY` if `T` is registered already.
    pub fn new() -> Result<Self> {
        let vtable = T::vtable();
        if vtable.registered.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        // SAFETY: The vtable is static, built for `T`, and (checked above)
        // not registered yet.
        let ret = to_result(unsafe { bindings::ib_register_client(vtable.as_raw()) });
        if ret.is_err() {
            vtable.registered.store(false, Ordering::Release);
        } else {
            vtable.lookups.store(true, Ordering::Release);
        }
        ret.map(|()| Self {
            _client: PhantomData,
        })
    }
}

impl<T: Client> Drop for Registration<T> {
    fn drop(&mut self) {
        let vtable = T::vtable();
        // Lookups end first: none that began before runs on once the
        // client id may be reused.
        vtable.lookups.store(false, Ordering::Release);
        super::sync::synchronize_rcu();
        // SAFETY: `self` exists, so `vtable` was registered by `new`.
        unsafe { bindings::ib_unregister_client(vtable.as_raw()) };
        vtable.registered.store(false, Ordering::Release);
    }
}

/// What the `ib` layer keeps in a device's client data slot.
struct Slot<T: Client> {
    name: DeviceName,
    data: T::DeviceData,
}

/// ib_client `add`: makes `T`'s data for a new device.
///
/// # Safety
///
/// Called by ib_core only, with a registered device, for the registered vtable
/// of `T`.
unsafe extern "C" fn add_callback<T: Client>(raw: *mut bindings::ib_device) -> kernel::ffi::c_int {
    from_result(|| {
        // SAFETY: ib_core passes a device whose `attrs` are filled and on
        // which `add_client_context` holds a reference until our `remove`
        // returns (or until this call returns, if it fails).
        let dev = unsafe { Device::from_raw(raw) };
        // SAFETY: ib_core calls `add` with `devices_rwsem` held, read from
        // `enable_device_and_get` and written from `ib_register_client`.
        let name = unsafe { DeviceName::new(dev) }?;
        let data = T::add(dev, &name)?;
        let slot = KBox::new(Slot::<T> { name, data }, GFP_KERNEL)?;
        // SAFETY: `dev` is valid and `T`'s vtable is registered (ib_core only
        // calls `add` for registered clients). The pointer is taken back by
        // `remove_callback`, the only other user of this slot besides
        // `rename_callback`, which ib_core never runs concurrently with it.
        unsafe {
            bindings::ib_set_client_data(
                dev.as_raw(),
                T::vtable().as_raw(),
                compat::into_foreign(slot),
            )
        };
        Ok(0)
    })
}

/// ib_client `rename`: refreshes the name copy, then tells `T`.
///
/// # Safety
///
/// Called by ib_core only, with the client data `add_callback` stored.
unsafe extern "C" fn rename_callback<T: Client>(
    raw: *mut bindings::ib_device,
    client_data: *mut kernel::ffi::c_void,
) {
    if client_data.is_null() {
        return;
    }
    // SAFETY: ib_core only calls `rename` for clients whose `add` succeeded
    // and whose `remove` has not started (it holds the device's
    // `client_data_rwsem` for reading, which `remove_client_context` takes
    // for writing before it calls `remove`).
    let dev = unsafe { Device::from_raw(raw) };
    // SAFETY: A non-null `client_data` is the `Slot<T>` `add_callback`
    // stored; it is freed only by `remove_callback`, which cannot run now
    // (see above).
    let slot = unsafe { compat::borrow_foreign::<KBox<Slot<T>>>(client_data) };
    // SAFETY: `ib_device_rename` calls `rename` with `devices_rwsem` held for
    // reading, after it changed the name.
    unsafe { slot.name.refresh(dev) };
    T::rename(dev, &slot.data, &slot.name);
}

/// ib_client `remove`: drops `T`'s data of a device going away.
///
/// # Safety
///
/// Called by ib_core only, once per successful `add`, with the client data
/// `add_callback` stored (null if it stored none).
unsafe extern "C" fn remove_callback<T: Client>(
    raw: *mut bindings::ib_device,
    client_data: *mut kernel::ffi::c_void,
) {
    if client_data.is_null() {
        return;
    }
    // SAFETY: ib_core passes the device `add_callback` succeeded on; the
    // reference `add_client_context` took keeps it valid while `remove`
    // runs, even though it may already be unregistered.
    let dev = unsafe { Device::from_raw(raw) };
    // Callers of `with_data_of` (ULPs of the API, which ib_core may tell of
    // the removal only after this returns) must not find the data from now
    // on: clear ib_core's slot (ib_core erases it itself only after
    // `remove` returns), then wait for those that found it already.
    // SAFETY: `dev` is valid and `T`'s vtable registered (ib_core calls
    // `remove` before it unregisters a client).
    unsafe {
        bindings::ib_set_client_data(dev.as_raw(), T::vtable().as_raw(), core::ptr::null_mut())
    };
    super::sync::synchronize_rcu();
    // SAFETY: A non-null `client_data` is the pointer `add_callback` stored
    // with `into_foreign`; ib_core passes it to `remove` exactly once, after
    // the last `rename` returned; none starts after it, and no reader of
    // `with_data_of` holds it any more (the grace period above).
    let slot = unsafe { compat::from_foreign::<KBox<Slot<T>>>(client_data) };
    T::remove(dev, &slot.data, &slot.name);
    drop(slot);
}

/// Runs `f` on the data client `T` keeps for `dev`, if it has some: between
/// the end of `T`'s `add` and the start of its `remove`.
///
/// The lookup and `f` run in an RCU read-side critical section, and
/// `remove_callback` takes the data out of ib_core's slot and waits for a
/// grace period before it tears the data down: a caller racing the removal
/// sees the data whole or not at all, whether or not it is an ib_client
/// nested in `T`'s add..remove window.
///
/// # Safety
///
/// `dev` is valid for the call (the caller holds the device), and `f` does
/// not sleep.
#[cfg(not(mlx_ext_provider))]
pub(super) unsafe fn with_data_of<T: Client, R>(
    dev: *mut bindings::ib_device,
    f: impl FnOnce(&T::DeviceData) -> R,
) -> Option<R> {
    let _rcu = super::sync::rcu_read_lock();
    if !T::vtable().lookups.load(Ordering::Acquire) {
        return None;
    }
    // SAFETY: `dev` is valid (the caller's contract) and the vtable
    // registered, with its client id, until a grace period after `lookups`
    // was cleared (`Registration::drop`), and this reader saw it set inside
    // its read-side critical section; the helper is an `xa_load` of the
    // client's slot.
    let slot = unsafe { bindings::mlx_ext_ib_get_client_data(dev, T::vtable().as_raw()) };
    // SAFETY: A non-null slot is the `Slot<T>` `add_callback` stored;
    // `remove_callback` clears the slot and waits for a grace period before
    // it frees it, and this reader is in a read-side critical section.
    (!slot.is_null()).then(|| f(&unsafe { compat::borrow_foreign::<KBox<Slot<T>>>(slot) }.data))
}
