//! `call::Faults` with a `SharedChaos`: a seeded run of 1000 calls through a retry and a
//! timeout replays the core's decisions attempt by attempt, each fault does what it says,
//! shadow and off inject nothing, and an abort ends at the timeout around it (on a manual
//! clock, and on tokio's paused clock).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironward::chaos::{self, Chaos, Delay, Fault, Injected, Injection, Injector};
use ironward::retry::Rules;
use ironward::{Backoff, Jitter};
use ironward_tokio::call::{CallError, Faults, Pipeline, Retry, Timeout, TimeoutReason};
use ironward_tokio::{Clock, Dice, SharedChaos};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Every fault, 40 % of calls in all; a latency of 10 to 50 ms.
fn mixed() -> Chaos {
    let latency = Fault::Latency(Delay::Uniform {
        low: ms(10),
        high: ms(50),
    });
    Chaos {
        enabled: true,
        shadow: false,
        faults: [Fault::Error, latency, Fault::Abort, Fault::Replace]
            .into_iter()
            .map(|fault| Injection { fault, rate: 0.1 })
            .collect(),
    }
}

/// One fault at rate 1.
fn only(fault: Fault) -> Chaos {
    Chaos {
        enabled: true,
        shadow: false,
        faults: vec![Injection { fault, rate: 1.0 }],
    }
}

/// Draws `script` in turn, then 0.99 (past every fault's share) for ever.
fn scripted(script: Vec<f64>) -> Dice {
    let at = AtomicU32::new(0);
    Dice::from_fn(move || {
        let i = at.fetch_add(1, Ordering::Relaxed) as usize;
        script.get(i).copied().unwrap_or(0.99)
    })
}

/// An operation answering `Ok(7)`, and the count of its calls.
fn counted() -> (
    impl Fn() -> std::future::Ready<Result<u32, Injected>> + Clone,
    Arc<AtomicU32>,
) {
    let calls = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&calls);
    let op = move || {
        counter.fetch_add(1, Ordering::Relaxed);
        std::future::ready(Ok(7))
    };
    (op, calls)
}

/// What one attempt was seen to do, from the outside: its fault's label and, for a latency,
/// how long it waited before calling.
type Seen = Option<(&'static str, Option<Duration>)>;

/// The fault an attempt's answer, the time it took and whether it called show.
fn seen(
    answer: &Result<u32, CallError<Injected, TimeoutReason>>,
    took: Duration,
    called: bool,
) -> Seen {
    match (answer, called) {
        (Ok(7), true) if took.is_zero() => None,
        (Ok(7), true) => Some(("latency", Some(took))),
        (Err(CallError::Failed(injected)), false) => {
            assert_eq!(injected.fault, Fault::Error);
            Some(("error", None))
        }
        (Err(CallError::Failed(injected)), true) => {
            assert_eq!(injected.fault, Fault::Replace);
            Some(("replace", None))
        }
        (Err(CallError::Refused(TimeoutReason::Elapsed { budget })), false) => {
            assert_eq!(
                (*budget, took),
                (ms(1_000), ms(1_000)),
                "cut at its timeout"
            );
            Some(("abort", None))
        }
        other => panic!("no fault does this: {other:?} after {took:?}"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_seeded_run_replays_the_cores_decisions_attempt_by_attempt() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let chaos = SharedChaos::new(mixed()).unwrap().with_seed(42);
    let faults = Faults::new(chaos.clone(), |injected| *injected).with_clock(clock.clone());
    let timeout = Timeout::new(ms(1_000)).with_clock(clock.clone());
    let rigid = Rules::new(Backoff {
        base: ms(100),
        factor: 2.0,
        cap: ms(1_000),
        attempts: 3,
        jitter: Jitter::Rigid,
    });
    let retry = Retry::new(rigid).with_clock(clock.clone());
    let (op, calls) = counted();
    let log: Mutex<Vec<Seen>> = Mutex::new(Vec::new());
    let mut answered = 0;
    for _ in 0..1000 {
        let attempt = || async {
            let (start, before) = (clock.now(), calls.load(Ordering::Relaxed));
            let answer = timeout.call(|| faults.call(op.clone())).await;
            let called = calls.load(Ordering::Relaxed) > before;
            log.lock()
                .unwrap()
                .push(seen(&answer, clock.now() - start, called));
            answer
        };
        answered += u32::from(retry.call(attempt).await.is_ok());
    }
    let log = log.into_inner().unwrap();
    assert!(
        log.len() > 1000,
        "retries asked for faults too: {}",
        log.len()
    );
    assert_eq!(chaos.requests(), log.len() as u64);
    let injector = Injector::new(mixed()).unwrap();
    for (i, got) in log.iter().enumerate() {
        let want = injector
            .decide(chaos::draw(42, i as u64))
            .map(|injected| (injected.fault.label(), injected.delay));
        assert_eq!(*got, want, "attempt {i}");
    }
    for label in ["error", "latency", "abort", "replace"] {
        assert!(log.iter().flatten().any(|s| s.0 == label), "{label} shows");
    }
    // A call fails only when all three of its attempts drew a failing fault: walk the log
    // call by call to count those that succeeded.
    let (mut succeeded, mut at) = (0, 0);
    for _ in 0..1000 {
        let mut tries = 0;
        loop {
            let failed = matches!(log[at], Some(("error" | "abort" | "replace", _)));
            (at, tries) = (at + 1, tries + 1);
            if !failed {
                succeeded += 1;
                break;
            }
            if tries == 3 {
                break;
            }
        }
    }
    assert_eq!((at, answered), (log.len(), succeeded));
    assert!(answered < 1000, "some call failed all three attempts");
}

#[tokio::test(flavor = "current_thread")]
async fn an_injected_error_is_retried_and_the_retry_succeeds() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    // Errors on half the draws: the first attempt draws 0.0, the second 0.5.
    let half = Chaos {
        faults: vec![Injection {
            fault: Fault::Error,
            rate: 0.5,
        }],
        ..only(Fault::Error)
    };
    let chaos = SharedChaos::new(half)
        .unwrap()
        .with_dice(scripted(vec![0.0, 0.5]));
    let faults = Faults::new(chaos.clone(), |injected| *injected).with_clock(clock.clone());
    let retry = Retry::new(Rules::new(Backoff {
        base: ms(100),
        factor: 2.0,
        cap: ms(1_000),
        attempts: 3,
        jitter: Jitter::Rigid,
    }))
    .with_clock(clock.clone());
    let (op, calls) = counted();
    let (answer, retried) = retry.call(|| faults.call(op.clone())).recorded().await;
    assert_eq!(answer.unwrap(), 7);
    assert_eq!(retried.attempts, 2);
    assert_eq!(calls.load(Ordering::Relaxed), 1, "the error was never sent");
    assert_eq!(clock.now(), ms(100), "one rigid wait");
}

#[tokio::test(flavor = "current_thread")]
async fn in_a_pipeline_each_attempt_draws_and_the_timeout_cuts_an_abort() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let chaos = SharedChaos::new(Chaos {
        faults: vec![Injection {
            fault: Fault::Abort,
            rate: 0.5,
        }],
        ..only(Fault::Abort)
    })
    .unwrap()
    .with_dice(scripted(vec![0.1, 0.2]));
    let faults = Faults::new(chaos.clone(), |injected| *injected);
    let pipeline = Pipeline::builder()
        .timeout(Timeout::new(ms(1_000)))
        .retry(Retry::new(Rules::new(Backoff {
            base: ms(100),
            factor: 2.0,
            cap: ms(1_000),
            attempts: 3,
            jitter: Jitter::Rigid,
        })))
        .with_clock(clock.clone())
        .build();
    let (op, calls) = counted();
    let answer = pipeline.call(|| faults.call(op.clone())).await;
    assert_eq!(answer.unwrap(), 7);
    assert_eq!(chaos.requests(), 3);
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    // Two attempts cut at 1 s, waits of 100 and 200 ms, then the third.
    assert_eq!(clock.now(), ms(2_300));
}

#[tokio::test(flavor = "current_thread")]
async fn shadow_and_off_inject_nothing() {
    for policy in [
        Chaos {
            shadow: true,
            ..mixed()
        },
        Chaos {
            enabled: false,
            ..mixed()
        },
    ] {
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let chaos = SharedChaos::new(policy.clone()).unwrap().with_seed(42);
        let faults = Faults::new(chaos.clone(), |injected| *injected).with_clock(clock.clone());
        let (op, calls) = counted();
        for _ in 0..1000 {
            assert_eq!(faults.call(op.clone()).await, Ok(7));
        }
        assert_eq!(calls.load(Ordering::Relaxed), 1000);
        assert_eq!(clock.now(), Duration::ZERO, "no latency slept");
        assert_eq!(chaos.requests(), 1000);
        // In shadow the decisions are made (and counted), not applied.
        let decided = (0..1000)
            .filter(|&i| {
                Injector::new(policy.clone())
                    .unwrap()
                    .decide(chaos::draw(42, i))
                    .is_some()
            })
            .count();
        assert_eq!(decided > 0, policy.enabled, "{policy:?}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_replacement_calls_then_answers_the_callers_error() {
    let faults = Faults::new(SharedChaos::new(only(Fault::Replace)).unwrap(), |i| {
        format!("replaced at fault {}", i.index)
    });
    let calls = AtomicU32::new(0);
    let answer = faults
        .call(|| async {
            calls.fetch_add(1, Ordering::Relaxed);
            Ok::<u32, String>(7)
        })
        .await;
    assert_eq!(answer, Err("replaced at fault 0".to_owned()));
    assert_eq!(calls.load(Ordering::Relaxed), 1);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_abort_ends_at_the_timeout_on_tokios_paused_clock() {
    let faults = Faults::new(SharedChaos::new(only(Fault::Abort)).unwrap(), |i| *i);
    let timeout = Timeout::new(ms(2_000));
    let (op, calls) = counted();
    let start = tokio::time::Instant::now();
    let cut = timeout.call(|| faults.call(op.clone())).await;
    let took = start.elapsed();
    let budget = ms(2_000);
    assert_eq!(
        cut,
        Err(CallError::Refused(TimeoutReason::Elapsed { budget }))
    );
    assert!(took >= budget && took < budget + ms(50), "{took:?}");
    assert_eq!(calls.load(Ordering::Relaxed), 0, "an abort never calls");
    // Without a timeout it hangs: an hour on the paused clock and still no answer.
    let hung = tokio::time::timeout(Duration::from_secs(3600), faults.call(op)).await;
    assert!(hung.is_err());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_latency_sleeps_its_drawn_delay_then_calls() {
    let latency = Fault::Latency(Delay::Fixed(ms(300)));
    let faults = Faults::new(SharedChaos::new(only(latency)).unwrap(), |i| *i);
    let (op, calls) = counted();
    let start = tokio::time::Instant::now();
    assert_eq!(faults.call(op).await, Ok(7));
    let took = start.elapsed();
    assert!(took >= ms(300) && took < ms(350), "{took:?}");
    assert_eq!(calls.load(Ordering::Relaxed), 1);
}
