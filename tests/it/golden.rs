//! Golden outputs: every output file of thirteen configs (`tests/golden/`), hashed, against the
//! hashes recorded in `tests/golden/<config>.hashes`.
//!
//! They pin the model's behaviour as a whole, bit for bit, across changes meant to keep it
//! (refactors, optimisations, the parallel kernel: a run on any number of threads, partitions
//! or processes must give these same bytes). A change meant to alter the model re-baselines
//! them (`scripts/golden.sh`) and says so in its commit; `tests/golden/README.md` tells what
//! each config covers and which outputs are hashed how.
//!
//! Hashed: every file a run writes, byte for byte, except three kinds. Figures (`*.svg`) are
//! drawn from the tables beside them, which are hashed. `complete` markers and the experiment's
//! own `manifest.json` hold only provenance (config hashes, versions, paths). Run manifests and
//! `summary.json` are hashed with their provenance and free text removed ([`DROPPED`]): what
//! remains is the run's outcome (end reason, events, packet-hops, end time, conservation, pcap
//! and time-series counts) and the figures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// JSON keys removed before hashing: provenance (which binary, which checkout, which command,
/// which paths, how long it took), the config as written and resolved (a new key with its
/// default changes them, not the run), and prose (definitions, scheme notes).
const DROPPED: &[&str] = &[
    "dcsim_version",
    "git_revision",
    "git_dirty",
    "source_hash",
    "command_line",
    "config_hash",
    "inputs",
    "wall_seconds",
    "definitions",
    "config",
    "identity",
    "notes",
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in DROPPED {
                m.remove(*k);
            }
            m.values_mut().for_each(strip);
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

/// The bytes of `path` as hashed, or None for a file left out (see the module doc). `rel` is
/// the path under the output directory, `<experiment>/...`.
fn hashed_bytes(path: &Path, rel: &str) -> Option<Vec<u8>> {
    let depth = rel.matches('/').count();
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if name.ends_with(".svg") || name == "complete" || (depth == 1 && name == "manifest.json") {
        return None;
    }
    let bytes = std::fs::read(path).unwrap();
    if name.ends_with(".json") {
        let mut v: Value =
            serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{rel} is not JSON: {e}"));
        strip(&mut v);
        // serde_json's maps are ordered by key: the text is canonical.
        return Some(serde_json::to_vec(&v).unwrap());
    }
    Some(bytes)
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(root, &p, out);
            continue;
        }
        let rel = p
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if let Some(b) = hashed_bytes(&p, &rel) {
            let line = format!("{:016x}  {:>10}", dcsim::fileid::fnv1a(&b), b.len());
            out.insert(rel, line);
        }
    }
}

/// Runs golden config `name` (`default`: the embedded default experiment) with `extra`
/// arguments and returns `path -> "hash  bytes"` for every hashed output.
pub fn golden_outputs(name: &str, extra: &[&str]) -> BTreeMap<String, String> {
    golden_outputs_via(&[], name, extra)
}

/// [`golden_outputs`] of dcsim started by `launcher` (e.g. `mpirun -n 2`; empty: directly).
pub fn golden_outputs_via(
    launcher: &[&str],
    name: &str,
    extra: &[&str],
) -> BTreeMap<String, String> {
    let tmp = run_golden_via(launcher, name, extra);
    let mut files = BTreeMap::new();
    walk(tmp.path(), tmp.path(), &mut files);
    assert!(!files.is_empty(), "golden config {name} wrote nothing");
    files
}

/// Runs golden config `name` with `extra` arguments into a temporary output directory.
fn run_golden_via(launcher: &[&str], name: &str, extra: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_dcsim");
    let mut cmd = match launcher.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    cmd.arg("run");
    if name != "default" {
        cmd.arg(golden_dir().join(format!("{name}.toml")));
    }
    let out = cmd
        .args(extra)
        .arg("--output-dir")
        .arg(tmp.path())
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "golden config {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmp
}

fn fixture_path(name: &str) -> PathBuf {
    golden_dir().join(format!("{name}.hashes"))
}

fn render(name: &str, files: &BTreeMap<String, String>) -> String {
    let mut s = format!(
        "# Golden outputs of {}: FNV-1a 64 of each output, its size in bytes, its path.\n\
         # Written by scripts/golden.sh; see tests/golden/README.md.\n",
        if name == "default" {
            "the embedded default experiment".to_string()
        } else {
            format!("tests/golden/{name}.toml")
        }
    );
    for (rel, line) in files {
        s.push_str(&format!("{line}  {rel}\n"));
    }
    s
}

fn parse(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split_whitespace();
            let (h, n, p) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
            (p.to_string(), format!("{h}  {n:>10}"))
        })
        .collect()
}

/// Checks `got` against the fixture of `name`, or rewrites the fixture when `DCSIM_GOLDEN` is
/// `rebaseline`. `how` names the run in the failure message (e.g. " at -t 2").
pub fn check_golden(name: &str, how: &str, got: &BTreeMap<String, String>) {
    if std::env::var("DCSIM_GOLDEN").as_deref() == Ok("rebaseline") {
        std::fs::write(fixture_path(name), render(name, got)).unwrap();
        return;
    }
    let text = std::fs::read_to_string(fixture_path(name))
        .unwrap_or_else(|e| panic!("{}: {e}", fixture_path(name).display()));
    let want = parse(&text);
    let mut problems = Vec::new();
    for (rel, w) in &want {
        match got.get(rel) {
            None => problems.push(format!("missing: {rel}")),
            Some(g) if g != w => problems.push(format!("differs: {rel} (was {w}, now {g})")),
            _ => {}
        }
    }
    for rel in got.keys().filter(|r| !want.contains_key(*r)) {
        problems.push(format!("new file: {rel}"));
    }
    assert!(
        problems.is_empty(),
        "golden config {name}{how}: {} of {} outputs changed:\n  {}\n\
         A change meant to keep the model's behaviour must keep these bytes. A model change \
         re-baselines with scripts/golden.sh and says so in its commit.",
        problems.len(),
        want.len(),
        problems.join("\n  ")
    );
}

macro_rules! golden {
    ($($test:ident: $name:literal;)*) => {
        $(
            #[test]
            fn $test() {
                check_golden($name, "", &golden_outputs($name, &[]));
            }
        )*
        /// Every golden config, `default` first.
        pub const GOLDEN: &[&str] = &[$($name),*];

        /// Every config in tests/golden/ has its test (and nothing else is there).
        #[test]
        fn every_golden_config_is_tested() {
            let listed = GOLDEN;
            let mut found: Vec<String> = std::fs::read_dir(golden_dir())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter_map(|f| f.strip_suffix(".toml").map(str::to_string))
                .filter(|f| f != "fabric") // the failures config's topology file
                .collect();
            found.push("default".to_string());
            found.sort();
            let mut listed: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
            listed.sort();
            assert_eq!(found, listed);
            if std::env::var("DCSIM_GOLDEN").as_deref() == Ok("rebaseline") {
                return; // the fixtures are being written beside this test
            }
            for name in &listed {
                assert!(fixture_path(name).exists(), "no fixture for golden config {name}");
            }
        }
    };
}

golden! {
    golden_default: "default";
    golden_fat_tree: "fat_tree";
    golden_rdma_pfc: "rdma_pfc";
    golden_gpmp: "gpmp";
    golden_partition_aggregate: "partition_aggregate";
    golden_end_when: "end_when";
    golden_pcap: "pcap";
    golden_timeseries: "timeseries";
    golden_failures: "failures";
    golden_hpcc_file: "hpcc_file";
    golden_incast_ties: "incast_ties";
    golden_collective: "collective";
    golden_rail: "rail";
}

/// The hashing itself: provenance keys are removed at any depth, outcome keys kept, figures
/// and markers left out, so that a rebuilt binary, another output path or a slower machine
/// cannot change a golden hash and a changed outcome must.
#[test]
fn golden_hashing_drops_provenance_only() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("exp/A-s1");
    std::fs::create_dir_all(&run).unwrap();
    let m = |wall: f64, events: u64, path: &str| {
        format!(
            "{{\"wall_seconds\": {wall}, \"events\": {events}, \"command_line\": [\"{path}\"], \
             \"scheme\": {{\"name\": \"A\", \"notes\": \"{path}\"}}}}"
        )
    };
    let hash = |text: &str| {
        std::fs::write(run.join("manifest.json"), text).unwrap();
        hashed_bytes(&run.join("manifest.json"), "exp/A-s1/manifest.json").unwrap()
    };
    assert_eq!(hash(&m(1.0, 5, "/a")), hash(&m(2.5, 5, "/b")));
    assert_ne!(hash(&m(1.0, 5, "/a")), hash(&m(1.0, 6, "/a")));
    assert_eq!(
        hash(&m(1.0, 5, "/a")),
        br#"{"events":5,"scheme":{"name":"A"}}"#.to_vec()
    );
    std::fs::write(run.join("complete"), "x").unwrap();
    assert!(hashed_bytes(&run.join("complete"), "exp/A-s1/complete").is_none());
    assert!(hashed_bytes(&run.join("manifest.json"), "exp/manifest.json").is_none());
    std::fs::write(run.join("fct.csv"), "a,b\n1,2\n").unwrap();
    assert_eq!(
        hashed_bytes(&run.join("fct.csv"), "exp/A-s1/fct.csv").unwrap(),
        b"a,b\n1,2\n"
    );
}
