//! The selected task's prompt snippet and its rollouts, each a button that opens it.

use super::state::Selection;
use crate::inspect::run::RunView;
use crate::table::short_number;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn TaskRollouts(run: Arc<RunView>, sel: Selection) -> impl IntoView {
    move || {
        sel.task.get().map(|t| {
            let meta = &run.view.tasks[t];
            let reward = run.metric("reward");
            let buttons = run
                .task_points(t)
                .map(|p| {
                    let label = format!(
                        "rollout {} · reward {}",
                        run.cols.point_rollout[p],
                        reward.map_or("–".into(), |m| short_number(run.value(p, m)))
                    );
                    let r = run.clone();
                    view! { <button class="rollout-link" data-testid="open-rollout" on:click=move |_| sel.open_point(&r, p)>{label}</button> }
                })
                .collect_view();
            view! {
                <div class="task-rollouts" data-testid="task-rollouts">
                    <p><strong>{format!("Task {}", meta.task)}</strong>" — "<span class="snippet">{meta.snippet.clone()}</span></p>
                    {buttons}
                </div>
            }
        })
    }
}
