// SPDX-License-Identifier: GPL-2.0

//! Memory a ULP gave the device, read and written as a device does by DMA.
//!
//! The devices of this layer have no DMA device: with
//! `CONFIG_INFINIBAND_VIRT_DMA` the DMA addresses ULPs put in SGEs and map
//! into memory regions are kernel virtual addresses (as for rxe and siw).
//!
//! Like a device's DMA engine, these functions trust their addresses: a
//! driver may only pass an address it found in a work request or memory
//! region a ULP gave it (an SGE's `addr` under a valid lkey, a page of a
//! mapped MR, or any address under the DMA MR, which covers all memory by
//! definition), after checking the range against that region, as hardware
//! checks lkeys and rkeys. The verbs contract makes the ULP keep that memory
//! until the work request completes or the region is invalidated. This is
//! the one place where the layer's safety rests on the driver's checks and
//! the ULP's contract rather than on types, as it does for every RDMA driver.

use kernel::prelude::*;

/// Checks that `[addr, addr + len)` is a plausible kernel range.
fn range(addr: u64, len: usize) -> Result<usize> {
    let start = usize::try_from(addr).map_err(|_| EINVAL)?;
    if start == 0 || start.checked_add(len).is_none() {
        return Err(EFAULT);
    }
    Ok(start)
}

/// Copies `bytes` to DMA address `addr`.
pub fn write(addr: u64, bytes: &[u8]) -> Result {
    let start = range(addr, bytes.len())?;
    // SAFETY: per the module's contract, `[addr, addr + len)` is memory a
    // ULP gave the device for writing; the device's writes are not Rust
    // accesses of any object Rust code holds a reference to.
    unsafe { core::ptr::copy(bytes.as_ptr(), start as *mut u8, bytes.len()) };
    Ok(())
}

/// Copies from DMA address `addr` into `out`.
pub fn read(addr: u64, out: &mut [u8]) -> Result {
    let start = range(addr, out.len())?;
    // SAFETY: as for `write`, for reading.
    unsafe { core::ptr::copy(start as *const u8, out.as_mut_ptr(), out.len()) };
    Ok(())
}

/// Reads the aligned 64-bit word at `addr`, replaces it with `f(old)`, and
/// returns `old`. The caller serialises this with every other atomic it
/// executes on the word (an adapter's `IB_ATOMIC_HCA`); the CPU's own
/// accesses are not ordered with it, as with hardware.
pub fn update_u64(addr: u64, f: impl FnOnce(u64) -> u64) -> Result<u64> {
    let start = range(addr, 8)?;
    if start % 8 != 0 {
        return Err(EINVAL);
    }
    let p = start as *mut u64;
    // SAFETY: as for `write`; the address is 8-byte aligned (checked), and
    // volatile accesses keep the compiler from merging or eliding them.
    let old = unsafe { p.read_volatile() };
    // SAFETY: as above.
    unsafe { p.write_volatile(f(old)) };
    Ok(old)
}
