//! A real redis-server killed under load for 10 s and started again, in front of a
//! deadpool-redis pool of 8 with the ward, and the same beside it without the ward (the
//! control), on a server of its own at the same time.
//!
//! What it shows, each counted from every connect the pool's manager was asked for:
//! the ward's connects during the outage stay within the bucket (burst + rate × outage) and
//! far below the control's; every connect after a failure waits at least the backoff's
//! least wait; checkouts during the outage fail with the ward's refusal, not a backend
//! error; the pool is full again within a bound derived from the policy; and no 100 ms
//! holds more connects than the bucket's burst.
//!
//! The one test of the crate that waits in real time; every wait is bounded.

use crate::common;

use std::time::{Duration, Instant};

use deadpool::managed::PoolError;
use ironward::RECONNECT;
use ironward_pool::{WardError, Warded};

use common::drill::{self, Counting, Plan, Report};
use common::server::Server;

const SIZE: usize = 8;
const OUTAGE: Duration = Duration::from_secs(10);

/// How long the warded pool may take to be full again after the restart, from the policy:
/// the longest backoff wait still to run (the cap, spread up by a fifth), the breaker's hold
/// and probe, and the bucket's refill of the connects beyond its burst; then tripled, plus
/// 2 s, for a loaded two-core machine.
fn patience() -> Duration {
    let policy = RECONNECT;
    let wait = policy.backoff.cap.mul_f64(1.2);
    let breaker = policy.breaker.probe + policy.backoff.base;
    let refill = Duration::from_secs_f64((SIZE as f64 - policy.burst).max(0.0) / policy.rate);
    (wait + breaker + refill) * 3 + Duration::from_secs(2)
}

fn is_refused<E>(err: &PoolError<WardError<E>>) -> bool {
    matches!(err, PoolError::Backend(err) if err.is_refused())
}

fn never_refused<E>(_: &PoolError<E>) -> bool {
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warded_pool_backs_off_a_dead_redis_and_refills_at_the_buckets_pace() {
    let origin = Instant::now();
    let plan = Plan {
        size: SIZE,
        outage: OUTAGE,
        patience: patience(),
    };
    let mut warded_server = Server::start().expect("a redis-server for the warded pool");
    let mut control_server = Server::start().expect("a redis-server for the control");

    let (counting, warded_log) = Counting::new(
        deadpool_redis::Manager::new(warded_server.url()).unwrap(),
        origin,
    );
    let warded = Warded::new(counting);
    let handle = warded.handle();
    let (control, control_log) = Counting::new(
        deadpool_redis::Manager::new(control_server.url()).unwrap(),
        origin,
    );

    let whole = Duration::from_secs(60);
    let (ward, bare) = tokio::time::timeout(whole, async {
        tokio::join!(
            drill::run(
                &mut warded_server,
                warded,
                warded_log,
                origin,
                plan,
                is_refused
            ),
            drill::run(
                &mut control_server,
                control,
                control_log,
                origin,
                plan,
                never_refused
            ),
        )
    })
    .await
    .expect("the drills end within their bounds");
    let counts = handle.counts();
    let summary = format!("{}; the ward's counts: {counts:?}", summarize(&ward, &bare));
    println!("{summary}");

    // Connects during the outage: within the bucket, and a small fraction of the control's.
    let policy = RECONNECT;
    let outage = (ward.restarted - ward.killed).as_secs_f64();
    let bucket_bound = policy.burst + policy.rate * outage;
    let ward_outage = ward.during_outage().count();
    let bare_outage = bare.during_outage().count();
    assert!(
        (ward_outage as f64) <= bucket_bound,
        "{ward_outage} connects in a {outage:.1} s outage, over the bucket's {bucket_bound}: {summary}"
    );
    // The backoff alone allows about one connect per wait; the control makes one per
    // checkout. A factor of 10 holds however slow the machine: each control task connects
    // at least every few tens of milliseconds.
    assert!(
        ward_outage * 10 <= bare_outage,
        "the ward made {ward_outage} connects during the outage, the control {bare_outage}: {summary}"
    );

    // The backoff's spacing: spread by a fifth, the least wait is 0.8 × the 250 ms base.
    let least = policy.backoff.base.mul_f64(0.8);
    let gap = ward
        .least_gap_after_failure()
        .expect("connects failed during the outage");
    assert!(
        gap >= least,
        "a connect {gap:?} after a failure, under {least:?}: {summary}"
    );

    // Checkouts during the outage failed fast with the ward's refusal: the only ones that
    // reached the backend were the connects the ward let through.
    assert!(
        ward.refused > 100,
        "{} checkouts refused: {summary}",
        ward.refused
    );
    assert!(
        ward.failed <= ward_outage as u64 + SIZE as u64,
        "{} checkouts failed with a backend error, {ward_outage} connects: {summary}",
        ward.failed
    );
    assert!(
        ward.median_refusal < Duration::from_millis(50),
        "the median refused checkout took {:?}: {summary}",
        ward.median_refusal
    );
    assert!(counts.refused() >= ward.refused, "{counts:?}: {summary}");

    // Back to full size, every connection usable, and no storm.
    let back = ward.back.unwrap_or_else(|| {
        panic!(
            "the warded pool was not full {:?} after the restart: {summary}",
            plan.patience
        )
    });
    assert!(
        ward.all_usable,
        "not all {SIZE} connections answered: {summary}"
    );
    let storm = ward.most_within(Duration::from_millis(100));
    assert!(
        storm as f64 <= policy.burst,
        "{storm} connects within 100 ms, over the burst of {}: {summary}",
        policy.burst
    );
    assert!(back <= plan.patience, "{summary}");
    assert!(
        bare.all_usable,
        "the control's connections did not all answer: {summary}"
    );
}

fn summarize(ward: &Report, bare: &Report) -> String {
    format!(
        "ward: {} connects during the outage ({} in all), most in 100 ms {}, least gap after a \
         failure {:?}, back to full size {:?} after the restart, {} checkouts refused (median \
         {:?}, slowest {:?}), {} failed otherwise; control: {} connects during the outage, most \
         in 100 ms {}, back {:?}",
        ward.during_outage().count(),
        ward.attempts.len(),
        ward.most_within(Duration::from_millis(100)),
        ward.least_gap_after_failure(),
        ward.back,
        ward.refused,
        ward.median_refusal,
        ward.slowest_refusal,
        ward.failed,
        bare.during_outage().count(),
        bare.most_within(Duration::from_millis(100)),
        bare.back,
    )
}
