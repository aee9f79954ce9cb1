//! [`Classic`]: the policy of a [`ClassicBreaker`](super::ClassicBreaker), its window, its
//! open wait and its manual states, with resilience4j's and Polly's defaults as presets.

use core::time::Duration;

use crate::internal::constant::constant;
use crate::internal::float::powi;

/// What a closed classic breaker counts its calls over.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::classic::Record;
/// use ironward::{CLASSIC, Classic};
///
/// let minute = Record::Time { span: Duration::from_secs(60), buckets: 60 };
/// let per_minute = Classic { record: minute, ..CLASSIC };
/// assert_ne!(per_minute, CLASSIC);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
pub enum Record {
    /// The last `calls` calls (resilience4j's `COUNT_BASED` sliding window). At least 1 and
    /// at most 65 536 (the window is allocated when the breaker is made).
    Count {
        /// How many of the latest calls are kept.
        calls: u32,
    },
    /// The calls of the last `span`, counted in `buckets` buckets of `span / buckets` each
    /// (resilience4j's `TIME_BASED` window keeps a bucket a second; Polly's sampling
    /// duration). At least one bucket and at most 65 536, each at least 1 ns wide.
    Time {
        /// How far back the window reaches.
        #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
        span: Duration,
        /// How many buckets the span is counted in.
        buckets: u32,
    },
    /// Failures in a row: the breaker opens at the `failures`-th consecutive failure, and a
    /// success starts the count again (failsafe-go's `WithFailureThreshold`, Polly v7's
    /// `exceptionsAllowedBeforeBreaking`). The rates and the minimum are not read. At least 1.
    Consecutive {
        /// How many failures in a row open the breaker.
        failures: u32,
    },
}

/// How long a classic breaker stays open before it lets probes through.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::classic::OpenWait;
///
/// let s = Duration::from_secs;
/// let growing = OpenWait::Growing { first: s(1), factor: 2.0, max: s(30) };
/// assert_eq!([0, 1, 2, 5, 9].map(|reopened| growing.after(reopened)), [s(1), s(2), s(4), s(30), s(30)]);
/// assert_eq!(OpenWait::Fixed(s(5)).after(7), s(5));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
pub enum OpenWait {
    /// The same wait every time (resilience4j's `waitDurationInOpenState`, Polly's
    /// `BreakDuration`).
    Fixed(#[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))] Duration),
    /// `first`, times `factor` for each reopening since the breaker last closed, at most
    /// `max` (failsafe-go's `WithDelayFunc`, Polly's `BreakDurationGenerator`). A `factor`
    /// below 1 or NaN is read as 1.
    Growing {
        /// The wait of the first opening.
        #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
        first: Duration,
        /// What each reopening multiplies the wait by.
        factor: f64,
        /// The longest wait.
        #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
        max: Duration,
    },
}

impl OpenWait {
    /// The wait of an opening that follows `reopened` reopenings since the breaker last
    /// closed (0 for the first opening).
    pub fn after(self, reopened: u32) -> Duration {
        match self {
            Self::Fixed(wait) => wait,
            Self::Growing { first, factor, max } => {
                let factor = if factor >= 1.0 { factor } else { 1.0 };
                let first = first.min(max);
                if first.is_zero() {
                    // Zero times any factor, an infinite one included (whose product is NaN).
                    return first;
                }
                // One power, not a loop per reopening: `reopened` may be `u32::MAX`.
                // `from_secs_f64` panics past `Duration::MAX`: the product is held to `max`
                // first, and to `max` again after, since the float of `max` may round above it.
                let wait = first.as_secs_f64() * powi(factor, reopened);
                if wait >= max.as_secs_f64() {
                    max
                } else {
                    Duration::from_secs_f64(wait).min(max)
                }
            }
        }
    }
}

/// How a classic breaker lets calls back once its open wait has passed.
///
/// Both start with the [`probes`](Classic::probes): that many calls, each holding its place
/// for the [`lease`](Classic::lease), whose outcomes reopen the breaker if their failed or
/// slow share reaches the rate. With [`Probes`](Self::Probes) the breaker closes once they
/// pass, and every call goes through again at once. With
/// [`Progressive`](Self::Progressive) it lets a growing share of the calls through first,
/// stage by stage (seatbelt's progressive half-open mode, in its `breaker::HalfOpenMode`),
/// so that a backend that passed a few probes is not handed the whole load in one step.
///
/// # Progressive stages
///
/// Stage `k` (from 0) admits the share `first · factorᵏ` of the calls asked during it (at
/// most 1), and lasts [`hold`](Self::Progressive::hold) from its start. The first call
/// asked that reaches it, at or after its end, judges it on the outcomes heard since it
/// began (any call let through half-open counts, whichever stage admitted it):
///
/// - none heard: the stage starts again, so that a quiet backend is not judged on nothing;
/// - the failed or the slow share at or over its rate: the breaker opens again, with the
///   next wait of [`OpenWait`];
/// - otherwise the next stage starts, and after the last one the breaker closes with an
///   empty record.
///
/// A settled call also judges the stage if its end has passed, after counting its own
/// outcome. Moving from stage to stage is not a change of state: the breaker stays
/// half-open, and [`take_transition`](super::ClassicBreaker::take_transition) reports only
/// the closing or the reopening.
///
/// # A count, not a draw
///
/// A stage admits by count: the first call asked in it, then one more each time the calls
/// asked reach the next multiple of `1 / share` (with a share of 10 %, calls 1, 11, 21, …;
/// after `n` calls, `1 + ⌊(n − 1) · share⌋` admitted). seatbelt draws each call instead,
/// with a fallback probe for a stage whose draws admitted none. Counting keeps the breaker
/// deterministic without a draw (its inherent [`check`](super::ClassicBreaker::check)
/// takes none, and the family's draw goes unread), admits exactly the share with no
/// variance however few calls there are, and always admits a stage's first call, which
/// does a fallback's job; a shared form keeps it with one counter. What it gives up: a
/// caller that sends calls in a fixed cycle can meet the same slot of the count each time,
/// where a draw would spread the admissions among its calls. The shares are counted in
/// parts per billion.
///
/// # Out-of-range values
///
/// A `first` of NaN is read as 1 (the share that refuses least), one below 0 as 0 (a stage
/// admits its first call only), one above 1 as 1; a `factor` below 1 or NaN as 1. A
/// `stages` of 0 is [`Probes`](Self::Probes).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::classic::HalfOpen;
///
/// let ramp = HalfOpen::Progressive {
///     first: 0.01,
///     factor: 4.0,
///     stages: 4,
///     hold: Duration::from_secs(10),
/// };
/// assert_eq!([0, 1, 2, 3, 4].map(|k| ramp.share(k)), [Some(0.01), Some(0.04), Some(0.16), Some(0.64), None]);
/// assert_eq!(HalfOpen::Probes.share(0), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
pub enum HalfOpen {
    /// The probes decide, and the breaker closes once they pass (resilience4j's
    /// `permittedNumberOfCallsInHalfOpenState`, Polly's single probe, seatbelt's quick mode).
    /// The default.
    #[default]
    Probes,
    /// After the probes pass, `stages` stages of a growing share of the calls, each held for
    /// `hold`.
    Progressive {
        /// The share of the calls the first stage admits.
        first: f64,
        /// What each stage multiplies the share by.
        factor: f64,
        /// How many stages run before the breaker closes.
        stages: u32,
        /// How long each stage lasts at least.
        #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
        hold: Duration,
    },
}

impl HalfOpen {
    /// The share of calls stage `stage` admits, as read from the policy (see the
    /// out-of-range rules above); `None` past the last stage, and always for
    /// [`Probes`](Self::Probes).
    pub fn share(self, stage: u32) -> Option<f64> {
        match self {
            Self::Probes => None,
            Self::Progressive { stages, .. } if stage >= stages => None,
            Self::Progressive { first, factor, .. } => {
                let first = constant(first, 0.0, 1.0, 1.0);
                if first == 0.0 {
                    // Held at 0 whatever the factor: `0 · ∞` would read as NaN.
                    return Some(0.0);
                }
                let factor = if factor >= 1.0 { factor } else { 1.0 };
                Some((first * powi(factor, stage)).min(1.0))
            }
        }
    }

    /// How long each progressive stage lasts; zero for [`Probes`](Self::Probes).
    pub fn hold(self) -> Duration {
        match self {
            Self::Probes => Duration::ZERO,
            Self::Progressive { hold, .. } => hold,
        }
    }
}

/// A state a classic breaker is put in by hand, over what its record says (resilience4j's
/// `FORCED_OPEN`, `DISABLED` and `METRICS_ONLY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
pub enum Force {
    /// None: the record decides. The default.
    #[default]
    None,
    /// Refuse every call, and record nothing.
    Open,
    /// Admit every call, and record nothing.
    Disabled,
    /// Admit every call and record it, never opening: the record is there for reading, and
    /// for the breaker to decide on once the force is lifted.
    MetricsOnly,
}

/// The policy of a [`ClassicBreaker`](super::ClassicBreaker): closed, open, half-open, as
/// resilience4j, Polly, failsafe-go and Hystrix users know it.
///
/// Closed, the breaker admits every call and keeps its outcomes in its [`record`](Self::record).
/// Once the record holds at least [`minimum`](Self::minimum) calls (for a count window, at
/// most its size), it opens when the share that failed reaches
/// [`failure_rate`](Self::failure_rate) or the share slower than
/// [`slow_call`](Self::slow_call) reaches [`slow_rate`](Self::slow_rate). Open, it refuses
/// every call for the [`open`](Self::open) wait; the next call after it is the first of
/// [`probes`](Self::probes) half-open probes. Once every probe has reported, the breaker
/// closes with an empty record if their failure and slow shares are under the rates (or,
/// with a progressive [`half_open`](Self::half_open), lets growing shares of the calls
/// through first), and opens again otherwise. A probe that does not report within
/// [`lease`](Self::lease) gives its place to another, so that a lost call cannot hold the
/// breaker half-open.
///
/// A rate above 1 is read as 1 (every call failed, or was slow), one of 0 or below as the
/// least above 0 (any failure opens), and NaN as a rate no share reaches (it never opens).
/// A probe count of 0 is read as 1, and so is a window size.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{CLASSIC, Classic, POLLY};
///
/// assert_eq!(CLASSIC.failure_rate, 0.5);
/// assert_eq!(POLLY.probes, 1);
/// let quick = Classic { minimum: 10, ..CLASSIC };
/// assert_eq!(quick.open.after(0), Duration::from_secs(60));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct Classic {
    /// What the closed breaker counts over.
    pub record: Record,
    /// The share of failed calls at or over which the breaker opens.
    pub failure_rate: f64,
    /// The share of slow calls at or over which the breaker opens.
    pub slow_rate: f64,
    /// How long a call may take before it counts as slow, whether it succeeded or not (a
    /// call slower than this is slow).
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub slow_call: Duration,
    /// The calls the record must hold before its shares are read.
    pub minimum: u32,
    /// How long the breaker stays open.
    pub open: OpenWait,
    /// The calls let through half-open, whose outcomes close or reopen the breaker.
    pub probes: u32,
    /// How long a half-open probe holds its place without reporting back.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub lease: Duration,
    /// What follows the probes: closing at once (the default), or growing shares of the
    /// calls first.
    pub half_open: HalfOpen,
    /// Whether an open breaker reads as half-open once its wait has passed, without waiting
    /// for a call (resilience4j's `automaticTransitionFromOpenToHalfOpenEnabled`), for a
    /// caller that polls [`state`](super::ClassicBreaker::state).
    pub automatic: bool,
    /// A state put by hand, over what the record says.
    pub force: Force,
}

/// resilience4j's `CircuitBreakerConfig` defaults: a count window of 100 calls, 100 calls
/// before the shares count, opening at 50 % failed or 100 % slower than 60 s, 60 s open, 10
/// probes. resilience4j has no lease (a probe that never reports holds its place until
/// `maxWaitDurationInHalfOpenState`, 0 by default, which is forever); this preset gives one
/// of 60 s.
pub const CLASSIC: Classic = Classic {
    record: Record::Count { calls: 100 },
    failure_rate: 0.5,
    slow_rate: 1.0,
    slow_call: Duration::from_secs(60),
    minimum: 100,
    open: OpenWait::Fixed(Duration::from_secs(60)),
    probes: 10,
    lease: Duration::from_secs(60),
    half_open: HalfOpen::Probes,
    automatic: false,
    force: Force::None,
};

/// Polly v8's `CircuitBreakerStrategyOptions` defaults: the calls of the last 30 s (in 10
/// buckets), 100 of them before the share counts, opening at 10 % failed, 5 s open, one
/// probe, and another 5 s later if the first has not reported (Polly's half-open circuit
/// blocks until a break duration after each probe, `CircuitStateControllerTests.HalfOpen_EnsureBreakDuration`).
/// Polly counts no slow calls, so the slow rate is 1 and the threshold the longest.
pub const POLLY: Classic = Classic {
    record: Record::Time {
        span: Duration::from_secs(30),
        buckets: 10,
    },
    failure_rate: 0.1,
    slow_rate: 1.0,
    slow_call: Duration::MAX,
    minimum: 100,
    open: OpenWait::Fixed(Duration::from_secs(5)),
    probes: 1,
    lease: Duration::from_secs(5),
    half_open: HalfOpen::Probes,
    automatic: false,
    force: Force::None,
};

impl Default for Classic {
    /// [`CLASSIC`].
    fn default() -> Self {
        CLASSIC
    }
}
