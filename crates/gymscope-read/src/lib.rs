//! gymscope's read layer: a run's files as lines, and a line as a rollout's key and numbers.
//!
//! [`read`] knows nothing of what a row means. It turns any `Read` into numbered lines with byte
//! spans ([`read::chunks::for_each_chunk`], [`read::jsonl`]), gathers them into a
//! [`read::batch::LineBatch`] for another thread, cuts a file into byte ranges each reader reads
//! alone ([`read::ranges`]), and records the results of readers that share no memory in file order
//! ([`read::in_order::InOrder`]). [`record`] reads one row down to its rollout key, agent and
//! numeric fields, skimming where sure and with serde_json elsewhere.
//!
//! Cargo keeps this layer between the base ([`gymscope_base`]) and the analyses above
//! (ARCHITECTURE.md, "Layers").

// The base's modules under their own names, so `crate::json` reads the same in every layer.
use gymscope_base::{fast_map, gym, json, skim};

pub mod read;
pub mod record;
