//! What the Compare page compares: a side's files as the worker's input, and the embedded
//! example pair.

use crate::inspect::detect::FileKind;
use crate::inspect::intake::{RunFiles, Slots};
use crate::web::protocol::CompareInput;
use leptos::prelude::*;

/// The embedded example: two generated checkpoints of the same tasks (assets/example-compare).
macro_rules! example {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!("../../../../assets/example-compare/", $name)),
        )
    };
}
const EXAMPLE: [(&str, &[u8]); 4] = [
    example!("base_materialized_inputs.jsonl"),
    example!("base.jsonl"),
    example!("step200_materialized_inputs.jsonl"),
    example!("step200.jsonl"),
];

/// The example's four files, as if chosen (the first two are the baseline's).
pub fn example_files() -> Vec<(web_sys::File, FileKind)> {
    EXAMPLE
        .iter()
        .map(|(name, bytes)| {
            let kind = if name.contains("materialized") {
                FileKind::MaterializedInputs
            } else {
                FileKind::Rollouts
            };
            (
                crate::web::widgets::file_pick::bytes_file(name, bytes),
                kind,
            )
        })
        .collect()
}

/// A side's input once its files are known: a run, or a profiling file alone.
pub fn input_of(s: &Slots<web_sys::File>) -> Option<CompareInput> {
    match (&s.inputs, &s.rollouts, &s.profiling) {
        (Some(i), Some(r), _) => Some(CompareInput::Run {
            inputs: i.clone(),
            rollouts: r.clone(),
        }),
        (_, _, Some(p)) => Some(CompareInput::Profiling { file: p.clone() }),
        _ => None,
    }
}

pub fn input_of_run(r: RunFiles<web_sys::File>) -> CompareInput {
    match r {
        RunFiles::Run { inputs, rollouts } => CompareInput::Run { inputs, rollouts },
        RunFiles::Profiling(file) => CompareInput::Profiling { file },
    }
}

/// The runs compared, for the folded pickers' line: the several runs' names, or each side's files.
pub fn compared_names(
    sides: [RwSignal<Slots<web_sys::File>, LocalStorage>; 2],
    runs: RwSignal<Vec<(String, RunFiles<web_sys::File>)>, LocalStorage>,
) -> String {
    let several = runs.with(|r| r.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>());
    if !several.is_empty() {
        return several.join(" vs ");
    }
    let side = |i: usize| {
        sides[i].with(|s| {
            [&s.inputs, &s.rollouts, &s.profiling]
                .into_iter()
                .flatten()
                .map(web_sys::File::name)
                .collect::<Vec<_>>()
                .join(" + ")
        })
    };
    format!("A {} vs B {}", side(0), side(1))
}
