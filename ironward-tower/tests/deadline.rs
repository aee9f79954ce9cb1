//! `DeadlineLayer`: a per-request time budget, under paused tokio time and over real TCP.

#[cfg(feature = "axum")]
use crate::common;

use std::future::pending;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Request};
use ironward_tower::{DeadlineExceeded, DeadlineLayer, RequestDeadline, grpc_timeout};
use tokio::time::{Instant, advance, sleep};
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A handler that takes `work`, then answers with the deadline it found in its extensions.
fn working(
    work: Duration,
) -> impl Service<Request<()>, Response = Option<RequestDeadline>, Error = BoxError> + Clone {
    service_fn(move |request: Request<()>| async move {
        sleep(work).await;
        Ok(request.extensions().get::<RequestDeadline>().copied())
    })
}

#[tokio::test(start_paused = true)]
async fn a_slow_call_fails_with_deadline_exceeded_exactly_at_its_budget() {
    let start = Instant::now();
    let err = DeadlineLayer::new(ms(300))
        .layer(working(ms(5000)))
        .oneshot(Request::new(()))
        .await
        .unwrap_err();
    assert!(err.is::<DeadlineExceeded>());
    assert_eq!(start.elapsed(), ms(300));
}

#[tokio::test(start_paused = true)]
async fn a_call_within_its_budget_answers_with_the_deadline_in_its_extensions() {
    let start = Instant::now();
    let seen = DeadlineLayer::new(ms(300))
        .layer(working(ms(200)))
        .oneshot(Request::new(()))
        .await
        .unwrap()
        .expect("a deadline in the extensions");
    assert_eq!(start.elapsed(), ms(200));
    assert_eq!(seen.budget(), ms(300));
    assert_eq!(seen.remaining(), Some(ms(100)));
}

// go-zero `rest/handler/timeouthandler.go` and gRPC: a zero timeout is no timeout.
#[tokio::test(start_paused = true)]
async fn a_zero_budget_is_no_deadline() {
    let start = Instant::now();
    let seen = DeadlineLayer::new(Duration::ZERO)
        .layer(working(Duration::from_secs(3600)))
        .oneshot(Request::new(()))
        .await
        .unwrap()
        .expect("a deadline in the extensions");
    assert_eq!(start.elapsed(), Duration::from_secs(3600));
    assert_eq!(seen.remaining(), None);
    assert!(!seen.expired());
}

#[tokio::test(start_paused = true)]
async fn the_handler_sees_its_budget_count_down_on_tokio_time() {
    let handler = service_fn(|request: Request<()>| async move {
        let deadline = *request.extensions().get::<RequestDeadline>().unwrap();
        let at_start = deadline.remaining();
        advance(ms(400)).await;
        Ok::<_, BoxError>((at_start, deadline.remaining()))
    });
    let (at_start, later) = DeadlineLayer::new(ms(1000))
        .layer(handler)
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(at_start, Some(ms(1000)));
    assert_eq!(later, Some(ms(600)));
}

#[tokio::test(start_paused = true)]
async fn a_budget_only_shrinks_through_nested_layers() {
    // The outer layer's second ends first: the inner five seconds cannot lengthen it.
    let start = Instant::now();
    let nested =
        DeadlineLayer::new(ms(1000)).layer(DeadlineLayer::new(ms(5000)).layer(working(ms(3000))));
    assert!(
        nested
            .oneshot(Request::new(()))
            .await
            .unwrap_err()
            .is::<DeadlineExceeded>()
    );
    assert_eq!(start.elapsed(), ms(1000));

    // The inner layer's shorter budget is what the handler sees.
    let nested = DeadlineLayer::new(ms(5000))
        .layer(DeadlineLayer::new(ms(1000)).layer(working(Duration::ZERO)));
    let seen = nested.oneshot(Request::new(())).await.unwrap().unwrap();
    assert_eq!(seen.remaining(), Some(ms(1000)));
}

#[tokio::test(start_paused = true)]
async fn without_the_extension_a_call_is_still_cut_and_an_outer_deadline_still_tightened() {
    let layer = DeadlineLayer::new(ms(300)).with_extension(false);
    // Nothing handed to the handler, which still answers within its budget.
    let seen = layer
        .layer(working(ms(200)))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(seen, None);
    // Cut at the budget, as with the extension.
    let start = Instant::now();
    let err = layer
        .layer(working(ms(5000)))
        .oneshot(Request::new(()))
        .await
        .unwrap_err();
    assert!(err.is::<DeadlineExceeded>());
    assert_eq!(start.elapsed(), ms(300));
    // An outer deadline of 1 s is tightened in place to this layer's 300 ms: the handler
    // sees the shorter one, and the call is cut at it.
    let outer = DeadlineLayer::new(ms(1000));
    let seen = outer
        .layer(layer.layer(working(Duration::ZERO)))
        .oneshot(Request::new(()))
        .await
        .unwrap()
        .expect("the outer layer's deadline");
    assert_eq!(seen.remaining(), Some(ms(300)));
    let start = Instant::now();
    let nested = outer.layer(layer.layer(working(ms(5000))));
    assert!(
        nested
            .oneshot(Request::new(()))
            .await
            .unwrap_err()
            .is::<DeadlineExceeded>()
    );
    assert_eq!(start.elapsed(), ms(300));
}

#[tokio::test(start_paused = true)]
async fn a_spent_deadline_fails_at_once_without_reaching_the_inner_service() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = {
        let calls = Arc::clone(&calls);
        service_fn(move |_: Request<()>| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, BoxError>(()) }
        })
    };
    let mut request = Request::new(());
    request
        .extensions_mut()
        .insert(RequestDeadline::start(ms(100)));
    advance(ms(100)).await;
    let start = Instant::now();
    let err = DeadlineLayer::new(ms(5000))
        .layer(counted)
        .oneshot(request)
        .await
        .unwrap_err();
    assert!(err.is::<DeadlineExceeded>());
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn the_reader_sets_each_budget_and_none_is_no_deadline() {
    let layer = DeadlineLayer::from_request(|head| {
        let header = head.headers.get("x-budget-ms")?.to_str().ok()?;
        header.parse().ok().map(Duration::from_millis)
    });
    let with = Request::builder()
        .header("x-budget-ms", "250")
        .body(())
        .unwrap();
    let seen = layer.layer(working(ms(10))).oneshot(with).await.unwrap();
    assert_eq!(seen.unwrap().budget(), ms(250));

    let without = Request::new(());
    let seen = layer.layer(working(ms(10))).oneshot(without).await.unwrap();
    assert_eq!(seen.unwrap().remaining(), None);
}

#[tokio::test(start_paused = true)]
async fn an_inner_error_passes_through_boxed() {
    let failing = service_fn(|_: Request<()>| async { Err::<(), _>(std::fmt::Error) });
    let err = DeadlineLayer::new(ms(100))
        .layer(failing)
        .oneshot(Request::new(()))
        .await
        .unwrap_err();
    assert!(err.is::<std::fmt::Error>());
}

#[tokio::test(start_paused = true)]
async fn a_response_ready_at_the_deadline_is_delivered() {
    // The inner future is polled before the sleep: a tie goes to the response.
    let err_or_ok = DeadlineLayer::new(ms(300))
        .layer(working(ms(300)))
        .oneshot(Request::new(()))
        .await;
    assert!(err_or_ok.is_ok());
}

/// Sets its flag when dropped.
struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

// As tower's `Timeout`: on expiry the inner call is dropped, which cancels it.
#[tokio::test(start_paused = true)]
async fn on_expiry_the_inner_call_is_dropped() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let never = service_fn(move |_: Request<()>| {
        let flag = Flag(Arc::clone(&flag));
        async move {
            pending::<()>().await;
            drop(flag);
            Ok::<_, BoxError>(())
        }
    });
    let err = DeadlineLayer::new(ms(300))
        .layer(never)
        .oneshot(Request::new(()))
        .await
        .unwrap_err();
    assert!(err.is::<DeadlineExceeded>());
    assert!(dropped.load(Ordering::SeqCst));
}

/// The headers of a request carrying `grpc-timeout: value`.
fn timeout(value: &[u8]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("grpc-timeout", HeaderValue::from_bytes(value).unwrap());
    headers
}

// gRPC over HTTP/2 (grpc/grpc doc/PROTOCOL-HTTP2.md): TimeoutValue is at most 8 ASCII
// digits, TimeoutUnit one of H M S m u n.
#[test]
fn grpc_timeout_reads_the_protocol_format_and_nothing_else() {
    let valid: [(&[u8], Duration); 11] = [
        (b"1H", Duration::from_secs(3600)),
        (b"2M", Duration::from_secs(120)),
        (b"3S", Duration::from_secs(3)),
        (b"4m", ms(4)),
        (b"5u", Duration::from_micros(5)),
        (b"6n", Duration::from_nanos(6)),
        (b"00000007S", Duration::from_secs(7)),
        (b"99999999n", Duration::from_nanos(99_999_999)),
        (b"99999999H", Duration::from_secs(99_999_999 * 3600)),
        // grpc-go sends `0n` for a deadline already passed: the shortest budget, not none.
        (b"0n", Duration::from_nanos(1)),
        (b"0H", Duration::from_nanos(1)),
    ];
    for (value, budget) in valid {
        assert_eq!(grpc_timeout(&timeout(value)), Some(budget), "{value:?}");
    }
    let invalid: [&[u8]; 17] = [
        b"",
        b"S",
        b"5",
        b"5s",
        b"5h",
        b"5x",
        b"5 S",
        b" 5S",
        b"5S ",
        b"+5S",
        b"-5S",
        b"5.0S",
        b"5SS",
        b"123456789n",
        b"1e3m",
        "\u{0665}S".as_bytes(), // an Arabic-Indic five: a digit, not an ASCII one
        b"\xff5S",
    ];
    for value in invalid {
        assert_eq!(grpc_timeout(&timeout(value)), None, "{value:?}");
    }
    assert_eq!(grpc_timeout(&HeaderMap::new()), None);
}

#[test]
fn grpc_timeout_reads_the_first_of_repeated_headers() {
    let mut headers = timeout(b"1S");
    headers.append("grpc-timeout", HeaderValue::from_static("2S"));
    assert_eq!(grpc_timeout(&headers), Some(Duration::from_secs(1)));
}

#[tokio::test(start_paused = true)]
async fn from_grpc_timeout_holds_the_client_budget_to_the_ceiling() {
    async fn budget(layer: &DeadlineLayer, header: Option<&'static str>) -> Duration {
        let mut request = Request::new(());
        if let Some(value) = header {
            request
                .headers_mut()
                .insert("grpc-timeout", HeaderValue::from_static(value));
        }
        let seen = layer.layer(working(Duration::ZERO)).oneshot(request).await;
        seen.unwrap().unwrap().budget()
    }
    let capped = DeadlineLayer::from_grpc_timeout(Duration::from_secs(30));
    assert_eq!(budget(&capped, Some("5S")).await, Duration::from_secs(5));
    assert_eq!(budget(&capped, Some("1H")).await, Duration::from_secs(30));
    assert_eq!(budget(&capped, None).await, Duration::from_secs(30));
    assert_eq!(budget(&capped, Some("5 S")).await, Duration::from_secs(30));

    let uncapped = DeadlineLayer::from_grpc_timeout(Duration::ZERO);
    assert_eq!(
        budget(&uncapped, Some("1H")).await,
        Duration::from_secs(3600)
    );
    assert_eq!(budget(&uncapped, None).await, Duration::ZERO);
}

#[cfg(feature = "axum")]
mod over_http {
    use std::time::{Duration, Instant};

    use axum::error_handling::HandleErrorLayer;
    use axum::routing::get;
    use axum::{Extension, Router};
    use ironward_tower::{DeadlineLayer, RequestDeadline};
    use reqwest::StatusCode;

    use super::common::{Server, client};

    /// An app whose `/slow` never answers, `/fast` answers at once and `/left` answers with
    /// the milliseconds left of its budget, all under `layer`.
    async fn serve(layer: DeadlineLayer) -> Server {
        let app = Router::new()
            .route("/slow", get(std::future::pending::<&'static str>))
            .route("/fast", get(|| async { "fast" }))
            .route(
                "/left",
                get(
                    |Extension(deadline): Extension<RequestDeadline>| async move {
                        deadline
                            .remaining()
                            .map_or_else(|| "none".to_owned(), |left| left.as_millis().to_string())
                    },
                ),
            )
            .layer((
                HandleErrorLayer::new(ironward_tower::axum::handle_error),
                layer,
            ));
        Server::start(app).await
    }

    // A deadline cuts a slow handler and the client sees 504. The handler never answers, so
    // only the deadline can end the request; the timer never fires early.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_deadline_cuts_a_slow_handler_and_the_client_sees_504() {
        let budget = Duration::from_millis(200);
        let server = serve(DeadlineLayer::new(budget)).await;
        let client = client();

        let start = Instant::now();
        let response = client
            .get(server.url("/slow"))
            .send()
            .await
            .expect("an answer");
        let took = start.elapsed();
        assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
        assert!(
            took >= budget,
            "cut after {took:?}, before the {budget:?} budget"
        );

        let response = client
            .get(server.url("/fast"))
            .send()
            .await
            .expect("an answer");
        assert_eq!(response.status(), StatusCode::OK);
        eprintln!("a {budget:?} deadline answered 504 after {took:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_grpc_timeout_header_cuts_a_slow_handler() {
        let server = serve(DeadlineLayer::from_grpc_timeout(Duration::from_secs(30))).await;
        let start = Instant::now();
        let response = client()
            .get(server.url("/slow"))
            .header("grpc-timeout", "150m")
            .send()
            .await
            .expect("an answer");
        assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
        assert!(start.elapsed() >= Duration::from_millis(150));
    }

    // The remaining budget is in the request's extensions, so a handler can pass a shorter
    // one downstream, as gRPC propagates deadlines.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_handler_reads_the_remaining_budget_from_its_extensions() {
        let server = serve(DeadlineLayer::from_grpc_timeout(Duration::from_secs(30))).await;
        let client = client();
        let left = |header: Option<&'static str>| {
            let mut request = client.get(server.url("/left"));
            if let Some(value) = header {
                request = request.header("grpc-timeout", value);
            }
            async move {
                let response = request.send().await.expect("an answer");
                assert_eq!(response.status(), StatusCode::OK);
                let body = response.text().await.expect("a body");
                body.parse::<u64>().expect("milliseconds")
            }
        };
        // What is left is at most the budget and, on any machine, well over half of it.
        let from_header = left(Some("5S")).await;
        assert!((2_500..=5_000).contains(&from_header), "{from_header} ms");
        let capped = left(Some("2H")).await;
        assert!((15_000..=30_000).contains(&capped), "{capped} ms");
        let default = left(None).await;
        assert!((15_000..=30_000).contains(&default), "{default} ms");

        let unbounded = serve(DeadlineLayer::new(Duration::ZERO)).await;
        let body = client
            .get(unbounded.url("/left"))
            .send()
            .await
            .expect("an answer")
            .text()
            .await
            .expect("a body");
        assert_eq!(body, "none");
    }
}

// Shadow mode: the enforcing test above, `a_spent_deadline_fails_at_once_...`, in reverse.
#[tokio::test(start_paused = true)]
async fn a_shadow_deadline_passes_a_spent_request_on_with_its_refusal_in_the_extensions() {
    let handler = service_fn(|request: Request<()>| async move {
        let extensions = request.extensions();
        Ok::<_, BoxError>((
            extensions.get::<DeadlineExceeded>().copied(),
            extensions.get::<RequestDeadline>().copied(),
        ))
    });
    let mut request = Request::new(());
    request
        .extensions_mut()
        .insert(RequestDeadline::start(ms(100)));
    advance(ms(150)).await;
    let layer = DeadlineLayer::new(ms(5000)).with_mode(ironward_tower::Mode::Shadow);
    let (refusal, deadline) = layer.layer(handler).oneshot(request).await.unwrap();
    assert_eq!(refusal, Some(DeadlineExceeded::new()));
    // The spent deadline from further out, not the layer's fresh one.
    let deadline = deadline.unwrap();
    assert_eq!(deadline.budget(), ms(100));
    assert_eq!(deadline.remaining(), Some(Duration::ZERO));
}

#[tokio::test(start_paused = true)]
async fn a_shadow_deadline_cuts_nothing_and_hides_no_inner_error() {
    let layer = DeadlineLayer::new(ms(300)).with_mode(ironward_tower::Mode::Shadow);
    // Past its deadline, and still within it: the handler's own answer either way.
    let seen = layer
        .layer(working(ms(900)))
        .oneshot(Request::new(()))
        .await;
    assert!(seen.unwrap().unwrap().expired());
    let seen = layer
        .layer(working(ms(100)))
        .oneshot(Request::new(()))
        .await;
    assert_eq!(seen.unwrap().unwrap().remaining(), Some(ms(200)));
    let failing = service_fn(|_: Request<()>| async {
        sleep(ms(500)).await;
        Err::<(), _>(std::fmt::Error)
    });
    let err = layer
        .layer(failing)
        .oneshot(Request::new(()))
        .await
        .unwrap_err();
    assert!(err.is::<std::fmt::Error>());
}

// The race's timer is made by the first poll that finds the inner future pending: a call
// answered at once makes none, so it needs no tokio timer at all (here, no runtime).
#[test]
fn a_call_answered_at_once_makes_no_timer() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    let ready = service_fn(|request: Request<()>| {
        std::future::ready(Ok::<_, BoxError>(
            request.extensions().get::<RequestDeadline>().copied(),
        ))
    });
    let mut service = DeadlineLayer::new(ms(300)).layer(ready);
    let mut cx = Context::from_waker(Waker::noop());
    assert!(service.poll_ready(&mut cx).is_ready());
    let mut future = std::pin::pin!(service.call(Request::new(())));
    let Poll::Ready(Ok(Some(seen))) = future.as_mut().poll(&mut cx) else {
        panic!("an answer with the deadline in its extensions");
    };
    assert_eq!(seen.budget(), ms(300));
}

// A timer made late still ends at the deadline the call started: from the instant of the
// call, not of the first poll.
#[tokio::test(start_paused = true)]
async fn a_call_first_polled_late_is_cut_at_its_budget_from_the_call() {
    let start = Instant::now();
    let mut service = DeadlineLayer::new(ms(300)).layer(working(ms(5000)));
    let future = service.ready().await.unwrap().call(Request::new(()));
    advance(ms(200)).await;
    let err = future.await.unwrap_err();
    assert!(err.is::<DeadlineExceeded>());
    assert_eq!(start.elapsed(), ms(300));
}

// A deadline already in the request is replaced by the earlier of the two, and nothing
// else in the extensions is touched.
#[tokio::test(start_paused = true)]
async fn a_later_deadline_in_the_request_gives_way_to_the_layers_and_keeps_its_neighbours() {
    let handler = service_fn(|request: Request<()>| async move {
        let extensions = request.extensions();
        Ok::<_, BoxError>((
            extensions.get::<RequestDeadline>().copied(),
            extensions.get::<&'static str>().copied(),
        ))
    });
    let mut request = Request::new(());
    request
        .extensions_mut()
        .insert(RequestDeadline::start(ms(5000)));
    request.extensions_mut().insert("neighbour");
    let (deadline, neighbour) = DeadlineLayer::new(ms(1000))
        .layer(handler)
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(deadline.unwrap().budget(), ms(1000));
    assert_eq!(neighbour, Some("neighbour"));
}
