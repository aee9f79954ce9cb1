//! One client stack: [`ClientLayer`], the deadline, the retry, the circuit breaker and the
//! adaptive concurrency limit as one layer around an HTTP client.
//!
//! Stacking the four layers by hand takes a `ServiceBuilder` whose type names every piece
//! and its order, one type for every choice of pieces, and each layer reads the clock and
//! boxes its error on its own. [`ClientLayer`] takes the same layers, each optional, puts
//! them in one order, and runs each call in one [`ClientFuture`].
//!
//! # The order
//!
//! The order is fixed, and the same a hand-built stack should take:
//!
//! | | piece | refuses with | why here |
//! | --- | --- | --- | --- |
//! | 1 | [`deadline`](ClientLayer::deadline) ([`DeadlineLayer`](crate::DeadlineLayer)) | [`DeadlineExceeded`](crate::DeadlineExceeded) | outermost: the caller's budget for the whole call, so retries and the waits between them spend it, and no retry outlives it (Polly's `docs/pipelines/index.md` puts a timeout that overarches every attempt outside the retry and the per-attempt one inside; Microsoft.Extensions.Http.Resilience's `HttpStandardResilienceOptions`, on Polly's pipelines, its total request timeout outside its retry; failsafe-go's `policies.md` composes `RetryPolicy(CircuitBreaker(Timeout(fn)))`) |
//! | 2 | [`retry`](ClientLayer::retry) ([`HttpRetryLayer`](crate::HttpRetryLayer)) | [`GaveUp`](crate::GaveUp) around the last error | outside the breaker, so each attempt is asked of the breaker and judged by it alone, and a refusal is a decision the retry reads rather than a failure it sends again (HttpStandardResilienceOptions and failsafe-go both put the retry outside the breaker) |
//! | 3 | [`breaker`](ClientLayer::breaker) ([`BreakerLayer`](crate::BreakerLayer)) | [`BreakerRefused`](crate::BreakerRefused) | per attempt, outside the limiter: a breaker that refuses spends no concurrency, and it records each attempt's outcome, a timeout included, as HttpStandardResilienceOptions' breaker sees each attempt inside its retry |
//! | 4 | [`limiter`](ClientLayer::limiter) ([`LimiterLayer`](crate::LimiterLayer)) | [`LimiterRefused`](crate::LimiterRefused) | innermost, around the inner client alone: its latency samples are the backend's, never a wait between retries or another piece's refusal, and a permit is held only while a request is on the wire |
//!
//! HttpStandardResilienceOptions puts its concurrency limit outermost, a fixed bulkhead
//! on whole calls; this one is adaptive ([`ironward::Limiter`]) and learns from latency,
//! so it must measure attempts, not calls that include backoff.
//!
//! How the pieces meet:
//!
//! - A breaker refusal that says when the breaker lets a call through again (a classic
//!   breaker, open: [`BreakerRefused::retry_after`](crate::BreakerRefused::retry_after)) is
//!   decided by the retry's rules as the `503` with that `Retry-After` it stands for
//!   (RFC 9110 §15.6.4, §10.2.3): retried after that wait if the wait is under the retry's
//!   `max_delay`, fits its budget and the request is replay-safe (the run counts it as an
//!   attempt, since its rules decided it as one); any other refusal (the SRE
//!   breaker's, which admits a share of calls at every moment, or the limiter's) ends the
//!   call with [`Stop::Refused`](crate::Stop::Refused), as `ironward-reqwest` ends it, so a
//!   retry never hammers a breaker that is shedding its backend's load.
//! - Each attempt's timeout is the retry's ([`HttpRetryLayer::with_attempt_timeout`](crate::HttpRetryLayer::with_attempt_timeout));
//!   an attempt cut by it is a failure to the breaker and an overload to the limiter, as
//!   tower's `Timeout` inside them would report it.
//! - The deadline cuts whatever is running when it ends (an attempt or a wait): the
//!   breaker's permit is dropped unsettled and the limiter's unsampled, as when the caller
//!   drops the future. Give the retry a `total_budget` no longer than the deadline, so that
//!   it ends with its own record rather than being cut.
//!
//! # Errors
//!
//! The stack's error is `tower::BoxError`, with the typed error of whatever ended the call
//! inside, in the shape the four layers stacked by hand in this order return it: the
//! deadline's [`DeadlineExceeded`](crate::DeadlineExceeded) as it is; with a retry, every
//! other error inside a [`GaveUp`](crate::GaveUp), whose [`Retried`](crate::Retried) record
//! says why the retry stopped (find the refusal with `gave_up.error_as::<BreakerRefused>()`);
//! without one, the refusal or the inner error itself (`err.is::<BreakerRefused>()`). (By
//! hand, the retry would read a refusal as an error its classifier says nothing of, and
//! stop as `not_retryable`; the stack's run stops as `refused`, or as its rules decide a
//! known wait.) One
//! typed error enum would give a `match`, but it would differ from what the layers return
//! alone, so that [`http::response_for`](crate::http::response_for) and every caller that
//! downcasts today would read two shapes for one refusal.
//!
//! # One reading, one future
//!
//! A call's `call` reads the clock once and, on that reading, starts the retry's run and asks
//! the breaker and the limiter for the first attempt; each attempt ends on one more reading,
//! which the limiter, the breaker and the retry settle it on, and each retry is asked for on
//! one reading after its wait. The clock is the outermost piece's that reads one (the
//! retry's, else the breaker's, else the limiter's): give the pieces one
//! [`Clock`](crate::Clock) (each layer's `with_clock`) when a test moves time. The deadline
//! and the attempt timeouts run on tokio's timer, as their layers' do.
//!
//! # Examples
//!
//! A backend that is down: the classic breaker opens after three failed attempts, and the
//! retry, told the breaker's 60 s open wait, will not wait longer than its 30 s cap. The
//! breaker's classifier is a bare closure ([`Failing::when`](crate::Failing::when)).
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::time::Duration;
//! use http::{Request, Response, StatusCode};
//! use ironward::classic::{OpenWait, Record};
//! use ironward::http_retry::{Settings, Stop, StopReason};
//! use ironward::{CLASSIC, Classic, ClassicReason};
//! use ironward_tower::{BreakerLayer, BreakerRefused, ClientLayer, Clock, DeadlineLayer, Dice};
//! use ironward_tower::{Failing, GaveUp, HttpRetryLayer};
//! use tower::{Layer, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let reached = Arc::new(AtomicU32::new(0));
//! let counter = Arc::clone(&reached);
//! let backend = service_fn(move |_: Request<String>| {
//!     counter.fetch_add(1, Ordering::Relaxed);
//!     async { Response::builder().status(StatusCode::BAD_GATEWAY).body(String::new()) }
//! });
//! let (clock, _hand) = Clock::manual(Duration::ZERO);
//! let policy = Classic {
//!     record: Record::Consecutive { failures: 3 },
//!     open: OpenWait::Fixed(Duration::from_secs(60)),
//!     ..CLASSIC
//! };
//! let settings = Settings { max_retries: 5, ..Settings::default() };
//! let stack = ClientLayer::new()
//!     .deadline(DeadlineLayer::new(Duration::from_secs(5)))
//!     .retry(HttpRetryLayer::new(settings).with_clock(clock.clone()).with_dice(Dice::from_fn(|| 1.0)))
//!     .breaker(
//!         BreakerLayer::new(policy)
//!             .with_clock(clock.clone())
//!             .with_classifier(Failing::when(|answer| answer.status().is_none_or(|s| s.is_server_error()))),
//!     );
//! let client = stack.layer(backend);
//!
//! // Three 502s open the breaker; the fourth attempt is refused, and its 60 s are beyond
//! // the retry's cap: the call ends with the breaker's refusal.
//! let err = client.oneshot(Request::new(String::new())).await.unwrap_err();
//! let gave_up = err.downcast_ref::<GaveUp>().unwrap();
//! assert!(gave_up.error_as::<BreakerRefused<ClassicReason>>().is_some());
//! assert_eq!(gave_up.stop(), Stop::Decided(StopReason::ServerDelayExceedsCap));
//! assert_eq!(reached.load(Ordering::Relaxed), 3);
//! # }
//! ```

mod future;
mod layer;
mod ride;
mod service;

pub use self::future::ClientFuture;
pub use self::layer::ClientLayer;
pub use self::service::ClientService;
