//! Unit tests of `estimator`: the shared pieces (Netflix `Log10RootIntFunctionTest` and
//! `SquareRootFunctionTest`), and what every algorithm does with hostile samples and retunes.

use super::*;
use crate::limit::sample::{Scale, whole};
use crate::limit::{AIMD, FAILSAFE, GRADIENT2, LITTLE, VEGAS};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn sample(rtt: Duration, in_flight: u32, dropped: bool) -> Sample {
    Sample {
        rtt,
        in_flight,
        dropped,
    }
}

// Netflix `Log10RootIntFunctionTest.test0Index`, `testInRange`, `testOutofLookupRange`
// (and the same three cases of the deprecated `Log10RootFunctionTest`).
#[test]
fn log10_root_is_one_at_zero_and_whole_logarithms_beyond() {
    assert_eq!(Scale::Log10(1).of(0), 1);
    assert_eq!(Scale::Log10(1).of(100), 2);
    assert_eq!(Scale::Log10(1).of(10_000), 4);
}

// Netflix `SquareRootFunctionTest.confirm0Index`, `confirmMaxIndex`,
// `confirmOutofLookupRange`, all with a baseline of 4.
#[test]
fn square_root_is_at_least_its_baseline() {
    assert_eq!(Scale::Sqrt(4).of(0), 4);
    assert_eq!(Scale::Sqrt(4).of(999), 31);
    assert_eq!(Scale::Sqrt(4).of(2500), 50);
}

#[test]
fn steps_agree_with_the_float_functions_at_every_boundary() {
    extern crate std;
    for limit in [1u32, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 999_999_999] {
        let log = (f64::from(limit).log10() as u32).max(1);
        assert_eq!(Scale::Log10(1).of(limit), log, "{limit}");
        let root = (f64::from(limit).sqrt() as u32).max(1);
        assert_eq!(Scale::Sqrt(0).of(limit), root, "{limit}");
    }
    assert_eq!(Scale::Log10(1).of(u32::MAX), 9);
    assert_eq!(Scale::Sqrt(0).of(u32::MAX), 65_535);
    assert_eq!(Scale::Log10(u32::MAX).of(100), u32::MAX);
}

#[test]
fn bounds_never_hold_a_limit_at_zero_and_the_max_wins_over_the_min() {
    assert_eq!(Bounds::new(0, 0), Bounds { lo: 1, hi: 1 });
    assert_eq!(Bounds::new(50, 10), Bounds { lo: 10, hi: 10 });
    assert_eq!(
        Bounds::new(0, u32::MAX),
        Bounds {
            lo: 1,
            hi: u32::MAX
        }
    );
    let bounds = Bounds::new(20, 200);
    assert_eq!(bounds.clamp(0), 20);
    assert_eq!(bounds.clamp(u32::MAX), 200);
    assert_eq!(bounds.clamp_f64(0.5), 20.0);
    assert_eq!(bounds.clamp_f64(f64::INFINITY), 200.0);
    assert_eq!(whole(f64::NAN), 1);
    assert_eq!(whole(0.99), 1);
    assert_eq!(whole(f64::INFINITY), u32::MAX);
    assert_eq!(whole(37.9), 37);
}

#[test]
fn an_initial_limit_outside_the_bounds_is_kept_until_a_sample_moves_it() {
    let low = Algorithm::Vegas(Vegas {
        initial: 0,
        ..VEGAS
    });
    assert_eq!(Estimator::new(low).limit(), 1);
    // Aimd holds any update to its bounds.
    let mut aimd = Estimator::new(Algorithm::Aimd(Aimd { initial: 5, ..AIMD }));
    assert_eq!(aimd.limit(), 5);
    assert_eq!(aimd.update(sample(ms(1), 0, false)), 20);
    // Gradient2 keeps it through a window with few calls in flight, and moves it
    // (held to the max after smoothing) on the next.
    let high = Algorithm::Gradient2(Gradient2 {
        initial: 5000,
        ..GRADIENT2
    });
    let mut gradient = Estimator::new(high);
    assert_eq!(gradient.limit(), 5000);
    assert_eq!(gradient.update(sample(ms(1), 0, false)), 5000);
    assert_eq!(gradient.update(sample(ms(1), 5000, false)), 200);
    // Vegas smooths before it holds: a quarter of the way from 400 towards the max 100.
    let high = Algorithm::Vegas(Vegas {
        initial: 400,
        max: 100,
        smoothing: 0.25,
        ..VEGAS
    });
    let mut vegas = Estimator::new(high);
    assert_eq!(vegas.update(sample(ms(10), 400, false)), 400);
    assert_eq!(vegas.update(sample(ms(10), 400, false)), 325);
    // A retune holds it to the bounds at once.
    vegas.retune(high);
    assert_eq!(vegas.limit(), 100);
}

/// Every algorithm with hostile samples: zero and saturated latencies, no calls and
/// `u32::MAX` calls in flight, each with and without a drop.
#[test]
fn hostile_samples_keep_every_limit_within_its_bounds() {
    let rtts = [
        Duration::ZERO,
        Duration::from_nanos(1),
        ms(10),
        Duration::MAX,
    ];
    let flights = [0, 1, u32::MAX];
    let wide = |min, max| {
        let initial = 1;
        [
            Algorithm::Aimd(Aimd {
                initial,
                min,
                max,
                ..AIMD
            }),
            Algorithm::Vegas(Vegas {
                initial,
                min,
                max,
                ..VEGAS
            }),
            Algorithm::Gradient2(Gradient2 {
                initial,
                min,
                max,
                ..GRADIENT2
            }),
            Algorithm::Little(Little {
                initial,
                min,
                max,
                ..LITTLE
            }),
            Algorithm::Failsafe(Failsafe {
                initial,
                min,
                max,
                ..FAILSAFE
            }),
        ]
    };
    for algorithm in wide(1, u32::MAX).into_iter().chain(wide(0, 0)) {
        let bounds = algorithm.bounds();
        let mut estimator = Estimator::new(algorithm);
        for _ in 0..3 {
            for rtt in rtts {
                for in_flight in flights {
                    for dropped in [false, true] {
                        let limit = estimator.update(sample(rtt, in_flight, dropped));
                        assert!((bounds.lo..=bounds.hi).contains(&limit), "{algorithm:?}");
                        assert_eq!(limit, estimator.limit());
                    }
                }
            }
        }
    }
}

#[test]
fn a_limit_of_u32_max_grows_no_further() {
    let top = Aimd {
        initial: u32::MAX,
        max: u32::MAX,
        ..AIMD
    };
    let mut estimator = Estimator::new(Algorithm::Aimd(top));
    assert_eq!(estimator.update(sample(ms(1), u32::MAX, false)), u32::MAX);
    let top = Gradient2 {
        initial: u32::MAX,
        max: u32::MAX,
        queue: Scale::Fixed(u32::MAX),
        ..GRADIENT2
    };
    let mut estimator = Estimator::new(Algorithm::Gradient2(top));
    assert_eq!(estimator.update(sample(ms(1), u32::MAX, false)), u32::MAX);
}

#[test]
fn retuning_the_same_algorithm_keeps_what_it_remembers() {
    let mut estimator = Estimator::new(Algorithm::Vegas(VEGAS));
    estimator.update(sample(ms(10), 20, false));
    assert_eq!(estimator.update(sample(ms(10), 20, false)), 26);
    estimator.retune(Algorithm::Vegas(Vegas { max: 24, ..VEGAS }));
    assert_eq!(estimator.limit(), 24);
    // The no-load latency is remembered: at 10 ms there is still no queue, so the limit
    // grows at once (and is held to the new max).
    assert_eq!(estimator.baseline(), Some(ms(10)));
    assert_eq!(estimator.update(sample(ms(10), 24, false)), 24);
}

#[test]
fn retuning_to_another_algorithm_starts_it_from_the_limit_reached() {
    let mut estimator = Estimator::new(Algorithm::Aimd(AIMD));
    for _ in 0..5 {
        estimator.update(sample(ms(1), 100, false));
    }
    assert_eq!(estimator.limit(), 25);
    estimator.retune(Algorithm::Gradient2(GRADIENT2));
    assert_eq!(estimator.limit(), 25);
    assert_eq!(estimator.baseline(), None);
    estimator.retune(Algorithm::Vegas(Vegas { max: 10, ..VEGAS }));
    assert_eq!(estimator.limit(), 10);
    // Vegas' first sample measures the no-load latency and leaves the limit.
    assert_eq!(estimator.update(sample(ms(4), 10, false)), 10);
    assert_eq!(estimator.baseline(), Some(ms(4)));
}
