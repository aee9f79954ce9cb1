//! A circuit breaker several clients can share, with the clock and dice it reads.

use std::sync::Arc;
use std::time::Duration;

use ironward::classic::Transition;
use ironward_tokio::{BreakerPolicy, Clock, Dice, Knobs, SharedCircuitBreaker, SharedSreBreaker};

use crate::classify::Verdict;
use crate::meter::{BreakerMeter, DEFAULT_NAME, States};

/// A circuit breaker shared between threads, with the clock and dice it reads: the
/// client-side circuit breaker a [`RetryMiddleware`](crate::RetryMiddleware) consults before
/// every attempt.
///
/// The breaker runs Google SRE client-side throttling (go-zero's
/// `core/breaker/googlebreaker.go`): as failures fill its window it refuses a growing fraction
/// of calls, each refusal decided by a fresh roll of the dice, so a failing backend keeps
/// receiving what it can still serve instead of every retry the clients can make. The
/// middleware asks it before the first attempt and before each retry, and records each
/// attempt's outcome: a 5xx, a network failure or an attempt cut short by the middleware's
/// attempt timeout counts against the backend, any other response for it (a 404 is the
/// caller's fault; go-zero's HTTP breaker reads it the same way). An error that is not a
/// network failure, and an attempt cut short by the call's time budget, count neither way.
///
/// `B` is the breaker family, by default the SRE one ([`SharedSreBreaker`]), and whichever
/// shared form [`new`](Self::new)'s policy names ([`BreakerPolicy::Shared`]): the classic
/// breaker for a [`Classic`](ironward::Classic) policy, which refuses every attempt while
/// open, then lets a few probes through whose outcomes close or reopen it.
/// [`for_breaker`](Self::for_breaker) takes any other [`SharedCircuitBreaker`], such as a
/// core [`CircuitBreaker`](ironward::CircuitBreaker) behind a `Mutex`.
///
/// `Clone` shares the breaker: give one to every middleware, on every client, that talks to the
/// same backend, and they throttle together. The breaker is an
/// [`ironward_tokio::SharedSreBreaker`]: a healthy backend's attempts are let through and their
/// successes recorded without a lock, and the rest take one for the core's decision, never
/// across an await. It decides exactly as one `SreBreaker` would; its docs say what may differ
/// between attempts that overlap. The clock is read when an attempt is asked for and again
/// when it is settled, since an outcome belongs to the bucket it was seen in.
///
/// Each attempt it admits or refuses is counted (with the `metrics` feature) as
/// `ironward.requests` with `piece="breaker"`, its [name](Self::with_name), and `outcome`
/// `admitted` or `refused` (`reason="throttled"` for the SRE breaker; `open`, `half_open` or
/// `forced_open` for the classic one), and each refusal sets `ironward.breaker.ratio`,
/// exactly as `ironward-tower`'s breaker layer counts; each refusal is also a `tracing` event
/// at `DEBUG` with the numbers that decided it. A classic breaker's changes of state set
/// `ironward.breaker.state` and count in `ironward.breaker.transitions`, each with a
/// `tracing` event at `INFO` (see the guide's [metrics](crate::_guide::metrics)).
///
/// # Default
///
/// `ClientBreaker::new(sre)` reads [`Clock::monotonic`] (tokio's clock, so paused-time tests
/// drive it) and rolls [`Dice::random`]; [`with_clock`](Self::with_clock) and
/// [`with_dice`](Self::with_dice) replace them.
///
/// # Examples
///
/// ```
/// use ironward::SRE;
/// use ironward_reqwest::{Dice, RetryMiddleware, ClientBreaker};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let breaker = ClientBreaker::new(SRE).with_dice(Dice::seeded(7));
/// let middleware = RetryMiddleware::default().with_breaker(breaker.clone());
/// // Nothing has failed yet, so the breaker refuses nothing.
/// assert_eq!(breaker.ratio(), 0.0);
/// # let _ = middleware;
/// # }
/// ```
#[derive(Debug)]
pub struct ClientBreaker<B: SharedCircuitBreaker = SharedSreBreaker> {
    breaker: Arc<B>,
    /// The name the breaker reports under (its meter counts under it), and the clock and
    /// the dice it decides by; a client breaker has no shadow mode.
    knobs: Knobs,
    meter: Arc<BreakerMeter>,
}

impl<B: SharedCircuitBreaker> Clone for ClientBreaker<B> {
    /// A handle on the same breaker.
    fn clone(&self) -> Self {
        Self {
            breaker: Arc::clone(&self.breaker),
            knobs: self.knobs.clone(),
            meter: Arc::clone(&self.meter),
        }
    }
}

impl ClientBreaker {
    /// A breaker of the family `policy` names ([`BreakerPolicy`]: [`Sre`](ironward::Sre) for
    /// the SRE breaker, [`Classic`](ironward::Classic) for the classic one), its record
    /// opening now on tokio's monotonic clock, rolling real randomness. The policy value
    /// picks the family: `ClientBreaker::new(SRE)` and `ClientBreaker::new(CLASSIC)` differ in
    /// nothing else.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SRE;
    /// use ironward_reqwest::ClientBreaker;
    ///
    /// let breaker = ClientBreaker::new(SRE);
    /// assert_eq!(breaker.ratio(), 0.0);
    /// ```
    ///
    /// The classic breaker, opening after five failures in a row for 10 s, on a client:
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::classic::{OpenWait, Record};
    /// use ironward::http_retry::{Settings, Stop};
    /// use ironward::{CLASSIC, Classic};
    /// use ironward_reqwest::{ClientBreaker, RetryMiddleware};
    /// use reqwest_middleware::ClientBuilder;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let policy = Classic {
    ///     record: Record::Consecutive { failures: 5 },
    ///     open: OpenWait::Fixed(Duration::from_secs(10)),
    ///     ..CLASSIC
    /// };
    /// let breaker = ClientBreaker::new(policy).with_name("payments");
    /// let retry = RetryMiddleware::new(Settings { max_retries: 0, ..Settings::default() })
    ///     .with_breaker(breaker.clone());
    /// let client = ClientBuilder::new(reqwest::Client::new()).with(retry).build();
    ///
    /// // Nothing listens there: five refused connections open the breaker, and the sixth
    /// // attempt is refused without a connection.
    /// let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    /// for _ in 0..5 {
    ///     let err = client.get(format!("http://{free}/")).send().await.unwrap_err();
    ///     assert_ne!(ironward_reqwest::gave_up(&err).unwrap().stop(), Stop::Refused);
    /// }
    /// let err = client.get(format!("http://{free}/")).send().await.unwrap_err();
    /// assert_eq!(ironward_reqwest::gave_up(&err).unwrap().stop(), Stop::Refused);
    /// assert_eq!(breaker.ratio(), 1.0);
    /// # }
    /// ```
    pub fn new<P: BreakerPolicy>(policy: P) -> ClientBreaker<P::Shared> {
        Self::for_breaker(policy)
    }

    /// A breaker of the family `B` under `policy`, otherwise as [`new`](Self::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use ironward::{SreBreaker, SRE};
    /// use ironward_reqwest::ClientBreaker;
    ///
    /// let breaker = ClientBreaker::for_breaker::<Mutex<SreBreaker>>(SRE);
    /// assert_eq!(breaker.ratio(), 0.0);
    /// ```
    pub fn for_breaker<B: SharedCircuitBreaker>(policy: B::Policy) -> ClientBreaker<B> {
        let meter = Arc::new(BreakerMeter::new(DEFAULT_NAME, B::REFUSALS));
        ClientBreaker::with_sources(policy, Knobs::default(), meter)
    }
}

impl<B: SharedCircuitBreaker> ClientBreaker<B> {
    /// The same policy on `clock`, with a fresh breaker whose window opens at the clock's now.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::SRE;
    /// use ironward_reqwest::{Clock, ClientBreaker};
    ///
    /// let (clock, hand) = Clock::manual(Duration::from_secs(60));
    /// let breaker = ClientBreaker::new(SRE).with_clock(clock);
    /// hand.advance(Duration::from_secs(1));
    /// assert_eq!(breaker.ratio(), 0.0);
    /// ```
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        let policy = self.breaker.policy();
        let knobs = Knobs {
            clock,
            ..self.knobs
        };
        Self::with_sources(policy, knobs, self.meter)
    }

    /// The same breaker rolling `dice` (for example [`Dice::seeded`] in a test): one roll a
    /// call where the family reads it
    /// ([`SharedCircuitBreaker::DRAWS`](ironward_tokio::SharedCircuitBreaker::DRAWS)), none
    /// for the classic breaker.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SRE;
    /// use ironward_reqwest::{Dice, ClientBreaker};
    ///
    /// let breaker = ClientBreaker::new(SRE).with_dice(Dice::seeded(7));
    /// assert!(format!("{breaker:?}").contains("Dice::seeded"));
    /// ```
    #[must_use]
    pub fn with_dice(mut self, dice: Dice) -> Self {
        self.knobs.dice = dice;
        self
    }

    /// The same breaker reporting under `name` (by default `"default"`): the `name` label of
    /// its metrics and the `name` field of its refusal events, so that the breakers of two
    /// backends in one process are told apart. The handles are registered under it when the
    /// breaker decides its first call, so the default name never shows.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SRE;
    /// use ironward_reqwest::ClientBreaker;
    ///
    /// let breaker = ClientBreaker::new(SRE).with_name("payments");
    /// assert_eq!(breaker.name(), "payments");
    /// assert_eq!(ClientBreaker::new(SRE).name(), "default");
    /// ```
    #[must_use]
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.knobs.name = name;
        self.meter = Arc::new(BreakerMeter::new(name, B::REFUSALS));
        self
    }

    /// The name the breaker reports under.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SRE;
    /// use ironward_reqwest::ClientBreaker;
    ///
    /// assert_eq!(ClientBreaker::new(SRE).name(), "default");
    /// ```
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.knobs.name
    }

    /// The fraction of calls the breaker would refuse now
    /// ([`SreBreaker::ratio`](ironward::SreBreaker::ratio)), for a dashboard or an alert.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SRE;
    /// use ironward_reqwest::ClientBreaker;
    ///
    /// // A healthy (here: untried) backend is refused nothing.
    /// assert_eq!(ClientBreaker::new(SRE).ratio(), 0.0);
    /// ```
    #[must_use]
    pub fn ratio(&self) -> f64 {
        self.breaker.ratio(self.knobs.clock.now())
    }

    /// Asks to send one attempt now, and reports the answer: the count, and for a refusal
    /// the drop fraction and a debug event with the numbers that decided it (a refusal is an
    /// answer, not an error).
    pub(crate) fn allow(&self) -> Option<B::Permit> {
        let roll = B::draw(&self.knobs.dice);
        let now = self.knobs.clock.now();
        let checked = self.breaker.check(now, roll);
        self.watch(now);
        match checked {
            Ok(permit) => {
                self.meter.admitted();
                Some(permit)
            }
            Err(reason) => {
                let kind = B::refusal(&reason);
                self.meter.refused(kind, B::ratio_of(&reason));
                tracing::debug!(
                    name = self.meter.name(),
                    outcome = "refused",
                    reason = B::REFUSALS[kind],
                    numbers = ?reason,
                    "breaker refused a call"
                );
                None
            }
        }
    }

    /// Records the attempt behind `permit` as `verdict` says, now; `Verdict::Neither` drops
    /// the permit unsettled.
    pub(crate) fn settle(&self, permit: B::Permit, verdict: Verdict) {
        let now = self.knobs.clock.now();
        // The breaker made the permit, so nothing comes back.
        let _ = match verdict {
            Verdict::Pass => self.breaker.pass(permit, now),
            Verdict::Fail => self.breaker.fail(permit, now),
            Verdict::Neither => None,
        };
        self.watch(now);
    }

    /// Reports the change of state the last decisions made, if any (`States::watch`: for a
    /// family without states, the SRE breaker, nothing, decided when the breaker is
    /// compiled, so its attempts never ask).
    #[inline]
    fn watch(&self, now: Duration) {
        if let Some(transition) = self.meter.watch(&*self.breaker, now) {
            self.transitioned(transition);
        }
    }

    /// The event of one change of state, at `INFO`: an operator acts on a breaker that opens
    /// or closes.
    #[cold]
    fn transitioned(&self, transition: Transition) {
        let Transition { from, to } = transition;
        tracing::info!(
            name = self.meter.name(),
            from = from.as_str(),
            to = to.as_str(),
            from_number = States::number(from),
            to_number = States::number(to),
            "breaker changed state"
        );
    }

    fn with_sources(policy: B::Policy, knobs: Knobs, meter: Arc<BreakerMeter>) -> Self {
        Self {
            breaker: Arc::new(B::new(policy, knobs.clock.now())),
            knobs,
            meter,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ironward::SRE;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn clones_share_one_breaker() {
        let breaker = ClientBreaker::new(SRE).with_dice(Dice::seeded(3));
        let other = breaker.clone();
        for _ in 0..100 {
            if let Some(permit) = other.allow() {
                other.settle(permit, Verdict::Fail);
            }
            tokio::time::advance(Duration::from_millis(10)).await;
        }
        assert!(breaker.ratio() > 0.5, "ratio {}", breaker.ratio());
        // A new clock is a new breaker.
        let fresh = breaker.with_clock(Clock::monotonic());
        assert_eq!(fresh.ratio(), 0.0);
    }

    // Attempts settled on many threads at once land on one record, as the same attempts
    // settled one after another on the core's `SreBreaker` would: no failure is lost.
    #[test]
    fn failures_from_many_threads_count_as_one_breaker() {
        let (clock, _hand) = Clock::manual(Duration::from_secs(5));
        let breaker = ClientBreaker::new(SRE)
            .with_clock(clock)
            .with_dice(Dice::from_fn(|| 0.99));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..100 {
                        let permit = breaker.allow().expect("a draw over the ratio");
                        breaker.settle(permit, Verdict::Fail);
                    }
                });
            }
        });
        let mut core = ironward::SreBreaker::new(SRE, Duration::from_secs(5));
        for _ in 0..400 {
            let permit = core
                .allow(Duration::from_secs(5), 0.99)
                .expect("over the ratio");
            core.fail(permit, Duration::from_secs(5));
        }
        assert_eq!(breaker.ratio(), core.ratio(Duration::from_secs(5)));
        assert!(breaker.ratio() > 0.9);
    }

    #[tokio::test(start_paused = true)]
    async fn successes_keep_it_closed() {
        let breaker = ClientBreaker::new(SRE);
        for _ in 0..100 {
            let permit = breaker.allow().expect("a healthy breaker refuses nothing");
            breaker.settle(permit, Verdict::Pass);
        }
        assert_eq!(breaker.ratio(), 0.0);
    }
}
