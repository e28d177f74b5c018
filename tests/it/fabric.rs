//! Fabric mechanisms end to end: ECMP and spraying, PFC, strict priority with a minimum
//! bandwidth.

use crate::common::{cfg, collect, run, sim};
use dcsim::sim::Sim;
use dcsim::transport::Transport;
use dcsim::units::SimTime;

/// Chi-square statistic of counts against a uniform expectation.
fn chi2(counts: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    let e = n as f64 / counts.len() as f64;
    counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
}

/// Data packets sent by each leaf on each of its spine uplinks, for a 4x4 leaf-spine.
fn uplink_counts(s: &Sim) -> Vec<Vec<u64>> {
    let n_hosts = s.net.n_hosts;
    (0..4)
        .map(|leaf| {
            let node = n_hosts + leaf;
            s.net
                .ports
                .iter()
                .filter(|p| {
                    p.node.idx() == node && s.net.ports[p.peer.idx()].node.idx() >= n_hosts + 4
                })
                .map(|p| p.stats.tx_pkts)
                .collect()
        })
        .collect()
}

fn random_pairs(n: usize, seed: u64) -> String {
    // Deterministic pseudo-random inter-leaf pairs (hosts 0..16, 4 per leaf).
    let mut x = seed;
    let mut s = String::from("[workload]\nkind = \"flows\"\nflows = [\n");
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let src = (x >> 33) % 16;
        let dst = ((src / 4 + 1 + (x >> 40) % 3) % 4) * 4 + (x >> 50) % 4;
        s += &format!(
            "{{ src = {src}, dst = {dst}, size = \"1000B\", start = \"{}ns\" }},\n",
            i * 500
        );
    }
    s + "]\n"
}

#[test]
fn ecmp_spreads_flows_evenly_over_spines() {
    let c = cfg(&format!("schemes = [\"TCP\"]\n{}", random_pairs(4000, 7)));
    let mut s = sim(&c, "TCP");
    let reason = s.run_until(SimTime::MAX).unwrap();
    collect(&s, &c, "TCP", reason);
    for (leaf, counts) in uplink_counts(&s).iter().enumerate() {
        // Each flow is one data packet plus one ACK, each hashed once at the leaf.
        // Chi-square with 3 degrees of freedom: 16.27 is the 0.999 quantile.
        let x = chi2(counts);
        assert!(
            x < 16.27,
            "leaf {leaf}: uplink counts {counts:?}, chi2 {x:.2}"
        );
        assert!(counts.iter().sum::<u64>() > 1500);
    }
}

#[test]
fn ecmp_keeps_a_flow_on_one_path_and_spraying_spreads_it() {
    let flow = "[workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 4, size = \"3MB\" }]\n";
    // ECMP: every data packet of the flow leaves leaf 0 on the same uplink.
    let c = cfg(&format!("schemes = [\"TCP+FH\"]\n{flow}"));
    let mut s = sim(&c, "TCP+FH");
    let reason = s.run_until(SimTime::MAX).unwrap();
    collect(&s, &c, "TCP+FH", reason);
    let leaf0 = &uplink_counts(&s)[0];
    assert_eq!(leaf0.iter().filter(|&&c| c > 0).count(), 1, "{leaf0:?}");
    // Spraying: the packets spread evenly over the four uplinks.
    let c = cfg(&format!("schemes = [\"TCP+spray\"]\n{flow}"));
    let mut s = sim(&c, "TCP+spray");
    let reason = s.run_until(SimTime::MAX).unwrap();
    collect(&s, &c, "TCP+spray", reason);
    let leaf0 = &uplink_counts(&s)[0];
    let x = chi2(leaf0);
    assert!(x < 16.27, "sprayed uplink counts {leaf0:?}, chi2 {x:.2}");
    assert!(leaf0.iter().sum::<u64>() >= 2000);
}

#[test]
fn flowlets_follow_the_inactivity_gap() {
    let flow = "[workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 4, size = \"3MB\" }]\n";
    let run_gap = |gap: &str| {
        let c = cfg(&format!(
            "schemes = [\"TCP+LetFlow\"]\n[flowlet]\ngap = \"{gap}\"\n{flow}"
        ));
        let mut s = sim(&c, "TCP+LetFlow");
        let reason = s.run_until(SimTime::MAX).unwrap();
        let r = collect(&s, &c, "TCP+LetFlow", reason);
        crate::common::assert_conserved(&r);
        assert_eq!(r.totals.finished, 1);
        (uplink_counts(&s)[0].clone(), r)
    };
    // A gap longer than the run: one flowlet, one path (a flow's data and its ACKs each
    // start one flowlet at each switch with several candidates: the two leaves).
    let (leaf0, r) = run_gap("1s");
    assert_eq!(leaf0.iter().filter(|&&c| c > 0).count(), 1, "{leaf0:?}");
    assert_eq!(r.totals.lb_other, 2, "one new flowlet per direction");
    // A gap shorter than a packet's serialization at 10 Gbps (1.23 us): every packet starts a
    // flowlet, so the flow spreads over the uplinks like per-packet spraying.
    let (leaf0, r) = run_gap("1us");
    let x = chi2(&leaf0);
    assert!(x < 16.27, "uplink counts {leaf0:?}, chi2 {x:.2}");
    assert!(leaf0.iter().sum::<u64>() >= 2000);
    assert!(
        r.totals.lb_other > 2000,
        "new flowlets {}",
        r.totals.lb_other
    );
}

#[test]
fn pinned_paths_override_the_load_balancer_and_bad_files_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let pin = tmp.path().join("pins.csv");
    // Leaf-spine 4x4: hosts 0..16, leaves 16..20, spines 20..24. Data of flow 7 (host 0 to
    // host 4) through spine 22, its ACKs through spine 21.
    std::fs::write(
        &pin,
        "flow_id,direction,nodes\n7,data,0 16 22 17 4\n7,ack,4 17 21 16 0\n",
    )
    .unwrap();
    let flows = "[workload]\nkind = \"csv\"\nfile = \"FLOWS\"\n";
    let csv = tmp.path().join("flows.csv");
    std::fs::write(
        &csv,
        "flow_id,src,dst,size_bytes,start_ns\n7,0,4,3000000,0\n",
    )
    .unwrap();
    let base = format!(
        "schemes = [\"TCP\"]\n{}[routing]\npin = \"{}\"\n",
        flows.replace("FLOWS", &csv.display().to_string()),
        pin.display()
    );
    let c = cfg(&base);
    let r = dcsim::experiment::execute(
        &c,
        std::path::Path::new("."),
        &crate::common::plan(&c, "TCP", 1),
    )
    .unwrap();
    crate::common::assert_conserved(&r);
    // Spine 22 is leaf 0's third uplink: every data packet took it.
    let mut s = dcsim::experiment::build_sim(
        &c,
        std::path::Path::new("."),
        &crate::common::plan(&c, "TCP", 1),
    )
    .unwrap();
    let reason = s.run_until(SimTime::MAX).unwrap();
    collect(&s, &c, "TCP", reason);
    let leaf0 = &uplink_counts(&s)[0];
    assert_eq!(leaf0[0] + leaf0[1] + leaf0[3], 0, "{leaf0:?}");
    assert!(leaf0[2] >= 2000);
    // The ACKs came back through spine 21 (leaf 1's second uplink).
    let acks = &uplink_counts(&s)[1];
    assert_eq!(acks[0] + acks[2] + acks[3], 0, "{acks:?}");
    // Bad files: the error names the file and the line.
    for (text, needle) in [
        ("flow,dir\n", "line 1: the header"),
        (
            "flow_id,direction,nodes\n8,data,0 16 22 17 4\n",
            "line 2: the workload has no flow 8",
        ),
        (
            "flow_id,direction,nodes\n7,data,0 16 17 4\n",
            "line 2: nodes 16 and 17 are not linked",
        ),
        (
            "flow_id,direction,nodes\n7,ack,0 16 22 17 4\n",
            "line 2: a ack path of flow 7 runs from host 4",
        ),
        (
            "flow_id,direction,nodes\n7,up,0 16 22 17 4\n",
            "direction `up`",
        ),
        (
            "flow_id,direction,nodes\n7,data,0 16 99 17 4\n",
            "node `99` is not in 0..24",
        ),
    ] {
        std::fs::write(&pin, text).unwrap();
        let e = dcsim::experiment::build_sim(
            &c,
            std::path::Path::new("."),
            &crate::common::plan(&c, "TCP", 1),
        )
        .err()
        .expect("a bad pin file is refused");
        assert!(e.contains("pins.csv") && e.contains(needle), "{e}");
    }
}

const INCAST: &str = "schemes = [\"UDP\"]\n\
    [topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 4\nleaves = 4\nspines = 4\n\
    [workload]\nkind = \"incast\"\nfan_in = 12\nsize = \"500KB\"\nreceiver = 0\n";

#[test]
fn pfc_makes_an_incast_lossless_and_without_it_the_incast_drops() {
    // 12 line-rate senders into one 10 Gbps port through a 1 MB shared buffer: 6 MB arrive.
    let buffer = "[switch.buffer]\nkind = \"shared\"\nsize = \"1MB\"\n";
    let lossless = cfg(&format!("{INCAST}{buffer}[switch.pfc]\nenabled = true\n"));
    let r = run(&lossless, "UDP");
    assert_eq!(r.totals.drops, 0, "a lossless priority dropped packets");
    assert!(r.totals.pfc_pauses > 0, "PFC never paused anyone");
    assert_eq!(r.totals.finished, 12, "every byte of every flow arrives");
    let lossy = cfg(&format!("{INCAST}{buffer}"));
    let r = run(&lossy, "UDP");
    assert!(r.totals.drops > 100, "drops {}", r.totals.drops);
    assert_eq!(r.totals.pfc_pauses, 0);
    assert!(r.totals.finished < 12);
}

#[test]
fn pfc_works_with_a_static_buffer_too() {
    let c = cfg(&format!(
        "{INCAST}[switch.buffer]\nkind = \"static\"\nper_port = \"100KB\"\n[switch.pfc]\nenabled = true\n"
    ));
    let r = run(&c, "UDP");
    assert_eq!(r.totals.drops, 0);
    assert!(r.totals.pfc_pauses > 0);
    assert_eq!(r.totals.finished, 12);
}

#[test]
fn strict_priority_with_min_bandwidth_leaves_the_guaranteed_rate() {
    // Two line-rate UDP senders into host 0: high priority (queue 1) and low priority
    // (queue 2) guaranteed 1 Gbps. Queue 0 is the strict control queue. The shared buffer's
    // per-queue dynamic threshold keeps room for the low queue (with a per-port drop-tail
    // buffer the high queue would take all of it and the low queue would be empty).
    let c = cfg("schemes = [\"UDP\"]\n\
        [topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 4\nleaves = 1\nspines = 1\n\
        [switch]\nqueues = 3\nbuffer = { kind = \"shared\", size = \"3MB\" }\n\
        scheduler = { kind = \"strict_min_bw\", min_rate = [\"1Gbps\", \"1Gbps\", \"1Gbps\"], strict_top = 1 }\n\
        [priorities]\ndata = 1\n\
        [workload]\nkind = \"flows\"\nflows = [\n\
          { src = 1, dst = 0, size = \"100MB\", prio = 1 },\n\
          { src = 2, dst = 0, size = \"100MB\", prio = 2 },\n]\n");
    let mut s = sim(&c, "UDP");
    let rcvd = |s: &Sim| -> Vec<u64> {
        let Transport::Udp(u) = &s.transport else {
            panic!("a UDP run");
        };
        u.flows.iter().map(|f| f.rcvd).collect()
    };
    assert_eq!(s.run_until(SimTime::from_ms(1)), None);
    let a = rcvd(&s);
    assert_eq!(s.run_until(SimTime::from_ms(11)), None);
    let b = rcvd(&s);
    // Wire rate of each: payload × (1460 + 78) / 1460 over 10 ms.
    let wire = |d: u64| d as f64 * 1538.0 / 1460.0 * 8.0 / 0.010;
    let (hi, lo) = (wire(b[0] - a[0]), wire(b[1] - a[1]));
    assert!(
        (lo / 1e9 - 1.0).abs() < 0.05,
        "low priority got {:.3} Gbps",
        lo / 1e9
    );
    assert!(
        (hi / 1e9 - 9.0).abs() < 0.05 * 9.0,
        "high priority got {:.3} Gbps",
        hi / 1e9
    );
    collect(&s, &c, "UDP", dcsim::sim::EndReason::StopTime);
    // And with plain strict priority the low class starves.
    let c2 = cfg(&toml_replace(&c, "strict"));
    let mut s = sim(&c2, "UDP");
    assert_eq!(s.run_until(SimTime::from_ms(1)), None);
    let a = rcvd(&s);
    assert_eq!(s.run_until(SimTime::from_ms(11)), None);
    let b = rcvd(&s);
    assert!(
        wire(b[1] - a[1]) < 0.01e9,
        "strict priority should starve the low class"
    );
}

fn toml_replace(c: &dcsim::config::Config, sched: &str) -> String {
    let mut c = c.clone();
    assert_eq!(sched, "strict");
    c.switch.scheduler = dcsim::net::port::SchedulerConfig::Strict;
    toml::to_string(&c).unwrap()
}

#[test]
fn ecn_thresholds_follow_each_ports_rate() {
    // A fat-tree with 100 Gbps hosts and 400 Gbps fabric links: `[switch] ecn_by_rate` gives
    // the 400 Gbps ports their own thresholds (the HPCC ns-3 simulator's KMIN_MAP), the
    // others keep `ecn`; hosts never mark.
    use dcsim::net::port::EcnConfig;
    let c = crate::common::cfg(
        "schemes = [\"DCQCN\"]\n[topology]\nkind = \"fat_tree\"\nk = 4\n\
         host_rate = \"100Gbps\"\nfabric_rate = \"400Gbps\"\n\
         [switch]\npfc = { enabled = true }\n\
         ecn = { kind = \"red\", kmin = \"400KB\", kmax = \"1600KB\", pmax = 0.2 }\n\
         ecn_by_rate = [{ rate = \"400Gbps\", ecn = { kind = \"red\", kmin = \"1600KB\", kmax = \"6400KB\", pmax = 0.2 } }]\n\
         [workload]\nkind = \"incast\"\nfan_in = 4\nsize = \"100KB\"\n",
    );
    let s = crate::common::sim(&c, "DCQCN");
    let kmin = |e: &EcnConfig| match e {
        EcnConfig::Red { kmin, .. } => Some(kmin.0),
        _ => None,
    };
    let (mut fast, mut slow) = (0, 0);
    for p in &s.net.ports {
        let host = s.net.is_host(p.node);
        match (host, p.rate.bps()) {
            (true, _) => assert_eq!(kmin(&p.ecn), None),
            (false, 400_000_000_000) => {
                assert_eq!(kmin(&p.ecn), Some(1_600_000));
                fast += 1;
            }
            (false, _) => {
                assert_eq!(kmin(&p.ecn), Some(400_000));
                slow += 1;
            }
        }
    }
    assert_eq!(
        (fast, slow),
        (64, 16),
        "fabric ports at 400G, edge-to-host ports at 100G"
    );
    let e = dcsim::config::Config::parse(
        "[switch]\necn_by_rate = [{ rate = \"1Gbps\", ecn = { kind = \"red\", kmin = \"2KB\", kmax = \"1KB\", pmax = 0.1 } }]\n",
        "x.toml",
    )
    .unwrap()
    .validate("x.toml", std::path::Path::new("."))
    .unwrap_err();
    assert_eq!(e.key, "switch.ecn_by_rate[0].ecn");
}
