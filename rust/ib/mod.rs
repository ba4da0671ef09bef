// SPDX-License-Identifier: GPL-2.0

//! Rust abstractions for the RDMA core (`ib_core`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).
//!
//! This is the only part of mlx_ext that uses the generated bindings or
//! writes `unsafe` (the `unsafe impl` that [`crate::declare_ib_client`]
//! expands to where a client is declared is written here too): it turns ib_core's registration calls into objects that
//! unregister on drop, raw device pointers into references with a known
//! lifetime, and C error codes into [`Result`]. The feature code above it is
//! safe Rust.
//!
//! C helpers (`rust/helpers/`, declared in `include/mlx_ext/helpers.h`) are
//! for what the 6.12 kernel crate has no abstraction for (sysfs, debugfs,
//! buses, work items, module parameters) and for `static inline` functions
//! and macros, which bindgen cannot call; they are called from this layer
//! only, never from feature code. Everything else, ib_core's exported
//! functions included, is called through the generated bindings, whose
//! layouts are checked against C at compile time (see `Kbuild`).

mod bindings;
mod client;
pub mod compat;
pub mod debugfs;
mod device;
mod file;
pub mod sync;
pub mod sysfs;
pub mod values;

// The provider side, what a driver implements: mlx_ext_sim.ko only.
#[cfg(mlx_ext_provider)]
pub mod provider;

// The client side that mlx_ext.ko adds (its C helpers are linked into it
// alone): a ULP's QPs and work requests, the API's entry points, and what
// the VF GUID tables need of ports, PCI functions, events, work and ib_sa.
#[cfg(not(mlx_ext_provider))]
pub mod event;
#[cfg(not(mlx_ext_provider))]
pub mod export;
#[cfg(not(mlx_ext_provider))]
pub mod pci_iov;
#[cfg(not(mlx_ext_provider))]
mod port;
#[cfg(not(mlx_ext_provider))]
pub mod qp;
#[cfg(not(mlx_ext_provider))]
pub mod request;
#[cfg(not(mlx_ext_provider))]
pub mod sa;
#[cfg(not(mlx_ext_provider))]
pub mod work;

/// `EOPNOTSUPP`, which the 6.12 kernel crate does not name: what a driver
/// returns for an operation it does not offer.
pub fn eopnotsupp() -> kernel::error::Error {
    kernel::error::Error::from_errno(-(bindings::EOPNOTSUPP as i32))
}

/// The monotonic clock (`ktime_get_ns`), in nanoseconds: the kernel crate's
/// clock types changed between 6.12 (`Ktime`) and 6.16 (`Instant`), and
/// this is all mlx_ext reads of them.
pub fn ktime_get_ns() -> u64 {
    // SAFETY: Reads the clock; any context.
    unsafe { bindings::mlx_ext_ktime_get_ns() }
}

/// Sleeps for `ms` milliseconds (`msleep`). Process context.
pub fn msleep(ms: u32) {
    // SAFETY: A plain sleep; the callers are in process context (work
    // items, teardown), as the function's contract says.
    unsafe { bindings::msleep(ms) };
}

pub use client::{Client, ClientVTable, HasClientVTable, Registration};
pub use device::{AtomicCap, Device, DeviceName, Name};
pub use file::{DirOps, File, ShowBuf, SHOW_MAX};
#[cfg(not(mlx_ext_provider))]
pub use port::{PortInfo, VfGuid};
