//! Costs per request on a real server: the forms the state takes in Redis (one packed key
//! for a period, entries with costs for a log), a log an earlier version wrote, and
//! another program's data where the state should be. `tests/equivalence.rs` checks the
//! answers against the core on random costs.

use crate::common;

use std::time::Duration;

use ironward::Usage;
use ironward_redis::{Period, Sliding, Source, StoreError};
use redis::AsyncCommands;

use common::{Server, unique};

const SECOND: Duration = Duration::from_secs(1);

/// A clock reading on the Unix clock, as a fleet passes it.
const NOW: Duration = Duration::from_secs(1_700_000_000);

// A period's whole state is one key of three doubles: count, start, latest.
#[tokio::test]
async fn a_period_keeps_its_count_start_and_latest_in_one_key() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let name = unique("tokens");
    let tokens = Period::new(&store, &name, 100_000, 60 * SECOND);
    let taken = tokens.take_n("alice", NOW, 60_000).await.unwrap();
    // Another 60 000 would not fit before the period ends: `next_n` for the same cost.
    assert_eq!((taken.value, taken.next), (Usage::Under, 60 * SECOND));
    let small = tokens.next_n("alice", NOW, 40_000).await.unwrap();
    assert_eq!(small, Duration::ZERO);
    let refused = tokens.take_n("alice", NOW + SECOND, 50_000).await.unwrap();
    assert_eq!((refused.value, refused.next), (Usage::Over, 59 * SECOND));
    let hit = tokens.take_n("alice", NOW + SECOND, 40_000).await.unwrap();
    assert_eq!((hit.value, hit.next), (Usage::Hit, 59 * SECOND));

    let mut conn = server.conn().await;
    let keys: Vec<String> = conn.keys(format!("{{{name}*")).await.unwrap();
    assert_eq!(keys, [format!("{{{name}:alice}}.period")]);
    let state: Vec<u8> = conn.get(&keys[0]).await.unwrap();
    let numbers = doubles(&state);
    let micros = |d: Duration| d.as_micros() as f64;
    assert_eq!(
        numbers,
        [100_000.0, micros(NOW), micros(NOW + SECOND)],
        "count, start, latest"
    );
    let ttl: i64 = conn.pttl(&keys[0]).await.unwrap();
    assert!(ttl > 110_000 && ttl <= 120_000, "{ttl} ms");
}

// Another program's string where a period's state should be: a key error, as WRONGTYPE
// is for a key of another type, and no failover.
#[tokio::test]
async fn a_period_state_of_another_form_is_a_key_error() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let name = unique("odd");
    let mut conn = server.conn().await;
    let () = conn
        .set(format!("{{{name}:k}}.period"), "12")
        .await
        .unwrap();
    let limit = Period::new(&store, &name, 5, SECOND);
    let err = limit.take_n("k", NOW, 1).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Key { script: "period", code, .. } if code == "WRONGTYPE"),
        "{err:?}"
    );
    let err = limit.next_n("k", NOW, 1).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Key { code, .. } if code == "WRONGTYPE"),
        "{err:?}"
    );
    assert_eq!(
        (store.source(), store.stats().key_errors),
        (Source::Redis, 2)
    );
    // Other keys are counted as ever.
    assert_eq!(limit.take("j", NOW).await.unwrap().value, Usage::Under);
}

// A log's entries carry their cost and a running sum (three doubles), so the units inside
// are one subtraction whatever the costs.
#[tokio::test]
async fn a_log_keeps_each_cost_with_a_running_sum() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let name = unique("log");
    let tokens = Sliding::new(&store, &name, 100, 10 * SECOND);
    assert!(tokens.take_n("k", NOW, 50).await.unwrap().admitted());
    assert!(tokens.take_n("k", NOW, 0).await.unwrap().admitted());
    assert!(tokens.take("k", NOW + 3 * SECOND).await.unwrap().admitted());
    let refused = tokens.take_n("k", NOW + 5 * SECOND, 50).await.unwrap();
    // 51 inside: the 50 leave at 10 s, 5 s on.
    assert_eq!((refused.value, refused.next), (false, 5 * SECOND));
    assert_eq!(
        tokens.next_n("k", NOW + 5 * SECOND, 49).await.unwrap(),
        Duration::ZERO
    );
    assert_eq!(
        tokens.next_n("k", NOW + 5 * SECOND, 101).await.unwrap(),
        Duration::MAX
    );

    let mut conn = server.conn().await;
    let entries: Vec<Vec<u8>> = conn
        .lrange(format!("{{{name}:k}}.log"), 0, -1)
        .await
        .unwrap();
    let micros = |d: Duration| d.as_micros() as f64;
    assert_eq!(
        entries
            .iter()
            .map(|entry| doubles(entry))
            .collect::<Vec<_>>(),
        [
            vec![micros(NOW), 50.0, 50.0],
            vec![micros(NOW + 3 * SECOND), 1.0, 51.0],
        ],
        "stamp, cost, running sum"
    );
}

/// The little-endian doubles `bytes` packs, as the scripts' `struct.pack('<ddd', ...)`.
fn doubles(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|bytes| f64::from_le_bytes(bytes.try_into().unwrap()))
        .collect()
}

// An earlier version kept plain stamps, a cost of 1 each: such a log is read as that, and
// rewritten once in the new form, so a fleet can be upgraded one process at a time.
#[tokio::test]
async fn a_log_of_plain_stamps_is_read_as_a_cost_of_one_each() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let name = unique("old");
    let log = format!("{{{name}:k}}.log");
    let mut conn = server.conn().await;
    let stamps = [NOW, NOW + SECOND, NOW + 2 * SECOND].map(|d| d.as_micros().to_string());
    let () = conn.rpush(&log, &stamps).await.unwrap();
    let () = conn.pexpire(&log, 60_000).await.unwrap();

    let limit = Sliding::new(&store, &name, 5, 10 * SECOND);
    let mut core = ironward::Sliding::new(5, 10 * SECOND);
    for at in [NOW, NOW + SECOND, NOW + 2 * SECOND] {
        assert!(core.take(at));
    }
    let at = NOW + 3 * SECOND;
    // Read-only first: the core's wait for a cost of 3, the oldest stamp leaving at 10 s.
    assert_eq!(limit.next_n("k", at, 3).await.unwrap(), core.next_n(at, 3));
    assert_eq!(core.next_n(at, 3), 7 * SECOND);
    assert_eq!(
        limit.take_n("k", at, 2).await.unwrap().value,
        core.take_n(at, 2)
    );
    let refused = limit.take_n("k", at, 1).await.unwrap();
    assert_eq!(
        (refused.value, refused.next),
        (core.take_n(at, 1), core.next_n(at, 1))
    );
    assert!(!refused.value);

    let entries: Vec<Vec<u8>> = conn.lrange(&log, 0, -1).await.unwrap();
    let sums: Vec<f64> = entries.iter().map(|entry| doubles(entry)[2]).collect();
    assert_eq!(sums, [1.0, 2.0, 3.0, 5.0], "{entries:?}");
    let ttl: i64 = conn.pttl(&log).await.unwrap();
    assert!(ttl > 0, "the rewrite keeps a TTL: {ttl}");
}

// Another program's list where the log should be: its entries are not stamps, a key error.
#[tokio::test]
async fn a_log_of_another_programs_entries_is_a_key_error() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let name = unique("junk");
    let mut conn = server.conn().await;
    let () = conn
        .rpush(format!("{{{name}:k}}.log"), "hello")
        .await
        .unwrap();
    let limit = Sliding::new(&store, &name, 5, SECOND);
    let err = limit.take_n("k", NOW, 1).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Key { script: "sliding", code, .. } if code == "WRONGTYPE"),
        "{err:?}"
    );
    assert_eq!(store.source(), Source::Redis);
}

// The hostile costs: 0 passes and takes nothing; one above the quota, up to `u32::MAX`, is
// refused for good (`Duration::MAX`), and counts as a refusal only once the quota is used
// up (go-zero's rule); a clock that steps back is read as the latest seen. Each answer is
// the core's.
#[tokio::test]
async fn costs_of_zero_and_past_the_quota_answer_as_the_core() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let period = Period::new(&store, &unique("hostile"), 3, 60 * SECOND);
    let mut core_period = ironward::Period::new(3, 60 * SECOND);
    let log = Sliding::new(&store, &unique("hostile"), 3, 60 * SECOND);
    let mut core_log = ironward::Sliding::new(3, 60 * SECOND);
    let steps = [
        (NOW, 0),
        (NOW, u32::MAX),
        (NOW + SECOND, 3),
        (NOW + SECOND, 0),
        (NOW, u32::MAX),
        (NOW - 30 * SECOND, 1),
        (NOW + 61 * SECOND, u32::MAX),
        (NOW + 61 * SECOND, 2),
    ];
    for (i, (at, cost)) in steps.into_iter().enumerate() {
        let answer = period.take_n("k", at, cost).await.unwrap();
        assert_eq!(answer.value, core_period.take_n(at, cost), "period {i}");
        let log_answer = log.take_n("k", at, cost).await.unwrap();
        assert_eq!(log_answer.value, core_log.take_n(at, cost), "log {i}");
        if cost > 3 {
            assert_eq!(
                (answer.next, log_answer.next),
                (Duration::MAX, Duration::MAX)
            );
        }
    }
    // The period opened at 61 s holds the 2: a cost of 0 passes, and one unit more hits.
    assert_eq!(
        period.next_n("k", NOW + 61 * SECOND, 0).await.unwrap(),
        Duration::ZERO
    );
    assert_eq!(core_period.left(NOW + 61 * SECOND), 1);
    let answer = period.take_n("k", NOW + 61 * SECOND, 1).await.unwrap();
    assert_eq!(answer.value, core_period.take_n(NOW + 61 * SECOND, 1));
    assert_eq!(answer.value, Usage::Hit);
}

// The running sums are kept modulo 2^48, so a log busy for ever never leaves the integers
// Lua's doubles hold exactly: the units inside are still the difference across the wrap.
#[tokio::test]
async fn a_logs_running_sum_wraps_without_changing_an_answer() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let name = unique("wrap");
    let mut conn = server.conn().await;
    let micros = |d: Duration| d.as_micros() as f64;
    let packed: Vec<u8> = [micros(NOW), 5.0, (1u64 << 48) as f64 - 3.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let () = conn
        .rpush(format!("{{{name}:k}}.log"), packed)
        .await
        .unwrap();
    let () = conn
        .set(format!("{{{name}:k}}.ts"), NOW.as_micros() as u64)
        .await
        .unwrap();

    let log = Sliding::new(&store, &name, 15, 10 * SECOND);
    let mut core = ironward::Sliding::new(15, 10 * SECOND);
    assert!(core.take_n(NOW, 5));
    let at = NOW + SECOND;
    assert_eq!(
        log.take_n("k", at, 7).await.unwrap().value,
        core.take_n(at, 7)
    );
    let entries: Vec<Vec<u8>> = conn
        .lrange(format!("{{{name}:k}}.log"), 0, -1)
        .await
        .unwrap();
    assert_eq!(
        doubles(&entries[1])[2],
        4.0,
        "past 2^48 the sum starts again"
    );
    for cost in [0, 3, 4, 10, 11, 15, 16] {
        let next = log.next_n("k", at, cost).await.unwrap();
        assert_eq!(next, core.next_n(at, cost), "a cost of {cost}");
    }
    // 12 inside: a cost of 4 waits for the 5 to leave, one of 11 for the 7 too.
    assert_eq!(core.next_n(at, 4), 9 * SECOND);
    assert_eq!(core.next_n(at, 11), 10 * SECOND);
}
