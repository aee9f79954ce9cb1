//! Several limits decided as one: all or nothing, and an exact peek.

use super::*;

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

    /// The whole state, private fields included, but for which instance it is (`owner`): a
    /// clone is another instance, numbered once it hands out a token.
    fn state(&self) -> String {
        let full = format!("{self:?}");
        match full.split_once(", owner: Owner(") {
            Some((head, tail)) => format!("{head}{}", &tail[tail.find(')').unwrap_or(0) + 1..]),
            None => full,
        }
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
