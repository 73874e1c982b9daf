//! A profile job's replies: the phase they move the page to, the output files that follow, and
//! the figures the benchmark reads from `<body>`.

use super::{OutputFiles, Phase};
use crate::inspect::run::RunView;
use crate::web::download::DownloadLink;
use crate::web::protocol::{Failure, ReadStats, Reply, Request};
use crate::web::state::Snippets;
use crate::web::widgets::follow::{keep_scroll, Follow, Refresh};
use crate::web::worker_client::{SharedWorker, WorkerHandle};
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// Sends a profile job; its replies move the phase.
pub(super) fn send(
    worker: SharedWorker,
    request: &Request,
    phase: RwSignal<Phase, LocalStorage>,
    files: RwSignal<OutputFiles, LocalStorage>,
    snippets: Option<Snippets>,
    // A followed run's refresh: the shown run stays until the new one replaces it in place, and
    // the scroll taken when the refresh began is put back once it has.
    follow: Option<(Follow, Box<dyn FnOnce()>)>,
) {
    let (follow, mut put_back) = match follow {
        Some((f, put_back)) => (Some(f), Some(put_back)),
        None => (None, None),
    };
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
                let view = match done.view() {
                    Ok(view) => view,
                    Err(e) => return phase.set(Phase::Failed(Failure::from(e))),
                };
                let run = RunView::new(view, (&done.columns).into());
                mark_at("data-decoded-at");
                // A new view's tasks: the snippets read for the one before are not theirs.
                if let Some(Snippets(s)) = snippets {
                    s.set(None);
                }
                files.set(if done.files_follow {
                    OutputFiles::Writing
                } else {
                    OutputFiles::None
                });
                phase.set(Phase::Done(Arc::new(run)));
                if let Some(put_back) = put_back.take() {
                    put_back();
                }
                mark_shown();
            }
            Reply::Downloads {
                downloads,
                render_ms,
                snippets: read,
            } => {
                mark_files_written(render_ms);
                if let Some(Snippets(s)) = snippets {
                    s.set(Some(Arc::new(read)));
                }
                files.set(OutputFiles::Ready(
                    downloads.into_iter().map(DownloadLink::from).collect(),
                ));
            }
            // The profile is shown; only its files failed.
            Reply::Failed(f) if matches!(files.get_untracked(), OutputFiles::Writing) => {
                files.set(OutputFiles::Failed(f.message));
            }
            Reply::Failed(f) => match follow {
                Some(follow) => {
                    if let Some(put_back) = put_back.take() {
                        put_back();
                    }
                    follow.failed(&f.message);
                }
                None => phase.set(Phase::Failed(f)),
            },
            _ => phase.set(Phase::Failed(Failure::from(
                "unexpected reply from the worker",
            ))),
        });
    });
}

/// Profiles a followed run's grown files in place of the shown run (partial: rollouts are
/// still coming), unless the worker is busy with the user's job.
pub(super) fn refresher(
    worker: SharedWorker,
    slots: RwSignal<crate::inspect::intake::Slots<web_sys::File>, LocalStorage>,
    phase: RwSignal<Phase, LocalStorage>,
    files: RwSignal<OutputFiles, LocalStorage>,
    snippets: Option<Snippets>,
    follow: Follow,
) -> Refresh {
    std::rc::Rc::new(move |inputs: web_sys::File, rollouts: web_sys::File| {
        if worker.with_value(WorkerHandle::is_busy)
            || !matches!(phase.get_untracked(), Phase::Done(..))
        {
            return false;
        }
        // The scroll as it is now: the page may shrink while the new snapshot is read (its
        // files' list changes first), and a scroll taken later would be the shrunk page's.
        let put_back: Box<dyn FnOnce()> = Box::new(keep_scroll());
        slots.update(|s| {
            s.inputs = Some(inputs.clone());
            s.rollouts = Some(rollouts.clone());
        });
        let total = inputs.size() + rollouts.size();
        let request = Request::Profile {
            inputs,
            rollouts,
            options: crate::profile::ProfileOptions {
                allow_partial_rollouts: true,
            },
            upstream: slots.with_untracked(|s| crate::web::protocol::UpstreamFiles {
                quality_summary: s.quality_summary.clone(),
                rollout_verdicts: s.rollout_verdicts.clone(),
            }),
            workers: crate::web::readers::reading_workers(total),
        };
        send(
            worker,
            &request,
            phase,
            files,
            snippets,
            Some((follow, put_back)),
        );
        true
    })
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

/// Now (ms since the epoch) on `<body>` as `name`, for benches/browser_profile.rs.
fn mark_at(name: &str) {
    if let Some(body) = gloo_utils::document().body() {
        let _ = body.set_attribute(name, &js_sys::Date::now().to_string());
    }
}

/// The next frame after the profile's view was set: when it is drawn (ms since the epoch), on
/// `<body>` for benches/browser_profile.rs.
fn mark_shown() {
    let drawn = wasm_bindgen::closure::Closure::once_into_js(|| mark_at("data-shown-at"));
    let _ = gloo_utils::window().request_animation_frame(drawn.unchecked_ref());
}

/// How the run was read, on `<body>`, for benches/browser_profile.rs and the tests.
fn mark_read_stats(read: &ReadStats) {
    if let Some(body) = gloo_utils::document().body() {
        for (name, value) in [
            ("data-decode-ms", read.decode_ms),
            ("data-reader-io-ms", read.readers.io_ms),
            ("data-reader-parse-ms", read.readers.parse_ms),
            ("data-reader-send-ms", read.readers.send_ms),
            ("data-taken-at", read.taken_at),
            ("data-posted-at", read.posted_at),
            ("data-arrived-at", crate::web::worker_client::last_arrival()),
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
