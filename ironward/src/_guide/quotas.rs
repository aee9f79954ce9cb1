//! Quotas and concurrency: the bucket, the sliding log, the fixed period, the gate, costs per request, several limits at once, and the forms shared across threads.
//!
//! # Limiters
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::{Bucket, Gate, Period, Sliding, Usage};
//!
//! let ms = Duration::from_millis;
//!
//! // 2 tokens a second, bursts of 3; `next` is what a Retry-After is computed from.
//! let mut bucket = Bucket::new(2.0, 3.0, ms(0));
//! assert!((0..3).all(|_| bucket.take(ms(0), 1.0)));
//! assert!(!bucket.take(ms(0), 1.0));
//! assert_eq!(bucket.next(ms(0), 1.0), ms(500));
//!
//! // At most 3 in any 1-second stretch, counted exactly.
//! let mut sliding = Sliding::new(3, Duration::from_secs(1));
//! assert!([0, 100, 200].iter().all(|&t| sliding.take(ms(t))));
//! assert!(!sliding.take(ms(300)));
//! assert_eq!(sliding.next(ms(300)), ms(700));
//!
//! // At most 3 per period; the event that reaches the quota is still admitted.
//! let mut period = Period::new(3, Duration::from_secs(1));
//! let seen: Vec<Usage> = (0..4).map(|t| period.take(ms(t))).collect();
//! assert_eq!(seen, [Usage::Under, Usage::Under, Usage::Hit, Usage::Over]);
//!
//! // A concurrency limit answers at once rather than queueing.
//! let mut gate = Gate::new(1);
//! assert!(gate.enter());
//! assert!(!gate.enter());
//! gate.leave();
//! assert!(gate.enter());
//! ```
//!
//! APIs in front of language models meter tokens, not calls. Every limiter takes a cost
//! (`Bucket::take(now, n)`, `Sliding::take_n`, `Period::take_n`); `reserve` takes an estimate when
//! a request starts and `settle` charges the actual count when it ends (a refund below the
//! estimate, a debt that delays the next admission above it; unsettled by its deadline, the
//! estimate stands). `Limits` decides several limits as one, taking from every one or none:
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::{Limit, Limits, Period, Sliding};
//!
//! let secs = Duration::from_secs;
//! let mut requests = Sliding::new(60, secs(60));
//! let mut tokens = Sliding::new(100_000, secs(60));
//! let mut daily = Period::new(1_000_000, secs(86_400));
//!
//! let reservations = Limits([
//!     Limit::Sliding(&mut requests, 1),
//!     Limit::Sliding(&mut tokens, 4_000),
//!     Limit::Period(&mut daily, 4_000),
//! ])
//! .reserve(secs(0), secs(30))
//! .expect("room in every limit");
//! // The request used 2 500 tokens: 1 500 come back.
//! Limits([
//!     Limit::Sliding(&mut requests, 1),
//!     Limit::Sliding(&mut tokens, 2_500),
//!     Limit::Period(&mut daily, 2_500),
//! ])
//! .settle(reservations, secs(2));
//! assert_eq!(tokens.left(secs(2)), 97_500);
//! ```
//!
//! `SharedGate` is the same gate shared by `&` across threads without a lock (its count and limit
//! in one atomic word, deciding as `Gate` does in the order its swaps land), which is what
//! `ironward-tower`'s `GateLayer` runs on.
//!
//! `SharedBucket` is the token bucket shared by `&` across threads without a lock: its
//! theoretical arrival time in one atomic word, a take one compare-and-swap and a refusal one load
//! that writes nothing. Its clock is fixed point (quarters of a nanosecond for 18 years after it is
//! made), so it decides as `Bucket` does except within a proven slack of a tick a take, and a
//! clock that steps back finds fewer tokens rather than reading as the latest seen.
//!
//! `SharedPeriod` is the fixed-window counter shared by `&` across threads without a lock: the
//! open period's count, a generation and the tag of its terms in one atomic word, its start in one
//! of two slots, a take one compare-and-swap and a refusal loads that write nothing. Its state is
//! integers, so on one thread it decides exactly as `Period` does, `Hit` included; it counts no
//! refusal past the first, and `check_left` answers an admitted take with what is left and when
//! the period ends, from the same swap.
//!
//! A breaker and a shedder keep a rolling window, which no atomic word holds, so their shared forms
//! live in `ironward-tokio`: `SharedSreBreaker` and `SharedShedder` keep the exact core value behind a
//! lock and let the common case through without it. A healthy breaker's call is one load to let
//! in and one add to a per-thread counter to record; a cool server's call is decided from a word
//! the shedder mirrors and recorded the same way. Both decide exactly as their `&mut` twins on one
//! thread, and their docs bound what overlap can change. `ironward-tower`'s layers and
//! `ironward-reqwest`'s breaker run on them; `QuotaLayer` runs on `SharedBucket` and
//! `SharedPeriod`.
//!
//! Every layer reads its clock once per decision (the breaker and the shedder once more when the
//! call ends, where the outcome or the response time is measured). `Clock::coarse(resolution)`
//! makes that read one atomic load of what a ticker thread stores, at the price of readings up to
//! a tick late; the default stays the exact, pausable monotonic clock.
