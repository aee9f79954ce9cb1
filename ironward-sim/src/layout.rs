//! Where each part of a picture goes, worked out before anything is drawn.
//!
//! Keeping the geometry apart from the drawing lets the tests check what a reader sees
//! (that the legend covers no line, that the last time label fits the canvas, that every
//! backend phase is shaded in every panel) from numbers rather than from pixels, and makes
//! the SVG and the PNG the same picture: both are drawn from one layout, measured with the
//! backend's own text metrics.

use crate::arrivals::Source;
use crate::report::{Column, Report, Run};
use crate::summary::grouped;

/// Width of the picture, in pixels.
pub(crate) const WIDTH: i32 = 1100;
/// Height of the title band above the panels, and of one panel.
const TITLE: i32 = 46;
const PANEL: i32 = 240;
/// The band above a panel's plot area that holds its caption, and the one below it that
/// holds the time labels.
pub(crate) const CAPTION: i32 = 28;
const TIME_LABELS: i32 = 26;
/// The band left of the value labels that holds the rotated value-axis title.
const AXIS_TITLE: i32 = 24;
/// One row of phase labels, and one legend entry.
const LABEL_ROW: i32 = 15;
const LEGEND_ROW: i32 = 18;
/// The legend's line sample.
pub(crate) const SWATCH: i32 = 22;

/// Font sizes, in plotters' units (1.24 times the em size in pixels).
pub(crate) const TITLE_FONT: f64 = 20.0;
pub(crate) const CAPTION_FONT: f64 = 15.0;
pub(crate) const LABEL_FONT: f64 = 13.0;
pub(crate) const PHASE_FONT: f64 = 12.0;

/// The width in pixels of a text at a font size, as the backend that draws it measures.
pub(crate) type Measure<'a> = &'a dyn Fn(&str, f64) -> i32;

/// A rectangle in pixels, edges included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rect {
    pub(crate) left: i32,
    pub(crate) top: i32,
    pub(crate) right: i32,
    pub(crate) bottom: i32,
}

#[cfg(test)]
impl Rect {
    pub(crate) fn contains(&self, (x, y): (i32, i32)) -> bool {
        self.left <= x && x <= self.right && self.top <= y && y <= self.bottom
    }

    pub(crate) fn meets(&self, other: &Rect) -> bool {
        self.left <= other.right
            && other.left <= self.right
            && self.top <= other.bottom
            && other.top <= self.bottom
    }
}

/// A labelled mark on an axis: its value, where it is drawn, and its label's width.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tick {
    pub(crate) value: f64,
    pub(crate) at: i32,
    pub(crate) label: String,
    pub(crate) width: i32,
}

/// What a shaded stretch stands for, which sets its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Calls fail more often (an outage, an error rate).
    Failure,
    /// Calls take longer (a cold start, a slowdown).
    Slow,
    /// More traffic arrives (a source that starts or stops within the run).
    Load,
}

/// A stretch of the run shaded in every panel: a backend phase or an extra source of calls.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    /// Where it starts and ends, in seconds of the run.
    pub(crate) from: f64,
    pub(crate) to: f64,
    pub(crate) label: String,
    pub(crate) kind: Kind,
    /// Where it is shaded, in pixels across.
    pub(crate) left: i32,
    pub(crate) right: i32,
    /// Where its label starts, across, and which row of the label band it is in.
    pub(crate) label_x: i32,
    pub(crate) label_width: i32,
    pub(crate) row: i32,
}

/// A legend: its frame, and for each variant that draws a line in the panel, in order, its
/// index among the report's runs (which picks its colour, the same in every panel) and the
/// height of its entry. A variant with no value in the panel's series (a limit, for a run
/// without a limiter) draws no line, so it has no entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Legend {
    pub(crate) frame: Rect,
    pub(crate) entries: Vec<(usize, i32)>,
}

/// One panel: a series, where its plot area is, and its value axis.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Panel {
    pub(crate) column: Column,
    pub(crate) caption: String,
    /// The value-axis title, with its unit.
    pub(crate) unit: String,
    /// Where the lines are drawn; its top holds the phase labels' band, above every value.
    pub(crate) plot: Rect,
    /// The value at the plot area's top edge (the bottom edge is 0).
    pub(crate) top: f64,
    pub(crate) y_ticks: Vec<Tick>,
    /// Outside the plot area, in the strip on its right; `None` for a single variant.
    pub(crate) legend: Option<Legend>,
}

impl Panel {
    /// Where a value is drawn, in pixels down.
    pub(crate) fn y(&self, v: f64) -> i32 {
        let share = (v / self.top).clamp(0.0, 1.0);
        self.plot.bottom - (share * f64::from(self.plot.bottom - self.plot.top)).round() as i32
    }

    /// The top of the label band's row `row`.
    pub(crate) fn label_y(&self, row: i32) -> i32 {
        self.plot.top + 3 + row * LABEL_ROW
    }
}

/// The whole picture.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    pub(crate) width: i32,
    pub(crate) height: i32,
    pub(crate) title: String,
    /// The run's end, in seconds: the right edge of every plot area.
    pub(crate) end: f64,
    /// The time labels, shared by every panel.
    pub(crate) x_ticks: Vec<Tick>,
    pub(crate) spans: Vec<Span>,
    pub(crate) panels: Vec<Panel>,
}

/// The picture's height for a report: a title and a panel per series.
pub(crate) fn height(report: &Report) -> u32 {
    (TITLE + PANEL * report.plot.len().max(1) as i32) as u32
}

impl Layout {
    /// Lays out `report`, measuring text with `measure`.
    ///
    /// The left margin depends on the widest value label, which depends on each panel's
    /// top value, which depends on how many rows of phase labels there are, which depends
    /// on the width left for the plot: the margins are widened until everything fits,
    /// which takes two or three rounds.
    pub(crate) fn new(report: &Report, measure: Measure<'_>) -> Self {
        let end = report
            .runs
            .iter()
            .map(|r| r.variant.duration.as_secs_f64())
            .fold(0.0, f64::max)
            .max(1e-3);
        let legend = legend_width(report, measure);
        let mut left = AXIS_TITLE + 24;
        let mut right = WIDTH - legend.map_or(16, |w| w + 16);
        let mut rounds = 0;
        loop {
            let x_ticks = x_ticks(end, left, right, measure);
            let spans = spans(report, end, left, right, measure);
            let rows = spans.iter().map(|s| s.row + 1).max().unwrap_or(0);
            let panels: Vec<Panel> = report
                .plot
                .iter()
                .enumerate()
                .map(|(i, &column)| panel(report, column, i, left, right, rows, measure))
                .collect();
            let widest = panels
                .iter()
                .flat_map(|p| p.y_ticks.iter().map(|t| t.width))
                .max()
                .unwrap_or(0);
            let need_left = AXIS_TITLE + widest + 12;
            let overhang = x_ticks.last().map_or(0, |t| t.at + t.width / 2 + 4 - WIDTH);
            rounds += 1;
            if (need_left <= left && overhang <= 0) || rounds >= 6 {
                let title = match report.about.as_str() {
                    "" => report.name.clone(),
                    about => format!("{}: {about}", report.name),
                };
                return Self {
                    width: WIDTH,
                    height: height(report) as i32,
                    title,
                    end,
                    x_ticks,
                    spans,
                    panels,
                };
            }
            left = left.max(need_left);
            right -= overhang.max(0);
        }
    }

    /// Where a time in seconds is drawn, in pixels across.
    pub(crate) fn x(&self, t: f64) -> i32 {
        let plot = self.panels.first().map(|p| p.plot);
        let (left, right) = plot.map_or((0, self.width), |p| (p.left, p.right));
        at(t, self.end, left, right)
    }

    /// The points of `run`'s line in `panel`: each interval's figure at the middle of the
    /// interval, a missing figure (a percentile with no success) breaking the line.
    pub(crate) fn segments(&self, panel: &Panel, run: &Run) -> Vec<Vec<(i32, i32)>> {
        let (interval, end) = (run.variant.interval, run.variant.duration);
        let mut segments: Vec<Vec<(i32, i32)>> = vec![Vec::new()];
        for row in &run.rows {
            let stop = row.start.saturating_add(interval).min(end).max(row.start);
            let middle = (row.start.as_secs_f64() + stop.as_secs_f64()) / 2.0;
            match row.value(panel.column) {
                Some(v) => segments
                    .last_mut()
                    .map_or((), |s| s.push((self.x(middle), panel.y(v)))),
                None if segments.last().is_some_and(|s| !s.is_empty()) => segments.push(Vec::new()),
                None => {}
            }
        }
        segments.retain(|s| !s.is_empty());
        segments
    }
}

fn at(t: f64, end: f64, left: i32, right: i32) -> i32 {
    left + ((t / end).clamp(0.0, 1.0) * f64::from(right - left)).round() as i32
}

/// The legend's width, from its longest name; `None` when there is one variant, whose
/// line needs no key.
fn legend_width(report: &Report, measure: Measure<'_>) -> Option<i32> {
    if report.runs.len() < 2 {
        return None;
    }
    let widest = report
        .runs
        .iter()
        .map(|r| measure(&r.variant.name, LABEL_FONT))
        .max()
        .unwrap_or(0);
    Some(8 + SWATCH + 6 + widest + 8)
}

/// The time labels: the finest round step whose labels do not crowd, at most 13 of them,
/// in seconds, minutes or hours as the step is.
fn x_ticks(end: f64, left: i32, right: i32, measure: Measure<'_>) -> Vec<Tick> {
    let px_per_s = f64::from(right - left) / end;
    let mut step = 1e-3;
    for candidate in steps() {
        step = candidate;
        if end / candidate > 12.0 + 1e-9 {
            continue;
        }
        let ticks = ticks_of(step, end, left, right, measure);
        let widest = ticks.iter().map(|t| t.width).max().unwrap_or(0);
        if f64::from(widest + 14) <= candidate * px_per_s || candidate >= end {
            return ticks;
        }
    }
    ticks_of(step, end, left, right, measure)
}

/// Round steps in seconds, from a millisecond up: 1, 2 and 5 times a power of ten below a
/// minute, then the steps a clock is read in, then powers of ten of days.
fn steps() -> impl Iterator<Item = f64> {
    let small = (-3..2).flat_map(|p| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(p)));
    let clock = [
        15.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 10800.0,
        21600.0, 43200.0, 86400.0,
    ];
    let days = (1..40).map(|p| 86400.0 * 10f64.powi(p));
    small.filter(|s| *s < 15.0).chain(clock).chain(days)
}

fn ticks_of(step: f64, end: f64, left: i32, right: i32, measure: Measure<'_>) -> Vec<Tick> {
    let count = (end / step + 1e-9).floor() as u64;
    (0..=count)
        .map(|k| {
            let value = k as f64 * step;
            let label = time_label(value, step);
            Tick {
                value,
                at: at(value, end, left, right),
                width: measure(&label, LABEL_FONT),
                label,
            }
        })
        .collect()
}

/// A time label in the unit of its step: "90 s", "0.5 s", "5 min", "2 h".
fn time_label(t: f64, step: f64) -> String {
    let whole = |unit: f64| step >= unit && (step / unit).fract() == 0.0;
    if whole(3600.0) {
        format!("{} h", (t / 3600.0).round())
    } else if whole(60.0) && step >= 120.0 {
        format!("{} min", (t / 60.0).round())
    } else {
        format!("{t:.*} s", decimals(step))
    }
}

/// The decimals a step needs: 0 for whole numbers, 1 for tenths, and so on.
fn decimals(step: f64) -> usize {
    (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6
        })
        .unwrap_or(6)
}

/// The stretches shaded in every panel: each backend phase that changes something, and each
/// steady or ramping source that starts or stops within the run. A stretch that only some
/// variants have is labelled with their names. Labels sit in rows above the plotted values,
/// a new row whenever a label would run into the one before it.
fn spans(report: &Report, end: f64, left: i32, right: i32, measure: Measure<'_>) -> Vec<Span> {
    let mut found: Vec<(f64, f64, String, Kind, Vec<&str>)> = Vec::new();
    for run in &report.runs {
        let run_end = run.variant.duration.as_secs_f64();
        for (from, to, label, kind) in stretches(run) {
            let (from, to) = (from.max(0.0), to.min(run_end));
            if from >= to {
                continue;
            }
            let name = run.variant.name.as_str();
            match found
                .iter_mut()
                .find(|f| (f.0, f.1, &f.2, f.3) == (from, to, &label, kind))
            {
                Some(f) => f.4.push(name),
                None => found.push((from, to, label, kind, vec![name])),
            }
        }
    }
    found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut rows: Vec<i32> = Vec::new();
    found
        .into_iter()
        .map(|(from, to, label, kind, names)| {
            let label = if names.len() < report.runs.len() {
                format!("{label} ({})", names.join(", "))
            } else {
                label
            };
            let width = measure(&label, PHASE_FONT);
            let (l, r) = (at(from, end, left, right), at(to, end, left, right));
            let label_x = (l + 4).min(right - width - 2).max(left + 2);
            let row = match rows.iter().position(|&taken| taken <= label_x) {
                Some(row) => row,
                None => {
                    rows.push(i32::MIN);
                    rows.len() - 1
                }
            };
            rows[row] = label_x + width + 10;
            Span {
                from,
                to,
                label,
                kind,
                left: l,
                right: r,
                label_x,
                label_width: width,
                row: row as i32,
            }
        })
        .collect()
}

/// A run's stretches, in seconds, before clipping to the run.
fn stretches(run: &Run) -> Vec<(f64, f64, String, Kind)> {
    let end = run.variant.duration;
    let mut out = Vec::new();
    for phase in &run.variant.backend.schedule {
        if let Some(label) = phase.label() {
            let fails = phase.failure.is_some_and(|c| c.from > 0.0 || c.to > 0.0);
            let kind = if fails { Kind::Failure } else { Kind::Slow };
            out.push((
                phase.start.as_secs_f64(),
                phase.end.as_secs_f64(),
                label,
                kind,
            ));
        }
    }
    for source in &run.variant.arrivals {
        let (start, stop, label) = match source {
            Source::Constant(s) | Source::Poisson(s) => {
                (s.start, s.end, format!("+{} calls/s", figure(s.rate)))
            }
            Source::Ramp(r) => (
                r.start,
                r.end,
                format!("ramp {}→{} calls/s", figure(r.from), figure(r.to)),
            ),
            // A burst is an instant, not a stretch: its calls show in the lines.
            Source::Bursts(_) => continue,
        };
        let stop = if stop.is_zero() { end } else { stop.min(end) };
        if start.is_zero() && stop >= end {
            continue; // the base traffic, there all along
        }
        out.push((start.as_secs_f64(), stop.as_secs_f64(), label, Kind::Load));
    }
    out
}

/// A rate as a label shows it: whole numbers grouped, fractions to two places.
fn figure(v: f64) -> String {
    if v.fract() == 0.0 && (0.0..1e15).contains(&v) {
        grouped(v as u64)
    } else {
        format!("{v:.2}")
    }
}

/// A panel: its plot area, and a top value that leaves the label band above every value.
fn panel(
    report: &Report,
    column: Column,
    index: usize,
    left: i32,
    right: i32,
    label_rows: i32,
    measure: Measure<'_>,
) -> Panel {
    let y0 = TITLE + PANEL * index as i32;
    let plot = Rect {
        left,
        top: y0 + CAPTION,
        right,
        bottom: y0 + PANEL - TIME_LABELS,
    };
    let highest = report
        .runs
        .iter()
        .flat_map(|r| r.rows.iter().filter_map(|row| row.value(column)))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let height = f64::from(plot.bottom - plot.top);
    let band = if label_rows > 0 {
        f64::from(label_rows * LABEL_ROW + 6)
    } else {
        0.0
    };
    let top = if highest > 0.0 {
        (highest * 1.08).max(highest * height / (height - band).max(1.0))
    } else {
        1.0
    };
    let step = nice(top / 5.0);
    let count = (top / step + 1e-9).floor() as u64;
    let y_ticks = (0..=count)
        .map(|k| {
            let value = k as f64 * step;
            let label = value_label(value, step);
            Tick {
                value,
                at: 0,
                width: measure(&label, LABEL_FONT),
                label,
            }
        })
        .collect();
    let drawn: Vec<usize> = (0..report.runs.len())
        .filter(|&i| {
            report.runs[i]
                .rows
                .iter()
                .any(|r| r.value(column).is_some())
        })
        .collect();
    let legend = (report.runs.len() > 1 && !drawn.is_empty()).then(|| {
        let widest = drawn
            .iter()
            .map(|&i| measure(&report.runs[i].variant.name, LABEL_FONT))
            .max()
            .unwrap_or(0);
        let frame = Rect {
            left: right + 12,
            top: plot.top,
            right: (right + 12 + SWATCH + widest + 20).min(WIDTH - 2),
            bottom: plot.top + 8 + LEGEND_ROW * drawn.len() as i32,
        };
        let entries = (0..)
            .zip(&drawn)
            .map(|(k, &i)| (i, frame.top + 4 + LEGEND_ROW / 2 + k * LEGEND_ROW))
            .collect();
        Legend { frame, entries }
    });
    let (caption, unit) = match report.runs.first() {
        Some(run) => {
            let variant = &run.variant;
            let same = report.runs.iter().all(|r| {
                (r.variant.interval, r.variant.window) == (variant.interval, variant.window)
            });
            let caption = column.caption(variant);
            let caption = if same {
                caption
            } else {
                format!(
                    "{caption} (for {}; the variants' intervals differ)",
                    variant.name
                )
            };
            (caption, column.unit(variant))
        }
        None => (column.name().to_string(), String::new()),
    };
    let mut panel = Panel {
        column,
        caption,
        unit,
        plot,
        top,
        y_ticks,
        legend,
    };
    let ats: Vec<i32> = panel.y_ticks.iter().map(|t| panel.y(t.value)).collect();
    for (tick, at) in panel.y_ticks.iter_mut().zip(ats) {
        tick.at = at;
    }
    panel
}

/// The round step (1, 2 or 5 times a power of ten) at or above `raw`.
fn nice(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let power = 10f64.powi(raw.log10().floor() as i32);
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

/// A value label: whole numbers grouped, fractions to the step's decimals.
fn value_label(v: f64, step: f64) -> String {
    match decimals(step) {
        0 if v.abs() < 1e15 => grouped(v.round() as u64),
        d => format!("{v:.d$}"),
    }
}

#[cfg(test)]
mod tests {
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
        policies.breaker = { kind = "classic" }
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
}
