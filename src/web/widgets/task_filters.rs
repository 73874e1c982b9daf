//! The task table's filters: reward group (the core's classifier), agent, and a search by task
//! index or prompt text, with the count of tasks shown.

use crate::inspect::query::TaskQuery;
use crate::reward_group::RewardGroup;
use leptos::prelude::*;

/// What each group means, in the filter's options, with the pass threshold it is judged at.
fn describe(g: RewardGroup, threshold: f64) -> String {
    let threshold = crate::figures::reward(Some(threshold));
    match g {
        RewardGroup::AllFailure => format!("never passes (no rollout has reward ≥ {threshold})"),
        RewardGroup::AllSuccess => {
            format!("always passes (every rollout has reward ≥ {threshold})")
        }
        RewardGroup::Mixed => {
            format!("sometimes passes (some rollouts have reward ≥ {threshold}: PivotRL's signal)")
        }
        RewardGroup::NoReward => "no reward".into(),
    }
}

#[component]
pub fn TaskFilters(
    query: RwSignal<TaskQuery>,
    agents: Vec<String>,
    count: Signal<usize>,
    total: usize,
    /// The pass threshold, a control when rewards are not all 0/1.
    threshold: RwSignal<f64>,
    binary: bool,
) -> impl IntoView {
    let groups = move || {
        let t = threshold.get();
        RewardGroup::ALL
            .map(|g| view! { <option value=g.as_str()>{describe(g, t)}</option> })
            .collect_view()
    };
    // Rewards between 0 and 1: where a pass starts is a choice, so it is a control.
    let control = (!binary).then(|| {
        view! {
            <label title="rewards here are not all 0 or 1: choose the reward a rollout passes at">"A pass is reward ≥ "
                <input type="number" min="0" step="0.05" class="threshold" data-testid="pass-threshold"
                    prop:value=move || threshold.get().to_string()
                    on:change=move |e| {
                        if let Ok(v) = event_target_value(&e).parse::<f64>() {
                            if v.is_finite() {
                                threshold.set(v);
                            }
                        }
                    } />
            </label>
        }
    });
    view! {
        <div class="filters">
            {control}
            <label title="a pass is reward ≥ the threshold (NeMo Gym's default: 1)">"Passes "
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
