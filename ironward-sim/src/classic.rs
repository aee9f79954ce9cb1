//! The baseline: a classic open, half-open and closed circuit breaker, as a scenario
//! writes it; the core's [`ClassicBreaker`](ironward::ClassicBreaker) runs it.

use core::time::Duration;

use serde::Deserialize;

use ironward::classic::{OpenWait, Record};

/// The constants of a classic circuit breaker, the baseline the SRE breaker is compared with.
///
/// Closed, it lets everything through and keeps the outcomes of the last `calls` calls; once
/// it holds at least `minimum` of them and the share that failed reaches `threshold`, it
/// opens. Open, it refuses everything for `open`. Then it is half-open: it lets `probes`
/// calls through and waits for all of them; if the share of those that failed is under
/// `threshold` it closes, with an empty record, and otherwise opens again. This is the
/// count-based breaker of resilience4j (`CircuitBreakerConfig`) and, with other constants,
/// of Hystrix and most libraries since, which the core's
/// [`ClassicBreaker`](ironward::ClassicBreaker) runs ([`core`](Classic::core) says with
/// which policy).
///
/// Its weakness is the step. Closing lets the whole offered load through at once, onto a
/// backend that a handful of probes found working, which is the flood on recovery the
/// `outage` scenario shows; [`ironward::Breaker`] instead lets through a share that grows
/// with the successes it sees.
///
/// # Default
///
/// | field | value | source |
/// | --- | --- | --- |
/// | `threshold` | 0.5 | resilience4j `failureRateThreshold` 50 % |
/// | `calls` | 100 | resilience4j `slidingWindowSize` |
/// | `minimum` | 100 | resilience4j `minimumNumberOfCalls` |
/// | `open` | 5 s | Hystrix `sleepWindowInMilliseconds` (resilience4j waits 60 s) |
/// | `probes` | 10 | resilience4j `permittedNumberOfCallsInHalfOpenState` |
///
/// # Examples
///
/// ```
/// use ironward_sim::Classic;
///
/// let eager = Classic { minimum: 20, ..Classic::default() };
/// assert_eq!(eager.threshold, 0.5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Classic {
    /// The share of failed calls at or over which the breaker opens.
    pub threshold: f64,
    /// How many of the latest outcomes the closed breaker keeps.
    pub calls: u32,
    /// The outcomes needed before the share counts.
    pub minimum: u32,
    /// How long the breaker stays open.
    #[serde(deserialize_with = "crate::humane::read")]
    pub open: Duration,
    /// Trial calls let through while half-open.
    pub probes: u32,
}

impl Default for Classic {
    fn default() -> Self {
        Self {
            threshold: 0.5,
            calls: 100,
            minimum: 100,
            open: Duration::from_secs(5),
            probes: 10,
        }
    }
}

impl Classic {
    /// The core's policy for these constants: a count record of `calls`, no slow calls, a
    /// fixed open wait, and probes that hold their places until they report (the engine
    /// settles every call it sends).
    pub fn core(self) -> ironward::Classic {
        ironward::Classic {
            record: Record::Count { calls: self.calls },
            failure_rate: self.threshold,
            slow_rate: 1.0,
            slow_call: Duration::MAX,
            minimum: self.minimum,
            open: OpenWait::Fixed(self.open),
            probes: self.probes,
            lease: Duration::MAX,
            ..ironward::CLASSIC
        }
    }
}

#[cfg(test)]
mod tests {
    use ironward::{CircuitBreaker, ClassicBreaker};

    use super::*;

    const S: u64 = 1_000_000_000;

    fn at(nanos: u64) -> Duration {
        Duration::from_nanos(nanos)
    }

    fn small() -> ClassicBreaker {
        let policy = Classic {
            calls: 4,
            minimum: 4,
            probes: 2,
            ..Classic::default()
        };
        ClassicBreaker::new(policy.core(), Duration::ZERO)
    }

    fn record(b: &mut ClassicBreaker, permit: ironward::ClassicPermit, failed: bool, now: u64) {
        let back = if failed {
            b.fail(permit, at(now))
        } else {
            b.pass(permit, at(now))
        };
        assert!(back.is_none());
    }

    #[test]
    fn opens_once_half_of_a_full_record_failed() {
        let mut b = small();
        for failed in [true, false, true] {
            let t = b.allow(at(0)).expect("closed");
            record(&mut b, t, failed, 0);
        }
        assert_eq!(b.ratio(at(0)), 0.0, "three outcomes are under the minimum");
        let t = b.allow(at(0)).expect("closed");
        record(&mut b, t, false, 0);
        assert_eq!(CircuitBreaker::ratio(&b, at(0)), 1.0, "two of four failed");
        assert!(b.allow(at(S)).is_none());
    }

    #[test]
    fn half_open_lets_the_probes_through_and_closes_when_they_pass() {
        let mut b = small();
        for _ in 0..4 {
            let t = b.allow(at(0)).expect("closed");
            record(&mut b, t, true, 0);
        }
        assert!(b.allow(at(5 * S - 1)).is_none());
        let (p, q) = (
            b.allow(at(5 * S)).expect("probe"),
            b.allow(at(5 * S)).expect("probe"),
        );
        assert!(b.allow(at(5 * S)).is_none(), "only two probes");
        record(&mut b, p, false, 5 * S);
        assert_eq!(
            b.ratio(at(5 * S)),
            1.0,
            "still waiting for the second probe"
        );
        record(&mut b, q, false, 5 * S);
        assert_eq!(b.ratio(at(5 * S)), 0.0, "closed");
        assert!((0..100).all(|_| b.allow(at(5 * S)).is_some()));
    }

    #[test]
    fn a_failed_probe_opens_it_again_and_stale_outcomes_are_ignored() {
        let mut b = small();
        let stale = b.allow(at(0)).expect("closed");
        for _ in 0..4 {
            let t = b.allow(at(0)).expect("closed");
            record(&mut b, t, true, 0);
        }
        let p = b.allow(at(5 * S)).expect("probe");
        let q = b.allow(at(5 * S)).expect("probe");
        record(&mut b, stale, false, 5 * S);
        record(&mut b, p, true, 6 * S);
        record(&mut b, q, false, 6 * S);
        assert!(b.allow(at(6 * S)).is_none());
        assert!(
            b.allow(at(11 * S)).is_some(),
            "open for 5 s from the second trip"
        );
    }
}
