//! The app's place in the URL hash: the page (`#profile`, `#pivot`, `#pivot-build`,
//! `#compare`, `#health`) and, after `&`, the view state (`#profile&task=12&rollout=3`), so a
//! reload or a shared link with the same files lands on the same place. This parser alone
//! decides the page. The Health page's filter of the task table rides along
//! (`#profile&flag=loops&agent=math%20agent`; the agent's name percent-encoded).

use crate::plot::brush::Brush;

/// The app's pages, one tab each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Route {
    #[default]
    Profile,
    Pivot,
    PivotBuild,
    Compare,
    Health,
}

impl Route {
    pub const ALL: [Route; 5] = [
        Route::Profile,
        Route::Pivot,
        Route::PivotBuild,
        Route::Compare,
        Route::Health,
    ];

    /// The name in the hash and in the tab's `data-testid="tab-<name>"`.
    pub fn name(self) -> &'static str {
        match self {
            Route::Profile => "profile",
            Route::Pivot => "pivot",
            Route::PivotBuild => "pivot-build",
            Route::Compare => "compare",
            Route::Health => "health",
        }
    }

    /// The tab's label.
    pub fn title(self) -> &'static str {
        match self {
            Route::Profile => "Reward profile",
            Route::Pivot => "Pivot validator",
            Route::PivotBuild => "Build pivots",
            Route::Compare => "Compare runs",
            Route::Health => "Health",
        }
    }

    pub fn from_name(name: &str) -> Option<Route> {
        Route::ALL.into_iter().find(|r| r.name() == name)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewState {
    /// The page; a hash that names none (or only view state) is the profile page.
    pub route: Route,
    pub task: Option<i64>,
    pub rollout: Option<i64>,
    /// The task table's filter from a Health page cell.
    pub health: Option<HealthFilter>,
    /// The rectangle brushed on the rollout scatter, in data units (`brush=x0,x1,y0,y1`).
    pub brush: Option<Brush>,
    /// The query bar's expression (`q=…`, percent-encoded).
    pub query: Option<String>,
}

use super::health::HealthFilter;
use percent_encoding::{percent_decode_str, utf8_percent_encode, NON_ALPHANUMERIC};

pub fn parse(hash: &str) -> ViewState {
    let mut state = ViewState::default();
    let (mut flag, mut agent) = (None, None);
    for part in hash
        .trim_start_matches('#')
        .split('&')
        .filter(|p| !p.is_empty())
    {
        match part.split_once('=') {
            Some(("task", v)) => state.task = v.parse().ok(),
            Some(("rollout", v)) => state.rollout = v.parse().ok(),
            Some(("brush", v)) => state.brush = Brush::parse(v),
            Some(("page", v)) => state.route = Route::from_name(v).unwrap_or_default(),
            Some(("flag", v)) => flag = Some(decode(v)),
            Some(("agent", v)) => agent = Some(decode(v)),
            Some(("q", v)) => state.query = Some(decode(v)).filter(|q| !q.trim().is_empty()),
            None => state.route = Route::from_name(part).unwrap_or_default(),
            _ => {}
        }
    }
    state.health = flag
        .filter(|f| super::health::rate_bit(f).is_some())
        .map(|rate| HealthFilter { rate, agent });
    state
}

fn decode(v: &str) -> String {
    percent_decode_str(v).decode_utf8_lossy().into_owned()
}

pub fn format(state: &ViewState) -> String {
    let mut parts = vec![state.route.name().to_string()];
    if let Some(t) = state.task {
        parts.push(format!("task={t}"));
        if let Some(r) = state.rollout {
            parts.push(format!("rollout={r}"));
        }
    }
    if let Some(f) = &state.health {
        parts.push(format!(
            "flag={}",
            utf8_percent_encode(&f.rate, NON_ALPHANUMERIC)
        ));
        if let Some(a) = &f.agent {
            parts.push(format!(
                "agent={}",
                utf8_percent_encode(a, NON_ALPHANUMERIC)
            ));
        }
    }
    if let Some(b) = state.brush {
        parts.push(format!("brush={}", b.format()));
    }
    if let Some(q) = &state.query {
        parts.push(format!("q={}", utf8_percent_encode(q, NON_ALPHANUMERIC)));
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
                route: Route::Profile,
                task: Some(12),
                rollout: Some(3),
                health: None,
                brush: None,
                query: None,
            }
        );
        assert_eq!(format(&s), "#profile&task=12&rollout=3");
        let q = ViewState {
            query: Some(r#"reward == 0 and output ~ "a&b=c #x" or agent ~ /é%/i"#.into()),
            ..ViewState::default()
        };
        let h = format(&q);
        assert!(!h.contains(' ') && h.matches('&').count() == 1, "{h}");
        assert_eq!(parse(&h), q);
        assert_eq!(parse("#profile&q=%20").query, None);
        assert_eq!(parse("#task=x").task, None);
        let brushed = parse("#profile&task=1&brush=100,2500.5,0.5,1.04");
        assert_eq!(brushed.brush, Brush::between(100.0, 2500.5, 0.5, 1.04));
        assert_eq!(
            format(&brushed),
            "#profile&task=1&brush=100,2500.5,0.5,1.04"
        );
        assert_eq!(parse("#profile&brush=1,2").brush, None);
        for r in Route::ALL {
            let s = ViewState {
                route: r,
                ..ViewState::default()
            };
            assert_eq!(parse(&format(&s)), s);
        }
    }

    #[test]
    fn the_parser_decides_the_page() {
        assert_eq!(parse("#pivot").route, Route::Pivot);
        // Not a prefix match: `#pivot-build` is its own page, `#pivotal` none.
        assert_eq!(parse("#pivot-build").route, Route::PivotBuild);
        assert_eq!(parse("#pivotal").route, Route::Profile);
        assert_eq!(parse("#compare&task=3").route, Route::Compare);
        assert_eq!(parse("#health").route, Route::Health);
        assert_eq!(parse("").route, Route::Profile);
        assert_eq!(parse("#task=1&rollout=2").route, Route::Profile);
        assert_eq!(parse("#page=pivot").route, Route::Pivot);
    }

    #[test]
    fn the_health_filter_round_trips_with_a_hostile_agent_name() {
        let s = ViewState {
            route: Route::Profile,
            task: Some(4),
            rollout: None,
            health: Some(HealthFilter {
                rate: "tool_error_calls".into(),
                agent: Some("a&b=c #<x> é%".into()),
            }),
            brush: None,
            query: None,
        };
        let h = format(&s);
        assert_eq!(h.matches('&').count(), 3, "{h}");
        assert!(!h.contains('<') && !h.contains(' '), "{h}");
        assert_eq!(parse(&h), s);
        // Every agent: no `agent=`; an unknown rate is no filter.
        let all = parse("#profile&flag=loops");
        assert_eq!(
            all.health,
            Some(HealthFilter {
                rate: "loops".into(),
                agent: None
            })
        );
        assert_eq!(parse("#profile&flag=nope&agent=a").health, None);
    }
}
