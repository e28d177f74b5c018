//! pFabric on a single bottleneck, against schedules computed by hand: switches serve the
//! smallest rank first (shortest remaining first, or earliest deadline first) and, when the
//! buffer is full, drop the largest rank.

use crate::common::{cfg, run};

const MSS: u64 = 1460;
/// A full packet (1460 + 78 B) at the 1 Gbps bottleneck, in ps.
const S_B: u64 = 1538 * 8_000;

/// Three senders (hosts 0, 1, 2) to host 3 across a 1 Gbps bottleneck (10 Gbps host links),
/// flows of `pkts[i]` full segments starting 1 ns apart, deadlines `dl_us[i]` (0: none).
fn three_flows(scheme: &str, pfabric: &str, pkts: [u64; 3], dl_us: [u64; 3]) -> String {
    let mut s = format!(
        "schemes = [\"{scheme}\"]\n[topology]\nkind = \"dumbbell\"\nleft = 3\nright = 1\n\
         bottleneck_rate = \"1Gbps\"\n[packet]\nmss = \"1460B\"\nheader = \"78B\"\n\
         [tcp]\ninit_cwnd = 64\nrto_min = \"10ms\"\n[pfabric]\ninit_cwnd = 64\n{pfabric}\n\
         [workload]\nkind = \"flows\"\nflows = [\n"
    );
    for i in 0..3 {
        let dl = if dl_us[i] > 0 {
            format!(", deadline = \"{}us\"", dl_us[i])
        } else {
            String::new()
        };
        s += &format!(
            "  {{ src = {i}, dst = 3, size = \"{}B\", start = \"{i}ns\"{dl} }},\n",
            pkts[i] * MSS
        );
    }
    s + "]\n"
}

fn finish(r: &dcsim::experiment::RunResult) -> Vec<u64> {
    r.records.iter().map(|x| x.finish_ps.unwrap()).collect()
}

#[test]
fn pfabric_serves_shortest_remaining_first_on_one_bottleneck() {
    // Flows of 10, 20 and 30 packets, the largest started last. All packets are in the
    // bottleneck queue long before it drains (host links are 10x faster), so pFabric sends A
    // (10) whole, then B (20), then C (30), back to back: A completes in exactly its idle-path
    // time, B exactly 20 bottleneck packet times after A, C 30 after B (the rest of each path
    // is idle and identical).
    let c = cfg(&three_flows(
        "pFabric",
        "buffer = \"1MB\"\nrto = \"10ms\"",
        [10, 20, 30],
        [0; 3],
    ));
    let r = run(&c, "pFabric");
    let f = finish(&r);
    assert_eq!(r.records[0].fct_ps, Some(r.records[0].ideal_fct_ps));
    assert_eq!(f[1] - f[0], 20 * S_B);
    assert_eq!(f[2] - f[1], 30 * S_B);
    assert_eq!(r.totals.drops + r.totals.retransmits, 0);
    // The reverse order of sizes gives the reverse completion order.
    let c = cfg(&three_flows(
        "pFabric",
        "buffer = \"1MB\"\nrto = \"10ms\"",
        [30, 20, 10],
        [0; 3],
    ));
    let f = finish(&run(&c, "pFabric"));
    // C (10 packets) waits only for the first packet of A already on the wire.
    assert!(f[2] < f[1] && f[1] < f[0], "{f:?}");
    assert_eq!(f[1] - f[2], 20 * S_B);
    assert_eq!(f[0] - f[1], 29 * S_B);
    // With DCTCP the bottleneck is a FIFO: A's packets are interleaved with B's and C's.
    let r = run(
        &cfg(&three_flows("DCTCP", "", [10, 20, 30], [0; 3])),
        "DCTCP",
    );
    assert!(r.records[0].fct_ps.unwrap() > r.records[0].ideal_fct_ps + 10 * S_B);
}

#[test]
fn pfabric_edf_serves_earliest_deadline_first() {
    // The largest flow has the earliest deadline: EDF sends it first, then the one with the
    // next deadline; the flow without a deadline goes last.
    let c = cfg(&three_flows(
        "pFabric-EDF",
        "buffer = \"1MB\"\nrto = \"10ms\"",
        [10, 20, 30],
        [0, 2_000, 1_000],
    ));
    let r = run(&c, "pFabric-EDF");
    let f = finish(&r);
    // Order C (deadline 1 ms), B (2 ms), A (none). C waits for A's first packet, already on
    // the wire when C's packets arrive.
    assert_eq!(f[1] - f[2], 20 * S_B);
    assert_eq!(f[0] - f[1], 9 * S_B);
    assert_eq!(r.records[2].deadline_met, Some(true));
    assert_eq!(r.records[1].deadline_met, Some(true));
}

#[test]
fn pfabric_drops_the_largest_rank_when_the_buffer_is_full() {
    // A bottleneck buffer of 12 packets: the 60 packets that arrive at once cannot all stay.
    // The smallest flow's packets are never dropped (they outrank everything queued); the
    // drops fall on the larger flows, which recover by timeout, and every flow completes.
    let c = cfg(&three_flows(
        "pFabric",
        "buffer = \"18456B\"\nrto = \"500us\"",
        [10, 20, 30],
        [0; 3],
    ));
    let r = run(&c, "pFabric");
    assert_eq!(r.totals.finished, 3);
    assert_eq!(r.records[0].drops, 0);
    assert_eq!(r.records[0].fct_ps, Some(r.records[0].ideal_fct_ps));
    assert!(r.records[2].drops > r.records[1].drops, "{:?}", r.records);
    assert!(r.records[1].drops + r.records[2].drops > 0);
    // Drop-tail with the same buffer drops whatever arrives last, the small flow's too.
    let c = cfg(&format!(
        "{}\n[switch]\nbuffer = {{ kind = \"static\", per_port = \"18456B\" }}\n",
        three_flows("TCP", "", [10, 20, 30], [0; 3])
    ));
    let r = run(&c, "TCP");
    assert!(r.records[0].drops > 0, "{:?}", r.records);
}
