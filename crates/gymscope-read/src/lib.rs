//! gymscope's read layer: a run's files as lines, and a line as a rollout's key and numbers.
//!
//! [`read`] knows nothing of what a row means. It turns any `Read` into numbered lines with byte
//! spans ([`read::chunks::for_each_chunk`], [`read::jsonl`]), gathers them into a
//! [`read::batch::LineBatch`] for another thread, and cuts a file into byte ranges each reader
//! reads alone ([`read::ranges`]). An analysis that reads whole files is a [`read::job::Job`]
//! (batches parsed anywhere, parts recorded in file order), run on one thread by
//! [`read::job::OneThread`] and by readers that share no memory by [`read::in_order::InOrder`].
//! [`record`] reads one row down to its rollout key, agent and numeric fields, skimming where
//! sure and with serde_json elsewhere.
//!
//! Cargo keeps this layer between the base ([`gymscope_base`]) and the analyses above
//! (ARCHITECTURE.md, "Layers").

// The base's modules under their own names, so `crate::json` reads the same in every layer.
use gymscope_base::{fast_map, gym, json, skim};

pub mod read;
pub mod record;
