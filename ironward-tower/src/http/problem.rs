//! [`Piece`] and [`Problem`]: which layer refused, and the refusal as a response body.

use std::error::Error;
use std::fmt::{self, Write as _};
use std::time::Duration;

use http::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};
use ironward::ClassicReason;

use super::Format;
use super::accept::PROBLEM_JSON;
use super::exact::{Escaped, Exact};
use crate::rate_limit::retry_after_seconds;
use crate::{BreakerRefused, DeadlineExceeded, GateFull, Limited, LimiterRefused, ShedRefused};

/// Where the problem types are documented: each [`Piece`] variant's anchor on docs.rs.
const TYPES: &str = "https://docs.rs/ironward-tower/latest/ironward_tower/http/enum.Piece.html";

/// Which layer of this crate refused a request.
///
/// Each piece has its conventional status ([`Piece::status`]), a short [`title`](Piece::title)
/// for a response body, and a problem type URI ([`Piece::type_uri`]): this variant's entry in
/// these docs, which is what the RFC 9457 `type` member points a developer to.
///
/// # Examples
///
/// ```
/// use http::StatusCode;
/// use ironward_tower::http::Piece;
///
/// assert_eq!(Piece::Shed.status(), StatusCode::SERVICE_UNAVAILABLE);
/// assert_eq!(Piece::RateLimit.as_str(), "rate_limit");
/// assert!(Piece::Gate.type_uri().ends_with("#variant.Gate"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Piece {
    /// A [`BreakerLayer`](crate::BreakerLayer) refused the call: a backend this server
    /// depends on is failing, and the breaker throttles calls to it (the SRE breaker's
    /// [`BreakerRefused`], or the classic breaker's `BreakerRefused<ClassicReason>`). `503`,
    /// with `Retry-After` where the breaker knows when it lets a call through again
    /// ([`BreakerRefused::retry_after`]: a classic breaker refusing open, until it turns
    /// half-open); none for the SRE breaker, which admits a share of calls at every moment,
    /// so that there is no time at which it surely will.
    Breaker,
    /// A [`ShedLayer`](crate::ShedLayer) shed the request: the server's CPU is hot and it
    /// has more in flight than it can finish (RFC 9110 §15.6.4). `503`, no `Retry-After`.
    Shed,
    /// A [`GateLayer`](crate::GateLayer) was full: the server already runs as many requests
    /// as it allows at once. `503`, no `Retry-After` (room comes back when a request ends).
    Gate,
    /// A [`LimiterLayer`](crate::LimiterLayer) refused the request: the calls in flight fill
    /// the adaptive limit (or the request's class's share of it), and the queue, if any,
    /// did not hold it. `503`, no `Retry-After` (room comes back when a call ends, and the
    /// limit follows latency, so no time is sure).
    Limiter,
    /// A [`QuotaLayer`](crate::QuotaLayer) refused the request: this client sent
    /// more than its quota (RFC 6585 §4). `429`, with `Retry-After` and the `RateLimit`
    /// fields ([`Limited::headers`]).
    RateLimit,
    /// A [`DeadlineLayer`](crate::DeadlineLayer)'s time ran out before the response was
    /// ready. `504`.
    Deadline,
}

impl Piece {
    /// The piece whose refusal `err` is, looking at `err` alone (not its sources).
    pub(super) fn of(err: &(dyn Error + 'static)) -> Option<Self> {
        if err.is::<BreakerRefused>() || err.is::<BreakerRefused<ClassicReason>>() {
            Some(Self::Breaker)
        } else if err.is::<ShedRefused>() {
            Some(Self::Shed)
        } else if err.is::<GateFull>() {
            Some(Self::Gate)
        } else if err.is::<LimiterRefused>() {
            Some(Self::Limiter)
        } else if err.is::<Limited>() {
            Some(Self::RateLimit)
        } else if err.is::<DeadlineExceeded>() {
            Some(Self::Deadline)
        } else {
            None
        }
    }

    /// The conventional status: 503 for the breaker, the shedder, the gate and the limiter,
    /// 429 for a rate limit, 504 for a deadline, as gRPC's mapping of `UNAVAILABLE`,
    /// `RESOURCE_EXHAUSTED` and `DEADLINE_EXCEEDED` has them.
    pub const fn status(self) -> StatusCode {
        match self {
            Self::Breaker | Self::Shed | Self::Gate | Self::Limiter => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::RateLimit => StatusCode::TOO_MANY_REQUESTS,
            Self::Deadline => StatusCode::GATEWAY_TIMEOUT,
        }
    }

    /// The piece's name, as the `piece` member of a problem body and the `piece` label of
    /// the crate's metrics give it: `breaker`, `shed`, `gate`, `limiter`, `rate_limit` or
    /// `deadline`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Breaker => "breaker",
            Self::Shed => "shed",
            Self::Gate => "gate",
            Self::Limiter => "limiter",
            Self::RateLimit => "rate_limit",
            Self::Deadline => "deadline",
        }
    }

    /// A short summary for people, the same for every refusal of the piece (RFC 9457
    /// §3.1.4's `title`).
    pub const fn title(self) -> &'static str {
        match self {
            Self::Breaker => "A backend this server needs is failing",
            Self::Shed => "The server is overloaded",
            Self::Gate => "The server is running all the requests it can",
            Self::Limiter => "The concurrency limit is reached",
            Self::RateLimit => "Too many requests",
            Self::Deadline => "The request ran out of time",
        }
    }

    /// The problem type URI (RFC 9457 §3.1.1): this variant's entry in the crate's docs on
    /// docs.rs.
    pub fn type_uri(self) -> String {
        format!("{TYPES}#variant.{}", self.variant())
    }

    /// The variant's name, as its anchor in these docs gives it.
    const fn variant(self) -> &'static str {
        match self {
            Self::Breaker => "Breaker",
            Self::Shed => "Shed",
            Self::Gate => "Gate",
            Self::Limiter => "Limiter",
            Self::RateLimit => "RateLimit",
            Self::Deadline => "Deadline",
        }
    }
}

/// The wait a breaker's refusal knows, of either family the crate's layers make: the SRE
/// breaker's (never one) or the classic breaker's (the rest of its open wait).
fn breaker_wait(err: &(dyn Error + 'static)) -> Option<Duration> {
    if let Some(refused) = err.downcast_ref::<BreakerRefused<ClassicReason>>() {
        refused.retry_after()
    } else {
        err.downcast_ref::<BreakerRefused>()
            .and_then(BreakerRefused::retry_after)
    }
}

impl fmt::Display for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal of this crate's layers as a response: its status, its headers and a body that
/// says which piece refused and why, as RFC 9457 problem details or one line of text.
///
/// | member | what |
/// | --- | --- |
/// | `type` | [`Piece::type_uri`]: the piece's entry in these docs |
/// | `title` | [`Piece::title`] |
/// | `status` | the response's status |
/// | `detail` | the refusal's `Display`: its one line, with the numbers that decided it |
/// | `piece` | [`Piece::as_str`], to match a response to the `piece` label of the metrics |
/// | `retry_after` | where the refusal knows a wait (a rate limit, a classic breaker refusing open), `Retry-After` in whole seconds; absent otherwise |
///
/// The text body is `"<title>: <detail>\n"`. The `detail` tells a client the numbers behind
/// the decision (a breaker's window totals, a shedder's CPU reading): what an operator
/// needs to see why, and nothing about the request or the backend beyond that. A server
/// that would rather not tell maps [`status_for`](super::status_for) to a body of its own.
///
/// # Examples
///
/// ```
/// use ironward::GateReason;
/// use ironward_tower::GateFull;
/// use ironward_tower::http::{Format, Piece, Problem};
///
/// let full = GateFull::new(GateReason { held: 8, limit: 8 });
/// let problem = Problem::from_error(&full).unwrap();
/// assert_eq!(problem.piece(), Piece::Gate);
/// let json: serde_json::Value = serde_json::from_str(&problem.to_json()).unwrap();
/// assert_eq!(json["status"], 503);
/// assert_eq!(json["piece"], "gate");
/// assert_eq!(json["detail"], full.to_string());
///
/// let response = problem.into_response::<String>(Format::Problem);
/// assert_eq!(response.headers()["content-type"], "application/problem+json");
/// ```
#[derive(Debug, Clone)]
pub struct Problem {
    piece: Piece,
    detail: String,
    /// The refusal's `Retry-After`, in its whole seconds, where it knows a wait.
    retry_after: Option<u64>,
    headers: HeaderMap,
}

impl Problem {
    /// The first refusal along `err`'s source chain as a problem, or `None` when there is
    /// none (see [`status_for`](super::status_for)).
    pub fn from_error(err: &(dyn Error + 'static)) -> Option<Self> {
        let (piece, link) = super::refusal(err)?;
        let (retry_after, headers) = waits(link);
        Some(Self {
            piece,
            detail: Exact::format(format_args!("{link}")),
            retry_after,
            headers,
        })
    }

    /// The piece that refused.
    pub fn piece(&self) -> Piece {
        self.piece
    }

    /// The response's status: the piece's.
    pub fn status(&self) -> StatusCode {
        self.piece.status()
    }

    /// The refusal's one line, with the numbers that decided it.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The header fields the response carries besides `Content-Type`: for a rate limit,
    /// `Retry-After` and the `RateLimit` fields; for a breaker that knows its wait,
    /// `Retry-After`; nothing for the other pieces, which know no wait.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body as RFC 9457 problem details in JSON (see the [table](Problem)).
    pub fn to_json(&self) -> String {
        json(self.piece, &self.detail, self.retry_after)
    }

    /// The body as one line of text: `"<title>: <detail>\n"`.
    pub fn to_text(&self) -> String {
        text(self.piece, &self.detail)
    }

    /// The response: the status, the [headers](Problem::headers), and the body in `format`
    /// with its `Content-Type`.
    pub fn into_response<B: From<String>>(self, format: Format) -> Response<B> {
        let body = match format {
            Format::Problem => self.to_json(),
            Format::Text => self.to_text(),
        };
        response(self.piece, self.headers, body, format)
    }
}

/// The response [`Problem::into_response`] gives the refusal `link` of `piece`, written
/// straight from the refusal: its one line is formatted into the body itself, not into a
/// `detail` first.
pub(super) fn respond<B: From<String>>(
    piece: Piece,
    link: &(dyn Error + 'static),
    format: Format,
) -> Response<B> {
    // A rate limit's numbers are worked out once, for its fields and its line alike.
    let settled = link.downcast_ref::<Limited>().map(Limited::settled);
    let link = settled
        .as_ref()
        .map_or(link, |limited| limited as &(dyn Error + 'static));
    let (retry_after, headers) = waits(link);
    let body = match format {
        Format::Problem => json(piece, link, retry_after),
        Format::Text => text(piece, link),
    };
    response(piece, headers, body, format)
}

/// The wait the refusal `link` knows, in whole seconds, and the header fields that say it:
/// a rate limit's `Retry-After` and `RateLimit` fields, a breaker's `Retry-After`, or none.
fn waits(link: &(dyn Error + 'static)) -> (Option<u64>, HeaderMap) {
    if let Some(limited) = link.downcast_ref::<Limited>() {
        (Some(limited.retry_after_seconds()), limited.headers())
    } else if let Some(seconds) = breaker_wait(link).map(retry_after_seconds) {
        let mut headers = HeaderMap::with_capacity(1);
        headers.insert(RETRY_AFTER, HeaderValue::from(seconds));
        (Some(seconds), headers)
    } else {
        (None, HeaderMap::new())
    }
}

/// The text body: `"<title>: <detail>\n"`.
fn text(piece: Piece, detail: &dyn fmt::Display) -> String {
    Exact::format(format_args!("{}: {detail}\n", piece.title()))
}

/// The problem details body, as `serde_json` writes the object of the [table](Problem): its
/// members in the order of their names, without spaces.
fn json(piece: Piece, detail: &dyn fmt::Display, retry_after: Option<u64>) -> String {
    let mut body = Exact::new();
    body.push("{\"detail\":\"");
    // Writing to `Exact` never fails.
    let _ = write!(Escaped(&mut body), "{detail}");
    body.push("\",\"piece\":\"");
    body.push(piece.as_str());
    body.push("\",");
    if let Some(seconds) = retry_after {
        body.push("\"retry_after\":");
        body.push(itoa::Buffer::new().format(seconds));
        body.push(",");
    }
    body.push("\"status\":");
    body.push(piece.status().as_str());
    body.push(",\"title\":\"");
    body.push(piece.title());
    body.push("\",\"type\":\"");
    body.push(TYPES);
    body.push("#variant.");
    body.push(piece.variant());
    body.push("\"}");
    body.into_string()
}

/// The response of `piece`'s refusal: its status, `headers`, and `body` in `format`, with
/// its `Content-Type`.
fn response<B: From<String>>(
    piece: Piece,
    headers: HeaderMap,
    body: String,
    format: Format,
) -> Response<B> {
    let content_type = match format {
        Format::Problem => PROBLEM_JSON,
        Format::Text => "text/plain; charset=utf-8",
    };
    let mut response = Response::new(B::from(body));
    *response.status_mut() = piece.status();
    *response.headers_mut() = headers;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
