//! The built app (`dist/`) and the exported pages in real headless Chromium over WebDriver.
//! Needs `dist/` (scripts/trunk.sh build --release), chromium and chromedriver: scripts/test.sh
//! provides all three.
#![allow(clippy::unwrap_used)] // a test stops at what must hold

use gymscope_testkit as common;

mod app;
mod atif;
mod compare_page;
mod compare_report;
mod first_screen;
mod follow;
mod groups_and_rows;
mod health_page;
mod inspector;
mod pivot_build_page;
mod pivot_page;
mod plots;
mod pool;
mod pool_pivot;
mod query_bar;
mod report;
mod report_query;
mod round_three;
mod round_three_pages;
mod screenshots;
mod selection;
mod transcripts;
mod upstream;
