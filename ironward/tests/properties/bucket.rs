//! Properties of `bucket`.

use std::time::Duration;

use ironward::Bucket;
use proptest::prelude::*;

use super::strategies::{Clock, step};

/// A rate or a burst as a caller might pass it: ordinary values mixed with hostile ones.
fn figure() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => 0.0..50.0_f64,
        1 => Just(0.0),
        1 => Just(-1.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(f64::MAX),
        1 => Just(f64::MIN_POSITIVE),
        2 => any::<f64>(),
    ]
}

/// A cost as a caller might pass it: mostly small, sometimes hostile.
fn cost() -> impl Strategy<Value = f64> {
    prop_oneof![
        12 => 0.0..3.0_f64,
        1 => Just(0.0),
        1 => Just(-0.5),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => any::<f64>(),
    ]
}

/// The rate a bucket refills at, read as the crate docs' "Edge cases" read it.
fn model_rate(rate: f64) -> f64 {
    if rate.is_finite() && rate > 0.0 {
        rate
    } else {
        0.0
    }
}

/// The burst a bucket holds, read as the crate docs' "Edge cases" read it.
fn model_burst(burst: f64) -> f64 {
    if burst.is_nan() { 1.0 } else { burst.max(1.0) }
}

/// What a bucket is asked.
#[derive(Debug, Clone, Copy)]
enum Op {
    Take(f64),
    Next(f64),
    Tokens,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => cost().prop_map(Op::Take),
        1 => cost().prop_map(Op::Next),
        1 => Just(Op::Tokens),
    ]
}

proptest! {
    // Over any stretch [a, b] of the clock the takes add up to at most
    // burst + rate · (b − a): the bucket starts full and refills at the rate, no faster.
    #[test]
    fn never_takes_more_than_the_burst_plus_the_rate_over_any_stretch(
        rate in figure(),
        burst in figure(),
        start in 0..1_000_000_000_000_u64,
        ops in prop::collection::vec((step(2_000_000_000), cost()), 1..200),
    ) {
        let mut clock = Clock::new(start);
        let mut bucket = Bucket::new(rate, burst, clock.now());
        let (rate, burst) = (model_rate(rate), model_burst(burst));
        // (time, cost) of every take that succeeded, in clock order.
        let mut taken: Vec<(u64, f64)> = Vec::new();
        for (step, n) in ops {
            let now = clock.read(step);
            let t = clock.change(now);
            if bucket.take(now, n) {
                taken.push((t, n));
            }
        }
        for i in 0..taken.len() {
            let mut sum = 0.0;
            for &(t, n) in &taken[i..] {
                sum += n;
                let stretch = (t - taken[i].0) as f64 / 1e9;
                let bound = burst + rate * stretch;
                // Tokens are f64: each refill and take rounds by half an ulp, so a few
                // hundred operations can drift a few ulps above exact arithmetic. A relative
                // slack of 1e-9 is far above that drift and far below one token.
                prop_assert!(
                    sum <= bound * (1.0 + 1e-9),
                    "took {} over {} s; bound {}", sum, stretch, bound
                );
            }
        }
    }

    // `next` names the first nanosecond at which `take` succeeds: taking then works, a
    // nanosecond earlier does not, and `Duration::MAX` means never.
    #[test]
    fn the_wait_next_names_is_the_first_nanosecond_a_take_succeeds(
        rate in prop_oneof![
            4 => 0.001..100.0_f64,
            1 => Just(3.0),
            1 => Just(1e9 / 3.0),
            1 => Just(1e-9),
            1 => figure(),
        ],
        burst in figure(),
        start in 0..1_000_000_000_000_u64,
        ops in prop::collection::vec((step(2_000_000_000), cost()), 0..50),
        n in prop_oneof![4 => 0.0..25.0_f64, 1 => cost()],
    ) {
        let mut clock = Clock::new(start);
        let mut bucket = Bucket::new(rate, burst, clock.now());
        for (step, cost) in ops {
            // Only the state the takes leave matters here.
            let _ = bucket.take(clock.read(step), cost);
        }
        let now = clock.now();
        let wait = bucket.next(now, n);
        if wait == Duration::ZERO {
            prop_assert!(bucket.clone().take(now, n));
        } else if wait == Duration::MAX {
            prop_assert!(!bucket.clone().take(Duration::MAX, n));
        } else {
            prop_assert!(bucket.clone().take(now + wait, n));
            prop_assert!(!bucket.clone().take(now + wait - Duration::from_nanos(1), n));
        }
    }

    // A `now` earlier than one already seen gets the same answer as the latest seen (the
    // latest given to `take`): a clock that steps back never adds tokens.
    #[test]
    fn a_clock_going_backwards_reads_as_the_latest_seen(
        rate in figure(),
        burst in figure(),
        start in 0..1_000_000_000_000_u64,
        ops in prop::collection::vec((step(2_000_000_000), op()), 1..200),
    ) {
        let mut clock = Clock::new(start);
        let mut raw = Bucket::new(rate, burst, clock.now());
        let mut kept = raw.clone();
        for (step, op) in ops {
            let now = clock.read(step);
            let at = |t| Duration::from_nanos(t);
            match op {
                Op::Take(n) => {
                    prop_assert_eq!(raw.take(now, n), kept.take(at(clock.change(now)), n));
                }
                Op::Next(n) => {
                    prop_assert_eq!(raw.next(now, n), kept.next(at(clock.query(now)), n));
                }
                Op::Tokens => {
                    prop_assert_eq!(raw.tokens(now), kept.tokens(at(clock.query(now))));
                }
            }
        }
    }

    // Whatever the inputs, nothing panics and the bucket holds between 0 and the burst.
    #[test]
    fn no_input_makes_a_bucket_panic_or_hold_nonsense(
        rate in figure(),
        burst in figure(),
        start in prop_oneof![Just(0), Just(u64::MAX), any::<u64>()],
        ops in prop::collection::vec((step(u64::MAX), op()), 1..100),
    ) {
        let mut clock = Clock::new(start);
        let mut bucket = Bucket::new(rate, burst, clock.now());
        let burst = model_burst(burst);
        for (step, op) in ops {
            let now = clock.read(step);
            match op {
                Op::Take(n) => {
                    let before = bucket.tokens(now);
                    let taken = bucket.take(now, n);
                    prop_assert_eq!(taken, (0.0..=f64::MAX).contains(&n) && n <= before);
                    let after = if taken { before - n } else { before };
                    prop_assert_eq!(bucket.tokens(now), after);
                }
                Op::Next(n) => {
                    let there = (0.0..=f64::MAX).contains(&n) && n <= bucket.tokens(now);
                    prop_assert_eq!(bucket.next(now, n) == Duration::ZERO, there);
                }
                Op::Tokens => {}
            }
            let tokens = bucket.tokens(now);
            prop_assert!((0.0..=burst).contains(&tokens), "tokens {}", tokens);
        }
    }

    // Retuning to the rate and burst the bucket already has, as it reads them (a NaN burst
    // and one below 1 are both 1; a NaN rate and a negative one both 0), changes nothing:
    // every later answer is the un-retuned twin's, a clock going backwards included.
    #[test]
    fn retuning_to_the_same_policy_changes_nothing(
        rate in figure(),
        burst in figure(),
        start in 0..1_000_000_000_000_u64,
        ops in prop::collection::vec((step(2_000_000_000), op(), any::<bool>()), 1..200),
    ) {
        let mut clock = Clock::new(start);
        let mut bucket = Bucket::new(rate, burst, clock.now());
        let mut twin = bucket.clone();
        // Another way of writing the same policy, where there is one.
        let same_rate = if model_rate(rate) == 0.0 { f64::NAN } else { rate };
        let same_burst = if model_burst(burst) == 1.0 { 0.25 } else { burst };
        for (step, op, retune) in ops {
            let now = clock.read(step);
            if retune {
                bucket.retune(same_rate, same_burst, now);
            }
            match op {
                Op::Take(n) => prop_assert_eq!(bucket.take(now, n), twin.take(now, n)),
                Op::Next(n) => prop_assert_eq!(bucket.next(now, n), twin.next(now, n)),
                Op::Tokens => prop_assert_eq!(bucket.tokens(now), twin.tokens(now)),
            }
        }
    }

    // Retuned at `t` to another policy, a bucket answers from then on exactly as a fresh
    // bucket of the new policy holding the tokens it held at `t` (capped at the new burst):
    // a raised rate or burst refuses nothing that bucket would admit, a lowered one admits
    // nothing it would refuse, and the takes after the retune add up to at most the new
    // burst plus the new rate over any stretch.
    #[test]
    fn a_retuned_bucket_answers_as_a_fresh_one_holding_its_tokens(
        rate in figure(),
        burst in figure(),
        retuned in (figure(), figure()),
        start in 0..1_000_000_000_000_u64,
        before in prop::collection::vec((step(2_000_000_000), cost()), 0..50),
        at in step(2_000_000_000),
        after in prop::collection::vec((step(2_000_000_000), op()), 1..150),
    ) {
        let (new_rate, new_burst) = retuned;
        prop_assume!(
            model_rate(new_rate) != model_rate(rate) || model_burst(new_burst) != model_burst(burst)
        );
        let mut clock = Clock::new(start);
        let mut bucket = Bucket::new(rate, burst, clock.now());
        for (step, n) in before {
            let now = clock.read(step);
            clock.change(now);
            let _ = bucket.take(now, n);
        }
        let now = clock.read(at);
        let held = bucket.tokens(now);
        let t = Duration::from_nanos(clock.change(now));
        bucket.retune(new_rate, new_burst, now);
        let (rate, burst) = (model_rate(new_rate), model_burst(new_burst));
        prop_assert_eq!((bucket.rate(), bucket.burst()), (rate, burst));
        prop_assert_eq!(bucket.tokens(now), held.min(burst));
        let mut fresh = Bucket::with_tokens(new_rate, new_burst, held, t);
        let mut taken: Vec<(u64, f64)> = Vec::new();
        for (step, op) in after {
            let now = clock.read(step);
            match op {
                Op::Take(n) => {
                    let at = clock.change(now);
                    let answer = bucket.take(now, n);
                    prop_assert_eq!(answer, fresh.take(now, n));
                    if answer {
                        taken.push((at, n));
                    }
                }
                Op::Next(n) => prop_assert_eq!(bucket.next(now, n), fresh.next(now, n)),
                Op::Tokens => prop_assert_eq!(bucket.tokens(now), fresh.tokens(now)),
            }
        }
        for i in 0..taken.len() {
            let mut sum = 0.0;
            for &(at, n) in &taken[i..] {
                sum += n;
                let bound = burst + rate * (at - taken[i].0) as f64 / 1e9;
                // The same slack for float drift as the bound without a retune.
                prop_assert!(sum <= bound * (1.0 + 1e-9), "took {} against {}", sum, bound);
            }
        }
    }
}

proptest! {
    // `take` is `check` with the reason discarded: twins, one asked through each, decide
    // alike on every take, hostile policies, costs and clocks included. A refusal's reason
    // shows a refusing state (fewer tokens than wanted, or no cost at all) and the bucket
    // as the refusal left it: its tokens, and a wait that `next` names too.
    #[test]
    fn check_decides_as_take_and_its_reason_shows_a_refusal(
        rate in figure(),
        burst in figure(),
        start in 0..1_000_000_000_000_u64,
        ops in prop::collection::vec((step(2_000_000_000), op()), 1..200),
    ) {
        let mut clock = Clock::new(start);
        let mut bucket = Bucket::new(rate, burst, clock.now());
        let mut twin = bucket.clone();
        for (step, op) in ops {
            let now = clock.read(step);
            let Op::Take(n) = op else { continue };
            let t = clock.change(now);
            match (bucket.take(now, n), twin.check(now, n)) {
                (true, Ok(())) => {}
                (false, Err(reason)) => {
                    let is_cost = (0.0..=f64::MAX).contains(&n);
                    prop_assert!(!is_cost || reason.tokens < reason.wanted, "{:?}", reason);
                    prop_assert_eq!(reason.wanted.to_bits(), n.to_bits());
                    prop_assert_eq!((reason.rate, reason.burst), (twin.rate(), twin.burst()));
                    prop_assert_eq!(reason.at, Duration::from_nanos(t));
                    prop_assert_eq!(reason.tokens, twin.tokens(now));
                    prop_assert!((0.0..=reason.burst).contains(&reason.tokens));
                    let next = reason.next();
                    prop_assert_eq!(next, twin.next(now, n));
                    prop_assert!(next > Duration::ZERO);
                }
                (a, b) => prop_assert!(false, "take {}, check {:?}", a, b),
            }
            prop_assert_eq!(bucket.tokens(now), twin.tokens(now));
        }
    }
}

/// The naive model of a bucket: its level and when it was last counted, refilled at the rate
/// up to the burst on each take, in plain `f64` arithmetic. It follows the decisions of the
/// bucket it models (`spend`), so float noise in one answer does not set the two apart for
/// the rest of the run.
#[derive(Debug, Clone, Copy)]
struct Model {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: u64,
}

impl Model {
    /// A model of the policy `(rate, burst)`, read as a bucket reads it, holding `tokens` at
    /// `at`.
    fn new(rate: f64, burst: f64, tokens: f64, at: u64) -> Self {
        let burst = model_burst(burst);
        Self {
            rate: model_rate(rate),
            burst,
            tokens: tokens.min(burst),
            at,
        }
    }

    /// The level at `t`, refilled since the last count.
    fn level(&self, t: u64) -> f64 {
        let secs = t.saturating_sub(self.at) as f64 / 1e9;
        (self.tokens + self.rate * secs).min(self.burst)
    }

    /// Whether the model admits `n` at `t` with room to spare: more than float noise.
    fn admits(&self, t: u64, n: f64) -> bool {
        let level = self.level(t);
        (0.0..=f64::MAX).contains(&n) && n <= level - 1e-9 * level.abs().max(1.0)
    }

    /// Counts at `t`, and spends `n` if the bucket took it.
    fn spend(&mut self, t: u64, n: f64, taken: bool) {
        self.tokens = self.level(t) - if taken { n } else { 0.0 };
        self.at = self.at.max(t);
    }
}

/// Two rates or bursts, the first the one a bucket reads as no smaller.
fn ordered(a: f64, b: f64, read: fn(f64) -> f64) -> (f64, f64) {
    if read(a) >= read(b) { (a, b) } else { (b, a) }
}

proptest! {
    // After a retune to a lower rate, a lower burst or both, the takes from the retune on add
    // up, over any stretch [a, b], to at most the new burst plus the new rate · (b − a), and
    // from the retune itself to at most the tokens kept (what the old policy had left, capped
    // at the new burst) plus the new rate · (b − t): lowering the limit hands out no new
    // allowance. The model is the list of takes and the old policy's level at the retune.
    #[test]
    fn after_a_lower_rate_or_burst_no_stretch_admits_more_than_it(
        rates in (figure(), figure()),
        bursts in (figure(), figure()),
        start in 0..1_000_000_000_000_u64,
        before in prop::collection::vec((step(2_000_000_000), cost()), 0..50),
        at in step(2_000_000_000),
        after in prop::collection::vec((step(2_000_000_000), cost()), 1..150),
    ) {
        let (rate, lower_rate) = ordered(rates.0, rates.1, model_rate);
        let (burst, lower_burst) = ordered(bursts.0, bursts.1, model_burst);
        prop_assume!(
            model_rate(lower_rate) != model_rate(rate)
                || model_burst(lower_burst) != model_burst(burst)
        );
        let mut clock = Clock::new(start);
        let mut bucket = Bucket::new(rate, burst, clock.now());
        let mut model = Model::new(rate, burst, f64::INFINITY, start);
        for (step, n) in before {
            let now = clock.read(step);
            let t = clock.change(now);
            model.spend(t, n, bucket.take(now, n));
        }
        let now = clock.read(at);
        let t = clock.change(now);
        bucket.retune(lower_rate, lower_burst, now);
        let (rate, burst) = (model_rate(lower_rate), model_burst(lower_burst));
        let kept = model.level(t).min(burst);
        let mut taken: Vec<(u64, f64)> = Vec::new();
        for (step, n) in after {
            let now = clock.read(step);
            let at = clock.change(now);
            if bucket.take(now, n) {
                taken.push((at, n));
            }
        }
        // The same slack for float drift as the bound without a retune.
        let within = |sum: f64, bound: f64| sum <= bound * (1.0 + 1e-9);
        let mut since_retune = 0.0;
        for &(at, n) in &taken {
            since_retune += n;
            let bound = kept + rate * (at - t) as f64 / 1e9;
            prop_assert!(within(since_retune, bound), "took {} since the retune; bound {}", since_retune, bound);
        }
        for i in 0..taken.len() {
            let mut sum = 0.0;
            for &(at, n) in &taken[i..] {
                sum += n;
                let bound = burst + rate * (at - taken[i].0) as f64 / 1e9;
                prop_assert!(within(sum, bound), "took {} against {}", sum, bound);
            }
        }
    }

    // After a retune to a higher rate, a higher burst or both, nothing is refused that a
    // bucket of the new policy, holding the tokens the old one had left at the retune, would
    // admit: raising the limit forgets no tokens and refills at the new rate from the retune
    // on. The model is the naive bucket, given the old policy's level at the retune.
    #[test]
    fn after_a_higher_rate_or_burst_nothing_the_new_policy_admits_is_refused(
        rates in (figure(), figure()),
        bursts in (figure(), figure()),
        start in 0..1_000_000_000_000_u64,
        before in prop::collection::vec((step(2_000_000_000), cost()), 0..50),
        at in step(2_000_000_000),
        after in prop::collection::vec((step(2_000_000_000), cost()), 1..150),
    ) {
        let (higher_rate, rate) = ordered(rates.0, rates.1, model_rate);
        let (higher_burst, burst) = ordered(bursts.0, bursts.1, model_burst);
        prop_assume!(
            model_rate(higher_rate) != model_rate(rate)
                || model_burst(higher_burst) != model_burst(burst)
        );
        let mut clock = Clock::new(start);
        let mut bucket = Bucket::new(rate, burst, clock.now());
        let mut model = Model::new(rate, burst, f64::INFINITY, start);
        for (step, n) in before {
            let now = clock.read(step);
            let t = clock.change(now);
            model.spend(t, n, bucket.take(now, n));
        }
        let now = clock.read(at);
        let t = clock.change(now);
        bucket.retune(higher_rate, higher_burst, now);
        let mut model = Model::new(higher_rate, higher_burst, model.level(t), t);
        for (step, n) in after {
            let now = clock.read(step);
            let at = clock.change(now);
            let admits = model.admits(at, n);
            let taken = bucket.take(now, n);
            prop_assert!(
                taken || !admits,
                "refused {} at {} ns holding {}, which the new policy admits", n, at, model.level(at)
            );
            model.spend(at, n, taken);
        }
    }
}
