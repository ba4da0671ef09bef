// SPDX-License-Identifier: GPL-2.0

//! Lists of a QP's operations that own their requests, linked through the
//! requests themselves: waiting for a word, or following a batch's leader.
//! Nothing is allocated to link them.

use crate::ib::request::{Handler, Request};

/// What a [`Chain`] links: a request's data that holds the rest of its
/// chain.
pub(super) trait Linked: Handler {
    /// The chain after this element.
    fn next(&mut self) -> &mut Chain<Self>;
}

/// A list of operations, each linked to the next through its own
/// [`Linked::next`].
pub(super) struct Chain<T: Linked>(Option<Request<T>>);

impl<T: Linked> Default for Chain<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T: Linked> Chain<T> {
    /// An empty chain.
    pub(super) const fn new() -> Self {
        Self(None)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(super) fn push_front(&mut self, mut req: Request<T>) {
        *req.data_mut().next() = Self(self.0.take());
        self.0 = Some(req);
    }

    pub(super) fn pop_front(&mut self) -> Option<Request<T>> {
        let mut head = self.0.take()?;
        self.0 = head.data_mut().next().0.take();
        Some(head)
    }

    pub(super) fn reversed(mut self) -> Self {
        let mut out = Self::new();
        while let Some(r) = self.pop_front() {
            out.push_front(r);
        }
        out
    }

    /// Appends `other` (in its order) after the operations here.
    pub(super) fn append(&mut self, other: Self) {
        let mut all = core::mem::take(self).reversed();
        let mut other = other;
        while let Some(r) = other.pop_front() {
            all.push_front(r);
        }
        *self = all.reversed();
    }

    /// The operations for which `pred` holds, and the others, each in
    /// their order.
    pub(super) fn partition(mut self, pred: impl Fn(&T) -> bool) -> (Self, Self) {
        let (mut yes, mut no) = (Self::new(), Self::new());
        while let Some(r) = self.pop_front() {
            if pred(r.data()) {
                yes.push_front(r);
            } else {
                no.push_front(r);
            }
        }
        (yes.reversed(), no.reversed())
    }

    /// The operations before the first for which `pred` holds, and the
    /// rest from it on.
    pub(super) fn split_before(mut self, pred: impl Fn(&T) -> bool) -> (Self, Self) {
        let mut head = Self::new();
        while let Some(r) = self.pop_front() {
            if pred(r.data()) {
                self.push_front(r);
                break;
            }
            head.push_front(r);
        }
        (head.reversed(), self)
    }

    pub(super) fn for_each(&mut self, mut f: impl FnMut(&mut T)) {
        let mut cur = &mut self.0;
        while let Some(r) = cur {
            f(r.data_mut());
            cur = &mut r.data_mut().next().0;
        }
    }
}
