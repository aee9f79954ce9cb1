//! Clocks: the caller's clock, or Redis's own.
//!
//! [`Options::time`] chooses the clock, per store:
//!
//! - [`Time::Caller`] (the default): the `now` each call passes, as everywhere in ironward.
//!   The fleet must read one clock, the Unix wall clock in practice (`SystemTime` since
//!   the epoch; the layer's default). A process whose clock runs **ahead** moves every key
//!   it touches forward for everyone: a period opened by its reading ends early, refills
//!   and windows see time that has not passed, so the fleet admits early by as much as the
//!   skew, and everyone's `next` runs to what the skewed reading decided. A process whose
//!   clock runs **behind** is read as the latest seen and frees nothing, and its `next`
//!   is counted from its own `now`, so that it waits long enough on its own clock. NTP keeps a fleet within
//!   milliseconds, which is below what a quota of seconds notices.
//! - [`Time::Server`]: the script reads Redis's `TIME` (whole microseconds), and the `now`
//!   passed is used only by the local fallback. Skew between the fleet's clocks is then
//!   irrelevant; what remains is Redis's own clock, and a Redis failover to a replica with
//!   another clock, which the latest-seen rule again turns into "never frees capacity".
//!   Scripts that read `TIME` and then write need effects replication: the default since
//!   Redis 5, and switched on by the scripts for Redis 3.2 and 4. The tests run against the
//!   `redis-server` Debian ships (7.0) and against Valkey 9.1 (see [the scripts](super::scripts), "Servers").
//!
//! The test `tests/clock.rs` shows both with a client whose clock is a minute ahead.
//!
//! [`Options::time`]: crate::Options::time
//! [`Time::Caller`]: crate::Time::Caller
//! [`Time::Server`]: crate::Time::Server
