//! No over-admission under contention: eight tasks in this process and eight in
//! each of two more OS processes take from one key of each limiter, with a quota of 1000,
//! at once; exactly 1000 are admitted by each, as one atomic script per decision promises.
//!
//! The other processes are this test binary run again with a filter and an environment
//! variable that names the server and the limiters; they start together on a signal in
//! Redis, and print what they admitted. Every wait is bounded.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ironward_redis::{Bucket, Options, Period, Sliding, Source, Store};
use redis::AsyncCommands;
use tokio::process::Command;

use common::{Server, unique};

/// Set in a helper process: `<port> <name>`.
const HELPER: &str = "IRONWARD_REDIS_CONTENTION";

/// The quota each limiter holds.
const QUOTA: u32 = 1000;

/// Tasks in each process.
const TASKS: usize = 8;

/// Takes each task tries from each limiter: 3 × 8 × 150 = 3600 tries for a quota of 1000.
const TRIES: usize = 150;

/// Helper processes besides this one.
const HELPERS: usize = 2;

/// The longest any wait here may take.
const BOUND: Duration = Duration::from_secs(120);

/// What one process admitted, per limiter, and how many answers were not Redis's.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Admitted {
    period: u32,
    sliding: u32,
    bucket: u32,
    strays: u32,
}

/// The three limiters of one test run, in the keys named after `name`.
fn limiters(store: &Store, name: &str) -> (Period, Sliding, Bucket) {
    let hour = Duration::from_secs(3600);
    (
        Period::new(store, &format!("{name}-period"), QUOTA, hour),
        Sliding::new(store, &format!("{name}-sliding"), QUOTA, hour),
        // A thousandth of a token a second: no refill worth one token during the test.
        Bucket::new(store, &format!("{name}-bucket"), 1e-3, f64::from(QUOTA)),
    )
}

fn unix_now() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap()
}

/// Waits until Redis says to go, then runs [`TASKS`] tasks of [`TRIES`] takes from each
/// limiter, all on the key "shared".
async fn hammer(url: String, name: String) -> Admitted {
    let options = Options {
        // Generous: a timeout would be a refusal whose script may still have counted.
        timeout: Duration::from_secs(30),
        ..Options::default()
    };
    let store = Store::connect(url.as_str(), options).await.unwrap();
    store.load().await.unwrap();
    let mut conn = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: i64 = conn.incr(format!("{name}:ready"), 1).await.unwrap();
    let deadline = Instant::now() + BOUND;
    while conn
        .get::<_, Option<i64>>(format!("{name}:go"))
        .await
        .unwrap()
        .is_none()
    {
        assert!(Instant::now() < deadline, "no signal to go");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }

    let (period, sliding, bucket) = limiters(&store, &name);
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (period, sliding, bucket) = (period.clone(), sliding.clone(), bucket.clone());
            tokio::spawn(async move {
                let mut admitted = Admitted::default();
                for _ in 0..TRIES {
                    let answer = period.take("shared", unix_now()).await.unwrap();
                    admitted.period += u32::from(answer.admitted());
                    admitted.strays += u32::from(answer.source != Source::Redis);
                    let answer = sliding.take("shared", unix_now()).await.unwrap();
                    admitted.sliding += u32::from(answer.admitted());
                    admitted.strays += u32::from(answer.source != Source::Redis);
                    let answer = bucket.take("shared", unix_now(), 1.0).await.unwrap();
                    admitted.bucket += u32::from(answer.admitted());
                    admitted.strays += u32::from(answer.source != Source::Redis);
                }
                admitted
            })
        })
        .collect();
    let mut total = Admitted::default();
    for task in tasks {
        let admitted = task.await.expect("a task panicked");
        total.period += admitted.period;
        total.sliding += admitted.sliding;
        total.bucket += admitted.bucket;
        total.strays += admitted.strays;
    }
    total
}

/// Not a test of its own: the body of a helper process, which does nothing unless
/// [`HELPER`] is set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helper_process_takes_from_the_shared_keys() {
    let Ok(spec) = std::env::var(HELPER) else {
        return;
    };
    let (port, name) = spec.split_once(' ').unwrap();
    let admitted = hammer(format!("redis://127.0.0.1:{port}/"), name.to_owned()).await;
    println!(
        "admitted {} {} {} {}",
        admitted.period, admitted.sliding, admitted.bucket, admitted.strays
    );
}

// go-zero's PeriodLimit and TokenLimiter hold a quota across processes because INCRBY and
// the token script are atomic; here each decision is one script, so the quota holds
// exactly however the takes interleave.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quota_of_1000_admits_exactly_1000_across_tasks_and_processes() {
    if std::env::var(HELPER).is_ok() {
        return;
    }
    let server = Server::start();
    let name = unique("contention");
    let helpers: Vec<_> = (0..HELPERS)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "contention::helper_process_takes_from_the_shared_keys",
                    "--exact",
                ])
                .args(["--nocapture", "--test-threads=1"])
                .env(HELPER, format!("{} {name}", server.port()))
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .expect("the test binary runs again as a helper")
        })
        .collect();

    // Wait for the helpers to be connected, then let every process go at once.
    let url = server.url();
    let here = tokio::spawn(hammer(url, name.clone()));
    let mut conn = server.conn().await;
    let deadline = Instant::now() + BOUND;
    loop {
        let ready: Option<usize> = conn.get(format!("{name}:ready")).await.unwrap();
        if ready == Some(HELPERS + 1) {
            break;
        }
        assert!(Instant::now() < deadline, "the helpers never got ready");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let () = conn.set(format!("{name}:go"), 1).await.unwrap();

    let mut total = tokio::time::timeout(BOUND, here)
        .await
        .expect("this process's tasks finish in time")
        .expect("no task panicked");
    for helper in helpers {
        let output = tokio::time::timeout(BOUND, helper.wait_with_output())
            .await
            .expect("a helper finishes in time")
            .unwrap();
        assert!(output.status.success(), "a helper failed: {output:?}");
        let stdout = String::from_utf8(output.stdout).unwrap();
        let line = stdout
            .lines()
            .find_map(|line| Some(&line[line.find("admitted ")? + 9..]))
            .unwrap_or_else(|| panic!("a helper said nothing: {stdout}"));
        let counts: Vec<u32> = line
            .split_whitespace()
            .take(4)
            .map(|n| n.parse().unwrap())
            .collect();
        // Each process took its share, so the processes really contended.
        assert!(counts[..3].iter().all(|&n| n > 0), "{counts:?}");
        total.period += counts[0];
        total.sliding += counts[1];
        total.bucket += counts[2];
        total.strays += counts[3];
    }
    assert_eq!(
        total,
        Admitted {
            period: QUOTA,
            sliding: QUOTA,
            bucket: QUOTA,
            strays: 0
        }
    );
}
