//! Each built-in scenario's comparison points the way its summary says.
//!
//! The scenarios run at full size: the simulator covers their few hundred thousand calls in
//! a second or two of a debug build. `scale` is measured, not tested (see the README).

use std::time::Duration;

use ironward_sim::{Builtin, Focus, Report, VariantRun};

fn run(builtin: Builtin) -> Report {
    builtin.scenario().expect("the built-in reads").run(|_| {})
}

fn named<'a>(report: &'a Report, name: &str) -> &'a VariantRun {
    report
        .run(name)
        .unwrap_or_else(|| panic!("a variant called {name}"))
}

/// The largest rise from one second to the next in attempts reaching the backend.
fn rise(run: &VariantRun, focus: Focus) -> u64 {
    run.rows
        .windows(2)
        .filter(|w| focus.contains(w[1].start, run.variant.duration))
        .map(|w| w[1].admitted.saturating_sub(w[0].admitted))
        .max()
        .unwrap_or(0)
}

// The SRE book's "Handling Overload": adaptive throttling lets a recovering backend take load
// as it can; a breaker that closes at once sends it everything. The adaptive limiter in front
// of either breaker holds the load to what the cold backend serves in time.
#[test]
fn after_an_outage_the_classic_breaker_floods_the_backend_and_the_limiter_holds_either_breaker() {
    let report = run(Builtin::Outage);
    let focus = report.focus;
    let [sre, classic, sre_limiter, classic_limiter] =
        ["sre", "classic", "sre+limiter", "classic+limiter"].map(|name| named(&report, name));
    assert!(
        classic.sum(focus).peak_in_flight > sre.sum(focus).peak_in_flight,
        "peak inside the backend: classic {} vs SRE {}",
        classic.sum(focus).peak_in_flight,
        sre.sum(focus).peak_in_flight
    );
    assert!(
        rise(classic, focus) > rise(sre, focus),
        "largest one-second rise: classic {} vs SRE {}",
        rise(classic, focus),
        rise(sre, focus)
    );
    // Open, the classic breaker sends only its probes to the failing backend; the SRE
    // breaker's refusals grow as its window fills with failures, and never reach every call.
    let s = Duration::from_secs;
    let outage = Focus {
        from: s(60),
        to: s(120),
    };
    assert!(classic.sum(outage).admitted * 10 < sre.sum(outage).admitted);
    // After the recovery the limiter all but ends the attempts that fail or time out, and
    // more calls succeed, behind either breaker.
    let after = Focus {
        from: s(120),
        to: Duration::ZERO,
    };
    let lost = |run: &VariantRun| {
        let sum = run.sum(after);
        sum.timed_out + sum.refused.queue
    };
    for (alone, limited) in [(sre, sre_limiter), (classic, classic_limiter)] {
        assert!(lost(limited) * 100 < lost(alone), "{}", alone.variant.name);
        assert!(limited.sum(after).succeeded > alone.sum(after).succeeded);
    }
    let verdict = Builtin::Outage.verdict(&report).expect("all four variants");
    assert!(verdict.contains(&classic.sum(focus).peak_in_flight.to_string()));
    assert!(
        verdict.contains("classic let 187 attempts reach it"),
        "{verdict}"
    );
}

// go-zero's adaptive shedder: refuse early what cannot be served in time, keep the goodput.
#[test]
fn under_overload_the_shedder_keeps_the_goodput_that_a_full_queue_loses() {
    let report = run(Builtin::Overload);
    let focus = report.focus;
    let (shedder, none) = (named(&report, "shedder"), named(&report, "none"));
    let (s, n) = (shedder.sum(focus), none.sum(focus));
    assert!(
        s.succeeded >= n.succeeded,
        "{} vs {}",
        s.succeeded,
        n.succeeded
    );
    assert!(
        s.succeeded > 10 * n.succeeded,
        "a deep queue makes nearly every call wait past its timeout"
    );
    assert!(s.timed_out < n.timed_out / 10);
    assert!(s.refused.shedder > 0 && n.refused.shedder == 0);
    // The typical second's tail latency stays near the service time with the shedder.
    let median_p99 = |run: &VariantRun| {
        let mut each: Vec<Duration> = run
            .rows
            .iter()
            .filter(|r| focus.contains(r.start, run.variant.duration))
            .filter_map(|r| r.p99)
            .collect();
        each.sort();
        each[each.len() / 2]
    };
    assert!(median_p99(shedder) < median_p99(none));
    assert!(Builtin::Overload.verdict(&report).is_some());
}

// AWS Architecture Blog, "Exponential Backoff and Jitter" (2015): jitter cuts the calls made
// and the time to finish.
#[test]
fn full_and_decorrelated_jitter_make_fewer_calls_and_finish_sooner_than_rigid_backoff() {
    let report = run(Builtin::RetryStorm);
    let attempts = |name| named(&report, name).total().attempts();
    let done = |name| named(&report, name).last_end.expect("calls ended");
    for jittered in ["full", "decorrelated"] {
        assert!(attempts(jittered) < attempts("rigid"), "{jittered}");
        assert!(done(jittered) < done("rigid"), "{jittered}");
    }
    for run in &report.runs {
        let total = run.total();
        assert_eq!(total.offered, 1000);
        assert_eq!(
            total.succeeded, 1000,
            "{} gives up on no call",
            run.variant.name
        );
    }
    assert!(Builtin::RetryStorm.verdict(&report).is_some());
}

// go-zero's periodlimit.go trades exactness for cost: a client can spend a quota at the end
// of one period and another at the start of the next. An exact sliding window cannot.
#[test]
fn a_fixed_period_lets_up_to_twice_the_quota_across_its_boundary_and_a_sliding_window_never_more_than_the_quota()
 {
    let report = run(Builtin::Quota);
    let peak = |name| named(&report, name).peak_window;
    assert!(peak("sliding") <= 100, "{}", peak("sliding"));
    assert!(
        peak("period") > 150 && peak("period") <= 200,
        "{}",
        peak("period")
    );
    // The bucket lets its burst through and then its rate: between the two.
    assert!(peak("bucket") > peak("sliding") && peak("bucket") < peak("period"));
    assert!(Builtin::Quota.verdict(&report).is_some());
}

#[test]
fn the_scale_scenario_runs_a_breaker_and_a_shedder_at_ten_thousand_calls_a_second() {
    let mut scenario = Builtin::Scale.scenario().unwrap();
    scenario.variants[0].duration = Duration::from_secs(2);
    let policies = scenario.variants[0].policies.clone();
    assert!(policies.breaker.is_some() && policies.shedder.is_some());
    let total = scenario.run(|_| {}).runs[0].total();
    assert!(
        (19_000..21_000).contains(&total.offered),
        "{}",
        total.offered
    );
}

// latency-shift's first two variants are both Vegas and differ in the probe alone: their names
// say which probes (both were once named as though one were not Vegas).
#[test]
fn latency_shift_names_its_two_vegas_variants_for_the_probe() {
    let scenario = Builtin::LatencyShift.scenario().unwrap();
    let limiter = |name: &str| {
        let variant = scenario.variants.iter().find(|v| v.name == name);
        variant
            .unwrap_or_else(|| panic!("a variant called {name}"))
            .policies
            .limiter
            .expect("a limiter")
    };
    let (probed, bare) = (limiter("vegas-probe"), limiter("vegas-no-probe"));
    assert!(probed.probe > Duration::ZERO);
    assert_eq!(bare.probe, Duration::ZERO);
    assert_eq!(
        ironward::Adaptive {
            probe: probed.probe,
            ..bare
        },
        probed
    );
}

// Polly's Simmy, in the simulator: 15 % of the attempts that leave the client fail, hang,
// wait or come back failed. Retries win back nearly every call the faults hit, and the
// breaker, hearing scattered failures rather than an outage, refuses nothing.
#[test]
fn under_mixed_chaos_the_retries_absorb_the_faults_and_the_breaker_stays_closed() {
    let report = run(Builtin::Chaos);
    let [calm, retries, once] =
        ["calm", "retries", "no-retries"].map(|n| named(&report, n).total());
    assert_eq!(calm.injected.total(), 0);
    for sum in [retries, once] {
        let share = sum.injected.total() as f64 / sum.attempts() as f64;
        assert!(
            (0.13..0.17).contains(&share),
            "15 % of the attempts: {sum:?}"
        );
        let i = sum.injected;
        assert!(
            i.error > 0 && i.latency > 0 && i.abort > 0 && i.replace > 0,
            "{i:?}"
        );
        assert_eq!(sum.refused.breaker, 0, "scattered faults never open it");
    }
    let share = |s: &ironward_sim::Sum| s.succeeded as f64 / s.offered as f64;
    assert!(share(&calm) > 0.999, "{calm:?}");
    assert!(share(&retries) > 0.99, "{retries:?}");
    assert!(share(&once) < 0.9, "{once:?}");
    assert!(retries.gave_up * 20 < once.gave_up, "{retries:?} {once:?}");
    let verdict = Builtin::Chaos.verdict(&report).unwrap();
    let verdict = verdict.split_whitespace().collect::<Vec<_>>().join(" ");
    let (r, o) = (retries.succeeded, once.succeeded);
    let figure = |n: u64| {
        let s = n.to_string();
        format!("{},{}", &s[..s.len() - 3], &s[s.len() - 3..])
    };
    assert!(
        verdict.contains(&format!("retries {} (", figure(r)))
            && verdict.contains(&format!("no-retries {} (", figure(o))),
        "{verdict}"
    );
    assert!(
        verdict.contains("The breaker refused no attempt in either"),
        "{verdict}"
    );
    assert!(
        verdict.contains("The retries absorbed the faults"),
        "{verdict}"
    );
}
