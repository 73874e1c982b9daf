//! The floor under `gymscope profile` on this machine: how fast can any implementation read and
//! validate a run's two files? On the generated `agentic` run (`crates/gymscope-testkit/src/gen_run.rs`: 25,000
//! tasks × 4 repeats, rows like real agent rollouts, about 746 MB for both files), page cache warm
//! (both files read once before timing), in process, best of 3 per stage:
//!
//!   1. `read`: both files `File::read` into one reused 1 MiB buffer on one thread (the kernel's copy);
//!   2. the same plus cutting lines with `memchr` (counted), one thread;
//!   3. one reading thread cutting batches of about 1 MiB of whole lines (buffers recycled through a
//!      return channel) to 2 worker threads, each checking every line's UTF-8 (`simdutf8`);
//!   4. as 3, each worker also validating every line as JSON with gymscope's strict skimmer
//!      (`skim::value_end`): everything validated at structural-scan speed; 4b adds the skimmer's
//!      precondition check (`skim::has_control_bytes`);
//!   5. the profile's real read (`native::run_read::read_run` + `finish`), what `gymscope profile`
//!      does before writing its outputs.
//!
//! Each stage prints wall seconds, MB/s (bytes of both files / s), CPU seconds (user + system, all
//! threads, `getrusage`), CPU use and the 1-minute load average (the machine may be shared).
//!
//!   cargo bench --bench read_floor                     (data generated once into target/bench-data/)
//!   BENCH_DATA=DIR cargo bench --bench read_floor      (agentic_*.jsonl already in DIR)
//!   BENCH_TASKS=5000 cargo bench --bench read_floor    (a smaller run)
#![allow(unsafe_code)] // libc::getrusage reads the peak RSS measured
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope::native::run_read::read_run;
use gymscope_testkit::bench;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use gymscope_testkit::gen_run;

/// The binary's allocator and setting, so that the in-process read costs what the CLI's does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const REPEATS: usize = 4;
/// Bytes per `read` call and per batch of lines.
const CHUNK: usize = 1 << 20;
/// Batches in flight: a few per worker, so the reader never waits for a buffer while both work.
const BUFFERS: usize = 6;
const WORKERS: usize = 2;

/// User + system CPU seconds of this process, every thread.
fn cpu_seconds() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &raw mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The load average over the last minute.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// Runs `f` three times; prints the fastest run's wall and CPU seconds.
fn stage(name: &str, bytes: u64, mut f: impl FnMut() -> String) {
    let mut best = (f64::INFINITY, 0.0, String::new(), String::new());
    for _ in 0..3 {
        let (t, cpu) = (Instant::now(), cpu_seconds());
        let note = f();
        let run = (t.elapsed().as_secs_f64(), cpu_seconds() - cpu);
        if run.0 < best.0 {
            best = (run.0, run.1, note, load());
        }
    }
    let (t, cpu, note, load) = best;
    println!(
        "{name:<44} {t:6.3} s {:6.0} MB/s  CPU {cpu:6.3} s ({:3.0}% of one core)  load {load}  {note}",
        bytes as f64 / 1e6 / t,
        100.0 * cpu / t,
    );
}

/// Reads `path` to its end through `buf`, handing each chunk read to `f`.
fn read_chunks(path: &Path, buf: &mut [u8], mut f: impl FnMut(&[u8])) {
    let mut file = File::open(path).unwrap();
    loop {
        let n = file.read(buf).unwrap();
        if n == 0 {
            return;
        }
        f(&buf[..n]);
    }
}

/// A buffer of whole lines and how many of its bytes are filled.
type Batch = (Vec<u8>, usize);

/// Reads both files on this thread, cutting them into batches of about `CHUNK` bytes of whole
/// lines that `WORKERS` threads run `check` on, line by line. Returns the lines seen and the lines
/// `check` refused.
fn parallel_lines(files: &[PathBuf], check: fn(&[u8]) -> bool) -> (u64, u64) {
    let (to_workers, work) = sync_channel::<Batch>(BUFFERS);
    let work = Arc::new(Mutex::new(work));
    let (give_back, free) = channel::<Vec<u8>>();
    for _ in 0..BUFFERS {
        give_back.send(vec![0; CHUNK]).unwrap();
    }
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let (work, give_back) = (Arc::clone(&work), give_back.clone());
                scope.spawn(move || check_batches(&work, &give_back, check))
            })
            .collect();
        for path in files {
            cut_batches(path, &free, &to_workers);
        }
        drop(to_workers);
        workers
            .into_iter()
            .map(|w| w.join().unwrap())
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    })
}

/// The reading thread: fills a free buffer, sends its whole lines, and starts the next buffer with
/// the partial line at the end.
fn cut_batches(
    path: &Path,
    free: &Receiver<Vec<u8>>,
    to_workers: &std::sync::mpsc::SyncSender<Batch>,
) {
    let mut file = File::open(path).unwrap();
    let mut buf = free.recv().unwrap();
    let mut filled = 0;
    loop {
        let n = file.read(&mut buf[filled..]).unwrap();
        filled += n;
        if n == 0 {
            // The last line (or nothing: the worker gives the empty buffer back to the pool).
            to_workers.send((buf, filled)).unwrap();
            return;
        }
        if filled < buf.len() {
            continue;
        }
        match memchr::memrchr(b'\n', &buf[..filled]) {
            Some(last) => {
                let mut next = free.recv().unwrap();
                let tail = filled - (last + 1);
                if next.len() < tail.max(CHUNK) {
                    next.resize(tail.max(CHUNK), 0);
                }
                next[..tail].copy_from_slice(&buf[last + 1..filled]);
                to_workers.send((buf, last + 1)).unwrap();
                (buf, filled) = (next, tail);
            }
            // A line longer than the buffer: grow it.
            None => buf.resize(buf.len() * 2, 0),
        }
    }
}

/// A worker: runs `check` on each line of each batch and gives the buffer back.
fn check_batches(
    work: &Mutex<Receiver<Batch>>,
    give_back: &Sender<Vec<u8>>,
    check: fn(&[u8]) -> bool,
) -> (u64, u64) {
    let (mut lines, mut refused) = (0, 0);
    loop {
        let Ok((buf, filled)) = work.lock().unwrap().recv() else {
            return (lines, refused);
        };
        let mut start = 0;
        let text = &buf[..filled];
        while start < text.len() {
            let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
            lines += 1;
            refused += u64::from(!check(&text[start..end]));
            start = end + 1;
        }
        // The reader may be done with the pool (the last file's last batch): ignore a closed pool.
        let _ = give_back.send(buf);
    }
}

fn utf8(line: &[u8]) -> bool {
    simdutf8::basic::from_utf8(line).is_ok()
}

fn utf8_skim(line: &[u8]) -> bool {
    utf8(line) && gymscope::skim::value_end(line, 0) == Some(line.len())
}

fn utf8_controls_skim(line: &[u8]) -> bool {
    utf8(line)
        && !gymscope::skim::has_control_bytes(line)
        && gymscope::skim::value_end(line, 0) == Some(line.len())
}

fn main() {
    if bench::listing_only() {
        return; // `cargo test --benches` asks for a list; nothing to list
    }
    gymscope::native::allocator::configure();
    let tasks = bench::env_usize("BENCH_TASKS", 25_000);
    let dir = std::env::var_os("BENCH_DATA").map_or_else(bench::data_dir, PathBuf::from);
    let (inputs, rollouts) =
        gen_run::generate_agentic(&dir, &format!("agentic_{tasks}"), tasks, REPEATS, 4500);
    let files = [inputs.clone(), rollouts.clone()];
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    println!(
        "data: {} + {} = {:.0} MB; {} workers in stages 3-4; best of 3",
        inputs.display(),
        rollouts.display(),
        bytes as f64 / 1e6,
        WORKERS
    );
    let mut buf = vec![0u8; CHUNK];
    // Warm the page cache.
    for f in &files {
        read_chunks(f, &mut buf, |c| {
            std::hint::black_box(c);
        });
    }

    stage("1 read, one thread", bytes, || {
        let mut n = 0;
        for f in &files {
            read_chunks(f, &mut buf, |c| n += c.len());
        }
        assert_eq!(n as u64, bytes);
        String::new()
    });
    stage("2 read + memchr lines, one thread", bytes, || {
        let mut lines = 0u64;
        for f in &files {
            read_chunks(f, &mut buf, |c| {
                lines += memchr::memchr_iter(b'\n', c).count() as u64;
            });
        }
        format!("{lines} lines")
    });
    let report = |(lines, refused): (u64, u64)| format!("{lines} lines, {refused} refused");
    stage("3 read + 2 workers: simdutf8", bytes, || {
        report(parallel_lines(&files, utf8))
    });
    stage("4 read + 2 workers: simdutf8 + skim", bytes, || {
        report(parallel_lines(&files, utf8_skim))
    });
    stage(
        "4b ... + control bytes (skim's precondition)",
        bytes,
        || report(parallel_lines(&files, utf8_controls_skim)),
    );
    stage("5 profile read (run_read + finish)", bytes, || {
        let (builder, _) = read_run(&inputs, &rollouts, 1 << 30, None, |_| {}).unwrap();
        let profile = builder.finish(Default::default()).unwrap();
        std::hint::black_box(profile);
        String::new()
    });
}
