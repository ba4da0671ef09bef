// SPDX-License-Identifier: GPL-2.0

//! Errors of the VF GUID engine and their errno values.

use crate::errno::{EINVAL, ENODEV, ENOENT, EPERM, ERANGE};

/// An error of the VF GUID engine.
///
/// Every variant maps to a Linux errno from `include/uapi/asm-generic/errno-base.h`,
/// whose values are the same on every architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuidError {
    /// More VFs than the port has GUIDs for, after the PF's 2 (more than
    /// [`super::MAX_VFS`] on a port of 128): some VF would get no GUID
    /// (`-ERANGE`).
    TooManyVfs,
    /// What user space wrote is not a GUID: 1 to 16 hex digits (`0x`
    /// optional), or the colon form of eight octets (`-EINVAL`).
    Malformed,
    /// The entry is read-only: the PF's entry 0 holds the hardware GUID (`-EPERM`).
    ReadOnly,
    /// A physical index outside the port's table (`-EINVAL`).
    NoSuchEntry,
    /// An answer for a request that is not outstanding (`-ENOENT`).
    StaleAnswer,
    /// The table is being removed: its GUIDs are being deleted at the SM
    /// (`-ENODEV`).
    Retired,
}

impl GuidError {
    /// Returns the negative Linux errno for this error, ready to be returned
    /// from a sysfs `store`.
    pub const fn errno(&self) -> i32 {
        match self {
            Self::TooManyVfs => -ERANGE,
            Self::Malformed | Self::NoSuchEntry => -EINVAL,
            Self::ReadOnly => -EPERM,
            Self::StaleAnswer => -ENOENT,
            Self::Retired => -ENODEV,
        }
    }

    /// Returns a short message for the kernel log, saying what was wrong.
    pub const fn message(&self) -> &'static str {
        match self {
            Self::TooManyVfs => {
                "more VFs than the port has GUIDs for (2 for the PF, at least 1 per VF)"
            }
            Self::Malformed => {
                "a GUID is 1 to 16 hex digits (0x optional) or eight colon-separated octets (00:11:22:33:44:55:66:77)"
            }
            Self::ReadOnly => "the PF's entry 0 is the hardware GUID and is read-only",
            Self::NoSuchEntry => "no such GUID entry on the port",
            Self::StaleAnswer => "answer for a request that is not outstanding",
            Self::Retired => "the table is being removed and its GUIDs deleted",
        }
    }
}
