extern crate std;

use std::format;

use super::*;
use crate::Period;

const SECS: fn(u64) -> Duration = Duration::from_secs;

// go-zero periodlimit_test.go, testPeriodLimit: quota 5, 100 takes give quota − 1
// Allowed, 1 HitQuota and total − quota OverQuota.
#[test]
fn reproduces_go_zero_period_limit_take() {
    let limit = SharedPeriod::new(5, SECS(1));
    let mut seen = [0; 3];
    for _ in 0..100 {
        match limit.take(SECS(0)) {
            Usage::Under => seen[0] += 1,
            Usage::Hit => seen[1] += 1,
            Usage::Over => seen[2] += 1,
        }
    }
    assert_eq!(seen, [4, 1, 95]);
}

#[test]
fn a_refusal_writes_nothing_and_counts_only_the_first_refusal() {
    let limit = SharedPeriod::new(2, SECS(10));
    assert_eq!(limit.check(SECS(1)), Ok(Usage::Under));
    assert_eq!(limit.check(SECS(2)), Ok(Usage::Hit));
    let first = limit.check(SECS(3)).expect_err("over");
    let word = limit.state.load(Ordering::Relaxed);
    let again = limit.check(SECS(4)).expect_err("over");
    assert_eq!(
        limit.state.load(Ordering::Relaxed),
        word,
        "the word is untouched"
    );
    assert_eq!((first.count, first.quota, first.next), (3, 2, SECS(8)));
    assert_eq!((again.count, again.quota, again.next), (4, 2, SECS(7)));
}

#[test]
fn a_quota_of_zero_refuses_everything_and_u32_max_still_hits() {
    let none = SharedPeriod::aligned(0, SECS(10));
    assert_eq!(none.take(SECS(3)), Usage::Over);
    let reason = none.check(SECS(4)).expect_err("nothing is admitted");
    assert_eq!((reason.count, reason.quota, reason.next), (2, 0, SECS(6)));
    assert_eq!(none.left(SECS(4)), 0);

    let huge = SharedPeriod::new(u32::MAX, SECS(1));
    // Most of the way through a period, as a retune from a smaller quota would leave it.
    let word = u64::from(u32::MAX) - 1;
    huge.state.store(word, Ordering::Relaxed);
    assert_eq!(huge.take(SECS(0)), Usage::Hit);
    let reason = huge.check(SECS(0)).expect_err("past u32::MAX");
    assert_eq!((reason.count, reason.quota), (u32::MAX, u32::MAX));
    assert_eq!(huge.left(SECS(0)), 0);
}

#[test]
fn a_zero_period_is_a_nanosecond_and_the_end_of_the_clock_stops_time() {
    let limit = SharedPeriod::new(1, Duration::ZERO);
    assert_eq!(limit.period(), Duration::from_nanos(1));
    assert_eq!(limit.take(Duration::from_nanos(5)), Usage::Hit);
    assert_eq!(limit.take(Duration::from_nanos(6)), Usage::Hit);

    let end = SharedPeriod::aligned(1, Duration::MAX);
    assert_eq!(end.take(Duration::MAX), Usage::Hit);
    assert_eq!(end.take(Duration::MAX), Usage::Over);
    assert_eq!(end.next(Duration::MAX), Duration::from_nanos(u64::MAX));
    let late = SharedPeriod::new(1, SECS(1));
    assert_eq!(late.take(Duration::MAX), Usage::Hit);
    assert_eq!(late.take(Duration::MAX), Usage::Over);
    assert_eq!(late.next(Duration::MAX), SECS(1));
}

// A clock going backwards never reopens a period: a reading before the start counts as
// the start, and its wait is counted from the reading.
#[test]
fn an_earlier_reading_counts_in_the_open_period() {
    let limit = SharedPeriod::new(2, SECS(10));
    let mut alone = Period::new(2, SECS(10));
    for at in [100, 3, 105] {
        assert_eq!(limit.take(SECS(at)), alone.take(SECS(at)), "{at}");
    }
    assert_eq!(limit.check(SECS(3)).expect_err("over").next, SECS(10));
    assert_eq!(alone.check(SECS(3)).expect_err("over").next, SECS(5));
    assert_eq!(limit.left(SECS(0)), 0);
    assert_eq!(limit.take(SECS(110)), Usage::Under);
    assert_eq!(limit.take(SECS(50)), Usage::Hit);
}

#[test]
fn retune_keeps_the_count_and_a_shorter_period_may_have_ended() {
    let limit = SharedPeriod::aligned(10, SECS(60));
    let mut alone = Period::aligned(10, SECS(60));
    for _ in 0..4 {
        assert_eq!(limit.take(SECS(75)), alone.take(SECS(75)));
    }
    // Onto a 40 s grid: the period holding 60 s is [40 s, 80 s).
    limit.retune(5, SECS(40), SECS(76));
    alone.retune(5, SECS(40), SECS(76));
    assert_eq!(limit.left(SECS(76)), 1);
    assert_eq!(limit.next(SECS(76)), alone.next(SECS(76)));
    assert_eq!(limit.next(SECS(76)), SECS(4));
    // Ten-second periods: [70 s, 80 s) would hold it, but it started at 40 s and ended.
    limit.retune(5, SECS(10), SECS(77));
    alone.retune(5, SECS(10), SECS(77));
    assert_eq!(limit.left(SECS(77)), 5);
    assert_eq!(limit.next(SECS(77)), Duration::ZERO);
    // The next event opens a period at 77 s on the new grid, after any earlier reading.
    assert_eq!(limit.take(SECS(70)), alone.take(SECS(70)));
    assert_eq!(limit.next(SECS(77)), alone.next(SECS(77)));
    assert_eq!(limit.next(SECS(77)), SECS(3));
    // The same terms again change nothing.
    let word = limit.state.load(Ordering::Relaxed);
    limit.retune(5, SECS(10), SECS(1000));
    assert_eq!(limit.state.load(Ordering::Relaxed), word);
    assert_eq!((limit.quota(), limit.period()), (5, SECS(10)));
}

// A period whose quota is lowered and raised again keeps every event it admitted, as
// `Period` counts them.
#[test]
fn lowering_then_raising_the_quota_forgets_nothing_admitted() {
    let limit = SharedPeriod::new(7, SECS(10));
    let mut alone = Period::new(7, SECS(10));
    for _ in 0..6 {
        assert_eq!(limit.take(SECS(1)), alone.take(SECS(1)));
    }
    limit.retune(0, SECS(10), SECS(2));
    alone.retune(0, SECS(10), SECS(2));
    assert_eq!(limit.check(SECS(2)).expect_err("over").count, 7);
    limit.retune(7, SECS(10), SECS(3));
    alone.retune(7, SECS(10), SECS(3));
    assert_eq!(limit.take(SECS(3)), Usage::Hit);
    assert_eq!(alone.take(SECS(3)), Usage::Hit);
    assert_eq!(limit.take(SECS(3)), Usage::Over);
}

#[test]
fn retune_cycles_the_tags_without_mixing_terms() {
    let limit = SharedPeriod::new(3, SECS(10));
    assert_eq!(limit.take(SECS(0)), Usage::Under);
    for round in 0..9_u32 {
        limit.retune(3 + round % 2, SECS(10), SECS(1));
    }
    assert_eq!(limit.quota(), 3);
    assert_eq!(limit.left(SECS(1)), 2);
    assert_eq!(limit.next(SECS(1)), SECS(9));
}

#[test]
fn check_left_reports_what_the_take_left_and_when_the_period_ends() {
    let limit = SharedPeriod::new(2, SECS(10));
    let first = limit.check_left(SECS(4)).expect("room");
    assert_eq!(
        first,
        PeriodLeft {
            quota: Usage::Under,
            left: 1,
            reset: SECS(10)
        }
    );
    let second = limit.check_left(SECS(6)).expect("room");
    assert_eq!(
        second,
        PeriodLeft {
            quota: Usage::Hit,
            left: 0,
            reset: SECS(8)
        }
    );
    assert_eq!(limit.check_left(SECS(7)).expect_err("over").next, SECS(7));
}

// Another thread's opening between its two writes: counted into, as open for a whole
// period.
#[test]
fn an_opening_in_progress_counts_as_open() {
    let limit = SharedPeriod::new(2, SECS(10));
    limit.state.store(GEN_ONE | PENDING | 1, Ordering::Relaxed);
    let room = limit.check_left(SECS(50)).expect("room");
    assert_eq!((room.quota, room.reset), (Usage::Hit, SECS(10)));
    assert_eq!(limit.check(SECS(50)).expect_err("over").next, SECS(10));
    assert_eq!(limit.next(SECS(50)), SECS(10));
    limit.publish(GEN_ONE, 45_000_000_000);
    assert_eq!(limit.next(SECS(50)), SECS(5));
    assert_eq!(limit.take(SECS(55)), Usage::Under);
}

#[test]
fn the_word_sits_alone_on_its_line() {
    assert_eq!(core::mem::align_of::<SharedPeriod>(), 128);
    let limit = SharedPeriod::new(1, SECS(1));
    let base = &raw const limit as usize;
    let word = &raw const *limit.state as usize;
    let start = &raw const limit.starts as usize;
    assert_eq!(word % 128, 0);
    assert!(
        start >= word + 128 || start + 16 <= word,
        "{base} {word} {start}"
    );
}

#[test]
fn debug_shows_the_terms_the_count_and_the_start() {
    let limit = SharedPeriod::new(3, SECS(10));
    assert_eq!(limit.take(SECS(5)), Usage::Under);
    assert_eq!(
        format!("{limit:?}"),
        "SharedPeriod { quota: 3, period: 10s, align: false, count: 1, start: Some(5s) }"
    );
}
