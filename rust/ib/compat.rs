// SPDX-License-Identifier: GPL-2.0

//! What differs between the kernels mlx_ext builds on, in one place.
//!
//! mlx_ext builds on 6.12.y (with the allocator backports) and on 7.x. The
//! kernel crate changed under it in between; each difference is decided
//! here, by a cfg `mlx_ext_NAME` that Kbuild sets where the probe
//! `probes/NAME.rs` compiles against the target tree (Kbuild, "Kernel
//! differences"), never by a version number. Each probe names the change
//! and the release that brought it. ib_core's differences
//! (`alloc_workqueue`, `_ib_alloc_device`, `reg_user_mr`) are decided in
//! the C helpers, from the headers.
//!
//! The rest of the crate is free of these cfgs: it calls what is here.

use kernel::{ffi::c_void, sync::LockClassKey, types::ForeignOwnable};

/// The lockdep class a lock or work item is given
/// ([`kernel::static_lock_class!`] makes one): pinned on newer kernels
/// (`probes/lock_class_pin.rs`).
#[cfg(mlx_ext_lock_class_pin)]
pub type LockClass = core::pin::Pin<&'static LockClassKey>;
/// The lockdep class a lock or work item is given
/// ([`kernel::static_lock_class!`] makes one).
#[cfg(not(mlx_ext_lock_class_pin))]
pub type LockClass = &'static LockClassKey;

/// The C `lock_class_key` of `key`, for the C helpers. Lockdep may write
/// through it: `LockClassKey` wraps the C key in an `Opaque`.
pub fn lock_class_ptr(key: LockClass) -> *mut kernel::bindings::lock_class_key {
    #[cfg(mlx_ext_lock_class_pin)]
    let key = core::pin::Pin::get_ref(key);
    core::ptr::from_ref::<LockClassKey>(key).cast_mut().cast()
}

/// Owned references to objects that C counts (`ARef`), and the trait such
/// an object implements: in `kernel::sync::aref` on newer kernels
/// (`probes/sync_aref.rs`), in `kernel::types` on 6.12.
#[cfg(mlx_ext_sync_aref)]
pub use kernel::sync::aref::{ARef, AlwaysRefCounted};
/// Owned references to objects that C counts (`ARef`), and the trait such
/// an object implements.
#[cfg(not(mlx_ext_sync_aref))]
pub use kernel::types::{ARef, AlwaysRefCounted};

/// Hands `v` over to C, as [`ForeignOwnable::into_foreign`]. The pointer is
/// mutable here on every kernel, as it is on newer ones
/// (`probes/foreign_mut.rs`).
pub fn into_foreign<T: ForeignOwnable>(v: T) -> *mut c_void {
    #[cfg(mlx_ext_foreign_mut)]
    return v.into_foreign();
    #[cfg(not(mlx_ext_foreign_mut))]
    return v.into_foreign().cast_mut();
}

/// Takes back what [`into_foreign`] handed over.
///
/// # Safety
///
/// As [`ForeignOwnable::from_foreign`]: `p` came from [`into_foreign`] for
/// a `T`, and is given back once, after every borrow of it has ended.
pub unsafe fn from_foreign<T: ForeignOwnable>(p: *mut c_void) -> T {
    #[cfg(mlx_ext_foreign_mut)]
    // SAFETY: The caller's contract, which is the trait's.
    return unsafe { T::from_foreign(p) };
    #[cfg(not(mlx_ext_foreign_mut))]
    // SAFETY: The caller's contract, which is the trait's.
    return unsafe { T::from_foreign(p.cast_const()) };
}

/// Borrows what [`into_foreign`] handed over, as [`ForeignOwnable::borrow`].
///
/// # Safety
///
/// As [`ForeignOwnable::borrow`]: `p` came from [`into_foreign`] for a `T`,
/// and is not given back to [`from_foreign`] before `'a` ends.
pub unsafe fn borrow_foreign<'a, T: ForeignOwnable>(p: *mut c_void) -> T::Borrowed<'a> {
    #[cfg(mlx_ext_foreign_mut)]
    // SAFETY: The caller's contract, which is the trait's.
    return unsafe { T::borrow(p) };
    #[cfg(not(mlx_ext_foreign_mut))]
    // SAFETY: The caller's contract, which is the trait's.
    return unsafe { T::borrow(p.cast_const()) };
}

/// The C string's pointer, in a `const fn`: `kernel::str::CStr::as_char_ptr`
/// is `const` but the `CStrExt` method that replaced it with `core::ffi::CStr`
/// is not (`probes/core_cstr.rs`).
pub const fn cstr_ptr(s: &'static kernel::str::CStr) -> *const kernel::ffi::c_char {
    // The kernel's clippy.toml asks for `as_char_ptr`, which is not `const`.
    #[cfg(mlx_ext_core_cstr)]
    #[allow(clippy::disallowed_methods)]
    return s.as_ptr().cast();
    #[cfg(not(mlx_ext_core_cstr))]
    return s.as_char_ptr();
}

/// Makes the printing macros take `{}` of the types listed, which implement
/// `core::fmt::Display`: on kernels whose macros format through
/// `kernel::fmt::Display` (`probes/kernel_display.rs`), it forwards to
/// theirs; elsewhere it expands to nothing.
#[macro_export]
macro_rules! kernel_display {
    ($($t:ty),+ $(,)?) => {
        $(
            #[cfg(mlx_ext_kernel_display)]
            impl ::kernel::fmt::Display for $t {
                fn fmt(&self, f: &mut ::kernel::fmt::Formatter<'_>) -> ::kernel::fmt::Result {
                    ::core::fmt::Display::fmt(self, f)
                }
            }
        )+
    };
}

/// The `Backend` methods of a lock that only some kernels require, written
/// inside `unsafe impl Backend for ...` of a backend whose `GuardState` is
/// `()`, from the C functions that try the lock (true if taken) and that
/// assert it is held:
/// - `try_lock` (`probes/lock_try_lock.rs`);
/// - `assert_is_held` (`probes/lock_assert_is_held.rs`).
#[macro_export]
macro_rules! lock_backend_compat {
    (try_lock: $try_lock:path, assert_is_held: $assert:path $(,)?) => {
        #[cfg(mlx_ext_lock_try_lock)]
        unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
            // SAFETY: As `lock`: the lock is initialised (the trait's
            // contract).
            unsafe { $try_lock(ptr.cast()) }.then_some(())
        }

        #[cfg(mlx_ext_lock_assert_is_held)]
        unsafe fn assert_is_held(ptr: *mut Self::State) {
            // SAFETY: As `lock`: the lock is initialised.
            unsafe { $assert(ptr.cast()) }
        }
    };
}

/// `module!` with one author: the key was `author`, newer kernels take only
/// `authors: [...]` (`probes/module_authors.rs`), so no one spelling builds
/// on both 6.12 and 7.x.
#[macro_export]
macro_rules! mlx_ext_module {
    // `tt`s, not `ident`/`literal`: 6.12's `module!` parses plain tokens,
    // and other fragments reach it wrapped in invisible groups.
    (type: $type:tt, name: $name:tt, author: $author:tt,
     description: $desc:tt, license: $license:tt $(,)?) => {
        #[cfg(not(mlx_ext_module_authors))]
        ::kernel::prelude::module! {
            type: $type,
            name: $name,
            author: $author,
            description: $desc,
            license: $license,
        }
        #[cfg(mlx_ext_module_authors)]
        ::kernel::prelude::module! {
            type: $type,
            name: $name,
            authors: [$author],
            description: $desc,
            license: $license,
        }
    };
}
