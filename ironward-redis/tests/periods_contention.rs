//! Two processes' worth of callers on one key of a `Periods`: two stores, each its own
//! connection, eight tasks on each, taking "200 requests a minute" at a cost of 1 and
//! "2 000 tokens a minute" at costs of 1 to 30, all in one minute. What each limit admitted
//! never passes its quota, and what Redis holds is exactly what was admitted, limit by
//! limit: every take charged both limits or neither, however the scripts interleaved.
//! Once with the tokens running out first, and once, at 1 to 5 tokens, with the requests.

use crate::common;

use std::time::Duration;

use ironward_redis::{Periods, Source, Term};
use redis::AsyncCommands;

use common::{Server, unique};

const REQUESTS: u32 = 200;
const TOKENS: u32 = 2_000;
const TASKS: u64 = 8;
const TAKES: usize = 80;
/// A Unix reading: one minute's period opens at the first take.
const NOW: Duration = Duration::from_secs(1_750_000_000);

/// The count a `.p<i>` key holds: the first little-endian double of its 24 bytes.
async fn count(server: &Server, key: String) -> f64 {
    let mut conn = server.conn().await;
    let bytes: Vec<u8> = conn.get(&key).await.unwrap();
    assert_eq!(bytes.len(), 24, "{key}");
    f64::from_le_bytes(bytes[..8].try_into().unwrap())
}

/// Costs from 1 to `most`, a different run for each task (xorshift64).
fn costs(task: u64, most: u32) -> impl Iterator<Item = u32> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (task + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    std::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % u64::from(most)) as u32 + 1
    })
}

/// Sixteen tasks on two stores take `TAKES` times each for `key`, each asking 1 request and
/// 1 to `most` tokens; the requests and tokens admitted.
async fn hammer(server: &Server, name: &str, key: &'static str, most: u32) -> (u32, u32) {
    let terms = [
        Term::new(REQUESTS, Duration::from_secs(60)),
        Term::new(TOKENS, Duration::from_secs(60)),
    ];
    let mut tasks = Vec::new();
    let mut first = None;
    for process in 0..2 {
        let store = server.store(common::PATIENT).await;
        let limits = Periods::new(&store, name, &terms);
        first.get_or_insert_with(|| limits.clone());
        for task in 0..TASKS {
            let limits = limits.clone();
            tasks.push(tokio::spawn(async move {
                let (mut requests, mut tokens) = (0u32, 0u32);
                for asked in costs(process * TASKS + task, most).take(TAKES) {
                    let answer = limits.take(key, NOW, &[1, asked]).await.unwrap();
                    assert_eq!(answer.source, Source::Redis);
                    if answer.admitted() {
                        requests += 1;
                        tokens += asked;
                    }
                }
                (requests, tokens)
            }));
        }
    }
    let (mut requests, mut tokens) = (0, 0);
    for task in tasks {
        let (r, t) = tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("the tasks finish")
            .unwrap();
        requests += r;
        tokens += t;
    }
    assert!(requests <= REQUESTS, "{requests} requests admitted");
    assert!(tokens <= TOKENS, "{tokens} tokens admitted");
    // 1 280 takes fill one limit: no more request of `most` tokens passes.
    let full = first.unwrap().peek(key, NOW, &[1, most]).await.unwrap();
    assert!(
        full.is_err(),
        "{requests} requests, {tokens} tokens: {full:?}"
    );
    assert!(requests == REQUESTS || tokens > TOKENS - most);
    // Never a partial take: Redis holds exactly what was admitted, limit by limit.
    let count = |i| count(server, format!("{{{name}:{key}}}.p{i}"));
    assert_eq!(count(0).await, f64::from(requests));
    assert_eq!(count(1).await, f64::from(tokens));
    (requests, tokens)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_takes_charge_every_limit_or_none() {
    let server = Server::start();
    let name = unique("contended");
    // Tokens of 1 to 30 run out first: the token limit refuses, the requests stay uncharged.
    let (requests, tokens) = hammer(&server, &name, "k", 30).await;
    assert_eq!(tokens, TOKENS, "{requests} requests");
    assert!(requests < REQUESTS);
    // Tokens of 1 to 5 do not: the request limit refuses, the tokens stay uncharged.
    let (requests, tokens) = hammer(&server, &name, "small", 5).await;
    assert_eq!(requests, REQUESTS);
    assert!(tokens < TOKENS, "{tokens} tokens");
}
