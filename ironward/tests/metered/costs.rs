//! Costs per request: the answers at the edges, a cost of 1 against the methods without a
//! cost, and costs against naive models through reservations, refunds and debts.

use super::*;

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
    assert_eq!(limit.take_n(secs(0), 7), Usage::Under);
    assert_eq!(limit.take_n(secs(1), 4), Usage::Over);
    assert_eq!(limit.left(secs(1)), 3);
    assert_eq!(limit.take_n(secs(2), 3), Usage::Hit);
    // Used up: a refusal counts as one event, as go-zero counts every call over the quota.
    assert_eq!(limit.check_n(secs(3), 5).unwrap_err().count, 11);
    assert_eq!(limit.check_n(secs(3), 0).unwrap_err().count, 12);
    assert_eq!(limit.take_n(secs(60), 10), Usage::Hit);
}

#[test]
fn a_period_cost_of_zero_or_above_the_quota() {
    let mut limit = Period::new(0, secs(1));
    assert_eq!(limit.take_n(secs(0), 0), Usage::Hit);
    assert_eq!(limit.take_n(secs(0), 1), Usage::Over);
    assert_eq!(limit.next_n(secs(0), 1), Duration::MAX);
    let mut limit = Period::new(u32::MAX, secs(1));
    assert_eq!(limit.take_n(secs(0), u32::MAX), Usage::Hit);
    assert_eq!(limit.take_n(secs(0), u32::MAX), Usage::Over);
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
    assert_eq!(limit.take_n(Duration::MAX, 0), Usage::Over);
    assert_eq!(limit.check_n(Duration::MAX, 1).unwrap_err().count, u32::MAX);
    assert_eq!(limit.left(Duration::MAX), 0);
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
                        Some(Usage::Under)
                    } else if after == quota {
                        Some(Usage::Hit)
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
                        prop_assert_eq!(limit.take_n(now, cost), expect.unwrap_or(Usage::Over));
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
