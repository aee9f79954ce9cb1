//! The example server's application: the server layers as one `ProtectLayer` around its routes, a client-side
//! breaker around the backend one route calls, and `/metrics` beside them.
//!
//! `main.rs` runs it with the real CPU sampler and the defaults below; the end-to-end metrics
//! test (`tests/scrape.rs`) builds the same app with a CPU it sets by hand and smaller limits,
//! so that it can make each layer refuse and check the scraped counters against what it saw.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use ironward::{SHED, SRE, Shed};
use ironward_tower::http::{Format, Problem};
use ironward_tower::{
    AnyError, BreakerLayer, BreakerService, ClientAddr, Cpu, DeadlineLayer, GateLayer,
    ProtectLayer, Quota, QuotaLayer, RequestDeadline, ShedLayer,
};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

/// What the app is built from: the CPU reading its shedder sees, and each layer's policy.
pub(crate) struct Config {
    /// The CPU reading the shedder decides on.
    pub(crate) cpu: Cpu,
    /// The shedder's policy.
    pub(crate) shed: Shed,
    /// The rate limit each client address gets.
    pub(crate) rate: Quota,
    /// How the client's address is read: the TCP peer, or behind how many proxies.
    pub(crate) client: ClientAddr,
    /// The most requests in flight at once.
    pub(crate) gate: u32,
    /// Each request's time budget.
    pub(crate) deadline: Duration,
    /// How long `/slow` takes: longer than the deadline, so that it is cut.
    pub(crate) slow: Duration,
}

impl Config {
    /// The example's defaults, reading `cpu`: go-zero's shedder, ten requests a second per
    /// client address in bursts of twenty, 256 at once, two seconds each.
    pub(crate) fn new(cpu: Cpu) -> Self {
        Self {
            cpu,
            shed: SHED,
            rate: Quota::bucket(10.0, 20.0),
            client: ClientAddr::DIRECT,
            gate: 256,
            deadline: Duration::from_secs(2),
            slow: Duration::from_secs(5),
        }
    }
}

/// Handles on the app's layers, for a caller that wants to watch them (the test does).
#[derive(Clone, Debug)]
pub(crate) struct Layers {
    /// The shedder in front of every route.
    pub(crate) shed: ShedLayer,
    /// The gate in front of every route.
    pub(crate) gate: GateLayer,
}

/// The backend the `/upstream` route calls, behind a client-side SRE breaker.
type Backend = BreakerService<BoxCloneSyncService<(), &'static str, BoxError>, AnyError>;

#[derive(Clone)]
struct App {
    backend: Backend,
    down: Arc<AtomicBool>,
    slow: Duration,
}

/// Installs the process's Prometheus recorder, which every layer built after it reports to,
/// and returns the handle that renders what it holds.
///
/// The layers register their counters when they are built, so this comes first.
pub(crate) fn install_metrics() -> PrometheusHandle {
    PrometheusBuilder::new()
        .install_recorder()
        .expect("the first recorder of the process")
}

/// Builds the application: four server layers around every route, a breaker around the
/// backend, and `/metrics` outside the layers, so that a scrape is never shed or limited.
pub(crate) fn app(config: Config, metrics: PrometheusHandle) -> (Router, Layers) {
    let down = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&down);
    let backend = BoxCloneSyncService::new(service_fn(move |()| {
        let down = flag.load(Ordering::Relaxed);
        async move {
            if down {
                Err(BoxError::from("backend failed"))
            } else {
                Ok("backend answered")
            }
        }
    }));
    let backend = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_name("backend")
        .layer(backend);

    let layers = Layers {
        shed: ShedLayer::new(config.shed, config.cpu),
        gate: GateLayer::new(config.gate),
    };
    // One layer, in the order `ironward_tower::protect` gives; each refusal is answered with
    // its response: 503, 429 or 504, with a body naming the piece that refused (problem
    // details for a client that prefers JSON).
    let server = ProtectLayer::new()
        // Shed load only while the CPU is hot and more is in flight than the server can carry.
        .shed(layers.shed.clone())
        // A budget per client address, told on every response how much of it is left.
        .quota(
            QuotaLayer::by_client(config.rate, 10_000, config.client)
                .with_name("client")
                .with_headers(true),
        )
        // At most so many requests at once; one more is answered at once, never queued.
        .gate(layers.gate.clone())
        // A time budget per request; a handler sees what is left in its extensions.
        .deadline(DeadlineLayer::new(config.deadline));

    let router = Router::new()
        .route("/hello", get(|| async { "hello\n" }))
        .route("/slow", get(slow))
        .route("/upstream", get(upstream))
        .route("/backend/down", post(set_down))
        .route("/backend/up", post(set_up))
        .layer(server)
        .route("/metrics", get(move || async move { metrics.render() }))
        .with_state(App {
            backend,
            down,
            slow: config.slow,
        });
    (router, layers)
}

/// Takes longer than the deadline allows, so the client sees 504.
async fn slow(State(app): State<App>, Extension(deadline): Extension<RequestDeadline>) -> String {
    let left = deadline.remaining().unwrap_or(Duration::MAX);
    tokio::time::sleep(app.slow).await;
    format!("finished with {left:?} to spare\n")
}

/// Calls the backend through the breaker: a backend that keeps failing is refused at once,
/// and the refusal says so, in the format the client asked for.
async fn upstream(State(app): State<App>, headers: HeaderMap) -> Response {
    let mut backend = app.backend.clone();
    let result = match backend.ready().await {
        Ok(ready) => ready.call(()).await,
        Err(err) => Err(err),
    };
    match result {
        Ok(body) => format!("{body}\n").into_response(),
        Err(err) => match Problem::from_error(&*err) {
            // The breaker's refusal names the piece and the window behind its decision.
            Some(problem) => problem.into_response(Format::from_accept(&headers)),
            None => (StatusCode::BAD_GATEWAY, format!("{err}\n")).into_response(),
        },
    }
}

async fn set_down(State(app): State<App>) -> &'static str {
    app.down.store(true, Ordering::Relaxed);
    "the backend now fails every call\n"
}

async fn set_up(State(app): State<App>) -> &'static str {
    app.down.store(false, Ordering::Relaxed);
    "the backend is healthy again\n"
}
