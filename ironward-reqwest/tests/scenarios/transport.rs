//! Transport failures: a connection that was never made may be retried for any method; a
//! failure after the request went out only for a replayable request.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ironward::http_retry::{Settings, StopReason};
use ironward_reqwest::{GaveUp, Stop};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::scenarios::server::{Reply, Server};
use crate::scenarios::{bounded, client, exact, fast, instant, retried};

/// An address on which nothing listens: a port the system handed out, then released.
fn free_addr() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// The middleware's error, with its reason and attempts.
fn gave_up(err: &reqwest_middleware::Error) -> &GaveUp {
    ironward_reqwest::gave_up(err).expect("the middleware's error")
}

/// A TCP server that reads each request's head, then either closes the connection without
/// answering or holds it open without answering; it counts connections.
pub(crate) struct Mute {
    addr: SocketAddr,
    accepts: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Mute {
    pub(crate) async fn start(hold: bool) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepts = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&accepts);
        let task = tokio::spawn(async move {
            let mut held: Vec<TcpStream> = Vec::new();
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                counter.fetch_add(1, Ordering::SeqCst);
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                if hold {
                    held.push(socket);
                }
            }
        });
        Self {
            addr,
            accepts,
            task,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    pub(crate) fn accepts(&self) -> usize {
        self.accepts.load(Ordering::SeqCst)
    }
}

impl Drop for Mute {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// A POST to a server that is not up yet: the refused connections sent nothing, so the POST
// is retried until the server comes up, and the operation is performed once.
#[tokio::test]
async fn a_refused_post_is_retried_until_the_server_is_up() {
    bounded(async {
        let addr = free_addr();
        let starter = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            Server::bind(vec![Reply::status(201)], false, addr).await
        });
        let settings = Settings {
            max_retries: 6,
            base_delay: Duration::from_millis(50),
            ..fast()
        };
        let response = client(exact(settings))
            .post(format!("http://{addr}/orders"))
            .body("one order")
            .send()
            .await
            .unwrap();
        let server = starter.await.unwrap();

        assert_eq!(response.status(), 201);
        let record = retried(&response);
        assert!(record.attempts >= 2, "{record:?}");
        assert_eq!(record.stop, None);
        assert_eq!(server.count(), 1);
        assert_eq!(server.effects(), 1);
        println!(
            "transport: POST landed on attempt {} after {:?} of waits",
            record.attempts, record.waited
        );
    })
    .await;
}

// Nothing ever listens: a refused connection sent nothing, so even a POST is retried,
// `max_retries + 1` times, then `GaveUp` with the reason, and the last reqwest error still
// says it was a connect error. On a manual clock the waits are exact.
#[tokio::test]
async fn a_post_refused_every_time_gives_up_with_the_connect_error() {
    bounded(async {
        let addr = free_addr();
        let (middleware, clock) = instant(fast());
        let err = client(middleware)
            .post(format!("http://{addr}/orders"))
            .body("one order")
            .send()
            .await
            .unwrap_err();

        let gave_up = gave_up(&err);
        assert_eq!(gave_up.stop(), Stop::Decided(StopReason::AttemptsExhausted));
        assert_eq!(gave_up.retried().attempts, 4);
        assert_eq!(gave_up.retried().waited, Duration::from_millis(140));
        assert!(
            gave_up
                .error_as::<reqwest_middleware::Error>()
                .unwrap()
                .is_connect()
        );
        assert_eq!(clock.now(), Duration::from_millis(140));
        assert!(
            err.to_string()
                .starts_with("gave up after 4 attempts: retries exhausted")
        );
    })
    .await;
}

// The connection closes after the request went out: the server may have acted on it, so an
// unsafe POST is not sent again, while a GET, or a POST with an idempotency key, is.
#[tokio::test]
async fn a_connection_lost_after_sending_is_retried_only_when_replayable() {
    bounded(async {
        let mute = Mute::start(false).await;
        let client = client(instant(fast()).0);

        let err = client.post(mute.url()).body("x").send().await.unwrap_err();
        let post = gave_up(&err);
        assert_eq!(post.stop(), Stop::Decided(StopReason::NotReplayable));
        assert!(
            !post
                .error_as::<reqwest_middleware::Error>()
                .unwrap()
                .is_connect()
        );
        assert_eq!(mute.accepts(), 1);

        let err = client.get(mute.url()).send().await.unwrap_err();
        assert_eq!(
            gave_up(&err).stop(),
            Stop::Decided(StopReason::AttemptsExhausted)
        );
        assert_eq!(mute.accepts(), 1 + 4);

        let err = client
            .post(mute.url())
            .header("Idempotency-Key", "k-1")
            .body("x")
            .send()
            .await
            .unwrap_err();
        assert_eq!(gave_up(&err).retried().attempts, 4);
        assert_eq!(mute.accepts(), 1 + 4 + 4);
    })
    .await;
}

// A server that never answers: reqwest's per-attempt timeout ends each attempt, and a GET is
// retried as any failure after sending is.
#[tokio::test]
async fn a_timed_out_get_is_retried() {
    bounded(async {
        let mute = Mute::start(true).await;
        let err = client(instant(fast()).0)
            .get(mute.url())
            .timeout(Duration::from_millis(200))
            .send()
            .await
            .unwrap_err();

        let gave_up = gave_up(&err);
        assert_eq!(gave_up.stop(), Stop::Decided(StopReason::AttemptsExhausted));
        assert!(
            gave_up
                .error_as::<reqwest_middleware::Error>()
                .unwrap()
                .is_timeout()
        );
        assert_eq!(mute.accepts(), 4);
    })
    .await;
}
