//! The rollout scatter's core work at 1,000,000 points (synthetic columns: three agents, 0/1
//! rewards, tokens spread over 50..4050), natively: what the app redraws after a filter or axis
//! change (raster with agent colours, jitter and a brush), the binned-mean overlay per agent, the
//! brush's task filter, and a hover pick. Prints milliseconds per step (median of 5). The same
//! code runs in the page as wasm; the headless-Chromium figure is still to be measured (issue 15).
//!
//!   cargo bench --bench plot
//!   (or, without a release build of every dependency:
//!    cargo bench --bench plot --profile dev --config 'profile.dev.package.gymscope.opt-level=3')
//!   PLOT_POINTS=2000000 cargo bench --bench plot
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope::plot::binned::{binned_means, BINS};
use gymscope::plot::brush::{tasks_in, Brush};
use gymscope::plot::raster::{scatter, Frame, Style};
use gymscope::plot::scatter_scales;
use gymscope_testkit::bench;
use std::time::Instant;

fn median_ms(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[2]
}

fn main() {
    let n = bench::env_usize("PLOT_POINTS", 1_000_000);
    let repeats = 8;
    let mut z = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = || {
        z ^= z << 13;
        z ^= z >> 7;
        z ^= z << 17;
        z
    };
    let task: Vec<f64> = (0..n).map(|i| (i / repeats) as f64).collect();
    let rollout: Vec<f64> = (0..n).map(|i| (i % repeats) as f64).collect();
    let agent: Vec<f64> = (0..n).map(|i| ((i / repeats) % 3) as f64).collect();
    let xs: Vec<f64> = (0..n).map(|_| 50.0 + (next() % 4000) as f64).collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|&x| f64::from(u8::from(next() % 4000 > x as u64)))
        .collect();
    let (sx, sy) = scatter_scales(&xs, &ys);
    let frame = Frame::of(&sx, &sy);
    let brush = Brush::between(500.0, 1500.0, 0.5, 1.5);
    let style = Style {
        agent: Some(&agent),
        hidden: &[false, true, false],
        jitter: Some((&task, &rollout)),
        brush,
        shown: None,
    };
    let mut raster = None;
    let draw = median_ms(|| raster = Some(scatter(&xs, &ys, frame, None, &style, 720, 360)));
    let scales = median_ms(|| {
        std::hint::black_box(scatter_scales(&xs, &ys));
    });
    let overlay = median_ms(|| {
        for a in 0..3 {
            std::hint::black_box(binned_means(&xs, &ys, BINS, |i| agent[i] == f64::from(a)));
        }
    });
    let tasks = n / repeats;
    let b = brush.unwrap();
    let filter = median_ms(|| {
        std::hint::black_box(tasks_in(
            &b,
            &xs,
            &ys,
            (0..tasks).map(|t| t * repeats..(t + 1) * repeats),
            |i| agent[i] != 1.0,
        ));
    });
    let r = raster.unwrap();
    let hover = median_ms(|| {
        for k in 0..100 {
            std::hint::black_box(r.nearest(f64::from(k * 7 % 720), f64::from(k * 3 % 360), 6));
        }
    }) / 100.0;
    println!("points {n}");
    println!("raster (agents, hidden agent, jitter, brush): {draw:.1} ms");
    println!("scales: {scales:.1} ms");
    println!("binned means, 3 agents: {overlay:.1} ms");
    println!("brush task filter: {filter:.1} ms");
    println!("hover pick: {hover:.4} ms");
}
