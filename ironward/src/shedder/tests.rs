//! Unit tests of `shedder` that need its private items.

use alloc::string::ToString;
use alloc::vec::Vec;

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

// A virtual-clock sequence with the preset (go-zero adaptiveshedder_test
// drives the same rules with its own clock).
#[test]
fn reproduces_the_virtual_clock_sequence() {
    let mut shedder = Shedder::new(SHED, ms(0));
    let mut tickets: [Option<Ticket>; 100] = core::array::from_fn(|_| None);
    for ticket in &mut tickets {
        *ticket = Some(shedder.allow(ms(0), 950).expect("average 0 is not full"));
    }
    assert_eq!(shedder.flying(), 100);
    assert_eq!(shedder.average(), 0.0);

    for ticket in tickets.iter_mut().take(50) {
        shedder.pass(ticket.take().expect("let through"), ms(50));
    }
    assert_eq!(shedder.flying(), 50);
    assert_eq!(shedder.average(), 58.43823850240212);

    // The bucket of the passes is still the current one: max_pass 1, min_rt 1000 ms,
    // max_flight 10, factor 0.5.
    assert_eq!(shedder.capacity(nanos(ms(60)), 950), 5.0);
    assert!(shedder.allow(ms(60), 950).is_none());
    // Cool CPU, but it refused within the last second: still hot.
    assert!(shedder.allow(ms(60), 0).is_none());
    // Bucket 0 is visible now: max_pass 50, min_rt 50 ms, max_flight 25, m 12.5.
    assert_eq!(shedder.capacity(nanos(ms(150)), 950), 12.5);
    assert!(shedder.allow(ms(150), 950).is_none());
    // 911 ms since the CPU was last hot.
    assert!(shedder.allow(ms(1061), 0).is_none());
    // 1000 ms since: cooled.
    let ticket = shedder.allow(ms(1150), 0).expect("cooled off");
    assert_eq!(shedder.flying(), 51);
    assert_eq!(ticket.start(), ms(1150));
}

// The moving-average case: go-zero adaptiveshedder_test's TestAdaptiveShedderAddFlying
// arithmetic with 1 − beta taken from the f64 beta.
#[test]
fn reproduces_the_moving_average_case() {
    let mut shedder = Shedder::new(SHED, ms(0));
    let a = shedder.allow(ms(0), 0).expect("idle");
    let b = shedder.allow(ms(0), 0).expect("idle");
    let c = shedder.allow(ms(0), 0).expect("idle");
    shedder.pass(a, ms(1));
    assert_eq!(shedder.average(), 0.19999999999999996);
    shedder.pass(b, ms(1));
    assert_eq!(shedder.average(), 0.2799999999999999);
    shedder.fail(c);
    assert_eq!(shedder.average(), 0.25199999999999995);
    assert_eq!(shedder.flying(), 0);
}

#[test]
fn the_kept_extremes_match_a_scan_of_the_window() {
    for size in [1, 3, 40, 100] {
        let mut shedder = Shedder::new(Shed { size, ..SHED }, ms(0));
        let mut flying = alloc::collections::VecDeque::new();
        let mut walk = crate::internal::walk::Walk::new();
        for step in 0..20_000u64 {
            let (now, x) = walk.step();
            // Sometimes a clock that steps back, which reads as the latest.
            let at = ms(now.saturating_sub(x >> 62));
            // Hot in alternate phases, so capacity is read on most calls.
            let cpu = if (step / 500) % 2 == 0 { 950 } else { 300 };
            if let Some(ticket) = shedder.allow(at, cpu) {
                flying.push_back(ticket);
            }
            // Settle the oldest calls in bursts, so buckets differ in passes and means.
            for _ in 0..(x >> 61) {
                match flying.pop_front() {
                    Some(ticket) if x & 1 == 0 => assert!(shedder.pass(ticket, at).is_none()),
                    Some(ticket) => assert!(shedder.fail(ticket).is_none()),
                    None => break,
                }
            }
            let latest = shedder.clock.get();
            let kept = shedder.capacity(latest, 1000);
            let (max_pass, min_rt) = shedder.scan(latest);
            let width = shedder.window.width_nanos() as f64;
            let scanned = (max_pass as f64 * min_rt / width).max(1.0) * 0.1;
            assert_eq!(kept, scanned, "size {size}, step {step}");
        }
    }
}

#[test]
fn a_queue_on_a_cool_cpu_refuses_nothing() {
    let mut shedder = Shedder::new(SHED, ms(0));
    let mut tickets = core::array::from_fn::<_, 200, _>(|_| shedder.allow(ms(0), 100));
    assert!(tickets.iter().all(Option::is_some));
    for ticket in tickets.iter_mut().skip(1) {
        shedder.pass(ticket.take().expect("let through"), ms(10));
    }
    assert!(shedder.allow(ms(20), 899).is_some());
}

#[test]
fn the_overload_factor_never_goes_under_the_floor() {
    let shedder = Shedder::new(SHED, ms(0));
    assert_eq!(shedder.factor(900), 1.0);
    assert_eq!(shedder.factor(500), 1.0);
    assert_eq!(shedder.factor(950), 0.5);
    assert_eq!(shedder.factor(1000), 0.1);
    let wide = Shedder::new(Shed { cpu: 1000, ..SHED }, ms(0));
    assert_eq!(wide.factor(1000), 1.0);
    let never = Shedder::new(
        Shed {
            cpu: u32::MAX,
            ..SHED
        },
        ms(0),
    );
    assert_eq!(never.factor(1000), 1.0);
}

#[test]
fn cpu_readings_over_1000_are_read_as_1000() {
    let mut a = Shedder::new(SHED, ms(0));
    let mut b = Shedder::new(SHED, ms(0));
    for _ in 0..20 {
        let x = a.allow(ms(0), 1000).expect("empty");
        let y = b.allow(ms(0), u32::MAX).expect("empty");
        a.pass(x, ms(0));
        b.pass(y, ms(0));
    }
    assert_eq!(a.capacity(0, 1000), b.capacity(0, 1000));
    assert_eq!(a.average(), b.average());
}

#[test]
fn minimum_response_time_never_exceeds_the_assumed_latency() {
    let mut shedder = Shedder::new(SHED, ms(0));
    let ticket = shedder.allow(ms(0), 0).expect("idle");
    shedder.pass(ticket, ms(3000));
    // The 3 s call is slower than the assumed 1 s, so the assumption stands.
    assert_eq!(shedder.capacity(nanos(ms(3100)), 0), 10.0);
}

#[test]
fn settling_more_than_was_let_through_never_underflows() {
    let mut shedder = Shedder::new(SHED, ms(0));
    let ticket = shedder.allow(ms(0), 0).expect("idle");
    assert!(shedder.fail(ticket).is_none());
    // A ticket forged with this shedder's mark: the count saturates at 0.
    let shedder_mark = shedder.owner.mark();
    let forged = Ticket {
        start: 0,
        shedder: shedder_mark,
    };
    assert!(shedder.fail(forged).is_none());
    assert_eq!(shedder.flying(), 0);
}

#[test]
fn a_clock_going_backwards_never_measures_a_negative_response_time() {
    let mut shedder = Shedder::new(SHED, ms(500));
    let ticket = shedder.allow(ms(500), 0).expect("idle");
    shedder.pass(ticket, ms(100));
    assert_eq!(shedder.window.slot(ms(500)).sum, 0);
    // And the cooling time is measured from the latest reading.
    assert!(shedder.allow(ms(400), 950).is_some());
    assert_eq!(shedder.hot, Some(nanos(ms(500))));
}

#[test]
fn a_huge_size_is_lowered_to_the_most_buckets_a_window_holds() {
    for size in [usize::MAX, 1 << 61, crate::window::MAX_SIZE + 1] {
        let mut shedder = Shedder::new(Shed { size, ..SHED }, ms(0));
        assert_eq!(shedder.window.size(), crate::window::MAX_SIZE);
        for i in 0..200 {
            if let Some(ticket) = shedder.allow(ms(i), 950) {
                shedder.pass(ticket, ms(i + 1));
            }
        }
        assert_eq!(shedder.flying(), 0);
    }
}

#[test]
fn hostile_policies_do_not_panic() {
    let hostile = Shed {
        size: 0,
        window: Duration::ZERO,
        cpu: 0,
        latency: Duration::MAX,
        beta: f64::NAN,
        cool: Duration::MAX,
        floor: f64::NAN,
        shares: Shares {
            sheddable: f64::NAN,
            sheddable_concurrent: f64::INFINITY,
            critical: -0.0,
            critical_plus: f64::NEG_INFINITY,
        },
    };
    let mut shedder = Shedder::new(hostile, Duration::MAX);
    for cpu in [0, 500, 1000, u32::MAX] {
        if let Some(ticket) = shedder.allow(Duration::MAX, cpu) {
            shedder.pass(ticket, Duration::MAX);
        }
    }
    // A NaN beta is 1: the average stays at 0.
    assert_eq!(shedder.average(), 0.0);
}

/// A shedder under `shed` whose window holds one busy bucket, with `flying` calls still
/// in flight at 200 ms and a CPU that was hot: refusing under the preset.
fn loaded(shed: Shed, flying: usize) -> (Shedder, alloc::vec::Vec<Ticket>) {
    let mut shedder = Shedder::new(shed, ms(0));
    let mut open = alloc::vec::Vec::new();
    for _ in 0..flying + 20 {
        open.extend(shedder.allow(ms(0), 0));
    }
    for ticket in open.drain(..20) {
        shedder.pass(ticket, ms(50));
    }
    (shedder, open)
}

// Edge cases: a NaN `beta` is 1, the value that sheds least, which keeps the moving
// average at 0: the shedder never sheds.
#[test]
fn a_nan_beta_never_sheds() {
    let (mut preset, _open) = loaded(SHED, 200);
    assert!(
        preset.allow(ms(200), 1000).is_none(),
        "the preset sheds here"
    );
    for beta in [f64::NAN, f64::INFINITY, 1.0, 2.0] {
        let (mut shedder, mut open) = loaded(Shed { beta, ..SHED }, 200);
        assert_eq!(shedder.average(), 0.0, "beta {beta}");
        for i in 0..500 {
            let ticket = shedder.allow(ms(200 + i), 1000).expect("never sheds");
            open.push(ticket);
            if i % 3 == 0 {
                shedder.pass(open.swap_remove(0), ms(200 + i));
            }
        }
        assert_eq!(shedder.average(), 0.0, "beta {beta}");
    }
}

// Edge cases: a `beta` below 0 (`-inf` included) is 0: the average is the count in
// flight, never a NaN or an infinity.
#[test]
fn a_negative_beta_is_read_as_zero() {
    for beta in [-0.5, -1e300, f64::NEG_INFINITY] {
        let (mut hostile, _a) = loaded(Shed { beta, ..SHED }, 200);
        let (mut zero, _b) = loaded(Shed { beta: 0.0, ..SHED }, 200);
        assert_eq!(hostile.average(), zero.average(), "beta {beta}");
        assert_eq!(hostile.average(), 200.0, "beta {beta}");
        assert_eq!(
            hostile.allow(ms(200), 1000).is_some(),
            zero.allow(ms(200), 1000).is_some()
        );
    }
}

// Edge cases: a NaN `floor` is 1, the value that sheds least: the whole capacity is kept
// however hot the CPU runs. One above 1 is 1, one below 0 is 0.
#[test]
fn the_floor_is_held_to_a_fraction_and_nan_keeps_the_whole_capacity() {
    for (floor, read) in [
        (f64::NAN, 1.0),
        (f64::INFINITY, 1.0),
        (7.0, 1.0),
        (-0.5, 0.0),
        (f64::NEG_INFINITY, 0.0),
    ] {
        let shedder = Shedder::new(Shed { floor, ..SHED }, ms(0));
        let expected = Shedder::new(
            Shed {
                floor: read,
                ..SHED
            },
            ms(0),
        );
        for cpu in [0, 900, 950, 999, 1000] {
            assert_eq!(shedder.factor(cpu), expected.factor(cpu), "floor {floor}");
        }
        assert_eq!(shedder.factor(1000), read, "floor {floor}");
        let (mut a, _a) = loaded(Shed { floor, ..SHED }, 200);
        let (mut b, _b) = loaded(
            Shed {
                floor: read,
                ..SHED
            },
            200,
        );
        assert_eq!(
            a.capacity(nanos(ms(200)), 1000),
            b.capacity(nanos(ms(200)), 1000)
        );
    }
}

/// Every bucket still in the window at `now`, the current one included, oldest first.
fn buckets(shedder: &Shedder, now: u64) -> alloc::vec::Vec<Total> {
    let mut seen = alloc::vec::Vec::new();
    shedder.window.visit(now, true, |bucket| seen.push(*bucket));
    seen
}

/// Passes `count` calls started at `start` at `at`, each taking `at − start`.
fn passes(shedder: &mut Shedder, start: u64, at: u64, count: usize) {
    let tickets: alloc::vec::Vec<_> = (0..count)
        .map(|_| shedder.allow(ms(start), 0).expect("a cool CPU"))
        .collect();
    for ticket in tickets {
        shedder.pass(ticket, ms(at));
    }
}

#[test]
fn retuning_the_constants_keeps_the_flight_the_heat_and_the_windows() {
    let (mut shedder, _open) = loaded(SHED, 200);
    assert!(shedder.allow(ms(200), 950).is_none(), "hot and full");
    let twin = shedder.clone();
    shedder.retune(Shed { cpu: 960, ..SHED }, ms(300));
    assert_eq!(shedder.flying(), twin.flying());
    assert_eq!(shedder.average(), twin.average());
    assert_eq!((shedder.hot, shedder.dropped), (twin.hot, twin.dropped));
    assert_eq!(
        shedder.clock, twin.clock,
        "the windows stay: no clock is read"
    );
    let now = nanos(ms(300));
    assert_eq!(buckets(&shedder, now), buckets(&twin, now));
    assert_eq!(shedder.scan(now), twin.scan(now));
    // 950 ‰ is under the new threshold, but the shedder refused 100 ms ago: still hot.
    assert!(shedder.clone().allow(ms(300), 950).is_none());
    // A shorter cooling time applies to the time already spent cooling.
    shedder.retune(
        Shed {
            cpu: 960,
            cool: ms(100),
            ..SHED
        },
        ms(300),
    );
    assert!(shedder.allow(ms(300), 950).is_some());
}

#[test]
fn a_new_count_of_the_same_width_keeps_the_newest_buckets() {
    let mut shedder = Shedder::new(SHED, ms(0));
    passes(&mut shedder, 0, 50, 5); // bucket [0, 100): 5 passes of 50 ms
    passes(&mut shedder, 130, 150, 3); // [100, 200): 3 of 20 ms
    passes(&mut shedder, 200, 290, 8); // [200, 300): 8 of 90 ms
    passes(&mut shedder, 300, 310, 1); // [300, 400), still current at 350 ms
    let now = nanos(ms(350));
    assert_eq!(shedder.scan(now), (8, 20e6));
    // Two buckets of 100 ms: the current one and [200, 300).
    let fewer = Shed {
        size: 2,
        window: ms(200),
        ..SHED
    };
    shedder.retune(fewer, ms(350));
    assert_eq!(
        buckets(&shedder, now),
        [
            Total {
                sum: 8 * 90_000_000,
                count: 8
            },
            Total {
                sum: 10_000_000,
                count: 1
            }
        ]
    );
    assert_eq!(shedder.scan(now), (8, 90e6));
    // The kept extremes agree with the scan (`capacity` asserts it): 8 · 90 / 100.
    assert_eq!(shedder.capacity(now, 0), 7.2);
    // Back to fifty: the buckets that left do not come back.
    shedder.retune(SHED, ms(350));
    assert_eq!(buckets(&shedder, now).len(), 50);
    assert_eq!(shedder.scan(now), (8, 90e6));
    // At 400 ms the current bucket ends and counts: the fastest is 10 ms now, and
    // 8 · 10 / 100 is raised to 1.
    assert_eq!(shedder.scan(nanos(ms(400))), (8, 10e6));
    assert_eq!(shedder.capacity(nanos(ms(400)), 0), 1.0);
}

#[test]
fn a_new_width_starts_the_windows_afresh_and_keeps_the_flight() {
    let mut shedder = Shedder::new(SHED, ms(0));
    passes(&mut shedder, 0, 50, 5);
    let open = shedder.allow(ms(60), 0).expect("a cool CPU");
    let average = shedder.average();
    shedder.retune(
        Shed {
            window: Duration::from_secs(10),
            ..SHED
        },
        ms(150),
    );
    assert_eq!((shedder.flying(), shedder.average()), (1, average));
    assert_eq!(shedder.window.width(), ms(200));
    assert_eq!(shedder.window.newest().0, nanos(ms(150)));
    // As a new shedder assumes: one pass a bucket, the assumed latency.
    let now = nanos(ms(150));
    assert_eq!(shedder.scan(now), (1, 1e9));
    assert_eq!(shedder.capacity(now, 0), 5.0);
    shedder.pass(open, ms(200));
    // The call that started before the retune counts with its whole response time.
    assert_eq!(shedder.scan(nanos(ms(350))), (1, 140e6));
    assert_eq!(shedder.capacity(nanos(ms(350)), 0), 1.0);
}

#[test]
fn rebuilding_the_windows_reads_a_clock_going_backwards_as_the_latest_seen() {
    let mut shedder = Shedder::new(SHED, ms(0));
    passes(&mut shedder, 400, 420, 2);
    shedder.retune(
        Shed {
            size: 10,
            window: ms(1000),
            ..SHED
        },
        ms(100),
    );
    // Read as 420 ms: the bucket of 400 ms is the current one, kept.
    assert_eq!(shedder.window.newest().0, nanos(ms(400)));
    assert_eq!(buckets(&shedder, nanos(ms(420)))[9].count, 2);
    shedder.retune(SHED, ms(0));
    assert_eq!(shedder.clock.get(), nanos(ms(420)));
}

#[test]
fn the_kept_extremes_match_a_scan_of_the_window_across_retunes() {
    let policies = [
        SHED,
        Shed { size: 3, ..SHED },
        Shed {
            size: 3,
            window: ms(300),
            ..SHED
        },
        Shed {
            size: 120,
            window: ms(12_000),
            ..SHED
        },
        Shed {
            size: 7,
            window: ms(1_000),
            beta: 0.5,
            ..SHED
        },
        Shed {
            size: 1,
            window: ms(50),
            ..SHED
        },
    ];
    let mut shedder = Shedder::new(SHED, ms(0));
    let mut flying = alloc::collections::VecDeque::new();
    let mut walk = crate::internal::walk::Walk::new();
    for step in 0..20_000u64 {
        let (now, x) = walk.step();
        let at = ms(now.saturating_sub(x >> 62));
        if step % 211 == 0 {
            let before = (shedder.flying(), shedder.average());
            shedder.retune(policies[(x >> 40) as usize % policies.len()], at);
            assert_eq!((shedder.flying(), shedder.average()), before);
        }
        let cpu = if (step / 500) % 2 == 0 { 950 } else { 300 };
        if let Some(ticket) = shedder.allow(at, cpu) {
            flying.push_back(ticket);
        }
        for _ in 0..(x >> 61) {
            match flying.pop_front() {
                Some(ticket) if x & 1 == 0 => assert!(shedder.pass(ticket, at).is_none()),
                Some(ticket) => assert!(shedder.fail(ticket).is_none()),
                None => break,
            }
        }
        let latest = shedder.clock.get();
        let kept = shedder.capacity(latest, 1000);
        let (max_pass, min_rt) = shedder.scan(latest);
        let width = shedder.window.width_nanos() as f64;
        let scanned = (max_pass as f64 * min_rt / width).max(1.0) * 0.1;
        assert_eq!(kept, scanned, "step {step}");
    }
}

#[test]
fn hostile_retunes_do_not_panic() {
    let (mut shedder, open) = loaded(SHED, 20);
    for (size, window, beta, floor) in [
        (usize::MAX, Duration::MAX, f64::NAN, f64::NAN),
        (0, Duration::ZERO, f64::INFINITY, -1.0),
        (1 << 61, Duration::from_nanos(3), -1.0, 2.0),
        (50, Duration::MAX, 0.5, 0.5),
        (1, Duration::ZERO, 0.9, 0.1),
    ] {
        let shed = Shed {
            size,
            window,
            beta,
            floor,
            cpu: u32::MAX,
            latency: Duration::MAX,
            cool: Duration::MAX,
            shares: SHARES,
        };
        shedder.retune(shed, ms(300));
        assert!(shedder.window.fits(size, window));
        assert_eq!(shedder.flying(), 20);
        let _ = shedder.capacity(nanos(ms(300)), 1000);
    }
    shedder.retune(SHED, Duration::MAX);
    for ticket in open {
        shedder.pass(ticket, Duration::MAX);
    }
    assert_eq!(shedder.flying(), 0);
}

// The reasons along the virtual-clock sequence above (go-zero adaptiveshedder_test
// drives the same rules with its own clock): each is the numbers the refusal used.
#[test]
fn a_refusal_gives_the_numbers_of_the_virtual_clock_sequence() {
    let mut shedder = Shedder::new(SHED, ms(0));
    let mut tickets: [Option<Ticket>; 100] = core::array::from_fn(|_| None);
    for ticket in &mut tickets {
        *ticket = Some(shedder.check(ms(0), 950).expect("average 0 is not full"));
    }
    for ticket in tickets.iter_mut().take(50) {
        shedder.pass(ticket.take().expect("let through"), ms(50));
    }
    let average = 58.43823850240212;
    // max_pass 1, min_rt 1000 ms, max_flight 10, factor 0.5.
    let hot = ShedReason {
        cpu: 950,
        flying: 50,
        average,
        capacity: 5.0,
        overloaded: true,
        cooling: false,
        criticality: Criticality::Critical,
        floor: Criticality::Sheddable,
    };
    assert_eq!(shedder.check(ms(60), 950).unwrap_err(), hot);
    // A cool CPU, still hot from the refusal: factor 1, so the whole max_flight.
    let cooling = ShedReason {
        cpu: 0,
        capacity: 10.0,
        overloaded: false,
        cooling: true,
        // The first refusal raised the floor to the class it refused.
        floor: Criticality::Critical,
        ..hot
    };
    assert_eq!(shedder.check(ms(60), 0).unwrap_err(), cooling);
    // Bucket 0 is visible now: max_pass 50, min_rt 50 ms, max_flight 25, m 12.5; a reading
    // over 1000 is read as 1000, where the factor is the floor.
    assert_eq!(
        shedder.check(ms(150), 950).unwrap_err(),
        ShedReason {
            capacity: 12.5,
            floor: Criticality::Critical,
            ..hot
        }
    );
    assert_eq!(
        shedder.check(ms(150), u32::MAX).unwrap_err(),
        ShedReason {
            cpu: 1000,
            capacity: 2.5,
            floor: Criticality::Critical,
            ..hot
        }
    );
    assert!(shedder.check(ms(1150), 0).is_ok(), "cooled off");
}

#[test]
fn allow_is_check_with_the_reason_discarded() {
    let mut shedder = Shedder::new(SHED, ms(0));
    let mut twin = shedder.clone();
    let mut open = alloc::vec::Vec::new();
    let mut walk = crate::internal::walk::Walk::new();
    let mut refused = 0;
    for step in 0..5_000u64 {
        let (now, x) = walk.step();
        let cpu = if (step / 500) % 2 == 0 { 950 } else { 300 };
        let (a, b) = (shedder.allow(ms(now), cpu), twin.check(ms(now), cpu));
        assert_eq!(a.is_some(), b.is_ok(), "step {step}");
        refused += usize::from(a.is_none());
        if let (Some(a), Ok(b)) = (a, b) {
            open.push((a, b));
        }
        for _ in 0..(x >> 62) {
            if let Some((a, b)) = open.pop() {
                shedder.pass(a, ms(now));
                twin.pass(b, ms(now));
            }
        }
        assert_eq!(shedder.average().to_bits(), twin.average().to_bits());
    }
    assert!(refused > 0, "the walk refuses some calls");
}

/// A hot shedder with `flying` calls in flight and a moving average well over the assumed
/// capacity of 5 (1 s latency, one pass a 100 ms bucket, halved at 950 ‰).
fn hot_with(flying: usize) -> (Shedder, Vec<Ticket>) {
    let mut shedder = Shedder::new(SHED, ms(0));
    let mut tickets: Vec<_> = (0..100)
        .map(|_| shedder.check(ms(0), 950).expect("average 0 is not full"))
        .collect();
    for ticket in tickets.drain(..100 - flying) {
        shedder.pass(ticket, ms(50));
    }
    assert!(shedder.average() > 5.0);
    (shedder, tickets)
}

#[test]
fn the_sheddable_meet_a_full_server_first() {
    // 4 in flight: over the sheddable's 2.5 and the sheddable-concurrent's 3.75, under the
    // critical classes' 5.
    let (mut shedder, tickets) = hot_with(4);
    for class in [Criticality::Sheddable, Criticality::SheddableConcurrent] {
        let reason = shedder.check_as(ms(60), 950, class).unwrap_err();
        assert_eq!(reason.capacity, 5.0 * SHARES.of(class));
        assert_eq!(reason.criticality, class);
    }
    let critical = shedder
        .check_as(ms(60), 950, Criticality::Critical)
        .expect("room");
    let plus = shedder
        .check_as(ms(60), 950, Criticality::CriticalPlus)
        .expect("room");
    assert_eq!(shedder.flying(), 6);
    drop((tickets, critical, plus));
}

#[test]
fn a_refused_class_keeps_the_less_critical_out_for_the_cooling_time() {
    let (mut shedder, tickets) = hot_with(6);
    let reason = shedder.check(ms(60), 950).unwrap_err();
    assert_eq!(
        (reason.criticality, reason.floor),
        (Criticality::Critical, Criticality::Sheddable)
    );
    // Cool CPU, nothing in flight: the floor alone refuses the sheddable for 1 s.
    for ticket in tickets {
        shedder.pass(ticket, ms(70));
    }
    let floored = shedder
        .check_as(ms(80), 0, Criticality::SheddableConcurrent)
        .unwrap_err();
    assert_eq!(floored.floor, Criticality::Critical);
    assert_eq!(
        floored.to_string(),
        "shedder refused a sheddable_concurrent call: classes below critical are refused after a refusal (0 in flight)"
    );
    // The critical themselves are not floored.
    let critical = shedder
        .check(ms(80), 0)
        .expect("room for the refused class");
    shedder.pass(critical, ms(90));
    // Cooled a class at a time: 1 s after the critical refusal the sheddable-concurrent are
    // back, and 1 s after the sheddable-concurrent one (at 80 ms) the sheddable. (Each
    // refusal by the floor counts as one of its class.)
    let concurrent = shedder
        .check_as(ms(1_060), 0, Criticality::SheddableConcurrent)
        .expect("cooled");
    let held = shedder
        .check_as(ms(1_060), 0, Criticality::Sheddable)
        .unwrap_err();
    assert_eq!(held.floor, Criticality::SheddableConcurrent);
    let back = shedder
        .check_as(ms(1_080), 0, Criticality::Sheddable)
        .expect("cooled");
    shedder.pass(back, ms(1_090));
    shedder.pass(concurrent, ms(1_090));
}

#[test]
fn without_a_class_the_shedder_decides_as_a_critical_call() {
    let (mut a, ta) = hot_with(6);
    let (mut b, tb) = hot_with(6);
    for (step, cpu) in [(60, 950), (61, 0), (150, 1000), (900, 0), (1_200, 950)] {
        let x = a.check(ms(step), cpu).map(|t| t.start());
        let y = b
            .check_as(ms(step), cpu, Criticality::Critical)
            .map(|t| t.start());
        assert_eq!(x, y, "at {step} ms");
    }
    drop((ta, tb));
}
