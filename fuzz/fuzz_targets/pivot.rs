//! `validate-pivot` on arbitrary bytes, with options and chunk size taken from the first byte.
#![no_main]

use gymscope::pivot::{report::PivotView, PivotOptions, PivotValidator};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, data)) = data.split_first() else {
        return;
    };
    let options = PivotOptions {
        agent_ref: (knobs & 1 != 0).then(|| "pivot_agent".to_string()),
        check_tool_names: knobs & 2 == 0,
        allow_batch: knobs & 4 != 0,
        fail_fast: knobs & 8 != 0,
        stats: knobs & 16 != 0,
        fix: knobs & 32 != 0,
        gym_models: knobs & 64 != 0,
        require_fields: vec!["meta_info.depth".into()],
        ..PivotOptions::default()
    };
    let mut v = PivotValidator::new("p.jsonl", options).with_max_line_bytes(1 << 16);
    for c in data.chunks(usize::from(knobs >> 4) * 7 + 1) {
        if !v.push(c) {
            break;
        }
        let _ = v.take_fixed();
    }
    let (report, _) = v.finish();
    let view = PivotView::new(&report);
    let _ = view.failure_text();
});
