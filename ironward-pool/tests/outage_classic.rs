//! A real redis-server killed under load for 4 s and started again, in front of a
//! deadpool-redis pool of 8 whose ward runs the classic breaker ([`RECONNECT_CLASSIC`]).
//!
//! What it shows, from every connect the pool's manager was asked for and the ward's own
//! counts: the failed checks and connects of the dead server open the breaker, which then
//! refuses connects; while it is open no connect reaches the server but its probes, at most
//! one per open wait; the pool is full again within a bound derived from the policy; and the
//! breaker ends closed, every opening answered by a probe. With the `metrics` feature, its
//! changes of state are counted alike.
//!
//! Waits in real time, each bounded.

use crate::common;

use std::time::{Duration, Instant};

use deadpool::managed::PoolError;
use ironward::{ClassicReason, RECONNECT_CLASSIC};
use ironward_pool::{WardError, Warded};

use common::drill::{self, Counting, Plan};
use common::server::Server;

const SIZE: usize = 8;
const OUTAGE: Duration = Duration::from_secs(4);

/// How long the pool may take to be full again after the restart, from the policy: the
/// longest open wait (a probe is let through at its end), the longest backoff wait still to
/// run (the cap, spread up by a fifth), the breaker's hold after a refusal, and the bucket's
/// refill of the connects beyond its burst; then doubled, plus 2 s, for a loaded two-core
/// machine.
fn patience() -> Duration {
    let policy = RECONNECT_CLASSIC;
    let open = policy.breaker.open.after(u32::MAX);
    let wait = policy.backoff.cap.mul_f64(1.2);
    let refill = Duration::from_secs_f64((SIZE as f64 - policy.burst).max(0.0) / policy.rate);
    (open + wait + policy.backoff.base + refill) * 2 + Duration::from_secs(2)
}

fn is_refused<E>(err: &PoolError<WardError<E, ClassicReason>>) -> bool {
    matches!(err, PoolError::Backend(err) if err.is_refused())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_classic_ward_opens_on_a_dead_redis_probes_it_and_closes_when_it_is_back() {
    #[cfg(feature = "metrics")]
    let recording = metrics_recording::Recording::start();
    let origin = Instant::now();
    let plan = Plan {
        size: SIZE,
        outage: OUTAGE,
        patience: patience(),
    };
    let mut server = Server::start().expect("a redis-server");
    let (counting, log) =
        Counting::new(deadpool_redis::Manager::new(server.url()).unwrap(), origin);
    let warded = Warded::with_policy(counting, RECONNECT_CLASSIC).with_name("classic");
    // The handle registers the ward's series, on this thread's recorder.
    let handle = warded.handle();

    let report = tokio::time::timeout(
        Duration::from_secs(60),
        drill::run(&mut server, warded, log, origin, plan, is_refused),
    )
    .await
    .expect("the drill ends within its bounds");
    let counts = handle.counts();
    let during = report.during_outage().count();
    let summary = format!(
        "{during} connects during the {OUTAGE:?} outage ({} in all), back to full size {:?} \
         after the restart, {} checkouts refused (median {:?}), {} failed otherwise; the \
         ward's counts: {counts:?}",
        report.attempts.len(),
        report.back,
        report.refused,
        report.median_refusal,
        report.failed,
    );
    println!("{summary}");

    // The breaker opened and refused connects.
    assert!(counts.refused_by_breaker > 0, "{summary}");
    assert!(report.refused > 100, "{summary}");
    assert!(
        report.median_refusal < Duration::from_millis(50),
        "{summary}"
    );
    // Once open, only probes reach the server: at most one per open wait, each wait at
    // least the first (1 s), after the few connects the backoff let through before it
    // opened (at most the bucket's burst).
    let policy = RECONNECT_CLASSIC;
    let probes = OUTAGE.as_secs_f64() / policy.breaker.open.after(0).as_secs_f64();
    let bound = policy.burst + probes.ceil() + 1.0;
    assert!(
        during as f64 <= bound,
        "{during} connects during the outage, over {bound}: {summary}"
    );

    // Back to full size, every connection usable, within the policy's bound.
    let back = report.back.unwrap_or_else(|| {
        panic!(
            "the pool was not full {:?} after the restart: {summary}",
            plan.patience
        )
    });
    assert!(back <= plan.patience, "{summary}");
    assert!(report.all_usable, "{summary}");

    #[cfg(feature = "metrics")]
    {
        let seen = recording.seen();
        let changes = |from: &str, to: &str| seen.changes("classic", from, to);
        let opened = changes("closed", "open");
        assert!(opened >= 1, "{summary}");
        // Ends closed: every opening was answered by a probe, and every run of openings
        // ended with one that closed it.
        assert_eq!(
            opened + changes("half_open", "open"),
            changes("open", "half_open"),
            "{summary}"
        );
        assert_eq!(changes("half_open", "closed"), opened, "{summary}");
        println!(
            "the breaker opened {opened} times from closed, reopened {} times after a probe",
            changes("half_open", "open")
        );
    }
}

/// A `metrics-util` debugging recorder set as the test thread's: the ward registers its
/// handles on it when its handle is taken, here, and counts on them from any thread.
#[cfg(feature = "metrics")]
mod metrics_recording {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

    pub(super) struct Recording {
        snapshotter: Snapshotter,
        _guard: metrics::LocalRecorderGuard<'static>,
    }

    impl Recording {
        pub(super) fn start() -> Self {
            // Leaked so that the guard may borrow it for the rest of the test.
            let recorder: &'static DebuggingRecorder =
                Box::leak(Box::new(DebuggingRecorder::new()));
            Self {
                snapshotter: recorder.snapshotter(),
                _guard: metrics::set_default_local_recorder(recorder),
            }
        }

        pub(super) fn seen(&self) -> Seen {
            Seen(
                self.snapshotter
                    .snapshot()
                    .into_vec()
                    .into_iter()
                    .map(|(key, _, _, value)| {
                        let key = key.key();
                        let labels = key
                            .labels()
                            .map(|l| (l.key().to_owned(), l.value().to_owned()))
                            .collect();
                        (key.name().to_owned(), labels, value)
                    })
                    .collect(),
            )
        }
    }

    /// A series' labels, as key and value.
    type Labels = Vec<(String, String)>;

    /// One snapshot: each series' name, labels and value.
    pub(super) struct Seen(Vec<(String, Labels, DebugValue)>);

    impl Seen {
        /// The count of the breaker `name`'s changes from `from` to `to`; a series never
        /// registered is 0.
        pub(super) fn changes(&self, name: &str, from: &str, to: &str) -> u64 {
            let want = [("name", name), ("from", from), ("to", to)];
            self.0
                .iter()
                .filter(|(metric, labels, _)| {
                    metric == "ironward.breaker.transitions"
                        && want
                            .iter()
                            .all(|&(k, v)| labels.iter().any(|(lk, lv)| lk == k && lv == v))
                })
                .map(|(_, _, value)| match value {
                    DebugValue::Counter(count) => *count,
                    other => panic!("a counter, not {other:?}"),
                })
                .sum()
        }
    }
}
