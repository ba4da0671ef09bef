// SPDX-License-Identifier: GPL-2.0

//! Rust abstractions for the RDMA core (`ib_core`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).
//!
//! This is the only part of mlx_ext that uses the generated bindings or
//! `unsafe`: it turns ib_core's registration calls into objects that
//! unregister on drop, raw device pointers into references with a known
//! lifetime, and C error codes into [`Result`]. The feature code above it is
//! safe Rust.

mod bindings;
mod client;
pub mod debugfs;
mod device;
mod file;
pub mod sysfs;

pub use client::{Client, ClientVTable, HasClientVTable, Registration};
pub use device::Device;
pub use file::{DirOps, ShowBuf};
