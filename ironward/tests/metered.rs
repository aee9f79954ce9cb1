//! Metered quotas: a cost per request and reservations settled at the actual cost, on
//! `Bucket`, `Sliding` and `Period`, through the public API.
//!
//! The properties check, over random sequences of takes, reservations and settles at random
//! times and costs: that a cost of 1 decides exactly as the methods without a cost do, and
//! the bound each type's docs state for reservations, that the cost charged over any window
//! (any stretch, for a bucket; any period) is at most the quota plus the debts settled in it
//! after its last admission, which with one reservation in flight at a time is at most the
//! quota plus the largest single overshoot (actual minus estimate).

use std::time::Duration;

use ironward::{Bucket, Period, Quota, Reservation, Sliding};
use proptest::prelude::*;

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

// ---------------------------------------------------------------------------------------
// Costs: the answers at the edges.

#[test]
fn a_bucket_charges_fractional_costs_to_the_float() {
    let mut bucket = Bucket::new(0.0, 1.0, secs(0));
    for _ in 0..4 {
        assert!(bucket.take(secs(0), 0.25));
    }
    assert_eq!(bucket.tokens(secs(0)), 0.0);
    assert!(!bucket.take(secs(0), f64::MIN_POSITIVE));
}

#[test]
fn a_bucket_never_admits_a_cost_above_its_burst() {
    let mut bucket = Bucket::new(1e9, 100.0, secs(0));
    assert!(!bucket.take(secs(1_000), 100.000_001));
    assert_eq!(bucket.next(secs(1_000), 100.000_001), Duration::MAX);
    assert!(!bucket.take(secs(1_000), f64::MAX));
    assert_eq!(bucket.next(secs(0), f64::MAX), Duration::MAX);
    // Refusals took nothing.
    assert!(bucket.take(secs(1_000), 100.0));
}

#[test]
fn an_infinite_burst_admits_a_huge_finite_cost_and_refuses_infinity() {
    let mut bucket = Bucket::new(1.0, f64::INFINITY, secs(0));
    assert!(bucket.take(secs(0), f64::MAX));
    assert!(!bucket.take(secs(0), f64::INFINITY));
    assert!(!bucket.take(secs(0), f64::NAN));
    assert_eq!(bucket.tokens(secs(0)), f64::INFINITY);
}

#[test]
fn a_bucket_settle_ignores_an_actual_that_is_no_cost() {
    for actual in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
        let mut bucket = Bucket::new(1.0, 10.0, secs(0));
        let reservation = bucket.reserve(secs(0), 4.0, secs(60)).unwrap();
        bucket.settle(reservation, actual, secs(0));
        assert_eq!(bucket.tokens(secs(0)), 6.0, "actual {actual}");
    }
}

#[test]
fn a_bucket_refund_is_capped_at_the_burst() {
    let mut bucket = Bucket::new(1.0, 10.0, secs(0));
    let reservation = bucket.reserve(secs(0), 8.0, secs(600)).unwrap();
    // Refilled to the burst by 8 s: the refund has nowhere to go.
    bucket.settle(reservation, 0.0, secs(100));
    assert_eq!(bucket.tokens(secs(100)), 10.0);
    let reservation = bucket.reserve(secs(100), 8.0, secs(600)).unwrap();
    bucket.settle(reservation, 2.0, secs(101));
    // 2 held, 1 refilled, 6 refunded.
    assert_eq!(bucket.tokens(secs(101)), 9.0);
}

#[test]
fn a_bucket_debt_past_f64_max_stays_finite() {
    let mut bucket = Bucket::new(1.0, f64::MAX, secs(0));
    let reservation = bucket.reserve(secs(0), 0.0, secs(1)).unwrap();
    bucket.settle(reservation, f64::MAX, secs(0));
    let reservation = bucket.reserve(secs(0), 0.0, secs(1));
    // Spent exactly: a cost of 0 still passes.
    assert_eq!(bucket.tokens(secs(0)), 0.0);
    let reservation = reservation.unwrap();
    bucket.settle(reservation, f64::MAX, secs(0));
    assert_eq!(bucket.tokens(secs(0)), -f64::MAX);
    assert!(
        bucket.reserve(secs(0), 0.0, secs(1)).is_err(),
        "a debt is outstanding"
    );
    let mut bucket = Bucket::with_tokens(1.0, 10.0, -f64::MAX, secs(0));
    assert_eq!(bucket.tokens(Duration::MAX), -f64::MAX);
    assert_eq!(bucket.next(secs(0), 1.0), Duration::MAX);
    assert!(!bucket.take(Duration::MAX, 0.0));
    assert_eq!(bucket.idle(), Duration::MAX);
}

#[test]
fn a_sliding_cost_of_zero_takes_no_room_and_passes_under_a_quota_of_zero() {
    let mut limit = Sliding::new(0, secs(1));
    assert!(limit.take_n(secs(0), 0));
    assert!(!limit.take_n(secs(0), 1));
    assert_eq!(limit.next_n(secs(0), 0), Duration::ZERO);
    let mut limit = Sliding::new(3, secs(1));
    assert!(limit.take_n(secs(0), 3));
    assert!(limit.take_n(secs(0), 0));
    assert_eq!(limit.left(secs(0)), 0);
}

#[test]
fn a_sliding_cost_above_the_quota_never_passes() {
    let mut limit = Sliding::new(10, secs(1));
    assert!(!limit.take_n(secs(0), 11));
    assert_eq!(limit.next_n(secs(0), 11), Duration::MAX);
    assert_eq!(
        limit.check_n(secs(5), u32::MAX).unwrap_err().next,
        Duration::MAX
    );
    assert_eq!(limit.left(secs(5)), 10);
    let mut huge = Sliding::new(u32::MAX, secs(1));
    assert!(huge.take_n(secs(0), u32::MAX));
    assert!(!huge.take_n(secs(0), 1));
    assert_eq!(huge.left(secs(0)), 0);
    assert_eq!(huge.next_n(secs(0), u32::MAX), secs(1));
    assert!(huge.take_n(secs(1), u32::MAX));
}

#[test]
fn sliding_costs_leave_the_window_oldest_first() {
    let mut limit = Sliding::new(10, secs(10));
    assert!(limit.take_n(secs(0), 4));
    assert!(limit.take_n(secs(2), 3));
    assert!(limit.take_n(secs(4), 3));
    assert_eq!(limit.next_n(secs(5), 1), secs(5));
    assert_eq!(limit.next_n(secs(5), 5), secs(7));
    assert_eq!(limit.next_n(secs(5), 8), secs(9));
    assert!(!limit.take_n(secs(12) - ns(1), 5));
    assert!(limit.take_n(secs(12), 5));
    let reason = limit.check_n(secs(12), 3).unwrap_err();
    assert_eq!((reason.count, reason.quota, reason.next), (8, 10, secs(2)));
}

#[test]
fn a_sliding_clock_going_backwards_is_read_as_the_latest_seen() {
    let mut limit = Sliding::new(10, secs(10));
    assert!(limit.take_n(secs(100), 10));
    assert!(!limit.take_n(secs(0), 1));
    assert_eq!(limit.next_n(secs(0), 5), secs(10));
    let reservation = limit.reserve(secs(110), 6, secs(5)).unwrap();
    // A settle at a reading before the reservation is read as 110 s: in time, refunded.
    limit.settle(reservation, 1, secs(3));
    assert_eq!(limit.left(secs(110)), 9);
}

#[test]
fn a_period_cost_that_does_not_fit_spends_nothing_of_what_is_left() {
    let mut limit = Period::new(10, secs(60));
    assert_eq!(limit.take_n(secs(0), 7), Quota::Under);
    assert_eq!(limit.take_n(secs(1), 4), Quota::Over);
    assert_eq!(limit.left(secs(1)), 3);
    assert_eq!(limit.take_n(secs(2), 3), Quota::Hit);
    // Used up: a refusal counts as one event, as go-zero counts every call over the quota.
    assert_eq!(limit.check_n(secs(3), 5).unwrap_err().count, 11);
    assert_eq!(limit.check_n(secs(3), 0).unwrap_err().count, 12);
    assert_eq!(limit.take_n(secs(60), 10), Quota::Hit);
}

#[test]
fn a_period_cost_of_zero_or_above_the_quota() {
    let mut limit = Period::new(0, secs(1));
    assert_eq!(limit.take_n(secs(0), 0), Quota::Hit);
    assert_eq!(limit.take_n(secs(0), 1), Quota::Over);
    assert_eq!(limit.next_n(secs(0), 1), Duration::MAX);
    let mut limit = Period::new(u32::MAX, secs(1));
    assert_eq!(limit.take_n(secs(0), u32::MAX), Quota::Hit);
    assert_eq!(limit.take_n(secs(0), u32::MAX), Quota::Over);
    assert_eq!(limit.next_n(secs(0), u32::MAX), secs(1));
    assert_eq!(limit.left(secs(0)), 0);
    // No period open: the next event opens one.
    assert_eq!(limit.next_n(secs(5), u32::MAX), Duration::ZERO);
}

#[test]
fn a_period_holds_many_debts_of_u32_max() {
    let mut limit = Period::new(u32::MAX, Duration::MAX);
    let reservations: Vec<_> = (0..4)
        .map(|_| limit.reserve(secs(0), 0, Duration::MAX).unwrap())
        .collect();
    for reservation in reservations {
        limit.settle(reservation, u32::MAX, Duration::MAX);
    }
    assert_eq!(limit.take_n(Duration::MAX, 0), Quota::Over);
    assert_eq!(limit.check_n(Duration::MAX, 1).unwrap_err().count, u32::MAX);
    assert_eq!(limit.left(Duration::MAX), 0);
}

// ---------------------------------------------------------------------------------------
// Reservations: deadlines, refunds after the window, debts.

#[test]
fn a_settle_after_the_deadline_changes_nothing() {
    let mut bucket = Bucket::new(1.0, 10.0, secs(0));
    let reservation = bucket.reserve(secs(0), 5.0, secs(10)).unwrap();
    assert_eq!(reservation.deadline(), secs(10));
    bucket.settle(reservation, 50.0, secs(10) + ns(1));
    assert_eq!(bucket.tokens(secs(0)), 5.0);
    let mut limit = Sliding::new(10, secs(60));
    let reservation = limit.reserve(secs(0), 5, secs(10)).unwrap();
    limit.settle(reservation, 0, secs(11));
    assert_eq!(limit.left(secs(11)), 5);
    let mut period = Period::new(10, secs(60));
    let reservation = period.reserve(secs(0), 5, secs(10)).unwrap();
    period.settle(reservation, 9, secs(11));
    assert_eq!(period.left(secs(11)), 5);
}

#[test]
fn a_settle_on_the_deadline_still_counts() {
    let mut limit = Sliding::new(10, secs(60));
    let reservation = limit.reserve(secs(0), 5, secs(10)).unwrap();
    limit.settle(reservation, 0, secs(10));
    assert_eq!(limit.left(secs(10)), 10);
}

#[test]
fn a_deadline_saturates_at_the_end_of_the_clock() {
    let mut limit = Period::new(10, secs(60));
    let reservation = limit.reserve(secs(5), 5, Duration::MAX).unwrap();
    assert_eq!(reservation.deadline(), ns(u64::MAX));
    limit.settle(reservation, 0, secs(6));
    assert_eq!(limit.left(secs(6)), 10);
}

#[test]
fn a_dropped_reservation_keeps_its_estimate() {
    let mut limit = Sliding::new(10, secs(60));
    drop(limit.reserve(secs(0), 7, secs(1)).unwrap());
    assert_eq!(limit.left(secs(59)), 3);
    assert_eq!(limit.left(secs(60)), 10);
}

#[test]
fn a_sliding_refund_after_the_window_has_passed_changes_nothing() {
    let mut limit = Sliding::new(10, secs(60));
    let reservation = limit.reserve(secs(0), 8, secs(600)).unwrap();
    assert!(limit.take_n(secs(60), 10));
    limit.settle(reservation, 0, secs(61));
    assert_eq!(limit.left(secs(61)), 0);
}

#[test]
fn a_sliding_refund_gives_room_back_only_for_as_long_as_the_estimate_held_it() {
    let mut limit = Sliding::new(10, secs(60));
    let reservation = limit.reserve(secs(0), 8, secs(600)).unwrap();
    assert!(limit.take_n(secs(30), 2));
    limit.settle(reservation, 3, secs(40));
    assert_eq!(limit.left(secs(40)), 5);
    // The 3 kept leave with the estimate's stamp, at 60 s.
    assert_eq!(limit.left(secs(60)), 8);
}

#[test]
fn a_sliding_debt_holds_the_window_past_the_quota_for_a_window() {
    let mut limit = Sliding::new(10, secs(60));
    let reservation = limit.reserve(secs(0), 2, secs(600)).unwrap();
    limit.settle(reservation, 25, secs(10));
    assert_eq!(limit.left(secs(10)), 0);
    assert!(!limit.take_n(secs(10), 0));
    let reason = limit.check_n(secs(10), 1).unwrap_err();
    assert_eq!((reason.count, reason.next), (25, secs(60)));
    assert!(limit.take_n(secs(70), 10));
}

#[test]
fn a_retune_forgets_the_refunds_of_earlier_reservations_but_charges_their_debts() {
    let mut limit = Sliding::new(10, secs(60));
    let refunded = limit.reserve(secs(0), 5, secs(600)).unwrap();
    let owing = limit.reserve(secs(0), 1, secs(600)).unwrap();
    limit.retune(20, secs(60), secs(1));
    limit.settle(refunded, 0, secs(2));
    assert_eq!(limit.left(secs(2)), 14);
    limit.settle(owing, 3, secs(2));
    assert_eq!(limit.left(secs(2)), 12);
}

#[test]
fn a_period_refund_after_its_period_has_closed_changes_nothing() {
    let mut limit = Period::new(10, secs(60));
    let reservation = limit.reserve(secs(0), 8, secs(600)).unwrap();
    assert_eq!(limit.take_n(secs(60), 4), Quota::Under);
    limit.settle(reservation, 0, secs(61));
    assert_eq!(limit.left(secs(61)), 6);
}

#[test]
fn a_period_debt_lands_in_the_period_open_when_it_is_settled() {
    let mut limit = Period::new(10, secs(60));
    let reservation = limit.reserve(secs(0), 4, secs(600)).unwrap();
    // The period of the estimate has closed: the debt opens the next.
    limit.settle(reservation, 9, secs(100));
    assert_eq!(limit.left(secs(100)), 5);
    assert_eq!(limit.next(secs(100)), secs(60));
}

#[test]
fn an_aligned_period_keeps_refunds_within_its_period() {
    let mut limit = Period::aligned(10, secs(60));
    let reservation = limit.reserve(secs(59), 6, secs(600)).unwrap();
    limit.settle(reservation, 1, secs(59));
    assert_eq!(limit.left(secs(59)), 9);
    let reservation = limit.reserve(secs(59), 6, secs(600)).unwrap();
    limit.settle(reservation, 1, secs(60));
    assert_eq!(limit.left(secs(60)), 10);
}

#[test]
fn a_bucket_debt_delays_the_next_admission_until_the_refill_pays_it() {
    let mut bucket = Bucket::new(10.0, 10.0, secs(0));
    let reservation = bucket.reserve(secs(0), 10.0, secs(60)).unwrap();
    bucket.settle(reservation, 30.0, secs(0));
    assert_eq!(bucket.tokens(secs(0)), -20.0);
    assert_eq!(bucket.next(secs(0), 0.0), secs(2));
    assert_eq!(bucket.next(secs(0), 10.0), secs(3));
    assert!(!bucket.take(secs(3) - ns(1), 10.0));
    assert!(bucket.take(secs(3), 10.0));
    // A refusal in debt reports the debt, and when it is paid.
    let reservation = bucket.reserve(secs(3), 0.0, secs(60)).unwrap();
    bucket.settle(reservation, 5.0, secs(3));
    let reason = bucket.check(secs(3), 1.0).unwrap_err();
    assert_eq!(reason.tokens, -5.0);
    assert_eq!(reason.next(), ms(600));
    // Idle counts from the debt.
    assert_eq!(bucket.idle(), ms(1_500));
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

// ---------------------------------------------------------------------------------------
// Properties.

/// One step of a random sequence.
#[derive(Debug, Clone)]
enum Op {
    /// A take of this cost.
    Take(u32),
    /// A reservation of this estimate, timing out after this many nanoseconds.
    Reserve(u32, u64),
    /// The settle of the reservation in flight at this index (modulo), at this actual cost.
    Settle(usize, u32),
}

/// Costs around a quota of up to 20, with the hostile ones mixed in.
fn cost() -> impl Strategy<Value = u32> {
    prop_oneof![8 => 0..25_u32, 1 => Just(0), 1 => Just(u32::MAX)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => cost().prop_map(Op::Take),
        3 => (cost(), prop_oneof![0..3_000_u64, Just(u64::MAX)]).prop_map(|(e, t)| Op::Reserve(e, t)),
        3 => (any::<usize>(), cost()).prop_map(|(i, a)| Op::Settle(i, a)),
    ]
}

/// A clock reading: forward by up to 1 000 ns, sometimes back.
fn step() -> impl Strategy<Value = (bool, u64)> {
    (prop::bool::weighted(0.15), 0..1_000_u64)
}

/// What a charge was: an admission (a take or a reservation's estimate), a debt, or a
/// bucket's refund (negative, when it is settled).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Admission,
    Debt,
    Refund,
}

/// One charge against a limit: when (its stamp), in what order, how much (for a log or a
/// period, refunds taken off), and what it was; `group` is a period's number.
#[derive(Debug, Clone, Copy)]
struct Charge {
    stamp: u64,
    seq: usize,
    amount: f64,
    kind: Kind,
    group: u64,
}

/// A reservation in flight, as the model sees it: the limiter's token, its charge's index,
/// its estimate, stamp, deadline and group.
struct Flight {
    token: Reservation,
    charge: usize,
    estimate: u32,
    stamp: u64,
    deadline: u64,
    group: u64,
}

/// The bound of the docs, checked over the window `inside` selects: the charges in it are at
/// most `allowance` plus the debts in it after its last admission.
fn check_bound(
    charges: &[Charge],
    inside: impl Fn(&Charge) -> bool,
    allowance: f64,
) -> Result<(), TestCaseError> {
    let window: Vec<&Charge> = charges.iter().filter(|c| inside(c)).collect();
    let last = window
        .iter()
        .filter(|c| c.kind == Kind::Admission)
        .map(|c| c.seq)
        .max();
    let total: f64 = window.iter().map(|c| c.amount).sum();
    let late: f64 = window
        .iter()
        .filter(|c| c.kind == Kind::Debt && last.is_none_or(|last| c.seq > last))
        .map(|c| c.amount)
        .sum();
    let slack = 1e-9 * (1.0 + allowance.abs() + late);
    prop_assert!(
        total <= allowance + late + slack,
        "{} charged against {} + {} of late debts",
        total,
        allowance,
        late
    );
    Ok(())
}

/// The largest single overshoot (actual minus estimate) charged.
fn largest_overshoot(charges: &[Charge]) -> f64 {
    charges
        .iter()
        .filter(|c| c.kind == Kind::Debt)
        .map(|c| c.amount)
        .fold(0.0, f64::max)
}

/// The three limiters behind one interface for the reservation properties.
trait Metered {
    fn take_cost(&mut self, now: Duration, cost: u32) -> bool;
    fn reserve_cost(&mut self, now: Duration, e: u32, timeout: Duration) -> Option<Reservation>;
    fn settle_cost(&mut self, reservation: Reservation, actual: u32, now: Duration);
    /// The group (period) the latest charge landed in.
    fn group(&self) -> u64;
    /// How much of `amount` the type's rule refunds at `t` for a reservation stamped
    /// `stamp` in `group`, asked before the settle.
    fn refund(&self, stamp: u64, group: u64, t: u64, amount: f64) -> f64;
    /// Whether a refund lowers the estimate's own charge (a log, a period) rather than
    /// being a charge of its own when settled (a bucket).
    fn in_place(&self) -> bool;
}

impl Metered for Sliding {
    fn take_cost(&mut self, now: Duration, cost: u32) -> bool {
        self.take_n(now, cost)
    }
    fn reserve_cost(&mut self, now: Duration, e: u32, timeout: Duration) -> Option<Reservation> {
        self.reserve(now, e, timeout).ok()
    }
    fn settle_cost(&mut self, reservation: Reservation, actual: u32, now: Duration) {
        self.settle(reservation, actual, now);
    }
    fn group(&self) -> u64 {
        0
    }
    fn refund(&self, stamp: u64, _: u64, t: u64, amount: f64) -> f64 {
        // Only while the estimate is still inside the window.
        if (t - stamp) < self.window().as_nanos() as u64 {
            amount
        } else {
            0.0
        }
    }
    fn in_place(&self) -> bool {
        true
    }
}

impl Metered for Bucket {
    fn take_cost(&mut self, now: Duration, cost: u32) -> bool {
        self.take(now, f64::from(cost))
    }
    fn reserve_cost(&mut self, now: Duration, e: u32, timeout: Duration) -> Option<Reservation> {
        self.reserve(now, f64::from(e), timeout).ok()
    }
    fn settle_cost(&mut self, reservation: Reservation, actual: u32, now: Duration) {
        self.settle(reservation, f64::from(actual), now);
    }
    fn group(&self) -> u64 {
        0
    }
    fn refund(&self, _: u64, _: u64, t: u64, amount: f64) -> f64 {
        // Capped at the burst.
        amount.min(self.burst() - self.tokens(ns(t)))
    }
    fn in_place(&self) -> bool {
        false
    }
}

/// A period numbered for the model: it tracks when periods open, as `Period::new` opens them
/// (at the first event after the last one closed), independently of the type.
struct Numbered {
    period: Period,
    number: u64,
    /// When the open period ends, in nanoseconds.
    end: Option<u64>,
    latest: u64,
}

impl Numbered {
    fn new(period: Period) -> Self {
        Self {
            period,
            number: 0,
            end: None,
            latest: 0,
        }
    }

    /// The reading a call at `now` decides at: the later of it and the latest seen.
    fn at(&self, now: Duration) -> u64 {
        self.latest.max(now.as_nanos() as u64)
    }

    /// Tracks an event at `now`: a new period if none is open then.
    fn open(&mut self, now: Duration) {
        let t = self.at(now);
        self.latest = t;
        if self.end.is_none_or(|end| t >= end) {
            self.number += 1;
            self.end = Some(t.saturating_add(self.period.period().as_nanos() as u64));
        }
    }
}

impl Metered for Numbered {
    fn take_cost(&mut self, now: Duration, cost: u32) -> bool {
        self.open(now);
        self.period.take_n(now, cost) != Quota::Over
    }
    fn reserve_cost(&mut self, now: Duration, e: u32, timeout: Duration) -> Option<Reservation> {
        self.open(now);
        self.period.reserve(now, e, timeout).ok()
    }
    fn settle_cost(&mut self, reservation: Reservation, actual: u32, now: Duration) {
        let t = self.at(now);
        if u128::from(t) <= reservation.deadline().as_nanos() {
            if f64::from(actual) > reservation.estimate() {
                self.open(now);
            } else {
                self.latest = t;
            }
        }
        self.period.settle(reservation, actual, now);
    }
    fn group(&self) -> u64 {
        self.number
    }
    fn refund(&self, _: u64, group: u64, t: u64, amount: f64) -> f64 {
        // Only while the estimate's period is still open.
        if group == self.number && self.end.is_some_and(|end| t < end) {
            amount
        } else {
            0.0
        }
    }
    fn in_place(&self) -> bool {
        true
    }
}

/// Runs `ops` on a limiter, recording every charge as the type's rules apply it; with
/// `serial`, a reservation is made only when none is in flight.
fn run(limit: &mut impl Metered, ops: &[((bool, u64), Op)], serial: bool) -> Vec<Charge> {
    let mut charges = Vec::new();
    let mut flights: Vec<Flight> = Vec::new();
    let (mut latest, mut caller) = (0_u64, 0_u64);
    for (seq, ((back, by), op)) in ops.iter().cloned().enumerate() {
        caller = if back {
            caller.saturating_sub(by)
        } else {
            caller.saturating_add(by)
        };
        let now = ns(caller);
        let t = latest.max(caller);
        let charge = |amount: f64, kind: Kind, group: u64| Charge {
            stamp: t,
            seq,
            amount,
            kind,
            group,
        };
        match op {
            Op::Take(cost) => {
                latest = t;
                if limit.take_cost(now, cost) {
                    charges.push(charge(f64::from(cost), Kind::Admission, limit.group()));
                }
            }
            Op::Reserve(estimate, timeout) => {
                if serial && !flights.is_empty() {
                    continue;
                }
                latest = t;
                if let Some(token) = limit.reserve_cost(now, estimate, ns(timeout)) {
                    charges.push(charge(f64::from(estimate), Kind::Admission, limit.group()));
                    flights.push(Flight {
                        token,
                        charge: charges.len() - 1,
                        estimate,
                        stamp: t,
                        deadline: t.saturating_add(timeout),
                        group: limit.group(),
                    });
                }
            }
            Op::Settle(index, actual) => {
                if flights.is_empty() {
                    continue;
                }
                let flight = flights.swap_remove(index % flights.len());
                let in_time = t <= flight.deadline;
                let refund = if in_time && actual < flight.estimate {
                    let amount = f64::from(flight.estimate - actual);
                    limit.refund(flight.stamp, flight.group, t, amount)
                } else {
                    0.0
                };
                limit.settle_cost(flight.token, actual, now);
                if !in_time {
                    continue;
                }
                latest = t;
                if actual > flight.estimate {
                    let debt = f64::from(actual - flight.estimate);
                    charges.push(charge(debt, Kind::Debt, limit.group()));
                } else if limit.in_place() {
                    charges[flight.charge].amount -= refund;
                } else if refund != 0.0 {
                    charges.push(charge(-refund, Kind::Refund, limit.group()));
                }
            }
        }
    }
    charges
}

/// The bound over every window-long stretch of a log: those ending at each stamp suffice,
/// since a stretch's charges up to its last admission only grow as it slides back to end
/// there. With `corollary`, also at most the quota plus that overshoot.
fn sliding_bound(
    charges: &[Charge],
    window: u64,
    quota: u32,
    corollary: Option<f64>,
) -> Result<(), TestCaseError> {
    for end in charges.iter().map(|c| c.stamp) {
        let inside = |c: &Charge| c.stamp <= end && end - c.stamp < window;
        check_bound(charges, inside, f64::from(quota))?;
        if let Some(largest) = corollary {
            let total: f64 = charges.iter().filter(|c| inside(c)).map(|c| c.amount).sum();
            prop_assert!(total <= f64::from(quota) + largest);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    // A cost of 1 decides exactly as the methods without a cost: two logs fed the same
    // readings and policies, one through `take`, `check`, `left` and `next`, the other
    // through `take_n`, `check_n` and `next_n` with a cost of 1, answer alike throughout.
    #[test]
    fn a_sliding_cost_of_one_decides_as_an_event(
        quota in prop_oneof![0..8_u32, Just(u32::MAX)],
        window in 1..2_000_u64,
        ops in prop::collection::vec((step(), 0..5_u8, 0..8_u32), 1..200),
    ) {
        let mut events = Sliding::new(quota, ns(window));
        let mut costs = Sliding::new(quota, ns(window));
        let mut caller = 0_u64;
        for ((back, by), what, q) in ops {
            caller = if back { caller.saturating_sub(by) } else { caller.saturating_add(by) };
            let now = ns(caller);
            match what {
                0 => prop_assert_eq!(events.take(now), costs.take_n(now, 1)),
                1 => prop_assert_eq!(events.check(now), costs.check_n(now, 1)),
                2 => prop_assert_eq!(events.next(now), costs.next_n(now, 1)),
                3 => prop_assert_eq!(events.left(now), costs.left(now)),
                _ => {
                    events.retune(q, ns(window), now);
                    costs.retune(q, ns(window), now);
                }
            }
        }
    }

    // The same for a period: `take`, `check` and `left` against `take_n`, `check_n` and
    // `left` with a cost of 1, retunes mixed in; `next_n` agrees with `next` whenever an
    // event would be refused and is zero otherwise.
    #[test]
    fn a_period_cost_of_one_decides_as_an_event(
        quota in prop_oneof![0..8_u32, Just(u32::MAX)],
        period in 1..2_000_u64,
        aligned in any::<bool>(),
        ops in prop::collection::vec((step(), 0..5_u8, 0..8_u32), 1..200),
    ) {
        let make = |q, p| if aligned { Period::aligned(q, ns(p)) } else { Period::new(q, ns(p)) };
        let mut events = make(quota, period);
        let mut costs = make(quota, period);
        let mut caller = 0_u64;
        for ((back, by), what, q) in ops {
            caller = if back { caller.saturating_sub(by) } else { caller.saturating_add(by) };
            let now = ns(caller);
            match what {
                0 => prop_assert_eq!(events.take(now), costs.take_n(now, 1)),
                1 => prop_assert_eq!(events.check(now), costs.check_n(now, 1)),
                2 => {
                    let next = costs.next_n(now, 1);
                    if events.quota() == 0 {
                        prop_assert_eq!(next, Duration::MAX);
                    } else if events.left(now) == 0 {
                        prop_assert_eq!(events.next(now), next);
                    } else {
                        prop_assert_eq!(next, Duration::ZERO);
                    }
                }
                3 => prop_assert_eq!(events.left(now), costs.left(now)),
                _ => {
                    events.retune(q, ns(period), now);
                    costs.retune(q, ns(period), now);
                }
            }
        }
    }

    // A bucket has always taken a cost: `take` and `check` agree for any cost, `next` of a
    // cost is exactly when `take` of it first succeeds.
    #[test]
    fn a_bucket_take_of_a_cost_passes_at_next_and_not_a_nanosecond_before(
        rate in 0.1..1_000.0_f64,
        burst in 1.0..100.0_f64,
        first in 0.0..100.0_f64,
        cost in 0.0..120.0_f64,
    ) {
        let mut bucket = Bucket::new(rate, burst, secs(0));
        let _ = bucket.take(secs(0), first);
        let wait = bucket.next(secs(0), cost);
        if cost > burst {
            prop_assert_eq!(wait, Duration::MAX);
            prop_assert!(!bucket.clone().take(secs(1_000_000), cost));
        } else {
            if wait > Duration::ZERO {
                prop_assert!(!bucket.clone().take(wait - ns(1), cost));
            }
            prop_assert!(bucket.take(wait, cost));
        }
    }

    // The bound of `Sliding`'s docs: in any window-long stretch the units charged are at most
    // the quota plus the debts settled in it after its last admission; any number of
    // reservations in flight.
    #[test]
    fn sliding_charges_never_pass_the_quota_plus_the_late_debts_of_any_window(
        quota in 0..20_u32,
        window in 1..3_000_u64,
        ops in prop::collection::vec((step(), op()), 1..120),
    ) {
        let mut limit = Sliding::new(quota, ns(window));
        let charges = run(&mut limit, &ops, false);
        sliding_bound(&charges, window, quota, None)?;
    }

    // The corollary: with one reservation in flight at a time, any window holds at most the
    // quota plus the largest single overshoot.
    #[test]
    fn sliding_charges_with_one_reservation_in_flight_stay_within_the_largest_overshoot(
        quota in 0..20_u32,
        window in 1..3_000_u64,
        ops in prop::collection::vec((step(), op()), 1..120),
    ) {
        let mut limit = Sliding::new(quota, ns(window));
        let charges = run(&mut limit, &ops, true);
        sliding_bound(&charges, window, quota, Some(largest_overshoot(&charges)))?;
    }

    // The bound of `Period`'s docs, period by period, with any number in flight and, for the
    // corollary, with one.
    #[test]
    fn period_charges_never_pass_the_quota_plus_the_late_debts_of_any_period(
        quota in 0..20_u32,
        period in 1..3_000_u64,
        serial in any::<bool>(),
        ops in prop::collection::vec((step(), op()), 1..120),
    ) {
        let mut limit = Numbered::new(Period::new(quota, ns(period)));
        let charges = run(&mut limit, &ops, serial);
        let largest = largest_overshoot(&charges);
        for group in 1..=limit.number {
            check_bound(&charges, |c| c.group == group, f64::from(quota))?;
            if serial {
                let total: f64 = charges.iter().filter(|c| c.group == group).map(|c| c.amount).sum();
                prop_assert!(total <= f64::from(quota) + largest);
            }
        }
    }

    // The bound of `Bucket`'s docs: over any stretch from one charge to another the cost
    // charged is at most `burst + rate · (b − a)` plus the debts settled in it after its last
    // admission; with one in flight, plus the largest single overshoot.
    #[test]
    fn bucket_charges_never_pass_the_burst_and_refill_plus_the_late_debts(
        per_ns in 0.0..0.05_f64,
        burst in 1.0..20.0_f64,
        serial in any::<bool>(),
        ops in prop::collection::vec((step(), op()), 1..100),
    ) {
        let mut bucket = Bucket::new(per_ns * 1e9, burst, secs(0));
        let charges = run(&mut bucket, &ops, serial);
        let largest = largest_overshoot(&charges);
        for a in &charges {
            for b in charges.iter().filter(|b| b.seq >= a.seq) {
                let allowance = burst + per_ns * (b.stamp - a.stamp) as f64;
                let inside = |c: &Charge| c.seq >= a.seq && c.seq <= b.seq;
                check_bound(&charges, inside, allowance)?;
                if serial {
                    let total: f64 = charges.iter().filter(|c| inside(c)).map(|c| c.amount).sum();
                    prop_assert!(total <= allowance + largest + 1e-9 * (1.0 + allowance));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Several limits at once.

/// One limiter of a random `Limits` decision.
#[derive(Debug, Clone)]
enum AnyLimit {
    Bucket(Bucket),
    Sliding(Sliding),
    Period(Period),
}

impl AnyLimit {
    /// The limit at `cost` (a bucket's cost is a quarter of it, to be fractional).
    fn limit(&mut self, cost: u32) -> ironward::Limit<'_> {
        match self {
            AnyLimit::Bucket(b) => ironward::Limit::Bucket(b, f64::from(cost) / 4.0),
            AnyLimit::Sliding(s) => ironward::Limit::Sliding(s, cost),
            AnyLimit::Period(p) => ironward::Limit::Period(p, cost),
        }
    }

    /// What taking `cost` from this limiter alone does: its own method.
    fn take_alone(&mut self, now: Duration, cost: u32) -> bool {
        match self {
            AnyLimit::Bucket(b) => b.take(now, f64::from(cost) / 4.0),
            AnyLimit::Sliding(s) => s.take_n(now, cost),
            AnyLimit::Period(p) => p.check_n(now, cost).is_ok(),
        }
    }

    /// The whole state, private fields included.
    fn state(&self) -> String {
        format!("{self:?}")
    }
}

fn any_limit() -> impl Strategy<Value = AnyLimit> {
    prop_oneof![
        (0.0..5.0_f64, 1.0..20.0_f64).prop_map(|(r, b)| AnyLimit::Bucket(Bucket::new(
            r,
            b,
            secs(0)
        ))),
        (0..20_u32, 1..5_000_u64).prop_map(|(q, w)| AnyLimit::Sliding(Sliding::new(q, ns(w)))),
        (0..20_u32, 1..5_000_u64, any::<bool>()).prop_map(|(q, p, a)| {
            AnyLimit::Period(if a {
                Period::aligned(q, ns(p))
            } else {
                Period::new(q, ns(p))
            })
        }),
    ]
}

/// `Limits` over the three limiters at the three costs.
fn limits<'a>(set: &'a mut [AnyLimit; 3], costs: [u32; 3]) -> ironward::Limits<'a, 3> {
    let [a, b, c] = set;
    ironward::Limits([a.limit(costs[0]), b.limit(costs[1]), c.limit(costs[2])])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    // All or nothing: a refused decision leaves every limiter exactly as it was (its whole
    // state, clock included), an admitted one leaves each as taking its cost alone would;
    // `peek` answers as `check` decides, and its wait is exact: all admit at `now + next`,
    // and not a nanosecond before.
    #[test]
    fn several_limits_take_from_every_one_or_from_none(
        set in [any_limit(), any_limit(), any_limit()],
        ops in prop::collection::vec((step(), [cost(), cost(), cost()], any::<bool>()), 1..80),
    ) {
        let mut set = set;
        // Only an admitted decision moves the limiters' clocks, all together.
        let (mut caller, mut latest) = (0_u64, 0_u64);
        for ((back, by), costs, reserve) in ops {
            caller = if back { caller.saturating_sub(by) } else { caller.saturating_add(by) };
            let now = ns(caller);
            let before = set.clone();
            let peeked = limits(&mut set, costs).peek(now);
            prop_assert_eq!(set.iter().map(AnyLimit::state).collect::<Vec<_>>(),
                before.iter().map(AnyLimit::state).collect::<Vec<_>>());
            let decided = if reserve {
                limits(&mut set, costs).reserve(now, secs(1)).map(drop)
            } else {
                limits(&mut set, costs).check(now)
            };
            prop_assert_eq!(decided, peeked);
            match decided {
                Ok(()) => {
                    latest = latest.max(caller);
                    for ((limit, mut alone), cost) in set.iter().zip(before).zip(costs) {
                        prop_assert!(alone.take_alone(now, cost));
                        prop_assert_eq!(limit.state(), alone.state());
                    }
                }
                Err(reason) => {
                    for (limit, was) in set.iter().zip(&before) {
                        prop_assert_eq!(limit.state(), was.state());
                    }
                    prop_assert!(reason.next > Duration::ZERO);
                    prop_assert!(reason.index < 3);
                    // The wait counts from the reading the limiters decide at.
                    let read = ns(latest.max(caller));
                    if let Some(at) = read.checked_add(reason.next).filter(|_| reason.next != Duration::MAX) {
                        let mut later = set.clone();
                        prop_assert!(limits(&mut later, costs).peek(at).is_ok());
                        let mut earlier = set.clone();
                        let just_before = limits(&mut earlier, costs).peek(at - ns(1));
                        prop_assert!(just_before.is_err());
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Costs against naive models.

/// The naive log of costs: every charge with its stamp, scanned in full for each question.
struct CostLog {
    quota: u64,
    window: u64,
    /// `(stamp, units)`, in the order charged.
    charges: Vec<(u64, u64)>,
}

impl CostLog {
    fn inside(&self, t: u64) -> u64 {
        self.charges
            .iter()
            .filter(|&&(s, _)| t - s < self.window)
            .map(|&(_, c)| c)
            .sum()
    }

    fn next(&self, t: u64, cost: u64) -> Duration {
        if cost > self.quota {
            return Duration::MAX;
        }
        let mut inside: Vec<(u64, u64)> = self
            .charges
            .iter()
            .copied()
            .filter(|&(s, c)| t - s < self.window && c > 0)
            .collect();
        inside.sort_by_key(|&(s, _)| s);
        let mut held: u64 = inside.iter().map(|&(_, c)| c).sum();
        if held + cost <= self.quota {
            return Duration::ZERO;
        }
        for (s, c) in inside {
            held -= c;
            if held + cost <= self.quota {
                return ns(self.window - (t - s));
            }
        }
        Duration::MAX
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    // `Sliding`'s costs against the naive log: every `take_n`, `left` and `next_n` answers as
    // a scan of every charge would, through reservations, refunds and debts, readings that
    // go backwards and readings at the end of the clock.
    #[test]
    fn sliding_costs_match_a_naive_log_of_every_charge(
        quota in prop_oneof![0..20_u32, Just(u32::MAX)],
        window in prop_oneof![1..3_000_u64, Just(u64::MAX)],
        ops in prop::collection::vec(
            (prop_oneof![9 => step(), 1 => Just((false, u64::MAX))], op(), 0..30_u32),
            1..150,
        ),
    ) {
        let mut limit = Sliding::new(quota, ns(window));
        let mut log = CostLog { quota: u64::from(quota), window, charges: Vec::new() };
        let mut flights: Vec<(Reservation, usize, u64)> = Vec::new();
        let (mut caller, mut latest) = (0_u64, 0_u64);
        for ((back, by), op, ask) in ops {
            caller = if back { caller.saturating_sub(by) } else { caller.saturating_add(by) };
            let now = ns(caller);
            let t = latest.max(caller);
            prop_assert_eq!(limit.left(now), u32::try_from(log.quota.saturating_sub(log.inside(t))).unwrap_or(0));
            prop_assert_eq!(limit.next_n(now, ask), log.next(t, u64::from(ask)));
            match op {
                Op::Take(cost) => {
                    latest = t;
                    let fits = log.inside(t) + u64::from(cost) <= log.quota;
                    prop_assert_eq!(limit.take_n(now, cost), fits);
                    if fits {
                        log.charges.push((t, u64::from(cost)));
                    }
                }
                Op::Reserve(estimate, timeout) => {
                    latest = t;
                    let fits = log.inside(t) + u64::from(estimate) <= log.quota;
                    let reservation = limit.reserve(now, estimate, ns(timeout));
                    prop_assert_eq!(reservation.is_ok(), fits);
                    if let Ok(reservation) = reservation {
                        log.charges.push((t, u64::from(estimate)));
                        flights.push((reservation, log.charges.len() - 1, t.saturating_add(timeout)));
                    }
                }
                Op::Settle(index, actual) => {
                    if flights.is_empty() {
                        continue;
                    }
                    let (reservation, charge, deadline) = flights.swap_remove(index % flights.len());
                    let estimate = reservation.estimate() as u64;
                    limit.settle(reservation, actual, now);
                    if t > deadline {
                        continue;
                    }
                    latest = t;
                    let actual = u64::from(actual);
                    if actual > estimate {
                        log.charges.push((t, actual - estimate));
                    } else if t - log.charges[charge].0 < window {
                        log.charges[charge].1 -= estimate - actual;
                    }
                }
            }
        }
    }

    // `Period`'s costs against a naive counter: every `take_n`, `left` and `next_n` answers
    // as go-zero's counter would with the cost rule of the docs (a refused cost counts one
    // event once the quota is used up, nothing before), through reservations, refunds and
    // debts.
    #[test]
    fn period_costs_match_a_naive_counter(
        quota in prop_oneof![0..20_u32, Just(u32::MAX)],
        period in 1..3_000_u64,
        ops in prop::collection::vec((step(), op(), 0..30_u32), 1..150),
    ) {
        let mut limit = Period::new(quota, ns(period));
        let quota = u64::from(quota);
        // The open period's start and number, and its count.
        let (mut start, mut number, mut count): (Option<u64>, u64, u64) = (None, 0, 0);
        let mut flights: Vec<(Reservation, u64, u64)> = Vec::new();
        let (mut caller, mut latest) = (0_u64, 0_u64);
        for ((back, by), op, ask) in ops {
            caller = if back { caller.saturating_sub(by) } else { caller.saturating_add(by) };
            let now = ns(caller);
            let t = latest.max(caller);
            let open = start.filter(|&s| t - s < period);
            let expect_left = if open.is_some() { quota.saturating_sub(count) } else { quota };
            prop_assert_eq!(u64::from(limit.left(now)), expect_left);
            let expect_next = match open {
                _ if u64::from(ask) > quota => Duration::MAX,
                Some(s) if count + u64::from(ask) > quota => ns(period - (t - s)),
                _ => Duration::ZERO,
            };
            prop_assert_eq!(limit.next_n(now, ask), expect_next);
            let event = |t: u64, start: &mut Option<u64>, count: &mut u64, number: &mut u64| {
                if start.is_none_or(|s| t - s >= period) {
                    *start = Some(t);
                    *count = 0;
                    *number += 1;
                }
            };
            match op {
                Op::Take(cost) | Op::Reserve(cost, _) => {
                    latest = t;
                    event(t, &mut start, &mut count, &mut number);
                    let after = count + u64::from(cost);
                    let expect = if after < quota {
                        Some(Quota::Under)
                    } else if after == quota {
                        Some(Quota::Hit)
                    } else {
                        None
                    };
                    match expect {
                        Some(_) => count = after,
                        None if count >= quota => count += 1,
                        None => {}
                    }
                    if let Op::Reserve(_, timeout) = op {
                        let reservation = limit.reserve(now, cost, ns(timeout));
                        prop_assert_eq!(reservation.is_ok(), expect.is_some());
                        if let Ok(reservation) = reservation {
                            flights.push((reservation, number, t.saturating_add(timeout)));
                        }
                    } else {
                        prop_assert_eq!(limit.take_n(now, cost), expect.unwrap_or(Quota::Over));
                    }
                }
                Op::Settle(index, actual) => {
                    if flights.is_empty() {
                        continue;
                    }
                    let (reservation, counted_in, deadline) = flights.swap_remove(index % flights.len());
                    let estimate = reservation.estimate() as u64;
                    limit.settle(reservation, actual, now);
                    if t > deadline {
                        continue;
                    }
                    latest = t;
                    let actual = u64::from(actual);
                    if actual > estimate {
                        event(t, &mut start, &mut count, &mut number);
                        count += actual - estimate;
                    } else if counted_in == number && start.is_some_and(|s| t - s < period) {
                        count -= estimate - actual;
                    }
                }
            }
        }
    }
}
