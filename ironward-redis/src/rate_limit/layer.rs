//! [`FleetQuotaLayer`]: a rate limit whose budgets are in Redis, shared by every service it
//! makes and by every process that names it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderName;
use http::request::Parts;
use ironward::Usage;
use ironward_tokio::Knobs;
use ironward_tower::{Clock, Limited, Quota};
use tower::Layer;

use super::FleetQuotaService;
use crate::meter::Piece;
use crate::{Bucket, Period, Sliding, Store, StoreError};

/// Reads a request's key from its head.
type Extract = Arc<dyn Fn(&Parts) -> Option<Vec<u8>> + Send + Sync>;

/// Applies a rate limit kept in Redis to every service it wraps: one budget for all
/// requests, or one per key that an extractor reads from each request.
///
/// The fleet-wide twin of `ironward_tower::QuotaLayer`: the same [`Quota`], run by this
/// crate's [`Bucket`], [`Sliding`] or [`Period`] under `name`, and the same [`Limited`]
/// refusal, boxed, with its `429`, `Retry-After` and `RateLimit` fields
/// (`ironward_tower::http::response_for` and `ironward_tower::axum::handle_error` answer it
/// as they answer the local layer's). A service that outgrows one process swaps one layer
/// for the other and keeps its error handling. Every request costs one. What changes:
///
/// - the budgets live in Redis under `name`, so every service the layer makes, every
///   clone, and every process with a layer of the same name and limit share them;
/// - the clock is [`Clock::unix`] unless [`with_clock`](FleetQuotaLayer::with_clock) says
///   otherwise, as processes must read one clock for a budget to mean the same to all (or
///   set [`Time::Server`](crate::Time::Server) on the store, to read Redis's);
/// - while Redis is away each process serves from its own fallback (see [`Store`]); a
///   decision Redis does not give in time is refused with a `Limited` whose wait is the
///   store's timeout;
/// - an admitted response carries no `RateLimit` fields, where the local layer's carries
///   its headroom: a script answers the decision and the wait, not what is left, and
///   asking Redis for it would be a second round trip on every request.
///
/// Requests without a key (the extractor returns `None`) share one budget, which is not
/// any key's.
///
/// # Examples
///
/// With no Redis at the address the layer still limits, on its local fallback (this
/// example runs without a server):
///
/// ```
/// use std::time::Duration;
/// use http::Request;
/// use ironward_redis::{Source, Options, FleetQuotaLayer, Store};
/// use ironward_tower::{Limited, Quota};
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// // No Redis there: start on the fallback, with the whole quota for this one process.
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// let layer = FleetQuotaLayer::new(&store, "api", Quota::sliding(1, Duration::from_secs(60)));
/// let mut service = layer.layer(service_fn(|_: Request<()>| async { Ok::<_, Limited>("hi") }));
///
/// assert_eq!(service.ready().await.unwrap().call(Request::new(())).await.unwrap(), "hi");
/// let refused = service.ready().await.unwrap().call(Request::new(())).await.unwrap_err();
/// let limited = refused.downcast_ref::<Limited>().unwrap();
/// assert!(limited.retry_after() > Duration::from_secs(59));
/// assert_eq!(limited.headers()["ratelimit-policy"], r#""default";q=1;w=60"#);
/// assert_eq!(layer.store().source(), Source::Local);
/// # Ok(())
/// # }
/// ```
///
/// One budget per API key, shared by the fleet. This needs a Redis server, so it is not
/// run here:
///
/// ```no_run
/// use std::time::Duration;
/// use http::HeaderName;
/// use ironward_redis::{Options, FleetQuotaLayer, Store};
/// use ironward_tower::Quota;
///
/// # #[tokio::main]
/// # async fn main() -> redis::RedisResult<()> {
/// let store = Store::connect("redis://127.0.0.1/", Options::default()).await?;
/// let key = HeaderName::from_static("x-api-key");
/// let layer = FleetQuotaLayer::by_header(&store, "api", Quota::bucket(10.0, 20.0), key)
///     .with_name("per-key");
/// // ServiceBuilder::new().layer(HandleErrorLayer::new(handle_error)).layer(layer) ...
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct FleetQuotaLayer {
    shared: Arc<Shared>,
}

/// What every service of one layer shares.
#[derive(Clone)]
pub(super) struct Shared {
    limit: Quota,
    limiter: Limiter,
    /// The policy's name and the clock every budget reads (the wall clock by default, which
    /// every process of a fleet shares); a fleet quota has no dice and no shadow mode.
    knobs: Knobs,
    /// `None` for one budget for every request.
    extract: Option<Extract>,
}

/// The limiter a [`Quota`] names, in Redis.
#[derive(Clone)]
enum Limiter {
    Bucket(Bucket),
    Sliding(Sliding),
    Period(Period),
}

impl FleetQuotaLayer {
    /// One budget of `limit` for every request, in the keys named `name`, under the policy
    /// name `"default"`.
    ///
    /// With the `metrics` feature, the layer's decisions count under `piece="rate_limit"`
    /// and `name`, the name its budgets are kept under (see the guide's [metrics](crate::_guide::metrics)).
    pub fn new(store: &Store, name: &str, limit: Quota) -> Self {
        let piece = Piece::RateLimit;
        let limiter = match limit {
            Quota::Bucket { rate, burst } => {
                Limiter::Bucket(Bucket::with(store, name, rate, burst, piece))
            }
            Quota::Sliding { quota, window } => {
                Limiter::Sliding(Sliding::with(store, name, quota, window, piece))
            }
            Quota::Period {
                quota,
                period,
                align,
            } => Limiter::Period(Period::with(store, name, quota, period, align, piece)),
        };
        Self {
            shared: Arc::new(Shared {
                limit,
                limiter,
                knobs: Knobs {
                    clock: Clock::unix(),
                    ..Knobs::default()
                },
                extract: None,
            }),
        }
    }

    /// One budget of `limit` per key that `extract` reads from a request's head.
    ///
    /// Redis holds the keys, each with a TTL of twice [`Quota::idle`] after its last use,
    /// so idle keys vanish on their own and the layer keeps no table; the local fallback
    /// holds at most [`Options::local_keys`](crate::Options::local_keys) of them.
    pub fn keyed<K, F>(store: &Store, name: &str, limit: Quota, extract: F) -> Self
    where
        K: AsRef<[u8]>,
        F: Fn(&Parts) -> Option<K> + Send + Sync + 'static,
    {
        let extract: Extract =
            Arc::new(move |parts| extract(parts).map(|key| key.as_ref().to_vec()));
        Self::new(store, name, limit).with(|shared| shared.extract = Some(extract))
    }

    /// One budget of `limit` per value of the header `name` (its first value, byte for
    /// byte); requests without it share one budget.
    pub fn by_header(store: &Store, name: &str, limit: Quota, header: HeaderName) -> Self {
        Self::keyed(store, name, limit, move |parts: &Parts| {
            parts
                .headers
                .get(&header)
                .map(|value| value.as_bytes().to_vec())
        })
    }

    /// The same layer on `clock` instead of the Unix wall clock.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.with(|shared| shared.knobs.clock = clock)
    }

    /// The same layer under the policy name `policy`, which the `RateLimit` and
    /// `RateLimit-Policy` fields give (see [`Limited::named`]).
    #[must_use]
    pub fn with_name(self, policy: &'static str) -> Self {
        self.with(|shared| shared.knobs.name = policy)
    }

    /// The limit each budget follows.
    pub fn limit(&self) -> Quota {
        self.shared.limit
    }

    /// The store the budgets are in: its [`source`](Store::source) and [`stats`](Store::stats).
    pub fn store(&self) -> &Store {
        self.shared.limiter.store()
    }

    fn with(self, change: impl FnOnce(&mut Shared)) -> Self {
        let mut shared = Arc::unwrap_or_clone(self.shared);
        change(&mut shared);
        Self {
            shared: Arc::new(shared),
        }
    }
}

impl Shared {
    /// Takes one request with the head `parts` from its budget: `Err` with the refusal
    /// when it is over.
    pub(super) async fn take(&self, parts: &Parts) -> Result<(), Limited> {
        let key = self.extract.as_ref().and_then(|extract| extract(parts));
        let key = key.as_deref();
        let now = self.knobs.clock.now();
        let decided: Result<(bool, Duration), StoreError> = match &self.limiter {
            Limiter::Bucket(bucket) => bucket
                .take_key(key, now, 1.0)
                .await
                .map(|answer| (answer.value, answer.next)),
            Limiter::Sliding(sliding) => sliding
                .take_key(key, now, 1)
                .await
                .map(|answer| (answer.value, answer.next)),
            Limiter::Period(period) => period
                .take_key(key, now, 1, crate::period::Wait::End)
                .await
                .map(|answer| (answer.value != Usage::Over, answer.next)),
        };
        let wait = match decided {
            Ok((true, _)) => return Ok(()),
            Ok((false, next)) => next,
            // A decision Redis did not give in time is a refusal: come back after as
            // long as Redis was given.
            Err(_) => self.limiter.store().options().timeout,
        };
        Err(Limited::for_limit(&self.limit, wait).named(self.knobs.name))
    }
}

impl Limiter {
    fn store(&self) -> &Store {
        match self {
            Self::Bucket(bucket) => bucket.store(),
            Self::Sliding(sliding) => sliding.store(),
            Self::Period(period) => period.store(),
        }
    }
}

impl<S> Layer<S> for FleetQuotaLayer {
    type Service = FleetQuotaService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        FleetQuotaService::new(inner, Arc::clone(&self.shared))
    }
}

impl fmt::Debug for FleetQuotaLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetQuotaLayer")
            .field("shared", &self.shared)
            .finish()
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetQuotaLayer")
            .field("limit", &self.limit)
            .field("policy", &self.knobs.name)
            .field("keyed", &self.extract.is_some())
            .field("clock", &self.knobs.clock)
            .field("source", &self.limiter.store().source())
            .finish()
    }
}
