//! The front door's retry beside both HTTP edges: every scenario runs through
//! `ironward_tokio::call::Retry`, through `ironward-tower`'s `HttpRetryLayer` and through
//! `ironward-reqwest`'s `RetryMiddleware`, and all must make the same decisions: the same
//! attempts, each started at the same instant, the same waits and the same outcome (the
//! value, or the stop with the last failure), and leave a shared retry budget with the same
//! tokens.
//!
//! All three decide on the core's retry engine, the HTTP edges through
//! `ironward::http_retry::Run` under `Settings::rules()`; the front door is given those rules,
//! `when` the HTTP retryable statuses (refusing a reply whose `Retry-After` it cannot read),
//! and `after` the `Retry-After` the failed reply carries, read by the core's
//! `retry_after_delay` on the same fixed wall clock.
//!
//! Each scenario runs on two kinds of time, so that the records are compared across clocks
//! and timers:
//!
//! - on manual clocks ([`Clock::manual`]: each sleep moves the clock at once, exactly): the
//!   front door and the tower layer around a scripted operation (a `tower::service_fn` for
//!   the layer) that answers after its scripted time, slept on that clock; and the reqwest
//!   middleware over real HTTP to the axum server of `edges.rs` on a free 127.0.0.1 port,
//!   which shares the middleware's manual clock and answers after the same time. The three
//!   records must be one, to the nanosecond.
//! - on tokio's paused time ([`Clock::monotonic`], each sleep a tokio timer the runtime
//!   auto-advances to): the front door and the tower layer, whose records must be one, and
//!   the manual record retimed to tokio's timers, which fire on whole milliseconds
//!   ([`on_tokio_timers`]). reqwest is not run there: its connections wait on real sockets,
//!   which paused time would race.
//!
//! Every attempt's start and every call's end are recorded on the clock of the harness, from
//! the scenario's first call; each attempt takes what the script says, so the wait after an
//! attempt is the next start less the attempt's end, and the front door's `notify` must have
//! heard each.
//!
//! Four differences are deliberate, documented on the front door's `Retry` ("Beside the HTTP
//! edges"), and asserted here: the HTTP edges decide only by `Settings`, whose backoff always
//! doubles with full jitter (the front door takes any `Rules`, and draws each jitter kind as
//! the core's `Backoff` does); they roll the dice for every failed attempt, a 404 too, where
//! the front door rolls only for a failure its `when` retries (so a 404 between two calls on
//! the same seeded dice moves the HTTP edges' later draws on by one); and their attempt
//! timeouts are tokio timers whatever their clock, where the front door judges an attempt on
//! its clock (the same cut on tokio's time; on a manual clock, an attempt that moves the clock
//! past its timeout is cut by the front door and kept by the HTTP edges); and they stop on a
//! `Retry-After` they cannot read, which the front door's `after` cannot do (its `when`
//! refuses such a reply: the same attempt, stopped as not retryable).

use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{HeaderValue, Request, Response};
use ironward::http_retry::{
    Retried, Settings, Stop, StopReason, retry_after_delay, retryable_status,
};
use ironward::retry::{Cause, Rules};
use ironward::{Backoff, Jitter, SharedBudget};
use ironward_reqwest::RetryMiddleware;
use ironward_tokio::call::{CallError, Retry};
use ironward_tokio::{Clock, Dice};
use ironward_tower::HttpRetryLayer;
use reqwest_middleware::ClientBuilder;
use tower::{Layer, ServiceExt, service_fn};

use crate::edges::server::{Reply, Server};

/// The fixed wall clock: 2023-11-14T22:13:20Z.
const WALL: u64 = 1_700_000_000;

/// Where the manual clocks start, so that no instant is zero by accident.
const START: Duration = Duration::from_secs(10);

/// How long one edge may take over a scenario in real time: its waits are free (a manual
/// clock, or tokio's paused time), its requests local.
const LIMIT: Duration = Duration::from_secs(20);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// How the dice roll.
#[derive(Debug, Clone, Copy)]
enum Draws {
    /// Every roll is 1: no jitter, each wait is the backoff's ceiling.
    Whole,
    /// A seeded sequence, the same for every edge.
    Seeded(u64),
    /// No jitter, and each roll (drawn once per failed attempt, after the clock was read)
    /// moves the manual clock this far: the caller oversleeps its wait by it.
    Oversleep(Duration),
}

/// What time an edge runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Time {
    /// A [`Clock::manual`] at [`START`]: each sleep on it moves it at once.
    Manual,
    /// tokio's paused time, read through a [`Clock::monotonic`]: each sleep a tokio timer,
    /// which the runtime auto-advances to (the caller's runtime must be paused).
    Paused,
}

/// One scenario: calls made one after the other through one policy, sharing its dice and
/// its retry budget, each attempt answered by the next reply of the script.
#[derive(Debug, Clone)]
struct Scenario {
    settings: Settings,
    /// The replies, in order across the calls; the last repeats.
    script: Vec<Reply>,
    calls: usize,
    /// A retry budget shared by the calls: its `max_tokens` and `token_ratio`.
    budget: Option<(u32, f64)>,
    draws: Draws,
    /// The time an attempt may take.
    attempt_timeout: Option<Duration>,
}

impl Scenario {
    fn new(script: Vec<Reply>) -> Self {
        Self {
            settings: Settings::default(),
            script,
            calls: 1,
            budget: None,
            draws: Draws::Whole,
            attempt_timeout: None,
        }
    }

    /// The clock and the dice an edge runs the scenario on.
    fn sources(&self, time: Time) -> (Clock, Dice) {
        let (clock, hand) = match time {
            Time::Manual => {
                let (clock, hand) = Clock::manual(START);
                (clock, Some(hand))
            }
            Time::Paused => (Clock::monotonic(), None),
        };
        let dice = match self.draws {
            Draws::Whole => Dice::from_fn(|| 1.0),
            Draws::Seeded(seed) => Dice::seeded(seed),
            Draws::Oversleep(by) => {
                let hand = hand.expect("only a manual clock is overslept");
                Dice::from_fn(move || {
                    hand.advance(by);
                    1.0
                })
            }
        };
        (clock, dice)
    }

    fn budget(&self) -> Option<Arc<SharedBudget>> {
        self.budget
            .map(|(max, ratio)| Arc::new(SharedBudget::new(max, ratio)))
    }

    /// How long the `n`th attempt (from 0, across the calls) takes: its reply's time, or the
    /// attempt timeout if that is shorter (on tokio's time, which cuts it there).
    fn takes(&self, n: usize) -> Duration {
        let takes = self.script[n.min(self.script.len() - 1)].takes;
        self.attempt_timeout
            .map_or(takes, |timeout| takes.min(timeout))
    }
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// A reply below 400.
    Value(u16),
    /// The retry stopped (the stop's label): with the last failed reply's status, or none
    /// when the call ended without a reply to return.
    Stopped {
        status: Option<u16>,
        stop: &'static str,
    },
}

/// What one call through an edge came to.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Call {
    attempts: u32,
    /// Each wait: the next attempt's start less this one's end.
    waits: Vec<Duration>,
    /// The record's time waited, their sum.
    waited: Duration,
    outcome: Outcome,
    /// When the call ended, from the scenario's first call.
    ended: Duration,
}

/// What a scenario came to through one edge.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    /// Every attempt's start, from the scenario's first call, across the calls.
    starts: Vec<Duration>,
    calls: Vec<Call>,
    /// The tokens the retry budget holds at the end, if there is one.
    tokens: Option<f64>,
}

/// What one edge reports of a call: the attempts, the time waited, the outcome, and when it
/// ended.
type Ended = (u32, Duration, Outcome, Duration);

impl Seen {
    /// The record of a scenario whose calls ended as `ended`, its attempts started at
    /// `starts`: the waits read from the instants and the script's attempt times.
    fn of(
        scenario: &Scenario,
        starts: Vec<Duration>,
        ended: Vec<Ended>,
        tokens: Option<f64>,
    ) -> Self {
        let mut first = 0;
        let calls = ended
            .into_iter()
            .map(|(attempts, waited, outcome, ended)| {
                let last = first + attempts as usize;
                let waits = (first + 1..last)
                    .map(|n| starts[n].saturating_sub(starts[n - 1] + scenario.takes(n - 1)))
                    .collect();
                first = last;
                Call {
                    attempts,
                    waits,
                    waited,
                    outcome,
                    ended,
                }
            })
            .collect();
        Self {
            starts,
            calls,
            tokens,
        }
    }
}

/// The HTTP edges' record of a call that ended at `ended` with a response (`status`) or
/// none.
fn http_outcome(retried: Retried, status: Option<u16>, ended: Duration) -> Ended {
    let outcome = match (retried.stop, status) {
        (None, Some(status)) => Outcome::Value(status),
        (stop, status) => Outcome::Stopped {
            status,
            stop: stop.map_or("none", |stop| stop.as_str()),
        },
    };
    (retried.attempts, retried.waited, outcome, ended)
}

/// The replies in order, each recorded on `clock` from the scenario's start and answered
/// after the time it takes on that clock: the front door's operation and the tower edge's
/// service.
struct Script {
    replies: Vec<Reply>,
    clock: Clock,
    origin: Duration,
    starts: Mutex<Vec<Duration>>,
}

impl Script {
    fn new(replies: Vec<Reply>, clock: Clock) -> Arc<Self> {
        Arc::new(Self {
            replies,
            origin: clock.now(),
            clock,
            starts: Mutex::new(Vec::new()),
        })
    }

    /// The next attempt: recorded now, answered after its time.
    async fn answer(self: Arc<Self>) -> Reply {
        let reply = {
            let mut starts = self.starts.lock().unwrap();
            starts.push(self.clock.now() - self.origin);
            self.replies[(starts.len() - 1).min(self.replies.len() - 1)].clone()
        };
        if !reply.takes.is_zero() {
            self.clock.sleep(reply.takes).await;
        }
        reply
    }

    /// The clock's reading, from the scenario's start.
    fn now(&self) -> Duration {
        self.clock.now() - self.origin
    }

    fn starts(&self) -> Vec<Duration> {
        self.starts.lock().unwrap().clone()
    }
}

/// The wait a failed reply names, as the front door's `after` reads it: its one
/// `Retry-After` value on the fixed wall clock.
fn named(reply: &Reply) -> Option<Duration> {
    match reply.headers.as_slice() {
        [("retry-after", value)] => {
            retry_after_delay(std::str::from_utf8(value).ok()?, WALL as i64)
        }
        _ => None,
    }
}

/// Whether the front door retries a failed reply, as its `when` reads it: a retryable
/// status, with no `Retry-After` or one that [`named`] reads. The HTTP edges stop on a
/// `Retry-After` they cannot read (`InvalidRetryAfter`); `after` answers a wait or none and
/// cannot stop a call, so `when` refuses such a reply, and the call stops at the same attempt
/// as `NotRetryable`.
fn worth_retrying(reply: &Reply) -> bool {
    let asks = reply.headers.iter().any(|(name, _)| *name == "retry-after");
    retryable_status(reply.status) && (!asks || named(reply).is_some())
}

/// The scenario through the front door, on `time`; also the waits its `notify` heard, by
/// call.
async fn through_front_door(scenario: &Scenario, time: Time) -> (Seen, Vec<Vec<Duration>>) {
    through_front_door_by(scenario, scenario.settings.rules(), time).await
}

/// [`through_front_door`] under `rules`.
async fn through_front_door_by(
    scenario: &Scenario,
    rules: Rules,
    time: Time,
) -> (Seen, Vec<Vec<Duration>>) {
    let (clock, dice) = scenario.sources(time);
    let script = Script::new(scenario.script.clone(), clock.clone());
    let budget = scenario.budget();
    let mut retry = Retry::new(rules).with_clock(clock).with_dice(dice);
    if let Some(budget) = &budget {
        retry = retry.with_budget(Arc::clone(budget));
    }
    if let Some(timeout) = scenario.attempt_timeout {
        retry = retry.with_attempt_timeout(timeout);
    }
    let mut ended = Vec::new();
    let mut heard = Vec::new();
    for _ in 0..scenario.calls {
        let waits = Mutex::new(Vec::new());
        let attempt = || {
            let answer = Arc::clone(&script).answer();
            async move {
                let reply = answer.await;
                if reply.status < 400 {
                    Ok(reply.status)
                } else {
                    Err(reply)
                }
            }
        };
        let (answer, retried) = retry
            .call(attempt)
            .when(worth_retrying)
            .after(named)
            .notify(|_: &Reply, wait| waits.lock().unwrap().push(wait))
            .recorded()
            .await;
        let outcome = match answer {
            Ok(status) => Outcome::Value(status),
            Err(CallError::Failed(reply)) => Outcome::Stopped {
                status: Some(reply.status),
                stop: retried.stop.map_or("none", |stop| stop.as_str()),
            },
            Err(CallError::Refused(gave_up)) => Outcome::Stopped {
                status: None,
                stop: gave_up.cause.as_str(),
            },
            Err(other) => panic!("a retry answers a failure or a refusal: {other:?}"),
        };
        ended.push((retried.attempts, retried.waited, outcome, script.now()));
        heard.push(waits.into_inner().unwrap());
    }
    let tokens = budget.map(|budget| budget.tokens());
    (Seen::of(scenario, script.starts(), ended, tokens), heard)
}

/// The response a scripted reply is.
fn response(reply: &Reply) -> Response<()> {
    let mut response = Response::new(());
    *response.status_mut() = http::StatusCode::from_u16(reply.status).unwrap();
    for (name, value) in &reply.headers {
        response
            .headers_mut()
            .append(*name, HeaderValue::from_bytes(value).unwrap());
    }
    response
}

/// The scenario through `ironward-tower` around a scripted service, on `time`.
async fn through_tower(scenario: &Scenario, time: Time) -> Seen {
    let (clock, dice) = scenario.sources(time);
    let script = Script::new(scenario.script.clone(), clock.clone());
    let budget = scenario.budget();
    let mut layer = HttpRetryLayer::new(scenario.settings)
        .with_clock(clock)
        .with_wall_clock(Clock::from_fn(|| Duration::from_secs(WALL)))
        .with_dice(dice);
    if let Some(budget) = &budget {
        layer = layer.with_budget(Arc::clone(budget));
    }
    if let Some(timeout) = scenario.attempt_timeout {
        layer = layer.with_attempt_timeout(timeout);
    }
    let backend = {
        let script = Arc::clone(&script);
        service_fn(move |_: Request<()>| {
            let answer = Arc::clone(&script).answer();
            async move { Ok::<_, Infallible>(response(&answer.await)) }
        })
    };
    let client = layer.layer(backend);
    let mut ended = Vec::new();
    for _ in 0..scenario.calls {
        let answer = client.clone().oneshot(Request::new(())).await;
        let end = script.now();
        ended.push(match answer {
            Ok(response) => {
                let retried = *response.extensions().get::<Retried>().expect("a record");
                http_outcome(retried, Some(response.status().as_u16()), end)
            }
            Err(err) => {
                let gave_up = err
                    .downcast_ref::<ironward_tower::retry::GaveUp>()
                    .expect("every error is a GaveUp");
                http_outcome(gave_up.retried(), None, end)
            }
        });
    }
    let tokens = budget.map(|budget| budget.tokens());
    Seen::of(scenario, script.starts(), ended, tokens)
}

/// The scenario through `ironward-reqwest`, over HTTP to the axum server, on a manual clock
/// the server shares.
async fn through_reqwest(scenario: &Scenario) -> Seen {
    let (clock, dice) = scenario.sources(Time::Manual);
    let server = Server::start(scenario.script.clone(), false, clock.clone()).await;
    let url = format!("http://{}/op", server.addr);
    let budget = scenario.budget();
    let mut middleware = RetryMiddleware::new(scenario.settings)
        .with_clock(clock.clone())
        .with_wall_clock(Clock::from_fn(|| Duration::from_secs(WALL)))
        .with_dice(dice);
    if let Some(budget) = &budget {
        middleware = middleware.with_budget(Arc::clone(budget));
    }
    if let Some(timeout) = scenario.attempt_timeout {
        middleware = middleware.with_attempt_timeout(timeout);
    }
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let mut ended = Vec::new();
    for _ in 0..scenario.calls {
        let answer = client.get(&url).send().await;
        let end = clock.now() - START;
        ended.push(match answer {
            Ok(response) => {
                let retried = *response.extensions().get::<Retried>().expect("a record");
                http_outcome(retried, Some(response.status().as_u16()), end)
            }
            Err(err) => {
                let gave_up = ironward_reqwest::gave_up(&err).expect("every error is a GaveUp");
                http_outcome(gave_up.retried(), None, end)
            }
        });
    }
    let starts = server.hits().iter().map(|hit| hit.at - START).collect();
    let tokens = budget.map(|budget| budget.tokens());
    Seen::of(scenario, starts, ended, tokens)
}

/// Runs `edge` to its end on a runtime of its own: tokio's paused time when `paused`, else a
/// runtime that really waits for the network. Fails past [`LIMIT`] of real time.
fn run<F: Future>(paused: bool, edge: F) -> F::Output {
    let runtime = if paused {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    };
    let runtime = runtime.expect("a runtime");
    let started = std::time::Instant::now();
    let output = runtime.block_on(edge);
    assert!(
        started.elapsed() < LIMIT,
        "an edge took {:?} of real time",
        started.elapsed()
    );
    output
}

/// The scenario through the front door and through the tower layer on a manual clock and on
/// tokio's paused time, and through the reqwest middleware: the records on manual clocks
/// must be one, exactly; the two on paused time must be one, and that record retimed to
/// tokio's timers ([`on_tokio_timers`]); the front door's `notify` must have heard each wait.
/// The record on manual clocks is returned for the scenario's own expectations.
fn every_edge(scenario: &Scenario) -> Seen {
    let (front, heard) = run(false, through_front_door(scenario, Time::Manual));
    let tower = run(false, through_tower(scenario, Time::Manual));
    let reqwest = run(false, through_reqwest(scenario));
    // Each wait decided was slept, exactly; the last is not followed by an attempt when the
    // budget ran out during it.
    for (heard, call) in heard.iter().zip(&front.calls) {
        assert_eq!(
            heard[..call.waits.len()],
            call.waits,
            "the front door slept its waits"
        );
        assert!(heard.len() - call.waits.len() <= usize::from(call.outcome != Outcome::Value(200)));
        assert_eq!(
            heard.iter().sum::<Duration>(),
            call.waited,
            "its record counts them"
        );
    }
    assert_eq!(tower, front, "the tower layer against the front door");
    assert_eq!(
        reqwest, front,
        "the reqwest middleware against the front door"
    );
    if let Draws::Oversleep(_) = scenario.draws {
        // Only a manual clock's hand oversleeps.
        return front;
    }

    let (front_paused, _) = run(true, through_front_door(scenario, Time::Paused));
    let tower_paused = run(true, through_tower(scenario, Time::Paused));
    assert_eq!(
        tower_paused, front_paused,
        "the tower layer against the front door, paused"
    );
    assert_eq!(
        front_paused,
        on_tokio_timers(scenario, &front),
        "paused against manual"
    );
    front
}

/// What `exact`, a record on a manual clock, comes to on tokio's paused time: the same
/// decisions, each wait slept by a tokio timer, which fires on the first whole millisecond of
/// the runtime's clock at or after its deadline (tokio's timer wheel counts milliseconds, and
/// rounds a deadline up). The attempts' times are whole milliseconds in these scripts, so
/// each start after a wait is the end of the attempt before plus the wait, rounded up.
fn on_tokio_timers(scenario: &Scenario, exact: &Seen) -> Seen {
    let mut starts = Vec::new();
    let mut at = Duration::ZERO;
    let mut ended = Vec::new();
    for call in &exact.calls {
        for n in 0..call.attempts as usize {
            starts.push(at);
            at += scenario.takes(starts.len() - 1);
            if let Some(wait) = call.waits.get(n) {
                let millis = (at + *wait).as_nanos().div_ceil(1_000_000);
                at = ms(u64::try_from(millis).expect("a test's instant"));
            }
        }
        ended.push((call.attempts, call.waited, call.outcome.clone(), at));
    }
    Seen::of(scenario, starts, ended, exact.tokens)
}

/// The record expected of `scenario` without jitter: the attempts' starts in ms, and each
/// call's attempts, waits in ms and outcome; each call ends when its last attempt does.
fn expected(
    scenario: &Scenario,
    starts: &[u64],
    calls: &[(&[u64], Outcome)],
) -> (Vec<Duration>, Vec<Call>) {
    let mut last = 0;
    let calls = calls
        .iter()
        .map(|(waits, outcome)| {
            last += waits.len();
            let ended = ms(starts[last]) + scenario.takes(last);
            last += 1;
            Call {
                attempts: waits.len() as u32 + 1,
                waits: waits.iter().copied().map(ms).collect(),
                waited: ms(waits.iter().sum()),
                outcome: outcome.clone(),
                ended,
            }
        })
        .collect();
    (starts.iter().copied().map(ms).collect(), calls)
}

fn stopped(status: Option<u16>, reason: StopReason) -> Outcome {
    Outcome::Stopped {
        status,
        stop: Stop::Decided(reason).as_str(),
    }
}

fn assert_seen(seen: &Seen, scenario: &Scenario, starts: &[u64], calls: &[(&[u64], Outcome)]) {
    let (starts, calls) = expected(scenario, starts, calls);
    assert_eq!((&seen.starts, &seen.calls), (&starts, &calls));
}

#[test]
fn success_after_three_failures_waits_each_ceiling() {
    // Each attempt takes 30 ms; the waits are the 200, 400 and 800 ms ceilings.
    let took = |reply: Reply| reply.taking(ms(30));
    let scenario = Scenario::new(vec![
        took(Reply::status(503)),
        took(Reply::status(502)),
        took(Reply::status(504)),
        took(Reply::status(200)),
    ]);
    let seen = every_edge(&scenario);
    assert_seen(
        &seen,
        &scenario,
        &[0, 230, 660, 1490],
        &[(&[200, 400, 800], Outcome::Value(200))],
    );
}

#[test]
fn giving_up_at_max_attempts_returns_the_last_failure() {
    let scenario = Scenario::new(vec![Reply::status(503)]);
    let seen = every_edge(&scenario);
    let gave_up = stopped(Some(503), StopReason::AttemptsExhausted);
    assert_seen(
        &seen,
        &scenario,
        &[0, 200, 600, 1400],
        &[(&[200, 400, 800], gave_up)],
    );
}

#[test]
fn the_budget_reserve_cuts_the_last_wait() {
    // A 2 s budget keeping 500 ms for the next attempt, each attempt 100 ms. After the third
    // attempt (ended at 900 ms) the 800 ms wait would fit the 1.1 s left, but not with the
    // reserve: the call stops with the third failure.
    let scenario = Scenario {
        settings: Settings {
            total_budget: ms(2_000),
            request_reserve: ms(500),
            ..Settings::default()
        },
        ..Scenario::new(vec![Reply::status(503).taking(ms(100))])
    };
    let seen = every_edge(&scenario);
    let cut = stopped(Some(503), StopReason::BudgetExhausted);
    assert_seen(&seen, &scenario, &[0, 300, 800], &[(&[200, 400], cut)]);
}

#[test]
fn a_server_named_wait_lengthens_the_backoff() {
    // Retry-After: 1, then an HTTP-date 3 s after the wall clock, each longer than the
    // backoff (200, 400 ms); then a value.
    let date = crate::http_date::http_date(WALL as i64 + 3);
    let scenario = Scenario::new(vec![
        Reply::retry_after(429, &[b"1"]),
        Reply::retry_after(503, &[date.as_bytes()]),
        Reply::status(200),
    ]);
    let seen = every_edge(&scenario);
    assert_seen(
        &seen,
        &scenario,
        &[0, 1000, 4000],
        &[(&[1000, 3000], Outcome::Value(200))],
    );
}

#[test]
fn a_server_named_wait_above_the_cap_stops() {
    let scenario = Scenario::new(vec![Reply::retry_after(503, &[b"31"])]);
    let seen = every_edge(&scenario);
    let stop = stopped(Some(503), StopReason::ServerDelayExceedsCap);
    assert_seen(&seen, &scenario, &[0], &[(&[], stop)]);
}

#[test]
fn a_server_named_wait_the_budget_cannot_hold_stops() {
    // 20 s asked of a 10 s budget: the backoff alone would fit, the named wait does not.
    let scenario = Scenario {
        settings: Settings {
            total_budget: Duration::from_secs(10),
            ..Settings::default()
        },
        ..Scenario::new(vec![Reply::retry_after(503, &[b"20"])])
    };
    let seen = every_edge(&scenario);
    let stop = stopped(Some(503), StopReason::BudgetExhausted);
    assert_seen(&seen, &scenario, &[0], &[(&[], stop)]);
}

#[test]
fn a_shared_retry_budget_runs_dry_across_calls() {
    // gRPC A6's budget of 4 tokens, 0.1 back a success, retrying above 2. The first call's
    // 503 leaves 3 (one retry), its second 2 (throttled); the second call's leaves 1
    // (throttled at once); a success brings 0.1 back; the fourth call's 503 leaves 0.1.
    let scenario = Scenario {
        calls: 4,
        budget: Some((4, 0.1)),
        ..Scenario::new(vec![
            Reply::status(503),
            Reply::status(503),
            Reply::status(503),
            Reply::status(200),
            Reply::status(503),
        ])
    };
    let seen = every_edge(&scenario);
    let throttled = || Outcome::Stopped {
        status: Some(503),
        stop: Stop::Throttled.as_str(),
    };
    assert_seen(
        &seen,
        &scenario,
        &[0, 200, 200, 200, 200],
        &[
            (&[200], throttled()),
            (&[], throttled()),
            (&[], Outcome::Value(200)),
            (&[], throttled()),
        ],
    );
    assert_eq!(Stop::Throttled.as_str(), Cause::Throttled.as_str());
    let tokens = seen.tokens.expect("a budget");
    assert!((tokens - 0.1).abs() < 1e-9, "{tokens}");
}

#[test]
fn full_jitter_draws_the_same_seeded_waits() {
    for seed in [1, 42, 0x5eed] {
        let scenario = Scenario {
            draws: Draws::Seeded(seed),
            ..Scenario::new(vec![Reply::status(503).taking(ms(7))])
        };
        let seen = every_edge(&scenario);
        // The waits are the core's full-jitter backoff at the seeded draws, one per failed
        // attempt, the last one's drawn and unused.
        let backoff = scenario.settings.backoff();
        assert_eq!(backoff.jitter, Jitter::Full);
        assert_eq!(seen.calls[0].waits, planned(backoff, seed, 3));
        assert_eq!(
            seen.calls[0].outcome,
            stopped(Some(503), StopReason::AttemptsExhausted)
        );
    }
}

/// The first `retries` waits a backoff draws from the seeded dice, each after the one before
/// (which decorrelated jitter grows from).
fn planned(backoff: Backoff, seed: u64, retries: u32) -> Vec<Duration> {
    let dice = Dice::seeded(seed);
    let mut previous = None;
    (1..=retries)
        .map(|retry| {
            let wait = backoff.delay(retry, dice.roll(), previous);
            previous = Some(wait);
            wait
        })
        .collect()
}

#[test]
fn every_jitter_kind_draws_the_cores_backoff_through_the_front_door() {
    // The HTTP edges have full jitter only (their `Settings`); the front door takes any
    // `Rules`, and on either clock its waits are the core's backoff at the seeded draws.
    let kinds = [
        Jitter::Rigid,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Spread(0.2),
    ];
    for jitter in kinds {
        let backoff = Backoff {
            base: ms(100),
            factor: 3.0,
            cap: ms(2_000),
            attempts: 6,
            jitter,
        };
        let scenario = Scenario {
            draws: Draws::Seeded(42),
            ..Scenario::new(vec![Reply::status(503).taking(ms(7))])
        };
        let rules = Rules::new(backoff);
        let (exact, _) = run(false, through_front_door_by(&scenario, rules, Time::Manual));
        let (paused, _) = run(true, through_front_door_by(&scenario, rules, Time::Paused));
        assert_eq!(paused, on_tokio_timers(&scenario, &exact), "{jitter:?}");
        assert_eq!(exact.calls[0].waits, planned(backoff, 42, 5), "{jitter:?}");
        assert_eq!(exact.calls[0].attempts, 6, "{jitter:?}");
    }
    assert_eq!(Settings::default().backoff().jitter, Jitter::Full);
}

#[test]
fn a_404_draws_on_the_http_edges_and_not_through_the_front_door() {
    // Two calls on the same seeded dice: a 404 ends the first; the second's 503 is retried
    // after a full-jitter wait. The HTTP edges rolled for the 404, so the second call's wait
    // is their second draw; the front door rolls only for a failure it retries, its first.
    let scenario = Scenario {
        calls: 2,
        draws: Draws::Seeded(42),
        ..Scenario::new(vec![
            Reply::status(404),
            Reply::status(503),
            Reply::status(200),
        ])
    };
    let (front, _) = run(false, through_front_door(&scenario, Time::Manual));
    let tower = run(false, through_tower(&scenario, Time::Manual));
    let reqwest = run(false, through_reqwest(&scenario));
    assert_eq!(tower, reqwest, "the HTTP edges agree");
    let backoff = scenario.settings.backoff();
    let dice = Dice::seeded(42);
    let (first, second) = (dice.roll(), dice.roll());
    assert_eq!(front.calls[1].waits, [backoff.delay(1, first, None)]);
    assert_eq!(tower.calls[1].waits, [backoff.delay(1, second, None)]);
    assert_ne!(front.calls[1].waits, tower.calls[1].waits);
    // Everything else is the same: the 404 stops at once, the 503 is retried once.
    let not_retryable = stopped(Some(404), StopReason::NotRetryable);
    for seen in [&front, &tower] {
        assert_eq!(seen.calls[0].outcome, not_retryable);
        assert_eq!(seen.calls[1].outcome, Outcome::Value(200));
        assert_eq!(seen.calls[1].attempts, 2);
    }
}

#[test]
fn the_budget_runs_out_while_waiting() {
    // A 2 s wait that fits the 10 s budget, overslept by 7.5 s: on waking 0.5 s is left, less
    // than the 1 s reserve, so the retry is not made and the failure it was for is returned.
    let scenario = Scenario {
        settings: Settings {
            total_budget: Duration::from_secs(10),
            ..Settings::default()
        },
        draws: Draws::Oversleep(ms(7_500)),
        ..Scenario::new(vec![Reply::retry_after(503, &[b"2"])])
    };
    let seen = every_edge(&scenario);
    let call = Call {
        attempts: 1,
        waits: Vec::new(),
        // The wait was decided, then overslept: the call ends on waking, at 9.5 s.
        waited: ms(2_000),
        outcome: stopped(Some(503), StopReason::BudgetExhausted),
        ended: ms(9_500),
    };
    assert_eq!((seen.starts, seen.calls), (vec![ms(0)], vec![call]));
}

#[test]
fn an_attempt_past_its_timeout_is_cut_on_tokio_time() {
    // The first attempt would take 10 s; the attempt timeout is 1 s. On tokio's paused time
    // both the front door and the tower layer cut it at 1 s, wait the 200 ms backoff, and
    // the second attempt answers.
    let scenario = Scenario {
        attempt_timeout: Some(Duration::from_secs(1)),
        ..Scenario::new(vec![
            Reply::status(200).taking(Duration::from_secs(10)),
            Reply::status(200),
        ])
    };
    let (front, _) = run(true, through_front_door(&scenario, Time::Paused));
    let tower = run(true, through_tower(&scenario, Time::Paused));
    assert_eq!(front.starts, [ms(0), ms(1_200)]);
    assert_eq!(tower, front);
    assert_eq!(front.calls[0].ended, ms(1_200));
    for seen in [&front, &tower] {
        assert_eq!(seen.calls[0].outcome, Outcome::Value(200));
        assert_eq!((seen.calls[0].attempts, seen.calls[0].waited), (2, ms(200)));
    }

    // On a manual clock the attempt's 10 s pass at once. The front door judges the attempt on
    // its clock, as every `call::Timeout` does, and cuts it: the clock is past the deadline.
    // The HTTP edges' attempt timeouts are tokio timers whatever the clock, and the answer came
    // before theirs fired: they take it.
    let (front, _) = run(false, through_front_door(&scenario, Time::Manual));
    let tower = run(false, through_tower(&scenario, Time::Manual));
    let reqwest = run(false, through_reqwest(&scenario));
    assert_eq!(front.starts, [ms(0), ms(10_200)]);
    assert_eq!(front.calls[0].ended, ms(10_200));
    assert_eq!(
        (front.calls[0].attempts, &front.calls[0].outcome),
        (2, &Outcome::Value(200))
    );
    assert_eq!(tower, reqwest);
    assert_eq!(tower.starts, [ms(0)]);
    assert_eq!(tower.calls[0].ended, ms(10_000));
    assert_eq!(
        (tower.calls[0].attempts, &tower.calls[0].outcome),
        (1, &Outcome::Value(200))
    );
}

#[test]
fn a_retry_after_that_cannot_be_read_stops_every_edge_at_once() {
    // Not a delay, two fields (even equal ones), not UTF-8: the HTTP edges stop with
    // `InvalidRetryAfter`; the front door's `when` refuses the reply, so it stops at the same
    // attempt and instant with the same reply, as `NotRetryable`.
    let values: [&[&[u8]]; 3] = [&[b"soon"], &[b"1", b"1"], &[b"\xff1"]];
    for values in values {
        let scenario = Scenario::new(vec![Reply::retry_after(503, values)]);
        let (front, _) = run(false, through_front_door(&scenario, Time::Manual));
        let tower = run(false, through_tower(&scenario, Time::Manual));
        let reqwest = run(false, through_reqwest(&scenario));
        assert_eq!(tower, reqwest, "{values:?}");
        assert_seen(
            &front,
            &scenario,
            &[0],
            &[(&[], stopped(Some(503), StopReason::NotRetryable))],
        );
        assert_seen(
            &tower,
            &scenario,
            &[0],
            &[(&[], stopped(Some(503), StopReason::InvalidRetryAfter))],
        );
    }
}

#[test]
fn a_hung_attempt_is_cut_by_the_total_budget_on_tokio_time() {
    // A 2 s budget: the first attempt's 503 is retried after 200 ms, the second hangs and is
    // cut when the budget ends. Neither edge has a failure of the call's own to return.
    let scenario = Scenario {
        settings: Settings {
            total_budget: Duration::from_secs(2),
            request_reserve: ms(100),
            ..Settings::default()
        },
        ..Scenario::new(vec![
            Reply::status(503),
            Reply::status(200).taking(Duration::from_secs(10)),
        ])
    };
    let (front, _) = run(true, through_front_door(&scenario, Time::Paused));
    let tower = run(true, through_tower(&scenario, Time::Paused));
    assert_eq!(tower, front);
    let cut = Outcome::Stopped {
        status: None,
        stop: Stop::Decided(StopReason::BudgetExhausted).as_str(),
    };
    assert_eq!(front.starts, [ms(0), ms(200)]);
    assert_eq!(front.calls[0].ended, ms(2_000), "cut when the budget ended");
    assert_eq!(
        (
            front.calls[0].attempts,
            front.calls[0].waited,
            &front.calls[0].outcome
        ),
        (2, ms(200), &cut)
    );
}
