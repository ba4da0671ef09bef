// SPDX-License-Identifier: GPL-2.0

//! Must compile on every kernel mlx_ext builds on: if it does not, the
//! kernel crate cannot be used at all (another rustc, or a 6.12.y older
//! than the allocator API's backports), and the build stops instead of
//! taking every other probe's absence as an answer.

use kernel::prelude::*;

/// The kernel crate's allocator API (`KBox`, `KVec`, `GFP_KERNEL`): in
/// mainline since 6.13, in 6.12.y through stable backports.
pub fn probe() -> Result<KVec<KBox<u8>>> {
    let mut v = KVec::new();
    v.push(KBox::new(0u8, GFP_KERNEL)?, GFP_KERNEL)?;
    Ok(v)
}
