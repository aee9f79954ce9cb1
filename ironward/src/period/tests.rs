//! Unit tests of `period` that need its private items.

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Counts the answers to `events` takes at `now`.
fn tally(period: &mut Period, now: Duration, events: usize) -> [usize; 3] {
    let mut seen = [0; 3];
    for _ in 0..events {
        match period.take(now) {
            Usage::Under => seen[0] += 1,
            Usage::Hit => seen[1] += 1,
            Usage::Over => seen[2] += 1,
        }
    }
    seen
}

// go-zero periodlimit_test.go, testPeriodLimit: quota 5 over 1 s, 100 takes give
// quota − 1 Allowed, 1 HitQuota and total − quota OverQuota.
#[test]
fn reproduces_go_zero_period_limit_take() {
    let mut period = Period::new(5, secs(1));
    assert_eq!(tally(&mut period, secs(0), 100), [4, 1, 95]);
}

// The same case with go-zero's Align option (TestPeriodLimit_TakeWithAlign).
#[test]
fn reproduces_go_zero_period_limit_take_with_align() {
    let mut period = Period::aligned(5, secs(1));
    assert_eq!(tally(&mut period, secs(7), 100), [4, 1, 95]);
}

#[test]
fn a_period_opens_at_the_first_event_after_the_last_one_closed() {
    let mut period = Period::new(2, secs(10));
    assert_eq!(period.take(secs(3)), Usage::Under);
    assert_eq!(period.take(secs(5)), Usage::Hit);
    assert_eq!(period.take(secs(13) - Duration::from_nanos(1)), Usage::Over);
    // The period that opened at 3 s closed at 13 s; the next one opens at 20 s, not 23 s.
    assert_eq!(period.take(secs(20)), Usage::Under);
    assert_eq!(period.next(secs(20)), secs(10));
    assert_eq!(period.take(secs(29)), Usage::Hit);
    assert_eq!(period.take(secs(30)), Usage::Under);
}

#[test]
fn aligned_periods_start_on_multiples_of_the_period() {
    let mut period = Period::aligned(2, secs(10));
    assert_eq!(period.take(secs(17)), Usage::Under);
    assert_eq!(period.next(secs(17)), secs(3));
    assert_eq!(period.take(secs(19)), Usage::Hit);
    assert_eq!(period.take(secs(20)), Usage::Under);
}

// A Unix clock and a daily aligned quota: the reset is at 00:00 UTC.
#[test]
fn an_aligned_daily_quota_resets_at_midnight_utc() {
    let day = secs(86_400);
    let midnight = secs(1_709_337_600); // 2024-03-02 00:00:00 UTC
    let mut daily = Period::aligned(2, day);
    let evening = midnight - secs(3600);
    assert_eq!(daily.take(evening), Usage::Under);
    assert_eq!(daily.take(evening), Usage::Hit);
    assert_eq!(daily.next(evening), secs(3600));
    assert_eq!(daily.take(midnight - Duration::from_nanos(1)), Usage::Over);
    assert_eq!(daily.left(midnight), 2);
    assert_eq!(daily.take(midnight), Usage::Under);
    assert_eq!(daily.next(midnight), day);
}

#[test]
fn a_quota_of_zero_is_always_over() {
    let mut period = Period::new(0, secs(1));
    assert_eq!(period.take(secs(0)), Usage::Over);
    assert_eq!(period.take(secs(5)), Usage::Over);
    assert_eq!(period.left(secs(5)), 0);
}

#[test]
fn a_quota_of_one_hits_on_the_first_event() {
    let mut period = Period::new(1, secs(1));
    assert_eq!(period.take(secs(0)), Usage::Hit);
    assert_eq!(period.take(secs(0)), Usage::Over);
    assert_eq!(period.take(secs(1)), Usage::Hit);
}

#[test]
fn a_quota_of_u32_max_tells_hit_from_over() {
    let mut period = Period::new(u32::MAX, secs(1));
    assert_eq!(period.take(secs(0)), Usage::Under);
    assert_eq!(period.left(secs(0)), u32::MAX - 1);
    period.count = u64::from(u32::MAX) - 1;
    assert_eq!(period.take(secs(0)), Usage::Hit);
    assert_eq!(period.left(secs(0)), 0);
    assert_eq!(period.take(secs(0)), Usage::Over);
    period.count = u64::MAX;
    assert_eq!(period.take(secs(0)), Usage::Over);
    assert_eq!(period.left(secs(0)), 0);
}

#[test]
fn left_and_next_read_without_changing_anything() {
    let mut period = Period::new(3, secs(10));
    assert_eq!(period.left(secs(0)), 3);
    assert_eq!(period.next(secs(0)), Duration::ZERO);
    assert_eq!(period.take(secs(2)), Usage::Under);
    assert_eq!(period.left(secs(2)), 2);
    assert_eq!(period.next(secs(2)), secs(10));
    assert_eq!(period.next(secs(11)), secs(1));
    assert_eq!(period.left(secs(12)), 3);
    assert_eq!(period.next(secs(12)), Duration::ZERO);
    // Reading past the end closed nothing.
    assert_eq!(period.take(secs(3)), Usage::Under);
    assert_eq!(period.take(secs(3)), Usage::Hit);
}

#[test]
fn a_period_below_a_nanosecond_is_raised_to_one() {
    let mut period = Period::new(1, Duration::ZERO);
    assert_eq!(period.period(), Duration::from_nanos(1));
    assert_eq!(period.take(secs(1)), Usage::Hit);
    assert_eq!(period.take(secs(1)), Usage::Over);
    assert_eq!(period.next(secs(1)), Duration::from_nanos(1));
    assert_eq!(period.take(secs(1) + Duration::from_nanos(1)), Usage::Hit);
}

#[test]
fn a_period_of_duration_max_lasts_until_the_clock_runs_out() {
    let mut period = Period::aligned(1, Duration::MAX);
    assert_eq!(period.take(secs(5)), Usage::Hit);
    assert_eq!(period.take(secs(1_000_000_000)), Usage::Over);
    assert_eq!(
        period.next(secs(0)),
        Duration::from_nanos(u64::MAX - 1_000_000_000 * 1_000_000_000)
    );
    // The aligned period started at zero and ends exactly where the clock does.
    assert_eq!(period.take(Duration::MAX), Usage::Hit);
    assert_eq!(period.take(Duration::MAX), Usage::Over);
}

#[test]
fn a_clock_going_backwards_never_reopens_a_period() {
    let mut period = Period::new(1, secs(10));
    assert_eq!(period.take(secs(100)), Usage::Hit);
    assert_eq!(period.take(secs(0)), Usage::Over);
    assert_eq!(period.left(secs(0)), 0);
    assert_eq!(period.next(secs(0)), secs(10));
    assert_eq!(period.take(secs(109)), Usage::Over);
    assert_eq!(period.take(secs(110)), Usage::Hit);
}

#[test]
fn survives_a_clock_at_the_end_of_its_range() {
    for mut period in [Period::new(2, secs(1)), Period::aligned(2, secs(1))] {
        assert_eq!(period.take(Duration::MAX), Usage::Under);
        assert_eq!(period.take(Duration::MAX), Usage::Hit);
        // Time has stopped, so the period never ends.
        assert_eq!(period.take(Duration::MAX), Usage::Over);
        assert_eq!(period.left(Duration::MAX), 0);
        assert!(period.next(Duration::MAX) > Duration::ZERO);
    }
}

#[test]
fn idle_is_the_period_after_which_the_counter_is_as_good_as_new() {
    for made in [Period::new, Period::aligned] {
        let mut period = made(2, secs(10));
        let fresh = period.clone();
        assert_eq!(period.take(secs(13)), Usage::Under);
        assert_eq!(period.take(secs(14)), Usage::Hit);
        assert_eq!(period.idle(), secs(10));
        let later = secs(14) + period.idle();
        assert_eq!(period.left(later), fresh.left(later));
        assert_eq!(period.next(later), fresh.next(later));
    }
    assert_eq!(
        Period::new(0, Duration::ZERO).idle(),
        Duration::from_nanos(1)
    );
    assert_eq!(
        Period::aligned(1, Duration::MAX).idle(),
        Duration::from_nanos(u64::MAX)
    );
}

#[test]
fn a_lower_quota_counts_what_the_open_period_already_took() {
    let mut period = Period::new(5, secs(10));
    assert_eq!(tally(&mut period, secs(1), 3), [3, 0, 0]);
    period.retune(2, secs(10), secs(2));
    assert_eq!(period.left(secs(2)), 0);
    assert_eq!(period.take(secs(2)), Usage::Over);
    assert_eq!(period.take(secs(11) - Duration::from_nanos(1)), Usage::Over);
    // The period opened at 1 s still ends at 11 s.
    assert_eq!(tally(&mut period, secs(11), 3), [1, 1, 1]);
}

#[test]
fn a_higher_quota_admits_the_difference_at_once() {
    let mut period = Period::new(2, secs(10));
    assert_eq!(tally(&mut period, secs(0), 3), [1, 1, 1]);
    // Three events counted, the refused one included, as go-zero counts them.
    period.retune(5, secs(10), secs(1));
    assert_eq!(period.left(secs(1)), 2);
    assert_eq!(tally(&mut period, secs(1), 3), [1, 1, 1]);
}

#[test]
fn a_new_period_moves_the_end_of_the_open_one_and_never_reopens_an_ended_one() {
    let mut period = Period::new(1, secs(10));
    assert_eq!(period.take(secs(3)), Usage::Hit);
    period.retune(1, secs(30), secs(5));
    assert_eq!(period.next(secs(5)), secs(28));
    assert_eq!(period.take(secs(32)), Usage::Over);
    // Shortened under the time already spent: the period has ended.
    period.retune(1, secs(20), secs(32));
    assert_eq!(period.left(secs(32)), 1);
    assert_eq!(period.next(secs(32)), Duration::ZERO);
    // A period that had ended stays ended, however long the new one.
    let mut ended = Period::new(1, secs(10));
    assert_eq!(ended.take(secs(0)), Usage::Hit);
    ended.retune(1, secs(100), secs(50));
    assert_eq!(ended.take(secs(50)), Usage::Hit);
    assert_eq!(ended.next(secs(50)), secs(100));
}

#[test]
fn an_aligned_period_moves_to_the_new_grid() {
    let hour = secs(3600);
    let day = secs(86_400);
    let mut period = Period::aligned(10, hour);
    let half_past_noon = secs(12 * 3600 + 1800);
    assert_eq!(tally(&mut period, half_past_noon, 4), [4, 0, 0]);
    // Daily from now: the hour's four events count until midnight.
    period.retune(5, day, half_past_noon);
    assert_eq!(period.left(half_past_noon), 1);
    assert_eq!(period.next(half_past_noon), secs(11 * 3600 + 1800));
    assert_eq!(period.take(day - Duration::from_nanos(1)), Usage::Hit);
    assert_eq!(period.take(day), Usage::Under);
    // Hourly again at 06:10: the day's period shrinks to [00:00, 01:00), long ended.
    let ten_past_six = day + secs(6 * 3600 + 600);
    period.retune(5, hour, ten_past_six);
    assert_eq!(period.left(ten_past_six), 5);
    assert_eq!(period.take(ten_past_six), Usage::Under);
    assert_eq!(period.next(ten_past_six), secs(50 * 60));
}

#[test]
fn retuning_reads_a_clock_going_backwards_as_the_latest_seen() {
    let mut period = Period::new(1, secs(10));
    assert_eq!(period.take(secs(100)), Usage::Hit);
    // Read as 100 s: the period is open, and is kept.
    period.retune(2, secs(10), secs(0));
    assert_eq!(period.left(secs(0)), 1);
    assert_eq!(period.next(secs(0)), secs(10));
}

#[test]
fn retuning_to_the_same_policy_changes_nothing() {
    let mut period = Period::new(2, Duration::ZERO);
    assert_eq!(period.take(secs(5)), Usage::Under);
    period.retune(2, Duration::from_nanos(1), secs(9));
    // The clock did not move to 9 s, so the period opened at 5 s is still open there.
    assert_eq!(period.take(secs(5)), Usage::Hit);
}

#[test]
fn a_clone_counts_independently() {
    let mut period = Period::new(1, secs(1));
    let mut twin = period.clone();
    assert_eq!(period.take(secs(0)), Usage::Hit);
    assert_eq!(twin.take(secs(0)), Usage::Hit);
    assert_eq!(period.take(secs(0)), Usage::Over);
}

// go-zero periodlimit_test.go's case again: the 95 events over the quota are refused, each
// with the count that refused it.
#[test]
fn a_refusal_gives_the_count_past_the_quota_and_when_the_period_ends() {
    let mut period = Period::new(5, secs(1));
    for _ in 0..4 {
        assert_eq!(period.check(secs(0)), Ok(Usage::Under));
    }
    assert_eq!(period.check(secs(0)), Ok(Usage::Hit));
    for count in 6..=100 {
        let reason = period.check(ms(200)).expect_err("over the quota");
        assert_eq!(
            reason,
            QuotaReason {
                count,
                quota: 5,
                next: ms(800),
            }
        );
        assert_eq!(reason.next, period.next(ms(200)));
    }
}

#[test]
fn an_aligned_refusal_waits_for_the_next_multiple() {
    let mut period = Period::aligned(1, secs(10));
    assert_eq!(period.check(secs(17)), Ok(Usage::Hit));
    let reason = period.check(secs(18)).expect_err("used up");
    assert_eq!((reason.count, reason.next), (2, secs(2)));
    let reason = Period::new(0, secs(1))
        .check(secs(3))
        .expect_err("a quota of 0");
    assert_eq!((reason.count, reason.quota, reason.next), (1, 0, secs(1)));
}

#[test]
fn a_refused_count_past_u32_saturates() {
    let mut period = Period::new(u32::MAX, secs(1));
    assert_eq!(period.check(secs(0)), Ok(Usage::Under));
    period.count = u64::from(u32::MAX);
    assert_eq!(period.check(secs(0)).unwrap_err().count, u32::MAX);
    period.count = u64::MAX;
    let reason = period.check(secs(0)).unwrap_err();
    assert!(reason.count >= reason.quota);
}

#[test]
fn costs_and_debts_saturate_the_count_near_u64_max() {
    let mut period = Period::new(u32::MAX, Duration::MAX);
    let reservation = period.reserve(secs(0), 5, Duration::MAX).unwrap();
    period.count = u64::MAX - 1;
    period.settle(reservation, u32::MAX, secs(1));
    assert_eq!(period.count, u64::MAX);
    assert_eq!(
        period.check_n(secs(2), u32::MAX).unwrap_err().count,
        u32::MAX
    );
    assert_eq!(period.count, u64::MAX);
    assert_eq!(period.take_n(secs(2), 0), Usage::Over);
    assert_eq!(period.left(secs(2)), 0);
    assert_eq!(
        period.next_n(secs(2), 1),
        Duration::from_nanos(u64::MAX - nanos(secs(2)))
    );
}
