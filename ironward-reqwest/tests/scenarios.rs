//! The middleware over real HTTP: the twelve scenarios of the MoonBit package `http_retry`'s
//! HTTP simulation and its negative control, the rows it leaves out (an empty idempotency key,
//! a `Retry-After` that is not UTF-8, a budget that runs out while waiting), a retry budget
//! draining under a failing server, a shared breaker, transport failures, and deadlines that
//! hold against a server that never answers. Each runs against a server on a free 127.0.0.1
//! port that the test starts and stops, and asserts what the server saw (requests, the gaps
//! between them, operations performed) as well as what the client got.
//!
//! Most scenarios run on a manual clock ([`instant`]): a sleep on it moves it forward at once,
//! so their waits take no real time and the record's waits are exact. Those that prove a real
//! wait (the server sees the gap) use tokio's clock with short waits (a 20 ms base delay
//! unless a scenario needs more; scenario 1 waits 1 s, scenario 10 up to 2 s, the deadline
//! scenarios 3 s). Lower bounds on gaps are asserted only where the protocol guarantees them
//! (the client sleeps at least the decided wait after the server answered); upper bounds are
//! generous, for a loaded 2-core machine. Every scenario is bounded by [`bounded`].

#[path = "scenarios/deadlines.rs"]
mod deadlines;
#[path = "scenarios/guards.rs"]
mod guards;
#[path = "scenarios/responses.rs"]
mod responses;
#[path = "scenarios/server.rs"]
mod server;
#[path = "scenarios/transport.rs"]
mod transport;

use std::future::Future;
use std::time::Duration;

use ironward::http_retry::Settings;
use ironward_reqwest::{Clock, Dice, Retried, RetryMiddleware};
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};

/// The longest any one scenario may take.
const SCENARIO_LIMIT: Duration = Duration::from_secs(30);

/// Slack for upper bounds on a gap: scheduling on a loaded machine, never the protocol.
const SLACK: Duration = Duration::from_secs(2);

/// Short waits: 3 retries, 20 ms doubling, the MoonBit package's 30 s cap, a 20 s budget
/// keeping 100 ms.
fn fast() -> Settings {
    Settings {
        max_retries: 3,
        base_delay: Duration::from_millis(20),
        max_delay: Duration::from_secs(30),
        total_budget: Duration::from_secs(20),
        request_reserve: Duration::from_millis(100),
    }
}

/// A middleware without jitter, so that each wait is the backoff ceiling exactly, on tokio's
/// clock: its waits are real.
fn exact(settings: Settings) -> RetryMiddleware {
    RetryMiddleware::new(settings).with_dice(Dice::from_fn(|| 1.0))
}

/// [`exact`] on a manual clock starting at zero, returned with it: the waits take no real time
/// and move the clock by exactly what was decided.
fn instant(settings: Settings) -> (RetryMiddleware, Clock) {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    (exact(settings).with_clock(clock.clone()), clock)
}

/// A client with `middleware`, each attempt bounded at 5 s by reqwest.
fn client(middleware: RetryMiddleware) -> ClientWithMiddleware {
    let reqwest = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    ClientBuilder::new(reqwest).with(middleware).build()
}

/// The record the middleware left on a response.
fn retried(response: &reqwest::Response) -> Retried {
    *response
        .extensions()
        .get::<Retried>()
        .expect("every response carries a Retried")
}

/// Runs a scenario, failing it if it takes longer than [`SCENARIO_LIMIT`].
async fn bounded<F: Future>(scenario: F) -> F::Output {
    tokio::time::timeout(SCENARIO_LIMIT, scenario)
        .await
        .expect("the scenario finished in time")
}

/// Whether `gap` is at least `floor` and at most `floor` plus the slack.
fn about(gap: Duration, floor: Duration) -> bool {
    gap >= floor && gap < floor + SLACK
}
