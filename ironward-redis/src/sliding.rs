//! [`Sliding`]: an exact sliding-window log per key, kept in Redis.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::batch::Call;
use crate::counted::Counted;
use crate::decide::{self, Common, Kind};
use crate::meter::{self, Piece};
use crate::reservation::{self, Held, Reservation};
use crate::wire::{self, Reading};
use crate::{Answer, Source, Store, StoreError, script};

/// An exact sliding-window log per key, kept in Redis: `ironward::Sliding`, fleet-wide.
///
/// At most `quota` events (or units, with [`take_n`](Sliding::take_n)) for each key in any
/// window-long stretch `(now − window, now]`. Each key keeps its admitted costs still
/// inside the window in a Redis list (`{name:key}.log`, oldest first, each entry 24 bytes:
/// three little-endian doubles, its stamp in microseconds, its cost, and the running sum
/// of the costs, so that the units inside are one subtraction; never more entries than
/// `quota`, plus the debts [`settle`](Sliding::settle) charged within a window), with the latest reading seen beside it (`{name:key}.ts`); one atomic script
/// (`lua/sliding.lua`) drops the entries that have left, counts, and pushes. Both keys
/// live twice the window after their last write. A log an earlier version wrote (plain
/// decimal stamps) is read as a cost of 1 each, and rewritten in this form once.
///
/// The answers are the core type's, exactly, fed `now` rounded up to whole microseconds
/// and `window` rounded up likewise (see the guide's [equivalence](crate::_guide::equivalence)). A take costs
/// O(1) amortised: each entry is pushed once and dropped once; a log whose newest entry
/// has left is dropped whole; a refused cost's wait is a bisection on the sums.
///
/// `Clone` shares the limiter: clones count in the same keys, and share one fallback.
///
/// # Examples
///
/// Without Redis the same calls are answered by the local fallback, exactly as
/// `ironward::Sliding` answers them (this example runs without a server):
///
/// ```
/// use std::time::Duration;
/// use ironward_redis::{Options, Sliding, Store};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// // No Redis there: start on the fallback, with the whole quota for this one process.
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// let secs = Duration::from_secs;
/// // Two events in any ten seconds.
/// let limit = Sliding::new(&store, "search", 2, secs(10));
/// assert!(limit.take("k", secs(1)).await.unwrap().admitted());
/// assert!(limit.take("k", secs(9)).await.unwrap().admitted());
/// let refused = limit.take("k", secs(10)).await.unwrap();
/// // The event at 1 s leaves the window at 11 s, not at a fixed boundary.
/// assert_eq!((refused.value, refused.next), (false, secs(1)));
/// assert!(limit.take("k", secs(11)).await.unwrap().admitted());
/// # Ok(())
/// # }
/// ```
///
/// On Redis, an hourly quota for a fleet. This needs a Redis server, so it is not run
/// here:
///
/// ```no_run
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use ironward_redis::{Options, Sliding, Store};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Store::connect("redis://127.0.0.1/", Options::default()).await?;
/// // A hundred an hour per API key, in any hour.
/// let hourly = Sliding::new(&store, "hourly", 100, Duration::from_secs(3600));
/// let now = SystemTime::now().duration_since(UNIX_EPOCH)?;
/// if !hourly.take("key-42", now).await?.admitted() {
///     println!("room again in {:?}", hourly.next("key-42", now).await?);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Sliding(Arc<Counted<ironward::Sliding>>);

impl Sliding {
    /// A log per key admitting `quota` events in any `window`, in the keys named `name`.
    ///
    /// `name` tells limiters apart in Redis (an empty one is read as `"ironward"`); two
    /// limiters with the same name and different parameters would share state. A `window`
    /// below 1 µs is raised to 1 µs, and is rounded up to whole microseconds.
    pub fn new(store: &Store, name: &str, quota: u32, window: Duration) -> Self {
        Self::with(store, name, quota, window, Piece::Sliding)
    }

    /// [`new`](Sliding::new), reporting its decisions as `piece`.
    pub(crate) fn with(
        store: &Store,
        name: &str,
        quota: u32,
        window: Duration,
        piece: Piece,
    ) -> Self {
        let window = ironward::Sliding::new(0, window).window();
        Self(Arc::new(Counted::new(store, name, quota, window, piece)))
    }

    /// Whether an event for `key` at `now` is within the quota, counting it if it is.
    ///
    /// [`take_n`](Sliding::take_n) with a cost of 1. With
    /// [`Time::Server`](crate::Time::Server), Redis's clock replaces `now` (which the
    /// fallback still reads).
    pub async fn take(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
    ) -> Result<Answer<bool>, StoreError> {
        self.take_key(Some(key.as_ref()), now, 1).await
    }

    /// Whether a request of `cost` units (tokens, bytes) for `key` at `now` is within the
    /// quota, counting its cost if it is, as `ironward::Sliding::take_n` does.
    ///
    /// It passes when the units inside the window plus `cost` are at most the quota; a cost
    /// of 0 passes without taking room; a cost above the quota never passes. The answer's
    /// `next` is the core's `next_n(now, cost)` after it: zero while a request of that cost
    /// would pass, else until enough of the oldest units have left, `Duration::MAX` for a
    /// cost above the quota.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Options, Sliding, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// // 10 000 tokens in any minute.
    /// let tokens = Sliding::new(&store, "tokens", 10_000, secs(60));
    /// assert!(tokens.take_n("k", secs(0), 6_000).await.unwrap().admitted());
    /// let refused = tokens.take_n("k", secs(30), 5_000).await.unwrap();
    /// // The 6 000 leave at 60 s.
    /// assert_eq!((refused.value, refused.next), (false, secs(30)));
    /// assert!(tokens.take_n("k", secs(30), 4_000).await.unwrap().admitted());
    /// assert_eq!(tokens.next_n("k", secs(30), 10_001).await.unwrap(), Duration::MAX);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn take_n(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        cost: u32,
    ) -> Result<Answer<bool>, StoreError> {
        self.take_key(Some(key.as_ref()), now, cost).await
    }

    /// How long after `now` `key`'s window will next have room, without changing anything:
    /// zero when there is room, `Duration::MAX` for a quota of 0. This is
    /// [`next_n`](Sliding::next_n) with a cost of 1.
    pub async fn next(&self, key: impl AsRef<[u8]>, now: Duration) -> Result<Duration, StoreError> {
        self.next_n(key, now, 1).await
    }

    /// How long after `now` a request of `cost` units for `key` would pass, without
    /// changing anything (`ironward::Sliding::next_n`): zero when it would pass now, else
    /// until enough of the oldest units have left the window, `Duration::MAX` for a cost
    /// above the quota.
    pub async fn next_n(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        cost: u32,
    ) -> Result<Duration, StoreError> {
        decide::next(&*self.0, Some(key.as_ref()), now, cost).await
    }

    /// Takes an estimate of `estimate` units for `key` at `now`, to be settled at the
    /// request's actual cost by [`settle`](Sliding::settle), as
    /// `ironward::Sliding::reserve` does: admitted as [`take_n`](Sliding::take_n) of the
    /// estimate would be (one script, `lua/sliding.lua`, which pushes the estimate as an
    /// entry stamped with its reading), and then the answer's value holds the
    /// [`Reservation`]; refused, it holds `None` and takes nothing. The answer's `next` is
    /// the core's `next_n(now, estimate)` after it.
    ///
    /// A settle counts until `timeout` after the reading the estimate was taken at (the
    /// script's, on Redis, in whole microseconds, the time-out rounded down); an unsettled
    /// reservation keeps its estimate for a window.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Options, Sliding, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// // 1 000 tokens in any minute; a request estimated at 700 costs 1 100.
    /// let tokens = Sliding::new(&store, "tokens", 1_000, secs(60));
    /// let reservation = tokens.reserve("k", secs(0), 700, secs(10)).await.unwrap().value.unwrap();
    /// assert!(tokens.reserve("k", secs(1), 400, secs(10)).await.unwrap().value.is_none());
    /// tokens.settle(reservation, 1_100, secs(2)).await.unwrap();
    /// // 400 more, charged at 2 s for a minute: 100 pass once the 700 leave at 60 s.
    /// assert_eq!(tokens.next_n("k", secs(2), 100).await.unwrap(), secs(58));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn reserve(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        estimate: u32,
        timeout: Duration,
    ) -> Result<Answer<Option<Reservation>>, StoreError> {
        let key = Some(key.as_ref());
        let decided = self.decide(key, now, estimate, Some(timeout)).await;
        reservation::reserved(&self.0.meter, decided)
    }

    /// Settles a [`reserve`](Sliding::reserve)d estimate at the request's `actual` cost,
    /// at `now`, as `ironward::Sliding::settle` does, where the estimate was counted: in
    /// Redis (one script, `lua/sliding_settle.lua`), or in the fallback if that is where it
    /// went.
    ///
    /// Below the estimate, the difference is taken off the entry the estimate was stamped
    /// with, so the room comes back at once; if the estimate has already left the window
    /// there is nothing to give back and nothing changes. Above it, the difference is a
    /// debt, an entry stamped `now` (read as the latest seen), which holds the window for a
    /// window from then, past the quota if need be. Past the reservation's deadline, or for
    /// a reservation another limiter made, nothing changes (not even the clock), and the
    /// estimate stands.
    ///
    /// The bound is the core's: in any window-long stretch, the units charged are at most
    /// the quota plus the debts settled in the stretch after its last admission (with one
    /// reservation in flight at a time, plus the largest single overshoot). A refund
    /// rewrites the entries pushed after the estimate's (their running sums come down), so
    /// it costs Redis a little more the longer the request ran. A settle that finds Redis
    /// away, or the store failing over, is dropped (a refund is lost, and a debt is not
    /// counted: while Redis is away, the fallback's bound is the bound). On a refund, a
    /// refusal this process remembers for the key is forgotten, since the refund may make
    /// room; other processes' memories are not, and they may refuse the key until the
    /// refusal they remember would have passed (less admitted, never more).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Options, Sliding, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// let tokens = Sliding::new(&store, "tokens", 1_000, secs(60));
    /// let early = tokens.reserve("k", secs(0), 600, secs(120)).await.unwrap().value.unwrap();
    /// let late = tokens.reserve("k", secs(0), 400, secs(120)).await.unwrap().value.unwrap();
    /// // Settled within the window: 500 come back at once.
    /// tokens.settle(early, 100, secs(30)).await.unwrap();
    /// assert!(tokens.take_n("k", secs(30), 500).await.unwrap().admitted());
    /// // Settled after the window: the estimate has left already, nothing to refund.
    /// tokens.settle(late, 0, secs(90)).await.unwrap();
    /// assert_eq!(tokens.next_n("k", secs(90), 1_000).await.unwrap(), Duration::ZERO);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn settle(
        &self,
        reservation: Reservation,
        actual: u32,
        now: Duration,
    ) -> Result<(), StoreError> {
        decide::settle(&*self.0, reservation, actual, now).await
    }

    /// The most events a window admits.
    pub fn quota(&self) -> u32 {
        self.0.quota
    }

    /// How long the window is, as the core reads it (the script rounds it up to whole
    /// microseconds).
    pub fn window(&self) -> Duration {
        self.0.span
    }

    /// The store the limiter's keys are in: its [`source`](Store::source) and [`stats`](Store::stats).
    pub fn store(&self) -> &Store {
        &self.0.store
    }

    /// [`take`](Sliding::take) for `key`, or for the budget of requests without a key,
    /// counted and, when refused, reported.
    pub(crate) async fn take_key(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        cost: u32,
    ) -> Result<Answer<bool>, StoreError> {
        let decided = self
            .decide(key, now, cost, None)
            .await
            .map(|(answer, _)| answer);
        let this = &self.0;
        let meter = &this.meter;
        meter.count(&decided);
        if let Ok(answer) = &decided
            && !answer.admitted()
        {
            tracing::debug!(
                piece = meter.piece(),
                name = meter.name(),
                source = meter::source_label(answer.source),
                quota = this.quota_of(answer.source),
                window = ?this.span,
                cost,
                retry_after = ?answer.next,
                "sliding window full; refused"
            );
        }
        decided
    }

    /// What [`take_key`](Sliding::take_key) decides, before it is counted; with `reserve`
    /// (a time-out), an admitted cost is also a [`Reservation`] to settle.
    async fn decide(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        cost: u32,
        reserve: Option<Duration>,
    ) -> Result<(Answer<bool>, Option<Reservation>), StoreError> {
        decide::decide(&*self.0, key, now, cost, reserve).await
    }
}

/// A sliding log's part of the skeleton: `lua/sliding.lua` in Redis, a core log in the
/// fallback.
impl Kind for Counted<ironward::Sliding> {
    type Core = ironward::Sliding;
    type Value = bool;
    type Cost = u32;
    type Units = u32;

    const REFUSED: bool = false;

    fn common(&self) -> Common<'_, ironward::Sliding> {
        Counted::common(self)
    }

    fn admitted(value: bool) -> bool {
        value
    }

    fn amount(cost: u32) -> f64 {
        f64::from(cost)
    }

    fn call(&self, key: Option<&[u8]>, reading: &Reading, cost: u32) -> Call {
        let [log, ts] = self.keys(key, ["log", "ts"]);
        let mut call = script::SLIDING.call();
        call.key(log).key(ts);
        call.arg(reading.arg())
            .arg(self.quota)
            .arg(self.micros)
            .arg(self.ttl_ms)
            .arg(cost);
        call
    }

    fn decode(
        &self,
        reply: &redis::Value,
        reading: &Reading,
        _cost: u32,
        reserve: Option<Duration>,
    ) -> Option<(Answer<bool>, Option<Held>)> {
        let [admitted, wait, t] = wire::items(reply)?;
        let value = match wire::int(admitted)? {
            1 => true,
            0 => false,
            _ => return None,
        };
        let t = wire::micros(t)?;
        let answer = Answer {
            value,
            next: reading.wait(t, wire::wait(wait)?),
            source: Source::Redis,
        };
        // The estimate was pushed stamped with the reading the script decided at.
        let held = reserve.filter(|_| value).map(|timeout| Held::Redis {
            at: t,
            deadline: wire::deadline(t, timeout),
        });
        Some((answer, held))
    }

    fn refused_locally(&self, _cost: u32) -> Option<Answer<bool>> {
        self.refuses_locally().then(|| Answer {
            value: false,
            next: self.store.options().probe,
            source: Source::Local,
        })
    }

    fn fresh(&self, _now: Duration) -> ironward::Sliding {
        ironward::Sliding::new(self.local_quota, self.span)
    }

    fn local(
        &self,
        log: &mut ironward::Sliding,
        now: Duration,
        cost: u32,
        reserve: Option<Duration>,
    ) -> (bool, Option<ironward::Reservation>) {
        match reserve {
            None => (log.take_n(now, cost), None),
            Some(timeout) => match log.reserve(now, cost, timeout) {
                Ok(held) => (true, Some(held)),
                Err(_) => (false, None),
            },
        }
    }

    fn local_next(&self, log: &ironward::Sliding, now: Duration, cost: u32) -> Duration {
        log.next_n(now, cost)
    }

    fn next_call(&self, key: Option<&[u8]>, reading: &Reading, cost: u32) -> Call {
        let [log, ts] = self.keys(key, ["log", "ts"]);
        let mut call = script::SLIDING_NEXT.call();
        call.key(log).key(ts);
        call.arg(reading.arg())
            .arg(self.quota)
            .arg(self.micros)
            .arg(cost);
        call
    }

    fn units(estimate: f64, _actual: u32) -> Option<u32> {
        // A log's reservation holds a whole number of units, at most `u32::MAX`.
        Some(estimate as u32)
    }

    fn settle_call(
        &self,
        key: Option<&[u8]>,
        reading: &Reading,
        estimate: u32,
        actual: u32,
        at: u64,
        deadline: u64,
    ) -> Call {
        let [log, ts] = self.keys(key, ["log", "ts"]);
        let mut call = script::SLIDING_SETTLE.call();
        call.key(log).key(ts);
        call.arg(reading.arg())
            .arg(self.micros)
            .arg(self.ttl_ms)
            .arg(estimate)
            .arg(actual)
            .arg(deadline)
            .arg(at);
        call
    }

    fn settle_local(
        &self,
        log: &mut ironward::Sliding,
        held: ironward::Reservation,
        actual: u32,
        now: Duration,
    ) {
        // The log made the reservation: nothing comes back.
        let _ = log.settle(held, actual, now);
    }

    fn next_decode(&self, reply: &redis::Value, reading: &Reading, _cost: u32) -> Option<Duration> {
        let [wait, t] = wire::items(reply)?;
        Some(reading.wait(wire::micros(t)?, wire::wait(wait)?))
    }
}

impl fmt::Debug for Sliding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sliding")
            .field("name", &self.0.name)
            .field("quota", &self.0.quota)
            .field("window", &self.0.span)
            .field("local_quota", &self.0.local_quota)
            .finish_non_exhaustive()
    }
}
