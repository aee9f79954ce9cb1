//! The errors a warded manager fails with.

use std::error::Error;
use std::fmt;
use std::time::Duration;

use ironward::{CheckoutRefusal, Refusal, SreReason, WardPiece};

/// The ward refused a new connection: the pool's connect failed fast, without reaching the
/// backend.
///
/// It carries the core's [`Refusal`]: which piece refused (the breaker, the bucket or the
/// backoff), when a connect may next be tried and the numbers that decided it. `Display` is
/// one line, what refused and then the reason's own; because the reason is in it,
/// [`source`](Error::source) is `None`.
///
/// Its field is private, so that it can gain another without breaking a caller; make one
/// with [`ConnectRefused::new`].
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{RECONNECT, Ward, WardPiece};
/// use ironward_pool::ConnectRefused;
///
/// let ms = Duration::from_millis;
/// let mut ward = Ward::new(RECONNECT, ms(0));
/// let permit = ward.connect(ms(0), 0.5).unwrap();
/// ward.failed(permit, ms(0), 0.5);
/// let refused = ConnectRefused::new(ward.connect(ms(50), 0.5).unwrap_err());
/// assert_eq!((refused.piece(), refused.next()), (WardPiece::Backoff, ms(200)));
/// assert_eq!(
///     refused.to_string(),
///     "connect refused by the backoff: backoff after 1 failed connect: waiting 250ms, next in 200ms",
/// );
/// ```
///
/// `R` is the reason of the ward's breaker family, by default the SRE breaker's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConnectRefused<R = SreReason> {
    refusal: Refusal<R>,
}

impl<R> ConnectRefused<R> {
    /// The refusal of one connect, for the reason the core gave.
    pub const fn new(refusal: Refusal<R>) -> Self {
        Self { refusal }
    }

    /// Which piece refused.
    pub fn piece(&self) -> WardPiece {
        self.refusal.piece()
    }

    /// How long after the refusal a connect may next be tried ([`Refusal::next`]).
    pub fn next(&self) -> Duration {
        self.refusal.next()
    }

    /// The core's refusal, with the numbers that decided it.
    pub fn refusal(&self) -> &Refusal<R> {
        &self.refusal
    }
}

impl<R: fmt::Display> fmt::Display for ConnectRefused<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "connect refused by the {}: {}",
            self.piece(),
            self.refusal
        )
    }
}

impl<R: fmt::Debug + fmt::Display> Error for ConnectRefused<R> {}

/// The ward refused a checkout: its gate is full or its shedder is hot and full.
///
/// Its field is private; make one with [`CheckoutRefused::new`].
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Checkouts, RECONNECT, Reconnect, Ward};
/// use ironward_pool::CheckoutRefused;
///
/// let policy = Reconnect { checkouts: Checkouts::Gate(1), ..RECONNECT };
/// let mut ward = Ward::new(policy, Duration::ZERO);
/// let _slot = ward.checkout(Duration::ZERO, 0).unwrap();
/// let refused = CheckoutRefused::new(ward.checkout(Duration::ZERO, 0).unwrap_err());
/// assert_eq!(
///     refused.to_string(),
///     "checkout refused: gate full: 1 held against a limit of 1",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckoutRefused {
    refusal: CheckoutRefusal,
}

impl CheckoutRefused {
    /// The refusal of one checkout, for the reason the core gave.
    pub const fn new(refusal: CheckoutRefusal) -> Self {
        Self { refusal }
    }

    /// The core's refusal: the gate's or the shedder's reason.
    pub fn refusal(&self) -> &CheckoutRefusal {
        &self.refusal
    }
}

impl fmt::Display for CheckoutRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "checkout refused: {}", self.refusal)
    }
}

impl Error for CheckoutRefused {}

/// What a warded manager's connect fails with: the ward's refusal, or the inner manager's
/// own error.
///
/// deadpool returns it to the checkout inside its own error type (`PoolError::Backend`), and
/// bb8 hands it to the pool's `error_sink`, so a caller tells a fast refusal from a failed
/// connect with [`is_refused`](WardError::is_refused) and reads when to try again from
/// [`refused`](WardError::refused).
///
/// # Examples
///
/// ```
/// use ironward_pool::WardError;
///
/// let failed: WardError<std::io::Error> = WardError::Backend(std::io::ErrorKind::ConnectionRefused.into());
/// assert!(!failed.is_refused());
/// assert_eq!(failed.to_string(), "connection refused");
/// ```
///
/// `R` is the reason of the ward's breaker family, by default the SRE breaker's.
#[derive(Debug)]
#[non_exhaustive]
pub enum WardError<E, R = SreReason> {
    /// The ward refused the connect; the backend was not asked.
    Refused(ConnectRefused<R>),
    /// The inner manager failed: its error, as it gave it.
    Backend(E),
}

impl<E, R> WardError<E, R> {
    /// Whether the ward refused (rather than the backend failing).
    pub fn is_refused(&self) -> bool {
        matches!(self, Self::Refused(_))
    }

    /// The ward's refusal, if it refused.
    pub fn refused(&self) -> Option<&ConnectRefused<R>> {
        match self {
            Self::Refused(refused) => Some(refused),
            Self::Backend(_) => None,
        }
    }

    /// The inner manager's error, if it failed.
    pub fn backend(&self) -> Option<&E> {
        match self {
            Self::Refused(_) => None,
            Self::Backend(err) => Some(err),
        }
    }
}

impl<E: fmt::Display, R: fmt::Display> fmt::Display for WardError<E, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(refused) => refused.fmt(f),
            Self::Backend(err) => err.fmt(f),
        }
    }
}

impl<E: Error + 'static, R: fmt::Debug + fmt::Display> Error for WardError<E, R> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Self::Refused(_) => None,
            Self::Backend(err) => err.source(),
        }
    }
}
