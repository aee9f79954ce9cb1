//! [`Faults`]: chaos at the front door, the faults a [`SharedChaos`] decides applied to any
//! async call.

use std::fmt;
use std::future::{IntoFuture, pending};
use std::sync::Arc;

use ironward::chaos::{Fault, Injected};

use crate::{Clock, SharedChaos};

/// Injects the faults a [`SharedChaos`] decides into any async call, each attempt asking for
/// its own: to show, before production does, that the retry, the breaker, the timeout and the
/// fallback around a call do what they are there for.
///
/// Each [`call`](Self::call) asks the shared piece for the next request's fault
/// ([`SharedChaos::next`]), and applies it:
///
/// | fault | what the call does |
/// | --- | --- |
/// | none, or a [shadow](Injected::shadow) one | calls as usual (a shadow fault is counted and logged by the shared piece) |
/// | [`Error`](Fault::Error) | answers `Err(error(&injected))` without calling |
/// | [`Latency`](Fault::Latency) | sleeps the [drawn delay](Injected::delay) on its [clock](Self::with_clock), then calls |
/// | [`Abort`](Fault::Abort) | never answers, and never calls: a [`Timeout`](super::Timeout) around it (or the [`Deadline`](super::Deadline) it runs under, or dropping its future) ends it. **Without one it hangs for ever**, as a backend that never answers does |
/// | [`Replace`](Fault::Replace) | calls, drops the result, and answers `Err(error(&injected))` |
///
/// The `error` closure makes the caller's own error type from the decision, so a fault
/// passes every piece around it as a failure of the call would: the breaker counts it, the
/// retry weighs it, the fallback answers for it.
///
/// **Where it goes.** Innermost, around the operation itself, inside the timeout:
/// `retry.call(|| breaker.call(|| timeout.call(|| faults.call(op))))`, so that every
/// attempt asks for its fault, the timeout cuts an abort and counts a latency, and the
/// breaker counts both. A [`Pipeline`](super::Pipeline) calls its operation once per attempt
/// (once per hedged copy) inside its timeout, so `pipeline.call(|| faults.call(op))` puts it
/// in that same place.
///
/// `Clone` is cheap: clones share the [`SharedChaos`] (its policy and its request count) and
/// the `error` closure.
///
/// # Metrics and events
///
/// None of its own: the [`SharedChaos`] counts `ironward.chaos.injected` and logs each fault
/// it decides, shadow or not.
///
/// # Examples
///
/// Every call fails with the caller's error until the policy is turned off:
///
/// ```
/// use ironward::chaos::{Chaos, Fault, Injection};
/// use ironward_tokio::SharedChaos;
/// use ironward_tokio::call::Faults;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let always = Chaos {
///     enabled: true,
///     faults: vec![Injection { fault: Fault::Error, rate: 1.0 }],
///     ..Chaos::default()
/// };
/// let chaos = SharedChaos::new(always).unwrap();
/// let faults = Faults::new(chaos.clone(), |injected| format!("injected {}", injected.fault.label()));
/// let fetch = || async { Ok::<_, String>(42) };
/// assert_eq!(faults.call(fetch).await, Err("injected error".to_owned()));
/// chaos.retune(Chaos::default()).unwrap();
/// assert_eq!(faults.call(fetch).await, Ok(42));
/// # }
/// ```
///
/// An abort cut by the timeout around it, on a manual clock:
///
/// ```
/// use std::time::Duration;
/// use ironward::chaos::{Chaos, Fault, Injection};
/// use ironward_tokio::{Clock, SharedChaos};
/// use ironward_tokio::call::{CallError, Faults, Timeout, TimeoutReason};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let abort = Chaos {
///     enabled: true,
///     faults: vec![Injection { fault: Fault::Abort, rate: 1.0 }],
///     ..Chaos::default()
/// };
/// let faults = Faults::new(SharedChaos::new(abort).unwrap(), |_| "injected");
/// let timeout = Timeout::new(Duration::from_secs(1)).with_clock(clock.clone());
/// let cut = timeout.call(|| faults.call(|| async { Ok::<_, &str>(1) })).await;
/// let budget = Duration::from_secs(1);
/// assert_eq!(cut, Err(CallError::Refused(TimeoutReason::Elapsed { budget })));
/// assert_eq!(clock.now(), budget);
/// # }
/// ```
pub struct Faults<F> {
    chaos: SharedChaos,
    error: Arc<F>,
    clock: Clock,
}

impl<F> Faults<F> {
    /// Applies `chaos`'s faults, an error and a replacement answered with `error(&injected)`,
    /// a latency slept on the monotonic clock.
    pub fn new<E>(chaos: SharedChaos, error: F) -> Self
    where
        F: Fn(&Injected) -> E,
    {
        Self {
            chaos,
            error: Arc::new(error),
            clock: Clock::default(),
        }
    }

    /// The same, sleeping an injected latency on `clock`: on a [manual](Clock::manual) one a
    /// latency moves the clock rather than waiting.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// The shared piece that decides: its name, its policy, its request count.
    pub fn chaos(&self) -> &SharedChaos {
        &self.chaos
    }

    /// Runs `call` with the next request's fault applied (see the [table](Self)): its
    /// answer, or the caller's error for an injected error or replacement; an abort never
    /// answers.
    pub async fn call<T, E, Fut>(&self, call: impl FnOnce() -> Fut) -> Result<T, E>
    where
        F: Fn(&Injected) -> E,
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        let Some(injected) = self.chaos.next().filter(|injected| !injected.shadow) else {
            return call().await;
        };
        match injected.fault {
            Fault::Error => Err((self.error)(&injected)),
            Fault::Latency(_) => {
                self.clock.sleep(injected.delay.unwrap_or_default()).await;
                call().await
            }
            Fault::Abort => pending().await,
            Fault::Replace => {
                drop(call().await);
                Err((self.error)(&injected))
            }
        }
    }
}

impl<F> Clone for Faults<F> {
    fn clone(&self) -> Self {
        Self {
            chaos: self.chaos.clone(),
            error: Arc::clone(&self.error),
            clock: self.clock.clone(),
        }
    }
}

impl<F> fmt::Debug for Faults<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Faults")
            .field("chaos", &self.chaos)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}
