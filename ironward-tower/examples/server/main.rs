//! An axum server protected by the stack `ironward.toml` (beside this file) describes,
//! reloaded live when the file changes, a client-side breaker in front of the backend it
//! calls, its metrics at `/metrics` in the Prometheus text format and the configuration in
//! force at `/config`.
//!
//! ```sh
//! cargo run -p ironward-tower --features config,metrics --example server          # serves on :3000
//! cargo run -p ironward-tower --features config,metrics --example server -- --smoke
//! ```
//!
//! With `--smoke` the server binds a free port, sends itself requests of each kind, prints
//! what came back, reloads a lower gate, and ends by fetching `/config` and `/metrics` and
//! printing them; `scripts/test` runs it so.

mod app;

use std::net::SocketAddr;
use std::time::Duration;

use axum::http::StatusCode;
use ironward_tower::config::Protection;
use tower::BoxError;

/// The file the server's protection is read from, and watched.
const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/server/ironward.toml");

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let smoke = std::env::args().any(|arg| arg == "--smoke");
    // The recorder first: the layers register their counters with it as they are built.
    let metrics = app::install_metrics();
    // The stack the file describes; its shedder reads go-zero's CPU reading of this
    // container's cgroup against its quota (the whole host's, outside a container).
    let protection = Protection::from_file(CONFIG)?;
    // Read again every second; a change is applied live, or refused and logged.
    let _watch = protection.watch(CONFIG, Duration::from_secs(1));
    let (app, _) = app::app(&protection, metrics, Duration::from_secs(5));

    let port = if smoke { 0 } else { 3000 };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    if !smoke {
        println!("serving on http://{addr}; try:");
        println!(
            "  curl -i http://{addr}/hello                       # 200, with RateLimit fields"
        );
        println!(
            "  for i in $(seq 25); do curl -s -o /dev/null -w '%{{http_code}} ' http://{addr}/hello; done"
        );
        println!(
            "                                                     # 200 × 20, then 429 with Retry-After"
        );
        println!("  curl -i http://{addr}/slow                        # 504 after 1 s");
        println!(
            "  curl -X POST http://{addr}/backend/down; curl -i http://{addr}/upstream  # repeat: 502s, then 503s"
        );
        println!(
            "  curl -H 'accept: application/problem+json' http://{addr}/upstream  # which piece refused, as JSON"
        );
        println!(
            "  curl http://{addr}/config                         # the configuration in force"
        );
        println!("  curl http://{addr}/metrics                        # every decision, counted");
        println!("edit {CONFIG} and the next requests follow it");
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
    println!("/slow: {slow} (the route's 1 s deadline cut a 5 s handler)");
    client.post(url("/backend/down")).send().await?;
    let mut refused = 0;
    let mut last = String::new();
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let response = client
            .get(url("/upstream"))
            .header("accept", "application/problem+json")
            .send()
            .await?;
        if response.status() == StatusCode::SERVICE_UNAVAILABLE {
            refused += 1;
            last = response.text().await?;
        }
    }
    println!("/upstream ×30 with the backend down: the breaker refused {refused}; the last said");
    println!("  {last}");
    // A reload: the same file with a lower gate, applied live; one that removes a piece is
    // refused, and the gate of 64 stays.
    let text = std::fs::read_to_string(CONFIG)?.replace("gate = 256", "gate = 64");
    protection.reload_str(&text)?;
    let kept = protection.reload_str("[server]\ngate = 64\n").is_err();
    let config = client.get(url("/config")).send().await?.text().await?;
    println!("/config after a reload (and one refused: {kept}):\n{config}");
    let scrape = client.get(url("/metrics")).send().await?.text().await?;
    println!("/metrics:\n{scrape}");
    server.abort();
    let counted = scrape.contains(r#"outcome="refused""#);
    let reloaded =
        kept && config.contains("gate = 64") && scrape.contains("ironward_config_reloads");
    if limited == 0 || slow != StatusCode::GATEWAY_TIMEOUT || refused == 0 || !counted || !reloaded
    {
        return Err("the smoke run did not see each layer act".into());
    }
    Ok(())
}
