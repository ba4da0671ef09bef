// SPDX-License-Identifier: GPL-2.0

//! Properties of the GUID engine over random sequences of admin writes, SM
//! behaviours, failed sends, resets and time: no admin request is lost, no
//! retry waits more than 60 s, requests never mix SET and DELETE, a request
//! the engine drops is cancelled, the engine settles after every run, and
//! the port-state and event rules hold after every step.

use mlx_ext_core::guid::{
    is_valid_guid, Config, Engine, EntryIdx, Method, Request, SimMode, SimSm, SmBackend,
    SubmitError, GUID_ASSIGN, GUID_DELETE, NSEC_PER_SEC,
};
use proptest::prelude::*;

const S: u64 = NSEC_PER_SEC;

/// The most runs of the engine one [`Op::Run`] or the final settling may
/// take: far more than they need, so that an engine that never settles
/// fails the property instead of hanging it.
const MAX_STEPS: usize = 10_000;

fn ent(n: u8) -> EntryIdx {
    EntryIdx::new(n).unwrap()
}

#[derive(Clone, Debug)]
enum Op {
    Write(EntryIdx, u64),
    Advance(u64),
    /// Runs the port for this long, the SM answering every request at once.
    Run(u64),
    Reply,
    Lose,
    Mode(SimMode),
    Decline(EntryIdx, u8),
    /// The backend fails to send the next request.
    FailNextSend(SubmitError),
    /// Starts the table over with this many VFs and `sm_guid_assign`.
    Reset(u16, bool),
}

fn value() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(GUID_ASSIGN),
        Just(GUID_DELETE),
        (1u64..6).prop_map(|v| 0x0002_c903_0000_0000 | v),
        any::<u64>(),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u8..128, value()).prop_map(|(e, v)| Op::Write(ent(e), v)),
        // Entries 1..=24 (records 0 to 2) are written more often, so that
        // writes meet in-flight requests and shared records.
        3 => (1u8..25, value()).prop_map(|(e, v)| Op::Write(ent(e), v)),
        3 => (0u64..70_000_000_000).prop_map(Op::Advance),
        2 => (0u64..400_000_000_000).prop_map(Op::Run),
        4 => Just(Op::Reply),
        1 => Just(Op::Lose),
        1 => prop_oneof![
            Just(SimMode::Accept),
            Just(SimMode::Decline),
            Just(SimMode::Error),
            Just(SimMode::Timeout),
            Just(SimMode::PortDown)
        ]
        .prop_map(Op::Mode),
        2 => (1u8..128, 0u8..12).prop_map(|(e, n)| Op::Decline(ent(e), n)),
        1 => prop_oneof![Just(SubmitError::Failed), Just(SubmitError::PortDown)]
            .prop_map(Op::FailNextSend),
        1 => (prop_oneof![Just(0u16), Just(1), 0u16..=126], any::<bool>())
            .prop_map(|(n, a)| Op::Reset(n, a)),
    ]
}

/// The simulated SM behind a backend that can be told to fail a send.
struct Backend {
    sm: SimSm,
    fail_next: Option<SubmitError>,
}

impl SmBackend for Backend {
    fn submit(&mut self, request: &Request) -> Result<(), SubmitError> {
        match self.fail_next.take() {
            Some(error) => Err(error),
            None => self.sm.submit(request),
        }
    }

    fn cancel(&mut self, request: &Request) {
        self.sm.cancel(request);
    }
}

struct World {
    engine: Engine,
    backend: Backend,
    now: u64,
    /// The admin values of the table as the last reset made it.
    initial: Vec<u64>,
    /// The administrator's last write per entry since the last reset
    /// (`None`: never written).
    written: [Option<u64>; 128],
}

impl World {
    fn opers(&self) -> Vec<u64> {
        EntryIdx::all().map(|e| self.engine.oper(e)).collect()
    }

    /// Checks the invariants after a step, given the operational values
    /// before it.
    fn check(&mut self, before: &[u64]) -> Result<(), TestCaseError> {
        let e = &mut self.engine;
        let split = *e.split();
        // Events: exactly the owners of the entries whose GUID changed.
        let mut want = Vec::new();
        for entry in EntryIdx::all() {
            if e.oper(entry) != before[entry.index()] {
                if let Some((f, _)) = split.owner(entry) {
                    want.push(f);
                }
            }
        }
        want.sort_unstable();
        want.dedup();
        let got: Vec<u16> = e.take_events().iter().collect();
        prop_assert_eq!(got, want);
        // Port state: a function is up exactly when its base entry is valid.
        let up: Vec<u16> = (0..split.num_functions())
            .filter(|&f| is_valid_guid(e.oper(split.base(f).unwrap())))
            .collect();
        prop_assert_eq!(e.up_functions().iter().collect::<Vec<_>>(), up);
        // No retry waits more than 60 s, and backoffs follow 1, 2, 4, ... 60.
        for entry in EntryIdx::all().skip(1) {
            let b = e.backoff_secs(entry);
            prop_assert!([0, 1, 2, 4, 8, 16, 32, 60].contains(&b), "backoff {}", b);
            if let Some(due) = e.due(entry) {
                prop_assert!(
                    due <= self.now + 60 * S,
                    "entry {} due {} at {}",
                    entry,
                    due,
                    self.now
                );
            }
        }
        if e.outstanding().is_none() {
            if let Some(t) = e.next_wakeup() {
                prop_assert!(t <= self.now + 60 * S);
            }
        }
        // The PF's hardware GUID never moves.
        prop_assert_eq!(e.oper(EntryIdx::HW_GUID), 0x77);
        Ok(())
    }

    /// Runs the engine and checks what it did: the request it sent, if any,
    /// and that it settled.
    fn poll(&mut self) -> Result<(), TestCaseError> {
        let had = self.backend.sm.inflight().map(|r| r.id);
        let wakeup = self.engine.run(&mut self.backend, self.now);
        prop_assert_eq!(wakeup, self.engine.next_wakeup());
        // The engine sleeps only once it has sent what is due: it waits for
        // an answer, or for a time still to come.
        prop_assert!(
            self.engine.outstanding().is_some() || wakeup.map_or(true, |t| t > self.now),
            "run returned {:?} at {} with nothing outstanding",
            wakeup,
            self.now
        );
        if let Some(r) = self.backend.sm.inflight().copied() {
            prop_assert_eq!(
                self.engine.outstanding(),
                Some(&r),
                "the SM waits for a request the engine forgot"
            );
            if Some(r.id) != had {
                prop_assert!(r.mask != 0);
                for entry in r.entries() {
                    let due = self.engine.due(entry);
                    prop_assert!(
                        due.is_some_and(|d| d <= self.now),
                        "entry {} sent before it was due",
                        entry
                    );
                    let admin = self.engine.admin(entry);
                    prop_assert_ne!(entry, EntryIdx::HW_GUID, "the hardware GUID is never sent");
                    match r.method {
                        Method::Delete => prop_assert_eq!(admin, GUID_DELETE),
                        Method::Set => {
                            prop_assert_ne!(admin, GUID_DELETE);
                            prop_assert_eq!(r.guids[entry.slot()], admin);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn reply(&mut self) {
        if let Some(answer) = self.backend.sm.reply() {
            // The engine may have given the request up already.
            let _ = self.engine.answer(&answer, self.now);
        }
    }

    fn run_for(&mut self, ns: u64, mut before: Vec<u64>) -> Result<(), TestCaseError> {
        let end = self.now + ns;
        for _ in 0..MAX_STEPS {
            self.reply();
            match self.engine.next_wakeup() {
                Some(t) if t <= end => self.now = self.now.max(t),
                _ => {
                    self.now = end;
                    self.poll()?;
                    return self.check(&before);
                }
            }
            self.poll()?;
            self.check(&before)?;
            before = self.opers();
        }
        Err(TestCaseError::fail(format!(
            "the engine did not settle: still running at {} after {MAX_STEPS} steps",
            self.now
        )))
    }

    fn reset(&mut self, num_vfs: u16, sm_guid_assign: bool) -> Result<(), TestCaseError> {
        let dropped = self.engine.outstanding().copied();
        let cancels = self.backend.sm.cancels();
        self.engine
            .reset(Config {
                port_guids: 128,
                num_vfs,
                sm_guid_assign,
                hw_guid: 0x77,
            })
            .unwrap();
        prop_assert_eq!(self.engine.outstanding(), None);
        self.initial = EntryIdx::all().map(|e| self.engine.admin(e)).collect();
        self.written = [None; 128];
        // A reset is no GUID change: no events.
        prop_assert!(self.engine.take_events().is_empty());
        let before = self.opers();
        self.poll()?;
        if let Some(dropped) = dropped {
            prop_assert_eq!(
                self.backend.sm.cancels(),
                cancels + 1,
                "the dropped request is cancelled"
            );
            prop_assert!(!self
                .backend
                .sm
                .inflight()
                .is_some_and(|r| r.id == dropped.id));
        }
        self.check(&before)
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let before = self.opers();
        match *op {
            Op::Write(entry, v) => {
                self.engine.set_admin(entry, v, self.now).unwrap();
                self.written[entry.index()] = Some(v);
            }
            Op::Advance(ns) => self.now += ns,
            Op::Run(ns) => return self.run_for(ns, before),
            Op::Reply => self.reply(),
            Op::Lose => {
                self.backend.sm.lose();
            }
            Op::Mode(m) => self.backend.sm.set_mode(m),
            Op::Decline(entry, n) => self.backend.sm.decline(entry, n),
            Op::FailNextSend(error) => self.backend.fail_next = Some(error),
            Op::Reset(num_vfs, sm_guid_assign) => return self.reset(num_vfs, sm_guid_assign),
        }
        self.poll()?;
        self.check(&before)
    }
}

fn run(num_vfs: u16, sm_guid_assign: bool, ops: &[Op]) -> Result<(), TestCaseError> {
    let engine = Engine::new(Config {
        port_guids: 128,
        num_vfs,
        sm_guid_assign,
        hw_guid: 0x77,
    })
    .unwrap();
    let initial = EntryIdx::all().map(|e| engine.admin(e)).collect();
    let mut w = World {
        engine,
        backend: Backend {
            sm: SimSm::new(0x0002_c903_aa00_0000),
            fail_next: None,
        },
        now: 0,
        initial,
        written: [None; 128],
    };
    for op in ops {
        w.step(op)?;
    }
    // From now on the SM accepts everything: every request must end up done.
    w.backend.sm.set_mode(SimMode::Accept);
    for entry in EntryIdx::all() {
        w.backend.sm.decline(entry, 0);
    }
    for _ in 0..MAX_STEPS {
        let before = w.opers();
        w.reply();
        match w.engine.next_wakeup() {
            None => break,
            Some(t) => w.now = w.now.max(t),
        }
        w.poll()?;
        w.check(&before)?;
    }
    prop_assert_eq!(w.engine.next_wakeup(), None, "the engine never settled");
    for entry in EntryIdx::all().skip(1) {
        let asked = w.written[entry.index()].unwrap_or(w.initial[entry.index()]);
        let oper = w.engine.oper(entry);
        let admin = w.engine.admin(entry);
        match asked {
            GUID_DELETE => prop_assert_eq!(oper, 0, "entry {} should be deleted", entry),
            GUID_ASSIGN => {
                prop_assert!(is_valid_guid(oper), "entry {} should be SM-assigned", entry);
                prop_assert_eq!(admin, oper, "entry {}: the assigned GUID is kept", entry);
            }
            v => {
                prop_assert_eq!(oper, v, "entry {} lost its admin value", entry);
                prop_assert_eq!(admin, v);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn no_admin_request_is_lost(
        num_vfs in prop_oneof![Just(0u16), Just(1), Just(5), 0u16..=126],
        sm_guid_assign in any::<bool>(),
        ops in proptest::collection::vec(op(), 0..120),
    ) {
        run(num_vfs, sm_guid_assign, &ops)?;
    }
}
