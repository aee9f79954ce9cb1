//! How a [`Store`] reaches Redis: its constructors, the probe that brings it back after a
//! failover, and the one check every path runs once Redis has answered it
//! ([`Store::reached`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::{Client, IntoConnectionInfo, RedisResult};

use super::{Options, Reach, Shared, Store};
use crate::batch::Batches;
use crate::conn::Conn;
use crate::meter::StoreMeter;
#[cfg(doc)]
use crate::{Source, Stats};

impl Store {
    /// A store on `conn`.
    ///
    /// How fast the store gets back to Redis after an outage depends on how `conn`
    /// reconnects: [`Store::config`] gives the configuration that
    /// [`connect`](Store::connect) uses.
    ///
    /// Nothing is sent here: the store says [`Source::Local`] until Redis first answers one
    /// of its calls, and that call reads Redis's eviction policy before it returns, as
    /// [`connect`](Store::connect) does at once (see [`source`](Store::source)).
    pub fn new(conn: ConnectionManager, options: Options) -> Self {
        Self::on(Conn::Single(conn), options)
    }

    /// A store on `conn`, one Redis or a cluster.
    fn on(conn: Conn, options: Options) -> Self {
        Self(Arc::new(Shared {
            batches: Batches::new(conn.clone()),
            conn,
            options,
            reach: AtomicU8::new(Reach::Unreached as u8),
            redis: AtomicU64::new(0),
            answered_locally: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
            unknown: AtomicU64::new(0),
            key_errors: AtomicU64::new(0),
            eviction_warnings: AtomicU64::new(0),
            policy_read: tokio::sync::Mutex::new(false),
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
    /// and fails only when `info` cannot be read. Such a store says [`Source::Local`] until
    /// Redis answers a call; the first call that fails fails over to the local fallback.
    ///
    /// Once Redis has answered (here, for an eager connect; at the first call Redis
    /// answers, for a lazy one; at the `PING` that ends a failover), the store reads
    /// `CONFIG GET maxmemory-policy` and, if Redis may evict the limiters' keys (any
    /// policy but `noeviction`: every key they write has a TTL, so the `volatile-*`
    /// policies evict them too), logs a `WARN` and counts [`Stats::eviction_warnings`]: an
    /// evicted key is a quota reset, silently. The policy is read once for the store's
    /// life; a read that gets no answer within the timeout is tried again at the next
    /// recovery. A `CONFIG` the server refuses (managed Redis often renames it) is a
    /// `DEBUG` line, nothing more. Call it within a tokio runtime.
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
            store.reached(Reach::Unreached).await;
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
    /// answers from its fallback until the cluster says `cluster_state:ok` again. The guide's
    /// [failover](crate::_guide::failover) states what a key may be
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
        store.reached(Reach::Unreached).await;
        Ok(store)
    }

    /// What every path that reaches Redis runs once Redis has answered it, and only
    /// there: an eager connect, the first call a lazily connected store gets an answer to
    /// ([`Store::run`]) or a first [`Store::load`], and the `PING` that ends a failover
    /// ([`probe`]). Reads Redis's
    /// eviction policy, unless it has been read, then switches the store from `from` to
    /// [`Reach::Redis`]; says whether it did.
    ///
    /// One caller at a time: while one reads the policy, another that reaches Redis leaves
    /// the read and the switch to it (and returns `false`), so concurrent first calls send
    /// one `CONFIG GET`, not one each. A caller dropped during the read releases the lock
    /// and leaves the store `from`, so the next answer runs this again. The switch is from
    /// `from` alone: a call that reached Redis just as another failed over does not take
    /// the store off its fallback, which only the probe ends.
    pub(super) async fn reached(&self, from: Reach) -> bool {
        let Ok(mut read) = self.0.policy_read.try_lock() else {
            return false;
        };
        if !*read {
            *read = self.read_policy().await;
        }
        self.0
            .reach
            .compare_exchange(
                from as u8,
                Reach::Redis as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// Reads Redis's `maxmemory-policy`, warning if it may evict the limiters' keys; says
    /// whether the policy is now settled: read, or `CONFIG` refused. A read that gets no
    /// answer in time settles nothing, and is tried again at the next recovery.
    async fn read_policy(&self) -> bool {
        let mut conn = self.0.conn.clone();
        let mut cmd = redis::cmd("CONFIG");
        cmd.arg("GET").arg("maxmemory-policy");
        let reply = cmd.query_async::<HashMap<String, String>>(&mut conn);
        let reply = tokio::time::timeout(self.0.options.timeout, reply).await;
        match reply {
            Ok(Ok(config)) => {
                let policy = config.get("maxmemory-policy").map_or("", String::as_str);
                if !policy.is_empty() && policy != "noeviction" {
                    self.0.eviction_warnings.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        policy,
                        "redis may evict the limiters' keys (maxmemory-policy is not \
                         noeviction): an evicted key resets its quota without a word"
                    );
                }
                true
            }
            Ok(Err(err)) if err.code().is_some() => {
                tracing::debug!(
                    error = %err,
                    "redis refused CONFIG GET; the eviction policy is not known"
                );
                true
            }
            _ => false,
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
/// cluster's `CLUSTER INFO`) until it is, then switches the store back to Redis through
/// [`Store::reached`] and reports how long it was away, counted from `since`, the failover.
/// Ends too when the store is dropped.
pub(super) async fn probe(store: Weak<Shared>, since: tokio::time::Instant) {
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
        let ready = tokio::time::timeout(shared.options.timeout, ready).await;
        let store = Store(shared);
        if let Ok(true) = ready
            && store.reached(Reach::Fallback).await
        {
            store.0.recoveries.fetch_add(1, Ordering::Relaxed);
            let lasted = since.elapsed();
            store.0.meter.recovered(lasted);
            tracing::info!(lasted = ?lasted, "redis answers again; the store is back on redis");
            return;
        }
    }
}
