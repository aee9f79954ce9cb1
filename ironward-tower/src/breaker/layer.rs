//! The layer that puts a breaker in front of a service.

use std::fmt;
use std::sync::{Arc, OnceLock};

use ironward::{Breaker, Sre};
use tower_layer::Layer;

use super::service::{BreakerService, Shared};
use crate::{Clock, Dice, HttpFailures};

/// Puts an SRE circuit breaker in front of a service: the client side's defence against a
/// backend that has started failing.
///
/// Each call first asks an [`ironward::Breaker`] running the [`Sre`] policy. A refused call
/// fails at once with [`BreakerRefused`](crate::BreakerRefused) and never reaches the inner
/// service; an admitted one runs, and when its response future completes the classifier (`C`, by default
/// [`HttpFailures`]) says whether it failed, and the breaker records it, at that moment on the
/// layer's clock. The breaker refuses a fraction of calls that grows with the failures in its
/// window rather than cutting the backend off, so a struggling backend keeps the traffic it can
/// still serve (Google SRE book, chapter 21, "client-side throttling"; go-zero
/// `core/breaker/googlebreaker.go`, whose client interceptor and HTTP handler this follows).
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
/// [`new`](Self::new) is a `const fn`, so a layer can be a `static`; the breaker is made the
/// first time the layer is used or cloned, its window opening then. Configure the layer first:
/// [`with_classifier`](Self::with_classifier), [`with_clock`](Self::with_clock) (by default
/// [`Clock::monotonic`]) and [`with_dice`](Self::with_dice) (by default [`Dice::random`]) each
/// give a layer with a breaker of its own.
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
pub struct BreakerLayer<C = HttpFailures> {
    sre: Sre,
    classify: C,
    clock: Option<Clock>,
    dice: Option<Dice>,
    shared: OnceLock<Arc<Shared<C>>>,
}

impl BreakerLayer {
    /// A layer running the `sre` policy, counting errors and 5xx responses as failures
    /// ([`HttpFailures`]), on the monotonic clock with real randomness.
    pub const fn new(sre: Sre) -> Self {
        Self {
            sre,
            classify: HttpFailures,
            clock: None,
            dice: None,
            shared: OnceLock::new(),
        }
    }
}

impl<C> BreakerLayer<C> {
    /// The same layer with `classify` deciding which results are failures (see
    /// [`Classify`](crate::Classify)), and a breaker of its own.
    #[must_use]
    pub fn with_classifier<D>(self, classify: D) -> BreakerLayer<D> {
        BreakerLayer {
            sre: self.sre,
            classify,
            clock: self.clock,
            dice: self.dice,
            shared: OnceLock::new(),
        }
    }

    /// The same layer reading `now` from `clock`, with a breaker of its own.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self.shared = OnceLock::new();
        self
    }

    /// The same layer drawing its rolls from `dice`, with a breaker of its own.
    #[must_use]
    pub fn with_dice(mut self, dice: Dice) -> Self {
        self.dice = Some(dice);
        self.shared = OnceLock::new();
        self
    }
}

impl<C: Clone> BreakerLayer<C> {
    /// The fraction of calls the breaker would refuse now ([`Breaker::ratio`]), for a
    /// dashboard or an alert; the same as [`BreakerService::ratio`] on any of its services.
    pub fn ratio(&self) -> f64 {
        self.shared().ratio()
    }

    /// The breaker every service made by this layer and its clones shares, made on first use.
    fn shared(&self) -> &Arc<Shared<C>> {
        self.shared.get_or_init(|| {
            let clock = self.clock.clone().unwrap_or_default();
            let dice = self.dice.clone().unwrap_or_default();
            let breaker = Breaker::new(self.sre, clock.now());
            Arc::new(Shared::new(breaker, clock, dice, self.classify.clone()))
        })
    }
}

impl<C: Clone> Clone for BreakerLayer<C> {
    /// A layer sharing this one's breaker, which is made now if it was not yet.
    fn clone(&self) -> Self {
        Self {
            sre: self.sre,
            classify: self.classify.clone(),
            clock: self.clock.clone(),
            dice: self.dice.clone(),
            shared: OnceLock::from(Arc::clone(self.shared())),
        }
    }
}

impl<C: fmt::Debug> fmt::Debug for BreakerLayer<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerLayer")
            .field("sre", &self.sre)
            .field("classify", &self.classify)
            .field("clock", &self.clock)
            .field("dice", &self.dice)
            .field("shared", &self.shared.get())
            .finish()
    }
}

impl<S, C: Clone> Layer<S> for BreakerLayer<C> {
    type Service = BreakerService<S, C>;

    fn layer(&self, inner: S) -> Self::Service {
        BreakerService::new(inner, Arc::clone(self.shared()))
    }
}
