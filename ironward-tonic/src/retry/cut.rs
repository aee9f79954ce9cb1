//! The call's deadline as a timer: when it passes, whatever the call waits for is dropped
//! (its attempts cancelled) and the call ends with `DEADLINE_EXCEEDED`, as grpc-go's client
//! ends a call whose context's deadline passes.

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// When a call's deadline passes, on tokio's timer (the one [`Clock::monotonic`] reads,
/// whatever the layer's clock: a [`Clock::manual`] sleep ends at once, so a cut slept on it
/// would end every call at once); never, for a call without a deadline.
///
/// [`Clock::monotonic`]: crate::Clock::monotonic
/// [`Clock::manual`]: crate::Clock::manual
pub(super) struct Cut(Option<(Instant, Pin<Box<Sleep>>)>);

/// The deadline passed before what was raced against it ended.
pub(super) struct Passed;

impl Cut {
    /// A cut `limit` from now; never for `None`, or for a limit past what tokio's `Instant`
    /// holds.
    pub(super) fn after(limit: Option<Duration>) -> Self {
        let at = limit.and_then(|limit| Instant::now().checked_add(limit));
        Self(at.map(|at| (at, Box::pin(tokio::time::sleep_until(at)))))
    }

    /// A cut that never comes.
    pub(super) fn never() -> Self {
        Self(None)
    }

    /// Whether the deadline has passed, read now rather than when the timer next fires.
    pub(super) fn passed(&self) -> bool {
        self.0.as_ref().is_some_and(|(at, _)| Instant::now() >= *at)
    }

    /// Ready once the deadline has passed.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.passed() {
            return Poll::Ready(());
        }
        match &mut self.0 {
            Some((_, sleep)) => sleep.as_mut().poll(cx),
            None => Poll::Pending,
        }
    }

    /// What `future` ends with, or [`Passed`] when the deadline passes first (`future` is
    /// then dropped, never polled if it had passed already).
    pub(super) async fn race<F: Future>(&mut self, future: F) -> Result<F::Output, Passed> {
        let mut future = pin!(future);
        poll_fn(|cx| match self.poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Passed)),
            Poll::Pending => future.as_mut().poll(cx).map(Ok),
        })
        .await
    }
}
