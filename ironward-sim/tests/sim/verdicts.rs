//! Each built-in's verdict states only what its run measured: cut short of the stretch it
//! reads, it concludes nothing; given variants that contradict what the scenario expects, it
//! says what the figures say, not what was expected.

use std::time::Duration;

use ironward::Jitter;
use ironward_sim::{Builtin, Report, Scenario, Variant, summary};

fn scenario(builtin: Builtin) -> Scenario {
    builtin.scenario().expect("the built-in reads")
}

/// The built-in cut to `duration`, as `run NAME --duration` does.
fn cut(builtin: Builtin, duration: Duration) -> Report {
    let mut scenario = scenario(builtin);
    for variant in &mut scenario.variants {
        variant.duration = duration;
    }
    scenario.run(|_| {})
}

/// The verdict's text with its lines joined, so that a phrase reads whole wherever the
/// text was wrapped.
fn verdict(builtin: Builtin, report: &Report) -> String {
    let text = builtin.verdict(report).expect("every variant it needs");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn variant<'a>(scenario: &'a mut Scenario, name: &str) -> &'a mut Variant {
    scenario
        .variants
        .iter_mut()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("a variant called {name}"))
}

/// Whether `text` holds none of `claims`.
fn claims_none(text: &str, claims: &[&str]) -> bool {
    claims.iter().all(|claim| !text.contains(claim))
}

// `run outage --duration 2m` ends where the recovery it reads begins.
#[test]
fn an_outage_cut_before_the_recovery_concludes_nothing_from_it() {
    let report = cut(Builtin::Outage, Duration::from_secs(120));
    let text = verdict(Builtin::Outage, &report);
    assert!(text.starts_with("No conclusion"), "{text}");
    assert!(text.contains("120 s to 130 s"), "{text}");
    assert!(
        claims_none(&text, &["loaded faster", "Closing at once", "timed out"]),
        "{text}"
    );
    assert!(
        summary(&report).contains("not inside the run, which ends at 120 s"),
        "{}",
        summary(&report)
    );
}

// The variants keep their names but swap breakers: the figures now point the other way, and
// the verdict follows them, with no word on how each policy behaves.
#[test]
fn an_outage_with_the_breakers_swapped_says_the_variant_named_sre_loaded_the_backend_faster() {
    let mut swapped = scenario(Builtin::Outage);
    let sre = variant(&mut swapped, "sre").policies.breaker;
    let classic = variant(&mut swapped, "classic").policies.breaker;
    variant(&mut swapped, "sre").policies.breaker = classic;
    variant(&mut swapped, "classic").policies.breaker = sre;
    let report = swapped.run(|_| {});
    let text = verdict(Builtin::Outage, &report);
    let focus = report.focus;
    let peak = |name| report.run(name).unwrap().sum(focus).peak_in_flight;
    assert!(
        peak("sre") > peak("classic"),
        "the swap shows in the figures"
    );
    assert!(
        text.contains("With sre the recovering backend was loaded faster than with classic"),
        "{text}"
    );
    assert!(
        claims_none(&text, &["With classic the recovering", "Closing at once"]),
        "{text}"
    );
}

// The same four variants against a backend that never fails: there is no recovery to read.
#[test]
fn a_recovery_verdict_without_an_outage_concludes_nothing() {
    for builtin in [Builtin::Outage, Builtin::ColdRecovery] {
        let mut calm = scenario(builtin);
        for variant in &mut calm.variants {
            variant.backend.schedule.clear();
        }
        let text = verdict(builtin, &calm.run(|_| {}));
        assert!(text.starts_with("No conclusion"), "{text}");
        assert!(text.contains("every call fails"), "{text}");
        assert!(
            claims_none(&text, &["attempts failed", "goodput", "loaded faster"]),
            "{text}"
        );
    }
}

// `run cold-recovery --duration 2m` ends as the backend recovers.
#[test]
fn a_cold_recovery_cut_at_the_recovery_concludes_nothing_from_it() {
    let report = cut(Builtin::ColdRecovery, Duration::from_secs(120));
    let text = verdict(Builtin::ColdRecovery, &report);
    assert!(text.starts_with("No conclusion"), "{text}");
    assert!(text.contains("120 s to the end"), "{text}");
    assert!(claims_none(&text, &["timed out", "held no more"]), "{text}");
}

// Each breaker with the limiter, in the outage's last sentences, against itself alone.
#[test]
fn an_outage_whose_limiter_variants_lack_the_limiter_says_they_did_no_better() {
    let mut scenario = scenario(Builtin::Outage);
    for name in ["sre+limiter", "classic+limiter"] {
        variant(&mut scenario, name).policies.limiter = None;
    }
    let text = verdict(Builtin::Outage, &scenario.run(|_| {}));
    assert!(
        text.contains("sre+limiter had 7,668 failed attempts, as many as sre's 7,668"),
        "{text}"
    );
    assert!(
        text.contains("classic+limiter had 2,361 failed attempts, as many as classic's"),
        "{text}"
    );
}

#[test]
fn an_overload_cut_inside_the_overload_concludes_nothing_from_it() {
    // The overload lasts from 60 s to 240 s: a run of 200 s holds only part of it.
    let report = cut(Builtin::Overload, Duration::from_secs(200));
    let text = verdict(Builtin::Overload, &report);
    assert!(text.starts_with("No conclusion"), "{text}");
    assert!(text.contains("60 s to 240 s"), "{text}");
    assert!(
        claims_none(&text, &["goodput", "Refusing at once"]),
        "{text}"
    );
}

#[test]
fn an_overload_whose_shedder_variant_has_no_shedder_says_it_kept_no_more_goodput() {
    let mut scenario = scenario(Builtin::Overload);
    variant(&mut scenario, "shedder").policies.shedder = None;
    let text = verdict(Builtin::Overload, &scenario.run(|_| {}));
    assert!(
        text.contains("The shedder kept no more goodput than none"),
        "{text}"
    );
    assert!(text.contains("The shedder refused nothing."), "{text}");
    assert!(
        claims_none(&text, &["kept more goodput", "Refusing at once"]),
        "{text}"
    );
}

#[test]
fn a_retry_storm_cut_mid_storm_says_its_end_is_not_measured() {
    let report = cut(Builtin::RetryStorm, Duration::from_millis(1500));
    let text = verdict(Builtin::RetryStorm, &report);
    assert!(
        text.contains("when the storm is over is not") && text.contains("still under way"),
        "{text}"
    );
    assert!(
        claims_none(&text, &["done sooner", "jitter spread them"]),
        "{text}"
    );
}

#[test]
fn a_retry_storm_with_rigid_and_full_jitter_swapped_says_full_made_more_attempts() {
    let mut swapped = scenario(Builtin::RetryStorm);
    variant(&mut swapped, "rigid").client.backoff.jitter = Jitter::Full;
    variant(&mut swapped, "full").client.backoff.jitter = Jitter::Rigid;
    let text = verdict(Builtin::RetryStorm, &swapped.run(|_| {}));
    assert!(
        text.contains("With full: ") && text.contains("more than rigid's"),
        "{text}"
    );
    assert!(text.contains("and done later"), "{text}");
    assert!(claims_none(&text, &["jitter spread them"]), "{text}");
}

#[test]
fn a_quota_cut_before_the_first_burst_says_no_limit_was_passed() {
    // The first burst straddles the boundary at 10 s.
    let report = cut(Builtin::Quota, Duration::from_secs(5));
    let text = verdict(Builtin::Quota, &report);
    assert!(
        text.contains("period (a fixed period of 100 per 1 s) never let more than its quota"),
        "{text}"
    );
    assert!(
        claims_none(&text, &["times its quota", "A period resets"]),
        "{text}"
    );
}

#[test]
fn a_quota_shorter_than_its_window_concludes_nothing() {
    let report = cut(Builtin::Quota, Duration::from_millis(500));
    let text = verdict(Builtin::Quota, &report);
    assert!(text.starts_with("No conclusion"), "{text}");
    assert!(
        claims_none(&text, &["never let", "times its quota"]),
        "{text}"
    );
}

// The names stay, the limits swap: each sentence follows the variant's own limit and figures.
#[test]
fn a_quota_with_the_period_and_the_sliding_window_swapped_follows_the_limits() {
    let mut swapped = scenario(Builtin::Quota);
    let period = variant(&mut swapped, "period").policies.clone();
    let sliding = variant(&mut swapped, "sliding").policies.clone();
    variant(&mut swapped, "period").policies = sliding;
    variant(&mut swapped, "sliding").policies = period;
    let text = verdict(Builtin::Quota, &swapped.run(|_| {}));
    assert!(
        text.contains("sliding (a fixed period of 100 per 1 s) let 1"),
        "{text}"
    );
    assert!(text.contains("times its quota"), "{text}");
    assert!(
        text.contains("period (an exact sliding window of 100 per 1 s) never let more"),
        "{text}"
    );
}

// Chaos's verdict reads the runs it is given: retries that lose more calls than none are
// said not to absorb the faults, and a run with no faults injected concludes nothing.
#[test]
fn chaos_says_what_the_retries_did_and_concludes_nothing_without_faults() {
    let mut swapped = scenario(Builtin::Chaos);
    variant(&mut swapped, "retries").client.backoff.attempts = 1;
    variant(&mut swapped, "no-retries").client.backoff.attempts = 3;
    let text = verdict(Builtin::Chaos, &swapped.run(|_| {}));
    assert!(
        text.contains("The retries did not absorb the faults"),
        "{text}"
    );
    assert!(claims_none(&text, &["absorbed the faults"]), "{text}");
    let mut quiet = scenario(Builtin::Chaos);
    for v in &mut quiet.variants {
        v.policies.chaos = None;
    }
    let text = verdict(Builtin::Chaos, &quiet.run(|_| {}));
    assert!(
        text.starts_with("No conclusion: the chaos policy injected nothing"),
        "{text}"
    );
    let mut two = scenario(Builtin::Chaos);
    two.variants.retain(|v| v.name != "calm");
    assert_eq!(
        Builtin::Chaos.verdict(&two.run(|_| {})),
        None,
        "it needs all three"
    );
}
