//! The errors a call ends with that no attempt returned: the boxed error type, a deadline
//! passed, a malformed `grpc-timeout`.

use http::HeaderValue;

/// The error a [`GrpcRetryService`](super::GrpcRetryService) returns: the inner service's own, boxed, as tonic's
/// clients take it.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The status a call cut at its deadline ends with, as a tonic client reads it.
pub(super) fn exceeded() -> BoxError {
    Box::new(tonic::Status::deadline_exceeded(
        "the call's deadline passed",
    ))
}

/// The error a call whose `grpc-timeout` is malformed ends with, before anything is sent: the
/// `INTERNAL` status grpc-go's server answers it with.
pub(super) fn malformed(value: &HeaderValue) -> BoxError {
    let message = format!("malformed grpc-timeout: {value:?}");
    Box::new(tonic::Status::internal(message))
}
