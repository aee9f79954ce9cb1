//! Failover, and its bounds: what a store does while Redis is away, and how much it can admit.
//!
//! As go-zero's `TokenLimiter` does (`core/limit/tokenlimit.go`), with one [`Store`] per
//! connection:
//!
//! - **A server error fails over.** A connection refused or dropped, or an error reply
//!   about the server's health (`LOADING`, `READONLY`, `MASTERDOWN`, `BUSY`, `MISCONF`,
//!   and any code not listed below), switches the store to [`Source::Local`]: that call and
//!   every later one are answered by the limiter's local fallback, an `ironward` core
//!   limiter per key with [`Options::share`] of the quota, on the `now` passed. A
//!   background task sends `PING` (`CLUSTER INFO` to a cluster) every [`Options::probe`]
//!   (100 ms); when Redis answers (a cluster: `cluster_state:ok`), the store switches back
//!   to [`Source::Redis`]. With [`Store::connect`]'s reconnection, a Redis that comes back
//!   is found within two probe intervals.
//! - **An error about one key is that key's.** `WRONGTYPE` (another program's data under
//!   the limiter's keys), `OOM` (Redis at `maxmemory` under `noeviction`) and `NOPERM`
//!   (an ACL) refuse that call with [`StoreError::Key`] and fail nothing over: the server is
//!   healthy, its next `PING` would succeed, and the store would flap between Redis and
//!   the fallback, handing every other key the fallback's share.
//! - **A timeout is a refusal**, by default. A call that Redis does not answer within
//!   [`Options::timeout`] is [`StoreError::Timeout`], and the store stays on Redis; a call the
//!   caller drops is cancelled. A slow Redis is still the fleet's quota, and failing over
//!   on it would hand every process its own. With [`OnTimeout::Fallback`] the call is
//!   answered by the fallback instead (fail open, as far as the share goes), and the store
//!   still stays on Redis. Either way watch [`Stats::timeouts`].
//! - **A wrong address fails at start.** [`Store::connect`] connects at once and fails if
//!   Redis cannot be reached, unless [`Options::start_local`] asks to start on the
//!   fallback. Such a store connects on its first call and says [`Source::Local`] until
//!   Redis answers one (its calls still go to Redis); the first call that fails fails
//!   over.
//! - **Observable.** [`Store::source`] and [`Store::stats`] (answers by source, timeouts,
//!   key errors, failovers, recoveries, eviction warnings); a `WARN` event at each failover
//!   and when the store first reaches a Redis with an evicting policy, an `INFO` at each
//!   return, an `ERROR` at each key error; with the `metrics` feature, the decisions by source and reason, the
//!   failovers, the time on the fallback and each round trip's (see [metrics](super::metrics)).
//!
//! **The fallback's bound, per key.** The fallback never admits more than its share:
//! a period's and a window's `⌊share · Q⌋` events (a share below one event refuses every
//! event), a bucket's `share · burst` tokens at once and `share · rate` a second (a share
//! of the burst below one token refuses every positive cost: a core bucket holds at least
//! one). That holds however many keys pass through it: a key is forgotten from its table
//! of [`Options::local_keys`] only once its limiter is as good as new (idle for the
//! core's `idle()`), and keys that find the table full of limiters still counting share
//! one overflow limiter, so that each of them (and all of them together) is held to one
//! key's share; a key that later finds room starts from a copy of the overflow's state.
//! Past `local_keys` busy keys, the price is that keys share one budget and are refused
//! early, never that a key is admitted twice.
//!
//! **The fleet's bound.** For a fleet of `N` processes and a quota `Q` per window: while
//! Redis is away, each process admits what its own fallback admits, at most `⌊share · Q⌋`
//! per window per key, so the fleet admits at most `N · ⌊share · Q⌋`; with `share = 1/N`
//! it keeps the quota. The default share is 0: a fleet that prefers serving to refusing
//! during an outage says how large it is. The fallback keeps its state across outages (a
//! key it has spent stays spent), and Redis keeps its own: what was counted before the
//! outage still counts after, unless Redis lost its data (a restart without persistence
//! starts every key afresh). A request in flight when Redis fails may have been counted
//! by both. The test `tests/fault.rs` kills `redis-server` mid-load and counts exactly `Q`
//! admitted before the kill, `⌊share · Q⌋` during the outage and `Q` after the restart
//! (its server keeps no data), the bound `2 · Q + ⌊share · Q⌋` for one process.
//!
//! **A cluster master lost.** On [`Store::connect_cluster`], a dead master's slots refuse
//! until the cluster promotes its replica (about twice `cluster-node-timeout`); the calls
//! that reach them fail the whole store over, and the store comes back once the cluster
//! says `cluster_state:ok` (its probe is `CLUSTER INFO`, not `PING`). Until the cluster has
//! marked the master as failed it still says it is ok, so in that first
//! `cluster-node-timeout` the store may come back and fail over again, once per probe
//! interval, each time counted and logged. Per key, the bound is the one above plus the
//! writes the replica had not received when its master died (replication is
//! asynchronous: Redis Cluster's documented window of lost writes), which count again.
//! The test `tests/cluster.rs` starts a three-master cluster with a replica each, kills
//! a master under load from eight tasks and checks, per key, that Redis admitted at most
//! `Q` plus the writes lost (read back from the promoted replica) and the fallback at most
//! `⌊share · Q⌋`.
//!
//! [`Store`]: crate::Store
//! [`Source::Local`]: crate::Source::Local
//! [`Options::share`]: crate::Options::share
//! [`Options::probe`]: crate::Options::probe
//! [`Source::Redis`]: crate::Source::Redis
//! [`Store::connect`]: crate::Store::connect
//! [`StoreError::Key`]: crate::StoreError::Key
//! [`Options::timeout`]: crate::Options::timeout
//! [`StoreError::Timeout`]: crate::StoreError::Timeout
//! [`OnTimeout::Fallback`]: crate::OnTimeout::Fallback
//! [`Stats::timeouts`]: crate::Stats::timeouts
//! [`Options::start_local`]: crate::Options::start_local
//! [`Store::source`]: crate::Store::source
//! [`Store::stats`]: crate::Store::stats
//! [`Options::local_keys`]: crate::Options::local_keys
//! [`Store::connect_cluster`]: crate::Store::connect_cluster
