//! The healthy answer, successes in bulk and permits made for calls let through elsewhere,
//! each held to the one-call-at-a-time methods it stands for.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;

use proptest::prelude::*;

use super::super::{CLASSIC, Classic, ClassicBreaker, Force, HalfOpen, OpenWait, Record, State};
use crate::window::Outcome;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Everything a breaker decides by, as text: its record, stage, epoch, clock, reopenings,
/// the shares that last opened it and its changes of state (not who it is).
fn inside(b: &ClassicBreaker) -> String {
    format!(
        "{:?} {:?} {} {} {} {:?} {:?} {}",
        b.counts,
        b.stage,
        b.epoch,
        b.latest.get(),
        b.reopened,
        b.opened_by,
        b.transition,
        b.transitions
    )
}

/// Rates in range, at the edges and out of them.
fn rate() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.5),
        Just(0.0),
        Just(1.0),
        Just(f64::NAN),
        Just(2.0),
        Just(-1.0),
        0.0..1.0f64
    ]
}

/// Small records of every kind, so that a short run fills, evicts and crosses buckets; a
/// few millisecond wide time buckets.
fn policy() -> impl Strategy<Value = Classic> {
    let record = prop_oneof![
        (0..6u32).prop_map(|calls| Record::Count { calls }),
        (1..40u64, 0..5u32).prop_map(|(span, buckets)| Record::Time {
            span: ms(span),
            buckets
        }),
        (0..4u32).prop_map(|failures| Record::Consecutive { failures }),
    ];
    let force = prop_oneof![
        6 => Just(Force::None),
        1 => Just(Force::MetricsOnly),
        1 => Just(Force::Open),
        1 => Just(Force::Disabled),
    ];
    (
        record,
        (rate(), rate()),
        (0..5u64, 0..8u32, 0..10u64),
        (0..3u32, 1..20u64, force),
    )
        .prop_map(
            |(record, (failure_rate, slow_rate), (slow, minimum, open), (probes, lease, force))| {
                Classic {
                    record,
                    failure_rate,
                    slow_rate,
                    slow_call: ms(slow),
                    minimum,
                    open: OpenWait::Fixed(ms(open)),
                    probes,
                    half_open: HalfOpen::Probes,
                    lease: ms(lease),
                    automatic: false,
                    force,
                }
            },
        )
}

/// A run of calls, each `(step, took, failed)` in microseconds: let through at the latest
/// reading plus `step`, settled `took` later, to leave the breaker in any state.
fn history() -> impl Strategy<Value = Vec<(u64, u64, bool)>> {
    prop::collection::vec((0..3_000u64, 0..8_000u64, any::<bool>()), 0..40)
}

fn replay(policy: Classic, history: &[(u64, u64, bool)]) -> ClassicBreaker {
    let mut breaker = ClassicBreaker::new(policy, Duration::ZERO);
    let mut now = 0u64;
    for &(step, took, failed) in history {
        now += step * 1_000;
        if let Ok(permit) = breaker.check(Duration::from_nanos(now)) {
            let end = Duration::from_nanos(now + took * 1_000);
            let _ = if failed {
                breaker.fail(permit, end)
            } else {
                breaker.pass(permit, end)
            };
        }
    }
    breaker
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    // Any breaker, any count, at a reading forward or back: the bulk record leaves the
    // breaker as that many records one at a time do, a success that opens it included.
    #[test]
    fn record_successes_is_that_many_records(
        policy in policy(),
        history in history(),
        n in prop_oneof![0..20u64, 0..300u64],
        step in 0..10_000_000u64,
        back in any::<bool>(),
    ) {
        let mut bulk = replay(policy, &history);
        let mut each = bulk.clone();
        let latest = bulk.latest.get();
        let now = Duration::from_nanos(if back { latest.saturating_sub(step) } else { latest + step });
        bulk.record_successes(n, now);
        for _ in 0..n {
            each.record(Outcome::Success, now);
        }
        if n == 0 {
            // The clock moves all the same.
            each.latest.advance(now);
        }
        prop_assert_eq!(inside(&bulk), inside(&each));
    }

    // Wherever the breaker says it is healthy, no run of successes before the end opens it
    // (calls let through and passed within the slow threshold, records, bulk records), and
    // every check before the end lets its call through.
    #[test]
    fn no_success_before_the_horizon_opens_the_breaker(
        policy in policy(),
        history in history(),
        runs in prop::collection::vec((0..4u8, 0..5_000_000u64, 1..50u64), 1..60),
    ) {
        let mut breaker = replay(policy, &history);
        let Some(end) = breaker.healthy_until() else { return Ok(()) };
        let end = crate::clock::nanos(end);
        let (epoch, transitions) = (breaker.epoch(), breaker.transitions());
        let slow = crate::clock::nanos(policy.slow_call);
        let mut now = breaker.latest.get();
        for (kind, step, n) in runs {
            now = now.saturating_add(step).min(end - 1);
            let at = Duration::from_nanos(now);
            match kind {
                0 => {
                    let permit = breaker.check(at);
                    prop_assert!(permit.is_ok(), "refused before the horizon");
                    let done = Duration::from_nanos(now.saturating_add(step.min(slow)).min(end - 1));
                    prop_assert!(breaker.pass(permit.unwrap(), done).is_none());
                }
                1 => breaker.record(Outcome::Success, at),
                2 => breaker.record_successes(n, at),
                _ => drop(breaker.check(at)),
            }
            prop_assert_eq!(breaker.state(at), State::Closed);
        }
        prop_assert_eq!((breaker.epoch(), breaker.transitions()), (epoch, transitions));
    }

    // Wherever the breaker says it refuses until a time, every check refuses with the reason
    // that answer gives at the time the check reads (readings forward and back), until the
    // first check it gives none for; and in between nothing but the clock moves: not the
    // checks, nor settles of permits of any stage, nor records.
    #[test]
    fn a_refusing_breaker_refuses_as_it_says_until_it_ends(
        policy in policy(),
        history in history(),
        ops in prop::collection::vec((0..5u8, 0..4_000_000u64, any::<bool>()), 1..60),
    ) {
        let mut breaker = replay(policy, &history);
        // Failures at the latest reading, to open it if the history left it closed or
        // half-open.
        for _ in 0..10 {
            let latest = breaker.latest();
            if let Ok(permit) = breaker.check(latest) {
                let _ = breaker.fail(permit, latest);
            }
        }
        let Some(refusing) = breaker.refusing() else { return Ok(()) };
        let mut before = breaker.clone();
        let epoch = breaker.epoch();
        for (kind, step, back) in ops {
            let latest = breaker.latest.get();
            let now = if back { latest.saturating_sub(step) } else { latest + step };
            let at = Duration::from_nanos(now);
            match kind {
                0 | 1 => {
                    let read = Duration::from_nanos(now.max(latest));
                    let Some(reason) = refusing.at(read) else {
                        // The wait is over: the check moves the breaker on.
                        prop_assert!(!refusing.forced);
                        prop_assert!(read >= refusing.until);
                        return Ok(());
                    };
                    prop_assert_eq!(breaker.check(at).err(), Some(reason));
                    prop_assert_eq!(breaker.refusing(), Some(refusing));
                }
                2 => {
                    let stage = if back { epoch } else { epoch.saturating_sub(1) };
                    let permit = breaker.permit_in(stage, at);
                    prop_assert!(breaker.fail(permit, at).is_none());
                }
                3 => breaker.record(if back { Outcome::Failure } else { Outcome::Success }, at),
                _ => breaker.record_successes(step, at),
            }
            before.latest = breaker.latest;
            prop_assert_eq!(inside(&before), inside(&breaker));
        }
    }

    // A permit made for the current stage at the latest reading settles as the one `check`
    // makes at that reading: the same record, the slow test and any opening included.
    #[test]
    fn a_permit_made_in_the_stage_settles_as_a_checked_one(
        policy in policy(),
        history in history(),
        step in 0..4_000_000u64,
        took in 0..8_000_000u64,
        failed in any::<bool>(),
    ) {
        let mut checked = replay(policy, &history);
        let mut made = checked.clone();
        let now = Duration::from_nanos(checked.latest.get() + step);
        // A shared form makes them only for calls it let through closed.
        if policy.force != Force::None || checked.state(now) != State::Closed {
            return Ok(());
        }
        let permit = checked.check(now).expect("closed");
        // What a shared form does: the reading handed over, then the permit made.
        made.record_successes(0, now);
        let (epoch, at) = (made.epoch(), made.latest());
        let twin = made.permit_in(epoch, at);
        let end = now + Duration::from_nanos(took);
        if failed {
            prop_assert!(checked.fail(permit, end).is_none());
            prop_assert!(made.fail(twin, end).is_none());
        } else {
            prop_assert!(checked.pass(permit, end).is_none());
            prop_assert!(made.pass(twin, end).is_none());
        }
        prop_assert_eq!(inside(&checked), inside(&made));
    }
}

#[test]
fn each_record_kind_has_its_own_end() {
    let time = Classic {
        record: Record::Time {
            span: ms(100),
            buckets: 10,
        },
        ..CLASSIC
    };
    assert_eq!(
        ClassicBreaker::new(time, ms(25)).healthy_until(),
        Some(ms(30))
    );
    // A reading on a bucket's edge starts that bucket.
    assert_eq!(
        ClassicBreaker::new(time, ms(30)).healthy_until(),
        Some(ms(40))
    );
    let count = ClassicBreaker::new(CLASSIC, ms(25));
    assert_eq!(count.healthy_until(), Some(Duration::MAX));
    let consecutive = Classic {
        record: Record::Consecutive { failures: 1 },
        ..CLASSIC
    };
    assert_eq!(
        ClassicBreaker::new(consecutive, ms(25)).healthy_until(),
        Some(Duration::MAX)
    );
}

#[test]
fn only_a_closed_breaker_on_its_record_is_healthy() {
    for force in [Force::Open, Force::Disabled, Force::MetricsOnly] {
        let breaker = ClassicBreaker::new(Classic { force, ..CLASSIC }, ms(0));
        assert_eq!(breaker.healthy_until(), None, "{force:?}");
    }
    let policy = Classic {
        record: Record::Consecutive { failures: 1 },
        open: OpenWait::Fixed(ms(10)),
        probes: 1,
        ..CLASSIC
    };
    let mut breaker = ClassicBreaker::new(policy, ms(0));
    let permit = breaker.check(ms(0)).expect("closed");
    let _ = breaker.fail(permit, ms(0));
    assert_eq!(breaker.healthy_until(), None, "open");
    let probe = breaker.check(ms(10)).expect("the first probe");
    assert_eq!(breaker.healthy_until(), None, "half-open");
    let _ = breaker.pass(probe, ms(10));
    assert_eq!(breaker.state(ms(10)), State::Closed);
    assert_eq!(breaker.healthy_until(), Some(Duration::MAX));
}

// The test reads the shares after one more success: one failure is healthy under a rate of
// 0.6 (1 of 2 after the next), not under one of exactly 1/2, where that next success opens
// the breaker; and a NaN rate no share reaches.
#[test]
fn the_shares_after_one_more_success_decide() {
    let policy = Classic {
        record: Record::Count { calls: 4 },
        minimum: 1,
        failure_rate: 0.6,
        ..CLASSIC
    };
    let mut breaker = ClassicBreaker::new(policy, ms(0));
    breaker.record(Outcome::Failure, ms(0));
    assert_eq!(breaker.state(ms(0)), State::Open, "1 of 1 failed");
    let mut breaker = ClassicBreaker::new(
        Classic {
            minimum: 2,
            ..policy
        },
        ms(0),
    );
    breaker.record(Outcome::Failure, ms(0));
    // 1 of 2 after the next success, under 0.6.
    assert_eq!(breaker.healthy_until(), Some(Duration::MAX));
    breaker.retune(
        Classic {
            failure_rate: 0.5,
            minimum: 2,
            ..policy
        },
        ms(0),
    );
    // 1 of 2 is at 0.5: the next success would open it.
    assert_eq!(breaker.healthy_until(), None);
    breaker.record_successes(1, ms(0));
    assert_eq!(breaker.state(ms(0)), State::Open);
    let never = Classic {
        failure_rate: f64::NAN,
        slow_rate: f64::NAN,
        minimum: 1,
        ..policy
    };
    let mut breaker = ClassicBreaker::new(never, ms(0));
    for _ in 0..4 {
        breaker.record(Outcome::Failure, ms(0));
    }
    assert_eq!(breaker.healthy_until(), Some(Duration::MAX));
}

// A full count window evicts a call for each success: more successes than its size leave
// it all successes, its start moved on by the count, as that many records one at a time.
#[test]
fn successes_past_a_count_window_only_move_its_start() {
    let policy = Classic {
        record: Record::Count { calls: 3 },
        minimum: 3,
        failure_rate: 1.0,
        ..CLASSIC
    };
    let mut bulk = ClassicBreaker::new(policy, ms(0));
    bulk.record(Outcome::Failure, ms(0));
    let mut each = bulk.clone();
    bulk.record_successes(1_000_001, ms(1));
    for _ in 0..1_000_001 {
        each.record(Outcome::Success, ms(1));
    }
    assert_eq!(inside(&bulk), inside(&each));
    // A count near `u64::MAX` takes as many steps as the window is long.
    bulk.record_successes(u64::MAX, ms(2));
    assert_eq!(bulk.state(ms(2)), State::Closed);
    assert_eq!(bulk.latest(), ms(2));
}

#[test]
fn a_time_bucket_counts_successes_near_u64_max_without_overflow() {
    let time = Classic {
        record: Record::Time {
            span: ms(100),
            buckets: 2,
        },
        ..CLASSIC
    };
    let mut breaker = ClassicBreaker::new(time, ms(0));
    breaker.record_successes(u64::MAX, ms(1));
    breaker.record_successes(u64::MAX, ms(2));
    breaker.record_successes(u64::MAX, ms(60));
    breaker.record(Outcome::Success, ms(60));
    // Each of the two buckets stops at a quarter of what a `u64` holds, and the one call
    // recorded after.
    let quarter = u64::MAX / 4;
    let now = breaker.latest.get();
    assert_eq!(breaker.counts.totals(now).calls, 2 * quarter + 2);
    assert_eq!(breaker.healthy_until(), Some(ms(100)));
}

// Open, the reason counts the wait down to its last nanosecond, and the end of it is the
// check's to answer; forced open, every reading is refused, the clock's last included; any
// other state refuses nothing for certain.
#[test]
fn the_refusing_answer_ends_with_the_wait() {
    let ns = Duration::from_nanos;
    let policy = Classic {
        record: Record::Consecutive { failures: 1 },
        open: OpenWait::Fixed(ms(10)),
        ..CLASSIC
    };
    let mut breaker = ClassicBreaker::new(policy, ms(5));
    assert_eq!(breaker.refusing(), None, "closed");
    let permit = breaker.check(ms(5)).expect("closed");
    let _ = breaker.fail(permit, ms(5));
    let refusing = breaker.refusing().expect("open");
    assert_eq!((refusing.until, refusing.forced), (ms(15), false));
    assert_eq!((refusing.failure_rate, refusing.slow_rate), (1.0, 0.0));
    let last = refusing.at(ms(15) - ns(1)).expect("within the wait");
    assert_eq!(last.next, ns(1));
    assert_eq!(breaker.check(ms(15) - ns(1)).err(), Some(last));
    assert_eq!(refusing.at(ms(15)), None);
    let _probe = breaker.check(ms(15)).expect("half-open: the first probe");
    assert_eq!(breaker.refusing(), None, "half-open");
    // The clock past the wait without a check: open still, but not refusing for certain.
    let mut waited = ClassicBreaker::new(policy, ms(0));
    waited.record(Outcome::Failure, ms(0));
    waited.record(Outcome::Success, ms(10));
    assert_eq!(waited.state(ms(10)), State::Open);
    assert_eq!(waited.refusing(), None);
    let forced = Classic {
        force: Force::Open,
        ..policy
    };
    let mut breaker = ClassicBreaker::new(forced, Duration::MAX);
    let refusing = breaker.refusing().expect("forced open");
    assert_eq!((refusing.until, refusing.forced), (Duration::MAX, true));
    let reason = refusing.at(Duration::MAX).expect("forced: every reading");
    assert_eq!(breaker.check(Duration::MAX).err(), Some(reason));
    for force in [Force::Disabled, Force::MetricsOnly] {
        let breaker = ClassicBreaker::new(Classic { force, ..policy }, ms(0));
        assert_eq!(breaker.refusing(), None, "{force:?}");
    }
}
