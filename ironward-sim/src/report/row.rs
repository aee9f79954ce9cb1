//! One interval's figures: a row of the CSV.

use std::io::{self, Write};

use core::time::Duration;

use crate::column::Column;

/// Attempts refused, by the piece that refused them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Refused {
    /// By the client's circuit breaker.
    pub breaker: u64,
    /// By the client's concurrency limiter.
    pub limiter: u64,
    /// By the load shedder.
    pub shedder: u64,
    /// By the token bucket.
    pub bucket: u64,
    /// By the sliding window.
    pub sliding: u64,
    /// By the fixed period.
    pub period: u64,
    /// By the gate.
    pub gate: u64,
    /// By the backend, its queue full.
    pub queue: u64,
}

impl Refused {
    /// Every refusal.
    pub fn total(&self) -> u64 {
        self.breaker
            + self.limiter
            + self.shedder
            + self.bucket
            + self.sliding
            + self.period
            + self.gate
            + self.queue
    }

    pub(super) fn add(&mut self, other: &Refused) {
        self.breaker += other.breaker;
        self.limiter += other.limiter;
        self.shedder += other.shedder;
        self.bucket += other.bucket;
        self.sliding += other.sliding;
        self.period += other.period;
        self.gate += other.gate;
        self.queue += other.queue;
    }
}

/// Faults the client's chaos policy injected ([`ChaosPolicy`](crate::ChaosPolicy)), by
/// fault, and the faults it decided in shadow mode without injecting them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Injections {
    /// Attempts failed at once, never sent.
    pub error: u64,
    /// Attempts held for a drawn delay before they were sent.
    pub latency: u64,
    /// Attempts never answered.
    pub abort: u64,
    /// Attempts served by the backend whose answer was replaced by a failure.
    pub replace: u64,
    /// Faults decided in shadow mode: counted, not injected.
    pub shadowed: u64,
}

impl Injections {
    /// Every fault injected (the shadowed ones are not).
    pub fn total(&self) -> u64 {
        self.error + self.latency + self.abort + self.replace
    }

    pub(super) fn add(&mut self, other: &Injections) {
        self.error += other.error;
        self.latency += other.latency;
        self.abort += other.abort;
        self.replace += other.replace;
        self.shadowed += other.shadowed;
    }
}

/// The figures of one interval of a run; see [`Column`] for each.
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(
    missing_docs,
    reason = "each field is the column of the same name, documented there"
)]
pub struct Row {
    pub start: Duration,
    pub offered: u64,
    pub retries: u64,
    pub admitted: u64,
    pub refused: Refused,
    pub succeeded: u64,
    pub failed: u64,
    pub timed_out: u64,
    pub gave_up: u64,
    pub in_flight: u64,
    pub peak_in_flight: u64,
    pub peak_window: u64,
    pub cpu: u32,
    pub breaker_ratio: f64,
    pub limit: u32,
    pub shedder_flying: u64,
    pub shedder_average: f64,
    pub p50: Option<Duration>,
    pub p99: Option<Duration>,
    /// The `admitted_<class>` columns, by [`ironward::Criticality::rank`]: `sheddable` first.
    pub admitted_by: [u64; 4],
    /// The `refused_<class>` columns, by [`ironward::Criticality::rank`].
    pub refused_by: [u64; 4],
    /// The `chaos_<fault>` columns and `chaos_shadowed`.
    pub injected: Injections,
}

impl Row {
    /// The figure in `column`; `None` for a percentile of an interval with no success.
    pub fn value(&self, column: Column) -> Option<f64> {
        let count = |n: u64| Some(n as f64);
        match column {
            Column::T => Some(self.start.as_secs_f64()),
            Column::Offered => count(self.offered),
            Column::Retries => count(self.retries),
            Column::Admitted => count(self.admitted),
            Column::RefusedBreaker => count(self.refused.breaker),
            Column::RefusedLimiter => count(self.refused.limiter),
            Column::RefusedShedder => count(self.refused.shedder),
            Column::RefusedBucket => count(self.refused.bucket),
            Column::RefusedSliding => count(self.refused.sliding),
            Column::RefusedPeriod => count(self.refused.period),
            Column::RefusedGate => count(self.refused.gate),
            Column::RefusedQueue => count(self.refused.queue),
            Column::Succeeded => count(self.succeeded),
            Column::Failed => count(self.failed),
            Column::TimedOut => count(self.timed_out),
            Column::GaveUp => count(self.gave_up),
            Column::InFlight => count(self.in_flight),
            Column::PeakInFlight => count(self.peak_in_flight),
            Column::PeakWindow => count(self.peak_window),
            Column::Cpu => Some(f64::from(self.cpu)),
            Column::BreakerRatio => Some(self.breaker_ratio),
            // A limit is never 0, so 0 is a run without a limiter: no figure, as a percentile
            // of an interval without a success has none.
            Column::Limit => (self.limit > 0).then(|| f64::from(self.limit)),
            Column::ShedderFlying => count(self.shedder_flying),
            Column::ShedderAverage => Some(self.shedder_average),
            Column::P50Ms => self.p50.map(millis),
            Column::P99Ms => self.p99.map(millis),
            Column::AdmittedCriticalPlus => count(self.admitted_by[3]),
            Column::AdmittedCritical => count(self.admitted_by[2]),
            Column::AdmittedSheddableConcurrent => count(self.admitted_by[1]),
            Column::AdmittedSheddable => count(self.admitted_by[0]),
            Column::RefusedCriticalPlus => count(self.refused_by[3]),
            Column::RefusedCritical => count(self.refused_by[2]),
            Column::RefusedSheddableConcurrent => count(self.refused_by[1]),
            Column::RefusedSheddable => count(self.refused_by[0]),
            Column::ChaosError => count(self.injected.error),
            Column::ChaosLatency => count(self.injected.latency),
            Column::ChaosAbort => count(self.injected.abort),
            Column::ChaosReplace => count(self.injected.replace),
            Column::ChaosShadowed => count(self.injected.shadowed),
        }
    }

    /// Writes the figure in `column` as the CSV has it: counts whole, fractions to fixed
    /// places, a missing percentile empty.
    pub(super) fn write_cell(&self, column: Column, out: &mut impl Write) -> io::Result<()> {
        match (column, self.value(column)) {
            (_, None) => Ok(()),
            (Column::T, Some(t)) => write!(out, "{t:.3}"),
            (Column::BreakerRatio, Some(v)) => write!(out, "{v:.4}"),
            (Column::ShedderAverage, Some(v)) => write!(out, "{v:.2}"),
            (Column::P50Ms | Column::P99Ms, Some(v)) => write!(out, "{v:.3}"),
            (_, Some(v)) => write!(out, "{}", v as u64),
        }
    }
}

/// A span as fractional milliseconds.
pub(crate) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
