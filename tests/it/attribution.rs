//! Delay attribution: every finished flow's components add up to its FCT exactly, and they
//! say the right things in scenarios whose answer is known.

use crate::common::{cfg, run};
use dcsim::experiment::RunResult;
use dcsim::sim::attrib::Attribution;

/// Checks the exact sum for every finished flow; returns the finished flows' attributions.
fn exact(r: &RunResult) -> Vec<(u64, Attribution)> {
    let mut out = Vec::new();
    for rec in &r.records {
        match (rec.fct_ps, rec.attribution) {
            (Some(fct), Some(a)) => {
                assert_eq!(a.total(), fct, "{}: flow {}: {a:?}", r.plan.id, rec.flow_id);
                out.push((rec.size_bytes, a));
            }
            (None, None) => {}
            (f, a) => panic!(
                "{}: flow {}: fct {f:?}, attribution {a:?}",
                r.plan.id, rec.flow_id
            ),
        }
    }
    assert!(!out.is_empty());
    out
}

fn mean(v: &[(u64, Attribution)], f: impl Fn(&Attribution) -> u64) -> f64 {
    v.iter().map(|(_, a)| f(a) as f64).sum::<f64>() / v.len() as f64
}

#[test]
fn idle_path_is_serialization_and_propagation_only() {
    // Flows one at a time on an idle leaf-spine (1 us links, 4 hops each way across spines,
    // 2 within a leaf): no queueing, no head-of-line blocking, no pauses; the data packet and
    // its ACK cross 4 + 4 (or 2 + 2) links.
    let c = cfg("schemes = [\"DCTCP\"]\n[topology]\nkind = \"leaf_spine\"\n\
        [tcp]\ninit_cwnd = 100\n\
        [workload]\nkind = \"flows\"\nflows = [\n\
          { src = 0, dst = 1, size = \"1000B\", start = \"0us\" },\n\
          { src = 0, dst = 5, size = \"100KB\", start = \"100us\" },\n\
          { src = 2, dst = 9, size = \"1B\", start = \"400us\" },\n]\n");
    let r = run(&c, "DCTCP");
    let v = exact(&r);
    for ((_, a), hops) in v.iter().zip([4u64, 8, 8]) {
        assert_eq!(a.propagation, hops * 1_000_000, "{a:?}");
        assert_eq!(a.nic_hol + a.pfc + a.recovery + a.receiver, 0, "{a:?}");
    }
    // Only the 100 KB flow's last packet (720 B payload, 798 B on the wire) waits, at each of
    // the 3 switches, for its full-size predecessor (1538 B) to finish: 740 B at 0.8 ps/B.
    assert_eq!(v[0].1.switch_queue, 0);
    assert_eq!(v[1].1.switch_queue, 3 * 740 * 800);
    assert_eq!(v[2].1.switch_queue, 0);
    // The 100 KB flow (69 packets, window 100): the NIC sends it back to back, so its
    // sender-side time is its own serialization: nothing is left for the transport.
    assert_eq!(v[1].1.sender, 0, "{:?}", v[1].1);
}

#[test]
fn lossy_incast_adds_up_and_shows_recovery() {
    let c = cfg(
        "schemes = [\"TCP\"]\n[topology]\nkind = \"dumbbell\"\nleft = 8\nright = 1\n\
        [switch]\nbuffer = { kind = \"static\", per_port = \"30KB\" }\n\
        [tcp]\nrto_min = \"1ms\"\n\
        [workload]\nkind = \"incast\"\nfan_in = 8\nsize = \"100KB\"\nreceiver = 8\n",
    );
    let r = run(&c, "TCP");
    assert!(r.totals.drops > 0 && r.totals.timeouts > 0);
    let v = exact(&r);
    assert!(
        v.iter().any(|(_, a)| a.recovery > 0),
        "a flow lost packets and recovered"
    );
    assert!(
        mean(&v, |a| a.switch_queue) > 0.0,
        "the bottleneck queue is shared"
    );
}

#[test]
fn udp_adds_up() {
    let c = cfg(
        "schemes = [\"UDP\"]\n[topology]\nkind = \"dumbbell\"\nleft = 2\nright = 2\n\
        [udp]\nrate = \"6Gbps\"\n\
        [workload]\nkind = \"flows\"\nflows = [\n\
          { src = 0, dst = 2, size = \"200KB\", start = \"0us\" },\n\
          { src = 1, dst = 3, size = \"200KB\", start = \"0us\" },\n]\n",
    );
    let v = exact(&run(&c, "UDP"));
    assert_eq!(v.len(), 2);
    assert!(v.iter().all(|(_, a)| a.receiver == 0));
}

#[test]
fn sp_rdma_short_messages_wait_at_the_nic_gpmp_ones_do_not() {
    // Lossless RDMA with PFC: every message's components add up; SP-RDMA's short messages
    // wait behind long ones in their queue pair (sender-NIC head-of-line blocking), GPMP's go
    // first. This is the paper's motivation, measured.
    let c = cfg(
        "schemes = [\"GPMP\", \"SP-RDMA\"]\n[topology]\nkind = \"leaf_spine\"\n\
        [switch]\nqueues = 3\n\
        ecn = { kind = \"red\", kmin = \"40KB\", kmax = \"160KB\", pmax = 0.2, at = \"dequeue\" }\n\
        buffer = { kind = \"shared\", size = \"3MB\" }\n\
        pfc = { enabled = true, priorities = [1, 2] }\n\
        [packet]\nmss = \"1000B\"\nheader = \"82B\"\n\
        [workload]\nkind = \"poisson\"\nload = 0.6\nflows = 400\n",
    );
    let short = |r: &RunResult| -> Vec<(u64, Attribution)> {
        exact(r).into_iter().filter(|(s, _)| *s < 50_000).collect()
    };
    let (g, sp) = (short(&run(&c, "GPMP")), short(&run(&c, "SP-RDMA")));
    let (g_hol, sp_hol) = (mean(&g, |a| a.nic_hol), mean(&sp, |a| a.nic_hol));
    assert!(
        sp_hol > 10.0 * g_hol.max(1e6),
        "short messages' sender-NIC blocking: SP-RDMA {sp_hol} ps, GPMP {g_hol} ps"
    );
}

#[test]
fn nic_hol_counts_only_waits_for_the_nic() {
    // Host 0 runs a long TCP flow that keeps its NIC busy, then starts a 30-packet flow (window
    // 10: three round trips of about 80 us across the spines with 10 us links). The NIC round-robins the two flows a packet at a time, so each
    // packet of the short flow waits for about one full-size packet of the long one (1538 B
    // on the wire, 1.2304 us at 10 Gbps): about 30 of them are head-of-line blocking. Its
    // two waits for ACKs, while the NIC kept sending the long flow, are the short flow's own
    // window (`sender`), not the NIC.
    let c = cfg(
        "schemes = [\"TCP\"]\n[topology]\nkind = \"leaf_spine\"\nlink_delay = \"10us\"\n\
        [switch]\nbuffer = { kind = \"static\", per_port = \"10MB\" }\n\
        [tcp]\ninit_cwnd = 10\n\
        [workload]\nkind = \"flows\"\nflows = [\n\
          { src = 0, dst = 1, size = \"20MB\", start = \"0us\" },\n\
          { src = 0, dst = 5, size = \"43800B\", start = \"2000us\" },\n]\n",
    );
    let r = run(&c, "TCP");
    let v = exact(&r);
    let short = v.iter().find(|(s, _)| *s == 43_800).expect("short flow").1;
    let pkt = 1_230_400u64;
    eprintln!(
        "short flow: hol {} us, sender {} us, fct {} us",
        short.nic_hol as f64 / 1e6,
        short.sender as f64 / 1e6,
        short.total() as f64 / 1e6
    );
    assert!(
        (27 * pkt..=33 * pkt).contains(&short.nic_hol),
        "hol {} ps, expected about 30 packets of {pkt} ps",
        short.nic_hol
    );
    // Its waits for ACKs (a round trip of 80 us of propagation, less the time the NIC took
    // to send the window before it; measured 61.8 us, with 38.8 us of head-of-line
    // blocking) are its own window's, although the NIC was busy with the long flow all along
    // (counting all of that as head-of-line blocking made it 100.6 us).
    assert!(short.sender > 50 * 1_000_000, "round trips: {short:?}");
}
