//! Decisions per second on loopback, against a `redis-server` of its own: each limiter's
//! `take`, by one client awaiting each answer and by 64 concurrent callers pipelined on
//! the same multiplexed connection, with a bare `INCR` round trip as the floor.
//!
//! ```sh
//! cargo bench -p ironward-redis --bench decisions
//! ```
//!
//! Every decision reads the Unix clock and picks one of 1024 keys round robin, as a server
//! limiting per client would. The runtime is tokio's current-thread one, so a round trip
//! is not lengthened by a hop between worker threads; Redis, single-threaded, is the other
//! core. The numbers are the median of seven rounds: on a shared machine, run it twice.

#[path = "../tests/common/mod.rs"]
mod common;

use std::future::Future;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ironward_redis::{Bucket, Options, Period, Sliding, Source, Store};

/// Decisions in one round of one client.
const SEQUENTIAL: usize = 10_000;
/// Callers in flight at once on the one connection.
const CALLERS: usize = 64;
/// Decisions each caller makes in one pipelined round.
const EACH: usize = 1_000;
const ROUNDS: usize = 7;
const KEYS: usize = 1024;

fn unix_now() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap()
}

/// A decision to measure: the `i`-th call.
type Decide =
    Arc<dyn Fn(usize) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Decisions per second of one client awaiting each answer, and the mean round trip.
async fn one_client(decide: &Decide) -> (f64, Duration) {
    let mut rates = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        for i in 0..SEQUENTIAL {
            decide(i).await;
        }
        rates.push(SEQUENTIAL as f64 / started.elapsed().as_secs_f64());
    }
    let rate = median(rates);
    (rate, Duration::from_secs_f64(1.0 / rate))
}

/// Decisions per second of [`CALLERS`] concurrent callers on one connection.
async fn pipelined(decide: &Decide) -> f64 {
    let mut rates = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let callers: Vec<_> = (0..CALLERS)
            .map(|caller| {
                let decide = Arc::clone(decide);
                tokio::spawn(async move {
                    for i in 0..EACH {
                        decide(caller * EACH + i).await;
                    }
                })
            })
            .collect();
        for caller in callers {
            caller.await.unwrap();
        }
        rates.push((CALLERS * EACH) as f64 / started.elapsed().as_secs_f64());
    }
    median(rates)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn key(i: usize) -> String {
    format!("client-{}", i % KEYS)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = common::Server::start();
    let options = Options {
        timeout: Duration::from_secs(5),
        ..Options::default()
    };
    let store = Store::connect(server.url(), options).await.unwrap();
    store.load().await.unwrap();
    let conn = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();

    let incr: Decide = Arc::new(move |i| {
        let mut conn = conn.clone();
        Box::pin(async move {
            let n: i64 = redis::cmd("INCR")
                .arg(key(i))
                .query_async(&mut conn)
                .await
                .unwrap();
            black_box(n);
        })
    });
    let period = Period::new(&store, "bench-period", 1_000, Duration::from_secs(1));
    let period: Decide = Arc::new(move |i| {
        let period = period.clone();
        Box::pin(async move {
            let answer = period.take(key(i), unix_now()).await.unwrap();
            assert_eq!(black_box(answer).source, Source::Redis);
        })
    });
    let bucket = Bucket::new(&store, "bench-bucket", 1_000.0, 100.0);
    let bucket: Decide = Arc::new(move |i| {
        let bucket = bucket.clone();
        Box::pin(async move {
            let answer = bucket.take(key(i), unix_now(), 1.0).await.unwrap();
            assert_eq!(black_box(answer).source, Source::Redis);
        })
    });
    let sliding = Sliding::new(&store, "bench-sliding", 100, Duration::from_secs(1));
    let sliding: Decide = Arc::new(move |i| {
        let sliding = sliding.clone();
        Box::pin(async move {
            let answer = sliding.take(key(i), unix_now()).await.unwrap();
            assert_eq!(black_box(answer).source, Source::Redis);
        })
    });

    println!(
        "{:<22} {:>16} {:>14} {:>18}",
        "decision", "one client /s", "round trip", "pipelined /s"
    );
    for (name, decide) in [
        ("INCR (floor)", &incr),
        ("Period::take", &period),
        ("Bucket::take", &bucket),
        ("Sliding::take", &sliding),
    ] {
        // Warm up: connections, script cache, keys.
        for i in 0..KEYS {
            decide(i).await;
        }
        let (rate, round_trip) = one_client(decide).await;
        let piped = pipelined(decide).await;
        println!(
            "{name:<22} {rate:>16.0} {:>11.1} µs {piped:>18.0}",
            round_trip.as_secs_f64() * 1e6
        );
    }
    println!("stats: {:?}", store.stats());
}
