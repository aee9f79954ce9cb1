//! [`DeadlineService`]: a time budget around each call.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Request;
use http::request::Parts;
use tokio::time::Instant;
use tower_service::Service;

use super::{DeadlineExceeded, DeadlineFuture, RequestDeadline};
use crate::Mode;
use crate::meter::Meter;

/// Where a request's budget comes from.
#[derive(Clone)]
pub(crate) enum Budget {
    Fixed(Duration),
    /// A fixed budget a tuner changes.
    Tuned(Arc<super::tune::TunedBudget>),
    FromRequest(Reader),
}

/// Reads a budget from a request head, shared by every clone.
type Reader = Arc<dyn Fn(&Parts) -> Option<Duration> + Send + Sync>;

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fixed(budget) => f.debug_tuple("Fixed").field(budget).finish(),
            Self::Tuned(budget) => f.debug_tuple("Tuned").field(&budget.get()).finish(),
            Self::FromRequest(_) => f.write_str("FromRequest"),
        }
    }
}

/// A service that cuts each request off when its time budget runs out, made by
/// [`DeadlineLayer`](super::DeadlineLayer).
///
/// For each request it starts a [`RequestDeadline`], puts it in the request's extensions for
/// the handler (unless [`with_extension(false)`](super::DeadlineLayer::with_extension)
/// says not to), and races the inner future against a `tokio::time::Sleep` of the budget
/// (made by the first poll that finds the inner future pending, so that a call answered at
/// once makes none); on expiry the call resolves to
/// [`DeadlineExceeded`](super::DeadlineExceeded) and the inner future is dropped, as tower's
/// `Timeout` does. A request that already carries a
/// `RequestDeadline` (from a layer further out, or put there by the caller) keeps whichever of
/// the two ends first, so a budget only ever shrinks on its way in; one already spent fails at
/// once without reaching the inner service.
///
/// In [`Mode::Shadow`] it sets no timer and lets every request through: one already spent
/// reaches the inner service with the [`DeadlineExceeded`] that would have refused it in its
/// extensions, and a call that runs past its deadline finishes, reported when it ends (see
/// [`DeadlineLayer::with_mode`](super::DeadlineLayer::with_mode)).
///
/// It serves `http::Request<B>`, the request type of axum, hyper and tonic alike: the
/// budget's reader and the extensions it writes are parts of an HTTP request. For any other
/// request type, tower's `Timeout` is the fixed-budget equivalent.
///
/// `Clone` shares the budget's reader; there is no other state. Its futures must be polled
/// within a tokio runtime with the time driver enabled, which the `Sleep` needs.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::{DeadlineExceeded, DeadlineLayer, DeadlineService, RequestDeadline};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let handler = service_fn(|request: http::Request<()>| async move {
///     let deadline = request.extensions().get::<RequestDeadline>().copied();
///     Ok::<_, DeadlineExceeded>(deadline.and_then(|d| d.remaining()))
/// });
/// let service: DeadlineService<_> = DeadlineLayer::new(Duration::from_secs(1)).layer(handler);
/// let left = service.oneshot(http::Request::new(())).await.unwrap();
/// assert_eq!(left, Some(Duration::from_secs(1)));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct DeadlineService<S> {
    inner: S,
    budget: Budget,
    /// Whether a request without a deadline from outside carries this one on.
    extension: bool,
    meter: Arc<Meter>,
}

/// The reasons a deadline refuses for, as the `reason` label gives them: the request's time
/// had run out when it arrived ([`EXCEEDED`]), or it ran out while the inner service worked
/// on the call ([`ELAPSED`]).
pub(super) const REASONS: &[&str] = &["exceeded", "elapsed"];

/// The index in [`REASONS`] of a request whose time had run out when it arrived.
const EXCEEDED: usize = 0;

/// The index in [`REASONS`] of a call whose time ran out inside: counted by the response
/// future, which has counters only with the `metrics` feature.
#[cfg(feature = "metrics")]
pub(super) const ELAPSED: usize = 1;

impl<S> DeadlineService<S> {
    pub(super) fn new(inner: S, budget: Budget, extension: bool, meter: Arc<Meter>) -> Self {
        Self {
            inner,
            budget,
            extension,
            meter,
        }
    }
}

impl<S, B> Service<Request<B>> for DeadlineService<S>
where
    S: Service<Request<B>>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = S::Response;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = DeadlineFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        match start(
            &self.budget,
            self.extension,
            &self.meter,
            &mut request,
            None,
        ) {
            Start::Exceeded => DeadlineFuture::exceeded(),
            Start::Shadowed => DeadlineFuture::shadowed(self.inner.call(request)),
            Start::Run { end, budget } => {
                DeadlineFuture::new(self.inner.call(request), end, budget, &self.meter)
            }
        }
    }
}

/// How a request starts under its deadline: refused with its time already spent, let
/// through out of time in shadow mode, or run until `end` (`None`: no deadline).
pub(crate) enum Start {
    Exceeded,
    Shadowed,
    Run {
        end: Option<Instant>,
        budget: Duration,
    },
}

/// Starts `request` under the deadline its `budget` and an outer [`RequestDeadline`] give,
/// at `now` on tokio's clock (read here if `None`), handing it on in the extensions if
/// `extension` says so, and counting through `meter` a refusal on arrival or a call no
/// deadline can cut: the decision of a [`DeadlineService`] and of a server stack's deadline
/// alike. The request stays where it is: moving an `http::Request` in and out of a helper
/// copies it twice.
#[inline]
pub(crate) fn start<B>(
    budget: &Budget,
    extension: bool,
    meter: &Meter,
    request: &mut Request<B>,
    now: Option<Instant>,
) -> Start {
    let budget = match budget {
        Budget::Fixed(budget) => *budget,
        Budget::Tuned(budget) => budget.get(),
        Budget::FromRequest(read) => {
            crate::head::read(request, |head| read(head)).unwrap_or_default()
        }
    };
    let mut deadline = match now {
        Some(now) => RequestDeadline::start_at(budget, now),
        None => RequestDeadline::start(budget),
    };
    // The one clock reading of the call: what has ended, and when the sleep wakes, are
    // both measured from it (`sleep_until` reads no clock, `sleep` would).
    let now = deadline.origin();
    // The request's deadline from now on, written over an outer one in place (no
    // allocation) or put in beside the rest below, once the call is let through, if the
    // layer hands deadlines on.
    let outer = request.extensions_mut().get_mut::<RequestDeadline>();
    let written = outer.is_some();
    if let Some(outer) = outer {
        deadline = deadline.earlier(*outer);
        *outer = deadline;
    }
    let end = deadline.end();
    if let Some(end) = end.filter(|&end| end <= now) {
        meter.refused(EXCEEDED);
        tracing::debug!(
            name = meter.name(),
            outcome = meter.refusal(),
            budget = ?budget,
            over = ?now.saturating_duration_since(end),
            "deadline refused a request whose time had run out"
        );
        return match meter.mode() {
            Mode::Enforce => Start::Exceeded,
            // The handler sees the spent deadline, and what would have refused it.
            Mode::Shadow => {
                let extensions = request.extensions_mut();
                if !written && extension {
                    extensions.insert(deadline);
                }
                extensions.insert(DeadlineExceeded::new());
                Start::Shadowed
            }
        };
    }
    // Nothing can cut a call without a deadline: it is counted now. One with a deadline
    // is counted when it ends, as admitted or elapsed.
    if end.is_none() {
        meter.admitted();
    }
    if !written && extension {
        request.extensions_mut().insert(deadline);
    }
    Start::Run { end, budget }
}
