//! The app's scatter plots drawn into an RGBA buffer (one `putImageData` for a million points,
//! instead of a million canvas calls) with a pick map for hover and click. The frame comes from
//! the plot model's scales, so ticks and domain are the report's.

use super::Scale;
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
pub const HIGHLIGHT: [u8; 4] = [230, 81, 0, 255];

/// Draws `xs`×`ys` in `frame` (NaN points are skipped). Points in `highlight` are drawn larger,
/// on top, with a cross at their mean. Discrete y values (e.g. 0/1 rewards) get a small
/// deterministic vertical jitter so their density shows.
pub fn scatter(
    xs: &[f64],
    ys: &[f64],
    frame: Frame,
    highlight: Option<Range<usize>>,
    width: u32,
    height: u32,
) -> Raster {
    let (w, h) = (width.max(2), height.max(2));
    let mut r = Raster {
        width: w,
        height: h,
        rgba: vec![0; (w * h * 4) as usize],
        pick: vec![u32::MAX; (w * h) as usize],
        frame,
    };
    let jitter = few_distinct(ys, 12);
    let place = |i: usize| -> Option<(i64, i64)> {
        let (x, y) = (xs[i], ys[i]);
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        let (px, py) = frame.to_pixel(x, y, w, h);
        let dy = if jitter {
            (mix(i as u64) % 7) as f64 - 3.0
        } else {
            0.0
        };
        Some((px.round() as i64, (py + dy).round() as i64))
    };
    let highlighted = |i: usize| highlight.as_ref().is_some_and(|hl| hl.contains(&i));
    // Few points are drawn larger and more opaque (a 5-rollout run must be visible); many
    // small and faint, so density still shows where they pile up.
    let (radius, alpha) = match xs.len() {
        0..500 => (3, 200),
        500..5_000 => (2, 140),
        _ => (1, POINT[3]),
    };
    let point = [POINT[0], POINT[1], POINT[2], alpha];
    for i in 0..xs.len().min(ys.len()) {
        if let (Some((px, py)), false) = (place(i), highlighted(i)) {
            r.dot(px, py, radius, point, i as u32);
        }
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
            r.cross(mx.round() as i64, my.round() as i64, 7, HIGHLIGHT);
        }
    }
    r
}

impl Raster {
    fn blend(&mut self, x: i64, y: i64, c: [u8; 4]) -> Option<usize> {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return None;
        }
        let at = (y as usize) * self.width as usize + x as usize;
        let p = &mut self.rgba[at * 4..at * 4 + 4];
        let a = f64::from(c[3]) / 255.0;
        for k in 0..3 {
            p[k] = (f64::from(c[k]) * a + f64::from(p[k]) * (1.0 - a) * f64::from(p[3]) / 255.0)
                .round() as u8;
        }
        p[3] = (255.0 * (a + f64::from(p[3]) / 255.0 * (1.0 - a))).round() as u8;
        Some(at)
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

    /// The point drawn nearest to pixel (`x`, `y`) within `radius` pixels.
    pub fn nearest(&self, x: f64, y: f64, radius: i64) -> Option<u32> {
        let (cx, cy) = (x.round() as i64, y.round() as i64);
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

fn few_distinct(ys: &[f64], limit: usize) -> bool {
    let mut seen: Vec<u64> = Vec::new();
    for y in ys.iter().filter(|y| y.is_finite()) {
        let bits = y.to_bits();
        if !seen.contains(&bits) {
            if seen.len() == limit {
                return false;
            }
            seen.push(bits);
        }
    }
    true
}

/// A fixed pseudo-random mix of an index (splitmix64), for jitter that is the same every time.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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
        let r = scatter(&xs, &ys, frame, Some(2..3), 101, 101);
        let (px, py) = r.frame.to_pixel(10.0, 1.0, 101, 101);
        assert_eq!(r.nearest(px, py + 1.0, 6), Some(1));
        let (px, py) = r.frame.to_pixel(5.0, 0.5, 101, 101);
        assert_eq!(r.nearest(px, py, 6), Some(2));
        assert_eq!(r.nearest(-50.0, -50.0, 3), None);
        let at = (py.round() as usize * 101 + px.round() as usize) * 4;
        assert_eq!(&r.rgba[at..at + 3], &HIGHLIGHT[..3]);
    }
}
