//! An axum server with every ironward layer in front of it, and a client-side breaker in
//! front of the backend it calls.
//!
//! ```sh
//! cargo run -p ironward-tower --features axum --example server          # serves on :3000
//! cargo run -p ironward-tower --features axum --example server -- --smoke
//! ```
//!
//! With `--smoke` the server binds a free port, sends itself one request of each kind, prints
//! what came back and exits; `scripts/test` runs it so.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Extension, Router};
use ironward::{SHED, SRE};
use ironward_tower::{
    AnyError, BreakerLayer, BreakerRefused, BreakerService, Cpu, CpuSampler, DeadlineLayer,
    GateLayer, Limit, RateLimitLayer, RequestDeadline, ShedLayer,
};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceBuilder, ServiceExt, service_fn};

/// The backend the `/upstream` route calls, behind a client-side SRE breaker.
type Backend = BreakerService<BoxCloneSyncService<(), &'static str, BoxError>, AnyError>;

#[derive(Clone)]
struct App {
    backend: Backend,
    down: Arc<AtomicBool>,
}

/// Builds the application: four server layers around every route, and a breaker around the
/// backend.
fn app() -> Router {
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
        .layer(backend);

    // One CPU sampler can feed any number of shedders: go-zero's reading of this container's
    // cgroup against its quota (the whole host's, outside a container), every 250 ms.
    let cpu = CpuSampler::new();
    let server = ServiceBuilder::new()
        // Each typed refusal becomes its conventional response: 503, 429 or 504.
        .layer(HandleErrorLayer::new(ironward_tower::axum::handle_error))
        // Shed load only while the CPU is hot and more is in flight than the server can carry.
        .layer(ShedLayer::new(SHED, Cpu::from(&cpu)))
        // Ten requests a second per client address, in bursts of up to twenty.
        .layer(RateLimitLayer::by_peer(Limit::bucket(10.0, 20.0), 10_000))
        // At most 256 requests at once; the 257th is answered at once, never queued.
        .layer(GateLayer::new(256))
        // Two seconds per request; a handler sees what is left in its extensions.
        .layer(DeadlineLayer::new(Duration::from_secs(2)));

    Router::new()
        .route("/hello", get(|| async { "hello\n" }))
        .route("/slow", get(slow))
        .route("/upstream", get(upstream))
        .route("/backend/down", post(set_down))
        .route("/backend/up", post(set_up))
        .layer(server)
        .with_state(App { backend, down })
}

/// Takes longer than the deadline allows, so the client sees 504.
async fn slow(Extension(deadline): Extension<RequestDeadline>) -> String {
    let left = deadline.remaining().unwrap_or(Duration::MAX);
    tokio::time::sleep(Duration::from_secs(5)).await;
    format!("finished with {left:?} to spare\n")
}

/// Calls the backend through the breaker: a backend that keeps failing is refused at once.
async fn upstream(State(app): State<App>) -> (StatusCode, String) {
    let mut backend = app.backend.clone();
    let result = match backend.ready().await {
        Ok(ready) => ready.call(()).await,
        Err(err) => Err(err),
    };
    match result {
        Ok(body) => (StatusCode::OK, format!("{body}\n")),
        Err(err) => {
            let status = ironward_tower::http::status_for(&*err).unwrap_or(StatusCode::BAD_GATEWAY);
            if err.is::<BreakerRefused>() {
                // A refusal's one line says why: the drop fraction and the window behind it.
                (status, format!("{err}\n"))
            } else {
                (
                    status,
                    format!("{err} (breaker ratio {:.3})\n", backend.ratio()),
                )
            }
        }
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

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let smoke = std::env::args().any(|arg| arg == "--smoke");
    let port = if smoke { 0 } else { 3000 };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(async move {
        axum::serve(
            listener,
            app().into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    if !smoke {
        println!("serving on http://{addr}; try:");
        println!("  curl -i http://{addr}/hello                       # 200");
        println!(
            "  for i in $(seq 25); do curl -s -o /dev/null -w '%{{http_code}} ' http://{addr}/hello; done"
        );
        println!(
            "                                                     # 200 × 20, then 429 with Retry-After"
        );
        println!("  curl -i http://{addr}/slow                        # 504 after 2 s");
        println!(
            "  curl -X POST http://{addr}/backend/down; curl -i http://{addr}/upstream  # repeat: 502s, then 503s"
        );
        return Ok(server.await??);
    }

    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()?;
    let url = |path: &str| format!("http://{addr}{path}");
    let mut statuses = Vec::new();
    for _ in 0..22 {
        statuses.push(client.get(url("/hello")).send().await?.status().as_u16());
    }
    let limited = statuses.iter().filter(|&&s| s == 429).count();
    println!(
        "/hello ×22: {} answered 200, {limited} answered 429",
        22 - limited
    );
    // Let the bucket refill before the other routes draw on it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let slow = client.get(url("/slow")).send().await?.status();
    println!("/slow: {slow} (the 2 s deadline cut a 5 s handler)");
    client.post(url("/backend/down")).send().await?;
    let mut refused = 0;
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if client.get(url("/upstream")).send().await?.status() == StatusCode::SERVICE_UNAVAILABLE {
            refused += 1;
        }
    }
    println!("/upstream ×30 with the backend down: the breaker refused {refused}");
    server.abort();
    if limited == 0 || slow != StatusCode::GATEWAY_TIMEOUT || refused == 0 {
        return Err("the smoke run did not see each layer act".into());
    }
    Ok(())
}
