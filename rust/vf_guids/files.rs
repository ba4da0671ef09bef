// SPDX-License-Identifier: GPL-2.0

//! The sysfs files of the tables: `admin_guids/`, `gids/`, each function's
//! port state, events and `gid_idx/`, and the vport model's `node_guid` and
//! `port_guid`: what each shows and what a write does.

use super::port::{now_ns, PortGuids};
use crate::guid::{parse_vport_guid, AdminGuid, EntryIdx, Gid, VportGuid, PORT_GUIDS};
use crate::ib::compat::ARef;
use crate::ib::{Device, DirOps, File, ShowBuf, VfGuid};
use core::fmt::Write;
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::Arc;

/// A directory with no files of its own.
pub(super) struct NoFiles;

impl DirOps for NoFiles {
    fn show(&self, _id: u32, _out: &mut ShowBuf<'_>) -> Result {
        Err(EINVAL)
    }
}

/// What the files of a port's `admin_guids/` and `gids/` show.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum TableKind {
    Admin,
    Gids,
}

/// `iov/ports/<p>/admin_guids/` or `gids/`: file `n` is entry `n`.
pub(super) struct TableFiles {
    pub(super) port: Arc<PortGuids>,
    pub(super) kind: TableKind,
}

impl DirOps for TableFiles {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let entry = entry_of(id)?;
        match self.kind {
            TableKind::Admin => {
                let admin = self.port.state.lock().engine.admin(entry);
                writeln!(out, "{}", AdminGuid(admin))
            }
            // The port's own table, as mlx4's `gids/` reads it: what the
            // SM programmed, which is the engine's `oper` once both agree.
            TableKind::Gids => {
                let gid = self.port.dev.port_gid(self.port.port, id)?;
                writeln!(out, "{}", Gid::from_raw(gid))
            }
        }
        .map_err(|_| ENOSPC)
    }

    fn store(&self, id: u32, data: &[u8]) -> Result {
        if self.kind != TableKind::Admin {
            return Err(EPERM);
        }
        let entry = entry_of(id)?;
        self.port
            .state
            .lock()
            .engine
            .write_admin(entry, data, now_ns())
            .map_err(|e| Error::from_errno(e.errno()))?;
        // Carried out at once.
        self.port.kick.kick(0);
        Ok(())
    }
}

pub(super) fn entry_of(id: u32) -> Result<EntryIdx> {
    u8::try_from(id).ok().and_then(EntryIdx::new).ok_or(EINVAL)
}

/// `iov/<function>/ports/<p>/`: the function's port state and its GUID
/// change events.
pub(super) struct FunctionPortFiles {
    pub(super) port: Arc<PortGuids>,
    pub(super) function: u16,
}

pub(super) const FILE_STATE: u32 = 0;
pub(super) const FILE_EVENTS: u32 = 1;

pub(super) static FUNCTION_PORT_FILES: [File<'static>; 2] = [
    File {
        name: c_str!("state"),
        mode: 0o444,
        id: FILE_STATE,
    },
    File {
        name: c_str!("guid_events"),
        mode: 0o444,
        id: FILE_EVENTS,
    },
];

impl DirOps for FunctionPortFiles {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let s = self.port.state.lock();
        match id {
            FILE_STATE => writeln!(
                out,
                "{}",
                if s.engine.function_up(self.function) {
                    "up"
                } else {
                    "down"
                }
            ),
            FILE_EVENTS => writeln!(out, "{}", s.engine.event_count(self.function)),
            _ => return Err(EINVAL),
        }
        .map_err(|_| ENOSPC)
    }
}

/// `iov/<function>/ports/<p>/gid_idx/`: file `n` is the physical index of
/// the function's entry `n`.
pub(super) struct GidIdxFiles {
    pub(super) port: Arc<PortGuids>,
    pub(super) function: u16,
}

impl DirOps for GidIdxFiles {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let n = u8::try_from(id).map_err(|_| EINVAL)?;
        let index = self
            .port
            .state
            .lock()
            .engine
            .split()
            .physical_index(self.function, n)
            .ok_or(EINVAL)?;
        writeln!(out, "{}", index).map_err(|_| ENOSPC)
    }
}

/// The names `0` to `127`.
pub(super) fn index_names() -> Result<KVec<CString>> {
    let mut names = KVec::with_capacity(PORT_GUIDS, GFP_KERNEL)?;
    for n in 0..PORT_GUIDS {
        names.push(CString::try_from_fmt(format_args!("{}", n))?, GFP_KERNEL)?;
    }
    Ok(names)
}

/// Files `0` to `count - 1` of `names`, with `mode`.
pub(super) fn index_files<'a>(
    names: &'a [CString],
    count: usize,
    mode: u16,
) -> Result<KVec<File<'a>>> {
    let mut files = KVec::with_capacity(count, GFP_KERNEL)?;
    for (n, name) in names.iter().take(count).enumerate() {
        files.push(
            File {
                name,
                mode,
                id: u32::try_from(n)?,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(files)
}

/// node and port GUID.
pub(super) struct VportFiles {
    pub(super) dev: ARef<Device>,
    pub(super) port: u32,
    pub(super) function: u16,
}

pub(super) const FILE_NODE_GUID: u32 = 0;
pub(super) const FILE_PORT_GUID: u32 = 1;

/// A VF's files: root writes them.
pub(super) static VPORT_FILES: [File<'static>; 2] = [
    File {
        name: c_str!("node_guid"),
        mode: 0o644,
        id: FILE_NODE_GUID,
    },
    File {
        name: c_str!("port_guid"),
        mode: 0o644,
        id: FILE_PORT_GUID,
    },
];

/// The PF's: its own GUIDs, read-only.
pub(super) static PF_VPORT_FILES: [File<'static>; 2] = [
    File {
        name: c_str!("node_guid"),
        mode: 0o444,
        id: FILE_NODE_GUID,
    },
    File {
        name: c_str!("port_guid"),
        mode: 0o444,
        id: FILE_PORT_GUID,
    },
];

impl VportFiles {
    /// Which GUID file `id` is.
    fn which(id: u32) -> Result<VfGuid> {
        match id {
            FILE_NODE_GUID => Ok(VfGuid::Node),
            FILE_PORT_GUID => Ok(VfGuid::Port),
            _ => Err(EINVAL),
        }
    }
}

impl DirOps for VportFiles {
    /// A VF's GUID as its driver's `get_vf_guid` answers (0: none set);
    /// the PF's, the device's node GUID and the port's GUID.
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let which = Self::which(id)?;
        let guid = match self.function.checked_sub(1) {
            None => match which {
                VfGuid::Node => self.dev.node_guid(),
                VfGuid::Port => self.dev.port_guid(self.port)?,
            },
            Some(vf) => {
                let (node, port) = self.dev.get_vf_guids(vf, self.port)?;
                match which {
                    VfGuid::Node => node,
                    VfGuid::Port => port,
                }
            }
        };
        writeln!(out, "{}", VportGuid(guid)).map_err(|_| ENOSPC)
    }

    /// Sets a VF's GUID through its driver's `set_vf_guid`, as `ip link set
    /// <pf> vf N node_guid|port_guid` does: any value, 0 and all ones
    /// included (what the clients release a VF's GUID with), in hex or
    /// the colon form (`parse_vport_guid`); malformed input is `-EINVAL`
    /// and sets nothing; the driver's error as it is.
    /// The PF's are read-only.
    fn store(&self, id: u32, data: &[u8]) -> Result {
        let which = Self::which(id)?;
        let vf = self.function.checked_sub(1).ok_or(EPERM)?;
        let guid = parse_vport_guid(data).map_err(|e| Error::from_errno(e.errno()))?;
        self.dev.set_vf_guid(vf, self.port, guid, which)
    }
}
