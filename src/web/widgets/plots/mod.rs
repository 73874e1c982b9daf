//! The run's plots: reward against token usage (or any numeric field) per rollout, keyed by task
//! and rollout (hover names it, click opens it), coloured by agent with a legend that toggles
//! them, jittered when rewards are discrete, binned means per agent and a brush (Esc clears it)
//! that filters the task table; per-task means; the reward histogram. Axes, ticks, bars, colours
//! come from the core plot model, as in the report; each plot downloads as SVG and PNG.
//! `window.__gymscope.pointPixel(task, rollout)` lets tests aim at a point.

use crate::inspect::run::RunView;
use crate::plot::axis_title;
use crate::plot::jitter::PointMode;
use crate::plot::raster::Frame;
use crate::web::state::Selection;
use crate::web::widgets::plot_download::PlotDownloads;
use crate::web::widgets::scatter_canvas::{OverlayLines, ScatterCanvas, ScatterData};
use brush::{brush_status, follow_brush};
use counts::{PlotCount, QueryHistogram};
use legend::Legend;
use leptos::prelude::*;
use point_hook::install_point_hook;
use std::sync::Arc;

mod brush;
mod counts;
mod downloads;
mod legend;
mod point_hook;
mod tooltips;

#[component]
pub fn Plots(run: Arc<RunView>, sel: Selection) -> impl IntoView {
    let x_metric = RwSignal::new(run.default_x().unwrap_or(0));
    let reward = run.metric("reward");
    let n = run.points();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let frame = RwSignal::new(None::<Frame>);
    let names = run.agent_names();
    let agent_col = run
        .cols
        .point_agent
        .iter()
        .any(|a| a.is_finite())
        .then(|| Arc::new(run.cols.point_agent.clone()));
    let has_agents = agent_col.is_some();
    let hidden = RwSignal::new(vec![false; names.len()]);
    let jitter_on = RwSignal::new(run.default_point_mode() == PointMode::Jitter);
    let overlay_on = RwSignal::new(true);
    let keys = (
        Arc::new(run.cols.point_task.clone()),
        Arc::new(run.cols.point_rollout.clone()),
    );
    let ys = Arc::new(run.metric_values(reward));

    let r = run.clone();
    let xs = Memo::new(move |_| Arc::new(r.metric_values(Some(x_metric.get()))));
    let (r, ys_o) = (run.clone(), ys.clone());
    let overlay = Memo::new(move |_| -> OverlayLines {
        if overlay_on.get() {
            Arc::new(xs.with(|xs| r.binned_rewards(xs, &ys_o)))
        } else {
            Arc::default()
        }
    });
    let r = run.clone();
    let (ys_r, keys_r, agents_r) = (ys.clone(), keys.clone(), agent_col.clone());
    let rollouts = Memo::new(move |_| {
        let x = x_metric.get();
        let shown = sel.matched.get();
        // A query's curves (issue 44, item 1) here: their own memo froze the scatter (cause unknown).
        let overlay = match &shown {
            Some(m) if overlay_on.get() => {
                Arc::new(xs.with(|x| r.binned_rewards_of(x, &ys_r, Some(m))))
            }
            _ => overlay.get(),
        };
        ScatterData {
            xs: xs.get(),
            ys: ys_r.clone(),
            x_title: axis_title(&r.view.metrics[x]),
            y_title: "reward".into(),
            highlight: sel.task.get().map(|t| r.task_points(t)),
            agent: agents_r.clone(),
            hidden: hidden.get(),
            jitter: jitter_on.get().then(|| keys_r.clone()),
            brush: sel.brush.get(),
            overlay,
            // The query bar's rollouts: the others are not drawn.
            shown,
        }
    });
    let r = run.clone();
    let task_keys = (
        Arc::new(
            (0..r.view.tasks.len())
                .map(|t| t as f64)
                .collect::<Vec<_>>(),
        ),
        Arc::new(vec![0.0; r.view.tasks.len()]),
    );
    let task_ys = Arc::new(r.task_means(reward));
    let task_jitter = PointMode::default_for(&task_ys) == PointMode::Jitter;
    // A task of one agent takes its colour (and hides with it), as on the rollout scatter.
    let task_agent = has_agents.then(|| {
        Arc::new(
            r.view
                .tasks
                .iter()
                .map(|t| match t.agents.as_slice() {
                    [one] => names
                        .iter()
                        .position(|n| n == one)
                        .map_or(f64::NAN, |a| a as f64),
                    _ => f64::NAN,
                })
                .collect::<Vec<f64>>(),
        )
    });
    let task_agent_svg = task_agent.clone();
    let tasks = Memo::new(move |_| {
        let x = x_metric.get();
        // With a query, the tasks with a matching rollout (as the task table lists them).
        let shown = sel
            .matched
            .get()
            .map(|m| Arc::new(crate::inspect::run_query::task_mask(&r, &m)));
        ScatterData {
            xs: Arc::new(r.task_means(Some(x))),
            ys: task_ys.clone(),
            x_title: format!("mean {} per task", axis_title(&r.view.metrics[x])),
            y_title: "mean reward".into(),
            highlight: sel.task.get().map(|t| t..t + 1),
            agent: task_agent.clone(),
            hidden: hidden.get(),
            jitter: (task_jitter && jitter_on.get()).then(|| task_keys.clone()),
            shown,
            ..ScatterData::default()
        }
    });
    follow_brush(run.clone(), sel, xs, ys.clone(), hidden);
    let r = run.clone();
    let rollout_tip =
        Callback::new(move |p: usize| tooltips::rollout(&r, p, x_metric.get_untracked()));
    let r = run.clone();
    let task_tip = Callback::new(move |t: usize| tooltips::task(&r, t));
    let r = run.clone();
    let open = Callback::new(move |p: usize| sel.open_point(&r, p));
    let pick_task = Callback::new(move |t: usize| sel.task.set(Some(t)));
    let on_brush = Callback::new(move |b| sel.brush.set(Some(b)));
    // Esc clears the brush, wherever the focus is (the button does the same).
    let esc = window_event_listener(leptos::ev::keydown, move |e| {
        if e.key() == "Escape" && sel.brush.get_untracked().is_some() {
            sel.brush.set(None);
        }
    });
    on_cleanup(move || esc.remove());
    install_point_hook(run.clone(), canvas, frame, x_metric, jitter_on);

    let brush_status = brush_status(run.clone(), sel, xs, ys.clone(), x_metric);
    let (rollout_svg, task_svg, histogram_svg) = downloads::svg_callbacks(&downloads::PlotState {
        run: run.clone(),
        names: names.clone(),
        x_metric,
        xs,
        ys,
        keys,
        agent_col,
        task_agent: task_agent_svg,
        hidden,
        jitter_on,
        overlay,
        tasks,
        brush: sel.brush,
    });

    let options = run
        .view
        .metrics
        .iter()
        .enumerate()
        .filter(|(_, m)| *m != "reward")
        .map(|(i, m)| view! { <option value=i.to_string() selected=move || x_metric.get() == i>{m.clone()}</option> })
        .collect_view();
    let legend = has_agents.then(|| view! { <Legend names=names.clone() hidden=hidden /> });
    let interval = move || {
        overlay.with(|o| {
            o.first()
                .map(|(_, _, i)| format!("10 quantile bins, {}", i.label()))
        })
    };
    view! {
        <section class="plots" data-scope=crate::web::pages::profile::summary::scope(sel)>
            <h2>"Reward against "
                <select data-testid="plot-x" aria-label="the field on the x axis" title="the field on the x axis" on:change=move |e| {
                    if let Ok(i) = event_target_value(&e).parse() {
                        // A brush is in the old field's units.
                        sel.brush.set(None);
                        x_metric.set(i);
                    }
                }>{options}</select>
                <PlotCount total=n sel=sel />
            </h2>
            <div class="plot-controls">
                {legend}
                <label title="Discrete rewards pile up on lines: move each rollout by a fixed amount">
                    <input type="checkbox" data-testid="plot-jitter" prop:checked=jitter_on
                        on:change=move |e| jitter_on.set(event_target_checked(&e)) />" jitter"
                </label>
                <label title=interval>
                    <input type="checkbox" data-testid="plot-overlay" prop:checked=overlay_on
                        on:change=move |e| overlay_on.set(event_target_checked(&e)) />" binned mean"
                </label>
                {brush_status}
            </div>
            <ScatterCanvas data=rollouts testid="scatter" tooltip_testid="plot-tooltip" tooltip=rollout_tip
                on_pick=open on_brush=on_brush canvas=canvas frame_out=frame />
            <PlotDownloads name="reward-scatter" svg=rollout_svg />
            <div class="plot-row">
                <div>
                    <h3>"Per task: mean reward against the mean of the same field"</h3>
                    <ScatterCanvas data=tasks testid="task-scatter" tooltip_testid="task-plot-tooltip" tooltip=task_tip on_pick=pick_task />
                    <PlotDownloads name="task-scatter" svg=task_svg />
                </div>
                <div>
                    <h3>"Reward histogram"</h3>
                    <QueryHistogram run=run.clone() sel=sel />
                    <PlotDownloads name="reward-histogram" svg=histogram_svg />
                </div>
            </div>
        </section>
    }
}
