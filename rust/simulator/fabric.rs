// SPDX-License-Identifier: GPL-2.0

//! The simulated fabric: how the RC QPs of simulated adapters reach each
//! other (by destination LID and QP number, as on InfiniBand). What a send
//! request does when it executes is `qp.rs`'s.

use super::shared::lid_to_device;
use crate::ib::sync::IrqSpinLock;
use crate::new_irq_spinlock;
use kernel::{
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
    sync::Arc,
};

/// Every RC QP `Q` of every simulated adapter (`qp::QpShared`: the
/// fabric only keeps them), by device and QP number and reached by LID,
/// and the lock that makes atomics atomic with
/// respect to each other on the whole fabric.
#[pin_data]
pub(super) struct Fabric<Q: Send + Sync + 'static> {
    /// QPs by `device ID << 32 | QP number`.
    #[pin]
    qps: IrqSpinLock<RBTree<u64, Arc<Q>>>,
    /// Held around the read-modify-write of every atomic the fabric
    /// executes (`IB_ATOMIC_HCA`: atomic among the adapters' own atomics).
    #[pin]
    pub(super) atomics: IrqSpinLock<()>,
}

fn qp_key(dev: u32, qpn: u32) -> u64 {
    (u64::from(dev) << 32) | u64::from(qpn)
}

impl<Q: Send + Sync + 'static> Fabric<Q> {
    pub(super) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                qps <- new_irq_spinlock!(RBTree::new(), "mlx_ext_sim::fabric::qps"),
                atomics <- new_irq_spinlock!((), "mlx_ext_sim::fabric::atomics"),
            }),
            GFP_KERNEL,
        )
    }

    /// Makes `qp`, QP `qpn` of device `dev`, reachable; `EBUSY` if its
    /// number is taken (a live QP is never replaced).
    pub(super) fn add(&self, dev: u32, qpn: u32, qp: Arc<Q>) -> Result {
        let key = qp_key(dev, qpn);
        let node = RBTreeNodeReservation::new(GFP_KERNEL)?.into_node(key, qp);
        let mut qps = self.qps.lock();
        if qps.get(&key).is_some() {
            drop(qps);
            drop(node);
            return Err(EBUSY);
        }
        let old = qps.insert(node);
        drop(qps);
        drop(old);
        Ok(())
    }

    /// Whether device `dev` has a QP numbered `qpn`.
    pub(super) fn contains(&self, dev: u32, qpn: u32) -> bool {
        self.qps.lock().get(&qp_key(dev, qpn)).is_some()
    }

    /// Makes QP `qpn` of device `dev` unreachable.
    pub(super) fn remove(&self, dev: u32, qpn: u32) {
        let node = self.qps.lock().remove_node(&qp_key(dev, qpn));
        // Dropped without the lock: it may be the last reference.
        drop(node);
    }

    /// The QP a request to `dlid`, `qpn` reaches.
    pub(super) fn lookup(&self, dlid: u32, qpn: u32) -> Option<Arc<Q>> {
        let dev = lid_to_device(dlid)?;
        self.qps.lock().get(&qp_key(dev, qpn)).cloned()
    }
}
