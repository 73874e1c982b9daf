//! The app shell: a header and two pages, chosen by the URL hash (`#profile`, `#pivot`) so a
//! reload or a shared link opens the same page.

use super::pivot_page::PivotPage;
use super::profile_page::ProfilePage;
use leptos::prelude::*;

#[derive(Clone, Copy, PartialEq)]
enum Page {
    Profile,
    Pivot,
}

fn page_from_hash() -> Page {
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    if hash.starts_with("#pivot") {
        Page::Pivot
    } else {
        Page::Profile
    }
}

#[component]
pub fn App() -> impl IntoView {
    let page = RwSignal::new(page_from_hash());
    // A pivot dataset dropped on the profile page is handed to the pivot validator.
    let pivot_file = RwSignal::new_local(None::<web_sys::File>);
    Effect::new(move |previous: Option<bool>| {
        let has = pivot_file.with(Option::is_some);
        if has && previous.is_some() {
            if let Some(w) = web_sys::window() {
                let _ = w.location().set_hash("pivot");
            }
            page.set(Page::Pivot);
        }
        has
    });
    let go = move |to: Page, hash: &'static str| {
        move |_| {
            if let Some(w) = web_sys::window() {
                let _ = w.location().set_hash(hash);
            }
            page.set(to);
        }
    };
    let tab_class = move |p: Page| move || if page.get() == p { "tab active" } else { "tab" };
    view! {
        <header>
            <h1>"gymscope"</h1>
            <p class="tagline">"NeMo Gym rollouts, reward profiles and pivot datasets in your browser. Nothing is uploaded: files are read on this machine."</p>
            <nav>
                <button class=tab_class(Page::Profile) data-testid="tab-profile" on:click=go(Page::Profile, "profile")>"Reward profile"</button>
                <button class=tab_class(Page::Pivot) data-testid="tab-pivot" on:click=go(Page::Pivot, "pivot")>"Pivot validator"</button>
            </nav>
        </header>
        <main>
            // Both pages stay mounted so switching keeps their state.
            <div style:display=move || if page.get() == Page::Profile { "block" } else { "none" }><ProfilePage pivot_file=pivot_file /></div>
            <div style:display=move || if page.get() == Page::Pivot { "block" } else { "none" }><PivotPage file=pivot_file /></div>
        </main>
    }
}
