//! An attempt's way out: the client hears how it went, and retries the call or ends it.

use core::time::Duration;

use ironward::{Budget, Deadline, Settle};

use ironward::clock::nanos;

use super::Engine;
use super::call::{Call, Guard, What};

impl Engine {
    /// Records the settled outcome with the client's breaker, and with its limiter as `how`.
    #[inline(always)]
    fn settle(&mut self, guard: Guard, ok: bool, how: Settle) {
        let now = self.at();
        if let (Some(grant), Some(limiter)) = (guard.grant, &mut self.limiter) {
            limiter.settle(grant, how, now);
        }
        if let Some(front) = &mut self.front {
            front.settle(guard.pass, ok, now);
        }
    }

    #[inline(always)]
    pub(super) fn succeeded(&mut self, call: Call, guard: Guard) {
        self.settle(guard, true, Settle::Success);
        if let Some(budget) = &mut self.budget {
            budget.pass();
        }
        self.row.succeeded += 1;
        let micros = (self.now - call.start) / 1_000;
        self.row_latency.record(micros);
        self.last_end = Some(self.now);
        self.answered(&call);
    }

    /// The client hears that an attempt failed, its limiter told `how`: retry it if the
    /// policy allows, or give up.
    #[cold]
    pub(super) fn failed(&mut self, call: Call, guard: Guard, how: Settle) {
        self.settle(guard, false, how);
        if let Some(budget) = &mut self.budget {
            budget.fail();
        }
        let allowed =
            self.backoff.more(call.attempt) && self.budget.as_ref().is_none_or(Budget::can_retry);
        if !allowed {
            return self.end_call(&call, false);
        }
        let delay = self
            .backoff
            .delay(call.attempt, self.jitter.roll(), call.previous);
        let at = self.now.saturating_add(nanos(delay));
        if Deadline::start(self.deadline, Duration::from_nanos(call.start))
            .expired(Duration::from_nanos(at))
        {
            return self.end_call(&call, false);
        }
        let next = Call {
            attempt: call.attempt + 1,
            previous: Some(delay),
            ..call
        };
        self.push(at, What::Start { call: next });
    }

    /// `call` ends unanswered (`ok` false) or answered.
    pub(super) fn end_call(&mut self, call: &Call, ok: bool) {
        if !ok {
            self.row.gave_up += 1;
        }
        self.last_end = Some(self.now);
        self.answered(call);
    }
}
