//! The modelled server: workers, a queue, a latency distribution and a failure schedule.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use core::time::Duration;

use serde::Deserialize;

use crate::ahead::Ahead;
use crate::dice::{Dice, LogNormal};
use ironward::clock::nanos;

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
    pub latency: Latency,
    /// The probability a call fails outside the schedule's phases.
    pub failure: f64,
    /// Phases during which calls fail more often or take longer.
    pub schedule: Vec<Phase>,
    /// How the CPU reading is sampled and smoothed.
    pub cpu: Meter,
}

impl Default for Backend {
    fn default() -> Self {
        Self {
            workers: 100,
            queue: 1000,
            latency: Latency::LogNormal {
                median: Duration::from_millis(20),
                p99: Duration::from_millis(80),
            },
            failure: 0.0,
            schedule: Vec::new(),
            cpu: Meter::default(),
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
}

/// A service-time distribution.
///
/// ```toml
/// latency = { kind = "lognormal", median = "20ms", p99 = "80ms" }
/// latency = { kind = "exponential", mean = "20ms" }
/// latency = { kind = "uniform", min = "10ms", max = "30ms" }
/// latency = { kind = "constant", value = "20ms" }
/// ```
///
/// Every field has a default: 20 ms for the median, mean and constant value, 80 ms for the
/// 99th percentile, 10 ms and 30 ms for the uniform bounds.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Latency {
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

impl Latency {
    /// The mean service time: what a worker spends on a call on average, so that `workers`
    /// workers complete `workers / mean` calls a second (Little's law).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward_sim::Latency;
    ///
    /// let ms = Duration::from_millis;
    /// assert_eq!(Latency::Uniform { min: ms(10), max: ms(30) }.mean(), ms(20));
    /// // A log-normal's mean is its median times e^(σ²/2).
    /// let lognormal = Latency::LogNormal { median: ms(40), p99: ms(150) }.mean();
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
    fn prepare(&self) -> Draw {
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
        }
    }
}

/// A [`Latency`] ready to draw service times from, in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
enum Draw {
    Constant(f64),
    Uniform { low: f64, span: f64 },
    Exponential(f64),
    LogNormal(LogNormal),
}

impl Draw {
    /// One service time.
    #[inline(always)]
    fn draw(&self, dice: &mut Dice) -> f64 {
        match self {
            Self::Constant(value) => *value,
            Self::Uniform { low, span } => low + dice.roll() * span,
            Self::Exponential(mean) => dice.exponential(*mean),
            Self::LogNormal(table) => table.draw(dice),
        }
    }
}

/// A stretch of time during which calls fail more often or take longer.
///
/// `failure` and `slowdown` are each a number (held over the phase) or a pair `[from, to]`
/// that moves linearly over it. Where phases overlap, the highest failure probability and
/// the product of the slowdowns apply.
///
/// # Default
///
/// From 0 s to 0 s, changing nothing.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Phase {
    /// When the phase starts.
    #[serde(deserialize_with = "crate::humane::read")]
    pub start: Duration,
    /// When it ends (exclusive).
    #[serde(deserialize_with = "crate::humane::read")]
    pub end: Duration,
    /// The probability a call fails.
    pub failure: Option<Change>,
    /// What service times are multiplied by.
    pub slowdown: Option<Change>,
}

impl Phase {
    /// What the phase does, in a word or two, for a picture to mark it with: "outage" for
    /// every call failing, "cold start" for a slowdown that eases back to normal, otherwise
    /// the failure share or the slowdown factor ("5% errors", "errors 0→30%", "slow ×3");
    /// `None` for a phase that changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward_sim::{Change, Phase};
    ///
    /// let outage = Phase { failure: Some(Change { from: 1.0, to: 1.0 }), ..Phase::default() };
    /// assert_eq!(outage.label().as_deref(), Some("outage"));
    /// let cold = Phase { slowdown: Some(Change { from: 4.0, to: 1.0 }), ..Phase::default() };
    /// assert_eq!(cold.label().as_deref(), Some("cold start"));
    /// assert_eq!(Phase::default().label(), None);
    /// ```
    pub fn label(&self) -> Option<String> {
        let percent = |v: f64| format!("{}%", trim(100.0 * v));
        let failure = self.failure.and_then(|c| match (c.from, c.to) {
            (a, b) if a >= 1.0 && b >= 1.0 => Some("outage".to_string()),
            (a, b) if a <= 0.0 && b <= 0.0 => None,
            (a, b) if a == b => Some(format!("{} errors", percent(a))),
            (a, b) => Some(format!("errors {}→{}", trim(100.0 * a), percent(b))),
        });
        let slowdown = self.slowdown.and_then(|c| match (c.from, c.to) {
            (a, b) if a == 1.0 && b == 1.0 => None,
            (a, b) if a > b && b <= 1.0 => Some("cold start".to_string()),
            (a, b) if a == b => Some(format!("slow ×{}", trim(a))),
            (a, b) => Some(format!("slow ×{}→×{}", trim(a), trim(b))),
        });
        match (failure, slowdown) {
            (Some(f), Some(s)) => Some(format!("{f}, {s}")),
            (f, s) => f.or(s),
        }
    }
}

/// A figure with at most two decimals and no trailing zeros: 3, 2.5, 0.25.
fn trim(v: f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A value that moves linearly from `from` to `to`; written as a number when it holds still.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "Written")]
pub struct Change {
    /// The value at the start.
    pub from: f64,
    /// The value at the end.
    pub to: f64,
}

/// How a [`Change`] is written: `0.5` or `[0.0, 0.5]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Still(f64),
    Moving([f64; 2]),
}

impl Change {
    /// The value `along` the way from `from` (0) to `to` (1).
    fn at(&self, along: f64) -> f64 {
        self.from + (self.to - self.from) * along
    }
}

impl From<Written> for Change {
    fn from(written: Written) -> Self {
        match written {
            Written::Still(v) => Self { from: v, to: v },
            Written::Moving([from, to]) => Self { from, to },
        }
    }
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

    /// Takes a call at `now`: when it will finish and whether it will succeed, or `None` when
    /// the queue is full.
    pub(crate) fn admit(&mut self, now: u64) -> Option<(u64, bool)> {
        while self.waiting.front().is_some_and(|&start| start <= now) {
            self.waiting.pop_front();
        }
        let (start, worker) = self.free.earliest(now);
        if start > now && self.waiting.len() >= self.config.queue as usize {
            return None;
        }
        let (failure, slowdown) = self.conditions(now);
        let drawn = self.service.take().unwrap_or(0.0);
        let service = drawn * slowdown;
        let done = start.saturating_add(service as u64);
        self.free.hand(worker, done);
        if start > now {
            self.waiting.push_back(start);
        }
        let ok = failure <= 0.0 || self.outcome.take().unwrap_or(1.0) >= failure;
        self.account(now);
        self.inside += 1;
        Some((done, ok))
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

/// A bucket of [`Workers`]' wheel: 2²⁰ ns, about a millisecond.
const BUCKET_BITS: u32 = 20;
/// Buckets in the wheel: about a quarter of a second ahead.
const BUCKETS: u64 = 256;

/// When each worker next becomes free: the multiset a first-come-first-served server takes
/// its earliest from and hands each call's end to.
///
/// A binary heap of the workers' free times cost a sift through every level for each call,
/// the new end sinking past all the workers long idle. But an idle worker's free time no
/// longer matters, only that it has passed; so workers whose time has passed are a count,
/// and the busy ones' times wait in a wheel of millisecond buckets (a service time is mostly
/// a few milliseconds), with a heap for the few beyond its reach. Handing a call to an idle
/// worker is a decrement and a push; only a call that finds every worker busy looks for the
/// earliest time, in the first bucket that holds one. Workers are alike, so which of two
/// workers free at the same time takes a call changes nothing: this is the heap's multiset,
/// and every start time is the heap's.
#[derive(Debug)]
struct Workers {
    /// Workers free at or before the start of bucket `cursor`.
    idle: u64,
    /// Bucket `b` (kept at `b % BUCKETS`) holds the free times in `[b, b + 1)` buckets, for
    /// `b` from `cursor` to `cursor + BUCKETS`, unsorted.
    wheel: Box<[Vec<u64>; BUCKETS as usize]>,
    /// The bucket of the latest `now` seen.
    cursor: u64,
    /// Free times in the wheel.
    wheeled: usize,
    /// Free times beyond the wheel's reach.
    far: BinaryHeap<Reverse<u64>>,
}

/// Which worker [`Workers::earliest`] found.
#[derive(Debug, Clone, Copy)]
enum Worker {
    Idle,
    Wheel { bucket: usize, index: usize },
    Far,
}

impl Workers {
    /// `count` workers, all idle.
    fn new(count: u64) -> Self {
        Self {
            idle: count,
            wheel: Box::new(core::array::from_fn(|_| Vec::new())),
            cursor: 0,
            wheeled: 0,
            far: BinaryHeap::new(),
        }
    }

    /// When the earliest worker is free from `now` on (`now` itself if one is idle), and
    /// which it is, for [`hand`](Workers::hand). `now` never goes back.
    fn earliest(&mut self, now: u64) -> (u64, Worker) {
        self.advance(now >> BUCKET_BITS);
        if self.idle > 0 {
            return (now, Worker::Idle);
        }
        if self.wheeled > 0 {
            for b in self.cursor..self.cursor + BUCKETS {
                let bucket = (b % BUCKETS) as usize;
                let times = &self.wheel[bucket];
                if let Some((index, &at)) = times.iter().enumerate().min_by_key(|(_, t)| **t) {
                    return (at.max(now), Worker::Wheel { bucket, index });
                }
            }
        }
        match self.far.peek() {
            Some(&Reverse(at)) => (at.max(now), Worker::Far),
            // Every worker is counted somewhere; an empty server has only idle ones.
            None => (now, Worker::Idle),
        }
    }

    /// Gives `worker`, found by the last [`earliest`](Workers::earliest), a call that ends
    /// at `done`.
    fn hand(&mut self, worker: Worker, done: u64) {
        match worker {
            Worker::Idle => self.idle = self.idle.saturating_sub(1),
            Worker::Wheel { bucket, index } => {
                self.wheel[bucket].swap_remove(index);
                self.wheeled -= 1;
            }
            Worker::Far => {
                self.far.pop();
            }
        }
        self.put(done);
    }

    /// Files a busy worker's free time.
    fn put(&mut self, at: u64) {
        let b = at >> BUCKET_BITS;
        if b < self.cursor {
            self.idle += 1;
        } else if b < self.cursor + BUCKETS {
            self.wheel[(b % BUCKETS) as usize].push(at);
            self.wheeled += 1;
        } else {
            self.far.push(Reverse(at));
        }
    }

    /// Moves the cursor to bucket `to`, counting every worker free before it as idle.
    fn advance(&mut self, to: u64) {
        while self.cursor < to {
            if self.wheeled == 0 {
                // Nothing in the wheel: jump, up to the first far time's bucket at most.
                let first = self.far.peek().map_or(to, |&Reverse(at)| at >> BUCKET_BITS);
                self.cursor = self.cursor.max(first.min(to));
            } else {
                let times = &mut self.wheel[(self.cursor % BUCKETS) as usize];
                self.idle += times.len() as u64;
                self.wheeled -= times.len();
                times.clear();
                self.cursor += 1;
            }
            while let Some(&Reverse(at)) = self.far.peek() {
                if at >> BUCKET_BITS >= self.cursor + BUCKETS {
                    break;
                }
                self.far.pop();
                self.put(at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn server(workers: u32, queue: u32) -> Server {
        let config = Backend {
            workers,
            queue,
            latency: Latency::Constant {
                value: Duration::from_millis(10),
            },
            ..Backend::default()
        };
        Server::new(&config, Dice::new(1), Dice::new(2))
    }

    #[test]
    fn calls_queue_first_come_first_served_and_overflow_is_refused() {
        let mut s = server(2, 1);
        assert_eq!(s.admit(0), Some((10 * MS, true)));
        assert_eq!(s.admit(MS), Some((11 * MS, true)));
        // Both workers busy: this one waits for the first to free up at 10 ms.
        assert_eq!(s.admit(2 * MS), Some((20 * MS, true)));
        // The queue holds one: refused.
        assert_eq!(s.admit(3 * MS), None);
        assert_eq!(s.inside(), 3);
        // At 10 ms the waiting call has started, so the queue has room again.
        assert_eq!(s.admit(10 * MS), Some((21 * MS, true)));
    }

    // The workers against the binary heap of free times they replace, over arrivals that
    // idle, saturate and leave long gaps, with service times from a microsecond to seconds:
    // every start time agrees.
    #[test]
    fn workers_start_every_call_when_a_heap_of_free_times_would() {
        let mut dice = Dice::new(3);
        let mut workers = Workers::new(7);
        let mut heap: BinaryHeap<Reverse<u64>> = std::iter::repeat_n(Reverse(0), 7).collect();
        let mut now = 0u64;
        for i in 0..200_000u64 {
            now += match dice.roll() {
                r if r < 0.001 => (dice.roll() * 5e9) as u64,
                r if r < 0.3 => 0,
                _ => (dice.roll() * 4e6) as u64,
            };
            let service = match i % 97 {
                0 => (dice.roll() * 2e9) as u64,
                1 => 1_000,
                _ => (dice.roll() * 3e7) as u64,
            };
            let (start, worker) = workers.earliest(now);
            let mut earliest = heap.peek_mut().expect("seven workers");
            assert_eq!(start, earliest.0.max(now), "call {i} at {now}");
            earliest.0 = start + service;
            drop(earliest);
            workers.hand(worker, start + service);
        }
    }

    #[test]
    fn the_cpu_reading_is_the_smoothed_busy_fraction() {
        let mut s = server(2, 0);
        s.admit(0);
        s.sample(250 * MS);
        // One of two workers was busy for 10 ms of 250, but `finish` was never called, so the
        // meter counts it busy throughout: half the workers, smoothed by 0.05.
        assert_eq!(s.cpu, 0.5 * (1.0 - 0.95));
        s.finish(250 * MS);
        s.sample(500 * MS);
        assert_eq!(s.cpu, 0.5 * (1.0 - 0.95) * 0.95);
        assert_eq!(s.cpu(), 24);
    }

    #[test]
    fn the_schedule_sets_failure_and_slowdown_over_time() {
        let backend = Backend {
            failure: 0.01,
            schedule: vec![
                Phase {
                    start: Duration::from_secs(10),
                    end: Duration::from_secs(20),
                    failure: Some(Change { from: 1.0, to: 1.0 }),
                    slowdown: None,
                },
                Phase {
                    start: Duration::from_secs(20),
                    end: Duration::from_secs(30),
                    failure: None,
                    slowdown: Some(Change { from: 5.0, to: 1.0 }),
                },
            ],
            ..Backend::default()
        };
        let at = |s: u64| backend.conditions(s * 1_000_000_000);
        assert_eq!(at(5), (0.01, 1.0));
        assert_eq!(at(10), (1.0, 1.0));
        assert_eq!(at(19), (1.0, 1.0));
        assert_eq!(at(20), (0.01, 5.0));
        assert_eq!(at(25), (0.01, 3.0));
    }

    #[test]
    fn a_phase_is_labelled_by_what_it_does() {
        let still = |v| Some(Change { from: v, to: v });
        let moving = |from, to| Some(Change { from, to });
        let label = |failure, slowdown| {
            Phase {
                failure,
                slowdown,
                ..Phase::default()
            }
            .label()
        };
        assert_eq!(label(still(1.0), None).as_deref(), Some("outage"));
        assert_eq!(label(still(0.05), None).as_deref(), Some("5% errors"));
        assert_eq!(
            label(moving(0.0, 0.3), None).as_deref(),
            Some("errors 0→30%")
        );
        assert_eq!(label(None, moving(4.0, 1.0)).as_deref(), Some("cold start"));
        assert_eq!(label(None, still(2.5)).as_deref(), Some("slow ×2.5"));
        assert_eq!(label(None, moving(1.0, 3.0)).as_deref(), Some("slow ×1→×3"));
        assert_eq!(
            label(still(1.0), still(2.0)).as_deref(),
            Some("outage, slow ×2")
        );
        assert_eq!(label(still(0.0), still(1.0)), None);
    }

    #[test]
    fn log_normal_service_times_have_the_median_and_tail_asked_for() {
        let latency = Latency::LogNormal {
            median: Duration::from_millis(20),
            p99: Duration::from_millis(80),
        };
        let mut dice = Dice::new(9);
        let draw = latency.prepare();
        let mut draws: Vec<f64> = (0..100_000).map(|_| draw.draw(&mut dice)).collect();
        draws.sort_by(f64::total_cmp);
        let (median, p99) = (draws[50_000] / 1e6, draws[99_000] / 1e6);
        assert!((median - 20.0).abs() < 0.5, "{median}");
        assert!((p99 - 80.0).abs() < 4.0, "{p99}");
    }
}
