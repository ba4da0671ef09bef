// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/mlx_ext/`: test interfaces, no stable ABI.
//!
//! `atomics_selftest` checks the masked-atomics arithmetic as compiled into
//! this module: write `SEED COUNT`, read back `SEED COUNT DIGEST`, where
//! DIGEST folds the results of COUNT generated cases of all four operations
//! ([`crate::atomics::selftest::digest`]). The VM tests compare it with the
//! digest the host computes with the bit-serial reference.
//!
//! `show_fill` checks the `ib` layer's bound on what a show may write: write
//! `N`, and a read returns `N` bytes (`x`s ending in a newline) when they fit
//! in a show ([`crate::ib::SHOW_MAX`], a page less one), else fails with
//! `ENOSPC`.
//!
//! `layer_selftest` checks rules of the `ib` layer that no other path
//! reaches; a read runs them and shows one line each:
//! `sa_client ERRNO`: a second ib_sa client while the module's lives is
//! refused (`-16`, `EBUSY`, expected);
//! `irq_locks_out_of_order OFF ON`: two [`crate::ib::sync::IrqSpinLock`]s
//! taken in turn and released outer first: interrupts are still off while
//! the inner one is held (OFF 1), and on again after it (ON 1).
//!
//! `request_pool` shows what the ULP API's request pools
//! ([`crate::ib::request`]) did since the module loaded:
//! `chunks_made N chunks_live N taken N posted N` (work requests the
//! driver accepted). A test compares them before and
//! after a run: chunks are made per QP and per 8 operations pending at
//! once, never per operation, and none is left when the QPs are gone.

use crate::{
    atomics::selftest,
    ib::{debugfs::Dir, DirOps, File, ShowBuf},
};
use core::{
    fmt::Write,
    sync::atomic::{AtomicU64, AtomicUsize, Ordering},
};
use kernel::{c_str, page::PAGE_SIZE, prelude::*};

/// The most cases one read may run: a few seconds under QEMU's TCG.
const MAX_CASES: u32 = 1_000_000;

const ATOMICS_SELFTEST: u32 = 0;
const SHOW_FILL: u32 = 1;
const LAYER_SELFTEST: u32 = 2;
const REQUEST_POOL: u32 = 3;

const FILES: [File<'static>; 4] = [
    File {
        name: c_str!("atomics_selftest"),
        mode: 0o600,
        id: ATOMICS_SELFTEST,
    },
    File {
        name: c_str!("show_fill"),
        mode: 0o600,
        id: SHOW_FILL,
    },
    File {
        name: c_str!("layer_selftest"),
        mode: 0o400,
        id: LAYER_SELFTEST,
    },
    File {
        name: c_str!("request_pool"),
        mode: 0o400,
        id: REQUEST_POOL,
    },
];

/// The state of the debugfs files.
pub struct Selftest {
    /// The seed and count are separate atomics: a read racing a write may
    /// pair a new seed with an old count, which a test never does.
    seed: AtomicU64,
    count: AtomicU64,
    /// How many bytes `show_fill` shows.
    fill: AtomicUsize,
}

impl Selftest {
    /// Creates `/sys/kernel/debug/mlx_ext/` and its files.
    pub fn create() -> Result<Dir<Self>> {
        let state = Self {
            seed: AtomicU64::new(1),
            count: AtomicU64::new(100_000),
            fill: AtomicUsize::new(0),
        };
        Dir::new(c_str!("mlx_ext"), state, &FILES)
    }
}

impl DirOps for Selftest {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        match id {
            ATOMICS_SELFTEST => {
                let seed = self.seed.load(Ordering::Relaxed);
                let count = self.count.load(Ordering::Relaxed);
                let digest = selftest::digest(seed, u32::try_from(count).map_err(|_| EINVAL)?);
                writeln!(out, "{seed} {count} {digest:016x}").map_err(|_| ENOSPC)
            }
            SHOW_FILL => {
                // `n - 1` times `x`, then a newline.
                const XS: [u8; 64] = [b'x'; 64];
                if let Some(mut left) = self.fill.load(Ordering::Relaxed).checked_sub(1) {
                    while left > 0 {
                        let k = left.min(XS.len());
                        out.write_bytes(XS.get(..k).unwrap_or_default())?;
                        left -= k;
                    }
                    out.write_bytes(b"\n")?;
                }
                Ok(())
            }
            LAYER_SELFTEST => {
                // The module's client lives while its files do (it is
                // dropped after them): a second one must be refused.
                let errno = match crate::ib::sa::SaClient::register() {
                    Ok(_second) => 0,
                    Err(e) => e.to_errno(),
                };
                writeln!(out, "sa_client {errno}").map_err(|_| ENOSPC)?;
                let (off, on) = irq_locks_out_of_order()?;
                writeln!(
                    out,
                    "irq_locks_out_of_order {} {}",
                    u8::from(off),
                    u8::from(on)
                )
                .map_err(|_| ENOSPC)
            }
            REQUEST_POOL => {
                let s = crate::ib::request::stats();
                writeln!(
                    out,
                    "chunks_made {} chunks_live {} taken {} posted {}",
                    s.chunks_made, s.chunks_live, s.taken, s.posted
                )
                .map_err(|_| ENOSPC)
            }
            _ => Err(EINVAL),
        }
    }

    fn store(&self, id: u32, data: &[u8]) -> Result {
        match id {
            ATOMICS_SELFTEST => {
                let (seed, count) = parse_seed_count(data).ok_or_else(|| {
                    pr_info!(
                        "atomics_selftest: expected \"SEED COUNT\" with 1 <= COUNT <= {MAX_CASES}\n"
                    );
                    EINVAL
                })?;
                self.seed.store(seed, Ordering::Relaxed);
                self.count.store(count.into(), Ordering::Relaxed);
                Ok(())
            }
            SHOW_FILL => {
                let n = parse_decimal(data)
                    .filter(|&n| n <= PAGE_SIZE)
                    .ok_or_else(|| {
                        pr_info!("show_fill: expected a byte count from 0 to {PAGE_SIZE}\n");
                        EINVAL
                    })?;
                self.fill.store(n, Ordering::Relaxed);
                Ok(())
            }
            _ => Err(EINVAL),
        }
    }
}

/// Parses one decimal number, with one trailing newline allowed.
fn parse_decimal(data: &[u8]) -> Option<usize> {
    let text = core::str::from_utf8(data.strip_suffix(b"\n").unwrap_or(data)).ok()?;
    text.parse().ok()
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

/// Takes two IRQ-safe spinlocks in turn and releases the outer one first:
/// whether interrupts were still off with the inner one held, and on again
/// after it. From process context with interrupts on (a debugfs read).
fn irq_locks_out_of_order() -> Result<(bool, bool)> {
    let outer = KBox::pin_init(
        crate::new_irq_spinlock!((), "mlx_ext::selftest::outer"),
        GFP_KERNEL,
    )?;
    let inner = KBox::pin_init(
        crate::new_irq_spinlock!((), "mlx_ext::selftest::inner"),
        GFP_KERNEL,
    )?;
    let a = outer.lock();
    let b = inner.lock();
    drop(a);
    let off = crate::ib::sync::irqs_disabled();
    drop(b);
    Ok((off, !crate::ib::sync::irqs_disabled()))
}
