// SPDX-License-Identifier: GPL-2.0

//! A simulated adapter's debugfs knobs, `/sys/kernel/debug/mlx_ext_sim/mlxsim<ID>/`:
//! fault injection and link changes, for tests. No stable ABI.

use super::sa::SimSa;
use super::shared::{Kind, State};
use super::vf::VfGuids;
use crate::ib::{debugfs, provider::driver::Events, DirOps, File, ShowBuf};
use crate::sim::{
    faults::{CreateFaults, OpcodeRefusal},
    text,
};
use core::{fmt::Write, sync::atomic::Ordering};
use kernel::{c_str, prelude::*, str::CStr, sync::Arc};

const FAIL_CREATE: u32 = 0;
const OBJECTS: u32 = 1;
const FAIL_ATOMICS: u32 = 2;
const COMPLETION_DELAY_MS: u32 = 3;
const REFUSE_ATOMICS: u32 = 4;
const ATOMICS: u32 = 5;
const VF_GUIDS: u32 = 6;
const REFUSE_OPCODES: u32 = 7;
const FENCED_ATOMICS: u32 = 8;
/// The longest completion delay, in ms: a work item sleeps that long per
/// request, and destroying a QP waits for it.
const MAX_DELAY_MS: u32 = 10_000;
/// `port1`, `port2`: ids `PORT + n`.
const PORT: u32 = 10;
/// `sa1`, `sa2`: ids `SA + n`.
const SA: u32 = 20;
/// The files every adapter has, before those of its ports.
const COMMON_FILES: usize = 9;

/// The knobs; `port2` and `sa2` last, for two-port adapters only.
static FILES: [File<'static>; 13] = [
    File {
        name: c_str!("fail_create"),
        mode: 0o600,
        id: FAIL_CREATE,
    },
    File {
        name: c_str!("objects"),
        mode: 0o444,
        id: OBJECTS,
    },
    File {
        name: c_str!("fail_atomics"),
        mode: 0o600,
        id: FAIL_ATOMICS,
    },
    File {
        name: c_str!("completion_delay_ms"),
        mode: 0o600,
        id: COMPLETION_DELAY_MS,
    },
    File {
        name: c_str!("refuse_atomics"),
        mode: 0o600,
        id: REFUSE_ATOMICS,
    },
    File {
        name: c_str!("atomics"),
        mode: 0o444,
        id: ATOMICS,
    },
    File {
        name: c_str!("vf_guids"),
        mode: 0o600,
        id: VF_GUIDS,
    },
    File {
        name: c_str!("refuse_opcodes"),
        mode: 0o600,
        id: REFUSE_OPCODES,
    },
    File {
        name: c_str!("fenced_atomics"),
        mode: 0o444,
        id: FENCED_ATOMICS,
    },
    File {
        name: c_str!("port1"),
        mode: 0o600,
        id: PORT + 1,
    },
    File {
        name: c_str!("sa1"),
        mode: 0o600,
        id: SA + 1,
    },
    File {
        name: c_str!("port2"),
        mode: 0o600,
        id: PORT + 2,
    },
    File {
        name: c_str!("sa2"),
        mode: 0o600,
        id: SA + 2,
    },
];

/// What the knobs of one adapter act on.
pub(super) struct Knobs {
    state: Arc<State>,
    sa: Arc<SimSa>,
    vf: Arc<VfGuids>,
    events: Events,
    ports: u8,
}

impl Knobs {
    /// Makes the adapter's directory in `root`.
    pub(super) fn create(
        root: &Arc<debugfs::Root>,
        name: &CStr,
        state: Arc<State>,
        sa: Arc<SimSa>,
        vf: Arc<VfGuids>,
        events: Events,
        ports: u8,
    ) -> Result<debugfs::Dir<Self>> {
        let files = FILES
            .get(..COMMON_FILES + 2 * usize::from(ports))
            .unwrap_or(&FILES);
        debugfs::Dir::new_in(
            root,
            name,
            Self {
                state,
                sa,
                vf,
                events,
                ports,
            },
            files,
        )
    }
}

/// Parses a decimal count, as written by `echo N`.
fn parse_count(data: &[u8]) -> Result<u32> {
    text::decimal_line(data).ok_or(EINVAL)
}

impl DirOps for Knobs {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let s = &self.state;
        match id {
            FAIL_CREATE => {
                let f = CreateFaults::unpack(s.fail_create.load(Ordering::Acquire));
                writeln!(out, "{} {}", f.fail, f.skip)
            }
            FAIL_ATOMICS => writeln!(out, "{}", s.fail_atomics.load(Ordering::Acquire)),
            REFUSE_ATOMICS => {
                let f = CreateFaults::unpack(s.refuse_atomics.load(Ordering::Acquire));
                writeln!(out, "{} {}", f.fail, f.skip)
            }
            ATOMICS => writeln!(out, "{}", s.atomics.load(Ordering::Acquire)),
            FENCED_ATOMICS => writeln!(out, "{}", s.fenced_atomics.load(Ordering::Acquire)),
            REFUSE_OPCODES => writeln!(
                out,
                "{} {}",
                OpcodeRefusal::unpack(s.refuse_opcodes.load(Ordering::Acquire)).text(),
                s.opcode_refusals.load(Ordering::Acquire)
            ),
            VF_GUIDS => self.vf.show(out),
            COMPLETION_DELAY_MS => {
                writeln!(out, "{}", s.completion_delay_ms.load(Ordering::Acquire))
            }
            OBJECTS => writeln!(
                out,
                "pd {}\ncq {}\nqp {}\nmr {}",
                s.live[Kind::Pd as usize].load(Ordering::Acquire),
                s.live[Kind::Cq as usize].load(Ordering::Acquire),
                s.live[Kind::Qp as usize].load(Ordering::Acquire),
                s.live[Kind::Mr as usize].load(Ordering::Acquire),
            ),
            _ if id > SA => {
                self.port_index(id - SA + PORT)?;
                return self.sa.show(id - SA, out);
            }
            _ => {
                let i = self.port_index(id)?;
                let up = s.port_up.get(i).ok_or(EINVAL)?.load(Ordering::Acquire);
                writeln!(out, "{}", if up { "up" } else { "down" })
            }
        }
        .map_err(|_| ENOSPC)
    }

    fn store(&self, id: u32, data: &[u8]) -> Result {
        match id {
            FAIL_CREATE => {
                let f = CreateFaults::parse(data).ok_or(EINVAL)?;
                self.state.fail_create.store(f.pack(), Ordering::Release);
                Ok(())
            }
            FAIL_ATOMICS => {
                let n = parse_count(data)?;
                self.state.fail_atomics.store(n, Ordering::Release);
                Ok(())
            }
            REFUSE_ATOMICS => {
                let f = CreateFaults::parse(data).ok_or(EINVAL)?;
                self.state.refuse_atomics.store(f.pack(), Ordering::Release);
                Ok(())
            }
            REFUSE_OPCODES => {
                let r = OpcodeRefusal::parse(data).ok_or(EINVAL)?;
                self.state.refuse_opcodes.store(r.pack(), Ordering::Release);
                self.state.opcode_refusals.store(0, Ordering::Release);
                Ok(())
            }
            COMPLETION_DELAY_MS => {
                let ms = parse_count(data)?;
                if ms > MAX_DELAY_MS {
                    return Err(EINVAL);
                }
                self.state.completion_delay_ms.store(ms, Ordering::Release);
                Ok(())
            }
            OBJECTS | ATOMICS | FENCED_ATOMICS => Err(EPERM),
            VF_GUIDS => self.vf.command(data),
            _ if id > SA => {
                self.port_index(id - SA + PORT)?;
                self.sa.command(id - SA, data)
            }
            _ => {
                let i = self.port_index(id)?;
                let up = match data.strip_suffix(b"\n").unwrap_or(data) {
                    b"up" => true,
                    b"down" => false,
                    _ => return Err(EINVAL),
                };
                let flag = self.state.port_up.get(i).ok_or(EINVAL)?;
                // Raise the event only on a change, as a link does.
                if flag.swap(up, Ordering::AcqRel) != up {
                    self.events.port_event(id - PORT, up);
                }
                Ok(())
            }
        }
    }
}

impl Knobs {
    fn port_index(&self, id: u32) -> Result<usize> {
        let port = id.checked_sub(PORT).ok_or(EINVAL)?;
        if port == 0 || port > u32::from(self.ports) {
            return Err(EINVAL);
        }
        usize::try_from(port - 1).map_err(|_| EINVAL)
    }
}
