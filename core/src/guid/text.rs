// SPDX-License-Identifier: GPL-2.0

//! What user space writes to `admin_guids/<n>` and what sysfs shows, in the
//! formats of upstream mlx4 (`drivers/infiniband/hw/mlx4/sysfs.c`).

use core::fmt;

use super::GuidError;

/// Parses what user space wrote to `admin_guids/<n>`.
///
/// Accepted: 1 to 16 hex digits (either case), optionally after `0x` or
/// `0X`, optionally followed by one newline. Everything else (empty, `0x`
/// alone, a sign, spaces, 17 digits or more, a second newline, a NUL) is
/// [`GuidError::Malformed`]. Unlike upstream's `sscanf("%llx")`, nothing is
/// silently truncated or ignored.
pub fn parse_admin_guid(input: &[u8]) -> Result<u64, GuidError> {
    let body = input.strip_suffix(b"\n").unwrap_or(input);
    let digits = body
        .strip_prefix(b"0x")
        .or_else(|| body.strip_prefix(b"0X"))
        .unwrap_or(body);
    if digits.is_empty() || digits.len() > 16 {
        return Err(GuidError::Malformed);
    }
    let mut value = 0u64;
    for &c in digits {
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return Err(GuidError::Malformed),
        };
        // At most 16 digits: the shift never loses a set bit.
        value = (value << 4) | u64::from(digit);
    }
    Ok(value)
}

/// Parses what an administrator wrote to a VF's `node_guid` or `port_guid`
/// (the vport model): as [`parse_admin_guid`]. `0` is "none", as `ip link`
/// and mlx5 take it (mlx5's `sriov_restore_guids` skips a zero GUID); all
/// ones, the delete marker of `admin_guids`, is no GUID here:
/// [`GuidError::NotAGuid`] (stricter than `ip link`). On error nothing is
/// set.
pub fn parse_vport_guid(input: &[u8]) -> Result<u64, GuidError> {
    match parse_admin_guid(input)? {
        super::GUID_DELETE => Err(GuidError::NotAGuid),
        value => Ok(value),
    }
}

/// Parses what an administrator wrote to a device's
/// `mlx_ext/vf_guid_tables`: `on` or `1`, `off` or `0`, optionally followed
/// by one newline; `None` for anything else.
pub fn parse_switch(input: &[u8]) -> Option<bool> {
    match input.strip_suffix(b"\n").unwrap_or(input) {
        b"on" | b"1" => Some(true),
        b"off" | b"0" => Some(false),
        _ => None,
    }
}

/// What `mlx_ext/vf_guid_tables` shows for a switch.
pub const fn switch_text(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// An admin GUID as `admin_guids/<n>` shows it: lowercase hex without
/// leading zeros, as upstream's `%llx` (`0`, `ffffffffffffffff`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdminGuid(pub u64);

impl fmt::Display for AdminGuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x}", self.0)
    }
}

/// A GID as `gids/<n>` shows it: the subnet prefix and the GUID as eight
/// groups of four lowercase hex digits
/// (`fe80:0000:0000:0000:0002:c903:0000:1234`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gid {
    /// The subnet prefix, the GID's upper 64 bits.
    pub prefix: u64,
    /// The GUID, the GID's lower 64 bits.
    pub guid: u64,
}

impl Gid {
    /// A GID from its 16 bytes as `union ib_gid` holds them (network
    /// order).
    pub fn from_raw(raw: [u8; 16]) -> Self {
        let mut prefix = [0u8; 8];
        let mut guid = [0u8; 8];
        prefix.copy_from_slice(&raw[..8]);
        guid.copy_from_slice(&raw[8..]);
        Self {
            prefix: u64::from_be_bytes(prefix),
            guid: u64::from_be_bytes(guid),
        }
    }
}

impl fmt::Display for Gid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.prefix;
        let g = self.guid;
        write!(
            f,
            "{:04x}:{:04x}:{:04x}:{:04x}:{:04x}:{:04x}:{:04x}:{:04x}",
            (p >> 48) & 0xffff,
            (p >> 32) & 0xffff,
            (p >> 16) & 0xffff,
            p & 0xffff,
            (g >> 48) & 0xffff,
            (g >> 32) & 0xffff,
            (g >> 16) & 0xffff,
            g & 0xffff
        )
    }
}
