//! The layer that sheds load in front of a service.

use std::fmt;
use std::sync::{Arc, OnceLock};

use ironward::{Shed, Shedder};
use tower_layer::Layer;

use super::service::{Shared, ShedService};
use crate::{Clock, Cpu, ShedFailures};

/// Sheds requests while the server is both hot and full: go-zero's adaptive load shedding as a
/// tower layer, for the server side.
///
/// Each request first asks an [`ironward::Shedder`] running the [`Shed`] policy, with the CPU
/// reading of the layer's [`Cpu`] source. The shedder refuses only while the CPU is at or over
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
/// `new` is a `const fn`; the shedder is made the first time the layer is used or cloned, its
/// window opening then. Configure the layer first: [`with_classifier`](Self::with_classifier)
/// and [`with_clock`](Self::with_clock) (by default [`Clock::monotonic`]) each give a layer
/// with a shedder of its own.
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
pub struct ShedLayer<C = ShedFailures> {
    shed: Shed,
    cpu: Cpu,
    classify: C,
    clock: Option<Clock>,
    shared: OnceLock<Arc<Shared<C>>>,
}

impl ShedLayer {
    /// A layer running the `shed` policy on the readings of `cpu`, counting 503s and timeouts
    /// as failures ([`ShedFailures`]), on the monotonic clock.
    pub const fn new(shed: Shed, cpu: Cpu) -> Self {
        Self {
            shed,
            cpu,
            classify: ShedFailures,
            clock: None,
            shared: OnceLock::new(),
        }
    }
}

impl<C> ShedLayer<C> {
    /// The same layer with `classify` deciding which results are failures (see
    /// [`Classify`](crate::Classify)), and a shedder of its own.
    #[must_use]
    pub fn with_classifier<D>(self, classify: D) -> ShedLayer<D> {
        ShedLayer {
            shed: self.shed,
            cpu: self.cpu,
            classify,
            clock: self.clock,
            shared: OnceLock::new(),
        }
    }

    /// The same layer reading `now` from `clock`, with a shedder of its own.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self.shared = OnceLock::new();
        self
    }
}

impl<C: Clone> ShedLayer<C> {
    /// How many requests are in flight through this layer's services ([`Shedder::flying`]).
    pub fn flying(&self) -> u64 {
        self.shared().flying()
    }

    /// The shedder every service made by this layer and its clones shares, made on first use.
    fn shared(&self) -> &Arc<Shared<C>> {
        self.shared.get_or_init(|| {
            let clock = self.clock.clone().unwrap_or_default();
            let shedder = Shedder::new(self.shed, clock.now());
            Arc::new(Shared::new(
                shedder,
                clock,
                self.cpu.clone(),
                self.classify.clone(),
            ))
        })
    }
}

impl<C: Clone> Clone for ShedLayer<C> {
    /// A layer sharing this one's shedder, which is made now if it was not yet.
    fn clone(&self) -> Self {
        Self {
            shed: self.shed,
            cpu: self.cpu.clone(),
            classify: self.classify.clone(),
            clock: self.clock.clone(),
            shared: OnceLock::from(Arc::clone(self.shared())),
        }
    }
}

impl<C: fmt::Debug> fmt::Debug for ShedLayer<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShedLayer")
            .field("shed", &self.shed)
            .field("cpu", &self.cpu)
            .field("classify", &self.classify)
            .field("clock", &self.clock)
            .field("shared", &self.shared.get())
            .finish()
    }
}

impl<S, C: Clone> Layer<S> for ShedLayer<C> {
    type Service = ShedService<S, C>;

    fn layer(&self, inner: S) -> Self::Service {
        ShedService::new(inner, Arc::clone(self.shared()))
    }
}
