//! The run shown last, kept for a later report request (`report_job`), and the reply that shows
//! a profile on the page.

use super::super::protocol::{Download, Failure, JsColumns, Profiled, ReadStats, Reply};
use super::io::memory_bytes;
use crate::health::HealthReport;
use crate::inspect::model::{Columns, InspectView};
use crate::profile::Profile;
use crate::report::{ReportInput, Source};
use std::cell::RefCell;
use web_sys::File;

/// The run shown last: a profile with its files (and its health, computed in the same read),
/// or a report input read from profile files.
pub enum Shown {
    Run {
        profile: Profile,
        health: Option<Box<HealthReport>>,
        inputs: File,
        rollouts: File,
    },
    Files(Box<ReportInput>),
}

thread_local! {
    pub static SHOWN: RefCell<Option<Shown>> = const { RefCell::new(None) };
}

/// A file as a report's source: its name and size.
pub fn source(file: &File) -> Source {
    Source {
        name: file.name(),
        bytes: file.size() as u64,
    }
}

pub(super) fn profiled(
    view: InspectView,
    cols: &Columns,
    downloads: Vec<Download>,
    files_follow: bool,
    read: ReadStats,
) -> Reply {
    let read = ReadStats {
        memory: memory_bytes(),
        ..read
    };
    match Profiled::new(&view, JsColumns::from(cols), downloads, files_follow, read) {
        Ok(done) => Reply::Profiled(Box::new(done)),
        Err(e) => Reply::Failed(Failure::from(e)),
    }
}
