// SPDX-License-Identifier: GPL-2.0

//! Memory a ULP gave the device, read and written as a device does by DMA.
//!
//! The devices of this layer have no DMA device: with
//! `CONFIG_INFINIBAND_VIRT_DMA` the DMA addresses ULPs put in SGEs and map
//! into memory regions are kernel virtual addresses (as for rxe and siw).
//!
//! A driver reaches that memory only through a [`DmaRange`], which only
//! this layer makes, from what a ULP handed over: the bytes of an SGE of a
//! work request it posted ([`super::Sge::dma`]), or bytes of an FRWR region
//! it mapped with `ib_map_mr_sg`, inside the mapping ([`MappedPages::span`]).
//! A driver narrows a range ([`DmaRange::sub`]) but cannot make one from an
//! integer, so no address it computes can leave the memory a ULP gave it.
//!
//! What the types do not prove is the driver's part, as on hardware: that
//! the ULP's key allowed the access (lkey, rkey, PD, rights), that an SGE
//! whose bytes it takes as kernel addresses has the lkey of a DMA MR, and
//! that the work request is still outstanding (the verbs contract makes the
//! ULP keep the memory until the request completes or the region is
//! invalidated; a driver stops touching it when the QP goes to RESET or is
//! destroyed).
//!
//! Where a byte of a fast-registered region lies in its page list is the
//! simulator's host-tested rule (`locate` in `core/src/sim/fabric.rs`, the
//! page arithmetic of `ib_map_mr_sg`); [`MappedPages::span`] takes its
//! answer and checks it before it hands out any memory.

use kernel::prelude::*;

/// A range of memory a ULP handed the device (see the module comment).
///
/// # Invariants
///
/// `[start, start + len)` is memory a ULP gave the device: bytes of an SGE
/// of a posted work request, or of a region it mapped; `start` is not zero
/// and the range does not wrap.
#[derive(Clone, Copy, Debug)]
pub struct DmaRange {
    start: usize,
    len: usize,
}

impl DmaRange {
    /// The range `[addr, addr + len)` a ULP gave the device; `None` if it is
    /// not a plausible kernel range (null, wrapping).
    pub(super) fn from_ulp(addr: u64, len: u64) -> Option<Self> {
        let start = usize::try_from(addr).ok()?;
        let len = usize::try_from(len).ok()?;
        if start == 0 || start.checked_add(len).is_none() {
            return None;
        }
        // INVARIANT: The caller passes what a ULP handed over; checked above
        // that it neither starts at zero nor wraps.
        Some(Self { start, len })
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `len` bytes at `offset` into the range, if they lie in it.
    pub fn sub(&self, offset: u64, len: u64) -> Option<Self> {
        let offset = usize::try_from(offset).ok()?;
        let len = usize::try_from(len).ok()?;
        if offset.checked_add(len)? > self.len {
            return None;
        }
        // INVARIANT: Inside `self` (checked), which satisfies them.
        Some(Self {
            start: self.start + offset,
            len,
        })
    }

    /// Copies `bytes` to the start of the range; `EFAULT` if they do not fit.
    pub fn write(&self, bytes: &[u8]) -> Result {
        if bytes.len() > self.len {
            return Err(EFAULT);
        }
        // SAFETY: `[start, start + bytes.len())` lies in memory a ULP gave
        // the device for the work request or region it came from (type
        // invariant), which the ULP keeps until that completes; the device's
        // writes are not accesses of any object Rust code holds a reference
        // to.
        unsafe { core::ptr::copy(bytes.as_ptr(), self.start as *mut u8, bytes.len()) };
        Ok(())
    }

    /// Copies the start of the range into `out`; `EFAULT` if it is shorter.
    pub fn read(&self, out: &mut [u8]) -> Result {
        if out.len() > self.len {
            return Err(EFAULT);
        }
        // SAFETY: As for `write`, for reading.
        unsafe { core::ptr::copy(self.start as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Reads the aligned 64-bit word at the start of the range, replaces it
    /// with `f(old)`, and returns `old`; `EINVAL` if the range is shorter
    /// than 8 bytes or misaligned. The caller serialises this with every
    /// other atomic it executes on the word (an adapter's `IB_ATOMIC_HCA`);
    /// the CPU's own accesses are not ordered with it, as with hardware.
    pub fn update_u64(&self, f: impl FnOnce(u64) -> u64) -> Result<u64> {
        if self.len < 8 || self.start % 8 != 0 {
            return Err(EINVAL);
        }
        let p = self.start as *mut u64;
        // SAFETY: As for `write`; 8 bytes of the range, 8-byte aligned
        // (checked); volatile accesses keep the compiler from merging or
        // eliding them.
        let old = unsafe { p.read_volatile() };
        // SAFETY: As above.
        unsafe { p.write_volatile(f(old)) };
        Ok(old)
    }
}

/// The pages of an FRWR region as the last `ib_map_mr_sg` mapped them
/// (`ib_sg_to_pages`: page-aligned DMA addresses of `page_size` bytes each,
/// the region starting `iova & (page_size - 1)` bytes into the first).
/// Kept by the driver in its MR; the only way to the region's memory
/// ([`MappedPages::span`]).
pub struct MappedPages {
    pages: KVVec<u64>,
    count: usize,
    page_size: u64,
    iova: u64,
    length: u64,
}

impl MappedPages {
    /// Room for `max` pages, none mapped.
    pub fn new(max: usize) -> Result<Self> {
        Ok(Self {
            pages: KVVec::from_elem(0, max, GFP_KERNEL)?,
            count: 0,
            page_size: 0,
            iova: 0,
            length: 0,
        })
    }

    /// Takes the mapping `ib_map_mr_sg` made; `ENOMEM` if it has more pages
    /// than there is room for (nothing changes then).
    pub fn set(&mut self, map: &super::MrMap<'_>) -> Result {
        if map.pages.len() > self.pages.len() {
            return Err(ENOMEM);
        }
        for (slot, page) in self.pages.iter_mut().zip(map.pages) {
            *slot = *page;
        }
        self.count = map.pages.len();
        self.page_size = u64::from(map.page_size);
        self.iova = map.iova;
        self.length = map.length;
        Ok(())
    }

    /// How many pages are mapped.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The size of the mapping's pages (a power of two once mapped).
    pub fn page_size(&self) -> u64 {
        self.page_size
    }

    /// The region's first address.
    pub fn iova(&self) -> u64 {
        self.iova
    }

    /// The region's length in bytes.
    pub fn length(&self) -> u64 {
        self.length
    }

    /// The memory of the `len` bytes at `iova`, if they lie in the mapping
    /// (`[iova, iova + length)`, the ULP's own bytes: `ib_sg_to_pages` maps
    /// them from the first page's offset on) and in one page. `at` is where
    /// the first byte lies in the page list, `(page index, offset in the
    /// page)`, as the caller's rule computed it; `None` if it is not where
    /// the mapping puts the byte.
    pub fn span(&self, iova: u64, len: u64, at: (usize, u64)) -> Option<DmaRange> {
        let offset = iova.checked_sub(self.iova)?;
        if offset.checked_add(len)? > self.length || !self.page_size.is_power_of_two() {
            return None;
        }
        let (index, in_page) = at;
        // The byte's position from the start of the first page, where
        // `ib_sg_to_pages` starts the mapping `iova & (page_size - 1)`
        // bytes in: `at` must name it, in a page of this mapping.
        let pos = (self.iova & (self.page_size - 1)).checked_add(offset)?;
        let named = u64::try_from(index)
            .ok()?
            .checked_mul(self.page_size)?
            .checked_add(in_page)?;
        if named != pos || index >= self.count || in_page.checked_add(len)? > self.page_size {
            return None;
        }
        // In page `index` that `ib_sg_to_pages` gave `set_page` for the
        // ULP's mapping, and inside the mapping's bytes (checked above).
        DmaRange::from_ulp(self.pages.get(index)?.checked_add(in_page)?, len)
    }
}
