//! The app shell: a header with one tab per page and the pages, chosen by the URL hash through
//! the core's parser (`inspect::hash`), so a reload or a shared link opens the same page. In a
//! notebook widget (`embed`) the page its host names is shown alone: no header, no tabs, no
//! file zone (the `embedded` class, style/main.css).

use crate::inspect::hash::{self, Route, ViewState};
use crate::web::pages::compare::ComparePage;
use crate::web::pages::health::HealthPage;
use crate::web::pages::pivot::PivotPage;
use crate::web::pages::pivot_build::PivotBuildPage;
use crate::web::pages::profile::ProfilePage;
use crate::web::state::{current_hash, HealthLink, LoadedRollouts, Snippets};
use leptos::prelude::*;

#[component]
pub fn App() -> impl IntoView {
    let initial = hash::parse(&current_hash());
    let embedded = crate::web::embed::page();
    let route = RwSignal::new(embedded.unwrap_or(initial.route));
    // The Health page and the profile page share the loaded run and the rate-cell filter.
    let link = HealthLink::new(initial.health);
    provide_context(link);
    provide_context(LoadedRollouts(RwSignal::new_local(None)));
    provide_context(Snippets(RwSignal::new_local(None)));
    let to_profile = Callback::new(move |()| go(route, Route::Profile, link));
    // A pivot dataset dropped on the profile page is handed to the pivot validator.
    let pivot_file = RwSignal::new_local(None::<web_sys::File>);
    Effect::new(move |previous: Option<bool>| {
        let has = pivot_file.with(Option::is_some);
        if has && previous.is_some() {
            go(route, Route::Pivot, link);
        }
        has
    });
    let tabs = Route::ALL
        .into_iter()
        .map(|r| {
            let class = move || if route.get() == r { "tab active" } else { "tab" };
            view! {
                <button class=class data-testid=format!("tab-{}", r.name()) on:click=move |_| go(route, r, link)>
                    {r.title()}
                </button>
            }
        })
        .collect_view();
    let shown = move |r: Route| move || if route.get() == r { "block" } else { "none" };
    let header = embedded.is_none().then(|| view! {
        <header>
            <h1>"gymscope"</h1>
            <p class="tagline">"NeMo Gym rollouts, reward profiles and pivot datasets in your browser. Nothing is uploaded: files are read on this machine."</p>
            <nav>{tabs}</nav>
        </header>
    });
    view! {
        {header}
        <main class:embedded=embedded.is_some()>
            // Every page stays mounted so switching keeps its state.
            <div style:display=shown(Route::Profile)><ProfilePage pivot_file=pivot_file /></div>
            <div style:display=shown(Route::Pivot)><PivotPage file=pivot_file /></div>
            <div style:display=shown(Route::PivotBuild) data-testid="page-pivot-build"><PivotBuildPage /></div>
            <div style:display=shown(Route::Compare) data-testid="page-compare"><ComparePage /></div>
            <div style:display=shown(Route::Health) data-testid="page-health"><HealthPage link=link to_profile=to_profile /></div>
        </main>
    }
}

/// Opens page `to` (a history entry, so Back returns to the previous page). A query a rate cell
/// asked for goes with it, so the entry names the filtered view.
fn go(route: RwSignal<Route>, to: Route, link: HealthLink) {
    let query = link.query.get_untracked().filter(|_| to == Route::Profile);
    let _ = gloo_utils::window()
        .location()
        .set_hash(&hash::format(&ViewState {
            route: to,
            query,
            ..ViewState::default()
        }));
    route.set(to);
}
