//! The windowed kernel (`[run] partitions`, `sim::window`): a run split into partitions that
//! advance in lockstep windows gives every output byte of the unpartitioned run, for any
//! number of partitions and any map of nodes to partitions.
//!
//! Compared: every output the golden tests hash (`golden::golden_outputs`: tables, FCTs,
//! per-port and per-switch records, summaries, packet traces, time series, delay
//! attribution, and the manifests' outcome: end reason, events, packet-hops, end time,
//! conservation), for every golden config: TCP and DCTCP on leaf-spine and fat-trees,
//! partition-aggregate with dependencies and `end_when`, failures, RDMA with PFC and in-band
//! telemetry, GPMP, and a tie-heavy synchronised incast with PFC.

use crate::golden::{GOLDEN, golden_outputs};

/// Partition counts and maps: round robin over the switches (seed 0) and seeded random.
const SPLITS: &[(u32, u64)] = &[(2, 0), (3, 7), (5, 0), (8, 11)];

/// Runs golden config `name` unsplit, then split every way of [`SPLITS`], and checks that
/// every hashed output is the same.
fn same_bytes_split(name: &str) {
    let base: [&str; 0] = [];
    let seq = golden_outputs(name, &base);
    for &(p, seed) in SPLITS {
        let (p, seed) = (
            format!("run.partitions={p}"),
            format!("run.partition_seed={seed}"),
        );
        let mut args = base.to_vec();
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
    split_hpcc_file: "hpcc_file";
    split_incast_ties: "incast_ties";
}
