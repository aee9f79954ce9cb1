//! [`Store`]: the connection every limiter shares, its per-call timeout, the clock the
//! scripts read, and the failover to local limiters while Redis is away.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::{Client, IntoConnectionInfo, RedisResult, Value};

use crate::batch::{Batches, Call};
use crate::conn::Conn;
use crate::meter::{Meter, Stopwatch, StoreMeter};
use crate::{Error, script};

/// How a [`Store`] talks to Redis and what it does when Redis is away.
///
/// A plain record: change it with `..Options::default()`.
///
/// # Default
///
/// [`OPTIONS`]:
///
/// | field | value | why |
/// | --- | --- | --- |
/// | `timeout` | 100 ms | a decision is one round trip (about 50 µs on loopback, a millisecond across a data centre); one that takes a hundred times that is refused rather than left to hold the request up |
/// | `time` | [`Time::Caller`] | the clock is passed in, as everywhere in ironward |
/// | `probe` | 100 ms | go-zero's `pingInterval` (`core/limit/tokenlimit.go`) |
/// | `share` | 0.0 | a store cannot know how many processes share a quota, and any share above `1/N` lets a fleet of `N` admit more than the quota while Redis is away (go-zero's whole rate per process admits `N` times it); so by default the fallback refuses, and a fleet that prefers to serve sets `1/N` (see the crate docs, "Failover, and its bounds") |
/// | `local_keys` | 10 000 | the keys one limiter's fallback holds; a key is forgotten only once its limiter is as good as new, and the keys that find no room share one overflow limiter |
/// | `on_timeout` | [`OnTimeout::Refuse`] | a slow Redis is still the fleet's quota: refusing keeps its word, where answering from the fallback hands out the share as well |
/// | `blocked_keys` | 10 000 | a hot key over its quota is refused from memory until it could pass, and costs Redis nothing; ten thousand keys of a few dozen bytes each is about a megabyte a limiter |
/// | `start_local` | `false` | a Redis that cannot be reached at start is most often a wrong address, and a store that started on its fallback would quietly turn a fleet quota into per-process ones |
///
/// For go-zero's behaviour (each process answers with the whole quota while Redis is away,
/// and starts without it), set `share: 1.0` and `start_local: true`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_redis::{Options, Time};
///
/// // A fleet of four that reads Redis's clock and splits the quota four ways while Redis
/// // is away.
/// let options = Options { time: Time::Server, share: 0.25, ..Options::default() };
/// assert_eq!(options.timeout, Duration::from_millis(100));
/// assert_eq!(Options::default().share, 0.0);
/// assert_eq!(options.probe, Duration::from_millis(100));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// How long one call to Redis may take; past it the call is refused
    /// ([`Error::Timeout`]) and the store stays on Redis.
    pub timeout: Duration,
    /// Which clock the scripts read.
    pub time: Time,
    /// How often a store that has failed over sends Redis a `PING` (at least 1 ms).
    pub probe: Duration,
    /// The share of each quota the local fallback admits, from 0 to 1: a period's and a
    /// window's quota (rounded down), a bucket's rate and burst. NaN and negatives are 0,
    /// above 1 is 1. A share that comes to less than what one call needs refuses every
    /// call, with the probe interval as its `next`, and makes no core limiter: 0, a
    /// period's or a window's share below one event (`share · quota < 1`), a bucket's share
    /// of the burst below one token (a core bucket holds at least one token, which would be
    /// more than the share; costs of zero still pass). So the fallback never admits more
    /// than `share` of a quota.
    pub share: f64,
    /// How many keys each limiter's local fallback holds (at least 1). A key is forgotten
    /// only once its limiter is as good as new (idle for the core's `idle()`); keys that
    /// find the table full of limiters still counting share one overflow limiter, so each
    /// is still held to one key's share (see the crate docs, "Failover, and its bounds").
    pub local_keys: usize,
    /// What a call Redis does not answer within [`timeout`](Options::timeout) comes to.
    pub on_timeout: OnTimeout,
    /// Whether [`Store::connect`] returns a store while Redis cannot be reached, to start
    /// on the local fallback (`true`), or fails (`false`, the default).
    pub start_local: bool,
    /// How many refused keys each limiter remembers, to refuse them again without a round
    /// trip until they could pass (0: none). A refusal says when the key could pass, and
    /// nothing another process does brings that sooner, so a later call for the key of the same
    /// cost is refused from memory until then, and what is admitted is the same;
    /// the least recently refused key is forgotten past this many. Such answers are counted
    /// in [`Stats::blocked`]. Only on the caller's clock ([`Time::Caller`]): on Redis's,
    /// the caller's `now` says nothing of when a key could pass, and nothing is kept.
    pub blocked_keys: usize,
}

/// The reference options: [`Options`]' `# Default`.
///
/// # Examples
///
/// ```
/// use ironward_redis::{OPTIONS, Options};
///
/// assert_eq!(OPTIONS, Options::default());
/// assert_eq!((OPTIONS.share, OPTIONS.local_keys), (0.0, 10_000));
/// assert!(!OPTIONS.start_local);
/// ```
pub const OPTIONS: Options = Options {
    timeout: Duration::from_millis(100),
    time: Time::Caller,
    probe: Duration::from_millis(100),
    share: 0.0,
    local_keys: 10_000,
    on_timeout: OnTimeout::Refuse,
    start_local: false,
    blocked_keys: 10_000,
};

impl Default for Options {
    fn default() -> Self {
        OPTIONS
    }
}

impl Options {
    /// [`share`](Options::share) as read: NaN and negatives 0, above 1 is 1.
    pub(crate) fn local_share(&self) -> f64 {
        if self.share >= 1.0 {
            1.0
        } else if self.share > 0.0 {
            self.share
        } else {
            0.0
        }
    }
}

/// What a call that Redis does not answer in time comes to: fail closed or fail open.
///
/// Either way the store stays on Redis (a slow Redis is not a failed one) and the call is
/// counted in [`Stats::timeouts`].
///
/// # Examples
///
/// ```
/// use ironward_redis::{OnTimeout, Options};
///
/// assert_eq!(Options::default().on_timeout, OnTimeout::Refuse);
/// // Fail open, with a fleet of four splitting the quota.
/// let open = Options { on_timeout: OnTimeout::Fallback, share: 0.25, ..Options::default() };
/// assert_eq!(open.on_timeout, OnTimeout::Fallback);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnTimeout {
    /// Fail closed: the call is refused with [`Error::Timeout`], as go-zero's limiters
    /// refuse on a deadline. The script may still have run and counted the event.
    #[default]
    Refuse,
    /// Fail open, as far as the share goes: the call is answered by the limiter's local
    /// fallback (its [`Answer`](crate::Answer)'s mode is [`Mode::Local`]), which admits
    /// at most [`Options::share`] of the quota. With a share of 0 this refuses too.
    Fallback,
}

/// Which clock a decision is taken on.
///
/// # Examples
///
/// ```
/// use ironward_redis::Time;
///
/// assert_eq!(Time::default(), Time::Caller);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Time {
    /// The `now` each call passes, rounded up to whole microseconds. Every process of the
    /// fleet must then read the same clock, the Unix wall clock in practice: a process
    /// whose clock runs ahead moves every key it touches forward for the whole fleet, and
    /// one whose clock runs behind is read as the latest time seen (see the crate docs,
    /// "Clocks").
    #[default]
    Caller,
    /// Redis's own clock (`TIME`, whole microseconds), read inside the script, so that the
    /// fleet's clocks may drift apart. The `now` passed is then used by the local fallback
    /// alone. Needs Redis 3.2 or later (effects replication, the default from 5.0).
    Server,
}

/// Which store answered a decision, and which one a [`Store`] is on.
///
/// # Examples
///
/// ```
/// use ironward_redis::Mode;
///
/// assert_ne!(Mode::Redis, Mode::Local);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Redis answered: the quota is the fleet's.
    Redis,
    /// Redis failed and the store is probing it: this process's own limiters answered.
    Local,
}

/// What a [`Store`] has done since it was made: counts, for a metric.
///
/// # Examples
///
/// ```
/// use ironward_redis::Stats;
///
/// let stats = Stats::default();
/// assert_eq!(stats.redis + stats.local + stats.timeouts + stats.unknown, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Calls Redis answered.
    pub redis: u64,
    /// Calls the local fallback answered.
    pub local: u64,
    /// Calls refused because Redis did not answer in time ([`Error::Timeout`]).
    pub timeouts: u64,
    /// Calls refused because Redis gave a reply no script gives ([`Error::Reply`]).
    pub unknown: u64,
    /// Calls refused because Redis refused the script for the key's sake: a wrong type,
    /// out of memory under `noeviction`, an ACL ([`Error::Key`]).
    pub key_errors: u64,
    /// Times the store found, on connecting, that Redis may evict the limiters' keys
    /// (a `maxmemory-policy` other than `noeviction`): 0 or 1.
    pub eviction_warnings: u64,
    /// Switches from Redis to the local fallback.
    pub failovers: u64,
    /// Switches back to Redis after a `PING` was answered.
    pub recoveries: u64,
    /// Calls refused from a limiter's memory of an earlier refusal of the key, with no
    /// round trip ([`Options::blocked_keys`]).
    pub blocked: u64,
    /// Calls of the script Redis answered, each a batch of one or more decisions (see the
    /// crate docs, "Batches"): as many as [`redis`](Stats::redis) when every decision went
    /// alone, fewer when concurrent decisions went together.
    pub batches: u64,
}

/// A connection to Redis shared by limiters, with a per-call timeout and a failover to
/// local limiters, as go-zero's `TokenLimiter` does it (`core/limit/tokenlimit.go`).
///
/// - **Calls** run one script each, with `EVALSHA` (the script is loaded the first time
///   Redis answers `NOSCRIPT`, and again after a restart), over one multiplexed
///   [`ConnectionManager`] ([`connect`](Store::connect)), or one cluster connection
///   ([`connect_cluster`](Store::connect_cluster)): concurrent calls are pipelined on it,
///   and on one Redis the calls waiting at the same moment go as one `EVALSHA`, at most 64
///   decisions, each decided as if sent alone (see the crate docs, "Batches").
/// - **A timeout is a refusal** (by default): a call Redis does not answer within
///   [`Options::timeout`] fails with [`Error::Timeout`], and the store stays on Redis. A
///   call the caller drops is cancelled the same way. Neither tells whether Redis is down
///   or slow, and failing over on a slow Redis would hand every process its own quota.
///   [`OnTimeout::Fallback`] answers such a call from the fallback instead.
/// - **An error about a key is that key's**: `WRONGTYPE`, `OOM`, `NOPERM` refuse the call
///   with [`Error::Key`], and the store stays on Redis.
/// - **Any other error fails over**: a connection refused or dropped, or an error reply
///   about the server (a Redis loading its data, a read-only replica, a master down). The
///   store switches to [`Mode::Local`], that call and every later one are answered by the
///   limiter's local fallback (an `ironward` core limiter per key, with [`Options::share`]
///   of the quota), and a background task sends `PING` (`CLUSTER INFO` to a cluster) every
///   [`Options::probe`] until
///   Redis answers; the store then switches back to [`Mode::Redis`].
/// - **Observable**: [`mode`](Store::mode) and [`stats`](Store::stats).
///
/// `Clone` shares the connection, the mode and the counters.
///
/// # Examples
///
/// With no Redis at the address and [`Options::start_local`], the first call fails over
/// and the limiter answers from its local fallback (this example runs without a server):
///
/// ```
/// use std::time::Duration;
/// use ironward::Quota;
/// use ironward_redis::{Mode, Options, Period, Store};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// // No Redis there: start on the fallback, with the whole quota for this one process.
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// assert_eq!(store.mode(), Mode::Redis);
///
/// let limit = Period::new(&store, "api", 2, Duration::from_secs(60));
/// let answer = limit.take("alice", Duration::ZERO).await.unwrap();
/// assert_eq!((answer.value, answer.mode), (Quota::Under, Mode::Local));
/// assert_eq!(store.mode(), Mode::Local);
/// assert_eq!((store.stats().failovers, store.stats().local), (1, 1));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Store(Arc<Shared>);

struct Shared {
    conn: Conn,
    /// The calls waiting to go to Redis together, on a clone of `conn`.
    batches: Arc<Batches>,
    options: Options,
    /// Whether the store is on its local fallback (and a probe is running).
    local: AtomicBool,
    redis: AtomicU64,
    answered_locally: AtomicU64,
    timeouts: AtomicU64,
    unknown: AtomicU64,
    key_errors: AtomicU64,
    eviction_warnings: AtomicU64,
    /// Whether Redis's eviction policy has been read (or `CONFIG` refused).
    policy_read: AtomicBool,
    failovers: AtomicU64,
    recoveries: AtomicU64,
    blocked: AtomicU64,
    meter: StoreMeter,
}

/// What running a script came to.
pub(crate) enum Ran<T> {
    /// Redis answered, and the reply decoded.
    Answered(T),
    /// The store is on its local fallback, or has just failed over: answer locally.
    Local,
}

impl Store {
    /// A store on `conn`.
    ///
    /// How fast the store gets back to Redis after an outage depends on how `conn`
    /// reconnects: [`Store::config`] gives the configuration that
    /// [`connect`](Store::connect) uses.
    ///
    /// Nothing is sent here, so Redis's eviction policy is first read (see
    /// [`connect`](Store::connect)) when the store recovers from a failover.
    pub fn new(conn: ConnectionManager, options: Options) -> Self {
        Self::on(Conn::Single(conn), options)
    }

    /// A store on `conn`, one Redis or a cluster.
    fn on(conn: Conn, options: Options) -> Self {
        Self(Arc::new(Shared {
            batches: Batches::new(conn.clone()),
            conn,
            options,
            local: AtomicBool::new(false),
            redis: AtomicU64::new(0),
            answered_locally: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
            unknown: AtomicU64::new(0),
            key_errors: AtomicU64::new(0),
            eviction_warnings: AtomicU64::new(0),
            policy_read: AtomicBool::new(false),
            failovers: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            blocked: AtomicU64::new(0),
            meter: StoreMeter::new(),
        }))
    }

    /// A store on a new [`ConnectionManager`] to `info` (a `redis://` URL, for one), made
    /// with [`Store::config`].
    ///
    /// Connects now, within [`Options::timeout`], and fails when `info` cannot be read or
    /// Redis cannot be reached: a wrong address is found at start rather than hidden
    /// behind the fallback. With [`Options::start_local`] nothing is sent yet: the
    /// connection is made on the first call, so a process starts even while Redis is away,
    /// on its local fallback, and fails only when `info` cannot be read.
    ///
    /// Once connected it reads `CONFIG GET maxmemory-policy` and, if Redis may evict the
    /// limiters' keys (any policy but `noeviction`: every key they write has a TTL, so
    /// the `volatile-*` policies evict them too), logs a `WARN` and counts
    /// [`Stats::eviction_warnings`]: an evicted key is a quota reset, silently. A `CONFIG`
    /// the server refuses (managed Redis often renames it) is a `DEBUG` line, nothing
    /// more. Call it within a tokio runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_redis::{Options, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let nowhere = "redis+unix:///nonexistent/redis.sock";
    /// assert!(Store::connect(nowhere, Options::default()).await.is_err());
    /// let local = Options { start_local: true, ..Options::default() };
    /// assert!(Store::connect(nowhere, local).await.is_ok());
    /// # }
    /// ```
    pub async fn connect<T: IntoConnectionInfo>(info: T, options: Options) -> RedisResult<Self> {
        let client = Client::open(info)?;
        let config = Self::config(&options);
        let conn = if options.start_local {
            ConnectionManager::new_lazy_with_config(client, config)?
        } else {
            let connecting = ConnectionManager::new_with_config(client, config);
            connected(
                &options,
                connecting,
                "redis did not answer in time at connect",
            )
            .await?
        };
        let store = Self::new(conn, options);
        if !options.start_local {
            store.read_policy().await;
        }
        Ok(store)
    }

    /// A store on a Redis Cluster (or a Valkey cluster) whose nodes include `nodes`: one
    /// connection that learns the slot map from them, sends each decision to the master
    /// that owns its keys' slot, follows `MOVED` and `ASK` redirections (a slot being moved
    /// between masters), and refreshes the slot map when the cluster changes, as when a
    /// replica is promoted in a dead master's place.
    ///
    /// Every decision's keys share one hash tag (`{name:key}`), so they are in one slot and
    /// one script may touch them all. Connects now, within [`Options::timeout`] for each
    /// node tried, and fails when no node can be reached ([`Options::start_local`] is not
    /// read: a cluster connection needs a node's answer to know its slots). Then reads
    /// `maxmemory-policy` as [`connect`](Store::connect) does.
    ///
    /// Failing over is the store's, not a slot's: while a master is down (its slots
    /// refuse until its replica takes over, about twice the cluster's
    /// `cluster-node-timeout`), the calls that reach its slots fail and the whole store
    /// answers from its fallback until the cluster says `cluster_state:ok` again. The crate
    /// docs ("Failover, and its bounds") state what a key may be
    /// admitted across such a stint, and the writes an asynchronous replica may not have
    /// received add to it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_redis::{Options, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // Nothing listens there: no slot map, no store.
    /// let nodes = ["redis://127.0.0.1:1/", "redis://127.0.0.1:2/"];
    /// assert!(Store::connect_cluster(nodes, Options::default()).await.is_err());
    /// # }
    /// ```
    pub async fn connect_cluster<T: IntoConnectionInfo>(
        nodes: impl IntoIterator<Item = T>,
        options: Options,
    ) -> RedisResult<Self> {
        // A redirection is a retry to redis-rs: a few, quickly, within the call's timeout.
        let client = ClusterClient::builder(nodes)
            .connection_timeout(options.timeout)
            .retries(3)
            .min_retry_wait(1)
            .max_retry_wait(u64::try_from(options.timeout.as_millis() / 4).unwrap_or(u64::MAX))
            .build()?;
        let connecting = client.get_async_connection();
        let late = "no cluster node answered in time at connect";
        let conn = connected(&options, connecting, late).await?;
        let store = Self::on(Conn::Cluster(conn), options);
        store.read_policy().await;
        Ok(store)
    }

    /// Reads Redis's `maxmemory-policy` once, warning if it may evict the limiters' keys.
    /// Tried again at each recovery until Redis answers it (or refuses `CONFIG`).
    async fn read_policy(&self) {
        if self.0.policy_read.load(Ordering::Acquire) {
            return;
        }
        let mut conn = self.0.conn.clone();
        let mut cmd = redis::cmd("CONFIG");
        cmd.arg("GET").arg("maxmemory-policy");
        let reply = cmd.query_async::<HashMap<String, String>>(&mut conn);
        let reply = tokio::time::timeout(self.0.options.timeout, reply).await;
        match reply {
            Ok(Ok(config)) => {
                if self.0.policy_read.swap(true, Ordering::AcqRel) {
                    return;
                }
                let policy = config.get("maxmemory-policy").map_or("", String::as_str);
                if !policy.is_empty() && policy != "noeviction" {
                    self.0.eviction_warnings.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        policy,
                        "redis may evict the limiters' keys (maxmemory-policy is not \
                         noeviction): an evicted key resets its quota without a word"
                    );
                }
            }
            Ok(Err(err)) if err.code().is_some() => {
                self.0.policy_read.store(true, Ordering::Release);
                tracing::debug!(
                    error = %err,
                    "redis refused CONFIG GET; the eviction policy is not known"
                );
            }
            _ => {}
        }
    }

    /// The reconnection that suits the failover: one attempt per call, each bounded by the
    /// timeout, and no response timeout of its own (the store times each call).
    ///
    /// A connection manager that retries with backoff makes every call wait for its
    /// retries, so a call would time out (a refusal) where it should fail over, and a
    /// restarted Redis would be seen only at the next retry, seconds later. Without
    /// retries, each failed call or `PING` starts one new attempt, so a Redis that comes
    /// back is found by the next probe, within two probe intervals.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Options, Store};
    ///
    /// let config = Store::config(&Options::default());
    /// assert_eq!(config.number_of_retries(), 0);
    /// assert_eq!(config.connection_timeout(), Some(Duration::from_millis(100)));
    /// assert_eq!(config.response_timeout(), None);
    /// ```
    pub fn config(options: &Options) -> ConnectionManagerConfig {
        ConnectionManagerConfig::new()
            .set_number_of_retries(0)
            .set_connection_timeout(Some(options.timeout))
            .set_response_timeout(None)
    }

    /// Which store answers now: [`Mode::Local`] from a failover until a `PING` is answered.
    pub fn mode(&self) -> Mode {
        if self.0.local.load(Ordering::Acquire) {
            Mode::Local
        } else {
            Mode::Redis
        }
    }

    /// The counts so far.
    pub fn stats(&self) -> Stats {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        Stats {
            redis: get(&self.0.redis),
            local: get(&self.0.answered_locally),
            timeouts: get(&self.0.timeouts),
            unknown: get(&self.0.unknown),
            key_errors: get(&self.0.key_errors),
            eviction_warnings: get(&self.0.eviction_warnings),
            failovers: get(&self.0.failovers),
            recoveries: get(&self.0.recoveries),
            blocked: get(&self.0.blocked),
            batches: self.0.batches.sent(),
        }
    }

    /// The options the store was made with.
    pub fn options(&self) -> &Options {
        &self.0.options
    }

    /// Loads the script into Redis's script cache now (`SCRIPT LOAD`), so that the first
    /// decisions do not pay for it. Optional: a call loads it when Redis answers
    /// `NOSCRIPT`. There is one script, which holds every limiter's (see the crate docs,
    /// "The scripts").
    pub async fn load(&self) -> RedisResult<()> {
        let mut conn = self.0.conn.clone();
        script::BATCH.load_async(&mut conn).await?;
        Ok(())
    }

    /// Runs `call` for the limiter of `meter`, in a batch with the calls that wait beside
    /// it, and decodes its reply with `decode`, failing over on an error.
    ///
    /// Counts what came of it, but for a local answer, which the caller counts with
    /// [`answered_locally`](Store::answered_locally) when it gives one; records the round
    /// trip on `meter`, whatever it came to.
    pub(crate) async fn run<T>(
        &self,
        meter: &Meter,
        call: Call,
        decode: impl FnOnce(&Value) -> Option<T>,
    ) -> Result<Ran<T>, Error> {
        if self.mode() == Mode::Local {
            return Ok(Ran::Local);
        }
        let script = call.name();
        let watch = Stopwatch::start();
        let reply = tokio::time::timeout(self.0.options.timeout, self.0.batches.send(call));
        let reply = reply.await;
        let answer = match &reply {
            Ok(Ok(value)) => decode(value),
            _ => None,
        };
        meter.round_trip(watch, answer.is_some());
        match (reply, answer) {
            (_, Some(answer)) => {
                self.0.redis.fetch_add(1, Ordering::Relaxed);
                Ok(Ran::Answered(answer))
            }
            (Ok(Ok(value)), None) => {
                self.0.unknown.fetch_add(1, Ordering::Relaxed);
                let reply = crate::wire::describe(&value);
                // Not a passing fault: another program's data under the limiter's keys, or
                // a script of another version. Every call on those keys fails until a
                // person looks.
                tracing::error!(
                    piece = meter.piece(),
                    name = meter.name(),
                    script,
                    reply = %reply,
                    "redis gave a reply no script gives; the call is refused"
                );
                Err(Error::Reply { script, reply })
            }
            (Ok(Err(err)), None) if err.is_timeout() => self.timed_out(meter, script),
            (Ok(Err(err)), None) => match key_error(&err) {
                Some(code) => Err(self.key_error(meter, script, code, &err)),
                None => {
                    self.fail_over(meter, script, &err);
                    Ok(Ran::Local)
                }
            },
            (Err(_), None) => self.timed_out(meter, script),
        }
    }

    /// Counts a refusal answered from a limiter's memory of the key's last one.
    pub(crate) fn answered_blocked(&self) {
        self.0.blocked.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts an answer given by a local fallback.
    pub(crate) fn answered_locally(&self) {
        self.0.answered_locally.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts and reports an error about the key's data, which refuses this call alone.
    fn key_error(
        &self,
        meter: &Meter,
        script: &'static str,
        code: &str,
        err: &redis::RedisError,
    ) -> Error {
        self.0.key_errors.fetch_add(1, Ordering::Relaxed);
        let mut message = err.detail().unwrap_or_default().to_owned();
        if let Some((at, _)) = message.char_indices().nth(200) {
            message.truncate(at);
            message.push('…');
        }
        // Not an outage: the server is healthy and the key is not. Every call on the key
        // fails until a person looks (a wrong type), or until memory is freed (OOM).
        tracing::error!(
            piece = meter.piece(),
            name = meter.name(),
            script,
            error = %err,
            "redis refused the script for the key's sake; the call is refused and the \
             store stays on redis"
        );
        Error::Key {
            script,
            code: code.to_owned(),
            message,
        }
    }

    /// A timeout: a refusal, or with [`OnTimeout::Fallback`] an answer from the fallback.
    fn timed_out<T>(&self, meter: &Meter, script: &'static str) -> Result<Ran<T>, Error> {
        self.0.timeouts.fetch_add(1, Ordering::Relaxed);
        if self.0.options.on_timeout == OnTimeout::Fallback {
            tracing::debug!(
                piece = meter.piece(),
                name = meter.name(),
                script,
                timeout = ?self.0.options.timeout,
                "redis did not answer in time; the fallback answers and the store stays on redis"
            );
            return Ok(Ran::Local);
        }
        // A refusal, as the answer to the call is: a slow Redis shows in
        // `ironward.requests{reason="timeout"}`, not in a log line per call.
        tracing::debug!(
            piece = meter.piece(),
            name = meter.name(),
            script,
            timeout = ?self.0.options.timeout,
            "redis did not answer in time; the call is refused and the store stays on redis"
        );
        Err(Error::Timeout)
    }

    /// Switches to the local fallback after `err` and starts the probe, unless another call
    /// already did.
    fn fail_over(&self, meter: &Meter, script: &'static str, err: &redis::RedisError) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to probe from: stay on Redis, and let the next call try again.
            return;
        };
        if self
            .0
            .local
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.0.failovers.fetch_add(1, Ordering::Relaxed);
            self.0.meter.failed_over();
            let options = &self.0.options;
            tracing::warn!(
                piece = meter.piece(),
                name = meter.name(),
                script,
                error = %err,
                probe = ?options.probe,
                share = options.local_share(),
                "redis failed; answering from the local fallback until a PING is answered"
            );
            let since = tokio::time::Instant::now();
            runtime.spawn(probe(Arc::downgrade(&self.0), since));
        }
    }
}

/// The code of an error reply that is about one key's data rather than the server's
/// health: `WRONGTYPE`, `OOM` or `NOPERM`. Every other error (a connection refused or
/// dropped, `LOADING`, `READONLY`, `MASTERDOWN`, `BUSY`, `TRYAGAIN`, `CLUSTERDOWN`,
/// `MISCONF`, and any code not known here) fails over.
fn key_error(err: &redis::RedisError) -> Option<&'static str> {
    ["WRONGTYPE", "OOM", "NOPERM"]
        .into_iter()
        .find(|&code| err.code() == Some(code))
}

/// The connection `connecting` makes, within twice the store's timeout: the connection
/// timeout bounds each attempt, this bounds the whole, and a connect past it is an I/O
/// error saying `late`.
async fn connected<C>(
    options: &Options,
    connecting: impl Future<Output = RedisResult<C>>,
    late: &'static str,
) -> RedisResult<C> {
    match tokio::time::timeout(options.timeout.saturating_mul(2), connecting).await {
        Ok(conn) => conn,
        Err(_) => Err(redis::RedisError::from((redis::ErrorKind::Io, late))),
    }
}

/// Asks Redis every probe interval whether it is fit again ([`Conn::ready`]: `PING`, or a
/// cluster's `CLUSTER INFO`) until it is, then switches the store back to Redis and
/// reports how long it was away, counted from `since`, the failover.
/// Ends too when the store is dropped.
async fn probe(store: Weak<Shared>, since: tokio::time::Instant) {
    loop {
        let Some(interval) = store.upgrade().map(|shared| shared.options.probe) else {
            return;
        };
        tokio::time::sleep(interval.max(Duration::from_millis(1))).await;
        let Some(shared) = store.upgrade() else {
            return;
        };
        let mut conn = shared.conn.clone();
        let ready = conn.ready();
        if let Ok(true) = tokio::time::timeout(shared.options.timeout, ready).await {
            shared.local.store(false, Ordering::Release);
            shared.recoveries.fetch_add(1, Ordering::Relaxed);
            let lasted = since.elapsed();
            shared.meter.recovered(lasted);
            tracing::info!(lasted = ?lasted, "redis answers again; the store is back on redis");
            Store(shared).read_policy().await;
            return;
        }
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("options", &self.0.options)
            .field("mode", &self.mode())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_read_into_the_unit_interval() {
        let share = |share| Options { share, ..OPTIONS }.local_share();
        assert_eq!(share(0.5), 0.5);
        assert_eq!(share(2.0), 1.0);
        assert_eq!(share(-1.0), 0.0);
        assert_eq!(share(f64::NAN), 0.0);
        assert_eq!(share(f64::INFINITY), 1.0);
    }
}
