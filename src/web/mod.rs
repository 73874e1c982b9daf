//! The browser app (wasm32, Leptos CSR). Thin: files are read here, everything is computed by
//! the core, and the components only lay out [`crate::table`] values.

mod download;
mod load;
mod view;

pub use view::App;

/// Entry point of the wasm binary.
pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
