//! A stateful breaker's handles: the state it is in, as a number, and its changes of state,
//! one series for each change seen.

use std::fmt;
#[cfg(feature = "metrics")]
use std::sync::OnceLock;
use std::time::Duration;

use ironward::classic::{State, Transition};

use crate::SharedCircuitBreaker;

#[cfg(doc)]
use super::Decisions;
#[cfg(feature = "metrics")]
use super::{BREAKER_STATE, BREAKER_TRANSITIONS};

/// Every state, in the order of their numbers ([`States::number`]).
#[cfg(any(feature = "metrics", test))]
const ALL: [State; 6] = [
    State::Closed,
    State::Open,
    State::HalfOpen,
    State::Disabled,
    State::ForcedOpen,
    State::MetricsOnly,
];

/// The changes the record alone makes, registered (at zero) with the gauge so that a rate
/// over them sees their first count: closed to open, open to half-open, half-open to closed
/// and half-open to open. A change to or from a state put by hand registers when it counts.
#[cfg(feature = "metrics")]
const RECORDED: [(State, State); 4] = [
    (State::Closed, State::Open),
    (State::Open, State::HalfOpen),
    (State::HalfOpen, State::Closed),
    (State::HalfOpen, State::Open),
];

/// One stateful breaker's handles: `ironward.breaker.state`, a gauge labelled `name` whose
/// value is the [number](Self::number) of the state the breaker last entered, and
/// `ironward.breaker.transitions`, a counter labelled `name`, `from` and `to` (each a
/// [`State::as_str`]).
///
/// An edge reports a change here after the decision that made it (the core's
/// `take_transition`), and only for a family whose `STATEFUL` is `true`: an SRE breaker,
/// which has no states, registers neither series.
///
/// [`register`](Self::register) registers the gauge at the state the breaker is in then
/// (closed for a new breaker, or the state its policy puts it in by hand), and the four
/// changes the record makes, at zero; any other change's series is registered when it
/// first counts. A retune that puts the breaker in a state by hand (`Force`), or lifts one,
/// is a change like any other: the edge reports it once the retune returns.
///
/// # Examples
///
/// ```
/// use ironward::classic::{State, Transition};
/// use ironward_tokio::meter::States;
///
/// let states = States::new("payments");
/// states.register(|| State::Closed);
/// states.transition(Transition { from: State::Closed, to: State::Open }); // gauge 1
/// assert_eq!(States::number(State::HalfOpen), 2);
/// assert_eq!(states.name(), "payments");
/// ```
pub struct States {
    name: &'static str,
    #[cfg(feature = "metrics")]
    gauge: OnceLock<metrics::Gauge>,
    /// One counter per change, `from` by `to`, each registered on first use.
    #[cfg(feature = "metrics")]
    changes: [OnceLock<metrics::Counter>; ALL.len() * ALL.len()],
}

impl States {
    /// The handles of the breaker `name`. Nothing is registered yet.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            #[cfg(feature = "metrics")]
            gauge: OnceLock::new(),
            #[cfg(feature = "metrics")]
            changes: [const { OnceLock::new() }; ALL.len() * ALL.len()],
        }
    }

    /// The number the gauge gives `state`: resilience4j's `CircuitBreaker.State` order
    /// (`resilience4j-circuitbreaker`'s `CircuitBreaker.java`, the `order` of each
    /// constant), so that a dashboard made for resilience4j's state gauge reads these alike:
    /// closed 0, open 1, half-open 2, disabled 3, forced open 4, metrics only 5.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::classic::State;
    /// use ironward_tokio::meter::States;
    ///
    /// assert_eq!(States::number(State::Closed), 0);
    /// assert_eq!(States::number(State::ForcedOpen), 4);
    /// assert_eq!(States::number(State::MetricsOnly), 5);
    /// ```
    pub const fn number(state: State) -> u8 {
        match state {
            State::Closed => 0,
            State::Open => 1,
            State::HalfOpen => 2,
            State::Disabled => 3,
            State::ForcedOpen => 4,
            State::MetricsOnly => 5,
        }
    }

    /// The `name` label.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Registers the gauge, at the state `state` reads, and the four changes the record
    /// makes, now, if they are not yet; see [`Decisions::register`]. `state` is asked only
    /// when the gauge is made (an edge that registers at each decision pays one load), and a
    /// gauge already made keeps what it reads.
    pub fn register(&self, state: impl FnOnce() -> State) {
        #[cfg(feature = "metrics")]
        if self.gauge.get().is_none() {
            let gauge = self.gauge();
            gauge.set(f64::from(Self::number(state())));
            for (from, to) in RECORDED {
                self.change(from, to);
            }
        }
        #[cfg(not(feature = "metrics"))]
        let _ = state;
    }

    /// Takes the change of state `breaker`'s decisions since the last take made and
    /// reports it ([`transition`](Self::transition)), returning it for the edge's event:
    /// what an edge calls after each decision, at `now`. It registers the gauge first, at the
    /// state the breaker is in at `now`, if it is not yet ([`register`](Self::register): one
    /// load once registered), so that an edge without a moment when its name is final shows
    /// the gauge from its first decision. For a family without states (`STATEFUL` false, the
    /// SRE breaker), `None` without asking the breaker, decided when the edge is compiled, so
    /// that its decisions pay nothing for it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use std::time::Duration;
    /// use ironward::classic::{Record, State};
    /// use ironward::{CLASSIC, Classic, ClassicBreaker, SRE};
    /// use ironward_tokio::meter::States;
    /// use ironward_tokio::{SharedSreBreaker, SharedCircuitBreaker};
    ///
    /// let states = States::new("api");
    /// let policy = Classic { record: Record::Consecutive { failures: 1 }, ..CLASSIC };
    /// let classic = Mutex::new(ClassicBreaker::new(policy, Duration::ZERO));
    /// let permit = classic.check(Duration::ZERO, 0.5).unwrap();
    /// let _ = classic.fail(permit, Duration::ZERO);
    /// assert_eq!(states.watch(&classic, Duration::ZERO).map(|t| t.to), Some(State::Open));
    /// assert_eq!(states.watch(&classic, Duration::ZERO), None, "taken once");
    /// assert_eq!(states.watch(&SharedSreBreaker::new(SRE, Duration::ZERO), Duration::ZERO), None);
    /// ```
    #[inline]
    pub fn watch<B: SharedCircuitBreaker>(&self, breaker: &B, now: Duration) -> Option<Transition> {
        if !B::STATEFUL {
            return None;
        }
        self.register(|| breaker.state(now).unwrap_or(State::Closed));
        let transition = breaker.take_transition()?;
        self.transition(transition);
        Some(transition)
    }

    /// Reports one change of state: the gauge to the number of the state entered, and one
    /// more on the series of the change.
    pub fn transition(&self, transition: Transition) {
        #[cfg(feature = "metrics")]
        {
            self.gauge().set(f64::from(Self::number(transition.to)));
            self.change(transition.from, transition.to).increment(1);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = transition;
    }

    /// The gauge, registered on first use.
    #[cfg(feature = "metrics")]
    fn gauge(&self) -> &metrics::Gauge {
        self.gauge.get_or_init(|| Self::described(self.name))
    }

    /// The gauge of the breaker `name`, described and registered.
    #[cfg(feature = "metrics")]
    fn described(name: &'static str) -> metrics::Gauge {
        metrics::describe_gauge!(
            BREAKER_STATE,
            "State the breaker is in: closed 0, open 1, half-open 2, disabled 3, forced open 4, metrics only 5 (1)"
        );
        metrics::gauge!(BREAKER_STATE, "name" => name)
    }

    /// The counter of the change from `from` to `to`, registered on first use.
    #[cfg(feature = "metrics")]
    fn change(&self, from: State, to: State) -> &metrics::Counter {
        let index = usize::from(Self::number(from)) * ALL.len() + usize::from(Self::number(to));
        self.changes[index].get_or_init(|| {
            metrics::describe_counter!(
                BREAKER_TRANSITIONS,
                metrics::Unit::Count,
                "Changes of state a breaker made, by the state left and the state entered ({transition})"
            );
            metrics::counter!(
                BREAKER_TRANSITIONS,
                "name" => self.name,
                "from" => from.as_str(),
                "to" => to.as_str()
            )
        })
    }
}

impl fmt::Debug for States {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("States")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The numbers are resilience4j's `order`s, and every state has its own.
    #[test]
    fn each_state_has_its_own_number_in_order() {
        for (i, state) in ALL.into_iter().enumerate() {
            assert_eq!(usize::from(States::number(state)), i, "{state:?}");
        }
    }
}
