//! A profile job's replies: the phase they move the page to, the output files that follow, and
//! the figures the benchmark reads from `<body>`.

use super::{OutputFiles, Phase};
use crate::inspect::run::RunView;
use crate::web::download::DownloadLink;
use crate::web::protocol::{Failure, ReadStats, Reply, Request};
use crate::web::worker_client::SharedWorker;
use leptos::prelude::*;
use std::sync::Arc;

/// Sends a profile job; its replies move the phase.
pub(super) fn send(
    worker: SharedWorker,
    request: &Request,
    phase: RwSignal<Phase, LocalStorage>,
    files: RwSignal<OutputFiles, LocalStorage>,
) {
    worker.with_value(|w| {
        w.request(request, move |reply| match reply {
            Reply::Progress(progress) => phase.update(|p| {
                if let Phase::Working { progress: old, .. } = p {
                    *old = progress;
                }
            }),
            Reply::Profiled(done) => {
                // The read is over (benches/browser_plot.rs tells it from what follows).
                if let Some(p) = gloo_utils::window().performance() {
                    let _ = p.mark("gymscope:profiled");
                }
                mark_read_stats(&done.read);
                let run = RunView::new(done.view, (&done.columns).into());
                files.set(if done.files_follow {
                    OutputFiles::Writing
                } else {
                    OutputFiles::None
                });
                phase.set(Phase::Done(Arc::new(run)));
            }
            Reply::Downloads {
                downloads,
                render_ms,
            } => {
                mark_files_written(render_ms);
                files.set(OutputFiles::Ready(
                    downloads.into_iter().map(DownloadLink::from).collect(),
                ));
            }
            // The profile is shown; only its files failed.
            Reply::Failed(f) if matches!(files.get_untracked(), OutputFiles::Writing) => {
                files.set(OutputFiles::Failed(f.message));
            }
            Reply::Failed(f) => phase.set(Phase::Failed(f)),
            _ => phase.set(Phase::Failed(Failure::from(
                "unexpected reply from the worker",
            ))),
        });
    });
}

/// The output files are written: the time it took on `<body>` and a performance mark, for
/// benches/browser_profile.rs.
fn mark_files_written(render_ms: f64) {
    if let Some(p) = gloo_utils::window().performance() {
        let _ = p.mark("gymscope:files");
    }
    if let Some(body) = gloo_utils::document().body() {
        let _ = body.set_attribute("data-render-ms", &render_ms.to_string());
    }
}

/// How the run was read, on `<body>`, for benches/browser_profile.rs and the tests.
fn mark_read_stats(read: &ReadStats) {
    if let Some(body) = gloo_utils::document().body() {
        for (name, value) in [
            ("data-read-workers", f64::from(read.workers)),
            ("data-worker-memory", read.memory),
            ("data-reader-memory", read.reader_memory),
            ("data-read-ms", read.read_ms),
            ("data-record-ms", read.record_ms),
            ("data-finish-ms", read.finish_ms),
            ("data-stats-ms", read.stats_ms),
        ] {
            let _ = body.set_attribute(name, &value.to_string());
        }
    }
}
