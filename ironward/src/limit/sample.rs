//! What every algorithm is given and held to: a window's [`Sample`], the bounds of the limit,
//! and the counts that follow the limit ([`Scale`]).

use core::time::Duration;

/// What a sampling window measured: what Netflix's `Limit.onSample` is given.
///
/// A [`Sampler`](super::Sampler) makes one from the calls that finished in its window; a
/// caller who samples in its own way may make them directly.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{AIMD, Algorithm, Estimator, Sample};
///
/// let mut estimator = Estimator::new(Algorithm::Aimd(AIMD));
/// let busy = Sample { rtt: Duration::from_millis(5), in_flight: 15, dropped: false };
/// assert_eq!(estimator.update(busy), 21);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// The window's latency: its average or percentile of the calls' round trips. Held in
    /// whole nanoseconds, saturating at `u64::MAX` (about 584 years).
    pub rtt: Duration,
    /// The most calls that were in flight when a call of the window started.
    pub in_flight: u32,
    /// Whether a call of the window was dropped (refused or timed out by the backend).
    pub dropped: bool,
}

/// The bounds an algorithm holds its limit to, read from its `min` and `max`.
///
/// A limit of 0 admits nothing, so no call finishes to raise it again: `max` is at least 1
/// and `min` at least 1. A `min` over `max` is read as `max`, the order of `AIMDLimit`'s
/// clamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Bounds {
    pub(super) lo: u32,
    pub(super) hi: u32,
}

impl Bounds {
    pub(super) fn new(min: u32, max: u32) -> Self {
        let hi = max.max(1);
        Self {
            lo: min.clamp(1, hi),
            hi,
        }
    }

    /// `limit` held to the bounds.
    pub(super) fn clamp(self, limit: u32) -> u32 {
        limit.clamp(self.lo, self.hi)
    }

    /// An unrounded limit held to the bounds: `max(lo, min(hi, x))`, the order of
    /// `Gradient2Limit` and `VegasLimit` (the same as the other while `lo <= hi`).
    pub(super) fn clamp_f64(self, x: f64) -> f64 {
        x.min(f64::from(self.hi)).max(f64::from(self.lo))
    }
}

/// Latencies averaged plainly before the exponential average takes over: the warm-up
/// Netflix's `Gradient2Limit` gives its `ExpAvgMeasurement`, and failsafe-go's adaptive
/// limiter its `MovingAverage`s and its correlation windows.
pub(super) const WARMUP: u32 = 10;

/// Netflix's `ExpAvgMeasurement`, failsafe-go's `MovingAverage`: a plain average of the
/// first [`WARMUP`] values, an exponential one after.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Average {
    pub(super) value: f64,
    sum: f64,
    count: u32,
}

impl Average {
    pub(super) const fn new() -> Self {
        Self {
            value: 0.0,
            sum: 0.0,
            count: 0,
        }
    }

    /// An average at `value`, warmed up: it moves from there as from any other value.
    pub(super) fn warm(value: f64) -> Self {
        Self {
            value,
            sum: value * f64::from(WARMUP),
            count: WARMUP,
        }
    }

    /// The average, once a value has been added.
    pub(super) fn get(&self) -> Option<f64> {
        (self.count > 0).then_some(self.value)
    }

    /// Adds `sample` and returns the average, `ExpAvgMeasurement.add`.
    pub(super) fn add(&mut self, sample: f64, window: u32) -> f64 {
        if self.count < WARMUP {
            self.count += 1;
            self.sum += sample;
            self.value = self.sum / f64::from(self.count);
        } else {
            // `2.0 / (window + 1)`, with the sum in floats so that `u32::MAX` cannot wrap.
            let factor = 2.0 / (f64::from(window.max(1)) + 1.0);
            self.value = self.value * (1.0 - factor) + sample * factor;
        }
        self.value
    }
}

/// An unrounded limit as the whole limit it allows: truncated, as Java's `(int)` cast does
/// (saturating, NaN as 0), and at least 1, since a limit of 0 would admit nothing ever again.
pub(super) fn whole(x: f64) -> u32 {
    (x as u32).max(1)
}

/// A count that follows the limit: Vegas' thresholds and steps, Gradient2's queue allowance.
///
/// Netflix concurrency-limits takes a function of the limit for each of these; the functions
/// its presets and its documentation use are these three, so that a policy stays a plain
/// `Copy` record that can be compared and written to a config file. With `limit` the whole
/// limit now:
///
/// | variant | count | Netflix |
/// | --- | --- | --- |
/// | `Fixed(n)` | `n` | a constant, as `VegasLimit.Builder.alpha(3)` |
/// | `Log10(n)` | `n × max(1, ⌊log10 limit⌋)` | `n * Log10RootIntFunction`; 1 up to a limit of 99, 2 up to 999 |
/// | `Sqrt(n)` | `max(n, max(1, ⌊√limit⌋))` | `SquareRootFunction.create(n)` |
///
/// The logarithm and the root are worked out exactly in integers (the reference's tables and
/// its `Math.log10` and `Math.sqrt` agree with them for every `int`); a product past
/// `u32::MAX` saturates.
///
/// # Examples
///
/// ```
/// use ironward::limit::Scale;
///
/// assert_eq!(Scale::Log10(3).of(20), 3);
/// assert_eq!(Scale::Log10(3).of(10_000), 12);
/// assert_eq!(Scale::Sqrt(4).of(2500), 50);
/// assert_eq!(Scale::Fixed(4).of(2500), 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Scale {
    /// The same count whatever the limit.
    Fixed(u32),
    /// The count times the limit's whole base-10 logarithm, at least 1: slow growth that
    /// keeps large limits from swinging by a fixed few.
    Log10(u32),
    /// The limit's whole square root, at least 1 and at least the count.
    Sqrt(u32),
}

impl Scale {
    /// The count at a whole limit of `limit`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::limit::Scale;
    ///
    /// // Netflix's `Log10RootIntFunction` is 1 at 0 and under 100.
    /// assert_eq!(Scale::Log10(1).of(0), 1);
    /// assert_eq!(Scale::Log10(1).of(100), 2);
    /// ```
    pub fn of(self, limit: u32) -> u32 {
        match self {
            Self::Fixed(n) => n,
            Self::Log10(n) => n.saturating_mul(limit.checked_ilog10().unwrap_or(0).max(1)),
            Self::Sqrt(n) => n.max(limit.isqrt().max(1)),
        }
    }
}
