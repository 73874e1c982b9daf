//! The selected task's prompt snippet and its rollouts, each a button that opens it, with its
//! health flags; under a query, only the rollouts it matches (the others counted).

use crate::inspect::run::RunView;
use crate::table::short_number;
use crate::web::state::{Selection, Snippets};
use crate::web::widgets::health_badges::task_flags_view;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn TaskRollouts(run: Arc<RunView>, sel: Selection) -> impl IntoView {
    let snippets = use_context::<Snippets>();
    move || {
        sel.task.get().map(|t| {
            let meta = &run.view.tasks[t];
            let snippet = snippets.map_or_else(|| meta.snippet.clone(), |s| s.of(&run, t));
            let reward = run.metric("reward");
            let matched = sel.matched.get();
            let (points, hidden): (Vec<usize>, Vec<usize>) = run
                .task_points(t)
                .partition(|&p| matched.as_ref().is_none_or(|m| m.get(p).copied().unwrap_or(false)));
            let hidden = (!hidden.is_empty()).then(|| {
                view! { <span class="muted" data-testid="rollouts-hidden">{format!("{} not matching the query hidden", hidden.len())}</span> }
            });
            let buttons = points
                .into_iter()
                .map(|p| {
                    let label = format!(
                        "rollout {} · reward {}",
                        run.cols.point_rollout[p],
                        reward.map_or("–".into(), |m| short_number(run.value(p, m)))
                    );
                    let r = run.clone();
                    let flags = run
                        .point_bits(p)
                        .map(|b| task_flags_view(crate::inspect::health::flags_in(b).map(|f| (f, 1)).collect()));
                    view! { <button class="rollout-link" data-testid="open-rollout" on:click=move |_| sel.open_point(&r, p)>{label}" "{flags}</button> }
                })
                .collect_view();
            view! {
                <div class="task-rollouts" data-testid="task-rollouts">
                    <p><strong>{format!("Task {}", meta.task)}</strong>" — "<span class="snippet">{snippet}</span></p>
                    {buttons}
                    {hidden}
                </div>
            }
        })
    }
}
