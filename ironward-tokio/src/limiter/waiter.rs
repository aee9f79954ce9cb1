//! A call waiting in a [`SharedLimiter`](super::SharedLimiter)'s queue.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ironward::Settle;

#[cfg(doc)]
use super::SharedLimiter;
use super::{Inner, LimiterPermit, LimiterRefusal, Place};
#[cfg(doc)]
use crate::Clock;
use crate::{Delay, lock};

/// A call waiting in a [`SharedLimiter`]'s queue: a future of its permit, or of the refusal
/// once it has waited as long as the queue allows.
///
/// Dropped before it is done, it leaves the queue; if it had been let in meanwhile, its
/// call is settled as ignored at once, and the room goes to the next in the queue. The wait
/// starts when the call is queued and is measured on the limiter's clock; its timer
/// ([`Clock::sleep`]) is made on the first poll, so that a waiter can be made outside a
/// runtime, and rings at the end of the wait and, before it, once every cooling time of the
/// limiter's policy, when the waiter looks at the queue again. Polled again after it has
/// finished, it stays pending.
#[must_use = "a waiter is let in only when polled; dropped, it leaves the queue"]
pub struct Waiter {
    pub(super) inner: Arc<Inner>,
    pub(super) place: Place,
    /// When the call was queued, on the limiter's clock.
    pub(super) arrived: Duration,
    pub(super) wait: Duration,
    /// The policy's cooling time when the call was queued: how often it looks again.
    pub(super) cool: Duration,
    pub(super) sleep: Option<Pin<Box<Delay>>>,
    pub(super) done: bool,
}

impl Future for Waiter {
    type Output = Result<LimiterPermit, LimiterRefusal>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.done {
            return Poll::Pending;
        }
        {
            let mut state = lock(&this.inner.state);
            if let Some(grant) = state.granted.remove(&this.place.1) {
                drop(state);
                this.done = true;
                return Poll::Ready(Ok(this.inner.permit(grant)));
            }
            // Under the lock that lets calls in, so that a grant made after the check above
            // finds this waker.
            if let Some(slot) = state.waiting.get_mut(&this.place)
                && !slot.as_ref().is_some_and(|w| w.will_wake(cx.waker()))
            {
                *slot = Some(cx.waker().clone());
            }
        }
        let deadline = this.arrived.saturating_add(this.wait);
        loop {
            let sleep = this.sleep.get_or_insert_with(|| {
                let now = this.inner.clock.now();
                Box::pin(this.inner.clock.sleep(pause(now, deadline, this.cool)))
            });
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let now = this.inner.clock.now();
            if now >= deadline {
                this.done = true;
                return Poll::Ready(this.inner.expire(this.place, this.arrived, now));
            }
            // A look between arrival and the end of the wait: let in, or sleep again.
            match this.inner.look(this.place, now) {
                Ok(grant) => {
                    this.done = true;
                    return Poll::Ready(Ok(this.inner.permit(grant)));
                }
                Err(cool) => {
                    this.cool = cool;
                    this.sleep = None;
                }
            }
        }
    }
}

/// How long a waiter sleeps from `now`: to its `deadline`, or for the cooling time `cool`
/// if that is sooner and not zero (a zero cooling time has no floor to wait out).
fn pause(now: Duration, deadline: Duration, cool: Duration) -> Duration {
    let left = deadline.saturating_sub(now);
    if cool.is_zero() { left } else { left.min(cool) }
}

impl Drop for Waiter {
    /// Leaves the queue; a call let in meanwhile is settled as ignored, its room passed on.
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let now = self.inner.clock.now();
        let mut wake = Vec::new();
        {
            let mut state = lock(&self.inner.state);
            state.leave(self.place);
            if let Some(grant) = state.granted.remove(&self.place.1) {
                state.limiter.settle(grant, Settle::Ignored, now);
                state.pump(now, &mut wake);
            }
        }
        wake.into_iter().for_each(Waker::wake);
    }
}

impl fmt::Debug for Waiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Waiter")
            .field("criticality", &self.place.0.0)
            .field("arrival", &self.place.1)
            .field("arrived", &self.arrived)
            .field("wait", &self.wait)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
