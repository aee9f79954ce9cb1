//! `reserve` and `settle` of `Period`, `Bucket` and `Sliding` against a real Redis, one
//! case at a time: the debts and refunds that bound what is admitted (each the core type's
//! documented example, in Redis), and the hostile inputs (estimates of 0 and past the limit,
//! deadlines to the microsecond, another limiter's reservation, a clock stepping back, the
//! memory of refusals, Redis gone between a reservation and its settle), one test each.
//! `tests/reservations.rs` holds the random sequences against the core.

use crate::common;

use std::time::Duration;

use ironward::Usage;
use ironward_redis::{Bucket, Period, Sliding, Source};

use common::Server;

const SECOND: Duration = Duration::from_secs(1);
/// A Unix reading, in whole seconds.
const NOW: Duration = Duration::from_secs(1_750_000_000);

fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}

// The units admitted in one period never pass the quota plus the debts settled in it: a
// request estimated at 3 that costs 8, twice, on a quota of 10.
#[tokio::test(flavor = "current_thread")]
async fn a_debt_delays_the_next_request_and_a_refund_makes_room() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let period = Period::new(&store, &common::unique("debt"), 10, Duration::from_secs(60));
    let first = period
        .reserve("k", s(0), 3, s(30))
        .await
        .unwrap()
        .value
        .unwrap();
    assert_eq!(first.source(), Source::Redis);
    period.settle(first, 8, s(1)).await.unwrap();
    // 8 counted: 2 left.
    assert_eq!(
        period.take_n("k", s(2), 3).await.unwrap().value,
        Usage::Over
    );
    let second = period
        .reserve("k", s(2), 2, s(30))
        .await
        .unwrap()
        .value
        .unwrap();
    // It cost nothing: the 2 come back.
    period.settle(second, 0, s(3)).await.unwrap();
    assert_eq!(period.take_n("k", s(4), 2).await.unwrap().value, Usage::Hit);
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
        Usage::Over
    );
    assert_eq!(
        period.take_n("k", s(63), 5).await.unwrap().value,
        Usage::Hit
    );
}

// `ironward::Bucket::settle`'s example, in Redis: a debt takes the tokens below zero,
// refuses even a cost of 0 until it is paid, and keeps the keys alive until it is.
#[tokio::test(flavor = "current_thread")]
async fn a_bucket_debt_refuses_until_paid_and_keeps_its_keys_alive() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let name = common::unique("bucket-debt");
    let bucket = Bucket::new(&store, &name, 10.0, 100.0);
    let reservation = bucket
        .reserve("k", NOW, 50.0, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    // 80 more than the estimate, and the bucket held only 50: 30 in debt.
    bucket.settle(reservation, 130.0, NOW).await.unwrap();
    let zero = bucket.take("k", NOW, 0.0).await.unwrap();
    assert_eq!((zero.value, zero.next), (false, Duration::from_secs(3)));
    assert_eq!(
        bucket.next("k", NOW, 1.0).await.unwrap(),
        Duration::from_millis(3_100)
    );
    assert!(bucket.take("k", NOW + 3 * SECOND, 0.0).await.unwrap().value);
    // A debt of a million tokens: the keys live twice its refill to full (200 000 s, about 55.6 h),
    // not twice a refill from empty (20 s), so that expiry never forgives it.
    let deep = bucket
        .reserve("deep", NOW, 0.0, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    bucket.settle(deep, 1e6, NOW).await.unwrap();
    let mut conn = server.conn().await;
    for part in ["tokens", "ts"] {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(format!("{{{name}:deep}}.{part}"))
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!((199_000_000..=200_000_000).contains(&ttl), "{part}: {ttl}");
    }
    let tokens: String = redis::cmd("GET")
        .arg(format!("{{{name}:deep}}.tokens"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(tokens.parse::<f64>().unwrap(), 100.0 - 1e6);
    // Still in debt an hour on, admitted once it is paid: (1e6 - 100) / 10 s from NOW.
    assert!(
        !bucket
            .take("deep", NOW + s(3_600), 0.0)
            .await
            .unwrap()
            .value
    );
    assert!(
        bucket
            .take("deep", NOW + s(99_990), 0.0)
            .await
            .unwrap()
            .value
    );
}

// `ironward::Sliding::settle`'s example, in Redis: a refund within the window comes back
// at once, one after the estimate has left changes nothing, a debt holds the window for a
// window from the settle.
#[tokio::test(flavor = "current_thread")]
async fn a_log_refund_makes_room_at_once_and_a_debt_holds_a_window() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let tokens = Sliding::new(&store, &common::unique("log"), 1_000, s(60));
    let early = tokens
        .reserve("k", NOW, 600, s(120))
        .await
        .unwrap()
        .value
        .unwrap();
    let late = tokens
        .reserve("k", NOW, 400, s(120))
        .await
        .unwrap()
        .value
        .unwrap();
    tokens.settle(early, 100, NOW + s(30)).await.unwrap();
    assert_eq!(
        tokens.next_n("k", NOW + s(30), 500).await.unwrap(),
        Duration::ZERO
    );
    assert_eq!(tokens.next_n("k", NOW + s(30), 501).await.unwrap(), s(30));
    tokens.settle(late, 0, NOW + s(90)).await.unwrap();
    assert_eq!(
        tokens.next_n("k", NOW + s(90), 1_000).await.unwrap(),
        Duration::ZERO
    );
    // 700 estimated, 1 100 used: 400 more, stamped at the settle.
    let third = tokens
        .reserve("k", NOW + s(90), 700, s(10))
        .await
        .unwrap()
        .value
        .unwrap();
    assert!(
        tokens
            .reserve("k", NOW + s(91), 400, s(10))
            .await
            .unwrap()
            .value
            .is_none()
    );
    tokens.settle(third, 1_100, NOW + s(92)).await.unwrap();
    assert_eq!(tokens.next_n("k", NOW + s(92), 1).await.unwrap(), s(58));
    assert_eq!(tokens.next_n("k", NOW + s(92), 601).await.unwrap(), s(60));
}

// A refund rewrites every entry pushed after the estimate's: 2 500 of them (three chunks
// of the script's pushes), and the log still answers as the core's.
#[tokio::test(flavor = "current_thread")]
async fn a_refund_behind_many_entries_keeps_the_running_sums() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let redis = Sliding::new(&store, &common::unique("long"), 10_000, s(60));
    let mut core = ironward::Sliding::new(10_000, s(60));
    let ours = redis
        .reserve("k", NOW, 5_000, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    let theirs = core.reserve(NOW, 5_000, s(60)).unwrap();
    for i in 1..=2_500u64 {
        let now = NOW + Duration::from_millis(i);
        let cost = (i % 3) as u32;
        assert_eq!(
            redis.take_n("k", now, cost).await.unwrap().value,
            core.take_n(now, cost)
        );
    }
    let now = NOW + s(10);
    redis.settle(ours, 1_234, now).await.unwrap();
    core.settle(theirs, 1_234, now);
    for (at, cost) in [(10, 1), (10, 6_000), (10, 7_000), (50, 9_000), (60, 9_999)] {
        let now = NOW + s(at);
        assert_eq!(
            redis.next_n("k", now, cost).await.unwrap(),
            core.next_n(now, cost),
            "{cost} at {at} s"
        );
    }
    assert_eq!(core.left(now), 10_000 - 1_234 - 2_500);
}

// Estimates of 0 pass (a reservation of nothing, whose settle may still charge a debt), and
// ones that never fit are refused as never, taking nothing.
#[tokio::test(flavor = "current_thread")]
async fn estimates_of_zero_pass_and_estimates_past_the_limit_are_refused_as_never() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let log = Sliding::new(&store, &common::unique("zero"), 10, s(60));
    let full = log.reserve("k", NOW, 10, s(60)).await.unwrap();
    assert_eq!(full.next, s(60));
    let zero = log.reserve("k", NOW, 0, s(60)).await.unwrap();
    let zero = zero.value.expect("a cost of 0 passes a full window");
    assert_eq!(zero.estimate(), 0.0);
    // It cost 3: a debt past the quota, so nothing passes until the window has let go of
    // the 10 and the 3 (a cost of 0 neither).
    log.settle(zero, 3, NOW + s(1)).await.unwrap();
    let refused = log.take_n("k", NOW + s(2), 0).await.unwrap();
    assert_eq!((refused.value, refused.next), (false, s(58)));
    let max = log.reserve("k", NOW, u32::MAX, s(60)).await.unwrap();
    assert_eq!((max.value.is_none(), max.next), (true, Duration::MAX));

    let bucket = Bucket::new(&store, &common::unique("zero"), 1.0, 5.0);
    for cost in [f64::from(u32::MAX), f64::MAX, f64::INFINITY, f64::NAN, -1.0] {
        let answer = bucket.reserve("k", NOW, cost, s(60)).await.unwrap();
        assert_eq!(
            (answer.value.is_none(), answer.next),
            (true, Duration::MAX),
            "{cost}"
        );
    }
    // None of them took anything: the whole burst is there, and a reservation of 0 passes.
    let five = bucket
        .reserve("k", NOW, 5.0, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    let zero = bucket
        .reserve("k", NOW, 0.0, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    // An actual cost that is none leaves the estimate standing.
    bucket.settle(five, f64::NAN, NOW).await.unwrap();
    bucket.settle(zero, -1.0, NOW).await.unwrap();
    assert_eq!(bucket.next("k", NOW, 1.0).await.unwrap(), SECOND);
}

// A settle counts up to the deadline, the time-out rounded down to whole microseconds, as
// the core's `at + timeout` in nanoseconds: a time-out of 0 at the same reading only.
#[tokio::test(flavor = "current_thread")]
async fn a_settle_counts_up_to_its_deadline_and_no_later() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let log = Sliding::new(&store, &common::unique("deadline"), 10, s(60));
    let micro = Duration::from_micros(1);
    let now = log
        .reserve("k", NOW, 4, Duration::ZERO)
        .await
        .unwrap()
        .value
        .unwrap();
    log.settle(now, 0, NOW).await.unwrap();
    let late = log
        .reserve("k", NOW, 4, Duration::from_nanos(1_999))
        .await
        .unwrap()
        .value
        .unwrap();
    log.settle(late, 0, NOW + 2 * micro).await.unwrap();
    // The first refund counted, the second came a microsecond past its deadline.
    assert_eq!(log.next_n("k", NOW, 6).await.unwrap(), Duration::ZERO);
    assert_eq!(log.next_n("k", NOW, 7).await.unwrap(), s(60));

    let bucket = Bucket::new(&store, &common::unique("deadline"), 0.0, 10.0);
    let on_time = bucket
        .reserve("k", NOW, 4.0, SECOND)
        .await
        .unwrap()
        .value
        .unwrap();
    bucket.settle(on_time, 0.0, NOW + SECOND).await.unwrap();
    // The settle moved the clock to NOW + 1 s: the next reservation is taken there.
    let late = bucket
        .reserve("k", NOW + SECOND, 4.0, SECOND)
        .await
        .unwrap()
        .value
        .unwrap();
    bucket
        .settle(late, 0.0, NOW + 2 * SECOND + micro)
        .await
        .unwrap();
    // A dropped reservation keeps its estimate too.
    drop(
        bucket
            .reserve("k", NOW, 2.0, SECOND)
            .await
            .unwrap()
            .value
            .unwrap(),
    );
    assert!(bucket.take("k", NOW + s(9), 4.0).await.unwrap().value);
    assert!(!bucket.take("k", NOW + s(9), 0.5).await.unwrap().value);

    // A period's too: with a time-out of 0, a refund a microsecond late is refused, as the
    // core refuses it (a deadline rounded up would have let it count).
    let period = Period::new(&store, &common::unique("deadline"), 10, s(60));
    let mut core = ironward::Period::new(10, s(60));
    let ours = period
        .reserve("k", NOW, 6, Duration::ZERO)
        .await
        .unwrap()
        .value
        .unwrap();
    let theirs = core.reserve(NOW, 6, Duration::ZERO).unwrap();
    period.settle(ours, 0, NOW + micro).await.unwrap();
    core.settle(theirs, 0, NOW + micro);
    assert_eq!(core.next_n(NOW + micro, 5), s(60) - micro);
    assert_eq!(
        period.next_n("k", NOW + micro, 5).await.unwrap(),
        s(60) - micro
    );
}

// A reservation settled on a limiter that did not make it changes nothing, with no round
// trip: not a bucket of the same name, not a log given a period's.
#[tokio::test(flavor = "current_thread")]
async fn another_limiters_reservation_changes_nothing() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let name = common::unique("foreign");
    let (ours, other) = (
        Bucket::new(&store, &name, 0.0, 10.0),
        Bucket::new(&store, &name, 0.0, 10.0),
    );
    let reservation = ours
        .reserve("k", NOW, 8.0, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    let before = store.stats().redis;
    other.settle(reservation, 0.0, NOW).await.unwrap();
    assert_eq!(store.stats().redis, before, "no round trip");
    assert!(!ours.take("k", NOW, 3.0).await.unwrap().value, "no refund");

    let period = Period::new(&store, &name, 10, s(60));
    let log = Sliding::new(&store, &name, 10, s(60));
    let reservation = period
        .reserve("k", NOW, 10, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    log.settle(reservation, 50, NOW).await.unwrap();
    assert_eq!(
        log.next_n("k", NOW, 10).await.unwrap(),
        Duration::ZERO,
        "no debt"
    );
    // A clone is the same limiter: its settle counts.
    let reservation = ours
        .reserve("j", NOW, 8.0, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    ours.clone().settle(reservation, 0.0, NOW).await.unwrap();
    assert!(ours.take("j", NOW, 10.0).await.unwrap().value);
}

// A clock that steps back between a reservation and its settle is read as the latest seen:
// the refund lands on the estimate's entry, and nothing is freed by the step.
#[tokio::test(flavor = "current_thread")]
async fn a_settle_on_a_clock_stepping_back_is_read_at_the_latest_reading() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let log = Sliding::new(&store, &common::unique("back"), 10, s(10));
    let reservation = log.reserve("k", NOW, 8, s(5)).await.unwrap().value.unwrap();
    log.settle(reservation, 2, NOW - s(30)).await.unwrap();
    // 2 counted at NOW: 8 fit, 9 wait for it to leave, 10 s from NOW, 40 s on this clock.
    assert_eq!(
        log.next_n("k", NOW - s(30), 8).await.unwrap(),
        Duration::ZERO
    );
    assert_eq!(log.next_n("k", NOW - s(30), 9).await.unwrap(), s(40));

    let bucket = Bucket::new(&store, &common::unique("back"), 1.0, 10.0);
    let reservation = bucket
        .reserve("k", NOW, 10.0, s(5))
        .await
        .unwrap()
        .value
        .unwrap();
    // The debt is charged at NOW, not at a reading before it: no refill for the step.
    bucket.settle(reservation, 12.0, NOW - s(3)).await.unwrap();
    assert_eq!(bucket.next("k", NOW - s(3), 0.0).await.unwrap(), s(5));
}

// A refund forgets the refusal this process remembers for the key, so the room it makes is
// used at once; a debt keeps it.
#[tokio::test(flavor = "current_thread")]
async fn a_refund_forgets_a_remembered_refusal_and_a_debt_keeps_it() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let log = Sliding::new(&store, &common::unique("memory"), 10, s(60));
    let reservation = log
        .reserve("k", NOW, 10, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    assert!(!log.take_n("k", NOW, 5).await.unwrap().value);
    assert!(!log.take_n("k", NOW, 5).await.unwrap().value);
    assert_eq!(store.stats().blocked, 1, "the second refusal from memory");
    log.settle(reservation, 2, NOW).await.unwrap();
    assert!(log.take_n("k", NOW, 5).await.unwrap().value);

    let bucket = Bucket::new(&store, &common::unique("memory"), 1.0, 10.0);
    let reservation = bucket
        .reserve("k", NOW, 10.0, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    assert!(!bucket.take("k", NOW, 1.0).await.unwrap().value);
    bucket.settle(reservation, 11.0, NOW).await.unwrap();
    let remembered = bucket.take("k", NOW, 1.0).await.unwrap();
    assert_eq!((remembered.value, remembered.next), (false, SECOND));
    assert_eq!(store.stats().blocked, 2, "still refused from memory");
    // The memory undercounts the debt's wait; Redis has the whole of it.
    assert_eq!(
        bucket.take("k", NOW + SECOND, 1.0).await.unwrap().next,
        SECOND
    );
}

// A reservation taken on the fallback settles on the fallback, at its share; one taken in
// Redis and settled once Redis is gone is dropped, and its estimate stands.
#[tokio::test(flavor = "current_thread")]
async fn reservations_settle_where_they_were_taken() {
    let mut server = Server::start();
    let store = server
        .store(ironward_redis::Options {
            share: 0.5,
            ..common::EVERY_CALL
        })
        .await;
    let log = Sliding::new(&store, &common::unique("where"), 10, s(60));
    let bucket = Bucket::new(&store, &common::unique("where"), 0.0, 10.0);
    let in_redis = log
        .reserve("k", NOW, 4, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    assert_eq!(in_redis.source(), Source::Redis);
    server.kill();
    // Redis is gone: the settle is dropped, and the fallback is not charged its debt.
    log.settle(in_redis, 9, NOW).await.unwrap();
    assert_eq!(store.source(), Source::Local);
    // The fallback holds half of each: 5 units, 5 tokens.
    let local = log.reserve("k", NOW, 5, s(60)).await.unwrap();
    assert_eq!(local.source, Source::Local);
    let local = local.value.expect("the fallback's 5");
    assert_eq!(local.source(), Source::Local);
    assert!(!log.take_n("k", NOW, 1).await.unwrap().value);
    log.settle(local, 2, NOW).await.unwrap();
    assert!(log.take_n("k", NOW, 3).await.unwrap().value);
    assert!(!log.take_n("k", NOW, 1).await.unwrap().value);

    let tokens = bucket
        .reserve("k", NOW, 5.0, s(60))
        .await
        .unwrap()
        .value
        .unwrap();
    assert_eq!(tokens.source(), Source::Local);
    bucket.settle(tokens, 1.0, NOW).await.unwrap();
    assert!(bucket.take("k", NOW, 4.0).await.unwrap().value);
    assert!(!bucket.take("k", NOW, 0.5).await.unwrap().value);
}
