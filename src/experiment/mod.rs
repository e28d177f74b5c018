//! Running experiments: expanding a config into runs (schemes × seeds), executing each run
//! single-threaded and deterministically, in parallel across runs, and collecting results.
//!
//! A run's output depends only on the config, the scheme and the seed, never on how many runs
//! execute at once or in which order.
//!
//! Files: this one holds the plans ([`RunPlan`], [`plan`], [`smoke`]), the result types and
//! execution; `build` makes a run's [`Sim`], `record` collects its results.

use crate::config::{Config, Scheme};
use crate::metrics::{FlowRecord, PortRecord};
use crate::net::BuildOpts;
use crate::sim::{EndReason, Sim, SimSetup};
use crate::units::SimTime;
use std::path::Path;
use std::time::Instant;

mod build;
mod procs;
mod record;
pub use crate::report::results::*;
pub use build::*;
pub use procs::{Session, init as init_procs, procs};
pub use record::*;

impl RunPlan {
    /// A run of `scheme` at `seed` under `cfg` (no sweep), on the config the scheme runs with
    /// ([`Config::for_scheme`]; `cfg` must be valid).
    pub fn single(cfg: &Config, scheme: &str, seed: u64) -> RunPlan {
        let s = Scheme::builtin(scheme).expect("known scheme");
        let config = cfg
            .for_scheme(scheme, &s, "<config>")
            .unwrap_or_else(|e| panic!("a validated config resolves: {e}"));
        RunPlan {
            id: format!("{scheme}-s{seed}"),
            scheme: s,
            seed,
            axes: Vec::new(),
            identity: crate::provenance::run_identity(&config, scheme, seed, Path::new(".")),
            config,
        }
    }

    /// The value of sweep axis `key` in this run.
    pub fn axis_value(&self, key: &str) -> Option<&toml::Value> {
        self.axes.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// The smoke version of an experiment (`dcsim run --smoke`, and the reduced paper experiments
/// of the test suite): one seed, the first and last value of each sweep axis, and a small
/// workload (at most 120 Poisson flows, 6 incast bursts, 25 queries or workflows, collectives
/// and training sizes of 4 MiB, one micro-batch and iteration of at most two layers). It runs
/// the same code paths in seconds; its numbers mean nothing. Its name gains `-smoke` (so its
/// results land beside the experiment's, not over them) and its figures say so in their titles.
pub fn smoke(cfg: &Config) -> Config {
    fn shrink(w: &mut crate::workload::WorkloadConfig) {
        use crate::workload::WorkloadConfig as W;
        match w {
            W::Poisson { flows, until, .. } => {
                *flows = (*flows).min(120);
                if let Some(u) = until {
                    *u = (*u).min(SimTime::from_ms(8));
                }
            }
            W::Incast { bursts, .. } => *bursts = (*bursts).min(6),
            W::PartitionAggregate { queries, .. } => *queries = (*queries).min(25),
            W::Sequential { workflows, .. } => *workflows = (*workflows).min(25),
            W::Mix { parts } => parts.iter_mut().for_each(shrink),
            W::Collective(c) => c.size = c.size.min(SMOKE_BYTES),
            W::Training(t) => {
                t.microbatches = 1;
                t.iterations = 1;
                t.layers = t.layers.min(t.pp.max(2));
                for b in [&mut t.params, &mut t.activation, &mut t.tokens] {
                    *b = (*b).min(SMOKE_BYTES);
                }
            }
            _ => {}
        }
    }
    let mut c = cfg.clone();
    c.name = format!("{}-smoke", cfg.name);
    c.seeds = 1;
    shrink(&mut c.workload);
    for a in c.sweep.axes.iter_mut() {
        if a.values.len() > 2 {
            a.values = vec![a.values[0].clone(), a.values.last().unwrap().clone()];
        }
        // A collective's size swept: at most the smoke size too.
        if a.key == "workload.size"
            && matches!(c.workload, crate::workload::WorkloadConfig::Collective(_))
        {
            for v in a.values.iter_mut() {
                if let Some(b) = v
                    .as_str()
                    .and_then(|t| t.parse::<crate::units::Bytes>().ok())
                    && b > SMOKE_BYTES
                {
                    *v = toml::Value::String(SMOKE_BYTES.to_string());
                }
            }
            a.values.dedup();
        }
    }
    c
}

/// The largest collective or training size of a smoke run.
const SMOKE_BYTES: crate::units::Bytes = crate::units::Bytes(4 << 20);

/// File-name-safe text of an axis value.
fn id_text(v: &toml::Value) -> String {
    crate::sweep::value_text(v)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Expands the config into runs: sweep combinations outermost, then schemes, then seeds.
pub fn plan(
    cfg: &Config,
    file: &str,
    base: &Path,
) -> Result<Vec<RunPlan>, crate::config::ConfigError> {
    let mut v = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    for combo in crate::sweep::combinations(&cfg.sweep.axes) {
        let run_cfg = if combo.is_empty() {
            cfg.clone()
        } else {
            let c = cfg.at_sweep_point(&combo, file)?;
            c.validate(file, base)?;
            c
        };
        let axes: Vec<(String, toml::Value)> = cfg
            .sweep
            .axes
            .iter()
            .map(|a| a.key.clone())
            .zip(combo.iter().cloned())
            .collect();
        let tag: String = cfg
            .sweep
            .axes
            .iter()
            .zip(&combo)
            .map(|(a, val)| format!("-{}={}", a.column(), id_text(val)))
            .collect();
        for s in &cfg.schemes {
            let scheme = Scheme::builtin(s).expect("validated scheme");
            let scheme_cfg = run_cfg.for_scheme(s, &scheme, file)?;
            for k in 0..cfg.seeds as u64 {
                let seed = cfg.seed + k;
                let id = format!("{s}{tag}-s{seed}");
                if !ids.insert(id.clone()) {
                    return Err(crate::config::ConfigError {
                        file: file.to_string(),
                        key: "sweep.axes".into(),
                        msg: format!(
                            "two runs would be named `{id}`: sweep values must differ once written into run names (letters, digits and .-_+ kept, others as _)"
                        ),
                    });
                }
                v.push(RunPlan {
                    id,
                    scheme: scheme.clone(),
                    seed,
                    axes: axes.clone(),
                    identity: crate::provenance::run_identity(&scheme_cfg, s, seed, base),
                    config: scheme_cfg.clone(),
                });
            }
        }
    }
    Ok(v)
}

/// Executes one run.
pub fn execute(cfg: &Config, base: &Path, plan: &RunPlan) -> Result<RunResult, String> {
    execute_with(cfg, base, plan, |_| {})
}

/// Executes one run, reporting its progress to `progress` now and then.
pub fn execute_with(
    cfg: &Config,
    base: &Path,
    plan: &RunPlan,
    progress: impl FnMut(crate::sim::Progress),
) -> Result<RunResult, String> {
    let wall = Instant::now();
    if cfg.run.split() > 1 || procs().is_some() {
        return execute_partitioned(cfg, base, plan, wall)?
            .ok_or_else(|| "the run's results are written by MPI rank 0".into());
    }
    let mut sim = build_sim(cfg, base, plan)?;
    let sawtooth = match &cfg.probe {
        Some(p) => Some(run_probe(&mut sim, cfg, p)?),
        None => None,
    };
    let mut rec = Recorder::new(&sim, plan, cfg);
    if sim.retiring() {
        rec.spill_to(cfg.output_dir.join(&cfg.name), &plan.id, SPILL_ROWS);
    }
    let end_reason = sim.run_draining(progress, |net, out| {
        for r in out {
            rec.retired(net, &r);
        }
    });
    sim.finish_stream()?;
    crate::provenance::inputs_unchanged(base, &plan.identity)?;
    let mut r = collect_with(&sim, rec, end_reason, plan.clone(), cfg, wall)?;
    r.totals.sawtooth = sawtooth;
    take_observed(&mut sim, &mut r);
    Ok(r)
}

/// Moves what a finished run observed (packet trace, time series) into its result.
fn take_observed(sim: &mut Sim, r: &mut RunResult) {
    if let Some(w) = sim.pcap.take() {
        r.pcap = Some(PcapSummary {
            packets: w.packets,
            truncated: w.truncated,
        });
        r.pcap_bytes = Some(w.bytes().to_vec());
    }
    if let Some(sp) = sim.sampler.take() {
        let rows = [&sp.queues, &sp.links, &sp.flows_csv]
            .iter()
            .map(|t| t.lines().count() as u64 - 1)
            .sum();
        r.timeseries = Some(TimeSeriesSummary {
            rows,
            truncated: sp.truncated,
        });
        r.timeseries_csv = Some([sp.queues, sp.links, sp.flows_csv]);
    }
}

/// This process's share of one run spread over MPI ranks, on a rank other than 0 (which
/// merges the run and writes its outputs): nothing to return.
pub fn execute_share(cfg: &Config, base: &Path, plan: &RunPlan) -> Result<(), String> {
    execute_partitioned(cfg, base, plan, Instant::now()).map(|_| ())
}

/// Executes one run split into `[run] partitions` partitions (the windowed kernel,
/// `sim::window`) on `[run] threads` threads: every partition a replica built alike, merged
/// at the end. On MPI, this process builds and runs the partitions it holds (at least one
/// partition per rank), and only rank 0 returns a result.
fn execute_partitioned(
    cfg: &Config,
    base: &Path,
    plan: &RunPlan,
    wall: Instant,
) -> Result<Option<RunResult>, String> {
    if cfg.probe.is_some() {
        return Err(
            "run.partitions: partitioned runs do not support the probe ([probe]) yet".into(),
        );
    }
    let procs = procs();
    let n = cfg.run.split().max(procs.as_ref().map_or(1, |p| p.size()));
    let held = (0..n)
        .filter(|&i| procs.as_ref().is_none_or(|p| p.holds(i)))
        .count();
    // The replicas are built alike and independently, on the run's threads at once (a k = 32
    // fat-tree's replica takes about 0.15 s to build; 32 of them took 5 s one after another).
    let threads = (cfg.run.threads as usize).clamp(1, held);
    let mut built: Vec<Option<Result<Sim, String>>> = (0..held).map(|_| None).collect();
    std::thread::scope(|scope| {
        for chunk in built.chunks_mut(held.div_ceil(threads)) {
            scope.spawn(move || {
                for slot in chunk {
                    *slot = Some(build_sim_with(cfg, base, plan, false));
                }
            });
        }
    });
    let mut parts = Vec::with_capacity(held);
    for b in built {
        parts.push(b.expect("every replica built")?);
    }
    let tiers: Vec<u8> = cfg
        .topology
        .build()
        .switches
        .iter()
        .map(|s| s.tier)
        .collect();
    let map =
        crate::sim::window::PartitionMap::new(&parts[0].net, &tiers, n, cfg.run.partition_seed)?;
    let mpi = procs.clone().filter(|p| p.size() > 1);
    let mut w = crate::sim::window::Windowed::new(
        parts,
        map,
        plan.seed,
        cfg.run.exchange == crate::config::Exchange::Bytes,
        procs,
    )?;
    let end_reason = w.run(cfg.run.threads as usize);
    let stats = w.stats.clone();
    if let Some(p) = mpi {
        // What crossed between machines, per rank (the exchange volume of issue 26).
        eprintln!(
            "rank {}/{}: run {}: {} windows, {} bytes sent to other ranks ({:.0} per window)",
            p.rank(),
            p.size(),
            plan.id,
            stats.windows,
            stats.shipped_bytes,
            stats.shipped_bytes as f64 / stats.windows.max(1) as f64
        );
    }
    let Some(mut sim) = w.into_sim(|| build_sim_with(cfg, base, plan, false))? else {
        return Ok(None);
    };
    crate::provenance::inputs_unchanged(base, &plan.identity)?;
    let rec = Recorder::new(&sim, plan, cfg);
    let mut r = collect_with(&sim, rec, end_reason, plan.clone(), cfg, wall)?;
    take_observed(&mut sim, &mut r);
    r.window = Some(stats);
    Ok(Some(r))
}

/// Runs the sawtooth probe over the warm-up and sampling window (see [`crate::probe`]).
fn run_probe(
    sim: &mut Sim,
    cfg: &Config,
    p: &crate::probe::ProbeConfig,
) -> Result<crate::probe::SawtoothStats, String> {
    use crate::probe::{Measured, SawtoothStats, cycles, predict};
    let links: Vec<usize> = (0..sim.net.ports.len())
        .filter(|&i| {
            let port = &sim.net.ports[i];
            !sim.net.is_host(port.node) && !sim.net.is_host(port.peer_node)
        })
        .collect();
    if links.is_empty() {
        return Err("[probe] needs switch-to-switch links (a dumbbell)".into());
    }
    // Only the links that carry data matter: in a dumbbell, the left-to-right ones.
    let pkt = (cfg.packet.mss.0 + cfg.packet.header.0) as f64;
    if sim.run_until(p.warmup).is_some() {
        return Err("the run ended during the probe's warm-up".into());
    }
    let n_samples = (p.duration.0 / p.interval.0.max(1)) as usize;
    let mut series: Vec<Vec<f64>> = vec![Vec::with_capacity(n_samples); links.len()];
    let (mut alpha, mut na) = (0.0, 0u64);
    let mut t = p.warmup;
    for i in 0..n_samples {
        t += p.interval;
        if sim.run_until(t).is_some() {
            return Err("the run ended during the probe's sampling window".into());
        }
        for (k, &l) in links.iter().enumerate() {
            series[k].push(sim.net.ports[l].total_bytes as f64 / pkt);
        }
        if i % 20 == 0 {
            for f in &sim.flows {
                if let Some(c) = sim.transport.tcp(f.id) {
                    alpha += c.alpha.unwrap_or(0.0);
                    na += 1;
                }
            }
        }
    }
    // Keep the links that carried traffic (a dumbbell's right-to-left links carry ACKs only).
    let data: Vec<&Vec<f64>> = series
        .iter()
        .filter(|s| s.iter().cloned().fold(0.0, f64::max) > 2.0)
        .collect();
    if data.is_empty() {
        return Err("no bottleneck queue built up during the probe".into());
    }
    let m = data.len() as f64;
    let empty = (0..n_samples)
        .filter(|&i| data.iter().any(|s| s[i] == 0.0))
        .count();
    let (mut amp, mut cyc, mut len, mut meanq, mut p99) = (0.0, 0usize, 0.0, 0.0, 0.0);
    for s in &data {
        let (a, c, l) = cycles(s);
        amp += a / m;
        cyc += c;
        len += l / m;
        meanq += s.iter().sum::<f64>() / s.len() as f64 / m;
        let mut v = (*s).clone();
        v.sort_by(f64::total_cmp);
        p99 += crate::metrics::percentile(&v, 0.99) / m;
    }
    // Analysis inputs: per-link capacity, base RTT between the first sender and its receiver.
    let link = &sim.net.ports[links[0]];
    let c_pps = link.rate.bps() as f64 / (8.0 * pkt);
    let f0 = &sim.flows[0];
    let hops = |a: u32, b: u32| -> Vec<crate::metrics::Hop> {
        sim.net
            .first_path(a, b)
            .iter()
            .map(|q| (sim.net.ports[q.idx()].rate, sim.net.ports[q.idx()].delay))
            .collect()
    };
    let rtt = crate::metrics::ideal_fct(
        cfg.packet.mss.0,
        cfg.packet.mss.0 as u32,
        cfg.packet.header.0 as u32,
        &hops(f0.src, f0.dst),
        &hops(f0.dst, f0.src),
        Some(cfg.packet.header.0 as u32),
    )
    .as_secs_f64();
    let k = match cfg.switch.ecn_for(link.rate) {
        crate::net::port::EcnConfig::Step { k, .. } => k.0 as f64 / pkt,
        _ => return Err("[probe] needs step ECN marking (K)".into()),
    };
    let exp = cfg.pdtcp.fixed_p.unwrap_or(1.0);
    let c_rtt = c_pps * rtt;
    let n = sim.flows.len() as f64;
    let measured_rtt = rtt + meanq / c_pps;
    let period_s = len * p.interval.as_secs_f64();
    Ok(SawtoothStats {
        flows: sim.flows.len() as u64,
        links: data.len() as u64,
        p: exp,
        c_rtt_pkts: c_rtt,
        k_pkts: k,
        base_rtt_us: rtt * 1e6,
        predicted: predict(n, m, c_rtt, k, exp),
        measured: Measured {
            alpha: if na > 0 { alpha / na as f64 } else { f64::NAN },
            amplitude: amp,
            cycles: cyc as u64,
            period_us: period_s * 1e6,
            period_rtts: period_s / measured_rtt,
            mean_queue: meanq,
            q_p99: p99,
            empty_fraction: empty as f64 / n_samples.max(1) as f64,
        },
    })
}
