//! The layer that sheds load in front of a service.

use std::fmt;
use std::sync::Arc;

use ironward::{Criticality, Shed};
use ironward_tokio::SharedShedder;
use tower_layer::Layer;

use super::service::ShedService;
use super::shared::Shared;
use crate::tuner::{Tune, Tuner};
use crate::{Clock, Cpu, Mode, ShedFailures};
use ironward_tokio::Knobs;

/// Sheds requests while the server is both hot and full: go-zero's adaptive load shedding as a
/// tower layer, for the server side.
///
/// Each request first asks an [`ironward::Shedder`] running the [`Shed`] policy, with the CPU
/// reading of the layer's [`Cpu`] source, shared by every thread as a [`SharedShedder`]: a
/// cool server's requests are let in and recorded without a lock, decided exactly as the
/// `Shedder` decides them (its docs say what may differ while requests overlap, and by how
/// much). A request reads the clock twice, when it starts and when it passes, for its response
/// time. The shedder refuses only while the CPU is at or over
/// the policy's threshold (or was, less than the cooling time ago, and the shedder has refused
/// since) *and* more requests are in flight than the server has shown it can carry (the most
/// it finished in one bucket, times the shortest mean response time, over the bucket's width;
/// scaled down as the CPU runs hotter). A refused request fails
/// at once with [`ShedRefused`](crate::ShedRefused) and never reaches the inner service. An
/// admitted one counts as in flight until its response future completes; the classifier (`C`,
/// by default [`ShedFailures`]: a 503, a `DEADLINE_EXCEEDED` or a timeout fails, anything else
/// passes, as go-zero's HTTP and gRPC shedding handlers count) then settles it, a pass feeding
/// its response time into the estimate of what the server can do. The reference is go-zero's
/// `core/load/adaptiveshedder.go` with `rest/handler/sheddinghandler.go` and
/// `zrpc/internal/serverinterceptors/sheddinginterceptor.go`.
///
/// A request whose response future is dropped before it completes (a client that hung up, a
/// timeout outside this layer) leaves flight as a failure: it no longer occupies the server,
/// and it says nothing about how long a request takes. Leaving it in flight would make every
/// cancelled request a permanent part of the load.
///
/// The CPU source is usually one [`CpuSampler`](crate::CpuSampler) shared by every layer
/// (`Cpu::from(&sampler)`); tests use [`Cpu::scripted`].
///
/// **One layer, one shedder.** Every service the layer makes, every clone of those (one per
/// connection) and every clone of the layer share one count in flight and one record of what
/// the server gets through, so `Router::layer(ShedLayer::new(..))` sheds the whole app as one
/// server, as go-zero's engine puts one shedder in front of every route (axum calls `layer`
/// once per route and per method). For a shedder per route, give each route its own layer.
///
/// [`new`](Self::new) makes the shedder, its window opening then, behind an `Arc` that every
/// service and every clone shares, as tower's `GlobalConcurrencyLimitLayer` shares its
/// semaphore; cloning the layer is an `Arc` clone and nothing more. The builders
/// [`with_classifier`](Self::with_classifier) and [`with_clock`](Self::with_clock) (by default
/// [`Clock::monotonic`]) each make a new shedder, since the one made before was made on the old
/// clock and classifier: configure the layer first, then clone it or make services from it.
/// Services and clones made before a builder keep the shedder they had. A layer in a `static`
/// goes in a `std::sync::LazyLock`.
///
/// To change the policy while the layer serves (a configuration reload), take a
/// [`tuner`](Self::tuner) from the configured layer: it retunes the one shedder that every
/// service and clone shares, keeping the requests in flight and what it has learnt.
///
/// Every request is `Critical` by default, and the shedder decides as go-zero's, which has no
/// classes. [`with_criticality`](Self::with_criticality) gives each request its class from a
/// header or an extractor (the [`criticality`](crate::criticality) source the
/// [`LimiterLayer`](crate::LimiterLayer) takes too): while the server is hot the less
/// critical classes meet a full server first, each allowed its share of the capacity
/// ([`Shed::shares`]), and for the cooling time after a class is refused every class below
/// it is refused outright ([`Shedder::check_as`](ironward::Shedder::check_as)).
///
/// # Examples
///
/// ```
/// use axum::Router;
/// use axum::body::Body;
/// use axum::error_handling::HandleErrorLayer;
/// use axum::http::{Request, StatusCode};
/// use axum::routing::get;
/// use ironward::SHED;
/// use ironward_tower::{Cpu, ShedLayer, ShedRefused};
/// use tower::{BoxError, ServiceBuilder, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let shed = ShedLayer::new(SHED, Cpu::fixed(990));
/// let app = Router::new()
///     .route("/", get(|| async { "hello" }))
///     .route("/health", get(|| async { "ok" }))
///     .layer(
///         ServiceBuilder::new()
///             .layer(HandleErrorLayer::new(|err: BoxError| async move {
///                 if err.is::<ShedRefused>() {
///                     StatusCode::SERVICE_UNAVAILABLE
///                 } else {
///                     StatusCode::INTERNAL_SERVER_ERROR
///                 }
///             }))
///             .layer(shed.clone()),
///     );
///
/// // A hot CPU alone sheds nothing: nothing is in flight.
/// let response = app.oneshot(Request::get("/").body(Body::empty()).unwrap()).await;
/// assert_eq!(response.unwrap().status(), StatusCode::OK);
/// assert_eq!(shed.flying(), 0);
/// # }
/// ```
pub struct ShedLayer<C = ShedFailures, Q = Criticality> {
    pub(crate) shared: Arc<Shared<C>>,
    pub(crate) criticality: Q,
}

impl ShedLayer {
    /// A layer running the `shed` policy on the readings of `cpu`, counting 503s and timeouts
    /// as failures ([`ShedFailures`]), every request `Critical`, on the monotonic clock.
    pub fn new(shed: Shed, cpu: Cpu) -> Self {
        let shared = Parts {
            shed,
            classify: ShedFailures,
            knobs: Knobs::default(),
            cpu,
        }
        .build();
        Self {
            shared,
            criticality: Criticality::Critical,
        }
    }
}

impl<C, Q> ShedLayer<C, Q> {
    /// What this layer was built from, with `classify` for its classifier: the parts a
    /// builder changes one of before building a new shedder.
    fn parts<D>(&self, classify: D) -> Parts<D> {
        let (knobs, cpu) = self.shared.sources();
        Parts {
            shed: self.shared.shed(),
            classify,
            knobs,
            cpu,
        }
    }

    /// The same layer with `classify` deciding which results are failures (see
    /// [`Classify`](crate::Classify)), and a new shedder under the policy in force.
    #[must_use]
    pub fn with_classifier<D>(self, classify: D) -> ShedLayer<D, Q> {
        ShedLayer {
            shared: self.parts(classify).build(),
            criticality: self.criticality,
        }
    }

    /// The same layer, and the same shedder, reading each request's class from `source`: a
    /// [`CriticalityHeader`](crate::criticality::CriticalityHeader), a closure
    /// `Fn(&Request) -> Criticality`, or a fixed [`Criticality`] (see
    /// [`criticality`](crate::criticality)). A request without a readable class is
    /// `Critical` unless the source says otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use http::{Request, Response};
    /// use ironward::SHED;
    /// use ironward_tower::criticality::CriticalityHeader;
    /// use ironward_tower::{Cpu, ShedLayer};
    /// use tower::{BoxError, Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let shed = ShedLayer::new(SHED, Cpu::fixed(300)).with_criticality(CriticalityHeader::default());
    /// let server = shed.layer(service_fn(|_: Request<()>| async {
    ///     Ok::<_, BoxError>(Response::new(()))
    /// }));
    /// let batch = Request::builder().header("x-criticality", "sheddable").body(()).unwrap();
    /// // A cool server admits every class.
    /// server.oneshot(batch).await.unwrap();
    /// # }
    /// ```
    #[must_use]
    pub fn with_criticality<P>(self, source: P) -> ShedLayer<C, P> {
        ShedLayer {
            shared: self.shared,
            criticality: source,
        }
    }

    /// How many requests are in flight through this layer's services
    /// ([`SharedShedder::flying`]).
    pub fn flying(&self) -> u64 {
        self.shared.flying()
    }

    /// Whether the layer enforces its refusals or only reports them; see
    /// [`with_mode`](Self::with_mode).
    pub fn mode(&self) -> Mode {
        self.shared.mode()
    }
}

impl<C: Send + Sync + 'static, Q> ShedLayer<C, Q> {
    /// A handle that changes the policy of this layer's shedder in place, for every service
    /// the layer made and every clone at once; see [`Tuner`].
    ///
    /// The shedder keeps the requests in flight (their tickets land as usual), the moving
    /// average, whether the server is still hot, and its windows as far as the new buckets
    /// allow ([`ironward::Shedder::retune`]). One `Arc` clone. Take it from the layer once
    /// it is configured: a builder makes a new shedder, which the tuner taken before it does
    /// not reach.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::{SHED, Shed};
    /// use ironward_tower::{Cpu, ShedLayer, ShedRefused};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let hangs = service_fn(|_request: ()| {
    ///     std::future::pending::<Result<http::Response<()>, &'static str>>()
    /// });
    /// let layer = ShedLayer::new(SHED, Cpu::fixed(950));
    /// let mut server = layer.layer(hangs);
    /// let tuner = layer.tuner();
    ///
    /// // Hot (950 ‰ is over the default 900 ‰) and full: the server sheds.
    /// let mut held = Vec::new();
    /// for _ in 0..40 {
    ///     held.push(server.ready().await.unwrap().call(()));
    /// }
    /// held.truncate(20);
    /// assert!(server.ready().await.unwrap().call(()).await.unwrap_err().is::<ShedRefused>());
    ///
    /// // Overloaded only at 1000 ‰, and hot no longer than that: the next request is admitted,
    /// // and the twenty in flight are still counted.
    /// tuner.retune(Shed { cpu: 1000, cool: Duration::ZERO, ..SHED });
    /// assert_eq!(tuner.policy().cpu, 1000);
    /// held.push(server.ready().await.unwrap().call(()));
    /// assert_eq!(layer.flying(), 21);
    /// # }
    /// ```
    pub fn tuner(&self) -> Tuner<Shed> {
        Tuner::new(Arc::clone(&self.shared) as Arc<dyn Tune<Shed>>)
    }
}

impl<C: Clone, Q> ShedLayer<C, Q> {
    /// The same layer with one knob changed, the same classifier and criticality source, and
    /// a new shedder under the policy in force.
    fn rebuilt(self, change: impl FnOnce(&mut Knobs)) -> Self {
        let mut parts = self.parts(self.shared.classifier().clone());
        change(&mut parts.knobs);
        let shared = parts.build();
        Self {
            shared,
            criticality: self.criticality,
        }
    }

    /// The same layer reading `now` from `clock`, with a new shedder under the policy in
    /// force, whose window opens now on `clock`.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.rebuilt(|knobs| knobs.clock = clock)
    }

    /// The same layer reporting under `name` (by default `"default"`), with a new shedder
    /// under the policy in force: the `name` label of its metrics and the `name` field of its
    /// `tracing` events (see the guide's [metrics](crate::_guide::metrics)).
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.rebuilt(|knobs| knobs.name = name)
    }

    /// The same layer in `mode` (by default [`Mode::Enforce`]), with a new shedder under the
    /// policy in force. In [`Mode::Shadow`] a request the shedder refuses goes through to the
    /// inner service instead, not in flight (as the enforcing shedder never let it in), so it
    /// adds nothing to the load the shedder sees and its response time teaches it nothing.
    /// The refusal is reported as `shadowed` (see [`Mode`]).
    #[must_use]
    pub fn with_mode(self, mode: Mode) -> Self {
        self.rebuilt(|knobs| knobs.mode = mode)
    }
}

/// What a [`ShedLayer`] is built from. Every builder changes one part and builds a new
/// shedder from the rest, so that no builder forgets one.
struct Parts<C> {
    shed: Shed,
    classify: C,
    knobs: Knobs,
    cpu: Cpu,
}

impl<C> Parts<C> {
    /// A new shedder on these parts, its window opening now.
    fn build(self) -> Arc<Shared<C>> {
        let shedder = SharedShedder::new(self.shed, self.knobs.clock.now());
        Arc::new(Shared::new(shedder, self.cpu, self.classify, self.knobs))
    }
}

impl<C, Q: Clone> Clone for ShedLayer<C, Q> {
    /// A layer sharing this one's shedder.
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            criticality: self.criticality.clone(),
        }
    }
}

impl<C: fmt::Debug, Q> fmt::Debug for ShedLayer<C, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShedLayer")
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

impl<S, C, Q: Clone> Layer<S> for ShedLayer<C, Q> {
    type Service = ShedService<S, C, Q>;

    /// A service sharing the layer's shedder. The first one registers the shedder's metrics,
    /// under the name that is now final.
    fn layer(&self, inner: S) -> Self::Service {
        self.shared.register();
        ShedService::new(inner, Arc::clone(&self.shared), self.criticality.clone())
    }
}
