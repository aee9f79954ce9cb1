//! A concurrency gate: a count with a ceiling.

mod reason;
#[cfg(target_has_atomic = "64")]
mod shared;

pub use reason::GateReason;
#[cfg(target_has_atomic = "64")]
pub use shared::SharedGate;

/// A count with a ceiling: at most `limit` callers inside at once.
///
/// Unlike a rate, this has nothing to do with time: it is how many things are happening at
/// once, the concurrency limit a server puts on itself (tower's `ConcurrencyLimit`, go-zero's
/// `core/syncx/limit.go`). A server past its limit answers at once rather than queueing,
/// which keeps a queue from becoming the outage. [`enter`](Gate::enter) takes room when
/// `held < limit`; [`leave`](Gate::leave) gives it back.
///
/// The gate holds no token: pairing each `enter` that returned `true` with one `leave` is
/// the caller's part, typically with a guard that leaves when it is dropped. A `leave`
/// without an `enter` never takes the count below zero; a limit of 0 admits nothing.
///
/// `Clone` makes an independent copy of the count: the two gates then admit separately, so
/// cloning a gate doubles the room. Share one gate to share one limit: across threads,
/// [`SharedGate`] is the same gate shared by `&` without a lock.
///
/// # Examples
///
/// ```
/// use ironward::Gate;
///
/// let mut gate = Gate::new(2);
/// assert!(gate.enter());
/// assert!(gate.enter());
/// assert!(!gate.enter());
/// assert_eq!(gate.held(), 2);
///
/// gate.leave();
/// assert!(gate.enter());
/// ```
#[derive(Debug, Clone)]
pub struct Gate {
    limit: u32,
    held: u32,
}

impl Gate {
    /// A gate that nothing has entered, with room for `limit`.
    pub fn new(limit: u32) -> Self {
        Self { limit, held: 0 }
    }

    /// Whether there is room, taking it if there is.
    ///
    /// This is [`check`](Gate::check) without the reason for a refusal.
    #[must_use = "an unchecked enter either takes room nothing will give back or ignores a full gate"]
    pub fn enter(&mut self) -> bool {
        self.check().is_ok()
    }

    /// [`enter`](Gate::enter) with the numbers behind a refusal: `enter` is this with the
    /// reason discarded, so the two always decide alike.
    ///
    /// `Err` is a refusal, an answer rather than a failure: it carries how many are inside
    /// and the limit they reach, or pass after [`retune`](Gate::retune) lowered it (see
    /// [`GateReason`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::Gate;
    ///
    /// let mut gate = Gate::new(1);
    /// assert!(gate.check().is_ok());
    /// let reason = gate.check().expect_err("one inside");
    /// assert_eq!((reason.held, reason.limit), (1, 1));
    /// ```
    #[inline]
    #[must_use = "an unchecked enter either takes room nothing will give back or ignores a full gate"]
    pub fn check(&mut self) -> Result<(), GateReason> {
        if self.held < self.limit {
            self.held += 1;
            Ok(())
        } else {
            Err(GateReason {
                held: self.held,
                limit: self.limit,
            })
        }
    }

    /// Gives room back; a `leave` with nobody inside does nothing.
    pub fn leave(&mut self) {
        self.held = self.held.saturating_sub(1);
    }

    /// Changes the limit in place, keeping everyone inside.
    ///
    /// Nobody is turned out: a limit lowered below [`held`](Gate::held) admits nobody until
    /// enough have left to bring the count under it, and a raised one has room at once. The
    /// limit is read as [`new`](Gate::new) reads it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::Gate;
    ///
    /// let mut gate = Gate::new(3);
    /// assert!((0..3).all(|_| gate.enter()));
    /// gate.retune(1);
    /// assert_eq!(gate.held(), 3);
    /// // Two must leave before the third can make room for anyone.
    /// gate.leave();
    /// gate.leave();
    /// assert!(!gate.enter());
    /// gate.leave();
    /// assert!(gate.enter());
    /// gate.retune(4);
    /// assert!((0..3).all(|_| gate.enter()));
    /// assert!(!gate.enter());
    /// ```
    pub fn retune(&mut self, limit: u32) {
        self.limit = limit;
    }

    /// How many are inside: at most the limit, unless [`retune`](Gate::retune) lowered it
    /// below the count.
    #[must_use]
    pub fn held(&self) -> u32 {
        self.held
    }

    /// The most the gate lets in at once.
    #[must_use]
    pub fn limit(&self) -> u32 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_limit_then_refuses() {
        let mut gate = Gate::new(3);
        assert!(gate.enter());
        assert!(gate.enter());
        assert!(gate.enter());
        assert!(!gate.enter());
        assert_eq!(gate.held(), 3);
    }

    #[test]
    fn leaving_gives_the_room_back() {
        let mut gate = Gate::new(1);
        assert!(gate.enter());
        gate.leave();
        assert_eq!(gate.held(), 0);
        assert!(gate.enter());
    }

    #[test]
    fn leaving_never_goes_below_zero() {
        let mut gate = Gate::new(1);
        gate.leave();
        gate.leave();
        assert_eq!(gate.held(), 0);
        assert!(gate.enter());
        assert!(!gate.enter());
    }

    #[test]
    fn a_limit_of_zero_admits_nothing() {
        let mut gate = Gate::new(0);
        assert!(!gate.enter());
        assert_eq!(gate.held(), 0);
    }

    #[test]
    fn a_limit_of_u32_max_never_overflows() {
        let mut gate = Gate::new(u32::MAX);
        gate.held = u32::MAX - 1;
        assert!(gate.enter());
        assert!(!gate.enter());
        assert_eq!(gate.held(), u32::MAX);
        assert_eq!(gate.limit(), u32::MAX);
    }

    #[test]
    fn a_lower_limit_turns_nobody_out_and_admits_nobody_until_enough_leave() {
        let mut gate = Gate::new(4);
        assert!((0..4).all(|_| gate.enter()));
        gate.retune(2);
        assert_eq!((gate.held(), gate.limit()), (4, 2));
        assert!(!gate.enter());
        gate.leave();
        gate.leave();
        assert!(!gate.enter(), "two inside is the limit, not under it");
        gate.leave();
        assert!(gate.enter());
        assert!(!gate.enter());
        gate.retune(0);
        assert!(!gate.enter());
        assert_eq!(gate.held(), 2);
    }

    #[test]
    fn a_higher_limit_has_room_at_once() {
        let mut gate = Gate::new(1);
        assert!(gate.enter());
        gate.retune(3);
        assert!(gate.enter());
        assert!(gate.enter());
        assert!(!gate.enter());
        assert_eq!(gate.held(), 3);
    }

    #[test]
    fn a_refusal_gives_the_count_and_the_limit_it_reaches() {
        let mut gate = Gate::new(2);
        assert!(gate.check().is_ok() && gate.check().is_ok());
        assert_eq!(gate.check(), Err(GateReason { held: 2, limit: 2 }));
        gate.retune(1);
        assert_eq!(gate.check(), Err(GateReason { held: 2, limit: 1 }));
        assert_eq!(Gate::new(0).check(), Err(GateReason { held: 0, limit: 0 }));
    }

    #[test]
    fn enter_is_check_with_the_reason_discarded() {
        let mut gate = Gate::new(3);
        let mut twin = gate.clone();
        for i in 0..100_u32 {
            if i % 3 == 0 {
                gate.leave();
                twin.leave();
            }
            assert_eq!(gate.enter(), twin.check().is_ok(), "step {i}");
            assert_eq!(gate.held(), twin.held());
        }
    }

    #[test]
    fn a_clone_counts_independently() {
        let mut gate = Gate::new(1);
        let mut twin = gate.clone();
        assert!(gate.enter());
        assert!(twin.enter());
        assert!(!gate.enter());
    }
}
