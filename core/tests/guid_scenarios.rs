// SPDX-License-Identifier: GPL-2.0

//! The GUID engine over simulated time: initial tables, retry backoff,
//! record order, admin writes, failures, port state and events.

use mlx_ext_core::guid::{
    Action, Answer, AnswerStatus, Config, Engine, EntryIdx, GuidError, Method, RecordIdx, Request,
    SimMode, SimSm, SmBackend, SubmitError, GUID_DELETE, NSEC_PER_SEC,
};

const S: u64 = NSEC_PER_SEC;
const HW: u64 = 0x0002_c903_0000_0001;
const SM_BASE: u64 = 0x0002_c903_5500_0000;

/// The most steps (a run of the engine and an answer, or a move of the
/// clock) one call of [`Port::pump`] or [`Port::run_until`] takes: far more
/// than any scenario needs, so that a scheduler that never settles fails the
/// test instead of hanging it.
const MAX_STEPS: usize = 10_000;

fn ent(n: u8) -> EntryIdx {
    EntryIdx::new(n).unwrap()
}

struct Port {
    engine: Engine,
    sm: SimSm,
    now: u64,
    /// Every request sent, with the time it went out.
    sent: Vec<(u64, Request)>,
}

impl Port {
    fn new(num_vfs: u16, sm_guid_assign: bool) -> Self {
        Self {
            engine: Engine::new(Config {
                port_guids: 128,
                num_vfs,
                sm_guid_assign,
                hw_guid: HW,
            })
            .unwrap(),
            sm: SimSm::new(SM_BASE),
            now: 0,
            sent: Vec::new(),
        }
    }

    /// Runs the engine at the current time, answering at once every
    /// request it sends, until nothing more is due now.
    fn pump(&mut self) {
        for _ in 0..MAX_STEPS {
            self.engine.run(&mut self.sm, self.now);
            let Some(request) = self.sm.inflight().copied() else {
                return;
            };
            self.sent.push((self.now, request));
            let answer = self.sm.reply().unwrap();
            self.engine.answer(&answer, self.now).unwrap();
        }
        panic!(
            "the engine did not settle: still sending at {} ns after {MAX_STEPS} requests",
            self.now
        );
    }

    /// Runs until nothing is left to do or `until` is reached.
    fn run_until(&mut self, until: u64) {
        self.pump();
        for _ in 0..MAX_STEPS {
            match self.engine.next_wakeup() {
                Some(t) if t <= until => {
                    self.now = self.now.max(t);
                    self.pump();
                }
                _ => return,
            }
        }
        panic!(
            "the engine did not settle: still waking up at {} ns after {MAX_STEPS} runs",
            self.now
        );
    }

    fn run(&mut self) {
        self.run_until(u64::MAX);
        assert_eq!(self.engine.next_wakeup(), None);
    }

    fn send_times_of(&self, entry: u8) -> Vec<u64> {
        self.sent
            .iter()
            .filter(|(_, r)| r.entries().any(|e| e == ent(entry)))
            .map(|&(t, _)| t)
            .collect()
    }
}

fn gaps(times: &[u64]) -> Vec<u64> {
    times.windows(2).map(|w| (w[1] - w[0]) / S).collect()
}

#[test]
fn sm_assigned_initial_table() {
    let port = Port::new(5, true);
    let e = &port.engine;
    let bases = [2u8, 28, 53, 78, 103];
    assert_eq!((e.admin(ent(0)), e.oper(ent(0))), (HW, HW));
    for entry in 1..128u8 {
        if bases.contains(&entry) {
            assert_eq!(e.admin(ent(entry)), 0, "VF base entry {entry} asks the SM");
            assert_eq!(e.due(ent(entry)), Some(0), "and goes at once");
        } else {
            assert_eq!(e.admin(ent(entry)), GUID_DELETE, "entry {entry}");
            assert!(!e.is_pending(ent(entry)));
        }
        assert_eq!(e.oper(ent(entry)), 0, "entry {entry}");
    }
    assert_eq!(e.up_functions().iter().collect::<Vec<_>>(), [0]);
}

#[test]
fn sm_assigned_vfs_come_up_with_the_sms_guids() {
    let mut port = Port::new(5, true);
    port.run();
    let e = &mut port.engine;
    for (vf, base) in [(1u16, 2u8), (2, 28), (3, 53), (4, 78), (5, 103)] {
        let assigned = port.sm.assigned_guid(ent(base));
        assert_eq!(e.oper(ent(base)), assigned);
        assert_eq!(
            e.admin(ent(base)),
            assigned,
            "the SM's GUID is kept as the admin value"
        );
        assert!(e.function_up(vf));
        assert_eq!(e.event_count(vf), 1);
    }
    assert_eq!(e.take_events().iter().collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    assert!(e.take_events().is_empty());
    assert_eq!(e.up_functions().len(), 6);
    // Entries 2 (record 0), 28 (3), 53 (6), 78 (9), 103 (12): one SET each.
    let records: Vec<u8> = port.sent.iter().map(|(_, r)| r.record.get()).collect();
    assert_eq!(records, [0, 3, 6, 9, 12]);
    assert!(port
        .sent
        .iter()
        .all(|(_, r)| r.method == Method::Set && r.guids.iter().all(|&g| g == 0)));
}

#[test]
fn admin_assigned_initial_table() {
    let mut port = Port::new(5, false);
    let e = &port.engine;
    assert_eq!((e.admin(ent(0)), e.oper(ent(0))), (HW, HW));
    for entry in 1..128u8 {
        assert_eq!(
            (e.admin(ent(entry)), e.oper(ent(entry))),
            (GUID_DELETE, 0),
            "entry {entry}"
        );
    }
    assert_eq!(e.next_wakeup(), None, "nothing to ask the SM");
    port.run();
    assert!(port.sent.is_empty());
    assert_eq!(port.engine.up_functions().iter().collect::<Vec<_>>(), [0]);
}

#[test]
fn declined_eight_times_then_accepted() {
    let mut port = Port::new(2, false);
    port.now = 1000 * S;
    port.engine.set_admin(ent(5), 0xaaaa, port.now).unwrap();
    port.sm.decline(ent(5), 8);
    port.run();
    let times = port.send_times_of(5);
    assert_eq!(times.len(), 9);
    assert_eq!(times[0], 1000 * S, "an admin write goes out at once");
    assert_eq!(gaps(&times), [1, 2, 4, 8, 16, 32, 60, 60]);
    assert!(
        times.windows(2).all(|w| (w[1] - w[0]) % S == 0),
        "exact seconds"
    );
    assert_eq!(port.engine.oper(ent(5)), 0xaaaa);
    assert_eq!(port.engine.backoff_secs(ent(5)), 0);
}

#[test]
fn backoff_stays_at_60_seconds() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(3), 0x33, 0).unwrap();
    port.sm.set_mode(SimMode::Decline);
    port.run_until(20 * 60 * S);
    let times = port.send_times_of(3);
    let g = gaps(&times);
    assert_eq!(&g[..7], [1, 2, 4, 8, 16, 32, 60]);
    assert!(g[6..].iter().all(|&d| d == 60), "{g:?}");
    assert!(g.len() > 20);
}

#[test]
fn records_go_out_in_deadline_order() {
    let mut port = Port::new(3, false);
    // Entry 9 (record 1) written at 0 s, declined 6 times: sent at 0, 1, 3,
    // 7, 15, 31, 63. Entry 17 (record 2) written at 2 s, declined 4 times:
    // sent at 2, 3, 5, 9, 17.
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.sm.decline(ent(9), 6);
    port.sm.decline(ent(17), 4);
    port.run_until(2 * S - 1);
    port.now = 2 * S;
    port.engine.set_admin(ent(17), 0x1717, port.now).unwrap();
    port.run();
    let order: Vec<(u64, u8)> = port
        .sent
        .iter()
        .map(|(t, r)| (t / S, r.record.get()))
        .collect();
    assert_eq!(
        order,
        [
            (0, 1),
            (1, 1),
            (2, 2),
            (3, 1), // tie at 3 s: the lower record first
            (3, 2),
            (5, 2),
            (7, 1),
            (9, 2),
            (15, 1),
            (17, 2),
            (31, 1),
            (63, 1)
        ]
    );
}

#[test]
fn the_earliest_overdue_record_goes_first() {
    let mut port = Port::new(3, false);
    port.engine.set_admin(ent(17), 0x17, 5 * S).unwrap();
    port.engine.set_admin(ent(9), 0x9, 8 * S).unwrap();
    port.engine.set_admin(ent(25), 0x25, 8 * S).unwrap();
    assert_eq!(port.engine.next_wakeup(), Some(5 * S));
    // Each request fails: the port waits its SA backoff (1, then 2 s)
    // before the next, which is still the earliest overdue record.
    let mut now = 10 * S;
    let order: Vec<u8> = (0..3)
        .map(|_| {
            let Action::Send(r) = port.engine.next_action(now) else {
                panic!("a request is due");
            };
            assert_eq!(
                port.engine.next_action(now),
                Action::Sleep(Some(now + 10 * S)),
                "one request at a time, until the watchdog"
            );
            port.engine
                .answer(&Answer::failed(&r, AnswerStatus::Error), now)
                .unwrap();
            now = port.engine.next_wakeup().unwrap();
            r.record.get()
        })
        .collect();
    assert_eq!(order, [2, 1, 3]);
    assert_eq!(now, 17 * S, "held 1, 2 and then 4 s");
}

#[test]
fn admin_write_during_a_32_second_backoff_goes_out_at_once() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(5), 0xaaaa, 0).unwrap();
    port.sm.decline(ent(5), 100);
    port.run_until(31 * S);
    assert_eq!(gaps(&port.send_times_of(5)), [1, 2, 4, 8, 16]);
    assert_eq!(port.engine.backoff_secs(ent(5)), 32);
    assert_eq!(port.engine.due(ent(5)), Some(63 * S));

    port.now = 40 * S;
    port.engine
        .write_admin(ent(5), b"0xbbbb\n", port.now)
        .unwrap();
    assert_eq!(
        port.engine.backoff_secs(ent(5)),
        0,
        "the write resets the backoff"
    );
    assert_eq!(port.engine.next_wakeup(), Some(40 * S), "and runs at once");
    port.sm.decline(ent(5), 1);
    port.run();
    let times = port.send_times_of(5);
    let after: Vec<u64> = times
        .iter()
        .filter(|&&t| t >= 40 * S)
        .map(|t| t / S)
        .collect();
    assert_eq!(
        after,
        [40, 41],
        "declined once more: retried after 1 s, not 60"
    );
    let last = port.sent.last().unwrap().1;
    assert_eq!(last.guids[5], 0xbbbb);
    assert_eq!(port.engine.oper(ent(5)), 0xbbbb);
}

#[test]
fn set_and_delete_never_share_a_request() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(1), 0x11, 0).unwrap();
    port.engine.set_admin(ent(3), 0x33, 0).unwrap();
    port.run();
    port.now = 10 * S;
    port.engine
        .set_admin(ent(1), GUID_DELETE, port.now)
        .unwrap();
    port.engine.set_admin(ent(2), 0x22, port.now).unwrap();
    port.engine
        .set_admin(ent(3), GUID_DELETE, port.now)
        .unwrap();
    port.engine.set_admin(ent(4), 0, port.now).unwrap();
    port.run();
    let late: Vec<&Request> = port
        .sent
        .iter()
        .filter(|(t, _)| *t == 10 * S)
        .map(|(_, r)| r)
        .collect();
    assert_eq!(late.len(), 2);
    assert_eq!((late[0].method, late[0].mask), (Method::Delete, 0b1010));
    assert_eq!((late[1].method, late[1].mask), (Method::Set, 0b10100));
    assert_eq!(late[1].guids, [0, 0, 0x22, 0, 0, 0, 0, 0]);
    for entry in [1u8, 3] {
        assert_eq!(port.engine.oper(ent(entry)), 0);
    }
    assert_eq!(port.engine.oper(ent(2)), 0x22);
    assert_eq!(port.engine.oper(ent(4)), port.sm.assigned_guid(ent(4)));
}

#[test]
fn failures_retry_the_whole_request_without_touching_backoff() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(6), 0x66, 0).unwrap();
    port.sm.decline(ent(6), 2);
    port.run_until(S); // declined at 0 and 1 s: backoff 2
    assert_eq!(port.engine.backoff_secs(ent(6)), 2);
    // The port's SA backoff: 1 s after the first failure, 2 s after the
    // second; a port that is not active waits 5 s and leaves it.
    for (mode, delay) in [
        (SimMode::Error, 1),
        (SimMode::Timeout, 2),
        (SimMode::PortDown, 5),
    ] {
        port.sm.set_mode(mode);
        let before = port.send_times_of(6).len();
        port.now = port.engine.next_wakeup().unwrap();
        port.pump();
        assert_eq!(port.send_times_of(6).len(), before + 1);
        assert_eq!(
            port.engine.next_wakeup(),
            Some(port.now + delay * S),
            "{mode:?}"
        );
        assert_eq!(port.engine.backoff_secs(ent(6)), 2, "{mode:?}");
    }
    port.sm.set_mode(SimMode::Accept);
    port.run();
    assert_eq!(port.engine.oper(ent(6)), 0x66);
}

#[test]
fn a_lost_answer_is_given_up_after_the_watchdog() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(6), 0x66, 0).unwrap();
    port.engine.run(&mut port.sm, 0);
    let lost = port.sm.lose().unwrap();
    assert_eq!(port.engine.outstanding(), Some(&lost));
    assert_eq!(port.engine.next_wakeup(), Some(10 * S));
    assert_eq!(
        port.engine.run(&mut port.sm, 9 * S),
        Some(10 * S),
        "not yet"
    );
    assert_eq!(
        port.engine.run(&mut port.sm, 10 * S),
        Some(11 * S),
        "timed out: +1 s"
    );
    assert_eq!(port.engine.outstanding(), None);
    let late = Answer {
        id: lost.id,
        record: lost.record,
        status: AnswerStatus::Ok,
        guids: [0x66; 8],
    };
    assert_eq!(
        port.engine.answer(&late, 10 * S),
        Err(GuidError::StaleAnswer)
    );
    assert_eq!(
        port.engine.oper(ent(6)),
        0,
        "a stale answer changes nothing"
    );
    port.now = 11 * S;
    port.run();
    assert_eq!(port.engine.oper(ent(6)), 0x66);
}

#[test]
fn an_answer_to_a_request_sent_before_an_admin_write_does_not_overrule_it() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(6), 0x66, 0).unwrap();
    port.engine.run(&mut port.sm, 0);
    port.engine.set_admin(ent(6), 0x77, S).unwrap();
    // The SM declines the old request: the new value still goes at once.
    port.sm.decline(ent(6), 1);
    let answer = port.sm.reply().unwrap();
    port.engine.answer(&answer, 2 * S).unwrap();
    assert_eq!(port.engine.backoff_secs(ent(6)), 0);
    assert_eq!(port.engine.due(ent(6)), Some(S));
    // The SM accepts the new one; then an old accept arrives for a third write.
    port.engine.run(&mut port.sm, 2 * S);
    assert_eq!(port.sm.inflight().unwrap().guids[6], 0x77);
    port.engine.set_admin(ent(6), 0x88, 3 * S).unwrap();
    let answer = port.sm.reply().unwrap();
    let outcome = port.engine.answer(&answer, 3 * S).unwrap();
    assert_eq!(outcome.accepted, 1 << 6);
    assert_eq!(port.engine.oper(ent(6)), 0x77, "the SM did set 0x77");
    assert_eq!(port.engine.admin(ent(6)), 0x88);
    assert_eq!(
        port.engine.due(ent(6)),
        Some(3 * S),
        "0x88 still goes at once"
    );
    port.now = 3 * S;
    port.run();
    assert_eq!(port.engine.oper(ent(6)), 0x88);
}

#[test]
fn port_state_follows_base_entries_and_events_follow_every_entry() {
    // 5 VFs: VF 1 holds 2..=27, VF 2 holds 28..=52.
    let mut port = Port::new(5, false);
    port.engine.set_admin(ent(29), 0x29, 0).unwrap(); // VF 2, not its base
    port.run();
    assert!(
        !port.engine.function_up(2),
        "a non-base entry does not bring the port up"
    );
    assert_eq!(port.engine.take_events().iter().collect::<Vec<_>>(), [2]);
    assert_eq!(port.engine.event_count(2), 1);

    port.engine.set_admin(ent(2), 0, port.now).unwrap(); // VF 1 base, SM assigned
    port.engine.set_admin(ent(28), 0x28, port.now).unwrap(); // VF 2 base
    port.run();
    assert!(port.engine.function_up(1) && port.engine.function_up(2));
    assert_eq!(port.engine.take_events().iter().collect::<Vec<_>>(), [1, 2]);

    port.engine
        .set_admin(ent(28), GUID_DELETE, port.now)
        .unwrap();
    port.run();
    assert!(
        !port.engine.function_up(2),
        "deleting the base brings the port down"
    );
    assert_eq!(port.engine.take_events().iter().collect::<Vec<_>>(), [2]);
    assert_eq!(port.engine.event_count(2), 3);
    assert_eq!(port.engine.event_count(1), 1);

    // Rewriting the value already operational is no change and no event.
    port.engine.set_admin(ent(29), 0x29, port.now).unwrap();
    port.run();
    assert!(port.engine.take_events().is_empty());
    // A value seen on the port outside an answer is an event too.
    port.engine.set_oper(ent(3), 0x3, port.now).unwrap();
    assert_eq!(port.engine.take_events().iter().collect::<Vec<_>>(), [1]);
    // There is no entry 128 to see a value in: the index is refused first.
    assert_eq!(EntryIdx::try_from(128u8), Err(GuidError::NoSuchEntry));
}

#[test]
fn too_many_vfs_is_refused_by_the_engine() {
    let err = Engine::new(Config {
        port_guids: 128,
        num_vfs: 127,
        sm_guid_assign: true,
        hw_guid: HW,
    })
    .unwrap_err();
    assert_eq!(err, GuidError::TooManyVfs);
}

#[test]
fn zero_written_during_a_set_still_asks_the_sm() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.engine.run(&mut port.sm, 0);
    port.engine.set_admin(ent(9), 0, S).unwrap();
    let answer = port.sm.reply().unwrap(); // the SM sets 0x99
    port.engine.answer(&answer, S).unwrap();
    assert_eq!(port.engine.oper(ent(9)), 0x99);
    assert_eq!(
        port.engine.admin(ent(9)),
        0,
        "0x99 was not what the SM was asked to assign"
    );
    assert!(port.engine.is_pending(ent(9)));
    port.now = S;
    port.run();
    let last = port.sent.last().unwrap().1;
    assert_eq!(
        (last.method, last.guids[1]),
        (Method::Set, 0),
        "the SM is asked to assign"
    );
    assert_eq!(port.engine.admin(ent(9)), port.sm.assigned_guid(ent(9)));
    assert_eq!(port.engine.oper(ent(9)), port.sm.assigned_guid(ent(9)));
}

#[test]
fn an_entry_not_yet_due_waits_for_its_own_time() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.sm.decline(ent(9), 1);
    port.pump(); // entry 9 declined: due at 1 s
    port.now = S / 2;
    port.engine.set_admin(ent(10), 0x1010, port.now).unwrap();
    port.pump();
    let (t, r) = *port.sent.last().unwrap();
    assert_eq!(
        (t, r.record.get(), r.mask),
        (S / 2, 1, 0b100),
        "entry 10 alone, entry 9 waits"
    );
    port.run();
    assert_eq!(port.send_times_of(9), [0, S]);
}

/// A backend whose every send fails.
struct Unreachable(SubmitError, u32);

impl SmBackend for Unreachable {
    fn submit(&mut self, _request: &Request) -> Result<(), SubmitError> {
        self.1 += 1;
        Err(self.0)
    }

    fn cancel(&mut self, _request: &Request) {
        panic!("nothing was sent, so nothing is to be cancelled");
    }
}

#[test]
fn failed_sends_reschedule_every_due_record_in_one_run() {
    // A port that is not active: every record is tried once and waits 5 s.
    let mut engine = Port::new(3, false).engine;
    for entry in [9u8, 17, 25, 26] {
        engine.set_admin(ent(entry), u64::from(entry), 0).unwrap();
    }
    let mut sm = Unreachable(SubmitError::PortDown, 0);
    assert_eq!(engine.run(&mut sm, 0), Some(5 * S));
    assert_eq!(sm.1, 3, "one send per record");
    assert_eq!(engine.outstanding(), None);
    for entry in [9u8, 17, 25, 26] {
        assert_eq!(engine.due(ent(entry)), Some(5 * S), "entry {entry}");
        assert_eq!(engine.backoff_secs(ent(entry)), 0);
    }
}

#[test]
fn a_failed_send_holds_the_port_for_its_sa_backoff() {
    // The SA failing a request fails the others alike: one send, then the
    // port waits 1 s; the failed record's entries too, the others as due.
    let mut engine = Port::new(3, false).engine;
    for entry in [9u8, 17, 25, 26] {
        engine.set_admin(ent(entry), u64::from(entry), 0).unwrap();
    }
    let mut sm = Unreachable(SubmitError::Failed, 0);
    assert_eq!(engine.run(&mut sm, 0), Some(S));
    assert_eq!(sm.1, 1, "one send, then the hold");
    assert_eq!(engine.sa_backoff_secs(), 1);
    // The failed record's entries are due when the hold ends, the others
    // as they were (held back by the port).
    assert_eq!(engine.due(ent(9)), Some(S));
    assert_eq!(engine.due(ent(17)), Some(0));
    assert_eq!(engine.next_wakeup(), Some(S));
    assert_eq!(
        engine.backoff_secs(ent(9)),
        0,
        "an entry's own backoff is untouched"
    );
    assert_eq!(
        engine.run(&mut sm, S / 2),
        Some(S),
        "nothing before the hold ends"
    );
    assert_eq!(sm.1, 1);
    assert_eq!(engine.run(&mut sm, S), Some(3 * S));
    assert_eq!(sm.1, 2);
    assert_eq!(engine.sa_backoff_secs(), 2);
}

#[test]
fn run_with_a_backend_that_always_fails_ends_and_returns_the_next_wakeup() {
    // Every record holds a due SET (entry 8r + 1) and a due DELETE (entry
    // 8r + 2): with the port down, 32 requests, each of which fails, in one
    // run; with the SA failing, one per run, the port's backoff doubling.
    for (error, sends, first, second) in [
        (SubmitError::PortDown, 32, 5, 10),
        (SubmitError::Failed, 1, 1, 3),
    ] {
        let mut engine = Port::new(0, false).engine;
        for record in RecordIdx::all() {
            let first = record.first_entry().get();
            engine.set_admin(ent(first + 1), 0x5e7, 0).unwrap();
            engine.set_oper(ent(first + 2), 0xde1, 0).unwrap();
            engine.set_admin(ent(first + 2), GUID_DELETE, 0).unwrap();
        }
        let mut sm = Unreachable(error, 0);
        assert_eq!(engine.run(&mut sm, 0), Some(first * S), "{error:?}");
        assert_eq!(sm.1, sends, "{error:?}: sends in one run");
        assert_eq!(engine.outstanding(), None);
        // The same at the retry: the run ends again.
        assert_eq!(
            engine.run(&mut sm, first * S),
            Some(second * S),
            "{error:?}"
        );
        assert_eq!(sm.1, 2 * sends, "{error:?}");
    }
}

#[test]
fn a_failed_send_reschedules_its_entries_and_the_next_request_goes_out() {
    // A port that is not active: the next record goes out at once (an SA
    // failure holds the port instead: the test below).
    for (error, delay) in [(SubmitError::PortDown, 5)] {
        let mut engine = Port::new(2, false).engine;
        engine.set_admin(ent(9), 0x99, 0).unwrap();
        engine.set_admin(ent(10), 0x1010, 0).unwrap();
        engine.set_admin(ent(17), 0x1717, S).unwrap();
        let Action::Send(first) = engine.next_action(2 * S) else {
            panic!("record 1 is due");
        };
        assert_eq!((first.record.get(), first.mask), (1, 0b110));
        engine.send_failed(first.id, error, 2 * S).unwrap();
        assert_eq!(engine.outstanding(), None, "{error:?}");
        for entry in [9, 10] {
            assert_eq!(engine.due(ent(entry)), Some((2 + delay) * S), "{error:?}");
            assert_eq!(engine.backoff_secs(ent(entry)), 0, "{error:?}");
        }
        let Action::Send(second) = engine.next_action(2 * S) else {
            panic!("{error:?}: record 2 goes out at once");
        };
        assert_eq!(second.record.get(), 2);
        // A failure reported twice, or for a request not outstanding, is
        // stale and changes nothing.
        let before = format!("{engine:?}");
        assert_eq!(
            engine.send_failed(first.id, error, 2 * S),
            Err(GuidError::StaleAnswer)
        );
        assert_eq!(format!("{engine:?}"), before);
        // Record 1 goes out again after the delay, and is accepted.
        let answer = Answer {
            id: second.id,
            record: second.record,
            status: AnswerStatus::Ok,
            guids: second.guids,
        };
        engine.answer(&answer, 2 * S).unwrap();
        assert_eq!(
            engine.next_action(2 * S),
            Action::Sleep(Some((2 + delay) * S))
        );
        let Action::Send(again) = engine.next_action((2 + delay) * S) else {
            panic!("{error:?}: record 1 is due again");
        };
        assert_eq!((again.record.get(), again.mask), (1, 0b110));
    }
}

#[test]
fn after_an_sa_failure_the_next_request_waits_the_hold_and_an_answer_ends_it() {
    let mut engine = Port::new(2, false).engine;
    engine.set_admin(ent(9), 0x99, 0).unwrap();
    engine.set_admin(ent(10), 0x1010, 0).unwrap();
    engine.set_admin(ent(17), 0x1717, S).unwrap();
    let Action::Send(first) = engine.next_action(2 * S) else {
        panic!("record 1 is due");
    };
    engine
        .send_failed(first.id, SubmitError::Failed, 2 * S)
        .unwrap();
    for entry in [9, 10] {
        assert_eq!(
            engine.due(ent(entry)),
            Some(3 * S),
            "due when the hold ends"
        );
        assert_eq!(engine.backoff_secs(ent(entry)), 0);
    }
    assert_eq!(engine.next_action(2 * S), Action::Sleep(Some(3 * S)));
    // When the hold ends the record that waited goes first (record 2, due
    // at 1 s), and once an answer ends the backoff, record 1 at once.
    let Action::Send(second) = engine.next_action(3 * S) else {
        panic!("the earliest due record goes out when the hold ends");
    };
    assert_eq!(second.record.get(), 2);
    let answer = Answer {
        id: second.id,
        record: second.record,
        status: AnswerStatus::Ok,
        guids: second.guids,
    };
    engine.answer(&answer, 3 * S).unwrap();
    assert_eq!(engine.sa_backoff_secs(), 0, "an answer ends the backoff");
    let Action::Send(again) = engine.next_action(3 * S) else {
        panic!("record 1 is due");
    };
    assert_eq!((again.record.get(), again.mask), (1, 0b110));
}

#[test]
fn a_record_the_sa_keeps_failing_does_not_starve_the_others() {
    // Record 1's request fails at 0 and 1 s; record 2, due since 0, goes
    // before record 1 when the 2 s hold ends.
    let mut engine = Port::new(2, false).engine;
    engine.set_admin(ent(9), 0x99, 0).unwrap();
    engine.set_admin(ent(17), 0x1717, 0).unwrap();
    let Action::Send(a) = engine.next_action(0) else {
        panic!("record 1 is due");
    };
    assert_eq!(a.record.get(), 1);
    engine.send_failed(a.id, SubmitError::Failed, 0).unwrap();
    let Action::Send(b) = engine.next_action(S) else {
        panic!("record 2 is due");
    };
    assert_eq!(b.record.get(), 2, "the record that waited goes first");
}

#[test]
fn an_early_end_of_the_hold_brings_the_failed_entries_back() {
    // A write during the hold ends it: the entries put off to its end are
    // due at once, with the write.
    let mut engine = Port::new(2, false).engine;
    engine.set_admin(ent(9), 0x99, 0).unwrap();
    let Action::Send(a) = engine.next_action(0) else {
        panic!("record 1 is due");
    };
    engine.send_failed(a.id, SubmitError::Failed, 0).unwrap();
    assert_eq!(engine.due(ent(9)), Some(S));
    engine.set_admin(ent(17), 0x1717, S / 2).unwrap();
    assert_eq!(engine.due(ent(9)), Some(S / 2));
    assert_eq!(engine.next_wakeup(), Some(S / 2));
}

#[test]
fn entries_held_back_by_the_port_go_at_once_when_the_hold_ends() {
    // Two records fail in turn; an admin write to a third ends the hold,
    // and the SA answers again: everything due goes out at once, none
    // waits for a delay of its own.
    let mut port = Port::new(3, false);
    port.sm.set_mode(SimMode::Error);
    for entry in [9u8, 17] {
        port.engine
            .set_admin(ent(entry), u64::from(entry), 0)
            .unwrap();
    }
    port.run_until(10 * S);
    assert!(port.engine.sa_backoff_secs() >= 4);
    port.sm.set_mode(SimMode::Accept);
    port.now = 11 * S;
    port.engine.set_admin(ent(25), 0x25, port.now).unwrap();
    port.pump();
    for entry in [9u8, 17, 25] {
        assert_eq!(
            port.engine.oper(ent(entry)),
            port.engine.admin(ent(entry)),
            "entry {entry}"
        );
    }
    assert_eq!(port.engine.next_wakeup(), None);
}

/// The SA backoff's bound: an SA that fails every request (an error status,
/// or no answer at all) gets at most 20 requests from a port in 10 minutes,
/// however many records have work; an admin write and a port event each
/// send at once, and start the backoff over.
#[test]
fn an_sa_that_always_fails_gets_few_requests() {
    for mode in [SimMode::Error, SimMode::Timeout] {
        let mut port = Port::new(126, true);
        port.sm.set_mode(mode);
        port.run_until(600 * S);
        let n = port.sent.len();
        assert!(n <= 20, "{mode:?}: {n} requests in 10 minutes");
        assert!(n >= 5, "{mode:?}: {n} requests: still retrying");
        assert_eq!(port.engine.sa_backoff_secs(), 60, "{mode:?}");
        let last = port.sent.last().unwrap().0;
        port.engine.set_admin(ent(40), 0x4040, last + S).unwrap();
        port.now = last + S;
        port.pump();
        assert_eq!(
            port.sent.last().unwrap().0,
            last + S,
            "{mode:?}: the write at once"
        );
        assert_eq!(port.engine.sa_backoff_secs(), 1, "{mode:?}");
        port.engine.retry_all(last + 2 * S);
        port.now = last + 2 * S;
        port.pump();
        assert_eq!(
            port.sent.last().unwrap().0,
            last + 2 * S,
            "{mode:?}: the event at once"
        );
        // Then the SA answers again: everything converges.
        port.sm.set_mode(SimMode::Accept);
        port.run();
        assert_eq!(port.engine.sa_backoff_secs(), 0);
    }
}

#[test]
fn a_reset_cancels_the_outstanding_request_before_the_new_tables_requests() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.engine.run(&mut port.sm, 0);
    let old = *port.sm.inflight().unwrap();
    port.engine
        .reset(Config {
            port_guids: 128,
            num_vfs: 5,
            sm_guid_assign: true,
            hw_guid: HW,
        })
        .unwrap();
    assert_eq!(port.engine.outstanding(), None);
    assert_eq!(
        port.engine.next_wakeup(),
        Some(0),
        "the cancel is due at once"
    );
    // An answer before the cancel is handed out is stale already.
    let before = format!("{:?}", port.engine);
    let early = port.sm.clone().reply().unwrap();
    assert_eq!(port.engine.answer(&early, S), Err(GuidError::StaleAnswer));
    assert_eq!(format!("{:?}", port.engine), before);
    assert_eq!(port.engine.next_action(S), Action::Cancel(old));
    // Then the new table's requests: VF 1's base entry 2 first.
    let Action::Send(new) = port.engine.next_action(S) else {
        panic!("the VFs' base entries are due");
    };
    assert_ne!(new.id, old.id);
    assert_eq!(
        (
            new.record.get(),
            new.method,
            new.entries().collect::<Vec<_>>()
        ),
        (0, Method::Set, vec![ent(2)])
    );
    assert_eq!(port.engine.next_action(S), Action::Sleep(Some(11 * S)));
    // The SM answers the old request anyway: stale, and nothing changes.
    let before = format!("{:?}", port.engine);
    let answer = port.sm.reply().unwrap();
    assert_eq!((answer.id, answer.status), (old.id, AnswerStatus::Ok));
    assert_eq!(port.engine.answer(&answer, S), Err(GuidError::StaleAnswer));
    assert_eq!(format!("{:?}", port.engine), before);
    assert_eq!(port.engine.oper(ent(9)), 0);
}

#[test]
fn run_hands_the_cancel_of_a_reset_to_the_backend() {
    let config = |sm_guid_assign| Config {
        port_guids: 128,
        num_vfs: 5,
        sm_guid_assign,
        hw_guid: HW,
    };
    let mut port = Port::new(2, false);
    port.engine.reset(config(true)).unwrap();
    port.engine.run(&mut port.sm, 0);
    assert_eq!(port.sm.cancels(), 0, "nothing was outstanding");
    assert!(port.sm.inflight().is_some());
    // A reset to a table with nothing to send: the SM only loses the request.
    port.engine.reset(config(false)).unwrap();
    assert_eq!(port.engine.run(&mut port.sm, S), None);
    assert_eq!(port.sm.cancels(), 1);
    assert_eq!(
        port.sm.inflight(),
        None,
        "the SM dropped the cancelled request"
    );
    // A reset with requests to send: the cancel goes first.
    port.engine.reset(config(true)).unwrap();
    port.engine.run(&mut port.sm, S);
    let old = *port.sm.inflight().unwrap();
    port.engine.reset(config(true)).unwrap();
    assert_eq!(port.engine.run(&mut port.sm, 2 * S), Some(12 * S));
    assert_eq!(port.sm.cancels(), 2);
    let new = *port.sm.inflight().unwrap();
    assert_ne!(new.id, old.id);
    assert_eq!(port.engine.outstanding(), Some(&new));
    port.now = 2 * S;
    port.run();
    assert_eq!(port.engine.up_functions().len(), 6);
    assert_eq!(port.sm.cancels(), 2);
}

#[test]
fn the_watchdog_cancels_an_unanswered_request_and_retries_its_entries() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(6), 0x66, 0).unwrap();
    port.engine.set_admin(ent(7), 0x77, 0).unwrap();
    let Action::Send(r) = port.engine.next_action(0) else {
        panic!("record 0 is due");
    };
    port.sm.submit(&r).unwrap();
    assert_eq!(
        port.engine.next_action(10 * S - 1),
        Action::Sleep(Some(10 * S))
    );
    assert_eq!(port.engine.next_action(10 * S), Action::Cancel(r));
    assert_eq!(port.engine.outstanding(), None);
    for entry in [6, 7] {
        assert_eq!(port.engine.due(ent(entry)), Some(11 * S), "timed out: +1 s");
        assert_eq!(port.engine.backoff_secs(ent(entry)), 0);
    }
    assert_eq!(port.engine.next_action(10 * S), Action::Sleep(Some(11 * S)));
    // The SM answers after the cancel: stale, and nothing changes.
    let before = format!("{:?}", port.engine);
    let late = port.sm.reply().unwrap();
    assert_eq!(
        port.engine.answer(&late, 10 * S),
        Err(GuidError::StaleAnswer)
    );
    assert_eq!(format!("{:?}", port.engine), before);
    // The SM did set entry 6, as the port now shows; but the request timed
    // out, so entry 6 is confirmed with the SM along with entry 7.
    port.engine.set_oper(ent(6), 0x66, 10 * S).unwrap();
    assert!(port.engine.is_pending(ent(6)));
    let Action::Send(again) = port.engine.next_action(11 * S) else {
        panic!("record 0 is due again");
    };
    assert_eq!(again.mask, 0b1100_0000);
    assert_eq!((again.guids[6], again.guids[7]), (0x66, 0x77));
    // With a request for the same record outstanding, the old answer is
    // still stale: answers are matched by identifier.
    assert_eq!(
        port.engine.answer(&late, 11 * S),
        Err(GuidError::StaleAnswer)
    );
    assert_eq!(port.engine.outstanding(), Some(&again));
}

#[test]
fn an_old_accept_meeting_a_rewrite_of_the_same_value_ends_the_retries() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(6), 0x66, 0).unwrap();
    port.sm.decline(ent(6), 3);
    port.run_until(3 * S); // declined at 0, 1 and 3 s: backoff 4, due at 7 s
    assert_eq!(port.engine.backoff_secs(ent(6)), 4);
    port.now = 7 * S;
    port.engine.run(&mut port.sm, port.now);
    assert_eq!(port.sm.inflight().unwrap().guids[6], 0x66);
    // The administrator writes the value in flight again: the entry is no
    // longer the one the request was sent for.
    port.engine.set_admin(ent(6), 0x66, 8 * S).unwrap();
    assert_eq!(
        port.engine.backoff_secs(ent(6)),
        0,
        "the write starts the backoff over"
    );
    let answer = port.sm.reply().unwrap();
    let outcome = port.engine.answer(&answer, 8 * S).unwrap();
    assert_eq!(outcome.accepted, 1 << 6);
    assert_eq!(port.engine.oper(ent(6)), 0x66);
    assert!(
        !port.engine.is_pending(ent(6)),
        "the SM holds what was written"
    );
    assert_eq!(port.engine.backoff_secs(ent(6)), 0);
    assert_eq!(port.engine.next_wakeup(), None);
}

#[test]
fn a_failed_request_keeps_each_entrys_own_backoff() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.sm.decline(ent(9), 2);
    port.run_until(S); // declined at 0 and 1 s: backoff 2, due at 3 s
    port.now = 3 * S;
    port.engine.set_admin(ent(10), 0x1010, port.now).unwrap();
    port.sm.set_mode(SimMode::Error);
    port.pump();
    let (_, r) = *port.sent.last().unwrap();
    assert_eq!(r.mask, 0b110, "both entries in one request");
    assert_eq!(port.engine.backoff_secs(ent(9)), 2);
    assert_eq!(port.engine.backoff_secs(ent(10)), 0);
    assert_eq!(
        (port.engine.due(ent(9)), port.engine.due(ent(10))),
        (Some(4 * S), Some(4 * S))
    );
}

#[test]
fn retry_all_sends_pending_entries_now_keeping_their_backoff() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.sm.decline(ent(9), 5);
    port.run_until(15 * S); // backoff 16, due at 31 s
    assert_eq!(
        (port.engine.backoff_secs(ent(9)), port.engine.due(ent(9))),
        (16, Some(31 * S))
    );
    port.engine.retry_all(20 * S);
    assert_eq!(port.engine.due(ent(9)), Some(20 * S));
    assert_eq!(port.engine.backoff_secs(ent(9)), 16);
    assert_eq!(port.engine.next_wakeup(), Some(20 * S));
}

#[test]
fn an_entry_whose_request_timed_out_is_confirmed_with_the_sm() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(6), 0xa, 0).unwrap();
    port.run();
    // B is sent and times out: the SM may hold B. The admin goes back to A.
    port.engine.set_admin(ent(6), 0xb, port.now).unwrap();
    port.sm.set_mode(SimMode::Timeout);
    port.pump();
    port.engine.set_admin(ent(6), 0xa, port.now).unwrap();
    assert!(port.engine.is_pending(ent(6)), "A must be asserted again");
    port.sm.set_mode(SimMode::Accept);
    port.run();
    let last = port.sent.last().unwrap().1;
    assert_eq!(last.guids[6], 0xa);
    assert_eq!(port.sm.guid(ent(6)), 0xa);
    assert!(!port.engine.is_pending(ent(6)));
    // A port that is down never reached the SM: nothing to confirm.
    port.engine.set_admin(ent(6), 0xb, port.now).unwrap();
    port.sm.set_mode(SimMode::PortDown);
    port.pump();
    port.engine.set_admin(ent(6), 0xa, port.now).unwrap();
    assert!(!port.engine.is_pending(ent(6)));
}

#[test]
fn a_value_seen_on_the_port_reschedules_at_once() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(6), 0x66, 0).unwrap();
    port.sm.decline(ent(6), 4);
    port.run();
    assert_eq!(port.engine.oper(ent(6)), 0x66);
    port.now += 100 * S;
    port.engine.set_oper(ent(6), 0x1, port.now).unwrap(); // something else changed it
    assert_eq!(port.engine.due(ent(6)), Some(port.now));
    assert_eq!(port.engine.backoff_secs(ent(6)), 0);
    port.run();
    assert_eq!(port.engine.oper(ent(6)), 0x66);
    assert_eq!(port.engine.set_oper(ent(0), 1, 0), Err(GuidError::ReadOnly));
    assert_eq!(port.engine.oper(ent(0)), HW);
}

#[test]
fn the_decline_mode_keeps_scripted_declines() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(6), 0x66, 0).unwrap();
    port.sm.decline(ent(6), 2);
    port.sm.set_mode(SimMode::Decline);
    port.run_until(0);
    port.sm.set_mode(SimMode::Accept);
    port.run();
    assert_eq!(
        gaps(&port.send_times_of(6)),
        [1, 2, 4],
        "one mode decline, then the two scripted"
    );
}

#[test]
fn an_answer_for_another_record_is_stale() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.engine.run(&mut port.sm, 0);
    let mut answer = port.sm.reply().unwrap();
    answer.record = RecordIdx::new(2).unwrap();
    assert_eq!(port.engine.answer(&answer, 0), Err(GuidError::StaleAnswer));
    assert!(port.engine.outstanding().is_some());
    answer.record = RecordIdx::new(1).unwrap();
    assert!(port.engine.answer(&answer, 0).is_ok());
    assert_eq!(port.engine.oper(ent(9)), 0x99);
}

#[test]
fn reset_starts_the_table_over_in_place() {
    let config = Config {
        port_guids: 128,
        num_vfs: 5,
        sm_guid_assign: true,
        hw_guid: HW,
    };
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.run();
    port.engine.set_admin(ent(10), 0x10, port.now).unwrap();
    port.engine.run(&mut port.sm, port.now);
    assert_eq!(
        port.engine.reset(Config {
            port_guids: 128,
            num_vfs: 127,
            ..config
        }),
        Err(GuidError::TooManyVfs)
    );
    assert_eq!(
        port.engine.oper(ent(9)),
        0x99,
        "a refused reset changes nothing"
    );
    port.engine.reset(config).unwrap();
    let fresh = Engine::new(config).unwrap();
    assert_eq!(port.engine.outstanding(), None);
    assert_eq!(port.engine.split(), fresh.split());
    for entry in 0..128u8 {
        assert_eq!(port.engine.admin(ent(entry)), fresh.admin(ent(entry)));
        assert_eq!(port.engine.oper(ent(entry)), fresh.oper(ent(entry)));
        assert_eq!(port.engine.due(ent(entry)), fresh.due(ent(entry)));
        assert_eq!(
            port.engine.backoff_secs(ent(entry)),
            fresh.backoff_secs(ent(entry))
        );
    }
    assert!((0..=5).all(|f| port.engine.event_count(f) == 0));
    assert!(port.engine.take_events().is_empty());
}

#[test]
fn invalidate_all_sends_every_held_guid_again_and_changes_nothing() {
    let mut p = Port::new(5, true);
    p.run_until(10 * S);
    p.engine.set_admin(ent(5), 0x1234, p.now).unwrap();
    p.engine.set_admin(ent(6), GUID_DELETE, p.now).unwrap();
    p.run_until(20 * S);
    let before: Vec<u64> = (0..128).map(|n| p.engine.oper(ent(n))).collect();
    let _ = p.engine.take_events();
    p.sent.clear();
    // The SM restarted with an empty table.
    p.sm = SimSm::new(SM_BASE);
    p.now = 30 * S;
    p.engine.invalidate_all(p.now);
    p.run_until(40 * S);
    // One SET per record holding a GUID, at once: the VFs' bases (records
    // 0, 3, 6, 9, 12) and entry 5; never the PF's entry 0, nor entry 6.
    let records: Vec<(u64, u8, u8, Method)> = p
        .sent
        .iter()
        .map(|(t, r)| (*t, r.record.get(), r.mask, r.method))
        .collect();
    assert_eq!(
        records,
        vec![
            (30 * S, 0, 0b0010_0100, Method::Set),
            (30 * S, 3, 1 << 4, Method::Set),
            (30 * S, 6, 1 << 5, Method::Set),
            (30 * S, 9, 1 << 6, Method::Set),
            (30 * S, 12, 1 << 7, Method::Set)
        ]
    );
    let after: Vec<u64> = (0..128).map(|n| p.engine.oper(ent(n))).collect();
    assert_eq!(before, after);
    assert!(p.engine.take_events().is_empty());
    assert!((0..128).all(|n| !p.engine.is_pending(ent(n))));
}

/// The entries the SM holds a GUID for, but the PF's entry 0.
fn held_by_sm(sm: &SimSm) -> Vec<u8> {
    (1..128u8).filter(|&n| sm.guid(ent(n)) != 0).collect()
}

#[test]
fn retire_deletes_every_guid_the_sm_holds_and_nothing_else() {
    let mut port = Port::new(5, true);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.engine.set_admin(ent(1), 0x11, 0).unwrap();
    port.run();
    assert_eq!(held_by_sm(&port.sm), [1, 2, 9, 28, 53, 78, 103]);
    port.engine.take_events();
    port.sent.clear();
    port.now = 100 * S;
    port.engine.retire(port.now);
    assert!(port.engine.is_retired());
    assert_eq!(port.engine.pending_count(), 7);
    port.run();
    assert!(port.engine.is_idle());
    assert_eq!(held_by_sm(&port.sm), [] as [u8; 0], "the SM holds nothing");
    // One DELETE per record that held a GUID, with exactly those entries.
    let sent: Vec<_> = port
        .sent
        .iter()
        .map(|(t, r)| (*t, r.method, r.record.get(), r.mask))
        .collect();
    let d = Method::Delete;
    let t = 100 * S;
    assert_eq!(
        sent,
        [
            (t, d, 0, 0b110),
            (t, d, 1, 0b10),
            (t, d, 3, 0b10000),
            (t, d, 6, 0b100000),
            (t, d, 9, 0b1000000),
            (t, d, 12, 0b10000000),
        ]
    );
    // The VFs are down, with an event each; the PF keeps its hardware GUID.
    assert_eq!(
        port.engine.take_events().iter().collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
    assert_eq!(port.engine.up_functions().iter().collect::<Vec<_>>(), [0]);
    assert_eq!(
        (port.engine.admin(ent(0)), port.engine.oper(ent(0))),
        (HW, HW)
    );
}

#[test]
fn retire_of_a_table_that_registered_nothing_sends_nothing() {
    // Admin-assigned: nothing was ever asked for.
    let mut port = Port::new(5, false);
    port.engine.retire(0);
    assert!(port.engine.is_idle());
    assert_eq!(port.engine.pending_count(), 0);
    port.run();
    assert!(port.sent.is_empty());
    // SM-assigned, retired before the first request went out.
    let mut port = Port::new(5, true);
    port.engine.retire(0);
    assert!(port.engine.is_idle());
    port.run();
    assert!(port.sent.is_empty());
}

#[test]
fn retire_deletes_what_an_outstanding_request_may_have_set() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.engine.run(&mut port.sm, 0);
    let set = *port.sm.inflight().unwrap();
    // The SM carries the SET out; its answer has not come.
    let late = port.sm.reply().unwrap();
    assert_eq!(port.sm.guid(ent(9)), 0x99);
    port.engine.retire(S);
    assert_eq!(
        port.engine.write_admin(ent(9), b"5", S),
        Err(GuidError::Retired)
    );
    // The SET is cancelled first, then its entry deleted although the engine
    // never saw it set.
    assert_eq!(port.engine.next_action(S), Action::Cancel(set));
    let Action::Send(delete) = port.engine.next_action(S) else {
        panic!("entry 9 is due");
    };
    assert_eq!(
        (delete.method, delete.record.get(), delete.mask),
        (Method::Delete, 1, 0b10)
    );
    // The SET's answer is stale.
    assert_eq!(port.engine.answer(&late, S), Err(GuidError::StaleAnswer));
    port.sm.submit(&delete).unwrap();
    let answer = port.sm.reply().unwrap();
    port.engine.answer(&answer, S).unwrap();
    assert!(port.engine.is_idle());
    assert_eq!(port.sm.guid(ent(9)), 0);
}

#[test]
fn retire_goes_at_once_through_an_sa_hold_and_backs_off_after() {
    let mut port = Port::new(2, true);
    port.run();
    assert_eq!(held_by_sm(&port.sm), [2, 65]);
    // An SA failure holds the port 1 s.
    port.sm.set_mode(SimMode::Error);
    port.engine.set_admin(ent(9), 0x99, 10 * S).unwrap();
    port.now = 10 * S;
    port.pump();
    assert_eq!(port.engine.sa_backoff_secs(), 1);
    port.sent.clear();
    // Retired during the hold: the deletes go at once, and still back off
    // while the SA fails (1, 2, 4 s), without a tight loop.
    port.engine.retire(port.now);
    port.run_until(17 * S);
    let times: Vec<u64> = port.sent.iter().map(|(t, _)| *t / S).collect();
    assert_eq!(times, [10, 11, 13, 17]);
    assert!(port.sent.iter().all(|(_, r)| r.method == Method::Delete));
    // The SA back: everything, entry 9 too (its SET may have been carried
    // out), deleted at the next try.
    port.sm.set_mode(SimMode::Accept);
    port.run();
    assert!(port.engine.is_idle());
    assert_eq!(held_by_sm(&port.sm), [] as [u8; 0]);
    let last: Vec<_> = port
        .sent
        .iter()
        .skip(4)
        .map(|(t, r)| (*t / S, r.record.get(), r.mask))
        .collect();
    // The record that failed last goes after those that waited meanwhile.
    assert_eq!(last, [(25, 1, 0b10), (25, 8, 0b10), (25, 0, 0b100)]);
}

#[test]
fn a_retired_table_refuses_admin_writes_until_reset() {
    let mut port = Port::new(2, true);
    port.run();
    port.engine.retire(S);
    let before = format!("{:?}", port.engine);
    assert_eq!(
        port.engine.write_admin(ent(9), b"77", S),
        Err(GuidError::Retired)
    );
    assert_eq!(
        port.engine.set_admin(ent(9), 0x77, S),
        Err(GuidError::Retired)
    );
    assert_eq!(GuidError::Retired.errno(), -19, "-ENODEV");
    // Entry 0 is still EPERM, checked first.
    assert_eq!(
        port.engine.write_admin(ent(0), b"77", S),
        Err(GuidError::ReadOnly)
    );
    assert_eq!(format!("{:?}", port.engine), before);
    port.engine
        .reset(Config {
            port_guids: 128,
            num_vfs: 2,
            sm_guid_assign: false,
            hw_guid: HW,
        })
        .unwrap();
    assert!(!port.engine.is_retired());
    assert_eq!(port.engine.write_admin(ent(9), b"77", S), Ok(()));
}

#[test]
fn a_port_of_20_guids_keeps_to_its_own_entries() {
    let mut port = Port::new(3, true);
    port.engine
        .reset(Config {
            port_guids: 20,
            num_vfs: 3,
            sm_guid_assign: true,
            hw_guid: HW,
        })
        .unwrap();
    // 2, then 6 each: bases 2, 8, 14.
    assert_eq!(port.engine.split().port_guids(), 20);
    port.run();
    let records: Vec<(u8, u8)> = port
        .sent
        .iter()
        .map(|(_, r)| (r.record.get(), r.mask))
        .collect();
    assert_eq!(records, [(0, 0b100), (1, 0b100_0001)]);
    assert_eq!(port.engine.up_functions().len(), 4);
    // Entries past the port are not its own: refused, and nothing changes.
    let before = format!("{:?}", port.engine);
    for n in [20u8, 23, 24, 127] {
        assert_eq!(
            port.engine.write_admin(ent(n), b"77", S),
            Err(GuidError::NoSuchEntry),
            "entry {n}"
        );
        assert_eq!(
            port.engine.set_admin(ent(n), 0x77, S),
            Err(GuidError::NoSuchEntry)
        );
        assert_eq!(
            port.engine.set_oper(ent(n), 0x77, S),
            Err(GuidError::NoSuchEntry)
        );
    }
    assert_eq!(format!("{:?}", port.engine), before);
    // The last entry, 19, in the last (partial) record, is.
    port.engine.write_admin(ent(19), b"77", S).unwrap();
    port.sent.clear();
    port.now = S;
    port.run();
    assert_eq!(port.sent.len(), 1);
    assert_eq!(
        (port.sent[0].1.record.get(), port.sent[0].1.mask),
        (2, 0b1000)
    );
    // A retire sends nothing past the port either.
    port.sent.clear();
    port.engine.retire(2 * S);
    port.now = 2 * S;
    port.run();
    assert!(!port.sent.is_empty());
    assert!(port
        .sent
        .iter()
        .all(|(_, r)| r.record.get() <= 2 && r.entries().all(|e| e.get() < 20)));
    assert_eq!(held_by_sm(&port.sm), [] as [u8; 0]);
}

#[test]
fn a_port_too_small_for_its_vfs_is_refused() {
    let config = |port_guids, num_vfs| Config {
        port_guids,
        num_vfs,
        sm_guid_assign: true,
        hw_guid: HW,
    };
    assert_eq!(
        Engine::new(config(16, 15)).unwrap_err(),
        GuidError::TooManyVfs
    );
    assert!(Engine::new(config(16, 14)).is_ok());
    // A reset that is refused changes nothing.
    let mut port = Port::new(2, true);
    let before = format!("{:?}", port.engine);
    assert_eq!(port.engine.reset(config(8, 7)), Err(GuidError::TooManyVfs));
    assert_eq!(format!("{:?}", port.engine), before);
}

#[test]
fn a_request_that_was_never_sent_leaves_nothing_to_delete() {
    // The SET of entry 9 fails to be sent (no SA address, no memory): the SM
    // never saw it, so a retire has nothing to delete and is idle at once.
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    let mut sm = Unreachable(SubmitError::Failed, 0);
    port.engine.run(&mut sm, 0);
    assert_eq!(sm.1, 1);
    assert!(port.engine.is_pending(ent(9)), "still to be sent");
    port.engine.retire(S);
    assert!(port.engine.is_idle(), "nothing the SM can hold");
    // One that timed out may have been carried out: it is deleted.
    let mut port = Port::new(2, false);
    port.engine.set_admin(ent(9), 0x99, 0).unwrap();
    port.engine.run(&mut port.sm, 0);
    port.sm.lose();
    port.engine.run(&mut port.sm, 20 * S);
    port.engine.retire(21 * S);
    assert_eq!(port.engine.pending_count(), 1);
    assert!(!port.engine.is_idle());
}
