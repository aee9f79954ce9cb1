//! The same scenario and seed give the same bytes.

use ironward_sim::{Builtin, Report, Scenario, draw_svg};

fn csv(report: &Report) -> Vec<u8> {
    let mut out = Vec::new();
    report.write_csv(&mut out).expect("writing to memory");
    out
}

/// The outage scenario cut to its first 150 s: every piece of the model is at work (retries,
/// timeouts, both breakers, a failure and a slowdown phase).
fn outage() -> Scenario {
    let mut scenario = Builtin::Outage.scenario().expect("the built-in reads");
    for variant in &mut scenario.variants {
        variant.duration = std::time::Duration::from_secs(150);
    }
    scenario
}

#[test]
fn the_same_scenario_and_seed_give_byte_identical_csv_and_svg() {
    let (a, b) = (outage().run(|_| {}), outage().run(|_| {}));
    assert_eq!(csv(&a), csv(&b));
    assert_eq!(draw_svg(&a).unwrap(), draw_svg(&b).unwrap());
}

#[test]
fn another_seed_gives_another_run() {
    let mut other = outage();
    for variant in &mut other.variants {
        variant.seed = 2;
    }
    assert_ne!(csv(&outage().run(|_| {})), csv(&other.run(|_| {})));
}

// A fingerprint of the CSV of a small scenario, so that a change of platform, compiler or
// dependency that changes a single byte is caught. A deliberate change to the model changes
// it too: then print the new value and update it here.
#[test]
fn a_small_scenario_reproduces_its_recorded_fingerprint() {
    let scenario = Scenario::from_toml(
        r#"
        duration = "20s"
        arrivals = [{ kind = "poisson", rate = 300.0 }, { kind = "bursts", size = 200, every = "5s" }]
        backend = { workers = 10, queue = 20, failure = 0.02, schedule = [{ start = "8s", end = "12s", failure = 1.0 }] }
        client = { backoff = { jitter = "Full", attempts = 4 } }
        policies = { breaker = { kind = "sre" }, shedder = {}, bucket = { rate = 400.0, burst = 50.0 } }
        "#,
    )
    .unwrap();
    let bytes = csv(&scenario.run(|_| {}));
    // FNV-1a, 64 bits.
    let fingerprint = bytes.iter().fold(0xCBF2_9CE4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    });
    // The chaos columns (all zero here) added 0x4D68_6B3D_BFA6_288A's bytes five cells a row.
    assert_eq!(fingerprint, 0x0719_6B24_191B_098C, "{fingerprint:#018X}");
}

// Chaos draws from its own seed, attempt by attempt: the faults, and all that follows from
// them, are the same bytes run after run.
#[test]
fn the_chaos_scenario_gives_the_same_bytes_twice() {
    let scenario = || Builtin::Chaos.scenario().expect("the built-in reads");
    let (a, b) = (scenario().run(|_| {}), scenario().run(|_| {}));
    assert!(
        a.runs[1].total().injected.total() > 1_000,
        "faults were injected"
    );
    assert_eq!(csv(&a), csv(&b));
    assert_eq!(draw_svg(&a).unwrap(), draw_svg(&b).unwrap());
    // Another chaos seed, same traffic: other attempts get the faults.
    let mut other = scenario();
    for variant in &mut other.variants {
        if let Some(chaos) = &mut variant.policies.chaos {
            chaos.seed = 43;
        }
    }
    assert_ne!(csv(&a), csv(&other.run(|_| {})));
}

#[test]
fn progress_counts_up_to_the_simulated_time() {
    let scenario = Scenario::from_toml(
        "duration = \"3s\"\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"",
    )
    .unwrap();
    let mut seen = Vec::new();
    scenario.run(|t| seen.push(t.as_secs()));
    assert_eq!(seen, [1, 2, 3, 4, 5, 6]);
    assert_eq!(scenario.simulated().as_secs(), 6);
}

// The PNG too: plotters' bitmap backend and the glyphs drawn from the font file give the
// same pixels, and the encoder the same bytes, run after run.
#[cfg(feature = "png")]
#[test]
fn the_same_run_gives_a_byte_identical_png() {
    let font = std::path::Path::new("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
    let report = outage().run(|_| {});
    let dir = std::env::temp_dir();
    let paths = [1, 2].map(|n| dir.join(format!("ironward-sim-{}-{n}.png", std::process::id())));
    for path in &paths {
        ironward_sim::draw_png(&report, font, path).expect("drawing the PNG");
    }
    let bytes = paths
        .clone()
        .map(|path| std::fs::read(path).expect("reading the PNG back"));
    for path in &paths {
        let _ = std::fs::remove_file(path);
    }
    assert!(bytes[0].starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG file");
    assert!(
        bytes[0].len() > 10_000,
        "a picture, not an empty frame: {}",
        bytes[0].len()
    );
    assert_eq!(bytes[0], bytes[1]);
}
