//! Reservations: deadlines, refunds after the window, debts, and the bound each type's docs
//! state, proved over random sequences.

use super::*;

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
    assert_eq!(limit.take_n(secs(60), 4), Usage::Under);
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
        self.period.take_n(now, cost) != Usage::Over
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
