//! Unit tests of `sliding` that need its private items.

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn admits_the_quota_then_refuses() {
    let mut limit = Sliding::new(3, secs(1));
    assert!(limit.take(ms(0)));
    assert!(limit.take(ms(10)));
    assert!(limit.take(ms(20)));
    assert!(!limit.take(ms(30)));
    assert!(!limit.take(ms(999)));
}

#[test]
fn an_event_leaves_exactly_one_window_later() {
    let mut limit = Sliding::new(1, secs(1));
    assert!(limit.take(ms(500)));
    assert!(!limit.take(ms(1500) - Duration::from_nanos(1)));
    assert!(limit.take(ms(1500)));
}

// The boundary burst a fixed window allows and a sliding one does not.
#[test]
fn counts_any_window_long_stretch_not_fixed_periods() {
    let mut limit = Sliding::new(2, secs(1));
    assert!(limit.take(ms(900)));
    assert!(limit.take(ms(950)));
    assert!(!limit.take(ms(1100)));
    assert!(!limit.take(ms(1899)));
    assert!(limit.take(ms(1900)));
    assert!(!limit.take(ms(1949)));
    assert!(limit.take(ms(1950)));
}

#[test]
fn refused_events_are_not_counted() {
    let mut limit = Sliding::new(1, secs(1));
    assert!(limit.take(ms(0)));
    for t in 1..1000 {
        assert!(!limit.take(ms(t)));
    }
    assert!(limit.take(ms(1000)));
}

#[test]
fn left_counts_down_without_changing_anything() {
    let mut limit = Sliding::new(3, secs(1));
    assert_eq!(limit.left(ms(0)), 3);
    assert!(limit.take(ms(0)));
    assert!(limit.take(ms(400)));
    assert_eq!(limit.left(ms(400)), 1);
    assert_eq!(limit.left(ms(1000)), 2);
    assert_eq!(limit.left(ms(5000)), 3);
    // Reading the future dropped nothing and moved no clock.
    assert_eq!(limit.entries.len(), 2);
    assert_eq!(limit.left(ms(400)), 1);
}

#[test]
fn next_is_when_the_oldest_event_leaves() {
    let mut limit = Sliding::new(2, secs(1));
    assert_eq!(limit.next(ms(0)), Duration::ZERO);
    assert!(limit.take(ms(100)));
    assert!(limit.take(ms(300)));
    assert_eq!(limit.next(ms(300)), ms(800));
    assert_eq!(limit.next(ms(1099)), ms(1));
    assert_eq!(limit.next(ms(1100)), Duration::ZERO);
    let wait = limit.next(ms(500));
    assert!(limit.take(ms(500) + wait));
}

#[test]
fn a_quota_of_zero_never_admits() {
    let mut limit = Sliding::new(0, secs(1));
    assert!(!limit.take(ms(0)));
    assert!(!limit.take(Duration::MAX));
    assert_eq!(limit.left(ms(0)), 0);
    assert_eq!(limit.next(ms(0)), Duration::MAX);
}

#[test]
fn a_window_below_a_nanosecond_is_raised_to_one() {
    let mut limit = Sliding::new(1, Duration::ZERO);
    assert_eq!(limit.window(), Duration::from_nanos(1));
    assert!(limit.take(Duration::from_nanos(5)));
    assert!(!limit.take(Duration::from_nanos(5)));
    assert_eq!(limit.next(Duration::from_nanos(5)), Duration::from_nanos(1));
    assert!(limit.take(Duration::from_nanos(6)));
}

#[test]
fn a_window_of_duration_max_holds_events_until_the_clock_runs_out() {
    let mut limit = Sliding::new(1, Duration::MAX);
    assert!(limit.take(Duration::from_nanos(1)));
    assert_eq!(limit.next(secs(0)), Duration::from_nanos(u64::MAX));
    assert!(!limit.take(secs(1_000_000_000)));
    // At the end of the clock's range the event at 1 ns is a nanosecond short of a
    // window old.
    assert!(!limit.take(Duration::from_nanos(u64::MAX)));
    assert!(!limit.take(Duration::MAX));
    let mut limit = Sliding::new(1, Duration::MAX);
    assert!(limit.take(Duration::ZERO));
    assert!(limit.take(Duration::MAX));
}

#[test]
fn reserves_at_most_4096_stamps_up_front() {
    assert!(Sliding::new(10, secs(1)).entries.capacity() >= 10);
    let huge = Sliding::new(u32::MAX, secs(1));
    assert!(huge.entries.capacity() >= 4096);
    assert!(huge.entries.capacity() < 8192);
}

#[test]
fn decisions_never_allocate_up_to_4096() {
    let mut limit = Sliding::new(4096, secs(1));
    let capacity = limit.entries.capacity();
    for round in 0..3 {
        // Each round frees the previous round's stamps one by one: the quota again.
        let admitted = (0..5000)
            .filter(|&i| limit.take(secs(round) + Duration::from_nanos(i)))
            .count();
        assert_eq!(admitted, 4096, "round {round}");
    }
    assert_eq!(limit.entries.capacity(), capacity);
    assert_eq!(limit.left(secs(2)), 0);
}

#[test]
fn grows_past_4096_on_demand_up_to_the_quota() {
    let mut limit = Sliding::new(5000, secs(1));
    for i in 0..5000 {
        assert!(limit.take(Duration::from_nanos(i)));
    }
    assert!(!limit.take(ms(1)));
    assert_eq!(limit.entries.len(), 5000);
}

#[test]
fn a_quota_of_u32_max_admits_without_reserving_it() {
    let mut limit = Sliding::new(u32::MAX, secs(1));
    for _ in 0..10_000 {
        assert!(limit.take(ms(0)));
    }
    assert_eq!(limit.left(ms(0)), u32::MAX - 10_000);
    assert_eq!(limit.next(ms(0)), Duration::ZERO);
}

#[test]
fn a_clock_going_backwards_never_frees_room() {
    let mut limit = Sliding::new(1, secs(10));
    assert!(limit.take(secs(100)));
    // Read as 100 s: the event is still inside.
    assert!(!limit.take(secs(0)));
    assert_eq!(limit.left(secs(0)), 0);
    assert_eq!(limit.next(secs(0)), secs(10));
    assert!(!limit.take(secs(109)));
    assert!(limit.take(secs(110)));
}

#[test]
fn survives_a_clock_at_the_end_of_its_range() {
    let mut limit = Sliding::new(2, secs(1));
    assert!(limit.take(Duration::MAX));
    assert!(limit.take(Duration::MAX));
    // Time has stopped, so the window never empties.
    assert!(!limit.take(Duration::MAX));
    assert_eq!(limit.next(Duration::MAX), secs(1));
    assert_eq!(limit.left(Duration::MAX), 0);
}

#[test]
fn idle_is_the_window_after_which_the_log_is_as_good_as_new() {
    let mut limit = Sliding::new(3, secs(10));
    let fresh = limit.clone();
    for t in [0, 4, 9] {
        assert!(limit.take(secs(t)));
    }
    assert_eq!(limit.idle(), secs(10));
    let later = secs(9) + limit.idle();
    assert_eq!(limit.left(later), fresh.left(later));
    assert_eq!(limit.next(later), fresh.next(later));
    assert_eq!(limit.left(later - Duration::from_nanos(1)), 2);
    assert_eq!(
        Sliding::new(0, Duration::ZERO).idle(),
        Duration::from_nanos(1)
    );
    assert_eq!(
        Sliding::new(5, Duration::MAX).idle(),
        Duration::from_nanos(u64::MAX)
    );
}

#[test]
fn a_lower_quota_keeps_the_newest_stamps_and_decides_as_if_it_kept_them_all() {
    let mut limit = Sliding::new(4, secs(10));
    for t in [0, 2, 4, 6] {
        assert!(limit.take(secs(t)));
    }
    limit.retune(2, secs(10), secs(7));
    assert_eq!(limit.entries, [(nanos(secs(4)), 1), (nanos(secs(6)), 1)]);
    // At 11 s a log of all four events holds three (2, 4 and 6 s); under a quota of 2 it
    // has room once only one is left, when the 4 s event leaves at 14 s.
    assert_eq!(limit.left(secs(11)), 0);
    assert_eq!(limit.next(secs(11)), secs(3));
    assert!(!limit.take(secs(14) - Duration::from_nanos(1)));
    assert!(limit.take(secs(14)));
    assert!(!limit.take(secs(14)));
}

#[test]
fn a_higher_quota_has_room_at_once_and_keeps_counting_the_stamps() {
    let mut limit = Sliding::new(2, secs(10));
    assert!(limit.take(secs(1)));
    assert!(limit.take(secs(2)));
    assert!(!limit.take(secs(3)));
    limit.retune(3, secs(10), secs(3));
    assert!(limit.take(secs(3)));
    assert!(!limit.take(secs(4)));
    assert_eq!(limit.next(secs(4)), secs(7));
}

#[test]
fn a_new_window_applies_to_the_kept_stamps_and_never_brings_one_back() {
    let mut limit = Sliding::new(2, secs(10));
    assert!(limit.take(secs(0)));
    assert!(limit.take(secs(8)));
    // At 12 s the 0 s event has left (though still in the ring): a longer window does
    // not bring it back.
    limit.retune(2, secs(60), secs(12));
    assert_eq!(limit.left(secs(12)), 1);
    assert_eq!(limit.left(secs(67)), 1);
    assert_eq!(limit.left(secs(68)), 2);
    // A shorter window lets the 8 s event go at 9 s.
    limit.retune(1, secs(1), secs(12));
    assert_eq!(limit.left(secs(12)), 1);
    assert!(limit.entries.len() <= 1);
}

#[test]
fn retuning_reads_a_clock_going_backwards_as_the_latest_seen() {
    let mut limit = Sliding::new(1, secs(10));
    assert!(limit.take(secs(100)));
    // Read as 100 s: the event is inside the old window and kept.
    limit.retune(1, secs(20), secs(0));
    assert!(!limit.take(secs(110)));
    assert!(limit.take(secs(120)));
}

#[test]
fn retuning_to_the_same_policy_changes_nothing() {
    let mut limit = Sliding::new(2, Duration::ZERO);
    assert!(limit.take(secs(5)));
    limit.retune(2, Duration::from_nanos(1), secs(9));
    // The clock did not move to 9 s: 5 s is still the latest seen.
    assert_eq!(limit.latest.get(), nanos(secs(5)));
    assert_eq!(limit.entries.len(), 1);
}

#[test]
fn retuning_keeps_the_reservation_new_would_make() {
    let mut limit = Sliding::new(10, secs(1));
    limit.retune(3000, secs(1), secs(0));
    assert!(limit.entries.capacity() >= 3000);
    let capacity = limit.entries.capacity();
    assert!((0..3000).all(|i| limit.take(Duration::from_nanos(i))));
    assert_eq!(limit.entries.capacity(), capacity);
    limit.retune(5, secs(1), ms(1));
    assert_eq!(limit.entries.len(), 5);
    assert!(limit.entries.capacity() < 3000);
    limit.retune(u32::MAX, secs(1), ms(1));
    assert!((4096..8192).contains(&limit.entries.capacity()));
    limit.retune(0, secs(1), ms(1));
    assert!(limit.entries.is_empty());
    assert!(!limit.take(ms(1)));
    assert_eq!(limit.next(ms(1)), Duration::MAX);
}

#[test]
fn a_clone_counts_independently() {
    let mut limit = Sliding::new(1, secs(1));
    let mut twin = limit.clone();
    assert!(limit.take(ms(0)));
    assert!(twin.take(ms(0)));
    assert!(!limit.take(ms(0)));
}

#[test]
fn a_refusal_gives_the_count_in_the_window_and_when_the_oldest_leaves() {
    let mut limit = Sliding::new(2, secs(1));
    assert!(limit.check(ms(100)).is_ok());
    assert!(limit.check(ms(300)).is_ok());
    let reason = limit.check(ms(500)).expect_err("two in the window");
    assert_eq!(
        reason,
        QuotaReason {
            count: 2,
            quota: 2,
            next: ms(600),
        }
    );
    assert_eq!(reason.next, limit.next(ms(500)));
    // A clock going backwards is read as the latest seen; the refused event is not counted.
    let reason = limit.check(ms(0)).expect_err("still two");
    assert_eq!((reason.count, reason.next), (2, ms(600)));
    assert!(limit.check(ms(1100)).is_ok());
}

#[test]
fn a_refusal_under_a_quota_of_zero_never_has_room() {
    let mut limit = Sliding::new(0, secs(1));
    let reason = limit.check(ms(5)).expect_err("a quota of 0");
    assert_eq!(
        (reason.count, reason.quota, reason.next),
        (0, 0, Duration::MAX)
    );
    // Lowered to 0 with stamps inside: the retune drops them all.
    let mut limit = Sliding::new(3, secs(1));
    assert!(limit.check(ms(0)).is_ok());
    limit.retune(0, secs(1), ms(1));
    assert_eq!(limit.check(ms(2)).unwrap_err().next, Duration::MAX);
}

#[test]
fn a_refusal_at_the_end_of_the_clock_waits_a_window() {
    let mut limit = Sliding::new(1, secs(1));
    assert!(limit.check(Duration::MAX).is_ok());
    assert_eq!(limit.check(Duration::MAX).unwrap_err().next, secs(1));
}

#[test]
fn a_lower_quota_keeps_the_newest_units_of_an_entry_shared_by_several_events() {
    let mut limit = Sliding::new(3, secs(10));
    assert!(limit.take(secs(1)));
    assert!(limit.take_n(secs(2), 2));
    limit.retune(1, secs(10), secs(2));
    assert_eq!(limit.entries, [(nanos(secs(2)), 1)]);
    // Raised again: one of the two units at 2 s is remembered, as a log of stamps would.
    limit.retune(5, secs(10), secs(3));
    assert_eq!(limit.left(secs(3)), 4);
    assert_eq!(limit.left(secs(12)), 5);
}
