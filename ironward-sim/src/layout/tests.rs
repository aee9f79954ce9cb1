use super::axis::{nice, value_label};
use super::*;
use crate::Scenario;

/// Text as plotters' own estimate for SVG measures it: 0.7 em a byte, roomier than any
/// real sans-serif.
fn measure(text: &str, size: f64) -> i32 {
    (size / 1.24 / 1.24 * 0.7 * text.len() as f64).round() as i32
}

fn lay(toml: &str) -> (Report, Layout) {
    let report = Scenario::from_toml(toml).unwrap().run(|_| {});
    let layout = Layout::new(&report, &measure);
    (report, layout)
}

const OUTAGE: &str = r#"
    duration = "240s"
    arrivals = [{ kind = "poisson", rate = 300.0 }]
    backend.schedule = [
        { start = "60s", end = "120s", failure = 1.0 },
        { start = "120s", end = "180s", slowdown = [4.0, 1.0] },
    ]
    [[variant]]
    name = "sre"
    policies.breaker = { kind = "sre" }
    [[variant]]
    name = "classic"
    policies.breaker = { kind = "classic", open = { fixed = "5s" } }
    [[variant]]
    name = "none"
"#;

#[test]
fn every_schedule_entry_is_a_labelled_span_and_an_extra_source_one_too() {
    let (_, layout) = lay(OUTAGE);
    let spans: Vec<(f64, f64, &str, Kind)> = layout
        .spans
        .iter()
        .map(|s| (s.from, s.to, s.label.as_str(), s.kind))
        .collect();
    assert_eq!(
        spans,
        [
            (60.0, 120.0, "outage", Kind::Failure),
            (120.0, 180.0, "cold start", Kind::Slow)
        ]
    );
    let (_, overload) = lay(r#"
        duration = "300s"
        arrivals = [{ kind = "poisson", rate = 60.0 },
                    { kind = "poisson", rate = 90.0, start = "60s", end = "240s" }]
        "#);
    let [span] = &overload.spans[..] else {
        panic!("one span: {:?}", overload.spans)
    };
    assert_eq!(
        (span.from, span.to, span.label.as_str()),
        (60.0, 240.0, "+90 calls/s")
    );
}

#[test]
fn a_span_past_the_end_of_the_run_is_cut_or_dropped() {
    let (_, layout) = lay(&OUTAGE.replace("240s", "150s"));
    let spans: Vec<(f64, f64)> = layout.spans.iter().map(|s| (s.from, s.to)).collect();
    assert_eq!(spans, [(60.0, 120.0), (120.0, 150.0)]);
    let (_, short) = lay(&OUTAGE.replace("240s", "50s"));
    assert!(short.spans.is_empty(), "{:?}", short.spans);
}

#[test]
fn a_span_only_some_variants_have_names_them() {
    let (_, layout) = lay(r#"
        duration = "20s"
        [[variant]]
        name = "calm"
        [[variant]]
        name = "stormy"
        backend.schedule = [{ start = "5s", end = "10s", failure = 0.5 }]
        "#);
    let labels: Vec<&str> = layout.spans.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["50% errors (stormy)"]);
}

// The labels sit in a band above every plotted value, and never on top of each other.
#[test]
fn phase_labels_sit_above_the_data_and_apart() {
    let (report, layout) = lay(r#"
        duration = "240s"
        backend.schedule = [
            { start = "60s", end = "61s", failure = 1.0 },
            { start = "61s", end = "62s", slowdown = 3.0 },
            { start = "62s", end = "63s", failure = 0.25 },
        ]
        "#);
    assert_eq!(layout.spans.len(), 3);
    let rows: Vec<i32> = layout.spans.iter().map(|s| s.row).collect();
    assert_eq!(rows, [0, 1, 2], "narrow spans stack their labels");
    for (i, a) in layout.spans.iter().enumerate() {
        for b in &layout.spans[i + 1..] {
            let apart = a.row != b.row
                || a.label_x + a.label_width < b.label_x
                || b.label_x + b.label_width < a.label_x;
            assert!(apart, "{a:?} and {b:?}");
        }
    }
    for panel in &layout.panels {
        let band = panel.label_y(3);
        for run in &report.runs {
            for point in layout.segments(panel, run).concat() {
                assert!(
                    point.1 > band,
                    "{:?} under the labels in {:?}",
                    point,
                    panel.column
                );
            }
        }
    }
}

#[test]
fn the_legend_is_outside_every_plot_area_and_covers_no_point() {
    let (report, layout) = lay(OUTAGE);
    for panel in &layout.panels {
        let legend = panel.legend.as_ref().expect("three variants, a legend");
        assert_eq!(legend.entries.len(), 3);
        assert!(legend.frame.right <= layout.width, "{:?}", legend.frame);
        for other in &layout.panels {
            assert!(!legend.frame.meets(&other.plot), "{:?}", legend.frame);
        }
        for run in &report.runs {
            for point in layout.segments(panel, run).concat() {
                assert!(panel.plot.contains(point), "{point:?}");
                assert!(!legend.frame.contains(point), "{point:?}");
            }
        }
    }
    let (_, single) = lay("duration = \"10s\"");
    assert!(single.panels.iter().all(|p| p.legend.is_none()));
}

#[test]
fn the_last_time_label_fits_the_canvas() {
    for duration in ["7s", "60s", "150s", "240s", "1h", "90m", "1500ms"] {
        let (_, layout) = lay(&format!("duration = \"{duration}\""));
        let last = layout.x_ticks.last().expect("a label");
        assert!(
            last.at + last.width / 2 <= layout.width,
            "{duration}: {last:?}"
        );
        let crowded = layout
            .x_ticks
            .windows(2)
            .any(|w| w[0].at + w[0].width / 2 >= w[1].at - w[1].width / 2);
        assert!(!crowded, "{duration}: {:?}", layout.x_ticks);
        assert!(
            layout.x_ticks.len() >= 4,
            "{duration}: {:?}",
            layout.x_ticks
        );
    }
    let (_, minute) = lay("duration = \"60s\"");
    let labels: Vec<&str> = minute.x_ticks.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(
        labels.last(),
        Some(&"60 s"),
        "the end is labelled: {labels:?}"
    );
    let (_, hour) = lay("duration = \"1h\"");
    assert_eq!(
        hour.x_ticks.last().map(|t| t.label.as_str()),
        Some("60 min")
    );
}

#[test]
fn value_labels_are_round_and_the_widest_fits_the_margin() {
    assert_eq!(nice(0.23), 0.5);
    assert_eq!(nice(180.0), 200.0);
    assert_eq!(nice(1000.0), 1000.0);
    assert_eq!(value_label(12_000.0, 2000.0), "12,000");
    assert_eq!(value_label(0.6000000001, 0.2), "0.6");
    let (_, layout) = lay(OUTAGE);
    for panel in &layout.panels {
        for tick in &panel.y_ticks {
            assert!(tick.value <= panel.top);
            assert!(panel.plot.left - 6 - tick.width > AXIS_TITLE, "{tick:?}");
        }
    }
}

// The limit's panel draws the optimum as a step at each change of the cores, and holds a
// limit far above it to 10× it, at the top edge, so that the line stays readable.
#[test]
fn the_limit_panel_draws_the_optimum_and_clips_a_limit_far_above_it() {
    let (report, layout) = lay(r#"
        duration = "6s"
        plot = ["limit", "succeeded"]
        arrivals = [{ kind = "poisson", rate = 600.0 }]
        backend = { discipline = "sharing", workers = 4, queue = 100000, schedule = [{ start = "3s", end = "6s", capacity = 0.5 }] }
        [[variant]]
        name = "high"
        policies.limiter = { algorithm = { Vegas = { initial = 1000 } }, probe = "0s" }
        "#);
    let [limit, succeeded] = &layout.panels[..] else {
        panic!("two panels")
    };
    // 10× the highest optimum, 4, and the margin above it for the phase's label.
    assert!((40.0..50.0).contains(&limit.top), "{}", limit.top);
    let line = layout.optimum(limit, &report);
    let heights: Vec<i32> = line.iter().map(|&(_, y)| y).collect();
    assert_eq!(heights.first(), Some(&limit.y(4.0)));
    assert_eq!(
        heights.last(),
        Some(&limit.y(2.0)),
        "half the cores from 3 s"
    );
    assert!(
        line.iter()
            .all(|&(x, _)| x >= limit.plot.left && x <= limit.plot.right)
    );
    assert!(
        layout.optimum(succeeded, &report).is_empty(),
        "the limit's panel only"
    );
    let (bare, none) = lay("duration = \"2s\"\nplot = [\"limit\"]");
    assert!(
        none.optimum(&none.panels[0], &bare).is_empty(),
        "no limiter, no optimum"
    );
}
