//! One variant's run, and its figures added up over a stretch.

use core::time::Duration;

use crate::scenario::{Focus, Variant};

use super::row::{Injections, Refused, Row};

/// One variant's run: its rows and what only the whole run can say.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantRun {
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
    /// Faults injected by the client's chaos policy, and those only shadowed.
    pub injected: Injections,
}

impl Sum {
    /// Attempts made: first attempts and retries.
    pub fn attempts(&self) -> u64 {
        self.offered + self.retries
    }
}

impl VariantRun {
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
            sum.injected.add(&row.injected);
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
