// SPDX-License-Identifier: GPL-2.0

//! `lock::Backend::assert_is_held`, which a backend must write (6.14:
//! "rust: sync: Add lock::Backend::assert_is_held()").

use kernel::sync::lock::Backend;

/// # Safety
///
/// Never called.
pub unsafe fn probe<B: Backend>(p: *mut B::State) {
    // SAFETY: Never called.
    unsafe { B::assert_is_held(p) }
}
