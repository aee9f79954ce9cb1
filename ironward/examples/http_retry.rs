//! The MoonBit package `http_retry`'s three scenarios, decided by `ironward::http_retry`.
//!
//! Each describes a failed response completely (status, method, replay safety, retry index,
//! time elapsed, raw `Retry-After` values and the wall clock) and prints the decision. Nothing
//! is sent and nothing sleeps: the decisions are pure.
//!
//! ```text
//! cargo run -p ironward --example http_retry
//! ```

use std::time::Duration;

use ironward::http_retry::{Attempt, Decision, Settings, decide_response};

fn main() {
    let settings = Settings::default();
    // Wall-clock time, used only to read HTTP-dates: 2023-11-14T22:13:20Z.
    let now_unix = 1_700_000_000;
    let get = Attempt {
        method: "GET",
        status: 503,
        retry_index: 0,
        elapsed: Duration::from_millis(100),
        body_replayable: true,
        replay_safe: false,
        sample_ppm: 1_000_000,
    };

    let scenarios: [(&str, Attempt<'_>, &[&str]); 3] = [
        // 429 Too Many Requests with Retry-After: 5, and a full-jitter sample of zero: the
        // jitter may shorten the client's delay, never the server's minimum.
        (
            "rate-limited GET",
            Attempt {
                status: 429,
                sample_ppm: 0,
                ..get
            },
            &["5"],
        ),
        // A POST the server deduplicates by idempotency key, answered 503 without
        // Retry-After: the base delay.
        (
            "deduplicated POST",
            Attempt {
                method: "POST",
                replay_safe: true,
                ..get
            },
            &[],
        ),
        // 100 s of the 120 s budget gone: 20 s left cannot hold Retry-After: 20 plus the 1 s
        // reserve for the retry itself.
        (
            "deadline exhausted",
            Attempt {
                elapsed: Duration::from_secs(100),
                ..get
            },
            &["20"],
        ),
    ];

    for (name, request, retry_after) in scenarios {
        match decide_response(&settings, &request, retry_after, now_unix) {
            Decision::Wait(delay) => println!("{name}: wait {} ms", delay.as_millis()),
            Decision::Stop(reason) => println!("{name}: stop ({reason})"),
        }
    }
}
