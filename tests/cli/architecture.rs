//! ARCHITECTURE.md is the map of the code: every module of every crate has its row (and no row
//! names a module that is gone), and no core module imports one from a layer above its own.

use crate::common::repo_root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn architecture() -> String {
    std::fs::read_to_string(repo_root().join("ARCHITECTURE.md")).unwrap()
}

/// The `` `name` `` in the first cell of each row of the table under `heading`.
fn table_names(doc: &str, heading: &str) -> Vec<String> {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no {heading:?}"));
    doc[start..]
        .lines()
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .filter_map(|l| {
            let cell = l.split('|').nth(1)?.trim();
            Some(cell.trim_matches('`').to_string())
        })
        .collect()
}

/// The modules a crate's `src/` declares at its top: `foo.rs` and `foo/` (less the roots).
fn modules_in(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !matches!(n.as_str(), "lib.rs" | "main.rs" | "bin"))
        .map(|n| n.trim_end_matches(".rs").to_string())
        .collect()
}

#[test]
fn every_module_has_its_row_and_every_row_its_module() {
    let doc = architecture();
    for (heading, src) in [
        ("### The core", "crates/gymscope-core/src"),
        ("### The faces", "src"),
        ("### Test support", "crates/gymscope-testkit/src"),
    ] {
        let listed: BTreeSet<String> = table_names(&doc, heading).into_iter().collect();
        let present = modules_in(&repo_root().join(src));
        let missing: Vec<_> = present.difference(&listed).collect();
        let gone: Vec<_> = listed.difference(&present).collect();
        assert!(
            missing.is_empty() && gone.is_empty(),
            "ARCHITECTURE.md {heading:?}: modules of {src} without a row {missing:?}, rows without a module {gone:?}"
        );
    }
}

/// Each core module's layer, from the table under "## Layers" (top row = highest layer).
fn layers(doc: &str) -> BTreeMap<String, usize> {
    let start = doc.find("| layer | modules |").expect("the layer table");
    let rows: Vec<&str> = doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let mut layer_of = BTreeMap::new();
    for (k, row) in rows.iter().enumerate() {
        let height = rows.len() - k;
        for m in row.split('|').nth(2).unwrap().split(',') {
            let m = m.trim().to_string();
            assert!(
                layer_of.insert(m.clone(), height).is_none(),
                "{m} is in two layers"
            );
        }
    }
    layer_of
}

fn rust_files(path: &Path, out: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            rust_files(&e.unwrap().path(), out);
        }
    } else if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// `X` of every `crate::X` outside comments.
fn imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            found.insert(name);
        }
    }
    found
}

#[test]
fn no_core_module_imports_one_from_a_layer_above() {
    let doc = architecture();
    let layer_of = layers(&doc);
    let src = repo_root().join("crates/gymscope-core/src");
    let present = modules_in(&src);
    let unlayered: Vec<_> = present
        .iter()
        .filter(|m| !layer_of.contains_key(*m))
        .collect();
    assert!(
        unlayered.is_empty(),
        "core modules in no layer: {unlayered:?}"
    );
    let mut upward = Vec::new();
    for module in &present {
        let mut files = Vec::new();
        rust_files(&src.join(module), &mut files);
        rust_files(&src.join(format!("{module}.rs")), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for used in imports(&text) {
                if layer_of.get(&used) > layer_of.get(module) {
                    let rel = file.strip_prefix(&src).unwrap().display().to_string();
                    upward.push(format!("{rel} ({module}) uses {used}"));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a layer above:\n{}",
        upward.join("\n")
    );
}
