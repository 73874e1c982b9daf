//! The second pass on several threads (`cut` → `Converter::run` anywhere → `apply` in order)
//! gives the bytes and metrics of converting every line in order: across duplicates between
//! lines, `--limit` falling inside a line, stamped task indices, blank and broken lines, the
//! self-check failing, batches converted out of order, and every chunk size.

use super::{options, upstream};
use gymscope::pivot_build::{BuildOptions, Paths, PivotBuilder};

/// What a build leaves: rows, audit, metrics JSON, or the error message.
type Outcome = Result<(Vec<u8>, Vec<u8>, String), String>;

/// Equal outcomes, or the first line where they differ (the rows are megabytes).
fn assert_same(got: &Outcome, want: &Outcome, case: &str) {
    match (got, want) {
        (Ok(g), Ok(w)) => {
            for (what, g, w) in [("rows", &g.0, &w.0), ("audit", &g.1, &w.1)] {
                if g != w {
                    let (g, w) = (String::from_utf8_lossy(g), String::from_utf8_lossy(w));
                    let at = g.lines().zip(w.lines()).position(|(a, b)| a != b);
                    panic!(
                        "{case}: {what} differ ({} vs {} lines), first at line {at:?}:\n{:.600}\n---\n{:.600}",
                        g.lines().count(),
                        w.lines().count(),
                        at.map_or("", |i| g.lines().nth(i).unwrap()),
                        at.map_or("", |i| w.lines().nth(i).unwrap()),
                    );
                }
            }
            assert_eq!(g.2, w.2, "{case}: metrics");
        }
        _ => assert_eq!(got, want, "{case}"),
    }
}

fn first_pass(data: &[u8], o: &BuildOptions, chunk: usize) -> Result<PivotBuilder, String> {
    let mut b = PivotBuilder::new("src.jsonl", o.clone());
    for c in data.chunks(chunk) {
        b.scan(c);
    }
    b.start_conversion().map_err(|e| e.message)?;
    Ok(b)
}

fn end(mut b: PivotBuilder, rows: Vec<u8>, audit: Vec<u8>) -> Outcome {
    end_spilled(&mut b, rows, audit, &Default::default())
}

/// [`end`] of a builder whose sink spilled rows into `spilled`.
fn end_spilled(
    b: &mut PivotBuilder,
    mut rows: Vec<u8>,
    mut audit: Vec<u8>,
    spilled: &std::sync::Mutex<Vec<u8>>,
) -> Outcome {
    let metrics = b.finish().map_err(|e| e.message)?;
    rows.append(&mut spilled.lock().unwrap());
    rows.extend(b.take_rows());
    audit.extend(b.take_audit());
    Ok((rows, audit, metrics.json_text(&Paths::default())))
}

/// The reference: every line converted in order against the builder's own state.
fn in_order(data: &[u8], o: &BuildOptions, chunk: usize) -> Outcome {
    let mut b = first_pass(data, o, chunk)?;
    let (mut rows, mut audit) = (Vec::new(), Vec::new());
    for c in data.chunks(chunk) {
        let go_on = b.convert_each_line(c);
        rows.extend(b.take_rows());
        audit.extend(b.take_audit());
        if !go_on {
            break;
        }
    }
    b.convert_each_line_end();
    end(b, rows, audit)
}

/// Batches converted on two threads, the later batch of each pair first, taken back in order.
fn on_threads(data: &[u8], o: &BuildOptions, chunk: usize) -> Outcome {
    on_threads_bounded(data, o, chunk, None)
}

/// [`on_threads`] with the builder's memory bounds set to `(spill, handoff)` bytes and a row sink:
/// a line whose rows pass `handoff` is converted again by `apply`, its rows spilled as they come.
fn on_threads_bounded(
    data: &[u8],
    o: &BuildOptions,
    chunk: usize,
    bounds: Option<(usize, usize)>,
) -> Outcome {
    let mut b = first_pass(data, o, chunk)?;
    let spilled = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    if let Some((spill, handoff)) = bounds {
        b.set_memory_bounds(spill, handoff);
        let sink = spilled.clone();
        b.set_row_sink(Box::new(move |rows| sink.lock().unwrap().extend(rows)));
    }
    let mut batches: Vec<_> = data.chunks(chunk).flat_map(|c| b.cut(c)).collect();
    batches.push(b.cut_end());
    let converter = b.converter();
    let converted: Vec<_> = std::thread::scope(|s| {
        let halves: Vec<_> = [0, 1]
            .into_iter()
            .map(|parity| {
                let mut c = converter.clone();
                let batches = &batches;
                s.spawn(move || {
                    let mut out: Vec<_> = batches
                        .iter()
                        .enumerate()
                        .rev()
                        .filter(|(i, _)| i % 2 == parity)
                        .map(|(i, batch)| (i, c.run(batch)))
                        .collect();
                    out.reverse();
                    out
                })
            })
            .collect();
        let mut all: Vec<_> = halves.into_iter().flat_map(|h| h.join().unwrap()).collect();
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, c)| c).collect()
    });
    let (mut rows, mut audit) = (Vec::new(), Vec::new());
    for (batch, c) in batches.iter().zip(converted) {
        let go_on = b.apply(batch, c);
        rows.append(&mut spilled.lock().unwrap());
        rows.extend(b.take_rows());
        audit.extend(b.take_audit());
        if !go_on {
            break;
        }
    }
    end_spilled(&mut b, rows, audit, &spilled)
}

/// Upstream's Gym rollouts, twice (every pivot of the copy is a duplicate of an earlier line),
/// with blank, unicode-blank, broken-JSON and broken-UTF-8 lines between them.
fn source() -> Vec<u8> {
    let mut data = Vec::new();
    for name in [
        "workplace_assistant.example_rollouts.jsonl",
        "example_multi_step.example_rollouts.jsonl",
        "xlam_fc.example_rollouts.jsonl",
    ] {
        data.extend(std::fs::read(upstream(name)).unwrap());
        data.extend(b"\n  \n\xe3\x80\x80\n{\"broken\": \n\xff\xfe{}\n");
    }
    let once = data.clone();
    data.extend(once);
    data
}

fn variants() -> Vec<(&'static str, BuildOptions)> {
    let mut v = vec![("default", options())];
    for limit in [1, 7, 40, 10_000] {
        let mut o = options();
        o.limit = Some(limit);
        v.push(("limit", o));
    }
    let mut o = options();
    o.stamp_task_index = true;
    v.push(("stamp", o.clone()));
    o.limit = Some(23);
    v.push(("stamp+limit", o));
    let mut o = options();
    o.min_reward = -1e9;
    o.source_groups = vec![
        gymscope::reward_group::RewardGroup::Mixed,
        gymscope::reward_group::RewardGroup::AllSuccess,
        gymscope::reward_group::RewardGroup::AllFailure,
    ];
    v.push(("every row", o));
    v
}

#[test]
fn threads_give_the_in_order_output() {
    let data = source();
    for (name, o) in variants() {
        for chunk in [1 << 20, 4096, 333] {
            let want = in_order(&data, &o, chunk);
            let (rows, _, _) = want.as_ref().unwrap();
            assert!(!rows.is_empty(), "{name}: the case writes rows");
            assert_same(
                &on_threads(&data, &o, chunk),
                &want,
                &format!("{name}, chunk {chunk}"),
            );
            let built = gymscope::pivot_build::build_bytes("src.jsonl", &data, o.clone(), chunk)
                .map(|b| (b.rows, b.audit, b.metrics.json_text(&Paths::default())))
                .map_err(|e| e.message);
            assert_same(
                &built,
                &want,
                &format!("{name}: build_bytes, chunk {chunk}"),
            );
        }
    }
}

/// A trajectory whose rows pass the hand-off bound is converted again in order with its rows
/// spilled as they come (a build of one 2,000-step rollout holds one row, not 716 MB): same bytes,
/// whatever the bounds, `--limit` and stamping included.
#[test]
fn long_lines_handed_off_and_spilled_give_the_in_order_output() {
    let data = source();
    for (name, o) in variants() {
        let want = in_order(&data, &o, 4096);
        for bounds in [(1, 1), (1, 1 << 20), (3000, 20_000)] {
            assert_same(
                &on_threads_bounded(&data, &o, 4096, Some(bounds)),
                &want,
                &format!("{name}, bounds {bounds:?}"),
            );
        }
    }
}

#[test]
fn duplicates_between_lines_are_caught_on_threads() {
    let data = source();
    let (_, audit, _) = on_threads(&data, &options(), 4096).unwrap();
    let audit = String::from_utf8(audit).unwrap();
    assert!(audit.contains("\"duplicate_pivot\""), "{audit}");
}

/// A self-check failure stops the build with the message of the line, whichever thread met it.
#[test]
fn a_failed_selfcheck_is_the_same_error() {
    let data = source();
    let mut o = options();
    o.word_count_similarity_threshold = 0.99;
    let want = in_order(&data, &o, 4096);
    let message = want.clone().unwrap_err();
    assert!(message.contains("does not score 1.0"), "{message}");
    assert_same(&on_threads(&data, &o, 4096), &want, "selfcheck");
}

/// The second pass in byte ranges, as the app's pool reads it: the first pass notes where each
/// range starts, each range is converted alone by a converter made from the setup's bytes, its
/// parts sent as bytes, and the builder takes them back in file order, last range first.
fn in_ranges(data: &[u8], o: &BuildOptions, piece: u64) -> Outcome {
    use gymscope::pivot_build::pooled::{
        ConvertedBatch, ConverterSetup, RangeConverter, RangeStarts,
    };
    use gymscope::read::in_order::{read_range, InOrder, Part};
    use gymscope::read::jsonl::LineSplitter;
    use gymscope::read::ranges::plan;
    use gymscope::record::RowKind;
    let ranges = plan(RowKind::Rollout, data.len() as u64, piece);
    let mut b = PivotBuilder::new("src.jsonl", o.clone());
    let mut starts = RangeStarts::new(&ranges);
    let mut splitter = LineSplitter::new();
    for c in data.chunks(4096) {
        b.scan(c);
        let _ = splitter.push(c, |span, line| {
            starts.line(span, line);
            Ok::<_, ()>(())
        });
    }
    let _ = splitter.finish(|span, line| {
        starts.line(span, line);
        Ok::<_, ()>(())
    });
    b.start_conversion().map_err(|e| e.message)?;
    let setup = b.converter_setup().to_bytes();
    let parts: Vec<Vec<Vec<u8>>> = ranges
        .iter()
        .zip(starts.finish())
        .map(|(range, start)| {
            let mut converter = ConverterSetup::from_bytes(&setup).unwrap().converter();
            let mut reader = RangeConverter::new(&mut converter, start);
            let mut sent = Vec::new();
            let read = |a: u64, z: u64| Ok::<_, ()>(data[a as usize..z as usize].to_vec());
            let size = data.len() as u64;
            let part = |p: Part<ConvertedBatch>| {
                sent.push(p.to_bytes());
                Ok(())
            };
            read_range(*range, size, 1 << 30, 977, read, |l| reader.lines(l), part).unwrap();
            sent
        })
        .collect();
    let mut order = InOrder::new(b, ranges);
    for (i, sent) in parts.iter().enumerate().rev() {
        for bytes in sent {
            let part = Part::from_bytes(bytes).unwrap();
            order.accept(i, part).map_err(|e| e.message)?;
        }
    }
    let mut b = order.into_job();
    let (rows, audit) = (b.take_rows(), b.take_audit());
    end(b, rows, audit)
}

#[test]
fn ranges_read_alone_give_the_in_order_output() {
    let data = source();
    let mut o = options();
    o.word_count_similarity_threshold = 0.99;
    let mut cases = variants();
    cases.push(("selfcheck fails", o));
    for (name, o) in cases {
        let want = in_order(&data, &o, 4096);
        for piece in [700, 4096, 65_536, 1 << 20] {
            assert_same(
                &in_ranges(&data, &o, piece),
                &want,
                &format!("{name}, ranges of {piece}"),
            );
        }
    }
}
