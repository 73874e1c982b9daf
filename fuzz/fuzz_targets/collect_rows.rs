//! The collector's row readers: a JSONL line as a row and its key, Hydra-typed override values,
//! and materialization of a line with a seed.
#![no_main]

use gymscope::collect::{hydra, key, materialize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut row) = key::parse_row(data) {
        let _ = key::RolloutKey::of(&row);
        let _ = gymscope::collect::seed::add_seed(&mut row, 3);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = hydra::parse(text);
    }
    let opts = materialize::Options {
        agent_name: Some("a".into()),
        overrides: Default::default(),
        num_repeats: materialize::NumRepeats::Fixed(2),
        add_seed: true,
    };
    let mut m = materialize::Materializer::new(&opts, "in.jsonl");
    for (i, line) in data.split(|b| *b == b'\n').enumerate() {
        if m
            .push_line(line, true, i as u64, &mut |_row| Ok(()))
            .is_err()
        {
            return;
        }
    }
    let _ = m.finish();
});
