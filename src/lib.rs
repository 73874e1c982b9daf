//! gymscope: look at NVIDIA NeMo Gym rollout data without a server.
//!
//! This package is the two faces over the core crate `gymscope_core` (see ARCHITECTURE.md):
//! - natively, [`cli`] (the `gymscope` command line), [`collect`] (the collection's driver:
//!   HTTP, files, signals) and [`native`] (the file handling every command shares);
//! - on wasm32, `web` (the Leptos app and its Web Worker).
//!
//! The core is re-exported whole, so `gymscope::profile` names the same module for the faces,
//! the tests and the benches.

pub use gymscope_core::*;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(not(target_arch = "wasm32"))]
pub mod collect;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;

#[cfg(target_arch = "wasm32")]
pub mod web;
