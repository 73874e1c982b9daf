//! `report --profile`: a reward-profiling file and agent metrics (split at the first 0xFF byte)
//! read back into a report and rendered.
#![no_main]

use gymscope::report::{self, ReportInput, ReportMeta};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|b| *b == 0xFF).unwrap_or(data.len());
    let (profiling, metrics) = (&data[..cut], data.get(cut + 1..));
    let meta = ReportMeta {
        title: "fuzz".into(),
        sources: Vec::new(),
        date: None,
    };
    if let Ok(input) = ReportInput::from_profile_files(
        meta,
        ("x_reward_profiling.jsonl", profiling),
        metrics.map(|m| ("x_agent_metrics.json", m)),
        3,
    ) {
        let _ = report::render(&input);
    }
});
