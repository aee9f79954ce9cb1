//! A flaky `async fn` behind one pipeline of a retry, a breaker, a timeout and a fallback, on
//! the real clock, in about three seconds:
//!
//! ```sh
//! cargo run -p ironward-tokio --example call
//! ```
//!
//! The backend answers at first, then hangs (the timeout cuts each attempt), then fails fast;
//! the retry tries each call again after 50 ms, within 400 ms; after three failures in a row
//! the classic breaker opens, and the calls are answered by the fallback without reaching the
//! backend, until the rest of its open wait fits in a call's 400 ms: that call's retry waits
//! it out (the pipeline's default), its probe finds the backend back and closes the breaker.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ironward::classic::{Classic, OpenWait, Record};
use ironward::retry::Rules;
use ironward::{BACKOFF, Backoff, CLASSIC, Jitter};
use ironward_tokio::call::{Breaker, Fallback, Pipeline, PipelineError, Retry, Timeout};
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
    let retries = Arc::new(AtomicU32::new(0));
    let heard = Arc::clone(&retries);
    // The pieces in any order: the pipeline runs them fallback, retry, breaker, timeout. Its
    // retry tries the backend's failures and timeouts again, and a breaker's refusal after
    // the rest of the open wait it names, if that fits.
    let pipeline = Pipeline::builder()
        .breaker(Breaker::new(policy))
        .timeout(Timeout::new(Duration::from_millis(200)))
        .retry(Retry::new(rules))
        .notify(move |_: &PipelineError<String>, _| {
            heard.fetch_add(1, Ordering::Relaxed);
        })
        // Every error, the breaker's refusal or the call's own, is answered with the last price.
        .fallback(Fallback::from_fn(|error: PipelineError<String>| {
            Ok((99.0, format!("fallback: {error}")))
        }))
        .with_name("prices")
        .build();

    let start = Instant::now();
    let (mut live, mut answered) = (0, 0);
    while start.elapsed() < Duration::from_secs(3) {
        let asked = start.elapsed();
        let live_price = || async { price(start).await.map(|price| (price, "live".to_string())) };
        let Ok((price, how)) = pipeline.call(live_price).await else {
            unreachable!("the fallback answers every error");
        };
        if how == "live" {
            live += 1;
        } else {
            answered += 1;
        }
        let state = pipeline
            .breaker()
            .state()
            .map_or("-", |state| state.as_str());
        println!(
            "{:>5.2}s  {price:>6.1}  breaker {state:<9}  {how}",
            asked.as_secs_f64()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let retries = retries.load(Ordering::Relaxed);
    println!("{live} live answers, {answered} from the fallback, {retries} retries");
}
