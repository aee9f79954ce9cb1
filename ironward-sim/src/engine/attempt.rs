//! An attempt's way in: the client's limiter and breaker, its chaos point, the server's
//! pieces, the backend, and how long the client waits for it.

use core::time::Duration;

use ironward::{Criticality, Deadline, Settle};

use crate::backend::Unserved;
use crate::quotas::{Piece, Quotas};
use ironward::clock::nanos;

use super::Engine;
use super::call::{Call, Guard, Inside, Pass, What};
use super::chaos::Onward;

impl Engine {
    /// One attempt: the client's limiter and breaker, its chaos point, the server's pieces,
    /// then the backend.
    #[inline]
    pub(super) fn attempt(&mut self, call: Call) {
        if call.attempt > 1 {
            self.row.retries += 1;
        }
        let now = self.at();
        let rank = call.class.rank();
        let grant = match &mut self.limiter {
            None => None,
            Some(limiter) => match limiter.acquire_as(now, call.class) {
                Ok(grant) => Some(grant),
                Err(_) => {
                    self.row.refused.limiter += 1;
                    self.row.refused_by[rank] += 1;
                    self.end_call(&call, false);
                    return;
                }
            },
        };
        let pass = match &mut self.front {
            None => Some(Pass::Unguarded),
            Some(front) => front.check(now, self.rolls.take().unwrap_or(0.0)),
        };
        let Some(pass) = pass else {
            if let (Some(grant), Some(limiter)) = (grant, &mut self.limiter) {
                limiter.settle(grant, Settle::Ignored, now);
            }
            self.row.refused.breaker += 1;
            self.row.refused_by[rank] += 1;
            self.end_call(&call, false);
            return;
        };
        let guard = Guard { pass, grant };
        if self.chaos.is_none() {
            return self.send(call, guard, self.now, false);
        }
        match self.chaos_point(call, guard) {
            Onward::Send { guard, replace } => self.send(call, guard, self.now, replace),
            Onward::Taken => {}
        }
    }

    /// The attempt `call`, which the client started at `since`, leaves the client: the
    /// server's pieces, then the backend. With `replace`, the client hears a failure whatever
    /// the backend answers.
    #[inline]
    pub(super) fn send(&mut self, call: Call, guard: Guard, since: u64, replace: bool) {
        let rank = call.class.rank();
        let inside = match self.enter(call.class) {
            Ok(inside) => inside,
            Err(piece) => {
                let refused = &mut self.row.refused;
                *match piece {
                    Piece::Shedder => &mut refused.shedder,
                    Piece::Bucket => &mut refused.bucket,
                    Piece::Sliding => &mut refused.sliding,
                    Piece::Period => &mut refused.period,
                    Piece::Gate => &mut refused.gate,
                } += 1;
                self.row.refused_by[rank] += 1;
                return self.failed(call, guard, Settle::Dropped);
            }
        };
        let (done, ok) = match self.server.admit(self.now) {
            Ok(served) => served,
            Err(Unserved::Full) => {
                self.row.refused.queue += 1;
                self.row.refused_by[rank] += 1;
                self.leave(inside, false);
                return self.failed(call, guard, Settle::Dropped);
            }
            Err(Unserved::Dropped(at)) => {
                // Dropped unserved after its wait: a timeout to the client (its own, if
                // sooner), which frees the server-side pieces at once as a refusal does.
                self.leave(inside, false);
                let at = self.limit(&call, since).map_or(at, |limit| limit.min(at));
                return self.push(at, What::Timeout { call, guard });
            }
        };
        self.row.admitted += 1;
        self.row.admitted_by[rank] += 1;
        self.count_in_window();
        self.row.peak_in_flight = self.row.peak_in_flight.max(self.server.inside());
        match self.limit(&call, since) {
            Some(limit) if limit < done => {
                self.push(limit, What::Timeout { call, guard });
                self.push(done, What::Finish { inside, ok });
            }
            _ => self.push(
                done,
                What::Done {
                    call,
                    guard,
                    inside,
                    ok,
                    replace,
                },
            ),
        }
    }

    /// The server-side pieces in order, for a call of `class`; on a refusal, whatever was
    /// taken is given back.
    #[inline(always)]
    fn enter(&mut self, class: Criticality) -> Result<Inside, Piece> {
        let now = self.at();
        let ticket = match &mut self.shedder {
            Some(shedder) => Some(
                shedder
                    .check_as(now, self.server.cpu(), class)
                    .map_err(|_| Piece::Shedder)?,
            ),
            None => None,
        };
        let refused = match &mut self.quotas {
            Some(quotas) => quotas.enter(now).err(),
            None => None,
        };
        let inside = Inside {
            ticket,
            gate: refused.is_none() && self.quotas.as_ref().is_some_and(Quotas::gated),
        };
        match refused {
            None => Ok(inside),
            Some(piece) => {
                self.leave(inside, false);
                Err(piece)
            }
        }
    }

    /// Gives back what the server-side pieces hold for an attempt, which ended in `ok`.
    #[inline(always)]
    fn leave(&mut self, inside: Inside, ok: bool) {
        if let (Some(ticket), Some(shedder)) = (inside.ticket, &mut self.shedder) {
            if ok {
                shedder.pass(ticket, self.at);
            } else {
                shedder.fail(ticket);
            }
        }
        if let (true, Some(quotas)) = (inside.gate, &mut self.quotas) {
            quotas.leave();
        }
    }

    /// The backend finishes an attempt.
    #[inline(always)]
    pub(super) fn finished(&mut self, inside: Inside, ok: bool) {
        self.server.finish(self.now);
        if !ok {
            self.row.failed += 1;
        }
        self.leave(inside, ok);
    }

    /// When the client stops waiting for an attempt it started at `since`: its timeout or
    /// the call's deadline, whichever is sooner; `None` for neither.
    pub(super) fn limit(&self, call: &Call, since: u64) -> Option<u64> {
        let timeout = (self.timeout > 0).then(|| since.saturating_add(self.timeout));
        if self.deadline.is_zero() {
            return timeout;
        }
        let deadline = Deadline::start(self.deadline, Duration::from_nanos(call.start))
            .remaining(self.at())
            .map(|left| self.now.saturating_add(nanos(left)));
        match (timeout, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
