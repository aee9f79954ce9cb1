//! Unit tests of `little`: each rule, and bad input.

use core::time::Duration;

use super::*;
use crate::limit::{Algorithm, Estimator};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn estimator(little: Little) -> Estimator {
    Estimator::new(Algorithm::Little(little))
}

fn sample(rtt: Duration, in_flight: u32) -> Sample {
    Sample {
        rtt,
        in_flight,
        dropped: false,
    }
}

/// An estimator at `initial` that has measured one unloaded window of 10 ms.
fn measured(initial: u32) -> Estimator {
    let mut e = estimator(Little { initial, ..LITTLE });
    assert_eq!(e.update(sample(ms(10), initial)), initial);
    e
}

#[test]
fn the_first_window_only_measures() {
    let mut e = estimator(LITTLE);
    assert_eq!(e.update(sample(ms(500), 20)), 20);
    assert_eq!(e.baseline(), Some(ms(500)));
}

#[test]
fn half_the_limit_queued_jumps_to_littles_estimate_with_headroom_at_once() {
    let mut e = measured(1000);
    // 10 ms unloaded, 1 s measured: 1000 × 10 / 1000 = 10 served at once, 11 with headroom.
    assert_eq!(e.update(sample(ms(1000), 1000)), 11);
}

#[test]
fn a_queue_over_a_fifth_jumps_on_the_second_window() {
    let mut e = measured(100);
    // 1 − 10/13 ≈ 23 % queued: one such window might be chance, two are a queue.
    let slow = sample(ms(13), 100);
    assert_eq!(e.update(slow), 100);
    // 100 × 10 / 13 × 1.15 = 88.5.
    assert_eq!(e.update(slow), 88);
}

#[test]
fn a_slow_window_between_fast_ones_is_chance_and_holds() {
    let mut e = measured(100);
    assert_eq!(e.update(sample(ms(13), 100)), 100);
    assert_eq!(e.update(sample(ms(10), 100)), 150);
    assert_eq!(e.update(sample(ms(13), 150)), 150);
}

#[test]
fn a_queue_of_one_call_is_a_queue_at_a_small_limit() {
    // Two in flight at twice the unloaded latency: one served, one waiting.
    let mut e = measured(2);
    assert_eq!(e.update(sample(ms(20), 2)), 1);
}

#[test]
fn after_a_jump_growth_is_one_call_a_window_until_the_queue_is_gone_twice() {
    let mut e = measured(100);
    assert_eq!(e.update(sample(ms(100), 100)), 11);
    // 1 − 10/10.8 ≈ 7 % queued: under a tenth, so it grows, but past the jump's 11.5 by
    // one call a window, since the queue began there.
    let near = Duration::from_micros(10_800);
    assert_eq!(e.update(sample(near, 11)), 12);
    assert_eq!(e.update(sample(near, 12)), 13);
    assert_eq!(e.update(sample(near, 13)), 14);
    // No queue at all two windows running: the ceiling is forgotten, growth is by half.
    assert_eq!(e.update(sample(ms(10), 14)), 15);
    assert_eq!(e.update(sample(ms(10), 15)), 16);
    assert_eq!(e.update(sample(ms(10), 16)), 24);
}

#[test]
fn a_drop_below_the_limit_cuts_from_what_was_in_flight() {
    let mut e = measured(1000);
    // The backend refused with 60 inside, at its unloaded latency: 0.9 × 60.
    let drop = Sample {
        dropped: true,
        ..sample(ms(10), 60)
    };
    assert_eq!(e.update(drop), 54);
}

#[test]
fn a_lower_probe_is_the_baseline_at_once_and_ages_out() {
    let mut e = estimator(LITTLE);
    for _ in 0..15 {
        e.update(sample(ms(100), 1));
    }
    // The 10th percentile of fifteen windows of 100 ms and the probe's 50 ms is the second
    // fastest, 100 ms; the probe is lower, so it is the baseline.
    e.rebase(ms(50));
    assert_eq!(e.baseline(), Some(ms(50)));
    for _ in 0..15 {
        e.update(sample(ms(100), 1));
    }
    assert_eq!(e.baseline(), Some(ms(50)));
    // Sixteen windows later, the probe is older than the memory: the windows rule again.
    e.update(sample(ms(100), 1));
    assert_eq!(e.baseline(), Some(ms(100)));
}

#[test]
fn a_jump_the_latency_does_not_follow_was_a_low_baseline_and_is_undone() {
    let mut e = measured(100);
    // A probe of few calls read 7 ms where the backend takes 10 ms with no queue.
    e.rebase(ms(7));
    let window = sample(ms(10), 100);
    // 30 % queued against 7 ms, twice: a jump to 100 × 0.7 × 1.15 = 80.5.
    assert_eq!(e.update(window), 100);
    assert_eq!(e.update(window), 80);
    // A fifth fewer calls in flight, and the latency the same: no queue had drained. The
    // jump is undone, and the probe is one window among the others: once sixteen windows
    // of 10 ms are remembered, their 10th percentile is 10 ms.
    assert_eq!(e.update(sample(ms(10), 80)), 100);
    for _ in 0..16 {
        e.update(sample(ms(10), 100));
    }
    assert_eq!(e.baseline(), Some(ms(10)));
}

#[test]
fn a_queue_from_a_tenth_to_a_fifth_holds() {
    let mut e = measured(100);
    // 1 − 10/12.4 ≈ 19 % queued.
    assert_eq!(e.update(sample(Duration::from_micros(12_400), 100)), 100);
    // 1 − 10/11.2 ≈ 10.7 % queued.
    assert_eq!(e.update(sample(Duration::from_micros(11_200), 100)), 100);
}

#[test]
fn no_queue_grows_by_half_and_at_least_one() {
    let mut e = measured(100);
    assert_eq!(e.update(sample(ms(10), 100)), 150);
    let mut one = measured(1);
    assert_eq!(one.update(sample(ms(10), 1)), 2);
    assert_eq!(one.update(sample(ms(10), 2)), 3);
    assert_eq!(one.update(sample(ms(10), 3)), 4);
    assert_eq!(one.update(sample(ms(10), 4)), 6);
}

#[test]
fn a_limit_not_reached_does_not_grow() {
    let mut e = measured(100);
    assert_eq!(e.update(sample(ms(10), 99)), 100);
    assert_eq!(e.update(sample(ms(10), 100)), 150);
}

#[test]
fn a_drop_keeps_at_most_nine_tenths_or_littles_estimate() {
    let mut e = measured(100);
    // No queue in the latency: the backoff.
    let drop = Sample {
        dropped: true,
        ..sample(ms(10), 100)
    };
    assert_eq!(e.update(drop), 90);
    // A long queue too: the estimate at once, from the 100 in flight as the calls started:
    // 100 × 10 / 100 × 1.15 = 11.5.
    let slow = Sample {
        rtt: ms(100),
        ..drop
    };
    assert_eq!(e.update(slow), 11);
}

#[test]
fn a_fall_reads_the_calls_still_finishing_against_those_in_flight_as_they_started() {
    let mut e = measured(1000);
    // 1000 in flight at ten times the baseline: 1000 × 10 / 100 × 1.15 = 115.
    assert_eq!(e.update(sample(ms(100), 1000)), 115);
    // The next window's calls were let in under 1000 and still wait behind that queue.
    // Against the new limit they would read 115 × 10 / 200 × 1.15 = 6; against the 1000
    // they started with, 57.5: the backend served them at that rate.
    assert_eq!(e.update(sample(ms(200), 1000)), 57);
    // No in-flight count (0) reads the limit: 57.5 × 10 / 100 × 1.15 = 6.6.
    assert_eq!(e.update(sample(ms(100), 0)), 6);
}

#[test]
fn the_baseline_is_a_low_percentile_not_the_luckiest_window() {
    let mut e = estimator(LITTLE);
    // One lucky window of 1 ms among fifteen of 10 ms: the 10th percentile of 16 is the
    // second fastest, 10 ms.
    e.update(sample(ms(1), 20));
    for _ in 0..15 {
        e.update(sample(ms(10), 1));
    }
    assert_eq!(e.baseline(), Some(ms(10)));
}

#[test]
fn the_baseline_forgets_windows_older_than_its_memory() {
    let mut e = estimator(Little {
        memory: 4,
        ..LITTLE
    });
    for _ in 0..4 {
        e.update(sample(ms(10), 1));
    }
    for _ in 0..4 {
        e.update(sample(ms(60), 1));
    }
    // The backend slowed for good: four windows later the baseline is the new latency.
    assert_eq!(e.baseline(), Some(ms(60)));
}

#[test]
fn a_probe_is_one_more_window() {
    let mut e = measured(20);
    e.rebase(ms(5));
    assert_eq!(e.baseline(), Some(ms(5)));
    e.rebase(Duration::ZERO);
    assert_eq!(e.baseline(), Some(ms(5)));
}

#[test]
fn a_retuned_memory_keeps_the_newest_latencies() {
    let mut e = estimator(LITTLE);
    for rtt in [40, 30, 20, 10, 50, 60] {
        e.update(sample(ms(rtt), 1));
    }
    // Down to the newest two, 50 and 60 ms: the percentile reads 50.
    e.retune(Algorithm::Little(Little {
        memory: 2,
        quantile: 0.0,
        ..LITTLE
    }));
    e.update(sample(ms(70), 1));
    assert_eq!(e.baseline(), Some(ms(60)));
    // Back up to 32: the two kept and each new one.
    e.retune(Algorithm::Little(Little {
        memory: 32,
        quantile: 0.0,
        ..LITTLE
    }));
    e.update(sample(ms(80), 1));
    e.update(sample(ms(90), 1));
    assert_eq!(e.baseline(), Some(ms(60)));
}

#[test]
fn a_zero_latency_is_ignored() {
    let mut e = measured(20);
    assert_eq!(e.update(sample(Duration::ZERO, 20)), 20);
    assert_eq!(e.baseline(), Some(ms(10)));
}

#[test]
fn extreme_samples_stay_within_the_bounds() {
    let mut e = measured(1000);
    // Half the limit and more queued: the estimate at once, held to the least limit.
    assert_eq!(e.update(sample(Duration::MAX, u32::MAX)), 1);
    let mut e = measured(1000);
    assert_eq!(e.update(sample(ms(10), u32::MAX)), 1000);
    let mut e = estimator(Little {
        initial: u32::MAX,
        max: u32::MAX,
        ..LITTLE
    });
    e.update(sample(ms(10), u32::MAX));
    assert_eq!(e.update(sample(ms(10), u32::MAX)), u32::MAX);
}

#[test]
fn nan_and_wild_constants_read_as_documented() {
    let nan = Little {
        headroom: f64::NAN,
        low: f64::NAN,
        high: f64::NAN,
        growth: f64::NAN,
        backoff: f64::NAN,
        quantile: f64::NAN,
        ..LITTLE
    };
    assert_eq!(nan.read(), (10.0, 1.0, 1.0, 1.0, 1.0));
    assert_eq!(nan.quantile(), 1.0);
    // Run with them: the baseline is the slowest window, so no window reads as queued, and
    // each doubles the limit (growth by the whole of it).
    let mut e = estimator(nan);
    e.update(sample(ms(10), 20));
    assert_eq!(e.update(sample(ms(100), 20)), 40);
    assert_eq!(e.baseline(), Some(ms(100)));
    assert_eq!(e.update(sample(ms(1), 40)), 80);
    let wild = Little {
        headroom: -5.0,
        low: 0.5,
        high: 0.2,
        growth: f64::INFINITY,
        backoff: 7.0,
        memory: 0,
        ..LITTLE
    };
    assert_eq!(wild.read(), (1.0, 0.5, 0.5, 1.0, 1.0));
    assert_eq!(wild.memory(), 1);
    assert_eq!(
        Little {
            memory: u32::MAX,
            ..LITTLE
        }
        .memory(),
        MEMORY
    );
    // Zero bounds read as 1: the limit never reaches 0.
    let mut e = estimator(Little {
        initial: 0,
        min: 0,
        max: 0,
        ..LITTLE
    });
    e.update(sample(ms(10), 1));
    e.update(sample(ms(1000), 1));
    assert_eq!(e.update(sample(ms(1000), 1)), 1);
}

#[cfg(feature = "serde")]
#[test]
fn the_preset_reads_back_and_fields_default() {
    let text = serde_json::to_string(&LITTLE).unwrap();
    assert_eq!(serde_json::from_str::<Little>(&text).unwrap(), LITTLE);
    let one: Little = serde_json::from_str(r#"{"initial":1}"#).unwrap();
    assert_eq!(
        one,
        Little {
            initial: 1,
            ..LITTLE
        }
    );
    assert!(serde_json::from_str::<Little>(r#"{"alpha":1}"#).is_err());
}
