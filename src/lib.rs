//! gymscope: look at NVIDIA NeMo Gym rollout data without a server.
//!
//! The target-independent core (no browser or network types; compiled for both faces):
//! - [`jsonl`]: chunked line splitting with line numbers and byte spans
//! - [`json`]: orjson-compatible numbers and formatting
//! - [`record`]: reading one row down to its key, agent and numbers
//! - [`stats`]: numpy-exact mean, median and std
//! - [`profile`]: the streaming reward profile (`gym eval profile`)
//! - [`render`]: writing the profile files and summary
//! - [`report`]: the shareable self-contained HTML report (CLI and web app)
//! - [`collect`]: rollout collection (`gym eval run --no-serve`); its driver is native-only
//!
//! The faces: `cli` (native binary) and `web` (Leptos app, wasm32).

pub mod collect;
pub mod conversation;
pub mod error;
pub mod inspect;
pub mod json;
pub mod jsonl;
pub mod names;
pub mod output;
pub mod pivot;
pub mod pivot_build;
pub mod profile;
pub mod record;
pub mod render;
pub mod report;
pub mod reward_group;
pub mod stats;
pub mod table;
pub mod verifier;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;

#[cfg(target_arch = "wasm32")]
pub mod web;
