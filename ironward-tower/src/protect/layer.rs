//! [`ProtectLayer`]: the builder of the server stack, and what its services share.

use std::fmt;
use std::sync::Arc;

use ironward::Criticality;
use tower_layer::Layer;

use super::service::ProtectService;
use crate::deadline::Budget;
use crate::meter::Meter;
use crate::{
    Clock, DeadlineLayer, GateLayer, LimiterLayer, Overloads, QuotaLayer, ShedFailures, ShedLayer,
};

/// One server stack for axum: a shedder, a rate limit, a concurrency limit (the adaptive
/// limiter or the gate) and a deadline, each optional, in [one fixed order](super#the-order),
/// as one layer whose service never fails.
///
/// Each builder takes the layer that piece is on its own, built and named as it would be
/// alone (`ShedLayer::new(..).with_criticality(..)`, `QuotaLayer::by_client(..)`, ...), and
/// shares that layer's state: a [`tuner`](ShedLayer::tuner) taken from it retunes the stack,
/// and its metrics are the ones it would report alone. The stack decides nothing of its own:
/// each piece decides with its layer's code, the shedder, the rate limit and the limiter on
/// one reading of the clock ([`super`] says which).
///
/// `SC` and `SQ` are the shedder's classifier and criticality source, `LC` and `LQ` the
/// limiter's: the types of the layers given, their defaults when none is.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use axum::{Router, routing::get};
/// use ironward_tower::{DeadlineLayer, GateLayer, ProtectLayer};
///
/// let stack = ProtectLayer::new()
///     .gate(GateLayer::new(256))
///     .deadline(DeadlineLayer::new(Duration::from_secs(2)));
/// let app: Router = Router::new().route("/", get(|| async { "hello" })).layer(stack);
/// # let _ = app;
/// ```
#[must_use = "a stack does nothing until it layers a service"]
pub struct ProtectLayer<SC = ShedFailures, SQ = Criticality, LC = Overloads, LQ = Criticality> {
    shed: Option<ShedLayer<SC, SQ>>,
    quota: Option<QuotaLayer>,
    concurrency: Concurrency<LimiterLayer<LC, LQ>, GateLayer>,
    deadline: Option<DeadlineLayer>,
}

/// The concurrency limit of a stack: none, the adaptive limiter or the gate.
#[derive(Clone)]
pub(super) enum Concurrency<L, G> {
    Unlimited,
    Limiter(L),
    Gate(G),
}

impl ProtectLayer {
    /// A stack with no pieces, which passes every request through: add them with
    /// [`shed`](Self::shed), [`quota`](Self::quota), [`limiter`](Self::limiter) or
    /// [`gate`](Self::gate), and [`deadline`](Self::deadline), in any order.
    pub fn new() -> Self {
        Self {
            shed: None,
            quota: None,
            concurrency: Concurrency::Unlimited,
            deadline: None,
        }
    }
}

impl Default for ProtectLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<SC, SQ, LC, LQ> ProtectLayer<SC, SQ, LC, LQ> {
    /// Sheds load first, with `layer`'s shedder ([`ShedLayer`]).
    pub fn shed<C, Q>(self, layer: ShedLayer<C, Q>) -> ProtectLayer<C, Q, LC, LQ> {
        ProtectLayer {
            shed: Some(layer),
            quota: self.quota,
            concurrency: self.concurrency,
            deadline: self.deadline,
        }
    }

    /// Limits the rate second, with `layer`'s budgets ([`QuotaLayer`]: one global quota,
    /// one by peer, by client behind trusted proxies, or by any key).
    pub fn quota(mut self, layer: QuotaLayer) -> Self {
        self.quota = Some(layer);
        self
    }

    /// Limits concurrency third, with `layer`'s adaptive limiter ([`LimiterLayer`], its
    /// queue and its [bypass](LimiterLayer::with_bypass) included), in place of a
    /// [`gate`](Self::gate) given before.
    pub fn limiter<C, Q>(self, layer: LimiterLayer<C, Q>) -> ProtectLayer<SC, SQ, C, Q> {
        ProtectLayer {
            shed: self.shed,
            quota: self.quota,
            concurrency: Concurrency::Limiter(layer),
            deadline: self.deadline,
        }
    }

    /// Limits concurrency third, with `layer`'s fixed gate ([`GateLayer`]), in place of a
    /// [`limiter`](Self::limiter) given before.
    pub fn gate(mut self, layer: GateLayer) -> Self {
        self.concurrency = Concurrency::Gate(layer);
        self
    }

    /// Runs the handler last, under `layer`'s deadline ([`DeadlineLayer`]).
    pub fn deadline(mut self, layer: DeadlineLayer) -> Self {
        self.deadline = Some(layer);
        self
    }
}

impl<SC: Clone, SQ: Clone, LC: Clone, LQ: Clone> Clone for ProtectLayer<SC, SQ, LC, LQ> {
    fn clone(&self) -> Self {
        Self {
            shed: self.shed.clone(),
            quota: self.quota.clone(),
            concurrency: self.concurrency.clone(),
            deadline: self.deadline.clone(),
        }
    }
}

impl<SC, SQ, LC, LQ> fmt::Debug for ProtectLayer<SC, SQ, LC, LQ> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let concurrency = match &self.concurrency {
            Concurrency::Unlimited => None,
            Concurrency::Limiter(_) => Some("limiter"),
            Concurrency::Gate(_) => Some("gate"),
        };
        f.debug_struct("ProtectLayer")
            .field("shed", &self.shed.is_some())
            .field("quota", &self.quota.is_some())
            .field("concurrency", &concurrency)
            .field("deadline", &self.deadline.is_some())
            .finish()
    }
}

impl<S, SC, SQ: Clone, LC, LQ: Clone> Layer<S> for ProtectLayer<SC, SQ, LC, LQ> {
    type Service = ProtectService<S, SC, SQ, LC, LQ>;

    /// A service sharing the pieces' state. As each layer does alone, this registers each
    /// piece's metrics, under the names that are now final.
    fn layer(&self, inner: S) -> Self::Service {
        self.share().service(inner)
    }
}

impl<SC, SQ: Clone, LC, LQ: Clone> ProtectLayer<SC, SQ, LC, LQ> {
    /// What every service of this stack shares, taken from the layers once: the services
    /// [`Layer::layer`] makes, or those a caller makes later from it (the configured stack's
    /// dispatch by route). As each layer does alone, this registers each piece's metrics,
    /// under the names that are now final.
    pub(crate) fn share(&self) -> Shared<SC, SQ, LC, LQ> {
        let shed = self.shed.as_ref().map(|layer| {
            layer.shared.register();
            (Arc::clone(&layer.shared), layer.criticality.clone())
        });
        let quota = self.quota.as_ref().map(|layer| {
            layer.shared.register();
            Arc::clone(&layer.shared)
        });
        let concurrency = match &self.concurrency {
            Concurrency::Unlimited => Concurrency::Unlimited,
            Concurrency::Limiter(layer) => {
                layer.shared.register();
                Concurrency::Limiter((Arc::clone(&layer.shared), layer.criticality.clone()))
            }
            Concurrency::Gate(layer) => {
                layer.meter.register();
                Concurrency::Gate((Arc::clone(&layer.gate), Arc::clone(&layer.meter)))
            }
        };
        // The outermost piece that reads a clock lends it to the others.
        let clock = shed
            .as_ref()
            .map(|(shared, _)| shared.clock())
            .or(quota.as_ref().map(|shared| shared.clock()))
            .or(match &concurrency {
                Concurrency::Limiter((shared, _)) => Some(shared.limiter.clock()),
                _ => None,
            })
            .cloned();
        let pieces = Pieces {
            clock,
            shed,
            quota,
            concurrency,
            deadline: self.deadline.as_ref().map(DeadlineLayer::parts),
        };
        Shared(Arc::new(pieces))
    }
}

/// The pieces of one stack, shared by every service made from them; one `Arc` clone.
pub(crate) struct Shared<SC, SQ, LC, LQ>(Arc<Pieces<SC, SQ, LC, LQ>>);

impl<SC, SQ, LC, LQ> Shared<SC, SQ, LC, LQ> {
    /// A service of the stack around `inner`.
    pub(crate) fn service<S>(&self, inner: S) -> ProtectService<S, SC, SQ, LC, LQ> {
        ProtectService::new(inner, Arc::clone(&self.0))
    }
}

impl<SC, SQ, LC, LQ> Clone for Shared<SC, SQ, LC, LQ> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

/// A limiter's state and where its requests' classes are read.
pub(super) type Limiting<LC, LQ> = (Arc<crate::limiter::Shared<LC>>, LQ);

/// A gate and the meter that counts it.
pub(super) type Gating = (crate::gate::Shared, Arc<Meter>);

/// What every service of one stack shares: each piece's state, taken from its layer.
pub(super) struct Pieces<SC, SQ, LC, LQ> {
    /// The clock read once a request for every piece: the outermost piece's that reads one.
    pub(super) clock: Option<Clock>,
    pub(super) shed: Option<(Arc<crate::shed::shared::Shared<SC>>, SQ)>,
    pub(super) quota: Option<Arc<crate::rate_limit::Shared>>,
    pub(super) concurrency: Concurrency<Limiting<LC, LQ>, Gating>,
    pub(super) deadline: Option<(Budget, bool, Arc<Meter>)>,
}
