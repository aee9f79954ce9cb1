//! Unit tests of `sampler`: Netflix's sample-window tests, and `WindowedLimit`'s rules
//! (which Netflix does not unit-test) worked out by hand.

use alloc::vec::Vec;

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

// The latencies of Netflix's `ImmutableAverageSampleWindowTest` and
// `ImmutablePercentileSampleWindowTest`, in nanoseconds.
const BIG: u64 = 5000;
const MODERATE: u64 = 500;
const LOW: u64 = 10;

/// The sample of one window holding `calls` (latency in ns, dropped), in that order: the
/// calls before the last finish within the first window, the last closes it.
fn window_of(latency: Latency, calls: &[(u64, bool)]) -> Sample {
    let sampling = Sampling {
        size: 1,
        min_rtt: Duration::ZERO,
        latency,
        ..SAMPLING
    };
    let mut sampler = Sampler::new(sampling, ms(0));
    let (last, rest) = calls.split_last().expect("one call at least");
    for &(rtt, dropped) in rest {
        assert_eq!(sampler.add(ms(1), ns(rtt), 1, dropped), None);
    }
    sampler
        .add(ms(2000), ns(last.0), 1, last.1)
        .expect("the last call closes the window")
}

// Netflix `ImmutableAverageSampleWindowTest.calculateAverage`.
#[test]
fn the_average_is_the_truncated_mean() {
    let sample = window_of(
        Latency::Average,
        &[(BIG, false), (MODERATE, false), (LOW, false)],
    );
    assert_eq!(sample.rtt, ns((BIG + MODERATE + LOW) / 3));
}

// Netflix `ImmutableAverageSampleWindowTest.droppedSampleShouldChangeTrackedAverage`.
#[test]
fn a_dropped_call_counts_in_the_average() {
    let sample = window_of(
        Latency::Average,
        &[(BIG, false), (MODERATE, false), (LOW, false), (BIG, true)],
    );
    assert_eq!(sample.rtt, ns((BIG + MODERATE + LOW + BIG) / 4));
    assert!(sample.dropped);
}

// Netflix `ImmutablePercentileSampleWindowTest.calculateP50`.
#[test]
fn the_median_of_three_is_the_middle_one() {
    let sample = window_of(
        Latency::Percentile(0.5),
        &[(BIG, false), (MODERATE, false), (LOW, false)],
    );
    assert_eq!(sample.rtt, ns(MODERATE));
}

// Netflix `ImmutablePercentileSampleWindowTest.droppedSampleShouldChangeTrackedRtt`.
#[test]
fn dropped_calls_count_in_the_percentile() {
    let sample = window_of(
        Latency::Percentile(0.5),
        &[(LOW, false), (BIG, true), (BIG, true)],
    );
    assert_eq!(sample.rtt, ns(BIG));
    assert!(sample.dropped);
}

// Netflix `ImmutablePercentileSampleWindowTest.p999ReturnsSlowestObservedRtt`.
#[test]
fn a_high_percentile_of_few_calls_is_the_slowest() {
    let sample = window_of(
        Latency::Percentile(0.999),
        &[(BIG, false), (MODERATE, false), (LOW, false)],
    );
    assert_eq!(sample.rtt, ns(BIG));
}

// Netflix `ImmutablePercentileSampleWindowTest.rttObservationOrderDoesntAffectResultValue`.
#[test]
fn the_order_of_the_calls_does_not_change_the_percentile() {
    let sample = window_of(
        Latency::Percentile(0.999),
        &[(MODERATE, false), (LOW, false), (BIG, false), (LOW, false)],
    );
    assert_eq!(sample.rtt, ns(BIG));
}

#[test]
fn the_selected_percentile_is_the_sorted_one_at_the_reference_index() {
    // A small LCG (Knuth's MMIX constants) for reproducible latencies.
    let mut state = 0x2545_f491_u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 40
    };
    for n in [1usize, 2, 3, 10, 99, 100, 101, 1000, Sampler::CAPACITY] {
        let latencies: Vec<u64> = (0..n).map(|_| 1 + next() % 1_000_000).collect();
        let mut sorted = latencies.clone();
        sorted.sort_unstable();
        for p in [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let calls: Vec<(u64, bool)> = latencies.iter().map(|&l| (l, false)).collect();
            let sample = window_of(Latency::Percentile(p), &calls);
            // `Math.round(n * p) - 1`, held to the list.
            let rank = (n as f64 * p + 0.5) as usize;
            let want = sorted[rank.saturating_sub(1).min(n - 1)];
            assert_eq!(sample.rtt, ns(want), "n {n}, p {p}");
        }
    }
}

#[test]
fn a_percentile_out_of_range_is_held_to_it_and_nan_is_the_fastest() {
    let calls = [(LOW, false), (MODERATE, false), (BIG, false)];
    let at = |p| window_of(Latency::Percentile(p), &calls).rtt;
    assert_eq!(at(f64::NAN), ns(LOW));
    assert_eq!(at(-1.0), ns(LOW));
    assert_eq!(at(f64::NEG_INFINITY), ns(LOW));
    // 3 × 0.1 rounds to 0: the reference would read before its array; here the fastest.
    assert_eq!(at(0.1), ns(LOW));
    assert_eq!(at(2.0), ns(BIG));
    assert_eq!(at(f64::INFINITY), ns(BIG));
}

#[test]
fn a_window_closes_with_the_first_call_past_its_end() {
    let mut sampler = Sampler::new(
        Sampling {
            size: 1,
            ..SAMPLING
        },
        ms(0),
    );
    assert_eq!(sampler.add(ms(1000), ms(5), 3, false), None);
    let sample = sampler.add(ms(1001), ms(7), 2, false);
    assert_eq!(
        sample,
        Some(Sample {
            rtt: ms(6),
            in_flight: 3,
            dropped: false
        })
    );
    assert_eq!(sampler.calls(), 0);
}

#[test]
fn a_window_with_too_few_calls_is_discarded() {
    let mut sampler = Sampler::new(SAMPLING, ms(0));
    for i in 0..9 {
        assert_eq!(sampler.add(ms(100 * i), ms(10), 1, true), None);
    }
    assert_eq!(sampler.calls(), 9);
    // The tenth call closes the window, and counts in it: ten are enough.
    assert!(sampler.add(ms(1001), ms(10), 1, false).is_some());
    // The next window gets eight, then closes: too few, forgotten, drops and all.
    for i in 0..8 {
        assert_eq!(sampler.add(ms(1100 + 100 * i), ms(10), 9, true), None);
    }
    assert_eq!(sampler.add(ms(2002), ms(10), 9, true), None);
    assert_eq!(sampler.calls(), 0);
}

#[test]
fn latencies_under_the_threshold_are_ignored_and_close_nothing() {
    let mut sampler = Sampler::new(
        Sampling {
            size: 1,
            ..SAMPLING
        },
        ms(0),
    );
    let fast = Duration::from_micros(99);
    assert_eq!(sampler.add(ms(5000), fast, 100, true), None);
    assert_eq!(sampler.calls(), 0);
    assert_eq!(sampler.end(), ms(1000));
    let sample = sampler.add(ms(5000), Duration::from_micros(100), 1, false);
    assert_eq!(
        sample,
        Some(Sample {
            rtt: Duration::from_micros(100),
            in_flight: 1,
            dropped: false
        })
    );
}

#[test]
fn the_next_window_lasts_twice_the_fastest_call_within_the_bounds() {
    let sampling = Sampling {
        size: 1,
        min_window: ms(100),
        max_window: ms(1000),
        ..SAMPLING
    };
    let mut sampler = Sampler::new(sampling, ms(0));
    assert_eq!(sampler.end(), ms(100));
    // Fastest 20 ms: twice is 40, under the 100 ms minimum.
    sampler.add(ms(50), ms(30), 1, false);
    sampler.add(ms(101), ms(20), 1, false);
    assert_eq!(sampler.end(), ms(201));
    // Fastest 300 ms: the next window lasts 600 ms.
    sampler.add(ms(202), ms(300), 1, false);
    assert_eq!(sampler.end(), ms(802));
    // Fastest 2 s: held to the 1 s maximum.
    sampler.add(ms(803), ms(2000), 1, false);
    assert_eq!(sampler.end(), ms(1803));
    // A saturated latency: still the maximum.
    sampler.add(ms(1804), Duration::MAX, 1, false);
    assert_eq!(sampler.end(), ms(2804));
}

#[test]
fn a_min_window_over_the_max_is_the_max_and_zero_windows_close_at_each_later_call() {
    let crossed = Sampling {
        min_window: ms(500),
        max_window: ms(200),
        ..SAMPLING
    };
    assert_eq!(Sampler::new(crossed, ms(0)).end(), ms(200));
    let zero = Sampling {
        size: 1,
        min_window: Duration::ZERO,
        max_window: Duration::ZERO,
        ..SAMPLING
    };
    let mut sampler = Sampler::new(zero, ms(0));
    assert_eq!(sampler.add(ms(0), ms(1), 1, false), None);
    assert!(sampler.add(ms(1), ms(1), 1, false).is_some());
    assert_eq!(sampler.add(ms(1), ms(1), 1, false), None);
    assert!(sampler.add(ms(2), ms(1), 1, false).is_some());
}

#[test]
fn a_size_of_zero_is_one_and_u32_max_never_counts() {
    let mut sampler = Sampler::new(
        Sampling {
            size: 0,
            ..SAMPLING
        },
        ms(0),
    );
    assert!(sampler.add(ms(1001), ms(1), 1, false).is_some());
    let mut sampler = Sampler::new(
        Sampling {
            size: u32::MAX,
            ..SAMPLING
        },
        ms(0),
    );
    for i in 0..100 {
        assert_eq!(sampler.add(ms(1001 * i), ms(1), 1, false), None);
    }
}

#[test]
fn a_clock_going_backwards_reads_as_the_latest_seen() {
    let mut sampler = Sampler::new(
        Sampling {
            size: 1,
            ..SAMPLING
        },
        ms(500),
    );
    assert_eq!(sampler.end(), ms(1500));
    assert_eq!(sampler.add(ms(1400), ms(10), 1, false), None);
    // Earlier than the latest seen: read as 1400 ms, still in the window.
    assert_eq!(sampler.add(ms(0), ms(10), 1, false), None);
    assert_eq!(sampler.calls(), 2);
    assert!(sampler.add(ms(1501), ms(10), 1, false).is_some());
    // The next window is from 1501 ms; a reading before it opened cannot close it.
    assert_eq!(sampler.end(), ms(2501));
    assert_eq!(sampler.add(ms(3), ms(10), 1, false), None);
    // A retune at an earlier time measures from the latest seen.
    sampler.retune(
        Sampling {
            max_window: ms(100),
            ..SAMPLING
        },
        ms(0),
    );
    assert_eq!(sampler.end(), ms(1601));
}

#[test]
fn a_saturated_clock_stops_time_without_a_panic() {
    let mut sampler = Sampler::new(
        Sampling {
            size: 1,
            ..SAMPLING
        },
        Duration::MAX,
    );
    assert_eq!(sampler.end(), Duration::from_nanos(u64::MAX));
    assert_eq!(
        sampler.add(Duration::MAX, Duration::MAX, u32::MAX, true),
        None
    );
    assert_eq!(
        sampler.add(Duration::MAX, Duration::MAX, u32::MAX, true),
        None
    );
    assert_eq!(sampler.calls(), 2);
}

#[test]
fn huge_latencies_and_counts_in_flight_do_not_overflow() {
    let mut sampler = Sampler::new(SAMPLING, ms(0));
    for _ in 0..20 {
        sampler.add(ms(1), Duration::MAX, u32::MAX, false);
    }
    let sample = sampler
        .add(ms(1001), Duration::MAX, 0, false)
        .expect("closed");
    assert_eq!(sample.rtt, ns(u64::MAX));
    assert_eq!(sample.in_flight, u32::MAX);
    // Zero calls in flight and a zero latency, with no threshold: taken as they are.
    let sampling = Sampling {
        size: 1,
        min_rtt: Duration::ZERO,
        ..SAMPLING
    };
    let mut sampler = Sampler::new(sampling, ms(0));
    let sample = sampler
        .add(ms(1001), Duration::ZERO, 0, false)
        .expect("closed");
    assert_eq!((sample.rtt, sample.in_flight), (Duration::ZERO, 0));
}

#[test]
fn calls_past_the_capacity_count_but_their_latency_is_not_kept() {
    let sampling = Sampling {
        latency: Latency::Percentile(1.0),
        ..SAMPLING
    };
    let mut sampler = Sampler::new(sampling, ms(0));
    for _ in 0..Sampler::CAPACITY {
        sampler.add(ms(1), ms(10), 1, false);
    }
    // Slower calls, more in flight and a drop past the capacity.
    for _ in 0..10 {
        sampler.add(ms(2), ms(900), 50, true);
    }
    let sample = sampler.add(ms(1001), ms(900), 1, false).expect("closed");
    assert_eq!(sample.rtt, ms(10));
    assert_eq!(sample.in_flight, 50);
    assert!(sample.dropped);
    // The mean reads every call, kept or not.
    let mut sampler = Sampler::new(SAMPLING, ms(0));
    for _ in 0..2 * Sampler::CAPACITY {
        sampler.add(ms(1), ms(10), 1, false);
    }
    for _ in 0..2 * Sampler::CAPACITY - 1 {
        sampler.add(ms(2), ms(30), 1, false);
    }
    let sample = sampler.add(ms(1001), ms(30), 1, false).expect("closed");
    assert_eq!(sample.rtt, ms(20));
}

#[test]
fn retune_keeps_the_open_window_and_reads_it_by_the_new_rules() {
    let mut sampler = Sampler::new(SAMPLING, ms(0));
    for rtt in [10, 20, 90] {
        sampler.add(ms(10), ms(rtt), 1, false);
    }
    let median = Sampling {
        size: 3,
        latency: Latency::Percentile(0.5),
        ..SAMPLING
    };
    sampler.retune(median, ms(20));
    // The end stays at 1 s: the new max is 1 s after 20 ms, later.
    assert_eq!(sampler.end(), ms(1000));
    assert_eq!(sampler.sampling(), &median);
    let sample = sampler
        .add(ms(1001), ms(50), 1, false)
        .expect("four calls, closed");
    // The median of 10, 20, 50 and 90: ⌊4 × 0.5⌉ = 2, the second fastest.
    assert_eq!(sample.rtt, ms(20));
}

#[test]
fn equality_and_debug_read_only_the_latencies_kept() {
    let mut a = Sampler::new(SAMPLING, ms(0));
    let b = a.clone();
    // A window's calls leave stale latencies in the array once it closes.
    for _ in 0..10 {
        a.add(ms(1), ms(10), 1, false);
    }
    a.add(ms(1001), ms(10), 1, false);
    let mut b = b;
    b.add(ms(1001), ms(10), 1, false);
    assert_eq!(a, b);
    let text = alloc::format!("{a:?}");
    assert!(text.contains("kept: []"), "{text}");
    a.add(ms(1002), ms(10), 1, false);
    assert_ne!(a, b);
}

#[cfg(feature = "serde")]
#[test]
fn the_preset_reads_back_as_written_with_humane_durations() {
    let text = serde_json::to_string(&SAMPLING).unwrap();
    assert_eq!(
        text,
        concat!(
            r#"{"size":10,"min_window":"1s","max_window":"1s","min_rtt":"100us","#,
            r#""latency":"Average"}"#
        )
    );
    assert_eq!(serde_json::from_str::<Sampling>(&text).unwrap(), SAMPLING);
    let tail: Sampling = serde_json::from_str(r#"{"latency":{"Percentile":0.9}}"#).unwrap();
    assert_eq!(tail.latency, Latency::Percentile(0.9));
}

#[test]
fn a_filled_window_stays_open_until_it_holds_size_calls() {
    let fill = Sampling {
        size: 3,
        fill: true,
        ..SAMPLING
    };
    let mut sampler = Sampler::new(fill, ms(0));
    assert_eq!(sampler.add(ms(500), ms(100), 1, false), None);
    // Past the window's end with two calls of three: still open, not discarded.
    assert_eq!(sampler.add(ms(1500), ms(100), 1, false), None);
    assert_eq!(sampler.calls(), 2);
    // A clock that steps back is read as the latest seen: the third call closes it.
    let sample = sampler
        .add(ms(1200), ms(400), 2, true)
        .expect("three calls");
    assert_eq!(
        (sample.rtt, sample.in_flight, sample.dropped),
        (ms(200), 2, true)
    );
    assert_eq!(sampler.calls(), 0);
    // The same calls without `fill`: the window at its end is discarded.
    let mut plain = Sampler::new(
        Sampling {
            fill: false,
            ..fill
        },
        ms(0),
    );
    plain.add(ms(500), ms(100), 1, false);
    assert_eq!(plain.add(ms(1500), ms(100), 1, false), None);
    assert_eq!(plain.calls(), 0);
}

#[test]
fn an_early_window_closes_at_its_end_with_fewer_calls_than_size_and_the_next_is_as_usual() {
    let fill = Sampling {
        fill: true,
        ..SAMPLING
    };
    let mut sampler = Sampler::new(fill, ms(0));
    sampler.restart_early(ms(0), ms(1000));
    // One call of 600 ms, one at a time: ten would take six seconds.
    assert_eq!(sampler.add(ms(600), ms(600), 1, false), None);
    let sample = sampler.add(ms(1200), ms(600), 1, false).expect("closed");
    assert_eq!((sample.rtt, sample.in_flight), (ms(600), 1));
    // The window after it waits for `size` calls again, as `fill` says.
    assert_eq!(sampler.add(ms(3000), ms(600), 1, false), None);
    assert_eq!(sampler.calls(), 1);
}
