//! [`QuotaLayer`]: one budget, or one table of budgets by key, shared by every service it
//! makes.

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use http::HeaderName;
use http::request::Parts;
use tower_layer::Layer;

use super::client;
use super::error::policy_name;
use super::keyed::{self, Keyed};
use super::service::{Settings, Shared};
use super::tune::QuotaTuner;
use super::{ClientAddr, Quota, QuotaService};
use crate::{Clock, Mode};

/// Applies a rate limit to every service it wraps: one budget for all requests, or one per
/// key that an extractor reads from each request.
///
/// **One layer, one budget.** Every service the layer makes, every clone of those (one per
/// connection in a server) and every clone of the layer share the same state, so a limit of
/// 10 is 10 in total across connections, routes and methods. (tower's `RateLimit` keeps its
/// state in each service, so every clone, and every connection, gets the whole rate again,
/// a limitation tower's and axum's maintainers acknowledge; and axum calls `layer` once per
/// route and per method.)
/// For separate budgets per route, give each route its own layer.
///
/// [`new`](QuotaLayer::new) and the keyed constructors make the state, behind an `Arc` that
/// every service and every clone shares, as tower's `GlobalConcurrencyLimitLayer` shares its
/// semaphore; cloning the layer is an `Arc` clone and nothing more. The builders
/// [`with_clock`](QuotaLayer::with_clock) and [`with_name`](QuotaLayer::with_name) each make
/// new budgets (the ones made before were made on the old clock and name): configure the layer
/// first, then clone it or make services from it. Services and clones made before a builder
/// keep the budgets they had. A layer in a `static` goes in a `std::sync::LazyLock`.
///
/// To change the limit while the layer serves (a configuration reload), take a
/// [`tuner`](QuotaLayer::tuner) from the configured layer: it retunes every budget that
/// the services and clones share, each keeping its history.
///
/// A keyed layer ([`keyed`](QuotaLayer::keyed), [`by_peer`](QuotaLayer::by_peer),
/// [`by_client`](QuotaLayer::by_client), [`by_header`](QuotaLayer::by_header)) holds
/// at most `max_keys` keys, however many distinct keys arrive:
/// [`keyed`](QuotaLayer::keyed) says how, and what it costs.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use http::{Request, Response};
/// use ironward_tower::{Limited, Quota, QuotaLayer};
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// // Three a minute, shared by two routes.
/// const MINUTE: Duration = Duration::from_secs(60);
/// let limit = QuotaLayer::new(Quota::period(3, MINUTE)).with_headers(true);
/// let hello = service_fn(|_: Request<()>| async { Ok::<_, Limited>(Response::new("hello")) });
/// let mut a = limit.layer(hello);
/// let mut b = limit.layer(hello); // a second route: the same budget
///
/// for left in (0..3).rev() {
///     let response = a.ready().await.unwrap().call(Request::new(())).await.unwrap();
///     assert_eq!(*response.body(), "hello");
///     // Each response tells the client what it has left.
///     assert_eq!(response.headers()["ratelimit"], format!(r#""default";r={left};t=60"#));
/// }
/// let refused = b.ready().await.unwrap().call(Request::new(())).await.unwrap_err();
/// let limited = refused.downcast_ref::<Limited>().unwrap();
/// assert!(limited.retry_after() <= Duration::from_secs(60));
/// assert_eq!((limited.quota(), limit.keys()), (3, 0));
/// # }
/// ```
#[derive(Clone)]
pub struct QuotaLayer {
    pub(crate) shared: Arc<Shared>,
}

impl QuotaLayer {
    /// One budget of `limit` for every request, on tokio's monotonic clock, under the policy
    /// name `"default"`.
    pub fn new(limit: Quota) -> Self {
        Self::build(limit, None)
    }

    /// A layer of `limit` on tokio's monotonic clock, under the policy name `"default"`: one
    /// budget, or the table `keyed`.
    fn build(limit: Quota, keyed: Option<Arc<dyn Keyed>>) -> Self {
        Self {
            shared: Arc::new(Shared::new(limit, Settings::default(), keyed)),
        }
    }

    /// One budget of `limit` per key that `extract` reads from a request's head, at most
    /// `max_keys` of them (a bound of 0 is read as 1).
    ///
    /// The key is read from the request's [`Parts`] (method, URI, headers, extensions),
    /// whatever its body; the request is split and put back together without copying.
    ///
    /// - **The table is sharded.** Keys are spread by a hash keyed at random per table over
    ///   16 shards (fewer when `max_keys` is under 16), each an LRU map behind its own std
    ///   `Mutex`, so requests for different keys rarely wait for one another. The shards'
    ///   capacities add up to `max_keys`, so the table never holds more; a full shard evicts
    ///   even when another has room, so a table under a flood settles a little below the
    ///   bound (99.5 % in our measurement).
    /// - **Idle keys are forgotten for free.** A key untouched for longer than
    ///   [`Quota::idle`] (a bucket's time to refill, a window, a period) has a limiter as
    ///   good as new, so dropping it changes no answer. Each access to a shard drops up to 8
    ///   such keys from it, oldest first, which least-recently-used order makes cheap.
    /// - **A full table forgets its least recently used key**, which starts afresh when it
    ///   comes back. That is the one way a keyed limit admits more than its quota, and the
    ///   trade-off of the bound: a table sized for the keys active within one
    ///   [`Quota::idle`] never does it, and under a flood of distinct keys the limit loosens
    ///   for the keys pushed out rather than the process running out of memory.
    /// - **Memory** is about 130 to 170 bytes a key for a bucket or a period (measured on
    ///   x86-64 with IP-address and short header keys, key and map overhead included), plus
    ///   what the key owns. A sliding window also keeps an 8-byte stamp per request inside
    ///   the window (room for `min(quota, 4096)` reserved up front), up to `8 × quota` bytes
    ///   a key: for large quotas per key, prefer a bucket or a period.
    /// - **Requests without a key** (`extract` returns `None`) share one more budget of
    ///   `limit`, which is never evicted and not counted in [`keys`](QuotaLayer::keys).
    ///   They are limited together rather than let through, so a missing header, or a
    ///   server that provides no peer address, fails closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::{Request, Response};
    /// use ironward_tower::{Limited, Quota, QuotaLayer};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// // One a minute per path.
    /// let limit = Quota::sliding(1, Duration::from_secs(60));
    /// let layer = QuotaLayer::keyed(limit, 10_000, |head: &http::request::Parts| {
    ///     Some(head.uri.path().to_owned())
    /// });
    /// let mut service = layer.layer(service_fn(|_: Request<()>| async { Ok::<_, Limited>(Response::new(())) }));
    /// let get = |path: &str| Request::get(path).body(()).unwrap();
    ///
    /// assert!(service.ready().await.unwrap().call(get("/a")).await.is_ok());
    /// assert!(service.ready().await.unwrap().call(get("/b")).await.is_ok());
    /// assert!(service.ready().await.unwrap().call(get("/a")).await.unwrap_err().is::<Limited>());
    /// assert_eq!(layer.keys(), 2);
    /// # }
    /// ```
    pub fn keyed<K, F>(limit: Quota, max_keys: usize, extract: F) -> Self
    where
        K: Hash + Eq + Send + 'static,
        F: Fn(&Parts) -> Option<K> + Send + Sync + 'static,
    {
        let table = keyed::table(limit, max_keys, extract);
        Self::build(limit, Some(Arc::new(table)))
    }

    /// One budget of `limit` per peer IP address, at most `max_keys` of them.
    ///
    /// The address is read from axum's `ConnectInfo<SocketAddr>` (with the `axum` feature;
    /// serve the app with `into_make_service_with_connect_info::<SocketAddr>()`) or from a
    /// bare `SocketAddr` in the request's extensions, which a hyper server can insert. A
    /// request with neither shares the budget of requests without a key, so a server that
    /// provides no peer address has one budget for all. The whole address is the key, an
    /// IPv4 client that a dual-stack listener reports as `::ffff:192.0.2.1` keyed as
    /// `192.0.2.1` (the address [`ClientAddr`] reads, and for the same reason): behind
    /// a proxy every client shares the proxy's, and an IPv6 client that owns a /64 can
    /// rotate through its addresses; key by the client behind the proxies with
    /// [`by_client`](QuotaLayer::by_client), or by a prefix with
    /// [`keyed`](QuotaLayer::keyed), instead.
    pub fn by_peer(limit: Quota, max_keys: usize) -> Self {
        Self::keyed(limit, max_keys, client::peer_ip)
    }

    /// One budget of `limit` per client IP address, as `client` reads it behind your
    /// proxies, at most `max_keys` of them.
    ///
    /// [`ClientAddr::ip`] is the key: the entry `client.proxies` from the right end of
    /// `Forwarded` (RFC 7239) or `X-Forwarded-For`, which the proxy nearest the client
    /// appended, with its port dropped; else the TCP peer, as
    /// [`by_peer`](QuotaLayer::by_peer) reads it. Entries a client writes itself, on
    /// the left, are never read, so a forged one buys no new budget. With
    /// [`ClientAddr::DIRECT`] (no proxy) this is [`by_peer`](QuotaLayer::by_peer).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::net::SocketAddr;
    /// use http::{Request, Response};
    /// use ironward_tower::{ClientAddr, Limited, Quota, QuotaLayer};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// // One load balancer in front, which appends to X-Forwarded-For: one a second a client.
    /// let client = ClientAddr::behind(1);
    /// let layer = QuotaLayer::by_client(Quota::bucket(1.0, 1.0), 10_000, client);
    /// let mut service = layer.layer(service_fn(|_: Request<()>| async { Ok::<_, Limited>(Response::new(())) }));
    /// let via = |chain: &str| {
    ///     let mut request = Request::get("/").header("x-forwarded-for", chain).body(()).unwrap();
    ///     // The TCP peer is the load balancer.
    ///     request.extensions_mut().insert("10.0.0.2:50000".parse::<SocketAddr>().unwrap());
    ///     request
    /// };
    ///
    /// assert!(service.ready().await.unwrap().call(via("192.0.2.1")).await.is_ok());
    /// assert!(service.ready().await.unwrap().call(via("192.0.2.2")).await.is_ok());
    /// // 192.0.2.1 again, with a forged entry on the left: the same client, refused.
    /// let forged = via("203.0.113.66, 192.0.2.1");
    /// let refused = service.ready().await.unwrap().call(forged).await.unwrap_err();
    /// assert!(refused.is::<Limited>());
    /// assert_eq!(layer.keys(), 2);
    /// # }
    /// ```
    pub fn by_client(limit: Quota, max_keys: usize, client: ClientAddr) -> Self {
        Self::keyed(limit, max_keys, move |head: &Parts| client.ip(head))
    }

    /// One budget of `limit` per value of the header `name` (its first value, compared byte
    /// for byte), at most `max_keys` of them.
    ///
    /// Requests without the header share one budget. Each key is a copy of the value (one
    /// small allocation per request), so that a key does not keep the buffer the request was
    /// read into alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::{HeaderName, Request, Response};
    /// use ironward_tower::{Limited, Quota, QuotaLayer};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let key = HeaderName::from_static("x-api-key");
    /// let layer = QuotaLayer::by_header(Quota::bucket(1.0, 1.0), 1000, key);
    /// let mut service = layer.layer(service_fn(|_: Request<()>| async { Ok::<_, Limited>(Response::new(())) }));
    /// let from = |client: &str| Request::get("/").header("x-api-key", client).body(()).unwrap();
    ///
    /// assert!(service.ready().await.unwrap().call(from("alice")).await.is_ok());
    /// assert!(service.ready().await.unwrap().call(from("bob")).await.is_ok());
    /// let refused = service.ready().await.unwrap().call(from("alice")).await.unwrap_err();
    /// assert!(refused.downcast_ref::<Limited>().unwrap().retry_after() <= Duration::from_secs(1));
    /// # }
    /// ```
    pub fn by_header(limit: Quota, max_keys: usize, name: HeaderName) -> Self {
        Self::keyed(limit, max_keys, keyed::header(name))
    }

    /// The same layer on `clock` instead of tokio's monotonic clock: [`Clock::unix`] for a
    /// [`Quota::Period`] aligned on calendar time, or a scripted clock for a test.
    ///
    /// Makes new budgets under the limit in force, since the ones made before read the old
    /// clock (a bucket starts full at the moment it is made, on the clock it was made on);
    /// services and clones made before keep theirs.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.remade(|settings| settings.knobs.clock = clock)
    }

    /// The same layer under the policy name `policy`, which the `RateLimit` and
    /// `RateLimit-Policy` fields give (see [`Limited::named`](super::Limited::named)).
    ///
    /// Give stacked layers different names, so that a client can tell their fields apart.
    /// Like [`with_clock`](QuotaLayer::with_clock), it makes new budgets; services and
    /// clones made before keep theirs, and their name.
    #[must_use]
    pub fn with_name(self, policy: &'static str) -> Self {
        self.remade(|settings| settings.knobs.name = policy_name(policy))
    }

    /// The same layer in `mode` (by default [`Mode::Enforce`]). In [`Mode::Shadow`] a
    /// request over the limit goes through to the inner service instead, having taken
    /// nothing from the budget (as the enforcing layer took nothing for its refusal), with
    /// the [`Limited`](super::Limited) that would have refused it in the request's
    /// extensions, for the handler or an outer layer to read. The refusal is reported as
    /// `shadowed` (see [`Mode`]). Like [`with_clock`](QuotaLayer::with_clock), it makes
    /// new budgets; services and clones made before keep theirs, and their mode.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::{Request, Response};
    /// use ironward_tower::{Limited, Mode, Quota, QuotaLayer};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let layer = QuotaLayer::new(Quota::sliding(1, Duration::from_secs(60)))
    ///     .with_mode(Mode::Shadow);
    /// let handler = service_fn(|request: Request<()>| async move {
    ///     Ok::<_, Limited>(Response::new(request.extensions().get::<Limited>().copied()))
    /// });
    /// let mut service = layer.layer(handler);
    /// let first = service.ready().await.unwrap().call(Request::new(())).await.unwrap();
    /// let second = service.ready().await.unwrap().call(Request::new(())).await.unwrap();
    /// assert_eq!(*first.body(), None);
    /// assert_eq!(second.body().map(|limited| limited.quota()), Some(1));
    /// # }
    /// ```
    #[must_use]
    pub fn with_mode(self, mode: Mode) -> Self {
        self.remade(|settings| settings.knobs.mode = mode)
    }

    /// Whether the layer enforces its refusals or only reports them; see
    /// [`with_mode`](Self::with_mode).
    pub fn mode(&self) -> Mode {
        self.shared.mode()
    }

    /// The same layer, adding (`true`) or not (`false`, the default) the `RateLimit-Policy`
    /// and `RateLimit` fields to every admitted response: the request's
    /// [`Headroom`](super::Headroom), appended to whatever fields the inner service set, so
    /// that a client sees what it has left before it runs out. A refusal's `429` carries them
    /// whatever this says.
    ///
    /// They are off unless asked for because they are the one part of an admission that costs
    /// more than the decision: a formatted header value (an allocation), a reference count on
    /// the policy's value, and for a response whose header map was empty the map's own storage,
    /// several times what the layer costs without them (BENCHMARKS.md,
    /// `layer_rate_limit allowed_with_headers`). A server that publishes its limits turns them
    /// on; the draft that defines them is not yet an RFC, and a limit on a client of another
    /// service would mix its own fields into that service's. A layer in [`Mode::Shadow`] never
    /// adds them, since its policy is not in force. Like
    /// [`with_clock`](QuotaLayer::with_clock), it makes new budgets; services and clones
    /// made before keep theirs.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::{Request, Response};
    /// use ironward_tower::{Quota, QuotaLayer};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let ok = || service_fn(|_: Request<()>| async { Ok::<_, std::io::Error>(Response::new(())) });
    /// let layer = QuotaLayer::new(Quota::sliding(5, Duration::from_secs(60)))
    ///     .with_name("api")
    ///     .with_headers(true);
    /// let mut service = layer.clone().layer(ok());
    /// let response = service.ready().await.unwrap().call(Request::new(())).await.unwrap();
    /// assert_eq!(response.headers()["ratelimit-policy"], r#""api";q=5;w=60"#);
    /// assert_eq!(response.headers()["ratelimit"], r#""api";r=4;t=60"#);
    ///
    /// let quiet = layer.with_headers(false);
    /// assert!(!quiet.headers());
    /// assert!(!QuotaLayer::new(Quota::sliding(5, Duration::from_secs(60))).headers());
    /// let response = quiet.layer(ok()).oneshot(Request::new(())).await.unwrap();
    /// assert!(response.headers().is_empty());
    /// # }
    /// ```
    #[must_use]
    pub fn with_headers(self, headers: bool) -> Self {
        self.remade(|settings| settings.headers = headers)
    }

    /// Whether admitted responses carry the `RateLimit-Policy` and `RateLimit` fields.
    pub fn headers(&self) -> bool {
        self.shared.settings().headers
    }

    /// The same layer with new budgets, its settings changed by `change`.
    fn remade(self, change: impl FnOnce(&mut Settings)) -> Self {
        let mut settings = self.shared.settings().clone();
        change(&mut settings);
        Self {
            shared: Arc::new(self.shared.remade(settings)),
        }
    }

    /// The limit each budget follows: the one the layer was made with, or the last one a
    /// [`QuotaTuner`] retuned it to.
    pub fn limit(&self) -> Quota {
        self.shared.terms().limit
    }

    /// A handle that changes the limit of this layer's budgets in place, for every service
    /// the layer made and every clone at once; see [`QuotaTuner`].
    ///
    /// One `Arc` clone. Take it from the layer once it is configured: a builder makes new
    /// budgets, which the tuner taken before it does not reach.
    pub fn tuner(&self) -> QuotaTuner {
        QuotaTuner::new(Arc::clone(&self.shared))
    }

    /// How many keys the layer holds now: 0 for a layer without keys, at most `max_keys`.
    pub fn keys(&self) -> usize {
        self.shared.keys()
    }
}

impl<S> Layer<S> for QuotaLayer {
    type Service = QuotaService<S>;

    /// A service sharing the layer's budgets. The first one registers the limit's metrics,
    /// under the policy name that is now final.
    fn layer(&self, inner: S) -> Self::Service {
        self.shared.register();
        QuotaService::new(inner, Arc::clone(&self.shared))
    }
}

impl fmt::Debug for QuotaLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuotaLayer")
            .field("shared", &self.shared)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use http::{Request, Response};
    use tower::{Layer, Service, ServiceExt, service_fn};

    use super::*;
    use crate::Limited;

    type BoxError = Box<dyn std::error::Error + Send + Sync>;

    fn ok() -> impl Service<Request<()>, Response = Response<()>, Error = BoxError> + Clone {
        service_fn(|_: Request<()>| async { Ok(Response::new(())) })
    }

    async fn admitted<S>(service: &mut S) -> bool
    where
        S: Service<Request<()>, Error = BoxError>,
    {
        match service.ready().await.unwrap().call(Request::new(())).await {
            Ok(_) => true,
            Err(err) => {
                assert!(err.is::<Limited>());
                false
            }
        }
    }

    #[tokio::test]
    async fn clones_of_a_layer_made_before_use_share_one_budget() {
        let layer = QuotaLayer::new(Quota::period(2, Duration::from_secs(60)));
        let twin = layer.clone();
        let mut a = layer.layer(ok());
        let mut b = twin.layer(ok());
        let mut c = a.clone();
        assert!(admitted(&mut a).await);
        assert!(admitted(&mut b).await);
        assert!(!admitted(&mut c).await);
        assert!(!admitted(&mut a).await);
    }

    #[tokio::test]
    async fn a_clock_set_on_the_layer_drives_the_limit() {
        let now = Arc::new(AtomicU64::new(0));
        let reading = Arc::clone(&now);
        let clock = Clock::from_fn(move || Duration::from_secs(reading.load(Ordering::Relaxed)));
        let layer = QuotaLayer::new(Quota::aligned(1, Duration::from_secs(10)))
            .with_clock(clock)
            .with_name("ten");
        let mut service = layer.layer(ok());
        now.store(25, Ordering::Relaxed);
        assert!(admitted(&mut service).await);
        let err = service
            .ready()
            .await
            .unwrap()
            .call(Request::new(()))
            .await
            .unwrap_err();
        let limited = err.downcast_ref::<Limited>().unwrap();
        // Aligned on multiples of 10 s: the period open at 25 s ends at 30 s.
        assert_eq!(limited.retry_after(), Duration::from_secs(5));
        assert_eq!(limited.policy(), "ten");
        now.store(30, Ordering::Relaxed);
        assert!(admitted(&mut service).await);
    }

    #[tokio::test]
    async fn a_builder_makes_new_budgets_and_leaves_earlier_clones_theirs() {
        let layer = QuotaLayer::new(Quota::sliding(1, Duration::from_secs(60)));
        let mut before = layer.clone().layer(ok());
        assert!(admitted(&mut before).await);
        let mut after = layer.with_name("renamed").layer(ok());
        assert!(admitted(&mut after).await);
        assert!(!admitted(&mut after).await);
        assert!(!admitted(&mut before).await);
    }

    #[tokio::test]
    async fn a_keyed_layer_given_a_clock_starts_with_no_keys() {
        let key = HeaderName::from_static("x-key");
        let layer = QuotaLayer::by_header(Quota::sliding(1, Duration::from_secs(60)), 10, key);
        let alice = || Request::get("/").header("x-key", "alice").body(()).unwrap();
        let earlier = layer.clone();
        let mut before = earlier.layer(ok());
        assert!(before.ready().await.unwrap().call(alice()).await.is_ok());
        let later = layer.with_clock(Clock::monotonic());
        assert_eq!((earlier.keys(), later.keys()), (1, 0));
        let mut after = later.layer(ok());
        assert!(after.ready().await.unwrap().call(alice()).await.is_ok());
        let refused = after.ready().await.unwrap().call(alice()).await;
        assert!(refused.unwrap_err().is::<Limited>());
        assert_eq!((earlier.keys(), later.keys()), (1, 1));
    }

    #[test]
    fn a_layer_says_what_it_is() {
        let layer = QuotaLayer::by_header(
            Quota::sliding(5, Duration::from_secs(1)),
            100,
            HeaderName::from_static("x-key"),
        );
        let debug = format!("{layer:?}");
        assert!(debug.contains("max_keys: Some(100)"), "{debug}");
        assert_eq!(layer.limit(), Quota::sliding(5, Duration::from_secs(1)));
        assert_eq!(layer.keys(), 0);
    }
}
