//! Properties of `SreBreaker`: its ratio matches a naive log of every outcome, a refusal only
//! ever happens under the ratio, and hostile input never panics.

use core::time::Duration;
use std::collections::BTreeMap;

use ironward::{SRE, Sre, SreBreaker, Tally};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

#[derive(Debug, Clone)]
enum Op {
    /// Ask at `at` with a draw of `roll`; settle at `done` (a success or a failure), if let through.
    Call {
        at: u64,
        roll: f64,
        done: u64,
        ok: bool,
    },
    Ratio {
        at: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..20_000u64, 0.0..1.0f64, 0..300u64, prop::bool::weighted(0.3))
            .prop_map(|(at, roll, took, ok)| Op::Call { at, roll, done: at + took, ok }),
        1 => (0..20_000u64).prop_map(|at| Op::Ratio { at }),
    ]
}

/// The drop ratio computed from scratch from every outcome ever recorded.
struct Log {
    sre: Sre,
    /// Where the window's grid starts: zero, or the latest reading when a retune rebuilt it.
    origin: u64,
    width: u64,
    latest: u64,
    /// (start of the bucket it landed in, the outcome's effect)
    records: Vec<(u64, Tally)>,
}

impl Log {
    fn grid(&self, t: u64) -> u64 {
        self.origin + (t - self.origin) / self.width * self.width
    }

    /// The buckets still in the window at `at` (read as the latest seen), by start.
    fn window(&self, at: u64) -> BTreeMap<u64, Tally> {
        let at = at.max(self.latest);
        let size = self.sre.size as u64;
        let mut buckets: BTreeMap<u64, Tally> = BTreeMap::new();
        for (start, t) in &self.records {
            if start + size * self.width > at {
                let b = buckets.entry(*start).or_default();
                b.total += t.total;
                b.success += t.success;
                b.failure += t.failure;
                b.drop += t.drop;
            }
        }
        buckets
    }

    /// Successes and calls in the window at `at`.
    fn counts(&self, at: u64) -> (u64, u64) {
        self.window(at)
            .values()
            .fold((0, 0), |(a, t), b| (a + b.success, t + b.total))
    }

    /// What `SreBreaker::retune` does at `at`: new buckets (`width` wide) move every outcome
    /// still in the window into one bucket that opens at the latest reading; the same
    /// buckets are kept as they are.
    fn retune(&mut self, sre: Sre, width: u64, at: u64) {
        if (sre.size, width) != (self.sre.size, self.width) {
            self.latest = self.latest.max(at);
            let mut kept = Tally::default();
            for b in self.window(self.latest).values() {
                kept.total += b.total;
                kept.success += b.success;
                kept.failure += b.failure;
                kept.drop += b.drop;
            }
            self.records = vec![(self.latest, kept)];
            self.origin = self.latest;
            self.width = width;
        }
        self.sre = sre;
    }

    fn record(&mut self, at: u64, ok: Option<bool>) {
        self.latest = self.latest.max(at);
        let tally = match ok {
            Some(true) => Tally {
                total: 1,
                success: 1,
                failure: 0,
                drop: 0,
            },
            Some(false) => Tally {
                total: 1,
                success: 0,
                failure: 1,
                drop: 0,
            },
            None => Tally {
                total: 1,
                success: 0,
                failure: 0,
                drop: 1,
            },
        };
        let start = self.grid(self.latest);
        self.records.push((start, tally));
    }

    fn ratio(&self, at: u64) -> f64 {
        let buckets = self.window(at);
        let (mut accepts, mut total, mut working, mut failing) = (0u64, 0u64, 0usize, 0usize);
        for b in buckets.values() {
            accepts += b.success;
            total += b.total;
            if b.success > 0 && b.failure == 0 {
                working += 1;
                failing = 0;
            } else if b.failure > 0 && b.success == 0 {
                failing += 1;
                working = 0;
            } else if b.success > 0 {
                working = 0;
                failing = 0;
            }
        }
        let Sre {
            k,
            floor,
            protection,
            size,
            ..
        } = self.sre;
        let w = (k - (k - floor) * failing as f64 / size as f64).max(floor);
        let drop = (total as f64 - protection - w * accepts as f64) / (total as f64 + 1.0);
        (drop * ((size - working) as f64 / size as f64)).max(0.0)
    }
}

/// A breaker constant: ordinary values around the preset, hostile ones (NaN, both infinities,
/// negatives, the extremes of `f64`) and any `f64` at all.
fn constant(ordinary: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-1.0),
        Just(f64::MAX),
        Just(0.0),
        any::<f64>(),
        0.0..ordinary,
    ]
}

/// A policy whose buckets are whole milliseconds: 1 to 11 of them, 100, 250 or 400 ms wide,
/// with one of a few `k`s and protections. Returns it with its width in nanoseconds.
fn policy() -> impl Strategy<Value = (Sre, u64)> {
    (
        1..12usize,
        prop::sample::select(vec![100u64, 250, 400]),
        prop::sample::select(vec![1.1, 1.5, 2.0, 3.0]),
        prop::sample::select(vec![0.0, 5.0]),
    )
        .prop_map(|(size, width, k, protection)| {
            let sre = Sre {
                size,
                window: Duration::from_millis(width) * size as u32,
                k,
                protection,
                ..SRE
            };
            (sre, width * 1_000_000)
        })
}

/// One call to a breaker and to its log, checking the ratio first and the refusal after.
fn call(
    breaker: &mut SreBreaker,
    log: &mut Log,
    (at, roll, done, ok): (u64, f64, u64, bool),
) -> Result<(), TestCaseError> {
    let ms = Duration::from_millis;
    let ratio = breaker.ratio(ms(at));
    prop_assert_eq!(ratio, log.ratio(at * 1_000_000));
    match breaker.allow(ms(at), roll) {
        Some(permit) => {
            log.latest = log.latest.max(at * 1_000_000);
            let settled = if ok {
                breaker.pass(permit, ms(done))
            } else {
                breaker.fail(permit, ms(done))
            };
            assert!(settled.is_none());
            log.record(done * 1_000_000, Some(ok));
        }
        None => {
            prop_assert!(
                roll < ratio,
                "refused a draw of {} over the ratio {}",
                roll,
                ratio
            );
            log.record(at * 1_000_000, None);
        }
    }
    Ok(())
}

proptest! {
    /// The breaker's ratio is the SRE formula over exactly the outcomes of the last window,
    /// a refusal only happens for a draw under the ratio, and a clock that goes backwards
    /// reads as the latest seen.
    #[test]
    fn agrees_with_a_log_of_every_outcome(
        size in 1..12usize,
        ops in prop::collection::vec(op(), 1..150),
    ) {
        let sre = Sre { size, window: Duration::from_millis(250) * size as u32, ..SRE };
        let mut breaker = SreBreaker::new(sre, Duration::ZERO);
        let mut log = Log { sre, origin: 0, width: 250_000_000, latest: 0, records: Vec::new() };
        let ms = Duration::from_millis;
        for op in ops {
            match op {
                Op::Call { at, roll, done, ok } => {
                    let ratio = breaker.ratio(ms(at));
                    prop_assert_eq!(ratio, log.ratio(at * 1_000_000));
                    match breaker.allow(ms(at), roll) {
                        Some(permit) => {
                            log.latest = log.latest.max(at * 1_000_000);
                            let settled = if ok { breaker.pass(permit, ms(done)) } else { breaker.fail(permit, ms(done)) };
                            prop_assert!(settled.is_none());
                            log.record(done * 1_000_000, Some(ok));
                        }
                        None => {
                            prop_assert!(roll < ratio, "refused a draw of {} over the ratio {}", roll, ratio);
                            log.record(at * 1_000_000, None);
                        }
                    }
                }
                Op::Ratio { at } => {
                    let ratio = breaker.ratio(ms(at));
                    prop_assert!((0.0..1.0).contains(&ratio));
                    prop_assert_eq!(ratio, log.ratio(at * 1_000_000));
                }
            }
        }
    }

    /// No policy, draw or clock reading panics; the ratio always lies in `[0, 1]` and agrees
    /// with `allow`: a refusal only for a draw under it, none at all when it is 0, and none
    /// ever when a constant is NaN or infinite (the crate docs' "Edge cases").
    #[test]
    fn hostile_input_never_panics(
        k in constant(3.0),
        floor in constant(3.0),
        protection in constant(10.0),
        size in prop_oneof![Just(0usize), Just(1), 2..100usize, Just(usize::MAX)],
        window in prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
        probe in prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
        calls in prop::collection::vec((
            prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
            prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(1.0), any::<f64>()],
            any::<bool>(),
        ), 1..60),
    ) {
        let off = [k, floor, protection].iter().any(|c| c.is_nan() || *c == f64::INFINITY);
        let mut breaker = SreBreaker::new(Sre { k, floor, protection, probe, size, window }, calls[0].0);
        for (now, roll, ok) in calls {
            let ratio = breaker.ratio(now);
            prop_assert!((0.0..=1.0).contains(&ratio), "a ratio of {}", ratio);
            if off {
                prop_assert_eq!(ratio, 0.0);
            }
            match breaker.allow(now, roll) {
                Some(permit) => {
                    let settled = if ok { breaker.pass(permit, now) } else { breaker.fail(permit, now) };
                    prop_assert!(settled.is_none());
                }
                None => {
                    // Draws are clamped into [0, 1): NaN and negatives are 0.
                    let draw = if roll > 0.0 { roll } else { 0.0 };
                    prop_assert!(draw < ratio, "refused a draw of {} at a ratio of {}", roll, ratio);
                }
            }
        }
    }

    /// Retuning to the policy the breaker runs, or to other constants and straight back,
    /// changes nothing: every later ratio and decision is the un-retuned twin's, a clock
    /// going backwards included (neither retune reads the clock).
    #[test]
    fn retuning_to_the_same_policy_changes_nothing(
        (sre, _) in policy(),
        ops in prop::collection::vec((op(), prop::option::weighted(0.2, (0..20_000u64, 0.0..100.0f64))), 1..150),
    ) {
        let ms = Duration::from_millis;
        let mut breaker = SreBreaker::new(sre, Duration::ZERO);
        let mut twin = breaker.clone();
        for (op, retune) in ops {
            if let Some((at, k)) = retune {
                breaker.retune(Sre { k, probe: Duration::ZERO, ..sre }, ms(at));
                breaker.retune(sre, ms(at));
            }
            match op {
                Op::Call { at, roll, done, ok } => {
                    let (a, b) = (breaker.allow(ms(at), roll), twin.allow(ms(at), roll));
                    prop_assert_eq!(a.is_some(), b.is_some());
                    if let (Some(a), Some(b)) = (a, b) {
                        if ok {
                            breaker.pass(a, ms(done));
                            twin.pass(b, ms(done));
                        } else {
                            breaker.fail(a, ms(done));
                            twin.fail(b, ms(done));
                        }
                    }
                }
                Op::Ratio { at } => prop_assert_eq!(breaker.ratio(ms(at)), twin.ratio(ms(at))),
            }
        }
    }

    /// Through any run of calls and retunes, the ratio is the SRE formula under the policy
    /// of the moment over the outcomes a log keeps: the same buckets while the bucket count
    /// and width stay, and every outcome still in the window moved into one bucket opening
    /// at the retune when they change.
    #[test]
    fn a_retuned_breaker_agrees_with_a_log_of_every_outcome(
        (sre, width) in policy(),
        ops in prop::collection::vec((op(), prop::option::weighted(0.05, (0..20_000u64, policy()))), 1..150),
    ) {
        let ms = Duration::from_millis;
        let mut breaker = SreBreaker::new(sre, Duration::ZERO);
        let mut log = Log { sre, origin: 0, width, latest: 0, records: Vec::new() };
        for (op, retune) in ops {
            if let Some((at, (sre, width))) = retune {
                breaker.retune(sre, ms(at));
                log.retune(sre, width, at * 1_000_000);
                prop_assert_eq!(breaker.sre(), &sre);
            }
            match op {
                Op::Call { at, roll, done, ok } => call(&mut breaker, &mut log, (at, roll, done, ok))?,
                Op::Ratio { at } => prop_assert_eq!(breaker.ratio(ms(at)), log.ratio(at * 1_000_000)),
            }
        }
    }

    /// Under load, a breaker retuned from k = 1.5 to k = 2.0 keeps its window (the log's
    /// totals still give its ratio, now and on every later call) and changes its ratio on
    /// the next call: lower wherever anything was accepted, so that a draw between the two
    /// ratios, refused by an un-retuned twin, is let through.
    #[test]
    fn raising_k_under_load_lowers_the_next_ratio_and_keeps_the_window(
        size in 1..12usize,
        load in prop::collection::vec(op(), 20..150),
        at in 0..20_000u64,
        after in prop::collection::vec(op(), 1..50),
    ) {
        let ms = Duration::from_millis;
        // No probe: the twin's refusal below is the ratio's alone.
        let sre = Sre { size, window: ms(250) * size as u32, probe: Duration::MAX, ..SRE };
        let mut breaker = SreBreaker::new(sre, Duration::ZERO);
        let mut log = Log { sre, origin: 0, width: 250_000_000, latest: 0, records: Vec::new() };
        for op in load {
            if let Op::Call { at, roll, done, ok } = op {
                call(&mut breaker, &mut log, (at, roll, done, ok))?;
            }
        }
        let twin = breaker.clone();
        let before = breaker.ratio(ms(at));
        let (accepts, total) = log.counts(at * 1_000_000);
        let eager = Sre { k: 2.0, ..sre };
        breaker.retune(eager, ms(at));
        log.retune(eager, 250_000_000, at * 1_000_000);
        prop_assert_eq!(log.counts(at * 1_000_000), (accepts, total), "the window is kept");
        let ratio = breaker.ratio(ms(at));
        prop_assert_eq!(ratio, log.ratio(at * 1_000_000));
        prop_assert!(ratio <= before, "{} rose to {}", before, ratio);
        if before > 0.0 && accepts > 0 {
            prop_assert!(ratio < before, "{} with {} accepts of {}", ratio, accepts, total);
            let draw = (ratio + before) / 2.0;
            prop_assert!(twin.clone().allow(ms(at), draw).is_none());
            // Let through and left unsettled: nothing is recorded, but the clock is read.
            let admitted = breaker.allow(ms(at), draw).is_some();
            prop_assert!(admitted, "refused {} at a ratio of {}", draw, ratio);
            log.latest = log.latest.max(at * 1_000_000);
        }
        for op in after {
            match op {
                Op::Call { at, roll, done, ok } => call(&mut breaker, &mut log, (at, roll, done, ok))?,
                Op::Ratio { at } => prop_assert_eq!(breaker.ratio(ms(at)), log.ratio(at * 1_000_000)),
            }
        }
    }
}

/// A draw as the breaker reads it: NaN and negatives are 0, 1 and above just below 1.
fn clamped(roll: f64) -> f64 {
    if roll >= 1.0 {
        1.0 - f64::EPSILON / 2.0
    } else if roll > 0.0 {
        roll
    } else {
        0.0
    }
}

proptest! {
    /// `allow` is `check` with the reason discarded: twins, one asked through each, decide
    /// alike on every call. A refusal's reason shows a refusing state: the draw as clamped
    /// under a drop that is the ratio at that instant, over a window of as many calls and
    /// accepts as a log of every outcome holds.
    #[test]
    fn check_decides_as_allow_and_its_reason_shows_a_refusal(
        (sre, width) in policy(),
        ops in prop::collection::vec((op(), prop_oneof![4 => Just(None), 1 => prop_oneof![Just(f64::NAN), Just(-1.0), Just(1.0), any::<f64>()].prop_map(Some)]), 1..150),
    ) {
        let ms = Duration::from_millis;
        let mut breaker = SreBreaker::new(sre, Duration::ZERO);
        let mut twin = breaker.clone();
        let mut log = Log { sre, origin: 0, width, latest: 0, records: Vec::new() };
        for (op, hostile) in ops {
            let Op::Call { at, roll, done, ok } = op else { continue };
            let roll = hostile.unwrap_or(roll);
            let ratio = twin.ratio(ms(at));
            let (counts, size) = (log.counts(at * 1_000_000), sre.size);
            match (breaker.allow(ms(at), roll), twin.check(ms(at), roll)) {
                (Some(a), Ok(b)) => {
                    log.latest = log.latest.max(at * 1_000_000);
                    if ok {
                        breaker.pass(a, ms(done));
                        twin.pass(b, ms(done));
                    } else {
                        breaker.fail(a, ms(done));
                        twin.fail(b, ms(done));
                    }
                    log.record(done * 1_000_000, Some(ok));
                }
                (None, Err(reason)) => {
                    prop_assert_eq!(reason.roll, clamped(roll));
                    prop_assert!(reason.roll < reason.drop, "{:?}", reason);
                    prop_assert_eq!(reason.drop, ratio);
                    prop_assert_eq!((reason.accepts, reason.total), counts);
                    prop_assert!(reason.failing + reason.working <= size, "{:?}", reason);
                    prop_assert!(reason.k >= sre.floor.min(sre.k) && reason.k <= sre.k.max(sre.floor));
                    log.record(at * 1_000_000, None);
                }
                (a, b) => prop_assert!(false, "allow {:?}, check {:?}", a.is_some(), b.map(|_| ())),
            }
            prop_assert_eq!(breaker.ratio(ms(at)), twin.ratio(ms(at)));
        }
    }
}
