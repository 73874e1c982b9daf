//! The table beside the plot, grouped by any field (docs/app.md, "Group by"): by agent (with
//! the interval across repeats), by the tasks' reward group at the pass threshold, or by a
//! field of the materialized rows (`inspect::grouping`: `dataset`, `difficulty`, …, offered from
//! the inputs' first rows), which a worker of its own reads once per field. Every grouping
//! counts the query's rollouts when one is applied (the rule of docs/app.md).

use crate::inspect::grouping::{fields_in_head, FieldGroups};
use crate::inspect::run::RunView;
use crate::table::key_figures::AgentLine;
use crate::web::pages::profile::summary::{breakable, scope};
use crate::web::protocol::{Progress, Reply, Request};
use crate::web::state::Selection;
use crate::web::widgets::run_header::head;
use crate::web::worker_client::WorkerHandle;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::collections::HashMap;
use std::sync::Arc;

/// A field's read: under way, done, or failed.
#[derive(Clone)]
enum Read {
    Reading(Progress),
    Done(Arc<FieldGroups>),
    Failed(String),
}

/// The select's value for a field of the rows.
const FIELD: &str = "field:";

#[component]
pub fn GroupLines(
    run: Arc<RunView>,
    sel: Selection,
    inputs: Signal<Option<web_sys::File>, LocalStorage>,
) -> impl IntoView {
    let by = RwSignal::new("agent".to_string());
    let fields = RwSignal::new(Vec::<String>::new());
    Effect::new(move |_| {
        let file = inputs.get();
        spawn_local(async move { fields.set(fields_in_head(&head(file).await)) });
    });
    // Each field read once; a worker of its own, started at the first field asked for.
    let reads = RwSignal::new(HashMap::<String, Read>::new());
    let worker = StoredValue::new_local(None::<WorkerHandle>);
    let tasks: Vec<f64> = run.view.tasks.iter().map(|t| t.task as f64).collect();
    let read_field = move |field: String| {
        let known = reads.with_untracked(|r| matches!(r.get(&field), Some(Read::Done(_))));
        let Some(file) = inputs.get_untracked().filter(|_| !known) else {
            return;
        };
        let set = move |f: &str, r: Read| reads.update(|m| drop(m.insert(f.to_string(), r)));
        set(
            &field,
            Read::Reading(Progress {
                bytes: 0.0,
                total: file.size(),
                lines: 0,
            }),
        );
        let request = Request::GroupField {
            inputs: file,
            field: field.clone(),
            tasks: tasks.clone(),
        };
        worker.update_value(|w| {
            let w = w.get_or_insert_with(|| WorkerHandle::start(|_| {}));
            w.request(&request, move |reply| match reply {
                Reply::Progress(p) => set(&field, Read::Reading(p)),
                Reply::Grouped(g) => set(&field, Read::Done(Arc::new(*g))),
                Reply::Failed(f) => set(&field, Read::Failed(f.message)),
                _ => set(
                    &field,
                    Read::Failed("unexpected reply from the worker".into()),
                ),
            });
        });
    };
    let choose = move |value: String| {
        if let Some(field) = value.strip_prefix(FIELD) {
            read_field(field.to_string());
        }
        by.set(value);
    };
    let r = run.clone();
    // The lines and whether they carry the agents' colours.
    let lines = Memo::new(move |_| -> (Vec<AgentLine>, bool) {
        let by = by.get();
        sel.matched.with(|m| {
            let keep = m.as_ref().map(|m| m.as_slice());
            if by == "agent" {
                let lines =
                    keep.map_or_else(|| r.view.agent_lines.clone(), |k| r.agent_lines_of(k));
                return (lines, true);
            }
            if by == "group" {
                let (labels, of_task) = r.reward_group_groups(sel.threshold.get());
                return (r.group_lines(&labels, &of_task, keep), false);
            }
            let field = by.strip_prefix(FIELD).unwrap_or_default();
            let lines = reads.with(|reads| match reads.get(field) {
                Some(Read::Done(g)) => r.group_lines(&g.labels, &g.of_task, keep),
                _ => Vec::new(),
            });
            (lines, false)
        })
    });
    let rows = move || {
        let (lines, coloured) = lines.get();
        lines
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                let swatch = coloured.then(|| {
                    let colour = crate::plot::hex(crate::plot::agent_colour(i));
                    view! { <span class="swatch" style:background=colour></span>" " }
                });
                let clipped = (!a.interval_note.is_empty()).then(|| {
                    view! { " "<abbr class="clipped" data-testid="interval-clipped" title=a.interval_note.clone()>"(clipped)"</abbr> }
                });
                view! {
                    <tr data-testid="agent-line" data-key=a.agent.clone()>
                        <th scope="row">{swatch}{breakable(&a.agent)}</th>
                        <td>{a.rollouts.clone()}</td>
                        <td>{a.mean_reward.clone()}<span class="muted interval" title=a.interval_note.clone()>{a.interval.clone()}{clipped}</span></td>
                        <td>{a.pass_at_1.clone()}</td>
                        <td>{a.output_tokens.clone()}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    let name = move || {
        let by = by.get();
        match by.as_str() {
            "agent" => "agent".to_string(),
            "group" => "reward group".to_string(),
            _ => by.strip_prefix(FIELD).unwrap_or_default().to_string(),
        }
    };
    let heading = move || {
        let of = if sel.matched.with(Option::is_some) {
            " (the query's rollouts)"
        } else {
            ""
        };
        format!("Per {}{of}", name())
    };
    let status = move || {
        let by = by.get();
        let field = by.strip_prefix(FIELD)?;
        let file = inputs
            .with(|f| f.as_ref().map(web_sys::File::name))
            .unwrap_or_default();
        reads.with(|r| match r.get(field)? {
            Read::Reading(p) => Some(view! {
                <p class="muted" data-testid="group-reading"><progress max=p.total value=p.bytes></progress>
                    {format!(" reading {field} from {file}")}</p>
            }.into_any()),
            Read::Failed(e) => Some(view! { <p class="error" data-testid="group-error">{e.clone()}</p> }.into_any()),
            Read::Done(g) => Some(view! {
                <p class="muted" data-testid="group-note">{format!("{} values of {field} (each task's first row in {file})", g.labels.len())}</p>
            }.into_any()),
        })
    };
    let options = move || {
        fields
            .get()
            .into_iter()
            .map(|f| view! { <option value=format!("{FIELD}{f}")>{f.clone()}</option> })
            .collect_view()
    };
    view! {
        <section class="agent-lines">
            <h2>{heading}</h2>
            <label class="group-by">"Group by "
                <select data-testid="group-by" on:change=move |e| choose(event_target_value(&e))
                    title="agent, the tasks' reward group at the pass threshold, or a field of the materialized rows">
                    <option value="agent">"agent"</option>
                    <option value="group">"reward group"</option>
                    {options}
                </select>
            </label>
            {status}
            <div class="table-wrap">
                <table data-testid="agent-lines" data-scope=scope(sel) data-group-by=name>
                    <thead><tr><th>{name}</th><th>"rollouts"</th><th title="95 % interval across repeats (per agent)">"mean reward"</th><th title="a pass is reward ≥ 1">"pass@1"</th><th>"output tokens"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </section>
    }
}
