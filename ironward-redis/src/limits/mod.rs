//! [`Limits`]: several limits of any kind for one key, kept in Redis and decided at once,
//! all or nothing, as `ironward::Limits` decides its buckets, logs and periods.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ironward::LimitsReason;
use ironward_tokio::Quota;

use crate::blocked::Blocked;
use crate::group::{Decision, Group};
use crate::local::Local;
use crate::meter::{Admits, Meter, Piece};
use crate::store::Ran;
use crate::wire::{self, Reading};
use crate::{Answer, Source, Store, StoreError};

mod script;

use script::{Shape, read};

/// Several limits of any kind for each key, kept in Redis and decided at once, all or
/// nothing: "60 requests a minute as a bucket, 100 000 tokens in any minute and 1 000 000
/// tokens a day".
///
/// Asking a [`Bucket`](crate::Bucket), a [`Sliding`](crate::Sliding) and a
/// [`Period`](crate::Period) in turn would charge the first for a request the last then
/// refuses, and concurrent callers could each pass one limit and fail another. So, as
/// `ironward::Limits` does in memory, a [`take`](Limits::take) asks every limit whether it
/// admits its own cost and charges each exactly its cost only when all do; a refusal leaves
/// every limit exactly as it was (no clock moved, no refusal counted). Each limit decides
/// as the core's cost method of its kind (`Bucket::take`, `Sliding::take_n`,
/// `Period::check_n`) and waits as its `next` or `next_n`, and the answer is the core's
/// `Limits` answer: admitted, or the limit that waits longest and when every limit would
/// admit ([`LimitsReason`]). Each limit is an `ironward_tokio::Quota`, the policy a
/// [`FleetQuotaLayer`](crate::FleetQuotaLayer) takes, read as the core reads it (a NaN rate
/// is 0, a window below 1 µs is 1 µs, and so on).
///
/// **What it keeps.** Limit `i` of `key` keeps what the single limiter of its kind keeps,
/// under parts named for its place: a bucket `{name:key}.b<i>` (the tokens) and
/// `.b<i>.ts`, a log `.l<i>` (the entries) and `.l<i>.ts`, a period `.p<i>` (a bucket of
/// infinite burst keeps nothing: it admits every finite cost). One hash tag, so every key
/// lies in one Redis Cluster slot, and one script, `lua/limits.lua`, reads them all,
/// decides, and writes them all, atomically: no other command runs in between, so no two
/// processes can both pass a limit on its last units, and no caller ever sees one limit
/// charged without the others. The script reads and decides each limit with the same Lua
/// the single limiters' scripts use (the preludes `lua/bucket_state.lua`, `lua/log.lua`,
/// `lua/period_state.lua`), so a kind is decided by one rule wherever it is used. Every
/// write sets one TTL on every key, the longest limit's (twice the time it takes to be as
/// good as new, at least ten seconds), so the keys expire together.
///
/// **The bound.** In Redis, every limit holds its own bound for the whole fleet: a bucket's
/// `burst + rate · d` over any stretch `d`, a log's quota in any window, a period's quota
/// per period. While Redis is away the store's fallback decides with the core's rule over
/// core limiters at the store's share ([`Options::share`](crate::Options::share)): a
/// bucket of `share · rate` and `share · burst`, a log or a period of `⌊share · quota⌋`,
/// per key; a limit whose share comes to less than one unit (one token) refuses as its
/// single limiter's fallback does (every cost, a bucket's every positive cost), `next` the
/// probe interval. So a fleet of `N` processes admits at most `N` times each limit's share.
///
/// **Refused keys are remembered**, as the single limiters remember them
/// ([`Options::blocked_keys`](crate::Options::blocked_keys), on the caller's clock only): a
/// refusal says when every limit would admit the same costs, and nothing another process
/// does brings that sooner (they only take), so a later call for the key with the same
/// costs, every one, is refused from memory until then, naming the limit Redis named.
/// Calls of other costs go to Redis.
///
/// **Costs.** One cost per limit, in the order of the limits: `[1.0, tokens, tokens]`. A
/// bucket's cost is in tokens, as [`Bucket::take`](crate::Bucket::take)'s `n` (negative,
/// NaN or infinite is refused as never); a log's or a period's is a whole number of units,
/// which an `f64` holds exactly up to `u32::MAX`, and any other number (a fraction, a
/// negative one, NaN, past `u32::MAX`) is refused by that limit as never, as a cost above
/// its quota is. A cost of 0 passes its limit without taking (but a bucket in debt, and a
/// period opens). A list of costs of another length than the limits is no request this
/// limiter can decide: it is refused with `LimitsReason { index, next: Duration::MAX }`,
/// `index` the first place where the lists differ, without a round trip and changing
/// nothing. No limits at all (and no costs) admit everything, as the core's `Limits([])`
/// does, again without a round trip; such answers name the store's current [`Source`].
///
/// Time is read as the guide's [equivalence](crate::_guide::equivalence) says (whole microseconds, `next` counted
/// from the `now` passed), and `Clone` shares one limiter: its fallback, its memory of
/// refusals and its name.
///
/// # Examples
///
/// On the fallback, which needs no Redis:
///
/// ```
/// use std::time::Duration;
/// use ironward::LimitsReason;
/// use ironward_redis::{Limits, Source, Options, Store};
/// use ironward_tokio::Quota;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// let secs = Duration::from_secs;
/// let limits = Limits::new(&store, "llm", &[
///     Quota::bucket(1.0, 60.0),                // 60 requests a minute, in bursts
///     Quota::sliding(100_000, secs(60)),       // tokens in any minute
///     Quota::aligned(1_000_000, secs(86_400)), // tokens a day, from midnight
/// ]);
/// let answer = limits.take("alice", secs(0), &[1.0, 90_000.0, 90_000.0]).await.unwrap();
/// assert_eq!((answer.value, answer.source), (Ok(()), Source::Local));
/// // 20 000 tokens more do not fit the minute: refused, and nothing is charged.
/// let refused = limits.take("alice", secs(10), &[1.0, 20_000.0, 20_000.0]).await.unwrap();
/// assert_eq!(refused.value, Err(LimitsReason { index: 1, next: secs(50) }));
/// assert!(limits.take("alice", secs(10), &[1.0, 10_000.0, 10_000.0]).await.unwrap().admitted());
/// # Ok(())
/// # }
/// ```
///
/// On Redis. This needs a Redis server, so it is not run here:
///
/// ```no_run
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use ironward_redis::{Limits, Options, Store};
/// use ironward_tokio::Quota;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Store::connect("redis://127.0.0.1/", Options::default()).await?;
/// let minute = Duration::from_secs(60);
/// let limits = Limits::new(&store, "llm", &[Quota::bucket(1.0, 60.0), Quota::sliding(100_000, minute)]);
/// let now = SystemTime::now().duration_since(UNIX_EPOCH)?;
/// match limits.take("alice", now, &[1.0, 4_000.0]).await?.value {
///     Ok(()) => { /* serve */ }
///     Err(reason) => println!("limit {} refused; retry after {:?}", reason.index, reason.next),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Limits(Arc<Inner>);

struct Inner {
    store: Store,
    name: Box<str>,
    /// The limits as the core reads them.
    limits: Box<[Quota]>,
    /// Each limit as the script reads it.
    shapes: Box<[Shape]>,
    /// Every limit's keys' parts, in the script's order.
    parts: Box<[Box<str>]>,
    /// One TTL for every key, the longest limit's.
    ttl_ms: u64,
    local: Local<Group>,
    /// The keys Redis refused lately, refused again from memory until they could pass.
    blocked: Blocked,
    meter: Meter,
}

impl Admits for Decision {
    fn admits(&self) -> bool {
        self.is_ok()
    }
}

impl Answer<Result<(), LimitsReason>> {
    /// Whether the request was admitted by every limit of a [`Limits`] (or of a
    /// [`Periods`](crate::Periods)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::LimitsReason;
    /// use ironward_redis::{Answer, Source};
    ///
    /// let refused = LimitsReason { index: 1, next: Duration::from_secs(5) };
    /// let answer = Answer { value: Err(refused), next: refused.next, source: Source::Redis };
    /// assert!(!answer.admitted());
    /// ```
    pub fn admitted(&self) -> bool {
        self.value.is_ok()
    }
}

impl Limits {
    /// The limits `limits` for each key, in the keys named `name` (an empty one is read as
    /// `"ironward"`); two limiters with the same name and different limits would share
    /// state, and a single limiter of the same name keeps other keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Limits, Options, Store};
    /// use ironward_tokio::Quota;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let limits = Limits::new(&store, "api", &[Quota::bucket(f64::NAN, 0.5)]);
    /// // Read as the core reads them: a NaN rate never refills, a burst below 1 is 1.
    /// assert_eq!(limits.limits(), [Quota::bucket(0.0, 1.0)]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(store: &Store, name: &str, limits: &[Quota]) -> Self {
        Self::with(store, name, limits, Piece::Limits)
    }

    /// [`new`](Limits::new), reporting its decisions as `piece`.
    pub(crate) fn with(store: &Store, name: &str, limits: &[Quota], piece: Piece) -> Self {
        let options = store.options();
        let mut parts = Vec::new();
        let mut ttl_ms = wire::MIN_TTL_MS;
        let (limits, shapes): (Vec<Quota>, Vec<Shape>) = limits
            .iter()
            .enumerate()
            .map(|(i, limit)| {
                let (limit, shape, fresh) = read(limit);
                match shape {
                    Shape::Bucket { .. } => parts.extend([format!("b{i}"), format!("b{i}.ts")]),
                    Shape::Free => {}
                    Shape::Sliding { .. } => parts.extend([format!("l{i}"), format!("l{i}.ts")]),
                    Shape::Period { .. } => parts.push(format!("p{i}")),
                }
                if !matches!(shape, Shape::Free) {
                    ttl_ms = ttl_ms.max(wire::ttl_ms(fresh));
                }
                (limit, shape)
            })
            .unzip();
        let name = wire::name(name);
        Self(Arc::new(Inner {
            store: store.clone(),
            meter: Meter::new(piece, &name),
            name,
            limits: limits.into(),
            shapes: shapes.into(),
            parts: parts.into_iter().map(Into::into).collect(),
            ttl_ms,
            local: Local::new(options.local_keys),
            blocked: Blocked::for_store(options),
        }))
    }

    /// Takes each limit's cost for `key` at `now` if every limit admits its own, and none
    /// if any does not, as `ironward::Limits::check` does.
    ///
    /// The answer's `value` is `Ok(())` or the [`LimitsReason`] of the refusal; its `next`
    /// is the core's `peek` right after (zero while the same costs would pass again, else
    /// when all would admit them, `Duration::MAX` for never). With
    /// [`Time::Server`](crate::Time::Server), Redis's clock replaces `now` (which the
    /// fallback still reads).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::LimitsReason;
    /// use ironward_redis::{Limits, Options, Store};
    /// use ironward_tokio::Quota;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// let limits = Limits::new(&store, "api", &[Quota::bucket(0.5, 2.0), Quota::period(50, secs(60))]);
    /// let first = limits.take("bob", secs(0), &[2.0, 30.0]).await.unwrap();
    /// // The same request again: the bucket has 2 tokens in 4 s, the period 30 units in 60 s.
    /// assert_eq!((first.value, first.next), (Ok(()), secs(60)));
    /// // A period's cost is a whole number of units.
    /// let half = limits.take("bob", secs(1), &[0.0, 0.5]).await.unwrap();
    /// assert_eq!(half.value, Err(LimitsReason { index: 1, next: Duration::MAX }));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn take(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        costs: &[f64],
    ) -> Result<Answer<Decision>, StoreError> {
        let decided = self.decide(key.as_ref(), now, costs).await;
        let this = &self.0;
        this.meter.count(&decided);
        if let Ok(Answer {
            value: Err(reason),
            source,
            ..
        }) = &decided
            && let Some(limit) = this.limits.get(reason.index)
        {
            tracing::debug!(
                piece = this.meter.piece(),
                name = this.meter.name(),
                source = crate::meter::source_label(*source),
                limit = reason.index,
                policy = ?limit,
                share = match source {
                    Source::Redis => 1.0,
                    Source::Local => this.store.options().local_share(),
                },
                cost = costs.get(reason.index).copied(),
                retry_after = ?reason.next,
                "limits over a quota; refused"
            );
        }
        decided
    }

    /// Whether every limit would admit its cost for `key` at `now`, changing nothing, as
    /// `ironward::Limits::peek` answers: `Err` names the limit that waits longest and when
    /// all would admit. Costs of the wrong length and no limits are read as
    /// [`take`](Limits::take) reads them; a peek always asks Redis (or the fallback), never
    /// the memory of refusals.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::LimitsReason;
    /// use ironward_redis::{Limits, Options, Store};
    /// use ironward_tokio::Quota;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// let limits = Limits::new(&store, "api", &[Quota::bucket(1.0, 5.0), Quota::sliding(10, secs(60))]);
    /// assert_eq!(limits.peek("bob", secs(0), &[8.0, 8.0]).await.unwrap(),
    ///     Err(LimitsReason { index: 0, next: Duration::MAX }));
    /// assert_eq!(limits.peek("bob", secs(0), &[4.0, 8.0]).await.unwrap(), Ok(()));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn peek(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        costs: &[f64],
    ) -> Result<Decision, StoreError> {
        let key = key.as_ref();
        let this = &self.0;
        if let Some(answer) = self.undecidable(costs) {
            return Ok(answer.value);
        }
        let reading = Reading::new(this.store.options().time, now);
        let call = self.call(key, &reading, costs, false);
        let decode = |reply: &redis::Value| self.decode(reply, &reading, costs).map(|(_, d)| d);
        match this.store.run(&this.meter, call, decode).await? {
            Ran::Answered(decision) => Ok(decision),
            Ran::Local => {
                this.store.answered_locally();
                let make = || self.local_group();
                Ok(this
                    .local
                    .peek(Some(key), now, make, |group, _| group.peek(now, costs)))
            }
        }
    }

    /// What [`take`](Limits::take) decides, before it is counted.
    async fn decide(
        &self,
        key: &[u8],
        now: Duration,
        costs: &[f64],
    ) -> Result<Answer<Decision>, StoreError> {
        let this = &self.0;
        if let Some(answer) = self.undecidable(costs) {
            return Ok(answer);
        }
        if let Some((next, index)) = this.blocked.check_costs(Some(key), now, costs) {
            this.store.answered_blocked();
            return Ok(Answer {
                value: Err(LimitsReason { index, next }),
                next,
                source: Source::Redis,
            });
        }
        let reading = Reading::new(this.store.options().time, now);
        let call = self.call(key, &reading, costs, true);
        let decode = |reply: &redis::Value| {
            let (admitted, after) = self.decode(reply, &reading, costs)?;
            let next = after.err().map_or(Duration::ZERO, |reason| reason.next);
            let value = match (admitted, after) {
                (true, _) => Ok(()),
                (false, Err(reason)) => Err(reason),
                // A refusal with every limit admitting: no reply the script gives.
                (false, Ok(())) => return None,
            };
            Some(Answer {
                value,
                next,
                source: Source::Redis,
            })
        };
        match this.store.run(&this.meter, call, decode).await? {
            Ran::Answered(answer) => {
                let refused = answer.value.err().map(|reason| reason.index);
                this.blocked
                    .note_costs(Some(key), now, refused, answer.next, costs);
                Ok(answer)
            }
            Ran::Local => {
                this.store.answered_locally();
                let make = || self.local_group();
                Ok(this
                    .local
                    .with(Some(key), now, make, |group, _| group.take(now, costs)))
            }
        }
    }

    /// The answer to costs that are not one per limit, or to no limits at all, which no
    /// script is asked: refused as never, or (no limits) admitted.
    fn undecidable(&self, costs: &[f64]) -> Option<Answer<Decision>> {
        let this = &self.0;
        let n = this.limits.len();
        let (value, next) = if costs.len() != n {
            let reason = LimitsReason {
                index: costs.len().min(n),
                next: Duration::MAX,
            };
            (Err(reason), reason.next)
        } else if n == 0 {
            (Ok(()), Duration::ZERO)
        } else {
            return None;
        };
        Some(Answer {
            value,
            next,
            source: this.store.source(),
        })
    }

    /// A fresh fallback group, a core limiter per limit at the store's share.
    fn local_group(&self) -> Group {
        let options = self.0.store.options();
        Group::new(&self.0.limits, options.local_share(), options.probe)
    }

    /// The limits, as the core reads them (a bucket's rate and burst as `ironward::Bucket`
    /// reads them, a window or a period below 1 ns as 1 ns; the script rounds each span
    /// up to whole microseconds).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Limits, Options, Store};
    /// use ironward_tokio::Quota;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let limits = [Quota::sliding(60, Duration::from_secs(60)), Quota::aligned(1_000, Duration::from_secs(86_400))];
    /// assert_eq!(Limits::new(&store, "api", &limits).limits(), limits);
    /// # Ok(())
    /// # }
    /// ```
    pub fn limits(&self) -> &[Quota] {
        &self.0.limits
    }

    /// The store the limiter's keys are in: its [`source`](Store::source) and [`stats`](Store::stats).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Limits, Options, Store};
    /// use ironward_tokio::Quota;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let limits = Limits::new(&store, "api", &[Quota::bucket(1.0, 60.0)]);
    /// assert!(limits.store().options().start_local);
    /// # Ok(())
    /// # }
    /// ```
    pub fn store(&self) -> &Store {
        &self.0.store
    }
}

impl fmt::Debug for Limits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let this = &self.0;
        f.debug_struct("Limits")
            .field("name", &this.name)
            .field("limits", &this.limits)
            .field("share", &this.store.options().local_share())
            .finish_non_exhaustive()
    }
}
