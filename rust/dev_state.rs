// SPDX-License-Identifier: GPL-2.0

//! What mlx_ext knows of a device: its capability record as derived when
//! the device was added, and what its driver refused or accepted since.
//!
//! [`crate::registry`] makes it when ib_core adds the device and owns it;
//! [`crate::atomic_api`]'s QPs read it (through the report's client) and
//! tell it what the driver did with their work requests. Neither of those
//! modules is imported here.

use crate::{
    atomics::ReplyOrder,
    caps::{errno_name, AtomicCap, Record, Refusals, WrClass},
    ib::DeviceName,
};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;

/// What mlx_ext knows of a device, shared by its sysfs report and its QPs.
pub struct DevState {
    record: Record,
    /// What the driver refused at run time ([`Refusals::pack`]).
    refused: AtomicU32,
    /// The [`WrClass::bit`]s of what the driver accepted so far.
    accepted: AtomicU32,
    /// The reason masked atomics are unavailable was logged.
    told: AtomicBool,
    name: DeviceName,
}

impl DevState {
    /// The state of a device whose record was derived as `record`.
    pub fn new(record: Record, name: DeviceName) -> Self {
        Self {
            record,
            refused: AtomicU32::new(0),
            accepted: AtomicU32::new(0),
            told: AtomicBool::new(false),
            name,
        }
    }

    /// The record now: as derived, with what the driver refused since.
    pub fn record(&self) -> Record {
        match self.refused.load(Ordering::Acquire) {
            0 => self.record,
            word => self.record.with_refusals(Refusals::unpack(word)),
        }
    }

    /// The device's name, for messages.
    pub fn name(&self) -> &DeviceName {
        &self.name
    }

    /// The byte order of the device's atomic responses.
    pub fn reply_order(&self) -> ReplyOrder {
        if self.record.atomic_cap == AtomicCap::HcaReplyBe {
            ReplyOrder::BigEndian
        } else {
            ReplyOrder::Host
        }
    }

    /// Logs, once per device, why a ULP's atomics are refused.
    pub fn tell(&self, why: &str) {
        if !self.told.swap(true, Ordering::AcqRel) {
            pr_info!("{}: atomics refused to a ULP: {}\n", self.name, why);
        }
    }

    /// The driver accepted a work request of `class`.
    pub fn driver_accepted(&self, class: WrClass) {
        if self.accepted.load(Ordering::Relaxed) & class.bit() == 0 {
            self.accepted.fetch_or(class.bit(), Ordering::AcqRel);
        }
    }

    /// The driver refused a work request of `class` with `errno`, on a QP
    /// found in RTS just before or not (`qp_sends`): if that is a refusal of the
    /// opcode (`EINVAL` or `EOPNOTSUPP`) of a class the record posts
    /// ([`Record::learns`]), it is recorded, and logged once per class.
    pub fn driver_refused(&self, class: WrClass, errno: i32, qp_sends: bool) {
        let mut word = self.refused.load(Ordering::Acquire);
        loop {
            let mut refusals = Refusals::unpack(word);
            let accepted = self.accepted.load(Ordering::Acquire);
            if !self
                .record
                .with_refusals(refusals)
                .learns(class, accepted, qp_sends)
                || !refusals.note(class, errno)
            {
                return;
            }
            match self.refused.compare_exchange(
                word,
                refusals.pack(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => word = now,
            }
        }
        let r = self.record();
        pr_warn!(
            "{}: the driver refused an atomic work request ({}): masked_atomic_mode is now {}; {}\n",
            self.name,
            errno_name(errno),
            r.mode.name(),
            r.reasons
        );
    }
}
