//! Which results count as failures: the question the breaker and the shedder put to every
//! response before they settle its permit, and how a call counts towards an adaptive limit,
//! the limiter's.
//!
//! A breaker that counted a `404` against its backend would trip on a client's typos, and one
//! that ignored a `503` would never trip at all, so what "failure" means is the one thing each
//! layer is told rather than assumes. [`Classify`] is that question; the ready-made answers
//! follow go-zero's handlers and interceptors, and a closure answers anything else.
//!
//! A classifier sees the inner service's result with the error already boxed, the form in
//! which the layer returns it, so one classifier works over any inner error type and can look
//! for a timeout anywhere in an error's `source()` chain.
//!
//! | classifier | a failure is | the default of |
//! | --- | --- | --- |
//! | [`HttpFailures`] | an error or a 5xx (go-zero's HTTP breaker) | [`BreakerLayer`](crate::BreakerLayer) |
//! | [`GrpcFailures`] | an error or a gRPC code go-zero's breaker does not accept | |
//! | [`ShedFailures`] | a 503, `DEADLINE_EXCEEDED` or a timeout (go-zero's shedding handlers) | [`ShedLayer`](crate::ShedLayer) |
//! | [`AnyError`] | any error, whatever the response | |
//! | a closure | whatever it answers | |
//! | [`Failing::when`] a closure over an [`Answer`] | whatever it answers, its argument's type unwritten | |
//!
//! The [`LimiterLayer`](crate::LimiterLayer) asks a three-way question instead, [`Grade`]:
//! whether a call's latency is a sample of the backend's, a sign of overload, or neither.
//!
//! | grade | a call is | the default of |
//! | --- | --- | --- |
//! | [`Overloads`] | dropped on a timeout, a 503, 429 or 504, a gRPC `DEADLINE_EXCEEDED`, `RESOURCE_EXHAUSTED` or `UNAVAILABLE`, or a refusal of this crate's layers; ignored on any other error; a success otherwise | [`LimiterLayer`](crate::LimiterLayer) |
//! | a closure | whatever [`Settle`] it answers | |
//!
//! # Examples
//!
//! A breaker around a client whose 429s mean the backend is struggling too:
//!
//! ```
//! use http::{Response, StatusCode};
//! use ironward::SRE;
//! use ironward_tower::breaker::BreakerLayer;
//! use ironward_tower::classify::{Classify, HttpFailures};
//!
//! type BoxError = Box<dyn std::error::Error + Send + Sync>;
//!
//! let struggling = |result: &Result<Response<()>, BoxError>| {
//!     HttpFailures.is_failure(result)
//!         || matches!(result, Ok(response) if response.status() == StatusCode::TOO_MANY_REQUESTS)
//! };
//! let throttled = Ok(Response::builder().status(429).body(()).unwrap());
//! let missing = Ok(Response::builder().status(404).body(()).unwrap());
//! assert!(struggling.is_failure(&throttled));
//! assert!(!struggling.is_failure(&missing));
//! assert!(!HttpFailures.is_failure(&throttled));
//!
//! let breaker = BreakerLayer::new(SRE).with_classifier(struggling);
//! # drop(breaker);
//! ```

mod answer;

pub use answer::{Answer, Failing};

use std::error::Error;
use std::io;

use http::{HeaderMap, HeaderName, Response, StatusCode};
use ironward::Settle;
use tower::BoxError;

/// Decides whether a completed call counts as a failure.
///
/// The [`BreakerLayer`](crate::BreakerLayer) and the [`ShedLayer`](crate::ShedLayer) settle
/// each call they let through when its response future completes: `fail` when
/// [`is_failure`](Classify::is_failure) answers `true`, `pass` otherwise. `Res` is the inner
/// service's response type; the error has already been boxed.
///
/// Ready-made classifiers: [`HttpFailures`] (an error or a 5xx, go-zero's breaker handler),
/// [`GrpcFailures`] (an error or one of the gRPC codes go-zero's breaker does not accept),
/// [`ShedFailures`] (a 503 or a timeout, go-zero's shedding handlers) and [`AnyError`] (every
/// error, whatever the response). Any `Fn(&Result<Res, BoxError>) -> bool` is a classifier too;
/// annotate the closure's argument so that its type is known, or, over HTTP, write it with
/// [`Failing::when`], whose argument needs no annotation.
///
/// # Examples
///
/// ```
/// use ironward_tower::{AnyError, Classify};
///
/// type BoxError = Box<dyn std::error::Error + Send + Sync>;
///
/// let slow = |result: &Result<u64, BoxError>| matches!(result, Ok(ms) if *ms > 500);
/// assert!(slow.is_failure(&Ok(900)));
/// assert!(!slow.is_failure(&Ok(20)));
///
/// let refused: Result<u64, BoxError> = Err("connection refused".into());
/// assert!(AnyError.is_failure(&refused));
/// assert!(!AnyError.is_failure(&Ok(900)));
/// ```
pub trait Classify<Res> {
    /// Whether `result`, the outcome of one call, counts as a failure.
    fn is_failure(&self, result: &Result<Res, BoxError>) -> bool;
}

impl<F, Res> Classify<Res> for F
where
    F: Fn(&Result<Res, BoxError>) -> bool,
{
    fn is_failure(&self, result: &Result<Res, BoxError>) -> bool {
        self(result)
    }
}

/// Every error is a failure; every response, whatever it holds, a success.
///
/// For inner services whose errors already mean "the backend failed" (a client that turns
/// 5xx into errors, as reqwest's `error_for_status` does) or whose responses are not HTTP.
///
/// # Examples
///
/// ```
/// use ironward_tower::{AnyError, Classify};
///
/// let broken: Result<&str, _> = Err("broken pipe".into());
/// assert!(AnyError.is_failure(&broken));
/// assert!(!AnyError.is_failure(&Ok("anything")));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnyError;

impl<Res> Classify<Res> for AnyError {
    fn is_failure(&self, result: &Result<Res, BoxError>) -> bool {
        result.is_err()
    }
}

/// An error, or a response with a 5xx status, is a failure.
///
/// go-zero's HTTP breaker (`rest/handler/breakerhandler.go`) accepts every status under 500
/// and rejects the rest: a 4xx is the caller's fault and says nothing about the backend's
/// health. This is the breaker's default classifier.
///
/// # Examples
///
/// ```
/// use http::{Response, StatusCode};
/// use ironward_tower::{Classify, HttpFailures};
///
/// let with = |status: StatusCode| Ok(Response::builder().status(status).body(()).unwrap());
/// assert!(HttpFailures.is_failure(&with(StatusCode::BAD_GATEWAY)));
/// assert!(!HttpFailures.is_failure(&with(StatusCode::NOT_FOUND)));
/// assert!(HttpFailures.is_failure(&Err::<Response<()>, _>("connection reset".into())));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpFailures;

impl<B> Classify<Response<B>> for HttpFailures {
    fn is_failure(&self, result: &Result<Response<B>, BoxError>) -> bool {
        match result {
            Ok(response) => response.status().is_server_error(),
            Err(_) => true,
        }
    }
}

/// An error, or a gRPC status that go-zero's breaker does not accept, is a failure.
///
/// The codes counted as failures are those go-zero's `zrpc/internal/codes/accept.go` rejects:
/// `DEADLINE_EXCEEDED` (4), `RESOURCE_EXHAUSTED` (8), `UNIMPLEMENTED` (12), `INTERNAL` (13),
/// `UNAVAILABLE` (14) and `DATA_LOSS` (15). Every other code, `UNKNOWN` included (an
/// application error the server did not map), is the caller's business and counts as a
/// success.
///
/// The code is read from the `grpc-status` header of a trailers-only response, which is how
/// tonic and grpc-go answer a call that fails before sending a message (the usual way a unary
/// call fails). A response without that header but with an HTTP status other than 200 came
/// from something in front of the gRPC server and is read by the gRPC specification's HTTP
/// mapping (`doc/http-grpc-status-mapping.md`): 400 is `INTERNAL`, 404 `UNIMPLEMENTED`, 429,
/// 502, 503 and 504 `UNAVAILABLE`. A status sent in the trailers after messages arrives when
/// the body is read, after the response future has completed, so it is not seen here.
///
/// # Examples
///
/// ```
/// use http::Response;
/// use ironward_tower::{Classify, GrpcFailures};
///
/// let with = |code: &str| Ok(Response::builder().header("grpc-status", code).body(()).unwrap());
/// assert!(GrpcFailures.is_failure(&with("14"))); // UNAVAILABLE
/// assert!(!GrpcFailures.is_failure(&with("5"))); // NOT_FOUND
/// assert!(!GrpcFailures.is_failure(&with("0"))); // OK
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GrpcFailures;

impl<B> Classify<Response<B>> for GrpcFailures {
    fn is_failure(&self, result: &Result<Response<B>, BoxError>) -> bool {
        let Ok(response) = result else {
            return true;
        };
        let code = grpc_status(response.headers()).unwrap_or_else(|| match response.status() {
            StatusCode::OK => 0,
            StatusCode::BAD_REQUEST => 13,
            StatusCode::NOT_FOUND => 12,
            StatusCode::TOO_MANY_REQUESTS
            | StatusCode::BAD_GATEWAY
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT => 14,
            _ => 2,
        });
        matches!(code, 4 | 8 | 12 | 13 | 14 | 15)
    }
}

/// A `503` response, a `DEADLINE_EXCEEDED` gRPC status or a timeout error is a failure;
/// anything else, errors included, is a success.
///
/// This is what go-zero's shedding handlers count: the HTTP one (`rest/handler/
/// sheddinghandler.go`) fails a call that answered 503 and passes every other, and the gRPC
/// one (`zrpc/internal/serverinterceptors/sheddinginterceptor.go`) fails a call whose error is
/// a deadline exceeded and passes every other. A shedder measures how much work the server
/// gets through, so only a call cut short by time or turned away by something downstream
/// says nothing about that; a `500` took as long as a `200` to produce. This is the shedder's
/// default classifier.
///
/// A timeout is an error, or any error in its `source()` chain, that is this crate's
/// [`DeadlineExceeded`](crate::DeadlineExceeded) (a [`DeadlineLayer`](crate::DeadlineLayer)
/// cut the request short), tower's `timeout::error::Elapsed`, tokio's `time::error::Elapsed`,
/// or an `io::Error` of kind `TimedOut`. The `DEADLINE_EXCEEDED` code (4) is read from the
/// `grpc-status` header of a trailers-only response.
///
/// # Examples
///
/// ```
/// use http::{Response, StatusCode};
/// use ironward_tower::{Classify, ShedFailures};
///
/// let with = |status: StatusCode| Ok(Response::builder().status(status).body(()).unwrap());
/// assert!(ShedFailures.is_failure(&with(StatusCode::SERVICE_UNAVAILABLE)));
/// assert!(!ShedFailures.is_failure(&with(StatusCode::INTERNAL_SERVER_ERROR)));
///
/// let elapsed = tower::timeout::error::Elapsed::new();
/// assert!(ShedFailures.is_failure(&Err::<Response<()>, _>(elapsed.into())));
/// assert!(!ShedFailures.is_failure(&Err::<Response<()>, _>("bad request body".into())));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShedFailures;

impl<B> Classify<Response<B>> for ShedFailures {
    fn is_failure(&self, result: &Result<Response<B>, BoxError>) -> bool {
        match result {
            Ok(response) => {
                response.status() == StatusCode::SERVICE_UNAVAILABLE
                    || grpc_status(response.headers()) == Some(4)
            }
            Err(error) => is_timeout(&**error),
        }
    }
}

/// Decides how a call an adaptive limiter let in counts towards the limit, once it has
/// completed.
///
/// The [`LimiterLayer`](crate::LimiterLayer) settles each call it let in with the answer
/// ([`ironward::Limiter::settle`]): [`Settle::Success`] samples the call's latency,
/// [`Settle::Dropped`] marks overload (Netflix concurrency-limits' `onDropped`; what it does
/// to the limit is the algorithm's, see [`Settle::Dropped`]), and [`Settle::Ignored`] takes the call out of flight and nothing else
/// (`onIgnore`). A call whose future is dropped before it completes is ignored without
/// being graded. `Res` is the inner service's response type; the error has already been
/// boxed.
///
/// The ready-made grade is [`Overloads`]. Any `Fn(&Result<Res, BoxError>) -> Settle` is a
/// grade too; annotate the closure's argument so that its type is known.
///
/// # Examples
///
/// ```
/// use ironward::Settle;
/// use ironward_tower::classify::Grade;
///
/// type BoxError = Box<dyn std::error::Error + Send + Sync>;
///
/// // A queue client whose "busy" answer is overload, and whose errors say nothing.
/// let busy = |result: &Result<&str, BoxError>| match result {
///     Ok(answer) if *answer == "busy" => Settle::Dropped,
///     Ok(_) => Settle::Success,
///     Err(_) => Settle::Ignored,
/// };
/// assert_eq!(busy.grade(&Ok("busy")), Settle::Dropped);
/// assert_eq!(busy.grade(&Err("bad request".into())), Settle::Ignored);
/// ```
pub trait Grade<Res> {
    /// How `result`, the outcome of one call, settles it.
    fn grade(&self, result: &Result<Res, BoxError>) -> Settle;
}

impl<F, Res> Grade<Res> for F
where
    F: Fn(&Result<Res, BoxError>) -> Settle,
{
    fn grade(&self, result: &Result<Res, BoxError>) -> Settle {
        self(result)
    }
}

/// A call that says the backend is overloaded is dropped; any other error is ignored; any
/// other response is a success, its latency a sample.
///
/// Overload is what an adaptive limit must answer by shrinking: a timeout (as
/// [`ShedFailures`] reads one, anywhere in the error's `source()` chain), a response of
/// `503 Service Unavailable`, `429 Too Many Requests` or `504 Gateway Timeout`, a gRPC
/// status of `DEADLINE_EXCEEDED` (4), `RESOURCE_EXHAUSTED` (8) or `UNAVAILABLE` (14) in a
/// trailers-only response's `grpc-status` header, or a refusal of this crate's layers (any
/// error [`http::status_for`](crate::http::status_for) maps, so a limiter in front of a
/// shedder, a gate or a rate limit sees their refusals). Netflix concurrency-limits calls
/// `onDropped` for the timeouts and the refusals of the backend. Any other error (a bad
/// request, a connection refused before anything was sent) says nothing of the backend's
/// latency and is ignored, as `onIgnore`; a `500` took as long as a `200` to produce, and is
/// a success.
///
/// This is the limiter's default grade.
///
/// # Examples
///
/// ```
/// use http::{Response, StatusCode};
/// use ironward::Settle;
/// use ironward_tower::{GateFull, Overloads, classify::Grade};
///
/// let with = |status: StatusCode| Ok(Response::builder().status(status).body(()).unwrap());
/// assert_eq!(Overloads.grade(&with(StatusCode::TOO_MANY_REQUESTS)), Settle::Dropped);
/// assert_eq!(Overloads.grade(&with(StatusCode::INTERNAL_SERVER_ERROR)), Settle::Success);
/// let full = GateFull::new(ironward::GateReason { held: 4, limit: 4 });
/// assert_eq!(Overloads.grade(&Err::<Response<()>, _>(full.into())), Settle::Dropped);
/// assert_eq!(Overloads.grade(&Err::<Response<()>, _>("bad body".into())), Settle::Ignored);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overloads;

impl<B> Grade<Response<B>> for Overloads {
    fn grade(&self, result: &Result<Response<B>, BoxError>) -> Settle {
        match result {
            Ok(response) => {
                let status = response.status();
                if status == StatusCode::SERVICE_UNAVAILABLE
                    || status == StatusCode::TOO_MANY_REQUESTS
                    || status == StatusCode::GATEWAY_TIMEOUT
                    || matches!(grpc_status(response.headers()), Some(4 | 8 | 14))
                {
                    Settle::Dropped
                } else {
                    Settle::Success
                }
            }
            Err(error) if is_timeout(&**error) || crate::http::status_for(&**error).is_some() => {
                Settle::Dropped
            }
            Err(_) => Settle::Ignored,
        }
    }
}

/// The `grpc-status` header's name, made once: looked up by a `&str`, the name would be
/// parsed and lower-cased again on every response the shedder and the breaker classify.
static GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");

/// The code in a `grpc-status` header, if there is one and it is a number.
fn grpc_status(headers: &HeaderMap) -> Option<u32> {
    headers
        .get(&GRPC_STATUS)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether `error`, or any error it was caused by, is a timeout.
fn is_timeout(error: &(dyn Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        if error.is::<crate::DeadlineExceeded>()
            || error.is::<tower::timeout::error::Elapsed>()
            || error.is::<tokio::time::error::Elapsed>()
            || error
                .downcast_ref::<io::Error>()
                .is_some_and(|error| error.kind() == io::ErrorKind::TimedOut)
        {
            return true;
        }
        next = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    fn status(code: u16) -> Result<Response<()>, BoxError> {
        Ok(Response::builder().status(code).body(()).expect("response"))
    }

    fn grpc(code: &str) -> Result<Response<()>, BoxError> {
        Ok(Response::builder()
            .header("grpc-status", code)
            .body(())
            .expect("response"))
    }

    fn error(error: impl Into<BoxError>) -> Result<Response<()>, BoxError> {
        Err(error.into())
    }

    /// An error that wraps another, as a client error wraps the timeout under it.
    #[derive(Debug)]
    struct Wrapped(BoxError);

    impl fmt::Display for Wrapped {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("request failed")
        }
    }

    impl Error for Wrapped {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&*self.0)
        }
    }

    #[test]
    fn http_failures_reject_5xx_and_accept_the_rest_as_go_zeros_breaker_handler_does() {
        // rest/handler/breakerhandler.go: `cw.Code < http.StatusInternalServerError` accepts.
        for code in [200, 204, 301, 400, 404, 429, 499] {
            assert!(!HttpFailures.is_failure(&status(code)), "{code}");
        }
        for code in [500, 502, 503, 504, 599] {
            assert!(HttpFailures.is_failure(&status(code)), "{code}");
        }
        assert!(HttpFailures.is_failure(&error("connection refused")));
    }

    #[test]
    fn grpc_failures_reject_the_codes_go_zeros_breaker_does_not_accept() {
        // zrpc/internal/codes/accept.go: DeadlineExceeded, Internal, Unavailable, DataLoss,
        // Unimplemented and ResourceExhausted are not acceptable; everything else is.
        let rejected = [4, 8, 12, 13, 14, 15];
        for code in 0..=16 {
            let failed = GrpcFailures.is_failure(&grpc(&code.to_string()));
            assert_eq!(failed, rejected.contains(&code), "grpc-status {code}");
        }
        assert!(GrpcFailures.is_failure(&error("transport error")));
    }

    #[test]
    fn grpc_failures_read_a_bare_http_status_by_the_grpc_http_mapping() {
        // doc/http-grpc-status-mapping.md: 400 INTERNAL, 401 UNAUTHENTICATED, 403
        // PERMISSION_DENIED, 404 UNIMPLEMENTED, 429/502/503/504 UNAVAILABLE, else UNKNOWN.
        for code in [400, 404, 429, 502, 503, 504] {
            assert!(GrpcFailures.is_failure(&status(code)), "{code}");
        }
        for code in [200, 401, 403, 500] {
            assert!(!GrpcFailures.is_failure(&status(code)), "{code}");
        }
    }

    #[test]
    fn grpc_failures_prefer_the_grpc_status_header_to_the_http_status() {
        let unavailable_in_200 = grpc("14");
        assert!(GrpcFailures.is_failure(&unavailable_in_200));
        let ok_in_503 = Ok(Response::builder()
            .status(503)
            .header("grpc-status", "0")
            .body(())
            .expect("response"));
        assert!(!GrpcFailures.is_failure(&ok_in_503));
        // A header that is not a number is no code: the HTTP status decides.
        assert!(!GrpcFailures.is_failure(&grpc("fourteen")));
    }

    #[test]
    fn shed_failures_count_503_and_deadline_exceeded_as_go_zeros_shedding_handlers_do() {
        // rest/handler/sheddinghandler.go: 503 fails, every other code passes.
        assert!(ShedFailures.is_failure(&status(503)));
        for code in [200, 404, 429, 500, 502, 504] {
            assert!(!ShedFailures.is_failure(&status(code)), "{code}");
        }
        // sheddinginterceptor.go: context.DeadlineExceeded fails, every other error passes.
        assert!(ShedFailures.is_failure(&grpc("4")));
        assert!(!ShedFailures.is_failure(&grpc("14")));
        assert!(!ShedFailures.is_failure(&error("handler failed")));
    }

    #[test]
    fn shed_failures_find_a_timeout_anywhere_in_the_source_chain() {
        assert!(ShedFailures.is_failure(&error(crate::DeadlineExceeded::new())));
        assert!(ShedFailures.is_failure(&error(tower::timeout::error::Elapsed::new())));
        let timed_out = io::Error::new(io::ErrorKind::TimedOut, "read timed out");
        assert!(ShedFailures.is_failure(&error(timed_out)));
        let wrapped = Wrapped(Box::new(Wrapped(
            tower::timeout::error::Elapsed::new().into(),
        )));
        assert!(ShedFailures.is_failure(&error(wrapped)));
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "reset");
        assert!(!ShedFailures.is_failure(&error(Wrapped(reset.into()))));
    }

    #[tokio::test]
    async fn shed_failures_count_tokios_own_timeout() {
        let elapsed = tokio::time::timeout(std::time::Duration::ZERO, std::future::pending::<()>())
            .await
            .expect_err("a zero timeout on a pending future elapses");
        assert!(ShedFailures.is_failure(&error(elapsed)));
    }

    // Netflix concurrency-limits: `onDropped` for timeouts and the backend's refusals,
    // `onIgnore` for failures that say nothing of load, `onSuccess` otherwise.
    #[test]
    fn overloads_drop_on_overload_ignore_other_errors_and_pass_the_rest() {
        for code in [429, 503, 504] {
            assert_eq!(Overloads.grade(&status(code)), Settle::Dropped, "{code}");
        }
        for code in [200, 204, 400, 404, 500, 502] {
            assert_eq!(Overloads.grade(&status(code)), Settle::Success, "{code}");
        }
        for code in ["4", "8", "14"] {
            assert_eq!(
                Overloads.grade(&grpc(code)),
                Settle::Dropped,
                "grpc-status {code}"
            );
        }
        for code in ["0", "2", "5", "13", "fourteen"] {
            assert_eq!(
                Overloads.grade(&grpc(code)),
                Settle::Success,
                "grpc-status {code}"
            );
        }
        let elapsed = Wrapped(tower::timeout::error::Elapsed::new().into());
        assert_eq!(Overloads.grade(&error(elapsed)), Settle::Dropped);
        assert_eq!(
            Overloads.grade(&error(crate::DeadlineExceeded::new())),
            Settle::Dropped
        );
        let shed = crate::ShedRefused::new(ironward::ShedReason {
            cpu: 950,
            flying: 9,
            average: 9.0,
            capacity: 5.0,
            overloaded: true,
            cooling: false,
            criticality: ironward::Criticality::Critical,
            floor: ironward::Criticality::Sheddable,
        });
        assert_eq!(
            Overloads.grade(&error(Wrapped(shed.into()))),
            Settle::Dropped
        );
        assert_eq!(Overloads.grade(&error("malformed body")), Settle::Ignored);
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "reset");
        assert_eq!(Overloads.grade(&error(reset)), Settle::Ignored);
    }

    #[test]
    fn any_error_ignores_the_response() {
        assert!(!AnyError.is_failure(&status(500)));
        assert!(AnyError.is_failure(&error("boom")));
    }

    #[test]
    fn a_closure_is_a_classifier() {
        let teapot = |result: &Result<Response<()>, BoxError>| matches!(result, Ok(response) if response.status() == 418);
        assert!(teapot.is_failure(&status(418)));
        assert!(!teapot.is_failure(&status(500)));
    }
}
