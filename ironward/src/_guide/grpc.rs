//! gRPC retries and hedging: proposal A6 without I/O, in [`grpc`].
//!
//! `ironward::grpc` is gRPC proposal A6 ("gRPC Retry Design") without I/O. A `RetryPlan` answers
//! each attempt's outcome (its status code, whether the response headers committed the call, the
//! raw `grpc-retry-pushback-ms` values) with `Done`, `Wait(delay)` or `Halt(reason)`, in the order
//! grpc-go's `stream.go` decides: A6's backoff or the server's pushback, at most five attempts,
//! the channel's retry throttling (`Budget`), and never an attempt at or past the call's deadline.
//! A `HedgingPlan` says when each hedge is due, sends the next at once on a non-fatal code, and on
//! a success or a fatal code names the attempt to keep and those to cancel. With the `serde`
//! feature, `ServiceConfig` reads the service config's `methodConfig` and `retryThrottling` from
//! JSON, validated as A6 says, and finds each method's entry.
//!
//! ```rust
//! use core::time::Duration;
//! use ironward::Budget;
//! use ironward::grpc::{AttemptEnd, Code, Halt, RETRY_POLICY, RetryPlan, RetryStep};
//!
//! let ms = Duration::from_millis;
//! let mut budget = Budget::new(10, 0.1); // the service config's retryThrottling
//! let deadline = Some(ms(1_000));        // the call's deadline, on the caller's clock
//! let mut plan = RetryPlan::new(&RETRY_POLICY, deadline, ms(0)).expect("A6's example policy");
//! // A trailers-only UNAVAILABLE: retry after A6's backoff, 100 ms spread by a fifth.
//! let step = plan.on_outcome(AttemptEnd::new(Code::Unavailable), ms(20), 0.5, Some(&mut budget));
//! assert_eq!(step, RetryStep::Wait(ms(100)));
//! assert_eq!(plan.previous_attempts(), 1); // grpc-previous-rpc-attempts on the retry
//! // The server pushes back 2 s, past the deadline: stop now rather than sleep first.
//! let pushback = AttemptEnd { pushback: &["2000"], ..AttemptEnd::new(Code::Unavailable) };
//! let step = plan.on_outcome(pushback, ms(150), 0.5, Some(&mut budget));
//! assert_eq!(step, RetryStep::Halt(Halt::Deadline));
//! ```
//!
//! [`grpc`]: crate::grpc
