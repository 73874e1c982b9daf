//! gymscope's core: everything computed about a NeMo Gym run (this crate: the views, over the
//! crates it re-exports), with no browser, network or terminal types (no Cargo.toml of the core
//! lists one), compiled for both faces and tested natively.
//!
//! A run is two JSONL files, the materialized inputs and the rollouts. [`read`] turns them into
//! numbered lines, whatever drives it: one thread ([`read::chunks::for_each_chunk`]), every core
//! (a [`read::batch::LineBatch`] per thread), or the app's pool of workers that share no memory
//! ([`read::ranges`], recorded in file order by [`read::in_order::InOrder`]). [`record`] reads a
//! line down to its rollout key, agent and numbers. Analyses parse their batches anywhere and
//! record them in order: the profile ([`profile::ProfileBuilder`] → [`profile::Profile`], written
//! by [`render`] exactly as NeMo Gym v0.7.0 writes it), health
//! ([`health::HealthBuilder`] → [`health::HealthReport`]), both in one walk ([`joint_read`]), a
//! query ([`query::Query`]), a comparison ([`compare`]), pivots ([`pivot::PivotValidator`],
//! [`pivot_build::PivotBuilder`]) and a growing run ([`watch::Watch`]). Views make them
//! readable: [`inspect`] (every page's view model), [`plot`] and [`report`] (one self-contained
//! page, [`report::ReportInput`]). See ARCHITECTURE.md for the layers and a line per module.
//!
//! The modules by layer, each using only its own and the layers below (all but the top two
//! are crates of their own, re-exported here: `gymscope-base`, `gymscope-read`,
//! `gymscope-profile`, `gymscope-analyses`; Cargo keeps them from importing up):
//! - base: [`gym`] (upstream's semantics: row keys, Python's truthiness and `repr`, Pydantic's
//!   coercions, the trajectory record), [`json`], [`skim`], [`fast_map`], [`stats`],
//!   [`python_math`], [`seeded`], [`names`] (every derived file name), [`error`],
//!   [`reward_group`] (the one success rule), [`figures`] (numbers for people), [`html`] and
//!   [`markdown`] (escaping);
//! - lines: [`read`];
//! - rows: [`record`];
//! - the profile: [`profile`], [`render`], [`output`] (a profile made and rendered in memory),
//!   [`table`];
//! - run data: [`health`], [`collect`] (the collection's data; its driver is the native face's),
//!   [`pivot`], [`pivot_build`], [`verifier`], [`conversation`], [`model_text`], [`atif`];
//! - analyses: [`joint_read`], [`plot`], [`query`], [`curate`], [`watch`];
//! - pages: [`report`];
//! - showing: [`inspect`], [`compare`].

pub mod compare;
pub mod inspect;
pub mod report;

// The layers below, each a crate Cargo keeps below this one, under their modules' own names: the
// faces and every module here write `gymscope_core::json`, `crate::read`, as before the split.
pub use gymscope_analyses::{
    atif, collect, conversation, curate, health, joint_read, model_text, pivot, pivot_build, plot,
    query, verifier, watch,
};
pub use gymscope_base::{
    error, fast_map, figures, gym, html, json, markdown, names, python_math, reward_group, seeded,
    skim, stats,
};
pub use gymscope_profile::{output, profile, render, table};
pub use gymscope_read::{read, record};
