//! Health on the profile page: a task's flags as badges (the task table's column).

use crate::health::Flag;
use crate::inspect::health::flag_label;
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
