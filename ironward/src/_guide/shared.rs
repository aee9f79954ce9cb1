//! The forms shared across threads, and the one rule for where each lives.
//!
//! Every piece decides on `&mut self`, so one instance serves one thread, or many behind a
//! lock. Eight pieces also come in a form that many threads decide on by `&` at once, each
//! deciding as its piece does (the differences are on the type):
//!
//! | piece | shared form | lives in | stands on |
//! | --- | --- | --- | --- |
//! | [`Bucket`](crate::Bucket) | [`SharedBucket`](crate::SharedBucket) | this crate | one atomic word |
//! | [`Period`](crate::Period) | [`SharedPeriod`](crate::SharedPeriod) | this crate | atomic words |
//! | [`Gate`](crate::Gate) | [`SharedGate`](crate::SharedGate) | this crate | one atomic word |
//! | [`Budget`](crate::Budget) | [`SharedBudget`](crate::SharedBudget) | this crate | one atomic word |
//! | [`SreBreaker`](crate::SreBreaker) | `SharedSreBreaker` | `ironward-tokio` | per-thread stripes, and a `Mutex` off the fast path |
//! | [`ClassicBreaker`](crate::ClassicBreaker) | `SharedClassicBreaker` | `ironward-tokio` | per-thread stripes, and a `Mutex` off the fast path |
//! | [`Shedder`](crate::Shedder) | `SharedShedder` | `ironward-tokio` | per-thread stripes, and a `Mutex` off the fast path |
//! | [`Limiter`](crate::Limiter) | `SharedLimiter` | `ironward-tokio` | a `Mutex`, and wakers for its queue |
//!
//! **The rule:** a shared form lives beside its piece, in the piece's folder of this crate,
//! when its whole state fits atomic words that a compare-and-swap updates, so that it needs
//! nothing beyond `core` and allocates nothing. It lives in `ironward-tokio` when it needs
//! what only `std` has: a `Mutex`, a value per thread, or a task to wake. No shared form is
//! written twice, and none lives in a host crate other than `ironward-tokio`.
//!
//! The core's shared forms are built only where the target has 64-bit atomics
//! (`target_has_atomic = "64"`), and under `--cfg loom` their atomics are the model
//! checker's, so that the models `scripts/test` runs explore the code that ships.
