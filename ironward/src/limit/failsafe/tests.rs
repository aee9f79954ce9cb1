use alloc::vec::Vec;
use core::time::Duration;

use super::*;
use crate::limit::{Algorithm, Estimator};

const SECOND: f64 = 1e9;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn sample(rtt: Duration, in_flight: u32) -> Sample {
    Sample {
        rtt,
        in_flight,
        dropped: false,
    }
}

/// failsafe-go's `TestAdaptiveLimiter_record` limiter: the defaults, with a baseline warmed
/// up at one second.
fn warmed() -> (State, Bounds) {
    let mut state = State::new(FAILSAFE.initial);
    state.rebase(SECOND);
    (state, Bounds::new(FAILSAFE.min, FAILSAFE.max))
}

fn update(state: &mut State, bounds: Bounds, rtt: Duration, in_flight: u32) -> u32 {
    state.update(&FAILSAFE, bounds, sample(rtt, in_flight))
}

// failsafe-go `TestAdaptiveLimiter_record` (its `adaptivelimiter` package),
// "should smooth and filter RTTs".
#[test]
fn latencies_are_filtered_by_their_median_and_then_averaged() {
    let (mut state, bounds) = warmed();
    for rtt in [100, 300, 200, 200, 250] {
        update(&mut state, bounds, ms(rtt), 10);
    }
    let mut sorted = state.latencies;
    sorted.sort_unstable_by(f64::total_cmp);
    assert_eq!(sorted[MEDIAN / 2], 200e6);
    assert_eq!(state.smoothed.value, 200e6);
}

// TestAdaptiveLimiter_record, "should increase limit": queue sizes 0, then -5.
#[test]
fn a_queue_under_alpha_grows_the_limit_by_one() {
    let (mut state, bounds) = warmed();
    assert_eq!(update(&mut state, bounds, Duration::from_secs(1), 5), 21);
    assert_eq!(update(&mut state, bounds, ms(500), 5), 22);
}

// TestAdaptiveLimiter_record, "should decrease limit": queue sizes 9, then 7.
#[test]
fn a_queue_over_beta_cuts_the_limit_by_one() {
    let (mut state, bounds) = warmed();
    assert_eq!(update(&mut state, bounds, Duration::from_secs(2), 10), 19);
    assert_eq!(update(&mut state, bounds, Duration::from_secs(2), 10), 18);
}

// TestAdaptiveLimiter_record, "should hold limit": a queue of 4, between 3 and 6.
#[test]
fn a_queue_between_alpha_and_beta_holds() {
    let (mut state, bounds) = warmed();
    assert_eq!(update(&mut state, bounds, ms(1300), 10), 20);
    assert_eq!(update(&mut state, bounds, ms(1300), 10), 20);
}

// TestAdaptiveLimiter_MaxLimitStabilizationWindow, "should decrease on inflight dip
// without stabilization": a max limit factor of 1.5.
#[test]
fn a_limit_over_the_factor_times_the_calls_in_flight_falls_a_step() {
    let policy = Failsafe {
        max_factor: 1.5,
        ..FAILSAFE
    };
    let (mut state, bounds) = warmed();
    let mut update =
        |in_flight| state.update(&policy, bounds, sample(Duration::from_secs(1), in_flight));
    assert_eq!(update(20), 21);
    // 7.5 is the cap now: down a step, not to the cap at once.
    assert_eq!(update(5), 20);
    assert_eq!(update(5), 19);
}

#[test]
fn a_rise_past_the_cap_stops_at_it() {
    let (mut state, bounds) = warmed();
    // 4 in flight: the cap is 20, the limit's own value; growth would pass it.
    assert_eq!(update(&mut state, bounds, Duration::from_secs(1), 4), 20);
}

// failsafe-go `TestCorrelationWindow` (its `CorrelationWindow`, capacity 3, no warm-up).
#[test]
fn correlations_are_pearsons_and_zero_where_there_is_nothing_to_read() {
    let of = |pairs: &[(f64, f64)]| correlate(pairs, |(_, y)| y, 0).0;
    // "single pair returns zero"
    assert_eq!(of(&[(1.0, 2.0)]), 0.0);
    // "perfect positive correlation", "perfect negative correlation"
    assert!((of(&[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]) - 1.0).abs() < 1e-4);
    assert!((of(&[(1.0, 30.0), (2.0, 20.0), (3.0, 10.0)]) + 1.0).abs() < 1e-4);
    // "low variation returns zero"
    assert_eq!(of(&[(100.0, 200.0), (100.1, 200.1), (100.05, 200.05)]), 0.0);
    // Under the warm-up, nothing; the variation is the second series' own.
    let pairs = [(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)];
    assert_eq!(correlate(&pairs, |(_, y)| y, 4), (0.0, 0.0));
    let (_, cv) = correlate(&pairs, |(_, y)| y, 3);
    assert!((cv - sqrt(200.0 / 3.0) / 20.0).abs() < 1e-12);
}

#[test]
fn the_correlations_read_the_last_windows_only() {
    let policy = Failsafe {
        correlation: 3,
        ..FAILSAFE
    };
    let mut state = State::new(20);
    for n in 1..=12 {
        state.update(&policy, Bounds::new(1, 200), sample(ms(100), n));
    }
    assert_eq!(state.held, 3);
    let mut kept: Vec<f64> = state.windows[..3].iter().map(|w| w.0).collect();
    kept.sort_unstable_by(f64::total_cmp);
    assert_eq!(kept, [10.0, 11.0, 12.0]);
}

/// A state at 20 whose last windows held `(in flight, rtt)` in milliseconds, its baseline,
/// smoothed and last latencies at `now` milliseconds: a window at `now` reads no queue.
fn history(windows: &[(f64, f64)], now: f64) -> State {
    let mut state = State::new(20);
    state.rebase(now * 1e6);
    state.smoothed = Average::warm(now * 1e6);
    state.latencies = [now * 1e6; MEDIAN];
    state.heard = MEDIAN;
    for (k, &(n, rtt)) in windows.iter().enumerate() {
        state.windows[k] = (n, rtt * 1e6);
    }
    state.held = windows.len();
    state.next = windows.len();
    state
}

#[test]
fn a_full_limit_whose_throughput_falls_as_calls_rise_is_cut() {
    // Throughput N / rtt falls from 100 a second as N rises: overload.
    let falling: Vec<(f64, f64)> = (0..10)
        .map(|k| (10.0 + k as f64, 100.0 + 20.0 * k as f64))
        .collect();
    let bounds = Bounds::new(1, 200);
    // A window at the limit (20 in flight, 67 a second) with no queue against the
    // baseline: cut.
    let mut state = history(&falling, 300.0);
    assert_eq!(state.update(&FAILSAFE, bounds, sample(ms(300), 20)), 19);
    // The same window short of the limit: the correlations are not read, and it grows.
    let mut state = history(&falling, 300.0);
    assert_eq!(state.update(&FAILSAFE, bounds, sample(ms(300), 19)), 21);
}

#[test]
fn a_full_limit_whose_latency_rises_with_calls_and_throughput_does_not_is_cut() {
    // Latency proportional to N: throughput flat at 100 a second, latency rising with N.
    let flat: Vec<(f64, f64)> = (0..10)
        .map(|k| (10.0 + k as f64, 100.0 + 10.0 * k as f64))
        .collect();
    let mut state = history(&flat, 200.0);
    assert_eq!(
        state.update(&FAILSAFE, Bounds::new(1, 200), sample(ms(200), 20)),
        19
    );
    // Throughput rising with N at a flat latency: no overload, growth.
    let rising: Vec<(f64, f64)> = (0..10).map(|k| (10.0 + k as f64, 100.0)).collect();
    let mut state = history(&rising, 100.0);
    assert_eq!(
        state.update(&FAILSAFE, Bounds::new(1, 200), sample(ms(100), 20)),
        21
    );
}

#[test]
fn the_step_is_log10_of_the_limit() {
    let policy = Failsafe {
        initial: 150,
        max: 1000,
        ..FAILSAFE
    };
    let mut state = State::new(150);
    // 2 a window from 100 to 999.
    assert_eq!(
        state.update(&policy, Bounds::new(1, 1000), sample(ms(10), 150)),
        152
    );
}

#[test]
fn bad_samples_and_constants_do_not_panic() {
    let bad = Failsafe {
        max_factor: f64::NAN,
        baseline: 0,
        correlation: 0,
        ..FAILSAFE
    };
    let mut estimator = Estimator::new(Algorithm::Failsafe(bad));
    assert_eq!(estimator.update(sample(Duration::ZERO, 20)), 20);
    for in_flight in [0, 1, u32::MAX] {
        let limit = estimator.update(sample(Duration::MAX, in_flight));
        assert!((1..=200).contains(&limit), "{in_flight}: {limit}");
    }
    for k in 0..100 {
        let limit = estimator.update(sample(ms(1 + k % 7), (k % 30) as u32));
        assert!((1..=200).contains(&limit));
    }
    assert_eq!(bad.max_factor(), 1000.0);
    assert_eq!(bad.correlation(), 2);
}

#[test]
fn a_probe_sets_the_baseline_and_it_reads_back() {
    let mut estimator = Estimator::new(Algorithm::Failsafe(FAILSAFE));
    assert_eq!(estimator.baseline(), None);
    estimator.update(sample(ms(40), 20));
    assert_eq!(estimator.baseline(), Some(ms(40)));
    estimator.rebase(ms(25));
    assert_eq!(estimator.baseline(), Some(ms(25)));
}
