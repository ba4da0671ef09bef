// SPDX-License-Identifier: GPL-2.0

//! The old API of `lock_class_pin.rs`: a lock class is a plain
//! `&'static LockClassKey`.

use kernel::sync::LockClassKey;

/// Never called.
pub fn probe() -> &'static LockClassKey {
    kernel::static_lock_class!()
}
