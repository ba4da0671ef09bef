// SPDX-License-Identifier: GPL-2.0

//! debugfs directories with files served by Rust, for test interfaces.
//!
//! C header: [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).
//!
//! Like netdevsim's, these files are for tests and have no stable ABI. Reads
//! go through seq_file, so [`DirOps::show`] runs once per open-and-read. An
//! open file pins the module (`fops.owner`): `rmmod` is refused (`EBUSY`)
//! until it is closed.

use super::file::ShowBuf;
use super::{
    bindings,
    file::{raw_files, DirAdapter, DirOps, File},
};
use core::ptr::NonNull;
use kernel::{error::from_err_ptr, prelude::*, str::CStr, sync::Arc};

/// A directory whose files [`DirOps`] `T` serves, at the debugfs root or in
/// a [`Root`]. Removed on drop.
///
/// Its files are all made with it, so a directory never changes after
/// [`Dir::new`]: sharing one between threads only shares `T`.
///
/// # Invariants
///
/// `raw` is a directory made by `mlx_ext_ddir_create` with `data` as its
/// private pointer and `DirAdapter::<T>::OPS` as ops, not destroyed yet.
pub struct Dir<T: DirOps> {
    raw: NonNull<bindings::mlx_ext_ddir>,
    data: KBox<T>,
    /// The directory it is in, which must outlive it: dropped after it.
    _parent: Option<Arc<Root>>,
}

// SAFETY: A `Dir` owns its C directory, which may be destroyed from any
// thread, and a `KBox<T>` with `T: Send`.
unsafe impl<T: DirOps> Send for Dir<T> {}
// SAFETY: Through `&Dir` one can only get `&T`, which is `Sync`. Nothing
// mutates the C directory until `drop`, which takes `&mut`.
unsafe impl<T: DirOps> Sync for Dir<T> {}

impl<T: DirOps> Dir<T> {
    /// Creates directory `name` at the debugfs root with `files`, served by
    /// `data`.
    pub fn new(name: &CStr, data: T, files: &[File<'_>]) -> Result<Self> {
        Self::create(None, name, data, files)
    }

    /// Creates directory `name` in `parent`, which it keeps until dropped.
    pub fn new_in(parent: &Arc<Root>, name: &CStr, data: T, files: &[File<'_>]) -> Result<Self> {
        Self::create(Some(parent.clone()), name, data, files)
    }

    fn create(parent: Option<Arc<Root>>, name: &CStr, data: T, files: &[File<'_>]) -> Result<Self> {
        let parent_raw = parent
            .as_ref()
            .map_or(core::ptr::null_mut(), |p| p.0.raw.as_ptr());
        let data = KBox::new(data, GFP_KERNEL)?;
        let raw_files = raw_files(files)?;
        let priv_: *const T = &*data;
        let count = u32::try_from(raw_files.len()).map_err(|_| EINVAL)?;
        // SAFETY: The parent, if any, is live (it is kept until `drop`);
        // `name` and the file names are NUL-terminated and copied;
        // the ops are static and `priv_` stays valid until `drop` destroys
        // the directory before freeing `data`.
        let raw = from_err_ptr(unsafe {
            bindings::mlx_ext_ddir_create(
                parent_raw,
                name.as_char_ptr(),
                &DirAdapter::<T>::OPS,
                priv_.cast_mut().cast(),
                raw_files.as_ptr(),
                count,
            )
        })?;
        // INVARIANT: Made just above with `data` and the adapter's ops.
        Ok(Self {
            // `mlx_ext_ddir_create` returns a directory or an error pointer,
            // never null; `from_err_ptr` turned the errors into `Err`.
            raw: NonNull::new(raw).ok_or(ENOMEM)?,
            data,
            _parent: parent,
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

/// An empty directory at the debugfs root, to put [`Dir`]s in; removed when
/// the last of them and the last reference are gone.
pub struct Root(Dir<NoFiles>);

/// The contents of a [`Root`]: no files.
pub struct NoFiles;

impl DirOps for NoFiles {
    fn show(&self, _id: u32, _out: &mut ShowBuf<'_>) -> Result {
        Err(EINVAL)
    }
}

impl Root {
    /// Creates directory `name` at the debugfs root.
    pub fn new(name: &CStr) -> Result<Arc<Self>> {
        Ok(Arc::new(Self(Dir::new(name, NoFiles, &[])?), GFP_KERNEL)?)
    }
}
