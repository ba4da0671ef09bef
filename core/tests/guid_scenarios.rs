// SPDX-License-Identifier: GPL-2.0

//! The GUID engine over simulated time: initial tables, retry backoff,
//! record order, admin writes, failures, port state and events.

use mlx_ext_core::guid::{
    Answer, AnswerStatus, Config, Engine, GuidError, Method, Request, SimMode, SimSm, SmBackend,
    SubmitError, GUID_DELETE, NSEC_PER_SEC,
};

const S: u64 = NSEC_PER_SEC;
const HW: u64 = 0x0002_c903_0000_0001;
const SM_BASE: u64 = 0x0002_c903_5500_0000;

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

    /// Polls the engine at the current time, answering at once every
    /// request it sends, until nothing more is due now.
    fn pump(&mut self) {
        loop {
            self.engine.poll(&mut self.sm, self.now);
            let Some(request) = self.sm.inflight().copied() else {
                return;
            };
            self.sent.push((self.now, request));
            let answer = self.sm.reply().unwrap();
            self.engine.answer(&answer, self.now).unwrap();
        }
    }

    /// Runs until nothing is left to do or `until` is reached.
    fn run_until(&mut self, until: u64) {
        self.pump();
        while let Some(t) = self.engine.next_wakeup() {
            if t > until {
                break;
            }
            self.now = self.now.max(t);
            self.pump();
        }
    }

    fn run(&mut self) {
        self.run_until(u64::MAX);
        assert_eq!(self.engine.next_wakeup(), None);
    }

    fn send_times_of(&self, entry: u8) -> Vec<u64> {
        self.sent
            .iter()
            .filter(|(_, r)| r.entries().any(|e| e == entry))
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
    assert_eq!((e.admin(0), e.oper(0)), (Some(HW), Some(HW)));
    for entry in 1..128u8 {
        if bases.contains(&entry) {
            assert_eq!(e.admin(entry), Some(0), "VF base entry {entry} asks the SM");
            assert_eq!(e.due(entry), Some(0), "and goes at once");
        } else {
            assert_eq!(e.admin(entry), Some(GUID_DELETE), "entry {entry}");
            assert!(!e.is_pending(entry));
        }
        assert_eq!(e.oper(entry), Some(0), "entry {entry}");
    }
    assert_eq!(e.up_functions().iter().collect::<Vec<_>>(), [0]);
}

#[test]
fn sm_assigned_vfs_come_up_with_the_sms_guids() {
    let mut port = Port::new(5, true);
    port.run();
    let e = &mut port.engine;
    for (vf, base) in [(1u16, 2u8), (2, 28), (3, 53), (4, 78), (5, 103)] {
        let assigned = port.sm.assigned_guid(base);
        assert_eq!(e.oper(base), Some(assigned));
        assert_eq!(
            e.admin(base),
            Some(assigned),
            "the SM's GUID is kept as the admin value"
        );
        assert!(e.function_up(vf));
        assert_eq!(e.event_count(vf), 1);
    }
    assert_eq!(e.take_events().iter().collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    assert!(e.take_events().is_empty());
    assert_eq!(e.up_functions().len(), 6);
    // Entries 2 (record 0), 28 (3), 53 (6), 78 (9), 103 (12): one SET each.
    let records: Vec<u8> = port.sent.iter().map(|(_, r)| r.record).collect();
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
    assert_eq!((e.admin(0), e.oper(0)), (Some(HW), Some(HW)));
    for entry in 1..128u8 {
        assert_eq!(
            (e.admin(entry), e.oper(entry)),
            (Some(GUID_DELETE), Some(0)),
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
    port.engine.set_admin(5, 0xaaaa, port.now).unwrap();
    port.sm.decline(5, 8);
    port.run();
    let times = port.send_times_of(5);
    assert_eq!(times.len(), 9);
    assert_eq!(times[0], 1000 * S, "an admin write goes out at once");
    assert_eq!(gaps(&times), [1, 2, 4, 8, 16, 32, 60, 60]);
    assert!(
        times.windows(2).all(|w| (w[1] - w[0]) % S == 0),
        "exact seconds"
    );
    assert_eq!(port.engine.oper(5), Some(0xaaaa));
    assert_eq!(port.engine.backoff_secs(5), Some(0));
}

#[test]
fn backoff_stays_at_60_seconds() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(3, 0x33, 0).unwrap();
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
    port.engine.set_admin(9, 0x99, 0).unwrap();
    port.sm.decline(9, 6);
    port.sm.decline(17, 4);
    port.run_until(2 * S - 1);
    port.now = 2 * S;
    port.engine.set_admin(17, 0x1717, port.now).unwrap();
    port.run();
    let order: Vec<(u64, u8)> = port.sent.iter().map(|(t, r)| (t / S, r.record)).collect();
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
    port.engine.set_admin(17, 0x17, 5 * S).unwrap();
    port.engine.set_admin(9, 0x9, 8 * S).unwrap();
    port.engine.set_admin(25, 0x25, 8 * S).unwrap();
    assert_eq!(port.engine.next_wakeup(), Some(5 * S));
    let order: Vec<u8> = (0..3)
        .map(|_| {
            let r = port.engine.next_request(10 * S).unwrap();
            assert_eq!(
                port.engine.next_request(10 * S),
                None,
                "one request at a time"
            );
            port.engine
                .answer(&Answer::failed(&r, AnswerStatus::Error), 10 * S)
                .unwrap();
            r.record
        })
        .collect();
    assert_eq!(order, [2, 1, 3]);
}

#[test]
fn admin_write_during_a_32_second_backoff_goes_out_at_once() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(5, 0xaaaa, 0).unwrap();
    port.sm.decline(5, 100);
    port.run_until(31 * S);
    assert_eq!(gaps(&port.send_times_of(5)), [1, 2, 4, 8, 16]);
    assert_eq!(port.engine.backoff_secs(5), Some(32));
    assert_eq!(port.engine.due(5), Some(63 * S));

    port.now = 40 * S;
    port.engine.write_admin(5, b"0xbbbb\n", port.now).unwrap();
    assert_eq!(
        port.engine.backoff_secs(5),
        Some(0),
        "the write resets the backoff"
    );
    assert_eq!(port.engine.next_wakeup(), Some(40 * S), "and runs at once");
    port.sm.decline(5, 1);
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
    assert_eq!(port.engine.oper(5), Some(0xbbbb));
}

#[test]
fn set_and_delete_never_share_a_request() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(1, 0x11, 0).unwrap();
    port.engine.set_admin(3, 0x33, 0).unwrap();
    port.run();
    port.now = 10 * S;
    port.engine.set_admin(1, GUID_DELETE, port.now).unwrap();
    port.engine.set_admin(2, 0x22, port.now).unwrap();
    port.engine.set_admin(3, GUID_DELETE, port.now).unwrap();
    port.engine.set_admin(4, 0, port.now).unwrap();
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
        assert_eq!(port.engine.oper(entry), Some(0));
    }
    assert_eq!(port.engine.oper(2), Some(0x22));
    assert_eq!(port.engine.oper(4), Some(port.sm.assigned_guid(4)));
}

#[test]
fn failures_retry_the_whole_request_without_touching_backoff() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(6, 0x66, 0).unwrap();
    port.sm.decline(6, 2);
    port.run_until(S); // declined at 0 and 1 s: backoff 2
    assert_eq!(port.engine.backoff_secs(6), Some(2));
    for (mode, delay) in [
        (SimMode::Error, 1),
        (SimMode::Timeout, 1),
        (SimMode::PortDown, 5),
    ] {
        port.sm.set_mode(mode);
        let before = port.send_times_of(6).len();
        port.now = port.engine.next_wakeup().unwrap();
        port.pump();
        assert_eq!(port.send_times_of(6).len(), before + 1);
        assert_eq!(port.engine.due(6), Some(port.now + delay * S), "{mode:?}");
        assert_eq!(port.engine.backoff_secs(6), Some(2), "{mode:?}");
    }
    port.sm.set_mode(SimMode::Accept);
    port.run();
    assert_eq!(port.engine.oper(6), Some(0x66));
}

#[test]
fn a_lost_answer_is_given_up_after_the_watchdog() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(6, 0x66, 0).unwrap();
    port.engine.poll(&mut port.sm, 0);
    let lost = port.sm.lose().unwrap();
    assert_eq!(port.engine.outstanding(), Some(&lost));
    assert_eq!(port.engine.next_wakeup(), Some(10 * S));
    assert_eq!(
        port.engine.poll(&mut port.sm, 9 * S),
        Some(10 * S),
        "not yet"
    );
    assert_eq!(
        port.engine.poll(&mut port.sm, 10 * S),
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
        port.engine.oper(6),
        Some(0),
        "a stale answer changes nothing"
    );
    port.now = 11 * S;
    port.run();
    assert_eq!(port.engine.oper(6), Some(0x66));
}

#[test]
fn an_answer_to_a_request_sent_before_an_admin_write_does_not_overrule_it() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(6, 0x66, 0).unwrap();
    port.engine.poll(&mut port.sm, 0);
    port.engine.set_admin(6, 0x77, S).unwrap();
    // The SM declines the old request: the new value still goes at once.
    port.sm.decline(6, 1);
    let answer = port.sm.reply().unwrap();
    port.engine.answer(&answer, 2 * S).unwrap();
    assert_eq!(port.engine.backoff_secs(6), Some(0));
    assert_eq!(port.engine.due(6), Some(S));
    // The SM accepts the new one; then an old accept arrives for a third write.
    port.engine.poll(&mut port.sm, 2 * S);
    assert_eq!(port.sm.inflight().unwrap().guids[6], 0x77);
    port.engine.set_admin(6, 0x88, 3 * S).unwrap();
    let answer = port.sm.reply().unwrap();
    let outcome = port.engine.answer(&answer, 3 * S).unwrap();
    assert_eq!(outcome.accepted, 1 << 6);
    assert_eq!(port.engine.oper(6), Some(0x77), "the SM did set 0x77");
    assert_eq!(port.engine.admin(6), Some(0x88));
    assert_eq!(port.engine.due(6), Some(3 * S), "0x88 still goes at once");
    port.now = 3 * S;
    port.run();
    assert_eq!(port.engine.oper(6), Some(0x88));
}

#[test]
fn port_state_follows_base_entries_and_events_follow_every_entry() {
    // 5 VFs: VF 1 holds 2..=27, VF 2 holds 28..=52.
    let mut port = Port::new(5, false);
    port.engine.set_admin(29, 0x29, 0).unwrap(); // VF 2, not its base
    port.run();
    assert!(
        !port.engine.function_up(2),
        "a non-base entry does not bring the port up"
    );
    assert_eq!(port.engine.take_events().iter().collect::<Vec<_>>(), [2]);
    assert_eq!(port.engine.event_count(2), 1);

    port.engine.set_admin(2, 0, port.now).unwrap(); // VF 1 base, SM assigned
    port.engine.set_admin(28, 0x28, port.now).unwrap(); // VF 2 base
    port.run();
    assert!(port.engine.function_up(1) && port.engine.function_up(2));
    assert_eq!(port.engine.take_events().iter().collect::<Vec<_>>(), [1, 2]);

    port.engine.set_admin(28, GUID_DELETE, port.now).unwrap();
    port.run();
    assert!(
        !port.engine.function_up(2),
        "deleting the base brings the port down"
    );
    assert_eq!(port.engine.take_events().iter().collect::<Vec<_>>(), [2]);
    assert_eq!(port.engine.event_count(2), 3);
    assert_eq!(port.engine.event_count(1), 1);

    // Rewriting the value already operational is no change and no event.
    port.engine.set_admin(29, 0x29, port.now).unwrap();
    port.run();
    assert!(port.engine.take_events().is_empty());
    // A value seen on the port outside an answer is an event too.
    port.engine.set_oper(3, 0x3, port.now).unwrap();
    assert_eq!(port.engine.take_events().iter().collect::<Vec<_>>(), [1]);
    assert_eq!(port.engine.set_oper(128, 1, 0), Err(GuidError::NoSuchEntry));
}

#[test]
fn too_many_vfs_is_refused_by_the_engine() {
    let err = Engine::new(Config {
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
    port.engine.set_admin(9, 0x99, 0).unwrap();
    port.engine.poll(&mut port.sm, 0);
    port.engine.set_admin(9, 0, S).unwrap();
    let answer = port.sm.reply().unwrap(); // the SM sets 0x99
    port.engine.answer(&answer, S).unwrap();
    assert_eq!(port.engine.oper(9), Some(0x99));
    assert_eq!(
        port.engine.admin(9),
        Some(0),
        "0x99 was not what the SM was asked to assign"
    );
    assert!(port.engine.is_pending(9));
    port.now = S;
    port.run();
    let last = port.sent.last().unwrap().1;
    assert_eq!(
        (last.method, last.guids[1]),
        (Method::Set, 0),
        "the SM is asked to assign"
    );
    assert_eq!(port.engine.admin(9), Some(port.sm.assigned_guid(9)));
    assert_eq!(port.engine.oper(9), Some(port.sm.assigned_guid(9)));
}

#[test]
fn an_entry_not_yet_due_waits_for_its_own_time() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(9, 0x99, 0).unwrap();
    port.sm.decline(9, 1);
    port.pump(); // entry 9 declined: due at 1 s
    port.now = S / 2;
    port.engine.set_admin(10, 0x1010, port.now).unwrap();
    port.pump();
    let (t, r) = *port.sent.last().unwrap();
    assert_eq!(
        (t, r.record, r.mask),
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
}

#[test]
fn failed_sends_reschedule_every_due_record_in_one_poll() {
    for (error, delay) in [(SubmitError::PortDown, 5), (SubmitError::Failed, 1)] {
        let mut engine = Engine::new(Config {
            num_vfs: 3,
            sm_guid_assign: false,
            hw_guid: HW,
        })
        .unwrap();
        for entry in [9u8, 17, 25, 26] {
            engine.set_admin(entry, u64::from(entry), 0).unwrap();
        }
        let mut sm = Unreachable(error, 0);
        assert_eq!(engine.poll(&mut sm, 0), Some(delay * S), "{error:?}");
        assert_eq!(sm.1, 3, "one send per record");
        assert_eq!(engine.outstanding(), None);
        for entry in [9u8, 17, 25, 26] {
            assert_eq!(
                engine.due(entry),
                Some(delay * S),
                "{error:?} entry {entry}"
            );
            assert_eq!(engine.backoff_secs(entry), Some(0));
        }
    }
}

#[test]
fn a_failed_request_keeps_each_entrys_own_backoff() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(9, 0x99, 0).unwrap();
    port.sm.decline(9, 2);
    port.run_until(S); // declined at 0 and 1 s: backoff 2, due at 3 s
    port.now = 3 * S;
    port.engine.set_admin(10, 0x1010, port.now).unwrap();
    port.sm.set_mode(SimMode::Error);
    port.pump();
    let (_, r) = *port.sent.last().unwrap();
    assert_eq!(r.mask, 0b110, "both entries in one request");
    assert_eq!(port.engine.backoff_secs(9), Some(2));
    assert_eq!(port.engine.backoff_secs(10), Some(0));
    assert_eq!(
        (port.engine.due(9), port.engine.due(10)),
        (Some(4 * S), Some(4 * S))
    );
}

#[test]
fn retry_all_sends_pending_entries_now_keeping_their_backoff() {
    let mut port = Port::new(2, false);
    port.engine.set_admin(9, 0x99, 0).unwrap();
    port.sm.decline(9, 5);
    port.run_until(15 * S); // backoff 16, due at 31 s
    assert_eq!(
        (port.engine.backoff_secs(9), port.engine.due(9)),
        (Some(16), Some(31 * S))
    );
    port.engine.retry_all(20 * S);
    assert_eq!(port.engine.due(9), Some(20 * S));
    assert_eq!(port.engine.backoff_secs(9), Some(16));
    assert_eq!(port.engine.next_wakeup(), Some(20 * S));
}

#[test]
fn an_entry_whose_request_timed_out_is_confirmed_with_the_sm() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(6, 0xa, 0).unwrap();
    port.run();
    // B is sent and times out: the SM may hold B. The admin goes back to A.
    port.engine.set_admin(6, 0xb, port.now).unwrap();
    port.sm.set_mode(SimMode::Timeout);
    port.pump();
    port.engine.set_admin(6, 0xa, port.now).unwrap();
    assert!(port.engine.is_pending(6), "A must be asserted again");
    port.sm.set_mode(SimMode::Accept);
    port.run();
    let last = port.sent.last().unwrap().1;
    assert_eq!(last.guids[6], 0xa);
    assert_eq!(port.sm.guid(6), Some(0xa));
    assert!(!port.engine.is_pending(6));
    // A port that is down never reached the SM: nothing to confirm.
    port.engine.set_admin(6, 0xb, port.now).unwrap();
    port.sm.set_mode(SimMode::PortDown);
    port.pump();
    port.engine.set_admin(6, 0xa, port.now).unwrap();
    assert!(!port.engine.is_pending(6));
}

#[test]
fn a_value_seen_on_the_port_reschedules_at_once() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(6, 0x66, 0).unwrap();
    port.sm.decline(6, 4);
    port.run();
    assert_eq!(port.engine.oper(6), Some(0x66));
    port.now += 100 * S;
    port.engine.set_oper(6, 0x1, port.now).unwrap(); // something else changed it
    assert_eq!(port.engine.due(6), Some(port.now));
    assert_eq!(port.engine.backoff_secs(6), Some(0));
    port.run();
    assert_eq!(port.engine.oper(6), Some(0x66));
    assert_eq!(port.engine.set_oper(0, 1, 0), Err(GuidError::ReadOnly));
    assert_eq!(port.engine.oper(0), Some(HW));
}

#[test]
fn the_decline_mode_keeps_scripted_declines() {
    let mut port = Port::new(1, false);
    port.engine.set_admin(6, 0x66, 0).unwrap();
    port.sm.decline(6, 2);
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
    port.engine.set_admin(9, 0x99, 0).unwrap();
    port.engine.poll(&mut port.sm, 0);
    let mut answer = port.sm.reply().unwrap();
    answer.record = 2;
    assert_eq!(port.engine.answer(&answer, 0), Err(GuidError::StaleAnswer));
    assert!(port.engine.outstanding().is_some());
    answer.record = 1;
    assert!(port.engine.answer(&answer, 0).is_ok());
    assert_eq!(port.engine.oper(9), Some(0x99));
}

#[test]
fn reset_starts_the_table_over_in_place() {
    let config = Config {
        num_vfs: 5,
        sm_guid_assign: true,
        hw_guid: HW,
    };
    let mut port = Port::new(2, false);
    port.engine.set_admin(9, 0x99, 0).unwrap();
    port.run();
    port.engine.set_admin(10, 0x10, port.now).unwrap();
    port.engine.poll(&mut port.sm, port.now);
    assert_eq!(
        port.engine.reset(Config {
            num_vfs: 127,
            ..config
        }),
        Err(GuidError::TooManyVfs)
    );
    assert_eq!(
        port.engine.oper(9),
        Some(0x99),
        "a refused reset changes nothing"
    );
    port.engine.reset(config).unwrap();
    let fresh = Engine::new(config).unwrap();
    assert_eq!(port.engine.outstanding(), None);
    assert_eq!(port.engine.split(), fresh.split());
    for entry in 0..128u8 {
        assert_eq!(port.engine.admin(entry), fresh.admin(entry));
        assert_eq!(port.engine.oper(entry), fresh.oper(entry));
        assert_eq!(port.engine.due(entry), fresh.due(entry));
        assert_eq!(port.engine.backoff_secs(entry), fresh.backoff_secs(entry));
    }
    assert!((0..=5).all(|f| port.engine.event_count(f) == 0));
    assert!(port.engine.take_events().is_empty());
}
