//! Faults injected on purpose at the edge: [`ChaosLayer`].
//!
//! A retry, a breaker or a deadline that has never seen a failure is a guess. Polly's Simmy
//! and tower-resilience's chaos layer inject failures in staging so that the resilience
//! around a call shows it works before production has to. This layer applies the core's
//! [`ironward::chaos`] policy to HTTP calls, on a server (around an axum `Router` or
//! handler: what its clients see) or on a client (around the client service: what the code
//! calling a backend sees). Which fault a call gets is decided by the core's
//! [`Injector::decide`](ironward::chaos::Injector::decide) from the call's draw; the layer
//! only applies it:
//!
//! | fault | what the caller sees | the inner service |
//! | --- | --- | --- |
//! | none, or any fault in shadow mode | the inner response | called |
//! | [`Fault::Error`] | the [`ChaosAnswer`]'s response at once: by default `503` with [`CHAOS_HEADER`]` = error` | not called |
//! | [`Fault::Latency`] | the inner response, after the drawn delay | called after the delay |
//! | [`Fault::Abort`] | nothing, ever: the future stays pending until the caller drops it | not called |
//! | [`Fault::Replace`] | the [`ChaosAnswer`]'s response in place of the inner one: by default `500` with [`CHAOS_HEADER`]` = replace` | called, its work done |
//!
//! - [`ChaosLayer::new`] checks the policy (the core's [`ChaosError`] for a bad one) and makes
//!   the [`SharedChaos`] that every service the layer makes, and their clones, share;
//!   [`ChaosLayer::from_shared`] takes one made elsewhere, so that a server and a client
//!   share one policy and one numbering.
//! - [`ChaosLayer::with_seed`] makes the run replayable: the request numbered `i` in arrival
//!   order draws [`ironward::chaos::draw`]`(seed, i)`, as the core and the simulator do.
//! - [`ChaosLayer::retune`] changes the policy live, for every service at once, and refuses a
//!   bad one leaving the old in force.
//! - [`ChaosService`] decides and applies each request's fault; [`ChaosFuture`] is a call as
//!   the fault shapes it.
//!
//! The service passes the inner service's error type through: an injected error is a
//! response, not an error, so the layer goes straight onto an axum `Router`, with no
//! `HandleErrorLayer`. Latency sleeps on tokio's timer, so the layer runs inside a tokio
//! runtime with time enabled.
//!
//! On a client, [`PlainAnswer`] makes its responses from a `&'static str`, which a client's
//! own body type may not be made from (hyper's `Incoming`): map the body inside the layer
//! (tower's `map_response` into axum's `Body`, or a boxed body), or give the layer an answer
//! of the client's type with [`ChaosLayer::with_response`].
//!
//! # Aborts need a timeout
//!
//! An aborted call never answers, as a backend that hangs never does: what ends it is the
//! caller's deadline, or the caller going away. A server injecting aborts needs a timeout in
//! front of the layer (a [`DeadlineLayer`](crate::DeadlineLayer) outside it, tower's or
//! tower-http's timeout), and a client its request timeout: without one, every aborted call
//! holds its connection, and its task, until the peer closes it. Testing that those timeouts
//! are there and short enough is what the fault is for.
//!
//! ```
//! use std::time::Duration;
//! use http::{Request, Response};
//! use ironward::chaos::{Chaos, Fault, Injection};
//! use ironward_tower::{ChaosLayer, DeadlineExceeded, DeadlineLayer};
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let hang = Chaos {
//!     enabled: true,
//!     faults: vec![Injection { fault: Fault::Abort, rate: 1.0 }],
//!     ..Chaos::default()
//! };
//! let backend = service_fn(|_: Request<()>| async {
//!     Ok::<_, std::convert::Infallible>(Response::new(String::new()))
//! });
//! let service = ServiceBuilder::new()
//!     .layer(DeadlineLayer::new(Duration::from_millis(500)))
//!     .layer(ChaosLayer::new(hang).unwrap())
//!     .service(backend);
//! let err = service.oneshot(Request::new(())).await.unwrap_err();
//! assert!(err.is::<DeadlineExceeded>());
//! # }
//! ```
//!
//! # Observability
//!
//! Every decision comes from [`SharedChaos::next`], which counts it, with the `metrics`
//! feature, under `ironward.chaos.injected{name, fault, shadow}` (`fault` one of `error`,
//! `latency`, `abort`, `replace`: [`Fault::label`]; `shadow="true"` for a fault a policy in
//! shadow mode only reported) and logs it as a `DEBUG` event with the `name`, the `fault`,
//! the request's `index`, `shadow` and the drawn `delay`. The layer counts and logs nothing
//! of its own: one rule, in one place, for every chaos edge. The guide's
//! [metrics](crate::_guide::metrics) has the table. [`ChaosLayer::injected`],
//! [`ChaosLayer::shadowed`] and [`ChaosLayer::requests`] read the same counts without a
//! recorder.
//!
//! # Examples
//!
//! An axum app whose requests fail one in twenty, wait 100 to 300 ms one in ten, and replay
//! from seed 7:
//!
//! ```
//! use std::time::Duration;
//! use axum::{Router, body::Body, routing::get};
//! use http::{Request, StatusCode};
//! use ironward::chaos::{self, Chaos, Delay, Fault, Injection, Injector};
//! use ironward_tower::ChaosLayer;
//! use ironward_tower::chaos::CHAOS_HEADER;
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let policy = Chaos {
//!     enabled: true,
//!     shadow: false,
//!     faults: vec![
//!         Injection { fault: Fault::Error, rate: 0.05 },
//!         Injection {
//!             fault: Fault::Latency(Delay::Uniform {
//!                 low: Duration::from_millis(100),
//!                 high: Duration::from_millis(300),
//!             }),
//!             rate: 0.10,
//!         },
//!     ],
//! };
//! let chaos = ChaosLayer::new(policy.clone()).unwrap().with_seed(7);
//! let app = Router::new().route("/", get(|| async { "hello" })).layer(chaos.clone());
//!
//! let injector = Injector::new(policy).unwrap();
//! for i in 0..50 {
//!     let response = app.clone().oneshot(Request::new(Body::empty())).await.unwrap();
//!     match injector.decide(chaos::draw(7, i)).map(|injected| injected.fault) {
//!         Some(Fault::Error) => {
//!             assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
//!             assert_eq!(response.headers()[CHAOS_HEADER], "error");
//!         }
//!         _ => assert_eq!(response.status(), StatusCode::OK),
//!     }
//! }
//! assert_eq!(chaos.requests(), 50);
//! # }
//! ```
//!
//! [`Fault::Error`]: ironward::chaos::Fault::Error
//! [`Fault::Latency`]: ironward::chaos::Fault::Latency
//! [`Fault::Abort`]: ironward::chaos::Fault::Abort
//! [`Fault::Replace`]: ironward::chaos::Fault::Replace
//! [`Fault::label`]: ironward::chaos::Fault::label
//! [`ChaosError`]: ironward::chaos::ChaosError
//! [`SharedChaos`]: ironward_tokio::SharedChaos
//! [`SharedChaos::next`]: ironward_tokio::SharedChaos::next

mod answer;
mod future;
mod layer;
mod service;

pub use self::answer::{CHAOS_HEADER, ChaosAnswer, PlainAnswer};
pub use self::future::ChaosFuture;
pub use self::layer::ChaosLayer;
pub use self::service::ChaosService;
