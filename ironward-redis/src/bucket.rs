//! [`Bucket`]: a token bucket per key, kept in Redis.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::batch::Call;
use crate::blocked::Blocked;
use crate::decide::{self, Common, Kind};
use crate::local::Local;
use crate::meter::{self, Meter, Piece};
use crate::reservation::{self, Held, Reservation};
use crate::wire::{self, Reading};
use crate::{Answer, Source, Store, StoreError, script};

/// A token bucket per key, kept in Redis: `ironward::Bucket`, fleet-wide, and go-zero's
/// `TokenLimiter` (`core/limit/tokenlimit.go`) with the caller's clock in microseconds
/// rather than whole seconds.
///
/// Each key's bucket starts full at its first take and refills at `rate` tokens a second
/// up to `burst`; each take is one atomic script (`lua/bucket.lua`) that refills and takes
/// in Redis, in the core's float operations in the core's order, so the tokens left are
/// the core's to the last bit. `next` is the core's own, asked of an `ironward::Bucket`
/// holding the tokens the script returns (`Bucket::with_tokens`).
/// The keys (`{name:key}.tokens`, `.ts`) live twice `burst / rate` after their last write,
/// as go-zero's do.
///
/// Parameters are read as the core reads them: a rate that is negative, NaN or infinite
/// is 0 (never refills), a burst below 1 or NaN is 1, a cost that is negative, NaN or
/// infinite is refused with a `next` of `Duration::MAX`. An infinite burst admits every
/// finite cost without asking Redis, since no state could change the answer.
///
/// `Clone` shares the limiter: clones take from the same keys, and share one fallback.
///
/// # Examples
///
/// Without Redis the same calls are answered by the local fallback, exactly as
/// `ironward::Bucket` answers them (this example runs without a server):
///
/// ```
/// use std::time::Duration;
/// use ironward_redis::{Bucket, Options, Store};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// // No Redis there: start on the fallback, with the whole quota for this one process.
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// let now = Duration::from_secs(1_700_000_000);
/// // Ten a second, with room for a burst of twenty.
/// let bucket = Bucket::new(&store, "api", 10.0, 20.0);
/// assert!(bucket.take("k", now, 20.0).await.unwrap().admitted());
/// let refused = bucket.take("k", now, 1.0).await.unwrap();
/// // One token comes back every 100 ms.
/// assert_eq!((refused.value, refused.next), (false, Duration::from_millis(100)));
/// assert_eq!(bucket.next("k", now, 21.0).await.unwrap(), Duration::MAX);
/// # Ok(())
/// # }
/// ```
///
/// On Redis, a rate per client for a fleet. This needs a Redis server, so it is not run
/// here:
///
/// ```no_run
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use ironward_redis::{Bucket, Options, Store};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Store::connect("redis://127.0.0.1/", Options::default()).await?;
/// // Ten a second per client, with bursts of twenty.
/// let bucket = Bucket::new(&store, "api", 10.0, 20.0);
/// let now = SystemTime::now().duration_since(UNIX_EPOCH)?;
/// let answer = bucket.take("10.0.0.7", now, 1.0).await?;
/// if !answer.admitted() {
///     println!("retry after {:?}", answer.next);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Bucket(Arc<Inner>);

struct Inner {
    /// Which limiter this is, for telling its reservations from others'.
    id: u64,
    store: Store,
    name: Box<str>,
    /// Tokens a second, as the core reads it: finite and at least 0.
    rate: f64,
    /// The most the bucket holds, as the core reads it: at least 1, possibly infinite.
    burst: f64,
    ttl_ms: u64,
    local: Local<ironward::Bucket>,
    /// The keys Redis refused lately, refused again from memory until they could pass.
    blocked: Blocked,
    /// The fallback's rate and burst: the store's share of each.
    local_rate: f64,
    local_burst: f64,
    meter: Meter,
}

/// A bucket's state as a script returns it.
struct State {
    /// Tokens held at `counted_at`.
    tokens: f64,
    /// When the tokens were counted, in nanoseconds.
    counted_at: u64,
    /// Nanoseconds from `counted_at` to the reading the answer is for.
    elapsed: u64,
}

impl Bucket {
    /// A bucket per key of `rate` tokens a second up to `burst`, in the keys named `name`.
    ///
    /// `name` tells limiters apart in Redis (an empty one is read as `"ironward"`); two
    /// limiters with the same name and different parameters would share state.
    pub fn new(store: &Store, name: &str, rate: f64, burst: f64) -> Self {
        Self::with(store, name, rate, burst, Piece::Bucket)
    }

    /// [`new`](Bucket::new), reporting its decisions as `piece`.
    pub(crate) fn with(store: &Store, name: &str, rate: f64, burst: f64, piece: Piece) -> Self {
        let core = ironward::Bucket::new(rate, burst, Duration::ZERO);
        let (rate, burst) = (core.rate(), core.burst());
        let fresh = core.idle();
        let share = store.options().local_share();
        let name = wire::name(name);
        Self(Arc::new(Inner {
            id: reservation::limiter_id(),
            store: store.clone(),
            meter: Meter::new(piece, &name),
            name,
            rate,
            burst,
            ttl_ms: wire::ttl_ms(fresh),
            local: Local::new(store.options().local_keys),
            blocked: Blocked::for_store(store.options()),
            local_rate: rate * share,
            local_burst: burst * share,
        }))
    }

    /// Whether `n` tokens of `key`'s bucket are there at `now`, taking them if they are.
    ///
    /// A cost of zero always passes. With [`Time::Server`](crate::Time::Server), Redis's
    /// clock replaces `now` (which the fallback still reads).
    pub async fn take(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        n: f64,
    ) -> Result<Answer<bool>, StoreError> {
        self.take_key(Some(key.as_ref()), now, n).await
    }

    /// How long after `now` `n` tokens of `key`'s bucket will be there, without taking
    /// them: the core's `next`, rounded up to the first whole nanosecond at which a take
    /// succeeds.
    pub async fn next(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        n: f64,
    ) -> Result<Duration, StoreError> {
        decide::next(&*self.0, Some(key.as_ref()), now, n).await
    }

    /// Takes an estimate of `estimate` tokens from `key`'s bucket at `now`, to be settled
    /// at the request's actual cost by [`settle`](Bucket::settle), as
    /// `ironward::Bucket::reserve` does: admitted as [`take`](Bucket::take) of the estimate
    /// would be (one script, `lua/bucket.lua`), and then the answer's value holds the
    /// [`Reservation`]; refused, it holds `None` and takes nothing. The answer's `next` is
    /// the core's `next(now, estimate)` after it.
    ///
    /// A settle counts until `timeout` after the reading the estimate was taken at (the
    /// script's, on Redis, in whole microseconds, the time-out rounded down); an unsettled
    /// reservation keeps its estimate. An estimate that is negative, NaN or infinite is
    /// refused, as the core refuses it; with an infinite burst nothing is taken, and the
    /// reservation's settle changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Bucket, Options, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// // 100 tokens a second, up to 1 000; a request estimated at 800 costs 500.
    /// let tokens = Bucket::new(&store, "tokens", 100.0, 1_000.0);
    /// let answer = tokens.reserve("k", secs(0), 800.0, secs(60)).await.unwrap();
    /// let reservation = answer.value.expect("room for the estimate");
    /// assert!(tokens.reserve("k", secs(0), 300.0, secs(60)).await.unwrap().value.is_none());
    /// tokens.settle(reservation, 500.0, secs(0)).await.unwrap();
    /// // 300 came back: 500 are there.
    /// assert!(tokens.take("k", secs(0), 500.0).await.unwrap().admitted());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn reserve(
        &self,
        key: impl AsRef<[u8]>,
        now: Duration,
        estimate: f64,
        timeout: Duration,
    ) -> Result<Answer<Option<Reservation>>, StoreError> {
        let key = Some(key.as_ref());
        let decided = self.decide(key, now, estimate, Some(timeout)).await;
        reservation::reserved(&self.0.meter, decided)
    }

    /// Settles a [`reserve`](Bucket::reserve)d estimate at the request's `actual` cost in
    /// tokens, at `now`, as `ironward::Bucket::settle` does, where the estimate was
    /// counted: in Redis (one script, `lua/bucket_settle.lua`), or in the fallback if that
    /// is where it went.
    ///
    /// The bucket is refilled to `now` (read as the latest seen); below the estimate the
    /// difference comes back, capped at the burst (a refund is lost to the extent the
    /// bucket has refilled since); above it the difference is taken as a debt, even past
    /// what the bucket holds: the tokens go negative and no take passes, not even a cost of
    /// 0, until the refill has paid it. The keys then live until the bucket would be full
    /// again, twice over, so that an expiry never forgives a debt. Past the reservation's
    /// deadline, for an `actual` that is negative, NaN or infinite, or for a reservation
    /// another limiter made, nothing changes (not even the clock), and the estimate stands.
    ///
    /// The bound is the core's: over any stretch `d`, the tokens charged are at most
    /// `burst + rate · d` plus the debts settled in the stretch after its last admission.
    /// A settle that finds Redis away, or the store failing over, is dropped (a refund is
    /// lost, and a debt is not counted: while Redis is away, the fallback's bound is the
    /// bound). On a refund, a refusal this process remembers for the key is forgotten, since
    /// the refund may make room; other processes' memories are not, and they may refuse the
    /// key until the refusal they remember would have passed (less admitted, never more).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Bucket, Options, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let secs = Duration::from_secs;
    /// let bucket = Bucket::new(&store, "tokens", 10.0, 100.0);
    /// let reservation = bucket.reserve("k", secs(0), 50.0, secs(60)).await.unwrap().value.unwrap();
    /// // It cost 130: 80 more than the estimate, and the bucket held only 50.
    /// bucket.settle(reservation, 130.0, secs(0)).await.unwrap();
    /// assert!(!bucket.take("k", secs(0), 0.0).await.unwrap().admitted());
    /// // The debt of 30 is paid in 3 s, one token more takes a tenth of a second longer.
    /// assert_eq!(bucket.next("k", secs(0), 1.0).await.unwrap(), Duration::from_millis(3_100));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn settle(
        &self,
        reservation: Reservation,
        actual: f64,
        now: Duration,
    ) -> Result<(), StoreError> {
        decide::settle(&*self.0, reservation, actual, now).await
    }

    /// Tokens a second, as read by [`new`](Bucket::new).
    pub fn rate(&self) -> f64 {
        self.0.rate
    }

    /// The most a bucket holds, as read by [`new`](Bucket::new).
    pub fn burst(&self) -> f64 {
        self.0.burst
    }

    /// The store the limiter's keys are in: its [`source`](Store::source) and [`stats`](Store::stats).
    pub fn store(&self) -> &Store {
        &self.0.store
    }

    /// [`take`](Bucket::take) for `key`, or for the budget of requests without a key,
    /// counted and, when refused, reported.
    pub(crate) async fn take_key(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        n: f64,
    ) -> Result<Answer<bool>, StoreError> {
        let decided = self
            .decide(key, now, n, None)
            .await
            .map(|(answer, _)| answer);
        let this = &self.0;
        let meter = &this.meter;
        meter.count(&decided);
        if let Ok(answer) = &decided
            && !answer.admitted()
        {
            let (rate, burst) = match answer.source {
                Source::Redis => (this.rate, this.burst),
                Source::Local => (this.local_rate, this.local_burst),
            };
            tracing::debug!(
                piece = meter.piece(),
                name = meter.name(),
                source = meter::source_label(answer.source),
                rate,
                burst,
                cost = n,
                retry_after = ?answer.next,
                "bucket short of tokens; refused"
            );
        }
        decided
    }

    /// What [`take_key`](Bucket::take_key) decides, before it is counted; with `reserve`
    /// (a time-out), an admitted cost is also a [`Reservation`] to settle.
    async fn decide(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        n: f64,
        reserve: Option<Duration>,
    ) -> Result<(Answer<bool>, Option<Reservation>), StoreError> {
        decide::decide(&*self.0, key, now, n, reserve).await
    }
}

impl Inner {
    /// The answer when no state could change it: an infinite burst admits every finite
    /// cost at once, and a cost that is not one is never admitted.
    fn without_state(&self, n: f64) -> Option<Duration> {
        if self.burst.is_infinite() {
            Some(if is_cost(n) {
                Duration::ZERO
            } else {
                Duration::MAX
            })
        } else {
            None
        }
    }

    /// The fallback's answer when its share of the burst is below one token, the least a
    /// core bucket holds: a bucket of one token would admit more than the share, so no
    /// bucket is made and every positive cost is refused, its `next` the probe interval
    /// (when Redis may answer again). A cost of zero passes, as it always does, and a cost
    /// that is not one is refused for good.
    fn refused_locally(&self, n: f64) -> Option<Answer<bool>> {
        if self.local_burst >= 1.0 {
            return None;
        }
        let (value, next) = if n == 0.0 {
            (true, Duration::ZERO)
        } else if is_cost(n) {
            (false, self.store.options().probe)
        } else {
            (false, Duration::MAX)
        };
        Some(Answer {
            value,
            next,
            source: Source::Local,
        })
    }

    /// A fresh fallback bucket, its clock at `now`.
    fn local_bucket(&self, now: Duration) -> ironward::Bucket {
        ironward::Bucket::new(self.local_rate, self.local_burst, now)
    }

    fn keys(&self, key: Option<&[u8]>) -> [Vec<u8>; 2] {
        ["tokens", "ts"].map(|part| wire::key(&self.name, key, part))
    }

    /// `ironward::Bucket::next` on `state`: the core bucket in that state answers, so the
    /// wait is the core's to the nanosecond.
    fn wait(&self, state: &State, n: f64) -> Duration {
        let counted_at = Duration::from_nanos(state.counted_at);
        let bucket = ironward::Bucket::with_tokens(self.rate, self.burst, state.tokens, counted_at);
        bucket.next(counted_at + Duration::from_nanos(state.elapsed), n)
    }
}

/// A bucket's part of the skeleton: `lua/bucket.lua` in Redis, a core bucket in the
/// fallback.
impl Kind for Inner {
    type Core = ironward::Bucket;
    type Value = bool;
    type Cost = f64;
    type Units = f64;

    const REFUSED: bool = false;

    fn common(&self) -> Common<'_, ironward::Bucket> {
        Common {
            id: self.id,
            store: &self.store,
            meter: &self.meter,
            blocked: &self.blocked,
            local: &self.local,
        }
    }

    fn admitted(value: bool) -> bool {
        value
    }

    fn amount(n: f64) -> f64 {
        n
    }

    fn stateless(&self, n: f64) -> Option<Answer<bool>> {
        // An infinite burst takes nothing, so there is nothing to settle.
        self.without_state(n).map(|next| Answer {
            value: next == Duration::ZERO,
            next,
            source: self.store.source(),
        })
    }

    fn call(&self, key: Option<&[u8]>, reading: &Reading, n: f64) -> Call {
        let [tokens, ts] = self.keys(key);
        let mut call = script::BUCKET.call();
        call.key(tokens).key(ts);
        // A cost the core refuses is sent as -1, which the script refuses after refilling,
        // as the core's `take` refills before it looks at the cost.
        let cost = if is_cost(n) { n } else { -1.0 };
        call.arg(reading.arg())
            .arg(wire::float(self.rate))
            .arg(wire::float(self.burst))
            .arg(wire::float(cost))
            .arg(self.ttl_ms);
        call
    }

    fn decode(
        &self,
        reply: &redis::Value,
        reading: &Reading,
        n: f64,
        reserve: Option<Duration>,
    ) -> Option<(Answer<bool>, Option<Held>)> {
        let [admitted, tokens, t] = wire::items(reply)?;
        let value = match wire::int(admitted)? {
            1 => true,
            0 => false,
            _ => return None,
        };
        let t = wire::micros(t)?;
        let state = State {
            tokens: wire::finite(tokens)?,
            counted_at: t * 1000,
            elapsed: 0,
        };
        let answer = Answer {
            value,
            next: reading.wait_nanos(t, self.wait(&state, n)),
            source: Source::Redis,
        };
        // The estimate was taken at the reading the bucket is now counted at.
        let held = reserve.filter(|_| value).map(|timeout| Held::Redis {
            at: t,
            deadline: wire::deadline(t, timeout),
        });
        Some((answer, held))
    }

    fn refused_locally(&self, n: f64) -> Option<Answer<bool>> {
        Inner::refused_locally(self, n)
    }

    fn fresh(&self, now: Duration) -> ironward::Bucket {
        self.local_bucket(now)
    }

    fn local(
        &self,
        bucket: &mut ironward::Bucket,
        now: Duration,
        n: f64,
        reserve: Option<Duration>,
    ) -> (bool, Option<ironward::Reservation>) {
        match reserve {
            None => (bucket.take(now, n), None),
            Some(timeout) => match bucket.reserve(now, n, timeout) {
                Ok(held) => (true, Some(held)),
                Err(_) => (false, None),
            },
        }
    }

    fn local_next(&self, bucket: &ironward::Bucket, now: Duration, n: f64) -> Duration {
        bucket.next(now, n)
    }

    fn next_call(&self, key: Option<&[u8]>, reading: &Reading, _n: f64) -> Call {
        let [tokens, ts] = self.keys(key);
        let mut call = script::BUCKET_NEXT.call();
        call.key(tokens).key(ts);
        call.arg(reading.arg()).arg(wire::float(self.burst));
        call
    }

    fn units(estimate: f64, actual: f64) -> Option<f64> {
        is_cost(actual).then_some(estimate)
    }

    fn settle_call(
        &self,
        key: Option<&[u8]>,
        reading: &Reading,
        estimate: f64,
        actual: f64,
        _at: u64,
        deadline: u64,
    ) -> Call {
        let [tokens, ts] = self.keys(key);
        let mut call = script::BUCKET_SETTLE.call();
        call.key(tokens).key(ts);
        call.arg(reading.arg())
            .arg(wire::float(self.rate))
            .arg(wire::float(self.burst))
            .arg(self.ttl_ms)
            .arg(wire::float(estimate))
            .arg(wire::float(actual))
            .arg(deadline);
        call
    }

    fn settle_local(
        &self,
        bucket: &mut ironward::Bucket,
        held: ironward::Reservation,
        actual: f64,
        now: Duration,
    ) {
        // The bucket made the reservation: nothing comes back.
        let _ = bucket.settle(held, actual, now);
    }

    fn next_decode(&self, reply: &redis::Value, reading: &Reading, n: f64) -> Option<Duration> {
        let [tokens, latest, t] = wire::items(reply)?;
        let (latest, t) = (wire::micros(latest)?, wire::micros(t)?);
        let state = State {
            tokens: wire::finite(tokens)?,
            counted_at: latest * 1000,
            elapsed: t.checked_sub(latest)? * 1000,
        };
        Some(reading.wait_nanos(t, self.wait(&state, n)))
    }
}

/// Whether `n` is a cost a bucket can charge: finite and not negative.
fn is_cost(n: f64) -> bool {
    n.is_finite() && n >= 0.0
}

impl fmt::Debug for Bucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bucket")
            .field("name", &self.0.name)
            .field("rate", &self.0.rate)
            .field("burst", &self.0.burst)
            .field("local_rate", &self.0.local_rate)
            .field("local_burst", &self.0.local_burst)
            .finish_non_exhaustive()
    }
}
