//! What a client whose clock is skewed does to a shared key, under each clock option.
//!
//! Three clients share one key of a period limiter (one event a minute): one on time, one
//! whose clock runs a minute ahead, one a minute behind. Under `Time::Caller` the reading
//! ahead moves the key forward for everyone (a second event in the same real minute, and
//! everyone's wait running to the end of the period the skewed reading opened), and the
//! reading behind is read as the
//! latest seen (it frees nothing). Under `Time::Server` Redis's `TIME` decides and the skew
//! changes nothing.

use crate::common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ironward::Usage;
use ironward_redis::{Options, Period, Sliding, Source, Time};
use redis::AsyncCommands;

use common::Server;

const MINUTE: Duration = Duration::from_secs(60);

/// The Unix clock, in whole microseconds as the scripts keep it.
fn unix_now() -> Duration {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    Duration::from_micros(now.as_micros() as u64)
}

#[tokio::test]
async fn with_the_callers_clock_a_client_ahead_moves_the_key_forward_for_everyone() {
    let server = Server::start();
    let store = server.store(Options::default()).await;
    let limit = Period::new(&store, "caller", 1, MINUTE);
    let on_time = unix_now();
    let ahead = on_time + MINUTE;
    let behind = on_time - MINUTE;

    let take = |now| {
        let limit = limit.clone();
        async move { limit.take("k", now).await.unwrap() }
    };
    assert_eq!(take(on_time).await.value, Usage::Hit);
    assert_eq!(take(on_time).await.value, Usage::Over);
    // A minute ahead, the period that opened on time has ended: a second event admitted
    // in the same real minute. The skew is what the fleet over-admits.
    let skewed = take(ahead).await;
    assert_eq!((skewed.value, skewed.next), (Usage::Hit, MINUTE));
    // The client on time is now read at the latest reading seen, a minute ahead: refused,
    // and told, on its own clock, to wait until the period opened there ends: two minutes.
    let refused = take(on_time).await;
    assert_eq!((refused.value, refused.next), (Usage::Over, 2 * MINUTE));
    assert_eq!(limit.next("k", on_time).await.unwrap(), 2 * MINUTE);
    // A client behind is read as the latest seen too: it frees nothing.
    assert_eq!(take(behind).await.value, Usage::Over);
    assert_eq!(refused.source, Source::Redis);
}

#[tokio::test]
async fn with_redis_time_a_skewed_client_clock_changes_nothing() {
    let server = Server::start();
    let options = Options {
        time: Time::Server,
        ..Options::default()
    };
    let store = server.store(options).await;
    let limit = Period::new(&store, "server", 1, MINUTE);
    let on_time = unix_now();

    let hit = limit.take("k", on_time).await.unwrap();
    assert_eq!(hit.value, Usage::Hit);
    for skewed in [on_time + MINUTE, on_time - MINUTE, Duration::ZERO, on_time] {
        let answer = limit.take("k", skewed).await.unwrap();
        assert_eq!(answer.value, Usage::Over, "a client at {skewed:?}");
        // The wait is counted on Redis's clock: what is left of the minute.
        assert!(answer.next <= MINUTE && answer.next > MINUTE - Duration::from_secs(10));
    }
    let wait = limit.next("k", Duration::ZERO).await.unwrap();
    assert!(wait <= MINUTE && wait > MINUTE - Duration::from_secs(10));
}

// The script reads `TIME` and stores its reading: whole microseconds on Redis's clock.
#[tokio::test]
async fn with_redis_time_the_scripts_keep_redis_readings() {
    let server = Server::start();
    let options = Options {
        time: Time::Server,
        ..Options::default()
    };
    let store = server.store(options).await;
    let limit = Sliding::new(&store, "readings", 2, MINUTE);
    assert!(limit.take("k", Duration::ZERO).await.unwrap().admitted());

    let mut conn = server.conn().await;
    let (seconds, micros): (u64, u64) = redis::cmd("TIME").query_async(&mut conn).await.unwrap();
    let stored: u64 = conn.get("{readings:k}.ts").await.unwrap();
    let redis_now = seconds * 1_000_000 + micros;
    assert!(
        stored <= redis_now && redis_now - stored < 10_000_000,
        "{stored} {redis_now}"
    );
}
