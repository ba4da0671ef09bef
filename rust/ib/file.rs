// SPDX-License-Identifier: GPL-2.0

//! Files served by Rust: what sysfs and debugfs directories share.
//!
//! C header: [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).

use super::bindings;
use core::{fmt, marker::PhantomData};
use kernel::{error::from_result, page::PAGE_SIZE, prelude::*};

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

/// The C callbacks of the files of a directory served by `T`.
pub(super) struct DirAdapter<T>(PhantomData<T>);

impl<T: DirOps> DirAdapter<T> {
    pub(super) const OPS: bindings::mlx_ext_file_ops = bindings::mlx_ext_file_ops {
        show: Some(Self::show_callback),
        store: Some(Self::store_callback),
    };

    /// `mlx_ext_file_ops.show`.
    ///
    /// # Safety
    ///
    /// Called by the C helpers only, with the private pointer of a live
    /// directory served by `T` and a page-sized buffer.
    unsafe extern "C" fn show_callback(
        priv_: *mut kernel::ffi::c_void,
        id: kernel::ffi::c_uint,
        buf: *mut kernel::ffi::c_char,
    ) -> isize {
        from_result(|| {
            // SAFETY: `priv_` is the `T` of a directory that is not destroyed
            // yet: destroying waits for this callback.
            let data = unsafe { &*priv_.cast::<T>() };
            // SAFETY: sysfs and the debugfs helper pass a page of `PAGE_SIZE` bytes, ours
            // until we return.
            let page = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), PAGE_SIZE) };
            let mut out = ShowBuf { buf: page, len: 0 };
            data.show(id, &mut out)?;
            // A page is far smaller than `isize::MAX`.
            Ok(out.len as isize)
        })
    }

    /// `mlx_ext_file_ops.store`.
    ///
    /// # Safety
    ///
    /// Called by the C helpers only, with the private pointer of a live
    /// directory served by `T` and `len` readable bytes at `buf`.
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
