//! Which breaker: [`SreBreaker`] or [`ClassicBreaker`], argued with the simulator's
//! figures, what each costs, and how to move to either.
//!
//! Both implement [`CircuitBreaker`], so every edge takes either and the choice is a policy
//! value. They answer different questions. The SRE breaker (Google SRE client-side
//! throttling) refuses a share of calls that grows with the failures in its ten-second window
//! and shrinks with the successes; it never refuses every call, and it lets one through after a
//! second with none. The classic breaker is a switch: closed it lets everything through, open
//! it refuses everything but its half-open probes, and once they pass it closes at once.
//!
//! # The figures
//!
//! `ironward-sim run outage` (ironward-sim's built-in scenario; `ironward-sim show outage`
//! prints it): 500 calls a second, Poisson, to a backend of 50 workers and a queue of 500
//! that fails every call from 60 s to 120 s, then comes back cold, four times slower at first
//! and warm again by 180 s; callers time out after 1 s and make up to three attempts. Four
//! clients see the same traffic: behind [`SRE`], behind [`CLASSIC`] with a 5 s open wait
//! (Polly's and Hystrix's), and behind each with the adaptive limiter ([`Limiter`] under
//! [`ADAPTIVE`]) in front. The run's verdict prints this table; `ironward-sim run
//! cold-recovery` runs the same four clients and reads the limiter's part, and the
//! simulator's test `outage_the_figures_the_breakers_guide_quotes` holds these numbers.
//!
//! | | SRE | classic | SRE + limiter | classic + limiter |
//! | --- | --: | --: | --: | --: |
//! | attempts reaching the failing backend, 60 s to 120 s | 5,206 | 187 | 4,991 | 182 |
//! | from the recovery until the breaker refuses nothing more | 52 s | 37 s | 14 s | 2 s |
//! | attempts failed after the recovery (timed out, queue full) | 7,668 | 2,361 | 4 | 4 |
//! | attempts refused by breaker or limiter after the recovery | 11,253 | 13,735 | 7,170 | 6,450 |
//! | goodput after the recovery, calls a second | 394.8 | 387.1 | 441.8 | 447.9 |
//!
//! What they show:
//!
//! - **During an outage the classic breaker is the better wall.** Once its record holds 100
//!   calls, half of them failed, it refuses everything but ten probes per open wait. The SRE
//!   breaker's share climbs as failures fill its window, so most of its attempts reach the
//!   failing backend in the outage's first ten seconds, and one a second after that.
//! - **On a cold recovery neither is good alone.** The classic breaker closes at once onto a
//!   backend that serves a quarter of its warm rate, fills the queue in one step, times out,
//!   opens again, and repeats: the flood on closing, visible as the square waves of the
//!   picture. The SRE breaker's load rises more gently but still past what the cold backend
//!   serves in time (it lets through up to `k` = 1.5 times what succeeds), so it too fills the
//!   queue, twice, and refuses longest.
//! - **A breaker decides on failures, and a cold backend is slow, not failing.** The limiter
//!   holds the calls in flight to what the backend completes within the callers' timeout, so
//!   the failed attempts after the recovery all but vanish behind either breaker, which then
//!   sees almost no failures and stays closed. With the limiter in front, the classic breaker's hard
//!   stop during the outage costs nothing on the way back, and it has the best goodput of the
//!   four.
//!
//! # When to use which
//!
//! - **The classic breaker** when a failing backend should receive nothing but probes (it
//!   cannot take even a share, or each failure is expensive: a payment, a paged human), when
//!   alerts and runbooks speak of open and closed (its changes of state are values,
//!   [`ClassicBreaker::take_transition`]), or when a team moves from resilience4j, Polly or
//!   failsafe-go and wants the same behaviour. Put the adaptive limiter in front of it if the
//!   backend can come back slow: alone it floods a cold backend.
//! - **The SRE breaker** when failures are partial (a share of calls fail, one bad replica of
//!   several): it refuses about the excess where a switch trips for all or none (a property of
//!   its rule, not measured above). It also has little to tune: `k` and a window, no minimum,
//!   wait or probe count to fit to the traffic. Its gradual return is gentler than the classic
//!   flood, but against a cold backend the limiter is still what keeps the load in time.
//!
//! # What each costs
//!
//! Both allocate their record when they are made (the SRE breaker a fixed window of buckets,
//! the classic one `calls` outcomes or `buckets` buckets) and nothing per call after it; the
//! classic breaker's half-open leases take a little more. Both shared forms in
//! `ironward-tokio` (`SharedSreBreaker`, `SharedClassicBreaker`) let a healthy backend's
//! calls through without a lock and refuse a failing one's without it too. The
//! repository's BENCHMARKS.md has the measured cost of a decision beside failsafe,
//! throttle-net and tower-resilience.
//!
//! # From resilience4j, Polly and failsafe-go
//!
//! | [`Classic`] field | resilience4j `CircuitBreakerConfig` | Polly v8 `CircuitBreakerStrategyOptions` | failsafe-go `CircuitBreakerBuilder` |
//! | --- | --- | --- | --- |
//! | `record` | `slidingWindowType`, `slidingWindowSize` | `SamplingDuration` (a time record) | `WithFailureThreshold(n)` (consecutive), `WithFailureThresholdRatio(f, n)` (count of `n`), the period of `WithFailureRateThreshold` (time) |
//! | `failure_rate` | `failureRateThreshold` / 100 | `FailureRatio` | `f / n` of `WithFailureThresholdRatio`, the rate of `WithFailureRateThreshold` / 100 |
//! | `slow_rate`, `slow_call` | `slowCallRateThreshold` / 100, `slowCallDurationThreshold` | none | none |
//! | `minimum` | `minimumNumberOfCalls` | `MinimumThroughput` | `WithFailureExecutionThreshold` |
//! | `open` | `waitDurationInOpenState` (fixed), `waitIntervalFunctionInOpenState` (growing) | `BreakDuration`, `BreakDurationGenerator` | `WithDelay`, `WithDelayFn` |
//! | `probes` | `permittedNumberOfCallsInHalfOpenState` | 1 | the executions of `WithSuccessThresholdRatio` |
//! | `lease` | `maxWaitDurationInHalfOpenState`, for the whole stage | none | none |
//! | `automatic` | `automaticTransitionFromOpenToHalfOpenEnabled` | none | none |
//! | `force` | `transitionToForcedOpenState`, `transitionToDisabledState`, `transitionToMetricsOnlyState` | `ManualControl` | none |
//!
//! [`CLASSIC`] is resilience4j's defaults and [`POLLY`] Polly's. Which errors count as
//! failures (resilience4j's `recordExceptions`, Polly's `ShouldHandle`, failsafe-go's
//! `HandleErrors`) is the edge's classifier, not the policy's. The half-open stage closes when
//! the probes' failure share is under `failure_rate`, where failsafe-go counts successes; the
//! [`classic`](crate::classic) module lists the other differences.
//!
//! # Switching
//!
//! The policy value picks the family, at an edge:
//!
//! ```text
//! let layer = BreakerLayer::new(SRE);      // ironward-tower: the SRE breaker
//! let layer = BreakerLayer::new(CLASSIC);  // the classic breaker, resilience4j's defaults
//! ```
//!
//! and in code written against [`CircuitBreaker`], which runs either unchanged:
//!
//! ```
//! use core::time::Duration;
//! use ironward::{SreBreaker, CLASSIC, CircuitBreaker, ClassicBreaker, SRE};
//!
//! /// How many of 200 calls that all fail, one a millisecond, the breaker refuses.
//! fn refused<B: CircuitBreaker>(policy: B::Policy) -> usize {
//!     let mut breaker = B::new(policy, Duration::ZERO);
//!     (0..200)
//!         .filter(|&i| {
//!             let now = Duration::from_millis(i);
//!             match breaker.check(now, 0.5) {
//!                 Ok(permit) => {
//!                     let _ = breaker.fail(permit, now);
//!                     false
//!                 }
//!                 Err(_) => true,
//!             }
//!         })
//!         .count()
//! }
//!
//! // The classic breaker opens once its record holds 100 calls and refuses every later one.
//! assert_eq!(refused::<ClassicBreaker>(CLASSIC), 100);
//! // The SRE breaker refuses a share that grows with the failures, never all of them.
//! assert!((1..200).contains(&refused::<SreBreaker>(SRE)));
//! ```
//!
//! The simulator takes either policy in a scenario file (`breaker = { kind = "sre" }` or
//! `{ kind = "classic", open = { fixed = "5s" } }`), to try a setting on one's own traffic
//! before moving it to a service.
//!
//! [`SreBreaker`]: crate::SreBreaker
//! [`ClassicBreaker`]: crate::ClassicBreaker
//! [`ClassicBreaker::take_transition`]: crate::ClassicBreaker::take_transition
//! [`CircuitBreaker`]: crate::CircuitBreaker
//! [`Classic`]: crate::Classic
//! [`CLASSIC`]: crate::CLASSIC
//! [`POLLY`]: crate::POLLY
//! [`SRE`]: crate::SRE
//! [`Limiter`]: crate::Limiter
//! [`ADAPTIVE`]: crate::ADAPTIVE
