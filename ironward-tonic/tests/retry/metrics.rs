//! The `metrics` feature: the layer's attempts by kind (`first`, `retry`, `hedge`), its calls
//! by outcome (`success` or the gRPC stop's label) and its waits equal what the real gRPC
//! server of the scenarios in `main.rs` and `hedge.rs` saw, read from `metrics-util`'s
//! `DebuggingRecorder`, set as the test thread's recorder before the layer makes its service
//! (when it registers its handles). Every call runs on the test's thread, so each test's
//! recorder sees its own layers alone.
#![cfg(feature = "metrics")]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use ironward_tonic::{Clock, Dice, GrpcRetryLayer};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use tonic::Code;

use crate::server::{Answer, Server, call, call_within, client, deaf_client, stream};
use crate::{layer, ms};

/// A fresh `DebuggingRecorder`, set as this thread's recorder while this lives, and every
/// value it has recorded: a snapshot takes the values recorded since the one before.
struct Recording {
    snapshotter: Snapshotter,
    totals: RefCell<BTreeMap<(String, Labels), DebugValue>>,
    _guard: metrics::LocalRecorderGuard<'static>,
}

/// A series' labels, sorted.
type Labels = Vec<(String, String)>;

impl Recording {
    fn start() -> Self {
        // Leaked so that the guard may borrow it for the rest of the test: a few bytes.
        let recorder: &'static DebuggingRecorder = Box::leak(Box::new(DebuggingRecorder::new()));
        Self {
            snapshotter: recorder.snapshotter(),
            totals: RefCell::default(),
            _guard: metrics::set_default_local_recorder(recorder),
        }
    }

    /// The layer `name`'s count of attempts by kind (first, retry, hedge), its calls by every
    /// outcome that is not zero, and its waits in seconds, since the recording started.
    fn seen(&self, name: &str) -> Seen {
        let mut totals = self.totals.borrow_mut();
        for (key, _, _, value) in self.snapshotter.snapshot().into_vec() {
            let key = key.key();
            let mut labels: Labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            labels.sort();
            let Some(total) = totals.get_mut(&(key.name().to_owned(), labels.clone())) else {
                totals.insert((key.name().to_owned(), labels), value);
                continue;
            };
            match (total, value) {
                (DebugValue::Counter(total), DebugValue::Counter(n)) => *total += n,
                (DebugValue::Histogram(total), DebugValue::Histogram(values)) => {
                    total.extend(values);
                }
                (total, value) => panic!("a series changed kind: {total:?}, {value:?}"),
            }
        }
        totals
            .iter()
            .fold(Seen::default(), |mut seen, ((metric, labels), value)| {
                let label = |k: &str| labels.iter().find(|(l, _)| l == k).map(|(_, v)| v.clone());
                if label("name").as_deref() != Some(name) {
                    return seen;
                }
                match (metric.as_str(), value) {
                    ("ironward.retry.attempts", DebugValue::Counter(n)) => {
                        match label("kind").as_deref() {
                            Some("first") => seen.attempts.0 = *n,
                            Some("retry") => seen.attempts.1 = *n,
                            Some("hedge") => seen.attempts.2 = *n,
                            other => panic!("an unknown kind {other:?}"),
                        }
                    }
                    ("ironward.retry.calls", DebugValue::Counter(n)) => {
                        seen.outcomes += 1;
                        if *n > 0 {
                            seen.calls.push((label("outcome").unwrap(), *n));
                            seen.calls.sort();
                        }
                    }
                    ("ironward.retry.wait", DebugValue::Histogram(values)) => {
                        seen.waits = values.iter().map(|v| v.0).collect();
                    }
                    (metric, value) => panic!("an unknown series {metric} {value:?}"),
                }
                seen
            })
    }
}

#[derive(Debug, Default, PartialEq)]
struct Seen {
    /// First attempts, retries, hedges.
    attempts: (u64, u64, u64),
    /// Each outcome counted, with its count.
    calls: Vec<(String, u64)>,
    /// How many outcome series are registered.
    outcomes: usize,
    waits: Vec<f64>,
}

/// The outcomes `calls` as the recorder's rows.
fn calls(calls: &[(&str, u64)]) -> Vec<(String, u64)> {
    let mut calls: Vec<_> = calls.iter().map(|&(o, n)| (o.to_owned(), n)).collect();
    calls.sort();
    calls
}

/// How many attempts the server saw without and with `grpc-previous-rpc-attempts`.
fn kinds(server: &Server) -> (u64, u64) {
    let previous = server.previous();
    let first = previous.iter().filter(|p| p.is_none()).count() as u64;
    (first, previous.len() as u64 - first)
}

// `retry_unary_retries_the_retryable_code_up_to_max_attempts`, counted: seven calls, sixteen
// attempts (seven first, nine retries, each after 10 ms), three successes, three INTERNAL
// (not retryable) and one ALREADY_EXISTS after four attempts.
#[tokio::test]
async fn retry_unary_counts_what_the_server_saw() {
    let recording = Recording::start();
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |n, _| match n {
        0 | 2 | 5 => Answer::Ok,
        6 | 8 | 11 => Answer::Fail(Code::Internal, &[]),
        _ => Answer::Fail(Code::AlreadyExists, &[]),
    })
    .await;
    let mut client = client(server.addr, &layer(r#""ALREADY_EXISTS""#, "", &clock));
    // Registered when the layer made its service: every series, at zero.
    let before = recording.seen("default");
    assert_eq!((before.attempts, before.outcomes), ((0, 0, 0), 7));
    for _ in 0..7 {
        let _ = call(&mut client, "Call", None).await;
    }
    assert_eq!(kinds(&server), (7, 9));
    let seen = recording.seen("default");
    assert_eq!(seen.attempts, (7, 9, 0));
    assert_eq!(
        seen.calls,
        calls(&[
            ("success", 3),
            ("not_retryable", 3),
            ("attempts_exhausted", 1)
        ])
    );
    assert_eq!(seen.waits, [0.01; 9]);
}

// `pushback_waits_exactly_or_stops`, counted: the 1 s pushback is one retry after exactly 1 s
// and a success; the three pushbacks that say stop end their calls as `pushback`.
#[tokio::test]
async fn pushback_counts_its_wait_or_its_stop() {
    let recording = Recording::start();
    let rows: [(&'static [&'static str], &'static str); 4] = [
        (&["1000"], "one"),
        (&["-1"], "two"),
        (&["xxx"], "three"),
        (&["100", "10"], "four"),
    ];
    for (pushback, name) in rows {
        let (clock, _) = Clock::manual(Duration::ZERO);
        let server = Server::start(clock.clone(), move |n, _| match n {
            0 => Answer::Fail(Code::Unavailable, pushback),
            _ => Answer::Ok,
        })
        .await;
        let layer = layer(r#""UNAVAILABLE""#, "", &clock).with_name(name);
        let mut client = client(server.addr, &layer);
        let _ = call(&mut client, "Call", None).await;
        let seen = recording.seen(name);
        let (first, retries) = kinds(&server);
        assert_eq!(seen.attempts, (first, retries, 0), "{pushback:?}");
        if name == "one" {
            assert_eq!(seen.attempts, (1, 1, 0));
            assert_eq!(seen.calls, calls(&[("success", 1)]));
            assert_eq!(seen.waits, [1.0]);
        } else {
            assert_eq!(seen.attempts, (1, 0, 0), "{pushback:?}");
            assert_eq!(seen.calls, calls(&[("pushback", 1)]), "{pushback:?}");
            assert_eq!(seen.waits, [0.0; 0], "{pushback:?}");
        }
    }
}

// `retry_throttling_turns_retries_off_and_back_on`, counted: twelve calls, eighteen attempts
// (six retries, each after 10 ms), nine successes and three calls the budget stopped.
#[tokio::test]
async fn retry_throttling_counts_the_throttled_calls() {
    let recording = Recording::start();
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |n, _| match n {
        0 | 3 | 6 | 10..=14 | 16 | 18 => Answer::Ok,
        _ => Answer::Fail(Code::Unavailable, &[]),
    })
    .await;
    let throttling = r#", "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.5}"#;
    let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, throttling, &clock));
    for _ in 0..12 {
        let _ = call(&mut client, "Call", None).await;
    }
    assert_eq!(kinds(&server), (12, 6));
    let seen = recording.seen("default");
    assert_eq!(seen.attempts, (12, 6, 0));
    assert_eq!(seen.calls, calls(&[("success", 9), ("throttled", 3)]));
    assert_eq!(seen.waits, [0.01; 6]);
}

// `the_waits_never_pass_the_deadline`, counted: three attempts 400 ms apart, then the
// deadline.
#[tokio::test]
async fn a_deadline_stop_counts_its_waits() {
    let recording = Recording::start();
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| {
        Answer::Fail(Code::Unavailable, &["400"])
    })
    .await;
    let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, "", &clock));
    let _ = call(&mut client, "Call", Some(Duration::from_secs(1))).await;
    assert_eq!(kinds(&server), (1, 2));
    let seen = recording.seen("default");
    assert_eq!(seen.attempts, (1, 2, 0));
    assert_eq!(seen.calls, calls(&[("deadline", 1)]));
    assert_eq!(seen.waits, [0.4, 0.4]);
    assert_eq!(clock.now(), ms(800));
}

// `a_status_in_the_trailers_is_never_retried` and `a_body_past_the_buffer_is_sent_once`,
// counted: a call committed by its response headers ends `committed` when its trailers say
// UNAVAILABLE; a body past the buffer is one attempt, committed; within it, four.
#[tokio::test]
async fn committed_calls_count_as_committed() {
    let recording = Recording::start();
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| Answer::Fail(Code::Unavailable, &[])).await;
    let streaming = layer(r#""UNAVAILABLE""#, "", &clock).with_name("stream");
    assert_eq!(
        stream(&mut client(server.addr, &streaming)).await,
        Code::Unavailable
    );
    let over = layer(r#""UNAVAILABLE""#, "", &clock)
        .with_buffer(8)
        .with_name("over");
    let _ = call(&mut client(server.addr, &over), "Call", None).await;
    let within = layer(r#""UNAVAILABLE""#, "", &clock)
        .with_buffer(9)
        .with_name("within");
    let _ = call(&mut client(server.addr, &within), "Call", None).await;
    assert_eq!(server.seen().len(), 1 + 1 + 4);

    let seen = recording.seen("stream");
    assert_eq!(seen.attempts, (1, 0, 0));
    assert_eq!(seen.calls, calls(&[("committed", 1)]));
    let seen = recording.seen("over");
    assert_eq!(seen.attempts, (1, 0, 0));
    assert_eq!(seen.calls, calls(&[("committed", 1)]));
    let seen = recording.seen("within");
    assert_eq!(seen.attempts, (1, 3, 0));
    assert_eq!(seen.calls, calls(&[("attempts_exhausted", 1)]));
}

// The negative control, counted: `Plain` has no retry policy, so the layer reports nothing
// of it; the same failures on `Call` are four attempts.
#[tokio::test]
async fn a_method_without_a_policy_is_not_counted() {
    let recording = Recording::start();
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| Answer::Fail(Code::Unavailable, &[])).await;
    let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, "", &clock));
    for _ in 0..3 {
        assert_eq!(call(&mut client, "Plain", None).await, Code::Unavailable);
    }
    let seen = recording.seen("default");
    assert_eq!((seen.attempts, seen.calls.len()), ((0, 0, 0), 0));
    let _ = call(&mut client, "Call", None).await;
    let seen = recording.seen("default");
    assert_eq!(seen.attempts, (1, 3, 0));
    assert_eq!(seen.calls, calls(&[("attempts_exhausted", 1)]));
}

// `a_refused_connection_is_unavailable_and_retried`, counted: four attempts that never
// reached a server, 10 ms apart.
#[tokio::test]
async fn a_refused_connection_counts_its_attempts() {
    let recording = Recording::start();
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    let (clock, _) = Clock::manual(Duration::ZERO);
    let _ = call(
        &mut client(addr, &layer(r#""UNAVAILABLE""#, "", &clock)),
        "Call",
        None,
    )
    .await;
    let seen = recording.seen("default");
    assert_eq!(seen.attempts, (1, 3, 0));
    assert_eq!(seen.calls, calls(&[("attempts_exhausted", 1)]));
    assert_eq!(seen.waits, [0.01; 3]);
}

/// Hedges of `Hedge`, `attempts` of them 100 ms apart, UNAVAILABLE not fatal.
fn hedging(attempts: u32, clock: &Clock, name: &'static str) -> GrpcRetryLayer {
    let json = format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Flaky", "method": "Hedge"}}],
            "hedgingPolicy": {{"maxAttempts": {attempts}, "hedgingDelay": "0.1s",
                "nonFatalStatusCodes": ["UNAVAILABLE"]}}}}]}}"#
    );
    GrpcRetryLayer::from_json(&json)
        .unwrap()
        .with_clock(clock.clone())
        .with_dice(Dice::from_fn(|| 0.5))
        .with_name(name)
}

/// A hedging row: the layer's name, its `maxAttempts`, the server's answer by
/// `grpc-previous-rpc-attempts`, the call's code, the attempts counted (first, retry, hedge)
/// and the call's outcome.
type HedgeRow = (
    &'static str,
    u32,
    fn(u32) -> Answer,
    Code,
    (u64, u64, u64),
    &'static str,
);

// The four hedging scenarios of `hedge.rs`, counted: each attempt after the first is a
// `hedge` (none a `retry`), no wait is recorded, and each call ends as it did there.
#[tokio::test]
async fn hedged_calls_count_their_hedges() {
    let recording = Recording::start();
    let deadline = Some(Duration::from_secs(10));
    let rows: [HedgeRow; 4] = [
        (
            "wins",
            3,
            |p| if p == 2 { Answer::Ok } else { Answer::Hang },
            Code::Ok,
            (1, 0, 2),
            "success",
        ),
        (
            "fatal",
            2,
            |p| {
                if p == 1 {
                    Answer::Fail(Code::InvalidArgument, &[])
                } else {
                    Answer::Hang
                }
            },
            Code::InvalidArgument,
            (1, 0, 1),
            "not_retryable",
        ),
        (
            "non_fatal",
            3,
            |p| match p {
                0 => Answer::Hang,
                1 => Answer::Fail(Code::Unavailable, &[]),
                _ => Answer::Ok,
            },
            Code::Ok,
            (1, 0, 2),
            "success",
        ),
        (
            "all_fail",
            3,
            |_| Answer::Fail(Code::Unavailable, &[]),
            Code::Unavailable,
            (1, 0, 2),
            "attempts_exhausted",
        ),
    ];
    for (name, attempts, answer, code, kinds, outcome) in rows {
        let (clock, _) = Clock::manual(Duration::ZERO);
        let server = Server::start(clock.clone(), move |_, p| answer(p)).await;
        let mut client = client(server.addr, &hedging(attempts, &clock, name));
        assert_eq!(call(&mut client, "Hedge", deadline).await, code, "{name}");
        assert_eq!(server.seen().len() as u64, kinds.0 + kinds.2, "{name}");
        let seen = recording.seen(name);
        assert_eq!(seen.attempts, kinds, "{name}");
        assert_eq!(seen.calls, calls(&[(outcome, 1)]), "{name}");
        assert_eq!(seen.waits, [0.0; 0], "{name}");
    }
}

// `deadline.rs`'s silent server, counted: a call cut at its deadline ends `deadline`, with the
// attempts it had sent (one for the retry policy; the first and two hedges for the hedging
// policy, whose delays the manual clock runs at once).
#[tokio::test]
async fn a_call_cut_at_its_deadline_counts_as_deadline() {
    let recording = Recording::start();
    let limit = Some(ms(300));
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| Answer::Hang).await;
    let retrying = layer(r#""UNAVAILABLE""#, "", &clock).with_name("retrying");
    let mut client = deaf_client(server.addr, &retrying);
    let code = call_within(&mut client, "Call", limit, Duration::from_secs(10)).await;
    assert_eq!(code, Some(Code::DeadlineExceeded));
    let seen = recording.seen("retrying");
    assert_eq!(seen.attempts, (1, 0, 0));
    assert_eq!(seen.calls, calls(&[("deadline", 1)]));
    let mut client = deaf_client(server.addr, &hedging(3, &clock, "hedged"));
    let code = call_within(&mut client, "Hedge", limit, Duration::from_secs(10)).await;
    assert_eq!(code, Some(Code::DeadlineExceeded));
    let seen = recording.seen("hedged");
    assert_eq!(seen.attempts, (1, 0, 2));
    assert_eq!(seen.calls, calls(&[("deadline", 1)]));
    assert_eq!(seen.waits, [0.0; 0]);
}
