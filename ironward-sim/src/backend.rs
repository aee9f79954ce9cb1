//! The modelled server: workers, a queue, a latency distribution and a failure schedule.

mod latency;
mod sampler;
mod schedule;
mod workers;

use std::collections::VecDeque;

use core::time::Duration;

use serde::Deserialize;

use crate::ahead::Ahead;
use crate::dice::Dice;
use ironward::clock::nanos;

pub use latency::LatencyModel;
pub use sampler::{Sampler, Service};
pub use schedule::{Change, Phase};

/// How the backend serves the calls it holds.
///
/// # Default
///
/// [`Fifo`](Discipline::Fifo), the backend as it always was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Discipline {
    /// `workers` serve one call each, first come first served; the others wait in the queue.
    /// With Poisson arrivals and an exponential latency this is M/M/c.
    #[default]
    Fifo,
    /// Processor sharing: every call starts at once and shares `workers` cores, so a call
    /// admitted with `n` calls inside (itself included) takes its drawn latency times
    /// `max(1, n / cores)`. Whatever the concurrency, the backend completes at most
    /// `cores / latency` calls a second; beyond `cores` calls in flight, more only wait
    /// longer. An axum handler that sleeps 5 ms times the calls in flight is this backend
    /// with one core. `queue` is the calls admitted beyond `workers`; a schedule's
    /// `capacity` scales the cores.
    Sharing,
}

use workers::Workers;

/// The server behind the policies: `workers` calls served at once, first come first served,
/// up to `queue` more waiting, each taking a time drawn from `latency`.
///
/// A call that finds every worker busy and the queue full is refused at once (a 503). The
/// failure probability and a slowdown of the service time follow `schedule`; a call fails
/// with the probability in force when it arrives, after its service time (the server does
/// the work, then errs). A call keeps its worker to the end even when the client has given up
/// on it: there is no cancellation, which is how a timeout turns into wasted work.
///
/// The CPU reading the shedder sees is go-zero's (`core/stat/usage.go`): the busy fraction of
/// the workers, sampled every `cpu.sample` and smoothed as `cpu = β·cpu + (1 − β)·busy`.
///
/// ```toml
/// [backend]
/// workers = 100
/// queue = 1000
/// latency = { kind = "lognormal", median = "20ms", p99 = "80ms" }
/// failure = 0.001
/// schedule = [
///     { start = "60s", end = "120s", failure = 1.0 },             # an outage
///     { start = "120s", end = "150s", slowdown = [4.0, 1.0] },    # a cold start
///     { start = "300s", end = "600s", failure = [0.0, 0.3] },     # a slow degradation
/// ]
/// cpu = { sample = "250ms", beta = 0.95 }
/// discipline = "fifo"          # or "sharing": processor sharing over `workers` cores
/// queue_timeout = "0s"         # none; else calls that would wait longer are dropped
/// ```
///
/// # Default
///
/// | field | value |
/// | --- | --- |
/// | `workers` | 100 |
/// | `queue` | 1000 |
/// | `latency` | log-normal, median 20 ms, 99th percentile 80 ms |
/// | `failure` | 0 |
/// | `schedule` | none |
/// | `cpu` | [`Meter::default`]: go-zero's 250 ms and 0.95 |
/// | `discipline` | [`Discipline::Fifo`] |
/// | `queue_timeout` | none (0 s) |
///
/// With these values the server completes about 4,000 calls a second.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Backend {
    /// Calls served at once (at least 1).
    pub workers: u32,
    /// Calls that may wait for a worker; beyond that, calls are refused.
    pub queue: u32,
    /// How long a call takes once a worker has it.
    pub latency: LatencyModel,
    /// The probability a call fails outside the schedule's phases.
    pub failure: f64,
    /// Phases during which calls fail more often or take longer.
    pub schedule: Vec<Phase>,
    /// How the CPU reading is sampled and smoothed.
    pub cpu: Meter,
    /// How the calls inside are served: one a worker in turn, or sharing the cores.
    pub discipline: Discipline,
    /// How long a call may wait for a worker (first come first served only); zero for ever.
    /// A call that would wait longer is dropped unserved when it has waited that long: the
    /// client hears a timeout, which the limiter counts as a drop. A server that times out
    /// requests in its queue under load does this.
    #[serde(deserialize_with = "crate::humane::read")]
    pub queue_timeout: Duration,
}

impl Default for Backend {
    fn default() -> Self {
        Self {
            workers: 100,
            queue: 1000,
            latency: LatencyModel::LogNormal {
                median: Duration::from_millis(20),
                p99: Duration::from_millis(80),
            },
            failure: 0.0,
            schedule: Vec::new(),
            cpu: Meter::default(),
            discipline: Discipline::Fifo,
            queue_timeout: Duration::ZERO,
        }
    }
}

impl Backend {
    /// What cannot be simulated in this backend, if anything.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.workers == 0 {
            return Err("the backend needs at least one worker".into());
        }
        if self.cpu.sample.is_zero() {
            return Err("`backend.cpu.sample` must be longer than zero".into());
        }
        let sharing = self.discipline == Discipline::Sharing;
        if !sharing && self.schedule.iter().any(|p| p.capacity.is_some()) {
            return Err("a phase's `capacity` needs `discipline = \"sharing\"`".into());
        }
        if sharing && !self.queue_timeout.is_zero() {
            return Err("`queue_timeout` needs `discipline = \"fifo\"`: nothing waits".into());
        }
        Ok(())
    }

    /// The failure probability and the service-time multiplier at `t` nanoseconds: the
    /// highest of the base rate and every phase's failure in force, and the product of
    /// every phase's slowdown in force.
    pub(crate) fn conditions(&self, t: u64) -> (f64, f64) {
        let (mut failure, mut slowdown) = (self.failure, 1.0);
        for phase in &self.schedule {
            let (start, end) = (nanos(phase.start), nanos(phase.end));
            if t < start || t >= end {
                continue;
            }
            let along = (t - start) as f64 / (end - start) as f64;
            if let Some(c) = phase.failure {
                failure = failure.max(c.at(along));
            }
            if let Some(c) = phase.slowdown {
                slowdown *= c.at(along);
            }
        }
        (failure, slowdown)
    }

    /// The share of the cores in force at `t` nanoseconds: the product of every phase's
    /// `capacity` in force, 1 outside them.
    pub(crate) fn capacity(&self, t: u64) -> f64 {
        let mut share = 1.0;
        for phase in &self.schedule {
            let (start, end) = (nanos(phase.start), nanos(phase.end));
            if let (Some(c), true) = (phase.capacity, start <= t && t < end) {
                share *= c.at((t - start) as f64 / (end - start) as f64);
            }
        }
        share
    }
}

/// Why the backend did not serve a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unserved {
    /// Every worker busy and the queue full: refused at once.
    Full,
    /// It would have waited past the queue timeout: dropped at this instant, unserved.
    Dropped(u64),
}

/// The service time of a call admitted to a processor-sharing backend with `inside` calls
/// in it (itself included) over `cores` cores: `drawn × max(1, inside / cores)`; no cores
/// (or NaN) stalls it for ever.
fn shared(drawn: f64, inside: u64, cores: f64) -> f64 {
    let load = if cores > 0.0 {
        (inside as f64 / cores).max(1.0)
    } else {
        f64::INFINITY
    };
    drawn * load
}

/// A service time drawn in nanoseconds, times the schedule's slowdown: whole nanoseconds,
/// 0 for a product that is negative or NaN, `u64::MAX` past it.
fn slowed(drawn: f64, slowdown: f64) -> u64 {
    (drawn * slowdown) as u64
}

/// Whether a call fails under the failure probability in force, `roll` drawn only while
/// that is above 0 (so a backend that never fails draws nothing for it); a NaN probability
/// fails the call.
fn fails(failure: f64, roll: impl FnOnce() -> f64) -> bool {
    !(failure <= 0.0 || roll() >= failure)
}

/// How the backend's CPU reading is taken: go-zero's sampler (`core/stat/usage.go`).
///
/// # Default
///
/// `sample` 250 ms and `beta` 0.95, go-zero's `cpuRefreshInterval` and `beta`: about five
/// seconds of history.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Meter {
    /// How often the reading is refreshed.
    #[serde(deserialize_with = "crate::humane::read")]
    pub sample: Duration,
    /// The weight of the previous reading in the moving average.
    pub beta: f64,
}

impl Default for Meter {
    fn default() -> Self {
        Self {
            sample: Duration::from_millis(250),
            beta: 0.95,
        }
    }
}

/// The backend as it runs: which worker frees up when, who is waiting, and the CPU meter.
///
/// First come first served over `c` workers with service times drawn on arrival, so a call's
/// start is known when it arrives: the earliest time a worker is free, or now. Starts are
/// therefore in arrival order, and the calls still waiting are a queue of start times.
#[derive(Debug)]
pub(crate) struct Server {
    config: Backend,
    /// The admitted calls' service times in turn, before any slowdown.
    service: Ahead<f64>,
    /// When each worker next becomes free.
    free: Workers,
    /// A stretch `[from, to)` in which no phase of the schedule is in force.
    calm: (u64, u64),
    /// The start times of admitted calls not yet started, earliest first.
    waiting: VecDeque<u64>,
    /// Calls admitted and not yet finished, waiting or served.
    inside: u64,
    /// Rolls against the failure probability, one per call admitted while it is above 0.
    outcome: Ahead<f64>,
    /// Busy worker-nanoseconds since the last sample.
    area: u128,
    /// When `inside` last changed or a sample was taken.
    mark: u64,
    /// The smoothed busy fraction, 0 to 1.
    cpu: f64,
    /// `cpu` in thousandths, as the shedder reads it: worked out at each sample, not at
    /// each of the thousands of decisions between two.
    reading: u32,
}

impl Server {
    /// An idle server.
    pub(crate) fn new(config: &Backend, mut service: Dice, mut outcome: Dice) -> Self {
        let latency = config.latency.prepare();
        let workers = config.workers.max(1) as usize;
        Self {
            config: config.clone(),
            service: Ahead::new(move |block, wanted| {
                block.extend((0..wanted).map(|_| latency.draw(&mut service)));
            }),
            outcome: Ahead::new(move |block, wanted| {
                block.extend((0..wanted).map(|_| outcome.roll()));
            }),
            free: Workers::new(workers as u64),
            calm: (0, 0),
            waiting: VecDeque::with_capacity(config.queue.min(1 << 16) as usize),
            inside: 0,
            area: 0,
            mark: 0,
            cpu: 0.0,
            reading: 0,
        }
    }

    /// Takes a call at `now`: when it will finish and whether it will succeed, or why it is
    /// not served.
    pub(crate) fn admit(&mut self, now: u64) -> Result<(u64, bool), Unserved> {
        if self.config.discipline == Discipline::Sharing {
            return self.share(now);
        }
        while self.waiting.front().is_some_and(|&start| start <= now) {
            self.waiting.pop_front();
        }
        let (start, worker) = self.free.earliest(now);
        if start > now && self.waiting.len() >= self.config.queue as usize {
            return Err(Unserved::Full);
        }
        let wait = nanos(self.config.queue_timeout);
        if wait > 0 && start - now > wait {
            return Err(Unserved::Dropped(now.saturating_add(wait)));
        }
        let (failure, slowdown) = self.conditions(now);
        let drawn = self.service.take().unwrap_or(0.0);
        let done = start.saturating_add(slowed(drawn, slowdown));
        self.free.hand(worker, done);
        if start > now {
            self.waiting.push_back(start);
        }
        Ok(self.admitted(now, failure, done))
    }

    /// [`admit`](Server::admit) for [`Discipline::Sharing`]: the call starts at once, its
    /// service time stretched by the calls it shares the cores with.
    fn share(&mut self, now: u64) -> Result<(u64, bool), Unserved> {
        let room = u64::from(self.config.workers.max(1)) + u64::from(self.config.queue);
        if self.inside >= room {
            return Err(Unserved::Full);
        }
        let (failure, slowdown) = self.conditions(now);
        let cores = match (self.calm.0..self.calm.1).contains(&now) {
            true => f64::from(self.config.workers.max(1)),
            false => f64::from(self.config.workers.max(1)) * self.config.capacity(now),
        };
        let drawn = shared(self.service.take().unwrap_or(0.0), self.inside + 1, cores);
        let done = now.saturating_add(slowed(drawn, slowdown));
        Ok(self.admitted(now, failure, done))
    }

    /// Counts in a call admitted at `now` that finishes at `done`, and rolls its outcome.
    fn admitted(&mut self, now: u64, failure: f64, done: u64) -> (u64, bool) {
        let ok = !fails(failure, || self.outcome.take().unwrap_or(1.0));
        self.account(now);
        self.inside += 1;
        (done, ok)
    }

    /// The schedule's failure probability and slowdown at `now`, as
    /// [`Backend::conditions`] works them out, without reading the schedule again while
    /// `now` stays in a stretch where no phase is in force (most of a run, usually).
    fn conditions(&mut self, now: u64) -> (f64, f64) {
        if (self.calm.0..self.calm.1).contains(&now) {
            return (self.config.failure, 1.0);
        }
        let phases = &self.config.schedule;
        let spans = phases.iter().map(|p| (nanos(p.start), nanos(p.end)));
        if !spans.clone().any(|(start, end)| start <= now && now < end) {
            let next = spans.map(|(start, _)| start).filter(|&s| s > now).min();
            self.calm = (now, next.unwrap_or(u64::MAX));
        }
        self.config.conditions(now)
    }

    /// A call finishes at `now`.
    pub(crate) fn finish(&mut self, now: u64) {
        self.account(now);
        self.inside = self.inside.saturating_sub(1);
    }

    /// Refreshes the CPU reading at `now`, a sample period after the last.
    pub(crate) fn sample(&mut self, now: u64) {
        self.account(now);
        let capacity = f64::from(self.config.workers.max(1)) * nanos(self.config.cpu.sample) as f64;
        let busy = (self.area as f64 / capacity).min(1.0);
        let beta = self.config.cpu.beta;
        self.cpu = self.cpu * beta + busy * (1.0 - beta);
        self.reading = (self.cpu * 1000.0).round().clamp(0.0, 1000.0) as u32;
        self.area = 0;
    }

    /// Calls inside the server, waiting or served.
    pub(crate) fn inside(&self) -> u64 {
        self.inside
    }

    /// The CPU reading in thousandths.
    pub(crate) fn cpu(&self) -> u32 {
        self.reading
    }

    /// Adds the busy time since the last change.
    fn account(&mut self, now: u64) {
        let busy = self.inside.min(u64::from(self.config.workers.max(1)));
        self.area += u128::from(busy) * u128::from(now.saturating_sub(self.mark));
        self.mark = self.mark.max(now);
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod queueing_tests;
