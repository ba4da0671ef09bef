// SPDX-License-Identifier: GPL-2.0

//! sysfs directories below RDMA devices, with files served by Rust.
//!
//! C header: [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).
//!
//! The 6.12 kernel crate has no sysfs abstraction; the C helpers in
//! `rust/helpers/kdir.c` make the kobjects and attributes, and call back into
//! [`DirOps`] with the id each file was added with.

use super::{
    bindings,
    file::{DirAdapter, DirOps},
    Device,
};
use core::ptr::NonNull;
use kernel::{
    error::{from_err_ptr, to_result},
    prelude::*,
    str::CStr,
};

/// Where a directory goes: below a device, or in another directory.
pub trait Parent {
    /// The parent's kobject.
    #[doc(hidden)]
    fn kobj(&self) -> *mut bindings::kobject;
}

impl Parent for Device {
    fn kobj(&self) -> *mut bindings::kobject {
        Device::kobj(self)
    }
}

impl<T: DirOps> Parent for Dir<T> {
    fn kobj(&self) -> *mut bindings::kobject {
        // SAFETY: `self.raw` is a live directory (type invariant).
        unsafe { bindings::mlx_ext_kdir_kobj(self.raw.as_ptr()) }
    }
}

/// A sysfs directory whose files [`DirOps`] `T` serves. Removed on drop.
///
/// # Invariants
///
/// `raw` is a directory made by `mlx_ext_kdir_create` with `data` as its
/// private pointer and `DirAdapter::<T>::OPS` as ops, not destroyed yet.
pub struct Dir<T: DirOps> {
    raw: NonNull<bindings::mlx_ext_kdir>,
    data: KBox<T>,
}

// SAFETY: the C directory may be used from any thread; `T` is `Send + Sync`.
unsafe impl<T: DirOps> Send for Dir<T> {}
// SAFETY: as above; shared access only reads `raw` and `data`.
unsafe impl<T: DirOps> Sync for Dir<T> {}

impl<T: DirOps> Dir<T> {
    /// Creates directory `name` in `parent`, with no files yet.
    ///
    /// The parent must outlive the directory: a device does while its client
    /// data lives; a parent [`Dir`] must be dropped after it.
    pub fn new(parent: &impl Parent, name: &CStr, data: T) -> Result<Self> {
        let data = KBox::new(data, GFP_KERNEL)?;
        let priv_: *const T = &*data;
        // SAFETY: the parent's kobject is live; `name` is NUL-terminated and
        // copied; the ops are static and `priv_` stays valid until `drop`
        // destroys the directory before freeing `data`.
        let raw = from_err_ptr(unsafe {
            bindings::mlx_ext_kdir_create(
                parent.kobj(),
                name.as_char_ptr(),
                &DirAdapter::<T>::OPS,
                priv_.cast_mut().cast(),
            )
        })?;
        // INVARIANT: made just above with `data` and the adapter's ops.
        Ok(Self {
            // `from_err_ptr` only passes non-null, non-error pointers.
            raw: NonNull::new(raw).ok_or(ENOMEM)?,
            data,
        })
    }

    /// Adds file `name` with permissions `mode`, served as file `id`.
    pub fn add_file(&self, name: &CStr, mode: u16, id: u32) -> Result {
        // SAFETY: `self.raw` is live (type invariant); the name is copied.
        to_result(unsafe {
            bindings::mlx_ext_kdir_add_file(self.raw.as_ptr(), name.as_char_ptr(), mode, id)
        })
    }

    /// The data the files show.
    pub fn data(&self) -> &T {
        &self.data
    }
}

impl<T: DirOps> Drop for Dir<T> {
    fn drop(&mut self) {
        // SAFETY: `self.raw` is live (type invariant) and destroyed only here.
        // It waits for running callbacks, so `data` is unused once it returns.
        unsafe { bindings::mlx_ext_kdir_destroy(self.raw.as_ptr()) };
    }
}
