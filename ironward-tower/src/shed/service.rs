//! The service a [`ShedLayer`](crate::ShedLayer) makes.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use ironward::{Criticality, Shed, ShedReason};
use ironward_tokio::{SharedShedder, ShedTicket};
use tower::BoxError;
use tower_service::Service;

use super::future::{Flight, ShedFuture};
use crate::criticality::ReadCriticality;
use crate::meter::{Level, Meter};
use crate::tuner::Tune;
use crate::{Classify, Clock, Cpu, Mode, ShedFailures};

/// A service behind an adaptive load shedder; made by a [`ShedLayer`](crate::ShedLayer), whose
/// docs say what it does.
///
/// The shedder decides in `call`, with the clock and the CPU read at that moment; readiness is
/// the inner service's. A shed request returns a future that fails at once with
/// [`ShedRefused`](crate::ShedRefused), boxed; an admitted request's error is boxed as it is.
/// Every clone, and every service the same layer made, shares one shedder (one
/// [`SharedShedder`](ironward_tokio::SharedShedder) behind an `Arc`: a cool server's requests
/// are let in and recorded without a lock, and the lock a hot one takes is held only to decide
/// and to record, never across an await), so the count in flight is the server's, not one
/// connection's.
///
/// `C` is the classifier; it defaults to [`ShedFailures`], so the common case is written
/// `ShedService<S>` (see [`BreakerService`](crate::BreakerService) for why it is a type
/// parameter). `Q` is where each request's class is read
/// ([`ReadCriticality`](crate::criticality::ReadCriticality)); it defaults to a fixed
/// `Critical`, which decides as go-zero's shedder, without classes.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::SHED;
/// use ironward_tower::{Cpu, ShedLayer, ShedService};
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let slow = service_fn(|_request: ()| async {
///     tokio::time::sleep(Duration::from_millis(100)).await;
///     Ok::<_, std::convert::Infallible>(http::Response::new(()))
/// });
/// let mut server: ShedService<_> = ShedLayer::new(SHED, Cpu::fixed(100)).layer(slow);
/// let other = server.clone();
///
/// let call = server.ready().await.unwrap().call(());
/// assert_eq!(other.flying(), 1); // one shedder, seen from the clone
/// call.await.unwrap();
/// assert_eq!(other.flying(), 0);
/// # }
/// ```
pub struct ShedService<S, C = ShedFailures, Q = Criticality> {
    inner: S,
    shared: Arc<Shared<C>>,
    criticality: Q,
}

impl<S, C, Q> ShedService<S, C, Q> {
    pub(crate) fn new(inner: S, shared: Arc<Shared<C>>, criticality: Q) -> Self {
        Self {
            inner,
            shared,
            criticality,
        }
    }

    /// How many requests are in flight: admitted and not yet completed
    /// ([`Shedder::flying`](ironward::Shedder::flying)).
    pub fn flying(&self) -> u64 {
        self.shared.flying()
    }
}

impl<S: Clone, C, Q: Clone> Clone for ShedService<S, C, Q> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
            criticality: self.criticality.clone(),
        }
    }
}

impl<S: fmt::Debug, C: fmt::Debug, Q> fmt::Debug for ShedService<S, C, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShedService")
            .field("inner", &self.inner)
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

impl<S, C, Q, Request> Service<Request> for ShedService<S, C, Q>
where
    S: Service<Request>,
    S::Error: Into<BoxError>,
    C: Classify<S::Response>,
    Q: ReadCriticality<Request>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ShedFuture<S::Future, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let class = self.criticality.criticality(&request);
        match self.shared.check(class) {
            Ok(ticket) => {
                self.shared.meter.admitted();
                // In flight before the inner call starts, so that even a panicking `call`
                // lands the ticket as the guard unwinds.
                let flight = Flight::new(ticket, Arc::clone(&self.shared));
                ShedFuture::called(self.inner.call(request), flight)
            }
            Err(reason) => {
                self.shared.refused(&reason);
                match self.shared.meter.mode() {
                    Mode::Enforce => ShedFuture::overloaded(reason),
                    // Not in flight, as the enforcing twin never let it in.
                    Mode::Shadow => ShedFuture::shadowed(self.inner.call(request)),
                }
            }
        }
    }
}

/// What every clone of one service shares: the shedder, its sources, its classifier and the
/// handles it reports through.
#[derive(Debug)]
pub(crate) struct Shared<C> {
    shedder: SharedShedder,
    clock: Clock,
    cpu: Cpu,
    classify: C,
    meter: Meter,
    in_flight: Level,
}

/// The reasons a shedder refuses for, as the `reason` label gives them: at or over the CPU
/// threshold, under it within the cooling time of the last overload, or a class below the
/// floor a more critical class's refusal raised.
const REASONS: &[&str] = &["overloaded", "cooling", "floor"];

impl<C> Shared<C> {
    pub(crate) fn new(
        shedder: SharedShedder,
        clock: Clock,
        cpu: Cpu,
        classify: C,
        name: &'static str,
        mode: Mode,
    ) -> Self {
        Self {
            shedder,
            clock,
            cpu,
            classify,
            meter: Meter::new("shed", name, REASONS, mode),
            in_flight: Level::shed_in_flight(name),
        }
    }

    /// Registers the shedder's metrics, if they are not yet: when its layer makes a service,
    /// its name final.
    pub(crate) fn register(&self) {
        self.meter.register();
        self.in_flight.register();
    }

    /// The name the shedder reports under.
    pub(crate) fn name(&self) -> &'static str {
        self.meter.name()
    }

    /// Whether the shedder enforces its refusals or only reports them.
    pub(crate) fn mode(&self) -> Mode {
        self.meter.mode()
    }

    /// Asks the shedder to admit a request of class `criticality` now, with the numbers
    /// behind a refusal ([`SharedShedder::check_as`]): one clock read, the start of the
    /// request's response time. The count in flight the gauge is set to is read just after
    /// the decision, and only when a recorder reads the gauge.
    fn check(&self, criticality: Criticality) -> Result<ShedTicket, ShedReason> {
        let decision = self
            .shedder
            .check_as(self.clock.now(), self.cpu.read(), criticality);
        if Level::is_read() {
            self.in_flight.set(self.shedder.flying() as f64);
        }
        decision
    }

    /// Reports a refusal (or, in shadow mode, a would-be refusal): the counter for its heat (or
    /// the floor) and a debug event with the numbers that decided it.
    fn refused(&self, reason: &ShedReason) {
        // Below the floor whatever the heat; else the core refused while hot: overloaded, or
        // else cooling.
        let index = if reason.criticality < reason.floor {
            2
        } else {
            usize::from(!reason.overloaded)
        };
        self.meter.refused(index);
        tracing::debug!(
            name = self.meter.name(),
            outcome = self.meter.refusal(),
            criticality = reason.criticality.name(),
            floor = reason.floor.name(),
            cpu = reason.cpu,
            flying = reason.flying,
            average = reason.average,
            capacity = reason.capacity,
            overloaded = reason.overloaded,
            cooling = reason.cooling,
            "shedder refused a request"
        );
    }

    /// Lands the request behind `ticket` as the classifier reads `result`: a pass reads the
    /// clock a second time, for the end of its response time.
    pub(crate) fn settle<Res>(&self, ticket: ShedTicket, result: &Result<Res, BoxError>)
    where
        C: Classify<Res>,
    {
        if self.classify.is_failure(result) {
            self.abandon(ticket);
        } else {
            self.shedder.pass(ticket, self.clock.now());
            self.landed();
        }
    }

    /// Lands the request behind `ticket` as a failure: out of flight, no response time.
    pub(crate) fn abandon(&self, ticket: ShedTicket) {
        self.shedder.fail(ticket);
        self.landed();
    }

    /// Sets the gauge of calls in flight, read as a request landed, if a recorder reads it.
    fn landed(&self) {
        if Level::is_read() {
            self.in_flight.set(self.shedder.flying() as f64);
        }
    }

    /// The clock and the CPU source, for a layer made anew on them.
    pub(crate) fn sources(&self) -> (Clock, Cpu) {
        (self.clock.clone(), self.cpu.clone())
    }

    /// The classifier, for a layer made anew with it.
    pub(crate) fn classifier(&self) -> &C {
        &self.classify
    }

    /// The policy the shedder runs, for a tuner and for a layer made anew under it.
    pub(crate) fn shed(&self) -> Shed {
        self.shedder.shed()
    }

    /// How many requests are in flight now.
    pub(crate) fn flying(&self) -> u64 {
        self.shedder.flying()
    }
}

impl<C: Send + Sync> Tune<Shed> for Shared<C> {
    fn retune(&self, shed: Shed) -> Shed {
        let was = self.shedder.retune(shed, self.clock.now());
        tracing::debug!(from = ?was, to = ?shed, "shedder retuned");
        was
    }

    fn policy(&self) -> Shed {
        Shared::shed(self)
    }
}
