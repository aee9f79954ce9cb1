//! [`Options`]: how a [`Store`](crate::Store) talks to Redis and what it does when Redis is
//! away, with the choices among them ([`OnTimeout`], [`Time`]).

use std::time::Duration;

#[cfg(doc)]
use crate::{Source, Stats, Store, StoreError};

/// How a [`Store`] talks to Redis and what it does when Redis is away.
///
/// A plain record: change it with `..Options::default()`.
///
/// # Default
///
/// [`OPTIONS`]:
///
/// | field | value | why |
/// | --- | --- | --- |
/// | `timeout` | 100 ms | a decision is one round trip (about 50 µs on loopback, a millisecond across a data centre); one that takes a hundred times that is refused rather than left to hold the request up |
/// | `time` | [`Time::Caller`] | the clock is passed in, as everywhere in ironward |
/// | `probe` | 100 ms | go-zero's `pingInterval` (`core/limit/tokenlimit.go`) |
/// | `share` | 0.0 | a store cannot know how many processes share a quota, and any share above `1/N` lets a fleet of `N` admit more than the quota while Redis is away (go-zero's whole rate per process admits `N` times it); so by default the fallback refuses, and a fleet that prefers to serve sets `1/N` (see the guide's [failover, and its bounds](crate::_guide::failover)) |
/// | `local_keys` | 10 000 | the keys one limiter's fallback holds; a key is forgotten only once its limiter is as good as new, and the keys that find no room share one overflow limiter |
/// | `on_timeout` | [`OnTimeout::Refuse`] | a slow Redis is still the fleet's quota: refusing keeps its word, where answering from the fallback hands out the share as well |
/// | `blocked_keys` | 10 000 | a hot key over its quota is refused from memory until it could pass, and costs Redis nothing; ten thousand keys of a few dozen bytes each is about a megabyte a limiter |
/// | `start_local` | `false` | a Redis that cannot be reached at start is most often a wrong address, and a store that started on its fallback would quietly turn a fleet quota into per-process ones |
///
/// For go-zero's behaviour (each process answers with the whole quota while Redis is away,
/// and starts without it), set `share: 1.0` and `start_local: true`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_redis::{Options, Time};
///
/// // A fleet of four that reads Redis's clock and splits the quota four ways while Redis
/// // is away.
/// let options = Options { time: Time::Server, share: 0.25, ..Options::default() };
/// assert_eq!(options.timeout, Duration::from_millis(100));
/// assert_eq!(Options::default().share, 0.0);
/// assert_eq!(options.probe, Duration::from_millis(100));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// How long one call to Redis may take; past it the call is refused
    /// ([`StoreError::Timeout`]) and the store stays on Redis.
    pub timeout: Duration,
    /// Which clock the scripts read.
    pub time: Time,
    /// How often a store that has failed over sends Redis a `PING` (at least 1 ms).
    pub probe: Duration,
    /// The share of each quota the local fallback admits, from 0 to 1: a period's and a
    /// window's quota (rounded down), a bucket's rate and burst. NaN and negatives are 0,
    /// above 1 is 1. A share that comes to less than what one call needs refuses every
    /// call, with the probe interval as its `next`, and makes no core limiter: 0, a
    /// period's or a window's share below one event (`share · quota < 1`), a bucket's share
    /// of the burst below one token (a core bucket holds at least one token, which would be
    /// more than the share; costs of zero still pass). So the fallback never admits more
    /// than `share` of a quota.
    pub share: f64,
    /// How many keys each limiter's local fallback holds (at least 1). A key is forgotten
    /// only once its limiter is as good as new (idle for the core's `idle()`); keys that
    /// find the table full of limiters still counting share one overflow limiter, so each
    /// is still held to one key's share (see the guide's [failover, and its bounds](crate::_guide::failover)).
    pub local_keys: usize,
    /// What a call Redis does not answer within [`timeout`](Options::timeout) comes to.
    pub on_timeout: OnTimeout,
    /// Whether [`Store::connect`] returns a store while Redis cannot be reached, to start
    /// on the local fallback (`true`), or fails (`false`, the default). With `true`
    /// nothing is sent at connect: the store says [`Source::Local`] until Redis answers a
    /// call, the first call Redis answers also reads its eviction policy (one more round
    /// trip, within [`timeout`](Options::timeout)) as an eager connect does, and the first
    /// call that fails fails over.
    pub start_local: bool,
    /// How many refused keys each limiter remembers, to refuse them again without a round
    /// trip until they could pass (0: none). A refusal says when the key could pass, and
    /// nothing another process does brings that sooner, so a later call for the key of the same
    /// cost is refused from memory until then, and what is admitted is the same;
    /// the least recently refused key is forgotten past this many. Such answers are counted
    /// in [`Stats::blocked`]. Only on the caller's clock ([`Time::Caller`]): on Redis's,
    /// the caller's `now` says nothing of when a key could pass, and nothing is kept.
    pub blocked_keys: usize,
}

/// The reference options: [`Options`]' `# Default`.
///
/// # Examples
///
/// ```
/// use ironward_redis::{OPTIONS, Options};
///
/// assert_eq!(OPTIONS, Options::default());
/// assert_eq!((OPTIONS.share, OPTIONS.local_keys), (0.0, 10_000));
/// assert!(!OPTIONS.start_local);
/// ```
pub const OPTIONS: Options = Options {
    timeout: Duration::from_millis(100),
    time: Time::Caller,
    probe: Duration::from_millis(100),
    share: 0.0,
    local_keys: 10_000,
    on_timeout: OnTimeout::Refuse,
    start_local: false,
    blocked_keys: 10_000,
};

impl Default for Options {
    fn default() -> Self {
        OPTIONS
    }
}

impl Options {
    /// [`share`](Options::share) as read: NaN and negatives 0, above 1 is 1.
    pub(crate) fn local_share(&self) -> f64 {
        if self.share >= 1.0 {
            1.0
        } else if self.share > 0.0 {
            self.share
        } else {
            0.0
        }
    }
}

/// What a call that Redis does not answer in time comes to: fail closed or fail open.
///
/// Either way the store stays on Redis (a slow Redis is not a failed one) and the call is
/// counted in [`Stats::timeouts`].
///
/// # Examples
///
/// ```
/// use ironward_redis::{OnTimeout, Options};
///
/// assert_eq!(Options::default().on_timeout, OnTimeout::Refuse);
/// // Fail open, with a fleet of four splitting the quota.
/// let open = Options { on_timeout: OnTimeout::Fallback, share: 0.25, ..Options::default() };
/// assert_eq!(open.on_timeout, OnTimeout::Fallback);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnTimeout {
    /// Fail closed: the call is refused with [`StoreError::Timeout`], as go-zero's limiters
    /// refuse on a deadline. The script may still have run and counted the event.
    #[default]
    Refuse,
    /// Fail open, as far as the share goes: the call is answered by the limiter's local
    /// fallback (its [`Answer`](crate::Answer)'s source is [`Source::Local`]), which admits
    /// at most [`Options::share`] of the quota. With a share of 0 this refuses too.
    Fallback,
}

/// Which clock a decision is taken on.
///
/// # Examples
///
/// ```
/// use ironward_redis::Time;
///
/// assert_eq!(Time::default(), Time::Caller);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Time {
    /// The `now` each call passes, rounded up to whole microseconds. Every process of the
    /// fleet must then read the same clock, the Unix wall clock in practice: a process
    /// whose clock runs ahead moves every key it touches forward for the whole fleet, and
    /// one whose clock runs behind is read as the latest time seen (see the guide's
    /// [clocks](crate::_guide::clocks)).
    #[default]
    Caller,
    /// Redis's own clock (`TIME`, whole microseconds), read inside the script, so that the
    /// fleet's clocks may drift apart. The `now` passed is then used by the local fallback
    /// alone. Needs Redis 3.2 or later (effects replication, the default from 5.0).
    Server,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_read_into_the_unit_interval() {
        let share = |share| Options { share, ..OPTIONS }.local_share();
        assert_eq!(share(0.5), 0.5);
        assert_eq!(share(2.0), 1.0);
        assert_eq!(share(-1.0), 0.0);
        assert_eq!(share(f64::NAN), 0.0);
        assert_eq!(share(f64::INFINITY), 1.0);
    }
}
