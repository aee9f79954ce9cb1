//! Hedging over real gRPC, by A6's "Hedging Policy" (grpc-go has no hedging to port). Each
//! attempt's send time is read from its `grpc-timeout`, what was left of a 10 s deadline on
//! the layer's manual clock when it was sent; a hung attempt ends only when the client
//! cancels it, which the server counts.

use std::time::Duration;

use ironward_tonic::{Clock, Dice, GrpcRetryLayer};
use tonic::Code;

use crate::server::{Answer, Server, call, client};

/// Hedges of `Hedge`, `attempts` of them 100 ms apart, UNAVAILABLE not fatal.
fn layer(attempts: u32, clock: &Clock) -> GrpcRetryLayer {
    let json = format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Flaky", "method": "Hedge"}}],
            "hedgingPolicy": {{"maxAttempts": {attempts}, "hedgingDelay": "0.1s",
                "nonFatalStatusCodes": ["UNAVAILABLE"]}}}}]}}"#
    );
    GrpcRetryLayer::from_json(&json)
        .unwrap()
        .with_clock(clock.clone())
        .with_dice(Dice::from_fn(|| 0.5))
}

/// The attempts the server saw, by `grpc-previous-rpc-attempts`, each with its `grpc-timeout`.
fn sent(server: &Server) -> Vec<(Option<u32>, String)> {
    let mut seen: Vec<_> = server
        .seen()
        .into_iter()
        .map(|s| (s.previous.map(|p| p.parse().unwrap()), s.timeout.unwrap()))
        .collect();
    seen.sort();
    seen
}

const DEADLINE: Option<Duration> = Some(Duration::from_secs(10));

// A6, "Hedging Policy": while no attempt answers, a hedge every `hedgingDelay`, up to
// `maxAttempts`; the first to answer is the call's, and the others are cancelled.
#[tokio::test]
async fn hedges_go_at_their_delay_and_the_losers_are_cancelled() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, previous| match previous {
        2 => Answer::Ok,
        _ => Answer::Hang,
    })
    .await;
    let mut client = client(server.addr, &layer(3, &clock));
    assert_eq!(call(&mut client, "Hedge", DEADLINE).await, Code::Ok);
    let want = [
        (None, "10000000u".to_owned()),
        (Some(1), "9900000u".to_owned()),
        (Some(2), "9800000u".to_owned()),
    ];
    assert_eq!(sent(&server), want, "sent at 0, 100 and 200 ms");
    assert_eq!(server.cancelled(2).await, 2, "attempts 0 and 1 cancelled");
}

// A6: a fatal code (one not in `nonFatalStatusCodes`) ends the call with it, and cancels the
// attempts in flight.
#[tokio::test]
async fn a_fatal_code_ends_the_call_and_cancels_the_rest() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, previous| match previous {
        1 => Answer::Fail(Code::InvalidArgument, &[]),
        _ => Answer::Hang,
    })
    .await;
    let mut client = client(server.addr, &layer(2, &clock));
    let code = call(&mut client, "Hedge", DEADLINE).await;
    assert_eq!(code, Code::InvalidArgument);
    assert_eq!(server.seen().len(), 2);
    assert_eq!(server.cancelled(1).await, 1, "attempt 0 cancelled");
}

// A6: a non-fatal code lets the call go on; the next hedge answers, and the attempt still
// hung is cancelled.
#[tokio::test]
async fn a_non_fatal_code_lets_another_hedge_answer() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, previous| match previous {
        0 => Answer::Hang,
        1 => Answer::Fail(Code::Unavailable, &[]),
        _ => Answer::Ok,
    })
    .await;
    let mut client = client(server.addr, &layer(3, &clock));
    assert_eq!(call(&mut client, "Hedge", DEADLINE).await, Code::Ok);
    let previous: Vec<_> = sent(&server).into_iter().map(|(p, _)| p).collect();
    assert_eq!(previous, [None, Some(1), Some(2)]);
    assert_eq!(server.cancelled(1).await, 1, "attempt 0 cancelled");
}

// A6: when every attempt fails with a non-fatal code, the call fails with the last one's
// status, after `maxAttempts`; nothing is left to cancel.
#[tokio::test]
async fn every_attempt_non_fatal_fails_with_the_last() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| Answer::Fail(Code::Unavailable, &[])).await;
    let mut client = client(server.addr, &layer(3, &clock));
    assert_eq!(
        call(&mut client, "Hedge", DEADLINE).await,
        Code::Unavailable
    );
    assert_eq!(server.seen().len(), 3);
    assert_eq!(server.cancelled(0).await, 0);
}
