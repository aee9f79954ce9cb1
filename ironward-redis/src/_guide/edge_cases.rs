//! Edge cases: how out-of-range parameters and inputs are read.
//!
//! Nothing panics. Parameters are read as the core reads them (a negative, NaN or infinite
//! rate is 0, a burst below 1 is 1, a period or window below 1 µs is 1 µs, a quota of 0
//! refuses everything); a `take_n` of 0 units passes and takes nothing, and one above the
//! quota (up to `u32::MAX`) is refused with a `next` of `Duration::MAX`, as in the core;
//! times and spans saturate at 2^53 µs; a bucket's cost that is negative, NaN or infinite is refused after the refill, as the core refuses it; an infinite burst admits
//! every finite cost without asking Redis. A reservation's deadline is its reading plus
//! its time-out in whole microseconds, rounded down (a time-out of 0 settles at the same
//! reading only), at most 2^53 µs; a settle past it, of a reservation another limiter made,
//! or (a bucket's) at an actual cost that is negative, NaN or infinite, changes nothing.
//! A bucket's debt keeps its keys until the refill would have paid it, twice over (at most
//! 2^44 ms), so that an expiry never forgives it. A call that timed out may still have been
//! counted by its script, as a request counts when Redis counts it. An empty limiter name is `"ironward"`. A share
//! outside `[0, 1]` is clamped (NaN is 0), and one that comes to less than a call needs
//! refuses every call rather than round up. A fallback limiter that never becomes fresh (a
//! bucket of rate 0) is never forgotten, whatever the clock reads. A lock poisoned by a panic elsewhere still holds
//! valid limiters.
