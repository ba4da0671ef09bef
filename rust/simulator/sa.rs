// SPDX-License-Identifier: GPL-2.0

//! The subnet administrator of a simulated adapter's ports: the SA that
//! ib_sa's queries reach through the port's GSI QP (`gsi.rs`). Its policy
//! is the pure [`crate::sim::sa::Sa`], one per port; this file keeps them,
//! gives them a clock, and tells ib_core when a port's GID table (the
//! alias GUIDs the SA granted, as a mlx4 PF shows them) changes.

use crate::ib::{provider::driver::Events, sync::IrqSpinLock, ShowBuf};
use crate::new_irq_spinlock;
use crate::sim::sa::{parse_command, Sa, SaMode, MAD_LEN, PORT_GUIDS};
use core::fmt::Write;
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// Where a [`SimSa`] raises GID table changes.
#[derive(Default)]
struct EventSink {
    /// The registered device's events; `None` until [`SimSa::set_events`].
    events: Option<Events>,
    /// Bit `p - 1`: port `p`'s table changed while `events` was `None`.
    missed: u32,
}

/// The SAs of one adapter's ports.
#[pin_data]
pub(super) struct SimSa {
    /// Port `p`'s SA at index `p - 1`.
    #[pin]
    ports: IrqSpinLock<KVec<KBox<Sa>>>,
    /// Where GID table changes are raised, once the device is registered,
    /// and the ports whose table changed before that.
    #[pin]
    events: Mutex<EventSink>,
    /// The log's clock starts here.
    start_ns: u64,
}

impl SimSa {
    /// The SAs of `ports` ports of `guid_cap` GUIDs each: port `p` has LID
    /// `lid(p)`, its own GUID `port_guid(p)` in entry 0, and assigns
    /// `assign_base(p) + n` to entry `n` when asked to assign one.
    pub(super) fn new(
        ports: u8,
        guid_cap: usize,
        lid: impl Fn(u32) -> u32,
        port_guid: impl Fn(u32) -> u64,
        assign_base: impl Fn(u32) -> u64,
    ) -> Result<Arc<Self>> {
        let mut v = KVec::with_capacity(usize::from(ports), GFP_KERNEL)?;
        for p in 1..=u32::from(ports) {
            let lid = u16::try_from(lid(p)).map_err(|_| EINVAL)?;
            let mut sa = KBox::new(Sa::new(lid, assign_base(p), guid_cap), GFP_KERNEL)?;
            sa.preset(0, port_guid(p));
            v.push(sa, GFP_KERNEL)?;
        }
        Arc::pin_init(
            pin_init!(Self {
                ports <- new_irq_spinlock!(v, "mlx_ext_sim::sa::ports"),
                events <- new_mutex!(EventSink::default(), "mlx_ext_sim::sa::events"),
                start_ns: crate::ib::ktime_get_ns(),
            }),
            GFP_KERNEL,
        )
    }

    /// Raises the device's events from now on (once it is registered),
    /// first `IB_EVENT_GID_CHANGE` for each port whose table changed before.
    ///
    /// ib_core reads a port's GID table into its cache while it registers
    /// the device (`ib_cache_setup_one`), then adds its clients, whose SA
    /// requests the SA may answer, on another CPU, before
    /// `ib_register_device` returns the device to us: a change then is
    /// raised here, or the cache would miss it until the next one.
    pub(super) fn set_events(&self, events: Events) {
        let mut sink = self.events.lock();
        let missed = core::mem::take(&mut sink.missed);
        for port in 1..=u32::BITS {
            if missed & (1 << (port - 1)) != 0 {
                events.gid_change(port);
            }
        }
        sink.events = Some(events);
    }

    /// Raises `IB_EVENT_GID_CHANGE` on `port`, or keeps it for
    /// [`Self::set_events`].
    fn gid_changed(&self, port: u32) {
        let mut sink = self.events.lock();
        match &sink.events {
            Some(events) => events.gid_change(port),
            None => {
                if let Some(bit) = port.checked_sub(1).and_then(|b| 1u32.checked_shl(b)) {
                    sink.missed |= bit;
                }
            }
        }
    }

    fn now_ms(&self) -> u64 {
        crate::ib::ktime_get_ns().saturating_sub(self.start_ns) / 1_000_000
    }

    fn index(port: u32) -> Option<usize> {
        usize::try_from(port.checked_sub(1)?).ok()
    }

    /// GUID `entry` of `port`'s GUIDInfo table, as the SM programmed it (0
    /// for none).
    pub(super) fn guid(&self, port: u32, entry: u32) -> u64 {
        let (Some(i), Ok(e)) = (Self::index(port), usize::try_from(entry)) else {
            return 0;
        };
        self.ports.lock().get(i).map_or(0, |sa| sa.guid(e))
    }

    /// Shows the SM VF `vf`'s vport on `port` with `port_guid` (0: none),
    /// as mlx5 firmware does once `set_vf_guid` programmed it.
    pub(super) fn set_vport(&self, port: u32, vf: u32, port_guid: u64) {
        let (Some(i), Ok(vf)) = (Self::index(port), usize::try_from(vf)) else {
            return;
        };
        if let Some(sa) = self.ports.lock().get_mut(i) {
            sa.set_vport(vf, port_guid);
        }
    }

    /// Takes a MAD sent to the SM from `port`; returns whether there is an
    /// answer, which is then in `out`. Process context: a change of the
    /// port's GUIDs is raised as `IB_EVENT_GID_CHANGE`.
    pub(super) fn handle(&self, port: u32, mad: &[u8; MAD_LEN], out: &mut [u8; MAD_LEN]) -> bool {
        let Some(i) = Self::index(port) else {
            return false;
        };
        let now = self.now_ms();
        let (answered, changed) = {
            let mut ports = self.ports.lock();
            let Some(sa) = ports.get_mut(i) else {
                return false;
            };
            let before = sa.changes();
            let answered = sa.handle(mad, now, out);
            (answered, sa.changes() != before)
        };
        if changed {
            self.gid_changed(port);
        }
        answered
    }

    /// Carries out a command written to `sa<port>` (`program now` may
    /// change the port's table: raised as `IB_EVENT_GID_CHANGE`).
    pub(super) fn command(&self, port: u32, text: &[u8]) -> Result {
        let cmd = parse_command(text).ok_or(EINVAL)?;
        let i = Self::index(port).ok_or(EINVAL)?;
        let changed = {
            let mut ports = self.ports.lock();
            let sa = ports.get_mut(i).ok_or(EINVAL)?;
            let before = sa.changes();
            sa.command(cmd);
            sa.changes() != before
        };
        if changed {
            self.gid_changed(port);
        }
        Ok(())
    }

    /// What `sa<port>` shows: the mode, the declines left, the totals
    /// (`requests R copies C`: every request and MAD that reached the SA),
    /// then the log, oldest first, one request a line:
    /// `TID FIRST_MS METHOD ATTR BLOCK MASK COPIES STATUS DECLINED`
    /// (hex but for the times, the block and the copies; STATUS `-` while
    /// unanswered).
    pub(super) fn show(&self, port: u32, out: &mut ShowBuf<'_>) -> Result {
        let i = Self::index(port).ok_or(EINVAL)?;
        let ports = self.ports.lock();
        let sa = ports.get(i).ok_or(EINVAL)?;
        let r = (|| -> core::fmt::Result {
            match sa.mode() {
                SaMode::Accept => writeln!(out, "mode accept")?,
                SaMode::Status(s) => writeln!(out, "mode status {}", s)?,
                SaMode::Silent => writeln!(out, "mode silent")?,
                SaMode::PortDown => writeln!(out, "mode port_down")?,
            }
            write!(out, "declines")?;
            for e in 0..PORT_GUIDS {
                let n = sa.declines_left(e);
                if n > 0 {
                    write!(out, " {}:{}", e, n)?;
                }
            }
            writeln!(out)?;
            let (requests, copies) = sa.totals();
            writeln!(out, "requests {} copies {}", requests, copies)?;
            for e in sa.log() {
                write!(
                    out,
                    "{:x} {} {:x} {:x} {} {:x} {} ",
                    e.tid, e.first_ms, e.method, e.attr, e.block, e.mask, e.copies
                )?;
                match e.status {
                    Some(s) => write!(out, "{:x}", s)?,
                    None => write!(out, "-")?,
                }
                writeln!(out, " {:x}", e.declined)?;
            }
            Ok(())
        })();
        r.map_err(|_| ENOSPC)
    }
}
