//! The decisions one at a time: what each piece answers and how, with an example.
//!
//! # SreBreaker
//!
//! The SRE breaker has no open, half-open and closed (the [`ClassicBreaker`](crate::ClassicBreaker)
//! has them, and its module says when to pick which). It keeps ten seconds of outcomes and refuses
//! each call with a probability that grows with the failures, so a struggling backend keeps
//! receiving what it can still serve instead of being cut off and then flooded again on recovery.
//! A refused call is recorded too, so a refusing breaker never reads back as idle; after a second
//! with nothing let through, one call goes through as a probe.
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::{SreBreaker, SRE};
//!
//! let ms = Duration::from_millis;
//! let mut breaker = SreBreaker::new(SRE, ms(0));
//! for _ in 0..100 {
//!     let permit = breaker.allow(ms(0), 0.99).expect("a healthy window lets calls through");
//!     breaker.fail(permit, ms(0));
//! }
//! // 100 failures and no successes: (100 − 5) / 101 of calls are refused.
//! assert_eq!(breaker.ratio(ms(100)), 0.9405940594059405);
//! assert!(breaker.allow(ms(100), 0.5).is_none());
//! ```
//!
//! # Shedder
//!
//! A call is refused only when the server is both hot (CPU at or over [`Shed::cpu`], or recently so and
//! already refusing) and full (more calls in flight, on average and right now, than the server has
//! shown it can finish). A CPU spike with nothing queued refuses nothing, and neither does a queue
//! on an idle CPU. The busiest and the fastest buckets are kept as the window rolls (go-zero scans
//! them on every call), so a decision costs the same however many buckets the window has.
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::{Shedder, SHED};
//!
//! let ms = Duration::from_millis;
//! let mut shedder = Shedder::new(SHED, ms(0));
//! let ticket = shedder.allow(ms(0), 990).expect("hot, but nothing is in flight");
//! shedder.pass(ticket, ms(25)); // the response time counts towards capacity
//! assert_eq!(shedder.flying(), 0);
//! ```
//!
//! # Adaptive concurrency limit
//!
//! A breaker decides on failures and a shedder on this server's CPU; a backend that slows down
//! without failing needs a limit on calls in flight that follows its latency. The `Limiter`
//! counts calls in flight against a limit that an algorithm moves once per sampling window,
//! from the average or a percentile of the window's latencies: by default `Little`, which
//! jumps to Little's-law estimate of the backend's concurrency and comes within 2× of it in
//! 10 s from any start in the simulator's convergence scenarios, or one of Netflix
//! concurrency-limits' (`Aimd`, `Vegas`, `Gradient2`, each reproducing the reference's own
//! unit-test vectors and agreeing with a transliteration of it on every update), or
//! failsafe-go's (`Failsafe`, reproducing its vectors). No latency
//! alone tells a backend that has slowed for good from a queue, so the limiter drains now and
//! then, for one window, and takes that window's latency as the latency with no queue (BBR's
//! `ProbeRTT`; `probe = 0` decides exactly as Netflix): Little's first probe, at once, admits
//! one call at a time; the others halve the limit every 10 s, at the price of a little of a
//! saturated backend's throughput while it drains. Callers choose a
//! `Criticality` per call (the SRE book's `CriticalPlus`, `Critical`, `SheddableConcurrent`,
//! `Sheddable`): each class may fill a share of the limit, and after a class is refused the less
//! critical ones are refused for a cooling time, so the sheddable go first. The shedder admits
//! by the same rule (`Shedder::check_as`). When the classes are tenants or kinds of work that
//! must each make progress rather than priorities, `Adaptive::partitions` reserves each a part
//! of the limit instead (Netflix's partitioned limiter): a class borrows what the others leave
//! unused and gets its part back when it returns. A call that must never be refused (a health
//! check) is let in uncounted by `Limiter::acquire_bypass`. A decision allocates nothing and costs the same
//! however many calls a window holds.
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::{Adaptive, Criticality, Limiter, Settle, ADAPTIVE};
//!
//! let ms = Duration::from_millis;
//! // The default first measures the backend with one call in flight; without its probe, the
//! // limit is 20 from the first call.
//! let mut limiter = Limiter::new(Adaptive { probe: Duration::ZERO, ..ADAPTIVE }, ms(0));
//! let grant = limiter.acquire(ms(0)).expect("room");          // a critical call
//! let batch = limiter.acquire_as(ms(1), Criticality::Sheddable).expect("room for half the limit");
//! limiter.settle(grant, Settle::Success, ms(40));              // its latency is sampled
//! limiter.settle(batch, Settle::Dropped, ms(1_000));           // timed out: a sign of overload
//! assert_eq!(limiter.flying(), 0);
//! ```
//!
//! # Backoff
//!
//! The preset is gRPC A6's schedule (100 ms doubling to 1 s, spread by a fifth either way) with
//! the AWS SDKs' three attempts. `Full`, `Equal` and `Decorrelated` jitter are the strategies of
//! AWS's "Exponential Backoff and Jitter".
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::{Backoff, Jitter, BACKOFF};
//!
//! let ms = Duration::from_millis;
//! assert_eq!(BACKOFF.ceiling(1), ms(100));
//! assert_eq!(BACKOFF.ceiling(2), ms(200));
//! // A draw of 0.5 is the middle of the ±20% spread.
//! assert_eq!(BACKOFF.delay(2, 0.5, None), ms(200));
//! assert!(BACKOFF.more(2) && !BACKOFF.more(3));
//!
//! let full = Backoff { jitter: Jitter::Full, attempts: 4, ..BACKOFF };
//! assert_eq!(full.schedule(&[0.5, 0.5, 0.5]), [ms(50), ms(100), ms(200)]);
//! ```
//!
//! A whole retry loop around any operation, with a time budget and its reserve, the time each
//! attempt may take, a server's wait, a retry budget and a record of the call, is
//! [`retry::Engine`](crate::retry::Engine) over this backoff: the loop asks it before each
//! attempt and tells it how each ended.
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::retry::{Cause, Engine, Failure, Next, Rules};
//! use ironward::BACKOFF;
//!
//! let ms = Duration::from_millis;
//! let mut engine = Engine::new(Rules { total_budget: ms(1_000), ..Rules::new(BACKOFF) }, ms(0));
//! let mut now = ms(0);
//! let stop = loop {
//!     if let Err(stop) = engine.attempt(now, None) { break stop }
//!     now += ms(20); // the attempt, which fails
//!     match engine.failed(Failure::retryable(now, 0.5), None) {
//!         Next::Wait(wait) => now += wait,
//!         Next::Stop(stop) => break stop,
//!     }
//! };
//! // Three attempts, the preset's; waits of 100 and 200 ms at a draw of 0.5.
//! assert_eq!(stop, Cause::AttemptsExhausted);
//! assert_eq!((engine.retried().attempts, engine.retried().waited), (3, ms(300)));
//! ```
//!
//! # Ward
//!
//! A pool's connects, decided by the core's own pieces: after a failed connect none until the
//! backoff's wait has passed (one trial at a time while failing), at most the bucket's burst at
//! once and its rate a second, and the breaker over the connects and the pool's checks of its
//! connections. `ironward-pool` puts it in front of deadpool and bb8.
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::{RECONNECT, Ward, WardPiece};
//!
//! let ms = Duration::from_millis;
//! let mut ward = Ward::new(RECONNECT, ms(0));
//! let permit = ward.connect(ms(0), 0.5).expect("a fresh ward refuses nothing");
//! ward.failed(permit, ms(2), 0.5); // connection refused
//! let refusal = ward.connect(ms(10), 0.5).expect_err("inside the 250 ms wait");
//! assert_eq!((refusal.piece(), refusal.next()), (WardPiece::Backoff, ms(242)));
//! let trial = ward.connect(ms(252), 0.5).expect("the wait has passed");
//! ward.connected(trial, ms(253)); // back: the failures are forgotten
//! assert!(!ward.is_failing());
//! ```
//!
//! # Deadline
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::Deadline;
//!
//! let s = Duration::from_secs;
//! let deadline = Deadline::start(s(2), s(10));
//! assert_eq!(deadline.remaining(s(11)), Some(s(1)));
//! assert!(deadline.expired(s(12)));
//! // A zero budget is how go-zero and gRPC spell "no timeout".
//! assert_eq!(Deadline::start(s(0), s(0)).remaining(s(99)), None);
//! ```
//!
//! # Window
//!
//! The rolling window under the breaker and the shedder; any `Default` type can be a bucket.
//! Writing at a later `now` clears what the gap swept past; reading never changes anything.
//!
//! ```rust
//! use std::time::Duration;
//! use ironward::Window;
//!
//! let ms = Duration::from_millis;
//! let mut window = Window::<u64>::new(3, ms(300), ms(0));
//! *window.slot(ms(0)) += 1;
//! *window.slot(ms(150)) += 2;
//! let mut sum = 0;
//! window.each(ms(150), |b| sum += b);
//! assert_eq!(sum, 3);
//! ```
//!
//! [`Shed::cpu`]: crate::Shed::cpu
