//! The app and the report draw from one plot model: for the same run, the inspector's view (the
//! app) and the report's embedded data give the same default x field, the same axes (domain and
//! round ticks) for every field, and the same histogram bars.

use gymscope::inspect::model;
use gymscope::inspect::run::RunView;
use gymscope::output::profile_bytes;
use gymscope::render::SeekSource;
use gymscope::report::{ReportInput, ReportMeta};
use std::path::Path;

fn fixtures() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gym-examples");
    crate::common::fixture_files::case_dirs(&root, "example_rollouts.jsonl")
}

#[test]
fn app_and_report_share_axes_ticks_and_bars() {
    let mut checked = 0;
    for dir in fixtures() {
        let inputs = std::fs::read(dir.join("example_rollouts_materialized_inputs.jsonl")).unwrap();
        let rollouts_path = dir.join("example_rollouts.jsonl");
        let rollouts = std::fs::read(&rollouts_path).unwrap();
        let Ok(profile) = profile_bytes(&inputs, "i", &rollouts, "r", Default::default()) else {
            continue; // runs upstream cannot profile either (no rollout keys)
        };
        let (view, cols) = model::build(&profile, "i", "r", &Default::default());
        let app = RunView::new(view, cols);
        let mut lines = SeekSource(std::fs::File::open(&rollouts_path).unwrap());
        let report =
            ReportInput::from_run(&profile, ReportMeta::default(), &mut lines, "r", 0, None)
                .unwrap()
                .points;

        let app_x = app.default_x().map(|m| app.view.metrics[m].clone());
        let report_x = gymscope::plot::default_x(&report.fields).map(|f| report.fields[f].clone());
        assert_eq!(app_x, report_x, "{}: default x", dir.display());
        for (f, field) in report.fields.iter().enumerate() {
            let m = app.metric(field).unwrap();
            assert_eq!(
                app.scatter_scales(m),
                report.scatter_scales(f),
                "{}: axes of {field}",
                dir.display()
            );
        }
        assert_eq!(
            app.reward_histogram(),
            gymscope::plot::histogram(report.reward.iter().flatten().copied()),
            "{}: histogram",
            dir.display()
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} runs compared");
}
