//! Vegas: the queue a window's latency implies, against the least latency seen (the latency
//! with no queue), after TCP Vegas. It reacts to latency growth before anything fails, so
//! it suits a backend whose latency without load is stable; it is the default of Netflix's
//! limiters and of this crate's.

use super::Sample;
use super::sample::{Bounds, Scale, whole};
use crate::SplitMix64;
use crate::clock::nanos;
use crate::internal::float::ceil_nanos;

/// The constants of Vegas: a limit moved by the queue its latency implies.
///
/// Netflix concurrency-limits' `VegasLimit`, after TCP Vegas (Brakmo and Peterson, 1995).
/// With `L` the unrounded limit, `rtt` the window's latency and `noload` the least latency
/// since the last probe, each window:
///
/// 1. Every window counts towards a probe. Once `jitter × probe × L` windows have passed,
///    with `jitter` drawn from `[0.5, 1)` after each probe, the window's latency becomes
///    `noload` whatever it is, and the limit stays: a backend that has slowed for good gets
///    a new baseline instead of being read as queueing forever.
/// 2. The first latency, and any under `noload`, becomes `noload`; the limit stays.
/// 3. The queue is `⌈L × (1 − noload / rtt)⌉`: by Little's law, the calls of the limit
///    that were waiting rather than being served.
/// 4. A window with a drop decreases the limit. Otherwise, with fewer than half the limit in
///    flight (`2 × in_flight < L`) it stays: the limit held nothing back. Otherwise, with
///    `alpha`, `beta` and `threshold` taken at `⌊L⌋`: a queue at most `threshold` adds
///    `beta` (no queue, grow fast); under `alpha` it increases; over `beta` it decreases;
///    from `alpha` to `beta` it stays.
/// 5. The new limit is held to `min ..= max` and smoothed:
///    `L ← (1 − smoothing) × L + smoothing × new`.
///
/// The limit is `⌊L⌋`.
///
/// A policy is changed the Rust way: `Vegas { max: 200, ..VEGAS }`.
///
/// # Default
///
/// [`VEGAS`], the defaults of Netflix concurrency-limits' `VegasLimit.Builder`:
///
/// | field | value | meaning |
/// | --- | --- | --- |
/// | `initial` | 20 | the limit before any sample |
/// | `min` | 1 | the least limit (fixed at 1 in the reference) |
/// | `max` | 1000 | the greatest limit (`maxConcurrency`) |
/// | `smoothing` | 1.0 | how far each window moves the limit towards its new value |
/// | `alpha` | `Log10(3)` | a queue under this increases the limit |
/// | `beta` | `Log10(6)` | a queue over this decreases it; a short one adds this much |
/// | `threshold` | `Log10(1)` | a queue at most this is no queue |
/// | `increase` | `Log10(1)` | what an increase adds |
/// | `decrease` | `Scale(Log10(1))` | how a decrease cuts |
/// | `probe` | 30 | windows per unit of limit between probes (`probeMultiplier`) |
/// | `jitter` | 0 | which sequence of probe jitters is drawn (not in the reference) |
///
/// `Log10(n)` is `n × max(1, ⌊log10 L⌋)` (see [`Scale`]): at the default limit of 20,
/// `alpha` is 3, `beta` 6, and each step 1.
///
/// # Bad constants
///
/// Nothing panics. `smoothing` is held to `[0, 1]` and NaN is 0, which leaves the limit
/// where it is. A `probe` of 0 probes every window, so the limit never moves. `min` and
/// `max` are read as the [`Estimator`](super::Estimator) docs say: at least 1, and a `min`
/// over `max` is `max`. A [`Decrease::Ratio`] is held to `[0, 1]`, NaN as 1.
///
/// # Differences from the reference
///
/// - The probe jitter is not random: each estimator draws it from a SplitMix64 sequence
///   that starts from `jitter`, so a run is reproducible and the core stays free of a
///   random source. Give each limiter its own `jitter` (a random one) to keep many from
///   probing in step.
/// - The reference throws on a zero latency; here such a sample is ignored (nothing is
///   counted or remembered), which is the state the reference is left in.
/// - The functions of the limit the reference takes are [`Scale`]s and [`Decrease`]s, so that
///   the policy is a plain record.
/// - `min` is a constant (1 in the reference); a `min` or `initial` of 0 is read as 1.
/// - `smoothing` is held to `[0, 1]`, where the reference takes any value and one over 1
///   can carry the limit out of bounds.
/// - `2 × in_flight` and the count towards a probe do not overflow, where Java's `int`
///   wraps past 2³¹.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{Algorithm, Estimator, Sample, Scale, VEGAS, Vegas};
///
/// let ms = Duration::from_millis;
/// let vegas = Vegas { alpha: Scale::Fixed(3), beta: Scale::Fixed(6), initial: 10, ..VEGAS };
/// let mut estimator = Estimator::new(Algorithm::Vegas(vegas));
/// estimator.update(Sample { rtt: ms(10), in_flight: 10, dropped: false });
/// // 50 ms against 10 ms with no queue: 8 of the 10 calls were queueing, over beta.
/// assert_eq!(estimator.update(Sample { rtt: ms(50), in_flight: 11, dropped: false }), 9);
/// assert_eq!(Vegas::default(), VEGAS);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Vegas {
    /// The limit before any sample; updates that move the limit move it towards
    /// `min ..= max`.
    pub initial: u32,
    /// The least limit: at least 1, and at most `max`.
    pub min: u32,
    /// The greatest limit: at least 1.
    pub max: u32,
    /// How far each window moves the limit towards its new value: 0 (never) to 1 (all the
    /// way); NaN is 0.
    pub smoothing: f64,
    /// A queue under this (and over `threshold`) increases the limit by `increase`.
    pub alpha: Scale,
    /// A queue over this decreases the limit by `decrease`; a queue at most `threshold`
    /// grows the limit by this much.
    pub beta: Scale,
    /// A queue at most this counts as none.
    pub threshold: Scale,
    /// What an increase adds to the limit.
    pub increase: Scale,
    /// How a decrease, on a drop or a long queue, cuts the limit.
    pub decrease: Decrease,
    /// Windows between probes of the latency with no queue, per unit of limit, before the
    /// jitter: a probe comes after `jitter × probe × limit` windows.
    pub probe: u32,
    /// Which sequence of probe jitters the estimator draws: two estimators with the same
    /// value probe after the same counts of windows.
    pub jitter: u64,
}

/// Netflix concurrency-limits' `VegasLimit` defaults: from 20, up to 1000, unsmoothed, with
/// `alpha`, `beta` and `threshold` at 3, 6 and 1 times `⌊log10 limit⌋` and a probe every
/// 15 to 30 windows per unit of limit.
pub const VEGAS: Vegas = Vegas {
    initial: 20,
    min: 1,
    max: 1000,
    smoothing: 1.0,
    alpha: Scale::Log10(3),
    beta: Scale::Log10(6),
    threshold: Scale::Log10(1),
    increase: Scale::Log10(1),
    decrease: Decrease::Step(Scale::Log10(1)),
    probe: 30,
    jitter: 0,
};

impl Default for Vegas {
    fn default() -> Self {
        VEGAS
    }
}

impl Vegas {
    /// `smoothing` as the algorithm reads it: in `[0, 1]`, NaN as 0.
    fn smoothing(&self) -> f64 {
        if self.smoothing.is_nan() {
            0.0
        } else {
            self.smoothing.clamp(0.0, 1.0)
        }
    }
}

/// How Vegas cuts its limit on a drop or a long queue.
///
/// With `L` the unrounded limit:
///
/// | variant | new limit | Netflix |
/// | --- | --- | --- |
/// | `Step(s)` | `L − s.of(⌊L⌋)` | the default, `limit - Log10RootIntFunction((int) limit)` |
/// | `Ratio(r)` | `L × r`, `r` held to `[0, 1]` (NaN is 1) | `decreaseFunction(limit -> limit / 2)` is `Ratio(0.5)` |
///
/// # Examples
///
/// ```
/// use ironward::limit::{Decrease, Scale};
///
/// assert_eq!(Decrease::Step(Scale::Log10(1)).of(150.0), 148.0);
/// assert_eq!(Decrease::Ratio(0.5).of(150.0), 75.0);
/// assert_eq!(Decrease::Ratio(f64::NAN).of(150.0), 150.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Decrease {
    /// Less a count that follows the limit.
    Step(Scale),
    /// Times a fraction.
    Ratio(f64),
}

impl Decrease {
    /// The unrounded limit `limit` after one decrease (before the bounds).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::limit::{Decrease, Scale};
    ///
    /// assert_eq!(Decrease::Step(Scale::Fixed(5)).of(12.5), 7.5);
    /// ```
    pub fn of(self, limit: f64) -> f64 {
        match self {
            Self::Step(step) => limit - f64::from(step.of(limit as u32)),
            Self::Ratio(ratio) if ratio.is_nan() => limit,
            Self::Ratio(ratio) => limit * ratio.clamp(0.0, 1.0),
        }
    }
}

/// What Vegas remembers besides its whole limit.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct State {
    /// The unrounded limit, `estimatedLimit`.
    estimate: f64,
    /// The latency with no queue in nanoseconds, `rtt_noload`; 0 before the first.
    noload: u64,
    /// Windows since the last probe, `probeCount`.
    probes: u64,
    /// The jitter of the next probe, in `[0.5, 1)`.
    jitter: f64,
    /// The generator the jitters are drawn from.
    dice: SplitMix64,
}

impl State {
    /// Vegas starting from `limit`, with its first jitter drawn.
    pub(super) fn new(policy: &Vegas, limit: u32) -> Self {
        let mut dice = SplitMix64::new(policy.jitter);
        let jitter = jitter(&mut dice);
        Self {
            estimate: f64::from(limit),
            noload: 0,
            probes: 0,
            jitter,
            dice,
        }
    }

    /// The latency with no queue, in nanoseconds, once one has been seen.
    pub(super) fn noload(&self) -> Option<u64> {
        (self.noload > 0).then_some(self.noload)
    }

    /// Takes `rtt` nanoseconds, measured with no queue, as the latency with no queue; a zero
    /// `rtt` is ignored, as a zero sample is.
    pub(super) fn rebase(&mut self, rtt: u64) {
        if rtt > 0 {
            self.noload = rtt;
        }
    }

    /// Holds the unrounded limit to new bounds and returns the whole limit.
    pub(super) fn retune(&mut self, bounds: Bounds) -> u32 {
        self.estimate = bounds.clamp_f64(self.estimate);
        whole(self.estimate)
    }

    /// `VegasLimit._update`: the whole limit after one window's sample.
    pub(super) fn update(&mut self, policy: &Vegas, bounds: Bounds, sample: Sample) -> u32 {
        let rtt = nanos(sample.rtt);
        if rtt == 0 {
            return whole(self.estimate);
        }
        self.probes = self.probes.saturating_add(1);
        // `probeJitter * probeMultiplier * estimatedLimit <= probeCount`, in that order.
        if self.jitter * f64::from(policy.probe) * self.estimate <= self.probes as f64 {
            self.jitter = jitter(&mut self.dice);
            self.probes = 0;
            self.noload = rtt;
            return whole(self.estimate);
        }
        if self.noload == 0 || rtt < self.noload {
            self.noload = rtt;
            return whole(self.estimate);
        }

        let estimate = self.estimate;
        // `rtt >= noload` here, so the fraction is in [0, 1] and the queue is never negative.
        let queue = ceil_nanos(estimate * (1.0 - self.noload as f64 / rtt as f64));
        let new = if sample.dropped {
            policy.decrease.of(estimate)
        } else if ((2 * u64::from(sample.in_flight)) as f64) < estimate {
            return whole(estimate);
        } else {
            let floor = estimate as u32;
            let alpha = u128::from(policy.alpha.of(floor));
            let beta = policy.beta.of(floor);
            let threshold = u128::from(policy.threshold.of(floor));
            if queue <= threshold {
                estimate + f64::from(beta)
            } else if queue < alpha {
                estimate + f64::from(policy.increase.of(floor))
            } else if queue > u128::from(beta) {
                policy.decrease.of(estimate)
            } else {
                return whole(estimate);
            }
        };
        let new = bounds.clamp_f64(new);
        let smoothing = policy.smoothing();
        self.estimate = (1.0 - smoothing) * estimate + smoothing * new;
        whole(self.estimate)
    }
}

/// A probe jitter in `[0.5, 1)`: the reference's `nextDouble(0.5, 1)` from the next output.
///
/// The top 52 bits are spread over `[0, 0.5)` in steps of 2⁻⁵³, so that the sum with 0.5 is
/// exact and never rounds up to 1.
fn jitter(dice: &mut SplitMix64) -> f64 {
    const STEP: f64 = 1.0 / 9_007_199_254_740_992.0; // 2^-53
    0.5 + (dice.next_u64() >> 12) as f64 * STEP
}

#[cfg(test)]
mod tests;
