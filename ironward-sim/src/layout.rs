//! Where each part of a picture goes, worked out before anything is drawn.
//!
//! Keeping the geometry apart from the drawing lets the tests check what a reader sees
//! (that the legend covers no line, that the last time label fits the canvas, that every
//! backend phase is shaded in every panel) from numbers rather than from pixels, and makes
//! the SVG and the PNG the same picture: both are drawn from one layout, measured with the
//! backend's own text metrics.

mod axis;
mod geometry;
mod panel;
mod spans;

use crate::optimum::optimum;
use crate::report::{Column, Report, VariantRun};

use axis::{Tick, x_ticks};
use geometry::{AXIS_TITLE, Measure, PANEL, TITLE, at};
use panel::{Panel, legend_width, panel};
use spans::{Span, spans};

pub(crate) use geometry::{
    CAPTION, CAPTION_FONT, LABEL_FONT, PHASE_FONT, SWATCH, TITLE_FONT, WIDTH,
};
pub(crate) use spans::Kind;

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

    /// The points of the Little's-law optimum's line in `panel` (a step at each change),
    /// drawn in the limit's panel against the first run with a limiter's backend; empty in
    /// any other panel, or when no run has a limiter.
    pub(crate) fn optimum(&self, panel: &Panel, report: &Report) -> Vec<(i32, i32)> {
        let Some(run) = limited(report).filter(|_| panel.column == Column::Limit) else {
            return Vec::new();
        };
        let (interval, end) = (run.variant.interval, run.variant.duration);
        let mut points = Vec::with_capacity(run.rows.len() * 2);
        for row in &run.rows {
            let stop = row.start.saturating_add(interval).min(end).max(row.start);
            let y = panel.y(optimum(&run.variant.backend, row.start));
            points.push((self.x(row.start.as_secs_f64()), y));
            points.push((self.x(stop.as_secs_f64()), y));
        }
        points.dedup();
        points
    }

    /// The points of `run`'s line in `panel`: each interval's figure at the middle of the
    /// interval, a missing figure (a percentile with no success) breaking the line.
    pub(crate) fn segments(&self, panel: &Panel, run: &VariantRun) -> Vec<Vec<(i32, i32)>> {
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

/// The first run with a limiter, whose backend the optimum's line is drawn for.
pub(crate) fn limited(report: &Report) -> Option<&VariantRun> {
    report
        .runs
        .iter()
        .find(|r| r.variant.policies.limiter.is_some())
}

#[cfg(test)]
mod tests;
