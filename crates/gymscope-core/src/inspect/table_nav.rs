//! The task table's virtual window and keyboard movement: which rows are in the DOM for a scroll
//! position, where the selection goes for a key, and how far to scroll to keep it in view.

/// Row height and visible height of the virtualized table, in CSS pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub row_px: f64,
    pub view_px: f64,
}

/// Rows rendered above and below the visible ones, so fast scrolling shows no gap.
const OVERSCAN: usize = 5;

impl Viewport {
    /// The rows `first..last` to render at scroll position `scroll_top` of `rows` rows.
    pub fn window(&self, scroll_top: f64, rows: usize) -> std::ops::Range<usize> {
        let first = ((scroll_top.max(0.0) / self.row_px) as usize)
            .saturating_sub(OVERSCAN)
            .min(rows);
        let last = (first + (self.view_px / self.row_px) as usize + 2 * OVERSCAN).min(rows);
        first..last
    }

    /// Heights of the spacer rows above and below `window`.
    pub fn padding(&self, window: &std::ops::Range<usize>, rows: usize) -> (f64, f64) {
        (
            window.start as f64 * self.row_px,
            (rows - window.end) as f64 * self.row_px,
        )
    }

    /// The scroll position that shows row `pos` from `scroll_top`, if it must change.
    pub fn scroll_to(&self, pos: usize, scroll_top: f64) -> Option<f64> {
        let y = pos as f64 * self.row_px;
        if y < scroll_top {
            Some(y)
        } else if y + self.row_px * 2.0 > scroll_top + self.view_px {
            Some(y + self.row_px * 2.0 - self.view_px)
        } else {
            None
        }
    }
}

/// What a key does in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyAction {
    /// Select the row at this position of the shown order.
    Move(usize),
    /// Open the selected task's first rollout.
    Open,
}

/// The action for `key` with the selection at `pos` (if any) of `rows` shown rows.
pub fn key_action(key: &str, pos: Option<usize>, rows: usize) -> Option<KeyAction> {
    if rows == 0 {
        return None;
    }
    let last = rows - 1;
    Some(match key {
        "ArrowDown" => KeyAction::Move(pos.map_or(0, |p| (p + 1).min(last))),
        "ArrowUp" => KeyAction::Move(pos.map_or(0, |p| p.saturating_sub(1))),
        "PageDown" => KeyAction::Move(pos.map_or(0, |p| (p + 10).min(last))),
        "PageUp" => KeyAction::Move(pos.map_or(0, |p| p.saturating_sub(10))),
        "Home" => KeyAction::Move(0),
        "End" => KeyAction::Move(last),
        "Enter" => KeyAction::Open,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VP: Viewport = Viewport {
        row_px: 28.0,
        view_px: 420.0,
    };

    #[test]
    fn window_covers_the_visible_rows() {
        assert_eq!(VP.window(0.0, 1000), 0..25);
        assert_eq!(VP.window(28.0 * 100.0, 1000), 95..120);
        assert_eq!(VP.window(28.0 * 999.0, 1000), 994..1000);
        assert_eq!(VP.window(0.0, 3), 0..3);
        assert_eq!(VP.padding(&(95..120), 1000), (95.0 * 28.0, 880.0 * 28.0));
    }

    #[test]
    fn keys_move_within_bounds() {
        assert_eq!(key_action("ArrowDown", None, 5), Some(KeyAction::Move(0)));
        assert_eq!(
            key_action("ArrowDown", Some(4), 5),
            Some(KeyAction::Move(4))
        );
        assert_eq!(key_action("ArrowUp", Some(0), 5), Some(KeyAction::Move(0)));
        assert_eq!(key_action("End", Some(1), 5), Some(KeyAction::Move(4)));
        assert_eq!(key_action("Enter", Some(1), 5), Some(KeyAction::Open));
        assert_eq!(key_action("x", Some(1), 5), None);
        assert_eq!(key_action("ArrowDown", None, 0), None);
    }

    #[test]
    fn scrolls_only_when_needed() {
        assert_eq!(VP.scroll_to(0, 0.0), None);
        assert_eq!(VP.scroll_to(2, 100.0), Some(56.0));
        assert_eq!(VP.scroll_to(20, 0.0), Some(20.0 * 28.0 + 56.0 - 420.0));
    }
}
