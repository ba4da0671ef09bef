// SPDX-License-Identifier: GPL-2.0

//! `module!` takes `authors: [...]` (6.14, commit 38559da6afb2, "rust:
//! module: introduce `authors` key"); `author` is gone by 6.18 ("rust:
//! module: remove deprecated author key").

use kernel::prelude::*;

module! {
    type: Probe,
    name: "mlx_ext_probe",
    authors: ["mlx_ext developers"],
    description: "probe",
    license: "GPL",
}

struct Probe;

impl kernel::Module for Probe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Probe)
    }
}
