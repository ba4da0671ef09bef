// SPDX-License-Identifier: GPL-2.0

//! The emulation of masked atomics with standard compare-and-swap: the state
//! machine against scripted results, then under contention against
//! `AtomicU64`, mixed with plain compare-and-swap and fetch-and-add, with
//! every response checked against a sequential order.

use mlx_ext_core::atomics::{
    self, emulation::DEFAULT_MAX_ATTEMPTS, Cas, Emulation, MaskedOp, Step,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};
use std::sync::Mutex;

fn fetch_add(add: u64, field_boundary: u64) -> MaskedOp {
    MaskedOp::FetchAdd {
        add,
        field_boundary,
    }
}

fn cmp_swap(compare: u64, compare_mask: u64, swap: u64, swap_mask: u64) -> MaskedOp {
    MaskedOp::CmpSwap {
        compare,
        compare_mask,
        swap,
        swap_mask,
    }
}

// Scripted compare-and-swap results.

#[test]
fn guess_right() {
    let mut e = Emulation::new(fetch_add(1, 0), 5);
    assert_eq!(
        e.cas(),
        Cas {
            compare: 5,
            swap: 6
        }
    );
    assert_eq!(
        e.step(),
        Step::Next(Cas {
            compare: 5,
            swap: 6
        })
    );
    assert_eq!(e.complete(5), Step::Done { response: 5 });
    assert_eq!(e.attempts(), 1);
}

#[test]
fn guess_wrong_once() {
    let op = cmp_swap(0x10, 0xf0, 0xab00, 0xff00);
    let mut e = Emulation::new(op, 0);
    // Against the guess 0 the compare fails: the CAS only validates.
    assert_eq!(
        e.cas(),
        Cas {
            compare: 0,
            swap: 0
        }
    );
    // The word held 0x1234: the next CAS is built on that value.
    assert_eq!(
        e.complete(0x1234),
        Step::Next(Cas {
            compare: 0x1234,
            swap: 0x1234
        })
    );
    // It changed again to 0x1010 before the second CAS arrived.
    assert_eq!(
        e.complete(0x1010),
        Step::Next(Cas {
            compare: 0x1010,
            swap: 0xab10
        })
    );
    assert_eq!(e.complete(0x1010), Step::Done { response: 0x1010 });
    assert_eq!(e.attempts(), 3);
}

#[test]
fn no_op_with_stale_guess_is_validated() {
    // The guess says the lock bit is taken, so the masked CAS would not change
    // the word. The word is in fact free: the emulation must not answer the
    // stale guess, and must take the lock.
    let acquire = cmp_swap(0, 1, 1, 1);
    let mut e = Emulation::new(acquire, 1);
    assert_eq!(
        e.cas(),
        Cas {
            compare: 1,
            swap: 1
        }
    );
    assert_eq!(
        e.complete(0),
        Step::Next(Cas {
            compare: 0,
            swap: 1
        })
    );
    assert_eq!(e.complete(0), Step::Done { response: 0 });

    // A read (add 0) is validated with CAS(g, g) too.
    let mut e = Emulation::new(fetch_add(0, 0), 7);
    assert_eq!(
        e.cas(),
        Cas {
            compare: 7,
            swap: 7
        }
    );
    assert_eq!(
        e.complete(9),
        Step::Next(Cas {
            compare: 9,
            swap: 9
        })
    );
    assert_eq!(e.complete(9), Step::Done { response: 9 });
}

#[test]
fn bound_on_attempts() {
    let mut e = Emulation::with_max_attempts(fetch_add(1, 0), 0, 3);
    assert_eq!(e.max_attempts(), 3);
    assert_eq!(
        e.complete(1),
        Step::Next(Cas {
            compare: 1,
            swap: 2
        })
    );
    assert_eq!(
        e.complete(2),
        Step::Next(Cas {
            compare: 2,
            swap: 3
        })
    );
    assert_eq!(e.complete(3), Step::Exhausted { last_seen: 3 });
    assert_eq!(e.attempts(), 3);
    // Terminal states stay put.
    assert_eq!(e.complete(3), Step::Exhausted { last_seen: 3 });
    assert_eq!(e.attempts(), 3);
    assert_eq!(
        Emulation::with_max_attempts(fetch_add(1, 0), 0, 0).max_attempts(),
        1
    );
    assert_eq!(
        Emulation::new(fetch_add(1, 0), 0).max_attempts(),
        DEFAULT_MAX_ATTEMPTS
    );

    let mut e = Emulation::new(fetch_add(1, 0), 4);
    assert_eq!(e.complete(4), Step::Done { response: 4 });
    assert_eq!(e.complete(8), Step::Done { response: 4 });
    assert_eq!(e.attempts(), 1);
}

#[test]
fn drive_against_a_word() {
    let word = AtomicU64::new(0x00ff_0000_0000_00ff);
    let op = fetch_add(0x0001_0000_0000_0001, 0x8080_8080_8080_8080);
    let mut e = Emulation::new(op, 0);
    let outcome = e.drive(|c| cas(&word, c));
    assert_eq!(
        outcome,
        Step::Done {
            response: 0x00ff_0000_0000_00ff
        }
    );
    // Bytes 0 and 6 wrap to 0 without carrying into their neighbours.
    assert_eq!(word.load(SeqCst), 0);
    assert_eq!(e.attempts(), 2);
}

#[test]
fn apply_matches_the_functions() {
    let op = cmp_swap(1, 3, 0xf0, 0xf0);
    assert_eq!(
        op.apply(0x0d),
        atomics::masked_cmp_swap(0x0d, 1, 3, 0xf0, 0xf0)
    );
    let op = fetch_add(0x11, 0x08);
    assert_eq!(op.apply(0x1f), atomics::masked_fetch_add(0x1f, 0x11, 0x08));
}

// Contention.

/// A standard compare-and-swap on `word`: returns the value found there.
fn cas(word: &AtomicU64, c: Cas) -> u64 {
    match word.compare_exchange(c.compare, c.swap, SeqCst, SeqCst) {
        Ok(v) | Err(v) => v,
    }
}

/// Emulates `op` on `word` from `guess`, restarting from the last value seen
/// whenever the bound on attempts is reached. Returns the response and the
/// number of compare-and-swaps issued.
fn emulate(word: &AtomicU64, op: MaskedOp, guess: u64) -> (u64, u32) {
    let mut e = Emulation::new(op, guess);
    let mut total = 0;
    loop {
        let outcome = e.drive(|c| cas(word, c));
        total += e.attempts();
        match outcome {
            Step::Done { response } => return (response, total),
            Step::Exhausted { last_seen } => e = Emulation::new(op, last_seen),
            Step::Next(_) => panic!("drive returned a pending step"),
        }
    }
}

/// A broken emulation that trusts its guess when the operation would not
/// change it: the checks below must catch it.
fn emulate_unvalidated(word: &AtomicU64, op: MaskedOp, guess: u64) -> (u64, u32) {
    if op.apply(guess) == guess {
        return (guess, 0);
    }
    emulate(word, op, guess)
}

type Emulate = fn(&AtomicU64, MaskedOp, u64) -> (u64, u32);

/// Four 16-bit fields; thread `t` owns field `t` and adds `STEP[t]` to it.
const BOUNDARY: u64 = 0x8000_8000_8000_8000;
/// Odd steps, so that a field's value gives back its count of additions; the
/// large ones wrap the field often.
const STEP: [u64; 4] = [0x9e37, 0x3c6f, 0x0001, 0xfffd];

fn inverse16(k: u64) -> u64 {
    // Newton's iteration for the inverse of an odd number modulo 2^16.
    let mut x = k;
    for _ in 0..4 {
        x = x.wrapping_mul(2u64.wrapping_sub(k.wrapping_mul(x)));
    }
    x & 0xffff
}

fn counts(word: u64) -> [u64; 4] {
    let mut c = [0; 4];
    for (t, c) in c.iter_mut().enumerate() {
        *c = ((word >> (16 * t)) & 0xffff).wrapping_mul(inverse16(STEP[t])) & 0xffff;
    }
    c
}

fn own_add(t: usize) -> MaskedOp {
    fetch_add(STEP[t] << (16 * t), BOUNDARY)
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// An addition to the thread's own field, and its response.
    Add(u64),
    /// A read (masked fetch-and-add of 0), and its response.
    Read(u64),
}

/// Runs the disjoint-fields workload and checks the history. Threads 0 and 1
/// use the emulation (with stale guesses on purpose), thread 2 a hand-written
/// CAS loop, thread 3 a plain `fetch_add` whose carry out of bit 63 is
/// dropped, as the boundary there says.
fn disjoint_fields(n: u64, emulate: Emulate) -> Result<(), String> {
    let word = AtomicU64::new(0);
    let attempts = AtomicU64::new(0);
    let ops = AtomicU64::new(0);
    let histories: Vec<Mutex<Vec<Event>>> = (0..4).map(|_| Mutex::new(Vec::new())).collect();
    std::thread::scope(|s| {
        for (t, history) in histories.iter().enumerate().take(2) {
            let (word, attempts, ops) = (&word, &attempts, &ops);
            s.spawn(move || {
                let mut h = Vec::new();
                let mut last = 0u64;
                for i in 0..n {
                    let guess = match i % 4 {
                        0 => 0,
                        3 => last,
                        _ => own_add(t).apply(last),
                    };
                    let (r, a) = emulate(word, own_add(t), guess);
                    h.push(Event::Add(r));
                    attempts.fetch_add(u64::from(a), SeqCst);
                    ops.fetch_add(1, SeqCst);
                    last = r;
                    if i % 3 == 0 {
                        // Read back, guessing the value before our own add.
                        let (r, _) = emulate(word, fetch_add(0, BOUNDARY), last);
                        h.push(Event::Read(r));
                        last = r;
                    }
                }
                *history.lock().unwrap() = h;
            });
        }
        let (w, history) = (&word, &histories[2]);
        s.spawn(move || {
            let mut h = Vec::new();
            let mut cur = w.load(SeqCst);
            let mut done = 0;
            while done < n {
                let new = atomics::masked_fetch_add(cur, STEP[2] << 32, BOUNDARY);
                match w.compare_exchange_weak(cur, new, SeqCst, SeqCst) {
                    Ok(v) => {
                        h.push(Event::Add(v));
                        done += 1;
                        cur = new;
                    }
                    Err(v) => cur = v,
                }
            }
            *history.lock().unwrap() = h;
        });
        let (w, history) = (&word, &histories[3]);
        s.spawn(move || {
            let h = (0..n)
                .map(|_| Event::Add(w.fetch_add(STEP[3] << 48, SeqCst)))
                .collect();
            *history.lock().unwrap() = h;
        });
    });

    let final_word = word.load(SeqCst);
    if counts(final_word) != [n; 4] {
        return Err(format!(
            "final counts {:?}, expected {n} each",
            counts(final_word)
        ));
    }

    // Per thread: its own field counts its own additions exactly, and every
    // other field only moves forward.
    let mut adds = Vec::new();
    let mut reads = Vec::new();
    for (t, h) in histories.iter().enumerate() {
        let h = h.lock().unwrap();
        let mut own = 0;
        let mut seen = [0u64; 4];
        for e in h.iter() {
            let (Event::Add(r) | Event::Read(r)) = *e;
            let c = counts(r);
            if c[t] != own {
                return Err(format!(
                    "thread {t}: {e:x?} shows own count {}, expected {own}",
                    c[t]
                ));
            }
            for f in 0..4 {
                if c[f] < seen[f] || c[f] > n {
                    return Err(format!(
                        "thread {t}: field {f} went from {} to {}",
                        seen[f], c[f]
                    ));
                }
            }
            seen = c;
            match e {
                Event::Add(r) => {
                    own += 1;
                    adds.push((t, *r));
                }
                Event::Read(r) => reads.push(*r),
            }
        }
        if own != n {
            return Err(format!("thread {t}: {own} additions recorded"));
        }
    }

    // All threads: the responses of the additions are the states of one
    // sequential history, each one step from the next, by its own thread.
    let total = 4 * n;
    let mut chain = vec![None; total as usize + 1];
    for &(t, r) in &adds {
        let sum: u64 = counts(r).iter().sum();
        let slot = &mut chain[sum as usize];
        if slot.is_some() {
            return Err(format!(
                "two additions answered states with {sum} prior additions"
            ));
        }
        *slot = Some((t, r));
    }
    chain[total as usize] = Some((4, final_word));
    let states: HashSet<u64> = chain.iter().flatten().map(|&(_, r)| r).collect();
    for pair in chain.windows(2) {
        let (Some((t, before)), Some((_, after))) = (pair[0], pair[1]) else {
            return Err("a state of the history has no response".into());
        };
        if own_add(t).apply(before) != after {
            return Err(format!(
                "thread {t} turned {before:#018x} into {after:#018x}, not one step"
            ));
        }
    }
    for r in reads {
        if !states.contains(&r) {
            return Err(format!(
                "a read answered {r:#018x}, which the word never held"
            ));
        }
    }
    let (a, o) = (attempts.load(SeqCst), ops.load(SeqCst));
    if a <= o {
        return Err(format!(
            "{a} CAS for {o} operations: the retry path never ran"
        ));
    }
    Ok(())
}

#[test]
fn disjoint_fields_under_contention() {
    disjoint_fields(40_000, emulate).unwrap();
}

#[test]
fn checks_catch_an_unvalidated_guess() {
    let err = disjoint_fields(2_000, emulate_unvalidated).unwrap_err();
    assert!(err.contains("own count"), "{err}");
}

/// Masked compare-and-swap as eight one-bit locks in one word, taken and
/// released by four threads, while a fifth adds to the upper half of the same
/// word, with plain `fetch_add` and with the emulation.
#[test]
fn bit_locks_under_contention() {
    const THREADS: u32 = 4;
    const ROUNDS: u64 = 20_000;
    const NOISE: u64 = 50_000;
    const FREE: u32 = u32::MAX;
    let word = AtomicU64::new(0);
    let owners: Vec<AtomicU32> = (0..8).map(|_| AtomicU32::new(FREE)).collect();
    let counters: Vec<AtomicU64> = (0..8).map(|_| AtomicU64::new(0)).collect();
    let taken: Vec<AtomicU64> = (0..8).map(|_| AtomicU64::new(0)).collect();
    let busy = AtomicU64::new(0);
    std::thread::scope(|s| {
        for me in 0..THREADS {
            let (word, owners, counters, taken, busy) = (&word, &owners, &counters, &taken, &busy);
            s.spawn(move || {
                let mut last = 0u64;
                for i in 0..ROUNDS {
                    let lock = ((u64::from(me) + i * 3) % 8) as usize;
                    let bit = 1u64 << lock;
                    // Guess alternately from stale knowledge and "free".
                    let guess = if i % 2 == 0 { last } else { last & !bit };
                    let (r, _) = emulate(word, cmp_swap(0, bit, bit, bit), guess);
                    last = r;
                    if r & bit != 0 {
                        busy.fetch_add(1, SeqCst);
                        continue;
                    }
                    let prev = owners[lock].swap(me, SeqCst);
                    assert_eq!(prev, FREE, "lock {lock} held by {prev} and {me}");
                    // A non-atomic increment: lost updates if exclusion fails.
                    let c = counters[lock].load(SeqCst);
                    std::hint::spin_loop();
                    counters[lock].store(c + 1, SeqCst);
                    taken[lock].fetch_add(1, SeqCst);
                    assert_eq!(owners[lock].swap(FREE, SeqCst), me);
                    if i % 2 == 0 {
                        let (r, _) = emulate(word, cmp_swap(bit, bit, 0, bit), r | bit);
                        assert_ne!(r & bit, 0, "released a lock that was not taken");
                        last = r & !bit;
                    } else {
                        let r = word.fetch_and(!bit, SeqCst);
                        assert_ne!(r & bit, 0, "released a lock that was not taken");
                        last = r & !bit;
                    }
                }
            });
        }
        let w = &word;
        s.spawn(move || {
            let mut last = 0;
            for i in 0..NOISE {
                if i % 2 == 0 {
                    w.fetch_add(1 << 32, SeqCst);
                } else {
                    // The upper half as one field: bits 32 to 63.
                    let (r, _) = emulate(w, fetch_add(1 << 32, 1 << 31), last);
                    last = r;
                }
            }
        });
    });
    let w = word.load(SeqCst);
    assert_eq!(w & 0xff, 0, "a lock was left taken");
    assert_eq!(w >> 32, NOISE, "additions to the upper half were lost");
    let mut total = 0;
    for lock in 0..8 {
        assert_eq!(counters[lock].load(SeqCst), taken[lock].load(SeqCst));
        total += taken[lock].load(SeqCst);
    }
    assert_eq!(total + busy.load(SeqCst), u64::from(THREADS) * ROUNDS);
    assert!(total > 0);
}
