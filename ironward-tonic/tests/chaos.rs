//! The chaos layer over real gRPC: a tonic server on 127.0.0.1 and a tonic client, the layer
//! around the client's `Channel` or on the server (`Server::builder().layer(...)`). Each call
//! is bounded in real time, generously.

#[path = "retry/server.rs"]
mod server;

use std::time::{Duration, Instant};

use http::uri::PathAndQuery;
use ironward::chaos::{self, Chaos, ChaosError, Delay, Fault, Injected, Injection, Injector};
use ironward_tonic::chaos::{CHAOS_HEADER, GrpcChaosLayer};
use ironward_tonic::{Clock, GrpcRetryLayer};
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_prost::ProstCodec;
use tower::Layer;

use server::{Answer, BOUND, Echo, Inner, Server, layer};

type Client = tonic::client::Grpc<Inner>;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn policy(faults: &[(Fault, f64)]) -> Chaos {
    Chaos {
        enabled: true,
        shadow: false,
        faults: faults
            .iter()
            .map(|&(fault, rate)| Injection { fault, rate })
            .collect(),
    }
}

/// The mixed policy of the replay tests: 5 % errors, 5 % latencies of 1 to 3 ms, 5 %
/// replaced answers.
fn mixed() -> Chaos {
    let latency = Fault::Latency(Delay::Uniform {
        low: ms(1),
        high: ms(3),
    });
    policy(&[
        (Fault::Error, 0.05),
        (latency, 0.05),
        (Fault::Replace, 0.05),
    ])
}

/// A server answering every call.
async fn ok_server() -> Server {
    Server::start(Clock::monotonic(), |_, _| Answer::Ok).await
}

fn channel(server: &Server) -> Inner {
    let channel = Channel::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .connect_lazy();
    Inner::new(tower::ServiceExt::map_err(channel, Into::into))
}

/// A client of `server` through `chaos`, around its `Channel`.
fn chaos_client(server: &Server, chaos: &GrpcChaosLayer) -> Client {
    let inner = tower::ServiceExt::map_err(chaos.layer(channel(server)), Into::into);
    tonic::client::Grpc::new(Inner::new(inner))
}

/// A plain client of `server`.
fn plain_client(server: &Server) -> Client {
    tonic::client::Grpc::new(channel(server))
}

/// One unary call to `/test.Flaky/Call` with the deadline `timeout`: its status (`Ok` for a
/// success), or `None` if it was still pending after `bound` of real time.
async fn call_within(
    client: &mut Client,
    timeout: Option<Duration>,
    bound: Duration,
) -> Option<Result<(), Status>> {
    let mut request = tonic::Request::new(Echo { text: "hi".into() });
    if let Some(timeout) = timeout {
        request.set_timeout(timeout);
    }
    send_within(client, request, bound).await
}

/// Sends `request` (an echo of "hi") to `/test.Flaky/Call`: its status (`Ok` for a success,
/// whose echo is checked), or `None` if it was still pending after `bound` of real time.
async fn send_within(
    client: &mut Client,
    request: tonic::Request<Echo>,
    bound: Duration,
) -> Option<Result<(), Status>> {
    let sent = async {
        client.ready().await.unwrap();
        let path = PathAndQuery::from_static("/test.Flaky/Call");
        client
            .unary(request, path, ProstCodec::<Echo, Echo>::default())
            .await
    };
    let response = tokio::time::timeout(bound, sent).await.ok()?;
    Some(response.map(|response| assert_eq!(response.into_inner().text, "hi")))
}

async fn call(client: &mut Client) -> Result<(), Status> {
    call_within(client, None, BOUND)
        .await
        .expect("the call ended")
}

fn code(result: &Result<(), Status>) -> Code {
    result.as_ref().map_or_else(Status::code, |()| Code::Ok)
}

/// The code a call ends with under `injected`, by the layer's defaults.
fn expected(injected: Option<Injected>) -> Code {
    match injected.map(|i| i.fault) {
        None | Some(Fault::Latency(_)) => Code::Ok,
        Some(Fault::Error) => Code::Unavailable,
        Some(Fault::Replace) => Code::Internal,
        Some(Fault::Abort) => unreachable!("the mixed policy has no abort"),
    }
}

// 500 calls one after another around the client's channel: call i ends as the core decides
// for the i-th draw of the run seeded 42, and only the calls not answered by an error reach
// the server.
#[tokio::test]
async fn a_seeded_run_replays_the_cores_decisions_call_by_call() {
    let server = ok_server().await;
    let chaos = GrpcChaosLayer::new(mixed()).unwrap().with_seed(42);
    let mut client = chaos_client(&server, &chaos);
    let injector = Injector::new(mixed()).unwrap();
    let mut counts = [0usize; 4];
    for i in 0..500 {
        let injected = injector.decide(chaos::draw(42, i));
        let result = call(&mut client).await;
        assert_eq!(code(&result), expected(injected), "call {i}: {injected:?}");
        if let Err(status) = &result {
            // Told apart from a real failure, by the header and the message.
            let fault = injected.unwrap().fault.label();
            assert_eq!(status.metadata().get(CHAOS_HEADER.as_str()).unwrap(), fault);
            assert_eq!(status.message(), format!("ironward chaos: {fault}"));
        }
        let slot = injected.map_or(0, |i| i.index + 1);
        counts[slot] += 1;
    }
    assert_eq!(chaos.chaos().requests(), 500);
    // Every fault of the policy shows up in the run, at roughly its rate.
    for (slot, &n) in counts.iter().enumerate().skip(1) {
        assert!((5..=50).contains(&n), "fault {slot}: {counts:?}");
    }
    assert_eq!(server.seen().len(), 500 - counts[1], "{counts:?}");
}

// The same replay with the layer on the server, in front of every route.
#[tokio::test]
async fn a_seeded_run_replays_on_the_server_too() {
    let chaos = GrpcChaosLayer::new(mixed())
        .unwrap()
        .with_seed(42)
        .with_error_code(Code::ResourceExhausted)
        .with_replace_code(Code::DataLoss);
    let server = Server::start_behind(chaos.clone(), Clock::monotonic(), |_, _| Answer::Ok).await;
    let mut client = plain_client(&server);
    let injector = Injector::new(mixed()).unwrap();
    let mut errors = 0;
    for i in 0..200 {
        let injected = injector.decide(chaos::draw(42, i));
        let want = match expected(injected) {
            Code::Unavailable => Code::ResourceExhausted,
            Code::Internal => Code::DataLoss,
            ok => ok,
        };
        errors += usize::from(want == Code::ResourceExhausted);
        assert_eq!(code(&call(&mut client).await), want, "call {i}");
    }
    assert!(errors > 0);
    assert_eq!(chaos.chaos().requests(), 200);
    assert_eq!(server.seen().len(), 200 - errors);
}

// The retry layer outside the chaos layer, UNAVAILABLE retryable: every call succeeds, the
// injected errors retried. Each attempt takes the next draw, so the attempts each call makes
// are known in advance, and none of the errors ever reaches the server.
#[tokio::test]
async fn injected_errors_are_retried_by_the_retry_layer_and_succeed() {
    let server = ok_server().await;
    let errors = policy(&[(Fault::Error, 0.3)]);
    let chaos = GrpcChaosLayer::new(errors.clone()).unwrap().with_seed(7);
    let (clock, _) = Clock::manual(Duration::ZERO);
    let retry: GrpcRetryLayer = layer(r#""UNAVAILABLE""#, "", &clock);
    let inner = tower::ServiceExt::map_err(chaos.layer(channel(&server)), Into::into);
    let mut client = server::client_of(Inner::new(inner), &retry);

    let injector = Injector::new(errors).unwrap();
    let mut draws = (0..).map(|i| injector.decide(chaos::draw(7, i)));
    let mut retried = 0;
    for n in 0..100 {
        // The attempts this call makes: each injected error is one more, up to four.
        let attempts = 1 + draws.by_ref().take_while(Option::is_some).count();
        assert!(attempts <= 4, "call {n}: the seed fails a call outright");
        retried += attempts - 1;
        assert_eq!(
            server::call(&mut client, "Call", None).await,
            Code::Ok,
            "call {n}"
        );
        let requests = u64::try_from(n + 1 + retried).unwrap();
        assert_eq!(chaos.chaos().requests(), requests, "call {n}");
    }
    assert!(retried >= 10, "{retried} retries");
    assert_eq!(
        server.seen().len(),
        100,
        "each call reached the server once"
    );
    // Each retry waited the policy's 10 ms backoff on the layer's clock.
    assert_eq!(clock.now(), ms(10) * u32::try_from(retried).unwrap());
}

// An abort around the client's channel: the call ends at its deadline, 300 ms, with
// DEADLINE_EXCEEDED; the server never sees it. Without a deadline it is still pending when
// the test gives up on it, and the server never sees that one either.
#[tokio::test]
async fn an_abort_ends_at_the_deadline_and_never_reaches_the_server() {
    let server = ok_server().await;
    let chaos = GrpcChaosLayer::new(policy(&[(Fault::Abort, 1.0)])).unwrap();
    let mut client = chaos_client(&server, &chaos);

    let start = Instant::now();
    let result = call_within(&mut client, Some(ms(300)), BOUND).await;
    let took = start.elapsed();
    let status = result.expect("the deadline ended it").unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert_eq!(
        status.metadata().get(CHAOS_HEADER.as_str()).unwrap(),
        "abort"
    );
    assert!(took >= ms(300), "ended after {took:?}, before the deadline");

    assert!(call_within(&mut client, None, ms(300)).await.is_none());
    assert!(server.seen().is_empty(), "{:?}", server.seen());
    assert_eq!(chaos.chaos().requests(), 2);
}

// A latency past the deadline ends the call there; one within it goes on with the time left
// as its grpc-timeout.
#[tokio::test]
async fn a_latency_spends_the_calls_deadline() {
    let server = ok_server().await;
    let slow = |delay| policy(&[(Fault::Latency(Delay::Fixed(delay)), 1.0)]);
    let chaos = GrpcChaosLayer::new(slow(ms(500))).unwrap();
    let mut client = chaos_client(&server, &chaos);
    let result = call_within(&mut client, Some(ms(100)), BOUND)
        .await
        .unwrap();
    assert_eq!(code(&result), Code::DeadlineExceeded);
    assert!(server.seen().is_empty());

    chaos.retune(slow(ms(50))).unwrap();
    let result = call_within(&mut client, Some(Duration::from_secs(20)), BOUND).await;
    assert_eq!(code(&result.unwrap()), Code::Ok);
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    // The 20 s the caller gave, less the 50 ms waited, exactly: the deadline is read when the
    // call arrives, and the channel sends the header on as the layer wrote it.
    assert_eq!(seen[0].timeout.as_deref(), Some("19950000u"));
}

// A malformed grpc-timeout is no deadline to the layer: the delayed call goes on with the
// header as it came, and the service behind answers it as it would (here, as a success).
#[tokio::test]
async fn a_malformed_deadline_is_passed_on_as_it_came() {
    let server = ok_server().await;
    let slow = policy(&[(Fault::Latency(Delay::Fixed(ms(10))), 1.0)]);
    let chaos = GrpcChaosLayer::new(slow).unwrap();
    let mut client = chaos_client(&server, &chaos);
    for bad in ["1x", "-5S", "123456789m"] {
        let mut request = tonic::Request::new(Echo { text: "hi".into() });
        let value = tonic::metadata::MetadataValue::from_static(bad);
        request.metadata_mut().insert("grpc-timeout", value);
        let response = send_within(&mut client, request, BOUND)
            .await
            .expect("ended");
        assert!(response.is_ok(), "{bad}: {response:?}");
        let seen = server.seen();
        assert_eq!(seen.last().unwrap().timeout.as_deref(), Some(bad));
    }
    assert_eq!(server.seen().len(), 3);
}

// A policy in shadow mode decides every call's fault and injects none; a policy turned off
// decides nothing. Either way every call succeeds and reaches the server.
#[tokio::test]
async fn shadow_and_disabled_inject_nothing() {
    let server = ok_server().await;
    let always = [(Fault::Error, 0.5), (Fault::Abort, 0.5)];
    let shadow = Chaos {
        shadow: true,
        ..policy(&always)
    };
    let off = Chaos {
        enabled: false,
        ..policy(&always)
    };
    for (n, chaos) in [shadow, off].into_iter().enumerate() {
        let layer = GrpcChaosLayer::new(chaos).unwrap().with_seed(1);
        let mut client = chaos_client(&server, &layer);
        for i in 0..20 {
            assert_eq!(code(&call(&mut client).await), Code::Ok, "{n}, call {i}");
        }
        assert_eq!(layer.chaos().requests(), 20);
    }
    assert_eq!(server.seen().len(), 40);
}

// Every policy the core refuses is refused here, with the core's reason; a refused retune
// leaves the policy in force.
#[test]
fn a_bad_policy_is_refused() {
    let nan = policy(&[(Fault::Error, f64::NAN)]);
    assert!(matches!(
        GrpcChaosLayer::new(nan.clone()),
        Err(ChaosError::Rate { index: 0, .. })
    ));
    let over = policy(&[(Fault::Error, 0.7), (Fault::Replace, 0.7)]);
    assert!(matches!(
        GrpcChaosLayer::new(over.clone()),
        Err(ChaosError::Total { .. })
    ));
    let reversed = Fault::Latency(Delay::Uniform {
        low: ms(2),
        high: ms(1),
    });
    let backwards = policy(&[(Fault::Replace, 0.1), (reversed, 0.1)]);
    assert!(matches!(
        GrpcChaosLayer::new(backwards.clone()),
        Err(ChaosError::Delay { index: 1 })
    ));

    let layer = GrpcChaosLayer::new(mixed()).unwrap();
    for bad in [nan, over, backwards] {
        assert!(layer.retune(bad).is_err());
        assert_eq!(layer.chaos().policy(), mixed());
    }
}

// With the `metrics` feature, each fault the layer applies is counted once, by SharedChaos,
// under the layer's name: the counts equal the core's decisions for the same draws.
#[cfg(feature = "metrics")]
#[tokio::test]
async fn each_fault_is_counted_once_under_the_layers_name() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    let recorder: &'static DebuggingRecorder = Box::leak(Box::new(DebuggingRecorder::new()));
    let _guard = metrics::set_default_local_recorder(recorder);
    let server = ok_server().await;
    let chaos = GrpcChaosLayer::new(mixed())
        .unwrap()
        .with_seed(42)
        .with_name("grpc");
    let mut client = chaos_client(&server, &chaos);
    let injector = Injector::new(mixed()).unwrap();
    let mut want = std::collections::BTreeMap::<&str, u64>::new();
    for i in 0..200 {
        if let Some(injected) = injector.decide(chaos::draw(42, i)) {
            *want.entry(injected.fault.label()).or_default() += 1;
        }
        let _ = call(&mut client).await;
    }
    let mut got = std::collections::BTreeMap::<&str, u64>::new();
    for (key, _, _, value) in recorder.snapshotter().snapshot().into_vec() {
        let key = key.key();
        if key.name() != "ironward.chaos.injected" {
            continue;
        }
        let label = |name: &str| {
            key.labels()
                .find(|l| l.key() == name)
                .map(|l| l.value().to_owned())
        };
        assert_eq!(label("name").as_deref(), Some("grpc"));
        assert_eq!(label("shadow").as_deref(), Some("false"));
        let fault = match label("fault").as_deref() {
            Some("error") => "error",
            Some("latency") => "latency",
            Some("replace") => "replace",
            other => panic!("fault {other:?}"),
        };
        let DebugValue::Counter(n) = value else {
            panic!("{value:?}")
        };
        *got.entry(fault).or_default() += n;
    }
    assert_eq!(want.len(), 3, "{want:?}");
    assert_eq!(got, want);
}
