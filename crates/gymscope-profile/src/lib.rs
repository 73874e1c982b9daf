//! gymscope's profile layer: `gym eval profile` as NeMo Gym v0.7.0 computes and writes it.
//!
//! [`profile`] scans both files in batches ([`profile::ProfileBuilder`], fed on one thread, on
//! every core or by the app's pool through its `pooled` recorder), applies upstream's checks in
//! upstream's order, and gives a [`profile::Profile`]: task rows, the statistics, the
//! repeat-level entries and coverage. [`render`] writes its three files byte for byte as v0.7.0
//! does, any range of tasks on any thread; [`output`] makes and renders one in memory; [`table`]
//! shows it as display tables, summary lines and the run's key figures.
//!
//! Cargo keeps this layer above [`gymscope_read`] and [`gymscope_base`] and below the analyses
//! (ARCHITECTURE.md, "Layers").

// The layers below under their modules' own names, so `crate::json` reads the same in every layer.
use gymscope_base::{error, fast_map, figures, gym, json, reward_group, skim, stats};
use gymscope_read::{read, record};

pub mod output;
pub mod profile;
pub mod render;
pub mod table;
