// SPDX-License-Identifier: GPL-2.0

//! Properties of the GUID engine over random sequences of admin writes, SM
//! behaviours and time: no admin request is lost, no retry waits more than
//! 60 s, requests never mix SET and DELETE, and the port-state and event
//! rules hold after every step.

use mlx_ext_core::guid::{
    is_valid_guid, Config, Engine, Method, SimMode, SimSm, GUID_ASSIGN, GUID_DELETE, NSEC_PER_SEC,
};
use proptest::prelude::*;

const S: u64 = NSEC_PER_SEC;

#[derive(Clone, Debug)]
enum Op {
    Write(u8, u64),
    Advance(u64),
    /// Runs the port for this long, the SM answering every request at once.
    Run(u64),
    Reply,
    Lose,
    Mode(SimMode),
    Decline(u8, u8),
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
        3 => (1u8..128, value()).prop_map(|(e, v)| Op::Write(e, v)),
        // Entries 1..=24 (records 0 to 2) are written more often, so that
        // writes meet in-flight requests and shared records.
        3 => (1u8..25, value()).prop_map(|(e, v)| Op::Write(e, v)),
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
        2 => (1u8..128, 0u8..12).prop_map(|(e, n)| Op::Decline(e, n)),
    ]
}

struct World {
    engine: Engine,
    sm: SimSm,
    now: u64,
    /// The administrator's last write per entry (`None`: never written).
    written: [Option<u64>; 128],
    up_rule: Vec<u16>,
}

impl World {
    fn opers(&self) -> Vec<u64> {
        (0..128u8).map(|e| self.engine.oper(e).unwrap()).collect()
    }

    /// Checks the invariants after a step, given the operational values
    /// before it.
    fn check(&mut self, before: &[u64]) -> Result<(), TestCaseError> {
        let e = &mut self.engine;
        let split = *e.split();
        // Events: exactly the owners of the entries whose GUID changed.
        let mut want = Vec::new();
        for entry in 0..128u8 {
            if e.oper(entry) != Some(before[usize::from(entry)]) {
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
            .filter(|&f| is_valid_guid(e.oper(split.base(f).unwrap()).unwrap()))
            .collect();
        prop_assert_eq!(e.up_functions().iter().collect::<Vec<_>>(), up.clone());
        self.up_rule = up;
        // No retry waits more than 60 s, and backoffs follow 1, 2, 4, ... 60.
        for entry in 1..128u8 {
            let b = e.backoff_secs(entry).unwrap();
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
        prop_assert_eq!(e.oper(0), Some(0x77));
        Ok(())
    }

    /// Polls and checks the request the engine sent, if any.
    fn poll(&mut self) -> Result<(), TestCaseError> {
        let had = self.sm.inflight().map(|r| r.id);
        self.engine.poll(&mut self.sm, self.now);
        if let Some(r) = self.sm.inflight().copied() {
            if Some(r.id) != had {
                prop_assert!(r.mask != 0);
                for entry in r.entries() {
                    let due = self.engine.due(entry);
                    prop_assert!(
                        due.is_some_and(|d| d <= self.now),
                        "entry {} sent before it was due",
                        entry
                    );
                    let admin = self.engine.admin(entry).unwrap();
                    prop_assert_ne!(entry, 0, "the hardware GUID is never sent");
                    match r.method {
                        Method::Delete => prop_assert_eq!(admin, GUID_DELETE),
                        Method::Set => {
                            prop_assert_ne!(admin, GUID_DELETE);
                            prop_assert_eq!(r.guids[usize::from(entry % 8)], admin);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn run_for(&mut self, ns: u64, mut before: Vec<u64>) -> Result<(), TestCaseError> {
        let end = self.now + ns;
        loop {
            if let Some(answer) = self.sm.reply() {
                let _ = self.engine.answer(&answer, self.now);
            }
            match self.engine.next_wakeup() {
                Some(t) if t <= end => self.now = self.now.max(t),
                _ => break,
            }
            self.poll()?;
            self.check(&before)?;
            before = self.opers();
        }
        self.now = end;
        self.poll()?;
        self.check(&before)
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let before = self.opers();
        match *op {
            Op::Write(entry, v) => {
                self.engine.set_admin(entry, v, self.now).unwrap();
                self.written[usize::from(entry)] = Some(v);
            }
            Op::Advance(ns) => self.now += ns,
            Op::Run(ns) => return self.run_for(ns, before),
            Op::Reply => {
                if let Some(answer) = self.sm.reply() {
                    // The engine may have given the request up already.
                    let _ = self.engine.answer(&answer, self.now);
                }
            }
            Op::Lose => {
                self.sm.lose();
            }
            Op::Mode(m) => self.sm.set_mode(m),
            Op::Decline(entry, n) => self.sm.decline(entry, n),
        }
        self.poll()?;
        self.check(&before)
    }
}

fn run(num_vfs: u16, sm_guid_assign: bool, ops: &[Op]) -> Result<(), TestCaseError> {
    let engine = Engine::new(Config {
        num_vfs,
        sm_guid_assign,
        hw_guid: 0x77,
    })
    .unwrap();
    let mut w = World {
        engine,
        sm: SimSm::new(0x0002_c903_aa00_0000),
        now: 0,
        written: [None; 128],
        up_rule: vec![],
    };
    let initial: Vec<u64> = (0..128u8).map(|e| w.engine.admin(e).unwrap()).collect();
    for op in ops {
        w.step(op)?;
    }
    // From now on the SM accepts everything: every request must end up done.
    w.sm.set_mode(SimMode::Accept);
    for entry in 0..128u8 {
        w.sm.decline(entry, 0);
    }
    for _ in 0..10_000 {
        let before = w.opers();
        if let Some(answer) = w.sm.reply() {
            let _ = w.engine.answer(&answer, w.now);
        }
        match w.engine.next_wakeup() {
            None => break,
            Some(t) => w.now = w.now.max(t),
        }
        w.poll()?;
        w.check(&before)?;
    }
    prop_assert_eq!(w.engine.next_wakeup(), None, "the engine never settled");
    for entry in 1..128u8 {
        let asked = w.written[usize::from(entry)].unwrap_or(initial[usize::from(entry)]);
        let oper = w.engine.oper(entry).unwrap();
        let admin = w.engine.admin(entry).unwrap();
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
