//! The profile page's drop zone and pickers: every file chosen or dropped is recognized by its
//! content (the first megabyte: rollout lines can be long) and handed on with its kind.

use crate::inspect::detect::{classify, FileKind};
use crate::inspect::intake::role_note;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;

/// The embedded example run (`assets/example-run/`: three agents, 30 tasks, four repeats), so a
/// first visit shows what the pages are for: binned means, spread across repeats, agent lines.
const EXAMPLE: [(&str, &[u8]); 2] = [
    (
        "example_rollouts_materialized_inputs.jsonl",
        include_bytes!("../../../assets/example-run/example_rollouts_materialized_inputs.jsonl"),
    ),
    (
        "example_rollouts.jsonl",
        include_bytes!("../../../assets/example-run/example_rollouts.jsonl"),
    ),
];

/// Bytes read to recognize a file.
const HEAD: u64 = 1 << 20;

async fn kind_of(file: &web_sys::File) -> FileKind {
    let blob = gloo_file::Blob::from(file.clone());
    let head = gloo_file::futures::read_as_bytes(&blob.slice(0, HEAD.min(blob.size())))
        .await
        .unwrap_or_default();
    classify(&head, &file.name())
}

pub fn bytes_file(name: &str, bytes: &[u8]) -> web_sys::File {
    let file = gloo_file::File::new(name, bytes);
    AsRef::<web_sys::File>::as_ref(&file).clone()
}

/// Recognizes each file of a picker's list by its content, then hands them on (in order).
pub fn kinds_of(
    list: Option<web_sys::FileList>,
    on_files: impl FnOnce(Vec<(web_sys::File, FileKind)>) + 'static,
) {
    classify_all(file_list(list), on_files);
}

pub fn classify_all(
    files: Vec<web_sys::File>,
    on_files: impl FnOnce(Vec<(web_sys::File, FileKind)>) + 'static,
) {
    // When the files were chosen, for benches/browser_profile.rs (the page's side of a read).
    if let Some(body) = gloo_utils::document().body() {
        let _ = body.set_attribute("data-chosen-at", &js_sys::Date::now().to_string());
    }
    spawn_local(async move {
        let mut kinds = Vec::with_capacity(files.len());
        for file in files {
            let kind = kind_of(&file).await;
            kinds.push((file, kind));
        }
        on_files(kinds);
    });
}

fn file_list(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    list.map(|l| (0..l.length()).filter_map(|i| l.get(i)).collect())
        .unwrap_or_default()
}

#[component]
pub fn FilePick(
    /// Receives the files with their kinds, in the order chosen.
    on_files: impl Fn(Vec<(web_sys::File, FileKind)>) + Copy + 'static,
    inputs_name: impl Fn() -> String + Send + Sync + 'static,
    rollouts_name: impl Fn() -> String + Send + Sync + 'static,
    roles: RwSignal<Vec<(String, FileKind)>>,
    missing: impl IntoView + 'static,
    /// The loaded files' names once a run is shown: the zone then folds into one line naming
    /// them (with "Change files"), so the run's summary and plots start on the first screen.
    loaded: Signal<Option<String>, LocalStorage>,
    children: Children,
) -> impl IntoView {
    let expanded = RwSignal::new(false);
    // A new run loaded folds the zone again.
    Effect::new(move |_| {
        loaded.track();
        expanded.set(false);
    });
    let class = move || {
        if loaded.with(Option::is_some) && !expanded.get() {
            "pick collapsed"
        } else {
            "pick"
        }
    };
    let from_input = move |e: ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&e);
        kinds_of(input.files(), on_files);
    };
    let on_drop = move |e: ev::DragEvent| {
        e.prevent_default();
        kinds_of(e.data_transfer().and_then(|d| d.files()), on_files);
    };
    if let Some(files) = crate::web::embed::take_files() {
        classify_all(files, on_files); // a notebook widget's run, as if chosen (`embed`)
    }
    let load_example = move |_| {
        let files = EXAMPLE.iter().map(|(n, b)| bytes_file(n, b)).collect();
        classify_all(files, on_files);
    };
    view! {
        <section class=class data-testid="drop-zone" on:dragover=|e: ev::DragEvent| e.prevent_default() on:drop=on_drop>
            <p class="loaded-line" data-testid="loaded-files">
                {move || loaded.get().map(|names| format!("Loaded: {names}"))}
                " "<button type="button" class="small" data-testid="change-files" on:click=move |_| {
                    // The roles were the shown run's: the files chosen next get their own.
                    roles.set(Vec::new());
                    expanded.set(true);
                }>"Change files"</button>
            </p>
            <p>"Drop a run's files here — materialized inputs, rollouts, a pivot dataset, or ATIF trajectories (with Gym's manifest and rollouts for the rewards); each is recognized by its content — or pick them:"</p>
            <div class="file-buttons">
                <label class="file-button">"Choose files…"<input class="file-input" type="file" multiple accept=".jsonl,.json" data-testid="files" on:change=from_input /></label>
                <label class="file-button" title="A folder of ATIF trajectories: Gym's export with its manifest, a Harbor job (each trial's reward from its result.json), or any agent's">"ATIF folder…"<input class="file-input" type="file" multiple prop:webkitdirectory=true data-testid="atif-folder" on:change=from_input /></label>
                <label class="file-button">"Materialized inputs…"
                    <input class="file-input" type="file" accept=".jsonl,.json" data-testid="inputs-file" on:change=from_input />
                </label>
                <span class="chosen" data-testid="inputs-name">{inputs_name}</span>
                <label class="file-button">"Rollouts…"
                    <input class="file-input" type="file" accept=".jsonl,.json" data-testid="rollouts-file" on:change=from_input />
                </label>
                <span class="chosen" data-testid="rollouts-name">{rollouts_name}</span>
            </div>
            {children()}
            <button data-testid="load-example" on:click=load_example>"Load the example run"</button>
            <ul class="roles" data-testid="file-roles">
                {move || roles.get().into_iter().map(|(name, kind)| view! {
                    <li data-kind=format!("{kind:?}")>{name}" — "{kind.label()}{role_note(kind)}</li>
                }).collect_view()}
                {missing}
            </ul>
        </section>
    }
}

/// One file of a page's form as a small drop zone in the profile page's style: drop the file on
/// it or pick it with the styled button; the native `<input type=file>` inside (visually
/// hidden) carries `testid`, so a WebDriver test chooses files as a person picks them.
#[component]
pub fn DropFile(
    label: &'static str,
    testid: &'static str,
    /// What the file is, shown until one is chosen.
    hint: &'static str,
    /// Set with each file chosen or dropped (a page acts on it with an effect).
    file: RwSignal<Option<web_sys::File>, LocalStorage>,
) -> impl IntoView {
    let take = move |f: Option<web_sys::File>| {
        if f.is_some() {
            file.set(f);
        }
    };
    let from_input = move |e: ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&e);
        take(input.files().and_then(|l| l.get(0)));
    };
    let on_drop = move |e: ev::DragEvent| {
        e.prevent_default();
        take(
            e.data_transfer()
                .and_then(|d| d.files())
                .and_then(|l| l.get(0)),
        );
    };
    view! {
        <div class="file-buttons drop-one" on:dragover=|e: ev::DragEvent| e.prevent_default() on:drop=on_drop>
            <label class="file-button">{label}
                <input class="file-input" type="file" accept=".jsonl,.json,.yaml,.yml" data-testid=testid on:change=from_input />
            </label>
            <span class="chosen">{move || file.with(|f| f.as_ref().map_or_else(|| format!("{hint}: drop it here or choose it"), web_sys::File::name))}</span>
        </div>
    }
}
