//! The browser app (wasm32, Leptos CSR). Thin: files are read in a Web Worker, everything is
//! computed by the core, and the components only lay out core values.
//!
//! - `app`: the shell and the router (one tab per `inspect::hash::Route`);
//! - `protocol`: the typed page ↔ worker messages; `worker_client`: the page's side;
//!   `worker`: the worker's side (jobs over the core);
//! - `profile_page`, `file_pick`, `inspector`, `summary`, `export`, `plots`, `scatter_canvas`,
//!   `histogram`, `task_table`, `rollout_view`: the run inspector;
//! - `pivot_page`, `pivot_result`: the pivot validator;
//! - `compare_page`, `compare_result`: two runs compared;
//! - `health_page`: rollout health of the loaded run; `health_badges`: flags and the filter
//!   chip on the profile page;
//! - `pivot_build_page`, `pivot_build_result`, `pivot_pair`, `pivot_select`: the pivot builder;
//! - `state`: the selection and the URL hash; `download`: blob URLs to save files.

mod app;
mod compare_page;
mod compare_result;
mod conversation_view;
mod download;
mod export;
mod file_pick;
mod health_badges;
mod health_page;
mod histogram;
mod inspector;
mod pivot_build_page;
mod pivot_build_result;
mod pivot_page;
mod pivot_pair;
mod pivot_result;
mod pivot_select;
mod plot_download;
mod plots;
mod profile_page;
mod protocol;
mod rollout_view;
mod scatter_canvas;
mod state;
mod summary;
mod task_filters;
mod task_rollouts;
mod task_table;
pub mod worker;
mod worker_client;

pub use app::App;

/// Entry point of the wasm binary.
pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
