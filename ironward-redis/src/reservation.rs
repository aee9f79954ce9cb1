//! [`Reservation`]: an estimate taken from a Redis limiter, to be settled at the actual cost.

use std::fmt;

/// An estimate taken by [`Period::reserve`](crate::Period::reserve), to be settled at the
/// request's actual cost by [`Period::settle`](crate::Period::settle).
///
/// It remembers where the estimate went: into Redis (with the start of the period it was
/// counted in, so that a refund comes off that period only, and the latest reading at which
/// a settle still counts), or into the local fallback while Redis was away (the core's
/// `ironward::Reservation`). Not `Clone`: a reservation is settled once; one dropped keeps
/// its estimate, as the core's does.
#[must_use = "a reservation left unsettled keeps costing its estimate: settle it with the actual cost"]
pub struct Reservation {
    key: Option<Box<[u8]>>,
    estimate: u32,
    held: Held,
}

/// Where a [`Reservation`]'s estimate was counted.
pub(crate) enum Held {
    /// In Redis: the period's start and the deadline, in the scripts' microseconds.
    Redis { start: u64, deadline: u64 },
    /// In the local fallback's core limiter for the key.
    Local(ironward::Reservation),
}

impl Reservation {
    /// `estimate` units for `key`, counted where `held` says.
    pub(crate) fn new(key: Option<&[u8]>, estimate: u32, held: Held) -> Self {
        Self {
            key: key.map(Into::into),
            estimate,
            held,
        }
    }

    /// The key the estimate was taken for (`None` for the budget of requests without one),
    /// the estimate, and where it went: what a settle needs.
    pub(crate) fn into_parts(self) -> (Option<Box<[u8]>>, u32, Held) {
        (self.key, self.estimate, self.held)
    }

    /// The units taken when the reservation was made, and what it costs if never settled.
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
    /// assert_eq!(answer.value.map(|r| r.estimate()), Some(4));
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn estimate(&self) -> u32 {
        self.estimate
    }

    /// Whether the estimate went into Redis ([`Mode::Redis`](crate::Mode::Redis)) or the
    /// local fallback, where its settle will go.
    #[must_use]
    pub fn mode(&self) -> crate::Mode {
        match self.held {
            Held::Redis { .. } => crate::Mode::Redis,
            Held::Local(_) => crate::Mode::Local,
        }
    }
}

impl fmt::Debug for Reservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Reservation");
        debug
            .field("estimate", &self.estimate)
            .field("mode", &self.mode());
        if let Held::Redis { start, deadline } = self.held {
            debug
                .field("start_us", &start)
                .field("deadline_us", &deadline);
        }
        debug.finish_non_exhaustive()
    }
}
