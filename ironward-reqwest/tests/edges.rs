//! Both HTTP edges, one table: every row is run through `ironward-reqwest`'s `RetryMiddleware`
//! and through `ironward-tower`'s `HttpRetryLayer` around hyper-util's client, over real HTTP
//! to an axum server on a free 127.0.0.1 port, and both must give the same requests at the
//! same instants, the same record ([`Retried`]: attempts, waits, stop reason) and the same
//! side effects, and the row's expected ones.
//!
//! The rows are the twelve scenarios of the MoonBit package `http_retry`'s HTTP simulation and
//! its negative control (a forced unsafe replay really does repeat the operation), then an
//! empty idempotency key, a `Retry-After` that is not UTF-8, a time budget that runs out while
//! the client waits, and a connection refused before anything was sent.
//!
//! With the `metrics` feature, each edge also counts every row on a recorder of its own, and
//! both must count the same attempts by kind, the same call outcome (the core's label) and the
//! same waits, and what the row's record says.
//!
//! Time is a manual clock ([`Clock::manual`]) shared by both clients and the server: a sleep on
//! it moves it forward at once, so the waits cost no real time and the instants the server
//! records are exactly the waits decided, to the nanosecond. The wall clock is fixed, so an
//! HTTP-date `Retry-After` is a known delay; the dice are either "no jitter" or one seeded
//! sequence, the same for both edges.

#[path = "edges/counts.rs"]
mod counts;
#[path = "edges/server.rs"]
pub(crate) mod server;

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Bytes;
use futures_util::stream;
use http::{HeaderValue, Method, Request};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use ironward::http_retry::{Fault, Retried, Settings, Stop, StopReason};
use ironward_reqwest::RetryMiddleware;
use ironward_tokio::{Clock, Dice, Hand};
use ironward_tower::HttpRetryLayer;
use reqwest_middleware::ClientBuilder;
use tower::{ServiceBuilder, ServiceExt};

use crate::http_date::http_date;
use counts::{Counts, Meter};
use server::{Hit, Reply, Server};

/// The fixed wall clock: 2023-11-14T22:13:20Z.
const WALL: u64 = 1_700_000_000;

/// How long one row may take in real time: its waits are free, its requests local.
const ROW_LIMIT: Duration = Duration::from_secs(20);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The request body a row sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// A fixed body, which both clients can send again.
    Fixed(&'static str),
    /// A streamed body, which reqwest cannot copy; the tower edge does not compile one (its
    /// bodies must be `Clone`), so the row runs through reqwest alone.
    Streamed,
}

/// How the dice roll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draws {
    /// Every roll is 1: no jitter, each wait is the backoff ceiling exactly.
    Whole,
    /// The same seeded sequence for both edges.
    Seeded(u64),
    /// No jitter, and each roll (drawn once per failed attempt, after the clock was read)
    /// moves the clock forward this far: the client oversleeps its wait by it.
    Oversleep(Duration),
}

/// One row of the table.
#[derive(Debug, Clone)]
struct Row {
    name: &'static str,
    settings: Settings,
    method: Method,
    /// The `Idempotency-Key` value sent, if any.
    key: Option<&'static [u8]>,
    body: Body,
    script: Vec<Reply>,
    /// Whether the server deduplicates unsafe requests by their idempotency key.
    dedupe: bool,
    /// Whether nothing listens: every connection is refused.
    refused: bool,
    draws: Draws,
    expect: Expect,
}

/// What a row must give.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expect {
    /// The requests the server saw, each at its instant on the manual clock.
    requests: Vec<Duration>,
    /// The record on the response (or in the error).
    retried: Retried,
    /// Operations the server performed.
    effects: u32,
}

/// What one edge gave for a row.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    hits: Vec<Hit>,
    retried: Retried,
    effects: u32,
    /// The status returned, or `None` for an error.
    status: Option<u16>,
    /// What the edge counted through the `metrics` facade.
    counts: Counts,
}

impl Row {
    fn new(name: &'static str, script: Vec<Reply>, expect: Expect) -> Self {
        Self {
            name,
            settings: Settings::default(),
            method: Method::GET,
            key: None,
            body: Body::Fixed(""),
            script,
            dedupe: false,
            refused: false,
            draws: Draws::Whole,
            expect,
        }
    }

    fn post(self, body: &'static str) -> Self {
        Self {
            method: Method::POST,
            body: Body::Fixed(body),
            ..self
        }
    }

    fn key(self, key: &'static [u8]) -> Self {
        Self {
            key: Some(key),
            ..self
        }
    }

    fn settings(self, settings: Settings) -> Self {
        Self { settings, ..self }
    }

    /// The manual clock (starting at 10 s, so no instant is zero by accident), its hand, and
    /// the dice for this row.
    fn sources(&self) -> (Clock, Hand, Dice) {
        let (clock, hand) = Clock::manual(Duration::from_secs(10));
        let dice = match self.draws {
            Draws::Whole => Dice::from_fn(|| 1.0),
            Draws::Seeded(seed) => Dice::seeded(seed),
            Draws::Oversleep(by) => {
                let hand = hand.clone();
                Dice::from_fn(move || {
                    hand.advance(by);
                    1.0
                })
            }
        };
        (clock, hand, dice)
    }
}

/// `requests` after the manual clock's 10 s start.
fn at(requests: &[u64]) -> Vec<Duration> {
    requests
        .iter()
        .map(|&n| Duration::from_secs(10) + ms(n))
        .collect()
}

fn expect(requests: &[u64], waited: u64, stop: Option<Stop>, effects: u32) -> Expect {
    Expect {
        requests: at(requests),
        retried: Retried {
            attempts: requests.len() as u32,
            waited: ms(waited),
            stop,
        },
        effects,
    }
}

fn stopped(reason: StopReason) -> Option<Stop> {
    Some(Stop::Decided(reason))
}

/// The table.
fn rows() -> Vec<Row> {
    use StopReason::*;
    let defaults = Settings::default();
    let date = http_date(WALL as i64 + 2);
    vec![
        // 1. A rate-limited GET: the server's second, longer than the 200 ms backoff.
        Row::new(
            "429 recovers after Retry-After",
            vec![Reply::retry_after(429, &[b"1"]), Reply::status(200)],
            expect(&[0, 1000], 1000, None, 0),
        ),
        // 2. Exponential backoff: 200 ms, then 400 ms.
        Row::new(
            "503s back off exponentially",
            vec![Reply::status(503), Reply::status(503), Reply::status(200)],
            expect(&[0, 200, 600], 600, None, 0),
        ),
        // 3. An unsafe POST is never replayed.
        Row::new(
            "an unsafe POST is sent once",
            vec![Reply::status(503)],
            expect(&[0], 0, stopped(NotReplayable), 1),
        )
        .post("{\"pay\":1}"),
        // 4. A POST the server deduplicates by its key is replayed, and happens once.
        Row {
            dedupe: true,
            ..Row::new(
                "a deduplicated POST is replayed",
                vec![Reply::status(503), Reply::status(201)],
                expect(&[0, 200], 200, None, 1),
            )
            .post("{\"pay\":1}")
            .key(b"order-1")
        },
        // 5. A Retry-After the budget cannot hold.
        Row::new(
            "a wait beyond the budget stops",
            vec![Reply::retry_after(503, &[b"20"])],
            expect(&[0], 0, stopped(BudgetExhausted), 0),
        )
        .settings(Settings {
            total_budget: Duration::from_secs(10),
            ..defaults
        }),
        // 6. A server that never recovers: max_retries + 1 requests.
        Row::new(
            "retries run out",
            vec![Reply::status(503)],
            expect(&[0, 200, 600, 1400], 1400, stopped(AttemptsExhausted), 0),
        ),
        // 7. A malformed Retry-After.
        Row::new(
            "a malformed Retry-After stops",
            vec![Reply::retry_after(503, &[b"soon"])],
            expect(&[0], 0, stopped(InvalidRetryAfter), 0),
        ),
        // 8. Two Retry-After fields, even equal ones.
        Row::new(
            "duplicate Retry-After fields stop",
            vec![Reply::retry_after(503, &[b"1", b"1"])],
            expect(&[0], 0, stopped(InvalidRetryAfter), 0),
        ),
        // 9. A server delay above the 30 s cap is never clipped.
        Row::new(
            "a Retry-After above the cap stops",
            vec![Reply::retry_after(429, &[b"31"])],
            expect(&[0], 0, stopped(ServerDelayExceedsCap), 0),
        ),
        // 10. An HTTP-date two seconds after the wall clock.
        Row::new(
            "an HTTP-date is waited out",
            vec![
                Reply::retry_after(503, &[date.as_bytes()]),
                Reply::status(200),
            ],
            expect(&[0, 2000], 2000, None, 0),
        ),
        // 11. A 404 is final.
        Row::new(
            "a 404 is not retried",
            vec![Reply::status(404)],
            expect(&[0], 0, stopped(NotRetryable), 0),
        ),
        // 12. A body that cannot be sent again.
        Row {
            body: Body::Streamed,
            method: Method::PUT,
            ..Row::new(
                "a streamed body is sent once",
                vec![Reply::status(503)],
                expect(&[0], 0, stopped(NotReplayable), 1),
            )
        },
        // The negative control: a POST vouched for by a key the server does NOT honour is
        // replayed, and the operation happens twice. Replay safety is the caller's word.
        Row::new(
            "a forced replay repeats the operation",
            vec![Reply::status(503), Reply::status(201)],
            expect(&[0, 200], 200, None, 2),
        )
        .post("{\"pay\":1}")
        .key(b"order-2"),
        // An empty key names no operation, so it vouches for nothing.
        Row::new(
            "an empty idempotency key is not replay-safe",
            vec![Reply::status(503)],
            expect(&[0], 0, stopped(NotReplayable), 1),
        )
        .post("{\"pay\":1}")
        .key(b""),
        // A Retry-After that is not UTF-8 cannot be a delay.
        Row::new(
            "a Retry-After that is not UTF-8 stops",
            vec![Reply::retry_after(503, &[b"\xff1"])],
            expect(&[0], 0, stopped(InvalidRetryAfter), 0),
        ),
        // A 2 s wait that fits the 10 s budget, overslept by 7.5 s: on waking 0.5 s is left,
        // less than the 1 s reserve, so the retry is not sent.
        Row {
            draws: Draws::Oversleep(ms(7500)),
            ..Row::new(
                "the budget runs out while waiting",
                vec![Reply::retry_after(503, &[b"2"])],
                expect(&[0], 2000, stopped(BudgetExhausted), 0),
            )
            .settings(Settings {
                total_budget: Duration::from_secs(10),
                ..defaults
            })
        },
        // Nothing listens: a refused connection sent nothing, so even a POST is retried.
        Row {
            refused: true,
            ..Row::new(
                "a refused connection is retried",
                vec![Reply::status(200)],
                Expect {
                    requests: Vec::new(),
                    retried: Retried {
                        attempts: 4,
                        waited: ms(1400),
                        stop: stopped(AttemptsExhausted),
                    },
                    effects: 0,
                },
            )
            .post("{\"pay\":1}")
        },
        // Jitter: both edges draw the same seeded sequence once per failed attempt.
        Row {
            draws: Draws::Seeded(42),
            ..Row::new(
                "jittered waits agree",
                vec![Reply::status(503)],
                // Only the count and the stop are known in advance; the waits are compared
                // between the edges, and checked against the core's backoff below.
                expect(&[0, 0, 0, 0], 0, stopped(AttemptsExhausted), 0),
            )
        },
    ]
}

/// A port nothing listens on: one just released.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Starts the row's server (none when connections are to be refused) and returns it with the
/// URL to call.
async fn serve(row: &Row, clock: &Clock) -> (Option<Server>, String) {
    if row.refused {
        return (None, format!("http://127.0.0.1:{}/op", free_port()));
    }
    let server = Server::start(row.script.clone(), row.dedupe, clock.clone()).await;
    let url = format!("http://{}/op", server.addr);
    (Some(server), url)
}

/// What a row's server saw and did, and what the edge counted.
fn seen(server: Option<Server>, meter: &Meter, retried: Retried, status: Option<u16>) -> Seen {
    Seen {
        hits: server.as_ref().map(Server::hits).unwrap_or_default(),
        effects: server.as_ref().map_or(0, Server::effects),
        retried,
        status,
        counts: meter.counts(),
    }
}

/// The row through `ironward-reqwest`.
async fn through_reqwest(row: &Row) -> Seen {
    let (clock, _hand, dice) = row.sources();
    let (server, url) = serve(row, &clock).await;
    let meter = Meter::new();
    let middleware = meter.made(|| {
        RetryMiddleware::new(row.settings)
            .with_clock(clock)
            .with_wall_clock(Clock::from_fn(|| Duration::from_secs(WALL)))
            .with_dice(dice)
    });
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let mut request = client.request(row.method.clone(), &url);
    if let Some(key) = row.key {
        request = request.header("idempotency-key", HeaderValue::from_bytes(key).unwrap());
    }
    request = match row.body {
        Body::Fixed(body) => request.body(body),
        Body::Streamed => {
            let chunks = stream::iter([Ok::<_, Infallible>(Bytes::from_static(b"chunk"))]);
            request.body(reqwest::Body::wrap_stream(chunks))
        }
    };
    match request.send().await {
        Ok(response) => {
            let retried = *response
                .extensions()
                .get::<Retried>()
                .expect("every response carries a Retried");
            seen(server, &meter, retried, Some(response.status().as_u16()))
        }
        Err(err) => {
            let gave_up = ironward_reqwest::gave_up(&err).expect("every error is a GaveUp");
            seen(server, &meter, gave_up.retried(), None)
        }
    }
}

/// The row through `ironward-tower`, around hyper-util's client.
async fn through_tower(row: &Row) -> Seen {
    let (clock, _hand, dice) = row.sources();
    let (server, url) = serve(row, &clock).await;
    let classify = |err: &hyper_util::client::legacy::Error| {
        if err.is_connect() {
            Fault::Unsent
        } else {
            Fault::Sent
        }
    };
    let meter = Meter::new();
    let layer = meter.made(|| {
        HttpRetryLayer::new(row.settings)
            .with_clock(clock)
            .with_wall_clock(Clock::from_fn(|| Duration::from_secs(WALL)))
            .with_dice(dice)
            .with_errors(classify)
    });
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let service = ServiceBuilder::new().layer(layer).service(client);
    let Body::Fixed(body) = row.body else {
        unreachable!("the tower edge sends only bodies it can replay");
    };
    let mut request = Request::builder().method(row.method.clone()).uri(&url);
    if let Some(key) = row.key {
        request = request.header("idempotency-key", HeaderValue::from_bytes(key).unwrap());
    }
    let request = request
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .unwrap();
    match service.oneshot(request).await {
        Ok(response) => {
            let retried = *response
                .extensions()
                .get::<Retried>()
                .expect("every response carries a Retried");
            seen(server, &meter, retried, Some(response.status().as_u16()))
        }
        Err(err) => {
            let gave_up = err
                .downcast_ref::<ironward_tower::retry::GaveUp>()
                .expect("every error is a GaveUp");
            seen(server, &meter, gave_up.retried(), None)
        }
    }
}

/// Fails unless the call finishes within [`ROW_LIMIT`] of real time.
async fn bounded<F: std::future::Future>(name: &str, call: F) -> F::Output {
    tokio::time::timeout(ROW_LIMIT, call)
        .await
        .unwrap_or_else(|_| panic!("{name}: did not finish in {ROW_LIMIT:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_edges_retry_every_row_alike() {
    for row in rows() {
        let reqwest = bounded(row.name, through_reqwest(&row)).await;
        let instants: Vec<Duration> = reqwest.hits.iter().map(|hit| hit.at).collect();
        assert_eq!(
            reqwest.retried.attempts, row.expect.retried.attempts,
            "{}",
            row.name
        );
        assert_eq!(
            reqwest.retried.stop, row.expect.retried.stop,
            "{}",
            row.name
        );
        assert_eq!(reqwest.effects, row.expect.effects, "{}", row.name);
        if let Draws::Seeded(seed) = row.draws {
            // The waits are the core's full-jitter backoff at the seeded draws, one per
            // failed attempt, in order.
            let dice = Dice::seeded(seed);
            let backoff = row.settings.backoff();
            let mut at = Duration::from_secs(10);
            let mut planned = vec![at];
            for retry in 1..row.expect.retried.attempts {
                at += backoff.delay(retry, dice.roll(), None);
                planned.push(at);
            }
            assert_eq!(instants, planned, "{}", row.name);
            assert_eq!(
                reqwest.retried.waited,
                at - Duration::from_secs(10),
                "{}",
                row.name
            );
        } else {
            assert_eq!(instants, row.expect.requests, "{}", row.name);
            assert_eq!(reqwest.retried, row.expect.retried, "{}", row.name);
        }
        counts::check(&reqwest.counts, &reqwest.retried, row.name);
        if row.body == Body::Streamed {
            continue;
        }
        let tower = bounded(row.name, through_tower(&row)).await;
        assert_eq!(tower, reqwest, "{}: the edges disagree", row.name);
    }
}
