// SPDX-License-Identifier: GPL-2.0

//! Completion queues of a simulated adapter: a fixed ring of work
//! completions per CQ, shared with the QPs that complete on it, armed as
//! `req_notify_cq` asks, its handler called once the QP's locks are
//! dropped. A QP's lock is taken before its CQs' (`ring`), which disable
//! interrupts: verbs may be called in any context.

use super::shared::Counted;
use crate::ib::{
    provider::driver::{CqNotifier, QpRef, Wc, WcSink},
    sync::IrqSpinLock,
};
use crate::new_irq_spinlock;
use crate::sim::fabric::WcStatus;
use kernel::{prelude::*, sync::Arc};

/// A queue of fixed capacity, oldest first.
pub(super) struct Ring<T> {
    slots: KVVec<Option<T>>,
    head: usize,
    len: usize,
}

impl<T> Ring<T> {
    pub(super) fn new(cap: usize) -> Result<Self> {
        let mut slots = KVVec::with_capacity(cap, GFP_KERNEL)?;
        for _ in 0..cap {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            slots,
            head: 0,
            len: 0,
        })
    }

    /// Index `i` (below `2 * cap`) of the ring. Not `%`: its division by
    /// zero panic path trips objtool on Rust code in 6.12.
    fn wrap(&self, i: usize) -> usize {
        let cap = self.slots.len();
        if i >= cap {
            i - cap
        } else {
            i
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Appends `v`; gives it back if the ring is full.
    pub(super) fn push(&mut self, v: T) -> core::result::Result<(), T> {
        if self.len == self.slots.len() {
            return Err(v);
        }
        let tail = self.wrap(self.head + self.len);
        match self.slots.get_mut(tail) {
            Some(slot) => {
                *slot = Some(v);
                self.len += 1;
                Ok(())
            }
            None => Err(v),
        }
    }

    pub(super) fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        self.slots.get(self.head).and_then(Option::as_ref)
    }

    pub(super) fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.slots.get_mut(self.head).and_then(Option::take);
        self.head = self.wrap(self.head + 1);
        self.len -= 1;
        v
    }

    /// Keeps only the entries `keep` accepts, in order.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let (head, len) = (self.head, self.len);
        let mut kept = 0;
        for i in 0..len {
            let at = self.wrap(head + i);
            let v = self.slots.get_mut(at).and_then(Option::take);
            if let Some(v) = v.filter(|v| keep(v)) {
                let to = self.wrap(head + kept);
                if let Some(slot) = self.slots.get_mut(to) {
                    *slot = Some(v);
                }
                kept += 1;
            }
        }
        self.len = kept;
    }
}

/// How a CQ is armed (`req_notify_cq`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arm {
    /// Not armed: completions are queued silently.
    Off,
    /// The next completion runs the handler.
    Next,
    /// The next solicited completion (or error) runs the handler.
    Solicited,
}

struct CqRing {
    wcs: Ring<Wc>,
    arm: Arm,
    /// Completions lost because the CQ was full.
    overflows: u32,
}

/// What [`CqShared::push`] found: whether to run the handler and whether a
/// completion was lost, to act on once the locks are dropped.
#[must_use]
#[derive(Clone, Copy, Default)]
pub(super) struct Pushed {
    notify: bool,
    overflow: bool,
}

impl Pushed {
    /// Both results: one handler call covers several completions, and
    /// neither a notification nor an overflow may be lost.
    pub(super) fn and(self, other: Self) -> Self {
        Self {
            notify: self.notify || other.notify,
            overflow: self.overflow || other.overflow,
        }
    }
}

/// A CQ's queue, shared with the QPs completing on it.
#[pin_data]
pub(super) struct CqShared {
    notifier: CqNotifier,
    #[pin]
    ring: IrqSpinLock<CqRing>,
}

impl CqShared {
    /// Queues `wc` (errors count as solicited, as the IB spec says). The
    /// caller calls [`CqShared::signal`] with the result once it holds no
    /// lock: a handler may post again.
    pub(super) fn push(&self, wc: Wc, solicited: bool) -> Pushed {
        let mut r = self.ring.lock();
        let failed = wc.status != WcStatus::Success as u32;
        if r.wcs.push(wc).is_err() {
            r.overflows = r.overflows.saturating_add(1);
            return Pushed {
                notify: false,
                overflow: true,
            };
        }
        let fire = match r.arm {
            Arm::Off => false,
            Arm::Next => true,
            Arm::Solicited => solicited || failed,
        };
        if fire {
            r.arm = Arm::Off;
        }
        Pushed {
            notify: fire,
            overflow: false,
        }
    }

    /// Runs the handler for what `push` found.
    pub(super) fn signal(&self, p: Pushed) {
        if p.overflow {
            if self.ring.lock().overflows == 1 {
                pr_warn!("CQ overflow: completions lost (IB_EVENT_CQ_ERR raised)\n");
            }
            self.notifier.error();
        }
        if p.notify {
            self.notifier.notify();
        }
    }

    /// Removes every completion of `qp`.
    pub(super) fn purge(&self, qp: QpRef) {
        self.ring.lock().wcs.retain(|wc| wc.qp != qp);
    }
}

/// The driver's data of a CQ.
pub(super) struct SimCq {
    pub(super) shared: Arc<CqShared>,
    _counted: Counted,
}

impl SimCq {
    pub(super) fn new(counted: Counted, entries: u32, notifier: CqNotifier) -> Result<Self> {
        let wcs = Ring::new(usize::try_from(entries)?)?;
        Ok(Self {
            shared: Arc::pin_init(
                pin_init!(CqShared {
                    notifier,
                    ring <- new_irq_spinlock!(
                        CqRing {
                            wcs,
                            arm: Arm::Off,
                            overflows: 0,
                        },
                        "mlx_ext_sim::cq"
                    ),
                }),
                GFP_KERNEL,
            )?,
            _counted: counted,
        })
    }

    pub(super) fn poll(&self, out: &mut WcSink<'_>) {
        let mut r = self.shared.ring.lock();
        while out.room() > 0 {
            let Some(wc) = r.wcs.pop() else { break };
            out.push(&wc);
        }
    }

    /// Arms the CQ; returns whether completions are waiting (asked for with
    /// `report_missed`).
    pub(super) fn arm(&self, solicited_only: bool, report_missed: bool) -> bool {
        let mut r = self.shared.ring.lock();
        r.arm = if solicited_only {
            Arm::Solicited
        } else {
            Arm::Next
        };
        report_missed && r.wcs.len() > 0
    }
}
