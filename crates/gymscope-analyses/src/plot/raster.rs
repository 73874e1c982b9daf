//! The app's scatter plots drawn into an RGBA buffer (one `putImageData` for a million points,
//! instead of a million canvas calls) with a pick map for hover and click. The frame comes from
//! the plot model's scales, so ticks and domain are the report's.

use super::brush::Brush;
use super::jitter::{self, JITTER};
use super::{agent_colour, Scale};
use std::ops::Range;

/// The data rectangle shown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub x_min: f64,
    pub x_max: f64,
    pub y_min: f64,
    pub y_max: f64,
}

impl Frame {
    /// The frame of an x and a y scale.
    pub fn of(x: &Scale, y: &Scale) -> Frame {
        Frame {
            x_min: x.lo,
            x_max: x.hi,
            y_min: y.lo,
            y_max: y.hi,
        }
    }

    /// Pixel position (x right, y down) of a data point in a `w`×`h` plot.
    pub fn to_pixel(&self, x: f64, y: f64, w: u32, h: u32) -> (f64, f64) {
        let px = (x - self.x_min) / (self.x_max - self.x_min) * f64::from(w - 1);
        let py = (1.0 - (y - self.y_min) / (self.y_max - self.y_min)) * f64::from(h - 1);
        (px, py)
    }

    /// The data point at pixel (`px`, `py`): [`Frame::to_pixel`] inverted (for a brush).
    pub fn to_data(&self, px: f64, py: f64, w: u32, h: u32) -> (f64, f64) {
        let x = self.x_min + px / f64::from(w - 1) * (self.x_max - self.x_min);
        let y = self.y_min + (1.0 - py / f64::from(h - 1)) * (self.y_max - self.y_min);
        (x, y)
    }
}

pub struct Raster {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
    /// Per pixel: the index of the point drawn there last, or `u32::MAX`.
    pick: Vec<u32>,
    pub frame: Frame,
}

pub const POINT: [u8; 4] = [47, 111, 222, 90];
/// The selected task's rollouts: crimson, apart from every agent colour (orange was too close
/// to the second agent's).
pub const HIGHLIGHT: [u8; 4] = [220, 20, 60, 255];
/// Points outside the brush: grey, faint, still visible.
pub const OUTSIDE: [u8; 4] = [150, 150, 150, 60];

/// How a scatter's points are coloured and placed, beyond their values.
#[derive(Clone, Copy, Default)]
pub struct Style<'a> {
    /// Per point, its agent's index (NaN when unknown): the point takes [`agent_colour`].
    pub agent: Option<&'a [f64]>,
    /// Agents (by index) whose points are not drawn.
    pub hidden: &'a [bool],
    /// Per point its (task, rollout) key: points are moved by [`jitter::offset`] of it.
    pub jitter: Option<(&'a [f64], &'a [f64])>,
    /// Points outside are drawn grey.
    pub brush: Option<Brush>,
    /// Per point whether it is drawn (the query bar's matches); `None`: every point. The
    /// scales stay those of every point, so a query never moves the axes.
    pub shown: Option<&'a [bool]>,
}

impl Style<'_> {
    /// The agent of point `i`, when known.
    fn agent_of(&self, i: usize) -> Option<usize> {
        self.agent
            .and_then(|a| a.get(i))
            .filter(|a| a.is_finite())
            .map(|&a| a as usize)
    }

    /// Whether point `i` is drawn at all: shown by the query and its agent not hidden.
    pub fn is_drawn(&self, i: usize) -> bool {
        self.is_shown(i) && !self.is_hidden(self.agent_of(i))
    }

    /// Whether point `i` is drawn (by the query's matches).
    pub fn is_shown(&self, i: usize) -> bool {
        self.shown
            .is_none_or(|s| s.get(i).copied().unwrap_or(false))
    }

    /// Whether points of agent `a` are left out.
    fn is_hidden(&self, a: Option<usize>) -> bool {
        a.is_some_and(|a| self.hidden.get(a).copied().unwrap_or(false))
    }
}

/// The pixel of a point drawn at (`x`, `y`) moved by jitter offset `dy` (in [-1, 1)) — where
/// [`scatter`] draws it, for tests and for the report's SVG.
pub fn place(frame: &Frame, x: f64, y: f64, dy: f64, w: u32, h: u32) -> (f64, f64) {
    let (px, py) = frame.to_pixel(x, y, w, h);
    (px, py + dy * JITTER * f64::from(h))
}

/// The pixel a coordinate falls in: nearest, halves up. `floor` is one instruction in wasm,
/// where `round` (halves away from zero) is a library call, once per point of a redraw.
pub fn pixel(v: f64) -> i64 {
    (v + 0.5).floor() as i64
}

/// Draws `xs`×`ys` in `frame` (NaN points are skipped). Points in `highlight` are drawn larger,
/// on top, with a cross at their mean.
pub fn scatter(
    xs: &[f64],
    ys: &[f64],
    frame: Frame,
    highlight: Option<Range<usize>>,
    style: &Style,
    width: u32,
    height: u32,
) -> Raster {
    let (w, h) = (width.max(2), height.max(2));
    let mut r = Painter {
        width: w,
        height: h,
        acc: vec![[0; 4]; (w * h) as usize],
        pick: vec![u32::MAX; (w * h) as usize],
    };
    let place = |i: usize| -> Option<(i64, i64)> {
        let (x, y) = (xs[i], ys[i]);
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        let dy = style
            .jitter
            .map_or(0.0, |(t, k)| jitter::offset(t[i], k[i]));
        let (px, py) = place(&frame, x, y, dy, w, h);
        Some((pixel(px), pixel(py)))
    };
    let highlighted = |i: usize| highlight.as_ref().is_some_and(|hl| hl.contains(&i));
    // Few points are drawn larger and more opaque (a 5-rollout run must be visible); many
    // small and faint, so density still shows where they pile up.
    // Past 100,000 points (over a third of the plot's pixels) a dot is one pixel: nine times
    // fewer blends. A million rollouts make 125,000 tasks, whose per-task plot redraws with
    // the rollouts' on an axis change (benches/browser_plot.rs).
    let (radius, alpha) = match xs.len() {
        0..500 => (3, 200),
        500..5_000 => (2, 140),
        5_000..100_000 => (1, POINT[3]),
        _ => (0, POINT[3]),
    };
    let colours: Vec<[u8; 4]> = (0..crate::plot::PALETTE.len())
        .map(|a| {
            let c = agent_colour(a);
            [c[0], c[1], c[2], alpha]
        })
        .collect();
    let plain = [POINT[0], POINT[1], POINT[2], alpha];
    for i in 0..xs.len().min(ys.len()) {
        let agent = style.agent_of(i);
        if style.is_hidden(agent) || highlighted(i) || !style.is_shown(i) {
            continue;
        }
        let Some((px, py)) = place(i) else { continue };
        let colour = if style.brush.is_some_and(|b| !b.contains(xs[i], ys[i])) {
            OUTSIDE
        } else {
            agent.map_or(plain, |a| colours[a % colours.len()])
        };
        r.dot(px, py, radius, colour, i as u32);
    }
    if let Some(hl) = highlight {
        let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
        for i in hl.clone().filter(|&i| i < xs.len()) {
            if let Some((px, py)) = place(i) {
                r.dot(px, py, radius + 1, HIGHLIGHT, i as u32);
                sx += xs[i];
                sy += ys[i];
                n += 1.0;
            }
        }
        if n > 0.0 {
            let (mx, my) = frame.to_pixel(sx / n, sy / n, w, h);
            r.cross(pixel(mx), pixel(my), 7, HIGHLIGHT);
        }
    }
    r.finish(frame)
}

/// A raster being drawn: colours premultiplied by alpha in 16-bit fixed point (colour × alpha,
/// and alpha × 255), so "over" compositing of a point is a few integer multiply-adds with no
/// float division or rounding (a million blends were most of a redraw), in 8 bytes a pixel;
/// [`Painter::finish`] turns them into the straight-alpha bytes `ImageData` holds.
struct Painter {
    width: u32,
    height: u32,
    acc: Vec<[u16; 4]>,
    pick: Vec<u32>,
}

impl Painter {
    fn blend(&mut self, x: i64, y: i64, c: [u8; 4]) -> Option<usize> {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return None;
        }
        let at = (y as usize) * self.width as usize + x as usize;
        let a = u32::from(c[3]);
        let p = &mut self.acc[at];
        // Every value stays at most 255 × 255, so fits in a u16.
        for k in 0..3 {
            p[k] = (u32::from(c[k]) * a + u32::from(p[k]) * (255 - a) / 255) as u16;
        }
        p[3] = (255 * a + u32::from(p[3]) * (255 - a) / 255) as u16;
        Some(at)
    }

    fn finish(self, frame: Frame) -> Raster {
        let mut rgba = vec![0; self.acc.len() * 4];
        for (out, p) in rgba.chunks_exact_mut(4).zip(&self.acc) {
            let alpha = u32::from(p[3]);
            for k in 0..3 {
                // Unpremultiplied; nothing drawn (alpha 0) stays 0.
                out[k] = (u32::from(p[k]) * 255 + alpha / 2)
                    .checked_div(alpha)
                    .map_or(0, |v| v.min(255) as u8);
            }
            out[3] = ((alpha + 127) / 255) as u8;
        }
        Raster {
            width: self.width,
            height: self.height,
            rgba,
            pick: self.pick,
            frame,
        }
    }

    fn dot(&mut self, x: i64, y: i64, radius: i64, c: [u8; 4], index: u32) {
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                if let Some(at) = self.blend(x + dx, y + dy, c) {
                    self.pick[at] = index;
                }
            }
        }
    }

    fn cross(&mut self, x: i64, y: i64, size: i64, c: [u8; 4]) {
        for d in -size..=size {
            for t in -1..=0 {
                self.blend(x + d, y + t, c);
                self.blend(x + t, y + d, c);
            }
        }
    }
}

impl Raster {
    /// The point drawn nearest to pixel (`x`, `y`) within `radius` pixels.
    pub fn nearest(&self, x: f64, y: f64, radius: i64) -> Option<u32> {
        let (cx, cy) = (pixel(x), pixel(y));
        let mut best: Option<(i64, u32)> = None;
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                let (px, py) = (cx + dx, cy + dy);
                if px < 0 || py < 0 || px >= i64::from(self.width) || py >= i64::from(self.height) {
                    continue;
                }
                let i = self.pick[py as usize * self.width as usize + px as usize];
                let d = dx * dx + dy * dy;
                if i != u32::MAX && best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, i));
                }
            }
        }
        best.map(|(_, i)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_nearest_point_and_highlights() {
        let xs = [0.0, 10.0, 5.0, f64::NAN];
        let ys = [0.0, 1.0, 0.5, 1.0];
        let (sx, sy) = super::super::scatter_scales(&xs, &ys);
        let frame = Frame::of(&sx, &sy);
        let r = scatter(&xs, &ys, frame, Some(2..3), &Style::default(), 101, 101);
        let (px, py) = r.frame.to_pixel(10.0, 1.0, 101, 101);
        assert_eq!(r.nearest(px, py + 1.0, 6), Some(1));
        let (px, py) = r.frame.to_pixel(5.0, 0.5, 101, 101);
        assert_eq!(r.nearest(px, py, 6), Some(2));
        assert_eq!(r.nearest(-50.0, -50.0, 3), None);
        let (dx, dy) = frame.to_data(px, py, 101, 101);
        assert!((dx - 5.0).abs() < 1e-9 && (dy - 0.5).abs() < 1e-9);
        let at = (py.round() as usize * 101 + px.round() as usize) * 4;
        assert_eq!(&r.rgba[at..at + 3], &HIGHLIGHT[..3]);
    }

    #[test]
    fn colours_by_agent_hides_agents_and_greys_outside_the_brush() {
        let xs = [0.0, 10.0];
        let ys = [0.0, 1.0];
        let (sx, sy) = super::super::scatter_scales(&xs, &ys);
        let frame = Frame::of(&sx, &sy);
        let agents = [0.0, 1.0];
        let colour_at = |r: &Raster, x: f64, y: f64| {
            let (px, py) = r.frame.to_pixel(x, y, 101, 101);
            let at = (py.round() as usize * 101 + px.round() as usize) * 4;
            [r.rgba[at], r.rgba[at + 1], r.rgba[at + 2], r.rgba[at + 3]]
        };
        let mut style = Style {
            agent: Some(&agents),
            ..Style::default()
        };
        let r = scatter(&xs, &ys, frame, None, &style, 101, 101);
        let (a, b) = (colour_at(&r, 0.0, 0.0), colour_at(&r, 10.0, 1.0));
        assert_eq!(a[..3], agent_colour(0)[..]);
        assert_eq!(b[..3], agent_colour(1)[..]);
        let hidden = [false, true];
        style.hidden = &hidden;
        let r = scatter(&xs, &ys, frame, None, &style, 101, 101);
        assert_eq!(
            colour_at(&r, 10.0, 1.0)[3],
            0,
            "a hidden agent is not drawn"
        );
        assert_eq!(r.nearest(50.0, 50.0, 100), Some(0));
        style.hidden = &[];
        style.brush = Brush::between(-1.0, 1.0, -1.0, 0.5);
        let r = scatter(&xs, &ys, frame, None, &style, 101, 101);
        assert_eq!(colour_at(&r, 0.0, 0.0)[..3], agent_colour(0)[..]);
        assert_eq!(colour_at(&r, 10.0, 1.0)[..3], OUTSIDE[..3]);
        style.brush = None;
        let shown = [false, true];
        style.shown = Some(&shown);
        let r = scatter(&xs, &ys, frame, None, &style, 101, 101);
        assert_eq!(colour_at(&r, 0.0, 0.0)[3], 0, "a point the query left out");
        assert_eq!(colour_at(&r, 10.0, 1.0)[..3], agent_colour(1)[..]);
    }

    #[test]
    fn jitter_moves_points_by_their_key_only() {
        let xs = [5.0; 40];
        let ys: Vec<f64> = (0..40).map(|i| f64::from(i % 2)).collect();
        let tasks: Vec<f64> = (0..40).map(|i| f64::from(i / 8)).collect();
        let rollouts: Vec<f64> = (0..40).map(|i| f64::from(i % 8)).collect();
        let (sx, sy) = super::super::scatter_scales(&xs, &ys);
        let frame = Frame::of(&sx, &sy);
        let style = Style {
            jitter: Some((&tasks, &rollouts)),
            ..Style::default()
        };
        let a = scatter(&xs, &ys, frame, None, &style, 200, 200);
        let b = scatter(&xs, &ys, frame, None, &style, 200, 200);
        assert_eq!(a.rgba, b.rgba);
        let plain = scatter(&xs, &ys, frame, None, &Style::default(), 200, 200);
        let rows = |r: &Raster| {
            (0..200)
                .filter(|y| (0..200).any(|x| r.rgba[(y * 200 + x) * 4 + 3] > 0))
                .count()
        };
        assert!(rows(&a) > rows(&plain) * 2, "jitter spreads the two lines");
        // A rollout lands where `place` says for its key, whatever else is drawn.
        let one = scatter(
            &[5.0],
            &[1.0],
            frame,
            None,
            &Style {
                jitter: Some((&[2.0], &[3.0])),
                ..Style::default()
            },
            200,
            200,
        );
        let (px, py) = place(&frame, 5.0, 1.0, jitter::offset(2.0, 3.0), 200, 200);
        assert_eq!(one.nearest(px, py, 0), Some(0));
        assert_ne!(py.round(), frame.to_pixel(5.0, 1.0, 200, 200).1.round());
    }
}
