//! A histogram on a numeric x axis (the pass-rate band's, docs/app.md "Curate tasks by pass
//! rate"): each bar where its value lies between the axis's ends, round ticks below, so 0.25
//! sits a quarter of the way and values nobody has leave a gap, where a bar per value side by
//! side read as categories. Positions are shares of the plot's width.

use super::{round_ticks, Histogram, X_TICKS};

/// An x axis from `lo` to `hi` with room at both ends for a bar centred on either.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValueAxis {
    pub lo: f64,
    pub hi: f64,
    /// Data units left free beyond each end.
    pad: f64,
}

impl ValueAxis {
    /// The axis `lo..hi` (a pass rate's is `0..1`).
    pub fn new(lo: f64, hi: f64) -> ValueAxis {
        ValueAxis {
            lo,
            hi,
            pad: (hi - lo).abs().max(f64::EPSILON) * 0.05,
        }
    }

    /// Where `v` falls, as a share of the width.
    pub fn at(&self, v: f64) -> f64 {
        (v - self.lo + self.pad) / (self.hi - self.lo + 2.0 * self.pad)
    }

    /// Round ticks between the ends, each with where it falls.
    pub fn ticks(&self) -> Vec<(f64, f64)> {
        round_ticks(self.lo, self.hi, X_TICKS)
            .into_iter()
            .map(|t| (t, self.at(t)))
            .collect()
    }

    /// Each bar's left edge and width (shares of the width): a binned bar spans its bin; a bar
    /// per value is centred on it, as wide as the closest pair of values leaves room for (at
    /// most 8 % of the width, inside the room left at the ends), so no two overlap.
    pub fn bars(&self, h: &Histogram) -> Vec<(f64, f64)> {
        if h.binned {
            return h
                .bars
                .iter()
                .map(|b| (self.at(b.lo), self.at(b.hi) - self.at(b.lo)))
                .collect();
        }
        let closest = h
            .bars
            .windows(2)
            .map(|w| self.at(w[1].lo) - self.at(w[0].lo))
            .fold(f64::INFINITY, f64::min);
        let width = (closest * 0.8).min(0.08);
        h.bars
            .iter()
            .map(|b| (self.at(b.lo) - width / 2.0, width))
            .collect()
    }

    /// Where a band's end is marked: just outside the bar of `x` (`inclusive_left`: the band
    /// starts at `x`, the line left of its bar; else it ends there, the line right of it), so a
    /// bar the band keeps is inside its lines.
    pub fn mark(&self, h: &Histogram, x: f64, inclusive_left: bool) -> Option<f64> {
        if !x.is_finite() || h.bars.is_empty() {
            return None;
        }
        let half = self
            .bars(h)
            .first()
            .filter(|_| !h.binned)
            .map_or(0.0, |(_, w)| w / 2.0);
        let at = self.at(x) + if inclusive_left { -half } else { half };
        Some(at.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::histogram;

    #[test]
    fn bars_stand_at_their_values_on_a_numeric_axis() {
        let axis = ValueAxis::new(0.0, 1.0);
        let h = histogram([0.0, 0.25, 0.25, 1.0]);
        let bars = axis.bars(&h);
        let centre = |(l, w): (f64, f64)| l + w / 2.0;
        assert!((centre(bars[0]) - axis.at(0.0)).abs() < 1e-12);
        // 0.25 is a quarter of the way from 0 to 1, not the second of three categories.
        let quarter = (axis.at(0.25) - axis.at(0.0)) / (axis.at(1.0) - axis.at(0.0));
        assert!((quarter - 0.25).abs() < 1e-12);
        assert!((centre(bars[1]) - axis.at(0.25)).abs() < 1e-12);
        assert!(bars.iter().all(|(l, w)| *l >= 0.0 && l + w <= 1.0));
        assert!(bars[0].0 + bars[0].1 < bars[1].0, "no overlap");
        let ticks: Vec<f64> = axis.ticks().iter().map(|t| t.0).collect();
        assert_eq!(ticks.first(), Some(&0.0));
        assert_eq!(ticks.last(), Some(&1.0));
        // The band 0.25..1 has 0.25's bar inside its lines.
        let left = axis.mark(&h, 0.25, true).unwrap();
        assert!(left <= bars[1].0 + 1e-12);
        let right = axis.mark(&h, 0.25, false).unwrap();
        assert!(right >= bars[1].0 + bars[1].1 - 1e-12);
    }
}
