//! gymscope: look at NVIDIA NeMo Gym rollout data without a server.
//!
//! The target-independent core (no browser or network types; compiled for both faces); see
//! ARCHITECTURE.md for one line per module:
//! - reading: [`chunks`], [`jsonl`], [`json`], [`record`]
//! - the profile: [`profile`], [`stats`], [`render`], [`output`], [`table`]
//! - showing it: [`inspect`], [`plot`], [`conversation`], [`report`]
//! - datasets and runs: [`pivot`], [`reward_group`], [`compare`] (two runs paired by task),
//!   [`collect`] (its driver is native-only)
//! - shared: [`names`] (every derived file name), [`error`]
//!
//! The faces: `cli` (native binary) and `web` (Leptos app, wasm32); `native` holds the file
//! handling every native command shares (streaming reader, atomic writer, input checks).

pub mod chunks;
pub mod collect;
pub mod compare;
pub mod conversation;
pub mod error;
pub mod fast_map;
pub mod health;
pub mod inspect;
pub mod joint_read;
pub mod json;
pub mod jsonl;
pub mod model_text;
pub mod names;
pub mod output;
pub mod pivot;
pub mod pivot_build;
pub mod plot;
pub mod profile;
pub mod record;
pub mod render;
pub mod report;
pub mod reward_group;
pub mod skim;
pub mod stats;
pub mod table;
pub mod verifier;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;

#[cfg(target_arch = "wasm32")]
pub mod web;
