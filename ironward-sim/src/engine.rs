//! The simulation: an event queue over the simulated clock.
//!
//! Time is whole nanoseconds. The loop takes, in order, whichever comes first of: a CPU
//! sample, the end of an interval, an event in the queue (an attempt finishing, a client
//! giving up on one, a retry starting, a closed-loop client sending) and the next arrival. Ties go in that order, so an
//! event at an interval's boundary counts in the interval it opens, and a call that finishes
//! at the instant another arrives frees its worker first. Nothing happens between events, so
//! an idle hour costs nothing and a busy one costs a few vector pushes a call; nothing is
//! rounded to a tick, so a 100 µs gap between arrivals is 100 µs.

mod attempt;
mod call;
mod chaos;
mod closed;
mod front;
mod outcome;
mod tally;

use core::time::Duration;

use ironward::{
    Backoff, Budget, ClassicBreaker, Criticality, Limiter, Settle, Shedder, SreBreaker,
};

use crate::ahead::Ahead;
use crate::arrivals::{Arrivals, Closed};
use crate::backend::Server;

use crate::dice::Dice;
use crate::histogram::Histogram;
use crate::policy::BreakerPolicy;
use crate::queue::Queue;
use crate::quotas::Quotas;
use crate::report::{Report, Row, VariantRun};
use crate::scenario::{Scenario, Variant};
use ironward::clock::nanos;

use call::{Call, What};
use front::Front;

/// The streams of chance a run draws from, one per use (see [`Dice::fork`]).
const ARRIVALS: u64 = 1;
const SERVICE: u64 = 2;
const OUTCOME: u64 = 3;
const BREAKER: u64 = 4;
const JITTER: u64 = 5;
const THINK: u64 = 6;

const NANOS_PER_SEC: u64 = 1_000_000_000;

impl Scenario {
    /// Runs every variant in turn and gathers the runs.
    ///
    /// `progress` is called at the end of each interval with the simulated time done so far
    /// across all variants, which runs up to [`Scenario::simulated`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_sim::Scenario;
    ///
    /// let scenario = Scenario::from_toml(r#"
    ///     duration = "10s"
    ///     arrivals = [{ kind = "constant", rate = 50.0, end = "9s" }]
    /// "#).unwrap();
    /// let report = scenario.run(|_| {});
    /// let total = report.runs[0].total();
    /// assert_eq!(total.offered, 450);
    /// assert_eq!(total.succeeded, 450, "a healthy backend serves every call");
    /// ```
    pub fn run(&self, mut progress: impl FnMut(Duration)) -> Report {
        let mut done = Duration::ZERO;
        let runs = self
            .variants
            .iter()
            .map(|variant| {
                let run = variant.run(|t| progress(done + t));
                done += variant.duration;
                run
            })
            .collect();
        Report {
            name: self.name.clone(),
            about: self.about.clone(),
            focus: self.focus,
            plot: self.plot.clone(),
            runs,
        }
    }
}

impl Variant {
    /// Simulates this setup from its seed; `progress` is called at the end of each interval
    /// with the simulated time done.
    ///
    /// Memory does not grow with traffic: the state is the policies', one event per call
    /// under way, and a row per interval.
    pub fn run(&self, progress: impl FnMut(Duration)) -> VariantRun {
        self.simulate(progress).finish(self)
    }

    /// The run, left as the engine has it at its end.
    fn simulate(&self, mut progress: impl FnMut(Duration)) -> Engine {
        let mut engine = Engine::new(self);
        engine.open_loops();
        let end = nanos(self.duration);
        let interval = nanos(self.interval).max(1);
        let sample = nanos(self.backend.cpu.sample).max(1);
        let (mut next_row, mut next_sample) = (interval.min(end), sample);
        // The next arrival, read again only once it is taken: nothing else moves it.
        let mut arrival = engine.arrivals.peek().unwrap_or(u64::MAX);
        loop {
            // Between two boundaries (a sample, an interval's end), only events and arrivals:
            // the loop that runs nearly every step of a run compares the two and one bound.
            let boundary = next_sample.min(next_row);
            loop {
                let event = engine.events.peek().unwrap_or(u64::MAX);
                if event <= arrival {
                    if event >= boundary {
                        break;
                    }
                    engine.tick(event);
                    if let Some(what) = engine.events.pop() {
                        engine.handle(what);
                    }
                } else {
                    if arrival >= boundary {
                        break;
                    }
                    engine.tick(arrival);
                    let class = engine.arrivals.pop();
                    engine.arrive(class);
                    arrival = engine.arrivals.peek().unwrap_or(u64::MAX);
                }
            }
            if next_sample <= next_row {
                engine.tick(next_sample);
                engine.server.sample(next_sample);
                next_sample = next_sample.saturating_add(sample);
            } else {
                engine.tick(next_row);
                engine.close_row();
                progress(Duration::from_nanos(next_row));
                if next_row >= end {
                    break;
                }
                next_row = next_row.saturating_add(interval).min(end);
            }
        }
        engine
    }
}

/// A run in progress.
#[derive(Debug)]
struct Engine {
    now: u64,
    /// `now` as a [`Duration`], for the core's decisions.
    at: Duration,
    /// The whole second `now` is in, and when it started, in nanoseconds.
    second: (u64, u64),
    timeout: u64,
    deadline: Duration,
    backoff: Backoff,
    arrivals: Arrivals,
    /// The closed-loop sources, each with when it stops; a call's `source` indexes them.
    loops: Vec<(Closed, u64)>,
    /// The closed-loop clients' think times.
    think: Dice,
    events: Queue<What>,
    front: Option<Front>,
    limiter: Option<Limiter>,
    budget: Option<Budget>,
    shedder: Option<Shedder>,
    quotas: Option<Quotas>,
    server: Server,
    /// The breaker's rolls, one per attempt it decides.
    rolls: Ahead<f64>,
    jitter: Dice,
    row: Row,
    rows: Vec<Row>,
    /// Latencies of the interval's successes, merged into `latency` as it closes.
    row_latency: Histogram,
    latency: Histogram,
    window: u64,
    /// When each attempt that reached the backend within the last `window` did.
    stamps: Vec<u64>,
    /// Where the stamps still in the window start: those before it have left.
    first: usize,
    peak_window: u64,
    last_end: Option<u64>,
    /// The client's chaos policy, when it is on.
    chaos: Option<chaos::Chaos>,
}

impl Engine {
    fn new(v: &Variant) -> Self {
        let seed = v.seed;
        let p = &v.policies;
        let zero = Duration::ZERO;
        let rows = (v.duration.as_nanos() / v.interval.as_nanos().max(1)) as usize + 1;
        Self {
            now: 0,
            at: Duration::ZERO,
            second: (0, 0),
            timeout: nanos(v.client.timeout),
            deadline: v.client.deadline,
            backoff: v.client.backoff,
            arrivals: Arrivals::new(&v.arrivals, nanos(v.duration), Dice::fork(seed, ARRIVALS)),
            loops: closed::loops(v),
            think: Dice::fork(seed, THINK),
            events: Queue::new(),
            front: p.breaker.map(|b| match b {
                BreakerPolicy::Sre(sre) => Front::Sre(SreBreaker::new(sre, zero)),
                BreakerPolicy::Classic(classic) => {
                    Front::Classic(ClassicBreaker::new(classic, zero))
                }
            }),
            limiter: p.limiter.map(|policy| Limiter::new(policy, zero)),
            budget: v
                .client
                .budget
                .map(|b| Budget::new(b.max_tokens, b.token_ratio)),
            shedder: p.shedder.map(|shed| Shedder::new(shed, zero)),
            quotas: Quotas::new(p),
            server: Server::new(
                &v.backend,
                Dice::fork(seed, SERVICE),
                Dice::fork(seed, OUTCOME),
            ),
            rolls: {
                let mut dice = Dice::fork(seed, BREAKER);
                Ahead::new(move |block, wanted| block.extend((0..wanted).map(|_| dice.roll())))
            },
            jitter: Dice::fork(seed, JITTER),
            row: Row::default(),
            rows: Vec::with_capacity(rows.min(1 << 20)),
            row_latency: Histogram::new(),
            latency: Histogram::new(),
            window: nanos(v.window).max(1),
            stamps: Vec::new(),
            first: 0,
            peak_window: 0,
            last_end: None,
            chaos: p.chaos.as_ref().and_then(chaos::Chaos::new),
        }
    }

    fn at(&self) -> Duration {
        self.at
    }

    /// Moves the clock to `now`, once an event, in both the forms the core and the queue take.
    ///
    /// The [`Duration`] is built on the whole second last seen: `Duration::from_nanos`
    /// divides by a billion, twice an event, where nearly every event falls in the same
    /// second as the one before. The seconds and nanoseconds are the division's all the same.
    fn tick(&mut self, now: u64) {
        self.now = now;
        let into = now.wrapping_sub(self.second.1);
        if into >= NANOS_PER_SEC {
            let seconds = now / NANOS_PER_SEC;
            self.second = (seconds, seconds * NANOS_PER_SEC);
        }
        self.at = Duration::new(self.second.0, (now - self.second.1) as u32);
    }

    /// Schedules `what` at `at`, inlined so that the event is built where it waits, not on
    /// the stack and then copied (the copy's loads stalled on the stores just made).
    #[inline(always)]
    fn push(&mut self, at: u64, what: What) {
        self.events.push(at, what);
    }

    #[inline(always)]
    fn handle(&mut self, what: What) {
        match what {
            What::Done {
                call,
                guard,
                inside,
                ok,
                replace,
            } => {
                self.finished(inside, ok);
                if ok && !replace {
                    self.succeeded(call, guard);
                } else {
                    // An error says nothing of the backend's load: the limiter ignores it.
                    self.failed(call, guard, Settle::Ignored);
                }
            }
            What::Timeout { call, guard } => {
                self.row.timed_out += 1;
                self.failed(call, guard, Settle::Dropped);
            }
            What::Finish { inside, ok } => self.finished(inside, ok),
            What::Delayed { call, guard, since } => self.send(call, guard, since, false),
            What::Start { call } => {
                // A first attempt here is a closed-loop client's call, offered as it starts.
                if call.attempt == 1 {
                    self.row.offered += 1;
                }
                self.attempt(call);
            }
        }
    }

    #[inline(always)]
    fn arrive(&mut self, class: Criticality) {
        self.row.offered += 1;
        self.attempt(Call::first(self.now, class, closed::OPEN));
    }
}
