//! Native twin of bench.mjs: the first ~N MB of complete lines of FILE, each mode best of 3.
use std::io::Read;
use std::time::Instant;

const NAMES: [&str; 8] = [
    "a newlines (memchr)",
    "b + utf8 per line",
    "c b + skim::value_end",
    "c' c + has_control_bytes",
    "d profile::parse_line",
    "e joint_read::rollout_line",
    "f worker pipeline (joint)",
    "g worker pipeline (profile)",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("FILE");
    let mb: usize = args.next().map_or(200, |s| s.parse().expect("MB"));
    let mut buf = vec![0u8; mb * 1_000_000];
    let mut f = std::fs::File::open(&path).expect("open");
    let mut got = 0;
    while got < buf.len() {
        let n = f.read(&mut buf[got..]).expect("read");
        if n == 0 {
            break;
        }
        got += n;
    }
    buf.truncate(got);
    let end = memchr::memrchr(b'\n', &buf).expect("a newline") + 1;
    buf.truncate(end);
    let mbs = buf.len() as f64 / 1e6;
    println!("native: {mbs:.1} MB of complete lines");
    for (mode, name) in NAMES.iter().enumerate() {
        let mut best = f64::INFINITY;
        let mut ok = 0;
        for _ in 0..3 {
            let t = Instant::now();
            ok = std::hint::black_box(wasmfloor::run_mode(std::hint::black_box(&buf), mode as u32));
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name:<28} best {:>7.1} ms  {:>7.0} MB/s  ok {ok} fails {}",
            best * 1e3,
            mbs / best,
            wasmfloor::fails()
        );
    }
}
