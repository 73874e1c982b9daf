//! A profiled run laid out: key figures, the query bar, the plot beside one line per agent, the
//! task table, agent metrics, output files and export in one pane; an opened rollout in a second
//! pane beside it on wide screens (none before one is opened); one selection that the URL hash
//! mirrors.

use crate::inspect::hash::{self, Route, ViewState};
use crate::inspect::run::RunView;
use crate::web::download::OutputFiles;
use crate::web::pages::profile::export::ExportReport;
use crate::web::pages::profile::groups::GroupLines;
use crate::web::pages::profile::summary::{AgentTable, RepeatTable, Summary};
use crate::web::state::{current_hash, replace_hash, HealthLink, Selection};
use crate::web::widgets::pass_band::PassBand;
use crate::web::widgets::plots::Plots;
use crate::web::widgets::query_bar::QueryBar;
use crate::web::widgets::rollout_nav::RolloutNav;
use crate::web::widgets::rollout_view::RolloutView;
use crate::web::widgets::run_header::RunHeader;
use crate::web::widgets::task_table::TaskTable;
use crate::web::worker_client::SharedWorker;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn Inspector(
    run: Arc<RunView>,
    /// The run was made from ATIF trajectories (which carry no reward of their own).
    from_atif: bool,
    /// The profile's two output files (none when the run was read from them).
    files: ReadSignal<OutputFiles, LocalStorage>,
    inputs: Signal<Option<web_sys::File>, LocalStorage>,
    rollouts: Signal<Option<web_sys::File>, LocalStorage>,
    worker: SharedWorker,
) -> impl IntoView {
    let sel = Selection::new();
    sel.query.set(initial_query());
    // Land on the place the URL names, then keep the URL in step with the selection.
    let initial = hash::parse(&current_hash());
    if let Some(t) = initial.task.and_then(|t| run.task_position(t)) {
        sel.task.set(Some(t));
        sel.rollout
            .set(initial.rollout.and_then(|r| run.point_of(t, r)));
    }
    let link = use_context::<HealthLink>();
    // A rollout the Health page asks for (its worst rollouts).
    if let Some(link) = link {
        let r = run.clone();
        Effect::new(move |_| {
            if let Some((task, rollout)) = link.open.get() {
                if let Some(t) = r.task_position(task) {
                    sel.task.set(Some(t));
                    sel.rollout.set(r.point_of(t, rollout));
                }
                link.open.set(None);
            }
        });
    }
    // A query a rate cell of the Health page asks for (or an old `flag=` link's): the bar's.
    if let Some(link) = link {
        Effect::new(move |_| {
            if let Some(q) = link.query.get() {
                sel.query.set(q);
                link.query.set(None);
            }
        });
    }
    // The Health page says whether a query is applied here.
    if let Some(link) = link {
        Effect::new(move |_| link.applied.set(sel.query.get().trim().to_string()));
    }
    sel.brush.set(initial.brush);
    let r = run.clone();
    Effect::new(move |_| {
        let task = sel
            .task
            .get()
            .and_then(|t| r.view.tasks.get(t))
            .map(|t| t.task);
        let rollout = sel.rollout.get().map(|p| r.cols.point_rollout[p] as i64);
        replace_hash(&hash::format(&ViewState {
            route: Route::Profile,
            task,
            rollout: rollout.filter(|_| task.is_some()),
            health: None,
            brush: sel.brush.get(),
            query: Some(sel.query.get()).filter(|q| !q.trim().is_empty()),
        }));
    });
    // The links' blob URLs live as long as the signal holds them.
    let links = move || match files.get() {
        OutputFiles::None => None,
        OutputFiles::Writing => Some(
            view! { <p class="muted" data-testid="files-writing">"Writing the output files…"</p> }
                .into_any(),
        ),
        OutputFiles::Ready(downloads) => Some(
            downloads
                .iter()
                .zip([
                    "download-profiling",
                    "download-agent-metrics",
                    "download-repeat-level-metrics",
                ])
                .map(|(d, testid)| {
                    d.anchor(
                        testid,
                        format!(
                            "{} ({})",
                            d.name,
                            crate::inspect::numbers::file_size(d.bytes)
                        ),
                    )
                })
                .collect_view()
                .into_any(),
        ),
        OutputFiles::Failed(why) => {
            Some(view! { <p class="status error" data-testid="files-failed">{why}</p> }.into_any())
        }
    };
    // One column until a rollout is opened; then, from 1,200 px (style/main.css), the run on the
    // left and the rollout on the right, so opening one never scrolls away from the row or
    // point that led to it. Nothing is reserved for a rollout before one is chosen.
    let has_rollout = move || sel.rollout.get().is_some();
    // The output files' tables are the whole run's (what `gymscope profile` writes): with a
    // query applied they say so (the rule of docs/app.md).
    let whole_run = move || {
        sel.matched.with(Option::is_some).then(|| {
            view! { <span class="muted scope-note" data-testid="scope-whole-run">" · the whole run (the output files'), not the query's"</span> }
        })
    };
    let nav_run = run.clone();
    let opened = Memo::new(move |_| sel.rollout.get().is_some());
    let lines = (!run.view.agent_lines.is_empty())
        .then(|| view! { <GroupLines run=run.clone() sel=sel inputs=inputs /> });
    view! {
        <div class="inspector" class:has-rollout=has_rollout data-testid="inspector">
            <div class="pane-run" data-testid="pane-run">
                // What a user looks at first (the key figures, the query bar, the plot and the
                // agents) on the first screen; the tables, the files and sharing below.
                <RunHeader inputs=inputs rollouts=rollouts />
                <Summary run=run.clone() sel=sel />
                <QueryBar run=run.clone() sel=sel inputs=inputs rollouts=rollouts />
                <div class="overview" data-testid="overview">
                    {if run.view.metrics.is_empty() {
                        // Nothing numeric to put on an axis: say so rather than draw empty axes.
                        view! {
                            <section>
                                <h2>"Plots"</h2>
                                <p class="muted" data-testid="no-plot">"Nothing to plot: no rollout carries a reward, a token count or any other number."</p>
                            </section>
                        }.into_any()
                    } else if !run.has_rewards() {
                        // Empty 0–1 axes say nothing: say why there is no reward and how to add one.
                        view! {
                            <section>
                                <h2>"Plots"</h2>
                                <p class="warning" data-testid="no-reward">{crate::inspect::query_view::no_reward_note(from_atif)}</p>
                            </section>
                        }.into_any()
                    } else {
                        view! { <Plots run=run.clone() sel=sel /> }.into_any()
                    }}
                    {lines}
                </div>
                <PassBand worker=worker sel=sel />
                <section data-scope=crate::web::pages::profile::summary::scope(sel)>
                    <h2>"Per task"</h2>
                    <TaskTable run=run.clone() sel=sel />
                </section>
                <section data-scope="run">
                    <h2>"Agent metrics"{whole_run}</h2>
                    <AgentTable table=run.view.agents.clone() />
                </section>
                {run.view.repeats.clone().map(|table| view! {
                    <section data-scope="run">
                        <h2>"Reward per repeat"{whole_run}</h2>
                        <p class="muted">"Each repeat's mean reward over the agent's tasks, with its 95 % t interval (NeMo Gym's repeat-level metrics)."</p>
                        <RepeatTable table=table />
                    </section>
                })}
                <section class="downloads"><h2>"Output files"</h2>{links}</section>
                <ExportReport worker=worker run=run.clone() sel=sel />
            </div>
            <div class="pane-rollout" data-testid="pane-rollout" data-scope="rollout">
                {move || has_rollout().then(|| view! {
                    <button class="small close" data-testid="rollout-close" title="close the rollout (Esc)"
                        on:click=move |_| sel.rollout.set(None)>"Close ×"</button>
                })}
                // Made once a rollout opens (not again at each rollout: its find box keeps its text).
                {move || opened.get().then(|| view! { <RolloutNav run=nav_run.clone() sel=sel /> })}
                <RolloutView run=run rollouts=rollouts sel=sel />
            </div>
        </div>
    }
}

/// The query the URL names (`#profile&q=…`), so a reload or a shared link filters the same way.
fn initial_query() -> String {
    hash::parse(&current_hash()).query.unwrap_or_default()
}
