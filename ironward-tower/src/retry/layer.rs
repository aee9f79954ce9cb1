//! [`HttpRetryLayer`]: the settings and the sources a retrying client reads.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::HeaderName;
use ironward::SharedBudget;
use ironward::http_retry::Settings;
use tower_layer::Layer;

use super::{FinalErrors, HttpRetryService};
use crate::lock::lock;
use crate::meter::{DEFAULT_NAME, RetryMeter};
use crate::tuner::{Tune, Tuner};
use crate::{Clock, Dice};
use ironward_tokio::Knobs;

/// The header by which a client asks the server to deduplicate a request
/// (IETF draft-ietf-httpapi-idempotency-key-header).
const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// Retries failed HTTP requests by the core's retry engine, [`ironward::http_retry::Run`],
/// and holds every attempt to what is left of the call's time budget.
///
/// The [module docs](super) say what one call does, step by step. The builder methods below
/// set what the engine is fed; none of them adds a rule.
///
/// `F` classifies the inner service's errors ([`with_errors`](Self::with_errors)); the default,
/// [`FinalErrors`], retries none. `Clone` shares the settings and the sources (the
/// settings, the clocks, the dice and the retry budget are behind `Arc`s), so every service
/// made from a layer and its clones draws from the same dice, throttles on the same budget,
/// and follows the same [`tuner`](Self::tuner).
///
/// # Default
///
/// `HttpRetryLayer::default()` is `HttpRetryLayer::new(Settings::default())`:
///
/// | what | value | from |
/// | --- | --- | --- |
/// | settings | 3 retries, 200 ms base doubling to a 30 s cap, 120 s budget, 1 s reserve | the MoonBit package `http_retry` ([`Settings`]) |
/// | monotonic clock | [`Clock::monotonic`]: tokio's, so `tokio::time::pause` drives it | |
/// | wall clock | [`Clock::unix`], read only for an HTTP-date `Retry-After` | RFC 9110 §10.2.3 |
/// | dice | [`Dice::random`], one roll per failed attempt, full jitter | |
/// | retry budget | none | gRPC A6 |
/// | idempotency header | `Idempotency-Key` | draft-ietf-httpapi-idempotency-key-header |
/// | attempt timeout | none: each attempt may take what is left of the budget | |
/// | errors | [`FinalErrors`]: none retried | |
/// | name | `"default"`, the `name` its metrics and events carry | |
///
/// # Examples
///
/// A client whose inner service has no timeout of its own: each attempt gets one second, the
/// whole call three.
///
/// ```
/// use std::time::Duration;
/// use http::{Request, Response};
/// use ironward::http_retry::{Settings, Stop, StopReason};
/// use ironward_tower::Dice;
/// use ironward_tower::retry::{GaveUp, HttpRetryLayer};
/// use tower::{BoxError, ServiceBuilder, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let settings = Settings {
///     total_budget: Duration::from_secs(3),
///     request_reserve: Duration::from_millis(500),
///     ..Settings::default()
/// };
/// let hangs = service_fn(|_: Request<()>| std::future::pending::<Result<Response<()>, BoxError>>());
/// let client = ServiceBuilder::new()
///     .layer(
///         HttpRetryLayer::new(settings)
///             .with_attempt_timeout(Duration::from_secs(1))
///             .with_dice(Dice::from_fn(|| 1.0)),
///     )
///     .service(hangs);
///
/// // Two attempts cut off at one second each, 200 ms apart; the 400 ms wait before a third
/// // would not leave the reserve.
/// let start = tokio::time::Instant::now();
/// let err = client.oneshot(Request::new(())).await.unwrap_err();
/// assert_eq!(start.elapsed(), Duration::from_millis(2200));
/// let gave_up = err.downcast_ref::<GaveUp>().unwrap();
/// assert!(gave_up.timed_out());
/// assert_eq!(gave_up.retried().attempts, 2);
/// assert_eq!(gave_up.retried().stop, Some(Stop::Decided(StopReason::BudgetExhausted)));
/// # }
/// ```
#[derive(Clone)]
pub struct HttpRetryLayer<F = FinalErrors> {
    pub(crate) config: Config<F>,
}

/// What every call of a service reads, shared by the service's clones and its futures.
#[derive(Clone)]
pub(crate) struct Config<F> {
    /// Read once at each call's start; shared by the layer's clones and services, so that
    /// a [`tuner`](HttpRetryLayer::tuner) reaches them all.
    pub(crate) settings: Arc<Live>,
    /// The name (also the meter's), the clock the waits and the budget read, and the dice of
    /// the jitter; a retry has no shadow mode.
    pub(crate) knobs: Knobs,
    pub(crate) wall: Clock,
    pub(crate) budget: Option<Arc<SharedBudget>>,
    pub(crate) idempotency: Option<HeaderName>,
    pub(crate) attempt_timeout: Option<Duration>,
    pub(crate) errors: F,
    /// The handles the layer reports through, registered when it first makes a service.
    pub(crate) meter: Arc<RetryMeter>,
}

impl<F> Config<F> {
    /// The retry budget, shared by `&` without a lock.
    pub(crate) fn budget(&self) -> Option<&SharedBudget> {
        self.budget.as_deref()
    }
}

impl HttpRetryLayer {
    /// Retries by `settings`, with the defaults for everything else (see [Default](#default)).
    pub fn new(settings: Settings) -> Self {
        Self {
            config: Config {
                settings: Arc::new(Live(Mutex::new(settings))),
                knobs: Knobs::default(),
                wall: Clock::unix(),
                budget: None,
                idempotency: Some(IDEMPOTENCY_KEY),
                attempt_timeout: None,
                errors: FinalErrors,
                meter: Arc::new(RetryMeter::new(DEFAULT_NAME)),
            },
        }
    }
}

impl Default for HttpRetryLayer {
    fn default() -> Self {
        Self::new(Settings::default())
    }
}

impl<F> HttpRetryLayer<F> {
    /// The monotonic clock the call's budget is measured on, and the waits slept on (by
    /// default [`Clock::monotonic`]).
    ///
    /// On a [`Clock::manual`] clock a wait moves the clock forward instead of sleeping, so a
    /// test runs its waits exactly and at once. The attempt timeouts are tokio timers
    /// whatever the clock: `tokio::time::pause` drives those.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.config.knobs.clock = clock;
        self
    }

    /// The wall clock, read as time since the Unix epoch only to turn an HTTP-date
    /// `Retry-After` into a delay (by default [`Clock::unix`]). Skew between client and server
    /// shifts that delay.
    pub fn with_wall_clock(mut self, wall: Clock) -> Self {
        self.config.wall = wall;
        self
    }

    /// The dice rolled once for each failed attempt, for that retry's full jitter (by default
    /// [`Dice::random`]). `Dice::from_fn(|| 1.0)` is no jitter.
    pub fn with_dice(mut self, dice: Dice) -> Self {
        self.config.knobs.dice = dice;
        self
    }

    /// A retry budget shared with other clients (gRPC A6 retry throttling): every attempt is
    /// reported to it, and a retry is taken only while [`SharedBudget::can_retry`]. First
    /// attempts are never held back. The budget is shared by `&` without a lock, so clients
    /// on every core report to it without taking turns.
    pub fn with_budget(mut self, budget: Arc<SharedBudget>) -> Self {
        self.config.budget = Some(budget);
        self
    }

    /// The header whose value vouches that the server deduplicates the request, which lets a
    /// method that is not idempotent (a `POST`) be retried after it may have been delivered
    /// (by default `Idempotency-Key`; `None` trusts no header).
    ///
    /// The rule is the core's [`vouches`](ironward::http_retry::vouches): a value that is
    /// empty, or only spaces and tabs, names no operation and vouches for nothing.
    pub fn with_idempotency_header(mut self, header: Option<HeaderName>) -> Self {
        self.config.idempotency = header;
        self
    }

    /// The most one attempt may take, shorter than what is left of the budget (by default
    /// none; zero is none, as for [`DeadlineLayer`](crate::DeadlineLayer) and as the core's
    /// [`Run::attempt`](ironward::http_retry::Run::attempt) reads it).
    ///
    /// An attempt cut short by it may have reached the server, so it is retried only when the
    /// request is replay-safe, like a connection reset. Set it when the inner client has no
    /// timeout of its own: otherwise one attempt that hangs takes the whole budget.
    pub fn with_attempt_timeout(mut self, timeout: Duration) -> Self {
        self.config.attempt_timeout = Some(timeout);
        self
    }

    /// The same layer reporting under `name` (by default `"default"`): the `name` label of its
    /// metrics and the `name` field of its `tracing` events, so that two retry policies in one
    /// process (a patient one for reports, a brisk one for search) are told apart (see the
    /// guide's [metrics](crate::_guide::metrics)). The handles are registered under it when the layer makes its
    /// first service, so the default name never shows.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tower::retry::HttpRetryLayer;
    ///
    /// let layer = HttpRetryLayer::default().with_name("search");
    /// assert_eq!(layer.name(), "search");
    /// assert_eq!(HttpRetryLayer::default().name(), "default");
    /// ```
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.config.knobs.name = name;
        self.config.meter = Arc::new(RetryMeter::new(name));
        self
    }

    /// The name the layer reports under.
    pub fn name(&self) -> &'static str {
        self.config.knobs.name
    }

    /// Says which errors of the inner service are retried: `classifier` answers a
    /// [`Fault`](super::Fault) for each (by default [`FinalErrors`]: none).
    ///
    /// [`Fault::Unsent`](super::Fault::Unsent) (nothing reached the server) is retried for any
    /// method, [`Fault::Sent`](super::Fault::Sent) only when replay-safe,
    /// [`Fault::Final`](super::Fault::Final) never; a retried error is decided as a `503`
    /// without `Retry-After`. Which errors left a request unsent only the client knows:
    /// hyper-util's `Error::is_connect`, reqwest's `Error::is_connect`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::Request;
    /// use hyper_util::client::legacy::{Client, Error};
    /// use hyper_util::rt::TokioExecutor;
    /// use ironward::http_retry::{Settings, Stop, StopReason};
    /// use ironward_tower::retry::{Fault, GaveUp, HttpRetryLayer};
    /// use tower::{ServiceBuilder, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let classify = |err: &Error| if err.is_connect() { Fault::Unsent } else { Fault::Sent };
    /// let settings = Settings { base_delay: Duration::from_millis(1), ..Settings::default() };
    /// let client = ServiceBuilder::new()
    ///     .layer(HttpRetryLayer::new(settings).with_errors(classify))
    ///     .service(Client::builder(TokioExecutor::new()).build_http::<String>());
    ///
    /// // Nothing listens on a port just released: every attempt is refused before anything is
    /// // sent, so even a POST is retried, until the retries run out.
    /// let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    /// let request = Request::post(format!("http://{free}/orders")).body(String::new()).unwrap();
    /// let err = client.oneshot(request).await.unwrap_err();
    /// let gave_up = err.downcast_ref::<GaveUp>().unwrap();
    /// assert_eq!(gave_up.retried().attempts, 4);
    /// assert_eq!(gave_up.retried().stop, Some(Stop::Decided(StopReason::AttemptsExhausted)));
    /// let last = gave_up.error().and_then(|err| err.downcast_ref::<Error>());
    /// assert!(last.is_some_and(Error::is_connect));
    /// # }
    /// ```
    pub fn with_errors<G>(self, classifier: G) -> HttpRetryLayer<G> {
        let Config {
            settings,
            knobs,
            wall,
            budget,
            idempotency,
            attempt_timeout,
            errors: _,
            meter,
        } = self.config;
        HttpRetryLayer {
            config: Config {
                settings,
                knobs,
                wall,
                budget,
                idempotency,
                attempt_timeout,
                errors: classifier,
                meter,
            },
        }
    }
}

impl<F> HttpRetryLayer<F> {
    /// A handle that changes the settings of this layer, for every service it made and every
    /// clone at once, from their next call on (a call under way keeps the settings it
    /// started with); see [`Tuner`].
    ///
    /// Settings that are not [`valid`](Settings::valid) are taken as they are, as
    /// [`new`](Self::new) takes them: each call then stops at once with
    /// [`StopReason::InvalidSettings`](ironward::http_retry::StopReason::InvalidSettings).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::http_retry::Settings;
    /// use ironward_tower::HttpRetryLayer;
    ///
    /// let layer = HttpRetryLayer::default();
    /// let tuner = layer.tuner();
    /// let was = tuner.retune(Settings { max_retries: 1, ..Settings::default() });
    /// assert_eq!(was.max_retries, 3);
    /// assert_eq!(layer.clone().tuner().policy().max_retries, 1);
    /// ```
    pub fn tuner(&self) -> Tuner<Settings> {
        Tuner::new(Arc::clone(&self.config.settings) as Arc<dyn Tune<Settings>>)
    }
}

/// A layer's settings, which its tuner changes in place.
pub(crate) struct Live(Mutex<Settings>);

impl Live {
    /// The settings in force.
    pub(crate) fn get(&self) -> Settings {
        *lock(&self.0)
    }
}

impl Tune<Settings> for Live {
    fn retune(&self, settings: Settings) -> Settings {
        let was = std::mem::replace(&mut *lock(&self.0), settings);
        tracing::debug!(from = ?was, to = ?settings, "retry retuned");
        was
    }

    fn policy(&self) -> Settings {
        self.get()
    }
}

impl<S, F: Clone> Layer<S> for HttpRetryLayer<F> {
    type Service = HttpRetryService<S, F>;

    /// A service retrying through the layer's budget. The first one registers the layer's
    /// metrics, under the name that is now final.
    fn layer(&self, inner: S) -> Self::Service {
        self.config.meter.register();
        HttpRetryService::new(inner, Arc::new(self.config.clone()))
    }
}

impl<F> fmt::Debug for HttpRetryLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRetryLayer")
            .field("config", &self.config)
            .finish()
    }
}

impl<F> fmt::Debug for Config<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("settings", &self.settings.get())
            .field("clock", &self.knobs.clock)
            .field("wall", &self.wall)
            .field("dice", &self.knobs.dice)
            .field("budget", &self.budget)
            .field("idempotency", &self.idempotency)
            .field("attempt_timeout", &self.attempt_timeout)
            .field("errors", &std::any::type_name::<F>())
            .field("name", &self.meter.name())
            .finish()
    }
}
