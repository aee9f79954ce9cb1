//! The call's deadline cuts it, as grpc-go's client cuts a call whose context's deadline
//! passes: against a server that never answers, every attempt is cancelled at the deadline
//! and the call ends with DEADLINE_EXCEEDED. The cut is tokio's timer, in real time whatever
//! the layer's clock, so these calls take their 300 ms deadline in real time, and each is
//! given 10 s to end, for a loaded machine.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ironward_tonic::{Clock, Dice, GrpcRetryLayer};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tonic::Code;

use crate::server::{
    Answer, Client, Server, call, call_within, client, deaf_client, layer, stream_to_end,
};

/// The call's deadline.
const LIMIT: Duration = Duration::from_millis(300);

/// How long a call may take in real time before the test calls it hung.
const WITHIN: Duration = Duration::from_secs(10);

/// A layer with `policy` (a `retryPolicy` or `hedgingPolicy` entry) for `test.Flaky`'s
/// `method`, and `timeout` as the method's `timeout` if set.
fn with_policy(method: &str, policy: &str, timeout: Option<&str>, clock: &Clock) -> GrpcRetryLayer {
    let timeout = timeout.map_or(String::new(), |t| format!(r#""timeout": "{t}","#));
    let json = format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Flaky", "method": "{method}"}}],
            {timeout} {policy}}}]}}"#
    );
    GrpcRetryLayer::from_json(&json)
        .unwrap()
        .with_clock(clock.clone())
        .with_dice(Dice::from_fn(|| 0.5))
}

/// Four attempts of `Call`, 10 ms apart, on UNAVAILABLE.
const RETRY: &str = r#""retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.01s",
    "maxBackoff": "0.01s", "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}"#;

/// Three attempts of `Hedge`, 100 ms apart, UNAVAILABLE not fatal.
const HEDGE: &str = r#""hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.1s",
    "nonFatalStatusCodes": ["UNAVAILABLE"]}"#;

/// A server whose first attempt, the test's warm-up call, is answered, and every other one
/// never: only the client's cancelling it ends it, which the server counts.
async fn silent_handlers(clock: &Clock) -> Server {
    Server::start(clock.clone(), |n, _| match n {
        0 => Answer::Ok,
        _ => Answer::Hang,
    })
    .await
}

/// A call of `Plain` (no policy, sent once) that the server answers: the connection is up
/// before the deadline's timer starts, so that every attempt reaches the server in time on a
/// loaded machine.
async fn warm(client: &mut Client) {
    assert_eq!(call(client, "Plain", None).await, Code::Ok);
}

/// `call` and how long it took in real time.
async fn timed<T>(call: impl Future<Output = T>) -> (T, Duration) {
    let start = Instant::now();
    let out = call.await;
    (out, start.elapsed())
}

// A retried call whose server never answers, through a client that enforces no deadline
// below the layer: the layer alone ends it, at the deadline, and the server's handler sees
// its attempt cancelled. (Before, the call was still pending when the test gave up.)
#[tokio::test]
async fn a_retried_call_to_a_silent_server_ends_at_its_deadline() {
    silent_call_ends_at_its_deadline("Call", RETRY, 1).await;
}

// A hedged call whose server never answers: every hedge goes (the manual clock runs the
// hedging delays at once), and at the deadline all three are cancelled.
#[tokio::test]
async fn a_hedged_call_to_a_silent_server_cancels_every_hedge_at_its_deadline() {
    silent_call_ends_at_its_deadline("Hedge", HEDGE, 3).await;
}

/// A call of `method` under `policy` to a silent server, with a caller deadline: it ends
/// with `DEADLINE_EXCEEDED` at the deadline, having sent `attempts`, every one cancelled.
async fn silent_call_ends_at_its_deadline(method: &'static str, policy: &str, attempts: usize) {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = silent_handlers(&clock).await;
    let mut client = deaf_client(server.addr, &with_policy(method, policy, None, &clock));
    warm(&mut client).await;
    let (code, took) = timed(call_within(&mut client, method, Some(LIMIT), WITHIN)).await;
    assert_eq!(code, Some(Code::DeadlineExceeded), "after {took:?}");
    assert!((LIMIT..WITHIN).contains(&took), "{took:?}");
    assert_eq!(
        server.seen().len(),
        1 + attempts,
        "the warm-up and the attempts"
    );
    assert_eq!(
        server.cancelled(attempts).await,
        attempts,
        "every attempt cancelled"
    );
}

// The method's `timeout` is the deadline when the caller sets none, for a retry policy and a
// hedging policy alike.
#[tokio::test]
async fn the_method_timeout_cuts_a_call_to_a_silent_server() {
    for (method, policy, attempts) in [("Call", RETRY, 1), ("Hedge", HEDGE, 3)] {
        let (clock, _) = Clock::manual(Duration::ZERO);
        let server = silent_handlers(&clock).await;
        let layer = with_policy(method, policy, Some("0.3s"), &clock);
        let mut client = deaf_client(server.addr, &layer);
        warm(&mut client).await;
        let (code, took) = timed(call_within(&mut client, method, None, WITHIN)).await;
        assert_eq!(
            code,
            Some(Code::DeadlineExceeded),
            "{method} after {took:?}"
        );
        assert!((LIMIT..WITHIN).contains(&took), "{method} {took:?}");
        assert_eq!(server.seen().len(), 1 + attempts, "{method}");
        assert_eq!(server.cancelled(attempts).await, attempts, "{method}");
    }
}

// Through tonic's own `Channel`, which cuts an attempt at its `grpc-timeout` with an error of
// its own (CANCELLED to the caller, "Timeout expired"): the layer's cut comes first, and the
// call ends with DEADLINE_EXCEEDED, as grpc-go's would.
#[tokio::test]
async fn through_a_channel_the_call_ends_with_deadline_exceeded() {
    for (method, policy) in [("Call", RETRY), ("Hedge", HEDGE)] {
        let (clock, _) = Clock::manual(Duration::ZERO);
        let server = silent_handlers(&clock).await;
        let mut client = client(server.addr, &with_policy(method, policy, None, &clock));
        warm(&mut client).await;
        let (code, took) = timed(call_within(&mut client, method, Some(LIMIT), WITHIN)).await;
        assert_eq!(
            code,
            Some(Code::DeadlineExceeded),
            "{method} after {took:?}"
        );
        assert!((LIMIT..WITHIN).contains(&took), "{method} {took:?}");
    }
}

// A committed call whose stream stalls after its first message: neither tonic's `Channel`
// nor tonic's server cuts a response body at the deadline; the layer ends it there with
// DEADLINE_EXCEEDED, and the server's stream is cancelled.
#[tokio::test]
async fn a_stream_that_stalls_ends_at_its_deadline() {
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = silent_handlers(&clock).await;
    let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, "", &clock));
    warm(&mut client).await;
    let (ended, took) = timed(stream_to_end(&mut client, LIMIT, WITHIN)).await;
    assert_eq!(ended, Some((1, Code::DeadlineExceeded)), "after {took:?}");
    assert!((LIMIT..WITHIN).contains(&took), "{took:?}");
    assert_eq!(server.cancelled(1).await, 1, "the stream cancelled");
}

/// What a [`silent`] server has read of the client's HTTP/2 frames: the streams opened
/// (`HEADERS`) and the streams reset (`RST_STREAM`), by stream id.
#[derive(Debug, Default)]
struct Frames {
    opened: Vec<u32>,
    reset: Vec<u32>,
}

/// A server on a free loopback port that accepts connections, reads what the client sends
/// and never writes a byte: not even HTTP/2's settings. It parses the frames it reads (RFC
/// 9113 §4.1: a 9-byte header, then the payload) and records them.
async fn silent() -> (SocketAddr, Arc<Mutex<Frames>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let frames = Arc::new(Mutex::new(Frames::default()));
    let seen = Arc::clone(&frames);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(read_frames(socket, Arc::clone(&seen)));
        }
    });
    (addr, frames)
}

/// Reads the connection preface, then frame after frame, until the client hangs up.
async fn read_frames(mut socket: TcpStream, frames: Arc<Mutex<Frames>>) {
    let mut preface = [0u8; 24];
    if socket.read_exact(&mut preface).await.is_err() {
        return;
    }
    let mut head = [0u8; 9];
    while socket.read_exact(&mut head).await.is_ok() {
        let length = u32::from_be_bytes([0, head[0], head[1], head[2]]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; length as usize];
        if socket.read_exact(&mut payload).await.is_err() {
            return;
        }
        let mut frames = frames.lock().unwrap();
        match head[3] {
            0x1 => frames.opened.push(stream),
            0x3 => frames.reset.push(stream),
            _ => {}
        }
    }
}

// A server that accepts the connection and never says a word, through tonic's `Channel`:
// with retries and with hedging the call ends with DEADLINE_EXCEEDED at its deadline, and
// every stream the client opened (one; for the hedges, as many as went in real time on the
// layer's default clock, three on an idle machine), it reset.
#[tokio::test]
async fn a_server_that_never_speaks_has_every_stream_reset_at_the_deadline() {
    for (method, policy) in [("Call", RETRY), ("Hedge", HEDGE)] {
        let (addr, frames) = silent().await;
        let layer = with_policy(method, policy, None, &Clock::monotonic());
        let mut client = client(addr, &layer);
        let (code, took) = timed(call_within(&mut client, method, Some(LIMIT), WITHIN)).await;
        assert_eq!(
            code,
            Some(Code::DeadlineExceeded),
            "{method} after {took:?}"
        );
        assert!((LIMIT..WITHIN).contains(&took), "{method} {took:?}");
        let start = Instant::now();
        let all_reset = |f: &Frames| !f.opened.is_empty() && f.reset.len() >= f.opened.len();
        while !all_reset(&frames.lock().unwrap()) && start.elapsed() < WITHIN {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut frames = frames.lock().unwrap();
        frames.reset.sort_unstable();
        assert!(!frames.opened.is_empty(), "{method}: {frames:?}");
        assert_eq!(frames.reset, frames.opened, "{method}: every stream reset");
    }
}
