//! [`Periods`]: several fixed-window quotas for one key, kept in Redis and decided at once,
//! all or nothing, as `ironward::Limits` decides `ironward::Period`s.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ironward::LimitsReason;

use crate::local::{self, Fallback, Local};
use crate::meter::{Admits, Meter, Piece};
use crate::store::Ran;
use crate::wire::{self, Reading};
use crate::{Answer, Error, Mode, Store, Term, script};

/// Several fixed-window quotas for each key, kept in Redis and decided at once, all or
/// nothing: "60 requests a minute, 100 000 tokens a minute and 1 000 000 tokens a day".
///
/// Asking a [`Period`](crate::Period) per limit in turn would charge the requests per
/// minute for a request the daily quota then refuses, and concurrent callers could each
/// pass one limit and fail another. So, as `ironward::Limits` does in memory, a
/// [`take`](Periods::take) asks every limit whether it admits its own cost and charges
/// each exactly its cost only when all do; a refusal leaves every limit exactly as it was
/// (no clock moved, no refusal counted, where a `Period`'s `take` counts one). Each limit
/// decides as `ironward::Period::check_n` and waits as its `next_n`, and the answer is the
/// core's `Limits` answer: admitted, or the limit that waits longest and when every limit
/// would admit ([`LimitsReason`]).
///
/// **What it keeps.** Limit `i` of `key` is one key, `{name:key}.p<i>` (`.p0`, `.p1`, ...),
/// holding what a `Period`'s key holds: the units counted in the open period, when it
/// started and the latest reading seen, packed as three doubles. One hash tag, so every
/// limit of a key lies in one Redis Cluster slot and one script, `lua/periods.lua`, reads
/// them all, decides, and writes them all, atomically: no other command runs in between,
/// so no two processes can both pass a limit on its last units, and no caller ever sees
/// one limit charged without the others. Every write sets one TTL on every key, twice the
/// longest period (at least ten seconds), so the keys expire together.
///
/// **The bound.** In Redis, every limit's admitted units per period are at most its quota,
/// for the whole fleet. While Redis is away the store's fallback decides with the core's
/// rule over core `Period`s of `⌊share · quota⌋` each, per key, as a `Period`'s fallback
/// does (a limit whose share is below one unit refuses every request, `next` the probe
/// interval); so a fleet of `N` processes admits at most `N · ⌊share · quota⌋` of each.
///
/// **Costs.** One cost per limit, in the order of the terms: `[1, tokens, tokens]`. A cost
/// of 0 passes its limit without taking; a cost above its quota never passes (`next` is
/// `Duration::MAX`). A list of costs of another length than the terms is no request this
/// limiter can decide: it is refused with `LimitsReason { index, next: Duration::MAX }`,
/// `index` the first place where the lists differ, without a round trip and changing
/// nothing. No terms at all (and no costs) admit everything, as the core's `Limits([])`
/// does, again without a round trip; such answers name the store's current [`Mode`].
///
/// Time is read as the crate docs' "Equivalence" says (whole microseconds, `next` counted
/// from the `now` passed), and `Clone` shares one limiter: its fallback and its name. Every
/// decision is a round trip: the memory of refusals the single limiters keep
/// ([`Options::blocked_keys`](crate::Options::blocked_keys)) is filed by one cost, and is
/// not kept here.
///
/// # Examples
///
/// On the fallback, which needs no Redis:
///
/// ```
/// use std::time::Duration;
/// use ironward::LimitsReason;
/// use ironward_redis::{Mode, Options, Periods, Store, Term};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// let secs = Duration::from_secs;
/// let limits = Periods::new(&store, "llm", &[
///     Term::new(60, secs(60)),         // requests a minute
///     Term::new(100_000, secs(60)),    // tokens a minute
///     Term::aligned(1_000_000, secs(86_400)), // tokens a day
/// ]);
/// let answer = limits.take("alice", secs(0), &[1, 90_000, 90_000]).await.unwrap();
/// assert_eq!((answer.value, answer.mode), (Ok(()), Mode::Local));
/// // 20 000 tokens more pass no minute that has counted 90 000: refused, nothing charged.
/// let refused = limits.take("alice", secs(10), &[1, 20_000, 20_000]).await.unwrap();
/// assert_eq!(refused.value, Err(LimitsReason { index: 1, next: secs(50) }));
/// assert!(limits.take("alice", secs(10), &[1, 10_000, 10_000]).await.unwrap().admitted());
/// # Ok(())
/// # }
/// ```
///
/// On Redis. This needs a Redis server, so it is not run here:
///
/// ```no_run
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use ironward_redis::{Options, Periods, Store, Term};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Store::connect("redis://127.0.0.1/", Options::default()).await?;
/// let minute = Duration::from_secs(60);
/// let limits = Periods::new(&store, "llm", &[Term::new(60, minute), Term::new(100_000, minute)]);
/// let now = SystemTime::now().duration_since(UNIX_EPOCH)?;
/// let tokens = 4_000;
/// match limits.take("alice", now, &[1, tokens]).await?.value {
///     Ok(()) => { /* serve */ }
///     Err(reason) => println!("limit {} refused; retry after {:?}", reason.index, reason.next),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Periods(Arc<Inner>);

struct Inner {
    store: Store,
    name: Box<str>,
    /// The terms as the core reads them (a period of at least 1 ns).
    terms: Box<[Term]>,
    /// Each term's period as the script reads it: whole microseconds, at least 1.
    micros: Box<[u64]>,
    /// Each term's fallback quota: the store's share of it, rounded down.
    local_quotas: Box<[u32]>,
    /// The keys' parts: `p0`, `p1`, ...
    parts: Box<[Box<str>]>,
    /// One TTL for every key, the longest term's.
    ttl_ms: u64,
    local: Local<Group>,
    meter: Meter,
}

/// The answer a [`Periods`] decision gives: admitted, or why not.
type Decision = Result<(), LimitsReason>;

impl Admits for Decision {
    fn admits(&self) -> bool {
        self.is_ok()
    }
}

impl Answer<Result<(), LimitsReason>> {
    /// Whether the request was admitted by every limit of a [`Periods`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::LimitsReason;
    /// use ironward_redis::{Answer, Mode};
    ///
    /// let refused = LimitsReason { index: 1, next: Duration::from_secs(5) };
    /// let answer = Answer { value: Err(refused), next: refused.next, mode: Mode::Redis };
    /// assert!(!answer.admitted());
    /// ```
    pub fn admitted(&self) -> bool {
        self.value.is_ok()
    }
}

impl Periods {
    /// The limits `terms` for each key, in the keys named `name` (an empty one is read as
    /// `"ironward"`); two limiters with the same name and different terms would share
    /// state, and a [`Period`](crate::Period) of the same name keeps other keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Options, Periods, Store, Term};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let limits = Periods::new(&store, "api", &[Term::new(10, Duration::ZERO)]);
    /// assert_eq!(limits.terms()[0].period, Duration::from_nanos(1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(store: &Store, name: &str, terms: &[Term]) -> Self {
        let options = store.options();
        let terms: Box<[Term]> = terms
            .iter()
            .map(|term| Term {
                // The period as the core reads it; a `Period` allocates nothing.
                period: ironward::Period::new(term.quota, term.period).period(),
                ..*term
            })
            .collect();
        let micros: Box<[u64]> = terms
            .iter()
            .map(|term| wire::span_micros(term.period))
            .collect();
        let longest = micros.iter().copied().max().unwrap_or(1);
        let name = wire::name(name);
        Self(Arc::new(Inner {
            store: store.clone(),
            meter: Meter::new(Piece::Period, &name),
            name,
            local_quotas: terms
                .iter()
                // The product is below 2^32, and `as` truncates towards zero.
                .map(|term| (f64::from(term.quota) * options.local_share()) as u32)
                .collect(),
            parts: (0..terms.len()).map(|i| format!("p{i}").into()).collect(),
            ttl_ms: wire::ttl_ms(Duration::from_micros(longest)),
            local: Local::new(options.local_keys),
            micros,
            terms,
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
    /// use ironward_redis::{Options, Periods, Store, Term};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// let limits = Periods::new(&store, "api", &[Term::new(2, secs(10)), Term::new(50, secs(60))]);
    /// let first = limits.take("bob", secs(0), &[1, 30]).await.unwrap();
    /// // A second request of 30 would be refused by the tokens until their minute ends.
    /// assert_eq!((first.value, first.next), (Ok(()), secs(60)));
    /// // Too few costs: no request this limiter can decide.
    /// let wrong = limits.take("bob", secs(1), &[1]).await.unwrap();
    /// assert_eq!(wrong.value, Err(LimitsReason { index: 1, next: Duration::MAX }));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn take(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        costs: &[u32],
    ) -> Result<Answer<Decision>, Error> {
        let decided = self.decide(key.as_ref(), now, costs).await;
        let this = &self.0;
        this.meter.count(&decided);
        if let Ok(Answer {
            value: Err(reason),
            mode,
            ..
        }) = &decided
            && let Some(term) = this.terms.get(reason.index)
        {
            tracing::debug!(
                piece = this.meter.piece(),
                name = this.meter.name(),
                source = crate::meter::source(*mode),
                limit = reason.index,
                quota = match mode {
                    Mode::Redis => term.quota,
                    Mode::Local => this.local_quotas[reason.index],
                },
                period = ?term.period,
                cost = costs.get(reason.index).copied(),
                retry_after = ?reason.next,
                "periods over a quota; refused"
            );
        }
        decided
    }

    /// Whether every limit would admit its cost for `key` at `now`, changing nothing, as
    /// `ironward::Limits::peek` answers: `Err` names the limit that waits longest and when
    /// all would admit. Costs of the wrong length and no terms are read as
    /// [`take`](Periods::take) reads them.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::LimitsReason;
    /// use ironward_redis::{Options, Periods, Store, Term};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// let limits = Periods::new(&store, "api", &[Term::new(2, secs(10)), Term::new(50, secs(60))]);
    /// assert_eq!(limits.peek("bob", secs(0), &[1, 51]).await.unwrap(),
    ///     Err(LimitsReason { index: 1, next: Duration::MAX }));
    /// assert_eq!(limits.peek("bob", secs(0), &[2, 50]).await.unwrap(), Ok(()));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn peek(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        costs: &[u32],
    ) -> Result<Decision, Error> {
        let key = key.as_ref();
        let this = &self.0;
        if let Some(answer) = self.undecidable(costs) {
            return Ok(answer.value);
        }
        let reading = Reading::new(this.store.options().time, now);
        let call = self.call(key, &reading, costs, false);
        let decode = |reply: &redis::Value| self.decode(reply, &reading).map(|(_, next)| next);
        match this
            .store
            .run(&this.meter, "periods", &call, decode)
            .await?
        {
            Ran::Answered(decision) => Ok(decision),
            Ran::Local => {
                this.store.answered_locally();
                if let Some(reason) = self.refused_locally() {
                    return Ok(Err(reason));
                }
                let make = || self.local_group();
                Ok(this
                    .local
                    .peek(Some(key), now, make, |group, _| group.peek(now, costs)))
            }
        }
    }

    /// What [`take`](Periods::take) decides, before it is counted.
    async fn decide(
        &self,
        key: &[u8],
        now: Duration,
        costs: &[u32],
    ) -> Result<Answer<Decision>, Error> {
        let this = &self.0;
        if let Some(answer) = self.undecidable(costs) {
            return Ok(answer);
        }
        let reading = Reading::new(this.store.options().time, now);
        let call = self.call(key, &reading, costs, true);
        let decode = |reply: &redis::Value| {
            let (admitted, after) = self.decode(reply, &reading)?;
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
                mode: Mode::Redis,
            })
        };
        match this
            .store
            .run(&this.meter, "periods", &call, decode)
            .await?
        {
            Ran::Answered(answer) => Ok(answer),
            Ran::Local => {
                this.store.answered_locally();
                if let Some(reason) = self.refused_locally() {
                    return Ok(Answer {
                        value: Err(reason),
                        next: reason.next,
                        mode: Mode::Local,
                    });
                }
                let make = || self.local_group();
                Ok(this
                    .local
                    .with(Some(key), now, make, |group, _| group.take(now, costs)))
            }
        }
    }

    /// The answer to costs that are not one per term, or to no terms at all, which no
    /// script is asked: refused as never, or (no terms) admitted.
    fn undecidable(&self, costs: &[u32]) -> Option<Answer<Decision>> {
        let this = &self.0;
        let n = this.terms.len();
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
            mode: this.store.mode(),
        })
    }

    /// The call of `lua/periods.lua` for `key` at `reading`, taking the costs or not.
    fn call(
        &self,
        key: &[u8],
        reading: &Reading,
        costs: &[u32],
        take: bool,
    ) -> redis::ScriptInvocation<'static> {
        let this = &self.0;
        let mut call = script::PERIODS.prepare_invoke();
        for part in &this.parts {
            call.key(wire::key(&this.name, Some(key), part));
        }
        call.arg(reading.arg()).arg(u8::from(take)).arg(this.ttl_ms);
        for ((term, micros), cost) in this.terms.iter().zip(&this.micros).zip(costs) {
            call.arg(term.quota)
                .arg(*micros)
                .arg(u8::from(term.align))
                .arg(*cost);
        }
        call
    }

    /// The script's reply: whether every limit admitted, and the core's `peek` after it,
    /// each wait counted from `now`. `None` for a reply the script never gives.
    fn decode(&self, reply: &redis::Value, reading: &Reading) -> Option<(bool, Decision)> {
        let redis::Value::Array(items) = reply else {
            return None;
        };
        let (admitted, limits) = items.split_first()?;
        if limits.len() != 2 * self.0.terms.len() {
            return None;
        }
        let admitted = match wire::int(admitted)? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let mut waits = Vec::with_capacity(self.0.terms.len());
        for limit in limits.chunks_exact(2) {
            let t = wire::micros(&limit[0])?;
            waits.push(reading.wait(t, wire::wait(&limit[1])?));
        }
        Some((admitted, longest(waits)))
    }

    /// A term whose fallback share is below one unit (a share of 0 among them), so that
    /// the fallback refuses every request until Redis may answer again, as a
    /// [`Period`](crate::Period)'s fallback does.
    fn refused_locally(&self) -> Option<LimitsReason> {
        let this = &self.0;
        let index = this
            .terms
            .iter()
            .zip(&this.local_quotas)
            .position(|(term, &local)| local == 0 && term.quota > 0)?;
        Some(LimitsReason {
            index,
            next: this.store.options().probe,
        })
    }

    /// A fresh fallback group of core periods, one per term at its share.
    fn local_group(&self) -> Group {
        let this = &self.0;
        let periods = this
            .terms
            .iter()
            .zip(&this.local_quotas)
            .map(|(term, &quota)| {
                if term.align {
                    ironward::Period::aligned(quota, term.period)
                } else {
                    ironward::Period::new(quota, term.period)
                }
            })
            .collect();
        Group {
            periods,
            latest: Duration::ZERO,
        }
    }

    /// The terms, as the core reads them (a period below 1 ns is 1 ns; the script rounds
    /// each up to whole microseconds).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Options, Periods, Store, Term};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let terms = [Term::new(60, Duration::from_secs(60)), Term::aligned(1_000, Duration::from_secs(86_400))];
    /// assert_eq!(Periods::new(&store, "api", &terms).terms(), terms);
    /// # Ok(())
    /// # }
    /// ```
    pub fn terms(&self) -> &[Term] {
        &self.0.terms
    }

    /// The store the limiter's keys are in: its [`mode`](Store::mode) and [`stats`](Store::stats).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Options, Periods, Store, Term};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let limits = Periods::new(&store, "api", &[Term::new(60, Duration::from_secs(60))]);
    /// assert!(limits.store().options().start_local);
    /// # Ok(())
    /// # }
    /// ```
    pub fn store(&self) -> &Store {
        &self.0.store
    }
}

/// The core's `Limits::peek` rule over waits: the first limit that waits longest, or `Ok`
/// when none waits.
fn longest(waits: impl IntoIterator<Item = Duration>) -> Decision {
    let mut longest = LimitsReason {
        index: 0,
        next: Duration::ZERO,
    };
    for (index, next) in waits.into_iter().enumerate() {
        if next > longest.next {
            longest = LimitsReason { index, next };
        }
    }
    if longest.next.is_zero() {
        Ok(())
    } else {
        Err(longest)
    }
}

/// The fallback of one key: a core period per term, and the latest reading they were
/// charged at. Every period is charged at once or none is, so they have all seen that
/// reading, as core periods under one `Limits` have.
#[derive(Clone)]
struct Group {
    periods: Vec<ironward::Period>,
    latest: Duration,
}

impl Fallback for Group {
    fn idle(&self) -> Duration {
        self.periods
            .iter()
            .map(ironward::Period::idle)
            .max()
            .unwrap_or(Duration::ZERO)
    }
}

impl Group {
    /// The core's `Limits::peek` at `now`, each wait counted from `now`.
    fn peek(&self, now: Duration, costs: &[u32]) -> Decision {
        // `ironward::Limit::next` of a period is its `next_n`; a `Limit` would need `&mut`.
        longest(
            self.periods
                .iter()
                .zip(costs)
                .map(|(period, &cost)| local::from_now(period.next_n(now, cost), self.latest, now)),
        )
    }

    /// The core's `Limits::check` at `now`, and its `peek` after.
    fn take(&mut self, now: Duration, costs: &[u32]) -> Answer<Decision> {
        let value = self.peek(now, costs);
        if value.is_ok() {
            for (period, &cost) in self.periods.iter_mut().zip(costs) {
                // Each admits at `now`, as its wait of zero said.
                let _ = period.check_n(now, cost);
            }
            self.latest = self.latest.max(now);
        }
        let next = self
            .peek(now, costs)
            .err()
            .map_or(Duration::ZERO, |r| r.next);
        Answer {
            value,
            next,
            mode: Mode::Local,
        }
    }
}

impl fmt::Debug for Periods {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let this = &self.0;
        f.debug_struct("Periods")
            .field("name", &this.name)
            .field("terms", &this.terms)
            .field("local_quotas", &this.local_quotas)
            .finish_non_exhaustive()
    }
}
