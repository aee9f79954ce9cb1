//! The `metrics` feature: every count equals what the test sent and saw, read from
//! `metrics-util`'s `DebuggingRecorder` against a `redis-server` of the test's own.
//!
//! Each test makes its store and limiters inside `metrics::with_local_recorder`, so the
//! handles they register when made record to that test's recorder alone, whichever thread
//! (or the store's probe task) records afterwards. A snapshot drains what it reads, so each
//! snapshot holds what happened since the one before.
#![cfg(feature = "metrics")]

use crate::common;

use std::time::{Duration, Instant};

use ironward::Usage;
use ironward_redis::{Bucket, Options, Period, Sliding, Source, Store, StoreError};
use ironward_tokio::{Clock, Quota};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use redis::AsyncCommands;

use common::{Server, unique};

/// A clock reading on the Unix clock, as a fleet passes it.
const NOW: Duration = Duration::from_secs(1_700_000_000);
const HOUR: Duration = Duration::from_secs(3600);
/// The longest any wait may take.
const BOUND: Duration = Duration::from_secs(20);

/// Every value in one snapshot, keyed by name and sorted labels.
struct Seen(Vec<(String, Labels, DebugValue)>);

/// A metric's labels, sorted by key.
type Labels = Vec<(String, String)>;

impl Seen {
    fn take(snapshotter: &Snapshotter) -> Self {
        let values = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let key = key.key();
                let mut labels: Vec<_> = key
                    .labels()
                    .map(|l| (l.key().to_owned(), l.value().to_owned()))
                    .collect();
                labels.sort();
                (key.name().to_owned(), labels, value)
            })
            .collect();
        Self(values)
    }

    fn find(&self, name: &str, labels: &[(&str, &str)]) -> Option<&DebugValue> {
        let mut want: Vec<_> = labels
            .iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        want.sort();
        self.0
            .iter()
            .find(|(n, l, _)| n == name && *l == want)
            .map(|(_, _, value)| value)
    }

    /// A counter's count; one never registered is 0.
    fn counter(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        match self.find(name, labels) {
            Some(DebugValue::Counter(count)) => *count,
            None => 0,
            Some(other) => panic!("{name} is a counter, not {other:?}"),
        }
    }

    /// A histogram's samples, in seconds; one never registered has none.
    fn samples(&self, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
        match self.find(name, labels) {
            Some(DebugValue::Histogram(values)) => values.iter().map(|v| v.0).collect(),
            None => Vec::new(),
            Some(other) => panic!("{name} is a histogram, not {other:?}"),
        }
    }

    /// `ironward.requests` of one limiter, by source, outcome and reason.
    fn requests(&self, piece: &str, name: &str, source: &str, outcome: &str) -> u64 {
        let mut labels = vec![
            ("piece", piece),
            ("name", name),
            ("source", source),
            ("outcome", outcome),
        ];
        if let Some(reason) = outcome.strip_prefix("refused:") {
            labels[3] = ("outcome", "refused");
            labels.push(("reason", reason));
        }
        self.counter("ironward.requests", &labels)
    }

    /// Every `ironward.requests` counted, whatever its labels.
    fn all_requests(&self) -> u64 {
        self.0
            .iter()
            .filter(|(n, _, _)| n == "ironward.requests")
            .map(|(_, _, value)| match value {
                DebugValue::Counter(count) => *count,
                _ => 0,
            })
            .sum()
    }

    /// The round trips of one limiter that came to `outcome` (`ok` or `error`).
    fn round_trips(&self, piece: &str, name: &str, outcome: &str) -> Vec<f64> {
        self.samples(
            "ironward.redis.decision.duration",
            &[("piece", piece), ("name", name), ("outcome", outcome)],
        )
    }

    fn failovers(&self) -> u64 {
        self.counter("ironward.redis.failovers", &[])
    }

    fn fallbacks(&self) -> Vec<f64> {
        self.samples("ironward.redis.fallback.duration", &[])
    }
}

/// A store on `server` whose handles record to `recorder`, sending every call to Redis (no
/// memory of refusals): each decision is one round trip, which the tests count.
fn store(recorder: &DebuggingRecorder, server: &Server, options: Options) -> Store {
    let options = Options {
        blocked_keys: 0,
        ..options
    };
    metrics::with_local_recorder(recorder, || {
        let client = redis::Client::open(server.url()).unwrap();
        let conn =
            redis::aio::ConnectionManager::new_lazy_with_config(client, Store::config(&options))
                .unwrap();
        Store::new(conn, options)
    })
}

/// Waits, at most [`BOUND`], until `store` is back on Redis.
async fn back_on_redis(store: &Store) {
    let deadline = Instant::now() + BOUND;
    while store.source() == Source::Local {
        assert!(Instant::now() < deadline, "never back on Redis");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

// Each limiter over a quota of four, taken ten times: four admitted, six refused, all by
// Redis, and one round trip each.
#[tokio::test]
async fn ten_takes_over_a_quota_of_four_count_four_admitted_and_six_refused() {
    const QUOTA: u32 = 4;
    const TAKES: u64 = 10;
    let server = Server::start();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let store = store(&recorder, &server, Options::default());
    let (period, bucket, sliding) = (unique("period"), unique("bucket"), unique("sliding"));
    let (p, b, s) = metrics::with_local_recorder(&recorder, || {
        (
            Period::new(&store, &period, QUOTA, HOUR),
            // A bucket that never refills: its burst is the quota.
            Bucket::new(&store, &bucket, 0.0, f64::from(QUOTA)),
            Sliding::new(&store, &sliding, QUOTA, HOUR),
        )
    });

    let mut admitted = [0; 3];
    for i in 0..TAKES {
        let now = NOW + Duration::from_secs(i);
        let answers = [
            p.take("k", now).await.unwrap().admitted(),
            b.take("k", now, 1.0).await.unwrap().admitted(),
            s.take("k", now).await.unwrap().admitted(),
        ];
        for (count, answer) in admitted.iter_mut().zip(answers) {
            *count += u64::from(answer);
        }
    }
    assert_eq!(admitted, [u64::from(QUOTA); 3]);

    let seen = Seen::take(&snapshotter);
    let refused = TAKES - u64::from(QUOTA);
    for (piece, name) in [
        ("redis_period", &period),
        ("redis_bucket", &bucket),
        ("redis_sliding", &sliding),
    ] {
        assert_eq!(
            seen.requests(piece, name, "redis", "admitted"),
            u64::from(QUOTA),
            "{piece}"
        );
        assert_eq!(
            seen.requests(piece, name, "redis", "refused:limited"),
            refused,
            "{piece}"
        );
        assert_eq!(seen.requests(piece, name, "local", "admitted"), 0);
        assert_eq!(seen.requests(piece, name, "redis", "refused:timeout"), 0);
        assert_eq!(seen.round_trips(piece, name, "ok").len() as u64, TAKES);
        assert!(seen.round_trips(piece, name, "error").is_empty());
    }
    assert_eq!(seen.all_requests(), 3 * TAKES);
    assert_eq!(seen.failovers(), 0);
    // `next` is a round trip too, and no decision.
    // The period opened at the first take, at `NOW`: from `NOW` it ends in an hour (the
    // latest reading seen, nine seconds on, does not shorten the caller's wait).
    assert_eq!(p.next("k", NOW).await.unwrap(), HOUR);
    let seen = Seen::take(&snapshotter);
    assert_eq!(seen.round_trips("redis_period", &period, "ok").len(), 1);
    assert_eq!(seen.all_requests(), 0);
}

#[cfg(feature = "tower")]
mod layer {
    use http::Request;
    use ironward_redis::FleetQuotaLayer;
    use ironward_tower::Limited;
    use tower::{BoxError, Layer, ServiceExt, service_fn};

    use super::*;

    // The layer counts under ironward-tower's piece, `rate_limit`, once a request: its limiter
    // is not counted a second time under its own piece.
    #[tokio::test]
    async fn the_layer_counts_each_request_once_under_rate_limit() {
        let server = Server::start();
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let store = store(&recorder, &server, Options::default());
        let name = unique("layer");
        let layer = metrics::with_local_recorder(&recorder, || {
            FleetQuotaLayer::new(&store, &name, Quota::sliding(3, HOUR))
                .with_clock(Clock::from_fn(|| NOW))
                .with_name("policy")
        });
        let service = layer.layer(service_fn(|_: Request<()>| async { Ok::<_, BoxError>(()) }));
        let mut limited = 0;
        for _ in 0..8 {
            if let Err(err) = service.clone().oneshot(Request::new(())).await {
                assert!(err.is::<Limited>(), "{err}");
                limited += 1;
            }
        }
        assert_eq!(limited, 5);

        let seen = Seen::take(&snapshotter);
        assert_eq!(seen.requests("rate_limit", &name, "redis", "admitted"), 3);
        assert_eq!(
            seen.requests("rate_limit", &name, "redis", "refused:limited"),
            5
        );
        assert_eq!(seen.all_requests(), 8);
        assert_eq!(seen.round_trips("rate_limit", &name, "ok").len(), 8);
    }
}

// Killed twice, restarted twice: one failover a switch however many calls it answers, the
// calls of the outage labelled `source=local`, one fallback stretch recorded as each ends,
// and one round trip a script call (the one that failed over included).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_outage_is_one_failover_its_decisions_are_local_and_its_length_is_recorded() {
    const QUOTA: u32 = 5;
    const TAKES: u64 = 7;
    /// The fallback's share: ⌊0.4 · 5⌋ = 2 a period.
    const SHARE: f64 = 0.4;
    let mut server = Server::start();
    let port = server.port();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let options = Options {
        timeout: Duration::from_millis(500),
        share: SHARE,
        ..Options::default()
    };
    let store = store(&recorder, &server, options);
    let name = unique("outage");
    let limit = metrics::with_local_recorder(&recorder, || Period::new(&store, &name, QUOTA, HOUR));
    let piece = "redis_period";
    // Takes `TAKES` events for `key`, one after another: how many were admitted, by whom.
    let take = |key: String| {
        let limit = limit.clone();
        async move {
            let mut admitted = [0; 2];
            for _ in 0..TAKES {
                let answer = limit
                    .take(&key, NOW)
                    .await
                    .expect("an answer, not a timeout");
                let slot = usize::from(answer.source == Source::Local);
                admitted[slot] += u64::from(answer.value != Usage::Over);
            }
            admitted
        }
    };

    for outage in 0..2 {
        // On Redis: the quota, then refusals, each a round trip.
        assert_eq!(
            take(format!("before-{outage}")).await,
            [u64::from(QUOTA), 0]
        );
        let seen = Seen::take(&snapshotter);
        assert_eq!(seen.requests(piece, &name, "redis", "admitted"), 5);
        assert_eq!(seen.requests(piece, &name, "redis", "refused:limited"), 2);
        assert_eq!(seen.round_trips(piece, &name, "ok").len() as u64, TAKES);
        assert!(seen.round_trips(piece, &name, "error").is_empty());
        assert_eq!((seen.failovers(), seen.fallbacks().len()), (0, 0));

        // Killed: the first call fails over (a failed round trip) and is answered locally,
        // as are the rest, with no round trip at all.
        server.kill();
        let killed = Instant::now();
        assert_eq!(take(format!("during-{outage}")).await, [0, 2]);
        let answered = Instant::now();
        let seen = Seen::take(&snapshotter);
        assert_eq!(seen.failovers(), 1);
        assert_eq!(seen.requests(piece, &name, "local", "admitted"), 2);
        assert_eq!(seen.requests(piece, &name, "local", "refused:limited"), 5);
        assert_eq!(seen.all_requests(), TAKES);
        assert!(seen.round_trips(piece, &name, "ok").is_empty());
        assert_eq!(seen.round_trips(piece, &name, "error").len(), 1);
        assert!(seen.fallbacks().is_empty(), "recorded only when it ends");
        assert_eq!(store.source(), Source::Local);

        // Let the outage last a few probe intervals, then restart on the same port.
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(server);
        let restarting = Instant::now();
        server = (0..50)
            .find_map(|_| {
                Server::start_on(port).or_else(|| {
                    std::thread::sleep(Duration::from_millis(100));
                    None
                })
            })
            .expect("redis-server restarts on its port");
        back_on_redis(&store).await;
        let recovered = Instant::now();

        let seen = Seen::take(&snapshotter);
        let fallbacks = seen.fallbacks();
        assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
        // From the failover (after the kill, before the outage's answers were all in) to the
        // PING answered (after the restart began, before the test saw it): tokio's clock
        // is the monotonic clock here, as the test's.
        let lasted = Duration::from_secs_f64(fallbacks[0]);
        assert!(lasted >= restarting - answered, "{lasted:?}");
        assert!(lasted <= recovered - killed, "{lasted:?}");
        assert_eq!(seen.failovers(), 0, "a recovery is no failover");
        assert_eq!(seen.all_requests(), 0);
    }
    let stats = store.stats();
    assert_eq!((stats.failovers, stats.recoveries), (2, 2));
}

// A Redis that holds every command is a refusal for `timeout`, decided on Redis's side, and
// no failover; the round trip is recorded as an error, at least as long as the timeout.
#[tokio::test]
async fn a_paused_redis_refuses_for_timeout_and_does_not_fail_over() {
    let server = Server::start();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let timeout = Duration::from_millis(100);
    let store = store(
        &recorder,
        &server,
        Options {
            timeout,
            ..Options::default()
        },
    );
    let name = unique("paused");
    let limit = metrics::with_local_recorder(&recorder, || Sliding::new(&store, &name, 5, HOUR));
    assert!(limit.take("k", NOW).await.unwrap().admitted());

    let mut conn = server.conn().await;
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(600)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(limit.take("k", NOW).await, Err(StoreError::Timeout));

    let seen = Seen::take(&snapshotter);
    let piece = "redis_sliding";
    assert_eq!(seen.requests(piece, &name, "redis", "admitted"), 1);
    assert_eq!(seen.requests(piece, &name, "redis", "refused:timeout"), 1);
    assert_eq!(seen.all_requests(), 2);
    assert_eq!(seen.round_trips(piece, &name, "ok").len(), 1);
    let errors = seen.round_trips(piece, &name, "error");
    assert_eq!(errors.len(), 1);
    assert!(errors[0] >= timeout.as_secs_f64(), "{errors:?}");
    assert_eq!(seen.failovers(), 0);
    assert_eq!(store.source(), Source::Redis);
}

// A reply no script gives is a refusal for `bad_reply`, and no failover.
#[tokio::test]
async fn a_reply_no_script_gives_refuses_for_bad_reply() {
    let server = Server::start();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let store = store(&recorder, &server, Options::default());
    let name = unique("odd");
    let bucket = metrics::with_local_recorder(&recorder, || Bucket::new(&store, &name, 1.0, 5.0));
    // A clock reading no caller can pass: the script's reply is out of range.
    let mut conn = server.conn().await;
    let () = conn.set(format!("{{{name}:k}}.ts"), "1e300").await.unwrap();
    let () = conn.set(format!("{{{name}:k}}.tokens"), "1").await.unwrap();

    let err = bucket.take("k", NOW, 1.0).await.unwrap_err();
    assert!(matches!(err, StoreError::Reply { .. }), "{err}");

    let seen = Seen::take(&snapshotter);
    let piece = "redis_bucket";
    assert_eq!(seen.requests(piece, &name, "redis", "refused:bad_reply"), 1);
    assert_eq!(seen.all_requests(), 1);
    assert_eq!(seen.round_trips(piece, &name, "error").len(), 1);
    assert_eq!(seen.failovers(), 0);
}

// Another program's string where the log should be: Redis answers WRONGTYPE, a refusal
// for `key_error`, and no failover.
#[tokio::test]
async fn a_key_of_another_type_refuses_for_key_error_and_does_not_fail_over() {
    let server = Server::start();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let store = store(&recorder, &server, Options::default());
    let name = unique("wrongtype");
    let limit = metrics::with_local_recorder(&recorder, || Sliding::new(&store, &name, 1, HOUR));
    let mut conn = server.conn().await;
    let () = conn.set(format!("{{{name}:k}}.log"), "x").await.unwrap();

    for _ in 0..3 {
        let err = limit.take("k", NOW).await.unwrap_err();
        assert!(matches!(err, StoreError::Key { .. }), "{err}");
    }
    assert!(limit.take("other", NOW).await.unwrap().admitted());

    let seen = Seen::take(&snapshotter);
    let piece = "redis_sliding";
    assert_eq!(seen.failovers(), 0);
    assert_eq!(seen.requests(piece, &name, "redis", "refused:key_error"), 3);
    assert_eq!(seen.requests(piece, &name, "redis", "admitted"), 1);
    assert_eq!(seen.all_requests(), 4);
    assert_eq!(seen.round_trips(piece, &name, "error").len(), 3);
    assert_eq!(seen.fallbacks().len(), 0);
    assert_eq!(store.source(), Source::Redis);
}

// Seventy callers at once on one thread, more than a batch holds (64): two calls to Redis,
// one of 64 decisions and one of 6, and a lone call after them, a batch of one. Each is one
// `ironward.redis.batch.size` sample.
#[tokio::test(flavor = "current_thread")]
async fn each_batch_records_its_number_of_decisions() {
    const CALLERS: usize = 70;
    let server = Server::start();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let store = store(&recorder, &server, common::PATIENT);
    store.load().await.unwrap();
    let name = unique("batched");
    let limit = metrics::with_local_recorder(&recorder, || Period::new(&store, &name, 1, HOUR));
    let tasks: Vec<_> = (0..CALLERS)
        .map(|i| {
            let limit = limit.clone();
            tokio::spawn(async move { limit.take(format!("k{i}"), NOW).await.unwrap() })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap().value, Usage::Hit);
    }
    assert_eq!(limit.take("alone", NOW).await.unwrap().value, Usage::Hit);

    let seen = Seen::take(&snapshotter);
    let mut sizes = seen.samples("ironward.redis.batch.size", &[]);
    sizes.sort_by(f64::total_cmp);
    assert_eq!(sizes, [1.0, 6.0, 64.0]);
    assert_eq!(store.stats().batches, 3);
    assert_eq!(
        seen.requests("redis_period", &name, "redis", "admitted"),
        CALLERS as u64 + 1
    );
}
