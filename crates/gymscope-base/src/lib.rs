//! gymscope's base layer: what every layer above shares, and nothing that knows a run's files.
//!
//! Upstream's semantics live in one home, [`gym`]: the row keys, Python's truthiness, `repr` and
//! `json.dumps`, Pydantic's lax coercions, `difflib`, v0.7.0's metric names and the trajectory
//! record. [`json`] is where orjson and serde_json differ (number kinds, float formatting, the one
//! sorted-key writer); [`skim`] reads JSON strictly at `memchr` speed. [`stats`] is numpy-exact
//! (pairwise sums, NaN skipping, v0.7.0's repeat-level [`stats::Spread`]), with
//! [`python_math`] for the two numbers that are not plain IEEE arithmetic. [`reward_group`] is
//! the one success rule, [`error::ProfileError`] every profile failure with its file, line and
//! field, [`names`] every derived file name, [`seeded`] the seeded orders, [`fast_map`] the hot
//! maps, [`figures`] numbers for people, [`html`] and [`markdown`] the escaping.
//!
//! Cargo keeps this layer below the others: it depends on none of them (ARCHITECTURE.md,
//! "Layers").

pub mod error;
pub mod fast_map;
pub mod figures;
pub mod gym;
pub mod html;
pub mod json;
pub mod markdown;
pub mod names;
pub mod python_math;
pub mod reward_group;
pub mod seeded;
pub mod skim;
pub mod stats;
