//! The open-loop generator: requests leave on a schedule, not when the one before returns.
//!
//! A closed loop (send, await, send) slows down as the server does, and so offers less load
//! exactly when the server is slowest: its latencies hide the queueing they cause. Here each
//! client's `n`-th request is due at `start + stagger + n / offered`; the client sends every
//! request that is due, then sleeps until the next one is (tokio's timer wakes it on its next
//! millisecond, and whatever fell due meanwhile leaves at once, so the rate holds on average
//! and the sends come in millisecond batches). Each request runs in a task of its own over
//! hyper-util's pooled client, which keeps its connections alive and opens another whenever
//! every one is busy, so a slow response never holds back the next send.
//!
//! A request's latency runs from the moment its task starts (the pool checkout, the write, the
//! server, the response and its body read to the end) to the end of its body; how late the
//! task started against its due time is kept apart as its lag, which says whether the
//! generator kept its schedule.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::body::Bytes;
use http::{Request, Uri};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// Requests the warm-up sends, one after another, before the clock starts.
pub(crate) const WARM_UP: usize = 200;

/// The longest a request may take before it counts as failed, so a stuck run still ends.
const TIMEOUT: Duration = Duration::from_secs(5);

/// How long after the plan is read the first request is due: room to make every client.
const LEAD: Duration = Duration::from_millis(20);

/// A run: where, from which addresses, how often, how long.
pub(crate) struct Plan<'a> {
    /// The server.
    pub(crate) target: SocketAddr,
    /// One client per address, each its own peer to the server.
    pub(crate) sources: &'a [IpAddr],
    /// The warm-up's address: a peer of its own, so that it spends no client's quota.
    pub(crate) warm_up_from: IpAddr,
    /// Requests a second, each client.
    pub(crate) offered: f64,
    /// How long requests fall due.
    pub(crate) run: Duration,
}

/// What became of one request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outcome {
    /// When its task started, from the start of the run.
    pub(crate) sent: Duration,
    /// How long after its due time its task started.
    pub(crate) lag: Duration,
    /// From its task's start to the end of the response's body.
    pub(crate) latency: Duration,
    /// The response's status code, `None` if the request failed or timed out.
    pub(crate) status: Option<u16>,
}

/// A pooled keep-alive client whose connections leave from `from`.
fn client(from: IpAddr) -> Client<HttpConnector, Empty<Bytes>> {
    let mut connector = HttpConnector::new();
    connector.set_local_address(Some(from));
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new()).build(connector)
}

/// One request, its body read to the end: its status, `None` on an error or a timeout.
async fn send(client: &Client<HttpConnector, Empty<Bytes>>, uri: Uri) -> Option<u16> {
    let request = Request::get(uri)
        .body(Empty::new())
        .expect("a GET of a parsed URI");
    let exchange = async {
        let response = client.request(request).await.ok()?;
        let status = response.status().as_u16();
        response.into_body().collect().await.ok()?;
        Some(status)
    };
    tokio::time::timeout(TIMEOUT, exchange).await.ok().flatten()
}

/// Warms the server and this side's code up from the warm-up's address, then runs `plan`:
/// every request each client sent, in no particular order.
pub(crate) async fn run(plan: &Plan<'_>) -> Vec<Outcome> {
    let uri: Uri = format!("http://{}/", plan.target)
        .parse()
        .expect("a loopback URI");
    let warm_up = client(plan.warm_up_from);
    for _ in 0..WARM_UP {
        send(&warm_up, uri.clone()).await;
    }
    let interval = Duration::from_secs_f64(1.0 / plan.offered);
    let start = Instant::now() + LEAD;
    let end = start + plan.run;
    let mut clients = JoinSet::new();
    for (i, &from) in plan.sources.iter().enumerate() {
        // Spread the clients over one interval rather than send all of them at once.
        let first = start + interval.mul_f64(i as f64 / plan.sources.len() as f64);
        let schedule = Schedule {
            start,
            first,
            interval,
            end,
        };
        clients.spawn(offer(client(from), uri.clone(), schedule));
    }
    let mut outcomes = Vec::new();
    while let Some(sent) = clients.join_next().await {
        outcomes.extend(sent.expect("a client's task"));
    }
    outcomes
}

/// One client's due times: `first + n · interval` for every one before `end`.
#[derive(Clone, Copy)]
struct Schedule {
    /// The run's start, which every [`Outcome::sent`] is measured from.
    start: Instant,
    first: Instant,
    interval: Duration,
    end: Instant,
}

/// A client's requests, one at each due time of `schedule`, each in a task of its own; what
/// became of each.
async fn offer(
    client: Client<HttpConnector, Empty<Bytes>>,
    uri: Uri,
    schedule: Schedule,
) -> Vec<Outcome> {
    let mut requests = JoinSet::new();
    for n in 0u32.. {
        let due = schedule.first + schedule.interval * n;
        if due >= schedule.end {
            break;
        }
        if due > Instant::now() {
            tokio::time::sleep_until(due).await;
        }
        let (client, uri) = (client.clone(), uri.clone());
        requests.spawn(async move {
            let begun = Instant::now();
            let status = send(&client, uri).await;
            Outcome {
                sent: begun - schedule.start,
                lag: begun - due,
                latency: begun.elapsed(),
                status,
            }
        });
    }
    requests.join_all().await
}
