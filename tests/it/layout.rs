//! The import rules of `src/` (docs/architecture.md, "Layers"), checked over every path that
//! names `crate::<module>` in non-test code, until a crate split lets the compiler check them:
//!
//! - every top-level module belongs to a layer (a new module must be placed);
//! - core imports nothing of the crate;
//! - a module imports only its own layer and the layers below it; `lower` and output share
//!   a rank and never import each other (output never imports run, the model never imports
//!   config, scheme, lower, run or output);
//! - no import circle between top-level modules;
//! - `sim` sees only the seam of `transport` (`transport/mod.rs`), never a protocol's module;
//! - no file in `src/` is longer than 1,000 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, with their rank and modules.
const LAYERS: &[(&str, u32, &[&str])] = &[
    ("core", 0, &["units", "ids", "fileid", "source_hash", "io"]),
    (
        "model",
        1,
        &[
            "engine",
            "topology",
            "net",
            "workload",
            "transport",
            "sim",
            "pcap",
            "probe",
        ],
    ),
    ("analysis", 2, &["metrics"]),
    ("schema", 3, &["config", "scheme", "sweep", "columns"]),
    ("lower", 4, &["lower"]),
    ("output", 4, &["report", "plot", "provenance"]),
    ("run", 5, &["experiment", "budget", "work"]),
    ("app", 6, &["cli", "interrupt"]),
];

fn layer_of(module: &str) -> Option<(&'static str, u32)> {
    LAYERS
        .iter()
        .find(|(_, _, ms)| ms.contains(&module))
        .map(|(n, r, _)| (*n, *r))
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's code without its unit tests and comments.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b...` path in `code`, as its segments (a `use crate::{a, b::c}` group
/// gives one path per member).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `dcsim_crate::`
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = matching_brace(group);
            for member in split_top(&group[..end]) {
                out.push(segments(member.trim()));
            }
        } else {
            out.push(segments(rest));
        }
    }
    out
}

fn segments(s: &str) -> Vec<String> {
    let mut segs = Vec::new();
    let mut rest = s;
    loop {
        let n = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if n == 0 {
            break;
        }
        segs.push(rest[..n].to_string());
        match rest[n..].strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    segs
}

fn matching_brace(s: &str) -> usize {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().filter(|m| !m.trim().is_empty()).collect()
}

struct Src {
    /// File (relative to `src/`) -> its top-level module and code.
    files: Vec<(String, String, String)>,
}

fn src() -> Src {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rs_files(&root, &mut paths);
    paths.sort();
    let mut files = Vec::new();
    for p in paths {
        let rel = p
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "main.rs" || rel == "lib.rs" || rel.ends_with("/tests.rs") {
            continue;
        }
        let top = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        files.push((rel, top, code(&std::fs::read_to_string(&p).unwrap())));
    }
    Src { files }
}

/// Top-level module -> the modules it names, each with a file that names it.
fn deps(s: &Src) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut d: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (rel, top, code) in &s.files {
        d.entry(top.clone()).or_default();
        for path in crate_paths(code) {
            if let Some(m) = path.first().filter(|m| *m != top && *m != "self") {
                d.get_mut(top)
                    .unwrap()
                    .entry(m.clone())
                    .or_insert_with(|| rel.clone());
            }
        }
    }
    d
}

#[test]
fn the_path_scanner_reads_groups_and_skips_comments() {
    let c = code(
        "use crate::a::B;\n// crate::z::Y\nuse crate::{b::{C, D}, e};\nlet x = crate::f::g(1);\n#[cfg(test)]\nmod tests { use crate::t; }",
    );
    let tops: Vec<String> = crate_paths(&c).into_iter().map(|p| p.join("::")).collect();
    assert_eq!(tops, ["a::B", "b", "e", "f::g"]);
}

#[test]
fn every_module_has_a_layer_and_imports_only_downwards() {
    let s = src();
    let d = deps(&s);
    let mut bad = Vec::new();
    for (m, targets) in &d {
        let Some((layer, rank)) = layer_of(m) else {
            bad.push(format!(
                "src/{m}: in no layer (place it in tests/it/layout.rs's LAYERS)"
            ));
            continue;
        };
        for (t, file) in targets {
            let Some((t_layer, t_rank)) = layer_of(t) else {
                continue; // reported as its own module
            };
            let ok = if layer == "core" {
                false
            } else if t_layer == layer {
                true
            } else {
                t_rank < rank
            };
            if !ok {
                bad.push(format!(
                    "src/{file}: {m} ({layer}) imports {t} ({t_layer}), which is not below it"
                ));
            }
        }
    }
    assert!(bad.is_empty(), "import rules broken:\n{}", bad.join("\n"));
}

#[test]
fn no_import_circle_between_modules() {
    let d = deps(&src());
    // Depth-first search for a back edge, reporting the circle it closes.
    fn visit(
        m: &str,
        d: &BTreeMap<String, BTreeMap<String, String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for t in d.get(m).into_iter().flat_map(|t| t.keys()) {
            if !d.contains_key(t) {
                continue;
            }
            match state.get(t.as_str()).copied().unwrap_or(0) {
                1 => {
                    let i = stack.iter().position(|x| x == t).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(t.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(t, d, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in d.keys() {
        if state.get(m.as_str()).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(m, &d, &mut state, &mut stack) {
                panic!("import circle: {}", c.join(" -> "));
            }
        }
    }
}

#[test]
fn sim_sees_only_the_transport_seam() {
    let s = src();
    let protocols: BTreeSet<&str> = ["cc", "rdma", "tcp", "udp"].into();
    let mut bad = Vec::new();
    for (rel, top, code) in &s.files {
        if top != "sim" {
            continue;
        }
        for path in crate_paths(code) {
            if path.first().is_some_and(|m| m == "transport")
                && path.get(1).is_some_and(|p| protocols.contains(p.as_str()))
            {
                bad.push(format!("src/{rel}: crate::{}", path.join("::")));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "sim names a protocol's module instead of the seam (transport/mod.rs):\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rs_files(&root, &mut paths);
    let long: Vec<String> = paths
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            (n > 1000).then(|| format!("{}: {n} lines", p.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over 1,000 lines:\n{}",
        long.join("\n")
    );
}
