//! The plots' SVG downloads, drawn by the core (`plot::svg`, as in the exported report) from
//! what the page shows at the moment of the click.

use crate::inspect::run::RunView;
use crate::plot::brush::Brush;
use crate::plot::svg::{self, Overlay, ScatterSvg};
use crate::plot::{axis_title, scatter_scales};
use crate::web::widgets::scatter_canvas::{Keys, OverlayLines, ScatterData};
use leptos::prelude::*;
use std::sync::Arc;

/// Points an SVG download holds at most (every k-th beyond).
const SVG_POINTS: usize = 20_000;

/// What the downloads read: the run and the page's plot signals.
#[derive(Clone)]
pub struct PlotState {
    pub run: Arc<RunView>,
    pub names: Vec<String>,
    pub x_metric: RwSignal<usize>,
    pub xs: Memo<Arc<Vec<f64>>>,
    pub ys: Arc<Vec<f64>>,
    pub keys: Keys,
    pub agent_col: Option<Arc<Vec<f64>>>,
    pub task_agent: Option<Arc<Vec<f64>>>,
    pub hidden: RwSignal<Vec<bool>>,
    pub jitter_on: RwSignal<bool>,
    pub overlay: Memo<OverlayLines>,
    pub tasks: Memo<ScatterData>,
    pub brush: RwSignal<Option<Brush>>,
}

/// The rollout scatter's, the task scatter's and the histogram's SVG, made when asked.
pub fn svg_callbacks(
    state: &PlotState,
) -> (
    Callback<(), String>,
    Callback<(), String>,
    Callback<(), String>,
) {
    let s = state.clone();
    let rollout_svg = Callback::new(move |()| {
        let (r, ys, keys) = (&s.run, &s.ys, &s.keys);
        let x = s.x_metric.get_untracked();
        let xs = s.xs.get_untracked();
        let (sx, sy) = scatter_scales(&xs, ys);
        let lines = s.overlay.get_untracked();
        let overlays: Vec<Overlay> = lines
            .iter()
            .map(|(agent, bins, interval)| Overlay {
                agent: *agent,
                bins,
                interval: *interval,
            })
            .collect();
        let hidden = s.hidden.get_untracked();
        svg::scatter(&ScatterSvg {
            title: &format!(
                "Reward against {} per rollout",
                axis_title(&r.view.metrics[x])
            ),
            xs: &xs,
            ys,
            x: &sx,
            y: &sy,
            x_title: &axis_title(&r.view.metrics[x]),
            y_title: "reward",
            jitter: s
                .jitter_on
                .get_untracked()
                .then(|| (keys.0.as_slice(), keys.1.as_slice())),
            agent: s.agent_col.as_deref().map(Vec::as_slice),
            agents: if s.agent_col.is_some() { &s.names } else { &[] },
            hidden: &hidden,
            brush: s.brush.get_untracked(),
            overlay: &overlays,
            max_points: SVG_POINTS,
        })
    });
    let s = state.clone();
    let task_svg = Callback::new(move |()| {
        let d = s.tasks.get_untracked();
        let (sx, sy) = scatter_scales(&d.xs, &d.ys);
        svg::scatter(&ScatterSvg {
            title: "Mean reward per task",
            xs: &d.xs,
            ys: &d.ys,
            x: &sx,
            y: &sy,
            x_title: &d.x_title,
            y_title: &d.y_title,
            jitter: d.jitter.as_ref().map(|(t, k)| (t.as_slice(), k.as_slice())),
            agent: s.task_agent.as_deref().map(Vec::as_slice),
            agents: if s.task_agent.is_some() {
                &s.names
            } else {
                &[]
            },
            hidden: &d.hidden,
            brush: None,
            overlay: &[],
            max_points: SVG_POINTS,
        })
    });
    let run = state.run.clone();
    let reward = run.metric("reward");
    let histogram_svg = Callback::new(move |()| {
        let rewards: Vec<Option<f64>> = run
            .metric_values(reward)
            .into_iter()
            .map(|v| Some(v).filter(|v| v.is_finite()))
            .collect();
        crate::report::histogram_svg(&rewards)
    });

    (rollout_svg, task_svg, histogram_svg)
}
