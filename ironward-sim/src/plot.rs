//! The picture: one panel per series, every variant a line in each.

use core::fmt;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::layout::{
    CAPTION, CAPTION_FONT, Kind, LABEL_FONT, Layout, PHASE_FONT, SWATCH, TITLE_FONT, WIDTH, height,
};
use crate::report::Report;

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

/// Draws `report` as SVG: a panel for each series of [`Report::plot`], over the run's time,
/// with a line for each variant.
///
/// Each panel's title says what is counted and over how long ("per 1 s"), and its value
/// axis the unit. The stretches in which the backend fails or slows down (its `schedule`),
/// or in which a source of calls starts or stops, are shaded and labelled in every panel, so
/// a line's rise or fall can be read against its cause. The legend sits in a strip beside
/// each panel, where it covers no line.
///
/// The text is the same for the same report, so a picture is as reproducible as the CSV.
///
/// # Examples
///
/// ```
/// use ironward_sim::{Scenario, draw_svg};
///
/// let report = Scenario::from_toml(r#"
///     duration = "30s"
///     backend.schedule = [{ start = "10s", end = "20s", failure = 1.0 }]
/// "#).unwrap().run(|_| {});
/// let svg = draw_svg(&report).unwrap();
/// assert!(svg.starts_with("<svg"));
/// assert!(svg.contains("attempts reaching the backend, per 1 s"));
/// assert!(svg.contains("outage"), "the failing stretch is marked");
/// ```
pub fn draw_svg(report: &Report) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let backend = SVGBackend::with_string(&mut svg, (WIDTH as u32, height(report)));
        draw(backend.into_drawing_area(), report)?;
    }
    Ok(svg)
}

/// The shade of a stretch, and the colour of its label.
fn shade(kind: Kind) -> (RGBAColor, RGBColor) {
    match kind {
        Kind::Failure => (RGBColor(204, 40, 40).mix(0.13), RGBColor(160, 20, 20)),
        Kind::Slow => (RGBColor(230, 159, 0).mix(0.18), RGBColor(140, 90, 0)),
        Kind::Load => (RGBColor(90, 90, 140).mix(0.13), RGBColor(60, 60, 110)),
    }
}

/// Draws `report` on any plotters backend, measuring text as the backend does.
pub(crate) fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), PlotError> {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| PlotError::Draw(e.to_string());
    let font = |size: f64| TextStyle::from(("sans-serif", size).into_font());
    let measure = |text: &str, size: f64| {
        root.estimate_text_size(text, &font(size)).map_or(
            (size * 0.6) as i32 * text.chars().count() as i32,
            |(w, _)| w as i32,
        )
    };
    let layout = Layout::new(report, &measure);
    root.fill(&WHITE).map_err(fail)?;
    let anchored = |size: f64, h: HPos, v: VPos| font(size).pos(Pos::new(h, v));
    root.draw_text(
        &layout.title,
        &anchored(TITLE_FONT, HPos::Center, VPos::Top),
        (layout.width / 2, 10),
    )
    .map_err(fail)?;
    let grid = RGBColor(232, 232, 232);
    let ink = RGBColor(60, 60, 60);
    for panel in &layout.panels {
        let plot = panel.plot;
        for span in &layout.spans {
            let (fill, _) = shade(span.kind);
            root.draw(&Rectangle::new(
                [
                    (span.left, plot.top),
                    (span.right.max(span.left + 1), plot.bottom),
                ],
                fill.filled(),
            ))
            .map_err(fail)?;
        }
        for tick in &panel.y_ticks {
            root.draw(&PathElement::new(
                vec![(plot.left, tick.at), (plot.right, tick.at)],
                grid,
            ))
            .map_err(fail)?;
            root.draw_text(
                &tick.label,
                &anchored(LABEL_FONT, HPos::Right, VPos::Center),
                (plot.left - 6, tick.at),
            )
            .map_err(fail)?;
        }
        for tick in &layout.x_ticks {
            root.draw(&PathElement::new(
                vec![(tick.at, plot.top), (tick.at, plot.bottom)],
                grid,
            ))
            .map_err(fail)?;
            root.draw(&PathElement::new(
                vec![(tick.at, plot.bottom), (tick.at, plot.bottom + 4)],
                ink,
            ))
            .map_err(fail)?;
            root.draw_text(
                &tick.label,
                &anchored(LABEL_FONT, HPos::Center, VPos::Top),
                (tick.at, plot.bottom + 6),
            )
            .map_err(fail)?;
        }
        for span in &layout.spans {
            let (_, color) = shade(span.kind);
            root.draw_text(
                &span.label,
                &anchored(PHASE_FONT, HPos::Left, VPos::Top).color(&color),
                (span.label_x, panel.label_y(span.row)),
            )
            .map_err(fail)?;
        }
        let optimum = layout.optimum(panel, report);
        if !optimum.is_empty() {
            root.draw(&DashedPathElement::new(
                optimum,
                6,
                4,
                RGBColor(90, 90, 90).stroke_width(2),
            ))
            .map_err(fail)?;
        }
        for (i, run) in report.runs.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            for segment in layout.segments(panel, run) {
                root.draw(&PathElement::new(segment, color.stroke_width(2)))
                    .map_err(fail)?;
            }
        }
        root.draw(&PathElement::new(
            vec![
                (plot.left, plot.top),
                (plot.left, plot.bottom),
                (plot.right, plot.bottom),
            ],
            ink,
        ))
        .map_err(fail)?;
        root.draw_text(
            &panel.caption,
            &anchored(CAPTION_FONT, HPos::Center, VPos::Top),
            ((plot.left + plot.right) / 2, plot.top - CAPTION + 6),
        )
        .map_err(fail)?;
        root.draw_text(
            &panel.unit,
            &anchored(LABEL_FONT, HPos::Center, VPos::Center).transform(FontTransform::Rotate270),
            (12, (plot.top + plot.bottom) / 2),
        )
        .map_err(fail)?;
        if let Some(legend) = &panel.legend {
            let frame = legend.frame;
            root.draw(&Rectangle::new(
                [(frame.left, frame.top), (frame.right, frame.bottom)],
                RGBColor(180, 180, 180),
            ))
            .map_err(fail)?;
            for &(i, y) in &legend.entries {
                let (run, color) = (&report.runs[i], PALETTE[i % PALETTE.len()]);
                let x = frame.left + 8;
                root.draw(&PathElement::new(
                    vec![(x, y), (x + SWATCH, y)],
                    color.stroke_width(3),
                ))
                .map_err(fail)?;
                root.draw_text(
                    &run.variant.name,
                    &anchored(LABEL_FONT, HPos::Left, VPos::Center),
                    (x + SWATCH + 6, y),
                )
                .map_err(fail)?;
            }
        }
    }
    root.present().map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg(toml: &str) -> String {
        draw_svg(&crate::Scenario::from_toml(toml).unwrap().run(|_| {})).unwrap()
    }

    /// The SVG's text items, each as written between its tags.
    fn texts(svg: &str) -> Vec<&str> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                t.split_once('>')
                    .and_then(|(_, rest)| rest.split_once("</text>"))
            })
            .map(|(text, _)| text.trim())
            .collect()
    }

    #[test]
    fn every_panel_has_a_title_a_value_axis_title_and_every_variant_a_legend_entry() {
        let svg = svg(
            "duration = \"3s\"\nplot = [\"offered\", \"cpu\", \"p99_ms\"]\n\
             [[variant]]\nname = \"left\"\n[[variant]]\nname = \"right\"",
        );
        let texts = texts(&svg);
        for text in [
            "calls offered, per 1 s",
            "calls per 1 s",
            "backend CPU: the busy share of its workers, smoothed, read every 1 s",
            "‰ of the workers busy",
            "ms",
        ] {
            assert!(texts.contains(&text), "{text} in {texts:?}");
        }
        for name in ["left", "right"] {
            assert_eq!(texts.iter().filter(|t| **t == name).count(), 3, "{name}");
        }
        assert_eq!(
            svg.matches("rotate(270").count(),
            3,
            "one value-axis title a panel"
        );
    }

    // A run without a limiter has no limit and draws no line in the limit's panel, so its
    // legend leaves that run out (the cold-recovery picture listed both breakers there).
    #[test]
    fn a_legend_names_only_the_variants_that_draw_a_line_in_its_panel() {
        let svg = svg("duration = \"3s\"\nplot = [\"offered\", \"limit\"]\n\
             [[variant]]\nname = \"bare\"\n\
             [[variant]]\nname = \"limited\"\npolicies.limiter = {}");
        let texts = texts(&svg);
        let count = |name: &str| texts.iter().filter(|t| **t == name).count();
        assert_eq!(count("bare"), 1, "in the offered panel only: {texts:?}");
        assert_eq!(count("limited"), 2, "in both panels: {texts:?}");
    }

    #[test]
    fn counts_say_the_interval_they_are_counted_over() {
        let texts_of = svg("duration = \"3s\"\ninterval = \"100ms\"\nplot = [\"admitted\"]");
        let texts = texts(&texts_of);
        assert!(
            texts.contains(&"attempts reaching the backend, per 100 ms"),
            "{texts:?}"
        );
        assert!(texts.contains(&"attempts per 100 ms"), "{texts:?}");
        assert!(!texts_of.contains("per interval"));
    }

    #[test]
    fn latency_panels_say_they_are_of_successes_with_their_retries() {
        let svg = svg("duration = \"3s\"\nplot = [\"p50_ms\", \"p99_ms\"]");
        for which in ["median", "99th-percentile"] {
            let title = format!(
                "{which} latency of the calls that succeeded in each 1 s, \
                 from first attempt to success (retries included)"
            );
            assert!(texts(&svg).contains(&title.as_str()), "{title}");
        }
    }

    #[test]
    fn every_schedule_entry_is_shaded_and_labelled_in_every_panel() {
        let svg = svg(r#"
            duration = "60s"
            plot = ["admitted", "succeeded", "p99_ms", "cpu"]
            backend.schedule = [
                { start = "10s", end = "20s", failure = 1.0 },
                { start = "20s", end = "30s", slowdown = [4.0, 1.0] },
                { start = "40s", end = "50s", slowdown = 2.0 },
            ]
            "#);
        let texts = texts(&svg);
        for label in ["outage", "cold start", "slow ×2"] {
            assert_eq!(texts.iter().filter(|t| **t == label).count(), 4, "{label}");
        }
        let shaded = |color: RGBColor| {
            let RGBColor(r, g, b) = color;
            svg.matches(&format!("fill=\"#{r:02X}{g:02X}{b:02X}\" stroke=\"none\""))
                .count()
        };
        assert_eq!(shaded(RGBColor(204, 40, 40)), 4, "one outage shade a panel");
        assert_eq!(shaded(RGBColor(230, 159, 0)), 8, "two slow shades a panel");
    }
}
