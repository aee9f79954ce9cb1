//! TRANSLITERATIONS, test code only: Netflix concurrency-limits' `AIMDLimit`,
//! `VegasLimit`, `Gradient2Limit`, `ExpAvgMeasurement`, `Log10RootIntFunction`,
//! `SquareRootFunction`, `WindowedLimit`, `ImmutableAverageSampleWindow` and
//! `ImmutablePercentileSampleWindow`, written as close to the Java as Rust allows, to serve
//! as the oracle of the differential tests. They are never shipped.
//!
//! Java's types are kept (`int` as `i32`, `long` as `i64`, `double` as `f64`), with Java's
//! wrapping integer arithmetic, its saturating `(int)` cast (Rust's `as` casts from floats
//! behave alike) and its NaN-propagating `Math.min` and `Math.max`. An exception becomes an
//! `Err`, after which the object is left as the exception leaves it. The one replacement is
//! `ThreadLocalRandom.current().nextDouble(0.5, 1)` in `VegasLimit`, which the estimator
//! draws from SplitMix64 and so must the oracle.

/// Java's `Math.min(double, double)`: NaN if either is.
fn math_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// Java's `Math.max(double, double)`: NaN if either is.
fn math_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// `Limit`: what `WindowedLimit` delegates to.
pub(crate) trait Limit {
    fn on_sample(
        &mut self,
        start_time: i64,
        rtt: i64,
        inflight: i32,
        did_drop: bool,
    ) -> Result<(), String>;
    fn get_limit(&self) -> i32;
}

// ---------------------------------------------------------------------------------------
// AIMDLimit

pub(crate) struct AimdLimit {
    pub(crate) limit: i32,
    pub(crate) backoff_ratio: f64,
    pub(crate) timeout: i64,
    pub(crate) min_limit: i32,
    pub(crate) max_limit: i32,
}

impl AimdLimit {
    fn _update(&self, _start_time: i64, rtt: i64, inflight: i32, did_drop: bool) -> i32 {
        let mut current_limit = self.limit;

        if did_drop || rtt > self.timeout {
            current_limit = (f64::from(current_limit) * self.backoff_ratio) as i32;
        } else if inflight.wrapping_mul(2) >= current_limit {
            current_limit = current_limit.wrapping_add(1);
        }

        self.max_limit.min(self.min_limit.max(current_limit))
    }
}

impl Limit for AimdLimit {
    fn on_sample(
        &mut self,
        start_time: i64,
        rtt: i64,
        inflight: i32,
        did_drop: bool,
    ) -> Result<(), String> {
        self.limit = self._update(start_time, rtt, inflight, did_drop);
        Ok(())
    }

    fn get_limit(&self) -> i32 {
        self.limit
    }
}

// ---------------------------------------------------------------------------------------
// Log10RootIntFunction, SquareRootFunction

pub(crate) fn log10_root_int(t: i32) -> i32 {
    if t < 1000 {
        // lookup[i] = Math.max(1, (int) Math.log10(i))
        1.max(f64::from(t).log10() as i32)
    } else {
        f64::from(t).log10() as i32
    }
}

/// `SquareRootFunction.create(baseline)`.
pub(crate) fn square_root(baseline: i32, t: i32) -> i32 {
    let root = if t < 1000 {
        1.max(f64::from(t).sqrt() as i32)
    } else {
        f64::from(t).sqrt() as i32
    };
    baseline.max(root)
}

// ---------------------------------------------------------------------------------------
// VegasLimit

pub(crate) type IntUnaryOperator = Box<dyn Fn(i32) -> i32>;
pub(crate) type DoubleUnaryOperator = Box<dyn Fn(f64) -> f64>;

pub(crate) struct VegasLimit {
    pub(crate) limit: i32,
    pub(crate) estimated_limit: f64,
    pub(crate) rtt_noload: i64,
    pub(crate) max_limit: i32,
    pub(crate) smoothing: f64,
    pub(crate) alpha_func: IntUnaryOperator,
    pub(crate) beta_func: IntUnaryOperator,
    pub(crate) threshold_func: IntUnaryOperator,
    pub(crate) increase_func: DoubleUnaryOperator,
    pub(crate) decrease_func: DoubleUnaryOperator,
    pub(crate) probe_multiplier: i32,
    pub(crate) probe_count: i32,
    pub(crate) probe_jitter: f64,
    /// Replaces `ThreadLocalRandom`: the SplitMix64 state.
    pub(crate) random: u64,
}

/// SplitMix64 as the estimator draws it, for `nextDouble(0.5, 1)`.
pub(crate) fn next_jitter(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    0.5 + (z >> 12) as f64 / 9_007_199_254_740_992.0
}

impl VegasLimit {
    pub(crate) fn reset_probe_jitter(&mut self) {
        self.probe_jitter = next_jitter(&mut self.random);
    }

    fn should_probe(&self) -> bool {
        self.probe_jitter * f64::from(self.probe_multiplier) * self.estimated_limit
            <= f64::from(self.probe_count)
    }

    fn _update(
        &mut self,
        _start_time: i64,
        rtt: i64,
        inflight: i32,
        did_drop: bool,
    ) -> Result<i32, String> {
        if rtt <= 0 {
            return Err(format!("rtt must be >0 but got {rtt}"));
        }

        self.probe_count += 1;
        if self.should_probe() {
            self.reset_probe_jitter();
            self.probe_count = 0;
            self.rtt_noload = rtt;
            return Ok(self.estimated_limit as i32);
        }

        let rtt_noload = self.rtt_noload;
        if rtt_noload == 0 || rtt < rtt_noload {
            self.rtt_noload = rtt;
            return Ok(self.estimated_limit as i32);
        }

        Ok(self.update_estimated_limit(rtt, rtt_noload, inflight, did_drop))
    }

    fn update_estimated_limit(
        &mut self,
        rtt: i64,
        rtt_noload: i64,
        inflight: i32,
        did_drop: bool,
    ) -> i32 {
        let estimated_limit = self.estimated_limit;
        let queue_size = (estimated_limit * (1.0 - rtt_noload as f64 / rtt as f64)).ceil() as i32;

        let mut new_limit;
        if did_drop {
            new_limit = (self.decrease_func)(estimated_limit);
        } else if f64::from(inflight.wrapping_mul(2)) < estimated_limit {
            return estimated_limit as i32;
        } else {
            let alpha = (self.alpha_func)(estimated_limit as i32);
            let beta = (self.beta_func)(estimated_limit as i32);
            let threshold = (self.threshold_func)(estimated_limit as i32);

            if queue_size <= threshold {
                new_limit = estimated_limit + f64::from(beta);
            } else if queue_size < alpha {
                new_limit = (self.increase_func)(estimated_limit);
            } else if queue_size > beta {
                new_limit = (self.decrease_func)(estimated_limit);
            } else {
                return estimated_limit as i32;
            }
        }

        new_limit = math_max(1.0, math_min(f64::from(self.max_limit), new_limit));
        new_limit = (1.0 - self.smoothing) * estimated_limit + self.smoothing * new_limit;
        self.estimated_limit = new_limit;
        new_limit as i32
    }
}

impl Limit for VegasLimit {
    fn on_sample(
        &mut self,
        start_time: i64,
        rtt: i64,
        inflight: i32,
        did_drop: bool,
    ) -> Result<(), String> {
        self.limit = self._update(start_time, rtt, inflight, did_drop)?;
        Ok(())
    }

    fn get_limit(&self) -> i32 {
        self.limit
    }
}

// ---------------------------------------------------------------------------------------
// ExpAvgMeasurement

pub(crate) struct ExpAvgMeasurement {
    pub(crate) value: f64,
    pub(crate) sum: f64,
    pub(crate) window: i32,
    pub(crate) warmup_window: i32,
    pub(crate) count: i32,
}

impl ExpAvgMeasurement {
    pub(crate) fn new(window: i32, warmup_window: i32) -> Self {
        Self {
            value: 0.0,
            sum: 0.0,
            window,
            warmup_window,
            count: 0,
        }
    }

    pub(crate) fn add(&mut self, sample: f64) -> f64 {
        if self.count < self.warmup_window {
            self.count += 1;
            self.sum += sample;
            self.value = self.sum / f64::from(self.count);
        } else {
            let factor = Self::factor(self.window);
            self.value = self.value * (1.0 - factor) + sample * factor;
        }
        self.value
    }

    fn factor(n: i32) -> f64 {
        2.0 / f64::from(n + 1)
    }

    pub(crate) fn update(&mut self, operation: impl Fn(f64) -> f64) {
        self.value = operation(self.value);
    }
}

// ---------------------------------------------------------------------------------------
// Gradient2Limit

pub(crate) struct Gradient2Limit {
    pub(crate) limit: i32,
    pub(crate) estimated_limit: f64,
    pub(crate) last_rtt: i64,
    pub(crate) long_rtt: ExpAvgMeasurement,
    pub(crate) max_limit: i32,
    pub(crate) min_limit: i32,
    pub(crate) queue_size: IntUnaryOperator,
    pub(crate) smoothing: f64,
    pub(crate) tolerance: f64,
}

impl Gradient2Limit {
    fn _update(&mut self, _start_time: i64, rtt: i64, inflight: i32, _did_drop: bool) -> i32 {
        let estimated_limit = self.estimated_limit;
        let queue_size = f64::from((self.queue_size)(estimated_limit as i32));

        self.last_rtt = rtt;
        let short_rtt = rtt as f64;
        let long_rtt = self.long_rtt.add(rtt as f64);

        if long_rtt / short_rtt > 2.0 {
            self.long_rtt.update(|current| current * 0.95);
        }

        if f64::from(inflight) < estimated_limit / 2.0 {
            return estimated_limit as i32;
        }

        let gradient = math_max(0.5, math_min(1.0, self.tolerance * long_rtt / short_rtt));
        let mut new_limit = estimated_limit * gradient + queue_size;
        new_limit = estimated_limit * (1.0 - self.smoothing) + new_limit * self.smoothing;
        new_limit = math_max(
            f64::from(self.min_limit),
            math_min(f64::from(self.max_limit), new_limit),
        );

        self.estimated_limit = new_limit;

        new_limit as i32
    }
}

impl Limit for Gradient2Limit {
    fn on_sample(
        &mut self,
        start_time: i64,
        rtt: i64,
        inflight: i32,
        did_drop: bool,
    ) -> Result<(), String> {
        self.limit = self._update(start_time, rtt, inflight, did_drop);
        Ok(())
    }

    fn get_limit(&self) -> i32 {
        self.limit
    }
}

// ---------------------------------------------------------------------------------------
// SampleWindow, ImmutableAverageSampleWindow, ImmutablePercentileSampleWindow

#[derive(Clone)]
pub(crate) enum SampleWindow {
    Average {
        min_rtt: i64,
        sum: i64,
        max_in_flight: i32,
        sample_count: i32,
        did_drop: bool,
    },
    Percentile {
        min_rtt: i64,
        max_in_flight: i32,
        did_drop: bool,
        observed_rtts: Vec<i64>,
        sample_count: i32,
        percentile: f64,
    },
}

impl SampleWindow {
    pub(crate) fn new_average() -> Self {
        Self::Average {
            min_rtt: i64::MAX,
            sum: 0,
            max_in_flight: 0,
            sample_count: 0,
            did_drop: false,
        }
    }

    pub(crate) fn new_percentile(percentile: f64, window_size: usize) -> Self {
        Self::Percentile {
            min_rtt: i64::MAX,
            max_in_flight: 0,
            did_drop: false,
            observed_rtts: vec![0; window_size],
            sample_count: 0,
            percentile,
        }
    }

    pub(crate) fn add_sample(self, rtt: i64, inflight: i32, dropped: bool) -> Self {
        match self {
            Self::Average {
                min_rtt,
                sum,
                max_in_flight,
                sample_count,
                did_drop,
            } => Self::Average {
                min_rtt: rtt.min(min_rtt),
                sum: sum.wrapping_add(rtt),
                max_in_flight: inflight.max(max_in_flight),
                sample_count: sample_count + 1,
                did_drop: did_drop || dropped,
            },
            Self::Percentile {
                min_rtt,
                max_in_flight,
                did_drop,
                mut observed_rtts,
                sample_count,
                percentile,
            } => {
                if sample_count as usize >= observed_rtts.len() {
                    return Self::Percentile {
                        min_rtt,
                        max_in_flight,
                        did_drop,
                        observed_rtts,
                        sample_count,
                        percentile,
                    };
                }
                observed_rtts[sample_count as usize] = rtt;
                Self::Percentile {
                    min_rtt: min_rtt.min(rtt),
                    max_in_flight: inflight.max(max_in_flight),
                    did_drop: did_drop || dropped,
                    observed_rtts,
                    sample_count: sample_count + 1,
                    percentile,
                }
            }
        }
    }

    pub(crate) fn get_candidate_rtt_nanos(&self) -> i64 {
        match self {
            Self::Average { min_rtt, .. } | Self::Percentile { min_rtt, .. } => *min_rtt,
        }
    }

    pub(crate) fn get_tracked_rtt_nanos(&self) -> Result<i64, String> {
        match self {
            Self::Average {
                sum, sample_count, ..
            } => Ok(if *sample_count == 0 {
                0
            } else {
                sum / i64::from(*sample_count)
            }),
            Self::Percentile {
                observed_rtts,
                sample_count,
                percentile,
                ..
            } => {
                if *sample_count == 0 {
                    return Ok(0);
                }
                let mut copy_of_observed_rtts = observed_rtts[..*sample_count as usize].to_vec();
                copy_of_observed_rtts.sort();

                // Math.round(double): the closest long, ties towards positive infinity.
                let rtt_index = (f64::from(*sample_count) * percentile + 0.5).floor() as i64 as i32;
                let zero_based_rtt_index = rtt_index - 1;
                copy_of_observed_rtts
                    .get(usize::try_from(zero_based_rtt_index).map_err(|e| e.to_string())?)
                    .copied()
                    .ok_or_else(|| "ArrayIndexOutOfBoundsException".to_string())
            }
        }
    }

    pub(crate) fn get_max_in_flight(&self) -> i32 {
        match self {
            Self::Average { max_in_flight, .. } | Self::Percentile { max_in_flight, .. } => {
                *max_in_flight
            }
        }
    }

    pub(crate) fn get_sample_count(&self) -> i32 {
        match self {
            Self::Average { sample_count, .. } | Self::Percentile { sample_count, .. } => {
                *sample_count
            }
        }
    }

    pub(crate) fn did_drop(&self) -> bool {
        match self {
            Self::Average { did_drop, .. } | Self::Percentile { did_drop, .. } => *did_drop,
        }
    }
}

// ---------------------------------------------------------------------------------------
// WindowedLimit (single-threaded: the lock always taken)

/// What the delegate was given: `(rtt, inflight, did_drop)` per `onSample`.
#[derive(Default)]
pub(crate) struct Recorder {
    pub(crate) samples: Vec<(i64, i32, bool)>,
}

impl Limit for Recorder {
    fn on_sample(
        &mut self,
        _start_time: i64,
        rtt: i64,
        inflight: i32,
        did_drop: bool,
    ) -> Result<(), String> {
        self.samples.push((rtt, inflight, did_drop));
        Ok(())
    }

    fn get_limit(&self) -> i32 {
        0
    }
}

pub(crate) struct WindowedLimit {
    pub(crate) delegate: Recorder,
    pub(crate) next_update_time: i64,
    pub(crate) min_window_time: i64,
    pub(crate) max_window_time: i64,
    pub(crate) window_size: i32,
    pub(crate) min_rtt_threshold: i64,
    pub(crate) sample_window_factory: Box<dyn Fn() -> SampleWindow>,
    pub(crate) sample: SampleWindow,
}

impl WindowedLimit {
    pub(crate) fn on_sample(
        &mut self,
        start_time: i64,
        rtt: i64,
        inflight: i32,
        did_drop: bool,
    ) -> Result<(), String> {
        let end_time = start_time + rtt;

        if rtt < self.min_rtt_threshold {
            return Ok(());
        }

        let current = std::mem::replace(&mut self.sample, SampleWindow::new_average());
        self.sample = current.add_sample(rtt, inflight, did_drop);

        if end_time > self.next_update_time {
            let current = std::mem::replace(&mut self.sample, (self.sample_window_factory)());
            self.next_update_time = end_time
                + (current.get_candidate_rtt_nanos().wrapping_mul(2))
                    .max(self.min_window_time)
                    .min(self.max_window_time);

            if self.is_window_ready(&current) {
                self.delegate.on_sample(
                    start_time,
                    current.get_tracked_rtt_nanos()?,
                    current.get_max_in_flight(),
                    current.did_drop(),
                )?;
            }
        }
        Ok(())
    }

    fn is_window_ready(&self, sample: &SampleWindow) -> bool {
        sample.get_candidate_rtt_nanos() < i64::MAX && sample.get_sample_count() >= self.window_size
    }
}
