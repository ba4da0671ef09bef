// SPDX-License-Identifier: GPL-2.0

//! The printing macros format `{}` through the kernel's own
//! `kernel::fmt::Display`, not `core::fmt::Display` ("rust: kernel: add
//! `fmt` module"; 7.3 rust/kernel/fmt.rs:154-161).

/// A type that implements it.
pub struct Probe;

impl kernel::fmt::Display for Probe {
    fn fmt(&self, _f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        Ok(())
    }
}
