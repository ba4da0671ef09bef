// SPDX-License-Identifier: GPL-2.0

//! The old API of `module_authors.rs`: `module!` takes `author`.

use kernel::prelude::*;

module! {
    type: Probe,
    name: "mlx_ext_probe",
    author: "mlx_ext developers",
    description: "probe",
    license: "GPL",
}

struct Probe;

impl kernel::Module for Probe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Probe)
    }
}
