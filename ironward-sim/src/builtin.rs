//! The scenarios that ship with the simulator, and what each one's figures say.

mod chaos;
mod choice;
mod closed;
mod converge;
mod overload;
mod quota;
mod recovery;
mod retries;
mod scale;
mod verdict;

use crate::report::Report;
use crate::scenario::{Scenario, ScenarioError};

use verdict::wrap;

/// A scenario that ships with the simulator, runnable by name.
///
/// Each is a TOML file in the crate's `scenarios/` folder, embedded in the binary and read by
/// [`Scenario::from_toml`] like any other: `ironward-sim show NAME` prints it as a starting
/// point for a scenario of one's own. Each has a [`verdict`](Builtin::verdict) that states
/// its comparison in figures.
///
/// # Examples
///
/// ```
/// use ironward_sim::Builtin;
///
/// let quota = Builtin::from_name("quota").unwrap();
/// let scenario = quota.scenario().unwrap();
/// let names: Vec<&str> = scenario.variants.iter().map(|v| v.name.as_str()).collect();
/// assert_eq!(names, ["bucket", "sliding", "period"]);
///
/// let report = scenario.run(|_| {});
/// let (sliding, period) = (report.run("sliding").unwrap(), report.run("period").unwrap());
/// // A fixed period lets a second quota through across its boundary; the exact window never.
/// assert!(sliding.peak_window <= 100);
/// assert!(period.peak_window > 150);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// A backend fails for a minute and comes back cold: the SRE and the classic breaker,
    /// each with and without the adaptive limiter, on the same traffic.
    Outage,
    /// 1.4 times the backend's capacity for three minutes: the adaptive shedder and none.
    Overload,
    /// A thousand synchronised clients retry: Rigid, Full and Decorrelated jitter.
    RetryStorm,
    /// A quota of 100 a second against spikes across the period boundary: Bucket, Sliding
    /// and Period.
    Quota,
    /// An hour of 10,000 calls a second through a breaker and a shedder.
    Scale,
    /// The outage's cold start, on the outage's four variants: what the adaptive limiter adds
    /// to either breaker.
    ColdRecovery,
    /// The backend's latency triples for two minutes under overload: the limit against
    /// Little's law, for ironward's limiter, Vegas and Gradient2.
    LatencyShift,
    /// Twice the capacity, of four criticalities: the limiter and none.
    Priorities,
    /// A processor-sharing backend (5 ms × calls in flight, 200 calls a second) at three
    /// times its capacity: the default limiter from three starts, Vegas, Gradient2, AIMD and
    /// failsafe-go's against Little's law's optimum of 1.
    Sharing,
    /// M/M/20 at three times its capacity: the same limiters against an optimum of 20.
    Mmc,
    /// A processor-sharing backend loses half its cores for 40 s and gets them back: the
    /// same limiters against an optimum of 10, then 5, then 10.
    CapacityHalves,
    /// A cache's hits and misses (10 ms and 100 ms, 90/10) at three times the capacity: the
    /// same limiters against an optimum of 10.
    Bimodal,
    /// A backend that times out calls waiting over 100 ms, at three times its capacity: the
    /// same limiters against an optimum of 10, hearing drops.
    Drops,
    /// Tripwire's runaway limits: 100 calls a second to 12 threads of 120 ms: the same
    /// limiters and Gradient2 as Tripwire configures it, against an optimum of 12.
    Runaway,
    /// The `sharing` backend under 500 closed-loop clients, as a load generator sends: the
    /// default limiter and none, against an optimum of 1.
    SharingClosed,
    /// 15 % mixed faults injected before a healthy backend: no chaos, chaos with retries
    /// behind a breaker, and chaos with the breaker alone.
    Chaos,
}

impl Builtin {
    /// Every built-in scenario.
    pub const ALL: [Builtin; 16] = [
        Self::Outage,
        Self::Overload,
        Self::RetryStorm,
        Self::Quota,
        Self::Scale,
        Self::ColdRecovery,
        Self::LatencyShift,
        Self::Priorities,
        Self::Sharing,
        Self::Mmc,
        Self::CapacityHalves,
        Self::Bimodal,
        Self::Drops,
        Self::Runaway,
        Self::SharingClosed,
        Self::Chaos,
    ];

    /// The name it runs by.
    pub fn name(self) -> &'static str {
        match self {
            Self::Outage => "outage",
            Self::Overload => "overload",
            Self::RetryStorm => "retry-storm",
            Self::Quota => "quota",
            Self::Scale => "scale",
            Self::ColdRecovery => "cold-recovery",
            Self::LatencyShift => "latency-shift",
            Self::Priorities => "priorities",
            Self::Sharing => "sharing",
            Self::Mmc => "mmc",
            Self::CapacityHalves => "capacity-halves",
            Self::Bimodal => "bimodal",
            Self::Drops => "drops",
            Self::Runaway => "runaway",
            Self::SharingClosed => "sharing-closed",
            Self::Chaos => "chaos",
        }
    }

    /// The built-in scenario called `name`.
    pub fn from_name(name: &str) -> Result<Self, ScenarioError> {
        Self::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .ok_or_else(|| ScenarioError::Unknown(name.into()))
    }

    /// The scenario file, comments and all.
    pub fn text(self) -> &'static str {
        match self {
            Self::Outage => include_str!("../scenarios/outage.toml"),
            Self::Overload => include_str!("../scenarios/overload.toml"),
            Self::RetryStorm => include_str!("../scenarios/retry-storm.toml"),
            Self::Quota => include_str!("../scenarios/quota.toml"),
            Self::Scale => include_str!("../scenarios/scale.toml"),
            Self::ColdRecovery => include_str!("../scenarios/cold-recovery.toml"),
            Self::LatencyShift => include_str!("../scenarios/latency-shift.toml"),
            Self::Priorities => include_str!("../scenarios/priorities.toml"),
            Self::Sharing => include_str!("../scenarios/sharing.toml"),
            Self::Mmc => include_str!("../scenarios/mmc.toml"),
            Self::CapacityHalves => include_str!("../scenarios/capacity-halves.toml"),
            Self::Bimodal => include_str!("../scenarios/bimodal.toml"),
            Self::Drops => include_str!("../scenarios/drops.toml"),
            Self::Runaway => include_str!("../scenarios/runaway.toml"),
            Self::SharingClosed => include_str!("../scenarios/sharing-closed.toml"),
            Self::Chaos => include_str!("../scenarios/chaos.toml"),
        }
    }

    /// The scenario, read from [`text`](Builtin::text). Every built-in reads (a test says
    /// so); the `Result` is [`Scenario::from_toml`]'s.
    pub fn scenario(self) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml(self.text())
    }

    /// The comparison the scenario exists to make, stated in figures from `report`; `None`
    /// when the report lacks a variant the comparison needs.
    ///
    /// A verdict states only what the run measured. When a stretch it reads (the recovery,
    /// the overload, a whole window) is not inside the run, it says so and concludes
    /// nothing; otherwise each sentence is built from the figures and points the way they
    /// do, so a variant that contradicts the scenario's expectation is reported as such.
    pub fn verdict(self, report: &Report) -> Option<String> {
        let text = match self {
            Self::Outage => recovery::outage(report),
            Self::Overload => overload::overload(report),
            Self::RetryStorm => retries::retry_storm(report),
            Self::Quota => quota::quota(report),
            Self::Scale => scale::scale(report),
            Self::ColdRecovery => recovery::cold_recovery(report),
            Self::LatencyShift => overload::latency_shift(report),
            Self::Priorities => overload::priorities(report),
            Self::Sharing
            | Self::Mmc
            | Self::CapacityHalves
            | Self::Bimodal
            | Self::Drops
            | Self::Runaway => converge::convergence(report),
            Self::SharingClosed => closed::sharing_closed(report),
            Self::Chaos => chaos::chaos(report),
        }?;
        Some(wrap(&text, 92))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod converge_tests;

#[cfg(test)]
mod closed_tests;
