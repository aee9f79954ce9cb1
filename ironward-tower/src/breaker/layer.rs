//! The layer that puts a breaker in front of a service.

use std::fmt;
use std::sync::Arc;

use ironward_tokio::{BreakerPolicy, SharedCircuitBreaker, SharedSreBreaker};
use tower_layer::Layer;

use super::service::BreakerService;
use super::shared::Shared;
use crate::tuner::{Tune, Tuner};
use crate::{Clock, Dice, HttpFailures, Mode};
use ironward_tokio::Knobs;

/// Puts a circuit breaker in front of a service: the client side's defence against a backend
/// that has started failing.
///
/// Each call first asks a breaker: by default an [`ironward::SreBreaker`] running the
/// [`Sre`](ironward::Sre) policy, shared between threads as an
/// [`ironward_tokio::SharedSreBreaker`] (no lock for a healthy backend's calls), or the classic
/// breaker, for a [`Classic`](ironward::Classic) policy ([`new`](Self::new) picks the family
/// by the policy it is given). A refused call fails at once with
/// [`BreakerRefused`](crate::BreakerRefused) and never reaches the inner service; an admitted
/// one runs, and when its response future completes the classifier (`C`, by default
/// [`HttpFailures`]) says whether it failed, and the breaker records it, at that moment on the
/// layer's clock. The SRE breaker refuses a fraction of calls that grows with the failures in
/// its window rather than cutting the backend off, so a struggling backend keeps the traffic
/// it can still serve (Google SRE book, chapter 21, "client-side throttling"; go-zero
/// `core/breaker/googlebreaker.go`, whose client interceptor and HTTP handler this follows).
/// The classic breaker cuts it off: open, it refuses every call for its open wait (and its
/// refusal says how long is left, which [`http::response_for`](crate::http::response_for)
/// sends as `Retry-After`), then lets a few probes through, whose outcomes close or reopen it;
/// each change of state is counted and logged (the guide's
/// [metrics](crate::_guide::metrics)).
///
/// The breaker belongs on the client, around whatever makes the call (a hyper, reqwest or tonic
/// client). Put any timeout *inside* it (`ServiceBuilder::new().layer(breaker)
/// .layer(TimeoutLayer::new(..))`), so that a timed-out call completes with an error the
/// breaker sees: a call whose response future is dropped before it completes leaves its permit
/// unsettled, and is recorded neither as a success nor as a failure, as the core does with a
/// permit that is never settled. A call cancelled from outside therefore says nothing about the
/// backend.
///
/// **One layer, one breaker.** Every service the layer makes, every clone of those and every
/// clone of the layer share one record, so cloning a client (one clone per task, one per
/// connection in a server) never resets or splits it. Give each backend its own layer (or, on a
/// server, each route, as go-zero's `rest/handler/breakerhandler.go` keeps one breaker per
/// method and path: axum's `Router::layer` applies one layer to every route).
///
/// [`new`](Self::new) makes the breaker, its window opening then, behind an `Arc` that every
/// service and every clone shares, as tower's `GlobalConcurrencyLimitLayer` shares its
/// semaphore; cloning the layer is an `Arc` clone and nothing more. The builders
/// [`with_classifier`](Self::with_classifier), [`with_clock`](Self::with_clock) (by default
/// [`Clock::monotonic`]) and [`with_dice`](Self::with_dice) (by default [`Dice::random`]) each
/// make a new breaker, since the one made before was made on the old sources: configure the
/// layer first, then clone it or make services from it. Services and clones made before a
/// builder keep the breaker they had. A layer in a `static` goes in a `std::sync::LazyLock`.
///
/// To change the policy while the layer serves (a configuration reload), take a
/// [`tuner`](Self::tuner) from the configured layer: it retunes the one breaker that every
/// service and clone shares, keeping its window.
///
/// `B` is the breaker family, shared between threads: by default the SRE breaker
/// ([`SharedSreBreaker`]), and whichever shared form [`new`](Self::new)'s policy names
/// ([`BreakerPolicy::Shared`]); [`for_breaker`](Self::for_breaker) takes any other
/// [`SharedCircuitBreaker`], such as a core [`CircuitBreaker`](ironward::CircuitBreaker)
/// behind a `Mutex`.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use ironward::SRE;
/// use ironward_tower::{AnyError, BreakerLayer, BreakerRefused, Dice};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// // A backend that fails every call, and counts the calls that reach it.
/// let reached = Arc::new(AtomicUsize::new(0));
/// let counter = Arc::clone(&reached);
/// let backend = service_fn(move |_request: ()| {
///     counter.fetch_add(1, Ordering::Relaxed);
///     async { Err::<(), _>("backend down") }
/// });
/// let breaker = BreakerLayer::new(SRE)
///     .with_classifier(AnyError)
///     .with_dice(Dice::seeded(7));
/// let client = breaker.layer(backend);
///
/// let mut refused = 0;
/// for _ in 0..200 {
///     let err = client.clone().oneshot(()).await.unwrap_err();
///     if err.is::<BreakerRefused>() {
///         refused += 1;
///     }
/// }
/// assert!(refused > 150, "refused {refused} of 200");
/// // A refused call never reached the backend.
/// assert_eq!(reached.load(Ordering::Relaxed) + refused, 200);
/// assert!(breaker.ratio() > 0.9);
/// # }
/// ```
pub struct BreakerLayer<C = HttpFailures, B: SharedCircuitBreaker = SharedSreBreaker> {
    pub(crate) shared: Arc<Shared<C, B>>,
}

impl BreakerLayer {
    /// A layer running the breaker family of `policy` ([`BreakerPolicy`]: [`Sre`](ironward::Sre)
    /// for the SRE breaker, [`Classic`](ironward::Classic) for the classic one), counting
    /// errors and 5xx responses as failures ([`HttpFailures`]), on the monotonic clock with
    /// real randomness. The policy value picks the family: `BreakerLayer::new(SRE)` and
    /// `BreakerLayer::new(CLASSIC)` differ in nothing else.
    ///
    /// # Examples
    ///
    /// The classic breaker: three failures in a row open it for 30 s, during which no call
    /// reaches the backend; then one probe, whose success closes it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    /// use std::time::Duration;
    /// use ironward::classic::{OpenWait, Record};
    /// use ironward::{CLASSIC, Classic, ClassicReason};
    /// use ironward_tower::{AnyError, BreakerLayer, BreakerRefused};
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let policy = Classic {
    ///     record: Record::Consecutive { failures: 3 },
    ///     open: OpenWait::Fixed(Duration::from_secs(30)),
    ///     probes: 1,
    ///     ..CLASSIC
    /// };
    /// let (down, reached) = (Arc::new(AtomicBool::new(true)), Arc::new(AtomicUsize::new(0)));
    /// let (flag, counter) = (Arc::clone(&down), Arc::clone(&reached));
    /// let backend = service_fn(move |_request: ()| {
    ///     counter.fetch_add(1, Ordering::Relaxed);
    ///     let failing = flag.load(Ordering::Relaxed);
    ///     async move { if failing { Err("backend down") } else { Ok(()) } }
    /// });
    /// let client = BreakerLayer::new(policy).with_classifier(AnyError).layer(backend);
    ///
    /// for _ in 0..10 {
    ///     let _ = client.clone().oneshot(()).await;
    /// }
    /// assert_eq!(reached.load(Ordering::Relaxed), 3, "open after the third failure");
    /// let err = client.clone().oneshot(()).await.unwrap_err();
    /// assert!(err.is::<BreakerRefused<ClassicReason>>());
    ///
    /// down.store(false, Ordering::Relaxed);
    /// tokio::time::advance(Duration::from_secs(30)).await;
    /// client.clone().oneshot(()).await.expect("the probe");
    /// client.clone().oneshot(()).await.expect("closed again");
    /// assert_eq!(reached.load(Ordering::Relaxed), 5);
    /// # }
    /// ```
    pub fn new<P: BreakerPolicy>(policy: P) -> BreakerLayer<HttpFailures, P::Shared> {
        Self::for_breaker(policy)
    }

    /// A layer running the breaker family `B` under `policy`, otherwise as [`new`](Self::new):
    /// for a family that [`new`](Self::new) does not pick by its policy, or another shared
    /// form of one it does.
    ///
    /// # Examples
    ///
    /// The SRE breaker behind one lock a call, as any core family runs before it has a
    /// lock-free form of its own:
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use ironward::{SreBreaker, SRE};
    /// use ironward_tower::{AnyError, BreakerLayer, BreakerRefused, Dice};
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let down = service_fn(|_request: ()| async { Err::<(), _>("backend down") });
    /// let layer = BreakerLayer::for_breaker::<Mutex<SreBreaker>>(SRE)
    ///     .with_classifier(AnyError)
    ///     .with_dice(Dice::from_fn(|| 0.0));
    /// let client = layer.layer(down);
    /// for _ in 0..10 {
    ///     let _ = client.clone().oneshot(()).await;
    /// }
    /// assert!(client.oneshot(()).await.unwrap_err().is::<BreakerRefused>());
    /// # }
    /// ```
    pub fn for_breaker<B: SharedCircuitBreaker>(
        policy: B::Policy,
    ) -> BreakerLayer<HttpFailures, B> {
        Parts {
            policy,
            classify: HttpFailures,
            knobs: Knobs::default(),
        }
        .build()
    }
}

impl<C, B: SharedCircuitBreaker> BreakerLayer<C, B> {
    /// What this layer was built from, with `classify` for its classifier: the parts a
    /// builder changes one of before building a new breaker.
    fn parts<D>(&self, classify: D) -> Parts<D, B> {
        Parts {
            policy: self.shared.policy(),
            classify,
            knobs: self.shared.knobs().clone(),
        }
    }

    /// The same layer with `classify` deciding which results are failures (see
    /// [`Classify`](crate::Classify)), and a new breaker under the policy in force.
    #[must_use]
    pub fn with_classifier<D>(self, classify: D) -> BreakerLayer<D, B> {
        self.parts(classify).build()
    }

    /// The fraction of calls the breaker would refuse now
    /// ([`CircuitBreaker::ratio`](ironward::CircuitBreaker::ratio)), for a dashboard or an
    /// alert; the same as
    /// [`BreakerService::ratio`] on any of its services.
    pub fn ratio(&self) -> f64 {
        self.shared.ratio()
    }

    /// Whether the layer enforces its refusals or only reports them; see
    /// [`with_mode`](Self::with_mode).
    pub fn mode(&self) -> Mode {
        self.shared.mode()
    }
}

impl<C: Send + Sync + 'static, B: SharedCircuitBreaker> BreakerLayer<C, B> {
    /// A handle that changes the policy of this layer's breaker in place, keeping its record,
    /// for every service the layer made and every clone at once; see [`Tuner`].
    ///
    /// One `Arc` clone. Take it from the layer once it is configured: a builder makes a new
    /// breaker, which the tuner taken before it does not reach.
    pub fn tuner(&self) -> Tuner<B::Policy> {
        Tuner::new(Arc::clone(&self.shared) as Arc<dyn Tune<B::Policy>>)
    }
}

impl<C: Clone, B: SharedCircuitBreaker> BreakerLayer<C, B> {
    /// The same layer with one knob changed, and a new breaker under the policy in force.
    fn rebuilt(self, change: impl FnOnce(&mut Knobs)) -> Self {
        let mut parts = self.parts(self.shared.classifier().clone());
        change(&mut parts.knobs);
        parts.build()
    }

    /// The same layer reading `now` from `clock`, with a new breaker under the policy in
    /// force, whose window opens now on `clock`.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.rebuilt(|knobs| knobs.clock = clock)
    }

    /// The same layer drawing its rolls from `dice`, with a new breaker under the policy in
    /// force: one a call where the family reads it
    /// ([`SharedCircuitBreaker::DRAWS`](ironward_tokio::SharedCircuitBreaker::DRAWS)), none
    /// for the classic breaker.
    #[must_use]
    pub fn with_dice(self, dice: Dice) -> Self {
        self.rebuilt(|knobs| knobs.dice = dice)
    }

    /// The same layer reporting under `name` (by default `"default"`), with a new breaker
    /// under the policy in force: the `name` label of its metrics and the `name` field of its
    /// `tracing` events, so that two breakers in one process are told apart (see the crate
    /// docs' `# Metrics`).
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.rebuilt(|knobs| knobs.name = name)
    }

    /// The same layer in `mode` (by default [`Mode::Enforce`]), with a new breaker under the
    /// policy in force. In [`Mode::Shadow`] a call the breaker refuses goes through to the
    /// inner service instead, without a permit, so its outcome is not recorded, exactly as
    /// the enforcing breaker, which never ran it, records nothing of it; the core counts the
    /// refusal as a drop either way. The refusal is reported as `shadowed` (see [`Mode`]).
    #[must_use]
    pub fn with_mode(self, mode: Mode) -> Self {
        self.rebuilt(|knobs| knobs.mode = mode)
    }
}

/// What a [`BreakerLayer`] is built from. Every builder changes one part and builds a new
/// breaker from the rest, so that no builder forgets one.
struct Parts<C, B: SharedCircuitBreaker> {
    policy: B::Policy,
    classify: C,
    knobs: Knobs,
}

impl<C, B: SharedCircuitBreaker> Parts<C, B> {
    /// A layer with a new breaker on these parts, its window opening now.
    fn build(self) -> BreakerLayer<C, B> {
        let breaker = B::new(self.policy, self.knobs.clock.now());
        BreakerLayer {
            shared: Arc::new(Shared::new(breaker, self.classify, self.knobs)),
        }
    }
}

impl<C, B: SharedCircuitBreaker> Clone for BreakerLayer<C, B> {
    /// A layer sharing this one's breaker.
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<C: fmt::Debug, B: SharedCircuitBreaker + fmt::Debug> fmt::Debug for BreakerLayer<C, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerLayer")
            .field("shared", &self.shared)
            .finish()
    }
}

impl<S, C, B: SharedCircuitBreaker> Layer<S> for BreakerLayer<C, B> {
    type Service = BreakerService<S, C, B>;

    /// A service sharing the layer's breaker. The first one registers the breaker's metrics,
    /// under the name that is now final.
    fn layer(&self, inner: S) -> Self::Service {
        self.shared.register();
        BreakerService::new(inner, Arc::clone(&self.shared))
    }
}
