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
