//! A brush: a rectangle dragged on the rollout scatter, in data units (x field × reward), which
//! filters the task table to the tasks with a rollout inside. It goes into the URL hash as
//! `brush=x0,x1,y0,y1`.

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Brush {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

impl Brush {
    /// The rectangle between two corners, in either order; `None` unless all are finite.
    pub fn between(xa: f64, xb: f64, ya: f64, yb: f64) -> Option<Brush> {
        [xa, xb, ya, yb]
            .iter()
            .all(|v| v.is_finite())
            .then(|| Brush {
                x0: xa.min(xb),
                x1: xa.max(xb),
                y0: ya.min(yb),
                y1: ya.max(yb),
            })
    }

    /// The rectangle with each side rounded to a thousandth of its span's order of magnitude
    /// (`458.2319709721663` → `458` for an x span of a few hundred): what a hand drags is not
    /// more precise than that, and the label and the URL read as people read them.
    #[must_use]
    pub fn rounded(&self) -> Brush {
        let snap = |v: f64, span: f64| {
            if !(span.is_finite() && span > 0.0) {
                return v;
            }
            let decimals = 2 - span.log10().floor() as i32;
            if decimals >= 0 {
                // Through text, so 0.1 + 0.2 reads as 0.3 in the URL.
                format!("{v:.*}", decimals as usize).parse().unwrap_or(v)
            } else {
                let step = 10f64.powi(-decimals);
                (v / step).round() * step
            }
        };
        let (xs, ys) = (self.x1 - self.x0, self.y1 - self.y0);
        Brush {
            x0: snap(self.x0, xs),
            x1: snap(self.x1, xs),
            y0: snap(self.y0, ys),
            y1: snap(self.y1, ys),
        }
    }

    /// The rectangle cut to the data's extent (the finite `xs` and `ys`, each from its least
    /// to its greatest): what its readout says, so a brush dragged past the last point does not
    /// read "output tokens -309.29–10235.61" (issue 57). It holds the same points.
    #[must_use]
    pub fn within_data(&self, xs: &[f64], ys: &[f64]) -> Brush {
        let extent = |v: &[f64]| {
            v.iter()
                .filter(|v| v.is_finite())
                .fold(None, |e: Option<(f64, f64)>, &v| {
                    Some(e.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
                })
        };
        let cut = |a: f64, b: f64, e: Option<(f64, f64)>| {
            e.map_or((a, b), |(lo, hi)| (a.clamp(lo, hi), b.clamp(lo, hi)))
        };
        let (x0, x1) = cut(self.x0, self.x1, extent(xs));
        let (y0, y1) = cut(self.y0, self.y1, extent(ys));
        Brush { x0, x1, y0, y1 }
    }

    pub fn contains(&self, x: f64, y: f64) -> bool {
        (self.x0..=self.x1).contains(&x) && (self.y0..=self.y1).contains(&y)
    }

    /// `x0,x1,y0,y1`, each the shortest text that reads back as the same number.
    pub fn format(&self) -> String {
        format!("{},{},{},{}", self.x0, self.x1, self.y0, self.y1)
    }

    /// Reads [`Brush::format`]'s text; `None` for anything else.
    pub fn parse(text: &str) -> Option<Brush> {
        let v: Vec<f64> = text
            .split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        match v[..] {
            [x0, x1, y0, y1] => Brush::between(x0, x1, y0, y1),
            _ => None,
        }
    }
}

/// Per task (`tasks[t]` = its points), whether a point `keep(i)` of it lies in `brush`.
pub fn tasks_in(
    brush: &Brush,
    xs: &[f64],
    ys: &[f64],
    tasks: impl Iterator<Item = std::ops::Range<usize>>,
    keep: impl Fn(usize) -> bool,
) -> Vec<bool> {
    tasks
        .map(|points| {
            points
                .into_iter()
                .any(|i| i < xs.len().min(ys.len()) && keep(i) && brush.contains(xs[i], ys[i]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dragged_brush_is_rounded_to_its_span() {
        let b = Brush::between(458.231_970_972_166_3, 606.912_3, 0.312_345, 1.041_234)
            .unwrap()
            .rounded();
        assert_eq!(b.format(), "458,607,0.312,1.041");
        let wide = Brush::between(1234.5, 98_765.4, 0.0, 1.0)
            .unwrap()
            .rounded();
        assert_eq!(wide.format(), "1200,98800,0,1");
    }

    #[test]
    fn a_brush_past_the_data_reads_as_the_data_it_holds() {
        let xs = [310.0, 900.0, f64::NAN, 10_235.61];
        let ys = [0.0, 1.0, 0.5, 1.0];
        let b = Brush::between(-309.29, 20_000.0, -0.2, 0.7).unwrap();
        let cut = b.within_data(&xs, &ys);
        assert_eq!(cut.format(), "310,10235.61,0,0.7");
        let inside = |b: &Brush| (0..4).filter(|&i| b.contains(xs[i], ys[i])).count();
        assert_eq!(inside(&cut), inside(&b));
        // No data: the brush as it is.
        assert_eq!(b.within_data(&[], &[f64::NAN]), b);
    }

    #[test]
    fn round_trips_through_text() {
        let b = Brush::between(300.5, 10.0, 1.04, -0.04).unwrap();
        assert_eq!((b.x0, b.x1, b.y0, b.y1), (10.0, 300.5, -0.04, 1.04));
        assert_eq!(b.format(), "10,300.5,-0.04,1.04");
        assert_eq!(Brush::parse(&b.format()), Some(b));
        assert_eq!(Brush::parse("1,2,3"), None);
        assert_eq!(Brush::parse("1,2,x,4"), None);
        assert_eq!(Brush::parse("1,2,NaN,4"), None);
    }

    #[test]
    fn selects_tasks_with_a_point_inside() {
        // Three tasks of two points each.
        let xs = [10.0, 500.0, 20.0, 30.0, 600.0, f64::NAN];
        let ys = [1.0, 0.0, 0.0, 0.0, 1.0, 1.0];
        let b = Brush::between(0.0, 100.0, 0.5, 1.5).unwrap();
        let tasks = || [0..2, 2..4, 4..6].into_iter();
        assert_eq!(
            tasks_in(&b, &xs, &ys, tasks(), |_| true),
            [true, false, false]
        );
        let low = Brush::between(0.0, 100.0, -0.5, 0.5).unwrap();
        assert_eq!(
            tasks_in(&low, &xs, &ys, tasks(), |_| true),
            [false, true, false]
        );
        // Hidden points (another agent) do not select their task.
        assert_eq!(
            tasks_in(&b, &xs, &ys, tasks(), |i| i != 0),
            [false, false, false]
        );
    }
}
