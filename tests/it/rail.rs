//! Rail-optimised fabrics and multi-homed hosts (`[topology] kind = "rail"`): where packets
//! go, checked against the topology's structure and formulas no one tuned.
//!
//! * A GPU reaches another GPU of its server over the server's switch only, and a GPU on its
//!   own rail in another server over its rail switch only (no spine): the idle-path FCT is
//!   the store-and-forward formula over exactly those links.
//! * Ring all-reduce over two servers with NVLink-like server switches runs at the NIC's data
//!   rate: the two ring steps that leave a server are the bottleneck, and they carry data one
//!   way (their acknowledgements come back over the NIC's other direction).
//! * Dual ToRs and planes: each connection keeps one port; connections spread over them.
//! * Multi-homed runs are deterministic, and their hosts' links may join partitions.
//! * A file of the rail fabric runs exactly as the built-in one.

use crate::common::{cfg, run, sim};
use dcsim::experiment::RunResult;

/// A rail fabric: 2 servers of 4 GPUs, 100 Gbps NICs, 2 spines, and `extra` keys.
fn rail(extra: &str, workload: &str) -> String {
    format!(
        "schemes = [\"SP-RDMA\"]\n[topology]\nkind = \"rail\"\nservers = 2\ngpus = 4\nspines = 2\n\
         nic_rate = \"100Gbps\"\n{extra}\n[workload]\n{workload}"
    )
}

fn flows(list: &[(u32, u32, u64)]) -> String {
    let mut s = String::from("kind = \"flows\"\nflows = [\n");
    for (a, b, size) in list {
        s += &format!("  {{ src = {a}, dst = {b}, size = \"{size}B\" }},\n");
    }
    s + "]\n"
}

/// Bytes sent from node `from` to node `to` (by name).
fn sent(r: &RunResult, from: &str, to: &str) -> u64 {
    r.ports
        .iter()
        .find(|p| p.node == from && p.peer == to)
        .unwrap_or_else(|| panic!("no port {from} -> {to}"))
        .tx_bytes
}

#[test]
fn gpus_of_a_server_talk_over_its_switch_and_rails_stay_below_the_spines() {
    let c = cfg(&rail(
        "nvlink_rate = \"800Gbps\"\nnvlink_delay = \"100ns\"",
        // 100 full packets of 1 KiB each.
        &flows(&[(0, 1, 102_400), (2, 6, 102_400)]),
    ));
    let r = run(&c, "SP-RDMA");
    assert_eq!(r.totals.finished, 2);
    let p = &r.plan.config.packet;
    let (mss, wire) = (p.mss.0, p.mss.0 + p.header.0);
    let n = 102_400 / mss;
    assert_eq!(n * mss, 102_400);
    let ser = |gbps: u64, bytes: u64| bytes * 8 * 1000 / gbps; // ps
    // GPU 0 to GPU 1 of server 0: two 800 Gbps hops of 100 ns; n packets pipelined.
    let want_nv = 2 * (ser(800, wire) + 100_000) + (n - 1) * ser(800, wire);
    // GPU 2 of server 0 to GPU 2 of server 1: NIC, rail switch 2, NIC; 1 us links.
    let want_rail = 2 * (ser(100, wire) + 1_000_000) + (n - 1) * ser(100, wire);
    let fct = |i: usize| r.records[i].rcv_finish_ps.unwrap() - r.records[i].start_ps;
    assert_eq!(fct(0), want_nv, "NVLink transfer");
    assert_eq!(fct(1), want_rail, "same-rail transfer");
    assert!(sent(&r, "host0", "server0") > 100_000);
    assert_eq!(
        sent(&r, "host0", "g0.rail0"),
        0,
        "nothing over host 0's NIC"
    );
    assert!(sent(&r, "host2", "g0.rail2") > 100_000);
    for p in r.ports.iter().filter(|p| p.node.starts_with("spine")) {
        assert_eq!(p.tx_bytes, 0, "{} carried traffic", p.node);
    }
    // Without server switches GPUs of a server meet on the spines (different rails).
    let c = cfg(&rail("", &flows(&[(0, 1, 100_000)])));
    let r = run(&c, "SP-RDMA");
    assert!(
        r.ports
            .iter()
            .any(|p| p.node.starts_with("spine") && p.tx_bytes > 0)
    );
}

#[test]
fn ring_allreduce_across_two_servers_runs_at_the_nic_data_rate() {
    let c = cfg(&rail(
        "nvlink_rate = \"1600Gbps\"",
        "kind = \"collective\"\nop = \"allreduce\"\nsize = \"32MB\"\n",
    ));
    let r = run(&c, "SP-RDMA");
    let p = &r.plan.config.packet;
    let rate = 100e9 * p.mss.0 as f64 / (p.mss.0 + p.header.0) as f64;
    let busbw = r.collectives[0].busbw_gbps.expect("finished") * 1e9;
    eprintln!("busbw {:.3} Gbit/s of {:.3}", busbw / 1e9, rate / 1e9);
    assert!(
        (busbw / rate - 1.0).abs() < 0.01,
        "busbw {busbw} against the NIC data rate {rate}"
    );
}

#[test]
fn dual_tors_and_planes_keep_a_connection_on_one_port_and_spread_connections() {
    for extra in ["dual_tor = true", "planes = 2"] {
        // One connection: all of it over one of host 0's two NIC ports.
        let c = cfg(&rail(extra, &flows(&[(0, 5, 200_000)])));
        let r = run(&c, "SP-RDMA");
        let nic: Vec<u64> = r
            .ports
            .iter()
            .filter(|p| p.node == "host0")
            .map(|p| p.tx_bytes)
            .collect();
        assert_eq!(nic.len(), 2, "{extra}");
        assert!(
            nic.iter().filter(|&&b| b > 0).count() == 1,
            "{extra}: {nic:?}"
        );
        // All-to-all among 8 GPUs: every NIC port of every host sends.
        let c = cfg(&rail(
            extra,
            "kind = \"collective\"\nop = \"alltoall\"\nalgorithm = \"direct\"\nsize = \"8MB\"\nchannels = 4\n",
        ));
        let r = run(&c, "SP-RDMA");
        assert_eq!(r.collectives[0].flows_finished, r.collectives[0].flows);
        let idle: Vec<&str> = r
            .ports
            .iter()
            .filter(|p| p.node.starts_with("host") && p.tx_bytes == 0)
            .map(|p| p.peer.as_str())
            .collect();
        assert!(idle.is_empty(), "{extra}: idle host ports towards {idle:?}");
    }
}

#[test]
fn a_rail_file_runs_exactly_as_the_built_in_rail() {
    let text = rail(
        "nvlink_rate = \"800Gbps\"\ndual_tor = true",
        "kind = \"collective\"\nop = \"allreduce\"\nsize = \"4MB\"\n",
    );
    let built = cfg(&text);
    let spec = built.topology.build();
    let mut file = format!(
        "hosts = {}\nswitches = {}\n",
        spec.n_hosts,
        spec.switches.len()
    );
    for l in &spec.links {
        file += &format!(
            "[[link]]\na = {}\nb = {}\nrate = \"{}\"\ndelay = \"{}\"\n",
            l.a.0, l.b.0, l.rate, l.delay
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rail.toml"), file).unwrap();
    let from_file = text.replace(
        "kind = \"rail\"\nservers = 2\ngpus = 4\nspines = 2\nnic_rate = \"100Gbps\"\nnvlink_rate = \"800Gbps\"\ndual_tor = true",
        &format!("kind = \"file\"\nfile = \"{}\"", dir.path().join("rail.toml").display()),
    );
    assert!(from_file.contains("kind = \"file\""));
    let a = run(&built, "SP-RDMA");
    let b = run(&cfg(&from_file), "SP-RDMA");
    let fcts = |r: &RunResult| -> Vec<Option<u64>> { r.records.iter().map(|x| x.fct_ps).collect() };
    assert_eq!(fcts(&a), fcts(&b));
    assert_eq!(a.collectives[0].time_ps, b.collectives[0].time_ps);
}

#[test]
fn multi_homed_runs_stay_deterministic_and_split_across_their_links() {
    let c = cfg(&rail(
        "nvlink_rate = \"800Gbps\"\nplanes = 2",
        "kind = \"collective\"\nop = \"allreduce\"\nsize = \"2MB\"\n",
    ));
    let a = run(&c, "SP-RDMA");
    let b = run(&c, "SP-RDMA");
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    // A GPU belongs to the partition of its server's switch (its shortest link); its NIC
    // ports' links may join partitions, as links between switches do
    // (tests/it/partition.rs checks the golden rail config's bytes split).
    let s = sim(&c, "SP-RDMA");
    let m = dcsim::sim::window::PartitionMap::new(&s.net, &[], 4, 0).unwrap();
    let cut_host_links = s
        .net
        .ports
        .iter()
        .filter(|p| s.net.is_host(p.node) && m.owner[p.node.idx()] != m.owner[p.peer_node.idx()])
        .count();
    assert!(cut_host_links > 0, "no GPU link joins partitions");
    // GPUs go with their server switches: the links cut are NIC and spine links (1 us).
    assert_eq!(
        m.lookahead,
        dcsim::units::SimTime::from_us(1),
        "the NIC links' delay"
    );
}

#[test]
fn rail_aligned_rings_use_a_nic_per_channel() {
    // 2 servers of 4 GPUs with server switches fast enough never to limit: with rail-aligned
    // rings, channel c leaves and enters servers on rails c − 1 and c, so every NIC carries
    // one channel's data out and another channel's acknowledgements (of what it receives)
    // out. Each channel runs at the NIC's rate less headers and acknowledgements; the bus
    // bandwidth is channels times that.
    for channels in [2, 4] {
        let c = cfg(&rail(
            "nvlink_rate = \"1600Gbps\"",
            &format!(
                "kind = \"collective\"\nop = \"allreduce\"\nsize = \"32MB\"\nchannels = {channels}\ngpus_per_server = 4\n"
            ),
        ));
        let r = run(&c, "SP-RDMA");
        let p = &r.plan.config.packet;
        let ack = r.plan.config.rdma.ack_size.map_or(p.header.0, |b| b.0);
        let rate = 100e9 * p.mss.0 as f64 / (p.mss.0 + p.header.0 + ack) as f64;
        let want = channels as f64 * rate;
        let busbw = r.collectives[0].busbw_gbps.expect("finished") * 1e9;
        eprintln!(
            "{channels} channels: busbw {:.2} Gbit/s, formula {:.2}",
            busbw / 1e9,
            want / 1e9
        );
        assert!(
            (busbw / want - 1.0).abs() < 0.01,
            "{channels}: {busbw} vs {want}"
        );
        // Channel c uses rails c − 1 and c: with a channel per rail, every NIC sends.
        for h in (0..8).filter(|_| channels == 4) {
            let nic = r
                .ports
                .iter()
                .find(|x| x.node == format!("host{h}") && x.peer.contains("rail"))
                .unwrap();
            assert!(nic.tx_bytes > 0, "host {h}'s NIC idle");
        }
        // Nothing crosses a spine: every step between servers stays on its rail.
        for x in r.ports.iter().filter(|x| x.node.starts_with("spine")) {
            assert_eq!(x.tx_bytes, 0, "{channels}: {} carried traffic", x.node);
        }
    }
}

#[test]
fn hierarchical_allreduce_runs_at_its_phases_formula() {
    // 2 servers of 4 GPUs: a reduce-scatter inside each server (3 steps of S/4 per GPU over
    // its switch), an all-reduce of each GPU's S/4 share between the servers on its rail
    // (2 steps of S/8 over its NIC), an all-gather inside each server. Every link carries
    // data one way and the acknowledgements of what comes the other way, so each phase runs
    // at the link's rate less headers and acknowledgements:
    //   T = 2(g−1)/g · S/B_server + 2(m−1)/m · (S/g)/B_nic,
    // with small slices, so that the pipeline's fill is below the tolerance.
    let c = cfg(&rail(
        "nvlink_rate = \"400Gbps\"",
        "kind = \"collective\"\nop = \"allreduce\"\nalgorithm = \"hierarchical\"\n\
         size = \"32MB\"\ngpus_per_server = 4\nslice = \"16KiB\"\n",
    ));
    let r = run(&c, "SP-RDMA");
    let p = &r.plan.config.packet;
    let ack = r.plan.config.rdma.ack_size.map_or(p.header.0, |b| b.0);
    let eff = p.mss.0 as f64 / (p.mss.0 + p.header.0 + ack) as f64;
    let col = &r.collectives[0];
    let s = col.size_bytes as f64 * 8.0;
    let (g, m) = (4.0, 2.0);
    let want =
        2.0 * (g - 1.0) / g * s / (400e9 * eff) + 2.0 * (m - 1.0) / m * (s / g) / (100e9 * eff);
    let t = col.time_ps.expect("finished") as f64 * 1e-12;
    eprintln!("hierarchical: {t} s, formula {want} s");
    assert!(
        (t / want - 1.0).abs() < 0.01,
        "{t} s against {want} s ({:+.3} %)",
        100.0 * (t / want - 1.0)
    );
    // Between servers each GPU's share stays on its rail: no spine carries anything.
    for x in r.ports.iter().filter(|x| x.node.starts_with("spine")) {
        assert_eq!(x.tx_bytes, 0, "{} carried traffic", x.node);
    }
}

#[test]
fn on_tor_wiring_gpus_of_a_server_still_use_its_switch() {
    // Wired by server, two GPUs of a server share their ToR: the ToR and the server switch
    // are both one hop away, and the faster link wins (the ideal FCT counts the same path).
    let c = cfg(&rail(
        "nvlink_rate = \"800Gbps\"\nwiring = \"tor\"\nservers_per_group = 2",
        &flows(&[(0, 1, 102_400), (4, 5, 102_400)]),
    ));
    let r = run(&c, "SP-RDMA");
    for f in &r.records {
        assert_eq!(f.fct_ps, Some(f.ideal_fct_ps), "{f:?}");
    }
    assert_eq!(sent(&r, "host0", "g0.tor0"), 0);
    assert!(sent(&r, "host0", "server0") > 102_400);
}
