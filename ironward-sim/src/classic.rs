//! The baseline: a classic open, half-open and closed circuit breaker.

use core::fmt;
use core::time::Duration;

use serde::Deserialize;

use ironward::clock::nanos;
use ironward::{CircuitBreaker, Outcome};

/// The constants of a classic circuit breaker, the baseline the SRE breaker is compared with.
///
/// Closed, it lets everything through and keeps the outcomes of the last `calls` calls; once
/// it holds at least `minimum` of them and the share that failed reaches `threshold`, it
/// opens. Open, it refuses everything for `open`. Then it is half-open: it lets `probes`
/// calls through and waits for all of them; if the share of those that failed is under
/// `threshold` it closes, with an empty record, and otherwise opens again. This is the
/// count-based breaker of resilience4j (`CircuitBreakerConfig`) and, with other constants,
/// of Hystrix and most libraries since.
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

/// Where a classic breaker stands.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Closed,
    Open {
        until: u64,
    },
    HalfOpen {
        let_through: u32,
        heard: u32,
        failed: u32,
    },
}

/// A classic breaker as it runs.
#[derive(Debug)]
pub(crate) struct ClassicBreaker {
    policy: Classic,
    state: State,
    /// The latest outcomes while closed, `true` for a failure, as a ring.
    ring: Vec<bool>,
    at: usize,
    filled: usize,
    failures: usize,
    /// Counts state changes, so that an outcome from an earlier state is not counted.
    epoch: u64,
}

/// A call a [`ClassicBreaker`] let through, stamped with the state it was let through in.
#[derive(Debug)]
pub(crate) struct Trial {
    epoch: u64,
}

impl ClassicBreaker {
    /// A closed breaker with an empty record.
    pub(crate) fn new(policy: Classic) -> Self {
        Self {
            policy,
            state: State::Closed,
            ring: vec![false; policy.calls.max(1) as usize],
            at: 0,
            filled: 0,
            failures: 0,
            epoch: 0,
        }
    }

    /// Asks to make a call at `now`.
    pub(crate) fn allow(&mut self, now: u64) -> Option<Trial> {
        if let State::Open { until } = self.state {
            if now < until {
                return None;
            }
            self.enter(State::HalfOpen {
                let_through: 0,
                heard: 0,
                failed: 0,
            });
        }
        if let State::HalfOpen { let_through, .. } = &mut self.state {
            if *let_through >= self.policy.probes {
                return None;
            }
            *let_through += 1;
        }
        Some(Trial { epoch: self.epoch })
    }

    /// Records how the call behind `trial` went, heard at `now`.
    pub(crate) fn record(&mut self, trial: Trial, failed: bool, now: u64) {
        if trial.epoch != self.epoch {
            return;
        }
        let threshold = self.policy.threshold;
        match &mut self.state {
            State::Closed => {
                if self.filled == self.ring.len() {
                    self.failures -= usize::from(self.ring[self.at]);
                } else {
                    self.filled += 1;
                }
                self.ring[self.at] = failed;
                self.failures += usize::from(failed);
                self.at = (self.at + 1) % self.ring.len();
                let share = self.failures as f64 / self.filled as f64;
                if self.filled >= self.policy.minimum as usize && share >= threshold {
                    self.trip(now);
                }
            }
            State::HalfOpen {
                heard, failed: f, ..
            } => {
                *heard += 1;
                *f += u32::from(failed);
                if *heard >= self.policy.probes {
                    if f64::from(*f) / f64::from(*heard) >= threshold {
                        self.trip(now);
                    } else {
                        self.close();
                    }
                }
            }
            State::Open { .. } => {}
        }
    }

    /// Whether the next call at `now` would be refused: 1 if so, 0 if not.
    pub(crate) fn ratio(&self, now: u64) -> f64 {
        let refusing = match self.state {
            State::Closed => false,
            State::Open { until } => now < until,
            State::HalfOpen { let_through, .. } => let_through >= self.policy.probes,
        };
        if refusing { 1.0 } else { 0.0 }
    }

    fn trip(&mut self, now: u64) {
        let until = now.saturating_add(nanos(self.policy.open));
        self.enter(State::Open { until });
    }

    fn close(&mut self) {
        self.ring.fill(false);
        (self.at, self.filled, self.failures) = (0, 0, 0);
        self.enter(State::Closed);
    }

    fn enter(&mut self, state: State) {
        self.state = state;
        self.epoch += 1;
    }
}

/// Why a [`ClassicBreaker`] refused: open until its wait ends, or half-open with every
/// probe out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Refused {
    Open,
    Probing,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Open => "the classic breaker is open",
            Self::Probing => "the classic breaker is half-open with every probe out",
        })
    }
}

/// The engine asks the classic breaker through the core's trait, as it asks the SRE one. It
/// decides without chance (`roll` is not read) and hears only the calls it let through.
impl CircuitBreaker for ClassicBreaker {
    type Policy = Classic;
    type Permit = Trial;
    type Reason = Refused;

    const REFUSALS: &'static [&'static str] = &["open", "probing"];

    fn new(policy: Classic, _: Duration) -> Self {
        ClassicBreaker::new(policy)
    }

    fn check(&mut self, now: Duration, _: f64) -> Result<Trial, Refused> {
        let open = matches!(self.state, State::Open { .. });
        self.allow(nanos(now)).ok_or(if open {
            Refused::Open
        } else {
            Refused::Probing
        })
    }

    fn pass(&mut self, trial: Trial, now: Duration) -> Option<Trial> {
        self.record(trial, false, nanos(now));
        None
    }

    fn fail(&mut self, trial: Trial, now: Duration) -> Option<Trial> {
        self.record(trial, true, nanos(now));
        None
    }

    fn record(&mut self, _: Outcome, _: Duration) {}

    fn owns(&self, _: &Trial) -> bool {
        true
    }

    fn foreign(&self) -> u64 {
        0
    }

    fn ratio(&self, now: Duration) -> f64 {
        ClassicBreaker::ratio(self, nanos(now))
    }

    fn policy(&self) -> &Classic {
        &self.policy
    }

    /// A new record size starts the closed record afresh; the state is kept.
    fn retune(&mut self, policy: Classic, _: Duration) {
        if policy.calls != self.policy.calls {
            self.ring = vec![false; policy.calls.max(1) as usize];
            (self.at, self.filled, self.failures) = (0, 0, 0);
        }
        self.policy = policy;
    }

    fn refusal(reason: &Refused) -> usize {
        *reason as usize
    }

    fn ratio_of(_: &Refused) -> f64 {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn small() -> ClassicBreaker {
        ClassicBreaker::new(Classic {
            calls: 4,
            minimum: 4,
            probes: 2,
            ..Classic::default()
        })
    }

    #[test]
    fn opens_once_half_of_a_full_record_failed() {
        let mut b = small();
        for failed in [true, false, true] {
            let t = b.allow(0).expect("closed");
            b.record(t, failed, 0);
        }
        assert_eq!(b.ratio(0), 0.0, "three outcomes are under the minimum");
        let t = b.allow(0).expect("closed");
        b.record(t, false, 0);
        assert_eq!(b.ratio(0), 1.0, "two of four failed");
        assert!(b.allow(S).is_none());
    }

    #[test]
    fn half_open_lets_the_probes_through_and_closes_when_they_pass() {
        let mut b = small();
        for _ in 0..4 {
            let t = b.allow(0).expect("closed");
            b.record(t, true, 0);
        }
        assert!(b.allow(5 * S - 1).is_none());
        let (p, q) = (
            b.allow(5 * S).expect("probe"),
            b.allow(5 * S).expect("probe"),
        );
        assert!(b.allow(5 * S).is_none(), "only two probes");
        b.record(p, false, 5 * S);
        assert_eq!(b.ratio(5 * S), 1.0, "still waiting for the second probe");
        b.record(q, false, 5 * S);
        assert_eq!(b.ratio(5 * S), 0.0, "closed");
        assert!((0..100).all(|_| b.allow(5 * S).is_some()));
    }

    #[test]
    fn a_failed_probe_opens_it_again_and_stale_outcomes_are_ignored() {
        let mut b = small();
        let stale = b.allow(0).expect("closed");
        for _ in 0..4 {
            let t = b.allow(0).expect("closed");
            b.record(t, true, 0);
        }
        let p = b.allow(5 * S).expect("probe");
        let q = b.allow(5 * S).expect("probe");
        b.record(stale, false, 5 * S);
        b.record(p, true, 6 * S);
        b.record(q, false, 6 * S);
        assert!(b.allow(6 * S).is_none());
        assert!(
            b.allow(11 * S).is_some(),
            "open for 5 s from the second trip"
        );
    }
}
