//! A flaky `async fn` behind a retry, a breaker, a timeout and a fallback, on the real clock,
//! in about three seconds:
//!
//! ```sh
//! cargo run -p ironward-tokio --example call
//! ```
//!
//! The backend answers at first, then hangs (the timeout cuts each attempt), then fails fast;
//! the retry tries each call again after 50 ms, within 400 ms; after three failures in a row
//! the classic breaker opens, and its refusals are not retried: the calls are answered by the
//! fallback without reaching the backend; after its open wait one probe goes through, finds
//! the backend back, and closes it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ironward::classic::{Classic, OpenWait, Record};
use ironward::retry::Rules;
use ironward::{BACKOFF, Backoff, CLASSIC, Jitter};
use ironward_tokio::call::{Breaker, CallError, Fallback, Retry, Timeout};
use tokio::time::Instant;

/// The backend: up for half a second, hanging until 1.2 s, failing until 2 s, then up.
async fn price(start: Instant) -> Result<f64, String> {
    let t = start.elapsed();
    if t < Duration::from_millis(500) || t >= Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Ok(101.5)
    } else if t < Duration::from_millis(1200) {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(0.0)
    } else {
        Err("backend error 503".to_string())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let policy = Classic {
        record: Record::Consecutive { failures: 3 },
        open: OpenWait::Fixed(Duration::from_millis(800)),
        probes: 1,
        ..CLASSIC
    };
    let breaker = Breaker::new(policy).with_name("prices");
    let timeout = Timeout::new(Duration::from_millis(200)).with_name("prices");
    // Two attempts, 50 ms apart, all within 400 ms.
    let rules = Rules {
        total_budget: Duration::from_millis(400),
        ..Rules::new(Backoff {
            base: Duration::from_millis(50),
            attempts: 2,
            jitter: Jitter::Rigid,
            ..BACKOFF
        })
    };
    let retry = Retry::new(rules).with_name("prices");
    let retries = AtomicU32::new(0);
    // Every error, the breaker's refusal or the call's own, is answered with the last price.
    let fallback = Fallback::from_fn(|error| Ok((99.0, format!("fallback: {error}"))));

    let start = Instant::now();
    let (mut live, mut answered) = (0, 0);
    while start.elapsed() < Duration::from_secs(3) {
        let asked = start.elapsed();
        let Ok((price, how)) = fallback
            .call(|| {
                retry
                    .call(|| {
                        breaker.call(|| {
                            timeout.call(|| async {
                                price(start).await.map(|price| (price, "live".to_string()))
                            })
                        })
                    })
                    // The backend's failures and timeouts, not the breaker's refusals.
                    .when(|error: &CallError<_, _>| error.is_failed())
                    .notify(|_: &CallError<_, _>, _| {
                        retries.fetch_add(1, Ordering::Relaxed);
                    })
            })
            .await
        else {
            unreachable!("the fallback answers every error");
        };
        if how == "live" {
            live += 1;
        } else {
            answered += 1;
        }
        let state = breaker.state().map_or("-", |state| state.as_str());
        println!(
            "{:>5.2}s  {price:>6.1}  breaker {state:<9}  {how}",
            asked.as_secs_f64()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let retries = retries.into_inner();
    println!("{live} live answers, {answered} from the fallback, {retries} retries");
}
