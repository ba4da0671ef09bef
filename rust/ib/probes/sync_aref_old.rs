// SPDX-License-Identifier: GPL-2.0

//! The old place of `sync_aref.rs`: `ARef` and `AlwaysRefCounted` in
//! `kernel::types` (6.12).

use kernel::types::{ARef, AlwaysRefCounted};

/// Never called.
pub fn probe<T: AlwaysRefCounted>(r: &T) -> ARef<T> {
    ARef::from(r)
}
