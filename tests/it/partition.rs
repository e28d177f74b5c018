//! The windowed kernel (`[run] partitions`, `sim::window`): a run split into partitions that
//! advance in lockstep windows gives every output byte of the sequential kernel with keyed
//! ties, for any number of partitions and any map of nodes to partitions.
//!
//! Compared: every output the golden tests hash (`golden::golden_outputs`: tables, FCTs,
//! per-port and per-switch records, summaries, and the manifests' outcome: end reason,
//! events, packet-hops, end time, conservation), for the golden configs the windowed kernel
//! runs so far (no delay attribution, packet traces or time series yet).

use crate::golden::golden_outputs;

/// Golden configs a partitioned run supports today, with what they need set to run
/// partitioned (attribution off, and its figure with it).
const SUPPORTED: &[(&str, &[&str])] = &[
    ("fat_tree", &[]),
    ("partition_aggregate", &[]),
    ("end_when", &[]),
    ("failures", &[]),
    ("rdma_pfc", &[]),
    ("hpcc_file", &[]),
    ("incast_ties", &[]),
    ("gpmp", &["--set", "plot=[]"]),
];

/// Partition counts and maps: round robin over the switches (seed 0) and seeded random.
const SPLITS: &[(u32, u64)] = &[(2, 0), (3, 7), (5, 0), (8, 11)];

#[test]
fn partitioned_runs_give_the_sequential_bytes() {
    let keyed = [
        "--set",
        "run.ties=keyed",
        "--set",
        "metrics.attribution=false",
    ];
    for (name, extra) in SUPPORTED {
        let mut base = keyed.to_vec();
        base.extend(extra.iter());
        let seq = golden_outputs(name, &base);
        for &(p, seed) in SPLITS {
            let (p, seed) = (
                format!("run.partitions={p}"),
                format!("run.partition_seed={seed}"),
            );
            let mut args = base.clone();
            args.extend(["--set", &p, "--set", &seed]);
            let par = golden_outputs(name, &args);
            assert_eq!(
                seq.keys().collect::<Vec<_>>(),
                par.keys().collect::<Vec<_>>(),
                "{name}, {p}, {seed}: different files"
            );
            for (file, hash) in &seq {
                assert_eq!(hash, &par[file], "{name}, {p}, {seed}: {file} differs");
            }
        }
    }
}

/// What a partitioned run cannot do yet is refused with the reason, naming the key.
#[test]
fn partitioned_runs_refuse_what_they_do_not_support() {
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args([
            "run",
            "--quiet",
            "--set",
            "run.partitions=2",
            "--output-dir",
        ])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run.partitions") && err.contains("keyed"),
        "{err}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args([
            "run",
            "--quiet",
            "--set",
            "run.partitions=2",
            "--set",
            "run.ties=keyed",
        ])
        .arg("--output-dir")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run.partitions") && err.contains("attribution"),
        "{err}"
    );
}
