//! Checks against closed forms nobody tuned: exact idle-path FCT, bottleneck saturation.

use crate::common::{cfg, collect, run, sim};
use dcsim::units::SimTime;

const MSS: u64 = 1460;
const HDR: u64 = 78;

/// FCT of one flow on an idle path of `h` identical hops (rate given as picoseconds per byte,
/// propagation `d` picoseconds each), written out independently of the simulator's own
/// ideal-FCT code: the first packet crosses `h` hops, the remaining full packets follow one
/// serialization apart, the (shorter) last packet last; then the ACK returns over `h` hops.
fn uniform_fct(size: u64, h: u64, ps_per_byte: u64, d: u64) -> u64 {
    let n = size.div_ceil(MSS);
    let sf = (MSS + HDR) * ps_per_byte;
    let sl = (size - (n - 1) * MSS + HDR) * ps_per_byte;
    let data = if n == 1 {
        h * sl
    } else {
        h * sf + (n - 2) * sf + sl
    };
    data + h * d + h * (HDR * ps_per_byte + d)
}

/// Flows spaced 1 ms apart so that each runs alone.
fn spaced_flows(flows: &[(u32, u32, u64)]) -> String {
    let mut s = String::from("[workload]\nkind = \"flows\"\nflows = [\n");
    for (i, (a, b, size)) in flows.iter().enumerate() {
        s += &format!("  {{ src = {a}, dst = {b}, size = \"{size}B\", start = \"{i}ms\" }},\n");
    }
    s + "]\n"
}

const SIZES: [u64; 7] = [1, 100, 1460, 1461, 5000, 14600, 9 * 1460 + 1];

#[test]
fn idle_path_fct_is_exact_leaf_spine() {
    // Same leaf: 2 hops. Across leaves: 4 hops.
    let mut flows = Vec::new();
    for &s in &SIZES {
        flows.push((0, 1, s));
        flows.push((0, 3, s));
    }
    let c = cfg(&format!(
        "schemes = [\"TCP\"]\n[topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 2\nleaves = 2\nspines = 2\n{}",
        spaced_flows(&flows)
    ));
    let r = run(&c, "TCP");
    for (rec, &(_, dst, size)) in r.records.iter().zip(&flows) {
        let hops = if dst == 1 { 2 } else { 4 };
        let want = uniform_fct(size, hops, 800, 1_000_000);
        assert_eq!(rec.fct_ps, Some(want), "size {size} to host {dst}");
        assert_eq!(rec.ideal_fct_ps, want, "ideal of size {size} to host {dst}");
        assert_eq!(rec.retransmits, 0);
    }
}

#[test]
fn idle_path_fct_is_exact_fat_tree() {
    // k=4: hosts 0-1 share an edge (2 hops), 0-2 share a pod (4 hops), 0-4 cross the core (6).
    let mut flows = Vec::new();
    for &s in &SIZES {
        for dst in [1, 2, 4] {
            flows.push((0, dst, s));
        }
    }
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate = \"40Gbps\"\nfabric_rate = \"40Gbps\"\nlink_delay = \"500ns\"\n{}",
        spaced_flows(&flows)
    ));
    let r = run(&c, "DCTCP");
    for (rec, &(_, dst, size)) in r.records.iter().zip(&flows) {
        let hops = match dst {
            1 => 2,
            2 => 4,
            _ => 6,
        };
        let want = uniform_fct(size, hops, 200, 500_000);
        assert_eq!(rec.fct_ps, Some(want), "size {size} to host {dst}");
        assert_eq!(rec.ideal_fct_ps, want);
    }
}

#[test]
fn idle_path_fct_is_exact_with_a_slow_bottleneck() {
    // 10G host links, 1G bottleneck with 5 us propagation.
    let c = cfg(&format!(
        "schemes = [\"TCP\"]\n[topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\nhost_rate = \"10Gbps\"\nbottleneck_rate = \"1Gbps\"\nbottleneck_delay = \"5us\"\n{}",
        spaced_flows(&[(0, 1, 1), (0, 1, 3 * MSS), (1, 0, 3 * MSS)])
    ));
    let r = run(&c, "TCP");
    let (f10, f1) = ((MSS + HDR) * 800, (MSS + HDR) * 8000);
    let (a10, a1) = (HDR * 800, HDR * 8000);
    let ack = a10 + 1_000_000 + a1 + 5_000_000 + a10 + 1_000_000;
    let one =
        (1 + HDR) * 800 + 1_000_000 + (1 + HDR) * 8000 + 5_000_000 + (1 + HDR) * 800 + 1_000_000;
    assert_eq!(r.records[0].fct_ps, Some(one + ack));
    // Three full packets: they leave the 1G hop 12.3 us apart.
    let three = f10 + 1_000_000 + 3 * f1 + 5_000_000 + f10 + 1_000_000;
    assert_eq!(r.records[1].fct_ps, Some(three + ack));
    assert_eq!(
        r.records[2].fct_ps,
        Some(three + ack),
        "the reverse direction is symmetric"
    );
    for rec in &r.records {
        assert_eq!(rec.fct_ps, Some(rec.ideal_fct_ps));
    }
}

#[test]
fn large_window_flow_matches_the_pipeline_formula() {
    // With an initial window larger than the flow, a 1 MB flow is one pipelined burst.
    let size = 1_000_000;
    let c = cfg(&format!(
        "schemes = [\"TCP\"]\n[tcp]\ninit_cwnd = 1000\n[topology]\nkind = \"fat_tree\"\nk = 4\n{}",
        spaced_flows(&[(0, 4, size), (5, 3, size)])
    ));
    let r = run(&c, "TCP");
    for rec in &r.records {
        assert_eq!(rec.fct_ps, Some(uniform_fct(size, 6, 800, 1_000_000)));
    }
}

/// The egress port of switch `from` towards node `to`.
fn port_between(s: &dcsim::sim::Sim, from: usize, to: usize) -> usize {
    s.net
        .ports
        .iter()
        .position(|p| p.node.idx() == from && s.net.ports[p.peer.idx()].node.idx() == to)
        .expect("link exists")
}

#[test]
fn long_flow_saturates_its_bottleneck() {
    for scheme in ["TCP", "DCTCP"] {
        let c = cfg("[topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\n\
             [workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 1, size = \"100MB\" }]\n");
        let mut s = sim(&c, scheme);
        let bottleneck = port_between(&s, 2, 3);
        // Slow start is over well before 2 ms (BDP is about 10 KB).
        assert_eq!(s.run_until(SimTime::from_ms(2)), None);
        let b0 = s.net.ports[bottleneck].stats.tx_bytes;
        assert_eq!(s.run_until(SimTime::from_ms(20)), None);
        let b1 = s.net.ports[bottleneck].stats.tx_bytes;
        let util = (b1 - b0) as f64 * 8.0 / (10e9 * 0.018);
        assert!(util >= 0.99, "{scheme}: bottleneck utilisation {util:.4}");
        let reason = s.run_until(SimTime::MAX).expect("ends");
        let r = collect(&s, &c, scheme, reason);
        assert_eq!(r.totals.finished, 1);
        // The flow never left the 10 Gbps pipe idle: its FCT is within 1% of line rate.
        let fct = r.records[0].fct_ps.unwrap() as f64 / 1e12;
        let line = 100e6 * (1538.0 / 1460.0) * 8.0 / 10e9;
        assert!(
            fct < line * 1.01,
            "{scheme}: fct {fct} s vs line-rate {line} s"
        );
    }
}
