//! Chaos for gRPC: [`GrpcChaosLayer`] injects the faults of one chaos policy
//! ([`ironward::chaos::Chaos`]) into tonic calls, on a client around a `Channel` or on a
//! server (`Server::builder().layer(...)`), to show that the resilience around them (a
//! [`GrpcRetryLayer`](crate::GrpcRetryLayer), a deadline, a breaker) works before production
//! shows it.
//!
//! Each call asks the layer's [`SharedChaos`](ironward_tokio::SharedChaos) for its fault,
//! which numbers it, draws, asks the core's [`Injector::decide`](ironward::chaos::Injector::decide),
//! counts `ironward.chaos.injected{name, fault, shadow}` and logs the decision at `DEBUG`. The
//! layer only applies what was decided:
//!
//! | fault | what the caller gets | the service behind |
//! | --- | --- | --- |
//! | none, or any in shadow mode | the service's answer | called |
//! | [`Error`](ironward::chaos::Fault::Error) | at once, a trailers-only response: `UNAVAILABLE`, "ironward chaos: error" ([`with_error_code`](GrpcChaosLayer::with_error_code)) | not called |
//! | [`Latency`](ironward::chaos::Fault::Latency) | the service's answer, after the drawn delay | called after the delay |
//! | [`Abort`](ironward::chaos::Fault::Abort) | nothing: the call hangs until its deadline or its cancellation ends it | not called |
//! | [`Replace`](ironward::chaos::Fault::Replace) | a trailers-only response: `INTERNAL`, "ironward chaos: replace" ([`with_replace_code`](GrpcChaosLayer::with_replace_code)) | called; its answer dropped |
//!
//! Every response the layer makes itself carries the [`CHAOS_HEADER`] naming the fault, so
//! that a failure made on purpose is told apart from a real one in the caller's metadata
//! (`Status::metadata`) and in logs.
//!
//! # The deadline
//!
//! The call's deadline is its `grpc-timeout` header, read when the call reaches the layer
//! (a malformed one is no deadline here: the service behind answers it as it would).
//!
//! - An **abort** ends there with a trailers-only `DEADLINE_EXCEEDED`, as a server that never
//!   answers ends for a caller with a deadline. Around a client `Channel` this matters: the
//!   channel cuts a call at its `grpc-timeout` itself, but an aborted call never reaches it.
//!   Without a deadline only the caller's cancelling (dropping the call's future) ends an
//!   abort; on a server, tonic's own timeout (outside every layer) ends it too.
//! - A **latency** spends the call's time: the `grpc-timeout` sent on is what is left after
//!   the delay, and a delay past the deadline ends the call there with `DEADLINE_EXCEEDED`,
//!   the service behind never called.
//!
//! # Replay
//!
//! Built [`with_seed`](GrpcChaosLayer::with_seed), the call numbered `i` (from 0, in the order
//! calls reach the layer's services) gets `Injector::decide(chaos::draw(seed, i))`: the same
//! seed injects the same faults on the same calls here, in the core's tests and in the
//! simulator.

mod layer;
mod service;

pub use layer::GrpcChaosLayer;
pub use service::{GrpcChaosFuture, GrpcChaosService};

use http::{HeaderName, HeaderValue, Response};
use ironward::chaos::Fault;
use tonic::{Code, Status};

/// The header of every response the layer makes itself, naming the fault: `error`,
/// `replace` or, for an abort or a latency cut at the deadline, `abort` or `latency`.
///
/// In a trailers-only response every header is metadata, so a tonic caller reads it from
/// the `Status`'s metadata.
///
/// # Examples
///
/// ```
/// assert_eq!(ironward_tonic::chaos::CHAOS_HEADER, "x-ironward-chaos");
/// ```
pub const CHAOS_HEADER: HeaderName = HeaderName::from_static("x-ironward-chaos");

/// A trailers-only response with `code` and the message "ironward chaos: {fault}", the
/// [`CHAOS_HEADER`] naming the fault.
fn answer<B: Default>(code: Code, fault: &Fault) -> Response<B> {
    let label = fault.label();
    let mut response = Status::new(code, format!("ironward chaos: {label}")).into_http();
    response
        .headers_mut()
        .insert(CHAOS_HEADER, HeaderValue::from_static(label));
    response
}
