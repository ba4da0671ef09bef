// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/mlx_ext/`: test interfaces, no stable ABI.
//!
//! `atomics_selftest` checks the masked-atomics arithmetic as compiled into
//! this module: write `SEED COUNT`, read back `SEED COUNT DIGEST`, where
//! DIGEST folds the results of COUNT generated cases of all four operations
//! ([`crate::atomics::selftest::digest`]). The VM tests compare it with the
//! digest the host computes with the bit-serial reference.

use crate::{
    atomics::selftest,
    ib::{debugfs::Dir, DirOps, ShowBuf},
};
use core::{
    fmt::Write,
    sync::atomic::{AtomicU64, Ordering},
};
use kernel::{c_str, prelude::*};

/// The most cases one read may run: a few seconds under QEMU's TCG.
const MAX_CASES: u32 = 1_000_000;

const ATOMICS_SELFTEST: u32 = 0;

/// The state of the debugfs files.
pub struct Selftest {
    /// The seed and count are separate atomics: a read racing a write may
    /// pair a new seed with an old count, which a test never does.
    seed: AtomicU64,
    count: AtomicU64,
}

impl Selftest {
    /// Creates `/sys/kernel/debug/mlx_ext/` and its files.
    pub fn create() -> Result<Dir<Self>> {
        let state = Self {
            seed: AtomicU64::new(1),
            count: AtomicU64::new(100_000),
        };
        let dir = Dir::new(c_str!("mlx_ext"), state)?;
        dir.add_file(c_str!("atomics_selftest"), 0o600, ATOMICS_SELFTEST)?;
        Ok(dir)
    }
}

impl DirOps for Selftest {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        if id != ATOMICS_SELFTEST {
            return Err(EINVAL);
        }
        let seed = self.seed.load(Ordering::Relaxed);
        let count = self.count.load(Ordering::Relaxed);
        let digest = selftest::digest(seed, u32::try_from(count).map_err(|_| EINVAL)?);
        writeln!(out, "{seed} {count} {digest:016x}").map_err(|_| ENOSPC)
    }

    fn store(&self, id: u32, data: &[u8]) -> Result {
        if id != ATOMICS_SELFTEST {
            return Err(EINVAL);
        }
        let (seed, count) = parse_seed_count(data).ok_or_else(|| {
            pr_info!("atomics_selftest: expected \"SEED COUNT\" with 1 <= COUNT <= {MAX_CASES}\n");
            EINVAL
        })?;
        self.seed.store(seed, Ordering::Relaxed);
        self.count.store(count.into(), Ordering::Relaxed);
        Ok(())
    }
}

/// Parses `SEED COUNT` in decimal, with one trailing newline allowed.
fn parse_seed_count(data: &[u8]) -> Option<(u64, u32)> {
    let text = core::str::from_utf8(data.strip_suffix(b"\n").unwrap_or(data)).ok()?;
    let mut words = text.split(' ');
    let seed = words.next()?.parse::<u64>().ok()?;
    let count = words.next()?.parse::<u32>().ok()?;
    if words.next().is_some() || count == 0 || count > MAX_CASES {
        return None;
    }
    Some((seed, count))
}
