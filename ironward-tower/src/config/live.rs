//! [`Protection`]: the server stack built from a [`Config`], and reloaded live.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use ironward_tokio::SharedChaos;
use ironward_tokio::meter::Reloads;

use super::build::{self, Sources, Tuners};
use super::client::{ClientConfig, ClientConfigError, ClientReload, ConfigFamily, ConfiguredLayer};
use super::error::ConfigError;
use super::file::Config;
use super::layer::{ProtectionLayer, Table};
use super::reload;
use crate::{Clock, Cpu, CpuSampler};

/// The server stack a [`Config`] describes, and the handle that reloads it live.
///
/// [`layer`](Self::layer) gives the one layer to put on a whole axum `Router`; each request
/// runs through its route's stack ([`ProtectionLayer`]). [`reload`](Self::reload) (and
/// [`reload_str`](Self::reload_str), [`reload_file`](Self::reload_file),
/// [`watch`](Self::watch)) retunes every piece in place through its tuner, keeping its state,
/// or refuses the new configuration and leaves the one in force; [`current`](Self::current)
/// reads the configuration in force back, for a debug endpoint.
///
/// Cloning it is one `Arc` clone; every clone and every layer share the pieces.
///
/// # Examples
///
/// ```
/// use axum::{Router, body::Body, routing::get};
/// use http::{Request, StatusCode};
/// use ironward_tower::config::Protection;
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let protection = Protection::from_toml(r#"
///     [server]
///     gate = 256
///     deadline = "2s"
///     [server.quota]
///     kind = "bucket"
///     rate = 1.0
///     burst = 1.0
/// "#).unwrap();
/// let app = Router::new().route("/", get(|| async { "hello" })).layer(protection.layer());
///
/// let ok = app.clone().oneshot(Request::new(Body::empty())).await.unwrap();
/// assert_eq!(ok.status(), StatusCode::OK);
/// let limited = app.clone().oneshot(Request::new(Body::empty())).await.unwrap();
/// assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
///
/// // A bigger burst, live: the bucket keeps its state, and fills up to the new burst.
/// protection.reload_str("[server]\ngate = 256\ndeadline = \"2s\"\n\
///     [server.quota]\nkind = \"bucket\"\nrate = 1.0\nburst = 5.0\n").unwrap();
/// assert_eq!(protection.current().server.gate, Some(256));
/// // A piece removed cannot be applied live: refused, and the old configuration stays.
/// assert!(protection.reload_str("[server]\ngate = 256\n").is_err());
/// assert!(protection.current().server.quota.is_some());
/// # }
/// ```
#[derive(Clone)]
pub struct Protection {
    inner: Arc<Inner>,
}

struct Inner {
    table: Arc<Table>,
    tuners: Vec<(Option<String>, Tuners)>,
    /// The configuration in force; its lock also makes reloads take turns, and guards the
    /// client stacks built from it.
    current: Mutex<Current>,
    reloads: Reloads,
}

/// The configuration in force, and the client stacks [`Protection::client`] built from it.
struct Current {
    config: Arc<Config>,
    clients: Vec<Box<dyn Client>>,
}

/// A client stack's reload, whatever its breaker family.
trait Client: Send {
    fn check(&self, config: &ClientConfig) -> Result<(), ClientConfigError>;
    fn retune(&self, config: &ClientConfig);
}

impl<B: ConfigFamily> Client for ClientReload<B>
where
    ClientReload<B>: Send,
{
    fn check(&self, config: &ClientConfig) -> Result<(), ClientConfigError> {
        ClientReload::check(self, config)
    }

    fn retune(&self, config: &ClientConfig) {
        ClientReload::retune(self, config);
    }
}

/// Builds a [`Protection`] on sources of its own: a clock a test moves, a CPU reading.
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until it builds"]
pub struct Builder {
    clock: Option<Clock>,
    cpu: Option<Cpu>,
}

impl Builder {
    /// Every piece that reads a clock reads `clock` (by default each layer's own
    /// [`Clock::monotonic`]): a test passes [`Clock::manual`] to move time itself.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The shedders read `cpu` (by default a [`CpuSampler`] started when a section sheds).
    pub fn cpu(mut self, cpu: Cpu) -> Self {
        self.cpu = Some(cpu);
        self
    }

    /// The stack `config` describes, on these sources.
    pub fn build(self, config: Config) -> Protection {
        let sheds =
            config.server.shed.is_some() || config.routes.values().any(|s| s.shed.is_some());
        let cpu = match self.cpu {
            Some(cpu) => cpu,
            // The sampler's thread runs while a `Cpu` made from it lives: the shedders'.
            None if sheds => Cpu::from(&CpuSampler::new()),
            None => Cpu::from_fn(|| 0),
        };
        let sources = Sources {
            clock: self.clock,
            cpu,
        };
        let built = build::build(&config, &sources);
        let reloads = Reloads::new();
        reloads.register();
        Protection {
            inner: Arc::new(Inner {
                table: Arc::new(Table {
                    server: built.server,
                    routes: built.routes,
                }),
                tuners: built.tuners,
                current: Mutex::new(Current {
                    config: Arc::new(config),
                    clients: Vec::new(),
                }),
                reloads,
            }),
        }
    }
}

impl Protection {
    /// The stack `config` describes, on the real clock and CPU.
    #[must_use]
    pub fn new(config: Config) -> Self {
        Self::builder().build(config)
    }

    /// A builder, to give the stack a clock or a CPU reading of your own.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The stack the TOML `text` describes.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when `text` is no valid configuration, naming the field and the line.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        Config::from_toml(text).map(Self::new)
    }

    /// The stack the TOML file at `path` describes.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when the file cannot be read or is no valid configuration.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Config::from_file(path).map(Self::new)
    }

    /// The one layer to put on the whole `Router` (`Router::layer`): each request runs
    /// through its route's stack. Every layer shares this stack's pieces.
    pub fn layer(&self) -> ProtectionLayer {
        ProtectionLayer::new(Arc::clone(&self.inner.table))
    }

    /// The chaos piece `route` runs (`None` for a request no route matched): the route's
    /// own `chaos` section's, or the server's, or `None` when neither has one.
    ///
    /// It is the piece itself, not a copy: its [`requests`](SharedChaos::requests) and
    /// [`injected`](SharedChaos::injected) are the server's, and a client edge built on it
    /// ([`ChaosLayer::from_shared`](crate::ChaosLayer::from_shared), the front door's
    /// `Faults`) shares the server's policy, numbering and reloads.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tower::config::Protection;
    ///
    /// let protection = Protection::from_toml(r#"
    ///     [server.chaos]
    ///     enabled = true
    ///     seed = 7
    ///     faults = [{ fault = "error", rate = 0.01 }]
    ///     [routes."/quiet".chaos]
    /// "#).unwrap();
    /// let server = protection.chaos(None).unwrap();
    /// assert_eq!((server.name(), server.seed()), ("server", Some(7)));
    /// let quiet = protection.chaos(Some("/quiet")).unwrap();
    /// assert_eq!((quiet.name(), quiet.policy().enabled), ("/quiet", false));
    /// // A route without a section of its own runs the server's piece.
    /// assert_eq!(protection.chaos(Some("/other")).unwrap().name(), "server");
    /// ```
    #[must_use]
    pub fn chaos(&self, route: Option<&str>) -> Option<SharedChaos> {
        let table = &self.inner.table;
        let route = route
            .and_then(|route| table.routes.get(route))
            .unwrap_or(&table.server);
        route.chaos.clone()
    }

    /// The configuration in force: the one built from, or the last one reloaded. It
    /// serializes to TOML ([`Config::to_toml`]) or JSON, for a debug endpoint.
    #[must_use]
    pub fn current(&self) -> Arc<Config> {
        Arc::clone(&self.lock().config)
    }

    /// The client stack the `[client]` section describes (a stack of no pieces when there
    /// is none), with the breaker family `B` ([`SharedSreBreaker`](super::SharedSreBreaker)
    /// or [`SharedClassicBreaker`](super::SharedClassicBreaker)), retuned by every reload
    /// from now on with the server's stack, all or nothing: a reload whose `[client]` this
    /// stack cannot take live (a piece added or removed, another breaker family) is refused
    /// whole.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] of kind [`Refused`](super::ErrorKind::Refused) when the section names
    /// another breaker family than `B`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tower::config::{Protection, SharedSreBreaker};
    ///
    /// let protection = Protection::from_toml(r#"
    ///     [client]
    ///     deadline = "2s"
    ///     breaker = { sre = { k = 2.0 } }
    /// "#).unwrap();
    /// let stack = protection.client::<SharedSreBreaker>().unwrap(); // `stack.layer(client)`
    /// # drop(stack);
    /// protection.reload_str("[client]\ndeadline = \"1s\"\nbreaker = { sre = { k = 1.5 } }\n").unwrap();
    /// // Without its breaker, the stack built would lose a piece: refused, nothing changes.
    /// assert!(protection.reload_str("[client]\ndeadline = \"1s\"\n").is_err());
    /// assert_eq!(protection.current().client.as_ref().unwrap().deadline.unwrap().as_secs(), 1);
    /// ```
    pub fn client<B: ConfigFamily>(&self) -> Result<ConfiguredLayer<B>, ConfigError>
    where
        ClientReload<B>: Send,
    {
        let mut current = self.lock();
        let config = current.config.client.clone().unwrap_or_default();
        let (layer, reload) = config
            .build::<B>()
            .map_err(|error| ConfigError::refused(format!("in [client], {error}")))?;
        current.clients.push(Box::new(reload));
        Ok(layer)
    }

    /// Applies `config` live, or refuses it and leaves the configuration in force.
    ///
    /// Applied, every piece is retuned through its tuner and keeps its state (a bucket its
    /// tokens, a window its stamps, a limiter its limit and the calls inside, a shedder its
    /// averages); the next request is decided by the new numbers. Refused, nothing changes:
    /// the whole configuration is checked before any piece is touched. Each reload is
    /// counted in `ironward.config.reloads` (with the `metrics` feature) and logged through
    /// `tracing`, at info when applied and warn when refused.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] of kind [`Refused`](super::ErrorKind::Refused) when `config` cannot be
    /// applied live: a piece added or removed, a rate limit's kind, key, `max_keys` or
    /// `headers` changed, a route added or removed. Restart the server to apply it.
    pub fn reload(&self, config: Config) -> Result<(), ConfigError> {
        let result = self.apply(config);
        self.report(result)
    }

    /// Reads the TOML `text` and applies it as [`reload`](Self::reload) does.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when `text` is no valid configuration, or cannot be applied live.
    pub fn reload_str(&self, text: &str) -> Result<(), ConfigError> {
        let result = Config::from_toml(text).and_then(|config| self.apply(config));
        self.report(result)
    }

    /// Reads the TOML file at `path` and applies it as [`reload`](Self::reload) does.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when the file cannot be read, is no valid configuration, or cannot be
    /// applied live.
    pub fn reload_file(&self, path: impl AsRef<Path>) -> Result<(), ConfigError> {
        let result = Config::from_file(path).and_then(|config| self.apply(config));
        self.report(result)
    }

    /// Checks `config` against the configuration in force, then retunes every piece to it.
    fn apply(&self, config: Config) -> Result<(), ConfigError> {
        let mut current = self.lock();
        reload::check(&current.config, &config).map_err(ConfigError::refused)?;
        let client = config.client.clone().unwrap_or_default();
        for stack in &current.clients {
            stack.check(&client).map_err(|error| {
                ConfigError::refused(format!(
                    "in [client], {error}; restart the program to apply it"
                ))
            })?;
        }
        reload::apply(&self.inner.tuners, &config);
        for stack in &current.clients {
            stack.retune(&client);
        }
        current.config = Arc::new(config);
        Ok(())
    }

    /// Counts and logs a reload's `result`, and hands it back.
    fn report(&self, result: Result<(), ConfigError>) -> Result<(), ConfigError> {
        match &result {
            Ok(()) => {
                self.inner.reloads.applied();
                tracing::info!("configuration reloaded: the new one is in force");
            }
            Err(error) => {
                self.inner.reloads.refused();
                tracing::warn!(%error, "configuration reload refused: the one in force stays");
            }
        }
        result
    }

    /// The configuration in force, locked. A reload never panics while it holds the lock,
    /// so a poisoned lock still holds a whole configuration.
    fn lock(&self) -> std::sync::MutexGuard<'_, Current> {
        self.inner
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for Protection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Protection")
            .field("current", &self.current())
            .finish_non_exhaustive()
    }
}
