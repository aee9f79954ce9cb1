//! The `tracing` events an operator reads: a refusal is a `DEBUG` event with the numbers
//! that decided it, a failover a `WARN` with the error behind it, the return to Redis an
//! `INFO` with how long the fallback lasted, and another program's data under a limiter's
//! keys an `ERROR`.
//!
//! Each test installs a subscriber of its own for its thread (`set_default`) and runs on a
//! current-thread runtime, so the store's probe task reports to it too.

mod common;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ironward_redis::{Bucket, Options, Period, Sliding, Source, Store, StoreError};
use redis::AsyncCommands;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber, span};

use common::{Server, unique};

const NOW: Duration = Duration::from_secs(1_700_000_000);
const HOUR: Duration = Duration::from_secs(3600);
/// The longest any wait may take.
const BOUND: Duration = Duration::from_secs(20);

/// One event of this crate: its level and its fields, the message under `message`.
#[derive(Debug, Clone)]
struct Seen {
    level: Level,
    fields: BTreeMap<String, String>,
}

impl Seen {
    fn field(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .unwrap_or_else(|| panic!("no field {name} in {self:?}"))
    }
}

/// A subscriber that keeps every event this crate emits.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<Seen>>>);

impl Events {
    /// The events so far, and none after.
    fn drain(&self) -> Vec<Seen> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

impl Subscriber for Events {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        if !metadata.target().starts_with("ironward_redis") {
            return;
        }
        let mut fields = Fields(BTreeMap::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(Seen {
            level: *metadata.level(),
            fields: fields.0,
        });
    }

    fn enter(&self, _: &span::Id) {}

    fn exit(&self, _: &span::Id) {}
}

struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

async fn back_on_redis(store: &Store) {
    let deadline = Instant::now() + BOUND;
    while store.source() == Source::Local {
        assert!(Instant::now() < deadline, "never back on Redis");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "current_thread")]
async fn refusals_are_debug_a_failover_a_warning_and_the_return_an_info() {
    let events = Events::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let mut server = Server::start();
    let port = server.port();
    let store = server
        .store(Options {
            share: 0.5,
            ..Options::default()
        })
        .await;
    let name = unique("events");
    let limit = Period::new(&store, &name, 2, HOUR);

    // Admitted events say nothing; the refusal says what refused it.
    for _ in 0..3 {
        let _ = limit.take("k", NOW).await.unwrap();
    }
    let seen = events.drain();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let refusal = &seen[0];
    assert_eq!(refusal.level, Level::DEBUG);
    assert_eq!(
        (
            refusal.field("piece"),
            refusal.field("name"),
            refusal.field("source")
        ),
        ("redis_period", name.as_str(), "redis")
    );
    assert_eq!(refusal.field("quota"), "2");
    assert_eq!(refusal.field("period"), format!("{HOUR:?}"));
    assert_eq!(refusal.field("retry_after"), format!("{HOUR:?}"));

    // Killed: one warning, by the call that failed over, with what the connection said;
    // the fallback's refusal names its own share of the quota.
    server.kill();
    for _ in 0..3 {
        let answer = limit.take("other", NOW).await.unwrap();
        assert_eq!(answer.source, Source::Local);
    }
    let seen = events.drain();
    let warnings: Vec<_> = seen.iter().filter(|e| e.level == Level::WARN).collect();
    assert_eq!(warnings.len(), 1, "{seen:?}");
    assert_eq!(warnings[0].field("name"), name);
    assert_eq!(warnings[0].field("script"), "period");
    assert!(!warnings[0].field("error").is_empty());
    let local: Vec<_> = seen.iter().filter(|e| e.level == Level::DEBUG).collect();
    assert_eq!(local.len(), 2, "{seen:?}");
    assert_eq!(
        (local[0].field("source"), local[0].field("quota")),
        ("local", "1")
    );

    // Restarted: one INFO, with how long the fallback lasted.
    drop(server);
    let server = (0..50)
        .find_map(|_| {
            Server::start_on(port).or_else(|| {
                std::thread::sleep(Duration::from_millis(100));
                None
            })
        })
        .expect("redis-server restarts on its port");
    back_on_redis(&store).await;
    let seen = events.drain();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].level, Level::INFO);
    assert!(seen[0].field("lasted").ends_with('s'), "{seen:?}");
    drop(server);
}

#[tokio::test(flavor = "current_thread")]
async fn another_programs_data_under_a_limiters_keys_is_an_error() {
    let events = Events::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let mut conn = server.conn().await;

    // A string where the log should be: Redis answers WRONGTYPE, which refuses that call
    // and leaves the store on Redis.
    let log = unique("wrongtype");
    let sliding = Sliding::new(&store, &log, 1, HOUR);
    let () = conn.set(format!("{{{log}:k}}.log"), "x").await.unwrap();
    let err = sliding.take("k", NOW).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Key { script: "sliding", code, .. } if code == "WRONGTYPE"),
        "{err:?}"
    );
    assert_eq!(store.source(), Source::Redis);
    let seen = events.drain();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].level, Level::ERROR);
    assert!(seen[0].field("error").contains("WRONGTYPE"), "{seen:?}");

    // A reading no caller can pass: a reply no script gives, refused.
    let odd = unique("odd");
    let bucket = Bucket::new(&store, &odd, 1.0, 5.0);
    let () = conn.set(format!("{{{odd}:k}}.ts"), "1e300").await.unwrap();
    let () = conn.set(format!("{{{odd}:k}}.tokens"), "1").await.unwrap();
    assert!(bucket.take("k", NOW, 1.0).await.is_err());
    let seen = events.drain();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].level, Level::ERROR);
    assert_eq!(
        (seen[0].field("name"), seen[0].field("script")),
        (odd.as_str(), "bucket")
    );
}

// A Redis that may evict the limiters' keys is worth one warning at connect, naming the
// policy; a Redis that keeps them is worth none.
#[tokio::test(flavor = "current_thread")]
async fn an_evicting_policy_is_one_warning_at_connect() {
    let events = Events::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let server = Server::start();
    let quiet = server.store(common::PATIENT).await;
    assert_eq!(quiet.stats().eviction_warnings, 0);
    assert!(events.drain().is_empty());

    let mut conn = server.conn().await;
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("volatile-ttl")
        .query_async(&mut conn)
        .await
        .unwrap();
    let warned = server.store(common::PATIENT).await;
    let seen = events.drain();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].level, Level::WARN);
    assert_eq!(seen[0].field("policy"), "volatile-ttl");
    assert_eq!(warned.stats().eviction_warnings, 1);
}
