//! [`Tuner`]: changes the policy of one layer's shared state, for every service at once.

use std::fmt;
use std::sync::Arc;

/// What a tuner asks of the state a layer's services share, whatever their other parameters
/// (the classifier, the breaker family).
pub(crate) trait Tune<P>: Send + Sync {
    /// Runs `policy` from now on, on the layer's clock, keeping the state; the policy it
    /// replaced, read in the same turn.
    fn retune(&self, policy: P) -> P;

    /// The policy in force.
    fn policy(&self) -> P;
}

/// Changes the policy of a layer's shared state in place, for a configuration reload: every
/// service the layer made, every clone of those and of the layer see the new policy on their
/// next call.
///
/// Made by the layer's `tuner`: [`BreakerLayer::tuner`](crate::BreakerLayer::tuner) (`P` is
/// the breaker's policy, [`Sre`](ironward::Sre) by default),
/// [`ShedLayer::tuner`](crate::ShedLayer::tuner) ([`Shed`](ironward::Shed)),
/// [`GateLayer::tuner`](crate::GateLayer::tuner) (the limit, `u32`),
/// [`LimiterLayer::tuner`](crate::LimiterLayer::tuner) ([`Adaptive`](ironward::Adaptive)),
/// [`LimiterLayer::queue_tuner`](crate::LimiterLayer::queue_tuner) (its
/// [`Queue`](crate::Queue), `None` for none),
/// [`HttpRetryLayer::tuner`](crate::HttpRetryLayer::tuner) (its
/// [`Settings`](ironward::http_retry::Settings)) and
/// [`DeadlineLayer::tuner`](crate::DeadlineLayer::tuner) (the budget of a
/// [`tuned`](crate::DeadlineLayer::tuned) layer, a `Duration`). The rate limit has a tuner of its own,
/// [`QuotaTuner`](crate::QuotaTuner), because its retune can be refused: budgets of
/// one kind cannot carry their state into another.
///
/// It holds the layer's shared state (one `Arc`), so it is cheap to clone, `Send` and `Sync`,
/// and keeps no copy of the policy: [`policy`](Self::policy) reads the one in force.
/// [`retune`](Self::retune) calls the core's `retune` at the layer's clock's `now`, in the
/// turn the calls take, so a call is decided wholly under the old policy or wholly under the
/// new one, and the state (a breaker's window, a shedder's averages, the calls inside a gate
/// or a limiter) is kept. Each retune is a `tracing` event at the debug level with the policy
/// it replaced (`from`) and the new one (`to`).
///
/// The layer's builders (`with_clock` and the rest) make new state under the policy in
/// force; a tuner made before them keeps tuning the old one, and the services made from it.
///
/// # Examples
///
/// ```
/// use ironward::{SRE, Sre};
/// use ironward_tower::{AnyError, BreakerLayer, BreakerRefused, Dice};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// // A backend that answers `true` and fails `false`, and a draw that is always refused
/// // while the ratio is above zero.
/// let backend = service_fn(|ok: bool| async move { if ok { Ok(()) } else { Err("down") } });
/// let layer = BreakerLayer::new(SRE).with_classifier(AnyError).with_dice(Dice::from_fn(|| 0.0));
/// let client = layer.layer(backend);
/// let tuner = layer.tuner();
///
/// // 60 calls pass, then the backend fails: with k = 1.5 the breaker refuses once the
/// // calls exceed 5 + 1.5 · 60.
/// for ok in [true; 60].into_iter().chain([false; 40]) {
///     let _ = client.clone().oneshot(ok).await;
/// }
/// assert!(layer.ratio() > 0.0);
/// assert!(client.clone().oneshot(true).await.unwrap_err().is::<BreakerRefused>());
///
/// // With k = 2 the same 60 accepts cover every call in the window: the next one goes through.
/// let was = tuner.retune(Sre { k: 2.0, ..SRE });
/// assert_eq!((was.k, tuner.policy().k), (1.5, 2.0));
/// assert_eq!(layer.ratio(), 0.0);
/// assert!(client.clone().oneshot(true).await.is_ok());
/// # }
/// ```
pub struct Tuner<P> {
    shared: Arc<dyn Tune<P>>,
}

impl<P> Tuner<P> {
    pub(crate) fn new(shared: Arc<dyn Tune<P>>) -> Self {
        Self { shared }
    }

    /// Runs `policy` on every service of the layer from their next call, keeping their
    /// state; the policy it replaced.
    pub fn retune(&self, policy: P) -> P {
        self.shared.retune(policy)
    }

    /// The policy in force, as it was last given.
    #[must_use]
    pub fn policy(&self) -> P {
        self.shared.policy()
    }
}

impl<P> Clone for Tuner<P> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<P: fmt::Debug> fmt::Debug for Tuner<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tuner")
            .field("policy", &self.policy())
            .finish()
    }
}
