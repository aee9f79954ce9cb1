//! The simulation: an event queue over the simulated clock.
//!
//! Time is whole nanoseconds. The loop takes, in order, whichever comes first of: a CPU
//! sample, the end of an interval, an event in the queue (an attempt finishing, a client
//! giving up on one, a retry starting) and the next arrival. Ties go in that order, so an
//! event at an interval's boundary counts in the interval it opens, and a call that finishes
//! at the instant another arrives frees its worker first. Nothing happens between events, so
//! an idle hour costs nothing and a busy one costs a few vector pushes a call; nothing is
//! rounded to a tick, so a 100 µs gap between arrivals is 100 µs.

use core::time::Duration;

use ironward::{
    Backoff, Breaker, Budget, Criticality, Deadline, Grant, Limiter, Permit, Settle, Shedder,
    Ticket,
};

use crate::ahead::Ahead;
use crate::arrivals::Arrivals;
use crate::backend::Server;
use crate::classic::{ClassicBreaker, Trial};
use crate::dice::Dice;
use crate::histogram::Histogram;
use crate::policy::BreakerPolicy;
use crate::queue::Queue;
use crate::quotas::{Piece, Quotas};
use crate::report::{Report, Row, Run};
use crate::scenario::{Scenario, Variant};
use ironward::clock::nanos;

/// The streams of chance a run draws from, one per use (see [`Dice::fork`]).
const ARRIVALS: u64 = 1;
const SERVICE: u64 = 2;
const OUTCOME: u64 = 3;
const BREAKER: u64 = 4;
const JITTER: u64 = 5;

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
    pub fn run(&self, mut progress: impl FnMut(Duration)) -> Run {
        let mut engine = Engine::new(self);
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
        engine.finish(self)
    }
}

/// One call: when it first arrived, which attempt is next, the last backoff, and its class.
#[derive(Debug, Clone, Copy)]
struct Call {
    start: u64,
    attempt: u32,
    previous: Option<Duration>,
    class: Criticality,
}

/// What the client's limiter and breaker handed out for an attempt.
#[derive(Debug)]
struct Guard {
    pass: Pass,
    grant: Option<Grant>,
}

/// What the client's breaker handed out for an attempt.
#[derive(Debug)]
enum Pass {
    Unguarded,
    Sre(Permit),
    Classic(Trial),
}

/// What the server-side pieces hold while the backend works on an attempt.
#[derive(Debug)]
struct Inside {
    ticket: Option<Ticket>,
    gate: bool,
}

/// Something that happens at a set time.
#[derive(Debug)]
enum What {
    /// The backend finishes an attempt, and the client hears back at once.
    Done {
        call: Call,
        guard: Guard,
        inside: Inside,
        ok: bool,
    },
    /// The client stops waiting for an attempt the backend has not finished.
    Timeout { call: Call, guard: Guard },
    /// The backend finishes an attempt the client gave up on.
    Finish { inside: Inside, ok: bool },
    /// A call's next attempt starts.
    Retry { call: Call },
}

/// The client's breaker, of either kind.
#[derive(Debug)]
enum Front {
    Sre(Breaker),
    Classic(ClassicBreaker),
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
            events: Queue::new(),
            front: p.breaker.map(|b| match b {
                BreakerPolicy::Sre(sre) => Front::Sre(Breaker::new(sre, zero)),
                BreakerPolicy::Classic(classic) => Front::Classic(ClassicBreaker::new(classic)),
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
            } => {
                self.finished(inside, ok);
                if ok {
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
            What::Retry { call } => self.attempt(call),
        }
    }

    #[inline(always)]
    fn arrive(&mut self, class: Criticality) {
        self.row.offered += 1;
        self.attempt(Call {
            start: self.now,
            attempt: 1,
            previous: None,
            class,
        });
    }

    /// One attempt: the client's limiter and breaker, the server's pieces, then the backend.
    #[inline]
    fn attempt(&mut self, call: Call) {
        if call.attempt > 1 {
            self.row.retries += 1;
        }
        let now = self.at();
        let rank = call.class.rank();
        let grant = match &mut self.limiter {
            None => None,
            Some(limiter) => match limiter.acquire_as(now, call.class) {
                Ok(grant) => Some(grant),
                Err(_) => {
                    self.row.refused.limiter += 1;
                    self.row.refused_by[rank] += 1;
                    self.end_call(false);
                    return;
                }
            },
        };
        let pass = match &mut self.front {
            None => Some(Pass::Unguarded),
            Some(Front::Sre(b)) => b
                .allow(now, self.rolls.take().unwrap_or(0.0))
                .map(Pass::Sre),
            Some(Front::Classic(b)) => b.allow(self.now).map(Pass::Classic),
        };
        let Some(pass) = pass else {
            if let (Some(grant), Some(limiter)) = (grant, &mut self.limiter) {
                limiter.settle(grant, Settle::Ignored, now);
            }
            self.row.refused.breaker += 1;
            self.row.refused_by[rank] += 1;
            self.end_call(false);
            return;
        };
        let guard = Guard { pass, grant };
        let inside = match self.enter(call.class) {
            Ok(inside) => inside,
            Err(piece) => {
                let refused = &mut self.row.refused;
                *match piece {
                    Piece::Shedder => &mut refused.shedder,
                    Piece::Bucket => &mut refused.bucket,
                    Piece::Sliding => &mut refused.sliding,
                    Piece::Period => &mut refused.period,
                    Piece::Gate => &mut refused.gate,
                } += 1;
                self.row.refused_by[rank] += 1;
                return self.failed(call, guard, Settle::Dropped);
            }
        };
        let Some((done, ok)) = self.server.admit(self.now) else {
            self.row.refused.queue += 1;
            self.row.refused_by[rank] += 1;
            self.leave(inside, false);
            return self.failed(call, guard, Settle::Dropped);
        };
        self.row.admitted += 1;
        self.row.admitted_by[rank] += 1;
        self.count_in_window();
        self.row.peak_in_flight = self.row.peak_in_flight.max(self.server.inside());
        match self.limit(&call) {
            Some(limit) if limit < done => {
                self.push(limit, What::Timeout { call, guard });
                self.push(done, What::Finish { inside, ok });
            }
            _ => self.push(
                done,
                What::Done {
                    call,
                    guard,
                    inside,
                    ok,
                },
            ),
        }
    }

    /// The server-side pieces in order, for a call of `class`; on a refusal, whatever was
    /// taken is given back.
    #[inline(always)]
    fn enter(&mut self, class: Criticality) -> Result<Inside, Piece> {
        let now = self.at();
        let ticket = match &mut self.shedder {
            Some(shedder) => Some(
                shedder
                    .check_as(now, self.server.cpu(), class)
                    .map_err(|_| Piece::Shedder)?,
            ),
            None => None,
        };
        let refused = match &mut self.quotas {
            Some(quotas) => quotas.enter(now).err(),
            None => None,
        };
        let inside = Inside {
            ticket,
            gate: refused.is_none() && self.quotas.as_ref().is_some_and(Quotas::gated),
        };
        match refused {
            None => Ok(inside),
            Some(piece) => {
                self.leave(inside, false);
                Err(piece)
            }
        }
    }

    /// Gives back what the server-side pieces hold for an attempt, which ended in `ok`.
    #[inline(always)]
    fn leave(&mut self, inside: Inside, ok: bool) {
        if let (Some(ticket), Some(shedder)) = (inside.ticket, &mut self.shedder) {
            if ok {
                shedder.pass(ticket, self.at);
            } else {
                shedder.fail(ticket);
            }
        }
        if let (true, Some(quotas)) = (inside.gate, &mut self.quotas) {
            quotas.leave();
        }
    }

    /// The backend finishes an attempt.
    #[inline(always)]
    fn finished(&mut self, inside: Inside, ok: bool) {
        self.server.finish(self.now);
        if !ok {
            self.row.failed += 1;
        }
        self.leave(inside, ok);
    }

    /// When the client stops waiting for an attempt starting now: its timeout or the call's
    /// deadline, whichever is sooner; `None` for neither.
    fn limit(&self, call: &Call) -> Option<u64> {
        let timeout = (self.timeout > 0).then(|| self.now.saturating_add(self.timeout));
        if self.deadline.is_zero() {
            return timeout;
        }
        let deadline = Deadline::start(self.deadline, Duration::from_nanos(call.start))
            .remaining(self.at())
            .map(|left| self.now.saturating_add(nanos(left)));
        match (timeout, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Records the settled outcome with the client's breaker, and with its limiter as `how`.
    #[inline(always)]
    fn settle(&mut self, guard: Guard, ok: bool, how: Settle) {
        let now = self.at();
        if let (Some(grant), Some(limiter)) = (guard.grant, &mut self.limiter) {
            limiter.settle(grant, how, now);
        }
        match (guard.pass, &mut self.front) {
            (Pass::Sre(permit), Some(Front::Sre(b))) if ok => {
                b.pass(permit, now);
            }
            (Pass::Sre(permit), Some(Front::Sre(b))) => {
                b.fail(permit, now);
            }
            (Pass::Classic(trial), Some(Front::Classic(b))) => b.record(trial, !ok, self.now),
            _ => {}
        }
    }

    #[inline(always)]
    fn succeeded(&mut self, call: Call, guard: Guard) {
        self.settle(guard, true, Settle::Success);
        if let Some(budget) = &mut self.budget {
            budget.pass();
        }
        self.row.succeeded += 1;
        let micros = (self.now - call.start) / 1_000;
        self.row_latency.record(micros);
        self.last_end = Some(self.now);
    }

    /// The client hears that an attempt failed, its limiter told `how`: retry it if the
    /// policy allows, or give up.
    #[cold]
    fn failed(&mut self, call: Call, guard: Guard, how: Settle) {
        self.settle(guard, false, how);
        if let Some(budget) = &mut self.budget {
            budget.fail();
        }
        let allowed =
            self.backoff.more(call.attempt) && self.budget.as_ref().is_none_or(Budget::can_retry);
        if !allowed {
            return self.end_call(false);
        }
        let delay = self
            .backoff
            .delay(call.attempt, self.jitter.roll(), call.previous);
        let at = self.now.saturating_add(nanos(delay));
        if Deadline::start(self.deadline, Duration::from_nanos(call.start))
            .expired(Duration::from_nanos(at))
        {
            return self.end_call(false);
        }
        let next = Call {
            attempt: call.attempt + 1,
            previous: Some(delay),
            ..call
        };
        self.push(at, What::Retry { call: next });
    }

    fn end_call(&mut self, ok: bool) {
        if !ok {
            self.row.gave_up += 1;
        }
        self.last_end = Some(self.now);
    }

    /// Counts an attempt that reached the backend towards the peak over any window.
    ///
    /// The stamps not yet pruned are at least the attempts in the window, so while they are
    /// no more than the interval's peak, the true count cannot raise it and nothing need be
    /// pruned: the window is pruned only when the stale count passes the peak, a batch of
    /// stamps at a time (a loop that runs to its end, not one that mispredicts its exit on
    /// most calls). The run's peak is the greatest of the intervals', taken as each closes.
    #[inline(always)]
    fn count_in_window(&mut self) {
        self.stamps.push(self.now);
        if ((self.stamps.len() - self.first) as u64) <= self.row.peak_window {
            return;
        }
        self.prune_window();
        let inside = (self.stamps.len() - self.first) as u64;
        self.row.peak_window = self.row.peak_window.max(inside);
    }

    /// Forgets the attempts that have left the window ending now.
    ///
    /// The stamps are in time order, so those that left are a prefix.
    #[cold]
    fn prune_window(&mut self) {
        let (now, window) = (self.now, self.window);
        let left = self.stamps[self.first..].iter();
        self.first += left.take_while(|&&t| now - t >= window).count();
        // Drop the stamps gone once they are most of the vector: a copy per stamp, at most.
        if self.first > 4096 && self.first * 2 > self.stamps.len() {
            self.stamps.drain(..self.first);
            self.first = 0;
        }
    }

    /// Closes the interval ending now and opens the next.
    fn close_row(&mut self) {
        let now = self.at();
        let quantile = |q| self.row_latency.quantile(q).map(Duration::from_micros);
        let (p50, p99) = (quantile(0.5), quantile(0.99));
        let row = &mut self.row;
        row.p50 = p50;
        row.p99 = p99;
        row.in_flight = self.server.inside();
        row.cpu = self.server.cpu();
        row.breaker_ratio = match &self.front {
            Some(Front::Sre(b)) => b.ratio(now),
            Some(Front::Classic(b)) => b.ratio(self.now),
            None => 0.0,
        };
        row.limit = self.limiter.as_ref().map_or(0, Limiter::limit);
        if let Some(shedder) = &self.shedder {
            row.shedder_flying = shedder.flying();
            row.shedder_average = shedder.average();
        }
        self.prune_window();
        let next = Row {
            start: now,
            peak_in_flight: self.server.inside(),
            peak_window: (self.stamps.len() - self.first) as u64,
            ..Row::default()
        };
        self.peak_window = self.peak_window.max(self.row.peak_window);
        self.rows.push(core::mem::replace(&mut self.row, next));
        self.latency.merge(&self.row_latency);
        self.row_latency.clear();
    }

    fn finish(self, v: &Variant) -> Run {
        let unfinished = self
            .events
            .waiting()
            .filter(|what| !matches!(what, What::Finish { .. }))
            .count() as u64;
        let quantile = |q| self.latency.quantile(q).map(Duration::from_micros);
        Run {
            variant: v.clone(),
            rows: self.rows,
            peak_window: self.peak_window,
            p50: quantile(0.5),
            p99: quantile(0.99),
            max: (self.latency.total() > 0).then(|| Duration::from_micros(self.latency.max())),
            last_end: self.last_end.map(Duration::from_nanos),
            unfinished,
        }
    }
}
