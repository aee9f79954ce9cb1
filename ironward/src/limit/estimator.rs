//! One algorithm's state, fed one sample per window: the limit it has reached and what it
//! remembers (Vegas' no-load latency and probe count, Gradient2's long average, Little's
//! recent latencies, Failsafe's averages and correlation windows).
//!
//! The algorithms read different signals. [`Aimd`] reads only drops and timeouts, so it
//! suits a backend whose latency says little about its load. [`Vegas`] compares each window's
//! latency with the least it has seen, the latency with no queue, and estimates the queue
//! from the difference; it suits a backend whose no-load latency is stable. [`Gradient2`]
//! compares each window's latency with a long average of them, so it follows a backend whose
//! latency drifts, at the cost of reacting later. [`Little`] reads the queue through Little's
//! law and moves by shares of the limit; [`Failsafe`] adds how throughput and latency follow
//! the calls in flight. The [`Algorithm`] docs say when to pick which.
//!
//! The pieces shared by the algorithms live here: the bounds every limit is held to
//! ([`Bounds`]) and the counts that follow the limit ([`Scale`]).

use core::time::Duration;

use super::sample::{Bounds, Sample};
use super::{Aimd, Failsafe, Gradient2, Little, Vegas};
use super::{aimd, failsafe, gradient2, little, vegas};
use crate::internal::float::{duration, round_nanos};

/// Which algorithm adapts the limit, with its constants.
///
/// | algorithm | reacts to | pick it when |
/// | --- | --- | --- |
/// | [`Aimd`] | drops and calls slower than its timeout | latency says little about load (a backend that refuses when full, calls whose cost varies widely), or as the simplest one to reason about |
/// | [`Vegas`] | each window's latency against the least seen, the latency with no queue, and drops | the backend's latency without load is stable and any growth over it is queueing: the default of Netflix's limiters |
/// | [`Gradient2`] | each window's latency against a long average of them, not drops (as Netflix's `Gradient2Limit`) | latency drifts over the day (caches warming, batches), where a minimum would be stale and shed too much |
/// | [`Little`] | each window's latency against a low percentile of recent windows' latencies, read through Little's law, and drops | the default ([`ADAPTIVE`](crate::ADAPTIVE)): the optimum may be small (a few calls) or far from the start, and it moves by shares of the limit, not by a few calls |
/// | [`Failsafe`] | each window's smoothed latency against a moving average of them, and how throughput and latency have followed the calls in flight over recent windows (failsafe-go's adaptive limiter) | failsafe-go's behaviour is wanted, or a backend whose overload shows as throughput that stops rising rather than as latency |
///
/// Every algorithm ignores growth while the limit was not what held the calls back (fewer
/// than half of it in flight; for Little, a window that never reached it; for Failsafe, a
/// limit over five times the calls in flight) and holds the limit within its `min` and
/// `max`.
///
/// # Examples
///
/// ```
/// use ironward::limit::{Algorithm, GRADIENT2, Gradient2};
///
/// let wide = Algorithm::Gradient2(Gradient2 { max: 1000, ..GRADIENT2 });
/// assert_ne!(wide, Algorithm::Gradient2(GRADIENT2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Algorithm {
    /// Additive increase, multiplicative decrease: Netflix's `AIMDLimit`.
    Aimd(Aimd),
    /// TCP Vegas' queue estimate: Netflix's `VegasLimit`.
    Vegas(Vegas),
    /// The gradient of the window's latency against a long average: Netflix's
    /// `Gradient2Limit`.
    Gradient2(Gradient2),
    /// Little's-law estimate of the backend's concurrency, with moves proportional to the
    /// limit: not in Netflix's library.
    Little(Little),
    /// failsafe-go's adaptive limiter: a moving average and two correlations.
    Failsafe(Failsafe),
}

impl Algorithm {
    /// The bounds the algorithm holds its limit to.
    fn bounds(&self) -> Bounds {
        match self {
            Self::Aimd(aimd) => Bounds::new(aimd.min, aimd.max),
            Self::Vegas(vegas) => Bounds::new(vegas.min, vegas.max),
            Self::Gradient2(gradient) => Bounds::new(gradient.min, gradient.max),
            Self::Little(little) => Bounds::new(little.min, little.max),
            Self::Failsafe(failsafe) => Bounds::new(failsafe.min, failsafe.max),
        }
    }

    /// The limit before any sample.
    fn initial(&self) -> u32 {
        match self {
            Self::Aimd(aimd) => aimd.initial,
            Self::Vegas(vegas) => vegas.initial,
            Self::Gradient2(gradient) => gradient.initial,
            Self::Little(little) => little.initial,
            Self::Failsafe(failsafe) => failsafe.initial,
        }
    }
}

/// An algorithm's state: the limit it has reached and what it remembers.
///
/// This is Netflix concurrency-limits' `Limit`: [`update`](Estimator::update) is its
/// `onSample` and [`limit`](Estimator::limit) its `getLimit`, deciding as the reference does
/// on every sample (the algorithm's docs list where and why they differ). It has no clock:
/// the algorithms count samples, not time, so one sample per window is what paces them.
///
/// The limit stays within the algorithm's `min ..= max` once it is there. An initial limit
/// outside them is kept, as the reference keeps it, until samples move it in: Aimd's first
/// update holds it to them, while Vegas and Gradient2 move their unrounded limit towards
/// them only on updates that change it (and only part of the way, with smoothing under 1).
/// An initial limit of 0 is read as 1: a limit of 0 admits nothing, so no sample would
/// ever come to raise it.
///
/// `Clone` copies the whole state; the copies then evolve independently.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{Algorithm, Estimator, Sample, VEGAS};
///
/// let ms = Duration::from_millis;
/// let mut estimator = Estimator::new(Algorithm::Vegas(VEGAS));
/// assert_eq!(estimator.limit(), 20);
/// // The first sample only measures the latency with no queue.
/// estimator.update(Sample { rtt: ms(10), in_flight: 20, dropped: false });
/// // No queue at that latency, and the limit in use: grow by Vegas' beta, 6 × log10(20).
/// assert_eq!(estimator.update(Sample { rtt: ms(10), in_flight: 20, dropped: false }), 26);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Estimator {
    algorithm: Algorithm,
    limit: u32,
    memory: Memory,
}

/// What an algorithm remembers besides its limit.
// Little's latencies (256 bytes) and Failsafe's windows (1 KiB) are held inline: the core
// has no allocator to box them with, and a limiter already holds its sampler's 8 KiB of
// latencies inline.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
enum Memory {
    /// Aimd remembers nothing: the limit is its whole state.
    Aimd,
    Vegas(vegas::State),
    Gradient2(gradient2::State),
    Little(little::State),
    Failsafe(failsafe::State),
}

impl Memory {
    /// Fresh memory for `algorithm`, starting from `limit`.
    fn new(algorithm: &Algorithm, limit: u32) -> Self {
        match algorithm {
            Algorithm::Aimd(_) => Self::Aimd,
            Algorithm::Vegas(vegas) => Self::Vegas(vegas::State::new(vegas, limit)),
            Algorithm::Gradient2(_) => Self::Gradient2(gradient2::State::new(limit)),
            Algorithm::Little(_) => Self::Little(little::State::new(limit)),
            Algorithm::Failsafe(_) => Self::Failsafe(failsafe::State::new(limit)),
        }
    }
}

impl Estimator {
    /// An estimator at the algorithm's initial limit (0 read as 1), remembering nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::limit::{AIMD, Aimd, Algorithm, Estimator};
    ///
    /// assert_eq!(Estimator::new(Algorithm::Aimd(AIMD)).limit(), 20);
    /// // An initial limit over the maximum is kept until the first sample.
    /// let high = Aimd { initial: 500, ..AIMD };
    /// assert_eq!(Estimator::new(Algorithm::Aimd(high)).limit(), 500);
    /// ```
    pub fn new(algorithm: Algorithm) -> Self {
        let limit = algorithm.initial().max(1);
        Self {
            memory: Memory::new(&algorithm, limit),
            algorithm,
            limit,
        }
    }

    /// The limit now: how many calls may be in flight at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::limit::{Algorithm, Estimator, GRADIENT2};
    ///
    /// assert_eq!(Estimator::new(Algorithm::Gradient2(GRADIENT2)).limit(), 20);
    /// ```
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Feeds one window's sample and returns the new limit.
    ///
    /// Any sample is taken: a zero `rtt`, one that saturates at `u64::MAX` nanoseconds, and
    /// an `in_flight` of 0 or `u32::MAX` each decide as the algorithm's docs say, without
    /// overflow, and the limit stays within the bounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{AIMD, Algorithm, Estimator, Sample};
    ///
    /// let mut estimator = Estimator::new(Algorithm::Aimd(AIMD));
    /// let ok = Sample { rtt: Duration::from_millis(3), in_flight: 20, dropped: false };
    /// assert_eq!(estimator.update(ok), 21);
    /// // A drop cuts the limit by the backoff, 0.9, truncated: 18, then held to the min 20.
    /// assert_eq!(estimator.update(Sample { dropped: true, ..ok }), 20);
    /// ```
    pub fn update(&mut self, sample: Sample) -> u32 {
        let bounds = self.algorithm.bounds();
        self.limit = match (&self.algorithm, &mut self.memory) {
            (Algorithm::Aimd(policy), _) => aimd::update(policy, bounds, self.limit, sample),
            (Algorithm::Vegas(policy), Memory::Vegas(state)) => {
                state.update(policy, bounds, sample)
            }
            (Algorithm::Gradient2(policy), Memory::Gradient2(state)) => {
                state.update(policy, bounds, sample)
            }
            (Algorithm::Little(policy), Memory::Little(state)) => {
                state.update(policy, bounds, sample)
            }
            (Algorithm::Failsafe(policy), Memory::Failsafe(state)) => {
                state.update(policy, bounds, sample)
            }
            // `new` and `retune` keep the memory the algorithm's own; were it not, the
            // algorithm would start afresh from the limit reached.
            (algorithm, memory) => {
                *memory = Memory::new(algorithm, self.limit);
                self.limit
            }
        };
        self.limit
    }

    /// The algorithm and its constants.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::limit::{AIMD, Algorithm, Estimator};
    ///
    /// let estimator = Estimator::new(Algorithm::Aimd(AIMD));
    /// assert_eq!(estimator.algorithm(), &Algorithm::Aimd(AIMD));
    /// ```
    pub fn algorithm(&self) -> &Algorithm {
        &self.algorithm
    }

    /// The latency the algorithm measures each window against: Vegas' latency with no
    /// queue, Gradient2's and Failsafe's long averages (rounded to the nanosecond), Little's
    /// low percentile of recent windows' latencies; `None` for Aimd, and before the first
    /// sample.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{Algorithm, Estimator, Sample, VEGAS};
    ///
    /// let mut estimator = Estimator::new(Algorithm::Vegas(VEGAS));
    /// assert_eq!(estimator.baseline(), None);
    /// let rtt = Duration::from_millis(8);
    /// estimator.update(Sample { rtt, in_flight: 1, dropped: false });
    /// assert_eq!(estimator.baseline(), Some(rtt));
    /// ```
    pub fn baseline(&self) -> Option<Duration> {
        match &self.memory {
            Memory::Aimd => None,
            Memory::Vegas(state) => state.noload().map(Duration::from_nanos),
            Memory::Gradient2(state) => state.long().map(|n| duration(round_nanos(n))),
            Memory::Failsafe(state) => state.baseline().map(|n| duration(round_nanos(n))),
            Memory::Little(state) => match &self.algorithm {
                Algorithm::Little(policy) => state.baseline(policy).map(Duration::from_nanos),
                _ => None,
            },
        }
    }

    /// The room a [`Limiter`](crate::Limiter)'s probe holds admissions to: half the limit,
    /// at least 1, or what [`Little`](super::Little) asks (one call before its first probe,
    /// a quarter of the limit while its probes keep finding a queue).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::limit::{Algorithm, Estimator, LITTLE, VEGAS};
    ///
    /// assert_eq!(Estimator::new(Algorithm::Vegas(VEGAS)).probe_room(), 10);
    /// assert_eq!(Estimator::new(Algorithm::Little(LITTLE)).probe_room(), 1);
    /// ```
    pub fn probe_room(&self) -> u32 {
        match &self.memory {
            Memory::Little(state) => state.probe_room(self.limit),
            _ => (self.limit / 2).max(1),
        }
    }

    /// Whether the algorithm asks for its next probe at once (a limiter's first) or one
    /// window after the last, rather than [`Adaptive::probe`](crate::Adaptive::probe) after
    /// it: only [`Little`](super::Little) does, before its first probe and while its probes
    /// keep finding a queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::limit::{Algorithm, Estimator, LITTLE, VEGAS};
    ///
    /// assert!(!Estimator::new(Algorithm::Vegas(VEGAS)).probe_soon());
    /// assert!(Estimator::new(Algorithm::Little(LITTLE)).probe_soon());
    /// ```
    pub fn probe_soon(&self) -> bool {
        match &self.memory {
            Memory::Little(state) => state.probe_soon(),
            _ => false,
        }
    }

    /// Takes `rtt`, a latency measured with no queue, as the baseline the algorithm measures
    /// against (see [`baseline`](Estimator::baseline)): Vegas' latency with no queue,
    /// Gradient2's and Failsafe's long averages; Little remembers it as one more window's latency, of which its
    /// baseline is a percentile. Aimd keeps no baseline and is unchanged; a zero `rtt`
    /// changes nothing.
    ///
    /// Neither algorithm can tell a backend that has slowed for good from a queue: Vegas
    /// keeps the least latency it has seen, and Gradient2's long average follows the queue
    /// up. A [`Limiter`](crate::Limiter) with [`Adaptive::probe`](crate::Adaptive::probe)
    /// set drains its calls now and then to measure the latency with no queue, and hands it
    /// here.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{Algorithm, Estimator, Sample, VEGAS};
    ///
    /// let ms = Duration::from_millis;
    /// let mut estimator = Estimator::new(Algorithm::Vegas(VEGAS));
    /// estimator.update(Sample { rtt: ms(20), in_flight: 20, dropped: false });
    /// // The backend has slowed to 60 ms with no queue: Vegas alone would keep 20 ms.
    /// estimator.rebase(ms(60));
    /// assert_eq!(estimator.baseline(), Some(ms(60)));
    /// ```
    pub fn rebase(&mut self, rtt: Duration) {
        let rtt = crate::clock::nanos(rtt);
        if rtt == 0 {
            return;
        }
        match &mut self.memory {
            Memory::Aimd => {}
            Memory::Vegas(state) => state.rebase(rtt),
            Memory::Gradient2(state) => state.rebase(rtt as f64),
            Memory::Failsafe(state) => state.rebase(rtt as f64),
            Memory::Little(state) => {
                if let Algorithm::Little(policy) = &self.algorithm {
                    state.rebase(policy, rtt);
                }
            }
        }
    }

    /// Changes the algorithm or its constants in place.
    ///
    /// The limit reached is kept, held to the new bounds. With the same algorithm, what it
    /// remembers is kept too: Vegas' latency with no queue, its count towards the next probe
    /// and its probe jitters; Gradient2's long average and its unrounded limit. A change of
    /// algorithm starts the new one from the limit reached, remembering nothing else, as
    /// [`new`](Estimator::new) would with that limit as the initial one.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{AIMD, Aimd, Algorithm, Estimator, Sample};
    ///
    /// let mut estimator = Estimator::new(Algorithm::Aimd(AIMD));
    /// let ok = Sample { rtt: Duration::from_millis(3), in_flight: 40, dropped: false };
    /// for _ in 0..10 {
    ///     estimator.update(ok);
    /// }
    /// assert_eq!(estimator.limit(), 30);
    /// estimator.retune(Algorithm::Aimd(Aimd { max: 25, ..AIMD }));
    /// assert_eq!(estimator.limit(), 25);
    /// ```
    pub fn retune(&mut self, algorithm: Algorithm) {
        let bounds = algorithm.bounds();
        self.limit = bounds.clamp(self.limit);
        match (&algorithm, &mut self.memory) {
            (Algorithm::Aimd(_), Memory::Aimd) => {}
            (Algorithm::Vegas(_), Memory::Vegas(state)) => self.limit = state.retune(bounds),
            (Algorithm::Gradient2(_), Memory::Gradient2(state)) => {
                self.limit = state.retune(bounds);
            }
            (Algorithm::Little(_), Memory::Little(state)) => self.limit = state.retune(bounds),
            (Algorithm::Failsafe(_), Memory::Failsafe(state)) => {
                self.limit = state.retune(bounds);
            }
            (_, memory) => *memory = Memory::new(&algorithm, self.limit),
        }
        self.algorithm = algorithm;
    }
}

#[cfg(test)]
mod tests;
