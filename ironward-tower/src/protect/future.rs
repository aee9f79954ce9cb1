//! [`ProtectFuture`]: the one future of a request through the stack.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::response::Response;
use http::Request;
use ironward_tokio::{ShedTicket, Waiter};
use pin_project_lite::pin_project;
use tower::BoxError;
use tower_service::Service;

use super::layer::{Concurrency, Gating, Pieces};
use super::service::{answer, format_of};
use crate::classify::Grade;
use crate::deadline::{Start, start};
use crate::http::Format;
use crate::rate_limit::Stamp;
use crate::{Classify, Clock, DeadlineExceeded, DeadlineFuture, LimiterRefused};

pin_project! {
    /// The response future of a [`ProtectService`](crate::ProtectService): the handler's
    /// response under the deadline, or a refusal's, and never an error.
    ///
    /// One future for every piece: it holds the shedder's count in flight, the rate limit's
    /// fields for the response, and the limiter's permit or the gate's room, and settles them
    /// all as the handler answers, on one reading of the clock. Dropped before it completes
    /// (the client hung up), it takes the request out of the shedder's flight as a failure
    /// and releases the permit unsampled, as the pieces' own futures do.
    pub struct ProtectFuture<S, B, SC, SQ, LC, LQ>
    where
        S: Service<Request<B>>,
    {
        #[pin]
        state: State<S, B>,
        settled: Settled<SC, SQ, LC, LQ>,
    }
}

pin_project! {
    #[project = StateProj]
    #[project_replace = StateTaken]
    enum State<S, B>
    where
        S: Service<Request<B>>,
    {
        Running {
            #[pin]
            future: DeadlineFuture<S::Future>,
            // How a deadline that runs out is answered: `None` when none can.
            format: Option<Format>,
        },
        Waiting {
            waiter: Waiter,
            service: S,
            request: Request<B>,
        },
        Refused {
            response: Response,
        },
        Done,
    }
}

/// What a request holds of each piece until it lands.
///
/// The shedder's ticket and the gate's room are held here, under the stack's one `Arc` of
/// the pieces, and settled through it: a request takes no `Arc` of its own for either, as
/// each layer's future alone does. Dropped before it lands (the client hung up), it takes the
/// request out of the shedder's flight as a failure and leaves the gate, as those futures do.
pub(super) struct Settled<SC, SQ, LC, LQ> {
    pub(super) pieces: Arc<Pieces<SC, SQ, LC, LQ>>,
    pub(super) shed: Option<ShedTicket>,
    pub(super) stamp: Option<Box<Stamp>>,
    pub(super) hold: Hold<LC>,
}

/// The concurrency a request holds: none, a limiter's permit or room in the stack's gate.
pub(super) enum Hold<LC> {
    Free,
    Limiter(crate::limiter::Flight<LC>),
    Gate,
}

impl<LC> Hold<LC> {
    /// Lets go of what the request holds: gives back its room in the gate, if it holds some,
    /// and drops a limiter's permit (which gives it back unsampled if it was not landed).
    fn leave<L>(&mut self, concurrency: &Concurrency<L, Gating>) {
        if let (Self::Gate, Concurrency::Gate((gate, _))) = (&*self, concurrency) {
            gate.leave();
        }
        *self = Self::Free;
    }
}

impl<SC, SQ, LC, LQ> Settled<SC, SQ, LC, LQ> {
    pub(super) fn new(pieces: Arc<Pieces<SC, SQ, LC, LQ>>) -> Self {
        Self {
            pieces,
            shed: None,
            stamp: None,
            hold: Hold::Free,
        }
    }

    /// Lands the request as `result` says, the limiter first and the shedder last, as the
    /// pieces nest: `now` is the reading to land on, else the clock is read once, if a piece
    /// needs it.
    fn land(&mut self, result: &Result<Response, BoxError>, now: Option<Duration>)
    where
        SC: Classify<Response>,
        LC: Grade<Response>,
    {
        let clock = self.pieces.clock.as_ref();
        let mut now = now;
        let mut read = || *now.get_or_insert_with(|| clock.map_or(Duration::ZERO, Clock::now));
        if let Hold::Limiter(flight) = &mut self.hold {
            flight.land_at(result, read());
        }
        self.hold.leave(&self.pieces.concurrency);
        if let (Some(ticket), Some((shared, _))) = (self.shed.take(), &self.pieces.shed) {
            shared.settle_at(ticket, result, read);
        }
    }
}

impl<SC, SQ, LC, LQ> Drop for Settled<SC, SQ, LC, LQ> {
    fn drop(&mut self) {
        if let (Some(ticket), Some((shared, _))) = (self.shed.take(), &self.pieces.shed) {
            shared.abandon(ticket);
        }
        self.hold.leave(&self.pieces.concurrency);
    }
}

impl<S, B, SC, SQ, LC, LQ> ProtectFuture<S, B, SC, SQ, LC, LQ>
where
    S: Service<Request<B>>,
    SC: Classify<Response>,
    LC: Grade<Response>,
{
    /// A request a piece refused with `refused` at `now`: the pieces that let it in land it
    /// as that refusal, and it is answered as `request` asks.
    #[inline(never)]
    pub(super) fn refused(
        mut settled: Settled<SC, SQ, LC, LQ>,
        request: &Request<B>,
        refused: BoxError,
        now: Option<Duration>,
    ) -> Self {
        let result = Err(refused);
        settled.land(&result, now);
        let response = match result {
            Err(refused) => answer(&refused, format_of(request)),
            Ok(response) => response,
        };
        Self {
            state: State::Refused { response },
            settled,
        }
    }

    /// A request the limiter queued, waiting with its own `service`.
    pub(super) fn waiting(
        settled: Settled<SC, SQ, LC, LQ>,
        waiter: Waiter,
        service: S,
        request: Request<B>,
    ) -> Self {
        Self {
            state: State::Waiting {
                waiter,
                service,
                request,
            },
            settled,
        }
    }

    /// A request every piece let in: the handler called under the deadline, if the stack
    /// has one and its time has not run out. The deadline starts at `now`, the stack's
    /// reading, where that is a reading of tokio's clock ([`Clock::instant`]).
    #[inline]
    pub(super) fn run(
        settled: Settled<SC, SQ, LC, LQ>,
        service: &mut S,
        mut request: Request<B>,
        now: Option<Duration>,
    ) -> Self {
        let started = match &settled.pieces.deadline {
            None => Ok((DeadlineFuture::bare(service.call(request)), None)),
            Some((budget, extension, meter)) => {
                let clock = settled.pieces.clock.as_ref();
                let at = now.and_then(|now| clock.and_then(|clock| clock.instant(now)));
                match start(budget, *extension, meter, &mut request, at) {
                    Start::Run { end, budget } => {
                        let format = end.map(|_| format_of(&request));
                        let future = DeadlineFuture::new(service.call(request), end, budget, meter);
                        Ok((future, format))
                    }
                    Start::Shadowed => Ok((DeadlineFuture::bare(service.call(request)), None)),
                    Start::Exceeded => Err(request),
                }
            }
        };
        match started {
            Ok((future, format)) => Self {
                state: State::Running { future, format },
                settled,
            },
            Err(request) => {
                let exceeded = Box::new(DeadlineExceeded::new());
                Self::refused(settled, &request, exceeded, now)
            }
        }
    }
}

impl<S, B, SC, SQ, LC, LQ> Future for ProtectFuture<S, B, SC, SQ, LC, LQ>
where
    S: Service<Request<B>, Response = Response, Error = Infallible>,
    SC: Classify<Response>,
    LC: Grade<Response>,
{
    type Output = Result<Response, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let this = self.as_mut().project();
            match this.state.project() {
                StateProj::Running { future, format } => {
                    let format = *format;
                    let mut result = match ready!(future.poll_timed(cx)) {
                        Ok(Ok(response)) => Ok(response),
                        Ok(Err(never)) => match never {},
                        Err(exceeded) => Err(BoxError::from(exceeded)),
                    };
                    if let (Ok(response), Some(stamp)) = (&mut result, this.settled.stamp.take()) {
                        (*stamp).append_to(response.headers_mut());
                    }
                    this.settled.land(&result, None);
                    self.as_mut().project().state.set(State::Done);
                    let response = result
                        .unwrap_or_else(|refused| answer(&refused, format.unwrap_or(Format::Text)));
                    return Poll::Ready(Ok(response));
                }
                StateProj::Waiting { waiter, .. } => {
                    let admitted = ready!(Pin::new(waiter).poll(cx));
                    let taken = self.as_mut().project().state.project_replace(State::Done);
                    let StateTaken::Waiting {
                        mut service,
                        request,
                        ..
                    } = taken
                    else {
                        continue;
                    };
                    let this = self.as_mut().project();
                    let Concurrency::Limiter((shared, _)) = &this.settled.pieces.concurrency else {
                        continue;
                    };
                    let shared = Arc::clone(shared);
                    shared.waited(&admitted);
                    match admitted {
                        Ok(permit) => {
                            this.settled.hold =
                                Hold::Limiter(crate::limiter::Flight::new(permit, shared));
                            let settled = std::mem::replace(
                                this.settled,
                                Settled::new(Arc::clone(&this.settled.pieces)),
                            );
                            let next = Self::run(settled, &mut service, request, None);
                            self.set(next);
                        }
                        Err(refusal) => {
                            let refused = Box::new(LimiterRefused::new(refusal));
                            let settled = std::mem::replace(
                                this.settled,
                                Settled::new(Arc::clone(&this.settled.pieces)),
                            );
                            self.set(Self::refused(settled, &request, refused, None));
                        }
                    }
                }
                StateProj::Refused { .. } => {
                    let taken = self.as_mut().project().state.project_replace(State::Done);
                    if let StateTaken::Refused { response } = taken {
                        return Poll::Ready(Ok(response));
                    }
                }
                // Polled after it completed: it has nothing more to give.
                StateProj::Done => return Poll::Pending,
            }
        }
    }
}

impl<S, B, SC, SQ, LC, LQ> fmt::Debug for ProtectFuture<S, B, SC, SQ, LC, LQ>
where
    S: Service<Request<B>>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Running { .. } => "running",
            State::Waiting { .. } => "waiting",
            State::Refused { .. } => "refused",
            State::Done => "done",
        };
        f.debug_struct("ProtectFuture")
            .field("state", &state)
            .finish_non_exhaustive()
    }
}
