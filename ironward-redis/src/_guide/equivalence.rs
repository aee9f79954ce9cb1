//! Equivalence: each limiter answers exactly as the in-memory `ironward` type does.
//!
//! A limiter here answers exactly as the `ironward` type does, for every sequence of calls
//! on one key (the property tests in `tests/equivalence.rs` check it against a real
//! server), once time is read as the scripts read it:
//!
//! - **Time is whole microseconds.** Lua's numbers are doubles, exact for integers below
//!   2^53: nanoseconds since the Unix epoch are past that, microseconds are not (until the
//!   year 2255). `now` is rounded up to the next whole microsecond (so waiting `next` and
//!   taking again succeeds), a period or window is rounded up likewise, and times saturate
//!   at 2^53 µs. The answers are the core's fed those readings, and `next` is counted from
//!   the `now` passed (where the core counts from the latest reading seen, which is later
//!   when a clock stepped back: the wait here is then longer by the step, so that a
//!   caller waiting on its own clock is not refused again), in Redis and on the fallback
//!   alike; for whole-microsecond readings and spans they are the core's, exactly.
//! - **Floats are the core's, bit for bit.** Nothing is rounded here: a bucket's refill is
//!   `min(burst, tokens + rate · elapsed_ns / 1e9)` in IEEE doubles in both, in the same
//!   order, with `elapsed_ns` the elapsed microseconds times 1000 (exact below 2^53, and
//!   rounded above it as the core's `u64 as f64` rounds). Floats travel as text that reads
//!   back to the same double: the shortest round-trip decimal from Rust, `"%.17g"` from
//!   Lua, each read by a correctly rounded `strtod`. `next` is then the core's search for
//!   the first whole nanosecond at which a take succeeds, run here on the tokens the
//!   script returns.
//!
//! The core's edge semantics hold in Redis, for the whole fleet: a `now` earlier than the
//! latest seen on that key is read as the latest seen (the latest is kept beside the state,
//! a key of its own or, for a period, packed with it, so a clock that steps back never
//! frees capacity); a bucket starts full at its key's first
//! take; a log holds at most `quota` entries; a period opens at the first event after the
//! last one closed, or aligned. Two differences: a key that has expired has forgotten its
//! latest reading (it can only expire once the limiter is as good as new, so this matters
//! only to a clock that steps back by more than a TTL), and a key with no state is a fresh
//! limiter made at its first take, as a keyed layer makes one.
