//! A reqwest client with the retry middleware, against a flaky server it starts itself on a
//! free 127.0.0.1 port.
//!
//! ```sh
//! cargo run -p ironward-reqwest --example client
//! ```
//!
//! The server answers `/flaky` with 503, then 429 asking for one second, then 200, `/orders`
//! with 503 every time, and never answers `/stuck`; the client prints what each call came back
//! with and why it stopped. The client has no timeout of its own: the middleware's attempt
//! timeout and time budget bound every call. It takes about two and a half seconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use ironward::http_retry::Settings;
use ironward_reqwest::{Retried, RetryMiddleware};
use reqwest_middleware::ClientBuilder;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let calls = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route(
            "/flaky",
            get(move || {
                let n = calls.fetch_add(1, Ordering::Relaxed);
                async move {
                    match n {
                        0 => StatusCode::SERVICE_UNAVAILABLE.into_response(),
                        1 => (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "1")])
                            .into_response(),
                        _ => (StatusCode::OK, "report").into_response(),
                    }
                }
            }),
        )
        .route(
            "/orders",
            post(|| async { StatusCode::SERVICE_UNAVAILABLE }),
        )
        .route("/stuck", get(std::future::pending::<StatusCode>));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });

    let settings = Settings {
        base_delay: Duration::from_millis(50),
        total_budget: Duration::from_secs(10),
        request_reserve: Duration::from_millis(500),
        ..Settings::default()
    };
    // No timeout on reqwest's side: each attempt is bounded by the middleware.
    let retry = RetryMiddleware::new(settings).with_attempt_timeout(Duration::from_secs(2));
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(retry)
        .build();

    for (method, path) in [("GET", "/flaky"), ("POST", "/orders")] {
        let url = format!("http://{addr}{path}");
        let request = match method {
            "GET" => client.get(url),
            _ => client.post(url).body("one order"),
        };
        let response = request.send().await?;
        let retried = *response.extensions().get::<Retried>().ok_or("no record")?;
        let stop = retried.stop.map_or("none".to_owned(), |s| s.to_string());
        println!(
            "{method} {path}: {} after {} attempt(s), {:?} waiting; stopped: {stop}",
            response.status(),
            retried.attempts,
            retried.waited,
        );
    }

    // Nothing listens on a port just released: every attempt is refused and retried, then the
    // middleware gives up with the last connect error inside.
    let free = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let err = client
        .get(format!("http://{free}/"))
        .send()
        .await
        .expect_err("nothing listens there");
    let gave_up = ironward_reqwest::gave_up(&err).ok_or("not the middleware's error")?;
    println!(
        "GET {free}: {gave_up} (connect error: {})",
        gave_up
            .error_as::<reqwest_middleware::Error>()
            .is_some_and(|e| e.is_connect())
    );

    // A server that never answers: 300 ms attempts, retried until the 1 s budget cannot hold
    // another (an attempt still running when the budget ran out would be cut short there), so
    // the call ends within its budget.
    let patient = Settings {
        total_budget: Duration::from_secs(1),
        request_reserve: Duration::from_millis(100),
        ..settings
    };
    let retry = RetryMiddleware::new(patient).with_attempt_timeout(Duration::from_millis(300));
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(retry)
        .build();
    let started = std::time::Instant::now();
    let err = client
        .get(format!("http://{addr}/stuck"))
        .send()
        .await
        .expect_err("the server never answers");
    let gave_up = ironward_reqwest::gave_up(&err).ok_or("not the middleware's error")?;
    println!(
        "GET /stuck: {gave_up}, {:?} after the call began",
        started.elapsed()
    );
    Ok(())
}
