//! The picture: one panel per series, every variant a line in each.

use core::fmt;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::Report;

/// Width of the picture, in pixels.
pub(crate) const WIDTH: u32 = 1100;
/// Height of one panel, and of the title above them all.
const PANEL: u32 = 230;
const TITLE: u32 = 40;

/// The variants' colours, in order: a palette readable by the colour-blind (Okabe and Ito,
/// 2008), black last.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// Why a picture could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlotError {
    /// Plotters could not draw: its message.
    Draw(String),
    /// The font for a PNG's text could not be read or parsed: the path and why.
    Font(String),
    /// The PNG could not be encoded or written: why.
    Write(String),
}

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Draw(why) => write!(f, "could not draw the picture: {why}"),
            Self::Font(why) => write!(f, "could not read the font: {why}"),
            Self::Write(why) => write!(f, "could not write the picture: {why}"),
        }
    }
}

impl std::error::Error for PlotError {}

/// The picture's height for a report: a title and a panel per series.
pub(crate) fn height(report: &Report) -> u32 {
    TITLE + PANEL * report.plot.len().max(1) as u32
}

/// Draws `report` as SVG: a panel for each series of [`Report::plot`], over the run's time,
/// with a line and a legend entry for each variant.
///
/// The text is the same for the same report, so a picture is as reproducible as the CSV.
///
/// # Examples
///
/// ```
/// use ironward_sim::{Scenario, draw_svg};
///
/// let report = Scenario::from_toml("duration = \"5s\"").unwrap().run(|_| {});
/// let svg = draw_svg(&report).unwrap();
/// assert!(svg.starts_with("<svg"));
/// assert!(svg.contains("attempts reaching the backend"));
/// ```
pub fn draw_svg(report: &Report) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let backend = SVGBackend::with_string(&mut svg, (WIDTH, height(report)));
        draw(backend.into_drawing_area(), report)?;
    }
    Ok(svg)
}

/// Draws `report` on any plotters backend.
pub(crate) fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), PlotError> {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| PlotError::Draw(e.to_string());
    root.fill(&WHITE).map_err(fail)?;
    let title = match report.about.as_str() {
        "" => report.name.clone(),
        about => format!("{}: {about}", report.name),
    };
    let root = root
        .titled(&title, ("sans-serif", 20).into_font())
        .map_err(fail)?;
    let end = report
        .runs
        .iter()
        .map(|r| r.duration.as_secs_f64())
        .fold(0.0, f64::max)
        .max(1e-3);
    let panels = root.split_evenly((report.plot.len().max(1), 1));
    for (panel, &column) in panels.iter().zip(&report.plot) {
        let top = report
            .runs
            .iter()
            .flat_map(|r| r.rows.iter().filter_map(|row| row.value(column)))
            .fold(0.0, f64::max);
        let top = if top > 0.0 { top * 1.1 } else { 1.0 };
        let mut chart = ChartBuilder::on(panel)
            .caption(column.caption(), ("sans-serif", 15).into_font())
            .margin(6)
            .x_label_area_size(24)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..end, 0.0..top)
            .map_err(fail)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(235, 235, 235))
            .x_labels(12)
            .y_labels(5)
            .x_label_formatter(&|t| format!("{t:.0} s"))
            .y_label_formatter(&|v| label(*v))
            .draw()
            .map_err(fail)?;
        for (i, run) in report.runs.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let style = color.stroke_width(2);
            // A missing value (a percentile with no success) breaks the line.
            let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
            for row in &run.rows {
                match row.value(column) {
                    Some(v) => segments
                        .last_mut()
                        .map_or((), |s| s.push((row.start.as_secs_f64(), v))),
                    None if segments.last().is_some_and(|s| !s.is_empty()) => {
                        segments.push(Vec::new())
                    }
                    None => {}
                }
            }
            for (j, segment) in segments.into_iter().enumerate() {
                let series = chart
                    .draw_series(LineSeries::new(segment, style))
                    .map_err(fail)?;
                if j == 0 && report.runs.len() > 1 {
                    series.label(run.name.as_str()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
                    });
                }
            }
        }
        if report.runs.len() > 1 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(180, 180, 180))
                .label_font(("sans-serif", 13).into_font())
                .draw()
                .map_err(fail)?;
        }
    }
    root.present().map_err(fail)
}

/// A tick label: whole numbers grouped, fractions to two places.
fn label(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        crate::summary::grouped(v.abs() as u64)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(label(12000.0), "12,000");
        assert_eq!(label(0.25), "0.25");
        assert_eq!(label(1234.7), "1235");
    }

    #[test]
    fn every_panel_and_variant_appears() {
        let scenario = crate::Scenario::from_toml(
            "duration = \"3s\"\nplot = [\"offered\", \"cpu\"]\n[[variant]]\nname = \"left\"\n[[variant]]\nname = \"right\"",
        )
        .unwrap();
        let svg = draw_svg(&scenario.run(|_| {})).unwrap();
        for text in [
            "calls offered per interval",
            "backend CPU",
            "\nleft\n",
            "\nright\n",
        ] {
            assert!(svg.contains(text), "{text} in {svg}");
        }
    }
}
