//! The example server's application: its routes behind the one layer of a
//! [`Protection`] built from `ironward.toml`, a client-side breaker around the backend one
//! route calls, and `/metrics` and `/config` beside them.
//!
//! `main.rs` runs it on the file beside it, reloaded as it changes; the end-to-end metrics
//! test (`tests/scrape.rs`) builds the same app from a configuration of its own (smaller
//! limits, and a CPU it sets by hand), so that it can make each piece refuse and check the
//! scraped counters against what it saw.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use ironward::SRE;
use ironward_tower::config::Protection;
use ironward_tower::http::{Format, Problem};
use ironward_tower::{AnyError, BreakerLayer, BreakerService, RequestDeadline};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

/// The requests inside `/slow`'s handler now: past every piece that could refuse them, for a
/// caller that waits for them to be in flight (the test does).
#[derive(Clone, Debug, Default)]
pub(crate) struct Probe(Arc<AtomicUsize>);

impl Probe {
    #[allow(dead_code, reason = "the test waits on it; the server itself does not")]
    pub(crate) fn slow(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// The backend the `/upstream` route calls, behind a client-side SRE breaker.
type Backend = BreakerService<BoxCloneSyncService<(), &'static str, BoxError>, AnyError>;

#[derive(Clone)]
struct App {
    backend: Backend,
    down: Arc<AtomicBool>,
    slow: Duration,
    probe: Probe,
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

/// Builds the application: every route behind `protection`'s one layer (each refusal
/// answered with its response: 503, 429 or 504, with a body naming the piece that refused,
/// as problem details for a client that prefers JSON), a breaker around the backend, and
/// `/metrics` and `/config` outside the layer, so that neither is ever shed or limited.
/// `/slow` takes `slow`.
pub(crate) fn app(
    protection: &Protection,
    metrics: PrometheusHandle,
    slow: Duration,
) -> (Router, Probe) {
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
    let probe = Probe::default();
    let config = protection.clone();

    let router = Router::new()
        .route("/hello", get(|| async { "hello\n" }))
        .route("/slow", get(slow_handler))
        .route("/upstream", get(upstream))
        .route("/backend/down", post(set_down))
        .route("/backend/up", post(set_up))
        // One layer for every route above, each running its own stack from the file.
        .layer(protection.layer())
        .route("/metrics", get(move || async move { metrics.render() }))
        // The configuration in force, as TOML: what the last reload left.
        .route(
            "/config",
            get(move || async move { config.current().to_toml() }),
        )
        .with_state(App {
            backend,
            down,
            slow,
            probe: probe.clone(),
        });
    (router, probe)
}

/// Takes longer than the deadline allows, so the client sees 504.
async fn slow_handler(
    State(app): State<App>,
    Extension(deadline): Extension<RequestDeadline>,
) -> String {
    let left = deadline.remaining().unwrap_or(Duration::MAX);
    app.probe.0.fetch_add(1, Ordering::SeqCst);
    // Counted out however the call ends: answered, or dropped when its deadline cuts it.
    let _inside = Inside(&app.probe);
    tokio::time::sleep(app.slow).await;
    format!("finished with {left:?} to spare\n")
}

/// Takes a request out of the probe's count as it leaves the handler.
struct Inside<'a>(&'a Probe);

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::SeqCst);
    }
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
