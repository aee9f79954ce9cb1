//! The simulator's backend model driving the front door's async pipeline: each call's latency
//! and failure drawn from a [`Sampler`] of a scenario's [`Backend`] (a log-normal latency, a
//! rare failure, an outage phase), slept on `ironward_tokio`'s manual clock, through a
//! `call::Pipeline` of a fallback, a retry, a classic breaker and a timeout. Ten minutes of
//! calls, one every 50 ms, in a fraction of a second: the breaker opens in the modelled
//! outage and closes after it, and the run is the same from the same seed.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironward::classic::{OpenWait, Record, State};
use ironward::retry::Rules;
use ironward::{BACKOFF, Backoff, CLASSIC, Classic, Jitter};
use ironward_sim::{Backend, Change, Dice, LatencyModel, Phase, Sampler};
use ironward_tokio::call::{Breaker, Fallback, Pipeline, Retry, Timeout};
use ironward_tokio::{Clock, SharedClassicBreaker};

const RUN: Duration = Duration::from_secs(600);
const EVERY: Duration = Duration::from_millis(50);
/// Every call fails from 2 min to 5 min.
const DOWN: Duration = Duration::from_secs(120);
const UP: Duration = Duration::from_secs(300);
/// The breaker opens for 30 s after 5 failures in a row, past the retry's 10 s cap, so a
/// refusal is the call's answer rather than a wait.
const OPEN: Duration = Duration::from_secs(30);
const FAILURES: u32 = 5;
const TIMEOUT: Duration = Duration::from_millis(250);

type Boxed = Pin<Box<dyn Future<Output = Result<&'static str, &'static str>> + Send>>;

/// The built-in scenarios' backend latency (log-normal, median 20 ms, 99th percentile 80 ms)
/// failing one call in a hundred, and every call in the outage.
fn backend() -> Backend {
    Backend {
        latency: LatencyModel::LogNormal {
            median: Duration::from_millis(20),
            p99: Duration::from_millis(80),
        },
        failure: 0.01,
        schedule: vec![Phase {
            start: DOWN,
            end: UP,
            failure: Some(Change { from: 1.0, to: 1.0 }),
            slowdown: None,
            capacity: None,
        }],
        ..Backend::default()
    }
}

/// What one call came to.
#[derive(Debug, Clone, PartialEq)]
struct Call {
    start: Duration,
    end: Duration,
    /// The backend's answer (`true`) or the fallback's.
    fresh: bool,
    /// Attempts the retry made, and how many reached the backend (the rest were refused).
    attempts: u32,
    reached: u32,
    /// The breaker's state once the call ended.
    state: Option<State>,
}

/// One attempt at the modelled backend: its service drawn at the clock's reading, its
/// latency slept on the clock, then its answer.
fn attempt(clock: &Clock, sampler: &Sampler, dice: &Mutex<Dice>, reached: &Mutex<u32>) -> Boxed {
    *reached.lock().expect("not poisoned") += 1;
    let service = sampler.serve(clock.now(), &mut dice.lock().expect("not poisoned"));
    let clock = clock.clone();
    Box::pin(async move {
        clock.sleep(service.latency).await;
        if service.fails {
            Err("failed")
        } else {
            Ok("fresh")
        }
    })
}

/// Ten minutes of calls, one every 50 ms (or as soon as the call before ends), with the
/// backend's draws and the retry's jitter both from `seed`.
async fn run(seed: u64) -> Vec<Call> {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let breaker: Breaker<SharedClassicBreaker> = Breaker::new(Classic {
        record: Record::Consecutive { failures: FAILURES },
        open: OpenWait::Fixed(OPEN),
        probes: 1,
        ..CLASSIC
    });
    let backoff = Backoff {
        cap: Duration::from_secs(10),
        jitter: Jitter::Full,
        ..BACKOFF
    };
    let pipeline = Pipeline::builder()
        .fallback(Fallback::value("stale"))
        .retry(Retry::new(Rules::new(backoff)))
        .breaker(breaker)
        .timeout(Timeout::new(TIMEOUT))
        .with_clock(clock.clone())
        .with_dice(ironward_tokio::Dice::seeded(seed))
        .build();
    let (sampler, dice) = (backend().sampler(), Mutex::new(Dice::fork(seed, 0)));
    let reached = Arc::new(Mutex::new(0));
    let slots = (RUN.as_nanos() / EVERY.as_nanos()) as u32;
    let mut calls = Vec::with_capacity(slots as usize);
    for slot in 0..slots {
        let due = EVERY * slot;
        if clock.now() < due {
            clock.sleep(due - clock.now()).await;
        }
        let (start, before) = (clock.now(), *reached.lock().expect("not poisoned"));
        let call = || attempt(&clock, &sampler, &dice, &reached);
        let (answer, retried) = pipeline.recorded(call).await;
        calls.push(Call {
            start,
            end: clock.now(),
            fresh: answer == Ok("fresh"),
            attempts: retried.expect("a pipeline with a retry").attempts,
            reached: *reached.lock().expect("not poisoned") - before,
            state: pipeline.breaker().state(),
        });
    }
    calls
}

/// The instants the breaker's state changed, with the state it changed to.
fn changes(calls: &[Call]) -> Vec<(Duration, State)> {
    let mut was = Some(State::Closed);
    let mut changes = Vec::new();
    for call in calls {
        if call.state != was {
            changes.push((call.end, call.state.expect("a breaker")));
            was = call.state;
        }
    }
    changes
}

#[tokio::test]
async fn the_backend_model_drives_the_pipeline_s_breaker_open_in_its_outage_and_closed_after() {
    let calls = run(11).await;
    assert_eq!(calls.len(), 12_000);

    // Before the outage the breaker stays closed: a failure in a hundred is retried, and
    // every call is answered by the backend.
    let before: Vec<_> = calls.iter().filter(|c| c.end < DOWN).collect();
    assert!(
        before
            .iter()
            .all(|c| c.fresh && c.state == Some(State::Closed))
    );
    assert!(
        before.iter().any(|c| c.attempts > 1),
        "a rare failure retried"
    );

    // In the outage it opens after its fifth failure in a row, within two calls of the
    // outage's start (three attempts a call); it reopens after each failed probe, one an
    // open wait at most; it closes on the first probe after the outage, within an open wait
    // and a call's 50 ms of it, and stays closed.
    let changes = changes(&calls);
    let opened = changes.first().expect("the breaker opened").0;
    assert_eq!(changes[0].1, State::Open);
    let first = calls.iter().position(|c| c.start >= DOWN).expect("calls");
    assert_eq!(
        calls[first + 1].state,
        Some(State::Open),
        "opened by the second call"
    );
    assert!(opened <= calls[first + 1].end);
    assert!(DOWN < opened && opened < UP);
    let (closed, state) = *changes.last().expect("changes");
    assert_eq!(state, State::Closed);
    assert!(
        UP <= closed && closed <= UP + OPEN + EVERY + TIMEOUT,
        "{closed:?}"
    );
    assert!(
        changes
            .iter()
            .all(|&(at, _)| at < UP + OPEN + EVERY + TIMEOUT)
    );
    let after = calls.iter().filter(|c| c.start >= closed);
    assert!(after.clone().all(|c| c.state == Some(State::Closed)));
    assert!(after.filter(|c| c.fresh).count() > 5_000);

    // The backend saw the five failures that opened the breaker and a probe each open wait
    // (and the moment a failing probe takes): the 5 that fit between its opening and the
    // outage's end, within what the outage's 3 minutes allow, against the thousands of
    // calls in them.
    let outage = || calls.iter().filter(|c| c.start >= DOWN && c.end < UP);
    let reached: u32 = outage().map(|c| c.reached).sum();
    let probes = ((UP - opened).as_secs_f64() / OPEN.as_secs_f64()) as u32;
    assert_eq!((reached, probes), (FAILURES + 5, 5));
    let most = FAILURES + (UP - DOWN).as_secs() as u32 / OPEN.as_secs() as u32;
    assert!(reached <= most, "{reached} attempts reached the backend");
    assert!(outage().count() > 3_000 && outage().all(|c| !c.fresh));
    let refused: u32 = outage().map(|c| c.attempts - c.reached).sum();
    assert!(refused as usize >= outage().count() - most as usize);

    // The same seed, the same run; another seed draws other latencies and failures.
    assert_eq!(run(11).await, calls);
    assert_ne!(run(12).await, calls);
}
