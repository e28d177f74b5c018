//! Running experiments: expanding a config into runs (schemes × seeds), executing each run
//! single-threaded and deterministically, in parallel across runs, and collecting results.
//!
//! A run's output depends only on the config, the scheme and the seed, never on how many runs
//! execute at once or in which order.

use crate::config::{Config, Scheme, TransportKind};
use crate::metrics::{ClassSummary, FlowRecord, Hop, PortRecord, SizeClasses, ideal_fct};
use crate::net::BuildOpts;
use crate::sim::{Conservation, EndReason, Sim, SimSetup, TransportSpec};
use crate::transport::Proto;
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
}

impl RunPlan {
    /// A run of `scheme` at `seed` under `cfg` (no sweep).
    pub fn single(cfg: &Config, scheme: &str, seed: u64) -> RunPlan {
        RunPlan {
            id: format!("{scheme}-s{seed}"),
            scheme: Scheme::builtin(scheme).expect("known scheme"),
            seed,
            axes: Vec::new(),
            config: cfg.clone(),
        }
    }

    /// The value of sweep axis `key` in this run.
    pub fn axis_value(&self, key: &str) -> Option<&toml::Value> {
        self.axes.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
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
    for combo in crate::sweep::combinations(&cfg.sweep.axes) {
        let run_cfg = if combo.is_empty() {
            cfg.clone()
        } else {
            let c = crate::sweep::apply(cfg, &combo, file)?;
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
            for k in 0..cfg.seeds as u64 {
                let seed = cfg.seed + k;
                v.push(RunPlan {
                    id: format!("{s}{tag}-s{seed}"),
                    scheme: scheme.clone(),
                    seed,
                    axes: axes.clone(),
                    config: run_cfg.clone(),
                });
            }
        }
    }
    Ok(v)
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
    pub nacks: u64,
    pub cnps: u64,
    pub rate_decreases: u64,
    pub max_queue_bytes: u64,
    pub mean_util_host_links: f64,
    pub mean_util_fabric_links: f64,
    pub max_util_fabric_links: f64,
}

/// The result of one run.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub plan: RunPlan,
    pub end_reason: EndReason,
    pub totals: RunTotals,
    pub classes: Vec<ClassSummary>,
    #[serde(skip)]
    pub records: Vec<FlowRecord>,
    #[serde(skip)]
    pub ports: Vec<PortRecord>,
    pub conservation: Conservation,
    pub wall_seconds: f64,
}

/// Executes one run.
pub fn execute(cfg: &Config, base: &Path, plan: &RunPlan) -> Result<RunResult, String> {
    execute_with(cfg, base, plan, |_| {})
}

/// Executes one run, reporting simulated time to `progress` now and then.
pub fn execute_with(
    cfg: &Config,
    base: &Path,
    plan: &RunPlan,
    progress: impl FnMut(SimTime),
) -> Result<RunResult, String> {
    let wall = Instant::now();
    let mut sim = build_sim(cfg, base, plan)?;
    let end_reason = sim.run_with(progress);
    Ok(collect(&sim, end_reason, plan.clone(), cfg, wall))
}

/// Builds the simulation of one run, ready to run.
pub fn build_sim(cfg: &Config, base: &Path, plan: &RunPlan) -> Result<Sim, String> {
    let n_hosts = cfg.topology.n_hosts();
    let specs = cfg
        .workload
        .generate(n_hosts, cfg.topology.host_rate(), plan.seed, base)?;
    let topo = cfg.topology.build();
    let transport = match plan.scheme.transport {
        TransportKind::Tcp | TransportKind::Dctcp | TransportKind::D2tcp | TransportKind::Pdtcp => {
            TransportSpec::Tcp(cfg.tcp_params(&plan.scheme))
        }
        TransportKind::Udp => TransportSpec::Udp {
            rate: cfg.udp.rate,
            mss: cfg.packet.mss.0 as u32,
            header: cfg.packet.header.0 as u32,
        },
        TransportKind::Rdma => TransportSpec::Rdma(Box::new(cfg.rdma_spec(&plan.scheme))),
    };
    let switch = cfg.switch_for(&plan.scheme);
    let build = BuildOpts {
        switch: &switch,
        lb: plan.scheme.lb.unwrap_or(cfg.switch.load_balancer),
        udp: matches!(
            plan.scheme.transport,
            TransportKind::Udp | TransportKind::Rdma
        ),
        seed: plan.seed,
        max_packet: cfg.packet.mss.0 + cfg.packet.header.0,
        am_threshold: cfg.am_threshold(),
    };
    Sim::new(SimSetup {
        topo: &topo,
        build,
        transport,
        flows: &specs,
        data_prio: cfg.priorities.data,
        ack_prio: cfg.priorities.ack,
        stop_time: cfg.stop_time,
        seed: plan.seed,
        end_when: cfg.end_when,
    })
}

/// Per-hop rates and delays of a path of egress ports.
fn hops_of(sim: &Sim, src: u32, dst: u32) -> Vec<Hop> {
    sim.net
        .first_path(src, dst)
        .iter()
        .map(|p| {
            let port = &sim.net.ports[p.idx()];
            (port.rate, port.delay)
        })
        .collect()
}

/// Gathers the results of a finished (or stopped) simulation.
pub fn collect(
    sim: &Sim,
    end_reason: EndReason,
    plan: RunPlan,
    cfg: &Config,
    wall: Instant,
) -> RunResult {
    let classes = &SizeClasses {
        bounds: cfg.metrics.size_classes.iter().map(|b| b.0).collect(),
    };
    let mss = sim.transport.mss();
    let header = sim.transport.header();
    let with_ack = !matches!(sim.transport, TransportSpec::Udp { .. });
    let n_hosts = sim.net.n_hosts;
    let mut path_cache: Vec<Option<(Vec<Hop>, Vec<Hop>)>> = vec![None; n_hosts * n_hosts];
    let mut records = Vec::with_capacity(sim.total);
    let mut totals = RunTotals {
        flows: match (&sim.rdma, cfg.end_when) {
            (None, Some(_)) => sim.flows.iter().filter(|f| f.started).count() as u64,
            _ => sim.total as u64,
        },
        ..Default::default()
    };
    let mut ideal_of = |src: u32, dst: u32, size: u64| {
        let key = src as usize * n_hosts + dst as usize;
        if path_cache[key].is_none() {
            path_cache[key] = Some((hops_of(sim, src, dst), hops_of(sim, dst, src)));
        }
        let (fwd, rev) = path_cache[key].as_ref().unwrap();
        ideal_fct(size, mss, header, fwd, rev, with_ack)
    };
    if let Some(r) = &sim.rdma {
        for f in &sim.flows {
            match &f.proto {
                Proto::Rdma { snd, .. } => {
                    totals.timeouts += snd.timeouts;
                    totals.nacks += snd.nacks;
                    totals.cnps += snd.dcqcn.cnps;
                    totals.rate_decreases += snd.dcqcn.decreases;
                }
                Proto::MpRdma { snd, .. } => totals.timeouts += snd.timeouts,
                _ => {}
            }
        }
        totals.queue_pairs = sim.flows.len() as u64;
        for m in &r.msgs {
            let ideal = ideal_of(m.src, m.dst, m.size);
            let fct = m.finish.map(|t| t - m.start);
            totals.retransmits += m.retx;
            totals.ecn_marks += m.ce;
            if fct.is_some() {
                totals.finished += 1;
            }
            records.push(FlowRecord {
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
                size_class: classes.name(classes.class_of(m.size)),
                retransmits: m.retx,
                timeouts: 0,
                ecn_marks: m.ce,
                drops: m.drops,
                deadline_ps: m.deadline.map(|t| (m.start + t).0),
                deadline_met: m
                    .deadline
                    .map(|d| m.rcv_finish.is_some_and(|r| r <= m.start + d)),
                tag: crate::workload::FlowTag::Flow.name(),
                deadline_class: None,
                ideal_group_fct_ps: ideal.0,
                slowdown_group: fct.map(|t| t.0 as f64 / ideal.0 as f64),
            });
        }
    }
    // Bytes per group, for the contention-aware ideal.
    let mut group_bytes: Vec<u64> = Vec::new();
    if sim.rdma.is_none() {
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
    // With `end_when`, flows that never started did not happen.
    let counted =
        |f: &&crate::transport::Flow| sim.rdma.is_none() && (f.started || cfg.end_when.is_none());
    for f in sim.flows.iter().filter(counted) {
        let ideal = ideal_of(f.src, f.dst, f.size);
        let ideal_group = if f.group != u32::MAX && group_bytes[f.group as usize] > f.size {
            ideal_of(f.src, f.dst, group_bytes[f.group as usize])
        } else {
            ideal
        };
        let fct = f.finish.map(|t| t - f.start);
        if let Proto::Tcp { rcv, .. } = &f.proto {
            totals.spurious_retx += rcv.duplicates;
        }
        let (retx, to) = match &f.proto {
            Proto::Tcp { snd, .. } => (snd.retransmits, snd.timeouts),
            Proto::Udp { .. } | Proto::Rdma { .. } | Proto::MpRdma { .. } => (0, 0),
        };
        totals.retransmits += retx;
        totals.timeouts += to;
        totals.ecn_marks += f.stats.ce_rcvd;
        if fct.is_some() {
            totals.finished += 1;
        }
        records.push(FlowRecord {
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
            size_class: classes.name(classes.class_of(f.size)),
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
        });
    }
    records.sort_by_key(|r| r.flow_id);
    let mut summaries = vec![ClassSummary::of("all".into(), records.iter())];
    for c in 0..classes.count() {
        let name = classes.name(c);
        summaries.push(ClassSummary::of(
            name.clone(),
            records.iter().filter(|r| r.size_class == name),
        ));
    }
    // Per traffic kind, when the workload labels its flows.
    for tag in [
        crate::workload::FlowTag::Query,
        crate::workload::FlowTag::Workflow,
        crate::workload::FlowTag::Request,
        crate::workload::FlowTag::Background,
    ] {
        if records.iter().any(|r| r.tag == tag.name()) {
            summaries.push(ClassSummary::of(
                format!("tag:{}", tag.name()),
                records.iter().filter(|r| r.tag == tag.name()),
            ));
        }
    }
    // Per deadline class, in increasing order of the mean.
    let mut dl_classes: Vec<SimTime> = sim.flows.iter().filter_map(|f| f.deadline_class).collect();
    dl_classes.sort();
    dl_classes.dedup();
    for d in dl_classes {
        let name = d.to_string();
        summaries.push(ClassSummary::of(
            format!("deadline:{name}"),
            records
                .iter()
                .filter(|r| r.deadline_class.as_deref() == Some(name.as_str())),
        ));
    }
    let dur = sim.now.0.max(1) as f64;
    let mut ports = Vec::with_capacity(sim.net.ports.len());
    let (mut hu, mut hn, mut fu, mut fnn) = (0.0, 0usize, 0.0, 0usize);
    for (i, p) in sim.net.ports.iter().enumerate() {
        let util = p.stats.tx_bytes as f64 * 8.0 / (p.rate.bps() as f64 * dur / 1e12);
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
    for s in &sim.net.switches {
        totals.lb_hash += s.lb.decisions[0];
        totals.lb_other += s.lb.decisions[1];
        totals.lb_congested += s.lb.decisions[2];
        totals.drops += s.drops[0] + s.drops[1];
        totals.drops_lossless += s.drops[1];
        totals.pfc_frames += s.pfc_sent;
    }
    totals.sim_end_ps = sim.now.0;
    totals.events = sim.events();
    totals.packet_hops = sim.packet_hops;
    RunResult {
        plan,
        end_reason,
        totals,
        classes: summaries,
        records,
        ports,
        conservation: sim.conservation(),
        wall_seconds: wall.elapsed().as_secs_f64(),
    }
}
