//! The profile page's "Follow" (docs/watch.md, "In the app"): a run opened with "Open to
//! follow…" (Chromium's file handles) is asked for its files again every two seconds. The bytes
//! appended since the last look feed the core's incremental read (`watch::Watch`), whose
//! figures make the live badge; when the files grew, the page profiles the new snapshot (cut at
//! its last whole line) and lays the inspector out again from the URL's hash, so the query, the
//! selection, the open rollout and the scroll stay. Following stops by itself once the run is
//! complete or its rollouts have not grown for ten minutes, and says so.

mod files;
mod scroll;
mod step;

use leptos::prelude::*;
use leptos::task::spawn_local;
pub use scroll::keep_scroll;
use std::rc::Rc;
use wasm_bindgen::JsValue;

/// How often the followed files are looked at (milliseconds).
const EVERY_MS: i32 = 2000;

/// Profiles the inputs and the rollouts (both cut at their last whole line) in place of the
/// shown run; false when the worker is busy with the user's job (tried again at the next look).
pub type Refresh = Rc<dyn Fn(web_sys::File, web_sys::File) -> bool>;

#[derive(Clone, Copy)]
pub struct Follow {
    /// The picked files' handles, by name.
    handles: StoredValue<Vec<(String, JsValue)>, LocalStorage>,
    refresh: StoredValue<Option<Refresh>, LocalStorage>,
    on: RwSignal<bool>,
    badge: RwSignal<String>,
    note: RwSignal<Option<String>>,
    /// Each start's number: a loop that is not the newest ends.
    started: StoredValue<u32>,
}

fn seconds() -> f64 {
    js_sys::Date::now() / 1000.0
}

impl Follow {
    pub fn new() -> Follow {
        Follow {
            handles: StoredValue::new_local(Vec::new()),
            refresh: StoredValue::new_local(None),
            on: RwSignal::new(false),
            badge: RwSignal::new(String::new()),
            note: RwSignal::new(None),
            started: StoredValue::new(0),
        }
    }

    pub fn set_refresh(self, refresh: Refresh) {
        self.refresh.set_value(Some(refresh));
    }

    /// Opens the picker; the chosen files, each cut at its last whole line, go to `on_files`.
    fn pick(self, on_files: impl FnOnce(Vec<web_sys::File>) + 'static) {
        spawn_local(async move {
            let picked = async {
                let mut named = Vec::new();
                let mut cut = Vec::new();
                for handle in files::pick().await? {
                    let file = files::file_of(&handle).await?;
                    let whole = files::whole_lines(&file).await?;
                    cut.push(files::first_bytes(&file, whole)?);
                    named.push((file.name(), handle));
                }
                Ok::<_, String>((named, cut))
            };
            match picked.await {
                Ok((named, cut)) if !cut.is_empty() => {
                    self.stop(None);
                    self.handles.set_value(named);
                    on_files(cut);
                }
                Ok(_) => {}
                Err(e) => self.note.set(Some(format!("Cannot open the files: {e}"))),
            }
        });
    }

    fn handles_of(self, names: &[String; 2]) -> Option<[JsValue; 2]> {
        self.handles.with_value(|h| {
            let find = |n: &String| h.iter().find(|(m, _)| m == n).map(|(_, h)| h.clone());
            Some([find(&names[0])?, find(&names[1])?])
        })
    }

    /// Stops following (`why`: the line saying so).
    pub fn stop(self, why: Option<String>) {
        self.started.update_value(|n| *n += 1);
        self.on.set(false);
        self.note.set(why);
    }

    /// A refresh's profile failed: the shown run stays, following stops and says why.
    pub fn failed(self, why: &str) {
        self.stop(Some(format!("Stopped following: {why}")));
    }

    fn start(self, names: [String; 2]) {
        let (Some(handles), Some(refresh)) = (self.handles_of(&names), self.refresh.get_value())
        else {
            return;
        };
        self.started.update_value(|n| *n += 1);
        let me = self.started.get_value();
        self.on.set(true);
        self.note.set(None);
        self.badge.set("live · reading the files…".into());
        spawn_local(async move {
            let mut run = step::Followed::new(&names, handles);
            loop {
                let step = run.step(&refresh).await;
                if self.started.get_value() != me {
                    return; // switched off, or started again
                }
                match step {
                    Ok(Ok(snapshot)) => {
                        self.badge.set(step::badge(&snapshot));
                        self.note.set(snapshot.notes.last().cloned());
                    }
                    Ok(Err(why)) => return self.stop(Some(why)),
                    Err(e) => return self.stop(Some(format!("Stopped following: {e}"))),
                }
                files::sleep(EVERY_MS).await;
            }
        });
    }
}

/// "Open to follow…" beside the pickers, where the browser hands out file handles.
#[component]
pub fn FollowPick(
    follow: Follow,
    on_files: impl Fn(Vec<web_sys::File>) + Copy + 'static,
) -> impl IntoView {
    files::can_follow().then(|| view! {
        <button type="button" class="file-button" data-testid="follow-open" on:click=move |_| follow.pick(on_files)
            title="Pick the run's files (materialized inputs and rollouts) so the page can follow them while they grow">"Open to follow…"</button>
    })
}

/// The switch under a shown run, or the line saying why there is none.
#[component]
pub fn FollowSwitch(follow: Follow, names: Option<[String; 2]>) -> impl IntoView {
    let names = names?;
    let why = if !files::can_follow() {
        Some("No Follow: this browser gives only snapshots of files (no File System Access API, as in Firefox and Safari); Chromium can follow a run while it grows.")
    } else if follow.handles_of(&names).is_none() {
        Some("No Follow: dropped or chosen files are snapshots; “Open to follow…” opens a run to follow while it grows.")
    } else {
        None
    };
    if let Some(why) = why {
        return Some(
            view! { " "<span class="muted follow-why" data-testid="follow-why">{why}</span> }
                .into_any(),
        );
    }
    let toggle = move |e: leptos::ev::Event| {
        if event_target_checked(&e) {
            follow.start(names.clone());
        } else {
            follow.stop(None);
        }
    };
    Some(view! {
        " "<span class="follow" data-testid="follow">
            <label><input type="checkbox" data-testid="follow-switch" prop:checked=move || follow.on.get() on:change=toggle />" Follow"</label>
            {move || follow.on.get().then(|| view! { " "<span class="live-badge" data-testid="follow-badge">{follow.badge.get()}</span> })}
            {move || follow.note.get().map(|n| view! { " "<span class="muted" data-testid="follow-note">{n}</span> })}
        </span>
    }.into_any())
}
