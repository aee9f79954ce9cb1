//! [`Periods`]: several fixed-window quotas for one key, kept in Redis and decided at once,
//! all or nothing, as `ironward::Limits` decides `ironward::Period`s: the period-only case
//! of a [`Limits`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ironward_tokio::Quota;

use crate::group::Decision;
use crate::meter::Piece;
use crate::{Answer, Limits, Store, StoreError, Term};

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
/// would admit ([`LimitsReason`](ironward::LimitsReason)).
///
/// It is the period-only case of a [`Limits`]: each [`Term`] is an
/// `ironward_tokio::Quota::Period`, decided by the same script, `lua/limits.lua`, with the
/// same period rule as a [`Period`](crate::Period)'s scripts (`lua/period_state.lua`).
///
/// **What it keeps.** Limit `i` of `key` is one key, `{name:key}.p<i>` (`.p0`, `.p1`, ...),
/// holding what a `Period`'s key holds: the units counted in the open period, when it
/// started and the latest reading seen, packed as three doubles. One hash tag, so every
/// limit of a key lies in one Redis Cluster slot and one script reads them all, decides,
/// and writes them all, atomically: no other command runs in between, so no two processes
/// can both pass a limit on its last units, and no caller ever sees one limit charged
/// without the others. Every write sets one TTL on every key, twice the longest period (at
/// least ten seconds), so the keys expire together.
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
/// does, again without a round trip; such answers name the store's current [`Source`](crate::Source).
///
/// Time is read as the guide's [equivalence](crate::_guide::equivalence) says (whole microseconds, `next` counted
/// from the `now` passed), and `Clone` shares one limiter: its fallback, its memory of
/// refusals and its name. Refused keys are remembered as a [`Limits`] remembers them
/// ([`Options::blocked_keys`](crate::Options::blocked_keys)): a later call for the key with
/// the same costs, every one, is refused from memory until the refusal could pass.
///
/// # Examples
///
/// On the fallback, which needs no Redis:
///
/// ```
/// use std::time::Duration;
/// use ironward::LimitsReason;
/// use ironward_redis::{Source, Options, Periods, Store, Term};
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
/// assert_eq!((answer.value, answer.source), (Ok(()), Source::Local));
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
    limits: Limits,
    /// The terms as the core reads them (a period of at least 1 ns).
    terms: Box<[Term]>,
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
        let limits: Vec<Quota> = terms
            .iter()
            .map(|term| Quota::Period {
                quota: term.quota,
                period: term.period,
                align: term.align,
            })
            .collect();
        let limits = Limits::with(store, name, &limits, Piece::Period);
        let terms = limits
            .limits()
            .iter()
            .zip(terms)
            .map(|(limit, term)| match *limit {
                Quota::Period { period, .. } => Term { period, ..*term },
                // A period stays a period.
                _ => *term,
            })
            .collect();
        Self(Arc::new(Inner { limits, terms }))
    }

    /// Takes each limit's cost for `key` at `now` if every limit admits its own, and none
    /// if any does not, as `ironward::Limits::check` does.
    ///
    /// The answer's `value` is `Ok(())` or the [`LimitsReason`](ironward::LimitsReason) of the refusal; its `next`
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
    ) -> Result<Answer<Decision>, StoreError> {
        self.0.limits.take(key, now, &units(costs)).await
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
    ) -> Result<Decision, StoreError> {
        self.0.limits.peek(key, now, &units(costs)).await
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

    /// The store the limiter's keys are in: its [`source`](Store::source) and [`stats`](Store::stats).
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
        self.0.limits.store()
    }
}

/// Costs in units, as a [`Limits`] takes them (an `f64` holds every `u32` exactly).
fn units(costs: &[u32]) -> Vec<f64> {
    costs.iter().map(|&cost| f64::from(cost)).collect()
}

impl fmt::Debug for Periods {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Periods")
            .field("terms", &self.0.terms)
            .field("limits", &self.0.limits)
            .finish()
    }
}
