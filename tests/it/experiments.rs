//! Reduced versions of the paper experiments under `experiments/`: the same configs, shrunk
//! (one seed, few messages, the first and last value of each sweep axis), run through the
//! same code path as `dcsim run`, checking that every table and figure is produced.

use dcsim::config::Config;
use std::path::Path;

/// The experiment's smoke version (`dcsim run --smoke`).
fn reduced(path: &str) -> Config {
    let c = Config::load(Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
    dcsim::experiment::smoke(&c)
}

fn run_reduced(path: &str) -> (tempfile::TempDir, Vec<dcsim::experiment::RunResult>, Config) {
    let mut c = reduced(path);
    let tmp = tempfile::tempdir().unwrap();
    c.output_dir = tmp.path().to_path_buf();
    let base = Config::base_dir(Path::new(path));
    let results = dcsim::cli::run_all(&c, path, &base, Some(2), true)
        .unwrap_or_else(|e| panic!("{path}: {e:#}"));
    for r in &results {
        crate::common::assert_conserved(r);
    }
    let dir = tmp.path().join(&c.name);
    assert!(dir.join("summary.csv").exists());
    for p in &c.plot {
        let svg = std::fs::read_to_string(dir.join(&p.file)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("<polyline"),
            "{}: no lines",
            p.file
        );
        assert!(
            svg.contains("[smoke run: one seed, reduced workload]"),
            "{}: not marked as smoke",
            p.file
        );
        let csv = std::fs::read_to_string(dir.join(p.file.replace(".svg", ".csv"))).unwrap();
        assert!(csv.lines().count() > 1, "{}: empty table", p.file);
    }
    (tmp, results, c)
}

#[test]
fn gpmp_load_reduced() {
    let (_t, rs, c) = run_reduced("experiments/gpmp/load.toml");
    assert_eq!(rs.len(), c.schemes.len() * 2);
    for r in &rs {
        assert_eq!(r.totals.drops, 0, "{}: lossless fabric dropped", r.plan.id);
        assert_eq!(r.totals.finished, r.totals.flows, "{}", r.plan.id);
    }
}

#[test]
fn gpmp_proxies_reduced() {
    // SRM-like at two chunk sizes and two loads: every message finishes on a lossless fabric.
    let (_t, rs, _) = run_reduced("experiments/gpmp/proxies.toml");
    assert_eq!(rs.len(), 4);
    for r in &rs {
        assert_eq!(r.totals.drops, 0, "{}", r.plan.id);
        assert_eq!(r.totals.finished, r.totals.flows, "{}", r.plan.id);
    }
}

#[test]
fn gpmp_ablation_reduced() {
    let (_t, rs, _) = run_reduced("experiments/gpmp/ablation.toml");
    assert!(rs.iter().all(|r| r.totals.finished == r.totals.flows));
}

#[test]
fn gpmp_paths_reduced() {
    let (_t, rs, _) = run_reduced("experiments/gpmp/paths.toml");
    // n = 1 and n = 8 low-priority QPs per pair.
    let qps: Vec<u64> = rs.iter().map(|r| r.totals.queue_pairs).collect();
    assert!(qps[1] > qps[0], "more paths, more queue pairs: {qps:?}");
}

#[test]
fn gpmp_burst_reduced() {
    let (_t, rs, _) = run_reduced("experiments/gpmp/burst.toml");
    let lossless: Vec<_> = rs
        .iter()
        .filter(|r| r.plan.axis_value("switch.pfc.enabled") == Some(&toml::Value::Boolean(true)))
        .collect();
    assert_eq!(lossless.len(), 2);
    assert!(lossless.iter().all(|r| r.totals.drops == 0));
}

#[test]
fn default_experiment_reduced() {
    let (_t, rs, _) = run_reduced("experiments/default.toml");
    assert_eq!(rs.len(), 2);
}

#[test]
fn pdtcp_partition_aggregate_reduced() {
    let (_t, rs, _) = run_reduced("experiments/pdtcp/partition_aggregate.toml");
    for r in &rs {
        let q = r
            .classes
            .iter()
            .find(|c| c.class == "tag:query")
            .expect("query class");
        assert_eq!(
            q.flows, q.finished,
            "{}: every query response finishes",
            r.plan.id
        );
        assert!(q.deadline_flows > 0 && q.deadline_met > 0.0);
        assert!(
            q.p99_slowdown_group <= q.p99_slowdown,
            "the query ideal is the larger one"
        );
        assert!(r.classes.iter().any(|c| c.class == "deadline:20ms"));
    }
}

#[test]
fn pdtcp_sequential_reduced() {
    let (_t, rs, _) = run_reduced("experiments/pdtcp/sequential.toml");
    for r in &rs {
        let w = r
            .classes
            .iter()
            .find(|c| c.class == "tag:workflow")
            .expect("workflow class");
        // 25 workflows of 10 responses.
        assert_eq!(w.flows, 250, "{}", r.plan.id);
        assert_eq!(w.finished, 250);
    }
}

/// PDTCP spec §2.3 and issue 4: the measured sawtooth matches the analysis within 20 % at
/// p = 1, M = 1 (DCTCP's own analysis); alpha and amplitude at every p and M of the grid.
#[test]
fn pdtcp_analysis_check_holds() {
    let c = Config::load(Path::new("experiments/pdtcp/analysis.toml")).unwrap();
    let plans = dcsim::experiment::plan(&c, "analysis.toml", Path::new(".")).unwrap();
    assert_eq!(plans.len(), 9);
    for p in &plans {
        let r = dcsim::experiment::execute(&p.config, Path::new("."), p).unwrap();
        crate::common::assert_conserved(&r);
        let s = r.totals.sawtooth.expect("probe results");
        let (m, pr) = (&s.measured, &s.predicted);
        let within = |x: f64, y: f64| (x / y - 1.0).abs() < 0.2;
        assert!(
            within(m.amplitude, pr.amplitude),
            "{}: amplitude {} vs {}",
            p.id,
            m.amplitude,
            pr.amplitude
        );
        assert!(
            within(m.alpha, pr.alpha),
            "{}: alpha {} vs {}",
            p.id,
            m.alpha,
            pr.alpha
        );
        assert!(m.cycles >= 20, "{}: {} cycles", p.id, m.cycles);
        assert_eq!(m.empty_fraction, 0.0, "{}: K is above the bound (19)", p.id);
        assert!(s.k_pkts > pr.k_bound);
        if s.p == 1.0 && s.links == 1 {
            assert!(
                within(m.period_rtts, pr.period_rtts + 1.0),
                "{}: period {} vs {} + 1",
                p.id,
                m.period_rtts,
                pr.period_rtts
            );
            assert!(
                (m.q_p99 / pr.q_max - 1.0).abs() < 0.2,
                "peak {} vs K + N {}",
                m.q_p99,
                pr.q_max
            );
        }
    }
}

/// AM's decisions are counted per kind; flow hashing only ever keeps the hash port.
#[test]
fn am_decisions_are_counted_and_fh_only_hashes() {
    let mut c = reduced("experiments/pdtcp/partition_aggregate.toml");
    c.sweep.axes.clear();
    let base = Path::new(".");
    let run = |scheme: &str| {
        let p = dcsim::experiment::RunPlan::single(&c, scheme, 1);
        dcsim::experiment::execute(&p.config, base, &p).unwrap()
    };
    let am = run("PDTCP+AM");
    let fh = run("PDTCP+FH");
    assert!(
        am.totals.lb_hash > 0 && am.totals.lb_other > 0,
        "{:?}",
        am.totals
    );
    assert_eq!(fh.totals.lb_other + fh.totals.lb_congested, 0);
    let per_switch: u64 = am
        .switches
        .iter()
        .map(|s| s.lb_hash + s.lb_other + s.lb_congested)
        .sum();
    assert_eq!(
        per_switch,
        am.totals.lb_hash + am.totals.lb_other + am.totals.lb_congested
    );
}

/// Deadline accounting: a flow that has not finished when the run ends missed its deadline.
#[test]
fn unfinished_flows_count_as_missed_deadlines() {
    let c = crate::common::cfg(
        "schemes = [\"DCTCP\"]\nstop_time = \"2ms\"\n\
         [topology]\nkind = \"dumbbell\"\nleft = 2\nright = 2\nhost_rate = \"1Gbps\"\nbottleneck_rate = \"1Gbps\"\n\
         [workload]\nkind = \"flows\"\nflows = [\n\
           { src = 0, dst = 2, size = \"10KB\", deadline = \"1ms\" },\n\
           { src = 1, dst = 3, size = \"10MB\", deadline = \"50ms\" },\n\
           { src = 1, dst = 3, size = \"10KB\" },\n]\n",
    );
    let r = crate::common::run(&c, "DCTCP");
    let all = &r.classes[0];
    assert_eq!(all.deadline_flows, 2);
    assert_eq!(
        all.deadline_met, 0.5,
        "the unfinished 10 MB flow missed its deadline"
    );
    assert_eq!(r.records[0].deadline_met, Some(true));
    assert_eq!(r.records[1].deadline_met, Some(false));
    assert!(r.records[1].fct_ps.is_none());
    assert_eq!(r.records[2].deadline_met, None);
}

#[test]
fn gpmp_sensitivity_reduced() {
    let (_t, rs, _) = run_reduced("experiments/gpmp/sensitivity.toml");
    // Loads 0.6 and 0.8 by L = 32 KB and 1 MB.
    assert_eq!(rs.len(), 4);
    assert!(
        rs.iter()
            .all(|r| r.totals.finished == r.totals.flows && r.totals.drops == 0)
    );
}

#[test]
fn gpmp_attribution_reduced() {
    let (t, rs, c) = run_reduced("experiments/gpmp/attribution.toml");
    for r in &rs {
        for rec in &r.records {
            let (Some(fct), Some(a)) = (rec.fct_ps, rec.attribution) else {
                panic!("{}: message {} has no attribution", r.plan.id, rec.flow_id);
            };
            assert_eq!(a.total(), fct, "{}: {a:?}", r.plan.id);
        }
    }
    let table =
        std::fs::read_to_string(t.path().join(&c.name).join("short_attribution_0.8.csv")).unwrap();
    assert_eq!(table.lines().count(), 1 + c.schemes.len(), "{table}");
}

#[test]
fn pdtcp_response_size_reduced() {
    let (_t, rs, _) = run_reduced("experiments/pdtcp/pa_response_size.toml");
    // 4 schemes, sizes U[2 KB, 2 KB] and U[2 KB, 50 KB].
    assert_eq!(rs.len(), 8);
    for r in &rs {
        let q = r.classes.iter().find(|k| k.class == "tag:query").unwrap();
        assert!(q.deadline_flows > 0, "{}", r.plan.id);
    }
}

#[test]
fn pdtcp_pa_k8_reduced() {
    let (_t, rs, c) = run_reduced("experiments/pdtcp/pa_k8.toml");
    assert_eq!(rs.len(), c.schemes.len() * 2);
    for r in &rs {
        assert!(r.plan.id.contains("fan_in="), "{}", r.plan.id);
        let q = r.classes.iter().find(|k| k.class == "tag:query").unwrap();
        assert_eq!(q.flows, q.finished, "{}", r.plan.id);
    }
}

#[test]
fn gpmp_workload_reduced() {
    let (_t, rs, c) = run_reduced("experiments/gpmp/workload.toml");
    // Every scheme on both size distributions, and the <30KB class next to <50KB.
    assert_eq!(rs.len(), c.schemes.len() * 2);
    for r in &rs {
        assert_eq!(r.totals.finished, r.totals.flows, "{}", r.plan.id);
        let n = |name: &str| r.classes.iter().find(|k| k.class == name).unwrap().flows;
        assert!(n("<30KB") <= n("<50KB"), "{}", r.plan.id);
    }
}

#[test]
fn pdtcp_pa_mechanism_reduced() {
    let (_t, rs, _) = run_reduced("experiments/pdtcp/pa_mechanism.toml");
    // p = 0.5 and 2 by 150 KB and 4 MB buffers; the ECN reductions of the responses are
    // counted by window size.
    assert_eq!(rs.len(), 4);
    for r in &rs {
        let red = r
            .totals
            .reductions
            .iter()
            .find(|x| x.tag == "query")
            .unwrap();
        assert_eq!(red.by_window.iter().sum::<u64>(), red.reductions);
        assert!(red.same_window_half_vs_two <= red.reductions);
        // The exponent is pinned, so every reduction and every response's end sits in its
        // bin (0.5: the floor, 2: the ceiling); every response has an alpha at its end.
        assert_eq!(red.by_exponent.iter().sum::<u64>(), red.reductions);
        let bin = if r.plan.id.contains("fixed_p=0.5") {
            0
        } else {
            4
        };
        assert_eq!(red.by_exponent[bin], red.reductions, "{}", r.plan.id);
        assert_eq!(
            red.flows_by_exponent_at_end[bin], red.flows,
            "{}",
            r.plan.id
        );
        assert_eq!(red.flows_by_alpha_at_end.len(), 100);
        assert_eq!(red.flows_by_alpha_at_end.iter().sum::<u64>(), red.flows);
    }
}

/// AM's decisions are counted at every switch; flow-hashing schemes never leave the hash port
/// nor mark for lack of an uncongested one; spurious retransmissions are a subset.
fn assert_am_decisions(rs: &[dcsim::experiment::RunResult]) {
    for r in rs {
        let t = &r.totals;
        assert!(t.lb_hash > 0, "{}", r.plan.id);
        if r.plan.scheme.name.ends_with("+FH") {
            assert_eq!(t.lb_other + t.lb_congested, 0, "{}", r.plan.id);
        }
        assert!(t.spurious_retx <= t.retransmits, "{}", r.plan.id);
    }
}

#[test]
fn pdtcp_pa_heavy_reduced() {
    // Three background loads for four schemes; AM's decisions are counted at every switch,
    // and the AM schemes detour or mark some packets while the hash schemes never do.
    let (_t, rs, c) = run_reduced("experiments/pdtcp/pa_heavy.toml");
    assert_eq!(rs.len(), c.schemes.len() * 2);
    assert_am_decisions(&rs);
}

#[test]
fn pdtcp_seq_heavy_reduced() {
    // Two workflow rates by two background loads for four schemes; only the AM schemes ever
    // leave the hash port.
    let (_t, rs, c) = run_reduced("experiments/pdtcp/seq_heavy.toml");
    assert_eq!(rs.len(), c.schemes.len() * 4);
    assert_am_decisions(&rs);
}

#[test]
fn cc_irn_reduced() {
    // RoCE (DCQCN, PFC, go-back-N) against IRN (no PFC, selective repeat): both deliver every
    // message; IRN's switches never pause, RoCE's never drop.
    let (_t, rs, _c) = run_reduced("experiments/cc/irn.toml");
    assert_eq!(rs.len(), 2);
    for r in &rs {
        assert_eq!(r.totals.finished, r.totals.flows, "{}", r.plan.id);
        match r.plan.scheme.name.as_str() {
            "IRN" => assert_eq!(r.totals.pfc_pauses, 0),
            _ => assert_eq!(r.totals.drops, 0),
        }
    }
}

#[test]
fn interop_examples_reduced() {
    // The three one-command imports of docs/interop.md: an HPCC topology and flow file, an
    // htsim connection matrix, a dcsim topology file with failures.
    let (_t, rs, _c) = run_reduced("experiments/interop/hpcc.toml");
    assert!(
        rs.iter()
            .all(|r| r.totals.finished == r.totals.flows && r.totals.drops == 0)
    );
    let (_t, rs, _c) = run_reduced("experiments/interop/htsim.toml");
    assert!(rs.iter().all(|r| r.totals.finished == 9));
    let (_t, rs, _c) = run_reduced("experiments/interop/failures.toml");
    assert!(rs.iter().all(|r| r.totals.finished == r.totals.flows));
    assert!(
        rs.iter().any(|r| r.totals.drops > 0),
        "the spine failure loses packets"
    );
}

#[test]
fn ai_experiments_reduced() {
    // experiments/ai/: every collective and iteration finishes, every figure is drawn
    // (run_reduced checks the figures), and the smoke version stays small (4 MiB at most).
    let (_t, rs, c) = run_reduced("experiments/ai/allreduce.toml");
    assert_eq!(rs.len(), 4, "2 sizes x 2 algorithms");
    assert!(
        c.sweep.axes[0]
            .values
            .iter()
            .all(|v| v.as_str() != Some("1GB"))
    );
    for r in &rs {
        assert_eq!(r.collectives.len(), 1);
        assert!(r.collectives[0].busbw_gbps.is_some(), "{}", r.plan.id);
    }
    let (_t, rs, _) = run_reduced("experiments/ai/transport.toml");
    assert_eq!(rs.len(), 6 * 2);
    for r in &rs {
        assert!(r.collectives[0].busbw_gbps.is_some(), "{}", r.plan.id);
    }
    let (_t, rs, _) = run_reduced("experiments/ai/moe.toml");
    assert_eq!(rs.len(), 2 * 2);
    for r in &rs {
        assert_eq!(r.iterations.len(), 1);
        assert!(r.iterations[0].time_ps.is_some(), "{}", r.plan.id);
    }
}
