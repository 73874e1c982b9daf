//! The browser app (wasm32, Leptos CSR). Thin: files are read in a Web Worker, everything is
//! computed by the core, and the components only lay out core values.
//!
//! - `app`: the shell and the router (one tab per `inspect::hash::Route`);
//! - `pages`: one folder per page (`profile`, `health`, `pivot`, `pivot_build`, `compare`);
//! - `widgets`: plots, the task table, a rollout, the file drop;
//! - `protocol`: the typed page ↔ worker messages; `worker_client`: the page's side
//!   (`follower`: requests from a moving control); `worker`: the worker's side (jobs over the
//!   core, and the pool of workers that reads a large run); `readers`: how many workers read;
//! - `state`: the selection and the URL hash; `download`: blob URLs to save files;
//! - `embed`: what a notebook widget hosting the app gives it (worker URL, files) and takes
//!   back (the brushed rollouts).

mod app;
mod download;
mod embed;
mod follower;
mod pages;
mod protocol;
mod readers;
mod state;
mod widgets;
pub mod worker;
mod worker_client;

pub use app::App;

/// Entry point of the wasm binary.
pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
