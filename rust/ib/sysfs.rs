// SPDX-License-Identifier: GPL-2.0

//! sysfs directories below RDMA devices, with files served by Rust.
//!
//! C header: [`include/mlx_ext/helpers.h`](../../include/mlx_ext/helpers.h).
//!
//! The 6.12 kernel crate has no sysfs abstraction; the C helpers in
//! `rust/helpers/sysfs.c` make the kobjects and attributes, and call back into
//! [`DirOps`] with the id each file was made with. A directory's kobject is
//! made by `kobject_create_and_add`, whose release is built-in kernel code:
//! no release of ours can run after the module is gone.

use super::{
    bindings,
    file::{raw_files, DirAdapter, DirOps, File},
    Device,
};
use core::ptr::NonNull;
use kernel::{
    error::from_err_ptr,
    new_mutex,
    prelude::*,
    str::CStr,
    sync::{Arc, Mutex},
    types::Opaque,
};

/// The lockdep class of the files of one group (one kind of directory), as
/// the driver core gives each static attribute its own.
///
/// kernfs models each file's active references (held while a show or store
/// runs, drained when the file is removed) as a lock of the file's class.
/// With one class for every file of the module, a store that removes other
/// files (`vf_guid_tables` removing the `iov` tree while one of its files
/// is read) reads to lockdep as recursive locking, and a real inversion
/// between two kinds of files is invisible. Made with [`crate::attr_class`],
/// one per call site: a group's files share it.
#[repr(transparent)]
pub struct AttrClass(Opaque<bindings::lock_class_key>);

// SAFETY: lockdep only uses the key's address, from any thread.
unsafe impl Sync for AttrClass {}

impl AttrClass {
    /// An uninitialised key, as lockdep wants a static one.
    ///
    /// # Safety
    ///
    /// The result lives in a `static` (lockdep refuses keys outside static
    /// storage unless registered): use [`crate::attr_class`].
    #[doc(hidden)]
    pub const unsafe fn new() -> Self {
        Self(Opaque::uninit())
    }

    fn as_ptr(&self) -> *mut bindings::lock_class_key {
        self.0.get()
    }
}

/// Makes the `&'static` [`AttrClass`] of one group of files: one per call
/// site.
#[macro_export]
macro_rules! attr_class {
    () => {{
        static CLASS: $crate::ib::sysfs::AttrClass =
            // SAFETY: In a static, as lockdep wants.
            unsafe { $crate::ib::sysfs::AttrClass::new() };
        &CLASS
    }};
}

mod private {
    /// Keeps [`super::Parent`] to the types of this module.
    pub trait Sealed {}
}

/// Where a directory goes: below a device, or in another directory.
///
/// Sealed: [`Dir::new`] trusts the kobject it returns.
pub trait Parent: private::Sealed {
    /// The parent's kobject, live while `self` is.
    #[doc(hidden)]
    fn kobj(&self) -> *mut bindings::kobject;
}

impl private::Sealed for Device {}
impl<T: DirOps> private::Sealed for Dir<T> {}

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
/// Its files are all made with it, so a directory never changes after
/// [`Dir::new`]: sharing one between threads only shares `T`.
///
/// # Invariants
///
/// `raw` is a directory made by `mlx_ext_kdir_create` with `data` as its
/// private pointer and `DirAdapter::<T>::OPS` as ops, not destroyed yet.
pub struct Dir<T: DirOps> {
    raw: NonNull<bindings::mlx_ext_kdir>,
    data: KBox<T>,
    /// What [`Notifier`]s of the directory's files use; emptied first when
    /// the directory goes.
    live: Arc<LiveDir>,
}

/// A directory while it exists, for [`Notifier`]s.
#[pin_data]
struct LiveDir {
    #[pin]
    raw: Mutex<Option<NonNull<bindings::mlx_ext_kdir>>>,
}

// SAFETY: The pointer is only used under the lock, while the directory
// exists.
unsafe impl Send for LiveDir {}
// SAFETY: As above.
unsafe impl Sync for LiveDir {}

/// Wakes those who `poll()` one file of a [`Dir`] (`sysfs_notify`), while the
/// directory exists; does nothing afterwards. Cheap to clone.
#[derive(Clone)]
pub struct Notifier {
    live: Arc<LiveDir>,
    id: u32,
}

impl Notifier {
    /// Wakes the file's pollers. Process context (sleeps).
    pub fn notify(&self) {
        let raw = self.live.raw.lock();
        if let Some(raw) = *raw {
            // SAFETY: The directory exists while it is in the lock (`Dir`'s
            // drop takes it out, under the lock, before destroying it).
            unsafe { bindings::mlx_ext_kdir_notify(raw.as_ptr(), self.id) };
        }
    }
}

// SAFETY: A `Dir` owns its C directory, which may be destroyed from any
// thread, and a `KBox<T>` with `T: Send`.
unsafe impl<T: DirOps> Send for Dir<T> {}
// SAFETY: Through `&Dir` one can only read `raw` (to nest a directory in it,
// which the C side does under the kobject's own locks) and get `&T`, which is
// `Sync`. Nothing mutates the C directory until `drop`, which takes `&mut`.
unsafe impl<T: DirOps> Sync for Dir<T> {}

impl<T: DirOps> Dir<T> {
    /// Creates directory `name` in `parent` with `files`, served by `data`.
    ///
    /// A directory below another should be dropped before it (as sysfs
    /// wants); if it is not, removing the parent removes it from sysfs, and
    /// dropping it later only frees it.
    ///
    /// `class` is the lockdep class of the files (make it with
    /// [`crate::attr_class`]): one per kind of directory.
    pub fn new(
        parent: &impl Parent,
        name: &CStr,
        data: T,
        files: &[File<'_>],
        class: &'static AttrClass,
    ) -> Result<Self> {
        let data = KBox::new(data, GFP_KERNEL)?;
        let raw_files = raw_files(files)?;
        let priv_: *const T = &*data;
        let count = u32::try_from(raw_files.len()).map_err(|_| EINVAL)?;
        // SAFETY: The parent's kobject is live; `name` and the file names are
        // NUL-terminated and copied; the ops are static and `priv_` stays
        // valid until `drop` destroys the directory before freeing `data`;
        // `class` is static (its type's invariant).
        let raw = from_err_ptr(unsafe {
            bindings::mlx_ext_kdir_create(
                parent.kobj(),
                name.as_char_ptr(),
                &DirAdapter::<T>::OPS,
                priv_.cast_mut().cast(),
                raw_files.as_ptr(),
                count,
                class.as_ptr(),
            )
        })?;
        // `mlx_ext_kdir_create` returns a directory or an error pointer,
        // never null; `from_err_ptr` turned the errors into `Err`.
        let raw = NonNull::new(raw).ok_or(ENOMEM)?;
        let live = Arc::pin_init(
            pin_init!(LiveDir {
                raw <- new_mutex!(Some(raw), "mlx_ext::ib::sysfs::LiveDir"),
            }),
            GFP_KERNEL,
        );
        let live = match live {
            Ok(live) => live,
            Err(e) => {
                // SAFETY: Made just above, destroyed once.
                unsafe { bindings::mlx_ext_kdir_destroy(raw.as_ptr()) };
                return Err(e);
            }
        };
        // INVARIANT: Made just above with `data` and the adapter's ops.
        Ok(Self { raw, data, live })
    }

    /// Creates directory `name` in `parent` with no files of its own (it
    /// holds other directories), served by `data`. With no file, no lockdep
    /// class is needed: one key serves every such directory.
    pub fn new_empty(parent: &impl Parent, name: &CStr, data: T) -> Result<Self> {
        Self::new(parent, name, data, &[], crate::attr_class!())
    }

    /// A [`Notifier`] of file `id` of the directory.
    pub fn notifier(&self, id: u32) -> Notifier {
        Notifier {
            live: self.live.clone(),
            id,
        }
    }

    /// The data the files show.
    pub fn data(&self) -> &T {
        &self.data
    }
}

impl<T: DirOps> Drop for Dir<T> {
    fn drop(&mut self) {
        // No notifier reaches the directory from now on.
        *self.live.raw.lock() = None;
        // SAFETY: `self.raw` is live (type invariant) and destroyed only here.
        // It waits for running callbacks, so `data` is unused once it returns.
        unsafe { bindings::mlx_ext_kdir_destroy(self.raw.as_ptr()) };
    }
}
