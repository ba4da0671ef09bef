// SPDX-License-Identifier: GPL-2.0

//! What an adapter's driver was told of its VFs' GUIDs through
//! `set_vf_guid` (as mlx5_ib programs a VF's vport; mlx4 has no such op),
//! for tests: debugfs `vf_guids`. No stable ABI.

use crate::ib::{provider::driver::VfGuidKind, ShowBuf};
use crate::sim::text;
use core::{
    fmt::Write,
    sync::atomic::{AtomicU32, Ordering},
};
use kernel::{new_mutex, prelude::*, rbtree::RBTree, sync::Mutex};

/// The most VFs `set_vf_guid` takes: a VF index is below it.
const MAX_VFS: u32 = crate::sim::MAX_NUM_VFS as u32;

/// The GUIDs set, and the calls.
struct Table {
    /// By `vf << 8 | port << 1 | kind` (kind 0 node, 1 port): in the order
    /// they are shown.
    guids: RBTree<u32, u64>,
    calls: u32,
    failed: u32,
    /// Calls to a model whose driver has no `set_vf_guid`.
    refused: u32,
}

/// The VF GUIDs of one adapter.
#[pin_data]
pub(super) struct VfGuids {
    #[pin]
    table: Mutex<Table>,
    /// How many more calls fail with `EIO` (`fail N`).
    fail: AtomicU32,
}

impl VfGuids {
    pub(super) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            table <- new_mutex!(
                Table {
                    guids: RBTree::new(),
                    calls: 0,
                    failed: 0,
                    refused: 0,
                },
                "mlx_ext_sim::vf::VfGuids::table"
            ),
            fail: AtomicU32::new(0),
        })
    }

    /// A call to a model whose driver has no `set_vf_guid`: `EOPNOTSUPP`,
    /// as ib_core answers where the op is missing; counted.
    pub(super) fn refuse(&self) -> Result {
        let mut t = self.table.lock();
        t.refused = t.refused.saturating_add(1);
        Err(crate::ib::eopnotsupp())
    }

    /// `set_vf_guid` of VF `vf` (from 0) on `port` (already checked). As
    /// mlx5, one pair per VF whatever the port: `vfs_ctx[vf]`, and the
    /// firmware command on port 1 (ib_virt.c, `set_vf_port_guid`).
    pub(super) fn set(&self, vf: u32, _port: u32, guid: u64, kind: VfGuidKind) -> Result {
        if vf >= MAX_VFS {
            return Err(EINVAL);
        }
        let mut t = self.table.lock();
        t.calls = t.calls.saturating_add(1);
        if self
            .fail
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
        {
            t.failed = t.failed.saturating_add(1);
            return Err(EIO);
        }
        let key = vf << 8 | 1 << 1 | u32::from(kind == VfGuidKind::Port);
        let _old = t.guids.try_create_and_insert(key, guid, GFP_KERNEL)?;
        Ok(())
    }

    /// The node and port GUIDs of VF `vf` (from 0), 0 for one never set;
    /// the port does not matter, as for mlx5 (`mlx5_ib_get_vf_guid` reads
    /// `vfs_ctx[vf]`).
    pub(super) fn get(&self, vf: u32, _port: u32) -> Result<(u64, u64)> {
        if vf >= MAX_VFS {
            return Err(EINVAL);
        }
        let t = self.table.lock();
        let key = |kind: u32| vf << 8 | 1 << 1 | kind;
        let node = t.guids.get(&key(0)).copied().unwrap_or(0);
        let port_guid = t.guids.get(&key(1)).copied().unwrap_or(0);
        Ok((node, port_guid))
    }

    /// `calls C failed F refused R`, then one line per GUID set:
    /// `VF PORT node|port GUID`.
    pub(super) fn show(&self, out: &mut ShowBuf<'_>) -> core::fmt::Result {
        let t = self.table.lock();
        writeln!(
            out,
            "calls {} failed {} refused {}",
            t.calls, t.failed, t.refused
        )?;
        for (&key, &guid) in t.guids.iter() {
            let kind = if key & 1 == 1 { "port" } else { "node" };
            writeln!(
                out,
                "{} {} {} {:016x}",
                key >> 8,
                (key >> 1) & 0x7f,
                kind,
                guid
            )?;
        }
        Ok(())
    }

    /// `fail N`: the next N calls fail with `EIO`; `clear`: forgets every
    /// GUID and count.
    pub(super) fn command(&self, data: &[u8]) -> Result {
        let line = data.strip_suffix(b"\n").unwrap_or(data);
        if let Some(n) = line.strip_prefix(b"fail ") {
            let n = text::decimal_line(n).ok_or(EINVAL)?;
            self.fail.store(n, Ordering::Release);
            return Ok(());
        }
        if line == b"clear" {
            let mut t = self.table.lock();
            t.guids = RBTree::new();
            t.calls = 0;
            t.failed = 0;
            t.refused = 0;
            return Ok(());
        }
        Err(EINVAL)
    }
}
