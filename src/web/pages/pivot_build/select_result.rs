//! A selection's result: `select-pivot`'s counts (its table, then the kept pivots per depth and
//! per expected tool), the histograms of the profiled pivots' on-policy mean reward and reward
//! variance with λ_diff's rule marked (kept pivots: mean left of λ, variance right of 0), and
//! the files to save.

use crate::web::download::DownloadLink;
use crate::web::protocol::PivotsSelected;
use crate::web::widgets::histogram::{Bars, Mark};
use leptos::prelude::*;
use std::rc::Rc;
use std::sync::Arc;

/// The profiled pivots' on-policy mean rewards and variances, from the worker's reading.
pub struct Stats {
    pub means: Vec<f64>,
    pub variances: Vec<f64>,
}

pub struct Selected {
    pub counts: String,
    pub kept: u64,
    pub empty: Option<String>,
    pub links: Vec<(&'static str, DownloadLink)>,
}

impl Selected {
    pub fn new(s: PivotsSelected) -> Selected {
        let links = [
            ("pb-download-selected", s.selected),
            ("pb-download-selection", s.selection),
            ("pb-download-selected-config", s.config),
        ];
        Selected {
            counts: s.counts,
            kept: s.kept,
            empty: s.empty,
            links: links
                .into_iter()
                .filter_map(|(id, d)| Some((id, DownloadLink::from(d?))))
                .collect(),
        }
    }
}

#[component]
pub fn SelectResult(
    selected: Rc<Selected>,
    stats: RwSignal<Option<Arc<Stats>>>,
    max_mean: Signal<Option<f64>>,
) -> impl IntoView {
    let s = &selected;
    let status = match &s.empty {
        Some(why) => format!("No pivot selected: {why}."),
        None => format!("{} pivots selected.", s.kept),
    };
    let links = s
        .links
        .iter()
        .map(|(id, l)| view! { <li>{l.anchor(id, format!("{} ({})", l.name, crate::inspect::numbers::file_size(l.bytes)))}</li> })
        .collect_view();
    let plots = move || {
        let stats = stats.get()?;
        let means = crate::plot::histogram(stats.means.iter().copied());
        let variances = crate::plot::histogram(stats.variances.iter().copied());
        let x = max_mean.get();
        let mean_mark = x.and_then(|x| Mark::of(&means, x, true, format!("< {x}")));
        let var_mark = x.and(Mark::of(&variances, 0.0, false, "> 0".into()));
        Some(view! {
            <div class="plot-row">
                <div><h3>"On-policy mean reward per pivot"</h3>
                    <Bars histogram=means what="mean reward" unit="pivots" testid="pb-mean-histogram" bar_testid="pb-mean-bar" marks=mean_mark.into_iter().collect() /></div>
                <div><h3>"On-policy reward variance per pivot"</h3>
                    <Bars histogram=variances what="variance" unit="pivots" testid="pb-variance-histogram" bar_testid="pb-variance-bar" marks=var_mark.into_iter().collect() /></div>
            </div>
        })
    };
    view! {
        <p data-testid="pb-select-status" class="status done" data-kept=s.kept.to_string()>{status}</p>
        {plots}
        <ul class="downloads">{links}</ul>
        <div data-testid="pb-select-counts">{counts_view(&s.counts)}</div>
    }
}

/// The CLI's counts text as the page shows it: its Markdown table as a table (rendered by the
/// core's safe Markdown: tool names are data) and each line under it as a line.
fn counts_view(counts: &str) -> impl IntoView {
    let table_end = counts
        .lines()
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.len() + 1)
        .sum::<usize>()
        .min(counts.len());
    let (table, rest) = counts.split_at(table_end);
    let lines = rest
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| view! { <p class="muted">{l.to_string()}</p> })
        .collect_view();
    view! {
        <div class="md counts" inner_html=crate::model_text::markdown_html(table)></div>
        {lines}
    }
}
