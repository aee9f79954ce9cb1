//! [`ChaosLayer`]: one chaos policy, shared by every service it makes.

use std::fmt;
use std::sync::Arc;

use ironward::chaos::{Chaos, ChaosError};
use ironward_tokio::SharedChaos;
use tower_layer::Layer;

use super::ChaosService;
use super::PlainAnswer;
use crate::Dice;

/// Injects the faults of one chaos policy ([`ironward::chaos::Chaos`]) into the calls of
/// every service it wraps: on a server around an axum `Router` or handler, on a client around
/// the client service.
///
/// The layer holds one [`SharedChaos`], the decision the front door's `Faults` and the
/// reqwest middleware take theirs from too: the checked policy (the core's
/// [`Injector`](ironward::chaos::Injector)),
/// where each request's draw comes from, the request numbering, the counts, the metrics and
/// the events, behind one `Arc`. Every service it makes, every clone of those and of the
/// layer, share them, so `Router::layer(chaos)` numbers the requests of every route in one
/// sequence and injects at the policy's rates across them all; and
/// [`from_shared`](Self::from_shared) puts one `SharedChaos` on a server and on a client
/// at once, one numbering and one policy that a single retune changes.
///
/// - **Draws.** By default each request rolls [`Dice::random`]. [`with_seed`](Self::with_seed)
///   makes the run replayable: the request numbered `i` in arrival order (from 0) draws
///   [`ironward::chaos::draw`]`(seed, i)`, so the same seed injects the same faults on the
///   same requests here, in a unit test and in the simulator. [`with_dice`](Self::with_dice)
///   takes any other source.
/// - **Answers.** An injected error and a replaced response are answered by
///   [`PlainAnswer`] (503, and 500, with the [`CHAOS_HEADER`](super::CHAOS_HEADER) naming
///   the fault), or by what [`with_response`](Self::with_response) gives.
/// - **Live changes.** [`retune`](Self::retune) checks a new policy and puts it in force for
///   every service at once, from their next request; a refused policy changes nothing. A
///   policy is turned on and off the same way (`enabled`), and tried in shadow mode
///   (`shadow`) before it harms anyone.
///
/// The builders `with_seed`, `with_dice` and `with_name` start the numbering and the counts
/// afresh under the policy in force, as [`SharedChaos`]'s do. Configure the layer first, then clone it or
/// make services from it: services and clones made before a builder keep what they had.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use http::{Request, Response, StatusCode};
/// use ironward::chaos::{self, Chaos, Fault, Injection, Injector};
/// use ironward_tower::ChaosLayer;
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let policy = Chaos {
///     enabled: true,
///     faults: vec![Injection { fault: Fault::Error, rate: 0.2 }],
///     ..Chaos::default()
/// };
/// let layer = ChaosLayer::new(policy.clone()).unwrap().with_seed(42).with_name("api");
/// let ok = service_fn(|_: Request<()>| async { Ok::<_, std::convert::Infallible>(Response::new(String::new())) });
/// let service = layer.layer(ok);
///
/// // Each request fails exactly when the core, given the same draw, says so.
/// let injector = Injector::new(policy).unwrap();
/// for i in 0..100 {
///     let response = service.clone().oneshot(Request::new(())).await.unwrap();
///     let expected = injector.decide(chaos::draw(42, i)).is_some();
///     assert_eq!(response.status() == StatusCode::SERVICE_UNAVAILABLE, expected);
/// }
/// assert_eq!(layer.requests(), 100);
/// assert!(layer.injected() > 0);
/// # }
/// ```
pub struct ChaosLayer<A = PlainAnswer> {
    chaos: SharedChaos,
    answer: Arc<A>,
}

impl ChaosLayer {
    /// A layer injecting `chaos`'s faults, drawing each request's from [`Dice::random`] and
    /// answering with [`PlainAnswer`].
    ///
    /// # Errors
    ///
    /// The core's [`ChaosError`] for a policy
    /// [`Injector::new`](ironward::chaos::Injector::new) refuses: a rate outside
    /// `[0, 1]` or NaN, rates adding up to more than 1, a delay whose bounds are reversed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::{Chaos, ChaosError, Fault, Injection};
    /// use ironward_tower::ChaosLayer;
    ///
    /// let bad = Chaos {
    ///     enabled: true,
    ///     faults: vec![Injection { fault: Fault::Error, rate: 1.5 }],
    ///     ..Chaos::default()
    /// };
    /// assert!(matches!(ChaosLayer::new(bad), Err(ChaosError::Rate { index: 0, .. })));
    /// // Off, with no faults: the default policy injects nothing.
    /// assert!(ChaosLayer::new(Chaos::default()).is_ok());
    /// ```
    pub fn new(chaos: Chaos) -> Result<Self, ChaosError> {
        SharedChaos::new(chaos).map(Self::from_shared)
    }

    /// A layer applying the faults `chaos` decides, answering with [`PlainAnswer`]: its
    /// policy, its draws, its numbering and its name are `chaos`'s, shared with every other
    /// holder of a clone. A server's layer and a client's (this layer on the client service,
    /// the front door's `Faults`, the reqwest middleware) built on one `SharedChaos` number
    /// their requests in one sequence, and one [`retune`](Self::retune) changes them all.
    ///
    /// # Examples
    ///
    /// ```
    /// use http::{Request, Response, StatusCode};
    /// use ironward::chaos::{Chaos, Fault, Injection};
    /// use ironward_tokio::SharedChaos;
    /// use ironward_tower::ChaosLayer;
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let shared = SharedChaos::new(Chaos::default()).unwrap().with_seed(3).with_name("edge");
    /// let (server, client) = (ChaosLayer::from_shared(shared.clone()), ChaosLayer::from_shared(shared.clone()));
    /// let ok = service_fn(|_: Request<()>| async { Ok::<_, std::convert::Infallible>(Response::new(String::new())) });
    /// let (server, client) = (server.layer(ok.clone()), client.layer(ok));
    /// server.oneshot(Request::new(())).await.unwrap();
    /// // One retune, through the shared piece, reaches both.
    /// let errors = Chaos { enabled: true, faults: vec![Injection { fault: Fault::Error, rate: 1.0 }], ..Chaos::default() };
    /// shared.retune(errors).unwrap();
    /// let status = client.oneshot(Request::new(())).await.unwrap().status();
    /// assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    /// assert_eq!((shared.requests(), shared.injected()), (2, 1));
    /// # }
    /// ```
    #[must_use]
    pub fn from_shared(chaos: SharedChaos) -> Self {
        Self {
            chaos,
            answer: Arc::new(PlainAnswer),
        }
    }
}

impl<A> ChaosLayer<A> {
    /// The same layer, drawing the fault of the request numbered `i` (from 0, in the order
    /// requests reach the layer's services) from [`ironward::chaos::draw`]`(seed, i)`: a
    /// run that replays exactly, request by request, for as long as the requests arrive in
    /// the same order. The numbering and the counts start afresh.
    #[must_use]
    pub fn with_seed(self, seed: u64) -> Self {
        Self {
            chaos: self.chaos.with_seed(seed),
            ..self
        }
    }

    /// The same layer, each request rolling `dice` for its draw (by default
    /// [`Dice::random`]). The numbering and the counts start afresh.
    #[must_use]
    pub fn with_dice(self, dice: Dice) -> Self {
        Self {
            chaos: self.chaos.with_dice(dice),
            ..self
        }
    }

    /// The same layer reporting under `name` (by default `"default"`): the `name` label of
    /// its counter and the `name` field of its `tracing` events. The numbering and the
    /// counts start afresh; services made before keep the name they had.
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        Self {
            chaos: self.chaos.with_name(name),
            ..self
        }
    }

    /// The same layer, and the same state, answering an injected [`Fault::Error`] and a
    /// [`Fault::Replace`] with `answer` (by default [`PlainAnswer`]); see
    /// [`ChaosAnswer`](super::ChaosAnswer). Any `Fn(&Injected, Option<R>) -> R` will do, `R`
    /// the inner service's response.
    ///
    /// [`Fault::Error`]: ironward::chaos::Fault::Error
    /// [`Fault::Replace`]: ironward::chaos::Fault::Replace
    ///
    /// # Examples
    ///
    /// ```
    /// use http::{Request, Response, StatusCode};
    /// use ironward::chaos::{Chaos, Fault, Injected, Injection};
    /// use ironward_tower::ChaosLayer;
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let policy = Chaos {
    ///     enabled: true,
    ///     faults: vec![Injection { fault: Fault::Error, rate: 1.0 }],
    ///     ..Chaos::default()
    /// };
    /// let too_many = |_: &Injected, _: Option<Response<()>>| {
    ///     Response::builder().status(StatusCode::TOO_MANY_REQUESTS).body(()).unwrap()
    /// };
    /// let layer = ChaosLayer::new(policy).unwrap().with_response(too_many);
    /// let ok = service_fn(|_: Request<()>| async { Ok::<_, std::convert::Infallible>(Response::new(())) });
    /// let response = layer.layer(ok).oneshot(Request::new(())).await.unwrap();
    /// assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    /// # }
    /// ```
    #[must_use]
    pub fn with_response<B>(self, answer: B) -> ChaosLayer<B> {
        ChaosLayer {
            chaos: self.chaos,
            answer: Arc::new(answer),
        }
    }

    /// The [`SharedChaos`] deciding this layer's faults: clone it to share the layer's
    /// policy and numbering with a client edge ([`from_shared`](ChaosLayer::from_shared)).
    pub fn chaos(&self) -> &SharedChaos {
        &self.chaos
    }

    /// Puts `chaos` in force for every service the layer made and every clone at once, from
    /// their next request, keeping the numbering and the counts; a `tracing` event at the
    /// debug level gives the policy replaced (`from`) and the new one (`to`). A request is
    /// decided wholly under the old policy or wholly under the new one.
    ///
    /// # Errors
    ///
    /// The core's [`ChaosError`] for a policy
    /// [`Injector::new`](ironward::chaos::Injector::new) refuses; the policy in force
    /// stays.
    ///
    /// # Examples
    ///
    /// ```
    /// use http::{Request, Response, StatusCode};
    /// use ironward::chaos::{Chaos, Fault, Injection};
    /// use ironward_tower::ChaosLayer;
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let layer = ChaosLayer::new(Chaos::default()).unwrap();
    /// let ok = service_fn(|_: Request<()>| async { Ok::<_, std::convert::Infallible>(Response::new(String::new())) });
    /// let service = layer.layer(ok);
    /// assert_eq!(service.clone().oneshot(Request::new(())).await.unwrap().status(), StatusCode::OK);
    ///
    /// let errors = Chaos {
    ///     enabled: true,
    ///     faults: vec![Injection { fault: Fault::Error, rate: 1.0 }],
    ///     ..Chaos::default()
    /// };
    /// layer.retune(errors.clone()).unwrap();
    /// let status = service.clone().oneshot(Request::new(())).await.unwrap().status();
    /// assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    ///
    /// // NaN is refused, and the errors stay in force.
    /// let nan = Chaos { faults: vec![Injection { fault: Fault::Error, rate: f64::NAN }], ..errors.clone() };
    /// assert!(layer.retune(nan).is_err());
    /// assert_eq!(layer.policy(), errors);
    /// # }
    /// ```
    pub fn retune(&self, chaos: Chaos) -> Result<(), ChaosError> {
        self.chaos.retune(chaos)
    }

    /// The policy in force: the one the layer was made with, or the last one retuned to.
    pub fn policy(&self) -> Chaos {
        self.chaos.policy()
    }

    /// The seed the layer draws from, if it was given one ([`with_seed`](Self::with_seed)).
    pub fn seed(&self) -> Option<u64> {
        self.chaos.seed()
    }

    /// The requests that have reached the layer's services (and any other holder of its
    /// [`SharedChaos`]): the index the next one gets.
    pub fn requests(&self) -> u64 {
        self.chaos.requests()
    }

    /// The faults injected so far (not those decided in shadow mode).
    pub fn injected(&self) -> u64 {
        self.chaos.injected()
    }

    /// The faults decided in shadow mode so far, and not injected.
    pub fn shadowed(&self) -> u64 {
        self.chaos.shadowed()
    }

    /// The name the layer reports under.
    pub fn name(&self) -> &'static str {
        self.chaos.name()
    }
}

impl<A> Clone for ChaosLayer<A> {
    /// The same layer: the same policy, draws and counts (two `Arc` clones).
    fn clone(&self) -> Self {
        Self {
            chaos: self.chaos.clone(),
            answer: Arc::clone(&self.answer),
        }
    }
}

impl<A> fmt::Debug for ChaosLayer<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChaosLayer")
            .field("name", &self.name())
            .field("policy", &self.policy())
            .field("seed", &self.seed())
            .field("requests", &self.requests())
            .field("injected", &self.injected())
            .finish_non_exhaustive()
    }
}

impl<S, A> Layer<S> for ChaosLayer<A> {
    type Service = ChaosService<S, A>;

    /// A service sharing the layer's [`SharedChaos`] and answer.
    fn layer(&self, inner: S) -> Self::Service {
        ChaosService::new(inner, Some(self.chaos.clone()), Arc::clone(&self.answer))
    }
}
