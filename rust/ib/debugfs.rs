// SPDX-License-Identifier: GPL-2.0

//! debugfs directories with files served by Rust, for test interfaces.
//!
//! C header: [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).
//!
//! Like netdevsim's, these files are for tests and have no stable ABI. Reads
//! go through seq_file, so [`DirOps::show`] runs once per open-and-read.

use super::{
    bindings,
    file::{DirAdapter, DirOps},
};
use core::ptr::NonNull;
use kernel::{
    error::{from_err_ptr, to_result},
    prelude::*,
    str::CStr,
};

/// A directory at the debugfs root whose files [`DirOps`] `T` serves.
/// Removed on drop.
///
/// # Invariants
///
/// `raw` is a directory made by `mlx_ext_ddir_create` with `data` as its
/// private pointer and `DirAdapter::<T>::OPS` as ops, not destroyed yet.
pub struct Dir<T: DirOps> {
    raw: NonNull<bindings::mlx_ext_ddir>,
    data: KBox<T>,
}

// SAFETY: the C directory may be used from any thread; `T` is `Send + Sync`.
unsafe impl<T: DirOps> Send for Dir<T> {}
// SAFETY: as above; shared access only reads `raw` and `data`.
unsafe impl<T: DirOps> Sync for Dir<T> {}

impl<T: DirOps> Dir<T> {
    /// Creates directory `name` at the debugfs root, with no files yet.
    pub fn new(name: &CStr, data: T) -> Result<Self> {
        let data = KBox::new(data, GFP_KERNEL)?;
        let priv_: *const T = &*data;
        // SAFETY: `name` is NUL-terminated and copied; the ops are static and
        // `priv_` stays valid until `drop` destroys the directory before
        // freeing `data`.
        let raw = from_err_ptr(unsafe {
            bindings::mlx_ext_ddir_create(
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
            bindings::mlx_ext_ddir_add_file(self.raw.as_ptr(), name.as_char_ptr(), mode, id)
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
        unsafe { bindings::mlx_ext_ddir_destroy(self.raw.as_ptr()) };
    }
}
