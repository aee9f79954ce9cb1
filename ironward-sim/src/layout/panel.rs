//! One panel of the picture: its plot area, its value axis and its legend.

use crate::optimum::optimum;
use crate::report::{Column, Report};

use super::axis::{Tick, nice, value_label};
use super::geometry::{
    CAPTION, LABEL_FONT, LABEL_ROW, LEGEND_ROW, Measure, PANEL, Rect, SWATCH, TIME_LABELS, TITLE,
    WIDTH,
};

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

/// The legend's width, from its longest name; `None` when there is one variant, whose
/// line needs no key.
pub(super) fn legend_width(report: &Report, measure: Measure<'_>) -> Option<i32> {
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

/// How far above the optimum the limit's panel reaches.
pub(crate) const OFF_SCALE: f64 = 10.0;

/// A panel: its plot area, and a top value that leaves the label band above every value.
pub(super) fn panel(
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
    // The limit's panel also holds the optimum's line, and reaches no higher than
    // `OFF_SCALE` times it: a limit far above would flatten the line and every limit near
    // it onto the axis, so it runs along the top edge instead.
    let highest = match (column, super::limited(report)) {
        (Column::Limit, Some(run)) => {
            let best = run
                .rows
                .iter()
                .map(|r| optimum(&run.variant.backend, r.start))
                .fold(0.0, f64::max);
            highest.max(best).min(best * OFF_SCALE)
        }
        _ => highest,
    };
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
