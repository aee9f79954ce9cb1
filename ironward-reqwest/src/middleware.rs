//! The middleware: one call, attempt by attempt.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{Extensions, HeaderName};
use ironward::http_retry::{
    Decision, Request as Facts, Settings, StopReason, decide, decide_response,
};
use ironward::{Budget, Permit};
use ironward_tokio::Dice;
use reqwest::{Request, Response};
use reqwest_middleware::{Middleware, Next};
use tokio::time::Instant;

use crate::classify::{self, Outcome, Transport, Verdict};
use crate::retried::{Ledger, mark};
use crate::{GaveUp, SharedBreaker, Stop};

/// The header that marks a request as deduplicated by the server, by default:
/// `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header, as Stripe and others
/// use it).
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The status a transport error is judged as: Service Unavailable, retryable, with no server
/// delay.
const UNAVAILABLE: u16 = 503;

/// A `reqwest_middleware` middleware that retries failed requests by the decisions of
/// [`ironward::http_retry`]: `Retry-After` honoured but capped, replay safety, exponential
/// backoff with full jitter, and a time budget for the whole call.
///
/// # What it does with each attempt
///
/// 1. If a [`SharedBreaker`] is set, it asks the breaker; a refusal ends the call
///    ([`Stop::Refused`]).
/// 2. It keeps a copy of the request for a possible retry (`Request::try_clone`, which fails
///    for a streaming body: such a request is sent once) and sends it down the chain.
/// 3. A response with a status below 400 is returned at once. A 4xx or 5xx goes to
///    [`decide_response`] with every `Retry-After` field as received, the time since the
///    first attempt on tokio's monotonic clock, the wall clock for HTTP-dates, a fresh
///    jitter sample, whether the body can be replayed, and whether the request carries the
///    [idempotency header](Self::with_idempotency_header).
/// 4. A transport error is judged by [`decide`] as a 503 without a server delay (so the same
///    backoff, retry count and time budget apply). A connection that failed before anything
///    was sent (`reqwest::Error::is_connect`) may be retried whatever the method; any other
///    network failure (a reset, a timeout) may have reached the server, so it is retried only
///    if the request is replayable (an idempotent method, or the idempotency header) like a
///    503. A request reqwest could not build, a redirect error, or another middleware's error
///    is not retried ([`StopReason::NotRetryable`]).
/// 5. If the decision is to wait, a [retry budget](Self::with_budget) that is at or below half
///    full ends the call ([`Stop::Throttled`]). Otherwise it logs the retry (a `tracing` event
///    at `INFO` with `attempt`, `status`, `wait` and `reason`), sleeps with
///    `tokio::time::sleep`, and checks on waking that the time budget still holds the request
///    reserve (else [`StopReason::BudgetExhausted`]): a loaded runtime may oversleep.
///
/// # What the caller gets
///
/// Every response carries a [`Retried`](crate::Retried) in its extensions: the attempts, the
/// waits, and why the middleware stopped (`None` after a success). When it gives up after a
/// failed response it returns **that response**, as HTTP clients do, marked with the reason;
/// `error_for_status` still works on it. When the last attempt ended in a transport error (or
/// the breaker refused the first), it returns `reqwest_middleware::Error::Middleware` holding
/// a [`GaveUp`], which keeps the last reqwest error as its source.
///
/// A failed response is kept, unread, while the middleware waits to retry it, so that it can
/// still be returned if the retry is abandoned; its connection stays busy until the retry is
/// sent and the response dropped. Waits are capped by [`Settings::max_delay`].
///
/// # Timeouts and cancellation
///
/// The time budget decides whether to *start* another attempt; it does not cut one short.
/// Bound each attempt with reqwest's own timeout (`ClientBuilder::timeout` or
/// `RequestBuilder::timeout`; a timeout is a network failure, retried as above). Dropping the
/// call's future cancels it at once, sleeping or not; an attempt cut short that way is
/// recorded by neither the budget nor the breaker.
///
/// # Default
///
/// [`RetryMiddleware::default`] is `RetryMiddleware::new(Settings::default())`:
///
/// | setting | default | from |
/// | --- | --- | --- |
/// | retries | 3 after the first attempt | the core's [`SETTINGS`](ironward::http_retry::SETTINGS) |
/// | backoff | 200 ms, doubling, capped at 30 s | the core |
/// | largest `Retry-After` honoured | 30 s (`max_delay`); a longer one stops | the core |
/// | time budget | 120 s, keeping 1 s for the next attempt | the core |
/// | jitter | full jitter from real randomness ([`Dice::random`]) | AWS "Exponential Backoff and Jitter" |
/// | replay-safe header | [`IDEMPOTENCY_KEY`] | IETF idempotency-key draft |
/// | retry budget, breaker | none | |
///
/// `Clone` shares the budget, the breaker and the dice.
///
/// # Examples
///
/// ```no_run
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
/// use ironward::http_retry::Settings;
/// use ironward::{Budget, SRE};
/// use ironward_reqwest::{Retried, RetryMiddleware, SharedBreaker};
/// use reqwest_middleware::ClientBuilder;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reqwest_middleware::Error> {
/// let settings = Settings { total_budget: Duration::from_secs(20), ..Settings::default() };
/// let budget = Arc::new(Mutex::new(Budget::default()));
/// let retry = RetryMiddleware::new(settings)
///     .with_budget(Arc::clone(&budget))
///     .with_breaker(SharedBreaker::new(SRE));
/// let reqwest = reqwest::Client::builder().timeout(Duration::from_secs(5)).build()?;
/// let client = ClientBuilder::new(reqwest).with(retry).build();
///
/// let response = client.get("http://127.0.0.1:8080/report").send().await?;
/// let retried = response.extensions().get::<Retried>().copied().unwrap();
/// println!("{} after {} attempts", response.status(), retried.attempts);
/// if let Some(stop) = retried.stop {
///     println!("gave up: {stop}");
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RetryMiddleware {
    settings: Settings,
    idempotency_header: Option<HeaderName>,
    budget: Option<Arc<Mutex<Budget>>>,
    breaker: Option<SharedBreaker>,
    dice: Dice,
}

impl RetryMiddleware {
    /// Retries by `settings`, with full jitter from real randomness, requests carrying
    /// [`IDEMPOTENCY_KEY`] treated as replay-safe, and neither a retry budget nor a breaker.
    ///
    /// Settings that are not [valid](Settings::valid) retry nothing: every failed response
    /// stops with [`StopReason::InvalidSettings`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::http_retry::Settings;
    /// use ironward_reqwest::RetryMiddleware;
    ///
    /// let patient = RetryMiddleware::new(Settings { max_retries: 5, ..Settings::default() });
    /// assert_eq!(patient.settings().max_retries, 5);
    /// assert_eq!(RetryMiddleware::default().settings(), &Settings::default());
    /// ```
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            idempotency_header: Some(IDEMPOTENCY_KEY),
            budget: None,
            breaker: None,
            dice: Dice::random(),
        }
    }

    /// The same middleware consulting `budget`, a retry budget shared with every other
    /// middleware that holds it (gRPC A6 retry throttling).
    ///
    /// Each attempt reports its outcome: a status below 400 gives tokens back
    /// ([`Budget::pass`]), a retryable status or a network failure takes one
    /// ([`Budget::fail`]); anything else (a 404) neither. A retry is made only while
    /// [`Budget::can_retry`] holds, else the call stops with [`Stop::Throttled`]; first
    /// attempts are never throttled. Share one budget per backend, across clients.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use ironward::Budget;
    /// use ironward_reqwest::RetryMiddleware;
    ///
    /// // gRPC A6's example policy, shared by the middlewares of two clients.
    /// let budget = Arc::new(Mutex::new(Budget::new(10, 0.1)));
    /// let reports = RetryMiddleware::default().with_budget(Arc::clone(&budget));
    /// let uploads = RetryMiddleware::default().with_budget(Arc::clone(&budget));
    /// assert_eq!(budget.lock().unwrap().tokens(), 10.0);
    /// # let _ = (reports, uploads);
    /// ```
    #[must_use]
    pub fn with_budget(mut self, budget: Arc<Mutex<Budget>>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The same middleware asking `breaker` before every attempt, the first included, and
    /// reporting each attempt's outcome to it (see [`SharedBreaker`]). A refusal stops the
    /// call with [`Stop::Refused`].
    #[must_use]
    pub fn with_breaker(mut self, breaker: SharedBreaker) -> Self {
        self.breaker = Some(breaker);
        self
    }

    /// The same middleware drawing its jitter from `dice`.
    ///
    /// Each retry's client delay is scaled by a fresh draw (`sample_ppm = ⌊roll · 1 000 001⌋`,
    /// so a uniform draw is uniform over the core's 0..=1 000 000). [`Dice::seeded`] gives a
    /// reproducible sequence; `Dice::from_fn(|| 1.0)` turns jitter off, so that each wait is
    /// the backoff ceiling exactly. A server's `Retry-After` is never shortened by jitter.
    #[must_use]
    pub fn with_dice(mut self, dice: Dice) -> Self {
        self.dice = dice;
        self
    }

    /// The same middleware treating a request that carries the header `name` (with a
    /// non-empty value) as replay-safe, so that a POST or PATCH with it may be retried; `None`
    /// turns this off.
    ///
    /// Only use a header that the server honours by deduplicating the request: a key the
    /// client merely generates protects nothing. Send the same key and the same body on every
    /// attempt, which the middleware does by resending the request unchanged.
    #[must_use]
    pub fn with_idempotency_header(mut self, name: Option<HeaderName>) -> Self {
        self.idempotency_header = name;
        self
    }

    /// The retry settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Records one attempt's outcome with the budget and the breaker.
    fn settle(&self, permit: Option<Permit>, outcome: Outcome) {
        if let Some(budget) = &self.budget {
            let mut budget = lock(budget);
            match outcome.budget {
                Verdict::Pass => budget.pass(),
                Verdict::Fail => budget.fail(),
                Verdict::Ignore => {}
            }
        }
        if let (Some(breaker), Some(permit)) = (&self.breaker, permit) {
            match outcome.breaker {
                Verdict::Pass => breaker.pass(permit),
                Verdict::Fail => breaker.fail(permit),
                Verdict::Ignore => drop(permit),
            }
        }
    }

    /// Whether the retry budget forbids a retry now.
    fn throttled(&self) -> bool {
        self.budget
            .as_ref()
            .is_some_and(|budget| !lock(budget).can_retry())
    }

    /// Ends the call for `stop`: the last failed response marked with the record, or the
    /// error.
    fn give_up(
        &self,
        last: Option<Failed>,
        ledger: &Ledger,
        stop: Stop,
    ) -> reqwest_middleware::Result<Response> {
        let retried = ledger.retried(Some(stop));
        tracing::debug!(attempts = retried.attempts, reason = %stop, "not retrying");
        match last {
            Some(Failed::Response(response)) => Ok(mark(response, retried)),
            Some(Failed::Error(error)) => Err(GaveUp::new(retried, stop, Some(error)).into()),
            None => Err(GaveUp::new(retried, stop, None).into()),
        }
    }
}

impl Default for RetryMiddleware {
    fn default() -> Self {
        Self::new(Settings::default())
    }
}

#[async_trait::async_trait]
impl Middleware for RetryMiddleware {
    async fn handle(
        &self,
        req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let start = Instant::now();
        let method = req.method().clone();
        let replay_safe = classify::vouched(req.headers(), self.idempotency_header.as_ref());
        let mut ledger = Ledger::default();
        let mut request = req;
        let mut last: Option<Failed> = None;
        loop {
            let permit = match &self.breaker {
                None => None,
                Some(breaker) => match breaker.allow() {
                    Some(permit) => Some(permit),
                    None => return self.give_up(last, &ledger, Stop::Refused),
                },
            };
            // The retry is going ahead: the failed response it replaces is no longer needed.
            drop(last.take());
            let spare = request.try_clone();
            ledger.sent();
            let result = next.clone().run(request, extensions).await;
            let facts = |status: u16, replay_safe: bool| Facts {
                method: method.as_str(),
                status,
                retry_index: ledger.attempts().saturating_sub(1),
                elapsed: start.elapsed(),
                body_replayable: spare.is_some(),
                replay_safe,
                sample_ppm: classify::sample_ppm(self.dice.roll()),
            };
            let (failed, decision) = match result {
                Ok(response) => {
                    let status = response.status();
                    self.settle(permit, Outcome::of_status(status));
                    if !classify::is_failure(status) {
                        return Ok(mark(response, ledger.retried(None)));
                    }
                    let decision = decide_response(
                        &self.settings,
                        &facts(status.as_u16(), replay_safe),
                        &classify::retry_after(response.headers()),
                        now_unix(),
                    );
                    (Failed::Response(response), decision)
                }
                Err(error) => {
                    let transport = Transport::of(&error);
                    self.settle(permit, Outcome::of_error(transport));
                    let decision = match transport {
                        // Nothing reached the server: any method may go again.
                        Transport::Unsent => {
                            decide(&self.settings, &facts(UNAVAILABLE, true), None)
                        }
                        Transport::Sent => {
                            decide(&self.settings, &facts(UNAVAILABLE, replay_safe), None)
                        }
                        Transport::Fatal => Decision::Stop(StopReason::NotRetryable),
                    };
                    (Failed::Error(error), decision)
                }
            };
            let wait = match decision {
                Decision::Wait(wait) => wait,
                Decision::Stop(reason) => {
                    return self.give_up(Some(failed), &ledger, reason.into());
                }
            };
            if self.throttled() {
                return self.give_up(Some(failed), &ledger, Stop::Throttled);
            }
            // A wait is only decided for a replayable body, which is a spare copy.
            let Some(spare) = spare else {
                return self.give_up(Some(failed), &ledger, StopReason::NotReplayable.into());
            };
            tracing::info!(
                attempt = ledger.attempts(),
                status = failed.status(),
                wait = ?wait,
                reason = %failed,
                "retrying request"
            );
            tokio::time::sleep(wait).await;
            ledger.slept(wait);
            if !room_left(&self.settings, start.elapsed()) {
                return self.give_up(Some(failed), &ledger, StopReason::BudgetExhausted.into());
            }
            request = spare;
            last = Some(failed);
        }
    }
}

/// How an attempt failed: the response or the error, kept to be returned if the middleware
/// gives up.
enum Failed {
    Response(Response),
    Error(reqwest_middleware::Error),
}

impl Failed {
    /// The failed response's status code; `None` for a transport error.
    fn status(&self) -> Option<u16> {
        match self {
            Self::Response(response) => Some(response.status().as_u16()),
            Self::Error(_) => None,
        }
    }
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Response(response) => fmt::Display::fmt(&response.status(), f),
            Self::Error(error) => fmt::Display::fmt(error, f),
        }
    }
}

/// Whether, after waking at `elapsed`, the time budget still holds the request reserve: the
/// check the core asks the caller to repeat after a wait (`remaining > request_reserve`, the
/// core's strict inequality with no wait left).
fn room_left(settings: &Settings, elapsed: Duration) -> bool {
    settings.total_budget.saturating_sub(elapsed) > settings.request_reserve
}

/// The wall clock in Unix seconds, for HTTP-date `Retry-After` values; a clock set before 1970
/// reads as 1970.
fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        })
}

/// The budget; a panic while it was held cannot leave it half-updated, so a poisoned lock is
/// used as it is.
fn lock(budget: &Mutex<Budget>) -> MutexGuard<'_, Budget> {
    budget.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use http::StatusCode;
    use ironward::http_retry::SETTINGS;

    use super::*;

    #[test]
    fn after_waking_the_budget_must_still_hold_the_reserve() {
        let s = Settings {
            total_budget: Duration::from_secs(10),
            request_reserve: Duration::from_secs(1),
            ..SETTINGS
        };
        assert!(room_left(&s, Duration::ZERO));
        assert!(room_left(&s, Duration::from_millis(8_999)));
        // Strict, as the core's budget check is: exactly the reserve left is not enough.
        assert!(!room_left(&s, Duration::from_secs(9)));
        assert!(!room_left(&s, Duration::from_secs(60)));
        assert!(!room_left(&s, Duration::MAX));
    }

    #[test]
    fn the_wall_clock_is_in_the_cores_range() {
        let now = now_unix();
        assert!(now > 1_577_836_800, "after 2020");
        assert!(now < 253_402_300_799, "before the year 10000");
    }

    #[test]
    fn defaults_are_the_cores_with_the_idempotency_key() {
        let middleware = RetryMiddleware::default();
        assert_eq!(*middleware.settings(), SETTINGS);
        assert_eq!(middleware.idempotency_header, Some(IDEMPOTENCY_KEY));
        assert!(middleware.budget.is_none() && middleware.breaker.is_none());
        let off = middleware.with_idempotency_header(None);
        assert_eq!(off.idempotency_header, None);
    }

    #[test]
    fn a_budget_at_half_throttles() {
        let budget = Arc::new(Mutex::new(Budget::new(2, 0.5)));
        let middleware = RetryMiddleware::default().with_budget(Arc::clone(&budget));
        assert!(!middleware.throttled());
        middleware.settle(None, Outcome::of_status(StatusCode::SERVICE_UNAVAILABLE));
        assert_eq!(lock(&budget).tokens(), 1.0);
        assert!(middleware.throttled());
        middleware.settle(None, Outcome::of_status(StatusCode::NOT_FOUND));
        assert_eq!(lock(&budget).tokens(), 1.0, "a 404 is neither");
        middleware.settle(None, Outcome::of_status(StatusCode::OK));
        assert_eq!(lock(&budget).tokens(), 1.5);
        assert!(!middleware.throttled(), "1.5 is above half of 2");
    }
}
