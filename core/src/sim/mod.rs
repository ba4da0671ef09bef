// SPDX-License-Identifier: GPL-2.0

//! The pure rules of the simulator `mlx_ext_sim`
//! (`Documentation/simulator.rst`): software `ib_device`s with the identities
//! of Mellanox adapters and an in-memory fabric, in the spirit of the kernel's
//! netdevsim.
//!
//! - [`model`]: the adapters the simulator can pretend to be, as one table.
//! - [`control`]: what an administrator writes to
//!   `/sys/bus/mlx_ext_sim/new_device` and `del_device`.
//! - [`fabric`]: the data path's rules that need no kernel: access flags,
//!   memory keys, the responder's checks of a remote access and their
//!   completion statuses, the `ib_atomic_wr` operand mapping, reply bytes and
//!   QP states, with the numeric values of the 6.12 `ib_verbs.h` enums.
//! - [`faults`]: the injected failures of object creation.
//! - [`sa`]: the subnet administrator a simulated port answers SA MADs with
//!   (GuidInfoRecord SET/DELETE, ClassPortInfo), programmable, logged by TID;
//!   its rules follow OpenSM's.
//! - [`mad`]: the bytes of those MADs, as the kernel's `core/sa_query.c`
//!   lays them out: the SA header, the GuidInfoRecord, the method,
//!   attribute and status values (re-exported by [`sa`]).
//! - [`text`]: the tokens of the control files: fields and decimal numbers.
//!
//! The kernel mounts this directory with `#[path]`, so files here name each
//! other through `super::` and their siblings as `crate::atomics` and
//! `crate::caps`, never through a crate name.

pub mod control;
pub mod fabric;
pub mod faults;
pub mod mad;
pub mod model;
pub mod sa;
pub mod text;

pub use control::{ControlError, Field, NewDevice};
pub use fabric::{
    Access, AtomicOp, Key, PostError, QpState, Region, RegionState, WcOpcode, WcStatus, WrOpcode,
};
pub use model::{Model, MAX_NUM_VFS, MAX_PORTS, MODELS};
