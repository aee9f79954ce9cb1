//! The stretches of a run shaded in every panel, and where their labels go.

use crate::arrivals::Traffic;
use crate::report::{Report, VariantRun};
use crate::words::grouped;

use super::geometry::{Measure, PHASE_FONT, at};

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

/// The stretches shaded in every panel: each backend phase that changes something, and each
/// steady or ramping source that starts or stops within the run. A stretch that only some
/// variants have is labelled with their names. Labels sit in rows above the plotted values,
/// a new row whenever a label would run into the one before it.
pub(super) fn spans(
    report: &Report,
    end: f64,
    left: i32,
    right: i32,
    measure: Measure<'_>,
) -> Vec<Span> {
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
fn stretches(run: &VariantRun) -> Vec<(f64, f64, String, Kind)> {
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
            Traffic::Constant(s) | Traffic::Poisson(s) => {
                (s.start, s.end, format!("+{} calls/s", figure(s.rate)))
            }
            Traffic::Ramp(r) => (
                r.start,
                r.end,
                format!("ramp {}→{} calls/s", figure(r.from), figure(r.to)),
            ),
            // A burst is an instant, not a stretch: its calls show in the lines.
            Traffic::Bursts(_) => continue,
            Traffic::Closed(c) => (
                c.start,
                c.end,
                format!("+{} clients", grouped(c.clients.into())),
            ),
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
