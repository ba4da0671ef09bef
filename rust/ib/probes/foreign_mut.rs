// SPDX-License-Identifier: GPL-2.0

//! `ForeignOwnable` hands out `*mut c_void` (6.14, commit 14686571a914,
//! "rust: kernel: change `ForeignOwnable` pointer to mut").

use kernel::{ffi::c_void, types::ForeignOwnable};

/// Never called.
pub fn probe<T: ForeignOwnable>(v: T) -> *mut c_void {
    v.into_foreign()
}
