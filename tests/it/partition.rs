//! The windowed kernel (`[run] partitions`, `[run] threads`, `sim::window`): a run split into
//! partitions that advance in lockstep windows gives every output byte of the unpartitioned
//! run, for any number of partitions, any map of nodes to partitions and any number of
//! threads (2 to 8 on CI's two cores: oversubscribed).
//!
//! Compared: every output the golden tests hash (`golden::golden_outputs`: tables, FCTs,
//! per-port and per-switch records, summaries, packet traces, time series, delay
//! attribution, and the manifests' outcome: end reason, events, packet-hops, end time,
//! conservation), for every golden config: TCP and DCTCP on leaf-spine and fat-trees,
//! partition-aggregate with dependencies and `end_when`, failures, RDMA with PFC and in-band
//! telemetry, GPMP, a tie-heavy synchronised incast with PFC, and a rail fabric of
//! multi-homed GPUs (whose links to their rail and server switches may join partitions).

use crate::golden::{GOLDEN, golden_outputs};

/// Partition counts, maps (balanced: seed 0; seeded random), threads, and how messages
/// cross (`bytes`: packed and unpacked, as between processes).
const SPLITS: &[(u32, u64, u32, &str)] = &[
    (2, 0, 1, "memory"),
    (3, 7, 3, "bytes"),
    (5, 0, 2, "memory"),
    (8, 11, 8, "memory"),
];

/// Runs golden config `name` unsplit, then split every way of [`SPLITS`], and checks that
/// every hashed output is the same.
fn same_bytes_split(name: &str) {
    let base: [&str; 0] = [];
    let seq = golden_outputs(name, &base);
    for &(p, seed, t, exchange) in SPLITS {
        let (p, seed, t) = (
            format!("run.partitions={p}"),
            format!("run.partition_seed={seed}"),
            t.to_string(),
        );
        let exchange = format!("run.exchange=\"{exchange}\"");
        let mut args = base.to_vec();
        args.extend(["--set", &p, "--set", &seed, "-t", &t, "--set", &exchange]);
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

macro_rules! split {
    ($($test:ident: $name:literal;)*) => {
        $(
            #[test]
            fn $test() {
                same_bytes_split($name);
            }
        )*

        /// Every golden config is checked split.
        #[test]
        fn every_golden_config_is_checked_split() {
            let mut checked = vec![$($name),*];
            let mut golden = GOLDEN.to_vec();
            checked.sort();
            golden.sort();
            assert_eq!(checked, golden);
        }
    };
}

split! {
    split_default: "default";
    split_fat_tree: "fat_tree";
    split_rdma_pfc: "rdma_pfc";
    split_gpmp: "gpmp";
    split_partition_aggregate: "partition_aggregate";
    split_end_when: "end_when";
    split_pcap: "pcap";
    split_timeseries: "timeseries";
    split_failures: "failures";
    split_collective: "collective";
    split_rail: "rail";
    split_hpcc_file: "hpcc_file";
    split_incast_ties: "incast_ties";
}

/// A tie-heavy run (the synchronised 15-to-1 incast with PFC) repeated 20 times on 4 threads
/// gives the same bytes every time, the unsplit run's.
#[test]
fn a_tie_heavy_run_on_four_threads_is_the_same_every_time() {
    let seq = golden_outputs("incast_ties", &[]);
    for i in 0..20 {
        let par = golden_outputs("incast_ties", &["-t", "4", "-j", "1"]);
        assert_eq!(seq, par, "repetition {i}");
    }
}
