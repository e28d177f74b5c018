//! `[[failures]]`: links and switches going down and up, rate degradation, route
//! convergence; byte conservation throughout (checked by `run`).

use crate::common::{cfg, run, sim};
use dcsim::units::SimTime;

/// One 20 MB DCTCP flow from host 0 (leaf 16) to host 15 (leaf 19) on the 4x4 leaf-spine;
/// `extra` adds failures.
fn one_flow(extra: &str) -> String {
    format!(
        "schemes = [\"DCTCP\"]\n[tcp]\nrto_min = \"1ms\"\n{extra}\
         [workload]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 15, size = \"20MB\", start = \"0us\" }}]\n"
    )
}

/// The spine (node id) carrying the flow's data at 100 us.
fn spine_in_use() -> u32 {
    let c = cfg(&one_flow(""));
    let mut s = sim(&c, "DCTCP");
    let _ = s.run_until(SimTime::from_us(100));
    (20..24)
        .find(|&sp| {
            let p = crate::common::port_between(&s, 16, sp as usize);
            s.net.ports[p].stats.tx_bytes > 100_000
        })
        .expect("a spine carries the flow")
}

#[test]
fn a_flow_survives_its_link_failing_when_other_paths_exist() {
    let spine = spine_in_use();
    let base = run(&cfg(&one_flow("")), "DCTCP");
    let c = cfg(&one_flow(&format!(
        "[[failures]]\nat = \"1ms\"\nlink = [16, {spine}]\naction = \"down\"\n"
    )));
    let r = run(&c, "DCTCP");
    assert_eq!(r.totals.finished, 1, "the flow rerouted and finished");
    assert!(
        r.totals.drops > 0,
        "the failed link's queue and wire were lost"
    );
    let (f0, f1) = (
        base.records[0].fct_ps.unwrap(),
        r.records[0].fct_ps.unwrap(),
    );
    assert!(f1 > f0, "the loss cost time: {f0} -> {f1}");
    // Slower convergence blackholes more packets (the routes keep pointing at the link).
    let slow = cfg(&one_flow(&format!(
        "[routing]\nconvergence = \"500us\"\n\
         [[failures]]\nat = \"1ms\"\nlink = [16, {spine}]\naction = \"down\"\n"
    )));
    let rs = run(&slow, "DCTCP");
    assert_eq!(rs.totals.finished, 1);
    assert!(
        rs.totals.drops > r.totals.drops,
        "{} vs {}",
        rs.totals.drops,
        r.totals.drops
    );
}

#[test]
fn a_switch_down_and_up_and_a_cut_host_link() {
    // Host 0's own link goes down at 1 ms and comes back at 3 ms: nothing can reroute, the
    // flow stalls, then finishes after the link returns (TCP's timeout resends).
    let c = cfg(&one_flow(
        "[[failures]]\nat = \"1ms\"\nlink = [0, 16]\naction = \"down\"\n\
         [[failures]]\nat = \"3ms\"\nlink = [0, 16]\naction = \"up\"\n",
    ));
    let r = run(&c, "DCTCP");
    assert_eq!(r.totals.finished, 1);
    assert!(r.records[0].fct_ps.unwrap() > SimTime::from_ms(3).0);
    assert!(r.totals.timeouts > 0);
    // Every spine but one down: all traffic squeezes through the last.
    let c = cfg(&one_flow(
        "[[failures]]\nat = \"500us\"\nswitch = 20\naction = \"down\"\n\
         [[failures]]\nat = \"500us\"\nswitch = 21\naction = \"down\"\n\
         [[failures]]\nat = \"500us\"\nswitch = 22\naction = \"down\"\n\
         [[failures]]\nat = \"5ms\"\nswitch = 20\naction = \"up\"\n",
    ));
    let r = run(&c, "DCTCP");
    assert_eq!(r.totals.finished, 1);
}

#[test]
fn a_degraded_link_serializes_at_its_new_rate() {
    // Dumbbell, one flow across the 10 Gbps bottleneck degraded to 2.5 Gbps from the start:
    // the flow runs at about a quarter of the rate (the window fills a 2.5 Gbps pipe).
    let flow = "[workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 1, size = \"10MB\", start = \"10us\" }]\n";
    let topo = "[topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\n";
    let base = run(
        &cfg(&format!("schemes = [\"DCTCP\"]\n{topo}{flow}")),
        "DCTCP",
    );
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n{topo}[[failures]]\nat = \"0us\"\nlink = [2, 3]\naction = \"rate\"\nrate = \"2.5Gbps\"\n{flow}"
    ));
    let r = run(&c, "DCTCP");
    let ratio = r.records[0].fct_ps.unwrap() as f64 / base.records[0].fct_ps.unwrap() as f64;
    assert!((3.7..=4.1).contains(&ratio), "FCT ratio {ratio}");
}

#[test]
fn bad_failures_are_refused_naming_the_entry() {
    let bad = [
        (
            "[[failures]]\nat = \"1ms\"\nlink = [0, 1]\naction = \"down\"\n",
            "failures[0]",
            "no link between nodes 0 and 1",
        ),
        (
            "[[failures]]\nat = \"1ms\"\nswitch = 3\naction = \"down\"\n",
            "failures[0]",
            "switches are nodes 16..24",
        ),
        (
            "[[failures]]\nat = \"1ms\"\nlink = [16, 20]\naction = \"rate\"\n",
            "failures[0].rate",
            "needs a `rate`",
        ),
        (
            "[[failures]]\nat = \"1ms\"\naction = \"down\"\n",
            "failures[0]",
            "either `link",
        ),
        (
            "[[failures]]\nat = \"1ms\"\nlink = [16, 20]\nparallel = 1\naction = \"down\"\n",
            "failures[0]",
            "have 1 link(s)",
        ),
    ];
    for (extra, key, want) in bad {
        let c = dcsim::config::Config::parse(&one_flow(extra), "x.toml").unwrap();
        let e = c.validate("x.toml", std::path::Path::new(".")).unwrap_err();
        assert_eq!(e.key, key, "{extra}");
        assert!(e.msg.contains(want), "{extra}: {e}");
    }
}

#[test]
fn a_lossy_link_loses_its_share_of_packets_and_flows_recover() {
    // Two switches joined by a link that loses 1 % of packets each way (a topology file):
    // 8 TCP flows of 1 MB cross it; every flow finishes, and the losses (data and ACKs)
    // are about 1 % of the packets that crossed.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lossy.toml");
    let mut t = String::from("hosts = 16\nswitches = 2\nrate = \"10Gbps\"\ndelay = \"1us\"\n");
    for h in 0..16 {
        t += &format!("[[link]]\na = {h}\nb = {}\n", 16 + h / 8);
    }
    t += "[[link]]\na = 16\nb = 17\nloss = 0.01\n";
    std::fs::write(&file, t).unwrap();
    let mut flows = String::from("[workload]\nkind = \"flows\"\nflows = [\n");
    for i in 0..8 {
        flows += &format!(
            "  {{ src = {i}, dst = {}, size = \"1MB\", start = \"{}us\" }},\n",
            8 + i,
            i * 10
        );
    }
    flows += "]\n";
    let c = cfg(&format!(
        "schemes = [\"TCP\"]\n[tcp]\nrto_min = \"1ms\"\n[topology]\nkind = \"file\"\nfile = \"{}\"\n{flows}",
        file.display()
    ));
    let mut s = sim(&c, "TCP");
    let _ = s.run_until(SimTime::MAX);
    let crossed: u64 = [
        crate::common::port_between(&s, 16, 17),
        crate::common::port_between(&s, 17, 16),
    ]
    .iter()
    .map(|&p| s.net.ports[p].stats.tx_pkts)
    .sum();
    let lost = s.failure_losses;
    let r = run(&c, "TCP");
    assert_eq!(r.totals.finished, 8);
    let rate = lost as f64 / crossed as f64;
    assert!(
        (0.005..=0.015).contains(&rate),
        "lost {lost} of {crossed}: {rate}"
    );
    // The run's drops count the losses, besides the shared egress's own overflows.
    assert!(
        r.totals.drops >= lost,
        "{} drops, {lost} losses",
        r.totals.drops
    );
}

#[test]
fn a_run_whose_flows_are_cut_off_for_good_ends_and_says_why() {
    // Every spine down for good: the flows between leaves retransmitted for ever (simulated
    // time would eventually wrap); the run ends once nothing but them is left, for flows and
    // for RDMA messages, and the flows within a leaf finish.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/corpus/runs/all-spines-down.toml"),
    )
    .unwrap();
    for scheme in ["DCTCP", "DCQCN", "GPMP"] {
        let c = cfg(&text.replace("[\"DCTCP\"]", &format!("[\"{scheme}\"]")));
        let r = run(&c, scheme);
        assert_eq!(r.end_reason, dcsim::sim::EndReason::Unreachable, "{scheme}");
        let same_leaf = |x: &dcsim::metrics::FlowRecord| x.src / 4 == x.dst / 4;
        let late = |x: &dcsim::metrics::FlowRecord| x.start_ps >= SimTime::from_us(300).0;
        for x in &r.records {
            let what = format!("{scheme}: flow {} {} -> {}", x.flow_id, x.src, x.dst);
            if same_leaf(x) {
                assert!(x.fct_ps.is_some(), "{what} finishes");
            } else if late(x) {
                assert!(x.fct_ps.is_none(), "{what} cannot finish");
            }
        }
        let n = |f: &dyn Fn(&dcsim::metrics::FlowRecord) -> bool| {
            r.records.iter().filter(|x| f(x)).count()
        };
        assert!(n(&|x| !same_leaf(x) && late(x)) > 50, "{scheme}");
        assert!(n(&same_leaf) > 20, "{scheme}");
    }
    // With a stop time: ends as soon as nothing reachable is left (checked at every grid
    // point), before it (the ideal of a flow with no route left used to panic).
    let c = cfg(&format!("stop_time = \"5ms\"\n{text}"));
    let r = run(&c, "DCTCP");
    assert_eq!(r.end_reason, dcsim::sim::EndReason::Unreachable);
    assert!(r.totals.sim_end_ps < SimTime::from_ms(5).0);
    // A recovery still to come: the run waits for it, and every flow finishes.
    let c = cfg(&format!(
        "{text}[[failures]]\nat = \"2ms\"\nswitch = 20\naction = \"up\"\n"
    ));
    let r = run(&c, "DCTCP");
    assert_eq!(r.end_reason, dcsim::sim::EndReason::AllFinished);
    // Host 0's only link down for good: its flows are cut off, the others finish.
    let one = cfg(&one_flow(
        "[[failures]]\nat = \"1ms\"\nlink = [0, 16]\naction = \"down\"\n",
    ));
    let r = run(&one, "DCTCP");
    assert_eq!(r.end_reason, dcsim::sim::EndReason::Unreachable);
    assert_eq!(r.totals.finished, 0);
}
