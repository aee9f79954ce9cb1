//! A real redis-server killed under load for 3 s and started again, in front of a
//! bb8-redis pool of 4 with the ward: the connects the ward let through during the outage
//! stay within the bucket, the ward's refusals reach the pool's error sink, and the pool
//! serves on all 4 connections again after the restart. Real time, every wait bounded.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bb8::ErrorSink;
use ironward::RECONNECT;
use ironward_pool::{WardError, Warded};

use common::server::Server;

const SIZE: u32 = 4;
const OUTAGE: Duration = Duration::from_secs(3);

/// Counts what bb8 hands its error sink: the ward's refusals, and the backend's errors.
#[derive(Debug, Clone, Default)]
struct Sink {
    refused: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
}

impl ErrorSink<WardError<redis::RedisError>> for Sink {
    fn sink(&self, error: WardError<redis::RedisError>) {
        let counter = if error.is_refused() {
            &self.refused
        } else {
            &self.failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn boxed_clone(&self) -> Box<dyn ErrorSink<WardError<redis::RedisError>>> {
        Box::new(self.clone())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warded_bb8_pool_spaces_its_reconnects_and_serves_again() {
    let mut server = Server::start().expect("a redis-server");
    let manager = bb8_redis::RedisConnectionManager::new(server.url()).unwrap();
    let warded = Warded::new(manager);
    let handle = warded.handle();
    let sink = Sink::default();
    let pool = bb8::Pool::builder()
        .max_size(SIZE)
        .connection_timeout(Duration::from_millis(500))
        .error_sink(Box::new(sink.clone()))
        .build(warded)
        .await
        .expect("a pool");
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..SIZE {
        let (pool, stop, served) = (pool.clone(), Arc::clone(&stop), Arc::clone(&served));
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(mut connection) = pool.get().await {
                    let incr = redis::cmd("INCR")
                        .arg("drill")
                        .query_async::<i64>(&mut *connection)
                        .await;
                    if incr.is_ok() {
                        served.fetch_add(1, Ordering::Relaxed);
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }));
    }
    let full = tokio::time::timeout(Duration::from_secs(10), async {
        while pool.state().connections < SIZE {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(full.is_ok(), "the pool never filled: {:?}", pool.state());

    let before = handle.counts();
    server.kill();
    tokio::time::sleep(OUTAGE).await;
    let during = handle.counts();
    server
        .restart()
        .expect("redis-server starts again on its port");

    // Serving again: a command through each of the 4 connections held at once.
    let served_at_restart = served.load(Ordering::Relaxed);
    let back = tokio::time::timeout(Duration::from_secs(20), async {
        while served.load(Ordering::Relaxed) < served_at_restart + 100 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stop.store(true, Ordering::Relaxed);
        for task in tasks {
            let _ = task.await;
        }
        let mut held = Vec::new();
        while held.len() < SIZE as usize {
            if let Ok(connection) = pool.get().await {
                held.push(connection);
            }
        }
        for connection in &mut held {
            let pong = redis::cmd("PING")
                .query_async::<String>(&mut **connection)
                .await;
            assert_eq!(pong.as_deref().ok(), Some("PONG"));
        }
    })
    .await;
    stop.store(true, Ordering::Relaxed);

    let attempts = during.attempts - before.attempts;
    let bound = RECONNECT.burst + RECONNECT.rate * OUTAGE.as_secs_f64();
    let report = format!(
        "{attempts} connects during the outage (bound {bound}), {} refusals and {} backend \
         errors in the error sink; counts {:?}",
        sink.refused.load(Ordering::Relaxed),
        sink.failed.load(Ordering::Relaxed),
        handle.counts(),
    );
    println!("{report}");
    assert!(
        back.is_ok(),
        "the pool did not serve on all {SIZE} connections again: {report}"
    );
    assert!(attempts as f64 <= bound, "{report}");
    assert!(attempts >= 1, "the ward let no connect through: {report}");
    assert!(sink.refused.load(Ordering::Relaxed) > 0, "{report}");
    // bb8 also sinks the failed validity check of each of the 4 connections the kill broke.
    assert!(
        sink.failed.load(Ordering::Relaxed) <= during.failed - before.failed + u64::from(SIZE),
        "every other backend error in the sink is a connect the ward let through: {report}"
    );
}
