//! `reserve` and `settle` of `Period`, `Bucket` and `Sliding` against a real Redis: on
//! random sequences of takes, reservations and settles (refunds, debts, settles past their
//! deadline, clocks stepping back), every answer and every `next` is the core twin's
//! (`ironward::Period`, `Bucket`, `Sliding` fed the same calls). The debts and refunds one
//! by one, and the hostile inputs, are in `tests/settles.rs`.

use crate::common;

use std::time::Duration;

use ironward_redis::{Bucket, Period, Reservation, Sliding, Source, Store};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use common::Server;

/// One step on the key.
#[derive(Debug, Clone)]
enum Step {
    /// A request of this cost.
    Take(u32),
    /// An estimate, with its time-out in milliseconds.
    Reserve(u32, u64),
    /// The settle of the reservation this many back among those open, at this actual cost.
    Settle(usize, u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..7u32).prop_map(Step::Take),
        (0..7u32, 0..4_000u64).prop_map(|(e, ms)| Step::Reserve(e, ms)),
        (0..4usize, 0..10u32).prop_map(|(back, actual)| Step::Settle(back, actual)),
    ]
}

/// The limiters a case drives: which kind, and its parameters.
#[derive(Debug, Clone)]
enum Kind {
    /// A quota per period, aligned or not.
    Period(u32, bool),
    /// A rate (tokens a second) and a burst; costs are the steps' units times 0.75, so
    /// that tokens are fractional.
    Bucket(f64, f64),
    /// A quota per window.
    Sliding(u32),
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        (0..10u32, any::<bool>()).prop_map(|(quota, align)| Kind::Period(quota, align)),
        (
            prop::sample::select(vec![0.0, 0.5, 1.0, 3.3, 10.0]),
            prop::sample::select(vec![1.0, 2.5, 5.0, 10.0])
        )
            .prop_map(|(rate, burst)| Kind::Bucket(rate, burst)),
        (0..10u32).prop_map(Kind::Sliding),
    ]
}

/// A bucket's cost for `units`: fractional tokens.
fn tokens(units: u32) -> f64 {
    f64::from(units) * 0.75
}

/// A Redis limiter and its core twin, fed the same calls.
enum Twin {
    Period(Period, ironward::Period),
    Bucket(Bucket, ironward::Bucket),
    Sliding(Sliding, ironward::Sliding),
}

/// A reservation of each.
type Pair = (Reservation, ironward::Reservation);

impl Twin {
    fn new(store: &Store, kind: &Kind, span: Duration) -> Self {
        let name = common::unique("reserve");
        match *kind {
            Kind::Period(quota, false) => Twin::Period(
                Period::new(store, &name, quota, span),
                ironward::Period::new(quota, span),
            ),
            Kind::Period(quota, true) => Twin::Period(
                Period::aligned(store, &name, quota, span),
                ironward::Period::aligned(quota, span),
            ),
            // The core bucket's clock starts where the Redis one starts: at its first take.
            Kind::Bucket(rate, burst) => Twin::Bucket(
                Bucket::new(store, &name, rate, burst),
                ironward::Bucket::new(rate, burst, Duration::ZERO),
            ),
            Kind::Sliding(quota) => Twin::Sliding(
                Sliding::new(store, &name, quota, span),
                ironward::Sliding::new(quota, span),
            ),
        }
    }

    /// The bucket twin made at the reading of the first take or reservation, as a Redis
    /// bucket starts full there.
    fn start(&mut self, now: Duration) {
        if let Twin::Bucket(redis, core) = self {
            *core = ironward::Bucket::new(redis.rate(), redis.burst(), now);
        }
    }

    /// A take of `cost` on both: the answers, as text, and the waits after, the core's
    /// unshifted.
    async fn take(&mut self, now: Duration, cost: u32) -> (String, String, Duration, Duration) {
        match self {
            Twin::Period(redis, core) => {
                let answer = redis.take_n("k", now, cost).await.unwrap();
                assert_eq!(answer.source, Source::Redis);
                let value = core.take_n(now, cost);
                let next = core.next_n(now, cost);
                (
                    format!("{:?}", answer.value),
                    format!("{value:?}"),
                    answer.next,
                    next,
                )
            }
            Twin::Bucket(redis, core) => {
                let answer = redis.take("k", now, tokens(cost)).await.unwrap();
                let value = core.take(now, tokens(cost));
                let next = core.next(now, tokens(cost));
                (
                    answer.value.to_string(),
                    value.to_string(),
                    answer.next,
                    next,
                )
            }
            Twin::Sliding(redis, core) => {
                let answer = redis.take_n("k", now, cost).await.unwrap();
                let value = core.take_n(now, cost);
                let next = core.next_n(now, cost);
                (
                    answer.value.to_string(),
                    value.to_string(),
                    answer.next,
                    next,
                )
            }
        }
    }

    /// A reservation on both: each's, and the waits after, the core's unshifted.
    async fn reserve(
        &mut self,
        now: Duration,
        estimate: u32,
        timeout: Duration,
    ) -> (
        Option<Reservation>,
        Option<ironward::Reservation>,
        Duration,
        Duration,
    ) {
        let (answer, theirs, next) = match self {
            Twin::Period(redis, core) => {
                let answer = redis.reserve("k", now, estimate, timeout).await.unwrap();
                let theirs = core.reserve(now, estimate, timeout).ok();
                (answer, theirs, core.next_n(now, estimate))
            }
            Twin::Bucket(redis, core) => {
                let cost = tokens(estimate);
                let answer = redis.reserve("k", now, cost, timeout).await.unwrap();
                let theirs = core.reserve(now, cost, timeout).ok();
                (answer, theirs, core.next(now, cost))
            }
            Twin::Sliding(redis, core) => {
                let answer = redis.reserve("k", now, estimate, timeout).await.unwrap();
                let theirs = core.reserve(now, estimate, timeout).ok();
                (answer, theirs, core.next_n(now, estimate))
            }
        };
        (answer.value, theirs, answer.next, next)
    }

    async fn settle(&mut self, (ours, theirs): Pair, actual: u32, now: Duration) {
        match self {
            Twin::Period(redis, core) => {
                redis.settle(ours, actual, now).await.unwrap();
                core.settle(theirs, actual, now);
            }
            Twin::Bucket(redis, core) => {
                redis.settle(ours, tokens(actual), now).await.unwrap();
                core.settle(theirs, tokens(actual), now);
            }
            Twin::Sliding(redis, core) => {
                redis.settle(ours, actual, now).await.unwrap();
                core.settle(theirs, actual, now);
            }
        }
    }

    /// `next` of a request of `cost` on both, the core's unshifted.
    async fn next(&self, now: Duration, cost: u32) -> (Duration, Duration) {
        match self {
            Twin::Period(redis, core) => (
                redis.next_n("k", now, cost).await.unwrap(),
                core.next_n(now, cost),
            ),
            Twin::Bucket(redis, core) => (
                redis.next("k", now, tokens(cost)).await.unwrap(),
                core.next(now, tokens(cost)),
            ),
            Twin::Sliding(redis, core) => (
                redis.next_n("k", now, cost).await.unwrap(),
                core.next_n(now, cost),
            ),
        }
    }
}

/// The core's wait, counted from `latest`, counted from `now` as the Redis limiters count it.
fn from_now(wait: Duration, latest: Duration, now: Duration) -> Duration {
    if wait.is_zero() || wait == Duration::MAX {
        return wait;
    }
    wait + latest.saturating_sub(now)
}

/// One case: every answer and every wait the core twin's.
async fn run(
    store: &Store,
    kind: &Kind,
    seconds: u64,
    steps: Vec<(Step, i64)>,
) -> Result<(), TestCaseError> {
    let mut twin = Twin::new(store, kind, Duration::from_secs(seconds));
    // Milliseconds, so that every reading is a whole microsecond.
    let mut t: u64 = 1_000_000;
    let mut open: Vec<Pair> = Vec::new();
    // The latest reading the core has taken, which it reads an earlier `now` as.
    let mut latest = Duration::ZERO;
    let mut started = false;
    for (i, (step, delta)) in steps.into_iter().enumerate() {
        t = t.saturating_add_signed(delta);
        let now = Duration::from_millis(t);
        if !started && !matches!(step, Step::Settle(..)) {
            twin.start(now);
            started = true;
        }
        match step {
            Step::Take(cost) => {
                latest = latest.max(now);
                let (ours, theirs, next, wait) = twin.take(now, cost).await;
                prop_assert_eq!(ours, theirs, "take {} at {}", i, t);
                prop_assert_eq!(next, from_now(wait, latest, now), "next after {}", i);
            }
            Step::Reserve(estimate, ms) => {
                latest = latest.max(now);
                let timeout = Duration::from_millis(ms);
                let (ours, theirs, next, wait) = twin.reserve(now, estimate, timeout).await;
                prop_assert_eq!(ours.is_some(), theirs.is_some(), "reserve {} at {}", i, t);
                prop_assert_eq!(next, from_now(wait, latest, now), "next after {}", i);
                if let (Some(ours), Some(theirs)) = (ours, theirs) {
                    prop_assert_eq!(ours.estimate(), theirs.estimate());
                    prop_assert_eq!(ours.source(), Source::Redis);
                    open.push((ours, theirs));
                }
            }
            Step::Settle(back, actual) => {
                if open.is_empty() {
                    continue;
                }
                let at = open.len() - 1 - back.min(open.len() - 1);
                let pair = open.remove(at);
                // Past its deadline a settle does not move the clock.
                if latest.max(now) <= pair.1.deadline() {
                    latest = latest.max(now);
                }
                twin.settle(pair, actual, now).await;
            }
        }
        // Where the limiter stands for a request of one unit and of six.
        for cost in [1, 6] {
            let (next, wait) = twin.next(now, cost).await;
            prop_assert_eq!(
                next,
                from_now(wait, latest, now),
                "next({}) after {}",
                cost,
                i
            );
        }
    }
    Ok(())
}

#[test]
fn reservations_in_redis_answer_as_the_core() {
    let server = Server::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Every call reaches the script: no memory of refusals.
    let store = runtime.block_on(server.store(common::EVERY_CALL));
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(192);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        kind(),
        1..8u64,
        proptest::collection::vec((step(), -500i64..3_000), 1..40),
    );
    runner
        .run(&strategy, |(kind, seconds, steps)| {
            runtime.block_on(run(&store, &kind, seconds, steps))
        })
        .unwrap();
}
