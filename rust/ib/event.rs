// SPDX-License-Identifier: GPL-2.0

//! A device's asynchronous port events (`ib_register_event_handler`), as
//! feature code takes them: an [`EventHandler`] calls [`PortEvents`] in
//! process context, and is unregistered, and waited for, when dropped.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).

use super::{bindings, compat, compat::ARef, Device};
use core::{ffi::c_void, marker::PhantomData, ptr::NonNull};
use kernel::{prelude::*, sync::Arc};

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
    /// The device, held while the handler is registered (dropped after
    /// `drop` unregistered it).
    _dev: ARef<Device>,
}

// SAFETY: Registration and unregistration may happen on any thread.
unsafe impl<T: PortEvents> Send for EventHandler<T> {}
// SAFETY: Nothing is done through `&EventHandler`.
unsafe impl<T: PortEvents> Sync for EventHandler<T> {}

impl<T: PortEvents> EventHandler<T> {
    /// Registers `target` for the port events of `dev`.
    pub fn new(dev: &ARef<Device>, target: Arc<T>) -> Result<Self> {
        let target = compat::into_foreign(target);
        // SAFETY: The device is valid, and stays so while the handler is
        // registered: the handler holds a reference to it, given back only
        // after `drop` unregistered it. `target` stays valid until then.
        let raw = kernel::error::from_err_ptr(unsafe {
            bindings::mlx_ext_events_register(dev.as_raw(), Some(Self::callback), target)
        });
        match raw.ok().and_then(NonNull::new) {
            // INVARIANT: Made just above.
            Some(raw) => Ok(Self {
                raw,
                target,
                _target: PhantomData,
                _dev: dev.clone(),
            }),
            None => {
                // SAFETY: From `into_foreign` above, given back once; no
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
        // SAFETY: Registered (type invariant), unregistered only here; returns
        // once no callback runs.
        unsafe { bindings::mlx_ext_events_unregister(self.raw.as_ptr()) };
        // SAFETY: From `into_foreign` in `new` (type invariant), given back once.
        drop(unsafe { compat::from_foreign::<Arc<T>>(self.target) });
    }
}
