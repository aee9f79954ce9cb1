//! Both breaker families side by side, over real HTTP, in real time: an axum server on a free
//! 127.0.0.1 port fails every request (500) for its first 5 s and then heals, and four
//! clients call it at a steady pace (one request at a time, one every 5 ms) at once:
//! `ironward-tower`'s `BreakerLayer` around hyper-util's client, and `ironward-reqwest`'s
//! `RetryMiddleware` (no retries) with a `ClientBreaker`, each once with the SRE breaker
//! (go-zero's preset, [`SRE`]) and once with the classic breaker (opening at half of its
//! last 20 calls failed, open 500 ms, one probe). Each is picked by its policy value alone.
//!
//! The server counts what each client sent. For a classic client, every request that
//! reached it during the outage after the ten that tripped the breaker was a probe, at most
//! one per open wait: none while the breaker was open. After the healing the breaker closes
//! within one open wait and the round trips of a probe that failed across the healing and of
//! the one that passed; then every request is admitted. For an SRE client, the outage is
//! throttled (most requests refused, some let through by the draw and by the probe), and
//! after the healing its refusals thin out as successes come: its drop fraction falls to a
//! half well within its window, and to 0 (full admission) about when the outage's failures,
//! and then its own refusals since the healing (each a call in its window), have aged out of
//! it. Both are printed side by side, for example (one run on a loaded machine):
//!
//! ```text
//! client           tried (outage)  sent (outage)  sent after open  half admitted   fully admitted  refused after
//! tower-sre                   999             40               33         3.808s           9.754s            802
//! tower-classic               998             19                9       80.418ms         80.418ms             15
//! reqwest-sre                 999             37               28         3.998s           9.753s            839
//! reqwest-classic             999             19                9       93.621ms         93.621ms             18
//! ```
//!
//! Every wait is bounded: each request by a timeout, each client by its deadline, the test
//! by a timeout of its own; the server is stopped at the end. It takes about 15 s, the SRE
//! clients' recovery.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use ironward::classic::{OpenWait, Record};
use ironward::http_retry::{Settings, Stop};
use ironward::{CLASSIC, Classic, ClassicReason, SRE};
use ironward_reqwest::{ClientBreaker, RetryMiddleware};
use ironward_tokio::BreakerPolicy;
use ironward_tower::{BreakerLayer, BreakerRefused};
use reqwest_middleware::ClientBuilder;
use tokio::sync::oneshot;
use tower::{ServiceBuilder, ServiceExt};

/// How long the server fails every request.
const OUTAGE: Duration = Duration::from_secs(5);
/// The pace of each client: one request, then the next this long after the last began.
const PACE: Duration = Duration::from_millis(5);
/// How long a classic client keeps calling after the healing.
const CLASSIC_AFTER: Duration = Duration::from_secs(3);
/// Slack on the SRE breaker's full recovery: its refusals after the healing count as calls
/// in its window and age out after the outage's failures (about a second later, in runs
/// on a loaded machine), and a stalled client reads it late.
const SRE_SLACK: Duration = Duration::from_secs(4);
/// The longest one request may take.
const REQUEST: Duration = Duration::from_secs(2);
/// Slack on every time bound, for a loaded two-core machine (four developers compiling).
const SLACK: Duration = Duration::from_millis(1000);

/// The classic policy under test: a count window of 20 that trips at 10 failures of 10, a
/// short open wait and one probe.
const TEST_CLASSIC: Classic = Classic {
    record: Record::Count { calls: 20 },
    minimum: 10,
    failure_rate: 0.5,
    open: OpenWait::Fixed(Duration::from_millis(500)),
    probes: 1,
    ..CLASSIC
};

/// The open wait of [`TEST_CLASSIC`].
fn open_wait() -> Duration {
    TEST_CLASSIC.open.after(0)
}

/// How long after the healing the SRE breaker's drop fraction must be 0: every failure of
/// the outage weighs against it until it has aged out of the preset's window (10 s), the
/// newest of them perhaps in the bucket after the healing's on the breaker's own clock; and
/// the slack. An SRE client calls until then at the latest (the test's longest stretch),
/// and stops as soon as the fraction is 0.
fn sre_recovery() -> Duration {
    let bucket = SRE.window / SRE.size as u32;
    SRE.window + 2 * bucket + SRE_SLACK
}

/// What one attempt came to at the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The breaker refused it: nothing was sent.
    Refused,
    /// The server answered with this status.
    Status(u16),
    /// It failed in transport, or ran out of time.
    Failed,
}

/// One attempt: when it began and ended, since the server started, what it came to, and
/// the breaker's drop fraction read just after it.
#[derive(Debug, Clone, Copy)]
struct Attempt {
    start: Duration,
    end: Duration,
    outcome: Outcome,
    ratio: f64,
}

/// The server: fails every request that arrives within [`OUTAGE`] of its start, answers the
/// rest, and records each arrival under the client that sent it (the `x-client` header).
struct Server {
    addr: std::net::SocketAddr,
    origin: Instant,
    arrivals: Arc<Mutex<BTreeMap<String, Vec<Duration>>>>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct Shared {
    origin: Instant,
    arrivals: Arc<Mutex<BTreeMap<String, Vec<Duration>>>>,
}

async fn handle(State(shared): State<Shared>, headers: HeaderMap) -> (StatusCode, &'static str) {
    let at = shared.origin.elapsed();
    let client = headers
        .get("x-client")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown")
        .to_owned();
    shared
        .arrivals
        .lock()
        .unwrap()
        .entry(client)
        .or_default()
        .push(at);
    if at < OUTAGE {
        (StatusCode::INTERNAL_SERVER_ERROR, "down")
    } else {
        (StatusCode::OK, "up")
    }
}

impl Server {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let origin = Instant::now();
        let arrivals = Arc::default();
        let shared = Shared {
            origin,
            arrivals: Arc::clone(&arrivals),
        };
        let app = Router::new().fallback(handle).with_state(shared);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            addr,
            origin,
            arrivals,
            stop: Some(stop),
            task,
        }
    }

    /// When each request from `client` arrived, since the server started.
    fn arrivals(&self, client: &str) -> Vec<Duration> {
        self.arrivals
            .lock()
            .unwrap()
            .get(client)
            .cloned()
            .unwrap_or_default()
    }

    /// Stops the server, and waits (a bounded while) for it to finish.
    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let finished = tokio::time::timeout(Duration::from_secs(5), &mut self.task).await;
        if finished.is_err() {
            self.task.abort();
        }
    }
}

/// How long a client calls.
#[derive(Clone, Copy)]
enum Until {
    /// Until this long after the server started.
    Deadline(Duration),
    /// Until its breaker's drop fraction is 0 after the healing, or at the latest this long
    /// after the server started.
    Clear(Duration),
}

/// Calls `send` at [`PACE`] until `until` says to stop, each call bounded by [`REQUEST`];
/// `ratio` reads the breaker's drop fraction. Every attempt, in order.
async fn drive<F, Fut>(
    origin: Instant,
    until: Until,
    ratio: impl Fn() -> f64,
    mut send: F,
) -> Vec<Attempt>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Outcome>,
{
    let (deadline, clear) = match until {
        Until::Deadline(deadline) => (deadline, false),
        Until::Clear(deadline) => (deadline, true),
    };
    let mut attempts = Vec::new();
    let mut pace = tokio::time::interval(PACE);
    pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while origin.elapsed() < deadline {
        pace.tick().await;
        let start = origin.elapsed();
        let outcome = tokio::time::timeout(REQUEST, send())
            .await
            .unwrap_or(Outcome::Failed);
        let ratio = ratio();
        attempts.push(Attempt {
            start,
            end: origin.elapsed(),
            outcome,
            ratio,
        });
        if clear && start >= OUTAGE && ratio == 0.0 {
            break;
        }
    }
    attempts
}

/// A tower client: the breaker layer of `policy`'s family around hyper-util's client.
async fn tower_client<P: BreakerPolicy>(
    policy: P,
    server: &Server,
    name: &'static str,
    until: Until,
) -> Vec<Attempt> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let layer = BreakerLayer::new(policy).with_name(name);
    let service = ServiceBuilder::new().layer(layer.clone()).service(client);
    let uri = format!("http://{}/", server.addr);
    drive(
        server.origin,
        until,
        || layer.ratio(),
        || {
            let request = Request::get(&uri)
                .header("x-client", name)
                .body(Full::new(Bytes::new()))
                .unwrap();
            let call = service.clone().oneshot(request);
            async move {
                match call.await {
                    Ok(response) => {
                        let status = response.status().as_u16();
                        // Read to the end, so that the connection goes back to the pool.
                        let _ = response.into_body().collect().await;
                        Outcome::Status(status)
                    }
                    Err(err)
                        if err.is::<BreakerRefused>()
                            || err.is::<BreakerRefused<ClassicReason>>() =>
                    {
                        Outcome::Refused
                    }
                    Err(_) => Outcome::Failed,
                }
            }
        },
    )
    .await
}

/// A reqwest client: the retry middleware, retrying nothing, with the breaker of `policy`'s
/// family.
async fn reqwest_client<P: BreakerPolicy>(
    policy: P,
    server: &Server,
    name: &'static str,
    until: Until,
) -> Vec<Attempt> {
    let breaker = ClientBreaker::new(policy).with_name(name);
    let middleware = RetryMiddleware::new(Settings {
        max_retries: 0,
        ..Settings::default()
    })
    .with_breaker(breaker.clone())
    .with_name(name);
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let url = format!("http://{}/", server.addr);
    drive(
        server.origin,
        until,
        || breaker.ratio(),
        || {
            let call = client.get(&url).header("x-client", name).send();
            async move {
                match call.await {
                    Ok(response) => {
                        let status = response.status().as_u16();
                        let _ = response.bytes().await;
                        Outcome::Status(status)
                    }
                    Err(err) => match ironward_reqwest::gave_up(&err).map(|g| g.stop()) {
                        Some(Stop::Refused) => Outcome::Refused,
                        _ => Outcome::Failed,
                    },
                }
            }
        },
    )
    .await
}

/// What one client did, as the server and the client saw it.
#[derive(Debug)]
struct Figures {
    /// Requests the client tried during the outage, and of those, how many reached the server.
    tried_in_outage: usize,
    sent_in_outage: usize,
    /// Of those sent, the ones after the breaker first refused: for a classic breaker, its
    /// probes.
    sent_after_first_refusal: usize,
    /// From the healing until the breaker lets every request through: for a classic
    /// breaker, the end of the probe that closed it; for an SRE breaker, when its drop
    /// fraction was first read 0.
    recovered: Option<Duration>,
    /// From the healing until the drop fraction was first read at a half or less.
    half: Option<Duration>,
    /// Refusals after the healing.
    refused_after: usize,
}

/// Which family a client runs: how its recovery is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Sre,
    Classic,
}

fn figures(family: Family, attempts: &[Attempt], arrivals: &[Duration]) -> Figures {
    let in_outage = attempts.iter().filter(|a| a.start < OUTAGE).count();
    let first_refusal = attempts
        .iter()
        .find(|a| a.outcome == Outcome::Refused)
        .map(|a| a.start);
    let sent_in_outage = arrivals.iter().filter(|&&at| at < OUTAGE).count();
    let sent_after_first_refusal = first_refusal.map_or(0, |first| {
        arrivals
            .iter()
            .filter(|&&at| at > first && at < OUTAGE)
            .count()
    });
    // The first attempt begun after the healing whose drop fraction, read after it, was at
    // most `most`.
    let read_at = |most: f64| {
        attempts
            .iter()
            .find(|a| a.start >= OUTAGE && a.ratio <= most)
            .map(|a| a.end - OUTAGE)
    };
    let recovered = match family {
        Family::Sre => read_at(0.0),
        // The probe that closed it: the first success begun after the healing that no
        // refusal follows.
        Family::Classic => {
            let after = attempts
                .iter()
                .rposition(|a| a.outcome == Outcome::Refused)
                .map_or(0, |i| i + 1);
            attempts[after..]
                .iter()
                .find(|a| a.outcome == Outcome::Status(200) && a.start >= OUTAGE)
                .map(|a| a.end - OUTAGE)
        }
    };
    let refused_after = attempts
        .iter()
        .filter(|a| a.start >= OUTAGE && a.outcome == Outcome::Refused)
        .count();
    Figures {
        tried_in_outage: in_outage,
        sent_in_outage,
        sent_after_first_refusal,
        recovered,
        half: read_at(0.5),
        refused_after,
    }
}

/// The classic breaker's promises, for the client `name`.
fn assert_classic(name: &str, attempts: &[Attempt], arrivals: &[Duration], seen: &Figures) {
    let summary = format!("{name}: {seen:?}");
    // Every request that reached the server was one the client let through.
    let admitted = attempts
        .iter()
        .filter(|a| matches!(a.outcome, Outcome::Status(_)))
        .count();
    assert_eq!(arrivals.len(), admitted, "{summary}");
    assert!(
        !attempts.iter().any(|a| a.outcome == Outcome::Failed),
        "{summary}"
    );
    // Ten failures trip it (the window's minimum, all failed); then only probes reach the
    // server, at most one per open wait of the outage, and at least one.
    let trips = TEST_CLASSIC.minimum as usize;
    let first_refusal = attempts
        .iter()
        .position(|a| a.outcome == Outcome::Refused)
        .expect("the breaker opened");
    assert_eq!(first_refusal, trips, "{summary}");
    let most = OUTAGE.as_nanos().div_ceil(open_wait().as_nanos()) as usize;
    assert_eq!(
        seen.sent_in_outage,
        trips + seen.sent_after_first_refusal,
        "{summary}"
    );
    assert!(
        (1..=most).contains(&seen.sent_after_first_refusal),
        "{} probes in the outage, over one per open wait ({most}): {summary}",
        seen.sent_after_first_refusal
    );
    // Closed within an open wait (begun by a probe that failed across the healing) and the
    // round trips of that probe and of the one that passed, with slack.
    let bound = open_wait() + 2 * PACE + SLACK;
    let closed = seen.recovered.expect("closed after the healing");
    assert!(
        closed <= bound,
        "closed {closed:?} after the healing, over {bound:?}: {summary}"
    );
    // Then every request was let through and answered.
    let after_close = attempts
        .iter()
        .filter(|a| a.start >= OUTAGE + closed)
        .collect::<Vec<_>>();
    assert!(!after_close.is_empty(), "{summary}");
    assert!(
        after_close
            .iter()
            .all(|a| a.outcome == Outcome::Status(200)),
        "{summary}"
    );
}

/// The SRE breaker's: it throttled the outage, and admits every request within its window
/// after the healing.
fn assert_sre(name: &str, seen: &Figures) {
    let summary = format!("{name}: {seen:?}");
    assert!(
        seen.sent_in_outage < seen.tried_in_outage / 2,
        "the outage was not throttled: {summary}"
    );
    assert!(seen.sent_in_outage >= 1, "{summary}");
    let bound = sre_recovery();
    let recovered = seen.recovered.expect("full admission after the healing");
    assert!(
        recovered <= bound,
        "full admission {recovered:?} after the healing, over {bound:?}: {summary}"
    );
    // Half of the calls came back well before, within the window, as the successes came.
    let half = seen.half.expect("half admission after the healing");
    assert!(half < recovered && half < SRE.window, "{summary}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_families_through_an_outage_over_real_http() {
    tokio::time::timeout(Duration::from_secs(40), async {
        let server = Server::start().await;
        let classic = Until::Deadline(OUTAGE + CLASSIC_AFTER);
        let sre = Until::Clear(OUTAGE + sre_recovery());
        let (tower_sre, tower_classic, reqwest_sre, reqwest_classic) = tokio::join!(
            tower_client(SRE, &server, "tower-sre", sre),
            tower_client(TEST_CLASSIC, &server, "tower-classic", classic),
            reqwest_client(SRE, &server, "reqwest-sre", sre),
            reqwest_client(TEST_CLASSIC, &server, "reqwest-classic", classic),
        );
        let runs = [
            ("tower-sre", Family::Sre, tower_sre),
            ("tower-classic", Family::Classic, tower_classic),
            ("reqwest-sre", Family::Sre, reqwest_sre),
            ("reqwest-classic", Family::Classic, reqwest_classic),
        ];
        let seen: Vec<_> = runs
            .iter()
            .map(|(name, family, attempts)| figures(*family, attempts, &server.arrivals(name)))
            .collect();

        println!(
            "{:<16} {:>14} {:>14} {:>16} {:>14} {:>16} {:>14}",
            "client",
            "tried (outage)",
            "sent (outage)",
            "sent after open",
            "half admitted",
            "fully admitted",
            "refused after"
        );
        let after =
            |d: Option<Duration>| d.map_or_else(|| "never".to_owned(), |d| format!("{d:.3?}"));
        for ((name, _, _), f) in runs.iter().zip(&seen) {
            println!(
                "{name:<16} {:>14} {:>14} {:>16} {:>14} {:>16} {:>14}",
                f.tried_in_outage,
                f.sent_in_outage,
                f.sent_after_first_refusal,
                after(f.half),
                after(f.recovered),
                f.refused_after,
            );
        }

        for ((name, family, attempts), figures) in runs.iter().zip(&seen) {
            match family {
                Family::Classic => {
                    assert_classic(name, attempts, &server.arrivals(name), figures);
                }
                Family::Sre => assert_sre(name, figures),
            }
        }
        server.stop().await;
    })
    .await
    .expect("the test ends within its bound");
}
