//! Why a [`Ward`](crate::Ward) refused a connect or a checkout.

use core::fmt;
use core::time::Duration;

use crate::{BucketReason, GateReason, ShedReason, SreReason};

/// The piece of a [`Ward`](crate::Ward) that refused a connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WardPiece {
    /// The SRE breaker: the backend's record is too poor to connect now.
    Breaker,
    /// The token bucket: too many connects lately.
    Bucket,
    /// The backoff: too soon after a failed connect, or a trial connect is in flight.
    Backoff,
}

impl WardPiece {
    /// The piece's name in lower case: `breaker`, `bucket` or `backoff` (what an edge labels
    /// its metrics and events with).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Breaker => "breaker",
            Self::Bucket => "bucket",
            Self::Backoff => "backoff",
        }
    }
}

impl fmt::Display for WardPiece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why the backoff of a [`Ward`](crate::Ward) refused a connect.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{RECONNECT, Refusal, Ward};
///
/// let ms = Duration::from_millis;
/// let mut ward = Ward::new(RECONNECT, ms(0));
/// let permit = ward.connect(ms(0), 0.5).unwrap();
/// ward.failed(permit, ms(0), 0.5);
/// let Err(Refusal::Backoff(reason)) = ward.connect(ms(50), 0.5) else { unreachable!() };
/// assert_eq!((reason.failures, reason.wait, reason.next), (1, ms(250), ms(200)));
/// assert_eq!(
///     reason.to_string(),
///     "backoff after 1 failed connect: waiting 250ms, next in 200ms",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BackoffReason {
    /// Failed connects in a row, counted once per round.
    pub failures: u32,
    /// The wait the last failure started.
    pub wait: Duration,
    /// How long after the refusal the wait ends; with a trial in flight, at least the wait
    /// (the soonest a connect could follow should the trial fail then; a trial that succeeds
    /// opens connects sooner).
    pub next: Duration,
    /// A trial connect is in flight: while connects are failing only one is made at a time,
    /// and its settle decides when the next may be.
    pub trying: bool,
}

impl fmt::Display for BackoffReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.failures == 1 { "" } else { "s" };
        write!(
            f,
            "backoff after {} failed connect{plural}: waiting {:?}",
            self.failures, self.wait
        )?;
        if self.trying {
            f.write_str(", a trial connect in flight")
        } else {
            write!(f, ", next in {:?}", self.next)
        }
    }
}

impl core::error::Error for BackoffReason {}

/// Why a [`Ward`](crate::Ward) refused a connect: the piece, and the numbers that decided it.
///
/// [`next`](Refusal::next) says when a connect may next be tried, counted from the refusal.
/// `R` is the breaker family's reason, by default the SRE breaker's [`SreReason`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Refusal<R = SreReason> {
    /// The breaker refused: a draw under its drop fraction, or a refusal within the
    /// backoff's base of one (the ward does not ask the breaker again until `next`).
    Breaker {
        /// Why the breaker refused, at the refusal that began the hold (for the SRE breaker,
        /// its window and drop fraction).
        reason: R,
        /// How long until the ward asks the breaker again.
        next: Duration,
    },
    /// The bucket holds less than one token.
    Bucket(BucketReason),
    /// The backoff's wait since the last failure has not passed, or a trial is in flight.
    Backoff(BackoffReason),
}

impl<R> Refusal<R> {
    /// Which piece refused.
    #[must_use]
    pub fn piece(&self) -> WardPiece {
        match self {
            Self::Breaker { .. } => WardPiece::Breaker,
            Self::Bucket(_) => WardPiece::Bucket,
            Self::Backoff(_) => WardPiece::Backoff,
        }
    }

    /// How long after the refusal a connect may next be tried: the breaker's hold, the
    /// bucket's refill ([`BucketReason::next`], `Duration::MAX` if it never refills) or the
    /// backoff's wait (with a trial in flight, at least the wait: never zero while connects
    /// are failing, so a caller that sleeps this long does not spin).
    #[must_use]
    pub fn next(&self) -> Duration {
        match self {
            Self::Breaker { next, .. } => *next,
            Self::Bucket(reason) => reason.next(),
            Self::Backoff(reason) => reason.next,
        }
    }
}

impl<R: fmt::Display> fmt::Display for Refusal<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Breaker { reason, next } => write!(f, "{reason}; asked again in {next:?}"),
            Self::Bucket(reason) => reason.fmt(f),
            Self::Backoff(reason) => reason.fmt(f),
        }
    }
}

impl<R: fmt::Debug + fmt::Display> core::error::Error for Refusal<R> {}

/// Why a [`Ward`](crate::Ward) refused a checkout: the gate's or the shedder's reason.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CheckoutRefusal {
    /// [`Checkouts::Gate`](crate::Checkouts::Gate) is full.
    Gate(GateReason),
    /// [`Checkouts::Shed`](crate::Checkouts::Shed) is hot and full.
    Shed(ShedReason),
}

impl fmt::Display for CheckoutRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Gate(reason) => reason.fmt(f),
            Self::Shed(reason) => reason.fmt(f),
        }
    }
}

impl core::error::Error for CheckoutRefusal {}
