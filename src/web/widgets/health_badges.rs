//! Health on the profile page: a task's flags as badges (the task table's column), and the chip
//! of the Health page's filter, which clears it.

use crate::health::Flag;
use crate::inspect::health::flag_label;
use crate::web::state::HealthLink;
use leptos::prelude::*;

/// A task's flags, each with how many of its rollouts carry it ("loop ×2").
pub fn task_flags_view(flags: Vec<(Flag, u32)>) -> impl IntoView {
    flags
        .into_iter()
        .map(|(f, n)| {
            let text = if n > 1 {
                format!("{} ×{n}", flag_label(f))
            } else {
                flag_label(f).to_string()
            };
            view! { <span class="badge flag" data-flag=f.as_str()>{text}</span> }
        })
        .collect_view()
}

/// The Health page's filter as a chip with the tasks it keeps; its button clears it.
#[component]
pub fn HealthChip(link: HealthLink, count: Signal<usize>, total: usize) -> impl IntoView {
    move || {
        link.filter.get().map(|f| {
            view! {
                <div class="filter-chip" data-testid="health-chip">
                    <span>"Health: "<strong>{f.label()}</strong>
                        {move || format!(" — {} of {total} tasks have such a rollout", count.get())}</span>
                    <button data-testid="health-chip-clear" title="clear this filter"
                        on:click=move |_| link.filter.set(None)>"✕"</button>
                </div>
            }
        })
    }
}
