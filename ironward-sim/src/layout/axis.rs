//! The axes' labelled marks: round steps of time across, round values up.

use crate::words::grouped;

use super::geometry::{LABEL_FONT, Measure, at};

/// A labelled mark on an axis: its value, where it is drawn, and its label's width.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tick {
    pub(crate) value: f64,
    pub(crate) at: i32,
    pub(crate) label: String,
    pub(crate) width: i32,
}

/// The time labels: the finest round step whose labels do not crowd, at most 13 of them,
/// in seconds, minutes or hours as the step is.
pub(super) fn x_ticks(end: f64, left: i32, right: i32, measure: Measure<'_>) -> Vec<Tick> {
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

/// The round step (1, 2 or 5 times a power of ten) at or above `raw`.
pub(super) fn nice(raw: f64) -> f64 {
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
pub(super) fn value_label(v: f64, step: f64) -> String {
    match decimals(step) {
        0 if v.abs() < 1e15 => grouped(v.round() as u64),
        d => format!("{v:.d$}"),
    }
}
