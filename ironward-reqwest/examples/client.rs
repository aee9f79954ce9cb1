//! A reqwest client with the retry middleware, against a flaky server it starts itself on a
//! free 127.0.0.1 port.
//!
//! ```sh
//! cargo run -p ironward-reqwest --example client
//! ```
//!
//! The server answers `/flaky` with 503, then 429 asking for one second, then 200, and `/orders`
//! with 503 every time; the client prints what each call came back with and why it stopped.
//! It takes about a second and a half.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use ironward::http_retry::Settings;
use ironward_reqwest::{GaveUp, Retried, RetryMiddleware};
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
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });

    let settings = Settings {
        base_delay: Duration::from_millis(50),
        total_budget: Duration::from_secs(10),
        request_reserve: Duration::from_millis(500),
        ..Settings::default()
    };
    let reqwest = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()?;
    let client = ClientBuilder::new(reqwest)
        .with(RetryMiddleware::new(settings))
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
    let gave_up = GaveUp::find(&err).ok_or("not the middleware's error")?;
    println!(
        "GET {free}: {gave_up} (connect error: {})",
        gave_up.error().is_some_and(|e| e.is_connect())
    );
    Ok(())
}
