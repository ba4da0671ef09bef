// SPDX-License-Identifier: GPL-2.0

//! How the GUID entries of a port (128 on a ConnectX-3; in general the
//! port's GID table length, at most [`PORT_GUIDS`]) are split among the PF
//! and its VFs.
//!
//! The PF (function 0) takes [`PF_GUIDS`] entries, the others (126 of 128)
//! are divided equally among the VFs, and the remainder goes one each to
//! the VFs with the lowest IDs. Each function's entries are contiguous, in function
//! order: the PF holds physical entries 0 and 1, VF 1 starts at entry 2, and
//! so on. A function's entry 0 is its base entry, which decides whether its
//! port is up.

use super::{EntryIdx, GuidError, PF_GUIDS, PORT_GUIDS};

/// The split of a port's GUID entries for a given number of VFs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// The port's entries: 0 to `len - 1`.
    len: u8,
    num_vfs: u16,
    /// Entries every VF gets (0 when there are no VFs).
    per_vf: u8,
    /// How many of the lowest VFs get one entry more.
    extra: u8,
}

/// Returns the split of a port's `port_guids` GUID entries among the PF and
/// `num_vfs` VFs. A port with more than [`PORT_GUIDS`] entries is taken as
/// one of [`PORT_GUIDS`]: the alias GUID protocol covers 16 records.
///
/// A port whose entries cannot give the PF its [`PF_GUIDS`] and every VF
/// one (more than 126 VFs on a port of 128) is [`GuidError::TooManyVfs`].
pub fn guid_split(port_guids: u16, num_vfs: u16) -> Result<Split, GuidError> {
    let len = port_guids.min(PORT_GUIDS as u16);
    let shared = len
        .checked_sub(u16::from(PF_GUIDS))
        .ok_or(GuidError::TooManyVfs)?;
    if num_vfs > shared {
        return Err(GuidError::TooManyVfs);
    }
    let (per_vf, extra) = match shared.checked_div(num_vfs) {
        Some(q) => (q, shared.checked_rem(num_vfs).unwrap_or(0)),
        None => (0, 0),
    };
    Ok(Split {
        // All at most 128: the conversions cannot fail.
        len: u8::try_from(len).unwrap_or(0),
        num_vfs,
        per_vf: u8::try_from(per_vf).unwrap_or(0),
        extra: u8::try_from(extra).unwrap_or(0),
    })
}

impl Split {
    /// The split of a port of [`PORT_GUIDS`] entries with no VFs: the PF's
    /// two entries, the rest unowned.
    pub const NO_VFS: Self = Self {
        len: PORT_GUIDS as u8,
        num_vfs: 0,
        per_vf: 0,
        extra: 0,
    };

    /// Returns the number of the port's entries, entries 0 to
    /// `port_guids() - 1`.
    pub const fn port_guids(&self) -> u8 {
        self.len
    }

    /// Returns whether `entry` is one of the port's.
    pub const fn holds(&self, entry: EntryIdx) -> bool {
        entry.get() < self.len
    }

    /// Returns the number of VFs of this split.
    pub const fn num_vfs(&self) -> u16 {
        self.num_vfs
    }

    /// Returns the number of functions: the PF and its VFs.
    pub const fn num_functions(&self) -> u16 {
        self.num_vfs.saturating_add(1)
    }

    /// Returns the number of GUID entries of `function` (0 is the PF, VF `n`
    /// is function `n`), or 0 for a function that does not exist.
    pub fn count(&self, function: u16) -> u8 {
        if function == 0 {
            PF_GUIDS
        } else if function > self.num_vfs {
            0
        } else if function <= u16::from(self.extra) {
            self.per_vf.saturating_add(1)
        } else {
            self.per_vf
        }
    }

    /// Returns the first entry of `function`, its base entry, if the
    /// function exists.
    pub fn base(&self, function: u16) -> Option<EntryIdx> {
        self.entry(function, 0)
    }

    /// Returns entry `n` of `function` as a physical entry, or `None` when
    /// the function does not exist or has fewer than `n + 1` entries: the
    /// typed [`Split::physical_index`].
    pub fn entry(&self, function: u16, n: u8) -> Option<EntryIdx> {
        self.physical_index(function, n).and_then(EntryIdx::new)
    }

    /// Returns the physical index of entry `n` of `function`, or `None` when
    /// the function does not exist or has fewer than `n + 1` entries.
    pub fn physical_index(&self, function: u16, n: u8) -> Option<u8> {
        if n >= self.count(function) {
            return None;
        }
        if function == 0 {
            return Some(n);
        }
        // VFs 1..function-1 come first; the lowest `extra` of them hold one more.
        let before = u32::from(function) - 1;
        let start = u32::from(PF_GUIDS)
            + before * u32::from(self.per_vf)
            + before.min(u32::from(self.extra));
        u8::try_from(start + u32::from(n)).ok()
    }

    /// Returns the function that owns `entry` and the entry's number within
    /// that function, or `None` when no function owns it (entries past the
    /// PF's when there are no VFs, entries past the port's).
    pub fn owner(&self, entry: EntryIdx) -> Option<(u16, u8)> {
        let index = entry.get();
        if index >= self.len {
            return None;
        }
        if index < PF_GUIDS {
            return Some((0, index));
        }
        if self.num_vfs == 0 {
            return None;
        }
        // Checked division: with VFs `per_vf` is at least 1, but a divide
        // that cannot panic keeps panics (and objtool's view of them) out.
        let i = u32::from(index - PF_GUIDS);
        let big = u32::from(self.per_vf) + 1;
        let big_span = u32::from(self.extra) * big;
        let (vf, n) = if i < big_span {
            (i.checked_div(big)?, i.checked_rem(big)?)
        } else {
            let rest = i - big_span;
            let per = u32::from(self.per_vf);
            (
                u32::from(self.extra) + rest.checked_div(per)?,
                rest.checked_rem(per)?,
            )
        };
        Some((u16::try_from(vf + 1).ok()?, u8::try_from(n).ok()?))
    }
}
