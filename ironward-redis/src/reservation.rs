//! [`Reservation`]: an estimate taken from a Redis limiter, to be settled at the actual cost.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::batch::Call;
use crate::meter::{Admits, Meter};
use crate::store::Ran;
use crate::{Answer, Store, StoreError, wire};

/// An estimate taken by [`Period::reserve`](crate::Period::reserve),
/// [`Bucket::reserve`](crate::Bucket::reserve) or [`Sliding::reserve`](crate::Sliding::reserve),
/// to be settled at the request's actual cost by the same limiter's `settle`.
///
/// It remembers where the estimate went: into Redis (with what a refund needs to find it
/// there: the start of the period it was counted in, or the stamp of the log entry it was
/// pushed as; and the latest reading at which a settle still counts), or into the local
/// fallback while Redis was away (the core's `ironward::Reservation`). It also remembers
/// the limiter that made it: the settle of another limiter (one made by another `new`,
/// whatever its name; clones are the same limiter) changes nothing, as a settle past its
/// deadline changes nothing. Not `Clone`: a reservation is settled once, and a second
/// settle does not compile:
///
/// ```compile_fail
/// # async fn twice(period: ironward_redis::Period, reservation: ironward_redis::Reservation) {
/// let now = std::time::Duration::ZERO;
/// period.settle(reservation, 1, now).await.unwrap();
/// period.settle(reservation, 1, now).await.unwrap(); // moved by the first settle
/// # }
/// ```
///
/// One dropped keeps its estimate, as the core's does.
#[must_use = "a reservation left unsettled keeps costing its estimate: settle it with the actual cost"]
pub struct Reservation {
    /// The limiter that made it ([`limiter_id`]).
    limiter: u64,
    key: Option<Box<[u8]>>,
    /// Tokens for a bucket; units (a `u32`, exact in a double) for a period or a log.
    estimate: f64,
    held: Held,
}

/// Where a [`Reservation`]'s estimate was counted.
pub(crate) enum Held {
    /// In Redis, at `at` in the scripts' microseconds (a period's start, a log entry's
    /// stamp, a bucket's reading), and settled at readings up to `deadline`.
    Redis { at: u64, deadline: u64 },
    /// In the local fallback's core limiter for the key.
    Local(ironward::Reservation),
    /// Nowhere: a bucket of infinite burst takes nothing, so there is nothing to settle
    /// (`source` is the store's when it was taken).
    Nothing(crate::Source),
}

/// What a settle needs of a [`Reservation`]: the key it was taken for (`None` for the
/// budget of requests without one), the estimate, and where it went.
pub(crate) type Parts = (Option<Box<[u8]>>, f64, Held);

/// A number no other limiter of this process has, for a limiter to tell its own
/// reservations from others'.
pub(crate) fn limiter_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Reservation {
    /// `estimate` for `key`, taken by the limiter `limiter`, counted where `held` says.
    pub(crate) fn new(limiter: u64, key: Option<&[u8]>, estimate: f64, held: Held) -> Self {
        Self {
            limiter,
            key: key.map(Into::into),
            estimate,
            held,
        }
    }

    /// The [`Parts`] a settle needs, if the limiter `limiter` made the reservation; `None`
    /// for another limiter's, which a settle leaves alone.
    pub(crate) fn into_parts(self, limiter: u64) -> Option<Parts> {
        (self.limiter == limiter).then_some((self.key, self.estimate, self.held))
    }

    /// The cost taken when the reservation was made, and what it costs if never settled:
    /// tokens for a bucket, units (a whole number) for a period or a log, as the core's
    /// `Reservation::estimate`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::{Options, Period, Store};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> redis::RedisResult<()> {
    /// let options = Options { start_local: true, share: 1.0, ..Options::default() };
    /// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
    /// let period = Period::new(&store, "tokens", 10, Duration::from_secs(60));
    /// let answer = period.reserve("k", Duration::ZERO, 4, Duration::from_secs(1)).await.unwrap();
    /// assert_eq!(answer.value.map(|r| r.estimate()), Some(4.0));
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn estimate(&self) -> f64 {
        self.estimate
    }

    /// Whether the estimate went into Redis ([`Source::Redis`](crate::Source::Redis)) or the
    /// local fallback, where its settle will go.
    #[must_use]
    pub fn source(&self) -> crate::Source {
        match self.held {
            Held::Redis { .. } => crate::Source::Redis,
            Held::Local(_) => crate::Source::Local,
            Held::Nothing(source) => source,
        }
    }
}

impl fmt::Debug for Reservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Reservation");
        debug
            .field("estimate", &self.estimate)
            .field("source", &self.source());
        if let Held::Redis { at, deadline } = self.held {
            debug.field("at_us", &at).field("deadline_us", &deadline);
        }
        debug.finish_non_exhaustive()
    }
}

/// A `reserve`'s answer from the decision its take would make: counted on `meter` as that
/// take is, and handing over the reservation, if one was made.
pub(crate) fn reserved<T: Admits + Copy>(
    meter: &Meter,
    decided: Result<(Answer<T>, Option<Reservation>), StoreError>,
) -> Result<Answer<Option<Reservation>>, StoreError> {
    let counted = decided
        .as_ref()
        .map(|(answer, _)| *answer)
        .map_err(Clone::clone);
    meter.count(&counted);
    let (answer, reservation) = decided?;
    Ok(Answer {
        value: reservation,
        next: answer.next,
        source: answer.source,
    })
}

/// Settles what a reservation `held` where it was counted: nothing for one that held
/// nothing; on the fallback, counted as a local answer, by `local`; in Redis by the settle
/// script `call` makes of the reservation's place and deadline (its reply 0 or 1), run on
/// `meter`. A store that is on its fallback by then drops a Redis settle.
pub(crate) async fn settle(
    store: &Store,
    meter: &Meter,
    held: Held,
    local: impl FnOnce(ironward::Reservation),
    call: impl FnOnce(u64, u64) -> Call,
) -> Result<(), StoreError> {
    match held {
        Held::Nothing(_) => Ok(()),
        Held::Local(held) => {
            store.answered_locally();
            local(held);
            Ok(())
        }
        Held::Redis { at, deadline } => {
            let call = call(at, deadline);
            let decode = |reply: &redis::Value| match wire::int(reply)? {
                0 | 1 => Some(()),
                _ => None,
            };
            match store.run(meter, call, decode).await? {
                Ran::Answered(()) | Ran::Local => Ok(()),
            }
        }
    }
}
