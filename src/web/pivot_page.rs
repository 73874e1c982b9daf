//! The pivot validator page: a file and upstream's options in, the verdict, every error grouped
//! by check (click one to see its row with the offending value marked), stats and the fixed copy.

use super::download::ObjectUrl;
use super::protocol::{self, object};
use super::worker_client::BackgroundWorker;
use crate::pivot::checks::Finding;
use crate::pivot::highlight::{pretty_segments, Segment};
use crate::pivot::report::PivotView;
use crate::pivot::PivotOptions;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::sync::Arc;
use wasm_bindgen_futures::JsFuture;

#[derive(Clone)]
enum Phase {
    Idle,
    Running { bytes: f64, total: f64, lines: f64 },
    Done(Arc<PivotView>, Option<Arc<ObjectUrl>>),
    Failed(String),
}

#[component]
pub fn PivotPage(
    /// The file to validate: chosen here, or dropped on the profile page and recognized there.
    file: RwSignal<Option<web_sys::File>, LocalStorage>,
) -> impl IntoView {
    let agent_ref = RwSignal::new(String::new());
    let require_fields = RwSignal::new(String::new());
    let check_tool_names = RwSignal::new(true);
    let allow_batch = RwSignal::new(false);
    let fail_fast = RwSignal::new(false);
    let fix = RwSignal::new(false);
    let stats = RwSignal::new(false);
    let phase = RwSignal::new(Phase::Idle);
    let worker_ready = RwSignal::new(false);
    let worker = StoredValue::new_local(BackgroundWorker::start(move |ready| {
        worker_ready.set(ready)
    }));
    let shown_row = RwSignal::new(None::<(Finding, Vec<Segment>)>);

    let options = move || PivotOptions {
        agent_ref: Some(agent_ref.get_untracked()).filter(|s| !s.is_empty()),
        check_tool_names: check_tool_names.get_untracked(),
        require_fields: require_fields
            .get_untracked()
            .split([',', '\n', ' '])
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect(),
        allow_batch: allow_batch.get_untracked(),
        fail_fast: fail_fast.get_untracked(),
        fix: fix.get_untracked(),
        stats: stats.get_untracked(),
        ..PivotOptions::default()
    };

    let run = move || {
        let Some(f) = file.get_untracked() else {
            return;
        };
        let opts = serde_json::to_string(&options()).unwrap_or_default();
        shown_row.set(None);
        phase.set(Phase::Running {
            bytes: 0.0,
            total: f.size(),
            lines: 0.0,
        });
        let request = object(&[
            ("kind", "validate-pivot".into()),
            ("file", f.into()),
            ("options", opts.into()),
        ]);
        let on_message =
            move |msg: wasm_bindgen::JsValue| match protocol::text(&msg, "kind").as_str() {
                "progress" => phase.set(Phase::Running {
                    bytes: protocol::number(&msg, "bytes"),
                    total: protocol::number(&msg, "total"),
                    lines: protocol::number(&msg, "lines"),
                }),
                "pivot-done" => {
                    let view: Result<PivotView, _> =
                        serde_json::from_str(&protocol::text(&msg, "view"));
                    let fixed = protocol::blob(&msg, "fixed").and_then(|b| {
                        let name = crate::names::fixed_pivots(
                            &view.as_ref().map(|v| v.file.clone()).unwrap_or_default(),
                        );
                        ObjectUrl::from_blob(name, &b).ok().map(Arc::new)
                    });
                    phase.set(match view {
                        Ok(v) => Phase::Done(Arc::new(v), fixed),
                        Err(e) => Phase::Failed(e.to_string()),
                    });
                }
                _ => phase.set(Phase::Failed(protocol::text(&msg, "message"))),
            };
        let sent = worker.with_value(|w| match w {
            Ok(w) => w.request(request, on_message),
            Err(e) => Err(e.clone()),
        });
        if let Err(e) = sent {
            phase.set(Phase::Failed(e));
        }
    };
    let cancel = move |_| {
        worker.with_value(|w| {
            if let Ok(w) = w {
                let _ = w.cancel();
            }
        });
        phase.set(Phase::Failed("Cancelled.".into()));
    };
    let on_file = move |e: ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&e);
        if let Some(f) = input.files().and_then(|l| l.get(0)) {
            file.set(Some(f));
        }
    };
    // A new file (from this page or handed over by the profile page) is validated at once.
    Effect::new(move |_| {
        if file.with(Option::is_some) {
            run();
        }
    });
    let show_row = move |finding: Finding| {
        let (Some(f), Some((offset, len))) = (file.get_untracked(), finding.span) else {
            return;
        };
        spawn_local(async move {
            let Ok(blob) = f.slice_with_f64_and_f64(offset as f64, offset as f64 + f64::from(len))
            else {
                return;
            };
            let Ok(text) = JsFuture::from(blob.text()).await else {
                return;
            };
            let segments = pretty_segments(&text.as_string().unwrap_or_default(), &finding.path);
            shown_row.set(Some((finding, segments)));
        });
    };
    let checkbox = move |signal: RwSignal<bool>, testid: &'static str, label: &'static str| {
        view! {
            <label><input type="checkbox" data-testid=testid prop:checked=move || signal.get()
                on:change=move |e| signal.set(event_target_checked(&e)) />{label}</label>
        }
    };

    view! {
        <section class="pick">
            <p>"Check a pivot dataset (one assistant decision point per JSONL row) against NeMo Gym's row contract. The file is read here, in a background worker."</p>
            <label>"Pivot JSONL " <input type="file" accept=".jsonl,.json" data-testid="pivot-file" on:change=on_file /></label>
            <label>"Expected agent_ref.name (--agent-ref) "
                <input type="text" data-testid="pivot-agent-ref" prop:value=move || agent_ref.get()
                    on:input=move |e| agent_ref.set(event_target_value(&e)) /></label>
            <label>"Required fields (--require-field, comma separated) "
                <input type="text" data-testid="pivot-require-field" prop:value=move || require_fields.get()
                    on:input=move |e| require_fields.set(event_target_value(&e)) /></label>
            <div class="options">
                {checkbox(check_tool_names, "pivot-check-tool-names", " expected tools must be in tools")}
                {checkbox(allow_batch, "pivot-allow-batch", " accept function_call_batch")}
                {checkbox(fail_fast, "pivot-fail-fast", " stop at the first error (upstream)")}
                {checkbox(stats, "pivot-stats", " conversion stats")}
                {checkbox(fix, "pivot-fix", " make a fixed copy")}
            </div>
            <button data-testid="pivot-validate" on:click=move |_| run()>"Validate"</button>
            <span hidden data-testid="pivot-worker" data-worker-state="pivot">{move || if worker_ready.get() { "ready" } else { "loading" }}</span>
        </section>
        {move || match phase.get() {
            Phase::Idle => view! { <p data-testid="pivot-status" class="status">"Choose a pivot JSONL file."</p> }.into_any(),
            Phase::Running { bytes, total, lines } => view! {
                <div data-testid="pivot-status" class="status working">
                    <progress max=total value=bytes data-testid="pivot-progress"></progress>
                    {format!(" {:.1} of {:.1} MB, {} lines ", bytes / 1e6, total / 1e6, lines)}
                    <button data-testid="pivot-cancel" on:click=cancel>"Cancel"</button>
                </div>
            }.into_any(),
            Phase::Failed(e) => view! { <pre data-testid="pivot-status" class="status error">{e}</pre> }.into_any(),
            Phase::Done(view, fixed) => view! { <PivotResult view=view fixed=fixed on_pick=show_row /> }.into_any(),
        }}
        {move || shown_row.get().map(|(finding, segments)| view! {
            <section class="row-view">
                <h2>{format!("Line {}: {}", finding.line, finding.path)}</h2>
                <pre data-testid="pivot-row">{segments.into_iter().map(|s| if s.marked {
                    view! { <mark>{s.text}</mark> }.into_any()
                } else {
                    view! { <span>{s.text}</span> }.into_any()
                }).collect_view()}</pre>
            </section>
        })}
    }
}

#[component]
fn PivotResult(
    view: Arc<PivotView>,
    fixed: Option<Arc<ObjectUrl>>,
    on_pick: impl Fn(Finding) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let verdict = if view.valid {
        format!("Valid: {} rows pass every check.", view.rows)
    } else {
        format!(
            "Invalid: {} errors in {} of {} rows.",
            view.errors_total, view.invalid_rows, view.rows
        )
    };
    let groups = view
        .groups
        .iter()
        .map(|g| {
            let findings = g
                .findings
                .iter()
                .map(|f| {
                    let finding = f.clone();
                    let place = match f.column {
                        Some(c) => format!("line {}:{c}", f.line),
                        None if f.line > 0 => format!("line {}", f.line),
                        None => String::new(),
                    };
                    let found = if f.found == "(missing)" { String::new() } else { format!(" — found {}", f.found) };
                    view! {
                        <li><button class="finding" data-testid="pivot-finding" data-line=f.line.to_string()
                            on:click=move |_| on_pick(finding.clone())>{place}</button>
                            " " {f.message.clone()} {found}</li>
                    }
                })
                .collect_view();
            let more = (g.count as usize > g.findings.len())
                .then(|| view! { <li class="more">{format!("… and {} more", g.count as usize - g.findings.len())}</li> });
            view! {
                <details open data-testid="pivot-group" data-check=g.id.clone()>
                    <summary>{format!("[{}] {} — {}", g.id, g.title, g.count)}</summary>
                    <ul>{findings}{more}</ul>
                </details>
            }
        })
        .collect_view();
    let fix_view = view.fix.clone().map(|f| {
        let link = fixed.clone().map(|u| view! {
            <a href=u.url.clone() download=u.file_name.clone() data-testid="pivot-fix-download">
                {format!("Download {} ({} rows, {} changed)", u.file_name, f.written, f.changed)}</a>
        });
        let unfixable = f.unfixable.iter().map(|(_, why)| view! { <li>{why.clone()}</li> }).collect_view();
        view! { <section><h2>"Fixed copy"</h2>{link}<ul data-testid="pivot-unfixable">{unfixable}</ul></section> }
    });
    view! {
        <p data-testid="pivot-status" class=if view.valid { "status done" } else { "status error" }>
            <span data-testid="pivot-verdict">{verdict}</span></p>
        {view.upstream_error.clone().map(|u| view! { <p><code data-testid="pivot-upstream">{u}</code></p> })}
        {view.valid.then(|| view! { <pre data-testid="pivot-summary">{view.summary_text.clone()}</pre> })}
        <section data-testid="pivot-errors">{groups}</section>
        {view.stats_text.clone().map(|s| view! { <pre data-testid="pivot-stats">{s}</pre> })}
        {fix_view}
    }
}
