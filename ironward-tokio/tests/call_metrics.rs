//! What the front door's pieces count, against `metrics-util`'s debugging recorder: the
//! same `ironward.requests` series the layers count, under each piece's name.

use std::future::pending;
use std::time::Duration;

use ironward::classic::{Record, State};
use ironward::{CLASSIC, Classic};
use ironward_tokio::call::{Breaker, Fallback, Gate, Limiter, Pipeline, Retry, Timeout};
use ironward_tokio::{Clock, SharedLimiter};
use metrics::{SharedString, Unit};
use metrics_util::CompositeKey;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};

use crate::call_breaker::secs;

/// The counters and gauges a recorder holds with a value, as `name{labels}` and the value.
pub fn series(recorder: &DebuggingRecorder) -> Vec<(String, u64)> {
    series_of(recorder.snapshotter().snapshot().into_vec())
}

/// [`series`] of a snapshot taken (a snapshot drains the histograms it reads).
fn series_of(
    snapshot: Vec<(CompositeKey, Option<Unit>, Option<SharedString>, DebugValue)>,
) -> Vec<(String, u64)> {
    let mut all: Vec<_> = snapshot
        .into_iter()
        .filter_map(|(key, _, _, value)| {
            let key = key.key();
            let labels: Vec<_> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            let value = match value {
                DebugValue::Counter(n) => n,
                DebugValue::Gauge(v) => v.into_inner() as u64,
                DebugValue::Histogram(_) => return None,
            };
            (value > 0).then(|| (format!("{}{{{}}}", key.name(), labels.join(",")), value))
        })
        .collect();
    all.sort();
    all
}

fn counted(name: &str, value: u64) -> (String, u64) {
    (name.to_string(), value)
}

/// The series of three calls, each through a fallback, a gate, a limiter, a classic breaker
/// that opens at one failure, and a 1 s timeout, all named "api", on a call that hangs.
fn three_calls_through_an_opening_breaker() -> Vec<(String, u64)> {
    vec![
        // An open breaker refuses every call: its ratio is 1.
        counted("ironward.breaker.ratio{name=api}", 1),
        counted("ironward.breaker.state{name=api}", 1),
        counted(
            "ironward.breaker.transitions{name=api,from=closed,to=open}",
            1,
        ),
        counted("ironward.limiter.limit{name=api}", 20),
        counted(
            "ironward.requests{piece=breaker,name=api,outcome=admitted}",
            1,
        ),
        counted(
            "ironward.requests{piece=breaker,name=api,outcome=refused,reason=open}",
            2,
        ),
        counted(
            "ironward.requests{piece=fallback,name=api,outcome=replaced,reason=error}",
            3,
        ),
        counted("ironward.requests{piece=gate,name=api,outcome=admitted}", 3),
        counted(
            "ironward.requests{piece=limiter,name=api,outcome=admitted,criticality=critical}",
            3,
        ),
        counted(
            "ironward.requests{piece=timeout,name=api,outcome=refused,reason=elapsed}",
            1,
        ),
    ]
}

#[test]
fn each_piece_counts_its_decisions_under_its_name() {
    let recorder = DebuggingRecorder::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let (clock, _hand) = Clock::manual(Duration::ZERO);
            let policy = Classic {
                record: Record::Consecutive { failures: 1 },
                ..CLASSIC
            };
            let breaker = Breaker::new(policy)
                .with_clock(clock.clone())
                .with_name("api");
            let timeout = Timeout::new(secs(1))
                .with_clock(clock.clone())
                .with_name("api");
            let fallback = Fallback::value(0).with_name("api");
            let gate = Gate::new(4).with_name("api");
            let limiter = Limiter::new(SharedLimiter::new(ironward::ADAPTIVE, clock.clone()))
                .with_name("api");
            for _ in 0..3 {
                let answer = fallback
                    .call(|| {
                        gate.call(|| {
                            limiter
                                .call(|| breaker.call(|| timeout.call(pending::<Result<u32, ()>>)))
                        })
                    })
                    .await;
                assert_eq!(answer, Ok(0));
            }
            assert_eq!(breaker.state(), Some(State::Open));
        });
    });
    assert_eq!(series(&recorder), three_calls_through_an_opening_breaker());
}

#[test]
fn a_pipeline_counts_nothing_the_pieces_do_not() {
    let recorder = DebuggingRecorder::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let (clock, _hand) = Clock::manual(Duration::ZERO);
            let policy = Classic {
                record: Record::Consecutive { failures: 1 },
                ..CLASSIC
            };
            let limiter = Limiter::new(SharedLimiter::new(ironward::ADAPTIVE, clock.clone()));
            // The pieces named and clocked by the pipeline, in the order of the test above.
            let pipeline = Pipeline::builder()
                .timeout(Timeout::new(secs(1)))
                .breaker(Breaker::new(policy))
                .limiter(limiter)
                .fallback(Fallback::value(0))
                .with_clock(clock)
                .with_name("api")
                .build();
            for _ in 0..3 {
                assert_eq!(pipeline.call(pending::<Result<u32, ()>>).await, Ok(0));
            }
            assert_eq!(pipeline.breaker().state(), Some(State::Open));
        });
    });
    // The series of the test above without the gate's: one count a decision, each under
    // its piece's own label.
    let mut expected = three_calls_through_an_opening_breaker();
    expected.retain(|(name, _)| !name.contains("piece=gate"));
    assert_eq!(series(&recorder), expected);
}

#[test]
fn a_retry_counts_its_attempts_calls_and_waits() {
    let recorder = DebuggingRecorder::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let (clock, _hand) = Clock::manual(Duration::ZERO);
            let rules = ironward::retry::Rules::new(ironward::Backoff {
                jitter: ironward::Jitter::Rigid,
                ..ironward::BACKOFF
            });
            let retry = Retry::new(rules).with_clock(clock).with_name("api");
            // Three failing attempts and two waits; then one that succeeds at once.
            let failed = retry.call(|| async { Err::<(), _>("down") }).await;
            assert!(failed.is_err());
            assert_eq!(retry.call(|| async { Ok::<_, ()>(1) }).await, Ok(1));
        });
    });
    let snapshot = recorder.snapshotter().snapshot().into_vec();
    let waits: Vec<f64> = snapshot
        .iter()
        .filter(|(key, ..)| key.key().name() == "ironward.retry.wait")
        .flat_map(|(.., value)| match value {
            DebugValue::Histogram(values) => values.iter().map(|v| v.into_inner()).collect(),
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(waits, [0.1, 0.2]);
    let seen = series_of(snapshot);
    let expected = [
        counted("ironward.retry.attempts{name=api,kind=first}", 2),
        counted("ironward.retry.attempts{name=api,kind=retry}", 2),
        counted(
            "ironward.retry.calls{name=api,outcome=attempts_exhausted}",
            1,
        ),
        counted("ironward.retry.calls{name=api,outcome=success}", 1),
    ];
    assert_eq!(seen, expected);
}

// A breaker made in a state put by hand shows it from its first decision: the state gauge
// registers at the state the breaker is in (forced open, 4), not at closed.
#[test]
fn a_breaker_made_forced_open_shows_its_state_from_its_first_call() {
    use ironward::classic::Force;
    let recorder = DebuggingRecorder::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let breaker = Breaker::new(Classic {
                force: Force::Open,
                ..CLASSIC
            })
            .with_name("held");
            assert_eq!(breaker.state(), Some(State::ForcedOpen));
            let refused = breaker.call(|| async { Ok::<_, ()>(()) }).await;
            assert!(refused.unwrap_err().is_refused());
        });
    });
    let seen = series(&recorder);
    assert!(
        seen.contains(&counted("ironward.breaker.state{name=held}", 4)),
        "{seen:?}"
    );
}

#[test]
fn a_rate_limit_counts_its_admissions_and_each_refusal() {
    use ironward_tokio::Quota;
    use ironward_tokio::call::{Deadline, RateLimit};

    let recorder = DebuggingRecorder::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let (clock, _hand) = Clock::manual(Duration::ZERO);
            let rate = RateLimit::new(Quota::bucket(1.0, 1.0))
                .with_clock(clock.clone())
                .with_name("api");
            let ok = || async { Ok::<_, ()>(()) };
            assert!(rate.call(ok).await.is_ok());
            assert!(rate.call(ok).await.is_err());
            let waiting = rate.clone().wait_up_to(secs(5));
            let late = Deadline::after(Duration::from_millis(500), &clock);
            assert!(late.scope(waiting.call(ok)).await.is_err());
            // Admitted after its wait of a second.
            assert!(waiting.call(ok).await.is_ok());
        });
    });
    let expected = [
        counted("ironward.requests{piece=rate,name=api,outcome=admitted}", 2),
        counted(
            "ironward.requests{piece=rate,name=api,outcome=refused,reason=deadline}",
            1,
        ),
        counted(
            "ironward.requests{piece=rate,name=api,outcome=refused,reason=over}",
            1,
        ),
    ];
    assert_eq!(series(&recorder), expected);
}
