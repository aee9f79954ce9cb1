//! Batches: decisions that wait together go to Redis as one call.
//!
//! Decisions that wait on one connection at the same moment go to Redis together, as one
//! `EVALSHA` of `batch.lua`, which runs each in the order they came, with its own keys and
//! arguments and the same script text it would run alone, and replies to each. Redis runs
//! the whole call atomically, so the decisions run one after another with nothing between
//! them: exactly what sending them one by one in that order would have decided, each still
//! atomic. What a batch saves is the call around each decision (the command parsed, the
//! script looked up, its arguments made into Lua tables, its reply written), which on
//! Redis 7 costs about as much as a short script's body (see `BENCHMARKS.md`, "Redis").
//!
//! - **What goes together.** The first call to find no batch forming schedules one, a task
//!   spawned on the caller's runtime, and every call queued on the store before that task
//!   runs goes with it. Nothing waits for a batch to fill: a lone call is a batch of one,
//!   later than it would be sent alone by one task hop, and a batch forms only from calls
//!   that were already waiting (many callers pipelined on one connection, tasks woken
//!   together by the replies of the last batch). On a multi-threaded runtime an idle worker
//!   runs the task at once, so batches are small until the workers are busy.
//! - **The bound.** At most 64 decisions a batch; more waiting at once go in several,
//!   sent together and in flight at once, in the order they came.
//! - **Failures.** An error about the whole call (a connection dropped, an error reply
//!   about the server) is each of its callers', exactly as it would have been of a call of
//!   its own, and fails the store over once; `NOSCRIPT` loads the script and sends the
//!   batch once more. An error about one decision's key (`WRONGTYPE`, `OOM`) is caught by
//!   `batch.lua` and answers that caller alone, with [`StoreError::Key`]; the decisions after
//!   it still run. Each caller keeps its own [`Options::timeout`]: a caller that gives up
//!   (a timeout, a drop) leaves the batch to run for the others.
//! - **A cluster.** On [`Store::connect_cluster`] every call is a batch of one, sent at
//!   once: one call may only touch one slot, and decisions that wait together are most
//!   often for keys of different slots.
//! - **Observable.** [`Stats::batches`] counts the calls sent, beside [`Stats::redis`], the
//!   decisions Redis answered; with the `metrics` feature, `ironward.redis.batch.size`
//!   records each batch's number of decisions (see [metrics](super::metrics)).
//!
//! A reply that is a list of numbers only comes back packed into one string of doubles
//! that the store reads back as the integers Redis would have made of them: Redis writes
//! one string in a fraction of the time it writes an array of integers.
//!
//! [`StoreError::Key`]: crate::StoreError::Key
//! [`Options::timeout`]: crate::Options::timeout
//! [`Store::connect_cluster`]: crate::Store::connect_cluster
//! [`Stats::batches`]: crate::Stats::batches
//! [`Stats::redis`]: crate::Stats::redis
