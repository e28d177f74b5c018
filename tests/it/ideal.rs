//! The ideal FCT is the best the network could do for a flow alone: the fastest of its shortest
//! paths (store-and-forward over each path's own rates and delays), in the network as it was
//! while the flow lived. Checked by hand on an irregular fabric whose fastest path depends on
//! the flow's size, and as a lower bound (`common::run` checks FCT >= ideal for every flow)
//! with unequal parallel links, per-packet spraying and rate changes mid-run.

use crate::common::{cfg, run};
use std::path::Path;

fn topo() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/topology/two-spines-unequal.toml")
        .display()
        .to_string()
}

/// Serialization of `bytes` at `gbps`, in ps (exact for 1, 10 and 40 Gbps).
fn ser(bytes: u64, gbps: u64) -> u64 {
    bytes * 8000 / gbps
}

#[test]
fn the_ideal_takes_the_fastest_path_for_each_size_on_an_irregular_fabric() {
    // 24 flows 0 -> 2, 100 us apart (each alone on the network): 100 B ones and ones of 100
    // full packets; ECMP hashes them over both spines.
    let mut flows = String::new();
    for i in 0..24 {
        let size = if i % 2 == 0 { 100 } else { 146_000 };
        let size = format!("\"{size}B\"");
        flows += &format!(
            "{{ src = {}, dst = {}, size = {size}, start = \"{}us\" }},",
            i % 2,
            2 + (i / 2) % 2,
            i * 300
        );
    }
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n[topology]\nkind = \"file\"\nfile = \"{}\"\n\
         [workload]\nkind = \"flows\"\nflows = [{flows}]\n",
        topo()
    ));
    let r = run(&c, "DCTCP"); // checks FCT >= ideal for every flow
    let us = 1_000_000;
    // The final ACK (78 B) is fastest back over the near spine: 2 host hops at 10 Gbps,
    // 2 at 1 Gbps, 4 links of 1 us.
    let ack = 2 * ser(78, 10) + 2 * ser(78, 1) + 4 * us;
    let ack_far = 2 * ser(78, 10) + 2 * ser(78, 40) + 10 * us;
    assert!(ack < ack_far);
    // 100 B (178 B on the wire): over the near, slow spine (7.13 us) rather than the far,
    // fast one (10.36 us).
    let near = 2 * ser(178, 10) + 2 * ser(178, 1) + 4 * us;
    let far = 2 * ser(178, 10) + 2 * ser(178, 40) + 10 * us;
    assert!(near < far);
    // 100 full packets (1538 B): over the fast spine, the host links the bottleneck.
    let big = 2 * ser(1538, 10) + 2 * ser(1538, 40) + 10 * us + 99 * ser(1538, 10);
    let big_near = 2 * ser(1538, 10) + 2 * ser(1538, 1) + 4 * us + 99 * ser(1538, 1);
    assert!(big < big_near);
    let mut beat_first_path = 0;
    for f in &r.records {
        let want = if f.size_bytes == 100 { near } else { big } + ack;
        assert_eq!(f.ideal_fct_ps, want, "flow {}: {f:?}", f.flow_id);
        // The first ECMP candidates (the fast, far spine, both ways) were the ideal before:
        // small flows hashed onto the near spine one way finished faster than it.
        if f.size_bytes == 100 && f.fct_ps.unwrap() < far + ack_far {
            beat_first_path += 1;
        }
    }
    assert_eq!(r.totals.finished, 24);
    assert!(
        beat_first_path > 0,
        "no small flow took the near spine; the test does not test it"
    );
}

#[test]
fn the_ideal_is_a_lower_bound_over_unequal_parallel_links_sprayed() {
    // Sprayed, a flow's packets use both spines at once (40 Gbps + 1 Gbps at one stage, with
    // different delays); the ideal lets them, so no flow beats it (checked by `run`).
    let mut flows = String::new();
    for i in 0..8 {
        let size = ["100B", "3KB", "146KB", "2MB"][i % 4];
        flows += &format!(
            "{{ src = 0, dst = 2, size = \"{size}\", start = \"{}us\" }},",
            i * 3000
        );
    }
    for scheme in ["DCTCP+spray", "TCP+RR"] {
        let c = cfg(&format!(
            "schemes = [\"{scheme}\"]\n[tcp]\ninit_cwnd = 1000\n[topology]\nkind = \"file\"\nfile = \"{}\"\n\
             [workload]\nkind = \"flows\"\nflows = [{flows}]\n",
            topo()
        ));
        let r = run(&c, scheme);
        assert_eq!(r.totals.finished, 8, "{scheme}");
    }
}

/// Poisson DCTCP traffic on the 4x4 leaf-spine, 200 flows, with `extra` config.
fn leaf_spine(extra: &str) -> dcsim::experiment::RunResult {
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n{extra}[workload]\nkind = \"poisson\"\nload = 0.3\nflows = 200\n"
    ));
    run(&c, "DCTCP")
}

#[test]
fn a_degraded_uplink_does_not_raise_the_ideal_of_flows_that_avoid_it() {
    // Leaf 16's uplink to spine 20, the first ECMP candidate, at 1 Gbps from the start: a
    // flow hashed to another spine is as fast as on the intact network, and its ideal says so.
    let healthy = leaf_spine("");
    let degraded = leaf_spine(
        "[[failures]]\nat = \"0us\"\nlink = [16, 20]\naction = \"rate\"\nrate = \"1Gbps\"\n",
    );
    for (a, b) in healthy.records.iter().zip(&degraded.records) {
        assert_eq!(a.flow_id, b.flow_id);
        assert_eq!(a.ideal_fct_ps, b.ideal_fct_ps, "flow {}", a.flow_id);
    }
}

#[test]
fn a_rate_change_mid_run_leaves_the_ideal_of_flows_before_it() {
    // Every uplink of leaf 16 drops to 1 Gbps at 5 ms: flows that finished before keep the
    // ideal of the intact network; flows from host 0..4 after it get the slower one.
    let healthy = leaf_spine("");
    let mut fails = String::new();
    for sp in 20..24 {
        fails += &format!(
            "[[failures]]\nat = \"5ms\"\nlink = [16, {sp}]\naction = \"rate\"\nrate = \"1Gbps\"\n"
        );
    }
    let slow = leaf_spine(&fails);
    let t = 5_000_000_000u64;
    let (mut before, mut after_slower) = (0, 0);
    for (a, b) in healthy.records.iter().zip(&slow.records) {
        if b.finish_ps.is_some_and(|f| f < t) {
            assert_eq!(a.ideal_fct_ps, b.ideal_fct_ps, "flow {}", a.flow_id);
            before += 1;
        }
        if b.start_ps > t && b.src < 4 && b.dst >= 4 {
            assert!(b.ideal_fct_ps > a.ideal_fct_ps, "flow {}", a.flow_id);
            after_slower += 1;
        }
    }
    assert!(before > 10 && after_slower > 3, "{before} {after_slower}");
}
