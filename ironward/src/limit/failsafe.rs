//! Failsafe: failsafe-go's adaptive limiter (its `adaptivelimiter` package), each window's
//! smoothed latency against a moving average of them, with two correlations over recent
//! windows that stop the limit drifting up in an overload the latency alone does not show.

use core::time::Duration;

use super::sample::{Average, Bounds, Scale, WARMUP, whole};
use super::{Latency, Sample, Sampling};
use crate::clock::nanos;
use crate::internal::constant::constant;
use crate::internal::float::sqrt;

/// The constants of failsafe-go's adaptive limiter, its `adaptivelimiter.NewBuilder`
/// defaults in [`FAILSAFE`].
///
/// With `L` the limit, `N` the window's calls in flight (the sample's `in_flight`) and
/// `step` = `⌊log10 L⌋`, at least 1 (failsafe-go's `Log10Func`), each window:
///
/// 1. A zero latency is ignored. The window's latency is smoothed: the median of the last
///    five windows' (each window's own until five have come), then averaged over five
///    windows, plainly for the first ten.
/// 2. The baseline is the average of the smoothed latencies over `baseline` windows
///    (plainly for the first ten); the queue is `⌈L × (1 − baseline / smoothed)⌉` calls.
/// 3. Over the last `correlation` windows: the correlation of `N` with the throughput
///    `N / smoothed`, that throughput's coefficient of variation, and the correlation of `N`
///    with the smoothed latency. Each is 0 before ten windows, and a correlation is 0 while
///    either side varies by under 1 %.
/// 4. The limit falls by `step` on a queue over `6 × step`; or, in a window that reached the
///    limit, when the throughput falls as `N` rises (correlation under 0), or when the
///    latency rises with `N` (over 0.5) while the throughput barely does (correlation under
///    0.3, or variation under 0.2). It grows by `step` on a queue under `3 × step`, and
///    holds otherwise.
/// 5. The limit is at most `max_factor × N`: from above it falls by `step` a window, and a
///    rise stops there.
/// 6. The limit is held to `min ..= max`; the limit is `⌊L⌋`.
///
/// failsafe-go samples windows of 1 s to 30 s holding at least 50 calls and reads their
/// 90th percentile: [`FAILSAFE_SAMPLING`] is that, and has no probe. Where this differs from
/// failsafe-go:
///
/// - "A window that reached the limit" stands for failsafe-go's "the limiter is full as the
///   window closes": a [`Sample`] carries the most calls in flight, not the count at its end.
/// - A dropped call's latency counts in its window (failsafe-go's `Drop` leaves it out), and
///   a drop changes nothing else, as in failsafe-go.
/// - A window with a zero latency, or with no call in flight, counts in no correlation
///   (failsafe-go adds a latency of 0 and divides by it).
/// - The max limit's stabilization window, decay and function (failsafe-go's
///   `WithMaxLimitStabilizationWindow`, `WithMaxLimitFactorDecay` and `WithMaxLimitFunc`,
///   all off by default) are not offered.
///
/// # Bad constants
///
/// Nothing panics. `max_factor` is held to `[1, 1000]` (NaN 1000, the cap that refuses
/// least), `baseline` to at least 1 and `correlation` to `2 ..= 64`. `min` and `max` are read
/// as the [`Estimator`](super::Estimator) docs say.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{Algorithm, Estimator, FAILSAFE, Sample};
///
/// let ms = Duration::from_millis;
/// let mut estimator = Estimator::new(Algorithm::Failsafe(FAILSAFE));
/// // No queue against the baseline (the first window is its own): grow by 1.
/// assert_eq!(estimator.update(Sample { rtt: ms(10), in_flight: 20, dropped: false }), 21);
/// // At most five times the calls in flight.
/// assert_eq!(estimator.update(Sample { rtt: ms(10), in_flight: 2, dropped: false }), 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Failsafe {
    /// The limit before any sample.
    pub initial: u32,
    /// The least limit: at least 1, and at most `max`.
    pub min: u32,
    /// The greatest limit: at least 1.
    pub max: u32,
    /// The most the limit may be, as a multiple of the window's calls in flight:
    /// `[1, 1000]`.
    pub max_factor: f64,
    /// How many windows the baseline average spans: at least 1.
    pub baseline: u32,
    /// How many windows the correlations read: `2 ..= 64`.
    pub correlation: u32,
}

/// failsafe-go's defaults: from 20 within `1 ..= 200`, at most 5× the calls in flight, a
/// baseline over 10 windows, correlations over 50.
pub const FAILSAFE: Failsafe = Failsafe {
    initial: 20,
    min: 1,
    max: 200,
    max_factor: 5.0,
    baseline: 10,
    correlation: 50,
};

/// failsafe-go's recent window: 1 s, or twice the fastest call up to 30 s, holding at least
/// 50 calls, read at its 90th percentile, no call too fast to count.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{ADAPTIVE, Adaptive};
/// use ironward::limit::{Algorithm, FAILSAFE, FAILSAFE_SAMPLING};
///
/// // failsafe-go's adaptive limiter, as failsafe-go runs it: no probe.
/// let failsafe = Adaptive {
///     algorithm: Algorithm::Failsafe(FAILSAFE),
///     sampling: FAILSAFE_SAMPLING,
///     probe: Duration::ZERO,
///     ..ADAPTIVE
/// };
/// assert_eq!(failsafe.sampling.size, 50);
/// ```
pub const FAILSAFE_SAMPLING: Sampling = Sampling {
    size: 50,
    min_window: Duration::from_secs(1),
    max_window: Duration::from_secs(30),
    min_rtt: Duration::ZERO,
    latency: Latency::Percentile(0.9),
    fill: true,
};

impl Default for Failsafe {
    fn default() -> Self {
        FAILSAFE
    }
}

impl Failsafe {
    /// `max_factor` as the algorithm reads it.
    fn max_factor(&self) -> f64 {
        constant(self.max_factor, 1.0, 1000.0, 1000.0)
    }

    /// `correlation` as the algorithm reads it.
    fn correlation(&self) -> usize {
        (self.correlation as usize).clamp(2, WINDOWS)
    }
}

/// How many windows' latencies the median is taken over.
const MEDIAN: usize = 5;

/// How many windows the smoothed latency is averaged over.
const SMOOTHING: u32 = 5;

/// The most windows a correlation reads.
const WINDOWS: usize = 64;

/// What Failsafe remembers besides its whole limit.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct State {
    /// The unrounded limit.
    estimate: f64,
    /// The last windows' latencies in nanoseconds, for the median, and how many have come.
    latencies: [f64; MEDIAN],
    heard: usize,
    /// The median latencies averaged, and the smoothed latencies averaged: the baseline.
    smoothed: Average,
    baseline: Average,
    /// The last windows' calls in flight and smoothed latencies, oldest overwritten first;
    /// how many are held and where the next goes.
    windows: [(f64, f64); WINDOWS],
    held: usize,
    next: usize,
}

/// A series' mean and variance (as a population), or `None` under two values or at a mean
/// of 0, where failsafe-go reads nothing.
fn spread(values: impl Iterator<Item = f64> + Clone) -> Option<(f64, f64)> {
    let n = values.clone().count() as f64;
    let mean = values.clone().sum::<f64>() / n;
    let variance = values.map(|v| v * v).sum::<f64>() / n - mean * mean;
    (n >= 2.0 && mean != 0.0 && variance >= 0.0).then_some((mean, variance))
}

/// The correlation of the calls in flight with `y` of each window, and the coefficient of
/// variation of `y` (failsafe-go's `CorrelationWindow`): both 0 under `warmup` windows or
/// where either series has no spread to read, the correlation 0 while either varies by
/// under 1 %.
fn correlate(windows: &[(f64, f64)], y: impl Fn((f64, f64)) -> f64, warmup: usize) -> (f64, f64) {
    let xs = windows.iter().map(|w| w.0);
    let ys = windows.iter().map(|&w| y(w));
    let (Some((mx, vx)), Some((my, vy))) = (spread(xs.clone()), spread(ys.clone())) else {
        return (0.0, 0.0);
    };
    if windows.len() < warmup {
        return (0.0, 0.0);
    }
    let (sx, sy) = (sqrt(vx), sqrt(vy));
    let cv = sy / my;
    if sx / mx < 0.01 || cv < 0.01 {
        return (0.0, cv);
    }
    let xy = xs.zip(ys).map(|(a, b)| a * b).sum::<f64>() / windows.len() as f64;
    ((xy - mx * my) / (sx * sy), cv)
}

impl State {
    /// Failsafe starting from `limit`, with no latency seen.
    pub(super) fn new(limit: u32) -> Self {
        Self {
            estimate: f64::from(limit),
            latencies: [0.0; MEDIAN],
            heard: 0,
            smoothed: Average::new(),
            baseline: Average::new(),
            windows: [(0.0, 0.0); WINDOWS],
            held: 0,
            next: 0,
        }
    }

    /// The baseline average in nanoseconds, once a latency has been seen.
    pub(super) fn baseline(&self) -> Option<f64> {
        self.baseline.get()
    }

    /// Takes `rtt` nanoseconds, measured with no queue, as the baseline average, warmed up.
    pub(super) fn rebase(&mut self, rtt: f64) {
        self.baseline = Average::warm(rtt);
    }

    /// Holds the unrounded limit to new bounds and returns the whole limit.
    pub(super) fn retune(&mut self, bounds: Bounds) -> u32 {
        self.estimate = bounds.clamp_f64(self.estimate);
        whole(self.estimate)
    }

    /// The median of the last [`MEDIAN`] windows' latencies, `rtt` included; `rtt` itself
    /// until that many have come (failsafe-go's `MovingMedian`).
    fn median(&mut self, rtt: f64) -> f64 {
        self.latencies[self.heard % MEDIAN] = rtt;
        self.heard = self.heard.saturating_add(1);
        if self.heard < MEDIAN {
            return rtt;
        }
        let mut sorted = self.latencies;
        sorted.sort_unstable_by(f64::total_cmp);
        sorted[MEDIAN / 2]
    }

    /// The correlation of the calls in flight with the throughput, the throughput's
    /// coefficient of variation and the correlation of the calls in flight with the latency,
    /// over the windows held.
    fn correlations(&self) -> (f64, f64, f64) {
        let windows = &self.windows[..self.held];
        // failsafe-go's correlation windows warm up as its moving averages do.
        let warmup = WARMUP as usize;
        let (rising, variation) = correlate(windows, |(n, rtt)| n / (rtt / 1e9), warmup);
        let (slowing, _) = correlate(windows, |(_, rtt)| rtt, warmup);
        (rising, variation, slowing)
    }

    /// The whole limit after one window's sample.
    pub(super) fn update(&mut self, policy: &Failsafe, bounds: Bounds, sample: Sample) -> u32 {
        let rtt = nanos(sample.rtt) as f64;
        if rtt == 0.0 {
            return whole(self.estimate);
        }
        let median = self.median(rtt);
        let smoothed = self.smoothed.add(median, SMOOTHING);
        let baseline = self.baseline.add(smoothed, policy.baseline.max(1));
        let limit = self.estimate;
        let queue = limit * (1.0 - baseline / smoothed);
        let flying = f64::from(sample.in_flight);
        if sample.in_flight > 0 {
            let memory = policy.correlation();
            if self.held > memory {
                self.held = 0;
                self.next = 0;
            }
            self.windows[self.next] = (flying, smoothed);
            self.next = (self.next + 1) % memory;
            self.held = (self.held + 1).min(memory);
        }
        let (rising, variation, slowing) = self.correlations();
        let whole_limit = whole(limit);
        let step = f64::from(Scale::Log10(1).of(whole_limit));
        let full = sample.in_flight >= whole_limit;
        // `⌈queue⌉ > 6 step` and `⌈queue⌉ < 3 step`, the steps being whole.
        let overload = rising < 0.0 || (slowing > 0.5 && (rising < 0.3 || variation < 0.2));
        let new = if queue > 6.0 * step || (full && overload) {
            limit - step
        } else if queue <= 3.0 * step - 1.0 {
            limit + step
        } else {
            limit
        };
        let cap = flying * policy.max_factor();
        let new = match new > cap {
            true if limit > cap => limit - step,
            true => cap,
            false => new,
        };
        self.estimate = bounds.clamp_f64(new);
        whole(self.estimate)
    }
}

#[cfg(test)]
mod tests;
