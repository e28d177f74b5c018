//! Every config snippet in the documentation is a tested artefact: the README and every
//! Markdown file under `docs/` are scanned, and each snippet must pass `dcsim validate`'s
//! checks (parse, then validate):
//!
//! * fenced ```` ```toml ```` blocks, as whole experiment files;
//! * inline code of the form `` `[section] key = value` `` (unless it elides with `...`);
//! * the rows of the configuration tables: a row's default (when written as a value) and each
//!   allowed value it enumerates (`` `a`, `b`, `c` ``) under its key, the key's section taken
//!   from a dotted key, else from the table's heading (`` ### `[switch]` ``) or lead-in line
//!   (`` `[switch.buffer]`: ``).
//!
//! And the tables agree with the code: a documented default is the default, and a documented
//! range is the range validation enforces (each closed end passes, a value just outside each
//! end fails naming the key). Together with `Default` and `validate` this makes the tables
//! the one description of a parameter that the code is checked against.

use dcsim::config::Config;
use std::path::{Path, PathBuf};

fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut v = vec![PathBuf::from("README.md")];
    walk(Path::new("docs"), &mut v);
    v
}

/// A snippet and where it came from.
struct Snippet {
    file: String,
    line: usize,
    toml: String,
    /// A configuration table's default for its key (else an example or an allowed value).
    is_default: bool,
    /// ... in the table of RDMA transports' defaults.
    rdma: bool,
    /// The config a table's key is read in (`[topology]\nkind = "rail"\n` for a kind's own
    /// table): its default is that config's.
    within: String,
}

fn check(s: &Snippet, base: &Path) -> Result<(), String> {
    let c = Config::parse(&s.toml, &s.file).map_err(|e| e.to_string())?;
    c.validate(&s.file, base).map_err(|e| e.to_string())
}

/// The backticked spans of a table cell.
fn spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// `[a.b] key = value` with the section.
fn with_section(section: Option<&str>, key: &str, value: &str) -> String {
    match section {
        Some(s) => format!("[{s}]\n{key} = {value}\n"),
        None => format!("{key} = {value}\n"),
    }
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Config sections named in headings and lead-ins: `[x]`, `[x.y]`.
fn section_names(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|s| s.strip_prefix('[')?.strip_suffix(']'))
        .filter(|s| !s.starts_with('['))
        .collect()
}

/// A row of a configuration table (`| `key` | ... |`), with the section its heading or
/// lead-in gives.
struct Row {
    /// 1-based line number.
    line: usize,
    /// The section of undotted keys.
    ctx: Option<String>,
    /// In the table of RDMA transports' defaults.
    rdma: bool,
    /// The table's third column is the valid range (`| key | default | range | meaning |`).
    ranged: bool,
    /// The kind of the section the table describes (a lead-in `` `kind = "rail"`: ``).
    kind: Option<String>,
    cells: Vec<String>,
}

impl Row {
    /// The config that sets `key` (in `section`) to `value`, with the table's kind.
    fn toml(&self, section: Option<&str>, key: &str, value: &str) -> String {
        match (&self.kind, section) {
            (Some(kind), Some(s)) if self.ctx.as_deref() == Some(s) => {
                format!("[{s}]\nkind = \"{kind}\"\n{key} = {value}\n")
            }
            _ => with_section(section, key, value),
        }
    }

    /// The config the table's keys are read in: its section with its kind, if it has one.
    fn within(&self) -> String {
        match (&self.kind, &self.ctx) {
            (Some(kind), Some(s)) => format!("[{s}]\nkind = \"{kind}\"\n"),
            _ => String::new(),
        }
    }

    /// A key's section and name: a dotted key names its own; else the table's context.
    fn place(&self, key: &str) -> Option<(Option<String>, String)> {
        if let Some((sec, k)) = key.rsplit_once('.')
            && sec.split('.').chain([k]).all(is_ident)
        {
            return Some((Some(sec.to_string()), k.to_string()));
        }
        if !is_ident(key) {
            return None;
        }
        Some((self.ctx.clone(), key.to_string()))
    }
}

fn table_rows(lines: &[&str]) -> Vec<Row> {
    let mut out = Vec::new();
    let mut ctx: Option<String> = None;
    let mut rdma = false;
    let mut ranged = false;
    let mut kind: Option<String> = None;
    for (n, l) in lines.iter().enumerate() {
        if l.starts_with('#') {
            let s = section_names(l);
            ctx = (s.len() == 1).then(|| s[0].to_string());
            kind = None;
            continue;
        }
        if let Some(k) = l.strip_prefix("`kind = \"")
            && let Some((k, _)) = k.split_once("\"`:")
        {
            kind = Some(k.to_string());
            continue;
        }
        if let Some(s) = l.strip_prefix('`')
            && let Some((sec, _)) = s.split_once("]`:")
            && let Some(sec) = sec.strip_prefix('[')
        {
            ctx = Some(sec.to_string());
            continue;
        }
        if l.starts_with("| key |") {
            rdma = l.contains("| RDMA default |");
            ranged = l.starts_with("| key | default | range |");
        }
        if !l.starts_with("| `") {
            continue;
        }
        let cells: Vec<String> = l.split('|').map(|c| c.trim().to_string()).collect();
        if cells.len() < 4 {
            continue;
        }
        out.push(Row {
            line: n + 1,
            ctx: ctx.clone(),
            rdma,
            ranged,
            kind: kind.clone(),
            cells,
        });
    }
    out
}

fn snippets(file: &Path) -> Vec<Snippet> {
    let text = std::fs::read_to_string(file).unwrap();
    let name = file.display().to_string();
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    // Fenced TOML blocks.
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start() == "```toml" {
            let start = i + 1;
            let mut j = start;
            while j < lines.len() && lines[j].trim_start() != "```" {
                j += 1;
            }
            out.push(Snippet {
                file: name.clone(),
                line: start,
                toml: lines[start..j].join("\n"),
                is_default: false,
                rdma: false,
                within: String::new(),
            });
            i = j;
        }
        i += 1;
    }
    // Inline `[section] key = value` spans (a span may wrap onto the next line).
    let mut in_fence = false;
    let mut prose = String::new();
    let mut line_of = Vec::new();
    for (n, l) in lines.iter().enumerate() {
        if l.trim_start().starts_with("```") {
            in_fence = !in_fence;
            prose.push('\n');
            line_of.push(n + 1);
            continue;
        }
        if !in_fence {
            for _ in 0..l.len() + 1 {
                line_of.push(n + 1);
            }
            prose.push_str(l);
            prose.push('\n');
        }
    }
    let mut pos = 0;
    for (k, part) in prose.split('`').enumerate() {
        let at = pos;
        pos += part.len() + 1;
        if k % 2 == 0 {
            continue;
        }
        let span = part.replace('\n', " ");
        let Some(rest) = span.strip_prefix('[') else {
            continue;
        };
        let Some((section, assign)) = rest.split_once("] ") else {
            continue;
        };
        if !assign.contains('=')
            || span.contains("...")
            || span.contains('…')
            || !section
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || c == '.')
        {
            continue;
        }
        out.push(Snippet {
            file: name.clone(),
            line: line_of.get(at).copied().unwrap_or(0),
            toml: format!("[{section}]\n{}\n", assign.trim()),
            is_default: false,
            rdma: false,
            within: String::new(),
        });
    }
    // Configuration tables.
    for row in table_rows(&lines) {
        let cells: Vec<&str> = row.cells.iter().map(String::as_str).collect();
        let keys = spans(cells[1]);
        let defaults = spans(cells[2]);
        let rdma_table = row.rdma;
        let mut push = |key: &str, value: &str, is_default: bool| {
            if let Some((sec, k)) = row.place(key) {
                out.push(Snippet {
                    file: name.clone(),
                    line: row.line,
                    toml: row.toml(sec.as_deref(), &k, value),
                    is_default,
                    rdma: rdma_table,
                    within: row.within(),
                });
            }
        };
        // Defaults written as values: one per key.
        let literal = cells[2]
            .split(", ")
            .all(|c| c.starts_with('`') && c.ends_with('`'));
        if literal && defaults.len() == keys.len() {
            for (k, v) in keys.iter().zip(&defaults) {
                push(k, v, true);
            }
        }
        // Enumerated allowed values: `a`, `b`, `c`.
        let allowed = spans(cells[3]);
        let only_list = cells[3]
            .split(", ")
            .all(|c| c.starts_with('`') && c.ends_with('`') && is_ident(&c[1..c.len() - 1]));
        if keys.len() == 1 && allowed.len() >= 2 && only_list {
            for v in allowed {
                push(keys[0], &format!("\"{v}\""), false);
            }
        }
    }
    out
}

#[test]
fn every_config_snippet_in_the_docs_validates() {
    let mut failures = Vec::new();
    let mut count = 0;
    for f in markdown_files() {
        let dir = f.parent().unwrap_or(Path::new(".")).to_path_buf();
        for s in snippets(&f) {
            count += 1;
            // A snippet headed `# docs/examples/x.toml` is that file, word for word, and its
            // paths resolve against it.
            let named = s
                .toml
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# "))
                .and_then(|l| l.split_whitespace().next())
                .filter(|p| p.ends_with(".toml"));
            let base = match named {
                Some(path) => {
                    match std::fs::read_to_string(path) {
                        Ok(text) if text.trim_end() == s.toml.trim_end() => {}
                        Ok(_) => failures.push(format!(
                            "{}:{}: the snippet names {path}, whose text differs",
                            s.file, s.line
                        )),
                        Err(e) => failures.push(format!(
                            "{}:{}: the snippet names {path}: {e}",
                            s.file, s.line
                        )),
                    }
                    Path::new(path).parent().unwrap().to_path_buf()
                }
                None => dir.clone(),
            };
            if let Err(e) = check(&s, &base) {
                failures.push(format!("{}:{}: {e}\n{}", s.file, s.line, s.toml));
            }
        }
    }
    assert!(
        count > 50,
        "only {count} snippets found: is the scanner broken?"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A documented default is the default: writing it out gives the config that leaving it out
/// gives (compared as the manifest records a config, so "97500B" and "97.5KB" agree).
#[test]
fn every_documented_default_is_the_default() {
    // RDMA transports' defaults: the config a DCQCN run gets.
    let dcqcn = dcsim::scheme::Scheme::parse("DCQCN").unwrap();
    let as_run = |text: &str, rdma: bool| -> Option<serde_json::Value> {
        let c = if rdma {
            let c = Config::parse(&format!("schemes = [\"DCQCN\"]\n{text}"), "<doc>").ok()?;
            c.for_scheme("DCQCN", &dcqcn, "<doc>").ok()?
        } else {
            Config::parse(text, "<doc>").ok()?
        };
        Some(serde_json::to_value(c).unwrap())
    };
    let base = as_run("", false).unwrap();
    let base_rdma = as_run("", true).unwrap();
    let mut wrong = Vec::new();
    let mut count = 0;
    for f in markdown_files() {
        for s in snippets(&f).into_iter().filter(|s| s.is_default) {
            let Some(v) = as_run(&s.toml, s.rdma) else {
                continue; // reported by every_config_snippet_in_the_docs_validates
            };
            count += 1;
            let within = (!s.within.is_empty()).then(|| as_run(&s.within, s.rdma).unwrap());
            let base = match (&within, s.rdma) {
                (Some(w), _) => w,
                (None, true) => &base_rdma,
                (None, false) => &base,
            };
            if &v != base {
                wrong.push(format!(
                    "{}:{}: not the default:\n{}",
                    s.file, s.line, s.toml
                ));
            }
        }
    }
    assert!(count > 60, "only {count} documented defaults found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// One end of a documented range.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    Incl(f64),
    Excl(f64),
}

/// A documented range in one of the forms the tables use: `a..=b`, `(a, b]`, `[a, b]`,
/// `(a, b)`, `[a, b)`, `> 0`; numbers, or quantities with a unit on both ends (`1us..=10s`,
/// `20B..=9000B`), held in picoseconds or bytes.
#[derive(Debug, PartialEq)]
struct DocRange {
    lo: End,
    hi: Option<End>,
    /// "" (a number), "ps" or "B"; the probes are written in it.
    unit: &'static str,
    /// `a..=b`: an integer range.
    integer: bool,
}

/// A quantity: a number, else a time, else a size.
fn quantity(s: &str) -> Option<(f64, &'static str)> {
    let s = s.trim();
    if let Ok(x) = s.parse::<f64>() {
        return Some((x, ""));
    }
    if let Ok(t) = s.parse::<dcsim::units::SimTime>() {
        return Some((t.0 as f64, "ps"));
    }
    s.parse::<dcsim::units::Bytes>()
        .ok()
        .map(|b| (b.0 as f64, "B"))
}

fn doc_range(text: &str) -> Option<DocRange> {
    let text = text.trim();
    if text == "> 0" {
        return Some(DocRange {
            lo: End::Excl(0.0),
            hi: None,
            unit: "",
            integer: false,
        });
    }
    if let Some((a, b)) = text.split_once("..=") {
        let ((a, ua), (b, ub)) = (quantity(a)?, quantity(b)?);
        return (ua == ub).then_some(DocRange {
            lo: End::Incl(a),
            hi: Some(End::Incl(b)),
            unit: ua,
            integer: ua.is_empty() && a.fract() == 0.0 && b.fract() == 0.0,
        });
    }
    let open = text.chars().next()?;
    let close = text.chars().last()?;
    let (a, b) = text.get(1..text.len() - 1)?.split_once(',')?;
    let ((a, ua), (b, ub)) = (quantity(a)?, quantity(b)?);
    let end = |c: char, x: f64| match c {
        '[' | ']' => Some(End::Incl(x)),
        '(' | ')' => Some(End::Excl(x)),
        _ => None,
    };
    (ua == ub && ua.is_empty()).then_some(())?;
    Some(DocRange {
        lo: end(open, a)?,
        hi: Some(end(close, b)?),
        unit: "",
        integer: false,
    })
}

/// A cell's ranges, one per key: `1..=1024, 1..=64` and `(0,100], (0,1], (0,1)` split at the
/// commas outside brackets.
fn cell_ranges(cell: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in cell.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cell[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(cell[start..].trim());
    out
}

/// A probe value in the range's unit.
fn probe(r: &DocRange, x: f64) -> String {
    match r.unit {
        "" if r.integer => format!("{}", x as i64),
        "" => format!("{x}"),
        u => format!("\"{}{u}\"", x as u64),
    }
}

/// The ways to write a probe value: `> 0` says no unit, so zero is also tried as a time and
/// as a size, for keys that take one.
fn probe_forms(r: &DocRange, x: f64) -> Vec<String> {
    let mut forms = vec![probe(r, x)];
    if r.unit.is_empty() && !r.integer && x == 0.0 {
        forms.extend(["\"0ps\"".to_string(), "\"0B\"".to_string()]);
    }
    forms
}

/// The values just inside each closed end and just outside each end of a range.
fn probes(r: &DocRange) -> (Vec<f64>, Vec<f64>) {
    let step = |x: f64| {
        if r.integer || !r.unit.is_empty() {
            1.0
        } else {
            (x.abs() * 1e-3).max(1e-3)
        }
    };
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    match r.lo {
        End::Incl(a) => {
            inside.push(a);
            // Below zero is a type error for unsigned keys, not a range check.
            if !(a == 0.0 && (r.integer || !r.unit.is_empty())) {
                outside.push(a - step(a));
            }
        }
        End::Excl(a) => outside.push(a),
    }
    match r.hi {
        Some(End::Incl(b)) => {
            inside.push(b);
            outside.push(b + step(b));
        }
        Some(End::Excl(b)) => outside.push(b),
        None => {}
    }
    (inside, outside)
}

/// A documented range is the validated range: for every table row whose range column is a
/// plain range, each closed end validates (or fails naming another key: a constraint between
/// keys) and each value just outside fails naming the row's key.
#[test]
fn every_documented_range_is_the_validated_range() {
    let base = Path::new(".");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for f in markdown_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for row in table_rows(&lines).into_iter().filter(|r| r.ranged) {
            let keys = spans(&row.cells[1]);
            let ranges = cell_ranges(&row.cells[3]);
            if keys.len() != ranges.len() {
                continue;
            }
            for (key, text) in keys.iter().zip(ranges) {
                let (Some((sec, k)), Some(r)) = (row.place(key), doc_range(text)) else {
                    continue;
                };
                let full = match &sec {
                    Some(s) => format!("{s}.{k}"),
                    None => k.clone(),
                };
                // The first form of the value that parses (a parse error names no key).
                let run = |x: f64| {
                    let mut tried = None;
                    for v in probe_forms(&r, x) {
                        let toml = row.toml(sec.as_deref(), &k, &v);
                        let res =
                            Config::parse(&toml, "<doc>").and_then(|c| c.validate("<doc>", base));
                        let parsed = !matches!(&res, Err(e) if e.key.is_empty());
                        tried = Some((v, res));
                        if parsed {
                            break;
                        }
                    }
                    tried.expect("one form at least")
                };
                let at = format!(
                    "{}:{}: `{full}` documented as {text}",
                    f.display(),
                    row.line
                );
                let (inside, outside) = probes(&r);
                for x in inside {
                    if let (v, Err(e)) = run(x)
                        && e.key == full
                    {
                        wrong.push(format!("{at}, but {v} is rejected: {e}"));
                    }
                }
                for x in outside {
                    match run(x) {
                        (v, Ok(())) => wrong.push(format!("{at}, but {v} validates")),
                        (v, Err(e)) if e.key != full => {
                            wrong.push(format!("{at}, but {v} fails naming another key: {e}"))
                        }
                        (_, Err(_)) => {}
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "only {checked} documented ranges found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every key of the config schema is documented: each key of the resolved config (as a TCP
/// and as an RDMA run gets it, unset options included) and each key of every section the
/// schema accepts appears in `docs/config.md` as
/// `` `key` ``, `` `section.key` ``, `key = ...` or, for a section, `` `[key]` `` (or `` `[key.<name>]` ``).
#[test]
fn every_config_key_is_documented() {
    fn leaves(path: &str, v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    leaves(&p, x, out);
                }
            }
            _ => out.push(path.to_string()),
        }
    }
    let tcp = Config::parse("", "<x>").unwrap();
    let dcqcn = dcsim::scheme::Scheme::parse("DCQCN").unwrap();
    let rdma = Config::parse("schemes = [\"DCQCN\"]", "<x>")
        .unwrap()
        .for_scheme("DCQCN", &dcqcn, "<x>")
        .unwrap();
    let mut keys = Vec::new();
    for c in [tcp, rdma] {
        leaves("", &serde_json::to_value(c).unwrap(), &mut keys);
    }
    // Sections left out of the resolved config at their defaults (as `[cubic]`) are found
    // through the schema itself: an unknown key's error lists the keys a table accepts.
    let top = accepted_keys("zz_unknown = 1");
    assert!(top.len() > 30, "top-level keys from the error: {top:?}");
    for section in &top {
        let fields = accepted_keys(&format!("[{section}]\nzz_unknown = 1"));
        if fields.is_empty() {
            keys.push(section.clone());
        }
        keys.extend(fields.iter().map(|f| format!("{section}.{f}")));
    }
    keys.sort();
    keys.dedup();
    let doc = std::fs::read_to_string("docs/config.md").unwrap();
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| {
            let name = k.rsplit('.').next().unwrap();
            let dotted = k.split_once('.').map_or(k.as_str(), |(_, rest)| rest);
            ![
                format!("`{name}`"),
                format!("`{k}`"),
                format!("`{dotted}`"),
                format!("{name} ="),
                format!("`[{k}]`"),
                format!("`[[{k}]]`"),
                format!("`[{k}."),
            ]
            .iter()
            .any(|form| doc.contains(form.as_str()))
        })
        .collect();
    assert!(keys.len() > 100, "only {} keys found", keys.len());
    assert!(
        missing.is_empty(),
        "keys not in docs/config.md: {missing:?}"
    );
}

/// The keys the config schema accepts where `toml` puts an unknown key, read from the
/// deserializer's error (unknown field `zz_unknown`, expected ..); empty when the
/// error is of another kind (an array of tables, a tagged enum).
fn accepted_keys(toml: &str) -> Vec<String> {
    let Err(e) = Config::parse(toml, "<x>") else {
        panic!("an unknown key was accepted: {toml}");
    };
    let msg = e.to_string();
    // serde's forms: "expected `a`", "expected `a` or `b`", "expected one of `a`, `b`, ..".
    let Some((_, list)) = msg.split_once("zz_unknown`, expected ") else {
        return Vec::new();
    };
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_range_scanner_reads_each_form() {
    let r = doc_range("1..=1000").unwrap();
    assert_eq!(
        (r.lo, r.hi, r.integer),
        (End::Incl(1.0), Some(End::Incl(1000.0)), true)
    );
    assert_eq!(probes(&r), (vec![1.0, 1000.0], vec![0.0, 1001.0]));
    let r = doc_range("(0, 1]").unwrap();
    assert_eq!(
        (r.lo, r.hi, r.integer),
        (End::Excl(0.0), Some(End::Incl(1.0)), false)
    );
    assert_eq!(probes(&r), (vec![1.0], vec![0.0, 1.001]));
    let r = doc_range("1us..=10s").unwrap();
    assert_eq!(
        (r.lo, r.hi, r.unit),
        (End::Incl(1e6), Some(End::Incl(1e13)), "ps")
    );
    assert_eq!(probe(&r, 999_999.0), "\"999999ps\"");
    assert_eq!(doc_range("20B..=9000B").unwrap().unit, "B");
    assert_eq!(doc_range("> 0").unwrap().hi, None);
    assert_eq!(doc_range("≥ rto_min"), None);
    assert_eq!(doc_range("power of two, 1..=1048576"), None);
    assert_eq!(
        cell_ranges("(0,100], (0,1], (0,1)"),
        ["(0,100]", "(0,1]", "(0,1)"]
    );
    assert_eq!(cell_ranges("1..=1024, 1..=64"), ["1..=1024", "1..=64"]);
}

#[test]
fn the_snippet_scanner_finds_each_kind() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("x.md");
    std::fs::write(
        &md,
        "### `[tcp]`, `[dctcp]`\n\n| key | default | range | meaning |\n|---|---|---|---|\n\
         | `tcp.rto_min` | `\"1ms\"` | | |\n| `pdtcp.policy` | `\"rd_over_ra\"` | `rd_over_ra`, `bogus` | |\n\n\
         ### `[switch]`\n\n`[switch.buffer]`:\n\n| key | default | range | meaning |\n|---|---|---|---|\n\
         | `kind` | `\"static\"` | `static`, `shared` | |\n\n\
         Set `[pdtcp] policy =\n\"tc_over_d\"` or `[sweep] axes = [...]`.\n\n\
         ```toml\nseeds = 0\n```\n",
    )
    .unwrap();
    let s = snippets(&md);
    let texts: Vec<&str> = s.iter().map(|s| s.toml.as_str()).collect();
    assert_eq!(
        texts,
        [
            "seeds = 0",
            "[pdtcp]\npolicy = \"tc_over_d\"\n",
            "[tcp]\nrto_min = \"1ms\"\n",
            "[pdtcp]\npolicy = \"rd_over_ra\"\n",
            "[pdtcp]\npolicy = \"rd_over_ra\"\n",
            "[pdtcp]\npolicy = \"bogus\"\n",
            "[switch.buffer]\nkind = \"static\"\n",
            "[switch.buffer]\nkind = \"static\"\n",
            "[switch.buffer]\nkind = \"shared\"\n",
        ]
    );
    // The bad ones fail: seeds = 0, and the unknown policy.
    let bad: Vec<usize> = s
        .iter()
        .enumerate()
        .filter(|(_, x)| check(x, dir.path()).is_err())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(bad, [0, 5]);
    assert_eq!(s[1].line, 16);
}

/// Every file of the repository a reader is handed: docs, sources, experiments, scripts.
fn repository_text_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = rd.map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" || name == "__pycache__" {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else if ["md", "rs", "toml", "py", "sh", "cff", "txt", "cm"]
                .iter()
                .any(|e| p.extension().is_some_and(|x| x == *e))
            {
                out.push(p);
            }
        }
    }
    let mut v = vec![
        PathBuf::from("README.md"),
        PathBuf::from("CHANGELOG.md"),
        PathBuf::from("Cargo.toml"),
        PathBuf::from("build.rs"),
    ];
    for d in [
        "docs",
        "src",
        "experiments",
        "scripts",
        "python",
        "tests",
        ".ci",
    ] {
        walk(Path::new(d), &mut v);
    }
    v
}

/// The anchors a Markdown renderer gives the headings of `text` (GitHub's rule: lower case,
/// punctuation dropped, spaces to hyphens, a repeated heading numbered -1, -2, ...), outside
/// code blocks.
fn heading_anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut fence = false;
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence || !l.starts_with('#') {
            continue;
        }
        let title = l.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = out
            .iter()
            .filter(|o| {
                *o == &slug
                    || o.strip_prefix(slug.as_str())
                        .and_then(|r| r.strip_prefix('-'))
                        .is_some_and(|r| r.parse::<u32>().is_ok())
            })
            .count();
        out.push(if n == 0 { slug } else { format!("{slug}-{n}") });
    }
    out
}

#[test]
fn markdown_anchors_follow_the_renderers_rule() {
    let a = heading_anchors(
        "# Top\n## `[[failures]]` and `[routing] convergence`\n```sh\n# not a heading\n```\n\
         ### Defaults per transport\n## Notes\n## Notes\n#hashtag\n",
    );
    assert_eq!(
        a,
        [
            "top",
            "failures-and-routing-convergence",
            "defaults-per-transport",
            "notes",
            "notes-1"
        ]
    );
}

#[test]
fn no_doc_or_source_points_outside_the_repository() {
    let mut bad = Vec::new();
    // Spelled in two pieces so that this file does not match itself.
    let outside = format!("../{}", "shared");
    let files = repository_text_files();
    assert!(files.len() > 100, "only {} files found", files.len());
    let root = std::fs::canonicalize(".").unwrap();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if line.contains(&outside) {
                bad.push(format!(
                    "{}:{}: names {outside}: {line}",
                    f.display(),
                    i + 1
                ));
            }
        }
        if f.extension().is_none_or(|e| e != "md") {
            continue;
        }
        // Markdown links: relative targets must exist inside the repository.
        let dir = f.parent().unwrap_or(Path::new("."));
        for (i, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("](") {
                rest = &rest[at + 2..];
                let Some(end) = rest.find(')') else { break };
                let target = &rest[..end];
                rest = &rest[end..];
                let path = target.split('#').next().unwrap_or("");
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let anchor = target.split_once('#').map(|(_, a)| a);
                let full = if path.is_empty() {
                    f.clone()
                } else {
                    dir.join(path)
                };
                match std::fs::canonicalize(&full) {
                    Ok(c) if c.starts_with(&root) => {
                        if let Some(a) = anchor
                            && c.extension().is_some_and(|e| e == "md")
                        {
                            let text = std::fs::read_to_string(&c).unwrap_or_default();
                            let have = heading_anchors(&text);
                            if !have.iter().any(|h| h == a) {
                                bad.push(format!(
                                    "{}:{}: link {target}: {} has no heading #{a}",
                                    f.display(),
                                    i + 1,
                                    c.display()
                                ));
                            }
                        }
                    }
                    Ok(c) => bad.push(format!(
                        "{}:{}: link {target} leaves the repository ({})",
                        f.display(),
                        i + 1,
                        c.display()
                    )),
                    Err(_) => bad.push(format!(
                        "{}:{}: link {target} names no file of the repository",
                        f.display(),
                        i + 1
                    )),
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The status cells (third column) of the `## Coverage` table of a reproduction document.
fn coverage_statuses(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_section = false;
    for (i, line) in md.lines().enumerate() {
        if line.starts_with("## ") {
            in_section = line == "## Coverage";
            continue;
        }
        if !in_section || !line.starts_with('|') || line.starts_with("|---") {
            continue;
        }
        // Cells are split on '|' outside inline code (statuses quote `a | b` options).
        let mut cells = Vec::new();
        let (mut cur, mut code) = (String::new(), false);
        for ch in line.chars() {
            match ch {
                '`' => {
                    code = !code;
                    cur.push(ch);
                }
                '|' if !code => cells.push(std::mem::take(&mut cur)),
                _ => cur.push(ch),
            }
        }
        if cells.len() >= 4 && cells[1].trim() != "paper" {
            out.push((i + 1, cells[3].trim().to_string()));
        }
    }
    out
}

#[test]
fn every_reproduction_status_is_one_of_four() {
    // A coverage table states, for every claim, one of: reproduced (same setup, within a
    // stated tolerance), direction reproduced (reconstructed setup, named), diverges (with its
    // measured cause), not modelled (with why); nothing vaguer.
    const LABELS: [&str; 4] = [
        "**reproduced**",
        "**direction reproduced**",
        "**diverges**",
        "**not modelled",
    ];
    const VAGUE: [&str; 5] = [
        "not reproduced",
        "not reproducible",
        "as stated |",
        "nothing to compare",
        "reproduced, stronger",
    ];
    for doc in ["docs/reproduction/gpmp.md", "docs/reproduction/pdtcp.md"] {
        let md = std::fs::read_to_string(doc).unwrap();
        let rows = coverage_statuses(&md);
        assert!(rows.len() >= 10, "{doc}: coverage table not found");
        for (line, status) in rows {
            assert!(
                LABELS.iter().any(|l| status.contains(l)),
                "{doc}:{line}: status names none of the four labels: {status}"
            );
            for v in VAGUE {
                assert!(
                    !status.contains(v),
                    "{doc}:{line}: vague status `{v}`: {status}"
                );
            }
        }
    }
}

#[test]
fn the_coverage_scanner_reads_cells() {
    let md = "## Coverage\n\n| paper | exp | status |\n|---|---|---|\n\
              | a | `x \\| y` | **diverges**: z |\n\n## Next\n| b | c | d |\n";
    assert_eq!(
        coverage_statuses(md),
        vec![(5, "**diverges**: z".to_string())]
    );
}
