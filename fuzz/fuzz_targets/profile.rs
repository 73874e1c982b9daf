//! The profile's whole path on arbitrary bytes: both files (split at the first 0xFF byte), fed in
//! chunks of a size taken from the data, then rendered. Must never panic, whatever the input.
#![no_main]

use gymscope::profile::{ProfileBuilder, ProfileOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, data)) = data.split_first() else {
        return;
    };
    let cut = data.iter().position(|b| *b == 0xFF).unwrap_or(data.len());
    let (inputs, rollouts) = (&data[..cut], data.get(cut + 1..).unwrap_or_default());
    let chunk = usize::from(knobs & 0x3F) + 1;
    let mut builder = ProfileBuilder::new("in.jsonl", "out.jsonl")
        .with_max_line_bytes(if knobs & 0x40 != 0 { 64 } else { 1 << 20 });
    for c in inputs.chunks(chunk) {
        if builder.push_inputs(c).is_err() {
            return;
        }
    }
    for c in rollouts.chunks(chunk) {
        if builder.push_rollouts(c).is_err() {
            return;
        }
    }
    let options = ProfileOptions {
        allow_partial_rollouts: knobs & 0x80 != 0,
    };
    if let Ok(profile) = builder.finish(options) {
        let _ = gymscope::output::render_in_memory(&profile, inputs, "in.jsonl");
        let _ = gymscope::table::task_table(&profile);
    }
});
