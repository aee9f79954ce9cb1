//! Where this differs from grpc-go: what the layer does where A6 is silent or a tower layer cannot do what grpc-go's transport does.
//!
//! The decisions are grpc-go's (`stream.go`), with the differences the core lists
//! ([`ironward::grpc`]). The layer adds these, each where A6 is silent or a tower layer
//! cannot do what grpc-go's transport does:
//!
//! - **The request body is read whole before the first attempt** (up to the retry buffer),
//!   where grpc-go sends each message as it comes and keeps a copy. A call with a retry policy
//!   whose client stream waits for a response before it ends would wait for ever: give
//!   bidirectional streaming methods no retry policy.
//! - **Past the retry buffer the call is sent once**, committed before it starts; grpc-go
//!   commits when its buffer overflows, which may be after an attempt has failed and been
//!   retried.
//! - **Transparent retries** (an attempt the server never saw, resent without counting) are
//!   the transport's: tonic's `Channel` does not report them, so a refused connection is
//!   an `UNAVAILABLE` attempt, counted and retried by the policy.
//! - **A response with a non-200 HTTP status and no `grpc-status`** has ordinary headers and
//!   commits the call, where grpc-go maps the HTTP status to a code it may retry.
//! - **Hedging** follows A6 alone, as grpc-go implements none (the core's
//!   [`HedgingPlan`](ironward::grpc::HedgingPlan) lists its readings where A6 is silent); a
//!   loser is cancelled by dropping its response future, which for a tonic `Channel` resets
//!   its HTTP/2 stream.
//! - **The deadline is cut on tokio's timer**, whatever clock the layer reads, where grpc-go
//!   cuts on its context's; the call then ends with `DEADLINE_EXCEEDED`, as in grpc-go (the
//!   [`retry`] module's "The deadline").
//! - **A malformed `grpc-timeout` from the caller fails the call** with `INTERNAL` before it
//!   is sent, the answer grpc-go's server gives it; grpc-go's client forwards none ("The
//!   caller's `grpc-timeout`").
//!
//! [`retry`]: crate::retry
