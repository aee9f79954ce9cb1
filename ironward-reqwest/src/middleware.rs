//! [`RetryMiddleware`]: what it holds and how it is configured. The call itself, attempt by
//! attempt, is in `call.rs`.

use std::sync::Arc;
use std::time::Duration;

use http::HeaderName;
use ironward::SharedBudget;
use ironward::http_retry::{Reading, Settings};
use ironward_tokio::{Clock, Dice, Knobs};

use crate::ClientBreaker;
use crate::meter::{DEFAULT_NAME, RetryMeter};
use ironward_tokio::{SharedCircuitBreaker, SharedSreBreaker};

/// The header that marks a request as deduplicated by the server, by default:
/// `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header, as Stripe and others
/// use it).
///
/// # Examples
///
/// ```
/// use ironward_reqwest::IDEMPOTENCY_KEY;
///
/// assert_eq!(IDEMPOTENCY_KEY, "idempotency-key");
/// ```
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// A `reqwest_middleware` middleware that retries failed requests by the core's retry engine,
/// [`ironward::http_retry::Run`]: `Retry-After` honoured but capped, replay safety,
/// exponential backoff with full jitter, and a time budget for the whole call that holds.
///
/// The middleware owns no retry rule. It reads what only reqwest knows (the method, whether
/// the request can be copied, the idempotency header, how an error left the request), the
/// clocks and the dice, hands them to the [`Run`](ironward::http_retry::Run), and does what it
/// answers; `ironward-tower`'s HTTP retry layer does the same on the same inputs, so both
/// edges wait alike to the nanosecond and leave the same [`Retried`](crate::Retried) record.
///
/// # What it does with each attempt
///
/// 1. If a [`ClientBreaker`] is set, it asks the breaker; a refusal ends the call
///    ([`Stop::Refused`](crate::Stop::Refused)).
/// 2. It asks the run for the attempt ([`Run::attempt`](ironward::http_retry::Run::attempt)):
///    before a retry that is the re-check after waking (the budget must still hold the request
///    reserve, else `BudgetExhausted`), and the answer is how long the attempt may take: what
///    is left of the time budget, or the [attempt timeout](Self::with_attempt_timeout) when
///    that is shorter.
/// 3. It keeps a copy of the request for a possible retry (`Request::try_clone`, which fails
///    for a streaming body: such a request is sent once) and sends it down the chain inside
///    `tokio::time::timeout` for that long.
/// 4. A status below 400 is returned at once. Any other status goes to the run with every
///    `Retry-After` field as received (raw bytes, uncombined); a reqwest error goes to it
///    classified as a [`Fault`](ironward::http_retry::Fault) (`is_connect` is `Unsent`, so even
///    a POST may go again; a request reqwest could not build, a redirect, status or decoding
///    error, or another middleware's error is `Final`; any other network failure is `Sent`);
///    an attempt that ran out of its time goes to it as timed out (out of the budget, the call
///    ends with `BudgetExhausted`; out of the attempt timeout, it is a `Sent` fault).
/// 5. The run answers: done, stop (with why), or wait. On a wait the middleware logs the retry
///    (a `tracing` event at `DEBUG` with its `name`, the failed `attempt`, the `wait`, the
///    `status` and the `reason`), sleeps on its [clock](Self::with_clock), and goes back to
///    step 1. A stop is a `DEBUG` event too (a refusal to retry is an answer, not an error),
///    with the `attempts`, the time `waited` and the `stop`'s label.
///
/// The run is told the monotonic clock when the call starts, before each attempt and after
/// each attempt. An attempt that failed (a status of 400 or more, an error, or a timeout) is
/// also told the wall clock (for an HTTP-date `Retry-After`) and one fresh roll of the dice,
/// drawn when its result is known, for that retry's jitter; a success draws nothing.
///
/// # What the caller gets
///
/// Every response carries a [`Retried`](crate::Retried) in its extensions: the attempts, the
/// waits, and why the middleware stopped (`None` after a success). When it gives up after a
/// failed response it returns **that response**, as HTTP clients do, marked with the reason;
/// `error_for_status` still works on it. When the call ends without a response (the last
/// attempt failed in transport or was cut short, or the breaker refused the first), it returns
/// `reqwest_middleware::Error::Middleware` holding a [`GaveUp`](crate::GaveUp).
///
/// A failed response is kept, unread, while the middleware waits to retry it, so that it can
/// still be returned if the retry is abandoned; its connection stays busy until the retry is
/// sent and the response dropped. Waits are capped by [`Settings::max_delay`].
///
/// # Deadlines and cancellation
///
/// The time budget holds: every attempt runs inside `tokio::time::timeout` for at most what is
/// left of [`Settings::total_budget`], so a call never ends later than its budget (give or
/// take tokio's millisecond timer), even when reqwest has no timeout of its own. An attempt cut
/// short by the budget ends the call with a [`GaveUp`](crate::GaveUp) whose stop is
/// `Stop::Decided(StopReason::BudgetExhausted)` and that has no source error. The budget
/// covers the attempts and the waits, up to each response's head: reading a body is the
/// caller's, after the call.
///
/// A client without a timeout of its own should set an
/// [attempt timeout](Self::with_attempt_timeout) shorter than the budget, so that one hung
/// attempt does not eat the whole budget: an attempt cut short by it is retried like any
/// failure after the request was sent (for an idempotent or vouched-for request). reqwest's
/// `ClientBuilder::timeout` or `RequestBuilder::timeout` does the same job, and its timeout
/// error is retried alike.
///
/// Dropping the call's future cancels it at once, sleeping or not; an attempt cut short that
/// way is recorded by neither the retry budget nor the breaker.
///
/// # Default
///
/// [`RetryMiddleware::default`] is `RetryMiddleware::new(Settings::default())`:
///
/// | setting | default | from |
/// | --- | --- | --- |
/// | retries | 3 after the first attempt | the core's [`SETTINGS`](ironward::http_retry::SETTINGS), the MoonBit package `http_retry`'s |
/// | backoff | 200 ms, doubling, capped at 30 s | the core |
/// | largest `Retry-After` honoured | 30 s (`max_delay`); a longer one stops | the core |
/// | time budget | 120 s, keeping 1 s for the next attempt | the core |
/// | attempt timeout | none: an attempt may take what is left of the budget | |
/// | jitter | full jitter from real randomness ([`Dice::random`]) | AWS "Exponential Backoff and Jitter" |
/// | clock | [`Clock::monotonic`] (tokio's, so `tokio::time::pause` drives it) | |
/// | wall clock | [`Clock::unix`] | |
/// | replay-safe header | [`IDEMPOTENCY_KEY`] | IETF idempotency-key draft |
/// | retry budget, breaker | none | |
/// | name | `"default"`, the `name` its metrics and events carry | |
///
/// `Clone` shares the budget, the breaker, the clocks and the dice.
///
/// # Examples
///
/// A client with a 5 s attempt timeout, a retry budget and a breaker, on a manual clock so
/// that the waits take no time:
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use ironward::http_retry::{Settings, Stop, StopReason};
/// use ironward::{SRE, SharedBudget};
/// use ironward_reqwest::{Clock, GaveUp, RetryMiddleware, ClientBreaker};
/// use reqwest_middleware::ClientBuilder;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let settings = Settings { total_budget: Duration::from_secs(20), ..Settings::default() };
/// let budget = Arc::new(SharedBudget::default());
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let retry = RetryMiddleware::new(settings)
///     .with_attempt_timeout(Duration::from_secs(5))
///     .with_budget(Arc::clone(&budget))
///     .with_breaker(ClientBreaker::new(SRE))
///     .with_clock(clock);
/// let client = ClientBuilder::new(reqwest::Client::new()).with(retry).build();
///
/// // Nothing listens there: four refused attempts, each taking a token from the budget.
/// let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
/// let err = client.get(format!("http://{free}/report")).send().await.unwrap_err();
/// let gave_up = ironward_reqwest::gave_up(&err).unwrap();
/// assert_eq!(gave_up.retried().attempts, 4);
/// assert_eq!(gave_up.stop(), Stop::Decided(StopReason::AttemptsExhausted));
/// assert_eq!(budget.tokens(), 6.0);
/// # }
/// ```
///
/// `B` is the breaker family of [`with_breaker`](Self::with_breaker), by default the SRE one.
#[derive(Debug)]
pub struct RetryMiddleware<B: SharedCircuitBreaker = SharedSreBreaker> {
    pub(crate) settings: Settings,
    pub(crate) attempt_timeout: Option<Duration>,
    pub(crate) idempotency_header: Option<HeaderName>,
    pub(crate) budget: Option<Arc<SharedBudget>>,
    pub(crate) breaker: Option<ClientBreaker<B>>,
    /// The name (also the meter's), the clock the waits and the budget read, and the dice of
    /// the jitter; a retry has no shadow mode.
    pub(crate) knobs: Knobs,
    pub(crate) wall_clock: Clock,
    /// The handles it reports through, registered when it sends its first attempt.
    pub(crate) meter: Arc<RetryMeter>,
}

impl RetryMiddleware {
    /// Retries by `settings`, with full jitter from real randomness on tokio's monotonic clock,
    /// requests carrying [`IDEMPOTENCY_KEY`] treated as replay-safe, no attempt timeout, and
    /// neither a retry budget nor a breaker.
    ///
    /// Settings that are not [valid](Settings::valid) retry nothing: every failure stops with
    /// [`StopReason::InvalidSettings`](ironward::http_retry::StopReason::InvalidSettings).
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
            attempt_timeout: None,
            idempotency_header: Some(IDEMPOTENCY_KEY),
            budget: None,
            breaker: None,
            knobs: Knobs::default(),
            wall_clock: Clock::unix(),
            meter: Arc::new(RetryMeter::new(DEFAULT_NAME)),
        }
    }
}

impl<B: SharedCircuitBreaker> RetryMiddleware<B> {
    /// The same middleware cutting each attempt short after `timeout`, or when the time budget
    /// runs out if that comes first. Zero is none, as for the tower edge's
    /// `HttpRetryLayer::with_attempt_timeout`: both pass the setting to the core's
    /// [`Run::attempt`](ironward::http_retry::Run::attempt), which reads it.
    ///
    /// An attempt cut short by it may have reached the server, so it is retried like any
    /// network failure after sending: only for an idempotent method or a vouched-for request
    /// (the core's `Fault::Sent`), and counted against the backend by the breaker and the
    /// retry budget. Set one when the client has no timeout of its own, so that one hung
    /// attempt does not use up the budget the retries need.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::http_retry::Settings;
    /// use ironward_reqwest::RetryMiddleware;
    ///
    /// let settings = Settings { total_budget: Duration::from_secs(10), ..Settings::default() };
    /// // Up to three 2 s attempts, with their waits, fit in the 10 s budget.
    /// let retry = RetryMiddleware::new(settings).with_attempt_timeout(Duration::from_secs(2));
    /// assert_eq!(retry.attempt_timeout(), Some(Duration::from_secs(2)));
    /// assert_eq!(RetryMiddleware::default().attempt_timeout(), None);
    /// ```
    #[must_use]
    pub fn with_attempt_timeout(mut self, timeout: Duration) -> Self {
        self.attempt_timeout = Some(timeout);
        self
    }

    /// The same middleware consulting `budget`, a retry budget shared with every other
    /// middleware that holds it (gRPC A6 retry throttling).
    ///
    /// The core's run tells it of each attempt: a status below 400 gives tokens back
    /// ([`SharedBudget::pass`]), a retryable status or a retried network failure takes one
    /// ([`SharedBudget::fail`]); anything else (a 404) neither. A retry is made only while
    /// [`SharedBudget::can_retry`] holds, else the call stops with
    /// [`Stop::Throttled`](crate::Stop::Throttled); first attempts are never throttled. Share
    /// one budget per backend, across clients: it is shared by `&` without a lock, so calls
    /// on every core report to it without taking turns.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ironward::SharedBudget;
    /// use ironward_reqwest::RetryMiddleware;
    ///
    /// // gRPC A6's example policy, shared by the middlewares of two clients.
    /// let budget = Arc::new(SharedBudget::new(10, 0.1));
    /// let reports = RetryMiddleware::default().with_budget(Arc::clone(&budget));
    /// let uploads = RetryMiddleware::default().with_budget(Arc::clone(&budget));
    /// assert_eq!(budget.tokens(), 10.0);
    /// assert_eq!(Arc::strong_count(&budget), 3);
    /// # let _ = (reports, uploads);
    /// ```
    #[must_use]
    pub fn with_budget(mut self, budget: Arc<SharedBudget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The same middleware asking `breaker` before every attempt, the first included, and
    /// reporting each attempt's outcome to it (see [`ClientBreaker`]), of whichever family. A
    /// refusal stops the
    /// call with [`Stop::Refused`](crate::Stop::Refused); the refused attempt is not counted.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::{CLASSIC, SRE};
    /// use ironward_reqwest::{ClientBreaker, RetryMiddleware};
    ///
    /// let breaker = ClientBreaker::new(SRE);
    /// let retry = RetryMiddleware::default().with_breaker(breaker.clone());
    /// assert_eq!(breaker.ratio(), 0.0);
    /// // The classic breaker, by its policy: the same middleware, another family.
    /// let classic = RetryMiddleware::default().with_breaker(ClientBreaker::new(CLASSIC));
    /// # let _ = (retry, classic);
    /// ```
    #[must_use]
    pub fn with_breaker<F: SharedCircuitBreaker>(
        self,
        breaker: ClientBreaker<F>,
    ) -> RetryMiddleware<F> {
        RetryMiddleware {
            settings: self.settings,
            attempt_timeout: self.attempt_timeout,
            idempotency_header: self.idempotency_header,
            budget: self.budget,
            breaker: Some(breaker),
            knobs: self.knobs,
            wall_clock: self.wall_clock,
            meter: self.meter,
        }
    }

    /// The same middleware drawing its jitter from `dice`: one roll per failed attempt, drawn
    /// when its result is known.
    ///
    /// The core turns each roll into the retry's full-jitter client delay (the one conversion
    /// is [`ironward::http_retry::sample_ppm`]). [`Dice::seeded`] gives a reproducible
    /// sequence; `Dice::from_fn(|| 1.0)` turns jitter off, so that each wait is the backoff
    /// ceiling exactly. A server's `Retry-After` is never shortened by jitter.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_reqwest::{Dice, RetryMiddleware};
    ///
    /// let exact = RetryMiddleware::default().with_dice(Dice::from_fn(|| 1.0));
    /// assert_eq!(format!("{exact:?}").matches("Dice::from_fn").count(), 1);
    /// ```
    #[must_use]
    pub fn with_dice(mut self, dice: Dice) -> Self {
        self.knobs.dice = dice;
        self
    }

    /// The same middleware reading `clock` as its monotonic clock, and sleeping on it between
    /// attempts.
    ///
    /// The time budget is measured on it: it is read when the call starts, before each attempt
    /// and after each attempt. A [`Clock::manual`] clock's sleep moves it forward instead of
    /// waiting, so a test runs its waits exactly and in no time. The attempt deadlines are
    /// tokio timers of the lengths this clock says are left.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_reqwest::{Clock, RetryMiddleware};
    ///
    /// let (clock, hand) = Clock::manual(Duration::from_secs(10));
    /// let retry = RetryMiddleware::default().with_clock(clock);
    /// hand.advance(Duration::from_secs(1));
    /// assert!(format!("{retry:?}").contains("Clock::manual(11s)"));
    /// ```
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.knobs.clock = clock;
        self
    }

    /// The same middleware reading `clock` as the wall clock, as time since the Unix epoch.
    ///
    /// It is read only to turn an HTTP-date `Retry-After` into a delay, once per failed
    /// attempt; clock skew between client and server shifts that delay, so pass a trusted or
    /// corrected clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_reqwest::{Clock, RetryMiddleware};
    ///
    /// let fixed = Clock::from_fn(|| Duration::from_secs(1_700_000_000));
    /// let retry = RetryMiddleware::default().with_wall_clock(fixed);
    /// assert!(format!("{retry:?}").contains("Clock::from_fn"));
    /// ```
    #[must_use]
    pub fn with_wall_clock(mut self, clock: Clock) -> Self {
        self.wall_clock = clock;
        self
    }

    /// The same middleware treating a request that carries the header `name` as replay-safe
    /// when its value vouches ([`ironward::http_retry::vouches`]: present and not blank), so
    /// that a POST or PATCH with it may be retried; `None` turns this off.
    ///
    /// Only use a header that the server honours by deduplicating the request: a key the
    /// client merely generates protects nothing. Send the same key and the same body on every
    /// attempt, which the middleware does by resending the request unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use http::HeaderName;
    /// use ironward_reqwest::RetryMiddleware;
    ///
    /// let custom = RetryMiddleware::default()
    ///     .with_idempotency_header(Some(HeaderName::from_static("x-request-id")));
    /// assert_eq!(custom.idempotency_header(), Some(&HeaderName::from_static("x-request-id")));
    /// let off = RetryMiddleware::default().with_idempotency_header(None);
    /// assert_eq!(off.idempotency_header(), None);
    /// ```
    #[must_use]
    pub fn with_idempotency_header(mut self, name: Option<HeaderName>) -> Self {
        self.idempotency_header = name;
        self
    }

    /// The same middleware reporting under `name` (by default `"default"`): the `name` label of
    /// its metrics and the `name` field of its `tracing` events, so that two retry policies in
    /// one process are told apart (see the guide's [metrics](crate::_guide::metrics)). The handles are
    /// registered under it when the middleware sends its first attempt, so the default name
    /// never shows.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_reqwest::RetryMiddleware;
    ///
    /// let search = RetryMiddleware::default().with_name("search");
    /// assert_eq!(search.name(), "search");
    /// assert_eq!(RetryMiddleware::default().name(), "default");
    /// ```
    #[must_use]
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.knobs.name = name;
        self.meter = Arc::new(RetryMeter::new(name));
        self
    }

    /// The name the middleware reports under.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_reqwest::RetryMiddleware;
    ///
    /// assert_eq!(RetryMiddleware::default().name(), "default");
    /// ```
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.knobs.name
    }

    /// The retry settings.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::http_retry::SETTINGS;
    /// use ironward_reqwest::RetryMiddleware;
    ///
    /// assert_eq!(RetryMiddleware::default().settings(), &SETTINGS);
    /// ```
    #[must_use]
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The per-attempt timeout, if one is set, as it was set (a zero set here bounds no
    /// attempt: see [`with_attempt_timeout`](Self::with_attempt_timeout)).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_reqwest::RetryMiddleware;
    ///
    /// assert_eq!(RetryMiddleware::default().attempt_timeout(), None);
    /// ```
    #[must_use]
    pub fn attempt_timeout(&self) -> Option<Duration> {
        self.attempt_timeout
    }

    /// The header whose value vouches for replay, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_reqwest::{IDEMPOTENCY_KEY, RetryMiddleware};
    ///
    /// assert_eq!(RetryMiddleware::default().idempotency_header(), Some(&IDEMPOTENCY_KEY));
    /// ```
    #[must_use]
    pub fn idempotency_header(&self) -> Option<&HeaderName> {
        self.idempotency_header.as_ref()
    }

    /// What the run is told when an attempt ended at `now`: for a failed attempt the wall
    /// clock and one roll of the dice, read after `now`; for a success nothing more is read
    /// (the run does not decide a success, so it reads neither).
    pub(crate) fn reading(&self, now: Duration, failed: bool) -> Reading {
        if failed {
            Reading {
                now,
                unix: self.wall_clock.now(),
                roll: self.knobs.dice.roll(),
            }
        } else {
            Reading {
                now,
                unix: Duration::ZERO,
                roll: 1.0,
            }
        }
    }

    /// The retry budget, if any, shared by `&` without a lock.
    pub(crate) fn budget(&self) -> Option<&SharedBudget> {
        self.budget.as_deref()
    }
}

impl<B: SharedCircuitBreaker> Clone for RetryMiddleware<B> {
    /// A middleware sharing this one's budget, breaker, clocks and dice.
    fn clone(&self) -> Self {
        Self {
            settings: self.settings,
            attempt_timeout: self.attempt_timeout,
            idempotency_header: self.idempotency_header.clone(),
            budget: self.budget.clone(),
            breaker: self.breaker.clone(),
            knobs: self.knobs.clone(),
            wall_clock: self.wall_clock.clone(),
            meter: Arc::clone(&self.meter),
        }
    }
}

impl Default for RetryMiddleware {
    fn default() -> Self {
        Self::new(Settings::default())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ironward::http_retry::SETTINGS;

    use super::*;

    #[test]
    fn defaults_are_the_cores_with_the_idempotency_key() {
        let middleware = RetryMiddleware::default();
        assert_eq!(*middleware.settings(), SETTINGS);
        assert_eq!(middleware.idempotency_header(), Some(&IDEMPOTENCY_KEY));
        assert_eq!(middleware.attempt_timeout(), None);
        assert!(middleware.budget.is_none() && middleware.breaker.is_none());
        assert_eq!(format!("{:?}", middleware.knobs.clock), "Clock::monotonic");
        assert_eq!(format!("{:?}", middleware.wall_clock), "Clock::unix");
    }

    #[test]
    fn only_a_failed_attempt_reads_the_wall_clock_and_rolls() {
        let rolls = Arc::new(Mutex::new(0u32));
        let counted = Arc::clone(&rolls);
        let middleware = RetryMiddleware::default()
            .with_wall_clock(Clock::from_fn(|| Duration::from_secs(1_700_000_000)))
            .with_dice(Dice::from_fn(move || {
                *counted.lock().unwrap() += 1;
                0.25
            }));
        let now = Duration::from_millis(5);
        let success = middleware.reading(now, false);
        assert_eq!((success.now, *rolls.lock().unwrap()), (now, 0));
        let failure = middleware.reading(now, true);
        assert_eq!(failure.unix, Duration::from_secs(1_700_000_000));
        assert_eq!((failure.roll, *rolls.lock().unwrap()), (0.25, 1));
    }

    #[test]
    fn the_budget_is_shared_with_the_caller() {
        let budget = Arc::new(SharedBudget::new(2, 0.5));
        let middleware = RetryMiddleware::default().with_budget(Arc::clone(&budget));
        middleware.budget().expect("a budget").fail();
        assert_eq!(budget.tokens(), 1.0);
        assert!(RetryMiddleware::default().budget().is_none());
    }
}
