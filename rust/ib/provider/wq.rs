// SPDX-License-Identifier: GPL-2.0

//! A workqueue a module owns: destroyed (after running every work item
//! queued on it) when dropped, so that no work item of the module runs
//! after it is gone.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h).
//! The 6.12 kernel crate has the system queues and `Queue::from_raw`, but no
//! way to make a queue.

use crate::ib::bindings;
use core::{ops::Deref, ptr::NonNull};
use kernel::{prelude::*, str::CStr, workqueue::Queue};

/// A workqueue made by `alloc_workqueue`, destroyed on drop.
///
/// # Invariants
///
/// `raw` was returned by `alloc_workqueue` and is not destroyed yet.
pub struct OwnedQueue {
    raw: NonNull<bindings::workqueue_struct>,
}

// SAFETY: Workqueues may be used and destroyed from any thread.
unsafe impl Send for OwnedQueue {}
// SAFETY: As above.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    /// Makes an unbound workqueue named `name`.
    pub fn new(name: &CStr) -> Result<Self> {
        // SAFETY: `name` is a NUL-terminated string, which
        // `alloc_workqueue` copies.
        let raw = unsafe { bindings::mlx_ext_alloc_unbound_workqueue(name.as_char_ptr()) };
        // INVARIANT: Checked non-null.
        Ok(Self {
            raw: NonNull::new(raw).ok_or(ENOMEM)?,
        })
    }
}

impl Deref for OwnedQueue {
    type Target = Queue;

    fn deref(&self) -> &Queue {
        // SAFETY: The queue lives until `drop` (invariant); `Queue` is a
        // transparent wrapper of the same C struct.
        unsafe { Queue::from_raw(self.raw.as_ptr().cast()) }
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: Live (invariant), destroyed only here. It runs the work
        // items still queued and waits for them; none may be queued after.
        unsafe { bindings::destroy_workqueue(self.raw.as_ptr()) };
    }
}

pub use crate::ib::msleep;
