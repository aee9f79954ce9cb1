//! A tonic server and a client in one process: the server's `Greet` fails twice with
//! UNAVAILABLE (the second time pushing back 200 ms), then answers; the client retries it as
//! the service config's JSON says, and each attempt is printed as the server saw it.
//!
//! ```text
//! cargo run -p ironward-tonic --example flaky
//! ```
//!
//! The messages and the service are written by hand (`prost::Message`, tonic's
//! `server::Grpc` and `client::Grpc`), as tonic's generated code would write them, so the
//! example needs no `protoc`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http::uri::PathAndQuery;
use ironward_tonic::GrpcRetryLayer;
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, Server};
use tonic::{Code, Status};
use tonic_prost::ProstCodec;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

const CONFIG: &str = r#"{
    "methodConfig": [{
        "name": [{"service": "demo.Flaky", "method": "Greet"}],
        "timeout": "5s",
        "retryPolicy": {
            "maxAttempts": 4,
            "initialBackoff": "0.1s",
            "maxBackoff": "1s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"]
        }
    }],
    "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
}"#;

#[derive(Clone, PartialEq, prost::Message)]
struct Greeting {
    #[prost(string, tag = "1")]
    text: String,
}

/// The server: its attempts counted, and a start to print times from.
#[derive(Clone)]
struct Flaky {
    attempts: Arc<AtomicU32>,
    start: Instant,
}

impl tonic::server::NamedService for Flaky {
    const NAME: &'static str = "demo.Flaky";
}

impl tonic::server::UnaryService<Greeting> for Flaky {
    type Response = Greeting;
    type Future = BoxFuture<Result<tonic::Response<Greeting>, Status>>;

    fn call(&mut self, request: tonic::Request<Greeting>) -> Self::Future {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        let header = |name| {
            let value = request.metadata().get(name);
            value.map_or("-".to_owned(), |v| v.to_str().unwrap_or("?").to_owned())
        };
        let (previous, timeout) = (header("grpc-previous-rpc-attempts"), header("grpc-timeout"));
        let answer = match n {
            1 => Err(Status::unavailable("warming up")),
            2 => {
                let mut metadata = MetadataMap::new();
                metadata.insert("grpc-retry-pushback-ms", "200".parse().unwrap());
                Err(Status::with_metadata(Code::Unavailable, "busy", metadata))
            }
            _ => Ok(tonic::Response::new(Greeting {
                text: format!("hello, {}", request.get_ref().text),
            })),
        };
        let said = match &answer {
            Ok(_) => "OK".to_owned(),
            Err(status) if status.metadata().contains_key("grpc-retry-pushback-ms") => {
                format!("{:?}, pushback 200 ms", status.code())
            }
            Err(status) => format!("{:?}", status.code()),
        };
        println!(
            "server: attempt {n} at {:>4} ms, grpc-previous-rpc-attempts {previous}, \
             grpc-timeout {timeout}: {said}",
            self.start.elapsed().as_millis()
        );
        Box::pin(async move { answer })
    }
}

impl<B> tower::Service<http::Request<B>> for Flaky
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let flaky = self.clone();
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(ProstCodec::<Greeting, Greeting>::default());
            Ok(match request.uri().path() {
                "/demo.Flaky/Greet" => grpc.unary(flaky, request).await,
                _ => Status::unimplemented("no such method").into_http(),
            })
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let start = Instant::now();
    let flaky = Flaky {
        attempts: Arc::new(AtomicU32::new(0)),
        start,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        Server::builder()
            .add_service(flaky.clone())
            .serve_with_incoming_shutdown(
                tonic::transport::server::TcpIncoming::from(listener),
                async {
                    let _ = stopped.await;
                },
            ),
    );

    let layer = GrpcRetryLayer::from_json(CONFIG)?;
    let channel = Channel::from_shared(format!("http://{addr}"))?.connect_lazy();
    let mut client = tonic::client::Grpc::new(tower::Layer::layer(&layer, channel));
    client.ready().await?;
    let request = tonic::Request::new(Greeting {
        text: "retries".into(),
    });
    let path = PathAndQuery::from_static("/demo.Flaky/Greet");
    let codec = ProstCodec::<Greeting, Greeting>::default();
    let response =
        tokio::time::timeout(Duration::from_secs(30), client.unary(request, path, codec)).await??;
    println!(
        "client: {:?} after {} ms",
        response.get_ref().text,
        start.elapsed().as_millis()
    );
    let budget = layer.budget().map_or(0.0, |b| b.tokens());
    println!("client: retry budget {budget} of 10 tokens");

    assert_eq!(response.into_inner().text, "hello, retries");
    assert_eq!(flaky.attempts.load(Ordering::SeqCst), 3);
    // Two retryable failures took a token each; the success gave 0.1 back.
    assert_eq!(budget, 8.1);
    let _ = stop.send(());
    server.await??;
    Ok(())
}
