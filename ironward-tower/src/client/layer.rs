//! [`ClientLayer`]: the builder of the client stack, and what its services share.

use std::fmt;
use std::sync::Arc;

use ironward::Criticality;
use ironward_tokio::{SharedCircuitBreaker, SharedSreBreaker};
use tower_layer::Layer;

use super::service::ClientService;
use crate::deadline::Budget;
use crate::meter::Meter;
use crate::retry::{Config, FinalErrors};
use crate::{
    BreakerLayer, Clock, DeadlineLayer, HttpFailures, HttpRetryLayer, LimiterLayer, Overloads,
};

/// One client stack: a deadline, retries, a circuit breaker and an adaptive concurrency
/// limit, each optional, in [one fixed order](super#the-order), as one layer.
///
/// Each builder takes the layer that piece is on its own, built as it would be alone
/// (`HttpRetryLayer::new(..).with_attempt_timeout(..)`, `BreakerLayer::new(CLASSIC)`, ...),
/// and shares that layer's state: a [`tuner`](BreakerLayer::tuner) taken from it retunes the
/// stack, and its metrics are the ones it would report alone. The stack decides nothing of
/// its own: each piece decides with its layer's code, the retry, the breaker and the limiter
/// on one reading of the clock before each attempt and one as it ends ([`super`] says which
/// clock).
///
/// `F` is the retry's error classifier, `BC` and `BB` the breaker's classifier and family,
/// `LC` and `LQ` the limiter's grade and criticality source: the types of the layers given,
/// their defaults when none is. The stack's type never says which pieces it holds, so every
/// choice of pieces is one `ClientLayer` type, and a piece added from a configuration file
/// changes no type.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::{ClientLayer, DeadlineLayer, HttpRetryLayer};
///
/// let stack = ClientLayer::new()
///     .deadline(DeadlineLayer::new(Duration::from_secs(2)))
///     .retry(HttpRetryLayer::default().with_attempt_timeout(Duration::from_millis(500)));
/// assert_eq!(format!("{stack:?}"), "ClientLayer { deadline: true, retry: true, breaker: false, limiter: false }");
/// ```
#[must_use = "a stack does nothing until it layers a service"]
pub struct ClientLayer<
    F = FinalErrors,
    BC = HttpFailures,
    BB: SharedCircuitBreaker = SharedSreBreaker,
    LC = Overloads,
    LQ = Criticality,
> {
    pub(super) deadline: Option<DeadlineLayer>,
    pub(super) retry: Option<HttpRetryLayer<F>>,
    pub(super) breaker: Option<BreakerLayer<BC, BB>>,
    pub(super) limiter: Option<LimiterLayer<LC, LQ>>,
}

impl ClientLayer {
    /// A stack with no pieces, which passes every call through: add them with
    /// [`deadline`](Self::deadline), [`retry`](Self::retry), [`breaker`](Self::breaker) and
    /// [`limiter`](Self::limiter), in any order.
    pub fn new() -> Self {
        Self {
            deadline: None,
            retry: None,
            breaker: None,
            limiter: None,
        }
    }
}

impl Default for ClientLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<F, BC, BB: SharedCircuitBreaker, LC, LQ> ClientLayer<F, BC, BB, LC, LQ> {
    /// Holds the whole call, retries and waits included, to `layer`'s budget
    /// ([`DeadlineLayer`]): the outermost piece.
    pub fn deadline(mut self, layer: DeadlineLayer) -> Self {
        self.deadline = Some(layer);
        self
    }

    /// Retries failed attempts as `layer` does ([`HttpRetryLayer`]: RFC 9110's rules, each
    /// attempt under its timeout, the call under the retry's own budget and its optional
    /// retry budget), inside the deadline.
    pub fn retry<G>(self, layer: HttpRetryLayer<G>) -> ClientLayer<G, BC, BB, LC, LQ> {
        ClientLayer {
            deadline: self.deadline,
            retry: Some(layer),
            breaker: self.breaker,
            limiter: self.limiter,
        }
    }

    /// Asks `layer`'s circuit breaker ([`BreakerLayer`], SRE or classic) before each attempt,
    /// and tells it how each attempt ended, inside the retry.
    pub fn breaker<C, B: SharedCircuitBreaker>(
        self,
        layer: BreakerLayer<C, B>,
    ) -> ClientLayer<F, C, B, LC, LQ> {
        ClientLayer {
            deadline: self.deadline,
            retry: self.retry,
            breaker: Some(layer),
            limiter: self.limiter,
        }
    }

    /// Holds each attempt to `layer`'s adaptive concurrency limit ([`LimiterLayer`], its
    /// queue included): the innermost piece, around the inner service alone. A call its
    /// [bypass](LimiterLayer::with_bypass) matches (read once, from the request as the call
    /// gave it) passes the limit uncounted on every attempt; the retry and the breaker still
    /// decide it.
    pub fn limiter<C, Q>(self, layer: LimiterLayer<C, Q>) -> ClientLayer<F, BC, BB, C, Q> {
        ClientLayer {
            deadline: self.deadline,
            retry: self.retry,
            breaker: self.breaker,
            limiter: Some(layer),
        }
    }
}

impl<F, BC, BB: SharedCircuitBreaker, LC, LQ> ClientLayer<F, BC, BB, LC, LQ> {
    /// The same stack with no breaker, typed for the family `B`: what a configuration
    /// without one builds, so that adding one later keeps the stack's type.
    #[cfg(feature = "config")]
    pub(crate) fn no_breaker<C, B: SharedCircuitBreaker>(self) -> ClientLayer<F, C, B, LC, LQ> {
        ClientLayer {
            deadline: self.deadline,
            retry: self.retry,
            breaker: None,
            limiter: self.limiter,
        }
    }
}

impl<F: Clone, BC, BB: SharedCircuitBreaker, LC, LQ: Clone> Clone
    for ClientLayer<F, BC, BB, LC, LQ>
{
    fn clone(&self) -> Self {
        Self {
            deadline: self.deadline.clone(),
            retry: self.retry.clone(),
            breaker: self.breaker.clone(),
            limiter: self.limiter.clone(),
        }
    }
}

impl<F, BC, BB: SharedCircuitBreaker, LC, LQ> fmt::Debug for ClientLayer<F, BC, BB, LC, LQ> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientLayer")
            .field("deadline", &self.deadline.is_some())
            .field("retry", &self.retry.is_some())
            .field("breaker", &self.breaker.is_some())
            .field("limiter", &self.limiter.is_some())
            .finish()
    }
}

impl<S, F: Clone, BC, BB: SharedCircuitBreaker, LC, LQ: Clone> Layer<S>
    for ClientLayer<F, BC, BB, LC, LQ>
{
    type Service = ClientService<S, F, BC, BB, LC, LQ>;

    /// A service sharing the pieces' state. As each layer does alone, this registers each
    /// piece's metrics, under the names that are now final.
    fn layer(&self, inner: S) -> Self::Service {
        let retry = self.retry.as_ref().map(|layer| {
            layer.config.meter.register();
            layer.config.clone()
        });
        let breaker = self.breaker.as_ref().map(|layer| {
            layer.shared.register();
            Arc::clone(&layer.shared)
        });
        let limiter = self.limiter.as_ref().map(|layer| {
            layer.shared.register();
            (Arc::clone(&layer.shared), layer.criticality.clone())
        });
        // The outermost piece that reads a clock lends it to the others.
        let clock = retry
            .as_ref()
            .map(|config| &config.knobs.clock)
            .or(breaker.as_ref().map(|shared| shared.clock()))
            .or(limiter.as_ref().map(|(shared, _)| shared.limiter.clock()))
            .cloned();
        let pieces = Pieces {
            clock,
            deadline: self.deadline.as_ref().map(DeadlineLayer::parts),
            retry,
            breaker,
            limiter,
        };
        ClientService::new(inner, Arc::new(pieces))
    }
}

/// A limiter's state and where its requests' classes are read.
pub(super) type Limiting<LC, LQ> = (Arc<crate::limiter::Shared<LC>>, LQ);

/// What every service of one stack shares: each piece's state, taken from its layer.
pub(super) struct Pieces<F, BC, BB: SharedCircuitBreaker, LC, LQ> {
    /// The clock read once before each attempt and once as it ends, for every piece: the
    /// outermost piece's that reads one.
    pub(super) clock: Option<Clock>,
    pub(super) deadline: Option<(Budget, bool, Arc<Meter>)>,
    pub(super) retry: Option<Config<F>>,
    pub(super) breaker: Option<Arc<crate::breaker::Shared<BC, BB>>>,
    pub(super) limiter: Option<Limiting<LC, LQ>>,
}

impl<F, BC, BB: SharedCircuitBreaker, LC, LQ> Pieces<F, BC, BB, LC, LQ> {
    /// The shared reading now; zero when no piece reads a clock (and none asks).
    pub(super) fn now(&self) -> std::time::Duration {
        self.clock.as_ref().map(Clock::now).unwrap_or_default()
    }
}
