//! Exponential backoff with jitter: how long to wait before trying again, and whether to.

use alloc::vec::Vec;
use core::time::Duration;

use crate::internal::float::{duration, nanos_f64, powi, round_nanos, unit, whole_f64};

/// How much randomness goes into a [`Backoff`] delay.
///
/// A retry with no jitter makes every client that failed together try again together, which
/// is how one outage becomes a second one. `Full`, `Equal` and `Decorrelated` are the
/// strategies Marc Brooker's AWS Architecture Blog post "Exponential Backoff and Jitter"
/// (2015) measures; `Spread` is the randomisation gRPC retries with. With `c` the
/// [`ceiling`](Backoff::ceiling) for the retry and `u` the caller's draw from `[0, 1)`:
///
/// | variant | delay | range |
/// | --- | --- | --- |
/// | `Rigid` | `c` | exactly `c`: reproducible, and it synchronises clients |
/// | `Full` | `⌊c · ⌊u · 1_000_001⌋ / 10⁶⌋` | `[0, c]`: spreads clients furthest |
/// | `Equal` | `c/2 + u·c/2` | `[c/2, c]`: keeps a floor under the wait |
/// | `Decorrelated` | `base + u·(max(base, 3·prev) − base)` | `[base, 3·prev]`, then capped |
/// | `Spread(f)` | `c·(1 − f + 2f·u)` | `[c·(1 − f), c·(1 + f)]`: may pass the cap by `f` |
///
/// `Full` draws in whole millionths of the ceiling ([`http_retry::sample_ppm`]) and floors to
/// the nanosecond, in exact integer arithmetic: it is the client delay of
/// [`http_retry`](crate::http_retry) (whose [`Settings::backoff`] is this full-jitter backoff),
/// so a retry loop over `http_retry` and one over `Backoff` wait alike to the nanosecond.
///
/// [`http_retry::sample_ppm`]: crate::http_retry::sample_ppm
/// [`Settings::backoff`]: crate::http_retry::Settings::backoff
///
/// `Decorrelated` is AWS's `sleep = min(cap, random_between(base, sleep · 3))`, where
/// `prev` is the previous delay (the `base` for the first): it grows from where the last
/// delay landed rather than from the retry number, and never reads `c`.
///
/// `Spread(0.2)` is gRPC proposal A6's `random(0.8, 1.2)` factor, applied after the cap as
/// A6 says since its 2024 revision (drawn so by grpc-go and grpc-java); a spread that
/// is NaN is read as 0 and one outside `[0, 1]` is held to it, so a delay is never negative.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{BACKOFF, Backoff, Jitter};
///
/// let ms = Duration::from_millis;
/// // The preset's third retry has a 400 ms ceiling; each jitter at a draw of 0.5:
/// let at_half = |jitter| Backoff { jitter, ..BACKOFF }.delay(3, 0.5, None);
/// assert_eq!(at_half(Jitter::Rigid), ms(400));
/// assert_eq!(at_half(Jitter::Full), ms(200));
/// assert_eq!(at_half(Jitter::Equal), ms(300));
/// assert_eq!(at_half(Jitter::Spread(0.2)), ms(400));
/// // Halfway from the 100 ms base to three times the base (no previous delay).
/// assert_eq!(at_half(Jitter::Decorrelated), ms(200));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Jitter {
    /// The ceiling itself, with no randomness.
    Rigid,
    /// Uniform over `[0, ceiling]` (AWS "Full Jitter").
    Full,
    /// Half the ceiling plus uniform over `[0, ceiling/2]` (AWS "Equal Jitter").
    Equal,
    /// Uniform over `[base, max(base, 3 · previous)]`, capped (AWS "Decorrelated Jitter").
    Decorrelated,
    /// The ceiling times a factor uniform over `[1 − f, 1 + f]`, `f` held to `[0, 1]`
    /// (gRPC A6 with `f` = 0.2). The product is taken in `f64`: past 2^53 ns (104 days) it
    /// is exact to a part in 2^50, not to the nanosecond.
    Spread(f64),
}

impl Jitter {
    /// Whether [`Backoff::delay`] reads its draw under this jitter: not for [`Rigid`](Self::Rigid),
    /// nor for a [`Spread`](Self::Spread) held to 0 (0, below, or NaN), whose factor is 1
    /// whatever the draw. A caller that draws from a source it shares need not draw for a
    /// jitter that reads nothing: the wait is the same.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::{BACKOFF, Backoff, Jitter};
    ///
    /// assert!(!Jitter::Rigid.draws() && !Jitter::Spread(0.0).draws());
    /// assert!(Jitter::Full.draws() && Jitter::Spread(0.2).draws());
    /// let rigid = Backoff { jitter: Jitter::Rigid, ..BACKOFF };
    /// assert_eq!(rigid.delay(2, 0.0, None), rigid.delay(2, 0.99, None));
    /// ```
    #[must_use]
    pub const fn draws(&self) -> bool {
        match *self {
            Self::Rigid => false,
            Self::Full | Self::Equal | Self::Decorrelated => true,
            Self::Spread(f) => f > 0.0,
        }
    }
}

/// The preset [`Backoff`]: three attempts, 100 ms doubling to a 1 s ceiling, spread by a
/// fifth either way. [`Backoff::default`] is this value; the `# Default` section of
/// [`Backoff`] gives each value's source.
pub const BACKOFF: Backoff = Backoff {
    base: Duration::from_millis(100),
    factor: 2.0,
    cap: Duration::from_secs(1),
    attempts: 3,
    jitter: Jitter::Spread(0.2),
};

/// When to try again, and how long to wait first: capped exponential backoff with jitter.
///
/// A policy is a plain record: change it with `Backoff { attempts: 5, ..BACKOFF }`. Nothing
/// here keeps state or draws a number: the caller says which retry it is about to make and
/// passes the draw, so the same inputs always give the same delay and a retry sequence can
/// be tested without waiting.
///
/// * [`ceiling`](Backoff::ceiling)`(r)` = `min(base · factor^(r − 1), cap)` is the
///   undelayed wait before the `r`-th retry (the first retry is 1): what a jitter-free client
///   sleeps, and what every [`Jitter`] draws within.
/// * [`delay`](Backoff::delay) applies the jitter to it.
/// * [`more`](Backoff::more) says whether another attempt is allowed: `attempts` counts the
///   first call, so 3 attempts are the call and two retries.
/// * [`schedule`](Backoff::schedule) lists every delay a run of retries would wait.
///
/// # Default
///
/// | field | value | source |
/// | --- | --- | --- |
/// | `base` | 100 ms | gRPC proposal A6, `initialBackoff: ".1s"` |
/// | `factor` | 2.0 | gRPC proposal A6, `backoffMultiplier: 2` |
/// | `cap` | 1 s | gRPC proposal A6, `maxBackoff: "1s"` |
/// | `attempts` | 3 | the AWS SDKs' standard retry mode, whose maximum is 3 attempts |
/// | `jitter` | `Spread(0.2)` | gRPC proposal A6 as revised in 2024: `random(0.8, 1.2)` |
///
/// The A6 values are its example retry policy; its jitter was full (`random(0, ceiling)`)
/// until its 2024 revision changed it to the `random(0.8, 1.2)` factor that grpc-go and
/// grpc-java now draw. [`BACKOFF`] is the same value as a constant.
///
/// # Edge cases
///
/// Nothing here panics or overflows, for any field values and any `retry` up to `u32::MAX`:
///
/// * a `factor` that is NaN or below 1 is read as 1 (a backoff that shrank would not back
///   off); an infinite factor is kept, so the second retry already waits the cap;
/// * a `retry` of 0 is read as 1;
/// * a `base` above the `cap` gives the cap;
/// * a draw that is NaN or negative is read as 0, one of 1 or more as just below 1;
/// * a `Spread` that is NaN is read as 0, one outside `[0, 1]` is held to it;
/// * a whole `factor` below 2⁶⁴ (the presets' 2 among them) grows the ceiling in exact
///   integer nanoseconds; any other factor grows it in `f64`, rounded to the nearest
///   nanosecond, which past 2⁵³ ns (about 104 days) is no longer exact to the nanosecond;
/// * `Full` floors `c · ppm / 10⁶` exactly; `Equal`, `Decorrelated` and `Spread` compute in
///   `f64` nanoseconds and round to the nearest. Every delay saturates at `Duration::MAX`;
///   `Full` and `Equal` never exceed the ceiling, nor `Decorrelated` the cap.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{BACKOFF, Backoff, Jitter};
///
/// let ms = Duration::from_millis;
/// let backoff = Backoff::default();
/// assert_eq!(backoff, BACKOFF);
/// assert_eq!(backoff.ceiling(1), ms(100));
/// assert_eq!(backoff.ceiling(4), ms(800));
/// assert_eq!(backoff.ceiling(5), ms(1000));
///
/// // The second retry waits 200 ms ± 20%; a draw of 0.5 lands in the middle.
/// assert_eq!(backoff.delay(2, 0.5, None), ms(200));
/// assert_eq!(backoff.delay(2, 0.0, None), ms(160));
///
/// // Three attempts: the call and two retries.
/// assert!(backoff.more(2));
/// assert!(!backoff.more(3));
/// assert_eq!(backoff.schedule(&[0.5, 0.5]), [ms(100), ms(200)]);
///
/// let full = Backoff { jitter: Jitter::Full, ..BACKOFF };
/// assert_eq!(full.delay(3, 0.25, None), ms(100));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Backoff {
    /// The wait before the first retry, before jitter.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub base: Duration,
    /// What each retry multiplies the wait by; NaN or below 1 is read as 1.
    pub factor: f64,
    /// The most the wait grows to, before jitter (only `Spread` may pass it).
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub cap: Duration,
    /// The most attempts a call makes, the first included; 0 and 1 allow no retry.
    pub attempts: u32,
    /// How the wait is randomised.
    pub jitter: Jitter,
}

impl Default for Backoff {
    /// The preset, [`BACKOFF`].
    fn default() -> Self {
        BACKOFF
    }
}

impl Backoff {
    /// The undelayed wait before the `retry`-th retry, the first retry being 1:
    /// `min(base · factor^(retry − 1), cap)`.
    ///
    /// This is what a jitter-free client sleeps and what every jitter draws within, so it is
    /// public: a caller comparing this policy with one written elsewhere compares this. A
    /// `retry` of 0 is read as 1, a factor that is NaN or below 1 as 1. A whole factor grows
    /// the base in exact integer nanoseconds; any other in `f64` nanoseconds, rounded to the
    /// nearest. When the product reaches or passes the cap (or overflows) the answer is the
    /// cap, exactly.
    #[must_use]
    pub fn ceiling(&self, retry: u32) -> Duration {
        duration(self.ceiling_nanos(retry))
    }

    /// How long to wait before the `retry`-th retry (the first retry is 1), with the jitter
    /// applied.
    ///
    /// `random` is a draw from `[0, 1)` that the caller makes: passing the same one twice
    /// gives the same delay twice. NaN and negatives are read as 0, and 1 and above as just
    /// below 1. `previous` is the delay the last retry waited, which only
    /// [`Jitter::Decorrelated`] reads (`None` is read as `base`). The result is rounded to
    /// the nearest nanosecond and saturates at `Duration::MAX`.
    #[must_use = "a delay that is not waited out retries at once"]
    #[inline]
    pub fn delay(&self, retry: u32, random: f64, previous: Option<Duration>) -> Duration {
        let u = unit(random);
        // Whole nanoseconds until the one conversion to a `Duration` at the end.
        let nanos = match self.jitter {
            Jitter::Rigid => self.ceiling_nanos(retry),
            Jitter::Full => full_jitter(self.ceiling_nanos(retry), sample_ppm(u)),
            Jitter::Equal => {
                let c = self.ceiling_nanos(retry);
                let half = whole_f64(c) / 2.0;
                round_nanos(half + u * half).min(c)
            }
            Jitter::Decorrelated => {
                let base = nanos_f64(self.base);
                let high = base.max(3.0 * previous.map_or(base, nanos_f64));
                round_nanos(base + u * (high - base)).min(self.cap.as_nanos())
            }
            Jitter::Spread(f) => {
                // `max` returns the other operand when one is NaN, so NaN becomes 0 here;
                // `f64::clamp` would keep the NaN.
                #[allow(clippy::manual_clamp, reason = "clamp keeps NaN; this reads it as 0")]
                let f = f.max(0.0).min(1.0);
                round_nanos(whole_f64(self.ceiling_nanos(retry)) * (1.0 - f + 2.0 * f * u))
            }
        };
        duration(nanos)
    }

    /// Whether a call that has made `made` attempts may make another: `made < attempts`.
    ///
    /// The first call is attempt 1, so a policy of three attempts allows two retries.
    #[must_use]
    #[inline]
    pub fn more(&self, made: u32) -> bool {
        made < self.attempts
    }

    /// Every delay a run of retries would wait: those of retries 1 through `attempts − 1`,
    /// for a caller that wants the whole plan (a test, or a log line explaining it).
    ///
    /// `randoms[i]` is the draw for retry `i + 1`; when the slice runs short the remaining
    /// retries draw 0, the low end of every jitter. Each step's delay is the next step's
    /// `previous`, which is what [`Jitter::Decorrelated`] grows from. The result holds
    /// `attempts − 1` delays (none for 0 or 1 attempts), allocated at once: a policy of
    /// billions of attempts should call [`delay`](Backoff::delay) step by step instead.
    #[must_use]
    pub fn schedule(&self, randoms: &[f64]) -> Vec<Duration> {
        let mut previous = None;
        (1..self.attempts)
            .map(|retry| {
                let random = randoms.get(retry as usize - 1).copied().unwrap_or(0.0);
                let delay = self.delay(retry, random, previous);
                previous = Some(delay);
                delay
            })
            .collect()
    }

    /// [`ceiling`](Backoff::ceiling) in whole nanoseconds, which the jitters draw within
    /// without a round trip through `Duration`.
    #[inline]
    pub(crate) fn ceiling_nanos(&self, retry: u32) -> u128 {
        let steps = retry.max(1) - 1;
        let grown = match whole(self.growth()) {
            Some(factor) => grown(self.base.as_nanos(), factor, steps),
            // A zero base times an infinite growth is NaN, which rounds to zero: still no wait.
            None => round_nanos(nanos_f64(self.base) * powi(self.growth(), steps)),
        };
        grown.min(self.cap.as_nanos())
    }

    /// The factor as the ceiling uses it: NaN and anything below 1 read as 1.
    #[inline]
    fn growth(&self) -> f64 {
        if self.factor >= 1.0 { self.factor } else { 1.0 }
    }
}

/// `sample_ppm` that leaves a delay whole: one million parts per million.
pub(crate) const PPM: u32 = 1_000_000;

/// A draw from `[0, 1)` as parts per million: `floor(roll · 1_000_001)`, so that a uniform
/// draw gives a uniform sample over `0..=1_000_000`.
///
/// This is the one conversion between the two kinds of draw the crate takes: the `roll` (or
/// `random`) of every decision, and the `sample_ppm` of [`http_retry`](crate::http_retry)'s
/// per-response functions, which keep the MoonBit package's integer sample. The roll is read
/// as everywhere else first (NaN and negatives are 0, 1 and above just below 1), so a roll of
/// 1 or more is 1_000_000: no jitter. [`Jitter::Full`] draws through it, which is what makes
/// `Backoff`'s full jitter and the HTTP retry client delay one computation.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::sample_ppm;
///
/// assert_eq!(sample_ppm(0.0), 0);
/// assert_eq!(sample_ppm(0.5), 500_000);
/// assert_eq!(sample_ppm(0.999_999_9), 1_000_000);
/// assert_eq!(sample_ppm(1.0), 1_000_000);
/// assert_eq!(sample_ppm(f64::NAN), 0);
/// assert_eq!(sample_ppm(-3.0), 0);
/// ```
#[must_use]
pub fn sample_ppm(roll: f64) -> u32 {
    // `unit` is below 1, so the product is below 1_000_001 and truncates to at most 1_000_000.
    (unit(roll) * f64::from(PPM + 1)) as u32
}

/// Full jitter in parts per million: `floor(ceiling · ppm / 1_000_000)`, exact, for
/// `ppm ≤ 1_000_000` and any ceiling up to `Duration::MAX` (under 2^95 ns).
pub(crate) fn full_jitter(ceiling: u128, ppm: u32) -> u128 {
    // Below 2^44 ns (about 4.9 hours) the product fits a u64, whose division by a constant
    // is a multiplication; above, the u128 division is a library call kept out of line.
    if ceiling >> 44 == 0 {
        u128::from(ceiling as u64 * u64::from(ppm) / u64::from(PPM))
    } else {
        wide_jitter(ceiling, ppm)
    }
}

/// [`full_jitter`] for ceilings of 2^44 ns or more.
#[cold]
#[inline(never)]
fn wide_jitter(ceiling: u128, ppm: u32) -> u128 {
    ceiling * u128::from(ppm) / u128::from(PPM)
}

/// The factor as a whole number, when it is one below 2^64: such factors grow a ceiling in
/// exact integer arithmetic.
#[inline]
fn whole(factor: f64) -> Option<u64> {
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    // `as` truncates; the round trip is exact only for a whole number.
    (factor < TWO_64 && (factor as u64) as f64 == factor).then_some(factor as u64)
}

/// `base · factor^steps` in nanoseconds, exactly, saturating at `u128::MAX`.
fn grown(base: u128, factor: u64, steps: u32) -> u128 {
    if base == 0 || steps == 0 {
        return base;
    }
    let growth = if factor == 2 {
        // The presets' doubling, as a shift; `checked_shl` fails only from 128 on.
        1u128.checked_shl(steps)
    } else {
        u128::from(factor).checked_pow(steps)
    };
    growth
        .and_then(|growth| base.checked_mul(growth))
        .unwrap_or(u128::MAX)
}

#[cfg(test)]
mod tests;
