//! `gymscope collect` against the Rust stand-in for a Gym server stack (`common::gym_standin`,
//! real HTTP on 127.0.0.1): routing, resume, signals, shards, health reports, observability, the drop-in flags.
#![allow(clippy::unwrap_used)] // a test stops at what must hold

use gymscope_testkit as common;

mod aggregate_v07;
mod collect_v07;
mod end_to_end;
mod environment;
mod health;
mod observe;
mod progress_file;
mod scale_out;
mod stack;
