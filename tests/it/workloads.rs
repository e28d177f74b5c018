//! Workloads from files and generators: dependencies (`after`), JSON flow lists, collectives.

use crate::common::{cfg, run};
use dcsim::experiment::RunResult;
use dcsim::workload::FlowSpec;
use std::path::Path;

fn rec(r: &RunResult, id: u32) -> &dcsim::metrics::FlowRecord {
    r.records.iter().find(|x| x.flow_id == id).expect("flow")
}

#[test]
fn csv_after_starts_a_flow_when_the_ones_it_waits_for_arrive() {
    // Flow 3 waits for flows 1 and 2 (received), then 10 us (its start_ns); flow 4 for 3.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dep.csv");
    std::fs::write(
        &f,
        "flow_id,src,dst,size_bytes,start_ns,after\n\
         1,0,5,100000,0,\n2,1,5,50000,0,\n3,5,9,20000,10000,1;2\n4,9,0,1000,0,3\n",
    )
    .unwrap();
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n[workload]\nkind = \"csv\"\nfile = \"{}\"\n",
        f.display()
    ));
    let r = run(&c, "DCTCP");
    assert_eq!(r.totals.finished, 4);
    let got_1_2 = rec(&r, 1)
        .rcv_finish_ps
        .unwrap()
        .max(rec(&r, 2).rcv_finish_ps.unwrap());
    assert_eq!(rec(&r, 3).start_ps, got_1_2 + 10_000_000);
    assert_eq!(rec(&r, 4).start_ps, rec(&r, 3).rcv_finish_ps.unwrap());
}

#[test]
fn bad_dependencies_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("1,0,1,1000,0,7\n", "line 2 (flow 1): `after` names flow 7"),
        ("1,0,1,1000,0,2\n2,0,1,1000,0,1\n", "wait for each other"),
        (
            "1,0,1,1000,0,\n2,0,1,1000,0,1\n3,0,1,1000,0,1;2\n",
            "line 4 (flow 3): flow 1 is already waited for",
        ),
        (
            "1,0,1,1000,0,1\n",
            "line 2 (flow 1): a flow cannot wait for itself",
        ),
        ("1,0,1,1000,0,x\n", "line 2: `after` = `x`"),
    ];
    for (i, (rows, want)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("d{i}.csv"));
        std::fs::write(
            &f,
            format!("flow_id,src,dst,size_bytes,start_ns,after\n{rows}"),
        )
        .unwrap();
        let e = dcsim::workload::read_csv(&f, 16).unwrap_err();
        assert!(
            e.contains(want) && e.contains(&format!("d{i}.csv")),
            "{rows}: {e}"
        );
    }
}

#[test]
fn a_json_flow_list_reads_as_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("f.csv");
    let json = dir.path().join("f.json");
    std::fs::write(
        &csv,
        "flow_id,src,dst,size_bytes,start_ns,after\n1,0,5,64000,0,\n2,3,7,1000000,2000,\n3,7,3,5000,500,2\n",
    )
    .unwrap();
    std::fs::write(
        &json,
        r#"[{"id": 1, "src": 0, "dst": 5, "size": "64KB", "start": 0},
            {"id": 2, "src": 3, "dst": 7, "size": 1000000, "start": "2us"},
            {"id": 3, "src": 7, "dst": 3, "size": 5000, "start": 500, "after": [2]}]"#,
    )
    .unwrap();
    let key = |f: &FlowSpec| (f.id, f.src, f.dst, f.size, f.start, f.group, f.after);
    let a = dcsim::workload::read_csv(&csv, 16).unwrap();
    let b = dcsim::workload::read_json(&json, 16).unwrap();
    assert_eq!(
        a.iter().map(key).collect::<Vec<_>>(),
        b.iter().map(key).collect::<Vec<_>>()
    );
    let bad = [
        (r#"{"id": 1}"#, "expected a JSON array"),
        (
            r#"[{"id": 1, "src": 0, "dst": 1, "size": 10, "start": 0, "when": 3}]"#,
            "flow [0]: unknown key `when`",
        ),
        (
            r#"[{"id": 1, "src": 0, "dst": 1, "size": "ten", "start": 0}]"#,
            "flow [0]: `size` = \"ten\"",
        ),
        (
            r#"[{"id": 1, "src": 0, "dst": 99, "size": 10, "start": 0}]"#,
            "hosts must be in 0..16",
        ),
        ("[{\"id\": 1,\n \"src\": }]", "line 2"),
        // A key given twice used to keep the last, silently.
        (
            r#"[{"id": 1, "src": 0, "dst": 1, "size": 10, "size": 99, "start": 0}]"#,
            "line 1 column 53: `size` is given twice",
        ),
        // Named by its place and its id (it was named by its place as if that were an id).
        (
            r#"[{"id": 4, "src": 0, "dst": 1, "size": 10, "start": 0},
                {"id": 9, "src": 0, "dst": 1, "size": 10, "start": 0, "after": [9]}]"#,
            "flow [1] (flow 9): a flow cannot wait for itself",
        ),
    ];
    for (text, want) in bad {
        std::fs::write(&json, text).unwrap();
        let e = dcsim::workload::read_json(&json, 16).unwrap_err();
        assert!(e.contains(want) && e.contains("f.json"), "{text}: {e}");
    }
    // A file that begins with a UTF-8 byte-order mark reads as without it.
    let bom = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/runs/bom.json");
    assert!(std::fs::read(&bom).unwrap().starts_with(b"\xef\xbb\xbf"));
    let b = dcsim::workload::read_json(&bom, 16).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.iter().map(key).collect::<Vec<_>>(), [key(&a[0])]);
}

#[test]
fn ring_allreduce_takes_its_2n_minus_2_steps_in_order() {
    // Four hosts on one leaf, a 1 MB buffer: 250 KB chunks, 6 steps of 4 parallel flows; each
    // flow starts when its sender received the previous step's chunk. The whole takes at
    // least 6 chunk transmissions (171 packets of 1538 B on the wire at 10 Gbps each).
    let c = cfg(
        "schemes = [\"DCTCP\"]\n[workload]\nkind = \"allreduce\"\nhosts = [0, 1, 2, 3]\nsize = \"1MB\"\n",
    );
    let r = run(&c, "DCTCP");
    assert_eq!(r.totals.finished, 24);
    for s in 1..6u32 {
        for i in 0..4u32 {
            let me = rec(&r, s * 4 + i);
            let prev = rec(&r, (s - 1) * 4 + (i + 3) % 4);
            assert_eq!(
                me.start_ps,
                prev.rcv_finish_ps.unwrap(),
                "step {s} host {i}"
            );
        }
    }
    let end = r
        .records
        .iter()
        .filter_map(|x| x.rcv_finish_ps)
        .max()
        .unwrap() as f64;
    let pkts = (250_000f64 / 1460.0).ceil();
    let step = pkts * 1538.0 * 8.0 / 10e9 * 1e12;
    assert!(end >= 6.0 * step, "{end} ps < 6 x {step} ps");
    assert!(end < 1.5 * 6.0 * step, "{end} ps: the steps do not overlap");
    let a2a = cfg(
        "schemes = [\"DCTCP\"]\n[workload]\nkind = \"alltoall\"\nhosts = [0, 5, 10, 15]\nsize = \"100KB\"\n",
    );
    assert_eq!(run(&a2a, "DCTCP").totals.finished, 12);
    let e = dcsim::config::Config::parse(
        "[workload]\nkind = \"allreduce\"\nhosts = [0, 0]\nsize = \"1MB\"\n",
        "x.toml",
    )
    .unwrap()
    .validate("x.toml", Path::new("."))
    .unwrap_err();
    assert!(
        e.key == "workload.hosts" && e.msg.contains("listed twice"),
        "{e}"
    );
}

#[test]
fn ring_allreduce_chunks_make_up_the_buffer_exactly() {
    // 1001 B over 4 hosts: chunks of 251, 250, 250, 250 B (they were ⌈1001/4⌉ = 251 each, 1004
    // B moved per step); at every step the ring moves the whole buffer once, and each host
    // passes on the chunk it received the step before.
    let c = cfg(
        "schemes = [\"DCTCP\"]\n[workload]\nkind = \"allreduce\"\nhosts = [0, 1, 2, 3]\nsize = \"1001B\"\n",
    );
    let r = run(&c, "DCTCP");
    assert_eq!(r.totals.finished, 24);
    for s in 0..6u32 {
        let step: u64 = (0..4).map(|i| rec(&r, s * 4 + i).size_bytes).sum();
        assert_eq!(step, 1001, "step {s}");
        if s > 0 {
            for i in 0..4u32 {
                assert_eq!(
                    rec(&r, s * 4 + i).size_bytes,
                    rec(&r, (s - 1) * 4 + (i + 3) % 4).size_bytes,
                    "step {s} host {i}"
                );
            }
        }
    }
    // Less than a byte per host: refused (1 B over 16 hosts used to become 480 flows of 1 B).
    let e = dcsim::config::Config::parse(
        "[workload]\nkind = \"allreduce\"\nhosts = [0, 1, 2]\nsize = \"2B\"\n",
        "x.toml",
    )
    .unwrap()
    .validate("x.toml", Path::new("."))
    .unwrap_err();
    assert!(
        e.key == "workload.size" && e.msg.contains("at least 3 B for 3 hosts"),
        "{e}"
    );
}

#[test]
fn an_htsim_connection_matrix_maps_its_triggers_to_dependencies() {
    // Flows 1 and 2 start at 0 and 5 us (ps in current htsim) and fire barrier 1 (count 2)
    // when received; flow 3 waits for it and fires oneshot 2; flow 4 waits for that: the same
    // flows and dependencies as the CSV with `after`.
    let dir = tempfile::tempdir().unwrap();
    let cm = dir.path().join("t.cm");
    std::fs::write(
        &cm,
        "# a barrier, then a chain\nNodes 16\nConnections 4\nTriggers 2\n\
         0->5 id 1 start 0 size 100000 recv_done_trigger 1\n\
         1->5 id 2 start 5000000 size 50000 recv_done_trigger 1\n\
         5->9 id 3 trigger 1 size 20000 recv_done_trigger 2\n\
         9->0 id 4 trigger 2 size 1000\n\
         trigger id 1 barrier count 2\ntrigger id 2 oneshot\n",
    )
    .unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(
        &csv,
        "flow_id,src,dst,size_bytes,start_ns,after\n1,0,5,100000,0,\n2,1,5,50000,5000,\n\
         3,5,9,20000,0,1;2\n4,9,0,1000,0,3\n",
    )
    .unwrap();
    let a = dcsim::workload::read_htsim(&cm, 16, dcsim::workload::CmStartUnit::Ps, false).unwrap();
    let b = dcsim::workload::read_csv(&csv, 16).unwrap();
    let key = |f: &FlowSpec| (f.id, f.src, f.dst, f.size, f.start, f.group, f.after);
    assert_eq!(
        a.iter().map(key).collect::<Vec<_>>(),
        b.iter().map(key).collect::<Vec<_>>()
    );
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n[workload]\nkind = \"htsim\"\nfile = \"{}\"\n",
        cm.display()
    ));
    let r = run(&c, "DCTCP");
    assert_eq!(r.totals.finished, 4);
    assert_eq!(
        rec(&r, 3).start_ps,
        rec(&r, 1)
            .rcv_finish_ps
            .unwrap()
            .max(rec(&r, 2).rcv_finish_ps.unwrap())
    );
    // What htsim does that dcsim does not model is refused, naming the line.
    let bad = [
        (
            "0->1 id 1 start 0 size 10 send_done_trigger 1\ntrigger id 1 oneshot\n",
            "line 1: send_done_trigger",
        ),
        (
            "0->1 id 1 start 0 size 10 recv_done_trigger 1\n0->2 id 2 start 0 size 10 recv_done_trigger 1\n1->2 id 3 trigger 1 size 10\ntrigger id 1 oneshot\n",
            "line 4: trigger 1: oneshot fired by 2",
        ),
        (
            "0->1 id 1 start 0 size 10 recv_done_trigger 1\n1->2 id 3 trigger 1 size 10\ntrigger id 1 barrier count 3\n",
            "count 3 but 1",
        ),
        ("0->1 id 1 size 10\n", "line 1: no `start` and no `trigger`"),
        (
            "failure switch_type CORE switch_id 1 link_id 0\n",
            "[[failures]]",
        ),
        (
            "Connections 2\n0->1 id 1 start 0 size 10\n",
            "`Connections 2` but 1 found",
        ),
        (
            "0->1 id 1 start 0 size 10 colour red\n",
            "unknown connection attribute `colour`",
        ),
        ("1->2 id 3 trigger 7 size 10\n", "trigger 7 is not defined"),
    ];
    for (text, want) in bad {
        std::fs::write(&cm, text).unwrap();
        let e = dcsim::workload::read_htsim(&cm, 16, dcsim::workload::CmStartUnit::Ps, false)
            .unwrap_err();
        assert!(e.contains(want) && e.contains("t.cm"), "{text}: {e}");
    }
}

/// Offered load of flows over their arrival span: bytes·8 / (span · hosts · rate).
fn offered(flows: &[FlowSpec], hosts: f64, rate: f64) -> f64 {
    let span = flows.last().unwrap().start.as_secs_f64() - flows[0].start.as_secs_f64();
    flows.iter().map(|f| f.size as f64).sum::<f64>() * 8.0 / (span * hosts * rate)
}

fn generate(toml: &str) -> Vec<FlowSpec> {
    let c = cfg(toml);
    c.workload
        .generate(
            c.topology.n_hosts(),
            c.topology.host_rate(),
            1,
            Path::new("."),
        )
        .unwrap()
}

#[test]
fn lognormal_and_on_off_arrivals_keep_the_load_and_are_burstier() {
    // 200,000 flows of a fixed size: the offered load matches `load` within 3 % for Poisson,
    // lognormal (sigma 2) and on/off (1 ms on, 3 ms off) arrivals; the coefficient of
    // variation of the inter-arrivals is 1 for Poisson and larger for the others.
    let base = "[workload]\nkind = \"poisson\"\nsize_cdf = \"uniform(10KB, 10KB)\"\nload = 0.4\nflows = 200000\n";
    let cv = |v: &[FlowSpec]| {
        let gaps: Vec<f64> = v
            .windows(2)
            .map(|w| (w[1].start.0 - w[0].start.0) as f64)
            .collect();
        let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - m) * (g - m)).sum::<f64>() / gaps.len() as f64;
        var.sqrt() / m
    };
    let poisson = generate(base);
    let logn = generate(&format!(
        "{base}interarrival = \"lognormal\"\nsigma = 2.0\n"
    ));
    let onoff = generate(&format!("{base}on = \"1ms\"\noff = \"3ms\"\n"));
    for (name, v) in [
        ("poisson", &poisson),
        ("lognormal", &logn),
        ("on/off", &onoff),
    ] {
        let l = offered(v, 16.0, 10e9);
        assert!((l - 0.4).abs() < 0.012, "{name}: offered load {l}");
    }
    let (c0, c1, c2) = (cv(&poisson), cv(&logn), cv(&onoff));
    assert!((c0 - 1.0).abs() < 0.02, "poisson cv {c0}");
    // Lognormal with sigma 2: cv = sqrt(exp(sigma^2) - 1) = 7.32 (a heavy tail: the sample
    // falls short of it).
    assert!(c1 > 3.0, "lognormal cv {c1}");
    assert!(c2 > 1.05, "on/off cv {c2}");
    // During a host's off period it sends nothing: some host has a gap of at least 2 ms.
    let mut last = [0u64; 16];
    let mut longest = 0u64;
    for f in &onoff {
        let h = f.src as usize;
        if last[h] > 0 {
            longest = longest.max(f.start.0 - last[h]);
        }
        last[h] = f.start.0;
    }
    assert!(longest > 2_000_000_000, "longest per-host gap {longest} ps");
}

#[test]
fn poisson_incast_bursts_arrive_at_the_requested_load() {
    // 8-to-1 bursts of 64 KB at 10 % of the 16 hosts' access capacity: 20,000 bursts.
    let v = generate(
        "[workload]\nkind = \"incast\"\nfan_in = 8\nsize = \"64KB\"\nrandom = true\nbursts = 20000\nload = 0.1\n",
    );
    assert_eq!(v.len(), 160_000);
    let l = offered(&v, 16.0, 10e9);
    assert!((l - 0.1).abs() < 0.003, "offered load {l}");
    // Each burst: 8 distinct senders, one receiver, one start time.
    for b in v.chunks(8) {
        assert!(b.iter().all(|f| f.start == b[0].start && f.dst == b[0].dst));
    }
}

#[test]
fn a_permutation_sends_one_flow_from_and_to_every_host() {
    let v = generate("[workload]\nkind = \"permutation\"\nsize = \"2MB\"\n");
    assert_eq!(v.len(), 16);
    let mut dsts: Vec<u32> = v.iter().map(|f| f.dst).collect();
    dsts.sort_unstable();
    assert_eq!(dsts, (0..16).collect::<Vec<u32>>());
    assert!(v.iter().all(|f| f.src != f.dst && f.size == 2_000_000));
    // A single cycle (Sattolo): following dst from host 0 visits all 16 hosts.
    let next: std::collections::HashMap<u32, u32> = v.iter().map(|f| (f.src, f.dst)).collect();
    let (mut h, mut seen) = (0u32, 0);
    loop {
        h = next[&h];
        seen += 1;
        if h == 0 {
            break;
        }
    }
    assert_eq!(seen, 16);
}
