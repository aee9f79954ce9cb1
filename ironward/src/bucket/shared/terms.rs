//! The words of a [`SharedBucket`](super::SharedBucket): its units (ticks of a quarter
//! nanosecond), the terms of one generation and the slots that hold them.

use super::super::{read_burst, read_rate};
use crate::internal::sync::{AtomicU64, Ordering};

/// Ticks in a nanosecond: the word counts time in quarters of a nanosecond.
pub(super) const TICKS_PER_NS: u64 = 4;

/// Ticks in a second, as the float a rate divides.
pub(super) const TICKS_PER_SEC: f64 = 4e9;

/// The bits of the word that tag which terms it was written under.
pub(super) const GEN_BITS: u32 = 2;

/// The generations the tag tells apart, one slot of terms each.
pub(super) const GENS: usize = 1 << GEN_BITS;

/// The tag's bits in the word.
pub(super) const GEN_MASK: u64 = GENS as u64 - 1;

/// The longest span after the bucket's creation that its clock counts, in nanoseconds:
/// 2^59 ns, about 18.3 years. Later readings read as this one: time stops, as the core's
/// clocks stop at `u64::MAX` nanoseconds.
pub(super) const SPAN_NS: u64 = (1 << 59) - 1;

/// The most ticks a burst may take to refill: 2^61, the word's clock span again. The time at
/// which the bucket is full, at most the latest tick plus this, then fits the word's 62 bits.
pub(super) const TAU_MAX: u64 = 1 << 61;

/// A flag in the terms' `tau`: the burst is infinite.
pub(super) const UNBOUNDED: u64 = 1 << 63;

/// A flag in the terms' `tau`: the bucket never refills, so its clock does not run.
pub(super) const FROZEN: u64 = 1 << 62;

/// The bits of the terms' `tau` that hold the ticks.
pub(super) const TAU_MASK: u64 = FROZEN - 1;

/// Ticks a token stands for in a frozen bucket of infinite burst: 2^32, so that up to 2^29
/// tokens are held to 2^-32 of a token.
pub(super) const FROZEN_UNBOUNDED_PER_TOKEN: f64 = 4_294_967_296.0;

/// 2^62 as a float: every cost of that many ticks or more is past any bucket's room.
pub(super) const TWO_62: f64 = 4_611_686_018_427_387_904.0;

/// A rate and burst as the word's arithmetic uses them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Terms {
    /// Tokens a second, as `Bucket` reads it.
    pub(super) rate: f64,
    /// The most the bucket holds, as `Bucket` reads it.
    pub(super) burst: f64,
    /// Ticks a token stands for (`T`).
    pub(super) per_token: f64,
    /// The burst in ticks, with the [`UNBOUNDED`] and [`FROZEN`] flags.
    pub(super) tau: u64,
}

impl Terms {
    /// The terms of `rate` and `burst`, read as [`Bucket::new`](crate::Bucket::new) reads
    /// them.
    pub(super) fn new(rate: f64, burst: f64) -> Self {
        let (rate, burst) = (read_rate(rate), read_burst(burst));
        let unbounded = burst == f64::INFINITY;
        // Infinite for a rate of 0, or so small that a token is more ticks than a float holds.
        let per_token = TICKS_PER_SEC / rate;
        let ticking = per_token.is_finite() && (unbounded || burst * per_token <= TAU_MAX as f64);
        let (per_token, flags) = match (ticking, unbounded) {
            (true, true) => (per_token, UNBOUNDED),
            (true, false) => (per_token, 0),
            (false, true) => (FROZEN_UNBOUNDED_PER_TOKEN, UNBOUNDED | FROZEN),
            // A frozen bucket's ticks are only a fixed point for its tokens: a power of two,
            // so that tokens convert exactly, with the burst at 2^59 to 2^60 ticks.
            (false, false) => (power_of_two_below((TAU_MAX / 2) as f64 / burst), FROZEN),
        };
        let tau = if unbounded {
            TAU_MAX
        } else {
            // At most 2^61: `burst · T` is at most that, and whole from 2^53.
            ceil_ticks(burst * per_token).min(TAU_MAX)
        };
        Self {
            rate,
            burst,
            per_token,
            tau: tau | flags,
        }
    }

    /// The burst in ticks.
    pub(super) fn tau(&self) -> u64 {
        self.tau & TAU_MASK
    }

    /// Whether the burst is infinite.
    pub(super) fn unbounded(&self) -> bool {
        self.tau & UNBOUNDED != 0
    }

    /// Whether the bucket never refills.
    pub(super) fn frozen(&self) -> bool {
        self.tau & FROZEN != 0
    }

    /// The tokens held with `tat` at tick `t`: capped at the burst, infinite for a full
    /// bucket of infinite burst.
    pub(super) fn held(&self, tat: u64, t: u64) -> f64 {
        let deficit = tat.saturating_sub(t);
        if self.unbounded() && deficit == 0 {
            return f64::INFINITY;
        }
        // One division, correctly rounded, so that whole tokens read as whole: only a
        // report (a refusal's reason, the tokens left) works it out, never a decision.
        let tokens = whole(self.tau().saturating_sub(deficit)) / self.per_token;
        if tokens < self.burst {
            tokens
        } else {
            self.burst
        }
    }

    /// The `tat` of a bucket holding `tokens` (at least 0, not NaN) at tick `t`: full at
    /// `t` when they reach the burst, otherwise short of it by the deficit rounded up.
    pub(super) fn tat(&self, tokens: f64, t: u64) -> u64 {
        let full = if self.unbounded() {
            tokens == f64::INFINITY
        } else {
            tokens >= self.burst
        };
        if full {
            return t;
        }
        // Rounded down, so that the bucket holds no more than it was given.
        let held = floor_ticks(tokens * self.per_token);
        t + self.tau().saturating_sub(held)
    }
}

/// One generation's terms, each number in an atomic so that a retune can write them.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) rate: AtomicU64,
    pub(super) burst: AtomicU64,
    pub(super) per_token: AtomicU64,
    pub(super) tau: AtomicU64,
    /// One token in whole ticks, rounded up (`cost_ticks(1.0, per_token)`): the cost of
    /// almost every take, kept so that a take of one multiplies and rounds nothing.
    pub(super) one: AtomicU64,
}

impl Slot {
    /// The terms held, read one by one: the caller knows no retune is writing them.
    pub(super) fn get(&self) -> Terms {
        let float = |word: &AtomicU64| f64::from_bits(word.load(Ordering::Relaxed));
        Terms {
            rate: float(&self.rate),
            burst: float(&self.burst),
            per_token: float(&self.per_token),
            tau: self.tau.load(Ordering::Relaxed),
        }
    }

    /// Writes `terms`; a retune publishes them with the swap that tags the word.
    pub(super) fn set(&self, terms: Terms) {
        let store = |word: &AtomicU64, x: f64| word.store(x.to_bits(), Ordering::Relaxed);
        store(&self.rate, terms.rate);
        store(&self.burst, terms.burst);
        store(&self.per_token, terms.per_token);
        self.tau.store(terms.tau, Ordering::Relaxed);
        self.one
            .store(cost_ticks(1.0, terms.per_token), Ordering::Relaxed);
    }
}

/// `n` tokens as whole ticks at `per_token` ticks a token, rounded up; `n` is a cost (at
/// least 0 and finite), and a product past 2^62, beyond any bucket's room, reads as
/// `u64::MAX`.
#[inline]
pub(super) fn cost_ticks(n: f64, per_token: f64) -> u64 {
    ceil_ticks(n * per_token)
}

/// `x` (at least 0, or NaN for `0 · ∞`, read as 0) rounded up to whole ticks, `u64::MAX`
/// from 2^62.
#[inline]
pub(super) fn ceil_ticks(x: f64) -> u64 {
    if x < TWO_62 {
        // Through `i64`, one instruction on x86-64 and AArch64; NaN converts to 0.
        let whole = x as i64;
        (whole + i64::from((whole as f64) < x)) as u64
    } else {
        u64::MAX
    }
}

/// `x` (at least 0) rounded down to whole ticks, `u64::MAX` from 2^62.
pub(super) fn floor_ticks(x: f64) -> u64 {
    if x < TWO_62 {
        x as i64 as u64
    } else {
        u64::MAX
    }
}

/// The largest power of two at most `x` (a positive normal float): `x` with its mantissa
/// cleared.
pub(super) fn power_of_two_below(x: f64) -> f64 {
    f64::from_bits(x.to_bits() & 0xfff0_0000_0000_0000)
}

/// A count of ticks (under 2^62) as a float.
#[inline]
pub(super) fn whole(ticks: u64) -> f64 {
    ticks as i64 as f64
}
