//! The caller's `grpc-timeout`, as gRPC over HTTP/2 ("PROTOCOL-HTTP2") writes it: Timeout →
//! "grpc-timeout" TimeoutValue TimeoutUnit, the value a positive integer of at most 8 ASCII
//! digits, the unit one of `H`, `M`, `S`, `m`, `u`, `n`. A well-formed value is the call's
//! deadline and each attempt carries the time left of it; a malformed one is refused before
//! anything is sent, with the INTERNAL grpc-go's server answers it with; zero is a deadline
//! already passed.

use std::time::Duration;

use ironward_tonic::{Clock, Dice, GrpcRetryLayer};
use tonic::Code;

use crate::layer;
use crate::server::{Answer, Server, call_with_timeout, client};

/// Each form: the caller's value, the code the call ends with, and the `grpc-timeout` of each
/// attempt the server saw. The server fails each call's first attempt with UNAVAILABLE and
/// answers its retry, 10 ms later on the manual clock.
const ROWS: [(&str, Code, &[&str]); 12] = [
    ("bogus", Code::Internal, &[]),
    ("-5S", Code::Internal, &[]),
    ("+5S", Code::Internal, &[]),
    (" 5S", Code::Internal, &[]),
    ("1.5S", Code::Internal, &[]),
    ("123456789S", Code::Internal, &[]),
    ("5x", Code::Internal, &[]),
    ("5s", Code::Internal, &[]),
    ("", Code::Internal, &[]),
    // Zero: the deadline has passed, and nothing is sent.
    ("0S", Code::DeadlineExceeded, &[]),
    // The time left, in the finest unit that holds it, rounded up.
    ("5S", Code::Ok, &["5000000u", "4990000u"]),
    // The largest the header holds, about 11 400 years: written back as it came (it was
    // read saturated at about 584 years and rewritten `5124096H`).
    ("99999999H", Code::Ok, &["99999999H", "99999999H"]),
];

#[tokio::test]
async fn each_form_is_read_as_the_protocol_writes_it() {
    for (value, code, sent) in ROWS {
        let (clock, _) = Clock::manual(Duration::ZERO);
        let server = Server::start(clock.clone(), |_, previous| match previous {
            0 => Answer::Fail(Code::Unavailable, &[]),
            _ => Answer::Ok,
        })
        .await;
        let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, "", &clock));
        assert_eq!(
            call_with_timeout(&mut client, "Call", value).await,
            code,
            "{value:?}"
        );
        let seen: Vec<_> = server.seen().into_iter().map(|s| s.timeout).collect();
        let want: Vec<_> = sent.iter().map(|t| Some((*t).to_owned())).collect();
        assert_eq!(seen, want, "{value:?}");
    }
}

// A hedged call reads the header alike: a malformed value sends nothing.
#[tokio::test]
async fn a_hedged_call_refuses_a_malformed_value_too() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| Answer::Ok).await;
    let json = r#"{"methodConfig": [{"name": [{"service": "test.Flaky", "method": "Hedge"}],
        "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.1s"}}]}"#;
    let layer = GrpcRetryLayer::from_json(json)
        .unwrap()
        .with_clock(clock.clone())
        .with_dice(Dice::from_fn(|| 0.5));
    let mut client = client(server.addr, &layer);
    for value in ["bogus", "-5S", "123456789S"] {
        let code = call_with_timeout(&mut client, "Hedge", value).await;
        assert_eq!(code, Code::Internal, "{value:?}");
    }
    assert_eq!(server.seen(), []);
    assert_eq!(
        call_with_timeout(&mut client, "Hedge", "2S").await,
        Code::Ok
    );
    assert_eq!(server.seen()[0].timeout.as_deref(), Some("2000000u"));
}

// A method without a retry or hedging policy is sent untouched, its header included: the
// layer reads no deadline there (the module docs' step 1).
#[tokio::test]
async fn a_method_without_a_policy_forwards_its_header_untouched() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| Answer::Ok).await;
    let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, "", &clock));
    assert_eq!(
        call_with_timeout(&mut client, "Plain", "bogus").await,
        Code::Ok
    );
    assert_eq!(server.seen()[0].timeout.as_deref(), Some("bogus"));
}
