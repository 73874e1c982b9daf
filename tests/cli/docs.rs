//! Every `gymscope` command line in README.md and `docs/*.md` parses with the current CLI, through
//! the same Hydra-spelling normalisation the binary applies, so the documented examples never rot.
//! A line that is illustrative on purpose (`...`, `…`, a `<PLACEHOLDER>`) carries the marker
//! `# illustrative` or contains such a placeholder, and is skipped.

use clap::Parser;
use gymscope::cli::{normalize_legacy_args, Cli};

/// The documentation files: README.md and every page under `docs/`.
fn documents() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md")];
    if let Ok(dir) = std::fs::read_dir(root.join("docs")) {
        let mut pages: Vec<_> = dir
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        pages.sort();
        docs.extend(pages);
    }
    docs
}

/// The command lines of a Markdown text's code blocks that start with `gymscope `, continuation
/// lines joined, each with its 1-based line number.
fn command_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_code = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        let line = line.trim().trim_start_matches("$ ");
        if let Some((at, mut joined)) = pending.take() {
            joined.push(' ');
            joined.push_str(line.trim_end_matches('\\').trim());
            if line.ends_with('\\') {
                pending = Some((at, joined));
            } else {
                out.push((at, joined));
            }
            continue;
        }
        if line.starts_with("gymscope ") {
            let start = line.trim_end_matches('\\').trim().to_string();
            if line.ends_with('\\') {
                pending = Some((i + 1, start));
            } else {
                out.push((i + 1, start));
            }
        }
    }
    out
}

/// `$NAME` as a shell would give it when set to `0` (`--shard $SLURM_ARRAY_TASK_ID/8`).
fn expand_variables(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$'
            && chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_')
        {
            while chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '_')
            {
                chars.next();
            }
            out.push('0');
        } else {
            out.push(c);
        }
    }
    out
}

fn illustrative(line: &str) -> bool {
    line.contains("# illustrative")
        || line.contains("...")
        || line.contains('…')
        || line.contains('<')
}

#[test]
fn every_documented_command_line_parses() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (at, line) in command_lines(&text) {
            if illustrative(&line) {
                continue;
            }
            // A trailing comment, then the words as a shell splits them (`$VAR` left as a word).
            let command = line.split(" # ").next().unwrap();
            let command = command.split(" | ").next().unwrap();
            let command = command.split(" && ").next().unwrap();
            let Some(words) = shlex::split(&expand_variables(command)) else {
                failures.push(format!("{}:{at}: unbalanced quotes: {line}", doc.display()));
                continue;
            };
            let parsed = normalize_legacy_args(words).and_then(|args| {
                Cli::try_parse_from(args)
                    .map(drop)
                    .map_err(|e| e.to_string())
            });
            if let Err(e) = parsed {
                failures.push(format!(
                    "{}:{at}: {line}\n    {}",
                    doc.display(),
                    e.lines().next().unwrap_or("")
                ));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "documented command lines that do not parse:\n{}",
        failures.join("\n")
    );
    assert!(
        checked >= 20,
        "only {checked} command lines found: is the extraction broken?"
    );
}
