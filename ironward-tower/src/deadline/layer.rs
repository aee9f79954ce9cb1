//! [`DeadlineLayer`]: where each request's budget comes from.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::request::Parts;
use tower_layer::Layer;

use super::service::Budget;
use super::tune::TunedBudget;
use super::{DeadlineService, grpc_timeout};
use crate::meter::{DEFAULT_NAME, Meter};
use crate::tuner::Tune;
use crate::{Mode, Tuner};

/// Gives every request a time budget, fixed or read from the request, and fails it with
/// [`DeadlineExceeded`](super::DeadlineExceeded) when the budget runs out.
///
/// The budget is read from the request head ([`Parts`]: method, URI, headers, extensions),
/// never the body, which keeps the body type out of the layer's type. A zero budget, or
/// `None` from the reader, is no deadline, as with [`ironward::Deadline`], go-zero's
/// `Timeout: 0` and a gRPC call without a deadline.
///
/// In [`Mode::Shadow`] ([`with_mode`](Self::with_mode)) it cuts nothing and reports what it
/// would have cut.
///
/// `Clone` shares the reader (an `Arc`); the layer holds no other state.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::{DeadlineExceeded, DeadlineLayer, RequestDeadline};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// // The budget in milliseconds from an `x-budget-ms` header; no deadline without one.
/// let layer = DeadlineLayer::from_request(|head| {
///     let header = head.headers.get("x-budget-ms")?.to_str().ok()?;
///     header.parse().ok().map(Duration::from_millis)
/// });
/// let slow = service_fn(|_: http::Request<()>| async {
///     tokio::time::sleep(Duration::from_secs(5)).await;
///     Ok::<_, DeadlineExceeded>("done")
/// });
/// let request = http::Request::builder().header("x-budget-ms", "300").body(()).unwrap();
/// let start = tokio::time::Instant::now();
/// let err = layer.layer(slow).oneshot(request).await.unwrap_err();
/// assert!(err.is::<DeadlineExceeded>());
/// assert_eq!(start.elapsed(), Duration::from_millis(300));
///
/// // A gRPC server: the client's `grpc-timeout`, but never more than 30 seconds.
/// let budget = service_fn(|request: http::Request<()>| async move {
///     Ok::<_, DeadlineExceeded>(request.extensions().get::<RequestDeadline>().unwrap().budget())
/// });
/// let grpc = DeadlineLayer::from_grpc_timeout(Duration::from_secs(30)).layer(budget);
/// let request = http::Request::builder().header("grpc-timeout", "2S").body(()).unwrap();
/// assert_eq!(grpc.oneshot(request).await.unwrap(), Duration::from_secs(2));
/// # }
/// ```
#[derive(Clone)]
pub struct DeadlineLayer {
    budget: Budget,
    name: &'static str,
    mode: Mode,
    extension: bool,
}

impl DeadlineLayer {
    /// The same budget for every request; zero is no deadline.
    pub const fn new(budget: Duration) -> Self {
        Self {
            budget: Budget::Fixed(budget),
            name: DEFAULT_NAME,
            mode: Mode::Enforce,
            extension: true,
        }
    }

    /// The same budget for every request, as [`new`](Self::new) gives, held where a
    /// [`tuner`](Self::tuner) changes it live: for a configuration reload. Each request reads
    /// it with one atomic load.
    pub fn tuned(budget: Duration) -> Self {
        Self {
            budget: Budget::Tuned(Arc::new(TunedBudget::new(budget))),
            name: DEFAULT_NAME,
            mode: Mode::Enforce,
            extension: true,
        }
    }

    /// A budget read from each request's head; `None` or zero is no deadline.
    pub fn from_request(read: impl Fn(&Parts) -> Option<Duration> + Send + Sync + 'static) -> Self {
        Self {
            budget: Budget::FromRequest(Arc::new(read)),
            name: DEFAULT_NAME,
            mode: Mode::Enforce,
            extension: true,
        }
    }

    /// The budget a gRPC client sent in `grpc-timeout` ([`grpc_timeout`]), at most
    /// `ceiling`; `ceiling` itself when the header is missing or malformed. A zero ceiling
    /// puts no bound on the client's budget, and leaves a request without one unbounded.
    ///
    /// This is how a gRPC server treats the header (tonic's server `timeout` does the
    /// same): the client says how long it will wait, and the server will not work for
    /// longer than its own limit however long the client would wait.
    pub fn from_grpc_timeout(ceiling: Duration) -> Self {
        Self::from_request(move |head| match grpc_timeout(&head.headers) {
            Some(budget) if !ceiling.is_zero() => Some(budget.min(ceiling)),
            Some(budget) => Some(budget),
            None => Some(ceiling),
        })
    }
}

impl DeadlineLayer {
    /// The same layer reporting under `name` (by default `"default"`): the `name` label of
    /// its metrics and the `name` field of its `tracing` events (see the guide's
    /// [metrics](crate::_guide::metrics)). Since [`new`](Self::new) is `const`, each service registers its
    /// counters when the layer makes it, once, rather than the layer.
    #[must_use]
    pub const fn with_name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// The same layer in `mode` (by default [`Mode::Enforce`]). A deadline in
    /// [`Mode::Shadow`] never cuts a call: it starts the same
    /// [`RequestDeadline`](super::RequestDeadline) and puts it in the request's extensions,
    /// but sets no timer, and reports as `shadowed` (see [`Mode`]) what the enforcing layer
    /// would have refused:
    ///
    /// - a request whose time had run out when it arrived (reason `exceeded`) goes through
    ///   to the inner service, with the [`DeadlineExceeded`](super::DeadlineExceeded) that
    ///   would have refused it in its extensions beside the spent deadline;
    /// - a call still running when its time runs out (reason `elapsed`) is let finish with
    ///   its own response, and reported when it does. Nothing can be put in its extensions,
    ///   since that is not known when the request goes in: a handler that wants to know
    ///   reads [`RequestDeadline::expired`](super::RequestDeadline::expired).
    ///
    /// The layer holds no state, so services made before keep the mode they had.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tower::{DeadlineExceeded, DeadlineLayer, Mode, RequestDeadline};
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let layer = DeadlineLayer::new(Duration::from_millis(100)).with_mode(Mode::Shadow);
    /// assert_eq!(layer.mode(), Mode::Shadow);
    /// let slow = service_fn(|request: http::Request<()>| async move {
    ///     tokio::time::sleep(Duration::from_secs(1)).await;
    ///     let deadline = request.extensions().get::<RequestDeadline>().unwrap();
    ///     Ok::<_, DeadlineExceeded>(deadline.expired())
    /// });
    /// // Ten times its budget, and still answered: the shadow deadline only reports it.
    /// let ran_out = layer.layer(slow).oneshot(http::Request::new(())).await.unwrap();
    /// assert!(ran_out);
    /// # }
    /// ```
    #[must_use]
    pub const fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Whether the layer enforces its deadlines or only reports them; see
    /// [`with_mode`](Self::with_mode).
    pub const fn mode(&self) -> Mode {
        self.mode
    }

    /// The same layer, putting each request's [`RequestDeadline`](super::RequestDeadline) in
    /// its extensions (`true`, the default) or not.
    ///
    /// Handing the deadline on is what lets a handler, or a client call it makes, spend only
    /// the time that is left; it is also the layer's one real cost. A request that arrives
    /// with no extensions makes `http::Extensions` allocate three times (its map, the map's
    /// table and the boxed value) and free them when the request is dropped, about as much
    /// as the rest of the layer (`layer_overhead` in BENCHMARKS.md). A service whose handlers
    /// never read the deadline can turn that off and keep the cut alone, which is then what
    /// tower's `TimeoutLayer` does, measured from a single clock reading.
    ///
    /// Off, the layer still honours a deadline an outer layer put in the extensions: it
    /// tightens that one in place (no allocation), so nested deadlines keep their meaning.
    /// In [`Mode::Shadow`] a request found out of time still carries the
    /// [`DeadlineExceeded`](super::DeadlineExceeded) that would have refused it, since
    /// that report is what shadow mode is for.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tower::{DeadlineExceeded, DeadlineLayer, RequestDeadline};
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let seen = service_fn(|request: http::Request<()>| async move {
    ///     Ok::<_, DeadlineExceeded>(request.extensions().get::<RequestDeadline>().copied())
    /// });
    /// let layer = DeadlineLayer::new(Duration::from_secs(1)).with_extension(false);
    /// assert!(!layer.extension());
    /// let handed = layer.layer(seen).oneshot(http::Request::new(())).await.unwrap();
    /// assert_eq!(handed, None);
    ///
    /// // Still cut at its budget.
    /// let slow = service_fn(|_: http::Request<()>| async {
    ///     tokio::time::sleep(Duration::from_secs(5)).await;
    ///     Ok::<_, DeadlineExceeded>(())
    /// });
    /// let cut = layer.layer(slow).oneshot(http::Request::new(())).await.unwrap_err();
    /// assert!(cut.is::<DeadlineExceeded>());
    /// # }
    /// ```
    #[must_use]
    pub const fn with_extension(mut self, on: bool) -> Self {
        self.extension = on;
        self
    }

    /// Whether requests carry their [`RequestDeadline`](super::RequestDeadline) to the inner
    /// service; see [`with_extension`](Self::with_extension).
    pub const fn extension(&self) -> bool {
        self.extension
    }
}

impl DeadlineLayer {
    /// A handle that changes the budget of a [`tuned`](Self::tuned) layer in place, for every
    /// service the layer made and every clone at once (see [`Tuner`]); `None` for a layer
    /// whose budget is a constant ([`new`](Self::new)) or read from the request.
    ///
    /// A request takes the budget in force when it arrives and keeps it: a call already
    /// running is cut at the end its own budget gave it. Zero is no deadline, as for
    /// [`new`](Self::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tower::{DeadlineExceeded, DeadlineLayer};
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let layer = DeadlineLayer::tuned(Duration::from_secs(1));
    /// let slow = service_fn(|_: http::Request<()>| async {
    ///     tokio::time::sleep(Duration::from_millis(500)).await;
    ///     Ok::<_, DeadlineExceeded>("done")
    /// });
    /// let service = layer.layer(slow);
    /// assert_eq!(service.clone().oneshot(http::Request::new(())).await.unwrap(), "done");
    ///
    /// let tuner = layer.tuner().unwrap();
    /// assert_eq!(tuner.retune(Duration::from_millis(100)), Duration::from_secs(1));
    /// let cut = service.oneshot(http::Request::new(())).await.unwrap_err();
    /// assert!(cut.is::<DeadlineExceeded>());
    /// assert!(DeadlineLayer::new(Duration::from_secs(1)).tuner().is_none());
    /// # }
    /// ```
    pub fn tuner(&self) -> Option<Tuner<Duration>> {
        match &self.budget {
            Budget::Tuned(budget) => {
                Some(Tuner::new(Arc::clone(budget) as Arc<dyn Tune<Duration>>))
            }
            Budget::Fixed(_) | Budget::FromRequest(_) => None,
        }
    }
}

impl fmt::Debug for DeadlineLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadlineLayer")
            .field("budget", &self.budget)
            .field("name", &self.name)
            .field("mode", &self.mode)
            .field("extension", &self.extension)
            .finish()
    }
}

impl<S> Layer<S> for DeadlineLayer {
    type Service = DeadlineService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        let (budget, extension, meter) = self.parts();
        DeadlineService::new(inner, budget, extension, meter)
    }
}

impl DeadlineLayer {
    /// What a service of this layer decides with: the budget, whether deadlines are handed
    /// on, and the meter, registered now that the name is final.
    pub(crate) fn parts(&self) -> (Budget, bool, Arc<Meter>) {
        let meter = Meter::new("deadline", self.name, super::service::REASONS, self.mode);
        meter.register();
        (self.budget.clone(), self.extension, Arc::new(meter))
    }
}
