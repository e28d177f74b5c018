//! DCTCP's queue against its sawtooth analysis (Alizadeh et al. 2010 §3.3; PDTCP spec §2 with
//! M = 1, p = 1): N synchronised long flows on one bottleneck of capacity C packets/s with
//! marking threshold K oscillate between `Q_max = K + N` and `Q_max − A`, with amplitude
//! `A = ½·√(2N(C·RTT + K))` packets and `alpha ≈ √(2/W*)`, `W* = (C·RTT + K)/N`.

use crate::common::{cfg, collect, sim};
use dcsim::units::SimTime;

const PKT: f64 = 1538.0;

/// `n` long flows from left host i to right host i across a 10 Gbps dumbbell whose
/// bottleneck has 20 us of propagation delay (hosts links 1 us).
fn dumbbell(n: usize, k_pkts: u64, scheme: &str, buffer: &str) -> dcsim::config::Config {
    let mut flows = String::new();
    for i in 0..n {
        flows += &format!("{{ src = {i}, dst = {}, size = \"1GB\" }},\n", n + i);
    }
    cfg(&format!(
        "schemes = [\"{scheme}\"]\n\
         [topology]\nkind = \"dumbbell\"\nleft = {n}\nright = {n}\nbottleneck_delay = \"20us\"\n\
         [switch]\necn = {{ kind = \"step\", k = \"{}B\" }}\n\
         [switch.buffer]\nkind = \"static\"\nper_port = \"{buffer}\"\n\
         [workload]\nkind = \"flows\"\nflows = [\n{flows}]\n",
        k_pkts * PKT as u64
    ))
}

struct Trace {
    /// Bottleneck queue in packets, sampled every 500 ns.
    q: Vec<f64>,
    mean_alpha: f64,
    drops: u64,
}

fn trace(n: usize, k: u64, scheme: &str, buffer: &str) -> Trace {
    let c = dumbbell(n, k, scheme, buffer);
    let mut s = sim(&c, scheme);
    let (l, r) = (2 * n, 2 * n + 1);
    let bn = s
        .net
        .ports
        .iter()
        .position(|p| p.node.idx() == l && s.net.ports[p.peer.idx()].node.idx() == r)
        .unwrap();
    let warm = SimTime::from_ms(10);
    assert_eq!(s.run_until(warm), None);
    let mut t = warm;
    let (mut q, mut alpha, mut na) = (Vec::new(), 0.0, 0);
    for i in 0..40_000 {
        t += SimTime::from_ns(500);
        assert_eq!(s.run_until(t), None);
        q.push(s.net.ports[bn].total_bytes as f64 / PKT);
        if i % 100 == 0 {
            for f in &s.flows {
                if let Some(c) = s.transport.tcp(f.id) {
                    alpha += c.alpha.unwrap_or(0.0);
                    na += 1;
                }
            }
        }
    }
    let drops = s.net.ports[bn].stats.drops;
    let reason = s.run_until(t + SimTime::from_ns(1));
    assert_eq!(reason, None);
    collect(&s, &c, scheme, dcsim::sim::EndReason::StopTime);
    Trace {
        q,
        mean_alpha: alpha / na as f64,
        drops,
    }
}

/// Mean peak-to-trough amplitude over oscillation cycles. A cycle ends when the queue rises
/// above `mean + 2` packets after having fallen below `mean − 2` (hysteresis keeps the
/// ±1-packet jitter of individual arrivals from splitting cycles).
fn amplitude(q: &[f64]) -> (f64, usize) {
    let mean = q.iter().sum::<f64>() / q.len() as f64;
    let (mut mx, mut mn) = (f64::MIN, f64::MAX);
    let (mut amps, mut started, mut armed) = (Vec::new(), false, false);
    for &x in q {
        mx = mx.max(x);
        mn = mn.min(x);
        if x < mean - 2.0 {
            armed = true;
        }
        if armed && x > mean + 2.0 {
            if started {
                amps.push(mx - mn);
            }
            started = true;
            armed = false;
            mx = f64::MIN;
            mn = f64::MAX;
        }
    }
    (amps.iter().sum::<f64>() / amps.len() as f64, amps.len())
}

fn percentile(q: &[f64], p: f64) -> f64 {
    let mut v = q.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

#[test]
fn dctcp_queue_oscillation_matches_the_sawtooth_analysis() {
    // Base RTT: 2 × (1 + 20 + 1) us propagation, 3 data serializations, 3 ACK serializations.
    let rtt = 44e-6 + 3.0 * PKT * 8.0 / 10e9 + 3.0 * 78.0 * 8.0 / 10e9;
    let c_rtt = 10e9 / (PKT * 8.0) * rtt;
    let k = 40u64;
    for n in [2usize, 10, 20] {
        let t = trace(n, k, "DCTCP", "2MB");
        let predicted = 0.5 * (2.0 * n as f64 * (c_rtt + k as f64)).sqrt();
        let (measured, cycles) = amplitude(&t.q);
        assert!(cycles >= 20, "N={n}: only {cycles} cycles");
        let err = (measured - predicted).abs() / predicted;
        assert!(
            err < 0.20,
            "N={n}: amplitude {measured:.1} pkts vs analysis {predicted:.1} ({:.0}% off)",
            err * 100.0
        );
        // The peak is K + N.
        let q_max = percentile(&t.q, 0.99);
        let want = (k as usize + n) as f64;
        assert!(
            (q_max - want).abs() / want < 0.2,
            "N={n}: peak {q_max} vs K+N = {want}"
        );
        // The queue stays near K: its mean lies between the trough and the peak.
        let mean = t.q.iter().sum::<f64>() / t.q.len() as f64;
        assert!(
            mean > want - predicted && mean < want,
            "N={n}: mean queue {mean:.1}"
        );
        // alpha ≈ sqrt(2/W*) (equation (10) with p = 1).
        let w_star = (c_rtt + k as f64) / n as f64;
        let alpha = (2.0 / w_star).sqrt();
        assert!(
            (t.mean_alpha - alpha).abs() / alpha < 0.2,
            "N={n}: alpha {:.3} vs {alpha:.3}",
            t.mean_alpha
        );
        assert_eq!(t.drops, 0, "DCTCP with a deep buffer never drops");
    }
}

#[test]
fn tcp_fills_the_buffer_where_dctcp_holds_the_queue_at_k() {
    let buffer_pkts = 300_000.0 / PKT;
    let t = trace(10, 40, "TCP", "300KB");
    assert!(t.drops > 0, "TCP never overflowed the buffer");
    assert!(
        percentile(&t.q, 0.99) > 0.9 * buffer_pkts,
        "TCP peak queue {} of {buffer_pkts:.0} packets",
        percentile(&t.q, 0.99)
    );
    let tcp_mean = t.q.iter().sum::<f64>() / t.q.len() as f64;
    let d = trace(10, 40, "DCTCP", "300KB");
    let dctcp_mean = d.q.iter().sum::<f64>() / d.q.len() as f64;
    assert_eq!(d.drops, 0);
    assert!(
        tcp_mean > 2.0 * dctcp_mean,
        "TCP mean queue {tcp_mean:.0} vs DCTCP {dctcp_mean:.0} packets"
    );
}

#[test]
fn a_maximum_window_caps_a_flow_at_window_over_rtt() {
    // One 1 MB flow across the leaf-spine (10 Gbps, 1 us links): uncapped it runs at line
    // rate; with a 3-segment window (4 380 B) it sends one window per round trip of a full
    // segment and its ACK: 4 × (1538 B at 10 Gbps + 1 us) + 4 × (78 B + 1 us) = 13.171 us, so
    // 1 MB takes 1e6 / 4380 round trips, 3.007 ms (measured 3.016 ms).
    let flow = "[workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 4, size = \"1MB\" }]\n";
    let free = crate::common::run(
        &crate::common::cfg(&format!("schemes = [\"DCTCP\"]\n{flow}")),
        "DCTCP",
    );
    let capped = crate::common::run(
        &crate::common::cfg(&format!(
            "schemes = [\"DCTCP\"]\n[tcp]\nmax_window = \"4380B\"\n{flow}"
        )),
        "DCTCP",
    );
    let (f, c) = (
        free.records[0].fct_ps.unwrap() as f64,
        capped.records[0].fct_ps.unwrap() as f64,
    );
    let rtt = 4.0 * (1538.0 * 800.0 + 1e6) + 4.0 * (78.0 * 800.0 + 1e6); // ps
    let expect = 1e6 / 4380.0 * rtt;
    assert!(
        (c / expect - 1.0).abs() < 0.01,
        "capped FCT {c} ps, window bound {expect}"
    );
    assert!(c > 3.0 * f, "capped {c} vs free {f}");
    assert_eq!(capped.totals.drops, 0);
}

#[test]
fn swift_holds_the_delay_at_its_target() {
    // Two long Swift flows into one 10 Gbps host port (1 us links; unloaded RTT 6.6 us) with
    // a 30 us target: the queue settles where the RTT meets the target, about
    // (30 − 6.6) us × 10 Gbps ≈ 29 KB, the two flows share the link and the link stays busy
    // (measured over 2-7 ms: mean queue 30.6 KB, shares 0.500 / 0.500).
    let c = cfg("schemes = [\"Swift\"]\n\
         [topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 4\nleaves = 1\nspines = 1\n\
         [swift]\nbase_target = \"30us\"\n\
         [workload]\nkind = \"flows\"\nflows = [\n\
           { src = 1, dst = 0, size = \"30MB\" },\n\
           { src = 2, dst = 0, size = \"30MB\" },\n]\n");
    let mut s = sim(&c, "Swift");
    let port = crate::common::port_between;
    let leaf = s.net.n_hosts;
    let (up1, up2, down) = (port(&s, 1, leaf), port(&s, 2, leaf), port(&s, leaf, 0));
    let _ = s.run_until(SimTime::from_us(2000));
    let t0 = [
        s.net.ports[up1].stats.tx_bytes,
        s.net.ports[up2].stats.tx_bytes,
    ];
    let (mut sum, mut n) = (0u64, 0u64);
    for k in 1..=10_000u64 {
        let _ = s.run_until(SimTime::from_us(2000) + SimTime::from_ns(500 * k));
        sum += s.net.ports[down].total_bytes;
        n += 1;
    }
    let t1 = [
        s.net.ports[up1].stats.tx_bytes,
        s.net.ports[up2].stats.tx_bytes,
    ];
    let cap = 10e9 / 8.0 * 5e-3;
    let share = [(t1[0] - t0[0]) as f64 / cap, (t1[1] - t0[1]) as f64 / cap];
    let mean_q = sum as f64 / n as f64;
    assert!(share[0] + share[1] > 0.95, "utilisation {share:?}");
    assert!((share[0] - share[1]).abs() < 0.1, "unfair {share:?}");
    assert!(
        (15_000.0..=45_000.0).contains(&mean_q),
        "mean queue {mean_q} B"
    );
}

#[test]
fn cubic_keeps_seven_tenths_of_its_window_at_a_loss_where_reno_keeps_half() {
    // One long flow through a 1 Gbps bottleneck with a 30 KB drop-tail buffer: every loss
    // detected by SACK cuts the window, by β = 0.7 for CUBIC (RFC 8312 §4.5) and to half the
    // flight for Reno. Measured: the median ratio of the window after a cut to the window
    // before it, over the cuts that leave more than one segment (a timeout restarts from one
    // segment: another mechanism, §4.7).
    let median_cut = |scheme: &str| {
        let c = cfg(&format!(
            "schemes = [\"{scheme}\"]\n\
             [topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\n\
             host_rate = \"10Gbps\"\nbottleneck_rate = \"1Gbps\"\n\
             [switch.buffer]\nkind = \"static\"\nper_port = \"30KB\"\n\
             [workload]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 1, size = \"20MB\" }}]\n"
        ));
        let mut s = sim(&c, scheme);
        let mut last: Option<f64> = None;
        let mut cuts = Vec::new();
        for k in 1..=16_000u64 {
            let _ = s.run_until(SimTime::from_us(10 * k));
            let Some(w) = s
                .transport
                .sample(dcsim::ids::FlowId(0))
                .and_then(|x| x.cwnd_pkts)
            else {
                continue;
            };
            if let Some(prev) = last
                && w < prev - 0.5
                && prev > 8.0
                && w > 1.5
            {
                cuts.push(w / prev);
            }
            last = Some(w);
        }
        assert!(cuts.len() >= 5, "{scheme}: {} cuts", cuts.len());
        cuts.sort_by(f64::total_cmp);
        cuts[cuts.len() / 2]
    };
    let cubic = median_cut("CUBIC");
    let reno = median_cut("TCP");
    assert!((0.65..=0.75).contains(&cubic), "CUBIC keeps {cubic:.3}");
    assert!((0.42..=0.58).contains(&reno), "Reno keeps {reno:.3}");
}
