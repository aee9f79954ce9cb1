//! The layer that puts an adaptive concurrency limit in front of a service.

use std::fmt;
use std::sync::Arc;

use ironward::{Adaptive, Criticality};
use ironward_tokio::{QUEUE, Queue, SharedLimiter};
use tower_layer::Layer;

use super::bypass::Bypassing;
use super::service::LimiterService;
use super::shared::Shared;
use crate::classify::Overloads;
use crate::tuner::{Tune, Tuner};
use crate::{Clock, Dice};
use ironward_tokio::Knobs;

/// Keeps no more requests in flight than an adaptive limit, which follows the latency the
/// inner service shows: the core's [`ironward::Limiter`] as a tower layer, for a server's
/// handlers or around a client.
///
/// Each request is first given a class by the layer's criticality source (by default every
/// request is `Critical`; see [`criticality`](crate::criticality)), then asks a
/// [`SharedLimiter`] running the [`Adaptive`] policy, with one clock read: let in while the
/// calls in flight are under the class's share of the limit and no more critical class was
/// refused within the cooling time, refused with [`LimiterRefused`](crate::LimiterRefused)
/// otherwise, at once. A layer made [`with_queue`](Self::with_queue) queues a request that
/// finds no room instead, up to the [`Queue`]'s bound, failsafe-go's gradual rejection
/// turning more away as it fills; a queued request is let in as calls leave flight, the most
/// critical first, and refused once it has waited as long as the queue allows. A layer made
/// [`with_bypass`](Self::with_bypass) lets the requests its predicate matches (health
/// checks) through uncounted.
///
/// An admitted request counts as in flight until its response future completes; the grade
/// (`C`, by default [`Overloads`]) then settles it: a success samples its latency, which the
/// algorithm moves the limit by; a drop (a timeout, a 503, a 429, a refusal of an inner layer
/// of this crate) lowers the limit as overload; any other error is ignored. A request whose
/// response future is dropped before it completes (a client that hung up, a timeout outside
/// this layer) leaves flight as ignored: it no longer occupies the backend, and its latency
/// was never seen. For HTTP, the latency is the time to the response head, not to the end of
/// its body.
///
/// [`ironward::Limiter`]'s docs say when to use the limiter rather than, or beside, the
/// breaker and the shedder: the breaker trips on failures, the shedder on this server's CPU,
/// the limiter on latency, finding how much the backend can take without being told.
///
/// **One layer, one limiter.** Every service the layer makes, every clone of those (one per
/// connection) and every clone of the layer share one limiter, as tower's
/// `GlobalConcurrencyLimitLayer` shares its semaphore: [`new`](Self::new) makes it behind an
/// `Arc`. The builders that change what the limiter is made of
/// ([`with_queue`](Self::with_queue), [`with_dice`](Self::with_dice),
/// [`with_clock`](Self::with_clock), [`with_name`](Self::with_name),
/// [`with_classifier`](Self::with_classifier)) each make a new one under the policy in
/// force; [`with_criticality`](Self::with_criticality) keeps it. Configure the layer first,
/// then clone it or make services from it. A layer in a `static` goes in a
/// `std::sync::LazyLock`.
///
/// To change the policy while the layer serves (a configuration reload), take a
/// [`tuner`](Self::tuner) from the configured layer.
///
/// The service requires the inner service to be `Clone`: a queued request takes the ready
/// service with it and calls it when let in, leaving a clone in its place.
///
/// # Examples
///
/// ```
/// use http::{Request, Response};
/// use ironward::{ADAPTIVE, Criticality};
/// use ironward_tower::criticality::CriticalityHeader;
/// use ironward_tower::{LimiterLayer, QUEUE};
/// use tower::{BoxError, Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let layer = LimiterLayer::new(ADAPTIVE)
///     .with_queue(QUEUE)
///     .with_criticality(CriticalityHeader::default())
///     .with_name("backend");
/// let backend = layer.layer(service_fn(|_: Request<()>| async {
///     Ok::<_, BoxError>(Response::new(()))
/// }));
/// let request = Request::builder().header("x-criticality", "sheddable").body(()).unwrap();
/// backend.oneshot(request).await.unwrap();
/// assert_eq!(layer.limit(), 20); // Little starts at 20
/// assert_eq!(layer.flying(), 0);
/// # }
/// ```
pub struct LimiterLayer<C = Overloads, Q = Criticality> {
    pub(crate) shared: Arc<Shared<C>>,
    parts: Parts,
    pub(crate) criticality: Q,
}

/// What a layer's limiter is made of besides its grade: every builder changes one and makes
/// a new limiter from the rest, so that no builder forgets one.
#[derive(Debug, Clone)]
struct Parts {
    queue: Option<Queue>,
    knobs: Knobs,
}

impl LimiterLayer {
    /// A layer running `policy`, refusing at once past its limit, every request `Critical`,
    /// graded by [`Overloads`], on the monotonic clock.
    pub fn new(policy: Adaptive) -> Self {
        let parts = Parts {
            queue: None,
            knobs: Knobs::default(),
        };
        Self {
            shared: parts.build(policy, Overloads),
            parts,
            criticality: Criticality::Critical,
        }
    }
}

impl Parts {
    /// A new limiter on these parts under `policy`, with nothing in flight.
    fn build<C>(&self, policy: Adaptive, classify: C) -> Arc<Shared<C>> {
        // Made with the layer's dice whether or not it queues, so that a queue a tuner puts
        // in front of it later draws from them too.
        let queue = self.queue.unwrap_or(QUEUE);
        let Knobs { clock, dice, .. } = self.knobs.clone();
        let limiter = SharedLimiter::with_queue(policy, queue, clock, dice);
        limiter.retune_queue(self.queue);
        Arc::new(Shared::new(limiter, classify, &self.knobs))
    }
}

impl<C, Q> LimiterLayer<C, Q> {
    /// The same layer with `parts`, and a new limiter on them under the policy in force.
    fn rebuilt(self, parts: Parts) -> Self
    where
        C: Clone,
    {
        let policy = self.shared.limiter.policy();
        Self {
            shared: parts.build(policy, self.shared.classifier().clone()),
            parts,
            criticality: self.criticality,
        }
    }

    /// The same layer with `classify` grading each completed request (see
    /// [`Grade`](crate::classify::Grade)), and a new limiter under the policy in force.
    #[must_use]
    pub fn with_classifier<D>(self, classify: D) -> LimiterLayer<D, Q> {
        let policy = self.shared.limiter.policy();
        LimiterLayer {
            shared: self.parts.build(policy, classify),
            parts: self.parts,
            criticality: self.criticality,
        }
    }

    /// The same layer, and the same limiter, reading each request's class from `source`: a
    /// [`CriticalityHeader`](crate::criticality::CriticalityHeader), a closure
    /// `Fn(&Request) -> Criticality`, or a fixed [`Criticality`] (see
    /// [`criticality`](crate::criticality)). A request without a readable class is
    /// `Critical` unless the source says otherwise. It replaces the whole source, a
    /// [bypass](Self::with_bypass) given before included: give the bypass after it.
    #[must_use]
    pub fn with_criticality<P>(self, source: P) -> LimiterLayer<C, P> {
        LimiterLayer {
            shared: self.shared,
            parts: self.parts,
            criticality: source,
        }
    }

    /// The same layer, and the same limiter, letting a request whose head `predicate`
    /// matches through uncounted: a health check, an operator's call, whatever the limiter
    /// must never refuse.
    ///
    /// Such a request takes a [`SharedLimiter::bypass`]: it is never refused nor queued
    /// (even with the limit full and a queue waiting), is not counted in flight, so it takes
    /// no room from the requests that are, and its latency is never sampled, so it moves the
    /// limit neither way. It is logged at trace level and counted in no metric series (the
    /// `ironward.requests` outcomes are the decisions, and a bypass is none). The predicate
    /// sees the head ([`Parts`](http::request::Parts): method, URI, headers, extensions), as
    /// [`QuotaLayer::keyed`](crate::QuotaLayer::keyed)'s and
    /// [`DeadlineLayer::from_request`](crate::DeadlineLayer::from_request)'s readers do, and
    /// runs before the class is read; the services then serve `http::Request`s.
    ///
    /// A [`ProtectLayer`](crate::ProtectLayer) or a [`ClientLayer`](crate::ClientLayer) given
    /// this layer honours the predicate too: the pieces around the limiter (the shedder, the
    /// rate limit, the deadline; the breaker and the retry) still decide such a request as
    /// they decide any.
    ///
    /// The predicate joins the layer's criticality source ([`Bypassing`]): give the source
    /// with [`with_criticality`](Self::with_criticality) first, as that replaces the whole
    /// source, a bypass with it.
    ///
    /// # Examples
    ///
    /// ```
    /// use http::{Request, Response};
    /// use ironward::limit::{AIMD, Aimd, Algorithm};
    /// use ironward::{ADAPTIVE, Adaptive};
    /// use ironward_tower::{LimiterLayer, LimiterRefused};
    /// use tower::{BoxError, Layer, Service, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let one = Adaptive {
    ///     algorithm: Algorithm::Aimd(Aimd { initial: 1, min: 1, ..AIMD }),
    ///     ..ADAPTIVE
    /// };
    /// let layer = LimiterLayer::new(one).with_bypass(|head| head.uri.path() == "/health");
    /// let hangs = service_fn(|_: Request<()>| std::future::pending::<Result<Response<()>, BoxError>>());
    /// let mut server = layer.layer(hangs);
    /// let get = |path: &str| Request::get(path).body(()).unwrap();
    ///
    /// let held = server.call(get("/work"));
    /// let err = server.call(get("/work")).await.unwrap_err();
    /// assert!(err.is::<LimiterRefused>());
    /// let health = server.call(get("/health")); // let through, though the limit is full
    /// assert_eq!(layer.flying(), 1, "and not counted");
    /// # drop((held, health));
    /// # }
    /// ```
    #[must_use]
    pub fn with_bypass(
        self,
        predicate: impl Fn(&http::request::Parts) -> bool + Send + Sync + 'static,
    ) -> LimiterLayer<C, Bypassing<Q>> {
        LimiterLayer {
            shared: self.shared,
            parts: self.parts,
            criticality: Bypassing::new(self.criticality, predicate),
        }
    }

    /// How many requests are in flight through this layer's services.
    pub fn flying(&self) -> u32 {
        self.shared.limiter.flying()
    }

    /// How many requests are waiting in the queue.
    pub fn queued(&self) -> usize {
        self.shared.limiter.queued()
    }

    /// The limit now: how many requests the layer's services let in flight at once.
    pub fn limit(&self) -> u32 {
        self.shared.limiter.limit()
    }

    /// Whether a probe is draining: the layer's services let fewer than
    /// [`limit`](Self::limit) requests in until it has measured the latency with no queue
    /// ([`Adaptive::probe`](ironward::Adaptive::probe)).
    pub fn probing(&self) -> bool {
        self.shared.limiter.probing()
    }

    /// The queue in front of the limit, if the layer has one: as built, or as a
    /// [`queue_tuner`](Self::queue_tuner) last changed it.
    pub fn queue(&self) -> Option<Queue> {
        self.shared.limiter.queue()
    }
}

impl<C: Clone, Q> LimiterLayer<C, Q> {
    /// The same layer queueing a request that finds no room as `queue` says, with a new
    /// limiter under the policy in force; see [`Queue`] for failsafe-go's gradual rejection
    /// and the wait's bound.
    #[must_use]
    pub fn with_queue(self, queue: Queue) -> Self {
        let parts = Parts {
            queue: Some(queue),
            ..self.parts.clone()
        };
        self.rebuilt(parts)
    }

    /// The same layer drawing the queue's gradual rejection from `dice` (by default
    /// [`Dice::random`]), with a new limiter under the policy in force: a test fixes the
    /// draw with `Dice::from_fn(|| 0.5)`.
    #[must_use]
    pub fn with_dice(self, dice: Dice) -> Self {
        let mut parts = self.parts.clone();
        parts.knobs.dice = dice;
        self.rebuilt(parts)
    }

    /// The same layer reading `now` from `clock` (by default [`Clock::monotonic`]), with a
    /// new limiter under the policy in force, its first sampling window opening now.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        let mut parts = self.parts.clone();
        parts.knobs.clock = clock;
        self.rebuilt(parts)
    }

    /// The same layer reporting under `name` (by default `"default"`), with a new limiter
    /// under the policy in force: the `name` label of its metrics and the `name` field of
    /// its `tracing` events (see the guide's [metrics](crate::_guide::metrics)).
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        let mut parts = self.parts.clone();
        parts.knobs.name = name;
        self.rebuilt(parts)
    }
}

impl<C: Send + Sync + 'static, Q> LimiterLayer<C, Q> {
    /// A handle that changes the policy of this layer's limiter in place, for every service
    /// the layer made and every clone at once; see [`Tuner`].
    ///
    /// The limiter keeps the requests in flight (their permits settle as usual), the limit it
    /// has reached (held to the new algorithm's bounds), its open sampling window and its
    /// floor ([`ironward_tokio::SharedLimiter::retune`]); queued requests the new policy has
    /// room for are let in at once. One `Arc` clone. Take it from the layer once it is
    /// configured: a builder makes a new limiter, which the tuner taken before it does not
    /// reach.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::limit::{AIMD, Aimd, Algorithm};
    /// use ironward::{ADAPTIVE, Adaptive};
    /// use ironward_tower::{LimiterLayer, LimiterRefused};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let of = |limit| Adaptive {
    ///     algorithm: Algorithm::Aimd(Aimd { initial: limit, min: limit, ..AIMD }),
    ///     ..ADAPTIVE
    /// };
    /// let hangs = service_fn(|_request: ()| {
    ///     std::future::pending::<Result<http::Response<()>, &'static str>>()
    /// });
    /// let layer = LimiterLayer::new(of(2));
    /// let mut server = layer.layer(hangs);
    /// let tuner = layer.tuner();
    /// let held = [server.call(()), server.call(())];
    /// assert!(server.call(()).await.unwrap_err().is::<LimiterRefused>());
    ///
    /// // A limit of at least four from now on: the two in flight stay, and two more fit.
    /// tuner.retune(of(4));
    /// assert_eq!((layer.limit(), layer.flying()), (4, 2));
    /// let more = [server.call(()), server.call(())];
    /// assert_eq!(layer.flying(), 4);
    /// # drop((held, more));
    /// # }
    /// ```
    pub fn tuner(&self) -> Tuner<Adaptive> {
        Tuner::new(Arc::clone(&self.shared) as Arc<dyn Tune<Adaptive>>)
    }

    /// A handle that puts a queue in front of this layer's limit, changes it or takes it
    /// away (`None`: a request that finds no room is refused at once), for the requests that
    /// arrive from then on ([`ironward_tokio::SharedLimiter::retune_queue`]); see [`Tuner`].
    /// Requests already waiting keep their place and the wait they were promised.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::ADAPTIVE;
    /// use ironward_tokio::QUEUE;
    /// use ironward_tower::LimiterLayer;
    ///
    /// let layer = LimiterLayer::new(ADAPTIVE);
    /// let queue = layer.queue_tuner();
    /// assert_eq!(queue.retune(Some(QUEUE)), None);
    /// assert_eq!(queue.policy(), Some(QUEUE));
    /// assert_eq!(queue.retune(None), Some(QUEUE));
    /// ```
    pub fn queue_tuner(&self) -> Tuner<Option<Queue>> {
        Tuner::new(Arc::clone(&self.shared) as Arc<dyn Tune<Option<Queue>>>)
    }
}

impl<C, Q: Clone> Clone for LimiterLayer<C, Q> {
    /// A layer sharing this one's limiter.
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            parts: self.parts.clone(),
            criticality: self.criticality.clone(),
        }
    }
}

impl<C, Q> fmt::Debug for LimiterLayer<C, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LimiterLayer")
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

impl<S, C, Q: Clone> Layer<S> for LimiterLayer<C, Q> {
    type Service = LimiterService<S, C, Q>;

    /// A service sharing the layer's limiter. The first one registers the limiter's metrics,
    /// under the name that is now final.
    fn layer(&self, inner: S) -> Self::Service {
        self.shared.register();
        LimiterService::new(inner, Arc::clone(&self.shared), self.criticality.clone())
    }
}
