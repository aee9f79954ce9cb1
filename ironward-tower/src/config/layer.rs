//! [`ProtectionLayer`]: one layer for a whole router, each request run by its route's stack.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::MatchedPath;
use axum::response::Response;
use http::Request;
use ironward::Criticality;
use tower_layer::Layer;
use tower_service::Service;

use super::build::Route;
use crate::{ChaosService, Overloads, ProtectFuture, ProtectService, ShedFailures};

/// The stack of each configured route, and the server's for the rest.
pub(super) struct Table {
    pub(super) server: Route,
    pub(super) routes: HashMap<String, Route>,
}

impl Table {
    /// The stack of the route `request` matched, or the server's.
    fn pick<B>(&self, request: &Request<B>) -> &Route {
        request
            .extensions()
            .get::<MatchedPath>()
            .and_then(|path| self.routes.get(path.as_str()))
            .unwrap_or(&self.server)
    }
}

/// The layer of a [`Protection`](super::Protection): put on a whole `Router` with
/// `Router::layer`, it runs each request through its route's stack (the server's for a
/// route without a section of its own, and for a request no route matched).
///
/// axum's `Router::layer` wraps each route's service apart, after routing, so a request
/// reaches it with its route in its extensions (`axum::extract::MatchedPath`); a layer
/// around the whole router (`tower::Layer::layer(&layer, router)`, or a `ServiceBuilder`
/// outside it) sees requests before they are routed, and runs every one through the
/// server's stack.
///
/// Cloning it is one `Arc` clone.
#[derive(Clone)]
#[must_use = "a layer does nothing until it layers a service"]
pub struct ProtectionLayer {
    table: Arc<Table>,
}

impl ProtectionLayer {
    pub(super) fn new(table: Arc<Table>) -> Self {
        Self { table }
    }
}

impl fmt::Debug for ProtectionLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut routes: Vec<&str> = self.table.routes.keys().map(String::as_str).collect();
        routes.sort_unstable();
        f.debug_struct("ProtectionLayer")
            .field("routes", &routes)
            .finish_non_exhaustive()
    }
}

impl<S> Layer<S> for ProtectionLayer {
    type Service = ProtectionService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ProtectionService {
            slot: Slot::Unbound(inner),
            table: Arc::clone(&self.table),
        }
    }
}

/// The service a [`ProtectionLayer`] makes: the [`ProtectService`] of the stack its route
/// runs, chosen by its first request, around the route's [`ChaosService`] (which passes
/// every call through when the route has no chaos piece) around the handler.
///
/// axum makes one for each route and calls a clone of it for each request, so the stack is
/// chosen once per request, by one lookup of the route's path; the request then runs in
/// that stack's [`ProtectFuture`], with no future of its own around it. A service called
/// again keeps the stack it chose: under axum its requests all have the one route.
pub struct ProtectionService<S> {
    slot: Slot<S>,
    table: Arc<Table>,
}

/// The inner service, before and after its stack is chosen.
enum Slot<S> {
    Unbound(S),
    Bound(ProtectService<ChaosService<S>, ShedFailures, Criticality, Overloads, Criticality>),
    /// Only while `call` moves the inner service from one to the other.
    Moving,
}

impl<S: Clone> Clone for ProtectionService<S> {
    fn clone(&self) -> Self {
        let slot = match &self.slot {
            Slot::Unbound(inner) => Slot::Unbound(inner.clone()),
            Slot::Bound(service) => Slot::Bound(service.clone()),
            Slot::Moving => Slot::Moving,
        };
        Self {
            slot,
            table: Arc::clone(&self.table),
        }
    }
}

impl<S: fmt::Debug> fmt::Debug for ProtectionService<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("ProtectionService");
        match &self.slot {
            Slot::Unbound(inner) => debug.field("inner", inner),
            Slot::Bound(service) => debug.field("stack", service),
            Slot::Moving => debug.field("inner", &"moving"),
        };
        debug.finish_non_exhaustive()
    }
}

impl<S, B> Service<Request<B>> for ProtectionService<S>
where
    S: Service<Request<B>, Response = Response, Error = Infallible> + Clone,
{
    type Response = Response;
    type Error = Infallible;
    type Future =
        ProtectFuture<ChaosService<S>, B, ShedFailures, Criticality, Overloads, Criticality>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        match &mut self.slot {
            Slot::Unbound(inner) => inner.poll_ready(cx),
            Slot::Bound(service) => service.poll_ready(cx),
            Slot::Moving => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if matches!(self.slot, Slot::Unbound(_))
            && let Slot::Unbound(inner) = std::mem::replace(&mut self.slot, Slot::Moving)
        {
            let route = self.table.pick(&request);
            // Chaos innermost, just around the handler: the pieces outside see its faults
            // as the handler's.
            let chaos = ChaosService::new(inner, route.chaos.clone(), Arc::clone(&route.answer));
            self.slot = Slot::Bound(route.stack.service(chaos));
        }
        match &mut self.slot {
            Slot::Bound(service) => service.call(request),
            // Unreachable: the slot was bound just above, and `Moving` lasts only there.
            Slot::Unbound(_) | Slot::Moving => unreachable_slot(),
        }
    }
}

/// The slot is bound before a call reaches it; this is never called.
#[cold]
fn unreachable_slot() -> ! {
    unreachable!("a ProtectionService's slot is bound before it is called")
}
