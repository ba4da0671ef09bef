// SPDX-License-Identifier: GPL-2.0

//! Lock classes are pinned (6.15: "rust: lockdep: Use Pin for all
//! LockClassKey usages").

use core::pin::Pin;
use kernel::sync::LockClassKey;

/// Never called.
pub fn probe() -> Pin<&'static LockClassKey> {
    kernel::static_lock_class!()
}
