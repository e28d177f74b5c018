//! Topologies from files: dcsim's format and the HPCC ns-3 simulator's, routing on arbitrary
//! graphs (unequal tiers, parallel links).

use crate::common::{cfg, run, sim};
use dcsim::topology::TopoSpec;
use dcsim::units::{BitRate, SimTime};
use std::fmt::Write;
use std::path::Path;

/// `spec` in dcsim's topology format, links in order.
fn to_file(spec: &TopoSpec) -> String {
    let mut s = format!(
        "hosts = {}\nswitches = {}\n",
        spec.n_hosts,
        spec.switches.len()
    );
    for l in &spec.links {
        writeln!(
            s,
            "[[link]]\na = {}\nb = {}\nrate = \"{}\"\ndelay = \"{}\"",
            l.a.0, l.b.0, l.rate, l.delay
        )
        .unwrap();
    }
    s
}

const WORK: &str =
    "[workload]\nkind = \"poisson\"\nsize_cdf = \"web_search\"\nload = 0.5\nflows = 300\n";

#[test]
fn a_file_of_the_leaf_spine_runs_exactly_as_the_built_in_one() {
    // The same graph, given as a file with the builder's node and link order: every flow's
    // FCT is identical (the file path runs the same routing, hashing and queues).
    let spec = dcsim::topology::leaf_spine(
        4,
        4,
        4,
        BitRate::from_gbps(10),
        BitRate::from_gbps(10),
        SimTime::from_us(1),
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ls.toml");
    std::fs::write(&file, to_file(&spec)).unwrap();
    let built = cfg(&format!("schemes = [\"DCTCP\"]\n{WORK}"));
    let from_file = cfg(&format!(
        "schemes = [\"DCTCP\"]\n[topology]\nkind = \"file\"\nfile = \"{}\"\n{WORK}",
        file.display()
    ));
    assert_eq!(from_file.topology.n_hosts(), 16);
    assert_eq!(
        from_file.topology.longest_path(),
        built.topology.longest_path()
    );
    let (a, b) = (run(&built, "DCTCP"), run(&from_file, "DCTCP"));
    let fcts = |r: &dcsim::experiment::RunResult| -> Vec<Option<u64>> {
        r.records.iter().map(|x| x.fct_ps).collect()
    };
    assert_eq!(fcts(&a), fcts(&b));
}

#[test]
fn the_hpcc_fat_tree_file_matches_the_built_in_fat_tree() {
    // The validation pack's k = 4 fat-tree in the HPCC format: same hosts, same longest path
    // and base RTT/BDP as dcsim's fat_tree, and a workload runs to completion on it.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/topology/fattree_k4.hpcc_topo.txt"
    );
    let f = cfg(&format!(
        "schemes = [\"DCQCN\"]\n[topology]\nkind = \"file\"\nfile = \"{path}\"\nformat = \"hpcc\"\n\
         [switch]\npfc = {{ enabled = true }}\n{WORK}"
    ));
    let b = cfg(&format!(
        "schemes = [\"DCQCN\"]\n[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate = \"100Gbps\"\n\
         fabric_rate = \"100Gbps\"\n[switch]\npfc = {{ enabled = true }}\n{WORK}"
    ));
    assert_eq!(f.topology.n_hosts(), 16);
    assert_eq!(f.topology.n_switches(), 20);
    assert_eq!(dcsim::lower::max_rtt_bdp(&f), dcsim::lower::max_rtt_bdp(&b));
    let r = run(&f, "DCQCN");
    assert_eq!(r.totals.finished, 300);
    assert_eq!(r.totals.drops, 0);
}

#[test]
fn ecmp_spreads_over_parallel_links_and_unequal_tiers_route_by_hops() {
    // Two leaves joined by four parallel 25 Gbps links and, longer, through a spine: the
    // shortest path is the direct bundle, and ECMP uses all four of its links.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.toml");
    let mut t = String::from("hosts = 8\nswitches = 3\nrate = \"10Gbps\"\ndelay = \"1us\"\n");
    for h in 0..8 {
        writeln!(t, "[[link]]\na = {h}\nb = {}", 8 + h / 4).unwrap();
    }
    t += "[[link]]\na = 8\nb = 9\nrate = \"25Gbps\"\ncount = 4\n";
    t += "[[link]]\na = 8\nb = 10\n[[link]]\na = 9\nb = 10\n";
    std::fs::write(&file, t).unwrap();
    let mut flows = String::from("[workload]\nkind = \"flows\"\nflows = [\n");
    for i in 0..32 {
        writeln!(
            flows,
            "  {{ src = {}, dst = {}, size = \"200KB\", start = \"{}us\" }},",
            i % 4,
            4 + (i / 4) % 4,
            i
        )
        .unwrap();
    }
    flows += "]\n";
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n[topology]\nkind = \"file\"\nfile = \"{}\"\n{flows}",
        file.display()
    ));
    let mut s = sim(&c, "DCTCP");
    let _ = s.run_until(SimTime::MAX);
    let direct: Vec<u64> = (0..s.net.ports.len())
        .filter(|&p| s.net.ports[p].node.idx() == 8 && s.net.ports[p].peer_node.idx() == 9)
        .map(|p| s.net.ports[p].stats.tx_bytes)
        .collect();
    assert_eq!(direct.len(), 4);
    assert!(
        direct.iter().all(|&b| b > 0),
        "idle parallel link: {direct:?}"
    );
    let via_spine = crate::common::port_between(&s, 8, 10);
    assert_eq!(
        s.net.ports[via_spine].stats.tx_bytes, 0,
        "a longer path was used"
    );
}

#[test]
fn a_320_host_topology_with_a_400g_core_runs() {
    // A network shaped like the HPCC paper's: 320 hosts at 100 Gbps, 16 per ToR; 20 ToRs in
    // pods of 4, each ToR with 4 x 400 Gbps up to its pod's 4 aggregation switches; each
    // aggregation switch with 4 x 400 Gbps up to its group of 4 of the 16 cores.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hpcc320.toml");
    let (hosts, tors, aggs, cores) = (320u32, 20u32, 20u32, 16u32);
    let mut t = format!(
        "hosts = {hosts}\nswitches = {}\nrate = \"400Gbps\"\ndelay = \"1us\"\n",
        tors + aggs + cores
    );
    let (tor0, agg0, core0) = (hosts, hosts + tors, hosts + tors + aggs);
    for h in 0..hosts {
        writeln!(
            t,
            "[[link]]\na = {h}\nb = {}\nrate = \"100Gbps\"",
            tor0 + h / 16
        )
        .unwrap();
    }
    for tor in 0..tors {
        let pod = tor / 4;
        for j in 0..4 {
            writeln!(
                t,
                "[[link]]\na = {}\nb = {}",
                tor0 + tor,
                agg0 + pod * 4 + j
            )
            .unwrap();
        }
    }
    for agg in 0..aggs {
        let j = agg % 4;
        for c in 0..4 {
            writeln!(t, "[[link]]\na = {}\nb = {}", agg0 + agg, core0 + j * 4 + c).unwrap();
        }
    }
    std::fs::write(&file, t).unwrap();
    let c = cfg(&format!(
        "schemes = [\"HPCC\"]\n[topology]\nkind = \"file\"\nfile = \"{}\"\n\
         [switch]\npfc = {{ enabled = true }}\n\
         [workload]\nkind = \"poisson\"\nsize_cdf = \"web_search\"\nload = 0.3\nflows = 400\n",
        file.display()
    ));
    assert_eq!(c.topology.n_hosts(), 320);
    assert_eq!(c.topology.host_rate(), BitRate::from_gbps(100));
    assert_eq!(
        c.topology.longest_path().len(),
        6,
        "host-ToR-agg-core-agg-ToR-host"
    );
    let r = run(&c, "HPCC");
    assert_eq!(r.totals.finished, 400);
}

#[test]
fn a_bad_topology_file_is_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.txt");
    std::fs::write(&file, "3 1 2\n0\n1 0 100Gbps 1us 0\n0 2 100Gbps soon 0\n").unwrap();
    let c = dcsim::config::Config::parse(
        &format!(
            "[topology]\nkind = \"file\"\nfile = \"{}\"\nformat = \"hpcc\"\n",
            file.display()
        ),
        "x.toml",
    )
    .unwrap();
    let e = c.validate("x.toml", std::path::Path::new(".")).unwrap_err();
    assert_eq!(e.key, "topology.file");
    assert!(
        e.msg.contains("bad.txt") && e.msg.contains("line 4: delay `soon`"),
        "{e}"
    );
}

#[test]
fn the_hpcc_flow_file_imports_as_the_packs_csv() {
    // The validation pack gives each scenario both as an HPCC flow file (starts at 2 s +
    // start) and in dcsim's CSV: the importer reads the same flows, to the nanosecond.
    let root = env!("CARGO_MANIFEST_DIR");
    for scn in ["websearch", "stagger4"] {
        let txt = format!("{root}/tests/data/hpcc-flows/{scn}.hpcc.txt");
        let csv = format!("{root}/experiments/validation/flows/{scn}.csv");
        let a = dcsim::workload::read_hpcc(
            std::path::Path::new(&txt),
            16,
            &Default::default(),
            SimTime::from_ms(2000),
        )
        .unwrap();
        let b = dcsim::workload::read_csv(std::path::Path::new(&csv), 16).unwrap();
        let key = |f: &dcsim::workload::FlowSpec| (f.id, f.src, f.dst, f.size, f.start);
        assert_eq!(
            a.iter().map(key).collect::<Vec<_>>(),
            b.iter().map(key).collect::<Vec<_>>(),
            "{scn}"
        );
    }
    // And through a config, on the HPCC topology file.
    let c = cfg(&format!(
        "schemes = [\"DCQCN\"]\n[topology]\nkind = \"file\"\n\
         file = \"{root}/tests/data/topology/fattree_k4.hpcc_topo.txt\"\nformat = \"hpcc\"\n\
         [switch]\npfc = {{ enabled = true }}\n\
         [workload]\nkind = \"hpcc\"\nfile = \"{root}/tests/data/hpcc-flows/stagger4.hpcc.txt\"\n"
    ));
    let r = run(&c, "DCQCN");
    assert_eq!(r.totals.finished, 4);
}

#[test]
fn malformed_hpcc_flow_files_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("x\n", "line 1: expected the flow count"),
        (
            "1\n0 1 3 100 1000\n",
            "line 2: expected `src dst pg dport size start_seconds`",
        ),
        (
            "1\n0 99 3 100 1000 2.0\n",
            "line 2: node 99 is not a host: hosts are 0..16",
        ),
        (
            "1\n0 1 3 100 1000 1.5\n",
            "line 2: starts at 1500ms, before start_offset 2s",
        ),
        ("1\n0 1 3 100 1000 2.x\n", "line 2: start `2.x`"),
        (
            "2\n0 1 3 100 1000 2.0\n",
            "1 flow lines, the first line says 2",
        ),
        ("1\n0 1 3 100 -5 2.0\n", "line 2: size `-5`"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("f{i}.txt"));
        std::fs::write(&f, text).unwrap();
        let e = dcsim::workload::read_hpcc(&f, 16, &Default::default(), SimTime::from_ms(2000))
            .unwrap_err();
        assert!(
            e.contains(want) && e.contains(&format!("f{i}.txt")),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn the_fb_hadoop_builtin_is_hpccs_file() {
    // `size_cdf = "fb_hadoop"` is the HPCC ns-3 simulator's FbHdp_distribution.txt, point for
    // point (the validation pack's copy).
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/cdf/FbHdp_distribution.txt"
    ))
    .unwrap();
    let file = dcsim::workload::cdf::Cdf::parse(&text).unwrap();
    let built = dcsim::workload::cdf::Cdf::builtin("fb_hadoop").unwrap();
    assert_eq!(file, built);
    // Piecewise-linear mean, summed by hand over the 19 segments: 120,420.75 B.
    assert!(
        (built.mean() - 120_420.75).abs() < 1e-6,
        "mean {}",
        built.mean()
    );
}

#[test]
fn an_oversubscribed_fat_tree_with_its_own_core_rate() {
    // k = 4 with 4 hosts per edge switch (uplinks 2:1 oversubscribed, 32 hosts) and 40 Gbps
    // aggregation-core links: the graph has the counts the parameters give, and traffic
    // leaving a pod is limited by the edge uplinks.
    let topo = |extra: &str| {
        format!(
            "[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate = \"10Gbps\"\nfabric_rate = \"10Gbps\"\n{extra}"
        )
    };
    let over = cfg(&format!(
        "schemes = [\"DCTCP\"]\n{}[workload]\nkind = \"incast\"\nfan_in = 1\nsize = \"1KB\"\n",
        topo("core_rate = \"40Gbps\"\nhosts_per_edge = 4\n")
    ));
    assert_eq!(over.topology.n_hosts(), 32);
    assert_eq!(over.topology.n_switches(), 20);
    let spec = over.topology.build();
    let core_links = spec
        .links
        .iter()
        .filter(|l| l.rate == BitRate::from_gbps(40))
        .count();
    assert_eq!(core_links, 16, "every aggregation-core link at 40 Gbps");
    assert_eq!(
        over.topology
            .longest_path()
            .iter()
            .map(|h| h.0.bps() / 1_000_000_000)
            .collect::<Vec<_>>(),
        vec![10, 10, 40, 40, 10, 10]
    );
    // The 8 hosts of pod 0 each send 4 MB to a host of pod 2. An edge switch carries its 4
    // hosts' 16 MB over its 2 uplinks of 10 Gbps: at least 6.4 ms, twice what the hosts'
    // own 10 Gbps links allow (3.2 ms). Sprayed packets use both uplinks evenly; measured
    // 8.49 ms (DCTCP loses some time to the reordering spraying causes).
    let mut flows = String::from("[workload]\nkind = \"flows\"\nflows = [\n");
    for h in 0..8 {
        writeln!(
            flows,
            "  {{ src = {h}, dst = {}, size = \"4MB\", start = \"0us\" }},",
            16 + h
        )
        .unwrap();
    }
    flows += "]\n";
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n{}[switch]\nload_balancer = \"spray\"\n{flows}",
        topo("hosts_per_edge = 4\n")
    ));
    let r = run(&c, "DCTCP");
    assert_eq!(r.totals.finished, 8);
    let last = r.records.iter().filter_map(|x| x.fct_ps).max().unwrap() as f64 / 1e12;
    let bound = 4.0 * 4e6 * 8.0 / (2.0 * 10e9);
    eprintln!("last FCT {last:.5} s, uplink bound {bound:.5} s");
    assert!(
        last >= bound,
        "last FCT {last} s below the uplink bound {bound} s"
    );
    assert!(
        last < 1.5 * bound,
        "last FCT {last} s far above the uplink bound {bound} s"
    );
}

#[test]
fn wcmp_weights_next_hops_by_link_rate() {
    // Two leaves joined through a 10 Gbps spine and a 40 Gbps spine (same hop count): ECMP
    // splits flows evenly between the two uplinks, WCMP about 1:4.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("uneq.toml");
    let mut t = String::from("hosts = 16\nswitches = 4\nrate = \"100Gbps\"\ndelay = \"1us\"\n");
    for h in 0..16 {
        writeln!(t, "[[link]]\na = {h}\nb = {}", 16 + h / 8).unwrap();
    }
    for leaf in [16, 17] {
        writeln!(t, "[[link]]\na = {leaf}\nb = 18\nrate = \"10Gbps\"").unwrap();
        writeln!(t, "[[link]]\na = {leaf}\nb = 19\nrate = \"40Gbps\"").unwrap();
    }
    std::fs::write(&file, t).unwrap();
    let mut flows = String::from("[workload]\nkind = \"flows\"\nflows = [\n");
    for i in 0..800 {
        writeln!(
            flows,
            "  {{ src = {}, dst = {}, size = \"2KB\", start = \"{}us\" }},",
            i % 8,
            8 + (i / 8) % 8,
            i
        )
        .unwrap();
    }
    flows += "]\n";
    let share = |scheme: &str| {
        let c = cfg(&format!(
            "schemes = [\"{scheme}\"]\n[topology]\nkind = \"file\"\nfile = \"{}\"\n{flows}",
            file.display()
        ));
        let mut s = sim(&c, scheme);
        let _ = s.run_until(SimTime::MAX);
        let slow = s.net.ports[crate::common::port_between(&s, 16, 18)]
            .stats
            .tx_pkts as f64;
        let fast = s.net.ports[crate::common::port_between(&s, 16, 19)]
            .stats
            .tx_pkts as f64;
        fast / (slow + fast)
    };
    let (ecmp, wcmp) = (share("DCTCP+FH"), share("DCTCP+WCMP"));
    assert!(
        (0.4..=0.6).contains(&ecmp),
        "ECMP share of the 40G uplink {ecmp}"
    );
    assert!(
        (0.72..=0.88).contains(&wcmp),
        "WCMP share of the 40G uplink {wcmp}"
    );
}

#[test]
fn a_switch_can_have_its_own_buffer() {
    // A dumbbell-like file where the left switch has a 20 KB static buffer per port and the
    // rest the config's 1 MB: an 8-to-1 incast through the left switch drops there, and only
    // there; the same incast with the switch at 1 MB drops nothing.
    let dir = tempfile::tempdir().unwrap();
    let file = |own: &str| {
        let f = dir.path().join(format!("b{}.toml", own.len()));
        let mut t = String::from("hosts = 9\nswitches = 2\nrate = \"10Gbps\"\ndelay = \"1us\"\n");
        for h in 0..8 {
            writeln!(t, "[[link]]\na = {h}\nb = 9").unwrap();
        }
        t += "[[link]]\na = 8\nb = 10\n[[link]]\na = 9\nb = 10\n";
        t += own;
        std::fs::write(&f, t).unwrap();
        f
    };
    let run_with = |own: &str| {
        let c = cfg(&format!(
            "schemes = [\"TCP\"]\n[topology]\nkind = \"file\"\nfile = \"{}\"\n\
             [switch.buffer]\nkind = \"static\"\nper_port = \"1MB\"\n\
             [workload]\nkind = \"incast\"\nfan_in = 8\nsize = \"100KB\"\nreceiver = 8\n",
            file(own).display()
        ));
        run(&c, "TCP")
    };
    let small = run_with("[[switch]]\nid = 9\nbuffer = \"20KB\"\n");
    let big = run_with("");
    assert_eq!(small.totals.finished, 8);
    assert!(small.totals.drops > 0, "the 20 KB switch overflows");
    assert_eq!(big.totals.drops, 0);
    let sw: Vec<u64> = small.switches.iter().map(|s| s.drops_lossy).collect();
    assert!(sw[0] > 0 && sw[1] == 0, "drops per switch {sw:?}");
    // A buffer smaller than a packet is refused, naming the switch.
    let c = dcsim::config::Config::parse(
        &format!(
            "[topology]\nkind = \"file\"\nfile = \"{}\"\n[switch.buffer]\nkind = \"static\"\n",
            file("[[switch]]\nid = 10\nbuffer = \"1KB\"\n\n").display()
        ),
        "x.toml",
    )
    .unwrap();
    let e = c.validate("x.toml", Path::new(".")).unwrap_err();
    assert!(e.key == "topology.file" && e.msg.contains("s10"), "{e}");
}

#[test]
fn the_ali_storage_builtin() {
    // Alibaba storage 2019 (HPCC's AliStorage2019.txt): 9 points; its piecewise-linear mean
    // summed by hand: 0.2293·2000 + 0.4628·6000 + 0.114·12000 + 0.0986·24000 + 0.0306·48000
    // + 0.0324·96000 + 0.0076·192000 + 0.0247·1128000 = 40,869.8 B.
    let c = dcsim::workload::cdf::Cdf::builtin("ali_storage").unwrap();
    assert!((c.mean() - 40_869.8).abs() < 1e-6, "mean {}", c.mean());
    assert!((c.cdf_at(8_000.0) - 0.6921).abs() < 1e-12);
}

#[test]
fn the_google_rpc_builtin() {
    // Google RPC 2008 (HPCC's GoogleRPC2008.txt, 843 points): half the RPCs are under 256 B
    // (CDF 49.79 % there), the largest 15.2 MB; the piecewise-linear mean (summed over the
    // file's segments independently of dcsim) is 2,891.6 B.
    let c = dcsim::workload::cdf::Cdf::builtin("google_rpc").unwrap();
    assert_eq!(c.points.len(), 843);
    assert!((c.cdf_at(256.0) - 0.497901).abs() < 1e-9);
    assert_eq!(c.points.last().unwrap().0, 15_158_197.0);
    assert!((c.mean() - 2_891.62).abs() < 0.01, "mean {}", c.mean());
}

#[test]
fn hpcc_flow_files_name_hosts_by_the_topology_files_ids() {
    // Switch first, hosts after it: dcsim numbers the hosts 0..3, the flow file keeps the
    // topology file's ids (it was refused: "does not number its hosts first").
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("topo.txt"),
        "4 1 3\n0\n1 0 10Gbps 1us 0\n2 0 10Gbps 1us 0\n3 0 10Gbps 1us 0\n",
    )
    .unwrap();
    std::fs::write(
        d.join("flows.txt"),
        "2\n1 3 3 100 20000 2.0\n3 2 3 100 30000 2.0001\n",
    )
    .unwrap();
    let text = |flows: &str| {
        format!(
            "schemes = [\"DCTCP\"]\n[topology]\nkind = \"file\"\nfile = \"topo.txt\"\nformat = \"hpcc\"\n\
             [workload]\nkind = \"hpcc\"\nfile = \"{flows}\"\n"
        )
    };
    let c = dcsim::config::Config::parse(&text("flows.txt"), "c.toml").unwrap();
    c.validate("c.toml", d).unwrap();
    let plan = crate::common::plan(&c, "DCTCP", 1);
    let r = dcsim::experiment::execute(&plan.config, d, &plan).unwrap();
    let pairs: Vec<(u32, u32, u64)> = r
        .records
        .iter()
        .map(|f| (f.src, f.dst, f.size_bytes))
        .collect();
    // File ids 1, 2, 3 are dcsim's hosts 0, 1, 2.
    assert_eq!(pairs, [(0, 2, 20000), (2, 1, 30000)]);
    assert_eq!(r.totals.finished, 2);
    // [[failures]] name nodes by the file's ids too: the link between host 1 and switch 0 of
    // the file (dcsim's nodes 0 and 3); with node_ids = "dcsim" that pair has no link.
    let fail = "[[failures]]\nat = \"1us\"\nlink = [1, 0]\naction = \"rate\"\nrate = \"1Gbps\"\n";
    let c =
        dcsim::config::Config::parse(&format!("{}{fail}", text("flows.txt")), "c.toml").unwrap();
    c.validate("c.toml", d).unwrap();
    let plan = crate::common::plan(&c, "DCTCP", 1);
    let slow = dcsim::experiment::execute(&plan.config, d, &plan).unwrap();
    assert!(
        slow.records[0].fct_ps.unwrap() > 5 * r.records[0].fct_ps.unwrap(),
        "host 1's link did not slow to 1 Gbps"
    );
    let dcsim_ids = text("flows.txt").replace(
        "format = \"hpcc\"\n",
        "format = \"hpcc\"\nnode_ids = \"dcsim\"\n",
    );
    let c = dcsim::config::Config::parse(&format!("{dcsim_ids}{fail}"), "c.toml").unwrap();
    let e = c.validate("c.toml", d).unwrap_err().to_string();
    assert!(e.contains("there is no link between nodes 1 and 0"), "{e}");
    // A switch's id is not a host, and the error lists the hosts by the file's ids.
    std::fs::write(d.join("bad.txt"), "1\n1 0 3 100 1000 2.0\n").unwrap();
    let c = dcsim::config::Config::parse(&text("bad.txt"), "c.toml").unwrap();
    let e = c.validate("c.toml", d).unwrap_err().to_string();
    assert!(
        e.contains("line 2: node 0 is not a host of the topology file (its hosts are nodes 1..=3"),
        "{e}"
    );
}
