//! Per-thread floor of gymscope's line reading: the same functions in wasm32 (+simd128) and natively.
//! Modes: 0 = count newlines (memchr); 1 = + simdutf8::basic::from_utf8 per line;
//! 2 = 1 + skim::value_end(line, 0); 3 = 1 + has_control_bytes + value_end (the skim path's checks);
//! 4 = profile::parse_line(Rollout); 5 = joint_read::rollout_line (profile + health in one walk).

use gymscope::read::jsonl::LineSpan;
use gymscope::record::{KeyTable, RowKind};
use std::sync::atomic::{AtomicU32, Ordering};

static FAILS: AtomicU32 = AtomicU32::new(0);

fn for_lines(data: &[u8], mut f: impl FnMut(LineSpan, &[u8]) -> bool) -> u32 {
    let mut start = 0usize;
    let mut n = 0u64;
    let mut ok = 0u32;
    let mut fails = 0u32;
    for nl in memchr::memchr_iter(b'\n', data) {
        n += 1;
        let line = &data[start..nl];
        let span = LineSpan { line: n, offset: start as u64, len: line.len() as u32 };
        if f(span, line) {
            ok += 1;
        } else {
            fails += 1;
        }
        start = nl + 1;
    }
    FAILS.store(fails, Ordering::Relaxed);
    ok
}

/// Runs `mode` over `data` (complete lines, each ending in '\n'); returns the lines that passed.
pub fn run_mode(data: &[u8], mode: u32) -> u32 {
    match mode {
        0 => {
            FAILS.store(0, Ordering::Relaxed);
            memchr::memchr_iter(b'\n', data).count() as u32
        }
        1 => for_lines(data, |_, l| simdutf8::basic::from_utf8(l).is_ok()),
        2 => for_lines(data, |_, l| {
            simdutf8::basic::from_utf8(l).is_ok() && gymscope::skim::value_end(l, 0) == Some(l.len())
        }),
        3 => for_lines(data, |_, l| {
            simdutf8::basic::from_utf8(l).is_ok()
                && !gymscope::skim::has_control_bytes(l)
                && gymscope::skim::value_end(l, 0) == Some(l.len())
        }),
        4 => {
            let mut keys = KeyTable::default();
            for_lines(data, |s, l| {
                gymscope::profile::parse_line(s, l, RowKind::Rollout, &mut keys).is_ok()
            })
        }
        5 => {
            let mut keys = KeyTable::default();
            for_lines(data, |s, l| {
                let (row, health) = gymscope::joint_read::rollout_line(s, l, &mut keys);
                row.is_ok() && health.is_ok()
            })
        }
        6 => pipeline(data, true),
        7 => pipeline(data, false),
        _ => u32::MAX,
    }
}

/// The worker's rollout read without its I/O (`web/worker/profile_job.rs::run`): 8 MB slices
/// through the one-thread driver (`read::job::OneThread`) of the profile with health
/// (`joint_read::pooled::Both`), or of the profile's builder alone when `!joint`.
/// Rollouts only: the inputs file is not read, so `finish` is not timed.
fn pipeline(data: &[u8], joint: bool) -> u32 {
    use gymscope::health::HealthBuilder;
    use gymscope::joint_read::pooled::{lines, Both};
    use gymscope::profile::{parse_batch, ProfileBuilder};
    use gymscope::read::job::OneThread;
    let builder = ProfileBuilder::new("i.jsonl", "r.jsonl");
    let max = builder.max_line_bytes();
    if joint {
        let health = HealthBuilder::new("r.jsonl", gymscope::reward_group::DEFAULT_THRESHOLD);
        let both = Both {
            builder,
            health: Ok(health),
            inputs_name: "i.jsonl".to_string(),
        };
        read_all(OneThread::new(both, max, lines), data)
    } else {
        read_all(OneThread::new(builder, max, parse_batch), data)
    }
}

/// Feeds `data` as the rollouts file; a failure is counted (`fails`).
fn read_all<J, P>(mut read: gymscope::read::job::OneThread<J, P>, data: &[u8]) -> u32
where
    J: gymscope::read::job::Job,
    P: FnMut(&gymscope::read::batch::LineBatch) -> J::Part,
{
    let mut fails = 0;
    for chunk in data.chunks(8 << 20) {
        if read.push(RowKind::Rollout, chunk).is_err() {
            fails += 1;
            break;
        }
    }
    let lines = read.lines_read() as u32;
    if read.finish().is_err() {
        fails += 1;
    }
    FAILS.store(fails, Ordering::Relaxed);
    lines
}

pub fn fails() -> u32 {
    FAILS.load(Ordering::Relaxed)
}

#[cfg(target_arch = "wasm32")]
mod exports {
    /// A buffer of `len` bytes in wasm memory, never freed (one per process).
    #[no_mangle]
    pub extern "C" fn alloc(len: usize) -> *mut u8 {
        let mut v = Vec::<u8>::with_capacity(len);
        let p = v.as_mut_ptr();
        std::mem::forget(v);
        p
    }

    /// # Safety
    /// `ptr..ptr+len` was returned by `alloc` and filled by the host.
    #[no_mangle]
    pub unsafe extern "C" fn run(ptr: *const u8, len: usize, mode: u32) -> u32 {
        super::run_mode(std::slice::from_raw_parts(ptr, len), mode)
    }

    #[no_mangle]
    pub extern "C" fn fails() -> u32 {
        super::fails()
    }
}
