//! [`LimiterTuner`]: changes the policy of one layer's limiter, for every service at once.

use std::fmt;
use std::sync::Arc;

use ironward::Adaptive;
use ironward_tokio::Queue;

/// What a tuner asks of the state a layer's services share, whatever their grade.
pub(super) trait Tune: Send + Sync {
    /// Moves the limiter to `policy` now on the layer's clock, keeping its limit and the
    /// calls in flight.
    fn retune(&self, policy: Adaptive);

    /// The policy the limiter runs.
    fn policy(&self) -> Adaptive;

    /// Puts `queue` in front of the limit for calls from now on; returns the one replaced.
    fn retune_queue(&self, queue: Option<Queue>) -> Option<Queue>;

    /// The queue in front of the limit.
    fn queue(&self) -> Option<Queue>;
}

/// Changes the policy of a [`LimiterLayer`](crate::LimiterLayer)'s limiter in place, for a
/// configuration reload: every service the layer made, every clone of those and of the layer
/// see the new policy on their next request.
///
/// Made by [`LimiterLayer::tuner`](crate::LimiterLayer::tuner). It holds the layer's shared
/// state (one `Arc`), so it is cheap to clone, `Send` and `Sync`, and keeps no copy of the
/// policy: [`policy`](Self::policy) reads the one in force. [`retune`](Self::retune) calls
/// [`ironward_tokio::SharedLimiter::retune`] at the layer's clock's `now`, under the lock the
/// requests take, so a request is decided wholly under the old policy or wholly under the
/// new one. The limiter keeps the requests in flight (their permits settle as usual), the
/// limit it has reached (held to the new algorithm's bounds), its open sampling window and
/// its floor; queued requests the new policy has room for are let in at once. Each retune is
/// a `tracing` event at the debug level, with the policy it replaced (`from`) and the new
/// one (`to`).
///
/// The layer's builders make a new limiter; a tuner made before them keeps tuning the old
/// one, and the services made from it.
///
/// # Examples
///
/// ```
/// use ironward::limit::{AIMD, Aimd, Algorithm};
/// use ironward::{ADAPTIVE, Adaptive};
/// use ironward_tower::{LimiterLayer, LimiterRefused};
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let of = |limit| Adaptive {
///     algorithm: Algorithm::Aimd(Aimd { initial: limit, min: limit, ..AIMD }),
///     ..ADAPTIVE
/// };
/// let hangs = service_fn(|_request: ()| {
///     std::future::pending::<Result<http::Response<()>, &'static str>>()
/// });
/// let layer = LimiterLayer::new(of(2));
/// let mut server = layer.layer(hangs);
/// let tuner = layer.tuner();
/// let held = [server.call(()), server.call(())];
/// assert!(server.call(()).await.unwrap_err().is::<LimiterRefused>());
///
/// // A limit of at least four from now on: the two in flight stay, and two more fit.
/// tuner.retune(of(4));
/// assert_eq!((layer.limit(), layer.flying()), (4, 2));
/// let more = [server.call(()), server.call(())];
/// assert_eq!(layer.flying(), 4);
/// # drop((held, more));
/// # }
/// ```
#[derive(Clone)]
pub struct LimiterTuner {
    shared: Arc<dyn Tune>,
}

impl LimiterTuner {
    pub(super) fn new(shared: Arc<dyn Tune>) -> Self {
        Self { shared }
    }

    /// Moves the limiter to `policy` now, keeping the requests in flight and the limit it
    /// has reached ([`ironward::Limiter::retune`]): the next request on any of the layer's
    /// services is decided by `policy`.
    pub fn retune(&self, policy: Adaptive) {
        self.shared.retune(policy);
    }

    /// The policy the limiter runs now, as it was last given.
    pub fn policy(&self) -> Adaptive {
        self.shared.policy()
    }

    /// Puts `queue` in front of the limit for the requests that arrive from now on (`None`:
    /// a request that finds no room is refused at once), returning the queue it replaced
    /// ([`ironward_tokio::SharedLimiter::retune_queue`]). Requests already waiting keep
    /// their place and the wait they were promised. A `tracing` debug event says what
    /// changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::ADAPTIVE;
    /// use ironward_tokio::QUEUE;
    /// use ironward_tower::LimiterLayer;
    ///
    /// let layer = LimiterLayer::new(ADAPTIVE);
    /// let tuner = layer.tuner();
    /// assert_eq!(tuner.retune_queue(Some(QUEUE)), None);
    /// assert_eq!(tuner.queue(), Some(QUEUE));
    /// assert_eq!(tuner.retune_queue(None), Some(QUEUE));
    /// ```
    pub fn retune_queue(&self, queue: Option<Queue>) -> Option<Queue> {
        self.shared.retune_queue(queue)
    }

    /// The queue in front of the limit now, if any.
    pub fn queue(&self) -> Option<Queue> {
        self.shared.queue()
    }
}

impl fmt::Debug for LimiterTuner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LimiterTuner")
            .field("policy", &self.policy())
            .field("queue", &self.queue())
            .finish()
    }
}
