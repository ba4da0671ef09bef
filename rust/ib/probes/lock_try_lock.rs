// SPDX-License-Identifier: GPL-2.0

//! `lock::Backend::try_lock`, which a backend must write (6.13: "rust:
//! lock: add trylock method support for lock backend").

use kernel::sync::lock::Backend;

/// # Safety
///
/// Never called.
pub unsafe fn probe<B: Backend>(p: *mut B::State) -> Option<B::GuardState> {
    // SAFETY: Never called.
    unsafe { B::try_lock(p) }
}
