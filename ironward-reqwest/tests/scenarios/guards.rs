//! The shared guards under a failing server: the retry budget stops retries while first
//! attempts go on, and the breaker refuses attempts before they reach the server.

use std::sync::Arc;

use ironward::http_retry::StopReason;
use ironward::{SRE, SharedBudget};
use ironward_reqwest::{ClientBreaker, Dice, Stop};

use crate::scenarios::server::{Reply, Server};
use crate::scenarios::{bounded, client, fast, instant, retried};

/// Sends one GET and returns the requests it caused on the server and why the middleware
/// stopped.
async fn call(
    client: &reqwest_middleware::ClientWithMiddleware,
    server: &Server,
) -> (usize, Option<Stop>) {
    let before = server.count();
    let response = client.get(server.url("/")).send().await.unwrap();
    (server.count() - before, retried(&response).stop)
}

// gRPC A6 retry throttling over HTTP, with A6's example budget (10 tokens, 0.1 back per
// success). Against a server that always fails, the first call makes all its retries (10 →
// 6 tokens), after which every call is a single request: it still goes out, its failure takes
// a token, and the budget, at or below half, forbids the retry. Once the server recovers,
// successes refill the budget and retries resume.
#[tokio::test]
async fn a_draining_budget_stops_retries_but_not_first_attempts() {
    bounded(async {
        let server = Server::start(vec![Reply::status(503)]).await;
        let budget = Arc::new(SharedBudget::new(10, 0.1));
        let client = client(instant(fast()).0.with_budget(Arc::clone(&budget)));
        let tokens = || budget.tokens();

        let mut per_call = Vec::new();
        for _ in 0..5 {
            per_call.push(call(&client, &server).await);
        }
        let attempts =
            |calls: &[(usize, Option<Stop>)]| calls.iter().map(|c| c.0).collect::<Vec<_>>();
        assert_eq!(attempts(&per_call), [4, 1, 1, 1, 1], "requests per call");
        assert_eq!(
            per_call[0].1,
            Some(Stop::Decided(StopReason::AttemptsExhausted))
        );
        assert!(per_call[1..].iter().all(|c| c.1 == Some(Stop::Throttled)));
        assert_eq!(tokens(), 2.0);
        println!(
            "budget drained: requests per call {:?}, {} tokens",
            attempts(&per_call),
            tokens()
        );

        // The server recovers: 45 successes give back 4.5 tokens.
        server.rescript(vec![Reply::status(200)]);
        for _ in 0..45 {
            assert_eq!(call(&client, &server).await, (1, None));
        }
        assert_eq!(tokens(), 6.5);

        // It fails again: the first failure leaves 5.5, above half, so one retry is made;
        // its failure leaves 4.5, and the next retry is throttled.
        server.rescript(vec![Reply::status(503)]);
        assert_eq!(call(&client, &server).await, (2, Some(Stop::Throttled)));
        assert_eq!(tokens(), 4.5);
    })
    .await;
}

// A budget shared by two clients (one per task, say) is one budget: what one drains, the
// other cannot retry on.
#[tokio::test]
async fn clients_sharing_a_budget_throttle_together() {
    bounded(async {
        let server = Server::start(vec![Reply::status(503)]).await;
        let budget = Arc::new(SharedBudget::new(4, 0.1));
        let first = client(instant(fast()).0.with_budget(Arc::clone(&budget)));
        let second = client(instant(fast()).0.with_budget(Arc::clone(&budget)));
        // 4 → 3 → 2: the first client's one retry, then it is throttled.
        assert_eq!(call(&first, &server).await, (2, Some(Stop::Throttled)));
        assert_eq!(call(&second, &server).await, (1, Some(Stop::Throttled)));
    })
    .await;
}

// Google SRE client-side throttling over HTTP: under a server that always fails, the breaker
// refuses a growing share of attempts, and a refused attempt never reaches the server. A call
// whose first attempt is refused ends in a `GaveUp` with no attempts; one whose retry is
// refused returns its failed response marked `Refused`.
#[tokio::test]
async fn a_shared_breaker_keeps_refused_attempts_off_the_server() {
    bounded(async {
        let server = Server::start(vec![Reply::status(503)]).await;
        let breaker = ClientBreaker::new(SRE).with_dice(Dice::seeded(11));
        let settings = ironward::http_retry::Settings {
            max_retries: 1,
            base_delay: std::time::Duration::from_millis(1),
            ..fast()
        };
        let client = client(instant(settings).0.with_breaker(breaker.clone()));

        let (mut sent, mut refused_first) = (0, 0);
        for _ in 0..60 {
            match client.get(server.url("/")).send().await {
                Ok(response) => {
                    let record = retried(&response);
                    assert_eq!(response.status(), 503);
                    assert!(matches!(
                        record.stop,
                        Some(Stop::Refused | Stop::Decided(StopReason::AttemptsExhausted))
                    ));
                    sent += record.attempts as usize;
                }
                Err(err) => {
                    let gave_up = ironward_reqwest::gave_up(&err).expect("the middleware's error");
                    assert_eq!(gave_up.stop(), Stop::Refused);
                    assert_eq!(gave_up.retried().attempts, 0);
                    assert!(gave_up.error().is_none());
                    refused_first += 1;
                }
            }
        }
        assert_eq!(server.count(), sent, "every attempt sent, and only those, arrived");
        assert!(refused_first > 20, "refused {refused_first} of 60 first attempts");
        assert!(breaker.ratio() > 0.5, "ratio {}", breaker.ratio());
        println!(
            "breaker: {sent} requests reached the server for 60 calls, {refused_first} calls refused outright, ratio {:.2}",
            breaker.ratio()
        );
    })
    .await;
}
