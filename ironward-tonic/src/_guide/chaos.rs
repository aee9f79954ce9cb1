//! Chaos: faults injected into gRPC calls on purpose, on a client or a server, and replayed.
//!
//! Retries, deadlines and breakers are only known to work once they have met the failures
//! they are there for. [`GrpcChaosLayer`] makes those failures at the rates a chaos policy
//! ([`ironward::chaos::Chaos`]) says, in staging or in a test, and the same seed makes the
//! same ones again. The [`chaos`](crate::chaos) module has the table of what each fault does
//! to a call.
//!
//! # Where it goes
//!
//! - **On a client**, around the `Channel`: the calls of that client meet the faults, and
//!   nothing else does. Put it *inside* a [`GrpcRetryLayer`](crate::GrpcRetryLayer)
//!   (`ServiceBuilder::new().layer(retry).layer(chaos).service(channel)`) to see the retries
//!   at work: each attempt reaches the chaos layer as a call of its own and draws its own
//!   fault, so an injected `UNAVAILABLE` is retried as a real one would be, and the
//!   `grpc-timeout` the retry layer writes on each attempt (the time left) is the deadline an
//!   abort ends at. Outside the retry layer, a fault is the whole call's.
//! - **On a server**, `tonic::transport::Server::builder().layer(chaos)`: every client meets
//!   the faults, in front of every route, numbered in one sequence. tonic's own timeout
//!   stands outside every layer, so a server's deadline ends an abort too.
//!
//! # What it answers
//!
//! An injected error and a replaced answer are trailers-only gRPC responses: HTTP 200,
//! `content-type: application/grpc`, `grpc-status`, `grpc-message: ironward chaos: error`
//! (or `replace`) and [`CHAOS_HEADER`](crate::chaos::CHAOS_HEADER) naming the fault, so a
//! tonic caller gets a `Status` whose metadata tells it was made on purpose. The codes are
//! `UNAVAILABLE` and `INTERNAL` unless
//! [`with_error_code`](crate::GrpcChaosLayer::with_error_code) and
//! [`with_replace_code`](crate::GrpcChaosLayer::with_replace_code) say otherwise. A replaced call
//! was made: its side effects happened, and its answer (or its failure) is dropped.
//!
//! An abort never answers: it is the server that hangs. Its call ends at its deadline
//! (`grpc-timeout`) with `DEADLINE_EXCEEDED`, or when the caller drops it. A caller without a
//! deadline waits for ever, which is what the fault is there to show.
//!
//! # Replaying a run
//!
//! [`with_seed`](crate::GrpcChaosLayer::with_seed) numbers the calls from 0 in the order they reach
//! the layer and gives call `i` the fault `Injector::decide(chaos::draw(seed, i))`: the core,
//! the simulator and the layer agree on it, so a failure a seeded run found is found again
//! by running the same calls in the same order. Calls made at once from several tasks reach
//! the layer in an order of their own; a replay wants them one after another.
//!
//! # Observing it
//!
//! Every decision is the [`SharedChaos`](ironward_tokio::SharedChaos)'s, which counts
//! `ironward.chaos.injected{name, fault, shadow}` (with the `metrics` feature) and logs a
//! `DEBUG` event with the call's number; the layer adds neither. A policy in `shadow` mode
//! counts what it would inject (`shadow="true"`) and injects nothing: try a policy there
//! before it harms anyone, then [`retune`](crate::GrpcChaosLayer::retune) it on. A
//! [`from_shared`](crate::GrpcChaosLayer::from_shared) layer shares its policy, numbering and name
//! with the other edges given the same `SharedChaos`, so one retune reaches them all.
//!
//! # Examples
//!
//! A retry layer outside a chaos layer whose scripted draws inject an error into the first
//! attempt only: the call is retried once and succeeds.
//!
//! ```
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::time::Duration;
//! use http::{Request, Response};
//! use ironward::chaos::{Chaos, Fault, Injection};
//! use ironward_tokio::SharedChaos;
//! use ironward_tonic::{Clock, Dice, GrpcChaosLayer, GrpcRetryLayer};
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let policy = Chaos {
//!     enabled: true,
//!     faults: vec![Injection { fault: Fault::Error, rate: 0.5 }],
//!     ..Chaos::default()
//! };
//! // Draws 0.1 (under 0.5: an error), then 0.9 (no fault) for ever.
//! let rolls = AtomicU32::new(0);
//! let dice = Dice::from_fn(move || if rolls.fetch_add(1, Ordering::SeqCst) == 0 { 0.1 } else { 0.9 });
//! let chaos = GrpcChaosLayer::from_shared(SharedChaos::new(policy).unwrap().with_dice(dice));
//!
//! let (clock, _) = Clock::manual(Duration::ZERO);
//! let retry = GrpcRetryLayer::from_json(r#"{"methodConfig": [{"name": [{}], "retryPolicy": {
//!     "maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
//!     "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#)
//!     .unwrap()
//!     .with_clock(clock.clone())
//!     .with_dice(Dice::from_fn(|| 0.5));
//!
//! // The server: an answer with ordinary headers and no grpc-status yet, a success so far.
//! let server = service_fn(|_: Request<tonic::body::Body>| async {
//!     Ok::<_, std::convert::Infallible>(Response::new(tonic::body::Body::empty()))
//! });
//! let client = ServiceBuilder::new().layer(retry).layer(chaos.clone()).service(server);
//! let request = Request::builder().uri("/pkg.S/M").body(tonic::body::Body::empty()).unwrap();
//! let response = client.oneshot(request).await.unwrap();
//! assert!(response.headers().get("grpc-status").is_none(), "the server's answer");
//! assert_eq!(chaos.chaos().requests(), 2, "the injected error, then the retry");
//! assert_eq!(clock.now(), Duration::from_millis(100), "one backoff");
//! # }
//! ```
//!
//! On a server, in front of every route:
//!
//! ```
//! use ironward::chaos::{Chaos, Fault, Injection};
//! use ironward_tonic::GrpcChaosLayer;
//!
//! let policy = Chaos {
//!     enabled: true,
//!     faults: vec![Injection { fault: Fault::Abort, rate: 0.01 }],
//!     ..Chaos::default()
//! };
//! let chaos = GrpcChaosLayer::new(policy).unwrap().with_name("server");
//! let _builder = tonic::transport::Server::builder().layer(chaos);
//! // .add_service(...).serve(addr)
//! ```
//!
//! [`GrpcChaosLayer`]: crate::GrpcChaosLayer
