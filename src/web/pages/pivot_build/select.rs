//! The selection (`select-pivot`): a pivot file, the profile of its on-policy rollouts and
//! the build's Gym config in; the worker reads them once and decides on every pivot, then the
//! λ_diff slider (`--max-mean`) re-plans from those decisions as it moves: counts by class, per
//! depth and per expected tool, two histograms with the threshold marked, and the files
//! `select-pivot` writes for the same options.

use crate::inspect::pivot_build::select_options;
use crate::pivot_build::select::SelectOptions;
use crate::web::follower::Follower;
use crate::web::pages::pivot_build::select_result::{SelectResult, Selected, Stats};
use crate::web::protocol::{Reply, Request};
use crate::web::widgets::file_pick::DropFile;
use crate::web::worker_client::SharedWorker;
use leptos::prelude::*;
use std::rc::Rc;
use std::sync::Arc;

#[derive(Clone)]
pub enum Phase {
    Idle,
    Running,
    Done(Rc<Selected>),
    Failed(String),
}

#[component]
pub fn SelectSection(worker: SharedWorker) -> impl IntoView {
    let pivots = RwSignal::new_local(None::<web_sys::File>);
    let profile = RwSignal::new_local(None::<web_sys::File>);
    let config = RwSignal::new_local(None::<web_sys::File>);
    let min_rollouts = RwSignal::new("8".to_string());
    let threshold = RwSignal::new("1.0".to_string());
    let max_pivots = RwSignal::new(String::new());
    let lambda_on = RwSignal::new(false);
    let lambda = RwSignal::new(0.5_f64);
    let phase = RwSignal::new_local(Phase::Idle);
    let stats = RwSignal::new(None::<Arc<Stats>>);
    let reading = StoredValue::new(false);

    let follower = Follower::new(worker, move |reply| match reply {
        Reply::Progress(_) => {}
        Reply::PivotsSelected(s) => {
            let mut s = *s;
            if reading.get_value() {
                reading.set_value(false);
                let means = std::mem::take(&mut s.means);
                let variances = std::mem::take(&mut s.variances);
                stats.set(Some(Arc::new(Stats { means, variances })));
            }
            phase.set(Phase::Done(Rc::new(Selected::new(s))));
        }
        Reply::Failed(f) => phase.set(Phase::Failed(f.message)),
        _ => phase.set(Phase::Failed("unexpected reply from the worker".into())),
    });
    let options = move || -> Result<SelectOptions, String> {
        let mut o = select_options(
            &min_rollouts.get_untracked(),
            &threshold.get_untracked(),
            &max_pivots.get_untracked(),
        )?;
        o.max_mean = lambda_on.get_untracked().then(|| lambda.get_untracked());
        Ok(o)
    };
    let run = move || {
        let (Some(pivots), Some(profile)) = (pivots.get_untracked(), profile.get_untracked())
        else {
            phase.set(Phase::Failed(
                "Choose a pivot file and its *_reward_profiling.jsonl.".into(),
            ));
            return;
        };
        let options = match options() {
            Ok(o) => o,
            Err(e) => return phase.set(Phase::Failed(e)),
        };
        phase.set(Phase::Running);
        reading.set_value(true);
        follower.send(Request::SelectPivots {
            pivots,
            profile,
            config: config.get_untracked(),
            options,
        });
    };
    // The slider re-plans from the decisions the worker holds; the files once it is let go.
    let replan = move |files: bool| {
        if !matches!(phase.get_untracked(), Phase::Done(_)) {
            return;
        }
        match options() {
            Ok(options) => follower.send(Request::PlanPivots { options, files }),
            Err(e) => phase.set(Phase::Failed(e)),
        }
    };
    let text = move |signal: RwSignal<String>, testid: &'static str, label: &'static str| {
        view! { <label>{label}<input type="text" data-testid=testid prop:value=move || signal.get()
        on:input=move |e| signal.set(event_target_value(&e)) /></label> }
    };
    let max_mean = move || lambda_on.get().then(|| lambda.get());
    view! {
        <section class="pick">
            <h2>"Select pivots by their on-policy rollouts"</h2>
            <p>"After "<code>"gymscope collect --num-repeats 8"</code>" against the pivot agent and "<code>"gymscope profile"</code>": keep the pivots whose rollouts had mixed rewards, as "<code>"gymscope select-pivot"</code>" does."</p>
            <DropFile label="Pivot JSONL…" testid="pb-pivots-file" hint="the pivot dataset" file=pivots />
            <DropFile label="Its profile…" testid="pb-profile-file" hint="*_reward_profiling.jsonl of the pivots' rollouts" file=profile />
            <DropFile label="Its Gym config…" testid="pb-config-file" hint="optional: the build's .gym.yaml, for the selection's config" file=config />
            {text(min_rollouts, "pb-min-rollouts", "Minimum rollouts ")}
            {text(threshold, "pb-success-threshold", "Success threshold ")}
            {text(max_pivots, "pb-max-pivots", "At most N pivots (empty: all) ")}
            <label class="band">
                <input type="checkbox" data-testid="pb-lambda-on" prop:checked=move || lambda_on.get()
                    on:change=move |e| { lambda_on.set(event_target_checked(&e)); replan(true); } />
                "λ_diff (--max-mean): keep a pivot whose rewards vary and whose mean is below "
                <input type="range" min="0" max="1" step="0.01" data-testid="pb-lambda" prop:value=move || lambda.get().to_string()
                    on:input=move |e| { lambda.set(event_target_value(&e).parse().unwrap_or(0.0)); replan(false); }
                    on:change=move |_| replan(true) />
                <span class="chosen" data-testid="pb-lambda-value">{move || lambda.get().to_string()}</span>
            </label>
            <button data-testid="pb-select" on:click=move |_| run()>"Select"</button>
        </section>
        {move || match phase.get() {
            Phase::Idle => view! { <p data-testid="pb-select-status" class="status">"Choose a pivot file and its profile."</p> }.into_any(),
            Phase::Running => view! { <p data-testid="pb-select-status" class="status working">"Selecting…"</p> }.into_any(),
            Phase::Failed(e) => view! { <pre data-testid="pb-select-status" class="status error">{e}</pre> }.into_any(),
            Phase::Done(s) => view! { <SelectResult selected=s stats=stats max_mean=Signal::derive(max_mean) /> }.into_any(),
        }}
    }
}
