//! The "blocked until" memory against a real Redis: a hot key over its quota is refused
//! from memory until it could pass, with no round trip, each such answer counted, and the
//! calls admitted exactly those of a store that remembers nothing.

use crate::common;

use std::time::Duration;

use ironward::Usage;
use ironward_redis::{Bucket, Period, Sliding, Source};

use common::{PATIENT, Server};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The same calls through a store that remembers refusals and one that does not: what each
/// admitted, and how many calls reached Redis.
#[tokio::test(flavor = "current_thread")]
async fn a_period_refuses_a_hot_key_from_memory_and_admits_what_redis_would() {
    let server = Server::start();
    let remembering = server.store(PATIENT).await;
    let forgetting = server.store(common::EVERY_CALL).await;
    let (a, b) = (common::unique("hot"), common::unique("hot"));
    let (with, without) = (
        Period::new(&remembering, &a, 3, Duration::from_secs(10)),
        Period::new(&forgetting, &b, 3, Duration::from_secs(10)),
    );
    let mut admitted = [0, 0];
    // 200 calls 100 ms apart: two periods of 10 s, three admitted in each.
    for i in 0..200 {
        let now = Duration::from_secs(1_000) + ms(100 * i);
        let x = with.take("k", now).await.unwrap();
        let y = without.take("k", now).await.unwrap();
        assert_eq!(x.value, y.value, "call {i}");
        assert_eq!(x.next, y.next, "call {i}: the same wait");
        assert_eq!(x.source, Source::Redis);
        admitted[0] += u32::from(x.value != Usage::Over);
        admitted[1] += u32::from(y.value != Usage::Over);
    }
    assert_eq!(admitted, [6, 6]);
    let (remembered, forgot) = (remembering.stats(), forgetting.stats());
    assert_eq!(forgot.redis, 200);
    assert_eq!(forgot.blocked, 0);
    // Each period: three admitted and the first refusal went to Redis; the rest were
    // answered from memory.
    assert_eq!(remembered.redis, 8, "{remembered:?}");
    assert_eq!(remembered.blocked, 192, "{remembered:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_log_and_a_bucket_are_refused_from_memory_only_for_the_same_cost() {
    let server = Server::start();
    let store = server.store(PATIENT).await;
    let log = Sliding::new(&store, &common::unique("log"), 2, Duration::from_secs(1));
    let t = Duration::from_secs(500);
    assert!(log.take("k", t).await.unwrap().value);
    assert!(log.take("k", t + ms(100)).await.unwrap().value);
    let refused = log.take("k", t + ms(200)).await.unwrap();
    assert_eq!((refused.value, refused.next), (false, ms(800)));
    let again = log.take("k", t + ms(500)).await.unwrap();
    assert_eq!((again.value, again.next), (false, ms(500)));
    assert_eq!((store.stats().redis, store.stats().blocked), (3, 1));
    // At the instant the first entry leaves, the call goes to Redis and passes.
    assert!(log.take("k", t + ms(1000)).await.unwrap().value);
    assert_eq!(store.stats().redis, 4);

    // A bucket of 10 tokens, 1 a second: 8 taken, then 5 refused (2 there, 3 s short).
    let bucket = Bucket::new(&store, &common::unique("bucket"), 1.0, 10.0);
    assert!(bucket.take("k", t, 8.0).await.unwrap().value);
    let refused = bucket.take("k", t, 5.0).await.unwrap();
    assert_eq!(
        (refused.value, refused.next),
        (false, Duration::from_secs(3))
    );
    let before = store.stats();
    // The same cost: from memory. Another: to Redis, which refuses 6 and admits 2.
    let same = bucket.take("k", t + ms(500), 5.0).await.unwrap();
    assert_eq!((same.value, same.next), (false, ms(2500)));
    let dear = bucket.take("k", t + ms(500), 6.0).await.unwrap();
    assert_eq!((dear.value, dear.next), (false, ms(3500)));
    assert!(bucket.take("k", t + ms(500), 2.0).await.unwrap().value);
    let after = store.stats();
    assert_eq!(
        (after.blocked - before.blocked, after.redis - before.redis),
        (1, 2)
    );
}

// A period's `take` is told when the period ends and `take_n` when the cost would pass: a
// refusal of one is never the other's answer. On a quota of 0, `take` hears the period's
// end and `take_n(1)` never, from Redis and then from memory alike.
#[tokio::test(flavor = "current_thread")]
async fn a_period_remembers_take_and_take_n_apart() {
    let server = Server::start();
    let store = server.store(PATIENT).await;
    let limit = Period::new(&store, &common::unique("zero"), 0, Duration::from_secs(10));
    let t = Duration::from_secs(100);
    let end = |i: u64| Duration::from_secs(10) - ms(i);
    // take, take (from memory), take_n, take_n (from memory), take (the memory now holds
    // take_n's refusal, so Redis answers).
    for (i, costs) in [false, false, true, true, false].into_iter().enumerate() {
        let i = i as u64;
        let answer = if costs {
            limit.take_n("k", t + ms(i), 1).await.unwrap()
        } else {
            limit.take("k", t + ms(i)).await.unwrap()
        };
        let wait = if costs { Duration::MAX } else { end(i) };
        assert_eq!((answer.value, answer.next), (Usage::Over, wait), "call {i}");
    }
    let stats = store.stats();
    assert_eq!((stats.redis, stats.blocked), (3, 2), "{stats:?}");
}
