// SPDX-License-Identifier: GPL-2.0

//! What user space writes to `admin_guids/<n>` and what sysfs shows, in the
//! formats of upstream mlx4 (`drivers/infiniband/hw/mlx4/sysfs.c`).

use core::fmt;

use super::GuidError;

/// Parses what user space wrote to `admin_guids/<n>` or a vport file.
///
/// Accepted, optionally followed by one newline:
/// - 1 to 16 hex digits (either case), optionally after `0x` or `0X`;
/// - the colon form of iproute2's `get_guid` (lib/utils.c: exactly 23
///   characters, eight octets of two hex digits, the first the most
///   significant), which `ip link`, ib-sriov-cni and MLNX_OFED's
///   `sriov/<vf>/node` write: `00:11:22:33:44:55:66:77`.
///
/// Everything else (empty, `0x` alone, a sign, spaces, 17 digits or more,
/// 7 or 9 octets, an octet of one or three digits, a second newline, a
/// NUL) is [`GuidError::Malformed`]. Unlike upstream's `sscanf("%llx")`,
/// nothing is silently truncated or ignored.
pub fn parse_admin_guid(input: &[u8]) -> Result<u64, GuidError> {
    let body = input.strip_suffix(b"\n").unwrap_or(input);
    if body.contains(&b':') {
        return parse_colon_guid(body);
    }
    let digits = body
        .strip_prefix(b"0x")
        .or_else(|| body.strip_prefix(b"0X"))
        .unwrap_or(body);
    if digits.is_empty() || digits.len() > 16 {
        return Err(GuidError::Malformed);
    }
    let mut value = 0u64;
    for &c in digits {
        // At most 16 digits: the shift never loses a set bit.
        value = (value << 4) | u64::from(hex_digit(c)?);
    }
    Ok(value)
}

fn hex_digit(c: u8) -> Result<u8, GuidError> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(GuidError::Malformed),
    }
}

/// `xx:xx:xx:xx:xx:xx:xx:xx`, as iproute2's `get_guid` takes it (but
/// stricter: two hex digits per octet, where its `strtoul` would also take
/// a sign or a space).
fn parse_colon_guid(body: &[u8]) -> Result<u64, GuidError> {
    let mut value = 0u64;
    let mut octets = 0;
    for octet in body.split(|&c| c == b':') {
        let [hi, lo] = octet else {
            return Err(GuidError::Malformed);
        };
        value = (value << 8) | u64::from(hex_digit(*hi)? << 4 | hex_digit(*lo)?);
        octets += 1;
    }
    if octets != 8 {
        return Err(GuidError::Malformed);
    }
    Ok(value)
}

/// Parses what an administrator wrote to a VF's `node_guid` or `port_guid`
/// (the vport model): as [`parse_admin_guid`], every value included. `0`
/// and all ones are what the clients write to release a VF's GUID
/// (ib-sriov-cni restores `FF:FF:FF:FF:FF:FF:FF:FF`, networking-mlnx's
/// mlx5 path and the operator write all ones), and mlx5_ib passes any
/// value to the firmware (`ib_virt.c`, `set_vf_node_guid`); the driver
/// decides. On error nothing is set.
pub fn parse_vport_guid(input: &[u8]) -> Result<u64, GuidError> {
    parse_admin_guid(input)
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

/// An admin GUID as `admin_guids/<n>` shows it: 16 lowercase hex digits,
/// leading zeros included (`0000000000000000`, `0014050000000002`,
/// `ffffffffffffffff`).
///
/// Upstream mlx4 shows `%llx`, without them (`drivers/infiniband/hw/mlx4/
/// sysfs.c`, `show_admin_alias_guid`). The one client that reads these
/// files, networking-mlnx's mlx4 path, takes a value only if it matches
/// `^[0-9a-fA-F]{16}$` (`ib_utils.py:38`, `GUID_FMT_MLNX4`, read at
/// `:72-85` and `:137-161`), and raises `InvalidGUIDFormatException`
/// otherwise: with `sm_guid_assign=1` the values are the SM's, and OpenSM's
/// (`0x001405 << 40` and up) always start with a zero octet, so `%llx`
/// would fail it on every one. Every reader of mlx4's format still reads
/// this one: `sscanf("%llx")` and `strtoull(.., 16)` take leading zeros,
/// and each value written back parses to the same GUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdminGuid(pub u64);

impl fmt::Display for AdminGuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// A VF's GUID as a vport file (`iov/<function>/ports/<p>/node_guid` and
/// `port_guid`) shows it: the colon form, eight octets of two lowercase
/// hex digits, the most significant first (`00:02:c9:03:00:ab:cd:ef`).
///
/// That is how MLNX_OFED's own files for these values show them
/// (`drivers/net/ethernet/mellanox/mlx5/core/sriov_sysfs.c`, `port_show`
/// and `node_show`: `"%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x\n"`), and how
/// `ip link show` prints a VF's `NODE_GUID`/`PORT_GUID` (iproute2
/// `ip/ipaddress.c:483-500`, whose `ip link set` takes it back,
/// `lib/utils.c:1469-1500`): a value copies from these files to `ip link`
/// and back as it is. networking-mlnx's reader takes it too
/// (`ib_utils.py:39`, the colon form beside the 16 digits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VportGuid(pub u64);

impl fmt::Display for VportGuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, octet) in self.0.to_be_bytes().iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{octet:02x}")?;
        }
        Ok(())
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
