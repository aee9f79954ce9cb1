//! The picture's fixed sizes and fonts, and the pixel arithmetic its parts share.

/// Width of the picture, in pixels.
pub(crate) const WIDTH: i32 = 1100;
/// Height of the title band above the panels, and of one panel.
pub(super) const TITLE: i32 = 46;
pub(super) const PANEL: i32 = 240;
/// The band above a panel's plot area that holds its caption, and the one below it that
/// holds the time labels.
pub(crate) const CAPTION: i32 = 28;
pub(super) const TIME_LABELS: i32 = 26;
/// The band left of the value labels that holds the rotated value-axis title.
pub(super) const AXIS_TITLE: i32 = 24;
/// One row of phase labels, and one legend entry.
pub(super) const LABEL_ROW: i32 = 15;
pub(super) const LEGEND_ROW: i32 = 18;
/// The legend's line sample.
pub(crate) const SWATCH: i32 = 22;

/// Font sizes, in plotters' units (1.24 times the em size in pixels).
pub(crate) const TITLE_FONT: f64 = 20.0;
pub(crate) const CAPTION_FONT: f64 = 15.0;
pub(crate) const LABEL_FONT: f64 = 13.0;
pub(crate) const PHASE_FONT: f64 = 12.0;

/// The width in pixels of a text at a font size, as the backend that draws it measures.
pub(super) type Measure<'a> = &'a dyn Fn(&str, f64) -> i32;

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
    pub(super) fn contains(&self, (x, y): (i32, i32)) -> bool {
        self.left <= x && x <= self.right && self.top <= y && y <= self.bottom
    }

    pub(super) fn meets(&self, other: &Rect) -> bool {
        self.left <= other.right
            && other.left <= self.right
            && self.top <= other.bottom
            && other.top <= self.bottom
    }
}

pub(super) fn at(t: f64, end: f64, left: i32, right: i32) -> i32 {
    left + ((t / end).clamp(0.0, 1.0) * f64::from(right - left)).round() as i32
}
