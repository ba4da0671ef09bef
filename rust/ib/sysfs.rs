// SPDX-License-Identifier: GPL-2.0

//! sysfs directories below RDMA devices, with files served by Rust.
//!
//! C header: [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).
//!
//! The 6.12 kernel crate has no sysfs abstraction; the C helpers in
//! `rust/helpers/kdir.c` make the kobjects and attributes, and call back into
//! [`DirOps`] with the id each file was added with.

use super::{bindings, Device};
use core::{fmt, marker::PhantomData, ptr::NonNull};
use kernel::{
    error::{from_err_ptr, from_result, to_result},
    page::PAGE_SIZE,
    prelude::*,
    str::CStr,
};

/// The contents of the files of one directory.
pub trait DirOps: Send + Sync + 'static {
    /// Writes the contents of file `id` into `out`.
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result;

    /// Takes a write of `data` to file `id`. Files are read-only unless this
    /// is implemented; a bad input must be refused with nothing changed.
    fn store(&self, _id: u32, _data: &[u8]) -> Result {
        Err(EPERM)
    }
}

/// The page a sysfs read fills; full writes fail with `fmt::Error`.
pub struct ShowBuf<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl ShowBuf<'_> {
    /// The bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `bytes`, or fails with `ENOSPC` leaving the buffer unchanged.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result {
        let end = self.len.checked_add(bytes.len()).ok_or(ENOSPC)?;
        self.buf
            .get_mut(self.len..end)
            .ok_or(ENOSPC)?
            .copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }
}

impl fmt::Write for ShowBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.write_bytes(s.as_bytes()).map_err(|_| fmt::Error)
    }
}

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

struct DirAdapter<T>(PhantomData<T>);

impl<T: DirOps> DirAdapter<T> {
    const OPS: bindings::mlx_ext_kdir_ops = bindings::mlx_ext_kdir_ops {
        show: Some(Self::show_callback),
        store: Some(Self::store_callback),
    };

    /// `mlx_ext_kdir_ops.show`.
    ///
    /// # Safety
    ///
    /// Called by the C helpers only, with the private pointer of a live
    /// `Dir<T>` and a page-sized buffer.
    unsafe extern "C" fn show_callback(
        priv_: *mut kernel::ffi::c_void,
        id: kernel::ffi::c_uint,
        buf: *mut kernel::ffi::c_char,
    ) -> isize {
        from_result(|| {
            // SAFETY: `priv_` is the `T` of a directory that is not destroyed
            // yet: destroying waits for this callback.
            let data = unsafe { &*priv_.cast::<T>() };
            // SAFETY: sysfs passes a zeroed page of `PAGE_SIZE` bytes, ours
            // until we return.
            let page = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), PAGE_SIZE) };
            let mut out = ShowBuf { buf: page, len: 0 };
            data.show(id, &mut out)?;
            // A page is far smaller than `isize::MAX`.
            Ok(out.len as isize)
        })
    }

    /// `mlx_ext_kdir_ops.store`.
    ///
    /// # Safety
    ///
    /// Called by the C helpers only, with the private pointer of a live
    /// `Dir<T>` and `len` readable bytes at `buf`.
    unsafe extern "C" fn store_callback(
        priv_: *mut kernel::ffi::c_void,
        id: kernel::ffi::c_uint,
        buf: *const kernel::ffi::c_char,
        len: usize,
    ) -> isize {
        from_result(|| {
            // SAFETY: as in `show_callback`.
            let data = unsafe { &*priv_.cast::<T>() };
            // SAFETY: sysfs passes `len` readable bytes, ours until we return.
            let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), len) };
            data.store(id, input)?;
            Ok(len as isize)
        })
    }
}
