// SPDX-License-Identifier: GPL-2.0

//! mlx_ext_sim: software RDMA devices with the identities and atomic
//! behaviour of Mellanox adapters, for testing mlx_ext without hardware (as
//! netdevsim is for networking). See `Documentation/simulator.rst`.
//!
//! [`ib`] is the only module with `unsafe` (the same layer as mlx_ext's);
//! the simulator's rules (models, control syntax, the fabric) are pure Rust
//! in `core/src/sim/`, shared with the host crate and tested there.

use kernel::prelude::*;

#[path = "../core/src/atomics/mod.rs"]
pub mod atomics;
#[path = "../core/src/caps/mod.rs"]
pub mod caps;
#[path = "../core/src/errno.rs"]
pub mod errno;
pub mod ib;
#[path = "../core/src/sim/mod.rs"]
pub mod sim;
pub mod simulator;

// The pure code's errnos (the capability rules' refusals, the control
// file's), tied to this kernel's values.
crate::tie_errnos!(crate::errno);

mlx_ext_module! {
    type: MlxExtSim,
    name: "mlx_ext_sim",
    author: "mlx_ext developers",
    description: "Simulated Mellanox RDMA adapters (ConnectX-3, Connect-IB, ConnectX-4) for tests",
    license: "GPL",
}

struct MlxExtSim {
    _bus: ib::provider::bus::Bus<simulator::Simulator>,
}

impl kernel::Module for MlxExtSim {
    fn init(module: &'static ThisModule) -> Result<Self> {
        Ok(Self {
            _bus: ib::provider::bus::Bus::new(simulator::Simulator::new(module)?)?,
        })
    }
}
