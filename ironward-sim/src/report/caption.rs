//! What a picture titles a column's panel and value axis with, for runs of a variant.

use crate::scenario::Variant;
use crate::words::span;

use crate::column::Column;

impl Column {
    /// The title of a panel drawing the column for runs of `variant`: what is counted or
    /// read, and over which stretch (its `interval`, and its `window` for `peak_window`),
    /// so that a reader need not know what "an interval" is.
    ///
    /// The latency columns say that they are of the calls that succeeded, timed from the
    /// first attempt, so a call's retries count in its latency.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward_sim::{Column, Variant};
    ///
    /// let every_100ms = Variant { interval: Duration::from_millis(100), ..Variant::default() };
    /// assert_eq!(Column::Admitted.caption(&every_100ms), "attempts reaching the backend, per 100 ms");
    /// assert!(Column::P99Ms.caption(&every_100ms).contains("retries included"));
    /// ```
    pub fn caption(self, variant: &Variant) -> String {
        let each = span(variant.interval);
        let per = |what: &str| format!("{what}, per {each}");
        let read = |what: &str| format!("{what}, read every {each}");
        let latency = |which: &str| {
            format!(
                "{which} latency of the calls that succeeded in each {each}, \
                 from first attempt to success (retries included)"
            )
        };
        match self {
            Self::T => "the start of each interval".into(),
            Self::Offered => per("calls offered"),
            Self::Retries => per("retry attempts"),
            Self::Admitted => per("attempts reaching the backend"),
            Self::RefusedBreaker => per("attempts refused by the breaker"),
            Self::RefusedLimiter => per("attempts refused by the concurrency limiter"),
            Self::RefusedShedder => per("attempts refused by the shedder"),
            Self::RefusedBucket => per("attempts refused by the bucket"),
            Self::RefusedSliding => per("attempts refused by the sliding window"),
            Self::RefusedPeriod => per("attempts refused by the period"),
            Self::RefusedGate => per("attempts refused by the gate"),
            Self::RefusedQueue => per("attempts refused by the full backend queue"),
            Self::Succeeded => per("calls succeeded (goodput)"),
            Self::Failed => per("backend errors"),
            Self::TimedOut => per("attempts timed out"),
            Self::GaveUp => per("calls given up"),
            Self::InFlight => read("calls inside the backend (waiting or served)"),
            Self::PeakInFlight => {
                format!("most calls inside the backend (waiting or served) in each {each}")
            }
            Self::PeakWindow => format!(
                "most attempts reaching the backend in any {} window ending within each {each}",
                span(variant.window)
            ),
            Self::Cpu => read("backend CPU: the busy share of its workers, smoothed"),
            Self::BreakerRatio => read("breaker: the share of calls it refuses"),
            Self::Limit => read(
                "limiter: most attempts let in flight; dashed: Little's law's optimum (top: 10× it)",
            ),
            Self::ShedderFlying => read("shedder: calls in flight"),
            Self::ShedderAverage => read("shedder: moving average of calls in flight"),
            Self::P50Ms => latency("median"),
            Self::P99Ms => latency("99th-percentile"),
            Self::AdmittedCriticalPlus => per("critical_plus attempts reaching the backend"),
            Self::AdmittedCritical => per("critical attempts reaching the backend"),
            Self::AdmittedSheddableConcurrent => {
                per("sheddable_concurrent attempts reaching the backend")
            }
            Self::AdmittedSheddable => per("sheddable attempts reaching the backend"),
            Self::RefusedCriticalPlus => per("critical_plus attempts refused"),
            Self::RefusedCritical => per("critical attempts refused"),
            Self::RefusedSheddableConcurrent => per("sheddable_concurrent attempts refused"),
            Self::RefusedSheddable => per("sheddable attempts refused"),
            Self::ChaosError => per("chaos: attempts failed unsent"),
            Self::ChaosLatency => per("chaos: attempts delayed before sending"),
            Self::ChaosAbort => per("chaos: attempts never answered"),
            Self::ChaosReplace => per("chaos: answers replaced by a failure"),
            Self::ChaosShadowed => per("chaos in shadow mode: faults decided, not injected"),
        }
    }

    /// What the column's figures are counted in, for runs of `variant`: the title of a
    /// panel's value axis ("attempts per 1 s", "ms").
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_sim::{Column, Variant};
    ///
    /// assert_eq!(Column::Succeeded.unit(&Variant::default()), "calls per 1 s");
    /// assert_eq!(Column::P50Ms.unit(&Variant::default()), "ms");
    /// ```
    pub fn unit(self, variant: &Variant) -> String {
        let per = |what: &str| format!("{what} per {}", span(variant.interval));
        match self {
            Self::T => "s".into(),
            Self::Offered | Self::Succeeded | Self::GaveUp => per("calls"),
            Self::Retries
            | Self::Admitted
            | Self::RefusedBreaker
            | Self::RefusedLimiter
            | Self::RefusedShedder
            | Self::RefusedBucket
            | Self::RefusedSliding
            | Self::RefusedPeriod
            | Self::RefusedGate
            | Self::RefusedQueue
            | Self::Failed
            | Self::TimedOut
            | Self::AdmittedCriticalPlus
            | Self::AdmittedCritical
            | Self::AdmittedSheddableConcurrent
            | Self::AdmittedSheddable
            | Self::RefusedCriticalPlus
            | Self::RefusedCritical
            | Self::RefusedSheddableConcurrent
            | Self::RefusedSheddable
            | Self::ChaosError
            | Self::ChaosLatency
            | Self::ChaosAbort
            | Self::ChaosReplace
            | Self::ChaosShadowed => per("attempts"),
            Self::InFlight | Self::PeakInFlight | Self::ShedderFlying | Self::ShedderAverage => {
                "calls".into()
            }
            Self::Limit => "attempts at once".into(),
            Self::PeakWindow => format!("attempts per {}", span(variant.window)),
            Self::Cpu => "‰ of the workers busy".into(),
            Self::BreakerRatio => "share refused, 0 to 1".into(),
            Self::P50Ms | Self::P99Ms => "ms".into(),
        }
    }
}
