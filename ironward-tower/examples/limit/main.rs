//! What the default adaptive limiter does for a new user: an axum handler whose latency grows
//! with the requests in flight (5 ms × the requests in flight, a backend of one core that
//! serves at most 200 a second however many it is given), 500 closed-loop connections, and
//! `LimiterLayer::new(ADAPTIVE)` in front.
//!
//! ```sh
//! cargo run --release -p ironward-tower --features axum --example limit
//! cargo run --release -p ironward-tower --features axum --example limit -- --seconds 3
//! ```
//!
//! By Little's law the best limit is 1 (200 a second × 5 ms): one request in flight keeps
//! the core busy, every other one only waits. Each second prints the limit, the successes and
//! refusals a second and the 99th percentile latency of the successes; the same load then
//! runs without the limiter, where every request is let in and waits its turn (500 in flight,
//! 2.5 s each), and a last line compares the two. A refused connection asks again at once,
//! so the refusals a second count how fast this machine answers 503s, not a backend's work:
//! tens of thousands a second in a release build on 2 cores, a tenth of that in a debug
//! build, whose 503s then take enough of the cores to delay the admitted requests (up to a
//! third fewer successes, a p99 twice as long).
//!
//! `--seconds N` runs each phase for N seconds rather than 20 (`scripts/test` runs 2).

mod load;

use std::time::Duration;

use ironward::ADAPTIVE;
use ironward_tower::LimiterLayer;
use load::{CAPACITY, Second, Server, WORK};

/// The closed-loop connections of each phase.
const CONNECTIONS: usize = 500;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let seconds = match std::env::args().skip_while(|arg| arg != "--seconds").nth(1) {
        Some(n) => n
            .parse()
            .map_err(|_| std::io::Error::other("--seconds takes a count"))?,
        None => 20,
    };
    println!(
        "{CONNECTIONS} connections, {seconds} s a phase; best limit {} (capacity {CAPACITY}/s × {} ms)",
        CAPACITY * WORK.as_secs_f64(),
        WORK.as_millis()
    );

    println!("\nwith LimiterLayer::new(ADAPTIVE):");
    println!(
        "{:>4} {:>6} {:>7} {:>10} {:>9}",
        "s", "limit", "ok/s", "refused/s", "p99 ms"
    );
    let limiter = LimiterLayer::new(ADAPTIVE);
    let server = Server::start(load::app(Some(limiter.clone()))).await?;
    let mut at = 0;
    let limited = load::run(
        server.addr,
        CONNECTIONS,
        seconds,
        || Some(limiter.limit()),
        |s| {
            at += 1;
            println!(
                "{at:>4} {:>6} {:>7} {:>10} {:>9}",
                s.limit.unwrap_or(0),
                s.ok,
                s.refused,
                p99(s)
            );
        },
    )
    .await;
    drop(server);

    println!("\nwithout a limiter:");
    println!("{:>4} {:>7} {:>9}", "s", "ok/s", "p99 ms");
    let server = Server::start(load::app(None)).await?;
    let mut at = 0;
    let open = load::run(
        server.addr,
        CONNECTIONS,
        seconds,
        || None,
        |s| {
            at += 1;
            println!("{at:>4} {:>7} {:>9}", s.ok, p99(s));
        },
    )
    .await;
    drop(server);

    // The second half of each phase, once the limit has had time to settle.
    let (limited, open) = (settled(&limited), settled(&open));
    println!(
        "\nsecond half: with the limiter {:.0} ok/s at p99 {:.0} ms (limit {}..={}); \
         without {:.0} ok/s at p99 {:.0} ms",
        limited.0, limited.1, limited.2, limited.3, open.0, open.1
    );
    Ok(())
}

/// A second's p99 in milliseconds, or `-` when it had no success.
fn p99(second: &Second) -> String {
    second
        .p99
        .map_or_else(|| "-".into(), |p| format!("{:.1}", p.as_secs_f64() * 1e3))
}

/// The second half of `seconds`: successes a second, the worst p99 in ms, and the least and
/// most limit.
fn settled(seconds: &[Second]) -> (f64, f64, u32, u32) {
    let half = &seconds[seconds.len() / 2..];
    let ok = half.iter().map(|s| s.ok).sum::<u64>() as f64 / half.len().max(1) as f64;
    let worst = half
        .iter()
        .filter_map(|s| s.p99)
        .max()
        .unwrap_or(Duration::ZERO);
    let limits = half.iter().filter_map(|s| s.limit);
    let (least, most) = (limits.clone().min().unwrap_or(0), limits.max().unwrap_or(0));
    (ok, worst.as_secs_f64() * 1e3, least, most)
}
