//! The convergence verdicts, two tests per scenario: which verdicts each limiter meets
//! today, asserted (so a change to any of them shows), and the bar ironward's default meets
//! from any start in its bounds. Where no fixed limit can meet a verdict, a test shows it and
//! the bar leaves that verdict out; where the default misses one, a test says by how much.

use super::Builtin;
use super::converge::Convergence;

/// Each limiter's figures in `builtin`'s run, by variant name.
pub(super) fn judge(builtin: Builtin) -> Vec<(String, Convergence)> {
    let report = builtin.scenario().expect("the built-in reads").run(|_| {});
    report
        .runs
        .iter()
        .map(|r| (r.variant.name.clone(), Convergence::of(r)))
        .collect()
}

/// Y for a verdict met, n for one missed, in [`Convergence::met`]'s order: within 2× in
/// 10 s, within ±25 % after 30 s, p99 at most twice the unloaded, goodput at least 90 %,
/// no runaway.
fn pattern(met: [bool; 5]) -> String {
    met.iter().map(|&m| if m { 'Y' } else { 'n' }).collect()
}

/// Asserts that each variant of `builtin` meets today the verdicts `want` says.
pub(super) fn today(builtin: Builtin, want: &[(&str, &str)]) {
    let got = judge(builtin);
    assert_eq!(
        got.len(),
        want.len(),
        "{}: a row per variant",
        builtin.name()
    );
    for ((name, figures), (wanted, met)) in got.iter().zip(want) {
        assert_eq!(name, wanted);
        assert_eq!(
            pattern(figures.met()),
            *met,
            "{} {name}: {figures:?}",
            builtin.name()
        );
    }
}

/// The bar: ironward's default, from its initial limit and from either end of its
/// bounds, meets every verdict.
pub(super) fn every_verdict(builtin: Builtin) {
    bar(builtin, "adaptive", &[]);
}

/// The rows named from `prefix` (one per start) meet every verdict but those `impossible`
/// names, by their place in [`Convergence::met`].
pub(super) fn bar(builtin: Builtin, prefix: &str, impossible: &[usize]) {
    let rows: Vec<_> = judge(builtin)
        .into_iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .collect();
    assert_eq!(rows.len(), 3, "{}: a row per start", builtin.name());
    for (name, figures) in rows {
        for (k, met) in figures.met().into_iter().enumerate() {
            assert!(
                met || impossible.contains(&k),
                "{} {name}, verdict {k}: {figures:?}",
                builtin.name()
            );
        }
    }
}

const NETFLIX: [&str; 3] = ["vegas", "gradient2", "aimd"];
const FAILSAFE: &str = "failsafe";

#[test]
fn sharing_today_the_default_comes_near_an_optimum_of_one_and_the_peers_do_not() {
    today(
        Builtin::Sharing,
        &[
            ("adaptive", "YYYnY"),
            ("adaptive-from-1", "YYYnY"),
            ("adaptive-from-1000", "YYYnY"),
            (NETFLIX[0], "nnnYY"),
            (NETFLIX[1], "nnnYn"),
            (NETFLIX[2], "nnnYn"),
            (FAILSAFE, "nnnYn"),
        ],
    );
}

// Goodput is left out: no whole limit meets it with the p99 (see
// `sharing_no_fixed_limit_serves_nine_tenths_within_twice_the_unloaded_p99`).
#[test]
fn sharing_the_default_meets_every_verdict_a_fixed_limit_can_from_any_start() {
    bar(Builtin::Sharing, "adaptive", &[3]);
}

// Open-loop calls arrive at random: at a limit of 1 the core idles between a call's end and
// the next arrival (1.7 ms on average against 5 ms of work), at 2 less often, and at 3 a
// call waits behind two others. The bar's p99 and goodput cannot both hold here.
#[test]
fn sharing_no_fixed_limit_serves_nine_tenths_within_twice_the_unloaded_p99() {
    let figures = gated(Builtin::Sharing, 1..=3);
    for &(goodput, p99) in &figures {
        assert!(goodput < 0.9 || p99 > 2.0, "{figures:?}");
    }
    // 75 %, 88 % and 92 % of the capacity, at 1×, 2× and 3× the unloaded p99.
    assert!(
        figures[0].0 < 0.8 && figures[1].0 < 0.9 && figures[2].0 > 0.9,
        "{figures:?}"
    );
}

/// Goodput and p99 against the unloaded one of `builtin`'s backend behind each fixed
/// `limits` (a gate in place of the limiter), in order.
fn gated(builtin: Builtin, limits: core::ops::RangeInclusive<u32>) -> Vec<(f64, f64)> {
    let mut scenario = builtin.scenario().expect("the built-in reads");
    let mut gate = scenario.variants[0].clone();
    scenario.variants.clear();
    gate.policies.limiter = None;
    for limit in limits {
        gate.name = format!("gate-{limit}");
        gate.policies.gate = Some(crate::GatePolicy { limit });
        scenario.variants.push(gate.clone());
    }
    let report = scenario.run(|_| {});
    report
        .runs
        .iter()
        .map(|run| {
            let c = Convergence::of(run);
            (c.goodput.expect("served"), c.p99.expect("served"))
        })
        .collect()
}

#[test]
fn mmc_today_the_default_meets_every_verdict_and_the_peers_settle_high() {
    today(
        Builtin::Mmc,
        &[
            ("adaptive", "YYYYY"),
            ("adaptive-from-1", "YYYYY"),
            ("adaptive-from-1000", "YYYYY"),
            (NETFLIX[0], "YnYYY"),
            (NETFLIX[1], "YnYYY"),
            (NETFLIX[2], "nnYYn"),
            (FAILSAFE, "YnYYY"),
        ],
    );
}

// From 1000 the first window's calls queue for up to a second, and those that finish in
// the next windows were let in with hundreds in flight: read against the calls they
// started with, the fall stops near the optimum instead of at 2.
#[test]
fn mmc_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::Mmc);
}

#[test]
fn capacity_halves_today_the_default_follows_the_cores_and_the_peers_do_not() {
    today(
        Builtin::CapacityHalves,
        &[
            ("adaptive", "YYYYY"),
            ("adaptive-from-1", "YYYYY"),
            ("adaptive-from-1000", "YYYYY"),
            (NETFLIX[0], "nnnYY"),
            (NETFLIX[1], "nnnYn"),
            (NETFLIX[2], "nnnYn"),
            (FAILSAFE, "nnnYn"),
        ],
    );
}

#[test]
fn capacity_halves_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::CapacityHalves);
}

#[test]
fn bimodal_today_the_default_settles_within_a_quarter_and_the_peers_settle_high() {
    today(
        Builtin::Bimodal,
        &[
            ("adaptive", "YYYYY"),
            ("adaptive-from-1", "YYYYY"),
            ("adaptive-from-1000", "YYYYY"),
            (NETFLIX[0], "YnYYY"),
            (NETFLIX[1], "nnYYn"),
            (NETFLIX[2], "nnnYn"),
            (FAILSAFE, "nnYYn"),
        ],
    );
}

#[test]
fn bimodal_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::Bimodal);
}

#[test]
fn drops_today_the_default_comes_near_in_time_from_any_start() {
    today(
        Builtin::Drops,
        &[
            ("adaptive", "YYYYY"),
            ("adaptive-from-1", "YYYYY"),
            ("adaptive-from-1000", "YYYYY"),
            (NETFLIX[0], "nnnYY"),
            (NETFLIX[1], "nnnYn"),
            (NETFLIX[2], "nnnYn"),
            (FAILSAFE, "nnnYn"),
        ],
    );
}

#[test]
fn drops_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::Drops);
}

#[test]
fn runaway_today_gradient2_as_tripwire_runs_it_runs_away_and_the_default_does_not() {
    today(
        Builtin::Runaway,
        &[
            ("adaptive", "YnYYY"),
            ("adaptive-from-1", "YnYYY"),
            ("adaptive-from-1000", "YnYYY"),
            (NETFLIX[0], "nnYYY"),
            (NETFLIX[1], "nnnYY"),
            (NETFLIX[2], "nnnYn"),
            (FAILSAFE, "nnnYn"),
            ("gradient2-tripwire", "nnnYn"),
        ],
    );
}

// Settled error is left out: no whole limit within 25 % of the optimum serves 90 % (see
// `runaway_no_limit_within_a_quarter_of_the_optimum_serves_nine_tenths`). The default holds
// 15 to 20 and does not run away.
#[test]
fn runaway_the_default_comes_near_in_time_and_does_not_run_away_from_any_start() {
    bar(Builtin::Runaway, "adaptive", &[1]);
}

// Calls arrive as fast as the threads serve them, so a limit at the optimum of 12 refuses
// a fifth (Erlang's loss at 12 servers and 12 erlangs): goodput needs a queue at the
// backend. From 9 to 15 the gates serve 64 % to 89.9 % of the capacity: at a quarter above
// the optimum, just short of the bar.
#[test]
fn runaway_no_limit_within_a_quarter_of_the_optimum_serves_nine_tenths() {
    let figures = gated(Builtin::Runaway, 9..=15);
    for &(goodput, _) in &figures {
        assert!(goodput < 0.9, "{figures:?}");
    }
    assert!(figures[3].0 < 0.81, "12: {figures:?}");
}

// `run sharing --duration 20s` ends before the 30 s the verdicts read from.
#[test]
fn a_run_cut_before_the_settled_stretch_concludes_nothing() {
    let mut scenario = Builtin::Sharing.scenario().expect("the built-in reads");
    for variant in &mut scenario.variants {
        variant.duration = core::time::Duration::from_secs(20);
    }
    let text = Builtin::Sharing
        .verdict(&scenario.run(|_| {}))
        .expect("limiters");
    assert!(text.starts_with("No conclusion"), "{text}");
    assert!(!text.contains("verdicts met"), "{text}");
}

#[test]
fn the_verdict_prints_the_optimum_and_a_row_per_figure() {
    let report = Builtin::Mmc
        .scenario()
        .expect("the built-in reads")
        .run(|_| {});
    let text = Builtin::Mmc.verdict(&report).expect("limiters");
    assert!(text.contains("the optimum limit is 20 in flight"), "{text}");
    assert!(text.contains("serves 400 calls/s"), "{text}");
    for row in [
        "within 2× after",
        "worst error from 30 s",
        "runaway",
        "verdicts met",
    ] {
        assert!(text.contains(row), "{row}: {text}");
    }
    assert!(
        text.contains("Every verdict met by: adaptive, adaptive-from-1, adaptive-from-1000."),
        "{text}"
    );
}
