// SPDX-License-Identifier: GPL-2.0

//! The old API of `kernel_display.rs`: the printing macros take `{}` of a
//! type that implements `core::fmt::Display` only.

use kernel::prelude::*;

const __LOG_PREFIX: &[u8] = b"mlx_ext_probe\0";

/// A type that implements `core::fmt::Display` only.
pub struct Probe;

impl core::fmt::Display for Probe {
    fn fmt(&self, _f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        Ok(())
    }
}

/// Never called.
pub fn probe() {
    pr_info!("{}\n", Probe);
}
