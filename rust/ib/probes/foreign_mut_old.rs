// SPDX-License-Identifier: GPL-2.0

//! The old API of `foreign_mut.rs`: `ForeignOwnable` takes back a
//! `*const c_void` (a `*mut` one would coerce to it, so the probe is on
//! the way back).

use kernel::{ffi::c_void, types::ForeignOwnable};

/// # Safety
///
/// Never called.
pub unsafe fn probe<T: ForeignOwnable>(p: *const c_void) -> T {
    // SAFETY: Never called.
    unsafe { T::from_foreign(p) }
}
