//! Why a call was refused: the `check` beside every decision, and the reason it returns.
//!
//! A refusal is an answer, not an error: `allow` says `None`, `take` says `false`. Beside
//! each decision, `check` gives the same answer as a `Result` whose `Err` explains the
//! refusal in the numbers that decided it, as governor's `check() -> Result<(), NotUntil>`
//! does. The decision is `check` with the reason discarded, so there is one rule and the two
//! never disagree. A reason is a small `Copy` record of what the decision computed anyway:
//! nothing is allocated, and nothing is worked out for a caller who does not look (a
//! bucket's wait is computed only when [`BucketReason::next`] is asked).
//!
//! | decision | `check` answers | the reason holds |
//! | --- | --- | --- |
//! | [`SreBreaker::allow`] | `Result<SrePermit, SreReason>` | calls and accepts in the window, the failing and working runs, the decayed `k`, the drop fraction and the draw |
//! | [`Shedder::allow`] | `Result<Ticket, ShedReason>` | the CPU reading, the calls in flight and their average, the capacity, and whether the CPU or an earlier refusal made it hot |
//! | [`Bucket::take`] | `Result<(), BucketReason>` | the tokens held, the cost wanted, the burst and the rate; the wait on asking |
//! | [`Sliding::take`], [`Sliding::take_n`] | `Result<(), QuotaReason>` | the events (units) in the window, the quota, the wait for room |
//! | [`Period::take`], [`Period::take_n`], [`SharedPeriod::take`] | `Result<Usage, QuotaReason>` (`Ok(Under)`, `Ok(Hit)`, or `Err` for `Over`) | the events (units) in the period, the quota, the wait for the next |
//! | [`Limits::take`] | `Result<(), LimitsReason>` | the limit that waits longest, and when all admit |
//! | [`Gate::enter`], [`SharedGate::enter`] | `Result<(), GateReason>` | how many are inside, and the limit |
//! | [`Budget::can_retry`], [`SharedBudget::can_retry`] | `Result<(), BudgetReason>` | the tokens held, and the maximum |
//! | [`Ward::connect`] | `Result<ConnectPermit, Refusal>` | the piece that refused (breaker, bucket or backoff), when to try again, and that piece's reason: [`SreReason`], [`BucketReason`] or [`BackoffReason`] (the failures in a row and the wait) |
//! | [`Ward::checkout`] | `Result<Slot, CheckoutRefusal>` | the gate's or the shedder's reason |
//! | [`Limiter::acquire`], [`Limiter::acquire_as`] | `Result<Grant, LimiterReason>` | the calls in flight, the limit in force, the class's room (its ceiling, or under partitions its reservation, with its own calls in flight) and the floor, and whether a probe was draining |
//!
//! Every reason has public fields, a `Display` that prints it on one line, and implements
//! [`core::error::Error`], so that an edge can log it or return it as the source of its
//! refusal.
//!
//! ```
//! use core::time::Duration;
//! use ironward::{SreBreaker, SRE};
//!
//! let mut breaker = SreBreaker::new(SRE, Duration::ZERO);
//! for _ in 0..100 {
//!     let permit = breaker.allow(Duration::ZERO, 0.99).expect("over the drop fraction");
//!     breaker.fail(permit, Duration::ZERO);
//! }
//! let reason = breaker.check(Duration::ZERO, 0.41).expect_err("under the drop fraction");
//! assert!(reason.roll < reason.drop);
//! assert_eq!(
//!     reason.to_string(),
//!     "breaker dropped 94.1% of calls (roll 0.41): 0 accepts in 100 calls, failing 1 bucket, working 0",
//! );
//! ```
//!
//! [`BucketReason::next`]: crate::BucketReason::next
//! [`SreBreaker::allow`]: crate::SreBreaker::allow
//! [`Shedder::allow`]: crate::Shedder::allow
//! [`Bucket::take`]: crate::Bucket::take
//! [`Sliding::take`]: crate::Sliding::take
//! [`Sliding::take_n`]: crate::Sliding::take_n
//! [`Period::take`]: crate::Period::take
//! [`Period::take_n`]: crate::Period::take_n
//! [`SharedPeriod::take`]: crate::SharedPeriod::take
//! [`Limits::take`]: crate::Limits::take
//! [`Gate::enter`]: crate::Gate::enter
//! [`SharedGate::enter`]: crate::SharedGate::enter
//! [`Budget::can_retry`]: crate::Budget::can_retry
//! [`SharedBudget::can_retry`]: crate::SharedBudget::can_retry
//! [`Ward::connect`]: crate::Ward::connect
//! [`SreReason`]: crate::SreReason
//! [`BucketReason`]: crate::BucketReason
//! [`BackoffReason`]: crate::BackoffReason
//! [`Ward::checkout`]: crate::Ward::checkout
//! [`Limiter::acquire`]: crate::Limiter::acquire
//! [`Limiter::acquire_as`]: crate::Limiter::acquire_as
