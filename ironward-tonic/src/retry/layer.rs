//! [`GrpcRetryLayer`]: the service config and the sources a retrying gRPC client reads.

use std::fmt;
use std::sync::Arc;

use ironward::SharedBudget;
use ironward::grpc::ServiceConfig;
use ironward_tokio::Knobs;
use ironward_tokio::meter::{DEFAULT_NAME, Retries};
use tower_layer::Layer;

use super::GrpcRetryService;
use super::body::RETRY_BUFFER;
use super::config::Config;
use crate::{Clock, Dice};

/// Retries gRPC calls by proposal A6, as the service config's `methodConfig` and
/// `retryThrottling` say: the [module docs](super) say what one call does.
///
/// It is built in [`new`](Self::new) from a [`ServiceConfig`] (or its JSON text,
/// [`from_json`](Self::from_json)), and makes the channel's one retry budget there, from
/// `retryThrottling`: every service it makes, and every clone of those, throttles on that one
/// budget (a `SharedBudget` behind an `Arc`), as A6 keeps one per server. `Clone` shares the
/// config, the sources, the budget and the metric handles.
///
/// # Default
///
/// | what | value | from |
/// | --- | --- | --- |
/// | clock | [`Clock::monotonic`]: tokio's, so `tokio::time::pause` drives it | |
/// | dice | [`Dice::random`], one draw per failed attempt, for A6's `random(0.8, 1.2)` | gRPC A6 |
/// | retry buffer | 256 KiB ([`RETRY_BUFFER`](super::RETRY_BUFFER)) | grpc-go's `defaultPerRPCBufferSize` (`dialoptions.go`) |
/// | name | `"default"`, the `name` label of its metrics and field of its events ([`with_name`](Self::with_name)) | the other edges |
///
/// # Examples
///
/// ```
/// use ironward_tonic::retry::GrpcRetryLayer;
///
/// let layer = GrpcRetryLayer::from_json(r#"{
///     "methodConfig": [{
///         "name": [{"service": "pkg.Service"}],
///         "retryPolicy": {
///             "maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
///             "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]
///         }
///     }],
///     "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
/// }"#)?;
/// assert_eq!(layer.budget().map(|b| b.tokens()), Some(10.0));
///
/// // A config A6 rejects is an error that says why.
/// let none = r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 1,
///     "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2,
///     "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
/// let error = GrpcRetryLayer::from_json(none).unwrap_err();
/// assert!(error.to_string().contains("max attempts must be at least 2"), "{error}");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct GrpcRetryLayer {
    pub(super) config: Arc<Config>,
}

impl GrpcRetryLayer {
    /// A layer that retries as `config` says, with a full retry budget if it sets
    /// `retryThrottling`.
    pub fn new(config: ServiceConfig) -> Self {
        let budget = config
            .retry_throttling()
            .map(|t| Arc::new(SharedBudget::new(t.max_tokens, t.token_ratio)));
        Self {
            config: Arc::new(Config {
                service_config: config,
                budget,
                knobs: Knobs::default(),
                buffer: RETRY_BUFFER,
                meter: Arc::new(Retries::new(DEFAULT_NAME)),
            }),
        }
    }

    /// A layer from the service config's JSON text (see [`ServiceConfig`] for what is read).
    ///
    /// # Errors
    ///
    /// The JSON is malformed, or the config breaks a rule of gRPC A6; the error's message
    /// then says which ([`ConfigError`](ironward::grpc::ConfigError)).
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json).map(Self::new)
    }

    /// This layer reading `clock` for the deadlines and sleeping its waits on it: a
    /// [`Clock::manual`] runs a test's waits in no time and says exactly how long they were.
    ///
    /// The timer that cuts a call at its deadline is tokio's whatever the clock, so that
    /// `tokio::time::pause` drives it (the [module docs](super)' "The deadline").
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.with(|config| config.knobs.clock = clock)
    }

    /// This layer drawing its jitter from `dice`: `Dice::from_fn(|| 0.5)` is no jitter, every
    /// wait A6's ceiling exactly.
    #[must_use]
    pub fn with_dice(self, dice: Dice) -> Self {
        self.with(|config| config.knobs.dice = dice)
    }

    /// This layer keeping up to `bytes` of a request's body to send it again (see the
    /// [module docs](super)): a call whose body is longer is sent once.
    #[must_use]
    pub fn with_buffer(self, bytes: usize) -> Self {
        self.with(|config| config.buffer = bytes)
    }

    /// This layer reporting under `name` (by default `"default"`): the `name` label of its
    /// metrics and the `name` field of its `tracing` events, so that two channels' layers in
    /// one process are told apart (see the guide's [metrics](crate::_guide::metrics)). The handles are
    /// registered under it when the layer makes a service, so the default name never shows.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tonic::GrpcRetryLayer;
    ///
    /// let layer = GrpcRetryLayer::from_json(r#"{"methodConfig": []}"#)?.with_name("payments");
    /// assert_eq!(layer.name(), "payments");
    /// assert_eq!(GrpcRetryLayer::from_json("{}")?.name(), "default");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.with(|config| {
            config.knobs.name = name;
            config.meter = Arc::new(Retries::new(name));
        })
    }

    /// The name the layer reports under.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.config.knobs.name
    }

    /// The service config the layer follows.
    #[must_use]
    pub fn service_config(&self) -> &ServiceConfig {
        &self.config.service_config
    }

    /// The channel's retry budget, `None` when the config sets no `retryThrottling`.
    #[must_use]
    pub fn budget(&self) -> Option<&SharedBudget> {
        self.config.budget.as_deref()
    }

    /// This layer with one setting changed: the budget stays the one made in `new`.
    fn with(self, change: impl FnOnce(&mut Config)) -> Self {
        let mut config = Arc::unwrap_or_clone(self.config);
        change(&mut config);
        Self {
            config: Arc::new(config),
        }
    }
}

impl<S> Layer<S> for GrpcRetryLayer {
    type Service = GrpcRetryService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        // The name is final once a service is made: its series show now, at zero.
        self.config.meter.register();
        GrpcRetryService::new(inner, Arc::clone(&self.config))
    }
}

impl fmt::Debug for GrpcRetryLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.config.fmt(f)
    }
}
