//! [`Store`]: the connection every limiter shares, its per-call timeout, the clock the
//! scripts read, and the failover to local limiters while Redis is away.
//!
//! `options` holds the store's record of options, `connect` how the store reaches Redis
//! (its constructors, the probe, and the one check each runs once Redis answers).

mod connect;
mod options;

pub use options::{OPTIONS, OnTimeout, Options, Time};

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

#[cfg(doc)]
use redis::aio::ConnectionManager;
use redis::{RedisResult, Value};

use crate::batch::{Batches, Call};
use crate::conn::Conn;
use crate::meter::{Meter, Stopwatch, StoreMeter};
use crate::{StoreError, script};

/// Which store answered a decision, and which one a [`Store`] is on.
///
/// # Examples
///
/// ```
/// use ironward_redis::Source;
///
/// assert_ne!(Source::Redis, Source::Local);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// Redis answered: the quota is the fleet's. Of a store: it has reached Redis and
    /// sends its calls there.
    Redis,
    /// This process's own limiters answered. Of a store: Redis failed and the store is
    /// probing it, or the store connects lazily and Redis has not answered it yet (see
    /// [`Store::source`]), so no quota of the fleet's is known to be in force.
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
    /// Calls refused because Redis did not answer in time ([`StoreError::Timeout`]).
    pub timeouts: u64,
    /// Calls refused because Redis gave a reply no script gives ([`StoreError::Reply`]).
    pub unknown: u64,
    /// Calls refused because Redis refused the script for the key's sake: a wrong type,
    /// out of memory under `noeviction`, an ACL ([`StoreError::Key`]).
    pub key_errors: u64,
    /// Times the store found that Redis may evict the limiters' keys (a
    /// `maxmemory-policy` other than `noeviction`): 0 or 1. The policy is read once Redis
    /// first answers the store, however it connected: at an eager connect, at the first
    /// call a lazily connected store gets an answer to, or at a recovery (see
    /// [`Store::connect`]).
    pub eviction_warnings: u64,
    /// Switches from Redis to the local fallback.
    pub failovers: u64,
    /// Switches back to Redis after a `PING` was answered.
    pub recoveries: u64,
    /// Calls refused from a limiter's memory of an earlier refusal of the key, with no
    /// round trip ([`Options::blocked_keys`]).
    pub blocked: u64,
    /// Calls of the script Redis answered, each a batch of one or more decisions (see the
    /// guide's [batches](crate::_guide::batches)): as many as [`redis`](Stats::redis) when every decision went
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
///   decisions, each decided as if sent alone (see the guide's [batches](crate::_guide::batches)).
/// - **A timeout is a refusal** (by default): a call Redis does not answer within
///   [`Options::timeout`] fails with [`StoreError::Timeout`], and the store stays on Redis. A
///   call the caller drops is cancelled the same way. Neither tells whether Redis is down
///   or slow, and failing over on a slow Redis would hand every process its own quota.
///   [`OnTimeout::Fallback`] answers such a call from the fallback instead.
/// - **An error about a key is that key's**: `WRONGTYPE`, `OOM`, `NOPERM` refuse the call
///   with [`StoreError::Key`], and the store stays on Redis.
/// - **Any other error fails over**: a connection refused or dropped, or an error reply
///   about the server (a Redis loading its data, a read-only replica, a master down). The
///   store switches to [`Source::Local`], that call and every later one are answered by the
///   limiter's local fallback (an `ironward` core limiter per key, with [`Options::share`]
///   of the quota), and a background task sends `PING` (`CLUSTER INFO` to a cluster) every
///   [`Options::probe`] until
///   Redis answers; the store then switches back to [`Source::Redis`].
/// - **Reaching Redis is one step**, whichever way: an eager connect, the first call a
///   lazily connected store ([`Options::start_local`], [`Store::new`]) gets an answer to,
///   and the `PING` that ends a failover each read the eviction policy, once for the
///   store's life, and only then say [`Source::Redis`].
/// - **Observable**: [`source`](Store::source) and [`stats`](Store::stats).
///
/// `Clone` shares the connection, the source and the counters.
///
/// # Examples
///
/// With no Redis at the address and [`Options::start_local`], the first call fails over
/// and the limiter answers from its local fallback (this example runs without a server):
///
/// ```
/// use std::time::Duration;
/// use ironward::Usage;
/// use ironward_redis::{Source, Options, Period, Store};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// // No Redis there: start on the fallback, with the whole quota for this one process.
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// assert_eq!(store.source(), Source::Local); // not connected yet
///
/// let limit = Period::new(&store, "api", 2, Duration::from_secs(60));
/// let answer = limit.take("alice", Duration::ZERO).await.unwrap();
/// assert_eq!((answer.value, answer.source), (Usage::Under, Source::Local));
/// assert_eq!(store.source(), Source::Local);
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
    /// Where the store stands with Redis: a [`Reach`].
    reach: AtomicU8,
    redis: AtomicU64,
    answered_locally: AtomicU64,
    timeouts: AtomicU64,
    unknown: AtomicU64,
    key_errors: AtomicU64,
    eviction_warnings: AtomicU64,
    /// Whether Redis's eviction policy has been read (or `CONFIG` refused), under the
    /// lock that lets one caller at a time read it ([`Store::reached`]).
    policy_read: tokio::sync::Mutex<bool>,
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

/// Where a store stands with Redis, the one value [`Store::source`] reads, held in
/// `Shared::reach` as its `u8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Reach {
    /// Redis has not answered yet: a lazily connected store ([`Options::start_local`],
    /// [`Store::new`]) before its first answer. Calls go to Redis; the source says
    /// [`Source::Local`], as no quota of the fleet's has been in force yet.
    Unreached = 0,
    /// Redis answered, and the store ran [`Store::reached`]: calls go to Redis.
    Redis = 1,
    /// Failed over: the fallback answers and the probe runs, until Redis is reached again.
    Fallback = 2,
}

impl Reach {
    fn of(value: u8) -> Self {
        match value {
            0 => Self::Unreached,
            1 => Self::Redis,
            _ => Self::Fallback,
        }
    }
}

impl Store {
    /// Whether the store is on Redis: [`Source::Redis`] once Redis has answered it (at an
    /// eager [`connect`](Store::connect) or [`connect_cluster`](Store::connect_cluster), at
    /// the first call a lazily connected store gets an answer to, at the `PING` that ends a
    /// failover), [`Source::Local`] otherwise.
    ///
    /// So a store made with [`Options::start_local`] or [`Store::new`] says
    /// [`Source::Local`] from the start, whether or not Redis is there: it has not connected
    /// yet, and no quota of the fleet's is in force. Its calls still go to Redis, and the
    /// first one Redis answers switches it to [`Source::Redis`]; the first one that fails
    /// fails over, and it stays [`Source::Local`] until a `PING` is answered.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_redis::{Source, Options, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let lazy = Options { start_local: true, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", lazy).await?;
    /// assert_eq!(store.source(), Source::Local); // not connected yet
    /// # Ok(())
    /// # }
    /// ```
    pub fn source(&self) -> Source {
        match self.reach() {
            Reach::Redis => Source::Redis,
            Reach::Unreached | Reach::Fallback => Source::Local,
        }
    }

    /// Where the store stands with Redis.
    fn reach(&self) -> Reach {
        Reach::of(self.0.reach.load(Ordering::Acquire))
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
    /// `NOSCRIPT`. There is one script, which holds every limiter's (see the guide's
    /// [the scripts](crate::_guide::scripts)). On a store that has not reached Redis yet, a load Redis answers
    /// reaches it as a call would: the eviction policy is read, and the store is on
    /// [`Source::Redis`].
    pub async fn load(&self) -> RedisResult<()> {
        let mut conn = self.0.conn.clone();
        script::BATCH.load_async(&mut conn).await?;
        if self.reach() == Reach::Unreached {
            self.reached(Reach::Unreached).await;
        }
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
    ) -> Result<Ran<T>, StoreError> {
        if self.reach() == Reach::Fallback {
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
        // Redis answered, if only to refuse the key: a lazily connected store has reached
        // it, and this call runs the check every connection runs before it returns.
        let answered = match &reply {
            Ok(Ok(_)) => true,
            Ok(Err(err)) => key_error(err).is_some(),
            Err(_) => false,
        };
        if answered && self.reach() == Reach::Unreached {
            self.reached(Reach::Unreached).await;
        }
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
                Err(StoreError::Reply { script, reply })
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
    ) -> StoreError {
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
        StoreError::Key {
            script,
            code: code.to_owned(),
            message,
        }
    }

    /// A timeout: a refusal, or with [`OnTimeout::Fallback`] an answer from the fallback.
    fn timed_out<T>(&self, meter: &Meter, script: &'static str) -> Result<Ran<T>, StoreError> {
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
        Err(StoreError::Timeout)
    }

    /// Switches to the local fallback after `err` and starts the probe, unless another call
    /// already did.
    fn fail_over(&self, meter: &Meter, script: &'static str, err: &redis::RedisError) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to probe from: stay where the store is, and let the next call try
            // again.
            return;
        };
        let fallback = Reach::Fallback as u8;
        let switched = self
            .0
            .reach
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |at| {
                (at != fallback).then_some(fallback)
            });
        if switched.is_ok() {
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
            runtime.spawn(connect::probe(Arc::downgrade(&self.0), since));
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

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("options", &self.0.options)
            .field("source", &self.source())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}
