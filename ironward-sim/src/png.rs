//! PNG pictures: plotters' bitmap backend, with the text drawn by `ab_glyph`.
//!
//! Plotters draws text on a bitmap through a font backend of its own: `ttf` needs
//! fontconfig and FreeType (C libraries), and `ab_glyph` would also take over the SVG
//! backend's text measurement, so that drawing an SVG would need a registered font too. This
//! module keeps plotters on its built-in text measurement and wraps the bitmap backend
//! instead: every call goes through to it except text, which is laid out and rasterised here
//! from a font file read at run time. The SVG path, and the tests, need no font.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use ab_glyph::{Font, FontVec, PxScale, ScaleFont, point};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

use crate::layout::{WIDTH, height};
use crate::plot::{PlotError, draw};
use crate::report::Report;

/// Draws `report` as a PNG at `path`, the same picture as [`draw_svg`](crate::draw_svg),
/// with its text in the TrueType or OpenType font at `font` (for example
/// `/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf`, from Debian's `fonts-dejavu-core`).
///
/// Only with the `png` feature.
pub fn draw_png(report: &Report, font: &Path, path: &Path) -> Result<(), PlotError> {
    let bytes =
        std::fs::read(font).map_err(|e| PlotError::Font(format!("{}: {e}", font.display())))?;
    let font = FontVec::try_from_vec(bytes)
        .map_err(|e| PlotError::Font(format!("{}: {e}", font.display())))?;
    let size = (WIDTH as u32, height(report));
    let mut pixels = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let backend = Glyphs {
            inner: BitMapBackend::with_buffer(&mut pixels, size),
            font: &font,
        };
        draw(backend.into_drawing_area(), report)?;
    }
    let fail = |e: &dyn std::fmt::Display| PlotError::Write(format!("{}: {e}", path.display()));
    let file = File::create(path).map_err(|e| fail(&e))?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), size.0, size.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| fail(&e))?;
    writer.write_image_data(&pixels).map_err(|e| fail(&e))?;
    writer.finish().map_err(|e| fail(&e))
}

/// The bitmap backend, with text drawn from `font`.
struct Glyphs<'a> {
    inner: BitMapBackend<'a>,
    font: &'a FontVec,
}

type Failure<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

impl<'a> Glyphs<'a> {
    /// The scale for a plotters text size: plotters sizes are 1.24 times the em size in
    /// pixels (its SVG backend writes `font-size` as the size over 1.24).
    fn scale(&self, size: f64) -> PxScale {
        let em = (size / 1.24) as f32;
        self.font.pt_to_px_scale(em).unwrap_or(PxScale::from(em))
    }

    /// The width and height of `text` at `scale`, in pixels.
    fn measure(&self, text: &str, scale: PxScale) -> (f32, f32) {
        let font = self.font.as_scaled(scale);
        let mut width = 0.0;
        let mut previous = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = previous {
                width += font.kern(p, id);
            }
            width += font.h_advance(id);
            previous = Some(id);
        }
        (width, font.ascent() - font.descent())
    }
}

impl<'a> DrawingBackend for Glyphs<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), Failure<'a>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), Failure<'a>> {
        self.inner.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Failure<'a>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Failure<'a>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure<'a>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Failure<'a>> {
        self.inner.draw_path(path, style)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Failure<'a>> {
        self.inner.fill_polygon(vert, style)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), Failure<'a>> {
        let (w, h) = self.measure(text, self.scale(style.size()));
        Ok((w.ceil() as u32, h.ceil() as u32))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Failure<'a>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let scale = self.scale(style.size());
        let (width, height) = self.measure(text, scale);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0.0,
            VPos::Center => -height / 2.0,
            VPos::Bottom => -height,
        };
        let turn = style.transform();
        let font = self.font.as_scaled(scale);
        let baseline = font.ascent();
        // Coverage of every glyph pixel, laid out left to right from the text's top left.
        let mut covered: Vec<(i32, i32, f32)> = Vec::new();
        let mut x = 0.0;
        let mut previous = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = previous {
                x += font.kern(p, id);
            }
            let glyph = id.with_scale_and_position(scale, point(x + dx, baseline + dy));
            if let Some(outline) = self.font.outline_glyph(glyph) {
                let bounds = outline.px_bounds();
                outline.draw(|gx, gy, c| {
                    let px = bounds.min.x as i32 + gx as i32;
                    let py = bounds.min.y as i32 + gy as i32;
                    covered.push((px, py, c));
                });
            }
            x += font.h_advance(id);
            previous = Some(id);
        }
        for (px, py, c) in covered {
            let (tx, ty) = turn.transform(px, py);
            let shade = BackendColor {
                alpha: color.alpha * f64::from(c.clamp(0.0, 1.0)),
                rgb: color.rgb,
            };
            self.inner.draw_pixel((pos.0 + tx, pos.1 + ty), shade)?;
        }
        Ok(())
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Failure<'a>> {
        self.inner.blit_bitmap(pos, size, src)
    }
}
