//! The Profile page's pass-rate band, `gymscope select-tasks --min-pass A --max-pass B` on the
//! run shown: two sliders whose band is written into the page's query (`task.pass_rate >= A
//! and task.pass_rate <= B`: the one filter model, the query bar shows and applies it), the
//! counts `select-tasks` prints for the band as the sliders move (the worker decides each band
//! from the profile read once), a histogram of the tasks' pass rates with the band marked, and
//! the curated tasks with their `.selection.json`, byte for byte the command's.

use crate::curate::band_query;
use crate::web::download::DownloadLink;
use crate::web::follower::Follower;
use crate::web::protocol::{Reply, Request, TaskBand, TasksCurated};
use crate::web::state::Selection;
use crate::web::widgets::histogram::{Bars, Mark};
use crate::web::worker_client::SharedWorker;
use leptos::prelude::*;
use std::rc::Rc;
use std::sync::Arc;

#[derive(Clone)]
struct Shown {
    counts: Rc<TasksCurated>,
    links: Vec<(&'static str, DownloadLink)>,
}

fn slider(
    value: RwSignal<f64>,
    testid: &'static str,
    moved: impl Fn(bool) + Copy + 'static,
) -> impl IntoView {
    view! {
        <input type="range" min="0" max="1" step="0.01" data-testid=testid prop:value=move || value.get().to_string()
            on:input=move |e| { value.set(event_target_value(&e).parse().unwrap_or(0.0)); moved(false); }
            on:change=move |_| moved(true) />
        <span class="chosen">{move || value.get().to_string()}</span>
    }
}

#[component]
pub fn PassBand(worker: SharedWorker, sel: Selection) -> impl IntoView {
    let lo = RwSignal::new(0.0_f64);
    let hi = RwSignal::new(1.0_f64);
    let rates = RwSignal::new(None::<Arc<Vec<f64>>>);
    let shown = RwSignal::new_local(None::<Result<Shown, String>>);
    // The band shown is upside down: a reply to an earlier band, still on its way, must not
    // replace the refusal (a test saw "11 of 30 tasks kept" after "0.9 is above 0.1").
    let refused = StoredValue::new(false);
    let follower = Follower::new(worker, move |reply| match reply {
        Reply::TasksCurated(c) => {
            let mut c = *c;
            let r = std::mem::take(&mut c.rates);
            if !r.is_empty() || rates.with_untracked(Option::is_none) {
                rates.set(Some(Arc::new(r)));
            }
            if refused.get_value() {
                return;
            }
            let links = [
                ("band-download-curated", c.curated.take()),
                ("band-download-selection", c.selection.take()),
            ];
            let links = links
                .into_iter()
                .filter_map(|(id, d)| Some((id, DownloadLink::from(d?))))
                .collect();
            shown.set(Some(Ok(Shown {
                counts: Rc::new(c),
                links,
            })));
        }
        Reply::Progress(_) => {}
        Reply::Failed(_) if refused.get_value() => {}
        Reply::Failed(f) => shown.set(Some(Err(f.message))),
        _ => shown.set(Some(Err("unexpected reply from the worker".into()))),
    });
    // `files`: the slider was let go: the band becomes the query and the files are made.
    let moved = move |files: bool| {
        let (a, b) = (lo.get_untracked(), hi.get_untracked());
        refused.set_value(a > b);
        if a > b {
            shown.set(Some(Err(format!("The band is empty: {a} is above {b}."))));
            return;
        }
        if files {
            sel.query.set(band_query(a, b));
        }
        let rates = rates.with_untracked(Option::is_none);
        follower.send(Request::CurateTasks(TaskBand {
            min_pass: a,
            max_pass: b,
            files,
            rates,
        }));
    };
    let opened = StoredValue::new(false);
    let on_toggle = move |_| {
        if !opened.get_value() {
            opened.set_value(true);
            moved(true);
        }
    };
    let histogram = move || {
        let rates = rates.get()?;
        let h = crate::plot::histogram(rates.iter().copied());
        let (a, b) = (lo.get(), hi.get());
        // Pass rates on a numeric axis from 0 to 1 (issue 60, item 10), each bar at its value.
        let axis = crate::plot::value_axis::ValueAxis::new(0.0, 1.0);
        let marks = [
            Mark::on_axis(&axis, &h, a, true, format!("≥ {a}")),
            Mark::on_axis(&axis, &h, b, false, format!("≤ {b}")).map(|m| Mark { upper: true, ..m }),
        ];
        Some(
            view! { <Bars histogram=h what="pass rate" unit="tasks" testid="band-histogram" bar_testid="band-bar" marks=marks.into_iter().flatten().collect() axis=axis /> },
        )
    };
    let result = move || {
        shown.get().map(|r| match r {
            Err(e) => view! { <pre class="status error" data-testid="band-status">{e}</pre> }.into_any(),
            Ok(s) => {
                let c = &s.counts;
                // The command's options the page does not offer (`--where`, `--max-tasks`) drop nothing
                // here: their zeros are left out of the page's list (the command's text keeps them).
                let dropped = c.dropped.iter().filter(|(r, n)| *n > 0 || !matches!(r.as_str(), "where" | "over_max_tasks")).map(|(r, n)| view! { <li data-testid="band-dropped" data-reason=r.clone() data-count=n.to_string()>{format!("{r}: {n}")}</li> }).collect_view();
                let links = s.links.iter().map(|(id, l)| {
                    let what = if *id == "band-download-curated" { "Download the curated tasks" } else { "Its counts" };
                    view! { <li>{l.anchor(id, format!("{what}: {} ({})", l.name, crate::inspect::numbers::file_size(l.bytes)))}</li> }
                }).collect_view();
                view! {
                    <p class="status done" data-testid="band-status" data-kept=c.kept.to_string() data-tasks=c.tasks.to_string()>
                        {format!("{} of {} tasks kept.", c.kept, c.tasks)}{c.empty.clone().map(|e| format!(" Nothing to write: {e}."))}</p>
                    <pre data-testid="band-counts">{c.text.clone()}</pre>
                    <ul class="muted">{dropped}</ul>
                    <ul class="downloads">{links}</ul>
                }.into_any()
            }
        })
    };
    view! {
        <details class="band" data-testid="pass-band" data-scope="run" on:toggle=on_toggle>
            <summary>"Curate tasks by pass rate ("<code>"gymscope select-tasks"</code>")"</summary>
            <p>"Keep the tasks whose pass rate lies in the band (both ends included); the band is applied as the query above. "
                "Download the curated tasks: each kept task's sample, one per line, the next collection's or training's input."</p>
            <p class="muted">"The pass rates are the whole run's tasks' (a query does not filter them: the band becomes the query)."</p>
            <label>"From " {slider(lo, "band-min", moved)}</label>
            <label>" to " {slider(hi, "band-max", moved)}</label>
            {histogram}
            {result}
        </details>
    }
}
