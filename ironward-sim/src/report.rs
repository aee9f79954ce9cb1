//! What a run comes to: a row of figures per interval, and the totals.

use std::io::{self, Write};

use core::time::Duration;

use serde::Deserialize;

use crate::scenario::{Focus, Variant};
use crate::summary::span;

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
}

impl Column {
    /// Every column, in the CSV's order.
    pub const ALL: [Column; 34] = [
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
        }
    }

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
            Self::Limit => read("limiter: the most attempts it lets be in flight"),
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
            | Self::RefusedSheddable => per("attempts"),
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

    fn add(&mut self, other: &Refused) {
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
        }
    }

    /// Writes the figure in `column` as the CSV has it: counts whole, fractions to fixed
    /// places, a missing percentile empty.
    fn write_cell(&self, column: Column, out: &mut impl Write) -> io::Result<()> {
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

/// One variant's run: its rows and what only the whole run can say.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The setup simulated, as it ran (with any seed or duration given on the command line):
    /// its `name` labels the run, its `duration` is the simulated time covered, its `window`
    /// the stretch `peak_window` is counted over, and its backend's `schedule` is what a
    /// picture shades.
    pub variant: Variant,
    /// One row per interval, in time order.
    pub rows: Vec<Row>,
    /// The most attempts that reached the backend in any `window`-long stretch.
    pub peak_window: u64,
    /// Latency of the calls that succeeded, from first attempt to success: median.
    pub p50: Option<Duration>,
    /// The same, 99th percentile.
    pub p99: Option<Duration>,
    /// The same, the longest.
    pub max: Option<Duration>,
    /// When the last call ended, in success or not; `None` if none did.
    pub last_end: Option<Duration>,
    /// Calls still under way when the run ended.
    pub unfinished: u64,
}

/// The figures of a run added up over a stretch of it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[allow(
    missing_docs,
    reason = "each field is the column of the same name, added up"
)]
pub struct Sum {
    pub offered: u64,
    pub retries: u64,
    pub admitted: u64,
    pub refused: Refused,
    pub succeeded: u64,
    pub failed: u64,
    pub timed_out: u64,
    pub gave_up: u64,
    /// The most calls inside the backend at any time.
    pub peak_in_flight: u64,
    /// The most attempts that reached the backend in one interval.
    pub peak_admitted: u64,
    /// Attempts that reached the backend, by class ([`ironward::Criticality::rank`]).
    pub admitted_by: [u64; 4],
    /// Attempts refused, by class.
    pub refused_by: [u64; 4],
}

impl Sum {
    /// Attempts made: first attempts and retries.
    pub fn attempts(&self) -> u64 {
        self.offered + self.retries
    }
}

impl Run {
    /// The run's figures added up over the rows that start within `focus`.
    pub fn sum(&self, focus: Focus) -> Sum {
        let mut sum = Sum::default();
        for row in self
            .rows
            .iter()
            .filter(|r| focus.contains(r.start, self.variant.duration))
        {
            sum.offered += row.offered;
            sum.retries += row.retries;
            sum.admitted += row.admitted;
            sum.refused.add(&row.refused);
            sum.succeeded += row.succeeded;
            sum.failed += row.failed;
            sum.timed_out += row.timed_out;
            sum.gave_up += row.gave_up;
            sum.peak_in_flight = sum.peak_in_flight.max(row.peak_in_flight);
            sum.peak_admitted = sum.peak_admitted.max(row.admitted);
            for k in 0..4 {
                sum.admitted_by[k] += row.admitted_by[k];
                sum.refused_by[k] += row.refused_by[k];
            }
        }
        sum
    }

    /// The whole run added up.
    pub fn total(&self) -> Sum {
        self.sum(Focus::default())
    }

    /// Whether `focus` lies inside the run: it starts before the run ends and, when it has
    /// an end, ends by then. Figures summed over a stretch the run never reached are zeros
    /// that measured nothing, so a summary reads a stretch only when this holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward_sim::{Focus, Scenario};
    ///
    /// let run = &Scenario::from_toml("duration = \"60s\"").unwrap().run(|_| {}).runs[0];
    /// let s = Duration::from_secs;
    /// assert!(run.covers(Focus { from: s(10), to: s(20) }));
    /// assert!(run.covers(Focus { from: s(10), to: Duration::ZERO }), "to the end");
    /// assert!(!run.covers(Focus { from: s(50), to: s(70) }), "past the end");
    /// assert!(!run.covers(Focus { from: s(60), to: Duration::ZERO }), "nothing left");
    /// ```
    pub fn covers(&self, focus: Focus) -> bool {
        let end = self.variant.duration;
        focus.from < end && (focus.to.is_zero() || (focus.from < focus.to && focus.to <= end))
    }
}

/// Every run of a scenario.
///
/// # Examples
///
/// ```
/// use ironward_sim::Scenario;
///
/// let scenario = Scenario::from_toml("duration = \"3s\"").unwrap();
/// let report = scenario.run(|_| {});
/// let mut csv = Vec::new();
/// report.write_csv(&mut csv).unwrap();
/// let csv = String::from_utf8(csv).unwrap();
/// assert!(csv.starts_with("variant,t,offered,retries,admitted,"));
/// assert_eq!(csv.lines().count(), 1 + 3, "a header and a row a second");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The scenario's name.
    pub name: String,
    /// What the scenario shows.
    pub about: String,
    /// The stretch the summary reports on its own.
    pub focus: Focus,
    /// The series a picture draws.
    pub plot: Vec<crate::Column>,
    /// One run per variant, in the scenario's order.
    pub runs: Vec<Run>,
}

impl Report {
    /// The run of the variant called `name`.
    pub fn run(&self, name: &str) -> Option<&Run> {
        self.runs.iter().find(|r| r.variant.name == name)
    }

    /// Writes every run's rows as CSV: a header, then a row per variant and interval,
    /// the variant's name first.
    ///
    /// The text depends only on the scenario and its seed: the same inputs give the same
    /// bytes on every run and platform.
    pub fn write_csv(&self, mut out: impl Write) -> io::Result<()> {
        write!(out, "variant")?;
        for column in Column::ALL {
            write!(out, ",{}", column.name())?;
        }
        writeln!(out)?;
        for run in &self.runs {
            for row in &run.rows {
                write!(out, "{}", run.variant.name)?;
                for column in Column::ALL {
                    write!(out, ",")?;
                    row.write_cell(column, &mut out)?;
                }
                writeln!(out)?;
            }
        }
        Ok(())
    }
}
