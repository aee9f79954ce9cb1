//! Properties of `backoff`: every delay inside its jitter's bounds, for any policy, retry
//! and draw, hostile ones included.

use std::time::Duration;

use ironward::{Backoff, Jitter};
use proptest::prelude::*;

/// A span: ordinary values mixed with zero and the ends of the range.
fn span() -> impl Strategy<Value = Duration> {
    prop_oneof![
        4 => (0..10_000_000_000_u64).prop_map(Duration::from_nanos),
        1 => Just(Duration::ZERO),
        1 => Just(Duration::MAX),
        1 => Just(Duration::from_nanos(u64::MAX)),
        1 => any::<u64>().prop_map(Duration::from_nanos),
        1 => (any::<u64>(), 0..1_000_000_000_u32).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

/// A float as a caller might pass it: in range, or NaN, infinite, negative or huge.
fn float(ordinary: std::ops::Range<f64>) -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => ordinary,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(0.0),
        1 => Just(1.0),
        1 => Just(-0.5),
        1 => Just(3.0),
        1 => any::<f64>(),
    ]
}

fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::Rigid),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        float(0.0..1.0).prop_map(Jitter::Spread),
    ]
}

fn backoff() -> impl Strategy<Value = Backoff> {
    (span(), float(1.0..4.0), span(), 0..20_u32, jitter()).prop_map(
        |(base, factor, cap, attempts, jitter)| Backoff {
            base,
            factor,
            cap,
            attempts,
            jitter,
        },
    )
}

fn retry() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0..12_u32, 1 => Just(u32::MAX), 1 => any::<u32>()]
}

fn nanos(d: Duration) -> f64 {
    d.as_nanos() as f64
}

/// Room for `f64` rounding around `x` nanoseconds: past 2⁵³ ns a float is not exact to the
/// nanosecond, and each of the few operations in a delay rounds by half an ulp (about 1e-16
/// relative). 1e-12 relative plus a nanosecond is far above that and far below any jitter.
fn slack(x: f64) -> f64 {
    1.0 + x * 1e-12
}

proptest! {
    // The ceiling lies between the base (or the cap, if lower) and the cap, and never
    // shrinks from one retry to the next.
    #[test]
    fn the_ceiling_grows_from_the_base_and_stays_under_the_cap(
        backoff in backoff(),
        retry in retry(),
    ) {
        let ceiling = backoff.ceiling(retry);
        prop_assert!(ceiling <= backoff.cap);
        let floor = nanos(backoff.base.min(backoff.cap));
        prop_assert!(nanos(ceiling) >= floor - slack(floor));
        if let Some(later) = retry.checked_add(1) {
            let later = nanos(backoff.ceiling(later));
            prop_assert!(later >= nanos(ceiling) - slack(nanos(ceiling)));
        }
    }

    // Every delay stays inside its jitter's bounds, for any policy, retry, draw and previous
    // delay, and none overflows or panics.
    #[test]
    fn every_delay_stays_inside_its_jitters_bounds(
        backoff in backoff(),
        retry in retry(),
        random in float(0.0..1.0),
        previous in prop::option::of(span()),
    ) {
        let c = backoff.ceiling(retry);
        let delay = backoff.delay(retry, random, previous);
        let (cf, d) = (nanos(c), nanos(delay));
        match backoff.jitter {
            Jitter::Rigid => prop_assert_eq!(delay, c),
            Jitter::Full => prop_assert!(delay <= c),
            Jitter::Equal => {
                prop_assert!(delay <= c);
                prop_assert!(d >= cf / 2.0 - slack(cf));
            }
            Jitter::Decorrelated => {
                prop_assert!(delay <= backoff.cap);
                let base = nanos(backoff.base);
                let floor = nanos(backoff.base.min(backoff.cap));
                let high = base.max(3.0 * previous.map_or(base, nanos));
                prop_assert!(d >= floor - slack(floor));
                prop_assert!(d <= high + slack(high));
            }
            Jitter::Spread(f) => {
                let f = if f.is_nan() || f < 0.0 {
                    0.0
                } else if f > 1.0 {
                    1.0
                } else {
                    f
                };
                let (low, high) = (cf * (1.0 - f), cf * (1.0 + f));
                prop_assert!(d >= low - slack(low), "{:?} below {}", delay, low);
                prop_assert!(
                    d <= high + slack(high) || delay == Duration::MAX,
                    "{:?} above {}", delay, high
                );
            }
        }
    }

    // The schedule is the delays of retries 1 through attempts − 1 taken step by step, a
    // missing draw being 0 and each delay the next one's `previous`; `more` allows exactly
    // `attempts` attempts.
    #[test]
    fn the_schedule_is_every_retry_taken_step_by_step(
        backoff in backoff(),
        randoms in prop::collection::vec(float(0.0..1.0), 0..25),
    ) {
        let plan = backoff.schedule(&randoms);
        prop_assert_eq!(plan.len(), backoff.attempts.saturating_sub(1) as usize);
        let mut previous = None;
        for (i, &delay) in plan.iter().enumerate() {
            let random = randoms.get(i).copied().unwrap_or(0.0);
            let step = backoff.delay(i as u32 + 1, random, previous);
            // NaN draws compare by what they produce, not by the draw itself.
            prop_assert_eq!(delay, step);
            previous = Some(delay);
        }
        for made in 0..=backoff.attempts + 1 {
            prop_assert_eq!(backoff.more(made), made < backoff.attempts);
        }
    }
}
