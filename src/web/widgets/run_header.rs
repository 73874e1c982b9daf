//! The run's header at the top of the run: per agent its model, sampling parameters and agent
//! config (`inspect::run_header`), read from the first 256 KB of the inputs and rollouts files.

use crate::inspect::run_header::{from_heads, AgentConfig};
use leptos::prelude::*;
use leptos::task::spawn_local;

/// The bytes a header is read from: the first rows of each file (and "Group by"'s fields).
const HEAD: u64 = 256 * 1024;

pub async fn head(file: Option<web_sys::File>) -> Vec<u8> {
    let Some(file) = file else { return Vec::new() };
    let blob = gloo_file::Blob::from(file);
    let end = blob.size().min(HEAD);
    gloo_file::futures::read_as_bytes(&blob.slice(0, end))
        .await
        .unwrap_or_default()
}

#[component]
pub fn RunHeader(
    inputs: Signal<Option<web_sys::File>, LocalStorage>,
    rollouts: Signal<Option<web_sys::File>, LocalStorage>,
) -> impl IntoView {
    let configs = RwSignal::new(Vec::<AgentConfig>::new());
    Effect::new(move |_| {
        let (i, r) = (inputs.get(), rollouts.get());
        spawn_local(async move {
            let (i, r) = (head(i).await, head(r).await);
            configs.set(from_heads(&i, &r));
        });
    });
    move || {
        let lines = configs.get();
        (!lines.is_empty()).then(|| {
            let rows = lines
                .into_iter()
                .map(|c| {
                    let params = c
                        .params
                        .into_iter()
                        .map(|(k, v)| view! { <span class="param"><span class="muted">{k}" "</span>{v}</span> })
                        .collect_view();
                    view! { <li data-testid="run-header-agent" data-header-agent=c.agent.clone()><strong>{c.agent.clone()}</strong>" "{params}</li> }
                })
                .collect_view();
            view! { <ul class="run-header" data-testid="run-header" title="each agent's first row: responses_create_params, agent_ref, response.model">{rows}</ul> }
        })
    }
}
