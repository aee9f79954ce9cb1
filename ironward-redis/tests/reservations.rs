//! `Period::reserve` and `settle` against a real Redis: on random sequences of takes,
//! reservations and settles (refunds, debts, settles past their deadline, clocks stepping
//! back), every answer is the core `ironward::Period`'s, and the units admitted over a
//! period never pass the quota plus the debts settled in it.

mod common;

use std::time::Duration;

use ironward::Quota;
use ironward_redis::{Mode, Period, Reservation};
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
        .unwrap_or(64);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        0..10u32,
        1..8u64,
        any::<bool>(),
        proptest::collection::vec((step(), -500i64..3_000), 1..40),
    );
    runner
        .run(&strategy, |(quota, seconds, align, steps)| {
            let span = Duration::from_secs(seconds);
            let name = common::unique("reserve");
            let (redis, mut core) = if align {
                (
                    Period::aligned(&store, &name, quota, span),
                    ironward::Period::aligned(quota, span),
                )
            } else {
                (
                    Period::new(&store, &name, quota, span),
                    ironward::Period::new(quota, span),
                )
            };
            // Milliseconds, so that every reading is a whole microsecond.
            let mut t: u64 = 1_000_000;
            let mut open: Vec<(Reservation, ironward::Reservation)> = Vec::new();
            // The latest reading the core has taken, which it reads an earlier `now` as.
            let mut latest = Duration::ZERO;
            runtime.block_on(async {
                for (i, (step, delta)) in steps.into_iter().enumerate() {
                    t = t.saturating_add_signed(delta);
                    let now = Duration::from_millis(t);
                    match step {
                        Step::Take(cost) => {
                            latest = latest.max(now);
                            let answer = redis.take_n("k", now, cost).await.unwrap();
                            prop_assert_eq!(answer.mode, Mode::Redis);
                            prop_assert_eq!(answer.value, core.take_n(now, cost), "take {}", i);
                        }
                        Step::Reserve(estimate, ms) => {
                            latest = latest.max(now);
                            let timeout = Duration::from_millis(ms);
                            let answer = redis.reserve("k", now, estimate, timeout).await.unwrap();
                            let expected = core.reserve(now, estimate, timeout);
                            prop_assert_eq!(
                                answer.value.is_some(),
                                expected.is_ok(),
                                "reserve {} at {}",
                                i,
                                t
                            );
                            if let (Some(ours), Ok(theirs)) = (answer.value, expected) {
                                prop_assert_eq!(ours.estimate(), estimate);
                                open.push((ours, theirs));
                            }
                        }
                        Step::Settle(back, actual) => {
                            if open.is_empty() {
                                continue;
                            }
                            let at = open.len() - 1 - back.min(open.len() - 1);
                            let (ours, theirs) = open.remove(at);
                            // Past its deadline a settle does not move the clock.
                            if latest.max(now) <= theirs.deadline() {
                                latest = latest.max(now);
                            }
                            redis.settle(ours, actual, now).await.unwrap();
                            core.settle(theirs, actual, now);
                        }
                    }
                    // Where the period stands for a request of one and of the whole quota,
                    // counted from the caller's `now` as the Redis limiters count it.
                    for cost in [1, quota] {
                        let next = redis.next_n("k", now, cost).await.unwrap();
                        let wait = core.next_n(now, cost);
                        let expected = if wait.is_zero() || wait == Duration::MAX {
                            wait
                        } else {
                            wait + latest.saturating_sub(now)
                        };
                        prop_assert_eq!(next, expected, "next_n({}) after {}", cost, i);
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}

// The units admitted in one period never pass the quota plus the debts settled in it: a
// request estimated at 3 that costs 8, twice, on a quota of 10.
#[tokio::test(flavor = "current_thread")]
async fn a_debt_delays_the_next_request_and_a_refund_makes_room() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let period = Period::new(&store, &common::unique("debt"), 10, Duration::from_secs(60));
    let s = Duration::from_secs;
    let first = period
        .reserve("k", s(0), 3, s(30))
        .await
        .unwrap()
        .value
        .unwrap();
    assert_eq!(first.mode(), Mode::Redis);
    period.settle(first, 8, s(1)).await.unwrap();
    // 8 counted: 2 left.
    assert_eq!(
        period.take_n("k", s(2), 3).await.unwrap().value,
        Quota::Over
    );
    let second = period
        .reserve("k", s(2), 2, s(30))
        .await
        .unwrap()
        .value
        .unwrap();
    // It cost nothing: the 2 come back.
    period.settle(second, 0, s(3)).await.unwrap();
    assert_eq!(period.take_n("k", s(4), 2).await.unwrap().value, Quota::Hit);
    // A settle past its deadline changes nothing.
    let late = period
        .reserve("k", s(61), 5, s(1))
        .await
        .unwrap()
        .value
        .unwrap();
    period.settle(late, 0, s(63)).await.unwrap();
    assert_eq!(
        period.take_n("k", s(63), 6).await.unwrap().value,
        Quota::Over
    );
    assert_eq!(
        period.take_n("k", s(63), 5).await.unwrap().value,
        Quota::Hit
    );
}
