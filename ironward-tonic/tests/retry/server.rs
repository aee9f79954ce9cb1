//! A tonic server on 127.0.0.1 with a flaky method, its messages and service written by hand
//! (no `protoc`), and the client calls the tests make through the retry layer. Shared by the
//! `retry` and `events` test binaries, each of which uses part of it.

#![allow(dead_code, reason = "each test binary uses the part it needs")]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::uri::PathAndQuery;
use ironward_tonic::{Clock, Dice, GrpcRetryLayer};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_prost::ProstCodec;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The one message, both ways.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Echo {
    #[prost(string, tag = "1")]
    pub(crate) text: String,
}

/// How the server answers an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Answer {
    Ok,
    /// No answer, ever: only the client's cancelling the attempt ends it, which the server
    /// counts.
    Hang,
    /// A trailers-only failure, with these `grpc-retry-pushback-ms` values.
    Fail(Code, &'static [&'static str]),
}

/// What the server saw of one attempt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) previous: Option<String>,
    pub(crate) timeout: Option<String>,
    /// The test's clock (the layer's) when the attempt arrived.
    pub(crate) at: Duration,
}

struct Flaky {
    answer: Box<dyn Fn(usize, u32) -> Answer + Send + Sync>,
    seen: Mutex<Vec<Seen>>,
    /// Attempts that hung, ended by the client's cancelling them.
    cancelled: AtomicUsize,
    clock: Clock,
}

impl Flaky {
    /// Records the attempt and says how to answer it.
    fn arrive(&self, method: &str, metadata: &MetadataMap) -> Answer {
        let header = |name| metadata.get(name).map(|v| v.to_str().unwrap().to_owned());
        let previous = header("grpc-previous-rpc-attempts");
        let before = previous.as_ref().map_or(0, |p| p.parse().unwrap());
        let mut seen = self.seen.lock().unwrap();
        seen.push(Seen {
            method: method.to_owned(),
            previous,
            timeout: header("grpc-timeout"),
            at: self.clock.now(),
        });
        (self.answer)(seen.len() - 1, before)
    }
}

/// Counts a hung attempt's end: its future is only ever dropped.
struct Cancelled(Arc<Flaky>);

impl Drop for Cancelled {
    fn drop(&mut self) {
        self.0.cancelled.fetch_add(1, Ordering::SeqCst);
    }
}

fn status(code: Code, pushback: &[&str]) -> Status {
    let mut metadata = MetadataMap::new();
    for value in pushback {
        metadata.append("grpc-retry-pushback-ms", value.parse().unwrap());
    }
    Status::with_metadata(code, "flaky", metadata)
}

#[derive(Clone)]
struct FlakyServer(Arc<Flaky>);

impl tonic::server::NamedService for FlakyServer {
    const NAME: &'static str = "test.Flaky";
}

/// `Call` and `Plain` answer as the script says, trailers-only on a failure; `Stream` answers
/// with response headers and then the scripted failure in its trailers.
struct Unary(Arc<Flaky>, &'static str);

impl tonic::server::UnaryService<Echo> for Unary {
    type Response = Echo;
    type Future = BoxFuture<Result<tonic::Response<Echo>, Status>>;

    fn call(&mut self, request: tonic::Request<Echo>) -> Self::Future {
        let answer = self.0.arrive(self.1, request.metadata());
        let text = request.into_inner().text;
        let flaky = Arc::clone(&self.0);
        Box::pin(async move {
            match answer {
                Answer::Ok => Ok(tonic::Response::new(Echo { text })),
                Answer::Hang => {
                    let _cancelled = Cancelled(flaky);
                    std::future::pending().await
                }
                Answer::Fail(code, pushback) => Err(status(code, pushback)),
            }
        })
    }
}

struct Streaming(Arc<Flaky>);

/// A response stream: its messages, then its end, or with `hang` nothing more, ever (until
/// the client cancels it, which the server counts).
struct Messages {
    items: std::vec::IntoIter<Result<Echo, Status>>,
    hang: Option<Cancelled>,
}

impl futures_util::Stream for Messages {
    type Item = Result<Echo, Status>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.items.next() {
            Some(item) => Poll::Ready(Some(item)),
            None if self.hang.is_some() => Poll::Pending,
            None => Poll::Ready(None),
        }
    }
}

/// `Ok` streams one message; `Hang` streams one message and then nothing; a failure streams
/// it as its first item.
impl tonic::server::ServerStreamingService<Echo> for Streaming {
    type Response = Echo;
    type ResponseStream = Messages;
    type Future = BoxFuture<Result<tonic::Response<Self::ResponseStream>, Status>>;

    fn call(&mut self, request: tonic::Request<Echo>) -> Self::Future {
        let answer = self.0.arrive("Stream", request.metadata());
        let item = match answer {
            Answer::Ok | Answer::Hang => Ok(Echo::default()),
            Answer::Fail(code, pushback) => Err(status(code, pushback)),
        };
        let hang = (answer == Answer::Hang).then(|| Cancelled(Arc::clone(&self.0)));
        let stream = Messages {
            items: vec![item].into_iter(),
            hang,
        };
        Box::pin(async move { Ok(tonic::Response::new(stream)) })
    }
}

impl<B> tower::Service<http::Request<B>> for FlakyServer
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let flaky = Arc::clone(&self.0);
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(ProstCodec::<Echo, Echo>::default());
            Ok(match request.uri().path() {
                "/test.Flaky/Call" => grpc.unary(Unary(flaky, "Call"), request).await,
                "/test.Flaky/Plain" => grpc.unary(Unary(flaky, "Plain"), request).await,
                "/test.Flaky/Hedge" => grpc.unary(Unary(flaky, "Hedge"), request).await,
                "/test.Flaky/Stream" => grpc.server_streaming(Streaming(flaky), request).await,
                _ => Status::unimplemented("no such method").into_http(),
            })
        })
    }
}

/// A running server, stopped when dropped.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    flaky: Arc<Flaky>,
    _stop: oneshot::Sender<()>,
}

impl Server {
    /// Starts a server on a free loopback port, answering its `n`-th attempt (counted from 0
    /// across calls and methods) whose `grpc-previous-rpc-attempts` is `p` (0 when absent)
    /// with `answer(n, p)`, and reading `clock` as each arrives.
    pub(crate) async fn start(
        clock: Clock,
        answer: impl Fn(usize, u32) -> Answer + Send + Sync + 'static,
    ) -> Self {
        Self::start_behind(tower::layer::util::Identity::new(), clock, answer).await
    }

    /// [`start`](Self::start)ed behind `layer`, as `Server::builder().layer(layer)` puts it.
    pub(crate) async fn start_behind<L>(
        layer: L,
        clock: Clock,
        answer: impl Fn(usize, u32) -> Answer + Send + Sync + 'static,
    ) -> Self
    where
        L: tower::Layer<tonic::service::Routes> + Clone + Send + 'static,
        L::Service: tower::Service<
                http::Request<tonic::body::Body>,
                Response = http::Response<tonic::body::Body>,
            > + Clone
            + Send
            + 'static,
        <L::Service as tower::Service<http::Request<tonic::body::Body>>>::Future: Send,
        <L::Service as tower::Service<http::Request<tonic::body::Body>>>::Error:
            Into<Box<dyn std::error::Error + Send + Sync>> + Send,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let flaky = Arc::new(Flaky {
            answer: Box::new(answer),
            seen: Mutex::new(Vec::new()),
            cancelled: AtomicUsize::new(0),
            clock,
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        let router = tonic::transport::Server::builder()
            .layer(layer)
            .add_service(FlakyServer(Arc::clone(&flaky)));
        tokio::spawn(router.serve_with_incoming_shutdown(incoming, async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            flaky,
            _stop: stop,
        }
    }

    /// Every attempt the server has seen, in order.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.flaky.seen.lock().unwrap().clone()
    }

    /// Waits (in real time, bounded) until the client has cancelled `n` hung attempts, and
    /// says how many it had cancelled by then.
    pub(crate) async fn cancelled(&self, n: usize) -> usize {
        let start = std::time::Instant::now();
        while self.flaky.cancelled.load(Ordering::SeqCst) < n && start.elapsed() < BOUND {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.flaky.cancelled.load(Ordering::SeqCst)
    }

    /// The `grpc-previous-rpc-attempts` of every attempt seen, in order.
    pub(crate) fn previous(&self) -> Vec<Option<u32>> {
        let seen = self.seen();
        seen.iter()
            .map(|s| s.previous.as_ref().map(|p| p.parse().unwrap()))
            .collect()
    }
}

/// What the layer sends through: a tonic `Channel`, perhaps behind a test's own layer.
pub(crate) type Inner = tower::util::BoxCloneSyncService<
    http::Request<tonic::body::Body>,
    http::Response<tonic::body::Body>,
    Box<dyn std::error::Error + Send + Sync>,
>;

/// A client through the retry layer.
pub(crate) type Client = tonic::client::Grpc<ironward_tonic::retry::GrpcRetryService<Inner>>;

fn channel(addr: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy()
}

/// A client of `addr` through `layer`.
pub(crate) fn client(addr: SocketAddr, layer: &GrpcRetryLayer) -> Client {
    let inner = tower::ServiceExt::map_err(channel(addr), Into::into);
    client_of(Inner::new(inner), layer)
}

/// A client sending through `layer` to `inner`.
pub(crate) fn client_of(inner: Inner, layer: &GrpcRetryLayer) -> Client {
    tonic::client::Grpc::new(tower::Layer::layer(layer, inner))
}

/// A client of `addr` through `layer` that enforces no deadline below it: each attempt's
/// `grpc-timeout` is taken off after the layer wrote it, so that neither tonic's `Channel`
/// (which cuts an attempt at its `grpc-timeout`) nor tonic's server (which cuts its handler
/// there) ends a call; only the layer can. It stands for any inner service or server that does
/// not read the header.
pub(crate) fn deaf_client(addr: SocketAddr, layer: &GrpcRetryLayer) -> Client {
    let strip = |mut request: http::Request<tonic::body::Body>| {
        request.headers_mut().remove("grpc-timeout");
        request
    };
    let inner = tower::ServiceExt::map_request(channel(addr), strip);
    let inner = tower::ServiceExt::map_err(inner, Into::into);
    tonic::client::Grpc::new(tower::Layer::layer(layer, Inner::new(inner)))
}

/// Generous, for a loaded machine: no call here takes a second of real time.
pub(crate) const BOUND: Duration = Duration::from_secs(30);

/// One unary call to `/test.Flaky/{method}`, its code (`Ok` for a success).
pub(crate) async fn call(
    client: &mut Client,
    method: &'static str,
    timeout: Option<Duration>,
) -> Code {
    call_within(client, method, timeout, BOUND)
        .await
        .expect("the call ended")
}

/// One unary call to `/test.Flaky/{method}`, its code (`Ok` for a success), or `None` if it
/// was still pending after `bound` of real time.
pub(crate) async fn call_within(
    client: &mut Client,
    method: &'static str,
    timeout: Option<Duration>,
    bound: Duration,
) -> Option<Code> {
    let mut request = tonic::Request::new(Echo { text: "hi".into() });
    if let Some(timeout) = timeout {
        request.set_timeout(timeout);
    }
    send(client, method, request, bound).await
}

/// One unary call to `/test.Flaky/{method}` whose `grpc-timeout` is `value`, as it is: its
/// code, within the bound.
pub(crate) async fn call_with_timeout(
    client: &mut Client,
    method: &'static str,
    value: &'static str,
) -> Code {
    let mut request = tonic::Request::new(Echo { text: "hi".into() });
    let value = tonic::metadata::MetadataValue::from_static(value);
    request.metadata_mut().insert("grpc-timeout", value);
    send(client, method, request, BOUND)
        .await
        .expect("the call ended")
}

/// Sends `request` as a unary call to `/test.Flaky/{method}`: its code, or `None` if it was
/// still pending after `bound` of real time.
async fn send(
    client: &mut Client,
    method: &'static str,
    request: tonic::Request<Echo>,
    bound: Duration,
) -> Option<Code> {
    let path = match method {
        "Call" => "/test.Flaky/Call",
        "Plain" => "/test.Flaky/Plain",
        "Hedge" => "/test.Flaky/Hedge",
        _ => unreachable!("{method}"),
    };
    let sent = async {
        client.ready().await.unwrap();
        client
            .unary(
                request,
                PathAndQuery::from_static(path),
                ProstCodec::<Echo, Echo>::default(),
            )
            .await
    };
    match tokio::time::timeout(bound, sent).await.ok()? {
        Ok(response) => {
            assert_eq!(response.into_inner(), Echo { text: "hi".into() });
            Some(Code::Ok)
        }
        Err(status) => Some(status.code()),
    }
}

/// One server-streaming call to `/test.Flaky/Stream` under `timeout`, read to its end: how
/// many messages came and the status it ended with, or `None` if it was still pending after
/// `bound` of real time.
pub(crate) async fn stream_to_end(
    client: &mut Client,
    timeout: Duration,
    bound: Duration,
) -> Option<(usize, Code)> {
    let read = async {
        client.ready().await.unwrap();
        let mut request = tonic::Request::new(Echo::default());
        request.set_timeout(timeout);
        let path = PathAndQuery::from_static("/test.Flaky/Stream");
        let sent = client
            .server_streaming(request, path, ProstCodec::<Echo, Echo>::default())
            .await;
        let mut stream = match sent {
            Ok(response) => response.into_inner(),
            Err(status) => return (0, status.code()),
        };
        let mut messages = 0;
        loop {
            match stream.message().await {
                Ok(Some(_)) => messages += 1,
                Ok(None) => return (messages, Code::Ok),
                Err(status) => return (messages, status.code()),
            }
        }
    };
    tokio::time::timeout(bound, read).await.ok()
}

/// One server-streaming call to `/test.Flaky/Stream`: the code of its first message.
pub(crate) async fn stream(client: &mut Client) -> Code {
    let sent = async {
        client.ready().await.unwrap();
        let request = tonic::Request::new(Echo::default());
        let path = PathAndQuery::from_static("/test.Flaky/Stream");
        let response = client
            .server_streaming(request, path, ProstCodec::<Echo, Echo>::default())
            .await?;
        response.into_inner().message().await
    };
    match tokio::time::timeout(BOUND, sent)
        .await
        .expect("the call ended")
    {
        Ok(_) => Code::Ok,
        Err(status) => status.code(),
    }
}

/// A layer retrying `test.Flaky`'s `Call` and `Stream` up to four attempts, 10 ms apart, on
/// `codes` (the JSON list's items), with `extra` appended to the service config, on `clock`
/// and a fixed draw.
pub(crate) fn layer(codes: &str, extra: &str, clock: &Clock) -> GrpcRetryLayer {
    let json = format!(
        r#"{{"methodConfig": [{{
            "name": [{{"service": "test.Flaky", "method": "Call"}},
                     {{"service": "test.Flaky", "method": "Stream"}}],
            "retryPolicy": {{"maxAttempts": 4, "initialBackoff": ".01s", "maxBackoff": ".01s",
                "backoffMultiplier": 1.0, "retryableStatusCodes": [{codes}]}}
        }}]{extra}}}"#
    );
    GrpcRetryLayer::from_json(&json)
        .unwrap()
        .with_clock(clock.clone())
        .with_dice(Dice::from_fn(|| 0.5))
}
