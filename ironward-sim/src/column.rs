//! The columns of the CSV: the series a run records, and their names.

use serde::Deserialize;

/// One column of the CSV, and a series a picture can draw.
///
/// Counts are per interval; `in_flight`, `cpu`, `breaker_ratio`, `shedder_flying` and
/// `shedder_average` are read at the interval's end; the percentiles are of the calls that
/// succeeded in the interval, from their first attempt to their success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Column {
    /// The interval's start, in seconds.
    T,
    /// New calls that arrived.
    Offered,
    /// Retry attempts made.
    Retries,
    /// Attempts that reached the backend.
    Admitted,
    /// Attempts the client's breaker refused.
    RefusedBreaker,
    /// Attempts the client's concurrency limiter refused.
    RefusedLimiter,
    /// Attempts the shedder refused.
    RefusedShedder,
    /// Attempts the token bucket refused.
    RefusedBucket,
    /// Attempts the sliding window refused.
    RefusedSliding,
    /// Attempts the fixed period refused.
    RefusedPeriod,
    /// Attempts the gate refused.
    RefusedGate,
    /// Attempts the backend refused because its queue was full.
    RefusedQueue,
    /// Calls that succeeded: the goodput.
    Succeeded,
    /// Attempts the backend finished with an error.
    Failed,
    /// Attempts the client stopped waiting for.
    TimedOut,
    /// Calls that ended without a success.
    GaveUp,
    /// Calls inside the backend (waiting or served) at the interval's end.
    InFlight,
    /// The most calls inside the backend at any time in the interval.
    PeakInFlight,
    /// The most attempts that reached the backend in any `window`-long stretch ending in the
    /// interval.
    PeakWindow,
    /// The backend's CPU reading, in thousandths.
    Cpu,
    /// The share of calls the breaker would refuse (SRE), or 1 while a classic breaker
    /// refuses and 0 while it lets calls through.
    BreakerRatio,
    /// The concurrency limiter's limit: the most attempts it lets be in flight at once;
    /// empty in a run without a limiter.
    Limit,
    /// Calls the shedder counts in flight.
    ShedderFlying,
    /// The shedder's moving average of calls in flight.
    ShedderAverage,
    /// The median latency of the calls that succeeded, in milliseconds.
    P50Ms,
    /// The 99th-percentile latency of the calls that succeeded, in milliseconds.
    P99Ms,
    /// Attempts of `critical_plus` calls that reached the backend.
    AdmittedCriticalPlus,
    /// Attempts of `critical` calls that reached the backend.
    AdmittedCritical,
    /// Attempts of `sheddable_concurrent` calls that reached the backend.
    AdmittedSheddableConcurrent,
    /// Attempts of `sheddable` calls that reached the backend.
    AdmittedSheddable,
    /// Attempts of `critical_plus` calls refused, by any piece.
    RefusedCriticalPlus,
    /// Attempts of `critical` calls refused, by any piece.
    RefusedCritical,
    /// Attempts of `sheddable_concurrent` calls refused, by any piece.
    RefusedSheddableConcurrent,
    /// Attempts of `sheddable` calls refused, by any piece.
    RefusedSheddable,
    /// Attempts the client's chaos policy failed at once, unsent.
    ChaosError,
    /// Attempts the client's chaos policy held for a drawn delay before sending them.
    ChaosLatency,
    /// Attempts the client's chaos policy left unanswered.
    ChaosAbort,
    /// Attempts the backend served whose answer the client's chaos policy replaced by a
    /// failure.
    ChaosReplace,
    /// Faults the client's chaos policy decided in shadow mode: counted, not injected.
    ChaosShadowed,
}

impl Column {
    /// Every column, in the CSV's order.
    pub const ALL: [Column; 39] = [
        Self::T,
        Self::Offered,
        Self::Retries,
        Self::Admitted,
        Self::RefusedBreaker,
        Self::RefusedLimiter,
        Self::RefusedShedder,
        Self::RefusedBucket,
        Self::RefusedSliding,
        Self::RefusedPeriod,
        Self::RefusedGate,
        Self::RefusedQueue,
        Self::Succeeded,
        Self::Failed,
        Self::TimedOut,
        Self::GaveUp,
        Self::InFlight,
        Self::PeakInFlight,
        Self::PeakWindow,
        Self::Cpu,
        Self::BreakerRatio,
        Self::Limit,
        Self::ShedderFlying,
        Self::ShedderAverage,
        Self::P50Ms,
        Self::P99Ms,
        Self::AdmittedCriticalPlus,
        Self::AdmittedCritical,
        Self::AdmittedSheddableConcurrent,
        Self::AdmittedSheddable,
        Self::RefusedCriticalPlus,
        Self::RefusedCritical,
        Self::RefusedSheddableConcurrent,
        Self::RefusedSheddable,
        Self::ChaosError,
        Self::ChaosLatency,
        Self::ChaosAbort,
        Self::ChaosReplace,
        Self::ChaosShadowed,
    ];

    /// What a picture draws when a scenario does not say.
    pub const PLOT: [Column; 4] = [
        Self::Admitted,
        Self::Succeeded,
        Self::PeakInFlight,
        Self::P99Ms,
    ];

    /// The column's name in the CSV header and in a scenario's `plot`.
    pub fn name(self) -> &'static str {
        match self {
            Self::T => "t",
            Self::Offered => "offered",
            Self::Retries => "retries",
            Self::Admitted => "admitted",
            Self::RefusedBreaker => "refused_breaker",
            Self::RefusedLimiter => "refused_limiter",
            Self::RefusedShedder => "refused_shedder",
            Self::RefusedBucket => "refused_bucket",
            Self::RefusedSliding => "refused_sliding",
            Self::RefusedPeriod => "refused_period",
            Self::RefusedGate => "refused_gate",
            Self::RefusedQueue => "refused_queue",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::TimedOut => "timed_out",
            Self::GaveUp => "gave_up",
            Self::InFlight => "in_flight",
            Self::PeakInFlight => "peak_in_flight",
            Self::PeakWindow => "peak_window",
            Self::Cpu => "cpu",
            Self::BreakerRatio => "breaker_ratio",
            Self::Limit => "limit",
            Self::ShedderFlying => "shedder_flying",
            Self::ShedderAverage => "shedder_average",
            Self::P50Ms => "p50_ms",
            Self::P99Ms => "p99_ms",
            Self::AdmittedCriticalPlus => "admitted_critical_plus",
            Self::AdmittedCritical => "admitted_critical",
            Self::AdmittedSheddableConcurrent => "admitted_sheddable_concurrent",
            Self::AdmittedSheddable => "admitted_sheddable",
            Self::RefusedCriticalPlus => "refused_critical_plus",
            Self::RefusedCritical => "refused_critical",
            Self::RefusedSheddableConcurrent => "refused_sheddable_concurrent",
            Self::RefusedSheddable => "refused_sheddable",
            Self::ChaosError => "chaos_error",
            Self::ChaosLatency => "chaos_latency",
            Self::ChaosAbort => "chaos_abort",
            Self::ChaosReplace => "chaos_replace",
            Self::ChaosShadowed => "chaos_shadowed",
        }
    }
}
