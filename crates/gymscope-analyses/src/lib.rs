//! gymscope's analyses: what is computed about a run beyond its profile, over the lines of
//! [`gymscope_read`] and the profile of [`gymscope_profile`].
//!
//! Run data, each parsed in its own module: rollout health ([`health::HealthBuilder`] →
//! [`health::HealthReport`], with v0.7.0's check catalog and verdict files), the collection's
//! data ([`collect`]; its driver is the native face's), pivot datasets validated
//! ([`pivot::PivotValidator`]) and built ([`pivot_build::PivotBuilder`]) with the resource
//! server's comparison ([`verifier`]), a rollout as readable items ([`conversation`]) and its
//! model text made safe ([`model_text`]), and ATIF out and in ([`atif`]). Over them: the profile
//! and health in one walk ([`joint_read`]), the plots' data ([`plot`]), queries
//! ([`query::Query`]), curation ([`curate`]) and a growing run ([`watch::Watch`]).
//!
//! Cargo keeps these below the views (`gymscope-core`) and above the profile (ARCHITECTURE.md,
//! "Layers"; inside this crate, run data below analyses is checked by `tests/cli/architecture.rs`).

// The layers below under their modules' own names, so `crate::json` reads the same in every layer.
use gymscope_base::{
    error, fast_map, figures, gym, html, json, markdown, names, reward_group, seeded, skim, stats,
};
#[cfg(test)]
use gymscope_profile::output;
use gymscope_profile::{profile, table};
use gymscope_read::{read, record};

pub mod atif;
pub mod collect;
pub mod conversation;
pub mod curate;
pub mod health;
pub mod joint_read;
pub mod model_text;
pub mod pivot;
pub mod pivot_build;
pub mod plot;
pub mod query;
pub mod verifier;
pub mod watch;
