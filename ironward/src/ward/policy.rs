//! [`Reconnect`]: what a [`Ward`](super::Ward) is told to do, and its preset.

use core::time::Duration;

use crate::backoff::{Backoff, Jitter};
use crate::breaker::{SRE, Sre};
use crate::classic::{Classic, Force, HalfOpen, OpenWait, Record};
use crate::shedder::Shed;
#[cfg(doc)]
use {super::Ward, crate::Gate};

/// How a [`Ward`] lets a pool open connections, and how many checkouts it lets through.
///
/// A pool that keeps reconnecting to a failing database becomes part of the outage: every
/// checkout tries a fresh connection, the database's accept queue fills, and when it recovers
/// every worker reconnects at once. The MoonBit package `moonward` puts a breaker, a bucket,
/// a backoff and a shedder in front of a resource pool "so a pool stops connecting to a
/// failing backend and spaces out its reconnections"; this is that policy, built from the
/// crate's own pieces.
///
/// A policy is changed the Rust way: `Reconnect { rate: 2.0, ..RECONNECT }`.
///
/// # Default
///
/// [`RECONNECT`]:
///
/// | field | value | why |
/// | --- | --- | --- |
/// | `breaker` | [`SRE`] | go-zero's breaker constants: 5 calls never refused, `k` 1.5, a probe after 1 s, 10 s of history |
/// | `rate` | 4 a second | a pool of 8 refills in about a second once the backend answers, far below any database's accept rate |
/// | `burst` | 4 | the most connects at once: a restart sees 4 at the same instant, never the whole pool |
/// | `backoff` | 250 ms growing by 1.6 to 4 s, spread by a fifth either way | gRPC's connection backoff (`connection-backoff.md`: a factor of 1.6, a jitter of 0.2) with a shorter start and cap, since a pool is waited on by requests: the pool is back within 5 s of its backend |
/// | `checkouts` | [`Checkouts::Open`] | the pool's own size already bounds checkouts |
///
/// The backoff's `attempts` is not read (a pool never stops reconnecting); the preset sets it
/// to `u32::MAX` to say so.
///
/// # Examples
///
/// ```
/// use ironward::{Checkouts, RECONNECT, Reconnect};
///
/// let gentle = Reconnect { rate: 1.0, checkouts: Checkouts::Gate(64), ..RECONNECT };
/// assert_eq!(gentle.burst, RECONNECT.burst);
/// assert_eq!(Reconnect::default(), RECONNECT);
/// ```
///
/// `P` is the policy of the breaker family the ward runs, by default the SRE breaker's
/// [`Sre`]; [`RECONNECT_CLASSIC`] is the preset for the classic breaker's [`Classic`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(
        default,
        deny_unknown_fields,
        bound(deserialize = "P: serde::Deserialize<'de> + Default")
    )
)]
pub struct Reconnect<P = Sre> {
    /// The breaker every new connection asks first, fed by connects and by the pool's checks
    /// of the connections it holds ([`Ward::record`]).
    pub breaker: P,
    /// New connections a second, at most, over any stretch: a token bucket's rate. NaN,
    /// negative or infinite never refills (after `burst` connects, none).
    pub rate: f64,
    /// New connections at once: the bucket's size, which it starts with. Below 1 (or NaN)
    /// is read as 1.
    pub burst: f64,
    /// How long to wait after a failed connect before the next, growing with each failure
    /// in a row and forgotten on a success; `attempts` is not read.
    pub backoff: Backoff,
    /// What a checkout asks before the pool is asked for a connection.
    pub checkouts: Checkouts,
}

/// The preset [`Reconnect`]: go-zero's breaker, 4 connects a second in bursts of 4, and a
/// backoff from 250 ms by 1.6 to 4 s, spread by a fifth. The `# Default` section of
/// [`Reconnect`] says why.
pub const RECONNECT: Reconnect = Reconnect {
    breaker: SRE,
    rate: 4.0,
    burst: 4.0,
    backoff: Backoff {
        base: Duration::from_millis(250),
        factor: 1.6,
        cap: Duration::from_secs(4),
        attempts: u32::MAX,
        jitter: Jitter::Spread(0.2),
    },
    checkouts: Checkouts::Open,
};

/// The preset [`Reconnect`] with the classic breaker: [`RECONNECT`]'s bucket, backoff and
/// checkouts, and a classic policy for a pool's connects and checks, which are few, uneven
/// in time, and each already bounded by the pool's own timeouts.
///
/// | field | value | why |
/// | --- | --- | --- |
/// | `breaker.record` | the last 20 outcomes | about two rounds of a pool of 8, its connects and their checks: a window counted in outcomes, not in time, since a busy pool checks thousands of connections a second, whose successes would bury an outage's few failures in any window of seconds until it had lasted as long, while a quiet pool's few outcomes are still weighed; and smaller than resilience4j's 100, so that the 8 checks of a pool whose backend died and a few failed connects open it at once |
/// | `breaker.minimum` | 5 outcomes | go-zero's 5 calls never refused: a new pool's first broken connection never opens it |
/// | `breaker.failure_rate` | 50 % | resilience4j's default: half of what the pool heard failed: a backend whose every new connection is made and then fails its first check reaches it, a breaking connection among healthy ones does not |
/// | `breaker.slow_call`, `breaker.slow_rate` | the longest, 100 % | the pool's connect timeout already fails a slow connect; counting it slow as well would count one fault twice (as [`POLLY`](crate::POLLY), which counts no slow calls) |
/// | `breaker.open` | 1 s, growing by 1.6 to 4 s | the SRE preset's probe after 1 s, growing as the backoff does (gRPC's factor of 1.6) to the backoff's cap: an open breaker never holds a recovered backend's pool back longer than the backoff would, so the pool is still back within 5 s of its backend |
/// | `breaker.probes`, `breaker.half_open` | 1, then closed | one connect at a time is what the ward's backoff lets through while failing; one that succeeds says the backend is back, and the bucket paces the rest |
/// | `breaker.lease` | 4 s | the backoff's cap, after which the ward stops waiting on a trial in flight: a probe not settled by then is lost for both |
/// | `breaker.automatic`, `breaker.force` | off, none | nothing polls the state between connects; the next connect moves it |
/// | `rate`, `burst`, `backoff`, `checkouts` | [`RECONNECT`]'s | see [`Reconnect`]'s `# Default` |
///
/// `Reconnect::<Classic>::default()` is another policy: [`RECONNECT`] with resilience4j's
/// defaults ([`CLASSIC`](crate::CLASSIC)), whose 100 calls a pool seldom makes.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::classic::OpenWait;
/// use ironward::{Classic, ClassicBreaker, RECONNECT, RECONNECT_CLASSIC, Reconnect, Ward};
///
/// assert_eq!(RECONNECT_CLASSIC.backoff, RECONNECT.backoff);
/// let longest = OpenWait::after(RECONNECT_CLASSIC.breaker.open, 10);
/// assert_eq!(longest, RECONNECT.backoff.cap);
/// let stricter = Reconnect { breaker: Classic { minimum: 10, ..RECONNECT_CLASSIC.breaker }, ..RECONNECT_CLASSIC };
/// let ward = Ward::for_breaker::<ClassicBreaker>(stricter, Duration::ZERO);
/// assert_eq!(ward.policy().breaker.minimum, 10);
/// ```
pub const RECONNECT_CLASSIC: Reconnect<Classic> = Reconnect {
    breaker: Classic {
        record: Record::Count { calls: 20 },
        failure_rate: 0.5,
        slow_rate: 1.0,
        slow_call: Duration::MAX,
        minimum: 5,
        open: OpenWait::Growing {
            first: Duration::from_secs(1),
            factor: 1.6,
            max: RECONNECT.backoff.cap,
        },
        probes: 1,
        half_open: HalfOpen::Probes,
        lease: RECONNECT.backoff.cap,
        automatic: false,
        force: Force::None,
    },
    rate: RECONNECT.rate,
    burst: RECONNECT.burst,
    backoff: RECONNECT.backoff,
    checkouts: RECONNECT.checkouts,
};

/// [`RECONNECT`] with the breaker family's default policy (for [`Sre`], [`SRE`]).
impl<P: Default> Default for Reconnect<P> {
    fn default() -> Self {
        Self {
            breaker: P::default(),
            rate: RECONNECT.rate,
            burst: RECONNECT.burst,
            backoff: RECONNECT.backoff,
            checkouts: RECONNECT.checkouts,
        }
    }
}

/// What a checkout asks before it reaches the pool.
///
/// A pool already hands out no more connections than it holds; what it does not bound is how
/// many callers wait for one. A [`Gate`](Checkouts::Gate) refuses past a number of
/// checkouts at once (waiting ones included), so a backlog fails fast instead of queueing
/// into timeouts; a [`Shed`](Checkouts::Shed) refuses when this server is hot and full, by
/// the CPU reading the caller passes in.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Checkouts {
    /// Every checkout goes to the pool.
    Open,
    /// At most this many checkouts at once (0 is read as 1, as [`Gate`] reads it).
    Gate(u32),
    /// Go-zero's adaptive shedder, by CPU and the checkouts in flight.
    Shed(Shed),
}
