//! The pivot report as a reading job: each batch of lines is one run checked on its own
//! (`LineChecker::batch`, on any thread), and the runs are added to the report in file order
//! ([`ReportBuilder`] as a `read::job::Job`), so whatever the driver (one thread, the app's pool
//! over byte ranges) the report, its first error and the fixed copy are one reader's.

use super::checked::Checked;
use super::validate::ReportBuilder;
use crate::read::job::Job;
use crate::read::jsonl::LineTooLong;
use crate::record::RowKind;

impl Job for ReportBuilder {
    type Part = Checked;
    /// Only a file that cannot be read fails a validation: every other error is a finding.
    type Error = String;

    /// The builder numbers physical lines itself (a lone CR ends one), so the lines of the
    /// ranges before are not needed.
    fn record(&mut self, run: Checked, _before: u64) -> Result<(), Self::Error> {
        self.add(run);
        Ok(())
    }

    fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<(), Self::Error> {
        self.line_too_long(t);
        Ok(())
    }

    fn read_failed(&mut self, _: RowKind, cause: String) -> String {
        format!("Could not read '{}': {cause}", self.file())
    }

    fn is_stopped(&self) -> bool {
        ReportBuilder::is_stopped(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pivot::checked::LineChecker;
    use crate::pivot::{validate_bytes, PivotOptions, Report};
    use crate::read::in_order::{record_last_first, InOrder};
    use crate::read::ranges::plan;

    const VALID: &str = r#"{"responses_create_params":{"input":[{"role":"user","content":"hi"}],"tools":[{"type":"function","name":"search","parameters":{}}]},"expected_action":{"type":"function_call","name":"search","arguments":"{}"},"agent_ref":{"type":"responses_api_agents","name":"a"},"meta_info":{"depth":2},"source_model_info":{"rewards":[0,1]}}"#;
    const FIXABLE: &str = r#"{"responses_create_params":{"input":[{"role":"user","content":"x"}],"tools":[{"type":"function","name":"search","parameters":{}}],"top_p":null},"expected_action":{"type":"message","content":"ok"}}"#;

    /// Files the ranges must read as one reader does: lone CRs, CRLF, blank lines, bad rows
    /// early and late, invalid UTF-8, a BOM, an over-limit line, no final newline.
    fn cases() -> Vec<(&'static str, Vec<u8>)> {
        let rows = |n: usize, every: usize, bad: &str| -> Vec<u8> {
            let mut out = Vec::new();
            for i in 0..n {
                let row = if i % every == every - 1 { bad } else { VALID };
                out.extend_from_slice(row.as_bytes());
                out.push(b'\n');
            }
            out
        };
        let mut lone_cr = rows(40, 7, FIXABLE);
        lone_cr.splice(300..300, b"\r".iter().copied());
        let mut crlf = rows(40, 9, "{not json");
        crlf = String::from_utf8(crlf)
            .unwrap()
            .replace('\n', "\r\n")
            .into();
        let mut blank = rows(30, 5, "[1, 2]");
        blank.splice(0..0, b"\n  \n".iter().copied());
        let mut late_utf8 = rows(50, 100, "");
        late_utf8.extend_from_slice(b"{\"a\": \"\xff\"}\n");
        late_utf8.extend(rows(5, 100, ""));
        let mut bom = b"\xef\xbb\xbf".to_vec();
        bom.extend(rows(20, 4, FIXABLE));
        let mut too_long = rows(30, 6, FIXABLE);
        too_long.extend(vec![b' '; 900]);
        too_long.extend(b"\n".iter().chain(&rows(5, 100, "")));
        let mut unterminated = rows(25, 3, "{\"expected_action\": 5}");
        unterminated.pop();
        vec![
            ("valid", rows(60, 1000, "")),
            ("lone_cr", lone_cr),
            ("crlf", crlf),
            ("blank", blank),
            ("late_utf8", late_utf8),
            ("bom", bom),
            ("too_long", too_long),
            ("unterminated", unterminated),
            ("empty", Vec::new()),
            ("only_blank", b"\n \n\n".to_vec()),
        ]
    }

    fn option_sets() -> Vec<PivotOptions> {
        let plain = PivotOptions::default();
        vec![
            plain.clone(),
            PivotOptions {
                fail_fast: true,
                ..plain.clone()
            },
            PivotOptions {
                max_errors: 3,
                stats: true,
                fix: true,
                agent_ref: Some("a".into()),
                ..plain.clone()
            },
            PivotOptions {
                max_errors: 0,
                fix: true,
                ..plain
            },
        ]
    }

    fn in_ranges(data: &[u8], options: &PivotOptions, piece: u64, max: u64) -> (Report, Vec<u8>) {
        let checker = LineChecker::new(options.clone());
        let ranges = plan(RowKind::Rollout, data.len() as u64, piece);
        let mut order = InOrder::new(ReportBuilder::new("p.jsonl", options), ranges);
        let read = record_last_first(&mut order, (b"", data), max, 97, |b| checker.batch(b));
        assert_eq!(read, Ok(()), "only a file that cannot be read fails");
        order.into_job().finish()
    }

    #[test]
    fn a_pivot_file_read_in_ranges_is_the_one_reader_validation() {
        for (name, data) in cases() {
            for options in option_sets() {
                let max = 800;
                let (want, want_fixed) = {
                    let mut v = crate::pivot::PivotValidator::new("p.jsonl", options.clone())
                        .with_max_line_bytes(max);
                    for chunk in data.chunks(331) {
                        if !v.push(chunk) {
                            break;
                        }
                    }
                    v.finish()
                };
                for piece in [1, 64, 700, 1 << 20] {
                    let (got, got_fixed) = in_ranges(&data, &options, piece, max);
                    let case = format!("{name}, {options:?}, ranges of {piece}");
                    assert_eq!(got, want, "{case}");
                    assert_eq!(got_fixed, want_fixed, "{case}");
                }
            }
        }
    }

    #[test]
    fn chunks_of_any_size_make_the_whole_files_report() {
        for (name, data) in cases() {
            for options in option_sets() {
                let whole = validate_bytes("p.jsonl", &data, options.clone());
                let mut v = crate::pivot::PivotValidator::new("p.jsonl", options.clone());
                let mut fixed = Vec::new();
                for chunk in data.chunks(13) {
                    let go_on = v.push(chunk);
                    fixed.extend(v.take_fixed());
                    if !go_on {
                        break;
                    }
                }
                let (report, rest) = v.finish();
                fixed.extend(rest);
                assert_eq!(report, whole.0, "{name}");
                assert_eq!(fixed, whole.1, "{name}");
            }
        }
    }
}
