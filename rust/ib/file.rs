// SPDX-License-Identifier: GPL-2.0

//! Files served by Rust: what sysfs and debugfs directories share.
//!
//! C header: [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).

use super::bindings;
use core::{fmt, marker::PhantomData};
use kernel::{error::from_result, page::PAGE_SIZE, prelude::*, str::CStr};

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

/// A file of a directory, given when the directory is made.
#[derive(Clone, Copy)]
pub struct File<'a> {
    /// The file's name (copied).
    pub name: &'a CStr,
    /// Its permissions: `0o444` read-only, `0o644` writable by root...
    /// Only the permission bits (`0o777`) may be set: anything else is
    /// refused with `EINVAL` (a file type would oops debugfs; sysfs's
    /// `SYSFS_PREALLOC` would hand shows an uninitialised buffer).
    pub mode: u16,
    /// What [`DirOps`] is told to say which file is read or written.
    pub id: u32,
}

/// Converts `files` for the C helpers, checking their modes. The names are
/// borrowed: the result must not outlive `files`.
pub(super) fn raw_files(files: &[File<'_>]) -> Result<KVec<bindings::mlx_ext_file>> {
    let mut raw = KVec::with_capacity(files.len(), GFP_KERNEL)?;
    for f in files {
        if f.mode & !0o777 != 0 {
            return Err(EINVAL);
        }
        raw.push(
            bindings::mlx_ext_file {
                name: f.name.as_char_ptr(),
                mode: f.mode,
                id: f.id,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(raw)
}

/// The most bytes a show may write: a page less one, as `sysfs_emit`
/// allows, since sysfs takes a full page for an overflow.
pub const SHOW_MAX: usize = PAGE_SIZE - 1;

/// The page a read fills, at most [`SHOW_MAX`] bytes; a write that does not
/// fit fails and leaves the buffer unchanged.
pub struct ShowBuf<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> ShowBuf<'a> {
    /// A buffer over `page`, of which at most [`SHOW_MAX`] bytes are used.
    pub(super) fn new(page: &'a mut [u8]) -> Self {
        let cap = page.len().min(SHOW_MAX);
        Self {
            buf: page.get_mut(..cap).unwrap_or_default(),
            len: 0,
        }
    }

    /// The bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes that can still be written.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.len)
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
            // SAFETY: sysfs and the debugfs helper pass a page of `PAGE_SIZE`
            // initialised bytes (sysfs clears it in `sysfs_kf_seq_show`, the
            // helper allocates it with `kzalloc`; `raw_files` refuses the
            // `SYSFS_PREALLOC` mode that would pass another buffer), ours
            // until we return.
            let page = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), PAGE_SIZE) };
            let mut out = ShowBuf::new(page);
            data.show(id, &mut out)?;
            // At most `SHOW_MAX`, far below `isize::MAX`.
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
            // SAFETY: As in `show_callback`.
            let data = unsafe { &*priv_.cast::<T>() };
            // SAFETY: sysfs and the debugfs helper pass `len` readable bytes,
            // ours until we return.
            let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), len) };
            data.store(id, input)?;
            // At most a page (helpers.h), far below `isize::MAX`.
            Ok(len as isize)
        })
    }
}
