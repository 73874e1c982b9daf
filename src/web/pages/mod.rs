//! One folder per page of the app (a tab of `app`), each a thin layout of its view model in
//! `inspect` (the core): `profile` (the run inspector), `health`, `pivot` (the validator),
//! `pivot_build` (the builder and selection), `compare`.

pub mod compare;
pub mod health;
pub mod pivot;
pub mod pivot_build;
pub mod profile;
