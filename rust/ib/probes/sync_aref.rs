// SPDX-License-Identifier: GPL-2.0

//! `ARef` and `AlwaysRefCounted` are in `kernel::sync::aref`: they moved
//! there from `kernel::types` after 6.12, and 7.3's `kernel::types` no
//! longer re-exports them.

use kernel::sync::aref::{ARef, AlwaysRefCounted};

/// Never called.
pub fn probe<T: AlwaysRefCounted>(r: &T) -> ARef<T> {
    ARef::from(r)
}
