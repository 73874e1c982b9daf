//! The inspector's logic, in plain Rust so it is tested natively: which file is which, the
//! profile as compact columns for the page, task filtering and sorting, the scatter plot's
//! raster and picking, and the URL hash that keeps the view.

pub mod detect;
pub mod hash;
pub mod model;
pub mod plot;
pub mod query;
