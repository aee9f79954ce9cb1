//! The server stack from a configuration file, reloaded live: [`Protection`], built from a
//! [`Config`], gives one layer for a whole axum `Router` and retunes every piece in place when
//! the file changes.
//!
//! # The file
//!
//! TOML, read by [`Config::from_toml`] or [`Protection::from_file`]; the records are plain
//! serde `Deserialize`, so any serde format (JSON, YAML) reads them with the same checks. A
//! `[server]` section holds the stack every route runs, each piece optional, in
//! [`ProtectLayer`](crate::ProtectLayer)'s order:
//!
//! | field | piece | written as |
//! | --- | --- | --- |
//! | `shed` | [`ShedLayer`](crate::ShedLayer) | [`ironward::Shed`]'s fields, its defaults for those left out |
//! | `quota` | [`QuotaLayer`](crate::QuotaLayer) | [`QuotaConfig`]: `kind` and its numbers, `key` and its fields |
//! | `limiter` | [`LimiterLayer`](crate::LimiterLayer) | [`ironward::Adaptive`]'s fields |
//! | `queue` | the limiter's [`Queue`](crate::Queue), beside a `limiter` | `initial`, `max`, `wait` |
//! | `gate` | [`GateLayer`](crate::GateLayer), in place of a limiter | its limit, 1 or more |
//! | `deadline` | [`DeadlineLayer`](crate::DeadlineLayer) | a duration; `"0s"` is none |
//! | `chaos` | [`ChaosLayer`](crate::ChaosLayer)'s faults, innermost (see [Chaos](#chaos)) | [`ChaosConfig`]: [`ironward::chaos::Chaos`]'s fields, `seed` and `name` |
//!
//! Durations are humane strings (`"100ms"`, `"1m30s"`: [`ironward::humane`]).
//!
//! A `limiter`'s `partitions` (`partitions = { critical = 0.7, sheddable = 0.3 }`, the classes
//! left out reserving nothing: [`ironward::Partitions`]) reserves each class its part of the
//! limit in place of the default ceilings, and reloads live with the limiter's other numbers,
//! on, off or to other fractions. The stacks built here read every request as `critical`, so
//! today a reservation changes what a refusal says (the class's own calls in flight against
//! its reservation) rather than which requests are let in.
//!
//! A `[client]` section holds a client stack ([`ClientConfig`]: `deadline`, `retry`,
//! `breaker`, `limiter`), which [`Protection::client`] builds as a
//! [`ClientLayer`](crate::ClientLayer) and every reload retunes with the server's.
//!
//! ```
//! use ironward_tower::config::{Config, QuotaKey};
//!
//! let config = Config::from_toml(r#"
//! [server]
//! gate = 256
//! deadline = "2s"
//!
//! [server.shed]
//! cpu = 900                    # shed from 90 % CPU
//!
//! [server.quota]
//! kind = "bucket"              # or "sliding" (quota, window), "period" (quota, period, align)
//! rate = 10.0                  # tokens a second
//! burst = 20.0
//! key = "client"               # or "global", "peer", "header" (with `header = "x-api-key"`)
//! proxies = 1                  # one proxy of ours in front, which appends to the chain
//! proxy_header = "x-forwarded-for"
//! max_keys = 10000
//! headers = true               # the RateLimit fields on every response
//!
//! ## A slow route: a longer deadline, and an adaptive limiter of its own with a queue.
//! [routes."/api/report"]
//! deadline = "30s"
//! limiter = { algorithm = { Gradient2 = {} } }
//! queue = { wait = "2s" }
//!
//! ## A route with a rate limit of its own, per API key.
//! [routes."/api/search".quota]
//! kind = "sliding"
//! quota = 100
//! window = "1m"
//! key = "header"
//! header = "x-api-key"
//! "#).unwrap();
//!
//! assert_eq!(config.server.gate, Some(256));
//! let report = config.stack(Some("/api/report"));
//! assert_eq!((report.gate, report.limiter.is_some()), (None, true));
//! assert!(matches!(config.stack(Some("/api/search")).quota.unwrap().key, QuotaKey::Header(_)));
//! ```
//!
//! # Chaos
//!
//! A `chaos` section injects faults on purpose ([`ironward::chaos`]), to show in staging
//! that the resilience around the handler works: the core's policy fields, a `seed` for a
//! run that replays (request `i` reaching the piece draws
//! [`ironward::chaos::draw`]`(seed, i)`) and a `name` (by default the section's):
//!
//! ```
//! use ironward_tower::config::Config;
//!
//! let config = Config::from_toml(r#"
//! [server]
//! deadline = "2s"
//!
//! [server.chaos]
//! enabled = true
//! shadow = false               # true: decide and count, inject nothing
//! seed = 42
//! faults = [
//!     { fault = "error", rate = 0.01 },     # 503 with `x-ironward-chaos: error`
//!     { fault = { latency = { uniform = { low = "100ms", high = "300ms" } } }, rate = 0.05 },
//!     { fault = "abort", rate = 0.001 },    # never answers: the deadline ends it
//!     { fault = "replace", rate = 0.01 },   # the handler runs, the caller gets a 500
//! ]
//! "#).unwrap();
//! assert_eq!(config.server.chaos.unwrap().policy.faults.len(), 4);
//! ```
//!
//! The piece is the innermost, just around the handler, not the outermost: the server's own
//! pieces then see its faults as the handler's, which is what the faults are for. An
//! injected latency runs inside the deadline and holds its place in the gate or the
//! limiter, so the limiter learns from it and the deadline cuts it; an abort is cut by the
//! deadline into a 504, as a hung handler would be; an injected error and a replaced
//! response are the handler's answers to every piece outside. Outermost, the faults would
//! reach the clients while the server's pieces never saw them, testing the clients alone
//! (which a client's own chaos layer does better). A request an outer piece refuses never
//! reaches the chaos piece, and takes no number in its run.
//!
//! A route without a `chaos` section runs the server's piece, one numbering for both; a
//! route's own is apart. [`Protection::chaos`] gives the piece itself, so that a client
//! edge shares it. The faults are counted by the piece under
//! `ironward.chaos.injected{name, fault, shadow}`.
//!
//! A wrong file is an error that names the field, the line and the column, and what is
//! expected ([`ConfigError`]): an unknown field, a value of the wrong type, a rate that is
//! NaN, negative or zero, a chaos rate outside `[0, 1]` or chaos rates adding up to more
//! than 1, a count of zero, a bad duration, a header name that is no token,
//! both `gate` and `limiter` in one section, a `queue` without a `limiter`, a field the
//! quota's kind or key does not read.
//!
//! # Routes
//!
//! A `[routes."/path"]` section overrides the server's pieces for one route, named by its
//! path as the router has it (`"/users/{id}"`, what `axum::extract::MatchedPath` reports).
//! A piece the route gives replaces the server's (`limiter` and `gate` are one piece, the
//! concurrency limit); a piece it leaves out is the server's own, shared: the server's
//! rate limit counts the route's requests in the same budgets as every other route's, while
//! a route's own quota has budgets of its own. A request no route matched runs the server's
//! stack. The pieces report their metrics and events under the name `server`, a route's own
//! under its path.
//!
//! # Reloads
//!
//! [`Protection::reload`], [`reload_str`](Protection::reload_str),
//! [`reload_file`](Protection::reload_file) and [`watch`](Protection::watch) apply a new
//! configuration through each piece's tuner ([`Tuner`](crate::Tuner),
//! [`QuotaTuner`](crate::QuotaTuner)), keeping every piece's state, or refuse it whole and
//! leave the one in force. What reloads live is every number: a shedder's, a quota's (of the
//! same kind), a limiter's policy and its queue (or none), a gate's limit, a deadline, a
//! chaos policy (its faults, rates, `enabled` and `shadow`, the request numbering going on).
//! What is refused, with the reason and the advice to restart: a piece added or removed (in
//! `[client]` too, or its breaker's family changed), a quota's kind, key, `max_keys` or
//! `headers` changed, a chaos `seed` or `name` changed, a route added or removed. To turn
//! chaos on without a restart, start with its section and `enabled = false`. An invalid file is refused too. [`Protection::current`] reads the configuration in force back; each reload
//! is counted in `ironward.config.reloads` under `outcome="applied"` or `"refused"` (with
//! the `metrics` feature) and logged through `tracing`.

mod build;
mod chaos;
mod client;
mod error;
mod file;
mod layer;
mod live;
mod quota;
mod read;
mod reload;
mod value;
mod watch;

pub use self::chaos::ChaosConfig;
pub use self::client::{
    BreakerConfig, ClientConfig, ClientConfigError, ClientReload, ConfigFamily, ConfiguredLayer,
};
pub use self::error::{ConfigError, ErrorKind};
pub use self::file::{Config, Stack};
pub use self::layer::{ProtectionLayer, ProtectionService};
pub use self::live::{Builder, Protection};
pub use self::quota::{MAX_KEYS, QuotaConfig, QuotaKey};
pub use self::watch::{MIN_INTERVAL, Watch};
/// The breaker families a [`ClientConfig`] builds, named here so that a program needs no
/// other crate to pick one.
pub use ironward_tokio::{SharedClassicBreaker, SharedSreBreaker};
