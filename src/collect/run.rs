//! The collection driver: streams the materialized rows that still need to run, POSTs each to
//! its agent's `/run` under a concurrency limit, and hands results to one writer thread that
//! appends each as one complete line (one `write` per batch) before it counts as done.
//!
//! Stopping: Ctrl-C or SIGTERM stops dispatching and lets in-flight rollouts finish for up to the
//! grace period; a second signal (or the grace period running out) drops the rest, which simply
//! run again on `--resume`.

use super::environment::{dispatch_name, Destination, Topology};
use super::http::{Client, TransportError};
use super::key::{parse_row, to_line, RolloutKey};
use super::progress::{Printer, Progress};
use super::progress_file::ProgressFile;
use super::resume::Plan;
use super::route::{self, failure_row, merge_row_keys, progress_numbers, CollectorFailure, Route};
use super::{episode, files, latency, observe, routing, CollectError, Row};
use crate::gym::keys::ATTEMPT_INDEX;
use bytes::Bytes;
use hyper::{Method, Uri};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::task::JoinSet;

pub struct Config {
    pub materialized: PathBuf,
    pub output: PathBuf,
    pub failures: PathBuf,
    /// Where rows go (environment servers, or agents on older head servers).
    pub topology: Topology,
    /// `/run` address per destination.
    pub addresses: HashMap<Destination, Uri>,
    pub concurrency: usize,
    pub timeout: Option<Duration>,
    pub grace: Duration,
    pub fail_fast: bool,
    pub total: u64,
    pub progress: bool,
    /// Observability on: the model servers' capture directory.
    pub capture_dir: Option<PathBuf>,
    /// Materialized lines to start before the others, in this order (`dispatch_longest_first`).
    pub first: Vec<crate::read::jsonl::LineSpan>,
    /// v0.7.0's `dispatch_budget_s` and `drain_margin_s`: rows are no longer started once the
    /// time left is under the margin (given, else the p75 of finished rollouts).
    pub budget: Option<(Duration, Option<f64>)>,
}

#[derive(Debug, Default)]
pub struct Report {
    pub completed: u64,
    pub main: u64,
    pub sidecar: u64,
    pub nowhere: u64,
    /// Sidecar rows gymscope wrote itself (HTTP errors, bad answers, `--timeout`).
    pub collector_failures: u64,
    pub connection_retries: u64,
    /// The signal that stopped the run early.
    pub interrupted: Option<&'static str>,
    /// What aborted the run (`--fail-fast`, a write error).
    pub fatal: Option<String>,
    pub elapsed: Duration,
    pub status: String,
    /// Seconds each `/run` that answered with a result took (v0.7.0's latency lines).
    pub durations: Vec<f64>,
    /// Rows not started because the dispatch budget ran out (written nowhere).
    pub drained: u64,
    /// Rollouts routed to the sidecar this run, by failure class in first-seen order (v0.7.0's
    /// coverage lines and its no-result error).
    pub failure_classes: Vec<(String, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Stop {
    Running,
    Draining(tokio::time::Instant),
    Abort,
}

enum Outcome {
    Done {
        route: Route,
        line: Vec<u8>,
        agent: String,
        numbers: Vec<(String, f64)>,
        collector_failure: bool,
        /// How long the `/run` took, when it answered with a result.
        seconds: Option<f64>,
        /// A sidecar row's failure class.
        class: Option<String>,
    },
    Fatal(String),
}

pub async fn run(
    cfg: Config,
    plan: &Plan,
    client: Client,
    progress_file: Option<super::progress_file::ProgressFile>,
) -> Result<Report, CollectError> {
    let start = Instant::now();
    let open = |p: &Path| {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .map_err(|e| files::io_err(p, e))
    };
    let (main_file, side_file) = (open(&cfg.output)?, open(&cfg.failures)?);
    let progress = Progress::new(cfg.total, cfg.progress);
    let printer = progress.printer();
    let (stop_tx, mut stop_rx) = watch::channel(Stop::Running);
    let stop_tx = Arc::new(stop_tx);
    let interrupted = Arc::new(std::sync::Mutex::new(None));
    let signals = tokio::spawn(watch_signals(
        stop_tx.clone(),
        interrupted.clone(),
        printer.clone(),
        cfg.grace,
    ));

    let (tx, rx) = mpsc::channel::<Outcome>(cfg.concurrency.max(1));
    let writer = {
        let stop_tx = stop_tx.clone();
        let names = (cfg.output.clone(), cfg.failures.clone());
        tokio::task::spawn_blocking(move || {
            write_loop(
                rx,
                (main_file, side_file),
                names,
                (progress, progress_file),
                stop_tx,
            )
        })
    };
    let retries = Arc::new(AtomicU64::new(0));

    let sem = Arc::new(Semaphore::new(cfg.concurrency.max(1)));
    let mut tasks = JoinSet::new();
    let file = File::open(&cfg.materialized).map_err(|e| files::io_err(&cfg.materialized, e))?;
    let file_for_first = file
        .try_clone()
        .map_err(|e| files::io_err(&cfg.materialized, e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mat_name = cfg.materialized.display().to_string();
    let mut line = Vec::new();
    let mut line_no;
    let mut dispatch_error = None;
    let mut drained = 0u64;
    // Durations of finished rollouts, sorted: the budget's adaptive margin reads their p75.
    let finished: Arc<std::sync::Mutex<Vec<f64>>> = Arc::default();
    // Rows started first (longest first): read up front, skipped when met in file order.
    let mut first = std::collections::VecDeque::new();
    let skip: std::collections::HashSet<u64> = cfg.first.iter().map(|s| s.line).collect();
    for s in &cfg.first {
        let mut bytes = vec![0; s.len as usize];
        if let Err(e) =
            std::os::unix::fs::FileExt::read_exact_at(&file_for_first, &mut bytes, s.offset)
        {
            return Err(files::io_err(&cfg.materialized, e));
        }
        bytes.push(b'\n');
        first.push_back((s.line, bytes));
    }
    let mut sequential = 0u64;
    loop {
        if *stop_rx.borrow() != Stop::Running {
            break;
        }
        line.clear();
        if let Some((no, bytes)) = first.pop_front() {
            line = bytes;
            line_no = no;
        } else {
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    dispatch_error = Some(files::io_err(&cfg.materialized, e));
                    break;
                }
            }
            sequential += 1;
            line_no = sequential;
            if skip.contains(&line_no) {
                continue;
            }
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let mut row = match parse_row(text) {
            Ok(r) => r,
            Err(e) => {
                dispatch_error = Some(CollectError::line(&mat_name, line_no, e));
                break;
            }
        };
        let Some(key) = RolloutKey::of(&row) else {
            continue;
        };
        let Some(attempt) = plan.attempt(&key) else {
            continue;
        };
        let agent = dispatch_name(&row).to_string();
        let destination = cfg.topology.destination(&row);
        let Some((uri, destination)) = destination
            .ok()
            .and_then(|d| Some((cfg.addresses.get(&d)?.clone(), d)))
        else {
            dispatch_error = Some(CollectError::line(
                &mat_name,
                line_no,
                format!("no address for `{agent}`"),
            ));
            break;
        };
        // The body is the materialized line verbatim, or re-serialized with the attempt stamp
        // or the agent a stamped row runs on; a taskset row's is its episode request.
        let mut changed = attempt > 0;
        if changed {
            row.insert(ATTEMPT_INDEX.into(), attempt.into());
        }
        // A retry of a rollout whose deliverable can be re-judged says so (v0.7.0).
        if plan.reuse(&key) {
            row.insert("reuse_cached_deliverable".into(), true.into());
            changed = true;
        }
        if let Some(agent) = cfg.topology.bound_agent(&row).map(String::from) {
            let mut agent_ref = Row::new();
            agent_ref.insert("name".into(), agent.into());
            row.insert(crate::gym::keys::AGENT_REF.into(), agent_ref.into());
            changed = true;
        }
        let taskset = routing::materialized_taskset(&row).is_some();
        let body = if taskset {
            match episode::request_body(&row) {
                Ok(b) => Bytes::from(b),
                Err(e) => {
                    dispatch_error = Some(CollectError::line(&mat_name, line_no, e));
                    break;
                }
            }
        } else if changed {
            let mut b = to_line(&row);
            b.pop();
            Bytes::from(b)
        } else {
            Bytes::copy_from_slice(text)
        };
        // Observability: remove this attempt's stale capture before its `/run` is sent, so a
        // re-run never appends onto an earlier attempt's calls (upstream clears them likewise).
        if let Some(dir) = &cfg.capture_dir {
            match observe::rollout_id(&row) {
                Ok(Some(id)) => {
                    for name in observe::capture_file_names(&id) {
                        if let Err(e) = std::fs::remove_file(dir.join(&name)) {
                            if e.kind() != std::io::ErrorKind::NotFound {
                                dispatch_error = Some(CollectError::line(
                                    &mat_name,
                                    line_no,
                                    format!(
                                        "removing the stale capture '{}': {e}",
                                        dir.join(&name).display()
                                    ),
                                ));
                            }
                        }
                    }
                    if dispatch_error.is_some() {
                        break;
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    dispatch_error = Some(CollectError::line(&mat_name, line_no, e));
                    break;
                }
            }
        }
        let permit = tokio::select! {
            biased;
            _ = stop_rx.wait_for(|s| *s != Stop::Running) => break,
            p = sem.clone().acquire_owned() => p.expect("semaphore is never closed"),
        };
        // Checked once the row holds its slot: the time left when it would really start.
        if let Some((budget, margin)) = cfg.budget {
            let remaining = budget.as_secs_f64() - start.elapsed().as_secs_f64();
            let margin = latency::drain_margin(margin, &finished.lock().expect("not poisoned"));
            if remaining <= 0.0 || margin.is_some_and(|m| remaining < m) {
                drained += 1;
                continue;
            }
        }
        while tasks.try_join_next().is_some() {}
        let job = Job {
            client: client.clone(),
            uri,
            destination,
            taskset,
            body,
            row,
            agent,
            key,
            timeout: cfg.timeout,
            fail_fast: cfg.fail_fast,
            retries: retries.clone(),
            printer: printer.clone(),
            stop: stop_rx.clone(),
            capture_dir: cfg.capture_dir.clone(),
            finished: finished.clone(),
        };
        let tx = tx.clone();
        tasks.spawn(async move {
            if let Some(outcome) = job.run().await {
                let _ = tx.send(outcome).await;
            }
            drop(permit);
        });
    }
    drop(tx);
    drain(&mut tasks, &mut stop_rx).await;
    signals.abort();
    let mut report = writer
        .await
        .map_err(|e| CollectError::Config(format!("writer thread failed: {e}")))?;
    report.connection_retries = retries.load(Ordering::Relaxed);
    report.drained = drained;
    report.interrupted = *interrupted.lock().expect("not poisoned");
    report.elapsed = start.elapsed();
    if let Some(e) = dispatch_error {
        return Err(e);
    }
    Ok(report)
}

/// Waits for in-flight rollouts: all of them while running, up to the grace period once
/// stopping, none after a second signal or a fatal error.
/// Reads `<dir>/<id>.capture.jsonl` (blank lines skipped) and whether `.capture.incomplete`
/// exists. Read after the rollout's `/run` answered, when its writers are done.
fn read_capture(dir: &Path, id: &str) -> observe::CaptureRead {
    let [file, marker] = observe::capture_file_names(id);
    let (file, marker) = (dir.join(file), dir.join(marker));
    let incomplete = marker.exists();
    let mut read = observe::CaptureRead {
        found: incomplete || file.exists(),
        incomplete,
        ..observe::CaptureRead::default()
    };
    if file.exists() {
        match std::fs::read(&file) {
            Ok(bytes) => {
                read.lines = bytes
                    .split(|b| *b == b'\n')
                    .filter(|l| !l.trim_ascii().is_empty())
                    .map(<[u8]>::to_vec)
                    .collect();
            }
            Err(_) => read.unreadable = true,
        }
    }
    read
}

async fn drain(tasks: &mut JoinSet<()>, stop_rx: &mut watch::Receiver<Stop>) {
    loop {
        let state = *stop_rx.borrow_and_update();
        match state {
            Stop::Running => tokio::select! {
                r = tasks.join_next() => if r.is_none() { return },
                _ = stop_rx.changed() => {}
            },
            Stop::Draining(deadline) => tokio::select! {
                r = tasks.join_next() => if r.is_none() { return },
                () = tokio::time::sleep_until(deadline) => {
                    tasks.abort_all();
                    while tasks.join_next().await.is_some() {}
                    return;
                }
                _ = stop_rx.changed() => {}
            },
            Stop::Abort => {
                tasks.abort_all();
                while tasks.join_next().await.is_some() {}
                return;
            }
        }
    }
}

async fn watch_signals(
    stop_tx: Arc<watch::Sender<Stop>>,
    interrupted: Arc<std::sync::Mutex<Option<&'static str>>>,
    printer: Printer,
    grace: Duration,
) {
    use tokio::signal::unix::{signal, SignalKind};
    // An inherited ignored SIGINT is not listened for (listening would replace the ignore).
    let int = if crate::native::signals::sigint_ignored_at_start() {
        None
    } else {
        match signal(SignalKind::interrupt()) {
            Ok(s) => Some(s),
            Err(_) => return,
        }
    };
    let (Ok(mut term), mut int) = (signal(SignalKind::terminate()), int) else {
        return;
    };
    // From here on the signals are this loop's: the temp-file handler must not end the process.
    let _handled = crate::native::signals::handled_elsewhere();
    loop {
        let ctrl_c = async {
            match int.as_mut() {
                Some(int) => int.recv().await,
                None => std::future::pending().await,
            }
        };
        let name = tokio::select! {
            _ = ctrl_c => "Ctrl-C",
            _ = term.recv() => "SIGTERM",
        };
        interrupted
            .lock()
            .expect("not poisoned")
            .get_or_insert(name);
        if *stop_tx.borrow() == Stop::Running {
            stop_tx.send_replace(Stop::Draining(tokio::time::Instant::now() + grace));
            printer.line(&format!(
                "{name}: no new rollouts; waiting up to {:.0} s for those in flight (again to stop now).",
                grace.as_secs_f64()
            ));
        } else {
            stop_tx.send_replace(Stop::Abort);
            printer.line(&format!(
                "{name}: stopping now; unfinished rollouts run again on --resume."
            ));
        }
    }
}

struct Job {
    client: Client,
    uri: Uri,
    destination: Destination,
    /// A taskset row: the reply is an episode's.
    taskset: bool,
    body: Bytes,
    row: Row,
    agent: String,
    key: RolloutKey,
    timeout: Option<Duration>,
    fail_fast: bool,
    retries: Arc<AtomicU64>,
    printer: Printer,
    stop: watch::Receiver<Stop>,
    capture_dir: Option<PathBuf>,
    /// Where a rollout that answered records its duration (sorted).
    finished: Arc<std::sync::Mutex<Vec<f64>>>,
}

impl Job {
    /// The rollout's outcome, or `None` when a stop came while it was only retrying a connection
    /// (nothing was sent to the agent; it runs again on `--resume`).
    async fn run(self) -> Option<Outcome> {
        let started = Instant::now();
        let answer = match self.timeout {
            None => Some(self.post().await?),
            Some(t) => match tokio::time::timeout(t, self.post()).await {
                Ok(answer) => Some(answer?),
                Err(_) => None,
            },
        };
        let url = self.uri.to_string();
        let failure = match &answer {
            None => CollectorFailure::Timeout,
            Some((status, body, _)) if (200..300).contains(status) => {
                match parse_row(body).and_then(|reply| {
                    if self.taskset && episode::is_reply(&reply) {
                        episode::record(reply)
                    } else {
                        Ok(reply)
                    }
                }) {
                    Ok(mut result) => {
                        merge_row_keys(&mut result, &self.row, &self.destination);
                        let capture = self.capture_dir.as_deref().and_then(|dir| {
                            observe::rollout_id(&result)
                                .ok()
                                .flatten()
                                .map(|id| read_capture(dir, &id))
                        });
                        observe::attach_evidence(&self.row, &mut result, capture.as_ref());
                        // v0.7.0 writes `ng_perf` on every observed result.
                        if self.capture_dir.is_some() {
                            let ms = started.elapsed().as_secs_f64() * 1000.0;
                            if let Some(perf) = observe::ng_perf(&result, Some(ms)) {
                                result.insert(crate::gym::keys::PERF.into(), perf);
                            }
                        }
                        let route = route::route(&result);
                        let class =
                            (route == Route::Sidecar).then(|| route::failure_class(&result));
                        if route == Route::Sidecar {
                            self.printer
                                .out_line(&route::dropped_line(&self.row, &result));
                        }
                        let seconds = started.elapsed().as_secs_f64();
                        {
                            let mut f = self.finished.lock().expect("not poisoned");
                            let at = f.partition_point(|d| *d <= seconds);
                            f.insert(at, seconds);
                        }
                        return Some(Outcome::Done {
                            route,
                            line: to_line(&result),
                            numbers: progress_numbers(&result),
                            agent: self.agent,
                            collector_failure: false,
                            seconds: Some(seconds),
                            class,
                        });
                    }
                    Err(e) => CollectorFailure::BadResponse {
                        status: *status,
                        detail: format!("/run answered HTTP {status} with {e}"),
                    },
                }
            }
            Some((status, body, reason)) => {
                if self.fail_fast {
                    return Some(Outcome::Fatal(format!(
                        "agent `{}` answered /run for rollout {} with HTTP {status}: {}",
                        self.agent,
                        self.key,
                        String::from_utf8_lossy(&body[..body.len().min(300)])
                    )));
                }
                CollectorFailure::Http {
                    status: *status,
                    reason,
                    url: &url,
                    body,
                }
            }
        };
        // v0.7.0 prints both lines for every failed `/run` it records.
        let status = answer.as_ref().map(|(s, _, _)| *s);
        self.printer
            .out_line(&route::failure_line(&self.row, status));
        let row = failure_row(&self.row, failure, &self.destination);
        self.printer.out_line(&route::dropped_line(&self.row, &row));
        Some(Outcome::Done {
            route: Route::Sidecar,
            line: to_line(&row),
            numbers: Vec::new(),
            agent: self.agent,
            collector_failure: true,
            seconds: None,
            class: Some(route::failure_class(&row)),
        })
    }

    /// POSTs until an answer arrives: connection-level errors retry with exponential backoff
    /// (0.5 s doubling, capped at 10 s), as upstream retries them forever, but only while the run
    /// is running: once Ctrl-C/SIGTERM stops it, a rollout that never reached its agent gives up
    /// at once (`None`) instead of holding the process for the grace period.
    async fn post(&self) -> Option<(u16, Bytes, String)> {
        let mut delay = Duration::from_millis(500);
        let mut stop = self.stop.clone();
        loop {
            match self
                .client
                .send_full(Method::POST, &self.uri, Some(self.body.clone()))
                .await
            {
                Ok((status, reason, body)) => return Some((status, body, reason)),
                Err(TransportError(e)) => {
                    if *stop.borrow_and_update() != Stop::Running {
                        return None;
                    }
                    let n = self.retries.fetch_add(1, Ordering::Relaxed);
                    if n == 0 || (n + 1) % 100 == 0 {
                        self.printer.line(&format!(
                            "Connection error to agent `{}` ({}), retrying ({} retries so far): {e}",
                            self.agent,
                            self.uri,
                            n + 1
                        ));
                    }
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        _ = stop.changed() => return None,
                    }
                    delay = (delay * 2).min(Duration::from_secs(10));
                }
            }
        }
    }
}

/// The writer thread: appends each batch of results with one `write` per file, then counts them.
fn write_loop(
    mut rx: mpsc::Receiver<Outcome>,
    (mut main_file, mut side_file): (File, File),
    (main_path, side_path): (PathBuf, PathBuf),
    (mut progress, mut progress_file): (Progress, Option<ProgressFile>),
    stop_tx: Arc<watch::Sender<Stop>>,
) -> Report {
    let mut report = Report::default();
    let (mut main_buf, mut side_buf) = (Vec::new(), Vec::new());
    let mut batch = Vec::new();
    let mut last_sync = Instant::now();
    let fail = |report: &mut Report, msg: String| {
        report.fatal.get_or_insert(msg);
        stop_tx.send_replace(Stop::Abort);
    };
    while let Some(first) = rx.blocking_recv() {
        batch.push(first);
        while batch.len() < 1024 {
            match rx.try_recv() {
                Ok(o) => batch.push(o),
                Err(_) => break,
            }
        }
        main_buf.clear();
        side_buf.clear();
        for o in &batch {
            match o {
                Outcome::Done {
                    route: Route::Main,
                    line,
                    ..
                } => main_buf.extend_from_slice(line),
                Outcome::Done {
                    route: Route::Sidecar,
                    line,
                    ..
                } => side_buf.extend_from_slice(line),
                _ => {}
            }
        }
        {
            // A full disk must say which file it could not write.
            let named =
                |p: &Path, e: std::io::Error| format!("writing '{}' failed: {e}", p.display());
            let written = main_file
                .write_all(&main_buf)
                .map_err(|e| named(&main_path, e))
                .and_then(|()| {
                    side_file
                        .write_all(&side_buf)
                        .map_err(|e| named(&side_path, e))
                });
            if let Err(msg) = written {
                fail(&mut report, msg);
                batch.clear();
                continue;
            }
        }
        for o in batch.drain(..) {
            match o {
                Outcome::Fatal(msg) => fail(&mut report, msg),
                Outcome::Done {
                    route,
                    agent,
                    numbers,
                    collector_failure,
                    seconds,
                    class,
                    ..
                } => {
                    report.completed += 1;
                    report.durations.extend(seconds);
                    if let Some(class) = class {
                        match report.failure_classes.iter_mut().find(|(c, _)| *c == class) {
                            Some((_, n)) => *n += 1,
                            None => report.failure_classes.push((class, 1)),
                        }
                    }
                    match route {
                        Route::Main => report.main += 1,
                        Route::Sidecar => report.sidecar += 1,
                        Route::Nowhere => report.nowhere += 1,
                    }
                    report.collector_failures += u64::from(collector_failure);
                    progress.record(&agent, &numbers, route != Route::Main);
                }
            }
        }
        progress.tick();
        if let Some(p) = progress_file.as_mut() {
            p.publish(report.completed, false);
        }
        if last_sync.elapsed() >= Duration::from_secs(1) {
            let _ = main_file.sync_data();
            let _ = side_file.sync_data();
            last_sync = Instant::now();
        }
    }
    let _ = main_file.sync_data();
    let _ = side_file.sync_data();
    progress.finish();
    if let Some(p) = progress_file.as_mut() {
        p.publish(report.completed, true);
    }
    report.status = progress.status(usize::MAX);
    report
}
