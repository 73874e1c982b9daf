//! The view kept in the URL hash (`#task=12&rollout=3`), so a reload or a shared link with the
//! same files lands on the same place.

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewState {
    pub page: Option<String>,
    pub task: Option<i64>,
    pub rollout: Option<i64>,
}

pub fn parse(hash: &str) -> ViewState {
    let mut state = ViewState::default();
    for part in hash
        .trim_start_matches('#')
        .split('&')
        .filter(|p| !p.is_empty())
    {
        match part.split_once('=') {
            Some(("task", v)) => state.task = v.parse().ok(),
            Some(("rollout", v)) => state.rollout = v.parse().ok(),
            Some(("page", v)) => state.page = Some(v.to_string()),
            None => state.page = Some(part.to_string()),
            _ => {}
        }
    }
    state
}

pub fn format(state: &ViewState) -> String {
    let mut parts = Vec::new();
    if let Some(p) = &state.page {
        parts.push(p.clone());
    }
    if let Some(t) = state.task {
        parts.push(format!("task={t}"));
        if let Some(r) = state.rollout {
            parts.push(format!("rollout={r}"));
        }
    }
    format!("#{}", parts.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let s = parse("#profile&task=12&rollout=3");
        assert_eq!(
            s,
            ViewState {
                page: Some("profile".into()),
                task: Some(12),
                rollout: Some(3)
            }
        );
        assert_eq!(format(&s), "#profile&task=12&rollout=3");
        assert_eq!(parse("#pivot").page.as_deref(), Some("pivot"));
        assert_eq!(parse("#task=x").task, None);
    }
}
