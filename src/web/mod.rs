//! The browser app (wasm32, Leptos CSR). Thin: files are read here, everything is computed by
//! the core, and the components only lay out [`crate::table`] values.

mod app;
mod download;
mod inspector;
mod pivot_page;
mod plots;
mod profile_page;
mod protocol;
mod rollout_view;
mod task_table;
pub mod worker;
mod worker_client;
mod worker_profile;

pub use app::App;

/// Entry point of the wasm binary.
pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
