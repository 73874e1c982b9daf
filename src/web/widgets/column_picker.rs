//! The task table's column picker: the profile's columns by group (the core's
//! [`crate::inspect::table_columns`]), a checkbox each, so a run of 80 statistics shows the few
//! that matter first and any other on demand.

use crate::inspect::table_columns::{label, ColumnGroup};
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn ColumnPicker(
    headers: Arc<Vec<String>>,
    groups: Arc<Vec<ColumnGroup>>,
    shown: RwSignal<Vec<bool>>,
) -> impl IntoView {
    let total = headers.len();
    let count = move || shown.with(|s| s.iter().filter(|v| **v).count());
    let boxes = groups
        .iter()
        .map(|g| {
            let items = g
                .columns
                .iter()
                .map(|&c| {
                    let text = label(&headers[c]).to_string();
                    view! {
                        <label title=headers[c].clone()><input type="checkbox" data-testid="column-toggle" data-key=headers[c].clone()
                            prop:checked=move || shown.with(|s| s.get(c).copied().unwrap_or(false))
                            on:change=move |e| { let on = event_target_checked(&e); shown.update(|s| if let Some(v) = s.get_mut(c) { *v = on; }); } />
                            {text}</label>
                    }
                })
                .collect_view();
            let name = if g.field.is_empty() { "counts".to_string() } else { g.field.clone() };
            view! { <fieldset><legend>{name}</legend>{items}</fieldset> }
        })
        .collect_view();
    view! {
        <details class="column-picker" data-testid="column-picker">
            <summary>{move || format!("Columns ({} of {total})", count())}</summary>
            <div class="column-groups">{boxes}</div>
        </details>
    }
}
