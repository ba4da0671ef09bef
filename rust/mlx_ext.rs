// SPDX-License-Identifier: GPL-2.0

//! mlx_ext: MLNX_OFED's masked atomics, big-endian atomic replies and SR-IOV
//! VF GUID tables for upstream kernels, as an ib_core client.
//!
//! [`ib`] is the only module with `unsafe` code; above it, one `unsafe impl`
//! of its [`ib::export::AtomicApi`] trait, whose contract is stated there.
//! The pure logic shared with the host crate `mlx-ext-core` is mounted from
//! `core/src/` unchanged.

use kernel::prelude::*;

#[path = "../core/src/api.rs"]
pub mod api;
pub mod atomic_api;
#[path = "../core/src/atomics/mod.rs"]
pub mod atomics;
#[path = "../core/src/caps/mod.rs"]
pub mod caps;
pub mod dev_state;
#[path = "../core/src/errno.rs"]
pub mod errno;
#[path = "../core/src/guid/mod.rs"]
pub mod guid;
pub mod ib;
pub mod registry;
pub mod selftest;
mod ties;
pub mod vf_guids;

// The pure logic's types printed with `pr_*!` (rust/ib/compat.rs).
kernel_display!(caps::Reasons, guid::VfsChanging, guid::NoTree,);

mlx_ext_module! {
    type: MlxExt,
    name: "mlx_ext",
    author: "mlx_ext developers",
    description: "Masked atomics, big-endian atomic replies and VF GUID tables for mlx4/mlx5",
    license: "GPL",
}

/// Dropped in field order.
struct MlxExt {
    /// The debugfs test interface; the module works without it. First: its
    /// `layer_selftest` file expects the SA client below to be registered.
    _selftest: Option<ib::debugfs::Dir<selftest::Selftest>>,
    _reports: ib::Registration<registry::DeviceReports>,
    /// After the client: its devices' SA queries end before it goes.
    _sa: ib::sa::SaClient,
    /// Last: the waiters of `mlx_ext_atomic()`, free once no ULP is left.
    _sync: ib::export::SyncWaiters,
}

impl kernel::Module for MlxExt {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let sync = ib::export::SyncWaiters::new()?;
        let sa = ib::sa::SaClient::register()?;
        let selftest = selftest::Selftest::create()
            .inspect_err(|e| pr_warn!("no debugfs test interface ({:?})\n", e))
            .ok();
        Ok(Self {
            _selftest: selftest,
            _reports: ib::Registration::new()?,
            _sa: sa,
            _sync: sync,
        })
    }
}
