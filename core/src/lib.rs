// SPDX-License-Identifier: GPL-2.0

//! Pure logic of mlx_ext, free of kernel types, so that it is built and tested
//! on the host with `cargo test` and compiled unchanged into `mlx_ext.ko`.
//!
//! The kernel module mounts each module below at its own crate root with
//! `#[path]` (see `rust/mlx_ext.rs`), so code here names its siblings as
//! `crate::atomics` or `crate::guid` and never through this file.

#![no_std]

pub mod api;
pub mod atomics;
pub mod caps;
pub mod errno;
pub mod guid;
pub mod sim;
