//! [`Store`]: the connection every limiter shares, its per-call timeout, the clock the
//! scripts read, and the failover to local limiters while Redis is away.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, IntoConnectionInfo, RedisResult, ScriptInvocation, Value};

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
/// | `share` | 1.0 | go-zero's rescue limiter has the whole rate; set `1/N` for a fleet of `N` so that the fleet together keeps the quota while Redis is away |
/// | `local_keys` | 10 000 | the keys one limiter's fallback holds; the least recently used is forgotten past that |
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
    /// window's quota (rounded down), a bucket's rate and burst (a burst below 1 is then 1).
    /// NaN and negatives are 0 (the fallback refuses everything), above 1 is 1.
    pub share: f64,
    /// How many keys each limiter's local fallback holds (at least 1).
    pub local_keys: usize,
}

/// The reference options: [`Options`]' `# Default`.
///
/// # Examples
///
/// ```
/// use ironward_redis::{OPTIONS, Options};
///
/// assert_eq!(OPTIONS, Options::default());
/// assert_eq!((OPTIONS.share, OPTIONS.local_keys), (1.0, 10_000));
/// ```
pub const OPTIONS: Options = Options {
    timeout: Duration::from_millis(100),
    time: Time::Caller,
    probe: Duration::from_millis(100),
    share: 1.0,
    local_keys: 10_000,
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
    /// Switches from Redis to the local fallback.
    pub failovers: u64,
    /// Switches back to Redis after a `PING` was answered.
    pub recoveries: u64,
}

/// A connection to Redis shared by limiters, with a per-call timeout and a failover to
/// local limiters, as go-zero's `TokenLimiter` does it (`core/limit/tokenlimit.go`).
///
/// - **Calls** run one script each, with `EVALSHA` (the script is loaded the first time
///   Redis answers `NOSCRIPT`, and again after a restart), over one multiplexed
///   [`ConnectionManager`]: concurrent calls are pipelined on it.
/// - **A timeout is a refusal**: a call Redis does not answer within
///   [`Options::timeout`] fails with [`Error::Timeout`], and the store stays on Redis. A
///   call the caller drops is cancelled the same way. Neither tells whether Redis is down
///   or slow, and failing over on a slow Redis would hand every process its own quota.
/// - **Any other error fails over**: a connection refused or dropped, or an error reply
///   (a Redis loading its data, out of memory, a read-only replica). The store switches to
///   [`Mode::Local`], that call and every later one are answered by the limiter's local
///   fallback (an `ironward` core limiter per key, with [`Options::share`] of the quota),
///   and a background task sends `PING` every [`Options::probe`] until Redis answers; the
///   store then switches back to [`Mode::Redis`].
/// - **Observable**: [`mode`](Store::mode) and [`stats`](Store::stats).
///
/// `Clone` shares the connection, the mode and the counters.
///
/// # Examples
///
/// With no Redis at the address, the first call fails over and the limiter answers from
/// its local fallback (this example runs without a server):
///
/// ```
/// use std::time::Duration;
/// use ironward::Quota;
/// use ironward_redis::{Mode, Options, Period, Store};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", Options::default()).await?;
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
    conn: ConnectionManager,
    options: Options,
    /// Whether the store is on its local fallback (and a probe is running).
    local: AtomicBool,
    redis: AtomicU64,
    answered_locally: AtomicU64,
    timeouts: AtomicU64,
    unknown: AtomicU64,
    failovers: AtomicU64,
    recoveries: AtomicU64,
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
    pub fn new(conn: ConnectionManager, options: Options) -> Self {
        Self(Arc::new(Shared {
            conn,
            options,
            local: AtomicBool::new(false),
            redis: AtomicU64::new(0),
            answered_locally: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
            unknown: AtomicU64::new(0),
            failovers: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            meter: StoreMeter::new(),
        }))
    }

    /// A store on a new [`ConnectionManager`] to `info` (a `redis://` URL, for one), made
    /// with [`Store::config`].
    ///
    /// Nothing is sent yet: the connection is made on the first call, so a process starts
    /// even while Redis is away, on its local fallback. Fails only when `info` cannot be
    /// read. Call it within a tokio runtime.
    pub async fn connect<T: IntoConnectionInfo>(info: T, options: Options) -> RedisResult<Self> {
        let client = Client::open(info)?;
        let conn = ConnectionManager::new_lazy_with_config(client, Self::config(&options))?;
        Ok(Self::new(conn, options))
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
            failovers: get(&self.0.failovers),
            recoveries: get(&self.0.recoveries),
        }
    }

    /// The options the store was made with.
    pub fn options(&self) -> &Options {
        &self.0.options
    }

    /// Loads every script into Redis's script cache now (`SCRIPT LOAD`), so that the first
    /// decisions do not pay for it. Optional: a call loads its script when Redis answers
    /// `NOSCRIPT`.
    pub async fn load(&self) -> RedisResult<()> {
        let mut conn = self.0.conn.clone();
        for script in script::ALL {
            script.load_async(&mut conn).await?;
        }
        Ok(())
    }

    /// Runs `call` for the limiter of `meter` and decodes its reply with `decode`, failing
    /// over on an error.
    ///
    /// Counts what came of it, but for a local answer, which the caller counts with
    /// [`answered_locally`](Store::answered_locally) when it gives one; records the round
    /// trip on `meter`, whatever it came to.
    pub(crate) async fn run<T>(
        &self,
        meter: &Meter,
        script: &'static str,
        call: &ScriptInvocation<'_>,
        decode: impl FnOnce(&Value) -> Option<T>,
    ) -> Result<Ran<T>, Error> {
        if self.mode() == Mode::Local {
            return Ok(Ran::Local);
        }
        let mut conn = self.0.conn.clone();
        let watch = Stopwatch::start();
        let reply = tokio::time::timeout(self.0.options.timeout, call.invoke_async(&mut conn));
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
            (Ok(Err(err)), None) if err.is_timeout() => Err(self.timed_out(meter, script)),
            (Ok(Err(err)), None) => {
                self.fail_over(meter, script, &err);
                Ok(Ran::Local)
            }
            (Err(_), None) => Err(self.timed_out(meter, script)),
        }
    }

    /// Counts an answer given by a local fallback.
    pub(crate) fn answered_locally(&self) {
        self.0.answered_locally.fetch_add(1, Ordering::Relaxed);
    }

    fn timed_out(&self, meter: &Meter, script: &'static str) -> Error {
        self.0.timeouts.fetch_add(1, Ordering::Relaxed);
        // A refusal, as the answer to the call is: a slow Redis shows in
        // `ironward.requests{reason="timeout"}`, not in a log line per call.
        tracing::debug!(
            piece = meter.piece(),
            name = meter.name(),
            script,
            timeout = ?self.0.options.timeout,
            "redis did not answer in time; the call is refused and the store stays on redis"
        );
        Error::Timeout
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
            if err.code() == Some("WRONGTYPE") {
                // Not an outage: another program's data under the limiter's keys, which
                // fails over again after every recovery until a person looks.
                tracing::error!(
                    piece = meter.piece(),
                    name = meter.name(),
                    script,
                    error = %err,
                    "a limiter's key holds another type; answering from the local fallback"
                );
            } else {
                tracing::warn!(
                    piece = meter.piece(),
                    name = meter.name(),
                    script,
                    error = %err,
                    probe = ?options.probe,
                    share = options.local_share(),
                    "redis failed; answering from the local fallback until a PING is answered"
                );
            }
            let since = tokio::time::Instant::now();
            runtime.spawn(probe(Arc::downgrade(&self.0), since));
        }
    }
}

/// Sends `PING` every probe interval until Redis answers `PONG`, then switches the store
/// back to Redis and reports how long it was away, counted from `since`, the failover.
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
        let ping = redis::cmd("PING");
        let ping = ping.query_async::<String>(&mut conn);
        if let Ok(Ok(pong)) = tokio::time::timeout(shared.options.timeout, ping).await
            && pong == "PONG"
        {
            shared.local.store(false, Ordering::Release);
            shared.recoveries.fetch_add(1, Ordering::Relaxed);
            let lasted = since.elapsed();
            shared.meter.recovered(lasted);
            tracing::info!(lasted = ?lasted, "redis answers again; the store is back on redis");
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
