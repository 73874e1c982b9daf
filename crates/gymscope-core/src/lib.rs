//! gymscope's core: everything computed about a NeMo Gym run, with no browser, network or
//! terminal types (its Cargo.toml lists none), compiled for both faces and tested natively.
//! See ARCHITECTURE.md for one line per module:
//! - reading: [`chunks`], [`jsonl`], [`json`], [`record`]
//! - the profile: [`profile`], [`stats`], [`render`], [`output`], [`table`]; health: [`health`]
//!   (signals, and upstream's health checks as v0.7.0 writes them)
//! - showing it: [`inspect`], [`plot`], [`conversation`], [`report`]
//! - datasets and runs: [`pivot`], [`reward_group`], [`compare`] (two runs paired by task, and
//!   v0.7.0's `gym eval compare` report), [`watch`] (a run read while it is collected: appended
//!   bytes in, figures out at any time),
//!   [`collect`] (the collection's data; its driver is the native face's), [`atif`] (ATIF
//!   trajectories: v0.7.0's export byte for byte, any agent's trajectories read as a run, checked)
//! - upstream's semantics: [`gym`] (row keys, Python's truthiness and `repr`, Pydantic's
//!   coercions, the trajectory record)
//! - shared: [`names`] (every derived file name), [`error`], [`figures`] (how numbers read, for people too),
//!   [`html`] and [`markdown`] (escaping), [`python_math`] (CPython's and scipy's numbers v0.7.0's intervals use)

pub mod atif;
pub mod collect;
pub mod compare;
pub mod conversation;
pub mod curate;
pub mod error;
pub mod fast_map;
pub mod figures;
pub mod gym;
pub mod health;
pub mod html;
pub mod inspect;
pub mod joint_read;
pub mod json;
pub mod markdown;
pub mod model_text;
pub mod names;
pub mod output;
pub mod pivot;
pub mod pivot_build;
pub mod plot;
pub mod profile;
pub mod python_math;
pub mod query;
pub mod read;
pub mod record;
pub mod render;
pub mod report;
pub mod reward_group;
pub mod seeded;
pub mod skim;
pub mod stats;
pub mod table;
pub mod verifier;
pub mod watch;
