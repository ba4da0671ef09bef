// SPDX-License-Identifier: GPL-2.0

//! The VF GUID engine (`Documentation/vf-guids.rst`): how the 128 alias GUIDs
//! of an InfiniBand port are split among the PF and its VFs, what sysfs shows
//! and accepts for them, which functions are up and get GUID-change events, and
//! the state machine that keeps asking the subnet manager, with exponential
//! backoff, until every administrative value is operational.
//!
//! The engine is a plain synchronous data structure: the caller holds it
//! behind a lock (in the kernel a sleeping one: see "Locking" in
//! `engine/mod.rs`), passes the time in (`u64` nanoseconds, never read here),
//! and performs the [`Action`]s it asks for: send a request to the subnet
//! manager, cancel one, or sleep until a given time. Entries and records are
//! [`EntryIdx`] and [`RecordIdx`], checked once where they come in. The
//! kernel mounts this directory with `#[path]`, so files here name each other
//! through `super::` and never through a crate name.
//!
//! See `Documentation/vf-guids.rst` for the rules and where they differ from
//! upstream mlx4 (`drivers/infiniband/hw/mlx4/alias_GUID.c`).

mod engine;
mod error;
mod index;
mod placement;
mod set;
mod sim;
mod sm;
mod split;
mod text;

pub use engine::{next_backoff, Action, AnswerOutcome, Config, Engine};
pub use error::GuidError;
pub use index::{EntryIdx, RecordIdx};
pub use placement::{
    can_switch_on, function_name, guid_model, on_by_default, pci_vf_count, placement, GuidModel,
    NoTree, Parent, PciVfs, PortFacts, VfsChanging, MLX5_PF_PARTS,
};
pub use set::Set128;
pub use sim::{SimMode, SimSm};
pub use sm::{Answer, AnswerStatus, Method, Request, RequestId, SmBackend, SubmitError};
pub use split::{guid_split, Split};
pub use text::{
    parse_admin_guid, parse_switch, parse_vport_guid, switch_text, AdminGuid, Gid, VportGuid,
};

/// The most alias GUID entries a port's table has: a ConnectX-3's 128,
/// which mlx4's alias GUID code covers with 16 records. A port's own number
/// is its GID table length (`ib_port_attr.gid_tbl_len`, the PortInfo
/// GUIDCap the SM sees), and may be smaller.
pub const PORT_GUIDS: usize = 128;

/// The most GUIDInfo records of a port, as the SA sees them.
pub const RECORDS: usize = 16;

/// The number of GUIDs in one GUIDInfo record: record `r` holds the physical
/// entries `8 * r` to `8 * r + 7`.
pub const GUIDS_PER_RECORD: usize = 8;

/// The number of entries the PF (function 0) always takes.
pub const PF_GUIDS: u8 = 2;

/// The largest number of VFs that still gives every VF one entry, on a
/// port of [`PORT_GUIDS`] entries.
pub const MAX_VFS: u16 = 126;

/// The admin value that asks the subnet manager to assign a GUID.
pub const GUID_ASSIGN: u64 = 0;

/// The admin value that deletes an entry (upstream's `MLX4_GUID_FOR_DELETE_VAL`).
pub const GUID_DELETE: u64 = u64::MAX;

/// The link-local subnet prefix `fe80::/64`.
pub const DEFAULT_SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// Nanoseconds in a second: every time in this module is in nanoseconds.
pub const NSEC_PER_SEC: u64 = 1_000_000_000;

/// The longest per-entry retry delay, in seconds.
pub const MAX_BACKOFF_SECS: u8 = 60;

/// The port's SA backoff after the first SA error or timeout, in seconds;
/// it doubles with each further one, to [`MAX_BACKOFF_SECS`].
pub const ERROR_DELAY_SECS: u8 = 1;

/// The delay after a request found the port not active, in seconds.
pub const PORT_DOWN_DELAY_SECS: u8 = 5;

/// How long the engine waits for an answer before it gives the request up
/// as timed out, in seconds.
pub const ANSWER_WATCHDOG_SECS: u8 = 10;

/// Returns whether `guid` is a usable GUID: neither "none" (0) nor the
/// delete marker (all ones). A function's port is up when its base entry
/// holds such a value.
pub const fn is_valid_guid(guid: u64) -> bool {
    guid != GUID_ASSIGN && guid != GUID_DELETE
}
