//! [`QuotaService`]: take from the budget, or refuse with [`Limited`].

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use tower_service::Service;

use super::budget::Terms;
use super::global::Global;
use super::http::Stamp;
use super::keyed::Keyed;
use super::{KindMismatch, Quota, QuotaFuture};
use crate::meter::Meter;
use crate::{Limited, Mode};
use ironward_tokio::Knobs;
use std::time::Duration;

/// A service that admits requests within its rate limit and refuses the rest at once with
/// [`Limited`](super::Limited), made by [`QuotaLayer`](super::QuotaLayer).
///
/// `poll_ready` is the inner service's; `call` reads the clock once, takes one request from
/// the budget (the request's key's, for a keyed layer: a compare-and-swap for a global token
/// bucket, shared without a lock, a std `Mutex` held for that alone otherwise),
/// and either calls the inner service or resolves to the boxed [`Limited`](super::Limited)
/// without calling it. It serves `http::Request`s with any body (axum, hyper and tonic
/// services alike), as a keyed limit reads its key from the request's head, and answers with
/// the inner service's `http::Response`, to which it appends the request's
/// [`Headroom`](super::Headroom) as the `RateLimit` fields when the layer was made
/// [`with_headers(true)`](super::QuotaLayer::with_headers).
///
/// `Clone` shares the budget: clones, one per connection in a server, hold one limit
/// together, and a [`QuotaTuner`](super::QuotaTuner) retunes it for all of them.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use http::{Request, Response};
/// use ironward_tower::{Limited, Quota, QuotaLayer, QuotaService};
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// // Two a second, with room for a burst of two.
/// let layer = QuotaLayer::new(Quota::bucket(2.0, 2.0)).with_headers(true);
/// let echo = service_fn(|request: Request<u32>| async move {
///     Ok::<_, Limited>(Response::new(request.into_body()))
/// });
/// let mut service: QuotaService<_> = layer.layer(echo);
/// let mut clone = service.clone();
///
/// let first = service.ready().await.unwrap().call(Request::new(1)).await.unwrap();
/// assert_eq!(*first.body(), 1);
/// assert_eq!(first.headers()["ratelimit"], r#""default";r=1;t=1"#);
/// let second = clone.ready().await.unwrap().call(Request::new(2)).await.unwrap();
/// assert_eq!(*second.body(), 2);
/// let err = clone.ready().await.unwrap().call(Request::new(3)).await.unwrap_err();
/// assert_eq!(err.downcast_ref::<Limited>().unwrap().retry_after(), Duration::from_millis(500));
///
/// tokio::time::advance(Duration::from_millis(500)).await;
/// let fourth = service.ready().await.unwrap().call(Request::new(4)).await.unwrap();
/// assert_eq!(*fourth.body(), 4);
/// assert_eq!(service.keys(), 0);
/// # }
/// ```
#[derive(Clone)]
pub struct QuotaService<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S> QuotaService<S> {
    pub(super) fn new(inner: S, shared: Arc<Shared>) -> Self {
        Self { inner, shared }
    }

    /// How many keys the service's layer holds now: 0 for a layer without keys.
    pub fn keys(&self) -> usize {
        self.shared.keys()
    }
}

impl<S, B, ResB> Service<Request<B>> for QuotaService<S>
where
    S: Service<Request<B>, Response = Response<ResB>>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = S::Response;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = QuotaFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let now = self.shared.settings.knobs.clock.now();
        match self.shared.take(&mut request, now) {
            Ok(stamp) => QuotaFuture::admitted(self.inner.call(request), stamp),
            Err(limited) => QuotaFuture::limited(limited),
        }
    }
}

impl Shared {
    /// Takes `request`'s share of its budget at `now`, counting and logging a refusal: the
    /// fields to stamp on its response, or the refusal to answer it with. In shadow mode a
    /// refusal is only reported and put in the request's extensions, and the request
    /// admitted. The request stays where it is: moving an `http::Request` in and out of a
    /// helper copied it twice, a third of the layer's own cost.
    #[inline]
    pub(crate) fn take<B>(
        &self,
        request: &mut Request<B>,
        now: Duration,
    ) -> Result<Option<Stamp>, Limited> {
        let taken = match &self.table {
            Table::Global(budget) => budget.take(now, self.headers, self.policy),
            Table::Keyed(table) => {
                crate::head::read(request, |head| table.take(head, now, self.headers))
            }
        };
        match taken {
            Ok(stamp) => {
                self.meter.admitted();
                Ok(stamp)
            }
            Err(limited) => {
                self.meter.refused(0);
                tracing::debug!(
                    name = limited.policy(),
                    outcome = self.meter.refusal(),
                    quota = limited.quota(),
                    window = ?limited.window(),
                    retry_after = ?limited.retry_after(),
                    "rate limit refused a request"
                );
                match self.meter.mode() {
                    Mode::Enforce => Err(limited),
                    // Nothing was taken; the handler can read what would have refused it.
                    Mode::Shadow => {
                        request.extensions_mut().insert(limited);
                        Ok(None)
                    }
                }
            }
        }
    }

    /// The clock the budgets read.
    #[cfg(feature = "axum")]
    pub(crate) fn clock(&self) -> &crate::Clock {
        &self.settings.knobs.clock
    }
}

impl<S: fmt::Debug> fmt::Debug for QuotaService<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuotaService")
            .field("inner", &self.inner)
            .field("shared", &self.shared)
            .finish()
    }
}

/// What every service of one [`QuotaLayer`](super::QuotaLayer) shares.
pub(crate) struct Shared {
    settings: Settings,
    table: Table,
    meter: Meter,
    /// Whether admitted responses carry the `RateLimit` fields: as the knobs say, and never
    /// in shadow mode, whose policy is not in force.
    headers: bool,
    /// The policy's name as a refusal gives it (the knobs' name, if it can be sent), which a
    /// retune keeps.
    policy: &'static str,
}

/// What a layer's builders set, which a remade layer carries over: the common knobs (the
/// name being the policy's, which names the layer's metrics too; the clock every budget
/// reads), and whether admitted responses carry the `RateLimit` fields (by default not).
#[derive(Clone, Default)]
pub(super) struct Settings {
    pub(super) knobs: Knobs,
    pub(super) headers: bool,
}

/// The one reason a rate limit refuses for, as the `reason` label gives it.
const REASONS: &[&str] = &["limited"];

/// Where the budgets are, each with the terms it runs under.
#[expect(
    clippy::large_enum_variant,
    reason = "a layer has one, inside its `Arc`; boxing the budget would add a load to every request"
)]
enum Table {
    /// One budget for every request.
    Global(Global),
    /// One budget per key.
    Keyed(Arc<dyn Keyed>),
}

impl Shared {
    /// The state of a layer of `limit` set up by `knobs`: one budget, or the table `keyed`,
    /// which was made under the same limit and policy name.
    pub(super) fn new(limit: Quota, settings: Settings, keyed: Option<Arc<dyn Keyed>>) -> Self {
        let knobs = &settings.knobs;
        let terms = Terms::new(limit, knobs.name);
        let policy = terms.policy();
        // The policy's name names the layer's metrics too.
        let meter = Meter::new("rate_limit", policy, REASONS, knobs.mode);
        let table = match keyed {
            Some(keyed) => Table::Keyed(keyed),
            None => Table::Global(Global::new(terms, knobs.clock.now())),
        };
        Self {
            headers: settings.headers && !knobs.mode.is_shadow(),
            policy,
            settings,
            table,
            meter,
        }
    }

    /// What the layer's builders set: its policy's name, clock, mode and headers.
    pub(super) fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The same state made anew under the limit in force with `knobs`, with budgets as good
    /// as new (a fresh limiter, or an empty table of keys with the same bound and extractor).
    pub(super) fn remade(&self, settings: Settings) -> Self {
        let limit = self.terms().limit;
        let keyed = match &self.table {
            Table::Global(_) => None,
            Table::Keyed(table) => Some(table.fresh(Terms::new(limit, settings.knobs.name))),
        };
        Self::new(limit, settings, keyed)
    }

    /// Registers the limit's metrics, if they are not yet: when its layer makes a service,
    /// its policy name final.
    pub(crate) fn register(&self) {
        self.meter.register();
    }

    /// Whether the limit enforces its refusals or only reports them.
    pub(super) fn mode(&self) -> Mode {
        self.meter.mode()
    }

    /// The terms in force: the limit the layer was made with, or the last it was retuned to,
    /// under the policy's name.
    pub(super) fn terms(&self) -> Terms {
        match &self.table {
            Table::Global(budget) => budget.terms(),
            Table::Keyed(table) => table.terms(),
        }
    }

    /// Moves every budget, and the budgets keys get from now on, to `limit` now, each keeping
    /// its history; or refuses a limit of another kind, changing nothing.
    pub(super) fn retune(&self, limit: Quota) -> Result<(), KindMismatch> {
        let now = self.settings.knobs.clock.now();
        let was = match &self.table {
            Table::Global(budget) => budget.retune(limit, now)?,
            Table::Keyed(table) => table.retune(limit, now)?,
        };
        tracing::debug!(from = ?was, to = ?limit, "rate limit retuned");
        Ok(())
    }

    pub(super) fn keys(&self) -> usize {
        match &self.table {
            Table::Global(_) => 0,
            Table::Keyed(table) => table.len(),
        }
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys = match &self.table {
            Table::Global(_) => None,
            Table::Keyed(table) => Some(table.max()),
        };
        let terms = self.terms();
        f.debug_struct("Shared")
            .field("policy", &terms.policy())
            .field("limit", &terms.limit)
            .field("max_keys", &keys)
            .field("clock", &self.settings.knobs.clock)
            .field("headers", &self.settings.headers)
            .field("mode", &self.mode())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use http::{Request, Response};
    use tower::{Layer, Service, ServiceExt, service_fn};

    use super::*;
    use crate::{Limited, QuotaLayer};

    #[tokio::test]
    async fn a_refused_request_never_reaches_the_inner_service() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let inner = service_fn(move |_: Request<()>| {
            counted.fetch_add(1, Ordering::Relaxed);
            async { Ok::<_, Limited>(Response::new(())) }
        });
        let mut service = QuotaLayer::new(Quota::sliding(2, Duration::from_secs(1))).layer(inner);
        for _ in 0..5 {
            let _ = service.ready().await.unwrap().call(Request::new(())).await;
        }
        assert_eq!(calls.load(Ordering::Relaxed), 2);
    }

    #[tokio::test]
    async fn an_inner_error_passes_through_boxed() {
        let failing =
            service_fn(|_: Request<()>| async { Err::<Response<()>, _>(std::fmt::Error) });
        let mut service = QuotaLayer::new(Quota::bucket(1.0, 1.0)).layer(failing);
        let err = service
            .ready()
            .await
            .unwrap()
            .call(Request::new(()))
            .await
            .unwrap_err();
        assert!(err.is::<std::fmt::Error>());
    }

    #[tokio::test]
    async fn a_refusal_names_the_policy_and_its_quota() {
        let layer = QuotaLayer::new(Quota::sliding(1, Duration::from_secs(30))).with_name("slow");
        let mut service = layer.layer(service_fn(|_: Request<()>| async {
            Ok::<_, Limited>(Response::new(()))
        }));
        service
            .ready()
            .await
            .unwrap()
            .call(Request::new(()))
            .await
            .unwrap();
        let err = service
            .ready()
            .await
            .unwrap()
            .call(Request::new(()))
            .await
            .unwrap_err();
        let limited = *err.downcast_ref::<Limited>().unwrap();
        assert_eq!(limited.policy(), "slow");
        assert_eq!(
            (limited.quota(), limited.window()),
            (1, Some(Duration::from_secs(30)))
        );
        assert!(limited.retry_after() > Duration::from_secs(29));
        let debug = format!("{service:?}");
        assert!(debug.contains("\"slow\""), "{debug}");
    }
}
