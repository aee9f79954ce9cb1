//! Which requests the limiter counts, and as what class: [`ReadPass`], and the bypass a
//! [`LimiterLayer::with_bypass`](crate::LimiterLayer::with_bypass) adds ([`Bypassing`]).
//!
//! The rule is here once: the [`LimiterLayer`](crate::LimiterLayer)'s services, the
//! [`ProtectLayer`](crate::ProtectLayer)'s and the [`ClientLayer`](crate::ClientLayer)'s
//! each read a request's [`Pass`] and hand it to the limiter's shared state, which decides
//! and reports (`Shared::admit_at` in `shared.rs`).

use std::fmt;
use std::sync::Arc;

use http::Request;
use http::request::Parts;
use ironward::Criticality;

use crate::criticality::ReadCriticality;

/// How the limiter takes a request: counted as a class, or let through uncounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Decided by the limiter as a call of this class: admitted, queued or refused.
    Counted(Criticality),
    /// Let through at once, never queued nor refused, counted nowhere and not sampled
    /// ([`SharedLimiter::bypass`](ironward_tokio::SharedLimiter::bypass)): a health check.
    Bypass,
}

/// What a limiter reads of a request of type `R` before it decides: its [`Pass`].
///
/// Every [`ReadCriticality`] source reads as [`Pass::Counted`] with its class, so a layer
/// without a bypass reads exactly as it did; a [`Bypassing`] source (what
/// [`with_bypass`](crate::LimiterLayer::with_bypass) makes) reads [`Pass::Bypass`] for a
/// request its predicate matches. The request is lent mutably only so that its head can be
/// shown to a predicate of `&Parts` where it stands; a reader leaves it as it found it.
pub trait ReadPass<R> {
    /// How the limiter takes `request`.
    fn pass(&self, request: &mut R) -> Pass;
}

impl<R, Q: ReadCriticality<R>> ReadPass<R> for Q {
    fn pass(&self, request: &mut R) -> Pass {
        Pass::Counted(self.criticality(request))
    }
}

/// A predicate of a request's head.
type Predicate = dyn Fn(&Parts) -> bool + Send + Sync;

/// A criticality source `Q` beside a predicate of the request's head: a request the predicate
/// matches bypasses the limiter ([`Pass::Bypass`]); any other is counted as the class `Q`
/// reads. Made by [`LimiterLayer::with_bypass`](crate::LimiterLayer::with_bypass).
///
/// The predicate runs first, so a bypassed request's class is never read. `Clone` shares the
/// predicate (an `Arc`).
///
/// # Examples
///
/// ```
/// use http::Request;
/// use ironward::Criticality;
/// use ironward_tower::limiter::{Bypassing, Pass, ReadPass};
///
/// let source = Bypassing::new(Criticality::Sheddable, |head| head.uri.path() == "/health");
/// let mut health = Request::get("/health").body(()).unwrap();
/// assert_eq!(source.pass(&mut health), Pass::Bypass);
/// let mut work = Request::get("/work").body(()).unwrap();
/// assert_eq!(source.pass(&mut work), Pass::Counted(Criticality::Sheddable));
/// assert_eq!(work.uri(), "/work", "the request is as it was");
/// ```
pub struct Bypassing<Q> {
    criticality: Q,
    predicate: Arc<Predicate>,
}

impl<Q> Bypassing<Q> {
    /// `criticality`'s classes, and a bypass for the requests whose head `predicate` matches.
    pub fn new(criticality: Q, predicate: impl Fn(&Parts) -> bool + Send + Sync + 'static) -> Self {
        Self {
            criticality,
            predicate: Arc::new(predicate),
        }
    }

    /// The source of the classes of the requests that do not bypass.
    pub fn criticality(&self) -> &Q {
        &self.criticality
    }
}

impl<Q: Clone> Clone for Bypassing<Q> {
    fn clone(&self) -> Self {
        Self {
            criticality: self.criticality.clone(),
            predicate: Arc::clone(&self.predicate),
        }
    }
}

impl<Q: fmt::Debug> fmt::Debug for Bypassing<Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bypassing")
            .field("criticality", &self.criticality)
            .finish_non_exhaustive()
    }
}

impl<B, Q: ReadCriticality<Request<B>>> ReadPass<Request<B>> for Bypassing<Q> {
    fn pass(&self, request: &mut Request<B>) -> Pass {
        if crate::head::read(request, |head| (self.predicate)(head)) {
            Pass::Bypass
        } else {
            Pass::Counted(self.criticality.criticality(request))
        }
    }
}
