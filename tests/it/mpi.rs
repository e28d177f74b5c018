//! One run on several processes (MPI ranks, `--features mpi`): the golden configs' outputs,
//! byte for byte, on 1, 2 and 3 ranks of 2 threads each (oversubscribed on CI's two cores),
//! launched by Open MPI's `mpirun` as a user would.
//!
//! Built only with the feature (`.ci/run` runs `cargo test --features mpi --test it mpi` with
//! Debian's Open MPI installed).

use crate::golden::{GOLDEN, check_golden, golden_outputs_via};

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
    for name in GOLDEN {
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
