//! Running experiments: expanding a config into runs (schemes × seeds), executing each run
//! single-threaded and deterministically, in parallel across runs, and collecting results.
//!
//! A run's output depends only on the config, the scheme and the seed, never on how many runs
//! execute at once or in which order.

use crate::config::{Config, Scheme, TransportKind};
use crate::metrics::{ClassSummary, FlowRecord, PortRecord};
use crate::net::BuildOpts;
use crate::sim::{Conservation, EndReason, Sim, SimSetup};
use crate::units::SimTime;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// One run: a scheme at a seed.
#[derive(Clone, Debug, Serialize)]
pub struct RunPlan {
    /// Stable id, used as the run's directory name:
    /// `<scheme>[-<axis>=<value>...]-s<seed>`.
    pub id: String,
    pub scheme: Scheme,
    pub seed: u64,
    /// Sweep axis values of this run, as `(dotted key, value)`.
    pub axes: Vec<(String, toml::Value)>,
    /// The run's resolved config (the experiment's, with the axis values applied).
    #[serde(skip)]
    pub config: Config,
    /// What the run's results depend on, and its hash (see `provenance`).
    #[serde(skip)]
    pub identity: crate::provenance::RunIdentity,
}

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
/// workload (at most 120 Poisson flows, 6 incast bursts, 25 queries or workflows). It runs
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
    }
    c
}

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

/// Per-switch counters for `switches.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct SwitchRecord {
    pub switch: String,
    /// Load-balancer decisions: kept the hash port, chose another, all congested (AM marks).
    pub lb_hash: u64,
    pub lb_other: u64,
    pub lb_congested: u64,
    pub drops_lossy: u64,
    pub drops_lossless: u64,
    pub pfc_frames: u64,
    pub peak_buffer_bytes: u64,
}

/// Run-level totals for `summary.csv` / `summary.json`.
#[derive(Clone, Debug, Serialize, Default)]
pub struct RunTotals {
    pub flows: u64,
    pub finished: u64,
    pub sim_end_ps: u64,
    pub events: u64,
    pub packet_hops: u64,
    pub drops: u64,
    pub drops_lossless: u64,
    pub pfc_frames: u64,
    pub pfc_pauses: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub ecn_marks: u64,
    /// RDMA: queue pairs created, NACKs received, CNPs received, DCQCN rate decreases.
    pub queue_pairs: u64,
    /// Load-balancer decisions over all switches: kept the hash port, chose another port,
    /// all candidates congested (AM marks CE).
    pub lb_hash: u64,
    pub lb_other: u64,
    pub lb_congested: u64,
    /// TCP: data packets received that carried nothing new (spurious retransmissions).
    pub spurious_retx: u64,
    /// The sawtooth probe's results, when `[probe]` is set.
    pub sawtooth: Option<crate::probe::SawtoothStats>,
    pub nacks: u64,
    pub cnps: u64,
    pub rate_decreases: u64,
    pub max_queue_bytes: u64,
    pub mean_util_host_links: f64,
    pub mean_util_fabric_links: f64,
    pub max_util_fabric_links: f64,
    /// ECN window reductions of TCP flows per traffic kind (zero without an ECN reaction).
    pub reductions: Vec<ReductionStats>,
}

/// The ECN window reductions of one traffic kind's TCP flows.
#[derive(Clone, Debug, Serialize, Default)]
pub struct ReductionStats {
    pub tag: &'static str,
    pub flows: u64,
    pub reductions: u64,
    /// Lower bounds (segments) of the window bins, and reductions per bin by the window
    /// before the reduction.
    pub window_bins: Vec<u32>,
    pub by_window: Vec<u64>,
    /// Reductions after which exponents 0.5 and 2 would have left the same whole window.
    pub same_window_half_vs_two: u64,
    /// The bins of the priority exponent (`tcp::EXPONENT_BINS`), and reductions per bin by
    /// the exponent in force; flows per bin by their exponent when they ended.
    pub exponent_bins: Vec<&'static str>,
    pub by_exponent: Vec<u64>,
    pub flows_by_exponent_at_end: Vec<u64>,
    /// Flows by their DCTCP-family alpha when they ended, in 100 bins of 0.01 (the last
    /// holds 0.99..=1); empty for controllers without an alpha.
    pub flows_by_alpha_at_end: Vec<u64>,
}

/// The result of one run.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub plan: RunPlan,
    pub end_reason: EndReason,
    pub totals: RunTotals,
    pub classes: Vec<ClassSummary>,
    /// The flow records, by workload flow id (empty when they went to `fct_spill`).
    #[serde(skip)]
    pub records: Vec<FlowRecord>,
    /// A run with many released flows: its `fct.csv` rows, written out while it ran.
    #[serde(skip)]
    pub fct_spill: Option<std::sync::Arc<crate::report::FctSpill>>,
    #[serde(skip)]
    pub ports: Vec<PortRecord>,
    #[serde(skip)]
    pub switches: Vec<SwitchRecord>,
    pub conservation: Conservation,
    /// Wall-clock time of the run (in the manifest only: `summary.json` stays byte-identical
    /// between repeated runs).
    #[serde(skip)]
    pub wall_seconds: f64,
    /// The packet trace (`[pcap]`): packets captured and whether the size cap cut it short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcap: Option<PcapSummary>,
    #[serde(skip)]
    pub pcap_bytes: Option<Vec<u8>>,
    /// The time series (`[timeseries]`): rows written and whether `max_rows` cut them short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<TimeSeriesSummary>,
    /// `ts_queues.csv`, `ts_links.csv`, `ts_flows.csv`.
    #[serde(skip)]
    pub timeseries_csv: Option<[String; 3]>,
}

/// What a run's time series hold.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TimeSeriesSummary {
    pub rows: u64,
    pub truncated: bool,
}

/// What a run's packet trace holds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PcapSummary {
    pub packets: u64,
    pub truncated: bool,
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
    Ok(r)
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

/// Builds the simulation of one run, ready to run.
pub fn build_sim(cfg: &Config, base: &Path, plan: &RunPlan) -> Result<Sim, String> {
    build_sim_with(cfg, base, plan, true)
}

/// Whether runs of `cfg` may release flow state as flows finish (`sim::Retire`): nothing reads
/// flows by slot and the ideal FCTs do not need the end's routes. The transport (TCP family or
/// UDP) and the workload (no dependencies) are checked when the simulation is built.
pub fn retires(cfg: &Config) -> bool {
    cfg.failures.is_empty()
        && cfg.routing.pin.is_none()
        && cfg.pcap.is_none()
        && cfg.timeseries.is_none()
        && cfg.probe.is_none()
        && cfg.end_when.is_none()
        && cfg.nic.order != crate::config::NicOrder::Index
}

/// [`build_sim`], choosing whether flows are released as they finish (`retire`; honoured
/// only where [`build_sim`] would: the outputs are the same either way).
pub fn build_sim_with(
    cfg: &Config,
    base: &Path,
    plan: &RunPlan,
    retire: bool,
) -> Result<Sim, String> {
    let n_hosts = cfg.topology.n_hosts();
    let retire = retire && retires(cfg);
    // A run that releases its flows pulls a generated workload as its flows start.
    let stream = match retire {
        true => cfg.workload.stream(
            n_hosts,
            cfg.topology.host_rate(),
            plan.seed,
            base,
            cfg.stop_time,
        )?,
        false => None,
    };
    // The file streamed is the one the run's identity (and manifest) names.
    if let (Some((_, check)), Some(file)) = (&stream, cfg.workload.input_files().first())
        && let (Some(read), Some(planned)) = (
            &check.file,
            crate::provenance::input_hash(&plan.identity, file),
        )
        && read.hex() != planned
    {
        return Err(format!(
            "{}: the file changed after the run was planned (hash {planned} then, {} now); its results would not be this file's",
            file.display(),
            read.hex()
        ));
    }
    let specs = match stream {
        Some(_) => Vec::new(),
        None => cfg
            .workload
            .generate(n_hosts, cfg.topology.host_rate(), plan.seed, base)?,
    };
    // Flows that would arrive after the stop time never happen: they are not generated.
    let specs = match cfg.stop_time {
        Some(stop) => specs
            .into_iter()
            .filter(|f| f.after.is_some() || f.start < stop)
            .collect(),
        None => specs,
    };
    let endpoints: Option<std::collections::HashMap<u32, (u32, u32)>> = cfg
        .routing
        .pin
        .as_ref()
        .map(|_| specs.iter().map(|f| (f.id, (f.src, f.dst))).collect());
    let topo = cfg.topology.build();
    let transport = crate::lower::transport(cfg, &plan.scheme);
    let switch = cfg.switch_for(&plan.scheme);
    let build = BuildOpts {
        switch: &switch,
        lb: crate::lower::load_balancer(cfg, &plan.scheme),
        seed: plan.seed,
        max_packet: cfg.packet.mss.0 + cfg.packet.header.0,
        ns_floor: cfg.quirks.ns_floor,
    };
    let mut sim = Sim::new(SimSetup {
        topo: &topo,
        build,
        transport,
        flows: specs,
        retire,
        stream,
        data_prio: cfg.priorities.data,
        ack_prio: cfg.priorities.ack,
        stop_time: cfg.stop_time,
        seed: plan.seed,
        end_when: cfg.end_when,
    })?;
    if cfg.quirks.int_units {
        sim.quantize_telemetry();
    }
    if cfg.nic.order == crate::config::NicOrder::Index {
        let nq = sim.net.nq as usize;
        sim.nic_rr_last = Some(vec![vec![u32::MAX; nq]; topo.n_hosts]);
    }
    if cfg.nic.qdisc == crate::config::Qdisc::Fifo {
        sim.use_host_fifo(match cfg.nic.tsq {
            crate::config::WindowSpec::Bytes(b) => b.0,
            _ => u64::MAX,
        });
    }
    if !cfg.failures.is_empty() {
        let spec = cfg.topology.build();
        let map = cfg.topology.node_map();
        for f in &cfg.failures {
            let links = f.links(&spec, &map)?;
            // Link i of the topology is ports 2i and 2i + 1 (Network::build).
            let ports = links
                .iter()
                .flat_map(|&i| {
                    [
                        crate::ids::PortId(2 * i as u32),
                        crate::ids::PortId(2 * i as u32 + 1),
                    ]
                })
                .collect();
            let kind = match f.action {
                crate::config::FailAction::Down => crate::sim::FailKind::Down,
                crate::config::FailAction::Up => crate::sim::FailKind::Up,
                crate::config::FailAction::Rate => {
                    crate::sim::FailKind::Rate(f.rate.expect("validated: rate"))
                }
            };
            sim.add_failure(f.at, ports, kind, cfg.routing.convergence);
        }
    }
    if let (Some(pin), Some(endpoints)) = (&cfg.routing.pin, endpoints) {
        let pins = crate::net::pin::Pins::load(
            &base.join(pin),
            &sim.net,
            &endpoints,
            &cfg.topology.node_map(),
        )
        .map_err(|m| format!("routing.pin: {m}"))?;
        sim.set_pins(pins);
    }
    if cfg.metrics.attribution {
        let units = match sim.transport.messages() {
            Some(m) => m.len(),
            None => sim.flows.len(),
        };
        let mut a = crate::sim::attrib::Attrib::new(
            topo.n_hosts,
            sim.net.ports.len(),
            sim.net.nq as usize,
            units,
        );
        a.track_waits = sim.transport.messages().is_none();
        sim.attrib = Some(Box::new(a));
    }
    if let Some(tc) = &cfg.timeseries {
        let nodes: Vec<usize> = match &tc.nodes {
            Some(v) => v.iter().map(|&n| n as usize).collect(),
            None => (topo.n_hosts..topo.n_hosts + topo.switches.len()).collect(),
        };
        let ports: Vec<usize> = (0..sim.net.ports.len())
            .filter(|&p| nodes.contains(&sim.net.ports[p].node.idx()))
            .collect();
        let mut tc = tc.clone();
        if sim.transport.messages().is_none() {
            // TCP-family flows are named by their workload id; sample them by index.
            let mut idx = Vec::with_capacity(tc.flows.len());
            for id in &tc.flows {
                let Some(i) = sim.flows.iter().position(|f| f.ext_id == *id) else {
                    return Err(format!(
                        "`timeseries.flows`: flow {id} is not in the workload"
                    ));
                };
                idx.push(i as u32);
            }
            tc.flows = idx;
        }
        let sp = crate::sim::timeseries::Sampler::new(&tc, ports, sim.net.nq as usize);
        sim.sample_at = sp.next;
        sim.sampler = Some(Box::new(sp));
    }
    if let Some(pc) = &cfg.pcap {
        let proto = match plan.scheme.transport {
            TransportKind::Rdma => crate::pcap::Proto::Rdma,
            TransportKind::Udp => crate::pcap::Proto::Udp,
            _ => crate::pcap::Proto::Tcp,
        };
        sim.pcap = Some(Box::new(crate::pcap::PcapWriter::new(
            pc,
            proto,
            topo.n_hosts + topo.switches.len(),
        )));
    }
    sim.observe();
    Ok(sim)
}

/// The ideal's view of host pair `src` -> `dst` for flows that lived through `[a, b]`: per
/// routing epoch overlapping it, the pair's paths with every port at its best rate over that
/// time (usable if up at any moment of it), and the least time of the final ACK (`ack` bytes)
/// back; without a path in any of them, the network before any failure.
fn pair_ideal(
    net: &crate::net::Network,
    src: u32,
    dst: u32,
    a: SimTime,
    b: SimTime,
    ack: Option<u32>,
    ns_floor: bool,
) -> PairIdeal {
    use crate::net::paths::NetView;
    let back_of = |v: &NetView| -> Option<SimTime> {
        match ack {
            None => Some(SimTime::ZERO),
            Some(_) => v.least(dst, src, |h| crate::metrics::ack_time(&[h], ack, ns_floor)),
        }
    };
    let state = |p: crate::ids::PortId| {
        let port = &net.ports[p.idx()];
        (port.rate, port.down)
    };
    let Some(h) = &net.history else {
        let port = |p| {
            let (r, down) = state(p);
            (!down).then_some(r)
        };
        let v = NetView {
            net,
            routes: &net.routes,
            port: &port,
        };
        let epochs = v.forward(src, dst).zip(back_of(&v)).into_iter().collect();
        return PairIdeal {
            epochs,
            mixed: false,
        };
    };
    let port = |p| h.best_rate(p, a, b, state(p));
    let epochs: Vec<_> = h
        .epochs(a, b)
        .filter_map(|routes| {
            let v = NetView {
                net,
                routes,
                port: &port,
            };
            v.forward(src, dst).zip(back_of(&v))
        })
        .collect();
    if !epochs.is_empty() {
        return PairIdeal {
            epochs,
            mixed: h.rerouted_within(a, b),
        };
    }
    let initial = |p| {
        let (r, down) = h.initial(p, state(p));
        (!down).then_some(r)
    };
    let v = NetView {
        net,
        routes: &h.routes[0].1,
        port: &initial,
    };
    PairIdeal {
        epochs: v.forward(src, dst).zip(back_of(&v)).into_iter().collect(),
        mixed: false,
    }
}

/// The delay attribution of unit `i` (flow or message), for finished ones.
fn attribution_of(sim: &Sim, i: usize, finished: bool) -> Option<crate::sim::attrib::Attribution> {
    if !finished {
        return None;
    }
    sim.attrib.as_ref().and_then(|a| a.results[i])
}

/// What the ideal FCT of a host pair needs, per routing epoch the flows of a cache entry lived
/// through: the pair's paths and the least time of the final ACK back (see
/// [`crate::net::paths`]), and whether those flows span a reroute (they are then judged as
/// if their packets could spread over each epoch's stages).
#[derive(Clone, Debug)]
struct PairIdeal {
    epochs: Vec<(crate::net::paths::PairPaths, SimTime)>,
    mixed: bool,
}

/// Turns a run's flows into `fct.csv` records and the totals they add up to: as they are
/// released during a retiring run (`sim::Retire`), and at its end for the flows still held.
/// A record depends only on the flow's final state and the network's routes (no run with
/// failures retires), so when it is made does not change it.
pub struct Recorder {
    classes: crate::metrics::SizeClasses,
    mss: u32,
    header: u32,
    ack: Option<u32>,
    ns_floor: bool,
    spread_lb: bool,
    rdma_host: Option<crate::config::RdmaHostKind>,
    /// Paths of the host pairs that have flows (not every pair: hosts² would not fit at scale),
    /// by pair and the span of network states their flows lived through (see
    /// [`Recorder::segments`]).
    paths: std::collections::HashMap<(u32, u32, u32, u32), PairIdeal>,
    /// Runs with failures: the times at which the network changed, in order.
    changes: Vec<SimTime>,
    /// Records with their sort key (workload id, arrival order).
    records: Vec<(u32, u32, FlowRecord)>,
    retransmits: u64,
    timeouts: u64,
    ecn_marks: u64,
    finished: u64,
    spurious_retx: u64,
    /// Per traffic kind, with the arrival order of its first flow (the order they are listed).
    reductions: Vec<(u32, ReductionStats)>,
    /// Bytes per group, for the contention-aware ideal (runs that keep every flow).
    group_bytes: Vec<u64>,
    /// The summary rows, fed one record at a time.
    summary: crate::metrics::SummaryBuilder,
    /// Records go out to `fct.csv` chunks once `spill_at` of them are held: where, and the
    /// first error (reported when the run is collected).
    spill: Option<(std::path::PathBuf, String)>,
    spilled: Option<crate::report::FctSpill>,
    spill_at: usize,
    error: Option<String>,
}

/// Records a retiring run holds before it writes them out as a sorted `fct.csv` chunk (a
/// 10 M-flow run writes 153 chunks, merged when the run is written).
pub const SPILL_ROWS: usize = 1 << 16;

/// Host pairs whose paths a recorder keeps for the ideal FCTs at most.
const PATH_CACHE: usize = 1 << 16;

impl Recorder {
    pub fn new(sim: &Sim, plan: &RunPlan, cfg: &Config) -> Recorder {
        let lb = plan.scheme.lb.unwrap_or(cfg.switch.load_balancer);
        // Bytes per group, for the contention-aware ideal.
        let mut group_bytes: Vec<u64> = Vec::new();
        if sim.transport.messages().is_none() {
            for f in &sim.flows {
                if f.group != u32::MAX {
                    let g = f.group as usize;
                    if g >= group_bytes.len() {
                        group_bytes.resize(g + 1, 0);
                    }
                    group_bytes[g] += f.size;
                }
            }
        }
        Recorder {
            classes: cfg.size_classes(),
            mss: sim.spec.mss(),
            header: sim.spec.header(),
            ack: sim.spec.ack_bytes(),
            ns_floor: cfg.quirks.ns_floor,
            // A flow whose packets may take several paths (per-packet load balancers; GPMP's
            // sliced long messages; MP-RDMA) gets the multipath ideal, the lower bound for it;
            // any other flow the single-path ideal, which it attains exactly on an idle path.
            spread_lb: lb != crate::net::lb::LbKind::Ecmp,
            rdma_host: plan.scheme.rdma_host,
            paths: std::collections::HashMap::new(),
            changes: Vec::new(),
            records: Vec::new(),
            retransmits: 0,
            timeouts: 0,
            ecn_marks: 0,
            finished: 0,
            spurious_retx: 0,
            reductions: Vec::new(),
            group_bytes,
            summary: crate::metrics::SummaryBuilder::new(cfg.size_classes()),
            spill: None,
            spilled: None,
            spill_at: usize::MAX,
            error: None,
        }
    }

    /// Writes records out in sorted chunks of `rows` to a hidden directory of `dir` (named
    /// after run `run`) instead of holding them all, for runs whose flows are released.
    pub fn spill_to(&mut self, dir: std::path::PathBuf, run: &str, rows: usize) {
        self.summary.spill_to(dir.clone(), run, rows);
        self.spill = Some((dir, run.to_string()));
        self.spill_at = rows.max(1);
    }

    /// Writes the held records out as one chunk.
    fn spill_chunk(&mut self) {
        if self.error.is_some() {
            return;
        }
        if self.spilled.is_none() {
            let (dir, run) = self.spill.as_ref().expect("spilling");
            match crate::report::FctSpill::new(dir, run) {
                Ok(sp) => self.spilled = Some(sp),
                Err(e) => {
                    self.error = Some(format!("writing fct.csv rows under {}: {e}", dir.display()));
                    return;
                }
            }
        }
        let rows = std::mem::take(&mut self.records);
        if let Err(e) = self.spilled.as_mut().expect("spill").chunk(rows) {
            self.error = Some(format!("writing fct.csv rows: {e}"));
        }
    }

    /// The ideal FCT of `size` bytes from `src` to `dst` on an idle network, for a flow that
    /// lived from `a` to `b` (its finish, or `SimTime::MAX` if it did not finish): the best
    /// the network could do for it alone in the states it went through (see
    /// [`crate::net::paths`]).
    #[allow(clippy::too_many_arguments)]
    fn ideal(
        &mut self,
        net: &crate::net::Network,
        src: u32,
        dst: u32,
        size: u64,
        spread: bool,
        a: SimTime,
        b: SimTime,
    ) -> SimTime {
        let (lo, hi) = self.segments(net, a, b);
        let key = (src, dst, lo, hi);
        if self.paths.len() >= PATH_CACHE && !self.paths.contains_key(&key) {
            // Bounded: a run with millions of host pairs recomputes instead of growing.
            self.paths.clear();
        }
        let (ack, ns_floor) = (self.ack, self.ns_floor);
        let pi = self
            .paths
            .entry(key)
            .or_insert_with(|| pair_ideal(net, src, dst, a, b, ack, ns_floor));
        let mut best = SimTime::MAX;
        for (paths, back) in &pi.epochs {
            let fwd = if spread || pi.mixed {
                crate::metrics::ideal_fct_spread(
                    size,
                    self.mss,
                    self.header,
                    &paths.stages,
                    ns_floor,
                )
            } else {
                paths
                    .seqs
                    .iter()
                    .map(|seq| {
                        crate::metrics::ideal_fct_with(
                            size,
                            self.mss,
                            self.header,
                            seq,
                            &[],
                            &[],
                            None,
                            ns_floor,
                        )
                    })
                    .min()
                    .expect("a path")
            };
            best = best.min(fwd + *back);
        }
        if best == SimTime::MAX {
            // No path in any state it lived through: it cannot have finished.
            SimTime::ZERO
        } else {
            best
        }
    }

    /// The span of network states `[a, b]` overlaps: the first and last of the segments
    /// between the times the network changed (both 0 without failures).
    fn segments(&mut self, net: &crate::net::Network, a: SimTime, b: SimTime) -> (u32, u32) {
        let Some(h) = &net.history else {
            return (0, 0);
        };
        if self.changes.is_empty() {
            let mut t: Vec<SimTime> = h.routes[1..].iter().map(|r| r.0).collect();
            t.extend(h.ports.values().flat_map(|v| v[1..].iter().map(|s| s.0)));
            t.sort();
            t.dedup();
            t.retain(|&x| x > SimTime::ZERO);
            self.changes = t;
        }
        let lo = self.changes.partition_point(|&t| t < a) as u32;
        let hi = self.changes.partition_point(|&t| t <= b) as u32;
        (lo, hi)
    }

    /// Records a released flow or message.
    pub fn retired(&mut self, net: &crate::net::Network, r: &crate::sim::Retired) {
        match (&r.msg, &r.flow) {
            (Some(m), _) => self.message(net, m, r.attribution),
            (None, Some(f)) => self.flow(net, f, r.tcp, r.attribution),
            (None, None) => unreachable!("a released flow or message"),
        }
    }

    /// Records RDMA message `m` in its final state (`attribution`: its delay attribution, if it
    /// finished).
    pub fn message(
        &mut self,
        net: &crate::net::Network,
        m: &crate::transport::rdma::Msg,
        attribution: Option<crate::sim::attrib::Attribution>,
    ) {
        use crate::config::RdmaHostKind;
        let spread = self.spread_lb
            || self.rdma_host == Some(RdmaHostKind::MpRdma)
            || (self.rdma_host == Some(RdmaHostKind::Gpmp) && !m.short);
        let until = m.finish.unwrap_or(SimTime::MAX);
        let ideal = self.ideal(net, m.src, m.dst, m.size, spread, m.start, until);
        let fct = m.finish.map(|t| t - m.start);
        self.retransmits += m.retx;
        self.ecn_marks += m.ce;
        if fct.is_some() {
            self.finished += 1;
        }
        let rec = FlowRecord {
            flow_id: m.ext_id,
            src: m.src,
            dst: m.dst,
            size_bytes: m.size,
            start_ps: m.start.0,
            finish_ps: m.finish.map(|t| t.0),
            rcv_finish_ps: m.rcv_finish.map(|t| t.0),
            fct_ps: fct.map(|t| t.0),
            ideal_fct_ps: ideal.0,
            slowdown: fct.map(|t| t.0 as f64 / ideal.0 as f64),
            size_class: self.classes.name(self.classes.class_of(m.size)),
            retransmits: m.retx,
            timeouts: 0,
            ecn_marks: m.ce,
            drops: m.drops,
            deadline_ps: m.deadline.map(|t| (m.start + t).0),
            deadline_met: m
                .deadline
                .map(|d| m.rcv_finish.is_some_and(|r| r <= m.start + d)),
            tag: m.tag.name(),
            deadline_class: m.deadline_class.map(|d| d.to_string()),
            ideal_group_fct_ps: ideal.0,
            slowdown_group: fct.map(|t| t.0 as f64 / ideal.0 as f64),
            attribution: attribution.filter(|_| fct.is_some()),
        };
        self.summary.add(&rec, m.deadline_class);
        self.records.push((m.ext_id, m.order, rec));
        if self.records.len() >= self.spill_at {
            self.spill_chunk();
        }
    }

    /// Writes out what is still held (a spilling recorder's last chunk) and moves the records
    /// (in arrival order, as a run that keeps every flow iterates them) and their totals over.
    fn flush(
        &mut self,
        records: &mut Vec<FlowRecord>,
        totals: &mut RunTotals,
    ) -> Result<(), String> {
        if self.spilled.is_some() && !self.records.is_empty() {
            self.spill_chunk();
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.records.sort_by_key(|&(_, order, _)| order);
        records.extend(self.records.drain(..).map(|(_, _, r)| r));
        totals.retransmits += self.retransmits;
        totals.timeouts += self.timeouts;
        totals.ecn_marks += self.ecn_marks;
        totals.finished += self.finished;
        totals.spurious_retx += self.spurious_retx;
        self.reductions.sort_by_key(|&(first, _)| first);
        totals.reductions = self.reductions.drain(..).map(|(_, r)| r).collect();
        Ok(())
    }

    /// Records TCP-family or UDP flow `f` in its final state (`tcp`: its TCP counters;
    /// `attribution`: its delay attribution, if it finished).
    pub fn flow(
        &mut self,
        net: &crate::net::Network,
        f: &crate::transport::Flow,
        tcp: Option<crate::transport::tcp::TcpStats>,
        attribution: Option<crate::sim::attrib::Attribution>,
    ) {
        let spread = self.spread_lb;
        let until = f.finish.unwrap_or(SimTime::MAX);
        let ideal = self.ideal(net, f.src, f.dst, f.size, spread, f.start, until);
        let group = (f.group != u32::MAX)
            .then(|| self.group_bytes[f.group as usize])
            .filter(|&b| b > f.size);
        let ideal_group = match group {
            Some(b) => self.ideal(net, f.src, f.dst, b, spread, f.start, until),
            None => ideal,
        };
        let fct = f.finish.map(|t| t - f.start);
        if let Some(snd) = &tcp {
            self.spurious_retx += snd.duplicates;
            let tag = f.tag.name();
            let i = match self.reductions.iter().position(|(_, r)| r.tag == tag) {
                Some(i) => i,
                None => {
                    self.reductions.push((
                        f.order,
                        ReductionStats {
                            tag,
                            window_bins: crate::transport::tcp::REDUCTION_BINS.to_vec(),
                            by_window: vec![0; crate::transport::tcp::REDUCTION_BINS.len()],
                            exponent_bins: crate::transport::tcp::EXPONENT_BINS.to_vec(),
                            by_exponent: vec![0; crate::transport::tcp::EXPONENT_BINS.len()],
                            flows_by_exponent_at_end: vec![
                                0;
                                crate::transport::tcp::EXPONENT_BINS
                                    .len()
                            ],
                            ..Default::default()
                        },
                    ));
                    self.reductions.len() - 1
                }
            };
            let (first, r) = &mut self.reductions[i];
            *first = (*first).min(f.order);
            r.flows += 1;
            r.reductions += snd.ecn_reductions;
            for (a, b) in r.by_window.iter_mut().zip(snd.reductions_by_window) {
                *a += b as u64;
            }
            r.same_window_half_vs_two += snd.reductions_same_window as u64;
            for (a, b) in r.by_exponent.iter_mut().zip(snd.reductions_by_exponent) {
                *a += b as u64;
            }
            r.flows_by_exponent_at_end
                [crate::transport::tcp::exponent_bin(snd.exponent.unwrap_or(1.0))] += 1;
            if let Some(a) = snd.alpha {
                if r.flows_by_alpha_at_end.is_empty() {
                    r.flows_by_alpha_at_end = vec![0; 100];
                }
                r.flows_by_alpha_at_end[((a * 100.0).floor().max(0.0) as usize).min(99)] += 1;
            }
        }
        let (retx, to) = match &tcp {
            Some(c) => (c.retransmits, c.timeouts),
            None => (0, 0),
        };
        self.retransmits += retx;
        self.timeouts += to;
        self.ecn_marks += f.stats.ce_rcvd;
        if fct.is_some() {
            self.finished += 1;
        }
        let rec = FlowRecord {
            flow_id: f.ext_id,
            src: f.src,
            dst: f.dst,
            size_bytes: f.size,
            start_ps: f.start.0,
            finish_ps: f.finish.map(|t| t.0),
            rcv_finish_ps: f.rcv_finish.map(|t| t.0),
            fct_ps: fct.map(|t| t.0),
            ideal_fct_ps: ideal.0,
            slowdown: fct.map(|t| t.0 as f64 / ideal.0 as f64),
            size_class: self.classes.name(self.classes.class_of(f.size)),
            retransmits: retx,
            timeouts: to,
            ecn_marks: f.stats.ce_rcvd,
            drops: f.stats.drops,
            deadline_ps: f.deadline.map(|t| t.0),
            // Unstarted dependent flows have no absolute deadline yet: they missed it.
            deadline_met: f
                .rel_deadline
                .map(|_| matches!((f.rcv_finish, f.deadline), (Some(r), Some(d)) if r <= d)),
            tag: f.tag.name(),
            deadline_class: f.deadline_class.map(|d| d.to_string()),
            ideal_group_fct_ps: ideal_group.0,
            slowdown_group: fct.map(|t| t.0 as f64 / ideal_group.0 as f64),
            attribution: attribution.filter(|_| fct.is_some()),
        };
        self.summary.add(&rec, f.deadline_class);
        self.records.push((f.ext_id, f.order, rec));
        if self.records.len() >= self.spill_at {
            self.spill_chunk();
        }
    }
}

/// Gathers the results of a finished (or stopped) simulation.
pub fn collect(
    sim: &Sim,
    end_reason: EndReason,
    plan: RunPlan,
    cfg: &Config,
    wall: Instant,
) -> RunResult {
    let rec = Recorder::new(sim, &plan, cfg);
    collect_with(sim, rec, end_reason, plan, cfg, wall)
        .expect("a recorder that holds its records writes nothing that could fail")
}

/// Gathers the results of a finished (or stopped) simulation whose released flows `rec`
/// recorded.
pub fn collect_with(
    sim: &Sim,
    mut rec: Recorder,
    end_reason: EndReason,
    plan: RunPlan,
    cfg: &Config,
    wall: Instant,
) -> Result<RunResult, String> {
    let msgs = sim.transport.messages();
    let mut records = Vec::with_capacity(sim.total);
    let mut totals = RunTotals {
        flows: match (msgs, cfg.end_when) {
            (None, Some(_)) => sim.flows.iter().filter(|f| f.started).count() as u64,
            _ => sim.total as u64,
        },
        ..Default::default()
    };
    if let Some(msgs) = msgs {
        if let Some(q) = sim.transport.qp_totals() {
            totals.timeouts += q.timeouts;
            totals.nacks += q.nacks;
            totals.cnps += q.cnps;
            totals.rate_decreases += q.rate_decreases;
        }
        totals.queue_pairs = sim.transport.queue_pairs().unwrap_or(0);
        if sim.retiring() {
            // Released messages the driver did not take yet, then the messages still held.
            for r in sim.retired_pending() {
                rec.retired(&sim.net, r);
            }
            for (slot, m) in sim.held_messages() {
                let attribution =
                    slot.and_then(|i| attribution_of(sim, i as usize, m.finish.is_some()));
                rec.message(&sim.net, &m, attribution);
            }
        } else {
            for (i, m) in msgs.iter().enumerate() {
                rec.message(&sim.net, m, attribution_of(sim, i, m.finish.is_some()));
            }
        }
        rec.flush(&mut records, &mut totals)?;
    } else {
        // Released flows the driver did not take yet, then the flows still held.
        for r in sim.retired_pending() {
            rec.retired(&sim.net, r);
        }
        // With `end_when`, flows that never started did not happen.
        let counted = |f: &crate::transport::Flow| f.started || cfg.end_when.is_none();
        if sim.retiring() {
            for f in sim.held_flows().iter().filter(|f| counted(f)) {
                let tcp = (f.id.0 != u32::MAX)
                    .then(|| sim.transport.tcp(f.id))
                    .flatten();
                let attribution = (f.id.0 != u32::MAX)
                    .then(|| attribution_of(sim, f.id.idx(), f.finish.is_some()))
                    .flatten();
                rec.flow(&sim.net, f, tcp, attribution);
            }
        } else {
            for f in sim.flows.iter().filter(|f| counted(f)) {
                let tcp = sim.transport.tcp(f.id);
                let attribution = attribution_of(sim, f.id.idx(), f.finish.is_some());
                rec.flow(&sim.net, f, tcp, attribution);
            }
        }
        rec.flush(&mut records, &mut totals)?;
    }
    records.sort_by_key(|r| r.flow_id);
    if !sim.retiring() {
        // Every flow's deadline class has a row, counted or not.
        for d in sim.flows.iter().filter_map(|f| f.deadline_class) {
            rec.summary.deadline_class(d);
        }
    }
    // `all`, each size class, each cumulative class, each traffic kind the workload labels,
    // each deadline class in increasing order of the mean.
    let summaries = rec.summary.finish()?;
    let dur = sim.now.0.max(1) as f64;
    let mut ports = Vec::with_capacity(sim.net.ports.len());
    let (mut hu, mut hn, mut fu, mut fnn) = (0.0, 0usize, 0.0, 0usize);
    for (i, p) in sim.net.ports.iter().enumerate() {
        let util = p.busy_through(sim.now) as f64 / dur;
        let peer_node = sim.net.ports[p.peer.idx()].node;
        let host_link = sim.net.is_host(p.node) || sim.net.is_host(peer_node);
        if host_link {
            hu += util;
            hn += 1;
        } else {
            fu += util;
            fnn += 1;
            totals.max_util_fabric_links = totals.max_util_fabric_links.max(util);
        }
        totals.pfc_pauses += p.stats.pause_rx;
        totals.max_queue_bytes = totals.max_queue_bytes.max(p.stats.max_qbytes);
        ports.push(PortRecord {
            port: i as u32,
            node: sim.net.nodes[p.node.idx()].name.clone(),
            peer: sim.net.nodes[peer_node.idx()].name.clone(),
            node_id: p.node.0,
            peer_id: peer_node.0,
            rate_bps: p.rate.bps(),
            tx_pkts: p.stats.tx_pkts,
            tx_bytes: p.stats.tx_bytes,
            utilization: util,
            drops: p.stats.drops,
            ecn_marks: p.stats.ecn_marks,
            pfc_pauses_rx: p.stats.pause_rx,
            paused_ps: p.stats.paused_time.0,
            max_queue_bytes: p.stats.max_qbytes,
        });
    }
    totals.mean_util_host_links = if hn > 0 { hu / hn as f64 } else { 0.0 };
    totals.mean_util_fabric_links = if fnn > 0 { fu / fnn as f64 } else { 0.0 };
    let switches: Vec<SwitchRecord> = sim
        .net
        .switches
        .iter()
        .enumerate()
        .map(|(i, s)| SwitchRecord {
            switch: sim.net.nodes[sim.net.n_hosts + i].name.clone(),
            lb_hash: s.lb.decisions[0],
            lb_other: s.lb.decisions[1],
            lb_congested: s.lb.decisions[2],
            drops_lossy: s.drops[0],
            drops_lossless: s.drops[1],
            pfc_frames: s.pfc_sent,
            peak_buffer_bytes: s.mmu.peak,
        })
        .collect();
    for s in &sim.net.switches {
        totals.lb_hash += s.lb.decisions[0];
        totals.lb_other += s.lb.decisions[1];
        totals.lb_congested += s.lb.decisions[2];
        totals.drops += s.drops[0] + s.drops[1];
        totals.drops_lossless += s.drops[1];
        totals.pfc_frames += s.pfc_sent;
    }
    // Packets lost with a failed link (its wire, a host's queue, no route left).
    totals.drops += sim.failure_losses;
    totals.sim_end_ps = sim.now.0;
    totals.events = sim.events();
    totals.packet_hops = sim.packet_hops;
    Ok(RunResult {
        plan,
        end_reason,
        totals,
        classes: summaries,
        records,
        fct_spill: rec.spilled.take().map(std::sync::Arc::new),
        ports,
        switches,
        conservation: sim.conservation(),
        wall_seconds: wall.elapsed().as_secs_f64(),
        pcap: None,
        pcap_bytes: None,
        timeseries: None,
        timeseries_csv: None,
    })
}
