//! The inspector's logic, in plain Rust so it is tested natively; the web components only lay
//! it out: which file is which, the profile as compact columns for the page, the loaded run's
//! lookups, the Health page (rates, flags per rollout, the filter a rate sets; NeMo Gym's verdict files), task filtering and sorting, the table's column groups and picker (`table_columns`), its virtual window and keys, and the URL hash
//! that keeps the page and the view; the pivot validator's page (`pivot`: a report as text, JSON
//! and page) and the pivot builder's (`pivot_build`: settings, counts, a pivot beside its source).
//! Every page's view model is here.

pub mod detect;
pub mod grouping;
pub mod hash;
pub mod health;
pub mod health_view;
pub mod intake;
pub mod model;
pub mod nav;
pub mod numbers;
pub mod passes;
pub mod pivot;
pub mod pivot_build;
pub mod query;
pub mod query_view;
pub mod run;
pub mod run_header;
pub mod run_query;
pub mod table_columns;
pub mod table_nav;
pub mod upstream;
