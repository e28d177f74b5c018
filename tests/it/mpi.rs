//! One run on several processes (MPI ranks, `--features mpi`): the golden configs' outputs,
//! byte for byte, on 1, 2 and 3 ranks of 2 threads each (oversubscribed on CI's two cores),
//! launched by Open MPI's `mpirun` as a user would.
//!
//! Built only with the feature (`.ci/mpi-e2e.sh` runs `cargo test --features mpi --test it
//! mpi` with Debian's Open MPI installed). Not covered: the time series and failures, which a
//! run on several processes refuses with an error (checked here).

use crate::golden::{check_golden, golden_outputs_via};
use std::process::Command;

/// The golden configs a run on several processes takes (all but the time series and
/// failures).
const ON_MPI: &[&str] = &[
    "default",
    "fat_tree",
    "rdma_pfc",
    "gpmp",
    "partition_aggregate",
    "end_when",
    "pcap",
    "hpcc_file",
    "incast_ties",
];

fn mpirun(n: usize) -> Vec<String> {
    [
        "mpirun",
        "--allow-run-as-root",
        "--oversubscribe",
        "-n",
        &n.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

fn same_bytes_on(n: usize) {
    let launcher = mpirun(n);
    let launcher: Vec<&str> = launcher.iter().map(String::as_str).collect();
    for name in ON_MPI {
        // Four partitions: every rank holds at least one; with 3 ranks, rank 0 holds two.
        let got = golden_outputs_via(&launcher, name, &["-t", "2", "--set", "run.partitions=4"]);
        check_golden(name, &format!(" on {n} MPI rank(s) x 2 threads"), &got);
    }
}

#[test]
fn one_rank() {
    same_bytes_on(1);
}

#[test]
fn two_ranks() {
    same_bytes_on(2);
}

#[test]
fn three_ranks() {
    same_bytes_on(3);
}

/// What a run on several processes does not take yet is refused, naming it.
#[test]
fn refuses_time_series_and_failures() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for (name, what) in [("timeseries", "time series"), ("failures", "failures")] {
        let tmp = tempfile::tempdir().unwrap();
        let out = Command::new("mpirun")
            .args(mpirun(2).iter().skip(1))
            .arg(env!("CARGO_BIN_EXE_dcsim"))
            .arg("run")
            .arg(dir.join(format!("{name}.toml")))
            .arg("--output-dir")
            .arg(tmp.path())
            .arg("--quiet")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name} ran on 2 ranks");
        assert!(err.contains(what), "{name}: {err}");
    }
}
