//! dcsim against the HPCC ns-3 simulator on the scenarios of its validation pack
//! (`experiments/validation/`, reference results in `tests/data/hpcc-ns3/`, imported by
//! `scripts/validation/import_pack.py`; method and findings in `docs/validation.md`).
//!
//! Slowdown is FCT over the reference's ideal FCT for both simulators (one yardstick);
//! percentiles are nearest rank, as the pack's. The reduced comparison (the small scenarios,
//! and web search with one seed) runs in the suite; the full one (every scenario, five seeds
//! pooled against the reference's five random-number runs) with
//! `DCSIM_VALIDATION=full cargo test --release --test it validation -- --nocapture`.

use dcsim::config::Config;
use dcsim::experiment::{self, RunPlan};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

const CCS: [&str; 4] = ["dcqcn", "hpcc", "timely", "dctcp"];
const BUCKETS: [(&str, u64); 6] = [
    ("<10K", 10_000),
    ("10-50K", 50_000),
    ("50-200K", 200_000),
    ("200K-1M", 1_000_000),
    ("1-5M", 5_000_000),
    (">=5M", u64::MAX),
];

struct RefFlow {
    size: u64,
    ideal_ns: f64,
    fcts_ns: Vec<f64>,
}

fn reference(cc: &str, scn: &str) -> BTreeMap<u32, RefFlow> {
    let path = format!("tests/data/hpcc-ns3/{cc}/{scn}.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = BTreeMap::new();
    for line in text.lines().skip(1) {
        let v: Vec<&str> = line.split(',').collect();
        let num = |i: usize| v[i].parse::<f64>().unwrap();
        out.insert(
            v[0].parse().unwrap(),
            RefFlow {
                size: v[1].parse().unwrap(),
                ideal_ns: num(4),
                fcts_ns: (5..v.len()).map(num).collect(),
            },
        );
    }
    out
}

/// How a dcsim run is set up against the reference.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// dcsim's own ECMP.
    Own,
    /// Every flow on the reference's paths (`flows/<scn>.pins.csv`).
    Pinned,
    /// Pinned, and the reference's model emulated: serialization and pacing floored to whole
    /// nanoseconds, the send time fixed when a packet leaves, the NIC serving queue pairs by
    /// index, HPCC's telemetry in the reference's units.
    Quirks,
}

impl Mode {
    fn suffix(self) -> &'static str {
        match self {
            Mode::Own => "",
            Mode::Pinned => "+pin",
            Mode::Quirks => "+pin+quirks",
        }
    }
}

/// Per flow id, dcsim's FCTs in ns, one per seed.
fn dcsim(cc: &str, scn: &str, seeds: u32, mode: Mode) -> BTreeMap<u32, Vec<f64>> {
    let path = format!("experiments/validation/{cc}/{scn}.toml");
    let mut c = Config::load(Path::new(&path)).unwrap_or_else(|e| panic!("{e}"));
    if mode != Mode::Own {
        c.routing.pin = Some(format!("../flows/{scn}.pins.csv").into());
    }
    if mode == Mode::Quirks {
        c.quirks.ns_floor = true;
        c.rdma.pacing = dcsim::config::PacingMode::AtSend;
        c.nic.order = dcsim::config::NicOrder::Index;
        c.quirks.int_units = true;
    }
    let base = Config::base_dir(Path::new(&path));
    c.validate(&path, &base).unwrap_or_else(|e| panic!("{e}"));
    let scheme = c.schemes[0].clone();
    let mut out: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for seed in 1..=seeds as u64 {
        let plan = RunPlan::single(&c, &scheme, seed);
        let r = experiment::execute(&plan.config, &base, &plan).unwrap_or_else(|e| panic!("{e}"));
        crate::common::assert_conserved(&r);
        for f in &r.records {
            let fct = f
                .fct_ps
                .unwrap_or_else(|| panic!("{cc}/{scn} seed {seed}: flow {} unfinished", f.flow_id));
            out.entry(f.flow_id).or_default().push(fct as f64 / 1000.0);
        }
    }
    out
}

/// Nearest-rank percentile `p` of `v` (sorted in place).
fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let k = ((p / 100.0 * v.len() as f64).ceil() as usize).max(1);
    v[k - 1]
}

/// One comparison: per bucket with flows, (bucket, flows, ours p50, ref p50, ours p99, ref p99).
type Row = (&'static str, usize, f64, f64, f64, f64);

/// Per bucket rows, and per flow (one run each side) the largest gap, signed, and the mean
/// absolute gap.
fn compare(cc: &str, scn: &str, seeds: u32, mode: Mode) -> (Vec<Row>, Option<(f64, f64, f64)>) {
    let r = reference(cc, scn);
    let d = dcsim(cc, scn, seeds, mode);
    assert_eq!(r.len(), d.len(), "{cc}/{scn}: flow counts");
    let mut rows = Vec::new();
    let mut lo = 0;
    for (name, hi) in BUCKETS {
        let ids: Vec<u32> = r
            .iter()
            .filter(|(_, f)| f.size >= lo && f.size < hi)
            .map(|(&i, _)| i)
            .collect();
        lo = hi;
        if ids.is_empty() {
            continue;
        }
        let (r, d) = (&r, &d);
        let mut ours: Vec<f64> = ids
            .iter()
            .flat_map(|i| d[i].iter().map(move |x| x / r[i].ideal_ns))
            .collect();
        let mut theirs: Vec<f64> = ids
            .iter()
            .flat_map(|i| r[i].fcts_ns.iter().map(move |x| x / r[i].ideal_ns))
            .collect();
        rows.push((
            name,
            ids.len(),
            pct(&mut ours, 50.0),
            pct(&mut theirs, 50.0),
            pct(&mut ours, 99.0),
            pct(&mut theirs, 99.0),
        ));
    }
    // Per flow (deterministic scenarios, one run each side): worst and mean |relative gap|.
    let per_flow = (seeds == 1).then(|| {
        let gaps: Vec<f64> = r
            .iter()
            .map(|(i, f)| d[i][0] / f.fcts_ns[0] - 1.0)
            .collect();
        let ns = r
            .iter()
            .map(|(i, f)| (d[i][0] - f.fcts_ns[0]).abs())
            .fold(0.0f64, f64::max);
        (
            gaps.iter()
                .cloned()
                .fold(0.0f64, |w, g| if g.abs() > w.abs() { g } else { w }),
            gaps.iter().map(|g| g.abs()).sum::<f64>() / gaps.len() as f64,
            ns,
        )
    });
    (rows, per_flow)
}

fn gap(a: f64, b: f64) -> f64 {
    a / b - 1.0
}

fn report(
    cc: &str,
    scn: &str,
    seeds: u32,
    mode: Mode,
    out: &mut String,
) -> (f64, Option<(f64, f64, f64)>) {
    let (rows, per_flow) = compare(cc, scn, seeds, mode);
    let scn = format!("{scn}{}", mode.suffix());
    let mut worst: f64 = 0.0;
    for (b, n, p50, r50, p99, r99) in &rows {
        let (g50, g99) = (gap(*p50, *r50), gap(*p99, *r99));
        if *n > 20 || seeds == 1 {
            worst = worst.max(g50.abs()).max(g99.abs());
        }
        writeln!(
            out,
            "{cc:7} {scn:13} {b:8} {n:5}  p50 {p50:7.3} / {r50:7.3} ({:+6.1} %)  p99 {p99:7.3} / {r99:7.3} ({:+6.1} %)",
            100.0 * g50,
            100.0 * g99
        )
        .unwrap();
    }
    if let Some((w, m, ns)) = per_flow {
        writeln!(
            out,
            "{cc:7} {scn:13} per flow: worst {:+.2} %, mean {:.2} %, largest |difference| {ns:.0} ns",
            100.0 * w,
            100.0 * m
        )
        .unwrap();
    }
    (worst, per_flow)
}

#[test]
fn validation_against_hpcc_ns3() {
    let full = std::env::var("DCSIM_VALIDATION").is_ok_and(|v| v == "full");
    let mut out = String::new();
    let mut solo = Vec::new();
    let mut pinned_gaps = Vec::new();
    let mut quirk_gaps = Vec::new();
    for cc in CCS {
        for scn in ["solo", "incast8", "stagger4", "incast_small"] {
            let (worst, per_flow) = report(cc, scn, 1, Mode::Own, &mut out);
            if scn == "solo" {
                solo.push((cc, worst, per_flow));
            }
            let (_, per_flow) = report(cc, scn, 1, Mode::Pinned, &mut out);
            pinned_gaps.push((cc, scn, per_flow.unwrap()));
            let (_, per_flow) = report(cc, scn, 1, Mode::Quirks, &mut out);
            quirk_gaps.push((cc, scn, per_flow.unwrap()));
        }
        let seeds = if full { 5 } else { 1 };
        for mode in [Mode::Own, Mode::Pinned, Mode::Quirks] {
            report(cc, "websearch", seeds, mode, &mut out);
            if full {
                report(cc, "fb_hadoop", 5, mode, &mut out);
            }
        }
    }
    println!("dcsim / HPCC ns-3 slowdown (ours / reference):\n{out}");
    // With the reference's quirks emulated and its paths, the deterministic controllers (HPCC
    // and TIMELY ignore ECN; DCTCP-RDMA's marking is a step) and every lone flow or burst
    // agree per flow (measured 2026-12-06: solo identical to the nanosecond for every CC but
    // HPCC, 66 ns off; incast_small within 261 ns, 0.38 %; TIMELY and DCTCP-RDMA incast8
    // within 4.5 %, stagger4 within 446 ns). The synchronised scenarios are where the tie
    // order shows: the reference breaks ties by insertion, dcsim by keys (docs/validation.md).
    for (cc, scn, (worst, _, ns)) in quirk_gaps {
        let bound = match (cc, scn) {
            (_, "solo") => 0.0005,
            (_, "incast_small") => 0.005,
            ("timely" | "dctcp", _) => 0.05,
            _ => 0.35,
        };
        assert!(
            worst.abs() < bound,
            "{cc} {scn} with the reference's quirks: worst {:.2} % ({ns} ns)",
            100.0 * worst
        );
    }
    // A lone flow: the reference floors every serialization to whole nanoseconds (83 ns for
    // 83.84 ns), so it is about 1 % faster than the exact time; nothing else may differ.
    for (cc, _, per_flow) in solo {
        let (w, _, _) = per_flow.unwrap();
        assert!(
            w < 0.015,
            "{cc} solo: {:.2} % from the reference",
            100.0 * w
        );
    }
}
