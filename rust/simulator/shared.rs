// SPDX-License-Identifier: GPL-2.0

//! What a simulated adapter's objects share, below everything else of the
//! simulator: its LIDs and GUIDs on the simulated fabric, its knobs'
//! state, and its memory regions, which the data path translates keys and
//! addresses through. The order of the simulator's modules is one way:
//! `shared` (with `sa` and `vf`), then `wr`, `gsi`, `fabric`, `cq`, `qp`,
//! `adapter`, `knobs`; none names one after it.

use super::sa::SimSa;
use crate::ib::{
    provider::driver::{
        dma::{DmaRange, MappedPages},
        MrMap, Sge,
    },
    sync::IrqSpinLock,
};
use crate::new_irq_spinlock;
use crate::sim::{
    control::NewDevice,
    fabric::{self, check_atomic, Access, Key, Region, RegionState, WcStatus},
    faults::CreateFaults,
    model::{Model, MAX_PORTS},
};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
    sync::Arc,
};

/// Mellanox's OUI in the top bytes of a GUID (`00:02:c9`), as mlx4 GUIDs
/// (`0002:c903:00xx:xxxx`) have it.
const GUID_BASE: u64 = 0x0002_c903_0000_0000;
/// Where the simulated SM's assigned alias GUIDs start: port `p` of device
/// `id` gets `SM_GUID_BASE | id << 16 | p << 8 | n` for its entry `n`.
pub(super) const SM_GUID_BASE: u64 = 0x0002_c9ff_0000_0000;
/// The LID of the simulated subnet manager; adapters' ports get 2 and up.
pub(super) const SM_LID: u32 = 1;

/// The LID of `port` (1-based) of device `id`: unique on the simulated
/// fabric.
pub(super) fn lid(id: u32, port: u32) -> u32 {
    SM_LID + id * u32::from(MAX_PORTS) + port
}

/// The device ID whose port has LID `lid` (the inverse of [`lid`]).
pub(super) fn lid_to_device(lid: u32) -> Option<u32> {
    lid.checked_sub(SM_LID + 1)
        .map(|n| n / u32::from(MAX_PORTS))
}
/// The node GUID of device `id`; port `p`'s GUID is this `| p`.
pub(super) fn node_guid(id: u32) -> u64 {
    GUID_BASE | (u64::from(id) << 8)
}

/// The kinds of objects the adapter counts, for leaks and for
/// `fail_create`.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Pd = 0,
    Cq = 1,
    Qp = 2,
    Mr = 3,
}

/// What the adapter and its debugfs knobs share.
pub(super) struct State {
    /// Whether each port is up.
    pub(super) port_up: [AtomicBool; MAX_PORTS as usize],
    /// Injected failures of object creation (`ENOMEM`): a packed
    /// [`CreateFaults`].
    pub(super) fail_create: AtomicU64,
    /// How many more atomics complete with `IB_WC_REM_OP_ERR`.
    pub(super) fail_atomics: AtomicU32,
    /// Atomic work requests refused at post time (`EOPNOTSUPP`), after
    /// some accepted: a [`CreateFaults`] word, as `fail_create`.
    pub(super) refuse_atomics: AtomicU64,
    /// Atomic opcodes the driver lacks, refused at every post with their
    /// errno: a packed [`OpcodeRefusal`](crate::sim::faults::OpcodeRefusal).
    pub(super) refuse_opcodes: AtomicU32,
    /// How many work requests `refuse_opcodes` refused since it was written.
    pub(super) opcode_refusals: AtomicU64,
    /// Atomics executed with this adapter as the requester.
    pub(super) atomics: AtomicU64,
    /// Atomic work requests posted with `IB_SEND_FENCE`.
    pub(super) fenced_atomics: AtomicU64,
    /// How long the adapter takes to execute each send request, in ms.
    pub(super) completion_delay_ms: AtomicU32,
    /// Live objects by [`Kind`].
    pub(super) live: [AtomicU32; 4],
}

/// One more event counted against the [`CreateFaults`] word `word`: whether
/// it is one to fail.
pub(super) fn take_fault(word: &AtomicU64) -> bool {
    let mut fails = false;
    let _ = word.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
        let (next, fail) = CreateFaults::unpack(w).next();
        fails = fail;
        Some(next.pack())
    });
    fails
}

/// Takes one of `n`, if any is left.
fn take_one(n: &AtomicU32) -> bool {
    n.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
        .is_ok()
}

/// A memory region in the adapter's table.
pub(super) struct MrEntry {
    pub(super) region: Region,
    pub(super) kind: MrKind,
}

pub(super) enum MrKind {
    /// The DMA MR: all memory, at its kernel virtual addresses.
    Dma,
    /// A fast-registration MR: the pages its last `ib_map_mr_sg` found,
    /// and what they cover (a REG_MR makes it the region's).
    Frwr(MappedPages),
}

/// What the adapter, its QPs and their execution share: its identity, knobs and
/// memory regions.
#[pin_data]
pub(super) struct AdapterShared {
    pub(super) id: u32,
    pub(super) model: &'static Model,
    /// A port's GID table length: its GUIDs (the model's, or `new_device`'s
    /// GUIDS), the port GUID and the alias GUIDs its SA granted, as a mlx4
    /// PF shows them; its SA's GUIDCap.
    pub(super) port_guids: u32,
    pub(super) state: Arc<State>,
    /// The subnet administrator its ports' GSI QPs reach.
    pub(super) sa: Arc<SimSa>,
    /// Memory regions by key index.
    #[pin]
    mrs: IrqSpinLock<RBTree<u32, MrEntry>>,
}

impl AdapterShared {
    /// The shared part of the adapter `req` asks for, with its knobs'
    /// `state` and its SA.
    pub(super) fn new(req: &NewDevice, state: Arc<State>, sa: Arc<SimSa>) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                id: req.id,
                model: req.model,
                port_guids: u32::from(req.port_guids),
                state,
                sa,
                mrs <- new_irq_spinlock!(RBTree::new(), "mlx_ext_sim::adapter::mrs"),
            }),
            GFP_KERNEL,
        )
    }

    /// Whether `port` is up (the `port<N>` knob).
    pub(super) fn port_up(&self, port: u32) -> bool {
        let i = usize::try_from(port.wrapping_sub(1)).unwrap_or(usize::MAX);
        self.state
            .port_up
            .get(i)
            .is_some_and(|up| up.load(Ordering::Acquire))
    }

    pub(super) fn take_atomic_fault(&self) -> bool {
        take_one(&self.state.fail_atomics)
    }

    /// Counts an atomic executed with this adapter as the requester.
    pub(super) fn count_atomic(&self) {
        self.state.atomics.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn completion_delay_ms(&self) -> u32 {
        self.state.completion_delay_ms.load(Ordering::Relaxed)
    }

    pub(super) fn add_mr(&self, index: u32, entry: MrEntry) -> Result {
        let node = RBTreeNodeReservation::new(GFP_KERNEL)?.into_node(index, entry);
        let old = self.mrs.lock().insert(node);
        drop(old);
        Ok(())
    }

    pub(super) fn remove_mr(&self, index: u32) {
        let node = self.mrs.lock().remove_node(&index);
        drop(node);
    }

    /// Records the pages `ib_map_mr_sg` mapped FRWR MR `index` to.
    pub(super) fn map_mr(&self, index: u32, map: &MrMap<'_>) -> Result {
        let mut mrs = self.mrs.lock();
        let entry = mrs.get_mut(&index).ok_or(EINVAL)?;
        let MrKind::Frwr(pages) = &mut entry.kind else {
            return Err(EINVAL);
        };
        pages.set(map)
    }

    /// Executes an `IB_WR_REG_MR` posted on a QP of PD `pd`.
    pub(super) fn reg_mr(&self, pd: u32, reg: Reg) -> Result<(), WcStatus> {
        let mut mrs = self.mrs.lock();
        let entry = mrs.get_mut(&reg.index).ok_or(WcStatus::LocProtErr)?;
        let key = Key::from_raw(reg.key);
        let MrKind::Frwr(pages) = &entry.kind else {
            return Err(WcStatus::LocProtErr);
        };
        // A key of another MR, or of another PD, or an MR registered
        // already, or one never mapped: a local protection error.
        if key.index() != reg.index
            || entry.region.pd != pd
            || entry.region.state == RegionState::Valid
            || pages.count() == 0
        {
            return Err(WcStatus::LocProtErr);
        }
        entry.region = Region {
            key,
            pd,
            iova: pages.iova(),
            length: pages.length(),
            access: Access::from_bits(reg.access),
            state: RegionState::Valid,
        };
        Ok(())
    }

    /// Executes an `IB_WR_LOCAL_INV` of `rkey` posted on a QP of PD `pd`.
    pub(super) fn invalidate(&self, pd: u32, rkey: u32) -> Result<(), WcStatus> {
        let key = Key::from_raw(rkey);
        let mut mrs = self.mrs.lock();
        let entry = mrs.get_mut(&key.index()).ok_or(WcStatus::LocProtErr)?;
        if !matches!(entry.kind, MrKind::Frwr(_))
            || entry.region.key != key
            || entry.region.pd != pd
        {
            return Err(WcStatus::LocProtErr);
        }
        entry.region.state = RegionState::Free;
        Ok(())
    }

    /// The memory the first `len` bytes of `sge`, of a work request on a QP
    /// of PD `pd`, reach, if its lkey grants `need` on them; a local
    /// protection error otherwise (the range must lie in one page of an
    /// FRWR MR).
    pub(super) fn translate_local(
        &self,
        pd: u32,
        sge: &Sge,
        len: u64,
        need: Access,
    ) -> Result<DmaRange, WcStatus> {
        let key = Key::from_raw(sge.lkey());
        let mrs = self.mrs.lock();
        let entry = mrs.get(&key.index()).ok_or(WcStatus::LocProtErr)?;
        let r = &entry.region;
        if r.key != key || r.pd != pd || r.state != RegionState::Valid || !r.access.contains(need) {
            return Err(WcStatus::LocProtErr);
        }
        let offset = r.offset_of(sge.addr(), len).ok_or(WcStatus::LocProtErr)?;
        match &entry.kind {
            // Kernel addresses one to one: the SGE's own bytes.
            MrKind::Dma => sge.dma().and_then(|d| d.sub(0, len)),
            MrKind::Frwr(pages) => in_pages(pages, r.iova, offset, len),
        }
        .ok_or(WcStatus::LocProtErr)
    }

    /// Runs `f` with the atomic target `iova` under `rkey` of PD `pd`, with
    /// the region held: it cannot be deregistered meanwhile.
    pub(super) fn with_atomic_target<R>(
        &self,
        rkey: u32,
        pd: u32,
        iova: u64,
        f: impl FnOnce(DmaRange) -> R,
    ) -> Result<R, WcStatus> {
        let mrs = self.mrs.lock();
        let entry = mrs.get(&Key::from_raw(rkey).index());
        let offset = check_atomic(entry.map(|e| &e.region), rkey, pd, iova)?;
        let entry = entry.ok_or(WcStatus::RemAccessErr)?;
        let target = match &entry.kind {
            // ib_core never gives the PD's DMA MR remote atomic access
            // (`__ib_alloc_pd`, drivers/infiniband/core/verbs.c:287-300:
            // local write, and remote read and write with the unsafe global
            // rkey), so `check_atomic` refused it already.
            MrKind::Dma => None,
            MrKind::Frwr(pages) => in_pages(pages, entry.region.iova, offset, fabric::ATOMIC_LEN),
        }
        .ok_or(WcStatus::RemAccessErr)?;
        Ok(f(target))
    }
}

/// The memory of bytes `offset..offset + len` of a region at `iova` mapped
/// on `pages`, if they lie in the mapping and in one page.
fn in_pages(pages: &MappedPages, iova: u64, offset: u64, len: u64) -> Option<DmaRange> {
    let addr = iova.checked_add(offset)?;
    let in_map = addr.checked_sub(pages.iova())?;
    let at = fabric::locate(pages.iova(), pages.page_size(), pages.count(), in_map)?;
    pages.span(addr, len, at)
}

/// A counted object: decrements its kind's count when dropped.
pub(super) struct Counted {
    state: Arc<State>,
    kind: Kind,
}

impl Counted {
    /// Counts one more live object of `kind`.
    pub(super) fn new(state: Arc<State>, kind: Kind) -> Self {
        state.live[kind as usize].fetch_add(1, Ordering::AcqRel);
        Self { state, kind }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.state.live[self.kind as usize].fetch_sub(1, Ordering::AcqRel);
    }
}

/// A registration an `IB_WR_REG_MR` asks for.
#[derive(Clone, Copy)]
pub(super) struct Reg {
    /// The MR's slot in its adapter's table.
    pub(super) index: u32,
    pub(super) key: u32,
    pub(super) access: u32,
}
