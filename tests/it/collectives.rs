//! Collectives (`[workload] kind = "collective"`) and dependencies on RDMA: checks against
//! formulas no one tuned.
//!
//! * Bandwidth: on an idle single-switch fabric, ring all-reduce of S bytes over n ranks takes
//!   2(n−1)/n · S/B, all-gather and reduce-scatter (n−1)/n · S/B, halving-doubling all-reduce
//!   2(n−1)/n · S/B, direct all-to-all (n−1)/n · S/B, within 1 %, where B is the rate left for
//!   data on a host link that also carries the acknowledgements of what the host receives
//!   (every rank sends and receives): B = line · mss / (mss + header + ack).
//! * Latency: a ring all-reduce of one packet per piece takes exactly 2(n−1) steps of two
//!   hops (serialization plus propagation each), plus the acknowledgement each rank sends
//!   before its next piece (the NIC sends it first), to the picosecond.
//! * Dependencies on RDMA messages: a message that waits for others starts when they have
//!   arrived plus its delay.

use crate::common::{cfg, run};
use dcsim::experiment::RunResult;

/// A single switch with `n` hosts at 100 Gbps, 1 us links, running `scheme` on `workload`.
fn star(n: u32, scheme: &str, workload: &str) -> RunResult {
    let c = cfg(&format!(
        "schemes = [\"{scheme}\"]\n[topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = {n}\n\
         leaves = 1\nspines = 1\nhost_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
         [workload]\nkind = \"collective\"\n{workload}"
    ));
    run(&c, scheme)
}

/// The payload rate of a host link that carries data one way and an acknowledgement per
/// data packet received the other (bits per second).
fn data_rate(r: &RunResult) -> f64 {
    let c = &r.plan.config;
    let mss = c.packet.mss.0 as f64;
    let hdr = c.packet.header.0 as f64;
    let ack = c.rdma.ack_size.map_or(hdr, |b| b.0 as f64);
    100e9 * mss / (mss + hdr + ack)
}

#[test]
fn collectives_run_at_their_bandwidth_formulas() {
    let s = 64e6;
    let n = 8.0;
    let cases = [
        ("op = \"allreduce\"", 2.0 * (n - 1.0) / n),
        ("op = \"allgather\"", (n - 1.0) / n),
        ("op = \"reduce_scatter\"", (n - 1.0) / n),
        (
            "op = \"allreduce\"\nalgorithm = \"halving_doubling\"",
            2.0 * (n - 1.0) / n,
        ),
        ("op = \"alltoall\"\nalgorithm = \"direct\"", (n - 1.0) / n),
    ];
    for (op, factor) in cases {
        let r = star(8, "DCQCN", &format!("{op}\nsize = \"64MB\"\n"));
        let c = &r.collectives[0];
        let t = c.time_ps.expect("finished") as f64 * 1e-12;
        let want = factor * s * 8.0 / data_rate(&r);
        assert!(
            (t / want - 1.0).abs() < 0.01,
            "{op}: {t} s, formula {want} s ({:+.3} %)",
            100.0 * (t / want - 1.0)
        );
        // Bus bandwidth then reaches the data rate (nccl-tests' definition).
        let bus = c.busbw_gbps.unwrap() * 1e9;
        assert!(bus > 0.99 * data_rate(&r), "{op}: bus bandwidth {bus}");
        assert_eq!(c.flows, c.flows_finished);
    }
}

#[test]
fn ring_allreduce_of_one_packet_pieces_is_exact() {
    // 4 ranks, 1000 B each: one 1082 B frame per piece, 6 steps.
    let r = star(4, "DCQCN", "op = \"allreduce\"\nsize = \"4000B\"\n");
    let ser = |bytes: u64| bytes * 8 * 10; // ps at 100 Gbps
    let hop = ser(1000 + 82) + 1_000_000;
    let want = 6 * 2 * hop + 5 * ser(82);
    assert_eq!(r.collectives[0].time_ps, Some(want));
    assert_eq!(r.collectives[0].flows, 24);
    // Twice, each after 5 us of compute at every rank (a compute step once the previous
    // collective has finished there; each rank's last piece arrives at the same instant).
    let r = star(
        4,
        "DCQCN",
        "op = \"allreduce\"\nsize = \"4000B\"\nrepeat = 2\ncompute = \"5us\"\n",
    );
    let c = &r.collectives;
    assert_eq!(c[0].start_ps, Some(5_000_000));
    assert_eq!(c[0].finish_ps, Some(5_000_000 + want));
    assert_eq!(c[1].start_ps, Some(2 * 5_000_000 + want));
    assert_eq!(c[1].finish_ps, Some(2 * (5_000_000 + want)));
    assert_eq!(r.end_reason, dcsim::sim::EndReason::AllFinished);
}

#[test]
fn tree_and_broadcast_are_bounded_by_their_busiest_link() {
    // Double binary tree: an inner rank sends and receives twice the buffer (2S/B); the
    // pipelined chain broadcast S/B plus its fill (the first slice crossing n − 2 forwarding
    // ranks). Contention keeps both above their bounds (the tree: several senders to one
    // receiver; the chain: the root's link carries no acknowledgements, so it outruns the
    // next rank's, whose queue marks ECN and DCQCN slows the root): checked to lie within
    // 40 % and 25 % of them.
    let r = star(
        8,
        "SP-RDMA",
        "op = \"allreduce\"\nalgorithm = \"tree\"\nsize = \"16MB\"\n",
    );
    let t = r.collectives[0].time_ps.unwrap() as f64 * 1e-12;
    let bound = 2.0 * 16e6 * 8.0 / data_rate(&r);
    assert!(t > bound && t < 1.4 * bound, "tree: {t} s, bound {bound} s");
    let r = star(
        8,
        "SP-RDMA",
        "op = \"broadcast\"\nroot = 3\nsize = \"16MB\"\n",
    );
    let t = r.collectives[0].time_ps.unwrap() as f64 * 1e-12;
    let slice = 16e6 / (16e6 / 524_288f64).ceil();
    let bound = (16e6 + 6.0 * slice) * 8.0 / data_rate(&r);
    assert!(
        t > bound && t < 1.25 * bound,
        "broadcast: {t} s, bound {bound} s"
    );
}

#[test]
fn collectives_reach_every_rank_in_order() {
    // Repeated collectives start at a rank once the previous one finished there; every flow
    // of every collective arrives; ranks may be any hosts in any order.
    let r = star(
        8,
        "DCTCP",
        "op = \"allreduce\"\nalgorithm = \"halving_doubling\"\nranks = [7, 2, 5, 0]\n\
         size = \"1MB\"\nslice = \"64KB\"\nchunk = \"64KB\"\nrepeat = 3\n",
    );
    assert_eq!(r.collectives.len(), 3);
    for w in r.collectives.windows(2) {
        assert!(w[1].start_ps.unwrap() >= w[0].start_ps.unwrap());
        assert!(w[1].finish_ps.unwrap() > w[0].finish_ps.unwrap());
    }
    for c in &r.collectives {
        assert_eq!(c.flows, c.flows_finished);
        // 2 log2(4) = 4 steps; each rank sends S/2 + S/4 twice in 64 KB pieces.
        assert_eq!(c.flows, 4 * 2 * (8 + 4));
    }
    let hosts: std::collections::BTreeSet<u32> = r.records.iter().map(|f| f.src).collect();
    assert_eq!(hosts.into_iter().collect::<Vec<_>>(), vec![0, 2, 5, 7]);
}

#[test]
fn rdma_messages_wait_for_the_messages_they_depend_on() {
    // Message 3 waits for messages 1 and 2 (received), then 10 us; message 4 for 3: on
    // DCQCN queue pairs, as TCP flows do (workloads.rs).
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dep.csv");
    std::fs::write(
        &f,
        "flow_id,src,dst,size_bytes,start_ns,after\n\
         1,0,5,100000,0,\n2,1,5,50000,0,\n3,5,9,20000,10000,1;2\n4,9,0,1000,0,3\n",
    )
    .unwrap();
    for scheme in ["DCQCN", "SP-RDMA", "IRN", "GPMP", "MP-RDMA"] {
        let c = cfg(&format!(
            "schemes = [\"{scheme}\"]\n[workload]\nkind = \"csv\"\nfile = \"{}\"\n",
            f.display()
        ));
        let r = run(&c, scheme);
        assert_eq!(r.totals.finished, 4, "{scheme}");
        let rec = |id: u32| r.records.iter().find(|x| x.flow_id == id).unwrap();
        let got = rec(1)
            .rcv_finish_ps
            .unwrap()
            .max(rec(2).rcv_finish_ps.unwrap());
        // Host 5 received both: message 3 starts there 10 us later.
        assert_eq!(rec(3).start_ps, got + 10_000_000, "{scheme}");
        assert_eq!(rec(4).start_ps, rec(3).rcv_finish_ps.unwrap(), "{scheme}");
    }
}

#[test]
fn bad_collectives_are_refused_with_the_key() {
    let cases = [
        (
            "op = \"alltoall\"\nalgorithm = \"ring\"\nsize = \"1MB\"",
            "algorithm",
        ),
        (
            "op = \"allreduce\"\nalgorithm = \"halving_doubling\"\nranks = [0, 1, 2]\nsize = \"1MB\"",
            "power of two",
        ),
        ("op = \"allreduce\"\nsize = \"3B\"", "size"),
        (
            "op = \"allreduce\"\nsize = \"1MB\"\nslice = \"4MB\"",
            "slice",
        ),
        (
            "op = \"allreduce\"\nsize = \"1MB\"\nranks = [0, 0]",
            "listed twice",
        ),
        ("op = \"broadcast\"\nsize = \"1MB\"\nroot = 16", "root"),
        ("op = \"allreduce\"\nsize = \"1MB\"\ndepth = 0", "depth"),
        (
            "op = \"allreduce\"\nalgorithm = \"hierarchical\"\nsize = \"1MB\"",
            "gpus_per_server",
        ),
    ];
    for (w, want) in cases {
        let e = dcsim::config::Config::parse(
            &format!("[workload]\nkind = \"collective\"\n{w}\n"),
            "x.toml",
        )
        .unwrap()
        .validate("x.toml", std::path::Path::new("."))
        .unwrap_err()
        .to_string();
        assert!(e.contains(want) && e.contains("workload"), "{w}: {e}");
    }
}
