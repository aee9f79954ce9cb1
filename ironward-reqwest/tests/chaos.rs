//! `ChaosMiddleware` over real HTTP, against a server on a free 127.0.0.1 port that counts
//! the requests it serves: a seeded run of 500 requests replays the core's decisions request
//! by request, a retry in front sees the injected faults and retries them, shadow and off
//! inject nothing, and an abort ends at the request's timeout. Latencies and aborted waits
//! run on a manual clock unless a test proves a real wait; every wait is bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use ironward::chaos::{self, Chaos, ChaosError, Delay, Fault, Injected, Injection, Injector};
use ironward::http_retry::Settings;
use ironward_reqwest::{
    CHAOS_HEADER, ChaosAborted, ChaosMiddleware, Clock, Dice, Retried, RetryMiddleware, SharedChaos,
};
use reqwest::StatusCode;
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};
use tokio::task::JoinHandle;

/// The longest any one test may take.
const LIMIT: Duration = Duration::from_secs(60);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A server answering every request `200 ok`, counting them; dropping it stops it.
struct Server {
    url: String,
    hits: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Server {
    async fn start() -> Self {
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&hits);
        let app = Router::new().fallback(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { "ok" }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { url, hits, task }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Every fault, 40 % of requests in all; a latency of 10 to 50 ms.
fn mixed() -> Chaos {
    let latency = Fault::Latency(Delay::Uniform {
        low: ms(10),
        high: ms(50),
    });
    Chaos {
        enabled: true,
        shadow: false,
        faults: [Fault::Error, latency, Fault::Abort, Fault::Replace]
            .into_iter()
            .map(|fault| Injection { fault, rate: 0.1 })
            .collect(),
    }
}

/// `fault` on the share `rate` of requests.
fn only(fault: Fault, rate: f64) -> Chaos {
    Chaos {
        enabled: true,
        shadow: false,
        faults: vec![Injection { fault, rate }],
    }
}

/// Draws `script` in turn, then 0.99 for ever.
fn scripted(script: Vec<f64>) -> Dice {
    let at = AtomicU32::new(0);
    Dice::from_fn(move || {
        let i = at.fetch_add(1, Ordering::Relaxed) as usize;
        script.get(i).copied().unwrap_or(0.99)
    })
}

/// A client whose only middleware is `chaos`.
fn client(chaos: ChaosMiddleware) -> ClientWithMiddleware {
    ClientBuilder::new(reqwest::Client::new())
        .with(chaos)
        .build()
}

/// A client with `retry` in front of the chaos middleware: each attempt the retry sends
/// asks `chaos` for its fault, and the retry sees what it injects.
fn after_retry(retry: RetryMiddleware, chaos: &SharedChaos) -> ClientWithMiddleware {
    ClientBuilder::new(reqwest::Client::new())
        .with(retry)
        .with(ChaosMiddleware::new(chaos.clone()))
        .build()
}

/// Runs `test` within [`LIMIT`].
async fn bounded<T>(test: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, test)
        .await
        .expect("the test ran past its limit")
}

/// What one request was seen to do, from outside: its fault's label and, for a latency, the
/// wait before sending.
type Seen = Option<(&'static str, Option<Duration>)>;

#[tokio::test]
async fn a_seeded_run_of_500_requests_replays_the_cores_decisions() {
    bounded(async {
        let server = Server::start().await;
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let chaos = SharedChaos::new(mixed()).unwrap().with_seed(42);
        let middleware = ChaosMiddleware::new(chaos.clone()).with_clock(clock.clone());
        let client = client(middleware);
        let mut log: Vec<Seen> = Vec::new();
        for _ in 0..500 {
            let (start, before) = (clock.now(), server.hits());
            // A timeout of its own, for an abort to end on (on the manual clock: at once).
            let answer = client.get(&server.url).timeout(ms(30_000)).send().await;
            let (took, sent) = (clock.now() - start, server.hits() - before);
            let seen = match (answer, sent) {
                (Ok(response), 1) if response.status() == 200 => {
                    assert!(response.headers().get(CHAOS_HEADER).is_none());
                    assert_eq!(response.text().await.unwrap(), "ok");
                    (!took.is_zero()).then_some(("latency", Some(took)))
                }
                (Ok(response), sent) => {
                    let marked = response.headers()[CHAOS_HEADER]
                        .to_str()
                        .unwrap()
                        .to_owned();
                    let injected = *response.extensions().get::<Injected>().unwrap();
                    match (response.status().as_u16(), marked.as_str(), sent) {
                        (503, "error", 0) => assert_eq!(injected.fault, Fault::Error),
                        (500, "replace", 1) => assert_eq!(injected.fault, Fault::Replace),
                        other => panic!("no fault answers {other:?}"),
                    }
                    Some((injected.fault.label(), None))
                }
                (Err(error), 0) => {
                    let reqwest_middleware::Error::Middleware(inner) = &error else {
                        panic!("{error}")
                    };
                    let aborted = inner.downcast_ref::<ChaosAborted>().unwrap();
                    assert_eq!((aborted.timeout(), took), (ms(30_000), ms(30_000)));
                    Some(("abort", None))
                }
                (other, sent) => panic!("no fault does this: {other:?}, {sent} sent"),
            };
            log.push(seen);
        }
        let injector = Injector::new(mixed()).unwrap();
        let want: Vec<Seen> = (0..500)
            .map(|i| {
                injector
                    .decide(chaos::draw(42, i))
                    .map(|injected| (injected.fault.label(), injected.delay))
            })
            .collect();
        assert_eq!(log, want);
        for label in ["error", "latency", "abort", "replace"] {
            assert!(log.iter().flatten().any(|s| s.0 == label), "{label} shows");
        }
        let sent = log
            .iter()
            .filter(|s| !matches!(s, Some(("error" | "abort", _))))
            .count();
        assert_eq!((server.hits(), chaos.requests()), (sent, 500));
    })
    .await;
}

/// A retry of 3 retries on a manual clock, so that its waits take no time.
fn retry(clock: &Clock) -> RetryMiddleware {
    RetryMiddleware::new(Settings {
        max_retries: 3,
        ..Settings::default()
    })
    .with_clock(clock.clone())
    .with_dice(Dice::from_fn(|| 1.0))
}

#[tokio::test]
async fn the_retry_in_front_retries_an_injected_error_and_succeeds() {
    bounded(async {
        let server = Server::start().await;
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        // The first attempt draws an error, the second nothing.
        let chaos = SharedChaos::new(only(Fault::Error, 0.5))
            .unwrap()
            .with_dice(scripted(vec![0.0, 0.5]));
        let client = after_retry(retry(&clock), &chaos);
        let response = client.get(&server.url).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert!(response.headers().get(CHAOS_HEADER).is_none());
        let retried = *response.extensions().get::<Retried>().unwrap();
        assert_eq!((retried.attempts, retried.stop), (2, None));
        assert_eq!(
            (server.hits(), chaos.requests()),
            (1, 2),
            "the error was never sent"
        );
    })
    .await;
}

#[tokio::test]
async fn the_retrys_attempt_timeout_cuts_an_abort_and_retries_it() {
    bounded(async {
        let server = Server::start().await;
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let chaos = SharedChaos::new(only(Fault::Abort, 0.5))
            .unwrap()
            .with_dice(scripted(vec![0.0, 0.5]));
        let client = after_retry(retry(&clock).with_attempt_timeout(ms(200)), &chaos);
        let start = Instant::now();
        let response = client.get(&server.url).send().await.unwrap();
        assert!(
            start.elapsed() >= ms(200),
            "the abort held until it was cut"
        );
        assert_eq!(response.status(), 200);
        let retried = *response.extensions().get::<Retried>().unwrap();
        assert_eq!(retried.attempts, 2);
        assert_eq!((server.hits(), chaos.requests()), (1, 2));
    })
    .await;
}

#[tokio::test]
async fn a_replaced_response_is_retried_as_a_500_is() {
    bounded(async {
        let server = Server::start().await;
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let chaos = SharedChaos::new(only(Fault::Replace, 1.0)).unwrap();
        let client = after_retry(retry(&clock), &chaos);
        let response = client.get(&server.url).send().await.unwrap();
        assert_eq!(response.status(), 500);
        assert_eq!(response.headers()[CHAOS_HEADER], "replace");
        assert_eq!(response.url().as_str(), server.url);
        let retried = *response.extensions().get::<Retried>().unwrap();
        assert_eq!(retried.attempts, 4);
        assert_eq!(server.hits(), 4, "each replaced attempt was sent");
    })
    .await;
}

#[tokio::test]
async fn an_error_answers_the_status_it_is_given_without_sending() {
    bounded(async {
        let server = Server::start().await;
        let chaos = SharedChaos::new(only(Fault::Error, 1.0)).unwrap();
        let middleware =
            ChaosMiddleware::new(chaos).with_error_status(StatusCode::TOO_MANY_REQUESTS);
        let client = client(middleware);
        let response = client.get(&server.url).send().await.unwrap();
        assert_eq!(response.status(), 429);
        assert_eq!(response.headers()[CHAOS_HEADER], "error");
        assert_eq!(response.text().await.unwrap(), "");
        assert_eq!(server.hits(), 0);
    })
    .await;
}

#[tokio::test]
async fn shadow_and_off_inject_nothing() {
    bounded(async {
        let server = Server::start().await;
        for policy in [
            Chaos {
                shadow: true,
                ..mixed()
            },
            Chaos {
                enabled: false,
                ..mixed()
            },
        ] {
            let (clock, _hand) = Clock::manual(Duration::ZERO);
            let chaos = SharedChaos::new(policy).unwrap().with_seed(42);
            let middleware = ChaosMiddleware::new(chaos.clone()).with_clock(clock.clone());
            let client = client(middleware);
            let before = server.hits();
            for _ in 0..100 {
                let response = client.get(&server.url).send().await.unwrap();
                assert_eq!(response.status(), 200);
                assert!(response.headers().get(CHAOS_HEADER).is_none());
            }
            assert_eq!(server.hits() - before, 100);
            assert_eq!((clock.now(), chaos.requests()), (Duration::ZERO, 100));
        }
    })
    .await;
}

#[tokio::test]
async fn a_bad_policy_is_refused_and_the_one_in_force_stays() {
    let over = Chaos {
        faults: vec![
            Injection {
                fault: Fault::Error,
                rate: 0.6,
            },
            Injection {
                fault: Fault::Abort,
                rate: 0.6,
            },
        ],
        ..mixed()
    };
    assert!(matches!(
        SharedChaos::new(over.clone()),
        Err(ChaosError::Total { .. })
    ));
    let middleware = ChaosMiddleware::new(SharedChaos::new(Chaos::default()).unwrap());
    assert!(middleware.chaos().retune(over).is_err());
    assert_eq!(middleware.chaos().policy(), Chaos::default());
}

#[tokio::test]
async fn an_abort_ends_at_the_requests_timeout() {
    bounded(async {
        let server = Server::start().await;
        let chaos = SharedChaos::new(only(Fault::Abort, 1.0)).unwrap();
        let client = client(ChaosMiddleware::new(chaos));
        let start = Instant::now();
        let error = client
            .get(&server.url)
            .timeout(ms(300))
            .send()
            .await
            .unwrap_err();
        let took = start.elapsed();
        assert!(took >= ms(300) && took < ms(10_000), "{took:?}");
        let reqwest_middleware::Error::Middleware(inner) = &error else {
            panic!("{error}")
        };
        assert_eq!(
            inner.downcast_ref::<ChaosAborted>(),
            Some(&ChaosAborted::new(ms(300)))
        );
        // Without a timeout it never answers: still pending when the caller gives up.
        let hung = tokio::time::timeout(ms(300), client.get(&server.url).send()).await;
        assert!(hung.is_err());
        assert_eq!(server.hits(), 0, "an abort is never sent");
    })
    .await;
}
