//! The browser app (wasm32, Leptos CSR). Thin: files are read here, everything is computed by
//! the core, and the components only lay out [`crate::table`] values.

mod app;
mod download;
mod load;
mod pivot_page;
mod profile_page;
mod protocol;
pub mod worker;
mod worker_client;

pub use app::App;

/// Entry point of the wasm binary.
pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
