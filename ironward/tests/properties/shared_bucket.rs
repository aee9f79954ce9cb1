//! Properties of `SharedBucket` on one thread, against its `&mut` twin: `Bucket`.
//!
//! The shared form counts time in quarters of a nanosecond and rounds each take's cost up to
//! a whole one, where `Bucket` rounds in floats; its docs bound the difference by
//! `ε(m) = (m + 2) · (rate / 4·10⁹ + burst · 2⁻⁵⁰)` tokens after `m` takes since both were
//! last full. The model here keeps that slack as it grows and resets it as the docs say, and
//! asserts that the two agree on every decision outside it.

use std::time::Duration;

use ironward::{Bucket, SharedBucket};
use proptest::prelude::*;

use super::strategies::{Clock, Step, step};

/// Rates as callers pass them: ordinary ones, fractional ones, the hostile ones `Bucket`
/// reads as 0, and the extremes.
fn rates() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 0.001..1e6_f64,
        2 => (1..1000_u32).prop_map(f64::from),
        1 => Just(3.0),
        1 => Just(0.0),
        1 => Just(-1.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(1e12),
    ]
}

/// Bursts, including the hostile ones `Bucket` reads as 1 and the infinite one.
fn bursts() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 1.0..1e4_f64,
        2 => (1..50_u32).prop_map(f64::from),
        1 => Just(0.5),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
    ]
}

/// Costs: whole and fractional, zero, and the hostile ones both refuse.
fn costs() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 0.0..5.0_f64,
        4 => (0..5_u32).prop_map(f64::from),
        1 => Just(-0.5),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(1e300),
    ]
}

/// One call on both buckets.
#[derive(Debug, Clone, Copy)]
enum Op {
    Take(f64),
    Check(f64),
    CheckLeft(f64),
    Tokens,
    Next(f64),
    Retune(f64, f64),
}

/// Clock steps, a jump to the end of the clock read as eleven days: the shared bucket's clock
/// stops 2^59 ns (18 years) after its creation, `Bucket`'s at `u64::MAX` ns, so past the first
/// the two differ by the refill between them (the unit tests take both to their ends).
fn steps() -> impl Strategy<Value = Step> {
    step(3_000_000_000).prop_map(|step| match step {
        Step::End => Step::Forward(1_000_000_000_000_000),
        step => step,
    })
}

fn ops() -> impl Strategy<Value = Vec<(Step, Op)>> {
    prop::collection::vec(
        (
            steps(),
            prop_oneof![
                6 => costs().prop_map(Op::Take),
                2 => costs().prop_map(Op::Check),
                2 => costs().prop_map(Op::CheckLeft),
                2 => Just(Op::Tokens),
                2 => costs().prop_map(Op::Next),
                1 => (rates(), bursts()).prop_map(|(rate, burst)| Op::Retune(rate, burst)),
            ],
        ),
        0..200,
    )
}

/// One take's share of the proven slack under `bucket`'s terms: a tick of refill and a few
/// units in the last place of the burst.
fn unit(bucket: &Bucket) -> f64 {
    bucket.rate() / 4e9 + bucket.burst() * 2f64.powi(-50)
}

/// Whether two token counts agree within `slack`.
fn near(a: f64, b: f64, slack: f64) -> bool {
    a == b || (a - b).abs() <= slack
}

/// The model: `Bucket`, the slack its twin may be off by, and the caller's clock.
struct Model {
    bucket: Bucket,
    slack: f64,
    clock: Clock,
}

impl Model {
    /// The shared twin rebuilt on the model's state, after the two have parted (a decision
    /// inside the slack, or a take at an earlier reading, which the two read differently).
    fn resync(&mut self, shared: &mut SharedBucket) {
        let at = Duration::from_nanos(self.clock.seen);
        let tokens = self.bucket.tokens(at);
        *shared = SharedBucket::with_tokens(self.bucket.rate(), self.bucket.burst(), tokens, at);
        self.slack = 2.0 * unit(&self.bucket);
    }
}

proptest! {
    // On any run of takes, checks, queries and retunes, with hostile rates, bursts and costs
    // and a clock that jumps, stalls and steps back: at every reading not earlier than the
    // latest seen, the shared bucket decides as `Bucket` does except where the cost is
    // within the proven slack of the tokens held, and its tokens, tokens left and reasons
    // agree within it. At an earlier reading it is never more generous.
    #[test]
    fn decides_as_bucket_outside_the_proven_slack(
        rate in rates(),
        burst in bursts(),
        start in 0..1_000_000_000_000_u64,
        ops in ops(),
    ) {
        let clock = Clock::new(start);
        let mut shared = SharedBucket::new(rate, burst, clock.now());
        let bucket = Bucket::new(rate, burst, clock.now());
        prop_assert_eq!((shared.rate(), shared.burst()), (bucket.rate(), bucket.burst()));
        let slack = 2.0 * unit(&bucket);
        let mut model = Model { bucket, slack, clock };
        for (index, (step, op)) in ops.into_iter().enumerate() {
            let now = model.clock.read(step);
            let earlier = u128::from(model.clock.seen) > now.as_nanos();
            let held = model.bucket.tokens(now);
            let mine = shared.tokens(now);
            if earlier {
                prop_assert!(mine <= held || near(mine, held, model.slack),
                    "step {}: {} at an earlier reading, {} at the latest", index, mine, held);
            } else {
                prop_assert!(near(mine, held, model.slack),
                    "step {}: {} against {} (slack {})", index, mine, held, model.slack);
            }
            match op {
                Op::Take(n) | Op::Check(n) | Op::CheckLeft(n) => {
                    let full = held == model.bucket.burst() && mine == shared.burst();
                    let decided = match op {
                        Op::Take(_) => shared.take(now, n).then_some(f64::NAN).ok_or(None),
                        Op::Check(_) => shared.check(now, n).map(|()| f64::NAN).map_err(Some),
                        _ => shared.check_left(now, n).map_err(Some),
                    };
                    model.clock.change(now);
                    let theirs = model.bucket.check(now, n);
                    let inside = (n - held).abs() <= model.slack;
                    if decided.is_ok() != theirs.is_ok() {
                        prop_assert!(inside || (earlier && decided.is_err()),
                            "step {}: {:?} against {:?}, cost {} of {} (slack {})",
                            index, decided, theirs, n, held, model.slack);
                        model.resync(&mut shared);
                        continue;
                    }
                    if let (Err(Some(mine)), Err(theirs)) = (decided, theirs) {
                        prop_assert_eq!((mine.wanted.to_bits(), mine.burst, mine.rate),
                            (theirs.wanted.to_bits(), theirs.burst, theirs.rate));
                        if !earlier {
                            prop_assert_eq!(mine.at, theirs.at);
                            prop_assert!(near(mine.tokens, theirs.tokens, model.slack),
                                "step {}: {:?} against {:?}", index, mine, theirs);
                        }
                    }
                    if theirs.is_ok() {
                        if earlier {
                            model.resync(&mut shared);
                            continue;
                        }
                        model.slack = if full {
                            2.0 * unit(&model.bucket)
                        } else {
                            model.slack + unit(&model.bucket)
                        };
                        if let Some(left) = decided.ok().filter(|left| !left.is_nan()) {
                            let theirs = model.bucket.tokens(now);
                            prop_assert!(near(left, theirs, model.slack),
                                "step {}: {} left against {}", index, left, theirs);
                        }
                    }
                }
                Op::Tokens => {}
                Op::Next(n) => {
                    let (mine, theirs) = (shared.next(now, n), model.bucket.next(now, n));
                    if !earlier {
                        // Inside the slack the waits may part: by the slack's refill time.
                        let part = model.slack / model.bucket.rate() * 1e9 + 2.0;
                        let apart = (mine.as_nanos() as f64 - theirs.as_nanos() as f64).abs();
                        prop_assert!(mine == theirs || apart <= part
                            || (n - model.bucket.burst()).abs() <= model.slack
                            || (n - held).abs() <= model.slack,
                            "step {}: {:?} against {:?}, cost {}", index, mine, theirs, n);
                    } else {
                        prop_assert!(mine >= theirs || (n - held).abs() <= model.slack,
                            "step {}: waits {:?} against {:?}", index, mine, theirs);
                    }
                }
                Op::Retune(rate, burst) => {
                    // A retune to the terms in force (as read) changes nothing, not even the
                    // clock, as `Bucket::retune` documents.
                    let read = Bucket::new(rate, burst, Duration::ZERO);
                    if (read.rate(), read.burst()) != (model.bucket.rate(), model.bucket.burst()) {
                        model.clock.change(now);
                    }
                    model.bucket.retune(rate, burst, now);
                    if earlier {
                        model.resync(&mut shared);
                        continue;
                    }
                    shared.retune(rate, burst, now);
                    model.slack += 2.0 * unit(&model.bucket);
                    prop_assert_eq!(
                        (shared.rate(), shared.burst()),
                        (model.bucket.rate(), model.bucket.burst())
                    );
                }
            }
        }
    }

    // Whatever order the readings come in, the takes a shared bucket admits add up to at
    // most burst + rate · span, the span running from its creation to the latest reading
    // admitted: the bound its docs prove for any interleaving, here on one thread.
    #[test]
    fn never_admits_more_than_the_burst_plus_the_rate_over_the_span(
        rate in 0.001..1e6_f64,
        burst in 1.0..1e4_f64,
        start in 0..1_000_000_000_000_u64,
        ops in prop::collection::vec((steps(), 0.0..5.0_f64), 1..300),
    ) {
        let mut clock = Clock::new(start);
        let shared = SharedBucket::new(rate, burst, clock.now());
        let (mut admitted, mut latest) = (0.0, start);
        for (step, n) in ops {
            let now = clock.read(step);
            if shared.take(now, n) {
                admitted += n;
                latest = latest.max(u64::try_from(now.as_nanos()).unwrap_or(u64::MAX));
            }
            // Time stops 2^59 ns after creation.
            let span = (latest - start).min((1 << 59) - 1) as f64;
            let bound = burst + rate * span / 1e9;
            prop_assert!(admitted <= bound * (1.0 + 1e-12) + rate / 4e9,
                "{} admitted, bound {}", admitted, bound);
        }
    }
}

// A plain run on simple rates: whole costs at 10 a second (a token is 10⁸ ns, a whole
// number of ticks) and at 3 a second (a third of a second, `Bucket::next`'s 333 333 334 ns
// case) decide as `Bucket` does, and count and wait within the slack (exactly at 10 a
// second, but for `Bucket`'s own float rounding).
#[test]
fn simple_rates_are_exact() {
    for rate in [10.0, 3.0] {
        let mut bucket = Bucket::new(rate, 5.0, Duration::ZERO);
        let shared = SharedBucket::new(rate, 5.0, Duration::ZERO);
        let mut now = Duration::ZERO;
        for round in 0..200_u64 {
            let n = (round % 3) as f64;
            assert_eq!(shared.take(now, n), bucket.take(now, n), "{rate} {round}");
            let (mine, theirs) = (shared.tokens(now), bucket.tokens(now));
            // Exact at 10 a second; at 3 within the slack of a tick a take.
            let slack = (round as f64 + 2.0) * rate / 4e9 + 1e-12;
            assert!(
                (mine - theirs).abs() <= slack,
                "{rate} {round}: {mine} {theirs}"
            );
            // `Bucket` finds the first nanosecond its float sum reaches the cost, which its
            // rounding can put one after the exact one; this form's slack is a quarter of a
            // nanosecond of refill a take.
            for n in [1.0, 4.0] {
                let (mine, theirs) = (shared.next(now, n), bucket.next(now, n));
                let apart = mine.as_nanos().abs_diff(theirs.as_nanos());
                assert!(apart <= 1 + u128::from(round + 2) / 4, "{rate} {round} {n}");
            }
            now += Duration::from_nanos(37_000_000 + round * 1_000_003);
        }
    }
    let shared = SharedBucket::new(3.0, 1.0, Duration::ZERO);
    assert!(shared.take(Duration::ZERO, 1.0));
    assert_eq!(
        shared.next(Duration::ZERO, 1.0),
        Duration::from_nanos(333_333_334)
    );
    let shared = SharedBucket::new(10.0, 20.0, Duration::ZERO);
    assert!((0..20).all(|_| shared.take(Duration::ZERO, 1.0)));
    assert_eq!(shared.check_left(Duration::from_millis(250), 1.0), Ok(1.5));
    assert_eq!(shared.tokens(Duration::from_millis(250)), 1.5);
}
