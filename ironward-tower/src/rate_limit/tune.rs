//! [`QuotaTuner`]: changes the limit of one layer's budgets, for every service at once.

use std::fmt;
use std::sync::Arc;

use super::service::Shared;
use super::{KindMismatch, Quota};

/// Changes the limit of a [`QuotaLayer`](super::QuotaLayer)'s budgets in place, for a
/// configuration reload: every service the layer made, every clone of those and of the layer
/// see the new limit on their next request.
///
/// Made by [`QuotaLayer::tuner`](super::QuotaLayer::tuner). It holds the layer's
/// shared state (one `Arc`), so it is cheap to clone, `Send` and `Sync`, and keeps no copy of
/// the limit: [`limit`](Self::limit) reads the one in force, as
/// [`QuotaLayer::limit`](super::QuotaLayer::limit) does. [`retune`](Self::retune)
/// calls the core's `retune` (`ironward::Bucket::retune`, `Sliding::retune`,
/// `Period::retune`) at the layer's clock's `now`, so each budget keeps its history: a
/// bucket its tokens (capped at the new burst), a window the newest stamps still inside it
/// (as many as the new quota), a period the one open and its count. A lowered limit admits
/// no more than the new quota over the window, counting what was admitted before it; a
/// raised one admits what the new limit allows beyond what the budget holds. Refusals report
/// the new quota and window from the next request on.
///
/// - **A global layer** has one budget, retuned under the lock the requests take.
/// - **A keyed layer** retunes every key it holds, the budget of requests without a key, and
///   the limit that keys arriving from then on get, shard by shard under each shard's lock:
///   requests for the other shards go on meanwhile, and every key is decided wholly under
///   the old limit or wholly under the new one. It is one pass over the keys, so a table of
///   many keys under a sliding window (whose stamps a lower quota trims) takes a moment;
///   retunes take turns, so two reloads at once end under one limit. A retune counts as a
///   use of every key, so a key idle since is forgotten one new [`Quota::idle`] after it.
/// - **A limit of another kind** than the one in force (a bucket retuned into a sliding
///   window, a fixed period into an aligned one) is refused with [`KindMismatch`], and
///   nothing changes: one kind's history cannot be carried into another's, and starting
///   every budget afresh would hand every client its whole allowance again. Make a new layer
///   for a new kind.
///
/// Each retune is a `tracing` event at the debug level, with the limit it replaced (`from`)
/// and the new one (`to`). The layer's builders ([`with_clock`](super::QuotaLayer::with_clock),
/// [`with_name`](super::QuotaLayer::with_name)) make new budgets under the limit in force; a
/// tuner made before them keeps tuning the old ones, and the services made from them.
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
/// const MINUTE: Duration = Duration::from_secs(60);
/// let layer = QuotaLayer::new(Quota::sliding(5, MINUTE));
/// let mut service = layer.layer(service_fn(|_: Request<()>| async { Ok::<_, Limited>(Response::new(())) }));
/// let tuner = layer.tuner();
/// for _ in 0..3 {
///     assert!(service.ready().await.unwrap().call(Request::new(())).await.is_ok());
/// }
///
/// // Two a minute from now on: the three admitted in this minute already fill it.
/// tuner.retune(Quota::sliding(2, MINUTE)).unwrap();
/// assert_eq!(layer.limit(), Quota::sliding(2, MINUTE));
/// let refused = service.ready().await.unwrap().call(Request::new(())).await.unwrap_err();
/// assert_eq!(refused.downcast_ref::<Limited>().unwrap().quota(), 2);
///
/// // Ten a minute: the window kept the newest two stamps it held, so eight more.
/// tuner.retune(Quota::sliding(10, MINUTE)).unwrap();
/// for _ in 0..8 {
///     assert!(service.ready().await.unwrap().call(Request::new(())).await.is_ok());
/// }
/// assert!(service.ready().await.unwrap().call(Request::new(())).await.is_err());
/// # }
/// ```
#[derive(Clone)]
pub struct QuotaTuner {
    shared: Arc<Shared>,
}

impl QuotaTuner {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// Moves every budget of the layer, and the budgets of keys to come, to `limit` now,
    /// each keeping its history; the next request on any of the layer's services is decided
    /// by `limit`.
    ///
    /// # Errors
    ///
    /// [`KindMismatch`] when `limit` is of another kind than the limit in force (another
    /// core limiter, or a period aligned where the one in force is not, or the reverse);
    /// nothing is changed then.
    pub fn retune(&self, limit: Quota) -> Result<(), KindMismatch> {
        self.shared.retune(limit)
    }

    /// The limit in force: the one the layer was made with, or the last one retuned to.
    pub fn limit(&self) -> Quota {
        self.shared.terms().limit
    }
}

impl fmt::Debug for QuotaTuner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuotaTuner")
            .field("limit", &self.limit())
            .finish()
    }
}
