//! [`HttpRetry`]: the `tower::retry::Policy` that asks `http_retry::decide_response`.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response};
use ironward::Budget;
use ironward::http_retry::{
    Decision, Request as Attempt, Settings, decide, decide_response, retryable_status,
};
use tokio::time::{Sleep, sleep};
use tower::retry::Policy;

use super::read::{copy, has_idempotency_key, read_retry_after, sample_ppm, unix_seconds};
use super::{Attempts, Fault, FinalErrors, RetryStop};
use crate::lock::lock;
use crate::{Clock, Dice};

/// A `tower::retry::Policy` for HTTP clients that retries by
/// [`ironward::http_retry::decide_response`]: the status, the method, the attempt count,
/// the server's `Retry-After` and a time budget, with full-jitter exponential backoff.
///
/// Give it to tower's `Retry` (`ServiceBuilder::new().retry(policy)`) around a client service
/// such as hyper-util's legacy `Client`. For each response it gets back:
///
/// - a status below 400 is a success: returned at once;
/// - any other status goes to `decide_response`, with the request's method, the retry it
///   would be, the time since the first attempt started on [`Clock`] (by default tokio's
///   monotonic clock, so `tokio::time::pause` drives it), every `Retry-After` field as
///   received, the wall clock in Unix seconds for an HTTP-date, and a `sample_ppm` drawn from
///   [`Dice`]. [`Decision::Wait`] becomes a `tokio::time::sleep` before the next attempt;
///   [`Decision::Stop`] returns the response.
///
/// The response returned to the caller carries an [`Attempts`] in its extensions: how many
/// times the request was sent and, if the last answer was a failure, why it was not sent again
/// ([`RetryStop`]).
///
/// # Replay
///
/// The request body must be `Clone` (`Full<Bytes>`, `String`, `()`): the policy copies every
/// request before it is sent, one that will not be retried included, so that even a refusal
/// can say why; cloning `Full<Bytes>` only counts a reference. A streaming body cannot be
/// retried and does not compile here; buffer it first. A method
/// that is not idempotent (RFC 9110 §9.2.2: anything but `GET HEAD PUT DELETE OPTIONS
/// TRACE`) is retried only when the request carries an `Idempotency-Key` header, read as the
/// caller's word that the server deduplicates by it; without one, a `POST` answered `503`
/// comes back with
/// [`StopReason::NotReplayable`](ironward::http_retry::StopReason::NotReplayable).
///
/// A body that cannot be cloned is refused when the program is compiled, not when the
/// request fails:
///
/// ```compile_fail
/// use http::{Request, Response};
/// use ironward_tower::HttpRetry;
/// use tower::retry::Policy;
///
/// struct Streamed; // a body read once, such as hyper's `Incoming`
///
/// let mut policy = HttpRetry::default();
/// let request = Request::new(Streamed);
/// Policy::<Request<Streamed>, Response<()>, ()>::clone_request(&mut policy, &request);
/// ```
///
/// # Errors of the inner service
///
/// By default ([`FinalErrors`]) every error is returned at once, never retried, and carries no
/// [`Attempts`]. [`with_errors`](Self::with_errors) takes a classifier that says which
/// errors left the request unsent ([`Fault::Unsent`], retried for any method) or possibly
/// sent ([`Fault::Sent`], retried only when replayable); those are decided as a `503`
/// without `Retry-After`.
///
/// # Retry budget
///
/// With [`with_budget`](Self::with_budget), every attempt reports to a shared
/// [`ironward::Budget`] (gRPC A6 retry throttling): a success (status below 400) passes, a
/// retryable status (408, 429, 500, 502, 503, 504) or a retried error fails, anything else
/// (a 404, a final error) reports nothing, as A6 counts only the codes it would retry. A
/// retry the decision allows is made only while [`Budget::can_retry`]; otherwise the
/// response is returned with [`RetryStop::Throttled`]. First attempts are never held back.
///
/// # Deadlines
///
/// [`Settings::total_budget`] is a plan, not a timeout: a wait is taken only when it and
/// [`Settings::request_reserve`] fit in what is left, and the next decision sees the time
/// really spent, but nothing here cancels a slow attempt. Put a timeout outside the `Retry`
/// for the whole call ([`DeadlineLayer`](crate::DeadlineLayer) or tower's `TimeoutLayer`),
/// and one inside for each attempt.
///
/// # Clone
///
/// tower's `Retry` clones the policy for every call; the clone counts that call's retries
/// and times it from its first attempt. Clones share the [`Clock`], the [`Dice`] and the
/// budget (all behind `Arc`s). Each retry, and each decision to stop, is a `tracing` event at
/// the debug level; the [`Attempts`] on the response says what happened.
///
/// # Default
///
/// `HttpRetry::default()` is `HttpRetry::new(Settings::default())`: the seed's settings
/// (3 retries, 200 ms base, 30 s cap, 120 s budget, 1 s reserve; see [`Settings`]),
/// [`Clock::monotonic`], [`Clock::unix`] for the wall clock, [`Dice::random`], no budget and
/// [`FinalErrors`].
///
/// # Examples
///
/// A 429 with `Retry-After: 2`, retried after exactly two seconds on the paused clock:
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// use http::{Request, Response, StatusCode};
/// use ironward_tower::{Attempts, HttpRetry};
/// use tower::{ServiceBuilder, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let calls = Arc::new(AtomicU32::new(0));
/// let counter = Arc::clone(&calls);
/// let backend = service_fn(move |_request: Request<String>| {
///     let first = counter.fetch_add(1, Ordering::Relaxed) == 0;
///     async move {
///         let status = if first { StatusCode::TOO_MANY_REQUESTS } else { StatusCode::OK };
///         Response::builder().status(status).header("retry-after", "2").body(String::new())
///     }
/// });
/// let client = ServiceBuilder::new().retry(HttpRetry::default()).service(backend);
///
/// let start = tokio::time::Instant::now();
/// let response = client.oneshot(Request::new(String::new())).await.unwrap();
/// assert_eq!(response.status(), StatusCode::OK);
/// assert_eq!(start.elapsed(), Duration::from_secs(2));
/// let attempts = response.extensions().get::<Attempts>().unwrap();
/// assert_eq!((attempts.sent, attempts.stop), (2, None));
/// # }
/// ```
#[derive(Clone)]
pub struct HttpRetry<F = FinalErrors> {
    settings: Settings,
    errors: F,
    clock: Clock,
    wall: Clock,
    dice: Dice,
    budget: Option<Arc<Mutex<Budget>>>,
    /// When this call's first attempt started, on `clock`.
    started: Duration,
    /// The retries this call has made so far: the index of the next one.
    retries: u32,
}

impl HttpRetry {
    /// A policy deciding by `settings`, on the monotonic clock with real randomness, with no
    /// budget and no error retried.
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            errors: FinalErrors,
            clock: Clock::monotonic(),
            wall: Clock::unix(),
            dice: Dice::random(),
            budget: None,
            started: Duration::ZERO,
            retries: 0,
        }
    }
}

impl Default for HttpRetry {
    fn default() -> Self {
        Self::new(Settings::default())
    }
}

impl<F> HttpRetry<F> {
    /// The same policy measuring the time since the first attempt on `clock` (by default
    /// [`Clock::monotonic`]).
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The same policy reading the wall clock, in time since the Unix epoch, from `wall` (by
    /// default [`Clock::unix`]). It is read only to turn an HTTP-date `Retry-After` into a
    /// delay, so a skewed clock shifts that delay.
    #[must_use]
    pub fn with_wall_clock(mut self, wall: Clock) -> Self {
        self.wall = wall;
        self
    }

    /// The same policy drawing each retry's jitter from `dice` (by default [`Dice::random`]).
    ///
    /// A roll `r` gives `sample_ppm = floor(r · 1_000_000)`, held to `0..=1_000_000` (NaN is
    /// 0): `Dice::from_fn(|| 1.0)` turns jitter off, and the full exponential delay is waited.
    #[must_use]
    pub fn with_dice(mut self, dice: Dice) -> Self {
        self.dice = dice;
        self
    }

    /// The same policy reporting every attempt to `budget`, shared with whoever else holds it,
    /// and retrying only while [`Budget::can_retry`] (see the type's docs, "Retry budget").
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use ironward::Budget;
    /// use ironward_tower::HttpRetry;
    ///
    /// let budget = Arc::new(Mutex::new(Budget::default()));
    /// let policy = HttpRetry::default().with_budget(Arc::clone(&budget));
    /// let other_backend_call = policy.clone(); // the same budget
    /// assert_eq!(budget.lock().unwrap().tokens(), 10.0);
    /// # drop((policy, other_backend_call));
    /// ```
    #[must_use]
    pub fn with_budget(mut self, budget: Arc<Mutex<Budget>>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The same policy retrying the inner service's errors that `errors` classifies as
    /// [`Fault::Unsent`] or [`Fault::Sent`]; it is called as `errors(&err)`.
    ///
    /// A closure over the client's error type, so it is a type parameter (as the breaker's
    /// classifier is): the policy's type is written `HttpRetry` until one is given.
    ///
    /// # Examples
    ///
    /// ```
    /// use http::{Request, Response};
    /// use ironward_tower::{Fault, HttpRetry};
    /// use tower::retry::Policy;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let refused = |err: &&str| if *err == "refused" { Fault::Unsent } else { Fault::Final };
    /// let mut policy = HttpRetry::default().with_errors(refused);
    /// let mut post = Request::post("/orders").body(String::from("{}")).unwrap();
    /// // A POST that never left the client may go again.
    /// let mut result: Result<Response<()>, &str> = Err("refused");
    /// assert!(policy.retry(&mut post, &mut result).is_some());
    /// let mut result: Result<Response<()>, &str> = Err("reset");
    /// assert!(policy.retry(&mut post, &mut result).is_none());
    /// # }
    /// ```
    #[must_use]
    pub fn with_errors<G>(self, errors: G) -> HttpRetry<G> {
        HttpRetry {
            settings: self.settings,
            errors,
            clock: self.clock,
            wall: self.wall,
            dice: self.dice,
            budget: self.budget,
            started: self.started,
            retries: self.retries,
        }
    }

    /// The settings the policy decides by.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Judges one attempt's result; `fault` is the classifier's answer for an error.
    fn judge<B, ResB, E>(
        &mut self,
        request: &Request<B>,
        result: &mut Result<Response<ResB>, E>,
        fault: Fault,
    ) -> Option<Sleep> {
        let replay_safe = has_idempotency_key(request);
        let decision = match result {
            Ok(response) if response.status().as_u16() < 400 => {
                self.report(Some(true));
                self.record(response, None);
                return None;
            }
            Ok(response) => {
                let status = response.status().as_u16();
                self.report(retryable_status(status).then_some(false));
                let attempt = self.attempt(request, status, replay_safe);
                let mut fields = ["", ""];
                let count = read_retry_after(response.headers(), &mut fields);
                decide_response(
                    &self.settings,
                    &attempt,
                    &fields[..count],
                    unix_seconds(self.wall.now()),
                )
            }
            Err(_) if fault == Fault::Final => return None,
            Err(_) => {
                self.report(Some(false));
                let unsent = fault == Fault::Unsent;
                let attempt = self.attempt(request, 503, replay_safe || unsent);
                decide(&self.settings, &attempt, None)
            }
        };
        let stop = match decision {
            Decision::Wait(delay) if self.may_retry() => {
                self.retries = self.retries.saturating_add(1);
                tracing::debug!(
                    method = %request.method(),
                    uri = %request.uri(),
                    retry = self.retries,
                    wait_ms = delay.as_millis() as u64,
                    "retrying after a failed attempt"
                );
                return Some(sleep(delay));
            }
            Decision::Wait(_) => RetryStop::Throttled,
            Decision::Stop(reason) => RetryStop::Decided(reason),
        };
        tracing::debug!(
            method = %request.method(),
            uri = %request.uri(),
            retries = self.retries,
            reason = %stop,
            "not retrying"
        );
        if let Ok(response) = result {
            self.record(response, Some(stop));
        }
        None
    }

    /// What `decide` is told about the attempt that just failed.
    fn attempt<'a, B>(
        &self,
        request: &'a Request<B>,
        status: u16,
        replay_safe: bool,
    ) -> Attempt<'a> {
        Attempt {
            method: request.method().as_str(),
            status,
            retry_index: self.retries,
            elapsed: self.clock.now().saturating_sub(self.started),
            // The policy holds a clone of the body (`B: Clone`) for every attempt it may make.
            body_replayable: true,
            replay_safe,
            sample_ppm: sample_ppm(self.dice.roll()),
        }
    }

    /// Tells the budget, if any, that an attempt passed (`Some(true)`) or failed
    /// (`Some(false)`); `None` reports nothing.
    fn report(&self, passed: Option<bool>) {
        if let (Some(budget), Some(passed)) = (&self.budget, passed) {
            let mut budget = lock(budget);
            if passed {
                budget.pass();
            } else {
                budget.fail();
            }
        }
    }

    /// Whether the budget, if any, allows a retry now.
    fn may_retry(&self) -> bool {
        self.budget
            .as_ref()
            .is_none_or(|budget| lock(budget).can_retry())
    }

    /// Leaves the call's [`Attempts`] on the response returned to the caller.
    fn record<ResB>(&self, response: &mut Response<ResB>, stop: Option<RetryStop>) {
        let sent = self.retries.saturating_add(1);
        response.extensions_mut().insert(Attempts { sent, stop });
    }

    /// The copy of `request` kept for the next attempt. Called by tower's `Retry` on its own
    /// policy before the first attempt (no retry made yet: the call's clock starts) and on the
    /// call's clone before each retry.
    fn keep<B: Clone>(&mut self, request: &Request<B>) -> Request<B> {
        if self.retries == 0 {
            self.started = self.clock.now();
        }
        copy(request)
    }
}

impl<B, ResB, E> Policy<Request<B>, Response<ResB>, E> for HttpRetry<FinalErrors>
where
    B: Clone,
{
    type Future = Sleep;

    fn retry(
        &mut self,
        request: &mut Request<B>,
        result: &mut Result<Response<ResB>, E>,
    ) -> Option<Sleep> {
        self.judge(request, result, Fault::Final)
    }

    fn clone_request(&mut self, request: &Request<B>) -> Option<Request<B>> {
        Some(self.keep(request))
    }
}

impl<B, ResB, E, F> Policy<Request<B>, Response<ResB>, E> for HttpRetry<F>
where
    B: Clone,
    F: Fn(&E) -> Fault,
{
    type Future = Sleep;

    fn retry(
        &mut self,
        request: &mut Request<B>,
        result: &mut Result<Response<ResB>, E>,
    ) -> Option<Sleep> {
        let fault = result.as_ref().err().map_or(Fault::Final, &self.errors);
        self.judge(request, result, fault)
    }

    fn clone_request(&mut self, request: &Request<B>) -> Option<Request<B>> {
        Some(self.keep(request))
    }
}

impl<F> fmt::Debug for HttpRetry<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRetry")
            .field("settings", &self.settings)
            .field("errors", &std::any::type_name::<F>())
            .field("clock", &self.clock)
            .field("wall", &self.wall)
            .field("dice", &self.dice)
            .field("budget", &self.budget)
            .field("started", &self.started)
            .field("retries", &self.retries)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use http::header::RETRY_AFTER;
    use http::{HeaderValue, StatusCode};
    use ironward::http_retry::StopReason;

    use super::*;

    /// A clock the test sets by hand.
    fn manual_clock() -> (Clock, Arc<AtomicU64>) {
        let nanos = Arc::new(AtomicU64::new(0));
        let read = Arc::clone(&nanos);
        (
            Clock::from_fn(move || Duration::from_nanos(read.load(Ordering::Relaxed))),
            nanos,
        )
    }

    fn with_status(status: u16) -> Result<Response<()>, &'static str> {
        let mut response = Response::new(());
        *response.status_mut() = StatusCode::from_u16(status).unwrap();
        Ok(response)
    }

    fn attempts(result: &Result<Response<()>, &str>) -> Option<Attempts> {
        result
            .as_ref()
            .ok()?
            .extensions()
            .get::<Attempts>()
            .copied()
    }

    #[test]
    fn a_retry_after_that_is_not_utf8_is_invalid() {
        // RFC 9110 §5.5 allows obs-text bytes in a field value; none can be a delay.
        let policy = HttpRetry::default().with_dice(Dice::from_fn(|| 1.0));
        let mut response = Response::new(());
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_bytes(b"\xff5").unwrap());
        let mut result: Result<_, ()> = Ok(response);
        let mut policy = policy;
        let request = Request::new(());
        assert!(policy.judge(&request, &mut result, Fault::Final).is_none());
        let got = result.unwrap().extensions().get::<Attempts>().copied();
        assert_eq!(
            got.and_then(|a| a.stop),
            Some(RetryStop::Decided(StopReason::InvalidRetryAfter))
        );
    }

    #[test]
    fn the_call_is_timed_from_its_first_attempt_only() {
        let (clock, nanos) = manual_clock();
        let mut policy = HttpRetry::default().with_clock(clock);
        let request = Request::new(());
        nanos.store(5_000_000_000, Ordering::Relaxed);
        let _ = policy.keep(&request);
        assert_eq!(policy.started, Duration::from_secs(5));
        // A retry keeps the call's start.
        policy.retries = 1;
        nanos.store(9_000_000_000, Ordering::Relaxed);
        let _ = policy.keep(&request);
        assert_eq!(policy.started, Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_success_is_recorded_and_passes_the_budget() {
        let budget = Arc::new(Mutex::new(Budget::new(10, 0.5)));
        budget.lock().unwrap().fail();
        let mut policy = HttpRetry::default().with_budget(Arc::clone(&budget));
        let mut request = Request::new(String::new());
        let mut result = with_status(204);
        assert!(policy.retry(&mut request, &mut result).is_none());
        assert_eq!(
            attempts(&result),
            Some(Attempts {
                sent: 1,
                stop: None
            })
        );
        assert_eq!(budget.lock().unwrap().tokens(), 9.5);
    }

    #[tokio::test]
    async fn a_status_not_retried_reports_nothing_to_the_budget() {
        // gRPC A6 counts only the codes it would retry as failures.
        let budget = Arc::new(Mutex::new(Budget::default()));
        let mut policy = HttpRetry::default().with_budget(Arc::clone(&budget));
        let mut request = Request::new(String::new());
        let mut result = with_status(404);
        assert!(policy.retry(&mut request, &mut result).is_none());
        assert_eq!(budget.lock().unwrap().tokens(), 10.0);
        assert_eq!(
            attempts(&result).and_then(|a| a.stop),
            Some(RetryStop::Decided(StopReason::NotRetryable))
        );
    }

    #[tokio::test]
    async fn a_failure_counts_its_retries() {
        let mut policy = HttpRetry::new(Settings {
            max_retries: 1,
            ..Settings::default()
        });
        let mut request = Request::new(String::new());
        let mut result = with_status(503);
        assert!(policy.retry(&mut request, &mut result).is_some());
        assert_eq!(
            attempts(&result),
            None,
            "a retried response is dropped as is"
        );
        let mut result = with_status(503);
        assert!(policy.retry(&mut request, &mut result).is_none());
        assert_eq!(
            attempts(&result),
            Some(Attempts {
                sent: 2,
                stop: Some(RetryStop::Decided(StopReason::AttemptsExhausted))
            })
        );
    }

    #[tokio::test]
    async fn errors_sent_or_unsent_follow_the_replay_rule() {
        let classify = |err: &&str| match *err {
            "refused" => Fault::Unsent,
            "reset" => Fault::Sent,
            _ => Fault::Final,
        };
        let mut policy = HttpRetry::default().with_errors(classify);
        let mut post = Request::post("/").body(()).unwrap();
        let mut get = Request::get("/").body(()).unwrap();
        let err = |e| Err::<Response<()>, &str>(e);
        assert!(policy.retry(&mut post, &mut err("refused")).is_some());
        assert!(policy.retry(&mut post, &mut err("reset")).is_none());
        assert!(policy.retry(&mut get, &mut err("reset")).is_some());
        assert!(policy.retry(&mut get, &mut err("bad uri")).is_none());
        post.headers_mut()
            .insert("idempotency-key", HeaderValue::from_static("k"));
        assert!(policy.retry(&mut post, &mut err("reset")).is_some());
    }

    #[test]
    fn debug_names_the_classifier() {
        let text = format!("{:?}", HttpRetry::default());
        assert!(text.contains("FinalErrors"), "{text}");
        assert!(text.contains("retries: 0"), "{text}");
    }
}
