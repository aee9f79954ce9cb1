//! [`Period`]: a fixed-window quota per key, kept in Redis.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ironward::Quota;

use crate::counted::Counted;
use crate::local;
use crate::meter::{self, Piece};
use crate::store::Ran;
use crate::wire::{self, Reading};
use crate::{Answer, Error, Store, script};

/// A fixed-window quota per key, kept in Redis: `ironward::Period`, fleet-wide.
///
/// At most `quota` events per `period` for each key, counted by one atomic script
/// (`lua/period.lua`), with go-zero's `PeriodLimit` answers (`core/limit/periodlimit.go`):
/// [`Quota::Under`], [`Quota::Hit`] on the event that uses the quota up (still admitted),
/// [`Quota::Over`] past it. Made by [`new`](Period::new), a period opens at the first event
/// after the last one closed; made by [`aligned`](Period::aligned), periods open on the
/// multiples of `period` on the clock the store reads (on a Unix clock a daily quota resets
/// at 00:00 UTC).
///
/// The answers are the core type's, exactly, fed `now` rounded up to whole microseconds
/// and `period` rounded up likewise (see the crate docs, "Equivalence"). Where go-zero lets
/// Redis expire the key at the end of the period, this keeps the period's start and the
/// latest reading seen, so the caller's clock decides; the keys (`{name:key}.count`,
/// `.start`, `.ts`) live twice the period after their last write.
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
/// use ironward::Quota;
/// use ironward_redis::{Mode, Options, Period, Store};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// // No Redis there: start on the fallback, with the whole quota for this one process.
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// let at = Duration::from_secs;
/// let limit = Period::new(&store, "login", 2, at(60));
/// assert_eq!(limit.take("alice", at(10)).await.unwrap().value, Quota::Under);
/// let hit = limit.take("alice", at(20)).await.unwrap();
/// assert_eq!((hit.value, hit.next, hit.mode), (Quota::Hit, at(50), Mode::Local));
/// assert_eq!(limit.take("alice", at(30)).await.unwrap().value, Quota::Over);
/// assert_eq!(limit.next("alice", at(30)).await.unwrap(), at(40));
/// assert_eq!(limit.take("bob", at(30)).await.unwrap().value, Quota::Under);
/// # Ok(())
/// # }
/// ```
///
/// On Redis, a daily quota for a fleet. This needs a Redis server, so it is not run here:
///
/// ```no_run
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use ironward::Quota;
/// use ironward_redis::{Options, Period, Store};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Store::connect("redis://127.0.0.1/", Options::default()).await?;
/// // A thousand a day per user, resetting at midnight UTC.
/// let daily = Period::aligned(&store, "daily", 1000, Duration::from_secs(86_400));
/// let now = SystemTime::now().duration_since(UNIX_EPOCH)?;
/// let answer = daily.take("alice", now).await?;
/// if answer.value == Quota::Over {
///     println!("come back in {:?}", answer.next);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Period(Arc<Inner>);

struct Inner {
    counted: Counted<ironward::Period>,
    align: bool,
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
    pub async fn take(&self, key: impl AsRef<[u8]>, now: Duration) -> Result<Answer<Quota>, Error> {
        self.take_key(Some(key.as_ref()), now).await
    }

    /// How long after `now` the open period of `key` ends, without changing anything:
    /// zero when none is open.
    pub async fn next(&self, key: impl AsRef<[u8]>, now: Duration) -> Result<Duration, Error> {
        let key = Some(key.as_ref());
        let this = &self.0.counted;
        let reading = Reading::new(this.store.options().time, now);
        let [count, start, ts] = this.keys(key, ["count", "start", "ts"]);
        let mut call = script::PERIOD_NEXT.prepare_invoke();
        call.key(count).key(start).key(ts);
        call.arg(reading.arg()).arg(this.micros);
        let decode = |reply: &redis::Value| {
            let [wait, t] = wire::items(reply)?;
            Some(reading.wait(wire::micros(t)?, wire::micros(wait)? as i64))
        };
        let ran = this.store.run(&this.meter, "period_next", &call, decode);
        match ran.await? {
            Ran::Answered(wait) => Ok(wait),
            Ran::Local => {
                this.store.answered_locally();
                if this.refuses_locally() {
                    return Ok(this.store.options().probe);
                }
                let make = || self.local_period();
                let next = |period: &ironward::Period, latest| {
                    local::from_now(period.next(now), latest, now)
                };
                Ok(this.local.peek(key, now, make, next))
            }
        }
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

    /// The store the limiter's keys are in: its [`mode`](Store::mode) and [`stats`](Store::stats).
    pub fn store(&self) -> &Store {
        &self.0.counted.store
    }

    /// [`take`](Period::take) for `key`, or for the budget of requests without a key,
    /// counted and, when refused, reported.
    pub(crate) async fn take_key(
        &self,
        key: Option<&[u8]>,
        now: Duration,
    ) -> Result<Answer<Quota>, Error> {
        let decided = self.decide(key, now).await;
        let this = &self.0.counted;
        let meter = &this.meter;
        meter.count(&decided);
        if let Ok(answer) = &decided
            && !answer.admitted()
        {
            tracing::debug!(
                piece = meter.piece(),
                name = meter.name(),
                source = meter::source(answer.mode),
                quota = this.quota_of(answer.mode),
                period = ?this.span,
                retry_after = ?answer.next,
                "period over its quota; refused"
            );
        }
        decided
    }

    /// What [`take_key`](Period::take_key) decides, before it is counted.
    async fn decide(&self, key: Option<&[u8]>, now: Duration) -> Result<Answer<Quota>, Error> {
        let (this, align) = (&self.0.counted, self.0.align);
        if let Some(next) = this.blocked.check(key, now, 1.0) {
            this.store.answered_blocked();
            return Ok(Answer {
                value: Quota::Over,
                next,
                mode: crate::Mode::Redis,
            });
        }
        let reading = Reading::new(this.store.options().time, now);
        let [count, start, ts] = this.keys(key, ["count", "start", "ts"]);
        let mut call = script::PERIOD.prepare_invoke();
        call.key(count).key(start).key(ts);
        call.arg(reading.arg())
            .arg(this.quota)
            .arg(this.micros)
            .arg(u8::from(align))
            .arg(this.ttl_ms);
        let decode = |reply: &redis::Value| {
            let [answer, wait, t] = wire::items(reply)?;
            let value = match wire::int(answer)? {
                1 => Quota::Under,
                2 => Quota::Hit,
                3 => Quota::Over,
                _ => return None,
            };
            let next = reading.wait(wire::micros(t)?, wire::micros(wait)? as i64);
            Some(Answer {
                value,
                next,
                mode: crate::Mode::Redis,
            })
        };
        let ran = this.store.run(&this.meter, "period", &call, decode);
        match ran.await? {
            Ran::Answered(answer) => {
                let refused = answer.value == Quota::Over;
                this.blocked.note(key, now, refused, answer.next, 1.0);
                Ok(answer)
            }
            Ran::Local => {
                this.store.answered_locally();
                if this.refuses_locally() {
                    return Ok(Answer {
                        value: Quota::Over,
                        next: this.store.options().probe,
                        mode: crate::Mode::Local,
                    });
                }
                let make = || self.local_period();
                Ok(this.local.with(key, now, make, |period, latest| Answer {
                    value: period.take(now),
                    next: local::from_now(period.next(now), latest, now),
                    mode: crate::Mode::Local,
                }))
            }
        }
    }
}

impl Period {
    /// A fresh fallback counter.
    fn local_period(&self) -> ironward::Period {
        let this = &self.0.counted;
        if self.0.align {
            ironward::Period::aligned(this.local_quota, this.span)
        } else {
            ironward::Period::new(this.local_quota, this.span)
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
