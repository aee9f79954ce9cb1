//! [`SharedBucket`]: the token bucket shared by `&`, its state in one atomic word.

use core::fmt;
use core::time::Duration;

use super::is_cost;
use crate::bucket::BucketReason;
use crate::clock::nanos;
use crate::internal::line::Line;
use crate::internal::sync::{AtomicBool, AtomicU64, Ordering, spin_loop};
use terms::*;

mod terms;

/// A token bucket that many threads share by `&`, without a lock: [`Bucket`](crate::Bucket)'s
/// rule, its state one `AtomicU64` holding the instant at which the bucket is full again.
///
/// Every task of every core asks the same rate limit, and a `Mutex<Bucket>` makes them take
/// turns, the ones refused included. This is the same bucket in its theoretical-arrival-time
/// form, the generic cell rate algorithm (ITU-T I.371, and governor's `gcra.rs`): the word
/// holds `tat`, the instant at which the bucket would be full, so that at `t` it holds
/// `burst − (tat − t) · rate` tokens (all of `burst` once `t ≥ tat`). A take of `n` is one
/// compare-and-swap that moves `tat` on by `n / rate`; a refusal is one load of the word and
/// a compare, and writes nothing, so a limit that is refusing does not bounce its cache line
/// between the cores it refuses.
///
/// It reads its inputs as `Bucket` does: `rate` tokens a second accruing continuously up to
/// `burst`, starting full, fractional costs; a negative, NaN or infinite rate never refills;
/// a burst below 1 or NaN is 1; an infinite burst admits every finite cost; a negative, NaN
/// or infinite cost is refused with a [`next`](Self::next) of `Duration::MAX`.
///
/// # How close it is to `Bucket`
///
/// `Bucket` keeps its tokens as an `f64` and rounds with every float operation; one word
/// cannot hold its state bit for bit, so this type counts time in fixed point instead, and
/// differs from `Bucket` only by the rounding of each, within a bound:
///
/// * time is whole quarters of a nanosecond (ticks) since the bucket was made, so `now` is
///   exact; a token is `T = 4·10⁹ / rate` ticks (an `f64`);
/// * a take of `n` moves `tat` by `⌈n·T⌉` ticks, rounded up, and a bucket holding `h`
///   tokens is made or retuned with its deficit rounded up, so rounding never adds tokens;
/// * a bucket that never refills (a rate of 0) has no clock: its ticks are a power-of-two
///   fixed point for its tokens alone, 2^59 to 2^60 for the burst, so whole and binary
///   fractional costs are exact;
/// * the burst is `⌈burst·T⌉` ticks, less than a tick over `burst`, so that a full bucket
///   admits every cost up to `burst`, as `Bucket` does; what it reports is capped at `burst`.
///
/// Each admitted take thus charges less than one tick more than its exact cost, and the
/// charges add up while the bucket is short of full; a take that finds it full starts from
/// the clock, exactly, and forgets them. So on one thread, after `m` takes admitted since the
/// bucket was last found full (or made, or retuned), its tokens lie within
/// `(m + 2) · rate / 4·10⁹` of the exact real-number bucket, below it but for the one tick of
/// the burst; `Bucket`'s own float rounding, a few units in the last place of `burst` per
/// take, adds `(m + 1) · burst · 2⁻⁵⁰` on its side. A decision can therefore differ from
/// `Bucket`'s only when the cost is within
///
/// ```text
/// ε(m) = (m + 2) · (rate / 4·10⁹ + burst · 2⁻⁵⁰)
/// ```
///
/// tokens of what `Bucket` holds, and everywhere else it is the same; an integer cost at a
/// rate whose `T` is a whole number of ticks (1, 2, 4, 8 ... 10⁹ tokens a second, 1 000 000
/// ...) is exact. At 10 000 tokens a second ε is under 10⁻⁵ token a take; it passes a
/// quarter of a token only at rates of a billion a second, where a tick is a quarter of a
/// token.
///
/// # Time
///
/// The word's clock starts at the `now` the bucket was made with and counts 2^59 ns (about
/// 18.3 years) past it; a later reading reads as the last one, so time stops there, as every
/// clock of the core stops at `u64::MAX` nanoseconds. A `now` before the bucket was made
/// reads as that instant.
///
/// A `now` earlier than another already seen is not read as the latest seen, as `Bucket`
/// reads it: the word has no room for a second instant, and between threads an earlier
/// reading is the rule, not the exception (one thread reads the clock, another swaps before
/// it). It is read as what it says: the bucket holds fewer tokens at an earlier instant, never
/// more, so a clock that steps back never frees capacity; it only refuses what a later reading
/// might have admitted. A take admitted at an earlier reading is charged at it: one that
/// finds the bucket full there starts its refill there, as though it had come first, as
/// governor's does; the bound below holds whatever order the readings come in. On a clock
/// that never steps back, this and `Bucket`'s reading agree.
///
/// Past the word's range: a bucket that would take longer than that span to refill from
/// empty (`burst / rate` over 2^59 ns) is read as one that never refills; in the span it
/// could only give back part of one burst. Under an infinite burst a hold too large for the
/// word (over 2^61 ticks' worth, or 2^29 tokens when it never refills) reads as infinite.
///
/// # Why it never over-admits under overlap
///
/// Each call reads the word once and takes effect at one instant: its successful
/// compare-and-swap from the word it read, or for a refusal that load. So the calls of all
/// threads are the calls of one bucket made in the order of those instants, each at its own
/// reading of the clock. A take is admitted only if `max(tat, t) + ⌈n·T⌉ ≤ t + ⌈burst·T⌉`,
/// and `tat` only ever grows by the costs it admits, from 0 at creation; so over any run,
/// whatever the order and whichever clock readings the threads pass, the ticks admitted are
/// at most the latest `t` admitted plus one burst: the tokens admitted are at most
/// `burst + rate · elapsed` (plus under a tick), the bound a `Bucket` keeps.
///
/// # Retuning under overlap
///
/// [`retune`](Self::retune) replaces the rate and burst while takes run. The word carries a
/// 2-bit tag naming which of four slots of terms it was written under; a retune writes the
/// new terms into the next slot, then swaps the word to the tokens it held converted to the
/// new terms, with the new tag, in one compare-and-swap. A take reads the tag with the word
/// and decides under that slot's terms: before the retune's swap under the old terms, after
/// it under the new, never a mix of one's tokens and the other's rate or burst, and its own
/// swap fails (and it decides again) if the retune landed in between. Retunes wait for each
/// other (they are rare: a configuration reload); a take never waits. The tag is reused after
/// four retunes: a take could decide under the wrong terms only if four retunes completed
/// between its load of the word and its swap (or its load of the terms, the next
/// instruction) and left the word as it was, to the quarter nanosecond.
///
/// A retune's reading may be earlier than the takes that emptied the bucket (another thread
/// read its clock later): there the bucket is short of empty, and converting the clamped
/// zero it reads would hand back what those takes spent, a burst a retune. It is converted
/// instead at the instant it was last empty, which is no later than those takes, so a retune
/// never frees capacity the old terms did not hold.
///
/// This type is built only for targets with 64-bit atomics (every tier-1 target). It is not
/// `Clone`: a copy would be a second bucket, doubling what the pair admits, so share it by `&`
/// or an `Arc`.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::SharedBucket;
/// use std::thread;
///
/// let ms = Duration::from_millis;
/// // Ten a second, with room for a burst of twenty, shared by four threads.
/// let bucket = SharedBucket::new(10.0, 20.0, ms(0));
/// let admitted: usize = thread::scope(|s| {
///     let workers: Vec<_> = (0..4)
///         .map(|_| s.spawn(|| (0..10).filter(|_| bucket.take(ms(0), 1.0)).count()))
///         .collect();
///     workers.into_iter().map(|w| w.join().unwrap()).sum()
/// });
/// assert_eq!(admitted, 20);
/// // One token comes back every 100 ms.
/// assert_eq!(bucket.next(ms(0), 1.0), ms(100));
/// assert!(bucket.take(ms(100), 1.0));
/// ```
pub struct SharedBucket {
    /// `tat << 2 | generation`: when the bucket is full, in ticks since `origin`, and the
    /// slot of `terms` it was written under. Alone on its line, so that a swap invalidates
    /// neither the terms every take reads nor whatever lies beside the bucket in memory.
    state: Line<AtomicU64>,
    /// The terms of the last four generations.
    terms: [Slot; GENS],
    /// The caller's clock when the bucket was made, in nanoseconds: tick 0.
    origin: u64,
    /// Held by a retune, so that two never write the same slot.
    retuning: AtomicBool,
}

/// An admitted take: the word it left and the tick it was decided at.
#[derive(Clone, Copy)]
struct Admitted {
    word: u64,
    t: u64,
}

/// A refused take: the word it read and the caller's reading, in nanoseconds.
#[derive(Clone, Copy)]
struct Refused {
    word: u64,
    ns: u64,
}

impl SharedBucket {
    /// A full bucket that refills at `rate` tokens a second up to `burst`, its clock starting
    /// at `now`; read as [`Bucket::new`](crate::Bucket::new) reads them.
    pub fn new(rate: f64, burst: f64, now: Duration) -> Self {
        Self::with_tokens(rate, burst, f64::INFINITY, now)
    }

    /// A bucket that holds `tokens` at `now`, refilling at `rate` tokens a second up to
    /// `burst`, read as [`Bucket::with_tokens`](crate::Bucket::with_tokens) reads them:
    /// tokens above the burst are the burst, and NaN ones none. Negative tokens are none
    /// too, since this bucket keeps no debt (where `Bucket` keeps them as one). Its clock
    /// starts at `now`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::SharedBucket;
    ///
    /// let half = SharedBucket::with_tokens(2.0, 4.0, 0.5, Duration::from_secs(10));
    /// assert_eq!(half.tokens(Duration::from_secs(10)), 0.5);
    /// assert_eq!(half.next(Duration::from_secs(10), 1.0), Duration::from_millis(250));
    /// ```
    pub fn with_tokens(rate: f64, burst: f64, tokens: f64, now: Duration) -> Self {
        let terms = Terms::new(rate, burst);
        let tokens = if tokens >= 0.0 { tokens } else { 0.0 };
        let bucket = Self {
            state: Line(AtomicU64::new(terms.tat(tokens, 0) << GEN_BITS)),
            terms: Default::default(),
            origin: nanos(now),
            retuning: AtomicBool::new(false),
        };
        bucket.terms[0].set(terms);
        bucket
    }

    /// Whether `n` tokens are there at `now`, taking them if they are.
    ///
    /// This is [`check`](Self::check) without the reason for a refusal.
    #[inline]
    #[must_use = "an unchecked take spends the tokens without enforcing the limit"]
    pub fn take(&self, now: Duration, n: f64) -> bool {
        self.attempt(now, n).is_ok()
    }

    /// [`take`](Self::take) with the numbers behind a refusal, as
    /// [`Bucket::check`](crate::Bucket::check) gives them: the tokens held at `now` (a
    /// refusal keeps them all), the cost wanted, the burst, the rate and the reading decided
    /// at, all from the one load the refusal decided by.
    ///
    /// [`BucketReason::next`] works the wait out from those fields, as `Bucket` would for a
    /// bucket holding them; it can differ from [`next`](Self::next) by this type's rounding
    /// (see the type's docs), a nanosecond or so.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::SharedBucket;
    ///
    /// let ms = Duration::from_millis;
    /// let bucket = SharedBucket::new(10.0, 2.0, ms(0));
    /// assert!(bucket.check(ms(0), 1.5).is_ok());
    /// let reason = bucket.check(ms(0), 1.0).expect_err("half a token left");
    /// assert_eq!((reason.tokens, reason.wanted, reason.burst), (0.5, 1.0, 2.0));
    /// assert_eq!(reason.next(), ms(50));
    /// ```
    #[inline]
    #[must_use = "an unchecked take spends the tokens without enforcing the limit"]
    pub fn check(&self, now: Duration, n: f64) -> Result<(), BucketReason> {
        match self.attempt(now, n) {
            Ok(_) => Ok(()),
            Err(refused) => Err(self.reason(refused, n)),
        }
    }

    /// [`check`](Self::check), answering an admitted take with the tokens it left, worked
    /// out from the word its own compare-and-swap wrote: what a rate-limit layer reports as
    /// its remaining quota, without a second pass that another thread's take could slip
    /// before. Infinite for a full bucket of infinite burst.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::SharedBucket;
    ///
    /// let bucket = SharedBucket::new(1.0, 3.0, Duration::ZERO);
    /// assert_eq!(bucket.check_left(Duration::ZERO, 1.0), Ok(2.0));
    /// assert_eq!(bucket.check_left(Duration::ZERO, 2.0), Ok(0.0));
    /// assert!(bucket.check_left(Duration::ZERO, 1.0).is_err());
    /// ```
    #[inline]
    #[must_use = "an unchecked take spends the tokens without enforcing the limit"]
    pub fn check_left(&self, now: Duration, n: f64) -> Result<f64, BucketReason> {
        match self.attempt(now, n) {
            Ok(Admitted { word, t }) => Ok(self.slot(word).get().held(word >> GEN_BITS, t)),
            Err(refused) => Err(self.reason(refused, n)),
        }
    }

    /// How many tokens the bucket holds at `now`, capped at the burst; under overlap, at the
    /// instant of its one load.
    #[must_use]
    pub fn tokens(&self, now: Duration) -> f64 {
        let word = self.state.load(Ordering::Acquire);
        let terms = self.slot(word).get();
        terms.held(word >> GEN_BITS, self.tick(nanos(now), terms.tau))
    }

    /// How long after `now` `n` tokens will be there, without taking them: zero when they
    /// are there now, `Duration::MAX` when they never will be (as
    /// [`Bucket::next`](crate::Bucket::next) says: a cost over the burst or not a cost, a
    /// bucket that does not refill, or past the clock's range).
    ///
    /// Rounded up to the first whole nanosecond at which a take succeeds on the bucket as it
    /// stands: `take(now + next(now, n), n)` does, a nanosecond earlier would not. (At 3
    /// tokens a second one token is 333 333 333.3 ns: the answer is 333 333 334 ns.)
    #[must_use = "next only computes the wait; it takes nothing"]
    pub fn next(&self, now: Duration, n: f64) -> Duration {
        let word = self.state.load(Ordering::Acquire);
        let terms = self.slot(word).get();
        if !is_cost(n) || n > terms.burst {
            return Duration::MAX;
        }
        let ns = nanos(now);
        let t = self.tick(ns, terms.tau);
        let tat = word >> GEN_BITS;
        if terms.unbounded() && tat <= t {
            return Duration::ZERO;
        }
        let mut cost = cost_ticks(n, terms.per_token);
        if terms.unbounded() {
            // Full, an infinite burst admits any cost: at the latest once `t' = tat`.
            cost = cost.min(terms.tau());
        }
        // Admitted at the first `t'` with `tat − t' ≤ tau − cost`.
        let Some(first) = tat.saturating_add(cost).checked_sub(terms.tau()) else {
            return Duration::ZERO;
        };
        if first <= t {
            return Duration::ZERO;
        }
        if terms.frozen() || first > SPAN_NS * TICKS_PER_NS {
            return Duration::MAX;
        }
        // The first whole nanosecond at or after tick `first`, from the reading `now`; one
        // past the caller's clock never comes.
        match self.origin.checked_add(first.div_ceil(TICKS_PER_NS)) {
            Some(at) => Duration::from_nanos(at - ns.max(self.origin)),
            None => Duration::MAX,
        }
    }

    /// How long the bucket takes to be full again when left alone, from empty: the burst's
    /// ticks rounded up to a whole nanosecond. After this long without a take it answers as a
    /// fresh one would, as [`Bucket::idle`](crate::Bucket::idle) says; it can be a nanosecond
    /// over `Bucket`'s, being this type's own rounding of the burst. `Duration::MAX` when the
    /// bucket never fills (a rate of 0, an infinite burst, or a refill past the word's span).
    #[must_use]
    pub fn idle(&self) -> Duration {
        let terms = self.slot(self.state.load(Ordering::Acquire)).get();
        if terms.frozen() || terms.unbounded() {
            return Duration::MAX;
        }
        Duration::from_nanos(terms.tau().div_ceil(TICKS_PER_NS))
    }

    /// Tokens a second, as read by [`new`](Self::new) (or the latest retune).
    #[must_use]
    pub fn rate(&self) -> f64 {
        self.slot(self.state.load(Ordering::Acquire)).get().rate
    }

    /// The most the bucket holds, as read by [`new`](Self::new) (or the latest retune).
    #[must_use]
    pub fn burst(&self) -> f64 {
        self.slot(self.state.load(Ordering::Acquire)).get().burst
    }

    /// Changes the rate and the burst in place at `now`, keeping the tokens held, as
    /// [`Bucket::retune`](crate::Bucket::retune) does: the tokens are counted at `now` under
    /// the old terms, capped at the new burst, and accrue at the new rate from `now` on. A
    /// larger burst does not fill the bucket. Retuning to the terms the bucket has (as read)
    /// changes nothing.
    ///
    /// The tokens and the terms change in one compare-and-swap: a take overlapping it is
    /// decided under the old terms on the old tokens or under the new terms on the tokens
    /// converted, never a mix (see the type's docs). Retunes wait for one another; takes do
    /// not wait for them.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::SharedBucket;
    ///
    /// let secs = Duration::from_secs;
    /// let bucket = SharedBucket::new(1.0, 10.0, secs(0));
    /// assert!(bucket.take(secs(0), 10.0));
    /// // Four tokens accrue at the old rate, then the rate doubles and the burst grows.
    /// bucket.retune(2.0, 100.0, secs(4));
    /// assert_eq!(bucket.tokens(secs(4)), 4.0);
    /// assert_eq!(bucket.tokens(secs(5)), 6.0);
    /// // A smaller burst caps what is held.
    /// bucket.retune(2.0, 3.0, secs(5));
    /// assert_eq!(bucket.tokens(secs(5)), 3.0);
    /// ```
    pub fn retune(&self, rate: f64, burst: f64, now: Duration) {
        let new = Terms::new(rate, burst);
        while self
            .retuning
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spin_loop();
        }
        let ns = nanos(now);
        let mut word = self.state.load(Ordering::Acquire);
        let generation = word & GEN_MASK;
        // No other retune writes while this one holds the flag, so this slot is stable.
        let old = self.terms[generation as usize].get();
        if (old.rate, old.burst) != (new.rate, new.burst) {
            let next = (generation + 1) & GEN_MASK;
            self.terms[next as usize].set(new);
            let (old_t, new_t) = (self.tick(ns, old.tau), self.tick(ns, new.tau));
            loop {
                let tat = word >> GEN_BITS;
                // A reading earlier than the takes that emptied the bucket (another thread's,
                // at a later reading) would find it short of empty, and converting its
                // clamped zero there would hand back what those takes spent: convert it at
                // the instant it was last empty instead, which is no later than them.
                let (old_at, new_at) = if old.frozen() || new.frozen() {
                    (old_t, new_t)
                } else {
                    let at = old_t.max(tat.saturating_sub(old.tau()));
                    (at, at)
                };
                let held = old.held(tat, old_at);
                let capped = if held < new.burst { held } else { new.burst };
                let retuned = new.tat(capped, new_at) << GEN_BITS | next;
                // Release: a take that loads the new tag sees the terms written above.
                match self.state.compare_exchange_weak(
                    word,
                    retuned,
                    Ordering::Release,
                    Ordering::Acquire,
                ) {
                    Ok(_) => break,
                    Err(current) => word = current,
                }
            }
        }
        self.retuning.store(false, Ordering::Release);
    }

    /// The one decision: a loop of compare-and-swaps for an admitted take, one load for a
    /// refused one (and for a cost of zero, or any cost from a full bucket of infinite
    /// burst, which change nothing).
    #[inline]
    fn attempt(&self, now: Duration, n: f64) -> Result<Admitted, Refused> {
        let ns = nanos(now);
        let mut word = self.state.load(Ordering::Acquire);
        // Two comparisons, false for NaN. Nothing below depends on the word for this answer.
        if !is_cost(n) {
            return Err(Refused { word, ns });
        }
        loop {
            let slot = self.slot(word);
            let tau = slot.tau.load(Ordering::Relaxed);
            let t = self.tick(ns, tau);
            let tat = word >> GEN_BITS;
            let deficit = tat.saturating_sub(t);
            if tau & UNBOUNDED != 0 && deficit == 0 {
                return Ok(Admitted { word, t });
            }
            // The same ticks `cost_ticks` gives a cost of one, kept by the slot.
            let cost = if n == 1.0 {
                slot.one.load(Ordering::Relaxed)
            } else {
                cost_ticks(n, f64::from_bits(slot.per_token.load(Ordering::Relaxed)))
            };
            if cost > (tau & TAU_MASK).saturating_sub(deficit) {
                return Err(Refused { word, ns });
            }
            if cost == 0 {
                return Ok(Admitted { word, t });
            }
            // At most `t + tau`, under 2^62: the tag's two bits stay clear.
            let taken = (tat.max(t) + cost) << GEN_BITS | (word & GEN_MASK);
            match self.state.compare_exchange_weak(
                word,
                taken,
                Ordering::Relaxed,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(Admitted { word: taken, t }),
                Err(current) => word = current,
            }
        }
    }

    /// The reason for a refusal, from the word it read: off the path of `take`.
    #[cold]
    fn reason(&self, refused: Refused, n: f64) -> BucketReason {
        let terms = self.slot(refused.word).get();
        let t = self.tick(refused.ns, terms.tau);
        BucketReason {
            tokens: terms.held(refused.word >> GEN_BITS, t),
            wanted: n,
            burst: terms.burst,
            rate: terms.rate,
            at: Duration::from_nanos(refused.ns.max(self.origin)),
        }
    }

    /// The terms a word was written under.
    #[inline]
    fn slot(&self, word: u64) -> &Slot {
        &self.terms[(word & GEN_MASK) as usize]
    }

    /// The tick of the reading `ns` under terms whose `tau` (with flags) is given: 0 while
    /// the bucket never refills; otherwise quarters of a nanosecond since `origin`, a
    /// reading before it read as it and one past the word's span as its end.
    #[inline]
    fn tick(&self, ns: u64, tau: u64) -> u64 {
        if tau & FROZEN != 0 {
            return 0;
        }
        ns.saturating_sub(self.origin).min(SPAN_NS) * TICKS_PER_NS
    }
}

/// One load: the instant shown and the terms were in force together.
impl fmt::Debug for SharedBucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = self.state.load(Ordering::Acquire);
        let terms = self.slot(word).get();
        let full_at = self
            .origin
            .saturating_add((word >> GEN_BITS).div_ceil(TICKS_PER_NS));
        f.debug_struct("SharedBucket")
            .field("rate", &terms.rate)
            .field("burst", &terms.burst)
            .field("full_at", &Duration::from_nanos(full_at))
            .finish()
    }
}

// The largest `tat`, the clock's last tick plus the largest burst, leaves the tag's bits clear.
const _: () = assert!((SPAN_NS * TICKS_PER_NS + TAU_MAX) >> (64 - GEN_BITS) == 0);

#[cfg(test)]
mod tests;
