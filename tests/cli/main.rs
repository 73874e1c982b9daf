//! The command line end to end: parity with NeMo Gym's outputs on every fixture and upstream-oracle case,
//! error cases, health, the report, compare, the plot model, hostile input through every command,
//! and ARCHITECTURE.md against the tree.
#![allow(clippy::unwrap_used)] // a test stops at what must hold

use gymscope_testkit as common;

mod architecture;
mod atif_export;
mod atif_read;
mod compare;
mod compare_aggregate;
mod compare_gym;
mod compare_multi;
mod compare_report;
mod contract;
mod docs;
mod edges;
mod example;
mod file_contract_defects;
mod fixtures_parity;
mod hardening;
mod health;
mod health_check_v07;
mod health_skim;
mod joint_read;
mod mutation;
mod mutation_commands;
mod pivot_gym_repo;
mod pivot_parity;
mod plot_model;
mod profile_cases;
mod query;
mod report;
mod select_tasks;
mod watch;
