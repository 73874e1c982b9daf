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

/// The five crates of the core, top first (ARCHITECTURE.md, "Layers").
const CORE: [&str; 5] = [
    "crates/gymscope-core/src",
    "crates/gymscope-analyses/src",
    "crates/gymscope-profile/src",
    "crates/gymscope-read/src",
    "crates/gymscope-base/src",
];

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
    for (heading, srcs) in [
        ("### The core", &CORE[..]),
        ("### The faces", &["src"][..]),
        ("### Test support", &["crates/gymscope-testkit/src"][..]),
    ] {
        let listed: BTreeSet<String> = table_names(&doc, heading).into_iter().collect();
        let present: BTreeSet<String> = srcs
            .iter()
            .flat_map(|src| modules_in(&repo_root().join(src)))
            .collect();
        let src = srcs.join(", ");
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

/// Inside each crate of the core (between them, Cargo refuses an import up).
#[test]
fn no_core_module_imports_one_from_a_layer_above() {
    let doc = architecture();
    let layer_of = layers(&doc);
    let unlayered: Vec<_> = CORE
        .iter()
        .flat_map(|src| modules_in(&repo_root().join(src)))
        .filter(|m| !layer_of.contains_key(m))
        .collect();
    assert!(
        unlayered.is_empty(),
        "core modules in no layer: {unlayered:?}"
    );
    let mut upward = Vec::new();
    for src in CORE.map(|src| repo_root().join(src)) {
        for module in &modules_in(&src) {
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
    }
    assert!(
        upward.is_empty(),
        "imports from a layer above:\n{}",
        upward.join("\n")
    );
}

/// The module path of a source file below `src` (`a/b.rs` and `a/b/mod.rs` are `a::b`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        path.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        path.pop();
    }
    path
}

/// The file of the deepest module along `path` (`a::b::Item` is `a/b.rs` when that exists).
fn file_of(src: &Path, path: &[String]) -> Option<std::path::PathBuf> {
    let mut best = None;
    for k in 1..=path.len() {
        let base = path[..k].iter().fold(src.to_path_buf(), |p, s| p.join(s));
        let (flat, folder) = (base.with_extension("rs"), base.join("mod.rs"));
        if flat.is_file() {
            best = Some(flat);
        } else if folder.is_file() {
            best = Some(folder);
        } else {
            break;
        }
    }
    best
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand_use(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.to_string()];
    };
    let (prefix, inner) = (
        &tree[..open],
        &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())],
    );
    let (mut parts, mut depth, mut part) = (Vec::new(), 0, String::new());
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut part));
        } else {
            part.push(c);
        }
    }
    parts.push(part);
    parts
        .iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand_use(p).into_iter().map(|e| format!("{prefix}{e}")))
        .collect()
}

/// The paths a file's code names through `crate::`, `super::` and `self::` (its `use` trees and
/// inline paths), its test module and comments left out: a test module is a module of its own.
fn named_paths(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut paths = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        rest = &rest[i + 4..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(end) = rest.find(';') {
            paths.extend(expand_use(&rest[..end]));
        }
    }
    for root in ["crate::", "super::", "self::"] {
        let mut rest = code.as_str();
        while let Some(i) = rest.find(root) {
            let before = rest[..i].chars().last();
            let tail = &rest[i..];
            let len = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                paths.push(tail[..len].to_string());
            }
            rest = &rest[i + root.len()..];
        }
    }
    paths
}

/// Each file's imports of other files of its crate (not of its own ancestors, which declare it).
fn import_graph(src: &Path) -> BTreeMap<std::path::PathBuf, BTreeSet<std::path::PathBuf>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph = BTreeMap::new();
    for file in files {
        let me = module_of(src, &file);
        let mut edges = BTreeSet::new();
        for path in named_paths(&std::fs::read_to_string(&file).unwrap()) {
            let mut segs: Vec<String> = path
                .split(" as ")
                .next()
                .unwrap_or("")
                .split("::")
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let mut base = match segs.first().map(String::as_str) {
                Some("crate") => Vec::new(),
                Some("super" | "self") => me.clone(),
                _ => continue,
            };
            if segs[0] == "crate" {
                segs.remove(0);
            }
            while let Some(s) = segs.first().filter(|s| *s == "super" || *s == "self") {
                if s == "super" {
                    base.pop();
                }
                segs.remove(0);
            }
            base.extend(segs);
            if let Some(target) = file_of(src, &base).filter(|t| *t != file) {
                let theirs = module_of(src, &target);
                if !me.starts_with(&theirs) {
                    edges.insert(target);
                }
            }
        }
        graph.insert(file, edges);
    }
    graph
}

/// The sets of files that import each other, around a loop (Tarjan's strongly connected
/// components of more than one file).
fn import_cycles(src: &Path) -> Vec<Vec<String>> {
    let graph = import_graph(src);
    let nodes: Vec<&std::path::PathBuf> = graph.keys().collect();
    let index_of: BTreeMap<&std::path::PathBuf, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            graph[*n]
                .iter()
                .filter_map(|t| index_of.get(t).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut cycles) = (Vec::new(), 0, Vec::new());
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // Iterative Tarjan: (node, next successor to look at).
        let mut work = vec![(root, 0)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = succ[v].get(*i) {
                *i += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    component.push(nodes[w].strip_prefix(src).unwrap().display().to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    cycles.push(component);
                }
            }
        }
    }
    cycles
}

#[test]
fn no_two_files_import_each_other() {
    for src in CORE.into_iter().chain([
        "src",
        "crates/gymscope-py/src",
        "crates/gymscope-testkit/src",
    ]) {
        let cycles = import_cycles(&repo_root().join(src));
        assert!(cycles.is_empty(), "import cycles in {src}: {cycles:?}");
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "mod x;\nmod y;\n").unwrap();
    std::fs::write(src.join("a/x.rs"), "use super::y::Y;\npub struct X;\n").unwrap();
    std::fs::write(
        src.join("a/y.rs"),
        "pub struct Y;\nfn f() { let _ = crate::b::{B, c}; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("b.rs"),
        "use crate::a::{x::X, self};\npub struct B;\n#[cfg(test)]\nmod tests { use crate::a::y::Y; }\n",
    )
    .unwrap();
    // x → y → b → x is a loop; b's test module is not counted.
    assert_eq!(
        import_cycles(src),
        vec![vec![
            "a/x.rs".to_string(),
            "a/y.rs".to_string(),
            "b.rs".to_string()
        ]]
    );
}

/// Every module of the app, at any depth, is named in ARCHITECTURE.md's table of `src/web`.
#[test]
fn every_module_of_the_app_is_named() {
    let doc = architecture();
    let start = doc.find("### The app: `src/web`").expect("the app's table");
    let end = doc[start..]
        .find("\n### ")
        .map_or(doc.len(), |e| start + e + 1);
    let section = &doc[start..end];
    let mut files = Vec::new();
    rust_files(&repo_root().join("src/web"), &mut files);
    let mut missing = BTreeSet::new();
    for file in files {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let name = if stem == "mod" {
            file.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        } else {
            stem
        };
        if name != "web" && !section.contains(&format!("`{name}`")) {
            missing.insert(name);
        }
    }
    assert!(
        missing.is_empty(),
        "app modules not in ARCHITECTURE.md: {missing:?}"
    );
}
