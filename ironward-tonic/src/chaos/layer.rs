//! [`GrpcChaosLayer`]: one chaos policy and the codes it answers with, shared by every
//! service it makes.

use std::fmt;
use std::sync::Arc;

use ironward::chaos::{Chaos, ChaosError};
use ironward_tokio::SharedChaos;
use tonic::Code;
use tower_layer::Layer;

use super::GrpcChaosService;

/// Injects a chaos policy's faults into gRPC calls: the [module docs](super) say what each
/// fault does to a call.
///
/// It serves `http::Request<B>` for any body `B` and answers what the service behind answers,
/// an `http::Response` whose body has a `Default` (`tonic::body::Body`): so it goes around a
/// client's tonic `Channel` (`tower::ServiceBuilder::new().layer(chaos).service(channel)`) and
/// on a server (`tonic::transport::Server::builder().layer(chaos)`), alike.
///
/// The decisions are a [`SharedChaos`]'s: every service the layer makes, and every clone of
/// those and of the layer, number their calls in one sequence, inject at the policy's rates
/// across them all and take a [`retune`](Self::retune) at once.
///
/// # Default
///
/// | what | value |
/// | --- | --- |
/// | draws | [`Dice::random`](crate::Dice::random); [`with_seed`](Self::with_seed) to replay |
/// | an injected error's code | `UNAVAILABLE`: what a failing server answers, and what a retry policy retries |
/// | a replaced answer's code | `INTERNAL`: the call was made and its side effects happened, so not a code a caller retries blindly |
/// | name | `"default"`, the `name` label of `ironward.chaos.injected` and field of its events |
///
/// # Examples
///
/// ```
/// use http::{Request, Response};
/// use ironward::chaos::{self, Chaos, Fault, Injection, Injector};
/// use ironward_tonic::chaos::GrpcChaosLayer;
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let policy = Chaos {
///     enabled: true,
///     faults: vec![Injection { fault: Fault::Error, rate: 0.2 }],
///     ..Chaos::default()
/// };
/// let layer = GrpcChaosLayer::new(policy.clone()).unwrap().with_seed(42).with_name("api");
/// let ok = service_fn(|_: Request<tonic::body::Body>| async {
///     Ok::<_, std::convert::Infallible>(Response::new(tonic::body::Body::empty()))
/// });
/// let service = layer.layer(ok);
///
/// // Each call fails exactly when the core, given the same draw, says so.
/// let injector = Injector::new(policy).unwrap();
/// for i in 0..100 {
///     let response = service.clone().oneshot(Request::new(tonic::body::Body::empty())).await.unwrap();
///     let failed = response.headers().get("grpc-status").is_some_and(|code| code == "14");
///     assert_eq!(failed, injector.decide(chaos::draw(42, i)).is_some());
/// }
/// assert_eq!(layer.chaos().requests(), 100);
/// # }
/// ```
#[derive(Clone)]
pub struct GrpcChaosLayer {
    pub(super) config: Arc<Config>,
}

/// What every service of one layer shares.
pub(super) struct Config {
    pub(super) chaos: SharedChaos,
    pub(super) error: Code,
    pub(super) replace: Code,
}

impl GrpcChaosLayer {
    /// A layer injecting `chaos`'s faults, each call rolling [`Dice::random`](crate::Dice::random).
    ///
    /// # Errors
    ///
    /// The core's [`ChaosError`] for a policy it refuses: a rate outside `[0, 1]` or NaN,
    /// rates adding up to more than 1, a delay whose bounds are reversed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::{Chaos, ChaosError, Fault, Injection};
    /// use ironward_tonic::chaos::GrpcChaosLayer;
    ///
    /// let bad = Chaos {
    ///     enabled: true,
    ///     faults: vec![Injection { fault: Fault::Error, rate: 1.5 }],
    ///     ..Chaos::default()
    /// };
    /// assert!(matches!(GrpcChaosLayer::new(bad), Err(ChaosError::Rate { index: 0, .. })));
    /// // Off, with no faults: the default policy injects nothing.
    /// assert!(GrpcChaosLayer::new(Chaos::default()).is_ok());
    /// ```
    pub fn new(chaos: Chaos) -> Result<Self, ChaosError> {
        SharedChaos::new(chaos).map(Self::from_shared)
    }

    /// A layer applying what `chaos` decides: its policy, draws, name and count of calls, shared
    /// with every other edge given a clone of it (a reqwest client's middleware, the front
    /// door's faults), so that one retune reaches them all.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::Chaos;
    /// use ironward_tokio::SharedChaos;
    /// use ironward_tonic::chaos::GrpcChaosLayer;
    ///
    /// let shared = SharedChaos::new(Chaos::default()).unwrap().with_seed(7).with_name("edge");
    /// let layer = GrpcChaosLayer::from_shared(shared.clone());
    /// assert_eq!(layer.chaos().name(), "edge");
    /// ```
    pub fn from_shared(chaos: SharedChaos) -> Self {
        Self {
            config: Arc::new(Config {
                chaos,
                error: Code::Unavailable,
                replace: Code::Internal,
            }),
        }
    }

    /// The same layer drawing the fault of call number `i` (from 0, in the order calls reach
    /// the layer's services) from [`ironward::chaos::draw`]`(seed, i)`: a run that replays
    /// call by call, for as long as the calls arrive in the same order. The numbering starts
    /// afresh, and services made before keep the draws they had. It makes a new
    /// [`SharedChaos`] (as [`SharedChaos::with_seed`] does, and `with_name` likewise): a layer made
    /// [`from_shared`](Self::from_shared) no longer shares with the other edges after it, so
    /// seed and name the `SharedChaos` itself before handing it over.
    #[must_use]
    pub fn with_seed(self, seed: u64) -> Self {
        self.with(|config| config.chaos = config.chaos.clone().with_seed(seed))
    }

    /// The same layer reporting under `name` (by default `"default"`): the `name` label of
    /// `ironward.chaos.injected` and the `name` field of its events. The numbering starts
    /// afresh, as [`SharedChaos::with_name`] does.
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.with(|config| config.chaos = config.chaos.clone().with_name(name))
    }

    /// The same layer answering an injected [`Error`](ironward::chaos::Fault::Error) with
    /// `code` (by default `UNAVAILABLE`): `RESOURCE_EXHAUSTED` tries a caller's handling of a
    /// quota, `DEADLINE_EXCEEDED` its handling of a slow server.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::Chaos;
    /// use ironward_tonic::chaos::GrpcChaosLayer;
    /// use tonic::Code;
    ///
    /// let layer = GrpcChaosLayer::new(Chaos::default()).unwrap();
    /// assert_eq!(layer.error_code(), Code::Unavailable);
    /// let layer = layer.with_error_code(Code::ResourceExhausted);
    /// assert_eq!(layer.error_code(), Code::ResourceExhausted);
    /// ```
    #[must_use]
    pub fn with_error_code(self, code: Code) -> Self {
        self.with(|config| config.error = code)
    }

    /// The same layer answering a [`Replace`](ironward::chaos::Fault::Replace)d call with
    /// `code` (by default `INTERNAL`).
    #[must_use]
    pub fn with_replace_code(self, code: Code) -> Self {
        self.with(|config| config.replace = code)
    }

    /// Puts `chaos` in force for every service the layer made, every clone and every other
    /// holder of its [`SharedChaos`] at once, from their next call, keeping the numbering.
    ///
    /// # Errors
    ///
    /// The core's [`ChaosError`] for a policy it refuses; the policy in force stays.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::{Chaos, Fault, Injection};
    /// use ironward_tonic::chaos::GrpcChaosLayer;
    ///
    /// let layer = GrpcChaosLayer::new(Chaos::default()).unwrap();
    /// let errors = Chaos {
    ///     enabled: true,
    ///     faults: vec![Injection { fault: Fault::Error, rate: 0.1 }],
    ///     ..Chaos::default()
    /// };
    /// layer.retune(errors.clone()).unwrap();
    /// let nan = Chaos { faults: vec![Injection { fault: Fault::Error, rate: f64::NAN }], ..errors.clone() };
    /// assert!(layer.retune(nan).is_err());
    /// assert_eq!(layer.chaos().policy(), errors, "a refused policy leaves the one in force");
    /// ```
    pub fn retune(&self, chaos: Chaos) -> Result<(), ChaosError> {
        self.config.chaos.retune(chaos)
    }

    /// The [`SharedChaos`] deciding the faults: its policy, name and count of calls.
    #[must_use]
    pub fn chaos(&self) -> &SharedChaos {
        &self.config.chaos
    }

    /// The code an injected error is answered with.
    #[must_use]
    pub fn error_code(&self) -> Code {
        self.config.error
    }

    /// The code a replaced call is answered with.
    #[must_use]
    pub fn replace_code(&self) -> Code {
        self.config.replace
    }

    /// This layer with one setting changed; services made before keep what they had.
    fn with(self, change: impl FnOnce(&mut Config)) -> Self {
        let Config {
            chaos,
            error,
            replace,
        } = &*self.config;
        let mut config = Config {
            chaos: chaos.clone(),
            error: *error,
            replace: *replace,
        };
        change(&mut config);
        Self {
            config: Arc::new(config),
        }
    }
}

impl<S> Layer<S> for GrpcChaosLayer {
    type Service = GrpcChaosService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcChaosService::new(inner, Arc::clone(&self.config))
    }
}

impl fmt::Debug for GrpcChaosLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrpcChaosLayer")
            .field("chaos", &self.config.chaos)
            .field("error", &self.config.error)
            .field("replace", &self.config.replace)
            .finish()
    }
}
