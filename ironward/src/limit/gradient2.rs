//! Gradient2: the ratio of a long average of window latencies to the latest one, which
//! lowers the limit as latency climbs over its own recent history. It follows a backend
//! whose latency drifts, where a minimum (Vegas') would go stale and shed too much.

use super::Sample;
use super::sample::{Average, Bounds, Scale, whole};
use crate::clock::nanos;

/// The constants of Gradient2: a limit moved by the gradient of latency over its history.
///
/// Netflix concurrency-limits' `Gradient2Limit`. With `L` the unrounded limit, `rtt` the
/// window's latency and `long` an exponential average of window latencies, each window:
///
/// 1. `rtt` is added to `long`: the first 10 are averaged plainly (the warm-up of Netflix's
///    `ExpAvgMeasurement`), later ones with weight `2 / (long_window + 1)`.
/// 2. If `long` is more than twice `rtt`, `long` is cut by 5%: latency has fallen back after
///    a stretch of load, and the average should not take `long_window` windows to follow.
/// 3. With fewer than half the limit in flight (`in_flight < L / 2`) the limit stays.
/// 4. Otherwise the gradient is `tolerance × long / rtt`, held to `[0.5, 1]`: 1 while
///    latency is within the tolerance of its history, down to 0.5 so that one slow window
///    at most halves the target. The new limit is `L × gradient + queue`, where `queue` is
///    the growth allowed while latency holds.
/// 5. `L ← (1 − smoothing) × L + smoothing × new`, held to `min ..= max`.
///
/// The limit is `⌊L⌋`. (The average of step 3 is the one from step 1: the cut of step 2
/// shows from the next window.)
///
/// A drop is not read: as `Gradient2Limit` ignores `didDrop`, a window with a dropped call
/// moves the limit by its latency alone, where [`Aimd`](super::Aimd) and
/// [`Vegas`](super::Vegas) cut it.
///
/// A policy is changed the Rust way: `Gradient2 { max: 1000, ..GRADIENT2 }`.
///
/// # Default
///
/// [`GRADIENT2`], the defaults of Netflix concurrency-limits' `Gradient2Limit.Builder`:
///
/// | field | value | meaning |
/// | --- | --- | --- |
/// | `initial` | 20 | the limit before any sample |
/// | `min` | 20 | the least limit |
/// | `max` | 200 | the greatest limit (`maxConcurrency`) |
/// | `smoothing` | 0.2 | how far each window moves the limit towards its new value |
/// | `queue` | `Fixed(4)` | the growth allowed while latency holds (`queueSize`) |
/// | `long_window` | 600 | windows in the long average's weight (`longWindow`) |
/// | `tolerance` | 1.5 | how much slower than `long` a window may be before the limit drops (`rttTolerance`) |
///
/// # Bad constants
///
/// Nothing panics. `smoothing` is held to `[0, 1]` and NaN is 0, which leaves the limit
/// where it is. `tolerance` under 1 is 1 (the reference's builder throws there) and NaN is
/// infinity, which never lowers the limit for latency. A `long_window` of 0 is 1: the
/// average is the latest latency. `min` and `max` are read as the
/// [`Estimator`](super::Estimator) docs say: at least 1, and a `min` over `max` is `max`.
///
/// # Differences from the reference
///
/// - A zero latency while the long average is zero (after zero latencies from the first,
///   or after one with a `long_window` of 1, which makes the average the latest latency)
///   makes the reference's gradient `0 / 0`, NaN, which sets its limit to 0 and its
///   estimate to NaN for good; here that gradient is 1, as for any latency within the
///   tolerance of its history.
/// - The queue allowance is a [`Scale`] (a function of the limit in the reference).
/// - `min` over `max` is read as `max` (the reference's clamp puts `min` last, so `min`
///   wins there); a `min` or `initial` of 0 is read as 1.
/// - `smoothing` is held to `[0, 1]`, where the reference takes any value.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{Algorithm, Estimator, GRADIENT2, Gradient2, Sample};
///
/// let ms = Duration::from_millis;
/// let eager = Gradient2 { smoothing: 1.0, ..GRADIENT2 };
/// let mut estimator = Estimator::new(Algorithm::Gradient2(eager));
/// // Latency as its history: the gradient is 1, and the limit grows by the queue of 4.
/// let steady = Sample { rtt: ms(10), in_flight: 20, dropped: false };
/// assert_eq!(estimator.update(steady), 24);
/// assert_eq!(Gradient2::default(), GRADIENT2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Gradient2 {
    /// The limit before any sample; updates that move the limit hold it to `min ..= max`.
    pub initial: u32,
    /// The least limit: at least 1, and at most `max`.
    pub min: u32,
    /// The greatest limit: at least 1.
    pub max: u32,
    /// How far each window moves the limit towards its new value: 0 (never) to 1 (all the
    /// way); NaN is 0.
    pub smoothing: f64,
    /// The growth allowed while latency holds, as a count that may follow the limit.
    pub queue: Scale,
    /// How many windows the long average's weight spans: each new latency weighs
    /// `2 / (long_window + 1)`. 0 is read as 1.
    pub long_window: u32,
    /// How many times the long average a window's latency may be before the limit drops:
    /// 1 or more (NaN is infinity, which never drops it for latency).
    pub tolerance: f64,
}

/// Netflix concurrency-limits' `Gradient2Limit` defaults: from 20, within 20 to 200, moving
/// a fifth of the way each window, growing by 4 while latency holds within 1.5 times an
/// average over 600 windows.
pub const GRADIENT2: Gradient2 = Gradient2 {
    initial: 20,
    min: 20,
    max: 200,
    smoothing: 0.2,
    queue: Scale::Fixed(4),
    long_window: 600,
    tolerance: 1.5,
};

impl Default for Gradient2 {
    fn default() -> Self {
        GRADIENT2
    }
}

impl Gradient2 {
    /// `smoothing` as the algorithm reads it: in `[0, 1]`, NaN as 0.
    fn smoothing(&self) -> f64 {
        if self.smoothing.is_nan() {
            0.0
        } else {
            self.smoothing.clamp(0.0, 1.0)
        }
    }

    /// `tolerance` as the algorithm reads it: 1 or more, NaN as infinity.
    fn tolerance(&self) -> f64 {
        if self.tolerance.is_nan() {
            f64::INFINITY
        } else {
            self.tolerance.max(1.0)
        }
    }
}

/// What Gradient2 remembers besides its whole limit.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct State {
    /// The unrounded limit, `estimatedLimit`.
    estimate: f64,
    /// The long average of window latencies in nanoseconds, `longRtt`.
    long: Average,
}

impl State {
    /// Gradient2 starting from `limit`, with no latency seen.
    pub(super) fn new(limit: u32) -> Self {
        Self {
            estimate: f64::from(limit),
            long: Average::new(),
        }
    }

    /// The long average in nanoseconds, once a latency has been added.
    pub(super) fn long(&self) -> Option<f64> {
        self.long.get()
    }

    /// Takes `rtt` nanoseconds, measured with no queue, as the long average, warmed up: the
    /// average then moves from it as from any other value.
    pub(super) fn rebase(&mut self, rtt: f64) {
        self.long = Average::warm(rtt);
    }

    /// Holds the unrounded limit to new bounds and returns the whole limit.
    pub(super) fn retune(&mut self, bounds: Bounds) -> u32 {
        self.estimate = bounds.clamp_f64(self.estimate);
        whole(self.estimate)
    }

    /// `Gradient2Limit._update`: the whole limit after one window's sample.
    pub(super) fn update(&mut self, policy: &Gradient2, bounds: Bounds, sample: Sample) -> u32 {
        let estimate = self.estimate;
        let queue = f64::from(policy.queue.of(estimate as u32));
        let short = nanos(sample.rtt) as f64;
        let long = self.long.add(short, policy.long_window);
        if long / short > 2.0 {
            self.long.value *= 0.95;
        }
        if f64::from(sample.in_flight) < estimate / 2.0 {
            return whole(estimate);
        }
        // `tolerance * longRtt / shortRtt`, in that order; NaN only from 0 / 0 (or an
        // infinite tolerance times a zero average), where no growth of latency is seen.
        let ratio = policy.tolerance() * long / short;
        let gradient = if ratio.is_nan() {
            1.0
        } else {
            ratio.clamp(0.5, 1.0)
        };
        let new = estimate * gradient + queue;
        let smoothing = policy.smoothing();
        let new = estimate * (1.0 - smoothing) + new * smoothing;
        self.estimate = bounds.clamp_f64(new);
        whole(self.estimate)
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use super::super::sample::WARMUP;
    use super::*;
    use crate::limit::{Algorithm, Estimator};

    // Netflix has no unit test of `Gradient2Limit`: the cases below are worked out by hand
    // from its update rule, and the differential test in `tests/limit_reference.rs` checks
    // it against a transliteration of the class.

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn estimator(gradient: Gradient2) -> Estimator {
        Estimator::new(Algorithm::Gradient2(gradient))
    }

    fn sample(rtt: Duration, in_flight: u32) -> Sample {
        Sample {
            rtt,
            in_flight,
            dropped: false,
        }
    }

    // Netflix `ExpAvgMeasurementTest.testWarmup`: a window of 100 and a warm-up of 10.
    #[test]
    fn the_long_average_warms_up_plainly_then_decays() {
        let mut average = Average::new();
        let expected = [10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5, 14.0, 14.5];
        for (i, want) in expected.into_iter().enumerate() {
            let got = average.add(10.0 + i as f64, 100);
            assert!((got - want).abs() < 0.01, "{i}: {got}");
        }
        let got = average.add(100.0, 100);
        assert!((got - 16.2).abs() < 0.1, "{got}");
    }

    #[test]
    fn steady_latency_grows_the_limit_a_fifth_of_the_queue_a_window() {
        let mut limit = estimator(GRADIENT2);
        // 20 × 0.8 + (20 + 4) × 0.2 = 20.8, then 21.6, 22.4: the default grows 0.8 a window.
        assert_eq!(limit.update(sample(ms(10), 20)), 20);
        assert_eq!(limit.update(sample(ms(10), 20)), 21);
        assert_eq!(limit.update(sample(ms(10), 20)), 22);
        assert_eq!(limit.baseline(), Some(ms(10)));
    }

    // Netflix `Gradient2Limit._update` takes `didDrop` and never reads it: a dropped
    // window moves the limit by its latency alone, where Aimd and Vegas cut it.
    #[test]
    fn gradient2_ignores_a_drop() {
        let (mut plain, mut dropped) = (estimator(GRADIENT2), estimator(GRADIENT2));
        for (i, rtt) in [10, 10, 10, 40, 40, 10, 5].into_iter().enumerate() {
            let window = sample(ms(rtt), 20 + i as u32);
            let drop = Sample {
                dropped: true,
                ..window
            };
            assert_eq!(dropped.update(drop), plain.update(window), "window {i}");
            assert_eq!(dropped.baseline(), plain.baseline(), "window {i}");
        }
        assert_eq!(plain.limit(), 23, "grown from 20 as if nothing dropped");
    }

    #[test]
    fn fewer_than_half_in_flight_leaves_the_limit_but_feeds_the_average() {
        let mut limit = estimator(Gradient2 {
            initial: 100,
            ..GRADIENT2
        });
        assert_eq!(limit.update(sample(ms(10), 49)), 100);
        assert_eq!(limit.update(sample(ms(30), 49)), 100);
        assert_eq!(limit.baseline(), Some(ms(20)));
    }

    #[test]
    fn latency_over_the_tolerance_lowers_the_limit_and_at_most_halves_the_target() {
        let eager = Gradient2 {
            initial: 100,
            smoothing: 1.0,
            min: 1,
            ..GRADIENT2
        };
        let mut limit = estimator(eager);
        for _ in 0..10 {
            limit.update(sample(ms(10), 0));
        }
        // 30 ms against 10.0666 ms: 1.5 × 10.0666 / 30 = 0.5033, so 100 × 0.5033 + 4.
        let long = 10.0 * (1.0 - 2.0 / 601.0) + 30.0 * (2.0 / 601.0);
        let want = (100.0 * (1.5 * long / 30.0) + 4.0) as u32;
        assert_eq!(limit.update(sample(ms(30), 100)), want);
        assert_eq!(want, 54);
        // Far slower still: the gradient stops at 0.5.
        assert_eq!(limit.update(sample(Duration::from_secs(10), 54)), 31);
    }

    #[test]
    fn a_long_average_twice_the_latency_is_cut_by_a_twentieth() {
        let mut limit = estimator(GRADIENT2);
        limit.update(sample(ms(100), 0));
        // The average of 100 and 10 is 55, over twice 10: it becomes 52.25 next window.
        limit.update(sample(ms(10), 0));
        assert_eq!(limit.baseline(), Some(Duration::from_micros(52_250)));
    }

    #[test]
    fn zero_latencies_read_as_no_growth_instead_of_nan() {
        let mut limit = estimator(Gradient2 {
            smoothing: 1.0,
            ..GRADIENT2
        });
        assert_eq!(limit.update(sample(Duration::ZERO, 20)), 24);
        assert_eq!(limit.update(sample(Duration::ZERO, 24)), 28);
        assert_eq!(limit.baseline(), Some(Duration::ZERO));
        // 10 ms against an average of 3.3 ms: the gradient is 0.5, 28 × 0.5 + 4 = 18, held
        // to the min of 20.
        assert_eq!(limit.update(sample(ms(10), 28)), 20);
        // A zero latency after a real one: infinitely faster than the history, gradient 1.
        assert_eq!(limit.update(sample(Duration::ZERO, 20)), 24);
    }

    #[test]
    fn a_saturated_latency_at_most_halves_the_target() {
        let mut limit = estimator(Gradient2 {
            initial: 100,
            smoothing: 1.0,
            min: 1,
            ..GRADIENT2
        });
        for _ in 0..WARMUP {
            limit.update(sample(ms(10), 0));
        }
        // 100 × 0.5 + 4.
        assert_eq!(limit.update(sample(Duration::MAX, 100)), 54);
    }

    #[test]
    fn bad_tolerance_and_smoothing_are_read_as_documented() {
        let after = |tolerance, smoothing| {
            let mut limit = estimator(Gradient2 {
                initial: 100,
                min: 1,
                tolerance,
                smoothing,
                ..GRADIENT2
            });
            limit.update(sample(ms(10), 100));
            limit.update(sample(ms(40), 100))
        };
        // NaN tolerance is infinity: latency never lowers the limit, which grows by 4.
        assert_eq!(after(f64::NAN, 1.0), 108);
        assert_eq!(after(f64::INFINITY, 1.0), 108);
        // Under 1 is 1: 1 × 25 / 40 = 0.625 of 104, plus 4.
        assert_eq!(after(0.0, 1.0), 69);
        assert_eq!(after(f64::NEG_INFINITY, 1.0), 69);
        // NaN smoothing is 0: the limit never moves; past 1 it is 1.
        assert_eq!(after(1.5, f64::NAN), 100);
        assert_eq!(after(f64::NAN, 7.0), 108);
    }

    #[test]
    fn a_zero_latency_over_a_zero_average_after_the_warm_up_is_no_growth() {
        // A long window of 1: past the warm-up the average is the latest latency, so a zero
        // latency makes it zero too.
        let mut limit = estimator(Gradient2 {
            initial: 1,
            min: 1,
            max: 1,
            smoothing: 0.0,
            long_window: 1,
            tolerance: 1.0,
            queue: Scale::Fixed(0),
        });
        for _ in 0..WARMUP {
            limit.update(sample(ms(1), 1));
        }
        assert_eq!(limit.update(sample(Duration::ZERO, 1 << 30)), 1);
        assert_eq!(limit.baseline(), Some(Duration::ZERO));
        assert_eq!(limit.update(sample(ms(1), 1)), 1);
    }

    #[test]
    fn a_long_window_of_zero_follows_the_latest_latency() {
        let mut average = Average::new();
        for _ in 0..WARMUP {
            average.add(10.0, 0);
        }
        assert_eq!(average.add(30.0, 0), 30.0);
        assert!((average.add(30.0, u32::MAX) - 30.0).abs() < 1e-6);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn the_preset_reads_back_as_written() {
        let text = serde_json::to_string(&GRADIENT2).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"initial":20,"min":20,"max":200,"smoothing":0.2,"queue":{"Fixed":4},"#,
                r#""long_window":600,"tolerance":1.5}"#
            )
        );
        assert_eq!(serde_json::from_str::<Gradient2>(&text).unwrap(), GRADIENT2);
    }
}
