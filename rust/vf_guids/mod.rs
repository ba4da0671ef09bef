// SPDX-License-Identifier: GPL-2.0

//! The VF GUID tables (`Documentation/vf-guids.rst`): the
//! `iov` tree of a device whose ports get one, and behind each such port the
//! pure engine of `core/src/guid/`, driven by a delayed work item and
//! talking to the subnet manager through ib_sa.
//!
//! Per port, one [`port::PortGuids`] holds the engine behind a mutex, held across
//! the engine's `run()` and the SA calls it makes (see the locking section
//! of the documentation). Its users: the work item (which runs the engine,
//! takes the SA's answers and tells watchers of events), sysfs reads and
//! writes, and the device's port events. The SA's answers do not take the
//! mutex: they arrive on ib_mad's workers, shared by every MAD user of the
//! port, which must not wait for a submission sleeping in the allocator;
//! they are left in a mailbox for the work item. Teardown first deletes
//! the table's GUIDs at the SM (the engine's `retire`, waited for at most
//! [`port::RETIRE_WAIT_MS`]), then stops the users in that order: events, sysfs,
//! then the port itself (no new work, the outstanding query cancelled, the
//! work item cancelled, every answer waited for).

mod files;
mod port;
mod switch;
mod tree;

pub use switch::{DeviceGuids, Slot};
