//! RDMA transport, GPMP and its baselines end to end.

use crate::common::{assert_conserved, cfg, collect, run, sim};
use dcsim::experiment::RunResult;
use dcsim::net::lb::ecmp_index;
use dcsim::net::packet::PROTO_UDP;
use dcsim::sim::Sim;
use dcsim::transport::Transport;
use dcsim::transport::cc::DcqcnParams;
use dcsim::transport::rdma::qp::RcQp;
use dcsim::units::SimTime;

/// 16-host, 4-leaf, 4-spine leaf-spine at 10 Gbps with the GPMP spec's switch defaults.
const FABRIC: &str = "[topology]\nkind = \"leaf_spine\"\n\
    [switch]\nqueues = 3\n\
    ecn = { kind = \"red\", kmin = \"40KB\", kmax = \"160KB\", pmax = 0.2, at = \"dequeue\" }\n\
    buffer = { kind = \"shared\", size = \"3MB\" }\n\
    pfc = { enabled = true, priorities = [1, 2] }\n\
    [packet]\nmss = \"1000B\"\nheader = \"82B\"\n\
    [metrics]\nsize_classes = [\"50KB\"]\n";

fn flows(list: &[(u32, u32, u64, u64)]) -> String {
    let mut s = String::from("[workload]\nkind = \"flows\"\nflows = [\n");
    for (a, b, size, start_us) in list {
        s += &format!(
            "  {{ src = {a}, dst = {b}, size = \"{size}B\", start = \"{start_us}us\" }},\n"
        );
    }
    s + "]\n"
}

#[test]
fn classification_boundary_is_strict_at_50kb() {
    let c = cfg(&format!(
        "schemes = [\"GPMP\"]\n{FABRIC}{}",
        flows(&[(0, 4, 49_999, 0), (0, 4, 50_000, 0), (1, 5, 1, 0)])
    ));
    let s = sim(&c, "GPMP");
    let msgs = s.transport.messages().unwrap();
    assert_eq!(
        msgs.iter().map(|m| m.short).collect::<Vec<_>>(),
        [true, false, true]
    );
    // The time form: 40 us at 10 Gbps is the same 50 KB boundary.
    let c = cfg(&format!(
        "schemes = [\"GPMP\"]\n[gpmp]\nshort_threshold_time = \"40us\"\n{FABRIC}{}",
        flows(&[(0, 4, 49_999, 0), (0, 4, 50_000, 0)])
    ));
    let s = sim(&c, "GPMP");
    let msgs = s.transport.messages().unwrap();
    assert_eq!(
        msgs.iter().map(|m| m.short).collect::<Vec<_>>(),
        [true, false]
    );
}

/// Egress ports of leaf 0 towards the spines, in spine order.
fn uplinks(s: &Sim, leaf: usize) -> Vec<usize> {
    let n = s.net.n_hosts;
    (0..s.net.ports.len())
        .filter(|&p| {
            s.net.ports[p].node.idx() == n + leaf && s.net.ports[p].peer_node.idx() >= n + 4
        })
        .collect()
}

#[test]
fn every_low_priority_qp_lands_on_its_intended_spine() {
    // One 2 MB message from host 0 (leaf 0) to host 4 (leaf 1).
    let c = cfg(&format!(
        "schemes = [\"GPMP\"]\n{FABRIC}{}",
        flows(&[(0, 4, 2_000_000, 0)])
    ));
    let mut s = sim(&c, "GPMP");
    let reason = s.run_until(SimTime::MAX).unwrap();
    let r = collect(&s, &c, "GPMP", reason);
    assert_eq!(r.totals.finished, 1);
    let qps = rc(&s).pair_qps(0, 4).to_vec();
    assert_eq!(
        qps.len(),
        5,
        "one high-priority QP and n = 4 low-priority QPs"
    );
    let salt = s.net.switches[0].lb.salt;
    let off = dcsim::transport::rdma::path_offset(0, 4, 4);
    for (k, q) in qps[1..].iter().enumerate() {
        let f = &s.flows[q.idx()];
        assert_eq!(
            ecmp_index(0, 4, PROTO_UDP, f.sport, f.dport, salt, 4),
            (k + off) % 4,
            "QP {k}"
        );
    }
    // And the data really crossed all four spines, about a quarter each.
    let up = uplinks(&s, 0);
    assert_eq!(up.len(), 4);
    let bytes: Vec<u64> = up.iter().map(|&p| s.net.ports[p].stats.tx_bytes).collect();
    let total: u64 = bytes.iter().sum();
    for (k, b) in bytes.iter().enumerate() {
        let share = *b as f64 / total as f64;
        assert!(
            (share - 0.25).abs() < 0.05,
            "spine {k} carried {share:.3} of the message"
        );
    }
}

#[test]
fn slicing_never_exceeds_the_outstanding_limit() {
    // Several long messages from host 0 to host 4 and a competing sender into host 4.
    let c = cfg(&format!(
        "schemes = [\"GPMP\"]\n[gpmp]\nslice = \"16KB\"\nlimit = \"48KB\"\n{FABRIC}{}",
        flows(&[
            (0, 4, 1_000_000, 0),
            (0, 4, 300_000, 5),
            (0, 4, 700_000, 10),
            (8, 4, 2_000_000, 0),
        ])
    ));
    let mut s = sim(&c, "GPMP");
    let mut t = SimTime::ZERO;
    let mut max_seen = 0;
    let mut samples = 0;
    loop {
        t += SimTime::from_ns(500);
        let done = s.run_until(t);
        for q in rc(&s).pair_qps(0, 4)[1..].iter() {
            {
                let snd = &rc(&s).qps[q.idx()].snd;
                assert!(
                    snd.outstanding <= 48_000,
                    "QP outstanding {} > L",
                    snd.outstanding
                );
                max_seen = max_seen.max(snd.outstanding);
            }
        }
        samples += 1;
        if done.is_some() {
            break;
        }
    }
    assert!(samples > 100);
    assert_eq!(max_seen, 48_000, "the limit is reached (slices of 16 KB)");
    collect(&s, &c, "GPMP", dcsim::sim::EndReason::AllFinished);
}

#[test]
fn gpmp_switch_bundle_is_strict_priority_with_min_bandwidth() {
    let c = cfg(&format!(
        "schemes = [\"GPMP\", \"SP-RDMA\"]\n{FABRIC}{}",
        flows(&[(0, 4, 1000, 0)])
    ));
    let g = c.switch_for(&dcsim::config::Scheme::builtin("GPMP").unwrap());
    match g.scheduler {
        dcsim::net::port::SchedulerConfig::StrictMinBw {
            ref min_rate,
            strict_top,
            ..
        } => {
            assert_eq!(strict_top, 1);
            assert_eq!(min_rate[1].bps(), 1_000_000_000);
            assert_eq!(min_rate[2].bps(), 1_000_000_000);
        }
        ref other => panic!("{other:?}"),
    }
    assert_eq!(g.buffer.alpha_per_prio, vec![0.125, 1.0, 0.125]);
    let sp = c.switch_for(&dcsim::config::Scheme::builtin("SP-RDMA").unwrap());
    assert_eq!(sp.scheduler, dcsim::net::port::SchedulerConfig::Strict);
    assert!(sp.buffer.alpha_per_prio.is_empty());
}

/// A small web-search run at load 0.6: GPMP must beat SP-RDMA on short-message p99 FCT, and
/// no packet of a lossless class may be dropped.
#[test]
fn gpmp_beats_sp_rdma_on_short_message_tail_and_nothing_lossless_drops() {
    let c = cfg(&format!(
        "schemes = [\"GPMP\", \"SP-RDMA\"]\n{FABRIC}\
         [workload]\nkind = \"poisson\"\nload = 0.6\nflows = 400\n"
    ));
    let g = run(&c, "GPMP");
    let sp = run(&c, "SP-RDMA");
    for r in [&g, &sp] {
        assert_eq!(r.totals.drops, 0, "{}: lossless classes dropped", r.plan.id);
        assert_eq!(r.totals.finished, 400);
    }
    let short = |r: &dcsim::experiment::RunResult| {
        r.classes
            .iter()
            .find(|k| k.class == "<50KB")
            .unwrap()
            .clone()
    };
    let (gs, ss) = (short(&g), short(&sp));
    assert!(gs.flows > 100);
    assert!(
        gs.p99_fct_us < ss.p99_fct_us,
        "GPMP short p99 {} us vs SP-RDMA {} us",
        gs.p99_fct_us,
        ss.p99_fct_us
    );
}

#[test]
fn every_rdma_scheme_completes_a_small_workload() {
    let c = cfg(&format!(
        "schemes = [\"SP-RDMA\"]\n{FABRIC}[workload]\nkind = \"poisson\"\nload = 0.5\nflows = 150\n"
    ));
    for scheme in [
        "SP-RDMA",
        "SP-RDMA-perflow",
        "NEM-like",
        "SRM-like",
        "GPMP",
        "GPMP-end-only",
        "GPMP-switch-only",
        "MP-RDMA",
    ] {
        let r = run(&c, scheme);
        assert_eq!(r.totals.finished, 150, "{scheme}");
        assert_eq!(r.totals.drops, 0, "{scheme}");
        for rec in &r.records {
            assert!(
                rec.slowdown.unwrap() >= 0.999,
                "{scheme}: slowdown below 1: {rec:?}"
            );
        }
    }
}

#[test]
fn rdma_idle_path_matches_the_ideal_fct() {
    // One message at a time on an idle fabric, DCQCN off (no marking either way).
    let c = cfg(&format!(
        "schemes = [\"SP-RDMA\"]\n[rdma]\ndcqcn = \"off\"\n{FABRIC}{}",
        flows(&[
            (0, 1, 1, 0),
            (0, 4, 1000, 100),
            (0, 4, 20_000, 200),
            (3, 12, 1_000_000, 400)
        ])
    ));
    let r = run(&c, "SP-RDMA");
    for rec in &r.records {
        assert_eq!(rec.fct_ps, Some(rec.ideal_fct_ps), "{rec:?}");
    }
}

#[test]
fn lossy_go_back_n_recovers_every_message() {
    // PFC off and a small static buffer: an 8-to-1 incast drops; go-back-N with NACKs and a
    // timeout delivers everything anyway.
    let c = cfg("schemes = [\"SP-RDMA\"]\n\
        [topology]\nkind = \"leaf_spine\"\n\
        [switch]\nqueues = 3\nbuffer = { kind = \"static\", per_port = \"60KB\" }\npfc = { enabled = false }\n\
        ecn = { kind = \"red\", kmin = \"40KB\", kmax = \"160KB\", pmax = 0.2, at = \"dequeue\" }\n\
        [rdma]\nrto = \"200us\"\n\
        [packet]\nmss = \"1000B\"\nheader = \"82B\"\n\
        [workload]\nkind = \"incast\"\nfan_in = 8\nsize = \"200KB\"\nreceiver = 0\n");
    let r = run(&c, "SP-RDMA");
    assert!(r.totals.drops > 0, "the incast should overflow the buffer");
    assert_eq!(r.totals.finished, 8);
    assert!(r.totals.nacks > 0);
    assert!(r.totals.retransmits > 0);
    for rec in &r.records {
        assert!(rec.rcv_finish_ps.is_some());
    }
}

#[test]
fn irn_recovers_a_lossy_incast_resending_little_more_than_it_lost() {
    // PFC off and a small static buffer: a 16-to-1 incast of 200 KB messages drops. IRN (DCQCN
    // with selective repeat) delivers everything and resends few packets beyond the ones it
    // lost; go-back-N (DCQCN with the same timeout) resends everything behind each hole.
    let c = cfg("schemes = [\"IRN\"]\n\
        [topology]\nkind = \"leaf_spine\"\n\
        [switch]\nqueues = 3\nbuffer = { kind = \"static\", per_port = \"60KB\" }\npfc = { enabled = false }\n\
        ecn = { kind = \"red\", kmin = \"40KB\", kmax = \"160KB\", pmax = 0.2, at = \"dequeue\" }\n\
        [rdma]\nrto = \"320us\"\n\
        [packet]\nmss = \"1000B\"\nheader = \"82B\"\n\
        [workload]\nkind = \"incast\"\nfan_in = 15\nsize = \"200KB\"\nreceiver = 0\n");
    let irn = run(&c, "IRN");
    let gbn = run(&c, "DCQCN");
    for (name, r) in [("IRN", &irn), ("go-back-N", &gbn)] {
        assert!(
            r.totals.drops > 0,
            "{name}: the incast should overflow the buffer"
        );
        assert_eq!(r.totals.finished, 15, "{name}");
        for rec in &r.records {
            assert!(rec.rcv_finish_ps.is_some(), "{name}: {rec:?}");
        }
    }
    eprintln!(
        "IRN: drops {} retransmits {} timeouts {}; go-back-N: drops {} retransmits {} timeouts {}",
        irn.totals.drops,
        irn.totals.retransmits,
        irn.totals.timeouts,
        gbn.totals.drops,
        gbn.totals.retransmits,
        gbn.totals.timeouts
    );
    let last = |r: &RunResult| r.records.iter().filter_map(|x| x.fct_ps).max();
    eprintln!(
        "last FCT: IRN {:?} ps, go-back-N {:?} ps",
        last(&irn),
        last(&gbn)
    );
    assert!(irn.totals.retransmits <= irn.totals.drops * 2);
    assert!(gbn.totals.retransmits > 10 * irn.totals.retransmits);
    assert!(last(&irn) < last(&gbn));
}

#[test]
fn mp_rdma_spreads_one_connection_over_paths() {
    let c = cfg(&format!(
        "schemes = [\"MP-RDMA\"]\n{FABRIC}{}",
        flows(&[(0, 4, 3_000_000, 0)])
    ));
    let mut s = sim(&c, "MP-RDMA");
    let reason = s.run_until(SimTime::MAX).unwrap();
    let r = collect(&s, &c, "MP-RDMA", reason);
    assert_eq!(r.totals.finished, 1);
    let used = uplinks(&s, 0)
        .iter()
        .filter(|&&p| s.net.ports[p].stats.tx_bytes > 100_000)
        .count();
    assert!(used >= 3, "MP-RDMA used {used} of 4 spines");
}

/// With fewer low-priority QPs than spines, pairs still spread over every spine.
#[test]
fn fewer_paths_than_spines_still_use_every_spine() {
    let mut list = Vec::new();
    for src in 0..4u32 {
        for dst in 4..16u32 {
            list.push((src, dst, 200_000u64, (src * 16 + dst) as u64));
        }
    }
    let c = cfg(&format!(
        "schemes = [\"GPMP\"]\n[gpmp]\npaths = 1\n{FABRIC}{}",
        flows(&list)
    ));
    let mut s = sim(&c, "GPMP");
    let reason = s.run_until(SimTime::MAX).unwrap();
    collect(&s, &c, "GPMP", reason);
    let used = uplinks(&s, 0)
        .iter()
        .filter(|&&p| s.net.ports[p].stats.tx_bytes > 400_000)
        .count();
    assert_eq!(
        used, 4,
        "48 pairs with one low-priority QP each use all four spines"
    );
}

/// The RDMA transport of a queue-pair run.
fn rc(s: &Sim) -> &dcsim::transport::rdma::Rdma<RcQp<DcqcnParams>> {
    match &s.transport {
        Transport::Dcqcn(r) => r,
        _ => panic!("a queue-pair RDMA run"),
    }
}

/// Two long messages into one host on a single 100 Gbps switch; returns, over the window
/// [100 us, 600 us], each sender's share of the bottleneck's capacity and the bottleneck queue's
/// mean and peak in bytes.
fn two_to_one(scheme: &str, extra: &str) -> ([f64; 2], f64, u64) {
    let c = cfg(&format!(
        "schemes = [\"{scheme}\"]\n\
         [topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 4\nleaves = 1\nspines = 1\n\
         host_rate = \"100Gbps\"\nfabric_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
         [switch]\nqueues = 3\nbuffer = {{ kind = \"shared\", size = \"32MiB\" }}\n\
         pfc = {{ enabled = true }}\n{extra}\
         [packet]\nmss = \"1000B\"\nheader = \"90B\"\n[rdma]\nack_size = \"88B\"\n{}",
        flows(&[(1, 0, 20_000_000, 0), (2, 0, 20_000_000, 0)])
    ));
    let mut s = sim(&c, scheme);
    let port = crate::common::port_between;
    let leaf = s.net.n_hosts;
    let (up1, up2, down) = (port(&s, 1, leaf), port(&s, 2, leaf), port(&s, leaf, 0));
    let _ = s.run_until(SimTime::from_us(100));
    let tx = |s: &Sim| {
        [
            s.net.ports[up1].stats.tx_bytes,
            s.net.ports[up2].stats.tx_bytes,
        ]
    };
    let t0 = tx(&s);
    let (mut sum, mut peak, mut n) = (0u64, 0u64, 0u64);
    for k in 1..=500 {
        let _ = s.run_until(SimTime::from_us(100 + k));
        let q = s.net.ports[down].total_bytes;
        sum += q;
        peak = peak.max(q);
        n += 1;
    }
    let t1 = tx(&s);
    let cap = 100e9 / 8.0 * 500e-6;
    (
        [(t1[0] - t0[0]) as f64 / cap, (t1[1] - t0[1]) as f64 / cap],
        sum as f64 / n as f64,
        peak,
    )
}

#[test]
fn hpcc_two_to_one_converges_to_fair_share_with_an_empty_queue() {
    // HPCC (eta 0.95): within a few RTTs (about 4 us here) each sender gets about half of the
    // 95 % target and the bottleneck queue stays near zero (measured over 100-600 us: shares
    // 0.470 / 0.481, queue mean 240 B, peak one packet).
    let (share, mean_q, peak_q) = two_to_one("HPCC", "");
    assert!(
        (share[0] - share[1]).abs() < 0.03,
        "unfair: {share:?} of the bottleneck"
    );
    let total = share[0] + share[1];
    assert!((0.90..=1.0).contains(&total), "utilisation {total}");
    assert!(mean_q < 2_000.0, "mean queue {mean_q} B");
    assert!(peak_q < 20_000, "peak queue {peak_q} B");
}

#[test]
fn powertcp_two_to_one_settles_at_its_analytic_equilibrium_queue() {
    // PowerTCP's fixed point (W = W/Γ + β with the link full, Γ = (q + B·τ)/(B·τ)) for N flows
    // whose windows fill the pipe and the queue (N·W = B·τ + q) is q = N·β: two senders with
    // β = 10 Gb/s × τ hold about 2β in the bottleneck queue, share it fairly and keep it full
    // (measured over 100-600 us: shares 0.500 / 0.500, queue mean 11.7 KB against 2β = 10.4 KB:
    // the real round trip is shorter than τ, the network's longest, so the windows leave a
    // little more in the queue; peak 14.2 KB).
    let c = cfg(
        "[topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 4\nleaves = 1\nspines = 1\n\
         host_rate = \"100Gbps\"\nfabric_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
         [packet]\nmss = \"1000B\"\nheader = \"90B\"\n",
    );
    let (tau, _) = dcsim::lower::max_rtt_bdp(&c);
    let beta = 10e9 / 8.0 * tau.as_secs_f64();
    let (share, mean_q, peak_q) = two_to_one("PowerTCP", "[powertcp]\nrate_ai = \"10Gbps\"\n");
    eprintln!(
        "PowerTCP: shares {share:?}, queue mean {mean_q:.0} B peak {peak_q} B, 2β = {:.0} B",
        2.0 * beta
    );
    assert!((share[0] - share[1]).abs() < 0.03, "unfair: {share:?}");
    let total = share[0] + share[1];
    assert!(total > 0.97, "utilisation {total}");
    assert!(
        (mean_q - 2.0 * beta).abs() < 0.25 * 2.0 * beta,
        "mean queue {mean_q} B vs 2β = {} B",
        2.0 * beta
    );
}

#[test]
fn dctcp_rdma_two_to_one_shares_and_holds_the_queue_near_k() {
    // Rate-based DCTCP with step marking at K = 30 KB: fair shares, a full link, and a queue
    // held around K (measured: mean 28 KB, peak 33 KB). Without marking the BDP windows alone
    // would park about 61 KB in the queue (two windows of 52 KB over a 52 KB pipe).
    let (share, mean_q, peak_q) = two_to_one(
        "DCTCP-RDMA",
        "ecn = { kind = \"red\", kmin = \"30KB\", kmax = \"30KB\", pmax = 1.0, at = \"dequeue\" }\n",
    );
    assert!((share[0] - share[1]).abs() < 0.05, "unfair: {share:?}");
    let total = share[0] + share[1];
    assert!(total > 0.95, "utilisation {total}");
    assert!(
        (15_000.0..=45_000.0).contains(&mean_q),
        "mean queue {mean_q} B"
    );
    assert!(peak_q < 60_000, "peak queue {peak_q} B");
}

#[test]
fn timely_builds_the_queue_to_t_low_and_keeps_it_below_t_high() {
    // TIMELY increases whenever the RTT is below T_low (50 us) and cuts hard above T_high
    // (500 us): two senders into one 100 Gbps port must build a queue worth at least
    // T_low − base RTT (about 46 us, 570 KB) and never reach T_high (6.25 MB). Measured over
    // 100-600 us: peak 1.66 MB, mean 329 KB, utilisation 0.33 — the gradient cuts (β = 0.8,
    // often to the 1 Gb/s floor) and +100 Mb/s steps leave the link idle most of the time
    // with these parameters.
    let (share, _, peak_q) = two_to_one("TIMELY", "");
    assert!(
        peak_q > 570_000,
        "peak queue {peak_q} B never reached T_low"
    );
    assert!(peak_q < 6_250_000, "peak queue {peak_q} B beyond T_high");
    assert!(
        share[0] > 0.05 && share[1] > 0.05,
        "a sender starved: {share:?}"
    );
}

#[test]
fn hpcc_frees_every_telemetry_slot() {
    // An 8-to-1 incast with HPCC to completion: every data packet's telemetry slot comes back
    // (with its ACK), none leaks; runs without telemetry allocate none.
    let c = cfg(&format!(
        "schemes = [\"HPCC\"]\n{FABRIC}[workload]\nkind = \"incast\"\nfan_in = 8\nsize = \"500KB\"\nreceiver = 0\n"
    ));
    let mut s = sim(&c, "HPCC");
    let reason = s.run_until(SimTime::MAX).unwrap();
    let r = collect(&s, &c, "HPCC", reason);
    assert_eq!(r.totals.finished, 8);
    assert_eq!(s.telemetry_live(), Some(0));
    let s = sim(&c, "DCQCN");
    assert_eq!(s.telemetry_live(), None);
}

#[test]
fn a_host_pair_with_more_queue_pairs_than_source_ports_reuses_them() {
    // 16,400 one-packet messages from host 0 to host 1, a queue pair each: more than the
    // 16,384 ephemeral source ports. Until every port is taken, a pair's queue pairs take
    // distinct ones; then ports are reused (the run used to search for a free one forever).
    let n = 16_400u32;
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::from("flow_id,src,dst,size_bytes,start_ns\n");
    for i in 0..n {
        text += &format!("{i},0,1,1000,{}\n", i * 2000);
    }
    let file = tmp.path().join("pair.csv");
    std::fs::write(&file, text).unwrap();
    let c = cfg(&format!(
        "schemes = [\"DCQCN\"]\n[rdma]\nrto = \"1ms\"\n{FABRIC}[workload]\nkind = \"csv\"\nfile = \"{}\"\n",
        file.display()
    ));
    let mut s = sim(&c, "DCQCN");
    let reason = s.run();
    let sports: Vec<u16> = s.flows.iter().map(|f| f.sport).collect();
    assert_eq!(sports.len(), n as usize, "a queue pair per message");
    let first: std::collections::BTreeSet<u16> = sports[..16_384].iter().copied().collect();
    assert_eq!(first.len(), 16_384, "the first 16,384 take distinct ports");
    assert!(sports.iter().all(|&p| p >= 49_152));
    let r = collect(&s, &c, "DCQCN", reason);
    assert_eq!(r.totals.finished, n as u64);
}

#[test]
fn every_lost_packet_of_a_message_is_in_its_row() {
    // Lossy fabric links (1 % each way) lose data packets and their ACKs and NACKs alike;
    // each lost packet is in the `drops` of its message's row, so the rows add up to the
    // run's total for every transport (they covered about half for HPCC and IRN before: the
    // replies were left out). With a link failure too, for DCQCN.
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/runs/lossy-leaf-spine.toml");
    let base = format!(
        "[topology]\nkind = \"file\"\nfile = \"{}\"\n[switch]\nqueues = 3\n\
         [packet]\nmss = \"1000B\"\n[rdma]\nrto = \"100us\"\n\
         [workload]\nkind = \"poisson\"\nsize_cdf = \"uniform(2KB, 40KB)\"\nload = 0.4\nflows = 300\n",
        file.display()
    );
    let fail = "[[failures]]\nat = \"200us\"\nlink = [8, 12]\naction = \"down\"\n";
    for (scheme, extra) in [
        ("DCQCN", ""),
        ("HPCC", ""),
        ("IRN", ""),
        ("MP-RDMA", ""),
        ("GPMP", ""),
        ("SP-RDMA", ""),
        ("DCTCP", ""),
        ("DCQCN", fail),
    ] {
        let c = cfg(&format!("schemes = [\"{scheme}\"]\n{base}{extra}"));
        let r = run(&c, scheme);
        assert!(r.totals.drops > 50, "{scheme}: {} drops", r.totals.drops);
        crate::retire::assert_drops_add_up(&r, scheme);
        // Every message recovers (MP-RDMA's used to time out for ever once the ACK of a
        // packet the receiver held was lost: a duplicate went unanswered).
        assert_eq!(r.totals.finished, 300, "{scheme}");
    }
}

#[test]
fn rdma_runs_keep_the_workloads_tags() {
    // Background Poisson traffic and a tagged incast: every transport's records carry the
    // tags, and its summary has the tag classes (RDMA runs labelled every message `flow`, so
    // a `tag:query` figure found no data); `end_when` ends an RDMA run too.
    let mix = "[workload]\nkind = \"mix\"\n\
               [[workload.parts]]\nkind = \"poisson\"\nflows = 60\nload = 0.3\ntag = \"background\"\n\
               [[workload.parts]]\nkind = \"incast\"\nfan_in = 6\nsize = \"20KB\"\nreceiver = 2\nbursts = 3\ntag = \"query\"\n";
    let tags = |r: &dcsim::experiment::RunResult| {
        let mut t: Vec<(u32, &str)> = r.records.iter().map(|x| (x.flow_id, x.tag)).collect();
        t.sort();
        t
    };
    let tcp = run(&cfg(&format!("schemes = [\"DCTCP\"]\n{mix}")), "DCTCP");
    assert!(tcp.records.iter().any(|x| x.tag == "query"));
    for scheme in ["DCQCN", "HPCC", "GPMP"] {
        let c = cfg(&format!(
            "schemes = [\"{scheme}\"]\n[rdma]\nrto = \"1ms\"\n{mix}"
        ));
        let r = run(&c, scheme);
        assert_eq!(tags(&r), tags(&tcp), "{scheme}");
        for class in ["tag:query", "tag:background"] {
            assert!(
                r.classes.iter().any(|k| k.class == class && k.flows > 0),
                "{scheme}: no {class} class"
            );
        }
        // Ends once the queries are done: no new message starts after.
        let c = cfg(&format!(
            "end_when = \"query\"\nschemes = [\"{scheme}\"]\n[rdma]\nrto = \"1ms\"\n{mix}"
        ));
        let r = run(&c, scheme);
        assert_eq!(r.end_reason, dcsim::sim::EndReason::TagFinished, "{scheme}");
        assert!(
            r.records
                .iter()
                .filter(|x| x.tag == "query")
                .all(|x| x.fct_ps.is_some()),
            "{scheme}"
        );
    }
}

#[test]
fn queue_pairs_take_load_balancer_suffixes_and_round_robin_on_idle_paths_is_exact() {
    // Round robin over the 4 spines of an idle fabric (equal paths, fabric as fast as the
    // hosts): every packet crosses the same rates and delays as under ECMP and nothing queues,
    // so the message arrives in order and finishes at the same picosecond.
    let c = cfg(&format!(
        "schemes = [\"DCQCN\", \"DCQCN+RR\"]\n{FABRIC}[rdma]\nrto = \"1ms\"\n{}",
        flows(&[(0, 4, 2_000_000, 0)])
    ));
    let ecmp = run(&c, "DCQCN");
    let rr = run(&c, "DCQCN+RR");
    assert_eq!((rr.totals.nacks, rr.totals.retransmits), (0, 0));
    assert!(rr.totals.lb_other > 0, "round robin decided nothing");
    assert_eq!(rr.records[0].fct_ps, ecmp.records[0].fct_ps);
    assert_eq!(rr.records[0].fct_ps, Some(rr.records[0].ideal_fct_ps));
}

#[test]
fn sprayed_queue_pairs_see_reordering_go_back_n_resends_irn_keeps() {
    // Four leaf-0 hosts send to four leaf-1 hosts, each packet on a random spine: packets of
    // one queue pair overtake each other. Go-back-N drops every packet behind a hole and
    // resends from it; IRN keeps them and resends only what it NACKed.
    let c = cfg(&format!(
        "schemes = [\"DCQCN+spray\"]\n{FABRIC}[rdma]\nrto = \"1ms\"\n{}",
        flows(&[
            (0, 4, 1_000_000, 0),
            (1, 5, 1_000_000, 0),
            (2, 6, 1_000_000, 0),
            (3, 7, 1_000_000, 0)
        ])
    ));
    let gbn = run(&c, "DCQCN+spray");
    let irn = run(&c, "IRN+spray");
    for (name, r) in [("go-back-N", &gbn), ("IRN", &irn)] {
        assert_conserved(r);
        assert_eq!(r.totals.finished, 4, "{name}");
        assert_eq!(r.totals.drops, 0, "{name}: lossless fabric");
        assert!(r.totals.nacks > 0, "{name}: no reordering seen");
    }
    eprintln!(
        "go-back-N: nacks {} retransmits {}; IRN: nacks {} retransmits {}",
        gbn.totals.nacks, gbn.totals.retransmits, irn.totals.nacks, irn.totals.retransmits
    );
    // IRN resends at most one packet per NACK; go-back-N resends a window behind each.
    assert!(irn.totals.retransmits <= irn.totals.nacks);
    assert!(gbn.totals.retransmits > 2 * irn.totals.retransmits);
    let last = |r: &RunResult| r.records.iter().filter_map(|x| x.fct_ps).max();
    assert!(last(&irn) < last(&gbn));
}

#[test]
fn schemes_that_bind_paths_or_strand_messages_refuse_reordering_load_balancers() {
    for s in ["GPMP+spray", "MP-RDMA+LetFlow"] {
        let e = checked(&format!(
            "schemes = [\"{s}\"]\n{FABRIC}{}",
            flows(&[(0, 4, 1000, 0)])
        ))
        .unwrap_err();
        assert!(e.contains("takes no suffix"), "{s}: {e}");
    }
    // Go-back-N without a timeout would wait forever for a NACK it had already sent.
    let e = checked(&format!(
        "schemes = [\"DCQCN+spray\"]\n{FABRIC}{}",
        flows(&[(0, 4, 1000, 0)])
    ))
    .unwrap_err();
    assert!(e.contains("rdma.rto") && e.contains("reorders"), "{e}");
    for ok in ["IRN+spray", "IRN+LetFlow", "SP-RDMA+WCMP"] {
        checked(&format!(
            "schemes = [\"{ok}\"]\n{FABRIC}{}",
            flows(&[(0, 4, 1000, 0)])
        ))
        .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

/// Parses and validates `toml`: the error as text.
fn checked(toml: &str) -> Result<(), String> {
    dcsim::config::Config::parse(toml, "x.toml")
        .and_then(|c| c.validate("x.toml", std::path::Path::new(".")))
        .map_err(|e| e.to_string())
}
