//! The retry layer over real gRPC: a tonic server on 127.0.0.1 and a tonic client through the
//! layer, porting grpc-go's `test/retry_test.go`. Every wait is read on the layer's clock, a
//! manual one that the server reads too, so each attempt's arrival time is the sum of the
//! waits before it, exactly; the dice are `0.5`, A6's ceiling without jitter.

mod deadline;
mod grpc_timeout;
mod hedge;
mod metrics;
mod server;

use std::time::Duration;

use ironward_tonic::{Clock, GrpcRetryLayer};
use server::{Answer, Server, call, client, layer, stream};
use tonic::Code;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// grpc-go's test service config: `MaxAttempts` 4, `.01s` both ways, multiplier 1, for the
/// method `Call` and the server-streaming `Stream` (`Plain` has no entry), with `extra` added
/// to the top level.
// grpc-go `test/retry_test.go`, `TestRetryUnary`: the server succeeds on its attempts 0, 2
// and 5, fails with the non-retryable INTERNAL on 6, 8 and 11 and with the retryable
// ALREADY_EXISTS otherwise; each row is the code a call ends with and the attempts the server
// has seen by then.
#[tokio::test]
async fn retry_unary_retries_the_retryable_code_up_to_max_attempts() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |n, _| match n {
        0 | 2 | 5 => Answer::Ok,
        6 | 8 | 11 => Answer::Fail(Code::Internal, &[]),
        _ => Answer::Fail(Code::AlreadyExists, &[]),
    })
    .await;
    let mut client = client(server.addr, &layer(r#""ALREADY_EXISTS""#, "", &clock));
    let rows = [
        (Code::Ok, 1),
        (Code::Ok, 3),
        (Code::Ok, 6),
        (Code::Internal, 7),
        (Code::Internal, 9),
        (Code::Internal, 12),
        (Code::AlreadyExists, 16),
    ];
    for (n, (code, seen)) in rows.into_iter().enumerate() {
        assert_eq!(call(&mut client, "Call", None).await, code, "call {n}");
        assert_eq!(server.seen().len(), seen, "call {n}");
    }
    // Each retry says how many attempts came before it; each call starts again without it.
    let previous = [
        None,
        None,
        Some(1),
        None,
        Some(1),
        Some(2),
        None,
        None,
        Some(1),
        None,
        Some(1),
        Some(2),
        None,
        Some(1),
        Some(2),
        Some(3),
    ];
    assert_eq!(server.previous(), previous);
    // Nine retries, each after exactly the 10 ms backoff; first attempts do not wait.
    let at: Vec<_> = server.seen().iter().map(|s| s.at).collect();
    let waits: Vec<_> = at.windows(2).map(|w| w[1] - w[0]).collect();
    let want: Vec<_> = previous[1..]
        .iter()
        .map(|p| if p.is_some() { ms(10) } else { ms(0) })
        .collect();
    assert_eq!(waits, want);
    assert_eq!(clock.now(), ms(90));
}

// grpc-go `test/retry_test.go`, `TestRetryStreaming`, the pushback rows as unary calls:
// "1s server pushback - delayed retry" waits the pushback exactly, not the 10 ms backoff;
// "Negative server pushback - no retry", "Non-numeric server pushback - no retry" and
// "Multiple server pushback values - no retry" stop after the first attempt.
#[tokio::test]
async fn pushback_waits_exactly_or_stops() {
    let rows: [(&'static [&'static str], Code, usize, Duration); 4] = [
        (&["1000"], Code::Ok, 2, ms(1000)),
        (&["-1"], Code::Unavailable, 1, ms(0)),
        (&["xxx"], Code::Unavailable, 1, ms(0)),
        (&["100", "10"], Code::Unavailable, 1, ms(0)),
    ];
    for (pushback, code, attempts, waited) in rows {
        let (clock, _) = Clock::manual(Duration::ZERO);
        let server = Server::start(clock.clone(), move |n, _| match n {
            0 => Answer::Fail(Code::Unavailable, pushback),
            _ => Answer::Ok,
        })
        .await;
        let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, "", &clock));
        assert_eq!(call(&mut client, "Call", None).await, code, "{pushback:?}");
        let seen = server.seen();
        assert_eq!(seen.len(), attempts, "{pushback:?}");
        assert_eq!(seen.last().unwrap().at, waited, "{pushback:?}");
        assert_eq!(clock.now(), waited, "{pushback:?}");
    }
}

// grpc-go `test/retry_test.go`, `TestRetryThrottling`: maxTokens 10, tokenRatio 0.5, the
// server succeeding on its attempts 0, 3, 6, 10 to 14, 16 and 18 and failing with UNAVAILABLE
// otherwise. Each row: the code the call ends with, the attempts seen, and the tokens left
// (the core's test of the plan has the same table, with why grpc-go's comments differ).
// Successes give tokens back from their trailers, read through the layer's response body.
#[tokio::test]
async fn retry_throttling_turns_retries_off_and_back_on() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |n, _| match n {
        0 | 3 | 6 | 10..=14 | 16 | 18 => Answer::Ok,
        _ => Answer::Fail(Code::Unavailable, &[]),
    })
    .await;
    let throttling = r#", "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.5}"#;
    let layer = layer(r#""UNAVAILABLE""#, throttling, &clock);
    let mut client = client(server.addr, &layer);
    let rows = [
        (Code::Ok, 1, 10.0),
        (Code::Ok, 4, 8.5),
        (Code::Ok, 7, 7.0),
        // 6 after the first failure: retried; 5 after the second: not above half, stopped.
        (Code::Unavailable, 9, 5.0),
        (Code::Unavailable, 10, 4.0),
        (Code::Ok, 11, 4.5),
        (Code::Ok, 12, 5.0),
        (Code::Ok, 13, 5.5),
        (Code::Ok, 14, 6.0),
        (Code::Ok, 15, 6.5),
        // Above half again: retries are back on.
        (Code::Ok, 17, 6.0),
        (Code::Unavailable, 18, 5.0),
    ];
    for (n, (code, seen, tokens)) in rows.into_iter().enumerate() {
        assert_eq!(call(&mut client, "Call", None).await, code, "call {n}");
        let budget = layer.budget().unwrap().tokens();
        assert_eq!((server.seen().len(), budget), (seen, tokens), "call {n}");
    }
}

// The negative control: `Plain` has no retry policy, so it is sent once, whatever it fails
// with, and nothing is added to it.
#[tokio::test]
async fn a_method_without_a_retry_policy_is_sent_once() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| Answer::Fail(Code::Unavailable, &[])).await;
    let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, "", &clock));
    for n in 1..=3 {
        assert_eq!(call(&mut client, "Plain", None).await, Code::Unavailable);
        assert_eq!(server.seen().len(), n);
    }
    let seen = server.seen();
    assert!(
        seen.iter()
            .all(|s| s.method == "Plain" && s.previous.is_none())
    );
    assert!(seen.iter().all(|s| s.timeout.is_none()), "{seen:?}");
    assert_eq!(clock.now(), Duration::ZERO);
    // The same failures on `Call` are retried: the control is the policy, not the server.
    assert_eq!(call(&mut client, "Call", None).await, Code::Unavailable);
    assert_eq!(server.seen().len(), 3 + 4);
}

// A6, "Deadlines": the waits never pass the call's deadline, and each attempt's
// `grpc-timeout` is what is left of it. A 1 s deadline and a 400 ms pushback on every
// attempt: attempts at 0, 400 and 800 ms; a fourth would start at 1200 ms, past the deadline,
// so the call ends at 800 ms with the last UNAVAILABLE.
#[tokio::test]
async fn the_waits_never_pass_the_deadline() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| {
        Answer::Fail(Code::Unavailable, &["400"])
    })
    .await;
    let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, "", &clock));
    let code = call(&mut client, "Call", Some(Duration::from_secs(1))).await;
    assert_eq!(code, Code::Unavailable);
    let seen = server.seen();
    let at: Vec<_> = seen.iter().map(|s| s.at).collect();
    assert_eq!(at, [ms(0), ms(400), ms(800)]);
    let timeouts: Vec<_> = seen.iter().map(|s| s.timeout.as_deref().unwrap()).collect();
    assert_eq!(timeouts, ["1000000u", "600000u", "200000u"]);
    assert_eq!(clock.now(), ms(800));
}

// The method's `timeout` in the service config is a deadline too, when the call sets none.
#[tokio::test]
async fn the_method_timeout_is_a_deadline() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| {
        Answer::Fail(Code::Unavailable, &["300"])
    })
    .await;
    let json = r#"{"methodConfig": [{"name": [{"service": "test.Flaky"}], "timeout": "0.5s",
        "retryPolicy": {"maxAttempts": 5, "initialBackoff": "1s", "maxBackoff": "1s",
        "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
    let layer = GrpcRetryLayer::from_json(json)
        .unwrap()
        .with_clock(clock.clone());
    let mut client = client(server.addr, &layer);
    assert_eq!(call(&mut client, "Call", None).await, Code::Unavailable);
    let timeouts: Vec<_> = server
        .seen()
        .into_iter()
        .map(|s| s.timeout.unwrap())
        .collect();
    assert_eq!(timeouts, ["500000u", "200000u"]);
    assert_eq!(clock.now(), ms(300));
}

// A6, "Committing": a response with ordinary headers commits the call; the UNAVAILABLE in
// its trailers is the caller's, never retried.
#[tokio::test]
async fn a_status_in_the_trailers_is_never_retried() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| Answer::Fail(Code::Unavailable, &[])).await;
    // UNKNOWN too, so that headers read as a status (which they have none of) would retry.
    let codes = r#""UNAVAILABLE", "UNKNOWN""#;
    let mut client = client(server.addr, &layer(codes, "", &clock));
    assert_eq!(stream(&mut client).await, Code::Unavailable);
    assert_eq!(server.seen().len(), 1);
    assert_eq!(clock.now(), Duration::ZERO);
}

// Past the retry buffer a call is sent once: its body could not be sent again.
#[tokio::test]
async fn a_body_past_the_buffer_is_sent_once() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| Answer::Fail(Code::Unavailable, &[])).await;
    // "hi" is 4 bytes of protobuf and 5 of gRPC framing: past 8 bytes.
    let layer = layer(r#""UNAVAILABLE""#, "", &clock).with_buffer(8);
    let mut client = client(server.addr, &layer);
    assert_eq!(call(&mut client, "Call", None).await, Code::Unavailable);
    assert_eq!(server.seen().len(), 1);
    // Within the buffer, the same call is retried.
    let layer = self::layer(r#""UNAVAILABLE""#, "", &clock).with_buffer(9);
    let mut client = server::client(server.addr, &layer);
    assert_eq!(call(&mut client, "Call", None).await, Code::Unavailable);
    assert_eq!(server.seen().len(), 1 + 4);
}

// grpc-go reads a transport's failure as UNAVAILABLE: a refused connection is retried by the
// policy, 10 ms apart, and the call ends UNAVAILABLE after its four attempts.
#[tokio::test]
async fn a_refused_connection_is_unavailable_and_retried() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    let (clock, _) = Clock::manual(Duration::ZERO);
    let mut client = client(addr, &layer(r#""UNAVAILABLE""#, "", &clock));
    assert_eq!(call(&mut client, "Call", None).await, Code::Unavailable);
    assert_eq!(clock.now(), ms(30), "three waits of 10 ms");
}
