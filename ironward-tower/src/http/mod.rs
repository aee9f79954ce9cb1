//! From each typed refusal to its HTTP response: which piece refused, and why.
//!
//! Every layer of this crate fails with a small typed error, boxed, so that the app decides
//! what a refusal looks like on the wire. These helpers give the conventional answer, one
//! line in a handler for axum's `HandleErrorLayer` (or `ironward_tower::axum::handle_error`,
//! with the `axum` feature, which is that line):
//!
//! | error | [`Piece`] | status | why |
//! | --- | --- | --- | --- |
//! | [`BreakerRefused`], of the SRE or the classic breaker | [`Piece::Breaker`] | `503 Service Unavailable`, with `Retry-After` while a classic breaker is open | a backend this server needs is failing; the server cannot serve, through no fault of the client |
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
//! known, in whole seconds rounded up (RFC 9110 §10.2.3), so that a client waiting that long
//! is not turned away again: a rate limit's refusal, and a classic breaker's while it is open
//! (the rest of its open wait, after which it lets a probe through). The others know of no
//! time at which the request would surely pass.
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
mod exact;
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
/// 503 for [`BreakerRefused`] (the SRE breaker's, and the classic breaker's
/// `BreakerRefused<ClassicReason>`), [`ShedRefused`], [`GateFull`] and [`LimiterRefused`]; 429
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
/// the `RateLimit` fields) and a breaker refusal that knows its wait
/// ([`BreakerRefused::retry_after`]) adds `Retry-After`, so that a client knows when to come
/// back, and the body says which piece refused and why. Pick `format` with
/// [`Format::from_accept`] from the request's headers.
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
    let (piece, link) = refusal(&**err)?;
    Some(problem::respond(piece, link, format))
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

    use ironward::{ADAPTIVE, Criticality, GateReason, Limiter, ShedReason, SreReason};
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
        BreakerRefused::new(SreReason {
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
        // The core's own reason, from a full limiter of 20 (no probe: the default's first
        // window admits one call at a time).
        let steady = ironward::Adaptive {
            probe: Duration::ZERO,
            ..ADAPTIVE
        };
        let mut limiter = Limiter::new(steady, Duration::ZERO);
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

    /// A classic breaker's refusal at `at` after three failures in a row at 0 opened it for
    /// `wait`, as the layer makes it: with the family's wait.
    fn classic_refused(wait: Duration, at: Duration) -> BreakerRefused<ironward::ClassicReason> {
        use ironward::classic::{OpenWait, Record};
        use ironward::{CLASSIC, Classic, ClassicBreaker};
        use ironward_tokio::SharedCircuitBreaker;
        use std::sync::Mutex;
        let policy = Classic {
            record: Record::Consecutive { failures: 3 },
            open: OpenWait::Fixed(wait),
            probes: 1,
            ..CLASSIC
        };
        let breaker = Mutex::new(ClassicBreaker::new(policy, Duration::ZERO));
        for _ in 0..3 {
            let permit = breaker.check(Duration::ZERO, 0.5).expect("closed");
            let _ = breaker.fail(permit, Duration::ZERO);
        }
        let reason = breaker.check(at, 0.5).expect_err("open");
        let wait = <Mutex<ClassicBreaker> as SharedCircuitBreaker>::retry_after(&reason);
        BreakerRefused::new(reason).with_retry_after(wait)
    }

    // The classic breaker knows when it turns half-open: the rest of its open wait, rounded
    // up to whole seconds as a rate limit's wait is (RFC 9110 §10.2.3).
    #[test]
    fn an_open_classic_breaker_says_when_to_come_back() {
        let ms = Duration::from_millis;
        for (wait, at, seconds) in [
            (ms(5_000), ms(3_800), 2),
            (ms(5_000), ms(4_999), 1),
            (ms(500), ms(0), 1),
            (Duration::from_secs(60), ms(0), 60),
        ] {
            let refused = classic_refused(wait, at);
            assert_eq!(refused.retry_after(), Some(wait - at));
            let err: BoxError = Box::new(refused);
            assert_eq!(status_for(&*err), Some(StatusCode::SERVICE_UNAVAILABLE));
            let text = response_for::<String>(&err, Format::Text).unwrap();
            assert_eq!(text.headers()["retry-after"], seconds.to_string().as_str());
            assert!(
                text.body()
                    .starts_with("A backend this server needs is failing: ")
            );
            let problem = response_for::<String>(&err, Format::Problem).unwrap();
            assert_eq!(problem.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(
                problem.headers()["retry-after"],
                seconds.to_string().as_str()
            );
            let body: serde_json::Value = serde_json::from_str(problem.body()).unwrap();
            assert_eq!(body["piece"], "breaker");
            assert_eq!(body["retry_after"], seconds);
            assert_eq!(body["detail"], err.to_string());
        }
    }

    // The SRE breaker admits a share at every moment, and a half-open classic breaker may
    // close at any one: neither says when.
    #[test]
    fn a_breaker_that_knows_no_wait_sends_no_retry_after() {
        let ms = Duration::from_millis;
        let half_open = {
            let refused = classic_refused(ms(100), ms(0));
            BreakerRefused::new(ironward::ClassicReason {
                state: ironward::classic::State::HalfOpen,
                ..*refused.reason()
            })
        };
        let unknown: [BoxError; 2] = [Box::new(breaker_refused()), Box::new(half_open)];
        for err in unknown {
            for format in [Format::Text, Format::Problem] {
                let response = response_for::<String>(&err, format).unwrap();
                assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{err}");
                assert!(response.headers().get("retry-after").is_none(), "{err}");
            }
            let problem = Problem::from_error(&*err).unwrap();
            assert_eq!(problem.piece(), Piece::Breaker);
            let body: serde_json::Value = serde_json::from_str(&problem.to_json()).unwrap();
            assert!(body.get("retry_after").is_none(), "{err}");
        }
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

    /// A token bucket's refusal, as the layer makes it: its numbers worked out from the
    /// bucket's reason when asked.
    fn bucket_limited() -> Limited {
        use std::task::{Context, Poll, Waker};
        use tower::{Layer, Service, service_fn};
        let (clock, _hand) = crate::Clock::manual(Duration::ZERO);
        let layer = crate::QuotaLayer::new(crate::Quota::bucket(3.0, 2.0)).with_clock(clock);
        let mut service = layer.layer(service_fn(|_: http::Request<()>| {
            std::future::ready(Ok::<_, std::convert::Infallible>(Response::new(())))
        }));
        let mut cx = Context::from_waker(Waker::noop());
        // The burst of two taken, a request is refused.
        for _ in 0..3 {
            let sent = std::pin::pin!(service.call(http::Request::new(())));
            if let Poll::Ready(Err(err)) = sent.poll(&mut cx) {
                let limited = *err.downcast_ref::<Limited>().unwrap();
                assert!(limited.retry_after() > Duration::ZERO);
                return limited;
            }
        }
        panic!("a burst of two lets three requests through");
    }

    // The body written straight from the refusal is the problem's, and its JSON is what
    // `serde_json` writes of the table's object, byte for byte: a policy name with quotes and
    // a newline in it included.
    #[test]
    fn a_response_is_its_problem_and_its_json_is_serde_jsons() {
        let named = limited().named("a \"quoted\"\nname");
        let table: [BoxError; 8] = [
            Box::new(bucket_limited()),
            Box::new(breaker_refused()),
            Box::new(classic_refused(Duration::from_millis(1500), Duration::ZERO)),
            Box::new(shed_refused()),
            Box::new(gate_full()),
            Box::new(limiter_refused()),
            Box::new(named),
            Box::new(DeadlineExceeded::new()),
        ];
        for err in table {
            let problem = Problem::from_error(&*err).unwrap();
            let mut expected = serde_json::json!({
                "type": problem.piece().type_uri(),
                "title": problem.piece().title(),
                "status": problem.status().as_u16(),
                "detail": err.to_string(),
                "piece": problem.piece().as_str(),
            });
            if let Some(seconds) = problem.headers().get("retry-after") {
                let seconds: u64 = seconds.to_str().unwrap().parse().unwrap();
                expected["retry_after"] = seconds.into();
            }
            assert_eq!(problem.to_json(), expected.to_string(), "{err}");
            assert_eq!(problem.detail(), err.to_string());
            for format in [Format::Text, Format::Problem] {
                let direct = response_for::<String>(&err, format).unwrap();
                let via = problem.clone().into_response::<String>(format);
                assert_eq!(direct.status(), via.status(), "{err}");
                assert_eq!(direct.headers(), via.headers(), "{err}");
                assert_eq!(direct.body(), via.body(), "{err}");
            }
        }
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
