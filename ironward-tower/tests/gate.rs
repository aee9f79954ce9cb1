//! `GateLayer`: a concurrency limit that refuses at once, over real TCP.

#[cfg(feature = "axum")]
use crate::common;

#[cfg(feature = "axum")]
mod over_http {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::{Duration, Instant};

    use axum::Router;
    use axum::error_handling::HandleErrorLayer;
    use axum::routing::get;
    use ironward_tower::GateLayer;
    use reqwest::StatusCode;
    use tokio::sync::watch;
    use tokio::task::JoinSet;

    use super::common::{Server, client};

    /// The limit, and how many requests past it arrive while it is full.
    const SERVED: u32 = 10;
    const REFUSED: u32 = 6;

    // A gated route under N + k concurrent requests serves N and refuses k at once. The
    // admitted handlers hold their room until every refusal has been answered, so exactly
    // N are admitted whatever the scheduling, and a refusal that arrives while they still
    // hold it cannot have waited for room: it was answered at once. The requests alternate
    // between two routes under one layer, each on its own connection: one limit for both.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_gated_app_serves_its_limit_and_refuses_the_rest_at_once() {
        let (release, released) = watch::channel(false);
        let entered = Arc::new(AtomicU32::new(0));
        let handler = {
            let entered = Arc::clone(&entered);
            move || {
                let entered = Arc::clone(&entered);
                let mut released = released.clone();
                async move {
                    entered.fetch_add(1, Ordering::SeqCst);
                    released.wait_for(|go| *go).await.expect("test alive");
                    "served"
                }
            }
        };
        let gate = GateLayer::new(SERVED);
        let app = Router::new()
            .route("/a", get(handler.clone()))
            .route("/b", get(handler))
            .layer((
                HandleErrorLayer::new(ironward_tower::axum::handle_error),
                gate.clone(),
            ));
        let server = Server::start(app).await;
        let client = client();

        let start = Instant::now();
        let mut answers = JoinSet::new();
        for i in 0..SERVED + REFUSED {
            let request = client.get(server.url(if i % 2 == 0 { "/a" } else { "/b" }));
            answers.spawn(async move {
                let response = request.send().await.expect("an answer");
                (response.status(), start.elapsed())
            });
        }

        let mut slowest_refusal = Duration::ZERO;
        for _ in 0..REFUSED {
            let (status, at) = answers
                .join_next()
                .await
                .expect("a task")
                .expect("no panic");
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
            slowest_refusal = slowest_refusal.max(at);
        }
        assert_eq!(
            gate.held(),
            SERVED,
            "every admitted request still holds its room"
        );

        release.send(true).expect("handlers waiting");
        let mut served = 0;
        while let Some(answer) = answers.join_next().await {
            let (status, _) = answer.expect("no panic");
            assert_eq!(status, StatusCode::OK);
            served += 1;
        }
        assert_eq!(served, SERVED);
        assert_eq!(entered.load(Ordering::SeqCst), SERVED);
        assert_eq!(gate.held(), 0, "every room given back");
        eprintln!(
            "{REFUSED} refusals answered within {slowest_refusal:?} of the first request, \
             all served in {:?}",
            start.elapsed()
        );
    }

    // Room comes back as requests finish: after a full round, a second one is served whole.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn room_comes_back_when_responses_are_sent() {
        let gate = GateLayer::new(2);
        let app = Router::new().route("/", get(|| async { "ok" })).layer((
            HandleErrorLayer::new(ironward_tower::axum::handle_error),
            gate.clone(),
        ));
        let server = Server::start(app).await;
        let client = client();
        for _ in 0..20 {
            let response = client.get(server.url("/")).send().await.expect("an answer");
            assert_eq!(response.status(), StatusCode::OK);
        }
        assert_eq!(gate.held(), 0);
    }
}
