//! Native file handling shared by every command (never compiled for wasm32): the one door every
//! file goes through ([`files`]: plans, caps, globs, cleared outputs), the one streaming
//! reader with the line limit ([`read`]), the one atomic writer ([`atomic`]) with its clean-up on
//! signals ([`signals`]), the checks on inputs and outputs before anything runs ([`inputs`],
//! [`run_files`]), and printing that a closed pipe ends quietly ([`out`]).

pub mod allocator;
pub mod atif_input;
pub mod atomic;
pub mod example;
pub mod files;
pub mod follow;
pub mod in_order;
pub mod inputs;
pub mod out;
pub mod parallel;
pub mod profile_files;
pub mod query_read;
pub mod read;
pub mod run_files;
pub mod run_read;
pub mod signals;

pub use atomic::{AtomicFile, WriteError};
pub use inputs::{check_input, check_output, Input, UsageError};
