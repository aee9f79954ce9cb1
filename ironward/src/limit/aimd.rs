//! Aimd: additive increase while calls succeed, multiplicative decrease on a drop or a call
//! slower than the timeout. It reads no latency short of the timeout, so it suits a backend
//! that says when it is full (refusals, timeouts) better than its latency does.

use core::time::Duration;

use super::Sample;
use super::sample::Bounds;

/// The constants of Aimd: additive increase, multiplicative decrease.
///
/// Netflix concurrency-limits' `AIMDLimit`. Each window, with `limit` the limit now:
///
/// - if a call was dropped, or the window's latency is over `timeout`, the limit becomes
///   `⌊limit × backoff⌋`;
/// - otherwise, if at least half the limit was in flight (`2 × in_flight >= limit`), it
///   grows by 1;
/// - otherwise it stays: calls were not held back by the limit, so their success says
///   nothing about a higher one;
///
/// and is then held to `min ..= max`. TCP's congestion control moves its window the same
/// way; the loss is the only signal, so the limit saw-tooths under the level where calls
/// start to fail.
///
/// A policy is changed the Rust way: `Aimd { max: 1000, ..AIMD }`.
///
/// # Default
///
/// [`AIMD`], the defaults of Netflix concurrency-limits' `AIMDLimit.Builder`:
///
/// | field | value | meaning |
/// | --- | --- | --- |
/// | `initial` | 20 | the limit before any sample |
/// | `min` | 20 | the least limit |
/// | `max` | 200 | the greatest limit |
/// | `backoff` | 0.9 | what a drop multiplies the limit by |
/// | `timeout` | 5 s | a window latency over this counts as a drop |
///
/// # Bad constants
///
/// Nothing panics. `backoff` is held to `[0.5, 1]`, the reference's range (where its
/// builder throws outside `[0.5, 1)`), and NaN is read as 1, which never backs off. A zero
/// `timeout` counts every window slower than 0 ns as a drop. `min` and `max` are read as
/// the [`Estimator`](super::Estimator) docs say: at least 1, and a `min` over `max` is `max`.
///
/// # Differences from the reference
///
/// - A `min` or `initial` of 0 is read as 1: a limit of 0 admits nothing, so no sample
///   would come to raise it again.
/// - `2 × in_flight` and `limit + 1` are worked out without overflow, where Java's `int`
///   wraps past 2³¹.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{AIMD, Aimd, Algorithm, Estimator, Sample};
///
/// let patient = Aimd { timeout: Duration::from_secs(30), ..AIMD };
/// assert_eq!(patient.backoff, 0.9);
/// assert_eq!(Aimd::default(), AIMD);
///
/// let mut estimator = Estimator::new(Algorithm::Aimd(Aimd { initial: 50, ..AIMD }));
/// let slow = Sample { rtt: Duration::from_secs(6), in_flight: 1, dropped: false };
/// assert_eq!(estimator.update(slow), 45);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Aimd {
    /// The limit before any sample; the first sample holds it to `min ..= max`.
    pub initial: u32,
    /// The least limit: at least 1, and at most `max`.
    pub min: u32,
    /// The greatest limit: at least 1.
    pub max: u32,
    /// What a drop multiplies the limit by, truncating: 0.5 to 1 (NaN is 1, never backing
    /// off).
    pub backoff: f64,
    /// A window latency over this counts as a drop.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub timeout: Duration,
}

/// Netflix concurrency-limits' `AIMDLimit` defaults: from 20, within 20 to 200, backing off
/// by 0.9 on a drop or a window slower than 5 s.
pub const AIMD: Aimd = Aimd {
    initial: 20,
    min: 20,
    max: 200,
    backoff: 0.9,
    timeout: Duration::from_secs(5),
};

impl Default for Aimd {
    fn default() -> Self {
        AIMD
    }
}

impl Aimd {
    /// `backoff` as the algorithm reads it: in `[0.5, 1]`, NaN as 1.
    fn backoff(&self) -> f64 {
        if self.backoff.is_nan() {
            1.0
        } else {
            self.backoff.clamp(0.5, 1.0)
        }
    }
}

/// `AIMDLimit._update`: the limit after one window's sample.
pub(super) fn update(policy: &Aimd, bounds: Bounds, limit: u32, sample: Sample) -> u32 {
    let limit = if sample.dropped || sample.rtt > policy.timeout {
        // Java's `(int)` cast truncates, as `as` does; the product is at most `limit`.
        (f64::from(limit) * policy.backoff()) as u32
    } else if 2 * u64::from(sample.in_flight) >= u64::from(limit) {
        limit.saturating_add(1)
    } else {
        limit
    };
    bounds.clamp(limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limit::{Algorithm, Estimator};

    fn estimator(aimd: Aimd) -> Estimator {
        Estimator::new(Algorithm::Aimd(aimd))
    }

    fn sample(rtt: Duration, in_flight: u32, dropped: bool) -> Sample {
        Sample {
            rtt,
            in_flight,
            dropped,
        }
    }

    const MS: Duration = Duration::from_millis(1);

    // Netflix `AIMDLimitTest.testDefault`: the initial limit is reported as given, even
    // under the default min of 20.
    #[test]
    fn the_initial_limit_is_the_first_limit() {
        let limit = estimator(Aimd {
            initial: 10,
            ..AIMD
        });
        assert_eq!(limit.limit(), 10);
    }

    // Netflix `AIMDLimitTest.increaseOnSuccess`.
    #[test]
    fn increases_on_success() {
        let mut limit = estimator(Aimd {
            initial: 20,
            ..AIMD
        });
        limit.update(sample(MS, 10, false));
        assert_eq!(limit.limit(), 21);
    }

    // Netflix `AIMDLimitTest.decreaseOnDrops`.
    #[test]
    fn decreases_on_drops() {
        let mut limit = estimator(Aimd {
            initial: 30,
            ..AIMD
        });
        limit.update(sample(Duration::ZERO, 0, true));
        assert_eq!(limit.limit(), 27);
    }

    // Netflix `AIMDLimitTest.successOverflow`: after a success the limit stays at the max.
    #[test]
    fn success_at_the_max_stays_at_the_max() {
        let mut limit = estimator(Aimd {
            initial: 21,
            max: 21,
            min: 0,
            ..AIMD
        });
        limit.update(sample(MS, 10, false));
        assert_eq!(limit.limit(), 21);
    }

    #[test]
    fn a_window_over_the_timeout_is_a_drop_and_one_at_it_is_not() {
        let mut limit = estimator(Aimd {
            initial: 100,
            ..AIMD
        });
        assert_eq!(limit.update(sample(AIMD.timeout, 100, false)), 101);
        let over = AIMD.timeout + Duration::from_nanos(1);
        assert_eq!(limit.update(sample(over, 100, false)), 90);
        assert_eq!(limit.update(sample(Duration::MAX, 100, false)), 81);
    }

    #[test]
    fn grows_only_while_half_the_limit_is_in_flight() {
        let mut limit = estimator(Aimd {
            initial: 40,
            ..AIMD
        });
        assert_eq!(limit.update(sample(MS, 19, false)), 40);
        assert_eq!(limit.update(sample(MS, 20, false)), 41);
        assert_eq!(limit.update(sample(MS, 0, false)), 41);
        assert_eq!(limit.update(sample(MS, u32::MAX, false)), 42);
    }

    #[test]
    fn a_backoff_out_of_range_is_held_to_it_and_nan_never_backs_off() {
        let drop = sample(MS, 0, true);
        let after = |backoff| {
            let policy = Aimd {
                initial: 100,
                min: 1,
                backoff,
                ..AIMD
            };
            estimator(policy).update(drop)
        };
        assert_eq!(after(0.1), 50);
        assert_eq!(after(f64::NEG_INFINITY), 50);
        assert_eq!(after(1.0), 100);
        assert_eq!(after(2.0), 100);
        assert_eq!(after(f64::INFINITY), 100);
        assert_eq!(after(f64::NAN), 100);
        assert_eq!(after(0.75), 75);
    }

    #[test]
    fn a_zero_timeout_counts_every_slower_window_as_a_drop() {
        let policy = Aimd {
            initial: 100,
            min: 1,
            timeout: Duration::ZERO,
            ..AIMD
        };
        let mut limit = estimator(policy);
        assert_eq!(limit.update(sample(Duration::ZERO, 100, false)), 101);
        assert_eq!(
            limit.update(sample(Duration::from_nanos(1), 100, false)),
            90
        );
    }

    #[test]
    fn repeated_drops_stop_at_one_with_a_min_of_zero() {
        let mut limit = estimator(Aimd {
            initial: 3,
            min: 0,
            ..AIMD
        });
        for _ in 0..10 {
            limit.update(sample(MS, 0, true));
        }
        assert_eq!(limit.limit(), 1);
        // And a success from there still grows it.
        assert_eq!(limit.update(sample(MS, 1, false)), 2);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn the_preset_reads_back_as_written_with_a_humane_timeout() {
        let text = serde_json::to_string(&AIMD).unwrap();
        assert_eq!(
            text,
            r#"{"initial":20,"min":20,"max":200,"backoff":0.9,"timeout":"5s"}"#
        );
        assert_eq!(serde_json::from_str::<Aimd>(&text).unwrap(), AIMD);
        let partial: Aimd = serde_json::from_str(r#"{"max":50}"#).unwrap();
        assert_eq!(partial, Aimd { max: 50, ..AIMD });
    }
}
