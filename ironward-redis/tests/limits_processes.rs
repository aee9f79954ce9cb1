//! Two processes, eight tasks each, taking from one key of a `Limits` at once: a request of
//! a bucket of 200 that never refills, and 1 to `most` tokens of both a sliding log and a
//! period of 2 000 a minute. Each process is this test binary run again, with its own store
//! and connection; they start together (each says it is ready, then waits for the word to
//! go, both through Redis) and report what they were admitted. Together they never pass a
//! quota, one limit is full at the end, and what Redis holds is exactly what was admitted,
//! limit by limit: every take charged every limit or none, whichever process's script ran
//! in between.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ironward_redis::{Limits, Source};
use ironward_tokio::Quota;
use redis::AsyncCommands;

use common::{Server, unique};

const REQUESTS: f64 = 200.0;
const TOKENS: u32 = 2_000;
const MINUTE: Duration = Duration::from_secs(60);
const TASKS: u64 = 8;
const TAKES: usize = 80;
/// A Unix reading: the period opens at the first take.
const NOW: Duration = Duration::from_secs(1_750_000_000);
/// What a run of this binary as one of the two processes is told: the server's URL, the
/// limits' name, the key, the most tokens a request asks and the process's index.
const CHILD: &str = "IRONWARD_LIMITS_PROCESS";
/// How long either side waits for the other before the test fails.
const PATIENCE: Duration = Duration::from_secs(60);

fn terms() -> [Quota; 3] {
    [
        Quota::bucket(0.0, REQUESTS),
        Quota::sliding(TOKENS, MINUTE),
        Quota::period(TOKENS, MINUTE),
    ]
}

/// Costs from 1 to `most`, a different run for each task of each process (xorshift64).
fn costs(task: u64, most: u32) -> impl Iterator<Item = u32> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (task + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    std::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % u64::from(most)) as u32 + 1
    })
}

#[test]
fn two_processes_of_eight_tasks_charge_every_limit_or_none() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    match std::env::var(CHILD) {
        Ok(told) => runtime.block_on(process(&told)),
        Err(_) => runtime.block_on(both()),
    }
}

/// The test itself: a server, the two processes on each of two keys, and what Redis holds.
async fn both() {
    let server = Server::start();
    let name = unique("processes");
    // Tokens of 1 to 30 run out first: exactly the 2 000, the requests uncharged past them.
    let (requests, tokens) = run(&server, &name, "k", 30).await;
    assert_eq!(tokens, TOKENS, "{requests} requests");
    assert!(f64::from(requests) < REQUESTS);
    // Tokens of 1 to 5 do not: exactly the 200 requests, the tokens uncharged past them.
    let (requests, tokens) = run(&server, &name, "small", 5).await;
    assert_eq!(f64::from(requests), REQUESTS);
    assert!(tokens < TOKENS, "{tokens} tokens");
}

/// Starts the two processes on `key`, lets them go together, and checks what they were
/// admitted against the quotas and against what Redis holds.
async fn run(server: &Server, name: &str, key: &str, most: u32) -> (u32, u32) {
    let test = "limits_processes::two_processes_of_eight_tasks_charge_every_limit_or_none";
    let children: Vec<_> = (0..2)
        .map(|index| {
            Command::new(std::env::current_exe().unwrap())
                .args([test, "--exact", "--nocapture", "--test-threads", "1"])
                .env(
                    CHILD,
                    format!("{} {name} {key} {most} {index}", server.url()),
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("this test binary runs again")
        })
        .collect();
    let mut conn = server.conn().await;
    let lists = [format!("{name}:{key}:ready"), format!("{name}:{key}:go")];
    for _ in 0..2 {
        let ready: Option<(String, String)> =
            conn.blpop(&lists[0], PATIENCE.as_secs_f64()).await.unwrap();
        assert!(ready.is_some(), "a process did not get ready");
    }
    let _: () = conn.rpush(&lists[1], &[1, 1]).await.unwrap();
    let start = Instant::now();
    let (mut requests, mut tokens) = (0, 0);
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "a process failed: {:?}",
            output.status
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        // The harness prints the test's name on the line the test's output begins.
        let line = stdout
            .lines()
            .find_map(|line| line.split_once("admitted ").map(|(_, said)| said))
            .expect("the process says what it was admitted");
        let (r, t) = line.split_once(' ').unwrap();
        requests += r.parse::<u32>().unwrap();
        tokens += t.parse::<u32>().unwrap();
    }
    assert!(start.elapsed() < 2 * PATIENCE);
    assert!(f64::from(requests) <= REQUESTS, "{requests} requests");
    assert!(tokens <= TOKENS, "{tokens} tokens");
    // 1 280 takes fill one limit: no request of `most` tokens passes any more.
    let store = server.store(common::EVERY_CALL).await;
    let limits = Limits::new(&store, name, &terms());
    let most = f64::from(most);
    let full = limits.peek(key, NOW, &[1.0, most, most]).await.unwrap();
    assert!(full.is_err(), "{requests} requests, {tokens} tokens");
    // Never a partial take: Redis holds exactly what was admitted, limit by limit.
    let part = |part: &str| format!("{{{name}:{key}}}.{part}");
    let left: String = conn.get(part("b0")).await.unwrap();
    assert_eq!(left.parse::<f64>().unwrap(), REQUESTS - f64::from(requests));
    let entries: Vec<Vec<u8>> = conn.lrange(part("l1"), 0, -1).await.unwrap();
    let logged: f64 = entries
        .iter()
        .map(|entry| f64::from_le_bytes(entry[8..16].try_into().unwrap()))
        .sum();
    assert_eq!(logged, f64::from(tokens));
    let period: Vec<u8> = conn.get(part("p2")).await.unwrap();
    let counted = f64::from_le_bytes(period[..8].try_into().unwrap());
    assert_eq!(counted, f64::from(tokens));
    (requests, tokens)
}

/// One of the two processes: its own store, eight tasks taking `TAKES` times each once the
/// word to go comes, and a line saying the requests and tokens it was admitted.
async fn process(told: &str) {
    let told: Vec<&str> = told.split(' ').collect();
    let [url, name, key, most, index] = told[..] else {
        panic!("{CHILD} holds a URL, a name, a key, a cost and an index");
    };
    let (most, index): (u32, u64) = (most.parse().unwrap(), index.parse().unwrap());
    let store = ironward_redis::Store::connect(url, common::PATIENT)
        .await
        .unwrap();
    let limits = Limits::new(&store, name, &terms());
    let client = redis::Client::open(url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = conn.rpush(format!("{name}:{key}:ready"), 1).await.unwrap();
    let go: Option<(String, String)> = conn
        .blpop(format!("{name}:{key}:go"), PATIENCE.as_secs_f64())
        .await
        .unwrap();
    assert!(go.is_some(), "no word to go");
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (limits, key) = (limits.clone(), key.to_owned());
            tokio::spawn(async move {
                let (mut requests, mut tokens) = (0u32, 0u32);
                for asked in costs(index * TASKS + task, most).take(TAKES) {
                    let cost = f64::from(asked);
                    let answer = limits.take(&key, NOW, &[1.0, cost, cost]).await.unwrap();
                    assert_eq!(answer.source, Source::Redis);
                    if answer.admitted() {
                        requests += 1;
                        tokens += asked;
                    }
                }
                (requests, tokens)
            })
        })
        .collect();
    let (mut requests, mut tokens) = (0, 0);
    for task in tasks {
        let (r, t) = tokio::time::timeout(PATIENCE, task)
            .await
            .expect("the tasks finish")
            .unwrap();
        requests += r;
        tokens += t;
    }
    println!("admitted {requests} {tokens}");
}
