//! Unit tests of `vegas`, Netflix `VegasLimitTest` among them, that need its private items.

use core::time::Duration;

use super::*;
use crate::limit::{Algorithm, Estimator};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn estimator(vegas: Vegas) -> Estimator {
    Estimator::new(Algorithm::Vegas(vegas))
}

fn sample(rtt: Duration, in_flight: u32) -> Sample {
    Sample {
        rtt,
        in_flight,
        dropped: false,
    }
}

/// Netflix `VegasLimitTest.create`.
fn create() -> Estimator {
    estimator(Vegas {
        alpha: Scale::Fixed(3),
        beta: Scale::Fixed(6),
        smoothing: 1.0,
        initial: 10,
        max: 20,
        ..VEGAS
    })
}

// Netflix `VegasLimitTest.largeLimitIncrease`: beta is 6 × log10(10 000) = 24.
#[test]
fn a_large_limit_grows_by_its_logarithmic_beta() {
    let mut limit = estimator(Vegas {
        initial: 10_000,
        max: 20_000,
        ..VEGAS
    });
    limit.update(sample(Duration::from_secs(10), 5000));
    assert_eq!(limit.limit(), 10_000);
    limit.update(sample(Duration::from_secs(10), 6000));
    assert_eq!(limit.limit(), 10_024);
}

// Netflix `VegasLimitTest.increaseLimit`.
#[test]
fn no_queue_grows_the_limit_by_beta() {
    let mut limit = create();
    limit.update(sample(ms(10), 10));
    assert_eq!(limit.limit(), 10);
    limit.update(sample(ms(10), 11));
    assert_eq!(limit.limit(), 16);
}

// Netflix `VegasLimitTest.decreaseLimit`.
#[test]
fn a_queue_over_beta_decreases_the_limit() {
    let mut limit = create();
    limit.update(sample(ms(10), 10));
    assert_eq!(limit.limit(), 10);
    limit.update(sample(ms(50), 11));
    assert_eq!(limit.limit(), 9);
}

// Netflix `VegasLimitTest.noChangeIfWithinThresholds`: a queue of ⌈10 × 4/14⌉ = 3.
#[test]
fn a_queue_between_alpha_and_beta_leaves_the_limit() {
    let mut limit = create();
    limit.update(sample(ms(10), 10));
    assert_eq!(limit.limit(), 10);
    limit.update(sample(ms(14), 14));
    assert_eq!(limit.limit(), 10);
}

fn halving(smoothing: f64) -> Estimator {
    estimator(Vegas {
        decrease: Decrease::Ratio(0.5),
        smoothing,
        initial: 100,
        max: 200,
        ..VEGAS
    })
}

// Netflix `VegasLimitTest.decreaseSmoothing` and
// `decreaseSmoothingDeprecatedBuilderMethod` (the same case through an older builder).
#[test]
fn smoothing_moves_a_decrease_part_of_the_way() {
    let mut limit = halving(0.5);
    // Pick up the first no-load latency.
    limit.update(sample(ms(10), 100));
    assert_eq!(limit.limit(), 100);
    // First decrease.
    limit.update(sample(ms(20), 100));
    assert_eq!(limit.limit(), 75);
    // Second decrease.
    limit.update(sample(ms(20), 100));
    assert_eq!(limit.limit(), 56);
}

// Netflix `VegasLimitTest.decreaseWithoutSmoothing` and
// `decreaseWithoutSmoothingDeprecatedBuilderMethod`.
#[test]
fn without_smoothing_a_decrease_takes_full_effect() {
    let mut limit = halving(1.0);
    limit.update(sample(ms(10), 100));
    assert_eq!(limit.limit(), 100);
    limit.update(sample(ms(20), 100));
    assert_eq!(limit.limit(), 50);
    limit.update(sample(ms(20), 100));
    assert_eq!(limit.limit(), 25);
}

#[test]
fn a_drop_decreases_whatever_the_queue() {
    let mut limit = create();
    limit.update(sample(ms(10), 10));
    let dropped = Sample {
        dropped: true,
        ..sample(ms(10), 0)
    };
    assert_eq!(limit.update(dropped), 9);
}

#[test]
fn fewer_than_half_in_flight_leaves_the_limit() {
    let mut limit = create();
    limit.update(sample(ms(10), 10));
    assert_eq!(limit.update(sample(ms(10), 4)), 10);
    // Exactly half is not fewer.
    assert_eq!(limit.update(sample(ms(10), 5)), 16);
    assert_eq!(limit.update(sample(ms(10), u32::MAX)), 20);
}

#[test]
fn jitters_lie_in_the_upper_half_of_the_unit_interval() {
    let mut dice = SplitMix64::new(0);
    for _ in 0..10_000 {
        let j = jitter(&mut dice);
        assert!((0.5..1.0).contains(&j), "{j}");
    }
    // The extremes of the output map to the ends of the range, exactly.
    assert_eq!(
        0.5 + (u64::MAX >> 12) as f64 / 9_007_199_254_740_992.0,
        1.0 - 1.0 / 9_007_199_254_740_992.0
    );
}

#[test]
fn a_probe_takes_the_window_latency_as_the_new_baseline() {
    let mut dice = SplitMix64::new(VEGAS.jitter);
    let first = jitter(&mut dice);
    // At the default limit of 20: a probe on the first window whose count reaches
    // `jitter × 30 × 20`, between 300 and 600.
    let due = ceil_nanos(first * 30.0 * 20.0) as usize;
    assert!((300..=600).contains(&due), "{due}");
    let mut limit = estimator(VEGAS);
    limit.update(sample(ms(10), 0));
    for window in 2..due {
        // Slow, but with nothing in flight: the limit holds, and so does the baseline.
        assert_eq!(limit.update(sample(ms(50), 0)), 20);
        assert_eq!(limit.baseline(), Some(ms(10)), "window {window}");
    }
    assert_eq!(limit.update(sample(ms(50), 0)), 20);
    assert_eq!(limit.baseline(), Some(ms(50)));
}

#[test]
fn the_same_jitter_probes_alike_and_another_may_not() {
    let run = |jitter| {
        let mut limit = estimator(Vegas { jitter, ..VEGAS });
        limit.update(sample(ms(10), 0));
        (0..600)
            .position(|_| {
                limit.update(sample(ms(50), 0));
                limit.baseline() == Some(ms(50))
            })
            .expect("a probe within 600 windows")
    };
    assert_eq!(run(7), run(7));
    assert!((0..20).map(run).any(|at| at != run(0)));
}

#[test]
fn a_zero_latency_is_ignored() {
    let mut limit = create();
    assert_eq!(limit.update(sample(Duration::ZERO, 10)), 10);
    assert_eq!(limit.baseline(), None);
    limit.update(sample(ms(10), 10));
    assert_eq!(limit.update(sample(Duration::ZERO, 10)), 10);
    assert_eq!(limit.baseline(), Some(ms(10)));
}

#[test]
fn a_saturated_latency_reads_as_the_longest_queue() {
    let mut limit = create();
    limit.update(sample(ms(10), 10));
    assert_eq!(limit.update(sample(Duration::MAX, 10)), 9);
    assert_eq!(limit.baseline(), Some(ms(10)));
}

#[test]
fn nan_smoothing_leaves_the_limit_and_past_one_is_one() {
    for (smoothing, after) in [
        (f64::NAN, 10),
        (0.0, 10),
        (f64::NEG_INFINITY, 10),
        (5.0, 16),
    ] {
        let mut limit = estimator(Vegas {
            alpha: Scale::Fixed(3),
            beta: Scale::Fixed(6),
            smoothing,
            initial: 10,
            max: 20,
            ..VEGAS
        });
        limit.update(sample(ms(10), 10));
        assert_eq!(limit.update(sample(ms(10), 10)), after, "{smoothing}");
    }
}

#[test]
fn a_probe_multiplier_of_zero_probes_every_window() {
    let mut limit = estimator(Vegas { probe: 0, ..VEGAS });
    for rtt in [10, 50, 5, 80] {
        assert_eq!(limit.update(sample(ms(rtt), 20)), 20);
        assert_eq!(limit.baseline(), Some(ms(rtt)));
    }
}

#[test]
fn a_decrease_never_takes_the_limit_under_one() {
    let mut limit = estimator(Vegas {
        initial: 3,
        decrease: Decrease::Step(Scale::Fixed(100)),
        ..VEGAS
    });
    limit.update(sample(ms(10), 3));
    let dropped = Sample {
        dropped: true,
        ..sample(ms(10), 3)
    };
    assert_eq!(limit.update(dropped), 1);
    assert_eq!(limit.update(dropped), 1);
    let zero = Decrease::Ratio(0.0).of(50.0);
    assert_eq!(zero, 0.0);
    assert_eq!(Decrease::Ratio(-1.0).of(50.0), 0.0);
    assert_eq!(Decrease::Ratio(f64::INFINITY).of(50.0), 50.0);
}

#[cfg(feature = "serde")]
#[test]
fn the_preset_reads_back_as_written() {
    let text = serde_json::to_string(&VEGAS).unwrap();
    assert_eq!(
        text,
        concat!(
            r#"{"initial":20,"min":1,"max":1000,"smoothing":1.0,"alpha":{"Log10":3},"#,
            r#""beta":{"Log10":6},"threshold":{"Log10":1},"increase":{"Log10":1},"#,
            r#""decrease":{"Step":{"Log10":1}},"probe":30,"jitter":0}"#
        )
    );
    assert_eq!(serde_json::from_str::<Vegas>(&text).unwrap(), VEGAS);
    let halving: Vegas = serde_json::from_str(r#"{"decrease":{"Ratio":0.5}}"#).unwrap();
    assert_eq!(halving.decrease, Decrease::Ratio(0.5));
}
