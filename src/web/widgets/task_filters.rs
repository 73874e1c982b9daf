//! The task table's filters: reward group (the core's classifier), agent, and a search by task
//! index or prompt text, with the count of tasks shown.

use crate::inspect::query::TaskQuery;
use crate::reward_group::RewardGroup;
use leptos::prelude::*;

/// What each group means, in the filter's options, with the pass threshold it is judged at.
fn describe(g: RewardGroup) -> String {
    let threshold = crate::figures::reward(Some(crate::reward_group::DEFAULT_THRESHOLD));
    match g {
        RewardGroup::AllFailure => format!("never passes (no rollout has reward ≥ {threshold})"),
        RewardGroup::AllSuccess => {
            format!("always passes (every rollout has reward ≥ {threshold})")
        }
        RewardGroup::Mixed => "sometimes passes (mixed: PivotRL's signal)".into(),
        RewardGroup::NoReward => "no reward".into(),
    }
}

#[component]
pub fn TaskFilters(
    query: RwSignal<TaskQuery>,
    agents: Vec<String>,
    count: Signal<usize>,
    total: usize,
) -> impl IntoView {
    let groups = RewardGroup::ALL
        .map(|g| view! { <option value=g.as_str()>{describe(g)}</option> })
        .collect_view();
    view! {
        <div class="filters">
            <label title="a pass is reward ≥ 1 (NeMo Gym's default pass threshold)">"Passes "
                <select data-testid="filter-group" on:change=move |e| {
                    let g = RewardGroup::parse(&event_target_value(&e));
                    query.update(|q| q.group = g);
                }>
                    <option value="">"all"</option>
                    {groups}
                </select>
            </label>
            <label>"Agent "
                <select data-testid="filter-agent" on:change=move |e| {
                    let a = event_target_value(&e);
                    query.update(|q| q.agent = (!a.is_empty()).then_some(a));
                }>
                    <option value="">"all"</option>
                    {agents.into_iter().map(|a| { let label = a.clone(); view! { <option value=a>{label}</option> } }).collect_view()}
                </select>
            </label>
            <label>"Search "
                <input type="search" data-testid="task-search" placeholder="task index or prompt text"
                    on:input=move |e| { let s = event_target_value(&e); query.update(|q| q.search = s); } />
            </label>
            <span data-testid="task-count">{move || format!("{} of {} tasks", count.get(), total)}</span>
        </div>
    }
}
