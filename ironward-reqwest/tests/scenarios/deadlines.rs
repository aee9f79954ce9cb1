//! Deadlines that hold: against a server that accepts connections and never answers, a call
//! ends by its time budget, whether or not anything else bounds an attempt.
//!
//! These run on tokio's clock, in real time: a 3 s budget keeping 100 ms, and a client without
//! a timeout of its own. A call must end no sooner than its attempts can have run (2 s) and no
//! later than the budget plus scheduling slack (3.5 s, for a loaded 2-core machine).

use std::time::{Duration, Instant};

use ironward::http_retry::{Settings, Stop, StopReason};
use ironward_reqwest::GaveUp;
use reqwest_middleware::ClientBuilder;

use crate::scenarios::transport::Mute;
use crate::scenarios::{bounded, exact, fast};

/// The budget: 3 s in all, 100 ms of it kept for the next attempt.
fn three_seconds() -> Settings {
    Settings {
        total_budget: Duration::from_secs(3),
        request_reserve: Duration::from_millis(100),
        ..fast()
    }
}

/// When the call must have ended: the budget and some slack.
const LATEST: Duration = Duration::from_millis(3500);

/// GETs the never-answering server through a client with no timeout of its own, and returns
/// the middleware's error with how long the call took.
async fn call_mute(
    mute: &Mute,
    middleware: ironward_reqwest::RetryMiddleware,
) -> (GaveUp, Duration) {
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let started = Instant::now();
    let err = client.get(mute.url()).send().await.unwrap_err();
    let elapsed = started.elapsed();
    let reqwest_middleware::Error::Middleware(inner) = err else {
        panic!("not the middleware's error: {err}");
    };
    (inner.downcast::<GaveUp>().expect("a GaveUp"), elapsed)
}

// With a 1 s attempt timeout: the first attempt times out at 1 s and is retried after 20 ms,
// the second at about 2.02 s and is retried after 40 ms, and the third, at about 2.06 s, may
// take only what is left of the budget: it is cut short at 3 s, and the call ends there, with
// three connections on the server.
#[tokio::test]
async fn an_attempt_timeout_retries_within_the_budget() {
    bounded(async {
        let mute = Mute::start(true).await;
        let middleware = exact(three_seconds()).with_attempt_timeout(Duration::from_secs(1));
        let (gave_up, elapsed) = call_mute(&mute, middleware).await;

        assert_eq!(gave_up.stop(), Stop::Decided(StopReason::BudgetExhausted));
        assert!(
            gave_up.error().is_none(),
            "the budget cut it short: no source"
        );
        assert_eq!(gave_up.retried().attempts, 3);
        assert_eq!(gave_up.retried().waited, Duration::from_millis(60));
        assert_eq!(mute.accepts(), 3);
        assert!(elapsed >= Duration::from_secs(2), "ended at {elapsed:?}");
        assert!(elapsed < LATEST, "ended at {elapsed:?}");
        println!("deadlines: 1 s attempt timeout, 3 s budget: 3 attempts, ended at {elapsed:?}");
    })
    .await;
}

// A zero attempt timeout is none, as on the tower edge: the one attempt takes the whole
// budget, where a zero timeout on each attempt would have ended them all at once.
#[tokio::test]
async fn a_zero_attempt_timeout_bounds_no_attempt() {
    bounded(async {
        let mute = Mute::start(true).await;
        let middleware = exact(three_seconds()).with_attempt_timeout(Duration::ZERO);
        let (gave_up, elapsed) = call_mute(&mute, middleware).await;

        assert_eq!(gave_up.stop(), Stop::Decided(StopReason::BudgetExhausted));
        assert_eq!(gave_up.retried().attempts, 1);
        assert_eq!(mute.accepts(), 1);
        assert!(elapsed >= Duration::from_secs(2), "ended at {elapsed:?}");
        assert!(elapsed < LATEST, "ended at {elapsed:?}");
    })
    .await;
}

// Without any timeout, neither the middleware's nor reqwest's: the first attempt may take the
// whole budget, and is cut short at 3 s. One connection, and the call still ends on time.
#[tokio::test]
async fn without_any_timeout_the_budget_still_ends_the_call() {
    bounded(async {
        let mute = Mute::start(true).await;
        let (gave_up, elapsed) = call_mute(&mute, exact(three_seconds())).await;

        assert_eq!(gave_up.stop(), Stop::Decided(StopReason::BudgetExhausted));
        assert!(gave_up.error().is_none());
        assert_eq!(gave_up.retried().attempts, 1);
        assert_eq!(gave_up.retried().waited, Duration::ZERO);
        assert_eq!(mute.accepts(), 1);
        assert!(elapsed >= Duration::from_secs(2), "ended at {elapsed:?}");
        assert!(elapsed < LATEST, "ended at {elapsed:?}");
        println!("deadlines: no timeout, 3 s budget: 1 attempt, ended at {elapsed:?}");
    })
    .await;
}
