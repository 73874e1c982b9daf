//! What one scatter shows, compared by identity (the columns are never edited in place).

use super::Keys;
use super::OverlayLines;
use crate::plot::brush::Brush;
use crate::plot::raster::Style;
use std::sync::Arc;

/// What one scatter shows.
#[derive(Clone, Debug, Default)]
pub struct ScatterData {
    pub xs: Arc<Vec<f64>>,
    pub ys: Arc<Vec<f64>>,
    pub x_title: String,
    pub y_title: String,
    /// Points drawn on top, larger, with a cross at their mean.
    pub highlight: Option<std::ops::Range<usize>>,
    /// Per point its agent (NaN unknown), colouring it; agents marked in `hidden` are not drawn.
    pub agent: Option<Arc<Vec<f64>>>,
    pub hidden: Vec<bool>,
    /// Per point its (task, rollout) key when points are jittered.
    pub jitter: Option<Keys>,
    pub brush: Option<Brush>,
    pub overlay: OverlayLines,
    /// Per point whether the query bar's expression matches it (`None`: no query).
    pub shown: Option<Arc<Vec<bool>>>,
}

/// The same data when the same arrays: comparing a million values element by element each time
/// a memo recomputes cost more than the check saves (the columns are never edited in place).
impl PartialEq for ScatterData {
    fn eq(&self, o: &Self) -> bool {
        let same_opt = |a: &Option<Arc<Vec<f64>>>, b: &Option<Arc<Vec<f64>>>| match (a, b) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        let same_keys = |a: &Option<Keys>, b: &Option<Keys>| match (a, b) {
            (Some(a), Some(b)) => Arc::ptr_eq(&a.0, &b.0) && Arc::ptr_eq(&a.1, &b.1),
            (a, b) => a.is_none() && b.is_none(),
        };
        Arc::ptr_eq(&self.xs, &o.xs)
            && Arc::ptr_eq(&self.ys, &o.ys)
            && self.x_title == o.x_title
            && self.y_title == o.y_title
            && self.highlight == o.highlight
            && same_opt(&self.agent, &o.agent)
            && self.hidden == o.hidden
            && same_keys(&self.jitter, &o.jitter)
            && self.brush == o.brush
            && Arc::ptr_eq(&self.overlay, &o.overlay)
            && match (&self.shown, &o.shown) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
    }
}

impl ScatterData {
    pub fn style(&self) -> Style<'_> {
        Style {
            agent: self.agent.as_deref().map(Vec::as_slice),
            hidden: &self.hidden,
            jitter: self
                .jitter
                .as_ref()
                .map(|(t, r)| (t.as_slice(), r.as_slice())),
            brush: self.brush,
            shown: self.shown.as_deref().map(Vec::as_slice),
        }
    }
}
