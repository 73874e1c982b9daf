//! The scatter by keyboard (docs/app.md, "the plot"): the canvas takes the focus, ←/→ step
//! through the drawn points in x order (then y, then index: a fixed order), Home/End jump to
//! the ends, and Enter opens the point stepped to, as a click does.

use super::raster::Style;

/// The drawn points (both coordinates finite, shown by `style`), in x order.
pub fn order(xs: &[f64], ys: &[f64], style: &Style<'_>) -> Vec<u32> {
    let mut points: Vec<u32> = (0..xs.len().min(ys.len()))
        .filter(|&i| xs[i].is_finite() && ys[i].is_finite() && style.is_drawn(i))
        .map(|i| i as u32)
        .collect();
    points.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        xs[a]
            .total_cmp(&xs[b])
            .then(ys[a].total_cmp(&ys[b]))
            .then(a.cmp(&b))
    });
    points
}

/// The place in `order` (of `len` points) that `key` moves to from `at` (none yet: the first
/// step lands on an end); `None` for a key that does not move.
pub fn step(key: &str, at: Option<usize>, len: usize) -> Option<usize> {
    if len == 0 {
        return None;
    }
    let last = len - 1;
    Some(match (key, at) {
        ("Home", _) | ("ArrowRight" | "ArrowUp", None) => 0,
        ("End", _) | ("ArrowLeft" | "ArrowDown", None) => last,
        ("ArrowRight" | "ArrowUp", Some(i)) => (i + 1).min(last),
        ("ArrowLeft" | "ArrowDown", Some(i)) => i.saturating_sub(1),
        ("PageUp", Some(i)) => (i + 10).min(last),
        ("PageDown", Some(i)) => i.saturating_sub(10),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_step_in_x_order_skipping_the_undrawn() {
        let xs = [3.0, 1.0, f64::NAN, 2.0, 1.0];
        let ys = [0.0, 1.0, 0.0, 0.5, 0.0];
        let shown = [true, true, true, true, false];
        let style = Style {
            shown: Some(&shown),
            ..Style::default()
        };
        assert_eq!(order(&xs, &ys, &style), vec![1, 3, 0]);
        assert_eq!(step("ArrowRight", None, 3), Some(0));
        assert_eq!(step("ArrowRight", Some(2), 3), Some(2));
        assert_eq!(step("ArrowLeft", Some(0), 3), Some(0));
        assert_eq!(step("End", Some(0), 3), Some(2));
        assert_eq!(step("a", Some(0), 3), None);
        assert_eq!(step("Home", None, 0), None);
    }
}
