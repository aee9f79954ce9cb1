//! How long a call takes: the service-time distributions, and each made ready to draw from.

use core::time::Duration;

use serde::Deserialize;

use crate::dice::{Dice, LogNormal};
use ironward::clock::nanos;

/// A service-time distribution.
///
/// ```toml
/// latency = { kind = "lognormal", median = "20ms", p99 = "80ms" }
/// latency = { kind = "exponential", mean = "20ms" }
/// latency = { kind = "uniform", min = "10ms", max = "30ms" }
/// latency = { kind = "constant", value = "20ms" }
/// latency = { kind = "bimodal", hit = "2ms", miss = "50ms", hits = 0.9 }
/// ```
///
/// Every field has a default: 20 ms for the median, mean and constant value, 80 ms for the
/// 99th percentile, 10 ms and 30 ms for the uniform bounds, and a cache in front of the
/// backend that answers 90 % of calls in 2 ms and sends the rest on for 50 ms.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LatencyModel {
    /// Always the same.
    Constant {
        /// The service time.
        #[serde(default = "ms20", deserialize_with = "crate::humane::read")]
        value: Duration,
    },
    /// Uniform between two bounds.
    Uniform {
        /// The shortest.
        #[serde(default = "ms10", deserialize_with = "crate::humane::read")]
        min: Duration,
        /// The longest.
        #[serde(default = "ms30", deserialize_with = "crate::humane::read")]
        max: Duration,
    },
    /// Exponential with a mean: memoryless, with a long tail.
    Exponential {
        /// The mean.
        #[serde(default = "ms20", deserialize_with = "crate::humane::read")]
        mean: Duration,
    },
    /// Log-normal, given by its median and 99th percentile: the shape measured service
    /// times usually have.
    #[serde(rename = "lognormal")]
    LogNormal {
        /// The median.
        #[serde(default = "ms20", deserialize_with = "crate::humane::read")]
        median: Duration,
        /// The 99th percentile (at least the median).
        #[serde(default = "ms80", deserialize_with = "crate::humane::read")]
        p99: Duration,
    },
    /// Two service times, a cache's hits and misses: `hit` with probability `hits`, `miss`
    /// otherwise. A mean hides the shape: the limit Little's law asks for is the mean's,
    /// while a tenth of the calls take many times as long.
    Bimodal {
        /// The service time of a hit.
        #[serde(default = "ms2", deserialize_with = "crate::humane::read")]
        hit: Duration,
        /// The service time of a miss.
        #[serde(default = "ms50", deserialize_with = "crate::humane::read")]
        miss: Duration,
        /// The share of calls that hit, 0 to 1 (NaN as 0).
        #[serde(default = "nine_tenths")]
        hits: f64,
    },
}

fn ms2() -> Duration {
    Duration::from_millis(2)
}
fn ms50() -> Duration {
    Duration::from_millis(50)
}
fn nine_tenths() -> f64 {
    0.9
}

fn ms10() -> Duration {
    Duration::from_millis(10)
}
fn ms20() -> Duration {
    Duration::from_millis(20)
}
fn ms30() -> Duration {
    Duration::from_millis(30)
}
fn ms80() -> Duration {
    Duration::from_millis(80)
}

/// The 99th percentile of the standard normal distribution.
const Z99: f64 = 2.326_347_874_040_841;

impl LatencyModel {
    /// The mean service time: what a worker spends on a call on average, so that `workers`
    /// workers complete `workers / mean` calls a second (Little's law).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward_sim::LatencyModel;
    ///
    /// let ms = Duration::from_millis;
    /// assert_eq!(LatencyModel::Uniform { min: ms(10), max: ms(30) }.mean(), ms(20));
    /// // A log-normal's mean is its median times e^(σ²/2).
    /// let lognormal = LatencyModel::LogNormal { median: ms(40), p99: ms(150) }.mean();
    /// assert!(lognormal > ms(46) && lognormal < ms(48));
    /// ```
    pub fn mean(&self) -> Duration {
        let nanos = match *self {
            Self::Constant { value } => nanos(value) as f64,
            Self::Uniform { min, max } => (nanos(min) as f64 + nanos(max) as f64) / 2.0,
            Self::Exponential { mean } => nanos(mean) as f64,
            Self::LogNormal { median, .. } => {
                let sigma = self.sigma();
                nanos(median) as f64 * libm::exp(sigma * sigma / 2.0)
            }
            Self::Bimodal { hit, miss, hits } => {
                let hits = share(hits);
                nanos(hit) as f64 * hits + nanos(miss) as f64 * (1.0 - hits)
            }
        };
        Duration::from_nanos(nanos as u64)
    }

    /// The 99th percentile of the service time: the latency an unloaded backend keeps 99 %
    /// of its calls under, which a limiter at the optimum should keep them near.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward_sim::LatencyModel;
    ///
    /// let ms = Duration::from_millis;
    /// let cache = LatencyModel::Bimodal { hit: ms(10), miss: ms(100), hits: 0.9 };
    /// assert_eq!(cache.p99(), ms(100), "a tenth of the calls miss");
    /// assert_eq!(LatencyModel::Uniform { min: ms(10), max: ms(110) }.p99(), ms(109));
    /// ```
    pub fn p99(&self) -> Duration {
        let nanos = match *self {
            Self::Constant { value } => nanos(value) as f64,
            Self::Uniform { min, max } => {
                let (low, high) = (nanos(min) as f64, nanos(max) as f64);
                low + 0.99 * (high - low).max(0.0)
            }
            Self::Exponential { mean } => nanos(mean) as f64 * libm::log(100.0),
            Self::LogNormal { median, p99 } => nanos(median.max(p99)) as f64,
            Self::Bimodal { hit, miss, hits } => match share(hits) >= 0.99 {
                true => nanos(hit) as f64,
                false => nanos(miss) as f64,
            },
        };
        Duration::from_nanos(nanos as u64)
    }

    /// The log-normal's σ: `ln(p99 / median) / z₀.₉₉`, 0 for the other shapes or when the
    /// 99th percentile is not above the median.
    fn sigma(&self) -> f64 {
        match *self {
            Self::LogNormal { median, p99 } => {
                let sigma = libm::log(nanos(p99) as f64 / nanos(median) as f64) / Z99;
                if sigma.is_finite() {
                    sigma.max(0.0)
                } else {
                    0.0
                }
            }
            _ => 0.0,
        }
    }

    /// The distribution made ready to draw from, service times in nanoseconds: a
    /// log-normal's quantile table is built here, once per run.
    pub(super) fn prepare(&self) -> Draw {
        match *self {
            Self::Constant { value } => Draw::Constant(nanos(value) as f64),
            Self::Uniform { min, max } => {
                let (low, high) = (nanos(min) as f64, nanos(max) as f64);
                Draw::Uniform {
                    low,
                    span: (high - low).max(0.0),
                }
            }
            Self::Exponential { mean } => Draw::Exponential(nanos(mean) as f64),
            Self::LogNormal { median, .. } => {
                Draw::LogNormal(LogNormal::new(nanos(median) as f64, self.sigma()))
            }
            Self::Bimodal { hit, miss, hits } => Draw::Bimodal {
                hit: nanos(hit) as f64,
                miss: nanos(miss) as f64,
                hits: share(hits),
            },
        }
    }
}

/// A [`LatencyModel`] ready to draw service times from, in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Draw {
    Constant(f64),
    Uniform { low: f64, span: f64 },
    Exponential(f64),
    LogNormal(LogNormal),
    Bimodal { hit: f64, miss: f64, hits: f64 },
}

/// A share in `[0, 1]`, NaN as 0.
fn share(v: f64) -> f64 {
    if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) }
}

impl Draw {
    /// One service time.
    #[inline(always)]
    pub(super) fn draw(&self, dice: &mut Dice) -> f64 {
        match self {
            Self::Constant(value) => *value,
            Self::Uniform { low, span } => low + dice.roll() * span,
            Self::Exponential(mean) => dice.exponential(*mean),
            Self::LogNormal(table) => table.draw(dice),
            Self::Bimodal { hit, miss, hits } => match dice.roll() < *hits {
                true => *hit,
                false => *miss,
            },
        }
    }
}
