//! From each typed refusal to its HTTP response: which piece refused, and why.
//!
//! Every layer of this crate fails with a small typed error, boxed, so that the app decides
//! what a refusal looks like on the wire. These helpers give the conventional answer, one
//! line in a handler for axum's `HandleErrorLayer` (or `ironward_tower::axum::handle_error`,
//! with the `axum` feature, which is that line):
//!
//! | error | [`Piece`] | status | why |
//! | --- | --- | --- | --- |
//! | [`BreakerRefused`] | [`Piece::Breaker`] | `503 Service Unavailable` | a backend this server needs is failing; the server cannot serve, through no fault of the client |
//! | [`ShedRefused`] | [`Piece::Shed`] | `503 Service Unavailable` | the server is overloaded (RFC 9110 §15.6.4) |
//! | [`GateFull`] | [`Piece::Gate`] | `503 Service Unavailable` | a server-wide concurrency limit is the server's state, not the client's doing |
//! | [`LimiterRefused`] | [`Piece::Limiter`] | `503 Service Unavailable` | an adaptive concurrency limit, the state of the server or of the backend it calls |
//! | [`Limited`] | [`Piece::RateLimit`] | `429 Too Many Requests`, with [`Limited::headers`] | this client sent too many (RFC 6585 §4) |
//! | [`DeadlineExceeded`] | [`Piece::Deadline`] | `504 Gateway Timeout` | the server's own time budget ran out |
//!
//! They match gRPC's HTTP mapping of status codes (google.rpc `Code`): `UNAVAILABLE` is 503,
//! `RESOURCE_EXHAUSTED` 429, `DEADLINE_EXCEEDED` 504.
//!
//! Four 503s must still be told apart, by a client and by the operator reading its report,
//! so each response says which piece refused and why ([`Problem`]): as RFC 9457 problem
//! details (`application/problem+json`) for a client whose `Accept` prefers JSON
//! (`application/problem+json` or plain `application/json`), one line of text otherwise
//! ([`Format::from_accept`]). `Retry-After` is sent wherever a wait is
//! known, which is a rate limit's refusal: the others know of no time at which the request
//! would surely pass.
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
//! use ironward_tower::{DeadlineExceeded, GateFull};
//! use ironward_tower::http::{Format, response_for, status_for};
//!
//! let err: Box<dyn std::error::Error + Send + Sync> = Box::new(DeadlineExceeded::new());
//! let response = response_for::<String>(&err, Format::Text).unwrap();
//! assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
//! assert_eq!(response.body(), "The request ran out of time: request deadline exceeded\n");
//! let full = GateFull::new(GateReason { held: 8, limit: 8 });
//! assert_eq!(status_for(&full), Some(StatusCode::SERVICE_UNAVAILABLE));
//! assert_eq!(status_for(&std::fmt::Error), None);
//! ```

mod accept;
mod problem;

use std::error::Error;

use http::{Response, StatusCode};

pub use self::accept::Format;
pub use self::problem::{Piece, Problem};
#[cfg(doc)]
use crate::{BreakerRefused, DeadlineExceeded, GateFull, Limited, LimiterRefused, ShedRefused};

/// How many links of a source chain are searched, so that even a cyclic chain ends.
const DEPTH: usize = 16;

/// The conventional status for a refusal of this crate's layers, or `None` for any other
/// error.
///
/// 503 for [`BreakerRefused`], [`ShedRefused`], [`GateFull`] and [`LimiterRefused`]; 429
/// for [`Limited`]; 504
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
    refusal(err).map(|(piece, _)| piece.status())
}

/// The response for a refusal of this crate's layers, its body in `format`, or `None` for
/// any other error.
///
/// This is [`Problem::from_error`] and [`Problem::into_response`]: the status is
/// [`status_for`]'s, a [`Limited`] adds its [`headers`](Limited::headers) (`Retry-After` and
/// the `RateLimit` fields) so that a client knows when to come back, and the body says which
/// piece refused and why. Pick `format` with [`Format::from_accept`] from the request's
/// headers.
///
/// # Examples
///
/// ```
/// use http::StatusCode;
/// use ironward::GateReason;
/// use ironward_tower::GateFull;
/// use ironward_tower::http::{Format, response_for};
///
/// let full = GateFull::new(GateReason { held: 8, limit: 8 });
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(full);
/// let response = response_for::<String>(&err, Format::Text).unwrap();
/// assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
/// assert_eq!(
///     response.body(),
///     &format!("The server is running all the requests it can: {full}\n"),
/// );
///
/// let other: Box<dyn std::error::Error + Send + Sync> = "boom".into();
/// assert!(response_for::<String>(&other, Format::Problem).is_none());
/// ```
#[allow(
    clippy::borrowed_box,
    reason = "a `&BoxError` does not coerce to `&dyn Error`, so this is what `&err` passes"
)]
pub fn response_for<B: From<String>>(
    err: &Box<dyn Error + Send + Sync>,
    format: Format,
) -> Option<Response<B>> {
    Problem::from_error(&**err).map(|problem| problem.into_response(format))
}

/// The first refusal along the source chain, with its piece.
fn refusal<'e>(err: &'e (dyn Error + 'static)) -> Option<(Piece, &'e (dyn Error + 'static))> {
    let mut link = Some(err);
    for _ in 0..DEPTH {
        let err = link?;
        if let Some(piece) = Piece::of(err) {
            return Some((piece, err));
        }
        link = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use std::fmt;
    use std::time::Duration;

    use ironward::{ADAPTIVE, BreakerReason, Criticality, GateReason, Limiter, ShedReason};
    use ironward_tokio::{LimiterRefusal, Queued};

    use super::*;
    use crate::{BreakerRefused, DeadlineExceeded, GateFull, Limited, LimiterRefused, ShedRefused};

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
            criticality: Criticality::Critical,
            floor: Criticality::Sheddable,
        })
    }

    fn limiter_refused() -> LimiterRefused {
        // The core's own reason, from a full limiter of 20.
        let mut limiter = Limiter::new(ADAPTIVE, Duration::ZERO);
        let grants: Vec<_> = (0..20)
            .map(|_| limiter.acquire(Duration::ZERO).unwrap())
            .collect();
        let reason = limiter.acquire(Duration::ZERO).unwrap_err();
        drop(grants);
        LimiterRefused::new(LimiterRefusal {
            reason,
            queued: Queued::Expired {
                waited: Duration::from_secs(1),
            },
        })
    }

    fn gate_full() -> GateFull {
        GateFull::new(GateReason { held: 8, limit: 8 })
    }

    #[test]
    fn each_refusal_maps_to_its_conventional_status() {
        let table: [(BoxError, StatusCode); 6] = [
            (Box::new(breaker_refused()), StatusCode::SERVICE_UNAVAILABLE),
            (Box::new(shed_refused()), StatusCode::SERVICE_UNAVAILABLE),
            (Box::new(gate_full()), StatusCode::SERVICE_UNAVAILABLE),
            (Box::new(limiter_refused()), StatusCode::SERVICE_UNAVAILABLE),
            (Box::new(limited()), StatusCode::TOO_MANY_REQUESTS),
            (
                Box::new(DeadlineExceeded::new()),
                StatusCode::GATEWAY_TIMEOUT,
            ),
        ];
        for (err, status) in table {
            assert_eq!(status_for(&*err), Some(status), "{err}");
            for format in [Format::Text, Format::Problem] {
                let response = response_for::<String>(&err, format).expect("a refusal");
                assert_eq!(response.status(), status, "{err}");
            }
        }
    }

    // RFC 9457 §3.1: type, title, status and detail, and the piece to tell three 503s apart.
    #[test]
    fn each_piece_writes_problem_details_that_name_it() {
        let table: [(BoxError, &str, &str); 6] = [
            (Box::new(breaker_refused()), "breaker", "Breaker"),
            (Box::new(shed_refused()), "shed", "Shed"),
            (Box::new(gate_full()), "gate", "Gate"),
            (Box::new(limiter_refused()), "limiter", "Limiter"),
            (Box::new(limited()), "rate_limit", "RateLimit"),
            (Box::new(DeadlineExceeded::new()), "deadline", "Deadline"),
        ];
        for (err, piece, variant) in table {
            let response = response_for::<String>(&err, Format::Problem).unwrap();
            assert_eq!(
                response.headers()["content-type"],
                "application/problem+json"
            );
            let body: serde_json::Value = serde_json::from_str(response.body()).unwrap();
            assert_eq!(body["piece"], piece);
            assert_eq!(body["status"], response.status().as_u16());
            assert_eq!(body["detail"], err.to_string());
            let type_uri = body["type"].as_str().unwrap();
            assert!(type_uri.starts_with("https://docs.rs/ironward-tower/"));
            assert!(
                type_uri.ends_with(&format!("#variant.{variant}")),
                "{type_uri}"
            );
            assert!(!body["title"].as_str().unwrap().is_empty());
            // Only a rate limit knows when to come back.
            assert_eq!(body.get("retry_after").is_some(), piece == "rate_limit");
        }
    }

    #[test]
    fn a_rate_limit_response_carries_its_headers_and_its_wait() {
        let err: BoxError = Box::new(limited());
        let response = response_for::<String>(&err, Format::Problem).unwrap();
        for (name, value) in &limited().headers() {
            assert_eq!(response.headers()[name], value);
        }
        assert_eq!(response.headers()["retry-after"], "2");
        let body: serde_json::Value = serde_json::from_str(response.body()).unwrap();
        assert_eq!(body["retry_after"], 2);
    }

    #[test]
    fn a_text_body_is_the_title_and_the_reason_on_one_line() {
        let err: BoxError = Box::new(shed_refused());
        let response = response_for::<String>(&err, Format::Text).unwrap();
        assert_eq!(
            response.headers()["content-type"],
            "text/plain; charset=utf-8"
        );
        assert_eq!(response.headers().len(), 1);
        let body = response.body();
        assert_eq!(
            body,
            &format!("The server is overloaded: {}\n", shed_refused())
        );
        assert_eq!(body.lines().count(), 1);
    }

    #[test]
    fn any_other_error_maps_to_nothing() {
        let err: BoxError = "boom".into();
        assert_eq!(status_for(&*err), None);
        assert!(response_for::<String>(&err, Format::Problem).is_none());
        assert!(Problem::from_error(&*err).is_none());
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
        let response = response_for::<String>(&err, Format::Text).unwrap();
        assert_eq!(response.headers()["retry-after"], "2");
        // The detail is the refusal's own line, not the wrapper's.
        assert!(response.body().contains("rate limit reached"));
    }

    #[test]
    fn a_source_chain_that_loops_ends_with_nothing() {
        let err: BoxError = Box::new(Wrapper(None));
        assert_eq!(status_for(&*err), None);
    }
}
