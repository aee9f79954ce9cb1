//! gRPC retries and hedging by proposal A6 for tonic clients: [`GrpcRetryLayer`].
//!
//! A tower layer over a tonic `Channel` (or any service of `http::Request<tonic::body::Body>`)
//! that reads the service config's `methodConfig` and `retryThrottling` and retries each call
//! by its method's `retryPolicy`, or hedges it by its `hedgingPolicy`. The decisions are the
//! core's, [`ironward::grpc::RetryPlan`] (grpc-go's `csAttempt.shouldRetry`, `stream.go`, step
//! for step) and [`ironward::grpc::HedgingPlan`] (A6's "Hedging Policy"), with one
//! [`SharedBudget`](ironward::SharedBudget) for the channel; this layer reads the clock and
//! the dice, sends, sleeps, cancels, and maps responses to outcomes.
//!
//! # One call
//!
//! 1. The method is read from the request's path, `/package.Service/Method`, and its entry
//!    found in the service config (the method's, else its service's, else the default). With
//!    no entry or no `retryPolicy` the request is sent once, untouched (its `grpc-timeout`
//!    too: the layer reads no deadline there).
//! 2. The call's deadline is the sooner of its `grpc-timeout` and the entry's `timeout`, on the
//!    layer's [`Clock`](crate::Clock); a malformed `grpc-timeout` ends the call with
//!    `INTERNAL` before anything is sent (see [below](#the-callers-grpc-timeout)). From then
//!    on, the deadline cuts the call ([below](#the-deadline)).
//! 3. The request body is read into a buffer, at most [`RETRY_BUFFER`] bytes (256 KiB, grpc-go's
//!    default); a longer body is sent once as it came but for the time left in its
//!    `grpc-timeout`, since it could not be sent again.
//! 4. Each attempt is a copy of the request: every attempt after the first carries
//!    `grpc-previous-rpc-attempts` (the attempts before it), and with a deadline every attempt
//!    carries in `grpc-timeout` the time left until it, so the server never works past it.
//! 5. A response whose headers carry `grpc-status` is trailers-only: its code and its
//!    `grpc-retry-pushback-ms` values go to the plan, which says wait, or stop, and the
//!    layer sleeps the wait on its clock or returns that response. A response with ordinary
//!    headers commits the call (A6, "Committing"): it is returned as it is, and its status,
//!    in its trailers, is never retried. An error of the inner service (a refused connection)
//!    is `UNAVAILABLE`, as grpc-go reads a transport's failure, unless it carries a
//!    `tonic::Status`, whose code it is; when the plan stops on it, the error is returned.
//! 6. The budget is told every retryable failure (by the plan) and every successful call,
//!    read from a trailers-only response or from the trailers at the end of the returned body
//!    ([`ResponseBody`]), as grpc-go's `clientStream.finish` counts them; calls without a
//!    retry policy count their successes too, as in grpc-go.
//! 7. Each attempt, each wait and the call's end are counted on the layer's metric handles,
//!    and each retry and each stop is a `tracing` event at `DEBUG` (the guide's
//!    [metrics](crate::_guide::metrics)); a call without a policy is not reported.
//!
//! # One hedged call
//!
//! Steps 1 to 3 are the same. Then the first attempt is sent at once and, while none has
//! committed, a hedge each time the plan says one is due (every `hedgingDelay`, at once after
//! a non-fatal code, after a pushback's wait), each with `grpc-previous-rpc-attempts` its
//! number and `grpc-timeout` the time left, until `maxAttempts`. The first attempt whose
//! response has ordinary headers, or whose trailers-only status is `OK` or fatal, is the
//! call's: the others are cancelled (their response futures dropped) and its response is
//! returned. When every attempt has failed with a non-fatal code and no more will be sent,
//! the last one's result is the call's.
//!
//! # The deadline
//!
//! When the call's deadline passes, the layer ends it, as grpc-go's client ends a call whose
//! context's deadline passes: whatever the call waits for (its request body, an attempt, a
//! backoff, the hedges in flight) is dropped, which for a tonic `Channel` resets each
//! attempt's HTTP/2 stream, and the call ends with the error `tonic::Status`
//! `DEADLINE_EXCEEDED` ("the call's deadline passed"), which a tonic client returns as that
//! status. A call committed to a response whose body has not ended by then ends alike: the
//! [`ResponseBody`] ends with trailers of its own, `grpc-status: 4`, and dropping it (as
//! tonic does once it has read the status) cancels the stream. The call is counted and
//! reported as stopped by `deadline` (the guide's [metrics](crate::_guide::metrics)).
//!
//! tonic's `Channel` cuts an attempt's response headers (never its body) at the attempt's
//! `grpc-timeout`, with an error of its own that a tonic client reads as `CANCELLED`; the
//! layer's timer starts before any attempt's time left is counted, so it ends the call first.
//! The timer is tokio's, whatever clock the layer reads
//! ([`with_clock`](GrpcRetryLayer::with_clock)): the one [`Clock::monotonic`](crate::Clock)
//! reads, so `tokio::time::pause` drives it. A [`Clock::manual`](crate::Clock::manual) sleep
//! ends at once, and a deadline slept on it would end every call at once; the waits, and
//! each attempt's time left, are still read on the layer's clock.
//!
//! # The caller's `grpc-timeout`
//!
//! gRPC over HTTP/2 ("PROTOCOL-HTTP2", "Requests") writes it as Timeout → "grpc-timeout"
//! TimeoutValue TimeoutUnit, the value a positive integer of at most 8 ASCII digits, the unit
//! one of `H`, `M`, `S`, `m`, `u`, `n`. grpc-go's client forwards no value a caller wrote (the
//! header is reserved: it writes its own, from the context's deadline), and grpc-go's server
//! answers a malformed one with `INTERNAL` ("malformed grpc-timeout"). For a method with a
//! policy, the layer reads the caller's value so:
//!
//! | the caller's value | the call | each attempt's `grpc-timeout` |
//! | --- | --- | --- |
//! | none | the method's `timeout` is its deadline, if set | the time left, or none |
//! | well-formed (`5S`) | the sooner of it and the method's `timeout` is its deadline | the time left, in the finest unit that holds it in 8 digits, rounded up: `5000000u`, 10 ms later `4990000u` |
//! | the largest, `99999999H` (about 11 400 years) | its deadline, exactly | `99999999H` while no shorter deadline applies: rounded up, never shortened |
//! | zero (`0S`): outside the grammar, but what grpc-go's client writes (`0n`) once the deadline has passed | ends at once with `DEADLINE_EXCEEDED` | none sent |
//! | malformed: not a number (`bogus`), signed (`-5S`, `+5S`), more than 8 digits (`123456789S`), a unit not in the list (`5x`, `5s`), empty | ends at once with `INTERNAL`, "malformed grpc-timeout: …", as grpc-go's server answers it | none sent |
//!
//! A negative value is malformed by the grammar, where grpc-go's server would read `-5S` as a
//! deadline already passed; tonic's server ignores every malformed value. Refused before it is
//! sent, a malformed value gets one answer whatever the server. A time left of nothing is
//! written `1n`, the least the header holds, where grpc-go writes `0n`.
//!
//! # Examples
//!
//! ```
//! use ironward_tonic::retry::{GrpcRetryLayer, RETRY_BUFFER};
//! use tower::ServiceBuilder;
//! # use http::{Request, Response};
//! # use tower::service_fn;
//!
//! let layer = GrpcRetryLayer::from_json(r#"{"methodConfig": [{
//!     "name": [{"service": "helloworld.Greeter", "method": "SayHello"}],
//!     "timeout": "2s",
//!     "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
//!         "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", "ABORTED"]}
//! }]}"#)?;
//! # let channel = service_fn(|_: Request<tonic::body::Body>| async {
//! #     Ok::<_, std::convert::Infallible>(Response::new(tonic::body::Body::empty()))
//! # });
//! // `channel` a `tonic::transport::Channel`; the stack goes to a generated client's `new`.
//! let stack = ServiceBuilder::new().layer(layer).service(channel);
//! # let _ = stack;
//! assert_eq!(RETRY_BUFFER, 262_144);
//! # Ok::<(), serde_json::Error>(())
//! ```

mod attempt;
mod body;
mod call;
mod config;
mod cut;
mod error;
mod hedge;
mod layer;
mod report;
mod service;
mod status;

pub use body::{RETRY_BUFFER, ResponseBody};
pub use error::BoxError;
pub use layer::GrpcRetryLayer;
pub use service::{GrpcRetryService, ResponseFuture};
