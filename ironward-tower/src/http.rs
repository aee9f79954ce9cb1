//! From each typed refusal to its conventional HTTP response.
//!
//! Every layer of this crate fails with a small typed error, boxed, so that the app decides
//! what a refusal looks like on the wire. These helpers give the conventional answer, one
//! line in a handler for axum's `HandleErrorLayer` (or `ironward_tower::axum::handle_error`, with
//! the `axum` feature, which is that line):
//!
//! | error | status | why |
//! | --- | --- | --- |
//! | [`BreakerRefused`] (breaker) | `503 Service Unavailable` | a backend this server needs is failing; the server cannot serve, through no fault of the client |
//! | [`ShedRefused`] (shedder) | `503 Service Unavailable` | the server is overloaded (RFC 9110 §15.6.4) |
//! | [`GateFull`] (gate) | `503 Service Unavailable` | a server-wide concurrency limit is the server's state, not the client's doing |
//! | [`Limited`] (rate limit) | `429 Too Many Requests`, with [`Limited::headers`] | this client sent too many (RFC 6585 §4) |
//! | [`DeadlineExceeded`] (deadline) | `504 Gateway Timeout` | the server's own time budget ran out |
//!
//! They match gRPC's HTTP mapping of status codes (google.rpc `Code`): `UNAVAILABLE` is 503,
//! `RESOURCE_EXHAUSTED` 429, `DEADLINE_EXCEEDED` 504.
//!
//! The refusal is looked for along the error's [`source`](Error::source) chain, so one
//! wrapped by another layer (tower's `Buffer` wraps its inner service's errors) is still
//! found; anything else is `None`, for the app to answer as it sees fit.
//!
//! # Examples
//!
//! ```
//! use http::StatusCode;
//! use ironward::GateReason;
//! use ironward_tower::{DeadlineExceeded, GateFull, http::{response_for, status_for}};
//!
//! let err: Box<dyn std::error::Error + Send + Sync> = Box::new(DeadlineExceeded::new());
//! let response = response_for::<String>(&err).unwrap();
//! assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
//! let full = GateFull::new(GateReason { held: 8, limit: 8 });
//! assert_eq!(status_for(&full), Some(StatusCode::SERVICE_UNAVAILABLE));
//! assert_eq!(status_for(&std::fmt::Error), None);
//! ```

use std::error::Error;

use http::{Response, StatusCode};

use crate::{BreakerRefused, DeadlineExceeded, GateFull, Limited, ShedRefused};

/// How many links of a source chain are searched, so that even a cyclic chain ends.
const DEPTH: usize = 16;

/// The conventional status for a refusal of this crate's layers, or `None` for any other
/// error.
///
/// 503 for [`BreakerRefused`], [`ShedRefused`] and [`GateFull`]; 429 for [`Limited`]; 504
/// for [`DeadlineExceeded`]; see the [module docs](self) for why. The first refusal along the
/// error's source chain decides.
///
/// # Examples
///
/// ```
/// use http::StatusCode;
/// use ironward::GateReason;
/// use ironward_tower::{DeadlineExceeded, GateFull, http::status_for};
///
/// let full = GateFull::new(GateReason { held: 8, limit: 8 });
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(full);
/// assert_eq!(status_for(&*err), Some(StatusCode::SERVICE_UNAVAILABLE));
/// assert_eq!(status_for(&DeadlineExceeded::new()), Some(StatusCode::GATEWAY_TIMEOUT));
/// assert_eq!(status_for(&std::fmt::Error), None);
/// ```
pub fn status_for(err: &(dyn Error + 'static)) -> Option<StatusCode> {
    refusal(err).map(|(status, _)| status)
}

/// The conventional response for a refusal of this crate's layers, with an empty body, or
/// `None` for any other error.
///
/// The status is [`status_for`]'s; a [`Limited`] is its own
/// [`into_response`](Limited::into_response), which adds its [`headers`](Limited::headers)
/// (`Retry-After` and the `RateLimit` fields) so that a client knows when to come back.
///
/// # Examples
///
/// ```
/// use http::StatusCode;
/// use ironward::GateReason;
/// use ironward_tower::{GateFull, http::response_for};
///
/// let full = GateFull::new(GateReason { held: 8, limit: 8 });
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(full);
/// let response = response_for::<String>(&err).unwrap();
/// assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
/// assert!(response.body().is_empty());
///
/// let other: Box<dyn std::error::Error + Send + Sync> = "boom".into();
/// assert!(response_for::<String>(&other).is_none());
/// ```
#[allow(
    clippy::borrowed_box,
    reason = "a `&BoxError` does not coerce to `&dyn Error`, so this is what `&err` passes"
)]
pub fn response_for<B: Default>(err: &Box<dyn Error + Send + Sync>) -> Option<Response<B>> {
    let (status, link) = refusal(&**err)?;
    if let Some(limited) = link.downcast_ref::<Limited>() {
        return Some(limited.into_response());
    }
    let mut response = Response::new(B::default());
    *response.status_mut() = status;
    Some(response)
}

/// The first refusal along the source chain, with its status.
fn refusal<'e>(err: &'e (dyn Error + 'static)) -> Option<(StatusCode, &'e (dyn Error + 'static))> {
    let mut link = Some(err);
    for _ in 0..DEPTH {
        let err = link?;
        if let Some(status) = status_of(err) {
            return Some((status, err));
        }
        link = err.source();
    }
    None
}

/// The status of this one error, not looking at its sources.
fn status_of(err: &(dyn Error + 'static)) -> Option<StatusCode> {
    if err.is::<BreakerRefused>() || err.is::<ShedRefused>() || err.is::<GateFull>() {
        Some(StatusCode::SERVICE_UNAVAILABLE)
    } else if err.is::<Limited>() {
        Some(StatusCode::TOO_MANY_REQUESTS)
    } else if err.is::<DeadlineExceeded>() {
        Some(StatusCode::GATEWAY_TIMEOUT)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;
    use std::time::Duration;

    use ironward::{BreakerReason, GateReason, ShedReason};

    use super::*;

    type BoxError = Box<dyn Error + Send + Sync>;

    fn limited() -> Limited {
        Limited::new(
            Duration::from_millis(1500),
            10,
            Some(Duration::from_secs(60)),
        )
    }

    fn breaker_refused() -> BreakerRefused {
        BreakerRefused::new(BreakerReason {
            total: 100,
            accepts: 0,
            failing: 1,
            working: 0,
            k: 1.5,
            drop: 0.94,
            roll: 0.5,
        })
    }

    fn shed_refused() -> ShedRefused {
        ShedRefused::new(ShedReason {
            cpu: 950,
            flying: 50,
            average: 58.0,
            capacity: 5.0,
            overloaded: true,
            cooling: false,
        })
    }

    fn gate_full() -> GateFull {
        GateFull::new(GateReason { held: 8, limit: 8 })
    }

    #[test]
    fn each_refusal_maps_to_its_conventional_status() {
        let table: [(BoxError, StatusCode); 5] = [
            (Box::new(breaker_refused()), StatusCode::SERVICE_UNAVAILABLE),
            (Box::new(shed_refused()), StatusCode::SERVICE_UNAVAILABLE),
            (Box::new(gate_full()), StatusCode::SERVICE_UNAVAILABLE),
            (Box::new(limited()), StatusCode::TOO_MANY_REQUESTS),
            (
                Box::new(DeadlineExceeded::new()),
                StatusCode::GATEWAY_TIMEOUT,
            ),
        ];
        for (err, status) in table {
            assert_eq!(status_for(&*err), Some(status), "{err}");
            let response = response_for::<()>(&err).expect("a refusal");
            assert_eq!(response.status(), status, "{err}");
        }
    }

    #[test]
    fn a_rate_limit_response_carries_its_headers() {
        let err: BoxError = Box::new(limited());
        let response = response_for::<String>(&err).unwrap();
        assert_eq!(response.headers(), &limited().headers());
        assert_eq!(response.headers()["retry-after"], "2");
        assert!(response.body().is_empty());
    }

    #[test]
    fn other_refusals_carry_no_headers_and_an_empty_body() {
        let err: BoxError = Box::new(gate_full());
        let response = response_for::<String>(&err).unwrap();
        assert!(response.headers().is_empty());
        assert!(response.body().is_empty());
    }

    #[test]
    fn any_other_error_maps_to_nothing() {
        let err: BoxError = "boom".into();
        assert_eq!(status_for(&*err), None);
        assert!(response_for::<()>(&err).is_none());
    }

    /// An error that wraps another, as tower's `Buffer` wraps its service's errors, or, with
    /// no inner error, is its own source.
    #[derive(Debug)]
    struct Wrapper(Option<BoxError>);

    impl fmt::Display for Wrapper {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("wrapped")
        }
    }

    impl Error for Wrapper {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            match &self.0 {
                Some(inner) => Some(&**inner),
                None => Some(self),
            }
        }
    }

    #[test]
    fn a_refusal_wrapped_in_other_errors_is_found() {
        let inner = Wrapper(Some(Box::new(limited())));
        let err: BoxError = Box::new(Wrapper(Some(Box::new(inner))));
        assert_eq!(status_for(&*err), Some(StatusCode::TOO_MANY_REQUESTS));
        let response = response_for::<()>(&err).unwrap();
        assert_eq!(response.headers()["retry-after"], "2");
    }

    #[test]
    fn a_source_chain_that_loops_ends_with_nothing() {
        let err: BoxError = Box::new(Wrapper(None));
        assert_eq!(status_for(&*err), None);
    }
}
