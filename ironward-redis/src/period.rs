//! [`Period`]: a fixed-window quota per key, kept in Redis.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ironward::Usage;

use crate::batch::Call;
use crate::counted::Counted;
use crate::decide::{self, Common, Kind};
use crate::meter::{self, Piece};
use crate::reservation::{self, Held, Reservation};
use crate::wire::{self, Reading};
use crate::{Answer, Store, StoreError, script};

/// A fixed-window quota per key, kept in Redis: `ironward::Period`, fleet-wide.
///
/// At most `quota` events per `period` for each key, counted by one atomic script
/// (`lua/period.lua`), with go-zero's `PeriodLimit` answers (`core/limit/periodlimit.go`):
/// [`Usage::Under`], [`Usage::Hit`] on the event that uses the quota up (still admitted),
/// [`Usage::Over`] past it. Made by [`new`](Period::new), a period opens at the first event
/// after the last one closed; made by [`aligned`](Period::aligned), periods open on the
/// multiples of `period` on the clock the store reads (on a Unix clock a daily quota resets
/// at 00:00 UTC).
///
/// The answers are the core type's, exactly, fed `now` rounded up to whole microseconds
/// and `period` rounded up likewise (see the guide's [equivalence](crate::_guide::equivalence)). Where go-zero lets
/// Redis expire the key at the end of the period, this keeps the period's start and the
/// latest reading seen, so the caller's clock decides. The state is one key,
/// `{name:key}.period`, a 24-byte string of three little-endian doubles (Lua's
/// `struct.pack('<ddd', count, start, latest)`, integers below 2^53 and so exact, the times
/// in microseconds), which lives twice the period after its last write: one `GET` and one
/// `SET` a decision, where three keys of decimal text cost Redis twice the time (see
/// `BENCHMARKS.md`, "Redis").
///
/// [`take_n`](Period::take_n) takes a cost per request (tokens, bytes), as
/// `ironward::Period::take_n` does: admitted while `count + cost ≤ quota`; a refusal counts
/// one event only once the quota is used up (go-zero's rule at a cost of 1).
///
/// `Clone` shares the limiter: clones count in the same keys, and share one fallback.
///
/// # Examples
///
/// Without Redis the same calls are answered by the local fallback, exactly as
/// `ironward::Period` answers them (this example runs without a server):
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
/// let at = Duration::from_secs;
/// let limit = Period::new(&store, "login", 2, at(60));
/// assert_eq!(limit.take("alice", at(10)).await.unwrap().value, Usage::Under);
/// let hit = limit.take("alice", at(20)).await.unwrap();
/// assert_eq!((hit.value, hit.next, hit.source), (Usage::Hit, at(50), Source::Local));
/// assert_eq!(limit.take("alice", at(30)).await.unwrap().value, Usage::Over);
/// assert_eq!(limit.next("alice", at(30)).await.unwrap(), at(40));
/// assert_eq!(limit.take("bob", at(30)).await.unwrap().value, Usage::Under);
/// # Ok(())
/// # }
/// ```
///
/// On Redis, a daily quota for a fleet. This needs a Redis server, so it is not run here:
///
/// ```no_run
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use ironward::Usage;
/// use ironward_redis::{Options, Period, Store};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Store::connect("redis://127.0.0.1/", Options::default()).await?;
/// // A thousand a day per user, resetting at midnight UTC.
/// let daily = Period::aligned(&store, "daily", 1000, Duration::from_secs(86_400));
/// let now = SystemTime::now().duration_since(UNIX_EPOCH)?;
/// let answer = daily.take("alice", now).await?;
/// if answer.value == Usage::Over {
///     println!("come back in {:?}", answer.next);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Period(pub(crate) Arc<Inner>);

pub(crate) struct Inner {
    counted: Counted<ironward::Period>,
    /// Whether periods lie on multiples of the period ([`Period::aligned`]).
    pub(crate) align: bool,
}

impl Period {
    /// A quota of `quota` events per `period` for each key, in the keys named `name`, a
    /// period opening at the first event after the last one closed (`ironward::Period::new`).
    ///
    /// `name` tells limiters apart in Redis (an empty one is read as `"ironward"`); two
    /// limiters with the same name and different parameters would share state. A `period`
    /// below 1 µs is raised to 1 µs, and is rounded up to whole microseconds.
    pub fn new(store: &Store, name: &str, quota: u32, period: Duration) -> Self {
        Self::with(store, name, quota, period, false, Piece::Period)
    }

    /// A quota of `quota` events per `period` for each key, in the keys named `name`,
    /// periods lying on the multiples of `period` on the clock the store reads
    /// (`ironward::Period::aligned`, go-zero's `Align`): on a Unix clock a daily quota resets
    /// at 00:00 UTC.
    ///
    /// `name` and `period` are read as [`new`](Period::new) reads them.
    pub fn aligned(store: &Store, name: &str, quota: u32, period: Duration) -> Self {
        Self::with(store, name, quota, period, true, Piece::Period)
    }

    /// [`new`](Period::new) or, with `align`, [`aligned`](Period::aligned), reporting its
    /// decisions as `piece`.
    pub(crate) fn with(
        store: &Store,
        name: &str,
        quota: u32,
        period: Duration,
        align: bool,
        piece: Piece,
    ) -> Self {
        // The period as the core reads it; a `Period` allocates nothing.
        let period = ironward::Period::new(quota, period).period();
        Self(Arc::new(Inner {
            counted: Counted::new(store, name, quota, period, piece),
            align,
        }))
    }

    /// Counts one event for `key` at `now` and says where the quota stands.
    ///
    /// Every event is counted, refused ones too, as go-zero's `INCRBY` counts them. With
    /// [`Time::Server`](crate::Time::Server), Redis's clock replaces `now` (which the
    /// fallback still reads).
    pub async fn take(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
    ) -> Result<Answer<Usage>, StoreError> {
        self.take_key(Some(key.as_ref()), now, 1, Wait::End).await
    }

    /// Takes `cost` units (tokens, bytes) for `key` at `now`, as `ironward::Period::take_n`
    /// does, and says where the quota stands.
    ///
    /// Admitted while the units counted plus `cost` are at most the quota: [`Usage::Hit`]
    /// when they come to it exactly. A refused cost takes nothing, but for one event once
    /// the quota is used up (go-zero's rule at a cost of 1); a cost of 0 passes without
    /// taking; a cost above the quota never passes. The answer's `next` is the core's
    /// `next_n(now, cost)` after it: zero while a request of that cost would pass, the
    /// time until the period ends when it would not, `Duration::MAX` for a cost above the
    /// quota.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::Usage;
    /// use ironward_redis::{Options, Period, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// // 100 000 tokens a minute.
    /// let tokens = Period::new(&store, "tokens", 100_000, secs(60));
    /// assert_eq!(tokens.take_n("alice", secs(0), 60_000).await.unwrap().value, Usage::Under);
    /// let refused = tokens.take_n("alice", secs(10), 50_000).await.unwrap();
    /// assert_eq!((refused.value, refused.next), (Usage::Over, secs(50)));
    /// assert_eq!(tokens.take_n("alice", secs(10), 40_000).await.unwrap().value, Usage::Hit);
    /// assert_eq!(tokens.next_n("alice", secs(10), 200_000).await.unwrap(), Duration::MAX);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn take_n(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        cost: u32,
    ) -> Result<Answer<Usage>, StoreError> {
        self.take_key(Some(key.as_ref()), now, cost, Wait::Cost)
            .await
    }

    /// How long after `now` the open period of `key` ends, without changing anything:
    /// zero when none is open.
    pub async fn next(&self, key: impl AsRef<[u8]>, now: Duration) -> Result<Duration, StoreError> {
        self.peek(key.as_ref(), now, 1, Wait::End).await
    }

    /// How long after `now` a request of `cost` units for `key` would pass, without
    /// changing anything (`ironward::Period::next_n`): zero when it would pass now, the
    /// time until the open period ends when it would not, `Duration::MAX` for a cost above
    /// the quota.
    pub async fn next_n(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        cost: u32,
    ) -> Result<Duration, StoreError> {
        self.peek(key.as_ref(), now, cost, Wait::Cost).await
    }

    /// Takes an estimate of `estimate` units for `key` at `now`, to be settled at the
    /// request's actual cost by [`settle`](Period::settle), as `ironward::Period::reserve`
    /// does: admitted as [`take_n`](Period::take_n) of the estimate would be, and then the
    /// answer's value holds the [`Reservation`]; refused, it holds `None` and takes nothing.
    ///
    /// A settle counts until `timeout` after the reading the estimate was taken at (the
    /// script's, on Redis, in whole microseconds, the time-out rounded down); an unsettled
    /// reservation keeps its estimate.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Options, Period, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// // 100 000 tokens a minute; a request estimated at 8 000 costs 3 000.
    /// let tokens = Period::new(&store, "tokens", 100_000, secs(60));
    /// let answer = tokens.reserve("alice", secs(0), 8_000, secs(30)).await.unwrap();
    /// let reservation = answer.value.expect("room for the estimate");
    /// assert_eq!(reservation.estimate(), 8_000.0);
    /// tokens.settle(reservation, 3_000, secs(5)).await.unwrap();
    /// // 97 000 left: a request of 97 000 passes, and uses the quota up.
    /// let rest = tokens.take_n("alice", secs(6), 97_000).await.unwrap();
    /// assert_eq!(rest.value, ironward::Usage::Hit);
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
        let decided = self
            .decide(key, now, estimate, Wait::Cost, Some(timeout))
            .await;
        reservation::reserved(&self.0.counted.meter, decided)
    }

    /// Settles a [`reserve`](Period::reserve)d estimate at the request's `actual` cost, at
    /// `now`, as `ironward::Period::settle` does, where the estimate was counted: in Redis,
    /// or in the fallback if that is where it went.
    ///
    /// Below the estimate, the difference is taken off the count if the period the
    /// estimate went into is still the open one (else nothing comes back); above it, the
    /// difference is counted in the period open at `now` (opening one), even past the
    /// quota, so that the next request waits for it. Past the reservation's deadline
    /// nothing changes, and nothing does for a reservation another limiter made (no round
    /// trip). A settle that finds Redis away, or the store failing over, is
    /// dropped, counted in the store's stats like any call: the estimate stands (a refund is
    /// lost, and a debt is not counted: while Redis is away, the fallback's bound is the
    /// bound). On a refund, a refusal this process remembers for the key is forgotten, since
    /// the refund may make room; other processes' memories are not, and they may refuse the
    /// key until the refusal they remember would have passed (less admitted, never more).
    pub async fn settle(
        &self,
        reservation: Reservation,
        actual: u32,
        now: Duration,
    ) -> Result<(), StoreError> {
        decide::settle(&*self.0, reservation, actual, now).await
    }

    /// [`next`](Period::next) or [`next_n`](Period::next_n), as `wait` asks.
    async fn peek(
        &self,
        key: &[u8],
        now: Duration,
        cost: u32,
        wait: Wait,
    ) -> Result<Duration, StoreError> {
        decide::next(&*self.0, Some(key), now, (cost, wait)).await
    }

    /// The most events a period admits.
    pub fn quota(&self) -> u32 {
        self.0.counted.quota
    }

    /// How long a period is, as the core reads it (the script rounds it up to whole
    /// microseconds).
    pub fn period(&self) -> Duration {
        self.0.counted.span
    }

    /// The store the limiter's keys are in: its [`source`](Store::source) and [`stats`](Store::stats).
    pub fn store(&self) -> &Store {
        &self.0.counted.store
    }

    /// [`take`](Period::take) (or [`take_n`](Period::take_n), as `wait` says) for `key`, or
    /// for the budget of requests without a key, counted and, when refused, reported.
    pub(crate) async fn take_key(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        cost: u32,
        wait: Wait,
    ) -> Result<Answer<Usage>, StoreError> {
        let decided = self
            .decide(key, now, cost, wait, None)
            .await
            .map(|(answer, _)| answer);
        let this = &self.0.counted;
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
                period = ?this.span,
                cost,
                retry_after = ?answer.next,
                "period over its quota; refused"
            );
        }
        decided
    }

    /// What [`take_key`](Period::take_key) decides, before it is counted; with `reserve`
    /// (a time-out), an admitted cost is also a [`Reservation`] to settle.
    async fn decide(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        cost: u32,
        wait: Wait,
        reserve: Option<Duration>,
    ) -> Result<(Answer<Usage>, Option<Reservation>), StoreError> {
        decide::decide(&*self.0, key, now, (cost, wait), reserve).await
    }
}

impl Inner {
    /// The wait, in the scripts' microseconds (-1 for never), that `wait` asks for a
    /// request of `cost` when the open period ends `end` µs on and holds `count` units:
    /// the core's `next` or `next_n`, worked out from the script's reply.
    fn wait(&self, wait: Wait, end: u64, count: u64, cost: u32) -> i64 {
        let quota = u64::from(self.counted.quota);
        // `end` is at most 2^53.
        let end = end as i64;
        match wait {
            Wait::End => end,
            Wait::Cost if cost > self.counted.quota => -1,
            Wait::Cost if count.saturating_add(u64::from(cost)) > quota => end,
            Wait::Cost => 0,
        }
    }
}

/// A period's part of the skeleton: `lua/period.lua` in Redis, a core period in the
/// fallback. A take's cost comes with the wait its answer carries.
impl Kind for Inner {
    type Core = ironward::Period;
    type Value = Usage;
    type Cost = (u32, Wait);
    type Units = u32;

    const REFUSED: Usage = Usage::Over;

    fn common(&self) -> Common<'_, ironward::Period> {
        self.counted.common()
    }

    fn admitted(value: Usage) -> bool {
        value != Usage::Over
    }

    fn amount((cost, _): (u32, Wait)) -> f64 {
        f64::from(cost)
    }

    fn memo((cost, wait): (u32, Wait)) -> f64 {
        wait.memo(cost)
    }

    fn call(&self, key: Option<&[u8]>, reading: &Reading, (cost, _): (u32, Wait)) -> Call {
        let this = &self.counted;
        let [state] = this.keys(key, ["period"]);
        let mut call = script::PERIOD.call();
        call.key(state);
        call.arg(wire::packed([
            reading.number(),
            f64::from(this.quota),
            this.micros as f64,
            this.ttl_ms as f64,
            f64::from(cost),
        ]))
        .arg(u8::from(self.align));
        call
    }

    fn decode(
        &self,
        reply: &redis::Value,
        reading: &Reading,
        (cost, wait): (u32, Wait),
        reserve: Option<Duration>,
    ) -> Option<(Answer<Usage>, Option<Held>)> {
        let [answer, end, t, count] = wire::items(reply)?;
        let value = match wire::int(answer)? {
            1 => Usage::Under,
            2 => Usage::Hit,
            3 => Usage::Over,
            _ => return None,
        };
        let end = wire::micros(end)?;
        let count = wire::int(count).and_then(|n| u64::try_from(n).ok())?;
        let t = wire::micros(t)?;
        let next = reading.wait(t, self.wait(wait, end, count, cost));
        let answer = Answer {
            value,
            next,
            source: crate::Source::Redis,
        };
        // The period the estimate went into started `period - end` before `t`.
        let held = match reserve {
            Some(timeout) if value != Usage::Over => Some(Held::Redis {
                at: (t + end).checked_sub(self.counted.micros)?,
                deadline: wire::deadline(t, timeout),
            }),
            _ => None,
        };
        Some((answer, held))
    }

    fn refused_locally(&self, _cost: (u32, Wait)) -> Option<Answer<Usage>> {
        let this = &self.counted;
        this.refuses_locally().then(|| Answer {
            value: Usage::Over,
            next: this.store.options().probe,
            source: crate::Source::Local,
        })
    }

    fn fresh(&self, _now: Duration) -> ironward::Period {
        let this = &self.counted;
        if self.align {
            ironward::Period::aligned(this.local_quota, this.span)
        } else {
            ironward::Period::new(this.local_quota, this.span)
        }
    }

    fn local(
        &self,
        period: &mut ironward::Period,
        now: Duration,
        (cost, _wait): (u32, Wait),
        reserve: Option<Duration>,
    ) -> (Usage, Option<ironward::Reservation>) {
        match reserve {
            None => (period.take_n(now, cost), None),
            Some(timeout) => match period.reserve(now, cost, timeout) {
                // What `take_n` would have answered: `Hit` once it is used up.
                Ok(reservation) if period.left(now) == 0 => (Usage::Hit, Some(reservation)),
                Ok(reservation) => (Usage::Under, Some(reservation)),
                Err(_) => (Usage::Over, None),
            },
        }
    }

    fn local_next(
        &self,
        period: &ironward::Period,
        now: Duration,
        (cost, wait): (u32, Wait),
    ) -> Duration {
        wait.of(period, now, cost)
    }

    fn next_call(&self, key: Option<&[u8]>, reading: &Reading, _cost: (u32, Wait)) -> Call {
        let this = &self.counted;
        let [state] = this.keys(key, ["period"]);
        let mut call = script::PERIOD_NEXT.call();
        call.key(state);
        call.arg(reading.arg()).arg(this.micros);
        call
    }

    fn units(estimate: f64, _actual: u32) -> Option<u32> {
        // A period's reservation holds a whole number of units, at most `u32::MAX`.
        Some(estimate as u32)
    }

    fn settle_call(
        &self,
        key: Option<&[u8]>,
        reading: &Reading,
        estimate: u32,
        actual: u32,
        start: u64,
        deadline: u64,
    ) -> Call {
        let this = &self.counted;
        let [state] = this.keys(key, ["period"]);
        let mut call = script::PERIOD_SETTLE.call();
        call.key(state);
        call.arg(reading.arg())
            .arg(this.micros)
            .arg(u8::from(self.align))
            .arg(this.ttl_ms)
            .arg(estimate)
            .arg(actual)
            .arg(deadline)
            .arg(start);
        call
    }

    fn settle_local(
        &self,
        period: &mut ironward::Period,
        held: ironward::Reservation,
        actual: u32,
        now: Duration,
    ) {
        // The period made the reservation: nothing comes back.
        let _ = period.settle(held, actual, now);
    }

    fn next_decode(
        &self,
        reply: &redis::Value,
        reading: &Reading,
        (cost, wait): (u32, Wait),
    ) -> Option<Duration> {
        let [end, t, count] = wire::items(reply)?;
        let end = wire::micros(end)?;
        let count = wire::int(count).and_then(|n| u64::try_from(n).ok())?;
        Some(reading.wait(wire::micros(t)?, self.wait(wait, end, count, cost)))
    }
}

/// Which wait an answer carries: the core's `next` (the end of the open period) for
/// [`Period::take`] and [`Period::next`], or its `next_n` for the cost forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// `next(now)`: until the open period ends, admitted or not.
    End,
    /// `next_n(now, cost)`: until a request of the cost would pass.
    Cost,
}

impl Wait {
    /// What the memory of refusals files a call under, so that a call is answered from it
    /// only with the wait it would hear from Redis: its cost for the cost forms, and for
    /// `take` (whose wait is the period's end whatever the cost, where `take_n` of a cost
    /// above the quota hears "never") a cost no `take_n` has.
    fn memo(self, cost: u32) -> f64 {
        match self {
            Wait::End => -1.0,
            Wait::Cost => f64::from(cost),
        }
    }

    /// The core fallback's answer to this wait.
    fn of(self, period: &ironward::Period, now: Duration, cost: u32) -> Duration {
        match self {
            Wait::End => period.next(now),
            Wait::Cost => period.next_n(now, cost),
        }
    }
}

impl fmt::Debug for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counted = &self.0.counted;
        f.debug_struct("Period")
            .field("name", &counted.name)
            .field("quota", &counted.quota)
            .field("period", &counted.span)
            .field("align", &self.0.align)
            .field("local_quota", &counted.local_quota)
            .finish_non_exhaustive()
    }
}
