//! Resilience without I/O: a probabilistic circuit breaker, adaptive load shedding, quotas, a
//! concurrency gate, backoff with jitter, deadlines, rolling windows and HTTP retry decisions.
//!
//! Every decision is a function of what the caller passes in: the clock reading, the random
//! draw, the CPU reading. Nothing here reads a clock, draws a random number, allocates after
//! construction, or performs I/O, so an hour of traffic becomes a loop over `now`, every
//! sequence is reproducible in a test, and the same policy runs in a unit test, a simulator or
//! a server.
//!
//! # The pieces
//!
//! | type | answers | reference |
//! | --- | --- | --- |
//! | [`Breaker`] ([`Sre`]) | whether to call a backend that has been failing | Google SRE book eq. 21-1; go-zero `core/breaker/googlebreaker.go` |
//! | [`Shedder`] ([`Shed`]) | whether this server should take on another call | go-zero `core/load/adaptiveshedder.go` |
//! | [`Bucket`] ([`SharedBucket`]) | whether a call is within a rate at its cost (fractional tokens), and when one would be; a cost reserved now and settled later ([`Reservation`]); shared by `&` across threads without a lock | token bucket; GCRA |
//! | [`Sliding`] | whether it is within a quota over any window-long stretch, at a cost in units (`take_n`), reserved and settled later | exact sliding-window log |
//! | [`Period`] ([`SharedPeriod`]) | the same quota per fixed period, at a cost in units (`take_n`), reserved and settled later; shared by `&` across threads without a lock | go-zero `core/limit/periodlimit.go` |
//! | [`Limits`] ([`Limit`], [`Reservations`]) | whether several limits (requests and tokens, a minute and a day) all admit a request, taking from every one or none | all-or-nothing over the three above |
//! | [`Gate`] ([`SharedGate`]) | whether there is room right now; shared by `&` across threads without a lock | concurrency limit |
//! | [`Limiter`] ([`limit`]) | how many calls may be in flight, following the backend's latency, and who is refused first | Netflix concurrency-limits: `AIMDLimit`, `VegasLimit`, `Gradient2Limit`, `WindowedLimit` |
//! | [`Criticality`] ([`Shares`]) | which calls the shedder and the limiter refuse first under overload | Google SRE book, "Handling Overload" |
//! | [`Backoff`] ([`Jitter`]) | how long to wait before a retry, and whether to retry | gRPC A6; AWS "Exponential Backoff and Jitter" |
//! | [`Budget`] ([`SharedBudget`]) | whether a retry may be made while calls are failing; shared by `&` across threads without a lock | gRPC A6 retry throttling |
//! | [`Ward`] ([`Reconnect`]) | whether a connection pool may open a connection now (a breaker, a bucket and a backoff in front of it), and hand out another | MoonBit `moonward`; gRPC connection backoff |
//! | [`Deadline`] | how much of a time budget is left | go-zero and gRPC timeouts |
//! | [`Window`] ([`Tally`], [`Total`]) | the rolling window under the breaker and the shedder | go-zero `core/collection/rollingwindow.go` |
//! | [`http_retry`] | whether and when to retry a failed HTTP response | RFC 9110 |
//! | [`grpc`] | whether and when to retry or hedge a gRPC call, and the service config's policies | gRPC A6; grpc-go `stream.go`, `service_config.go` |
//!
//! # Time, chance and load are passed in
//!
//! - `now: Duration` is what the caller's monotonic clock reads, as time since the caller's
//!   own epoch (`Instant::now() - start`, or `SystemTime::now() - UNIX_EPOCH` where a period
//!   must line up with calendar time).
//! - `roll` / `random: f64` is a draw from `[0, 1)` that the caller makes.
//! - `cpu: u32` is CPU use in thousandths, 0 to 1000.
//!
//! ```
//! use core::time::Duration;
//! use ironward::{Breaker, SRE};
//!
//! let mut breaker = Breaker::new(SRE, Duration::ZERO);
//! let now = Duration::from_millis(20); // the caller's clock
//! let roll = 0.42; // the caller's draw
//! let permit = breaker.allow(now, roll).expect("a fresh breaker refuses nothing");
//! breaker.pass(permit, now + Duration::from_millis(5));
//! assert_eq!(breaker.ratio(now), 0.0);
//! ```
//!
//! # Why a call was refused
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
//! | [`Breaker::allow`] | `Result<Permit, BreakerReason>` | calls and accepts in the window, the failing and working runs, the decayed `k`, the drop fraction and the draw |
//! | [`Shedder::allow`] | `Result<Ticket, ShedReason>` | the CPU reading, the calls in flight and their average, the capacity, and whether the CPU or an earlier refusal made it hot |
//! | [`Bucket::take`] | `Result<(), BucketReason>` | the tokens held, the cost wanted, the burst and the rate; the wait on asking |
//! | [`Sliding::take`], [`Sliding::take_n`] | `Result<(), QuotaReason>` | the events (units) in the window, the quota, the wait for room |
//! | [`Period::take`], [`Period::take_n`], [`SharedPeriod::take`] | `Result<Quota, QuotaReason>` (`Ok(Under)`, `Ok(Hit)`, or `Err` for `Over`) | the events (units) in the period, the quota, the wait for the next |
//! | [`Limits::take`] | `Result<(), LimitsReason>` | the limit that waits longest, and when all admit |
//! | [`Gate::enter`], [`SharedGate::enter`] | `Result<(), GateReason>` | how many are inside, and the limit |
//! | [`Budget::can_retry`], [`SharedBudget::can_retry`] | `Result<(), BudgetReason>` | the tokens held, and the maximum |
//! | [`Ward::connect`] | `Result<ConnectPermit, Refusal>` | the piece that refused (breaker, bucket or backoff), when to try again, and that piece's reason: [`BreakerReason`], [`BucketReason`] or [`BackoffReason`] (the failures in a row and the wait) |
//! | [`Ward::checkout`] | `Result<Slot, CheckoutRefusal>` | the gate's or the shedder's reason |
//! | [`Limiter::acquire`], [`Limiter::acquire_as`] | `Result<Grant, LimiterReason>` | the calls in flight, the limit in force, the class's room and the floor, and whether a probe was draining |
//!
//! Every reason has public fields, a `Display` that prints it on one line, and implements
//! [`core::error::Error`], so that an edge can log it or return it as the source of its
//! refusal.
//!
//! ```
//! use core::time::Duration;
//! use ironward::{Breaker, SRE};
//!
//! let mut breaker = Breaker::new(SRE, Duration::ZERO);
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
//! # Changing a policy live
//!
//! Every piece that keeps state changes its policy in place with `retune`, keeping its
//! history, so that reloading a configuration neither forgets an outage nor hands out a fresh
//! allowance. Retuning to the policy a piece already has changes nothing.
//!
//! | method | keeps |
//! | --- | --- |
//! | [`Breaker::retune`] | the window's outcomes (moved into one bucket when the bucket count or width changes) and the probe's clock |
//! | [`Shedder::retune`] | the calls in flight, their moving average, the heat, and the windows as far as the bucket width allows |
//! | [`Bucket::retune`] | the tokens, refilled to `now` at the old rate, capped at the new burst |
//! | [`Sliding::retune`] | the events inside the window, the newest `quota` of them |
//! | [`Period::retune`], [`SharedPeriod::retune`] | the open period's start and its count |
//! | [`Gate::retune`], [`SharedGate::retune`] | everyone inside: a lower limit admits nobody until enough leave |
//! | [`Budget::retune`], [`SharedBudget::retune`] | the tokens, capped at the new maximum |
//! | [`Ward::retune`] | the breaker's window, the bucket's tokens, the failures in a row and the wait in force, and a gate's or shedder's holders when the kind stays |
//! | [`Limiter::retune`] | the calls in flight, the limit reached (held to the new bounds), what the algorithm remembers, the open sampling window and the floor |
//!
//! # Edge cases
//!
//! No operation panics, for any input. Where an input is out of range it is read as follows:
//!
//! - **Clocks going backwards.** A `now` earlier than one a piece has already seen is read as
//!   the latest seen; read-only queries use the later of `now` and the latest seen. A clock
//!   that steps back therefore never frees capacity, never measures a negative span, and never
//!   triggers a probe. A [`Window`] reads a `now` before its newest bucket as falling in it; a
//!   [`Deadline`] reads a `now` before its start as no time elapsed. A [`SharedPeriod`] keeps
//!   no latest reading (it would make every refusal write): an earlier `now` counts in the
//!   open period, so it decides as [`Period`] does, and only the wait it reports is counted
//!   from it.
//! - **Huge times.** Times and spans are held in whole nanoseconds as `u64`, which covers about
//!   584 years; a later reading (up to `Duration::MAX`) saturates there, which stops time
//!   rather than wrapping it.
//! - **Draws.** NaN and negative draws read as 0; 1 and above as the largest `f64` below 1.
//! - **CPU readings** over 1000 ‰ read as 1000. A [`Shed::cpu`] threshold of 1000 or more
//!   leaves the overload factor at 1 instead of dividing by zero.
//! - **Sizes and widths.** A window size ([`Window::new`], [`Sre::size`], [`Shed::size`])
//!   is held to 1 ..= 65 536 buckets, so no size panics or aborts on an allocation it could
//!   never make; a bucket width, sliding window or period below 1 ns is raised to 1 ns.
//!   Memory is proportional to the sizes the caller chooses: a [`Window`] allocates its
//!   buckets once, in `new`; a [`Sliding`] log reserves up to 4096 entries in `new` and grows
//!   on demand up to its quota beyond that, one entry per reading that admitted a cost inside the
//!   window.
//! - **Policy constants** follow one rule: a constant outside its meaningful range is read as
//!   the nearest value in range, and NaN as the value at which it does least (the one that
//!   refuses least). The ranges, and what NaN is read as:
//!
//!   | constant | range | NaN is | so a NaN |
//!   | --- | --- | --- | --- |
//!   | [`Sre::k`], [`Sre::floor`], [`Sre::protection`] | 0 to infinity | infinity | lets every call through: an infinite one turns the throttle off |
//!   | [`Shed::beta`] | 0 to 1 | 1 | never sheds: the average in flight stays 0 |
//!   | [`Shed::floor`] | 0 to 1 | 1 | keeps the whole capacity however hot the CPU |
//!   | [`Backoff::factor`] | 1 to infinity | 1 | never grows the delay |
//!   | [`Jitter::Spread`] | 0 to 1 | 0 | adds no jitter |
//!   | [`Shares`]' fields | 0 to 1 | 1 | gives the class the whole capacity |
//!   | [`limit::Aimd`]'s `backoff` | 0.5 to 1 | 1 | never lowers the limit on a drop |
//!   | `smoothing` of [`limit::Vegas`] and [`limit::Gradient2`] | 0 to 1 | 0 | freezes the limit |
//!   | [`limit::Gradient2`]'s `tolerance` | 1 to infinity | infinity | never reads a latency as a queue |
//!   | [`limit::Decrease`]'s `Ratio` | 0 to 1 | 1 | never lowers the limit |
//!   | [`limit::Latency`]'s `Percentile` | 0 to 1 | 0 | samples the fastest call |
//!
//!   A negative breaker constant is therefore 0, a shedder fraction past 1 is 1, and so on.
//!   [`Breaker::ratio`] always lies in `[0, 1]` and is what [`Breaker::allow`] decides by: a
//!   ratio of 0 lets every draw through. The rule is for the policy records' float fields;
//!   a limiter's own arguments are amounts it hands out, and a bad one hands out nothing
//!   (the next two items).
//! - **Rates and amounts.** A [`Bucket`] with a non-finite or negative rate never refills; a
//!   NaN or sub-1 burst is 1; a non-finite or negative amount is refused with a `next` of
//!   `Duration::MAX`, as is an amount over the burst. A quota of 0 refuses every cost above 0.
//! - **Retry budgets.** A [`Budget`] holds 1 to 1000 tokens and truncates its token ratio to
//!   three decimal places, as gRPC A6 says; a ratio that is NaN, negative or truncates to 0
//!   gives no token back, so retries stop once failures have spent half the budget.
//! - **Backoff.** Every delay saturates at `Duration::MAX`. Retry 0 is read as 1.
//! - **Wards.** A [`Ward`]'s failures in a row saturate at `u32::MAX`, and the end of its
//!   wait at the clock's end (it then refuses until then). Its bucket reads the rate and
//!   burst as a [`Bucket`] does (a rate of 0 lets `burst` connects through, then none); a
//!   trial connect dropped unsettled stops holding the others back once the backoff's cap
//!   has passed. The backoff's `attempts` is not read: a pool never stops reconnecting.
//! - **Concurrency limits.** A limit, `min` or `initial` of 0 is read as 1 and a `min` above
//!   `max` as `max`, so a [`Limiter`] always admits one call at a time; a
//!   [`limit::Sampling`] `size` of 0 is 1. A class's room is its share of the limit,
//!   truncated, so a share under `1 / limit` admits none of that class.
//! - **Tokens settled elsewhere.** A [`Grant`], [`Permit`], [`Ticket`], [`Reservation`],
//!   [`ConnectPermit`] or [`Slot`] settled on an instance other than the one that made it (a
//!   clone is another instance) changes nothing there: the settle hands it back as `Some`,
//!   where its own token answers `None`, and the limiter, breaker, shedder or ward counts it
//!   (`foreign`). One `u32` compare, in release builds as in debug ones.
//! - **Counts** ([`Tally`], [`Total`], calls in flight, a [`Period`]'s count) saturate; a
//!   [`QuotaReason::count`] past `u32::MAX` reads as `u32::MAX`.
//! - **Rounding.** Float results round to the nearest nanosecond, except [`Bucket::next`],
//!   which rounds up so that a take at `now + next` succeeds.
//!
//! [`http_retry`] documents its own bounds: it validates its settings and input and answers
//! `Stop(InvalidSettings)` or `Stop(InvalidInput)` rather than guessing.
//!
//! # Features
//!
//! - `serde` (off by default): `Serialize` and `Deserialize` for the policy records
//!   ([`Sre`], [`Shed`], [`Shares`], [`Criticality`], [`Backoff`], [`Jitter`],
//!   [`Reconnect`], [`Checkouts`], [`Adaptive`] and the limit module's [`limit::Algorithm`], [`limit::Aimd`],
//!   [`limit::Vegas`], [`limit::Gradient2`], [`limit::Step`], [`limit::Decrease`],
//!   [`limit::Sampling`] and [`limit::Latency`], [`http_retry::Settings`]), with durations
//!   as humane strings such as `"100ms"` or `"10s"`.

#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod backoff;
mod breaker;
mod bucket;
mod budget;
pub mod clock;
mod constant;
mod criticality;
mod deadline;
mod extremes;
mod float;
mod gate;
#[cfg(feature = "serde")]
mod humane;
pub mod limit;
mod limits;
#[cfg(target_has_atomic = "64")]
mod line;
#[cfg(doctest)]
mod must_use;
mod owner;
mod period;
mod reason;
mod reservation;
mod shedder;
mod sliding;
mod splitmix;
#[cfg(target_has_atomic = "64")]
mod sync;
mod tally;
#[cfg(test)]
mod walk;
mod ward;
mod window;

pub use backoff::{BACKOFF, Backoff, Jitter};
pub use breaker::{Breaker, Permit, SRE, Sre};
pub use bucket::Bucket;
#[cfg(target_has_atomic = "64")]
pub use bucket::SharedBucket;
pub use budget::Budget;
#[cfg(target_has_atomic = "64")]
pub use budget::SharedBudget;
pub use criticality::{Criticality, SHARES, Shares, UnknownCriticality};
pub use deadline::Deadline;
pub use gate::Gate;
#[cfg(target_has_atomic = "64")]
pub use gate::SharedGate;
pub use limit::{ADAPTIVE, Adaptive, Grant, Limiter, LimiterReason, Settle};
pub use limits::{Limit, Limits, LimitsReason, Reservations};
pub use period::{Period, Quota};
#[cfg(target_has_atomic = "64")]
pub use period::{PeriodLeft, SharedPeriod};
pub use reason::{BreakerReason, BucketReason, BudgetReason, GateReason, QuotaReason, ShedReason};
pub use reservation::Reservation;
pub use shedder::{SHED, Shed, Shedder, Ticket};
pub use sliding::Sliding;
pub use splitmix::SplitMix64;
pub use tally::{Outcome, Tally, Total};
pub use ward::{
    BackoffReason, CheckoutRefusal, Checkouts, ConnectPermit, Piece, RECONNECT, Reconnect, Refusal,
    Slot, Ward,
};
pub use window::Window;

pub mod grpc;
pub mod http_retry;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
