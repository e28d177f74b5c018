//! Writing results: per-run `fct.csv`, `summary.csv`, `summary.json`, `ports.csv`,
//! `manifest.json`; the experiment-level `summary.csv`; and the terminal comparison table.
//!
//! A run's directory is written under a temporary name and renamed into place only when
//! every file is complete, so a failed or interrupted run leaves no directory that looks
//! finished.

use crate::config::Config;
use crate::experiment::RunResult;
use crate::metrics::ClassSummary;
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// Column documentation of `fct.csv` (also in the README).
pub const FCT_COLUMNS: &str = "flow_id,src,dst,size_bytes,start_ps,finish_ps,rcv_finish_ps,fct_ps,ideal_fct_ps,slowdown,size_class,retransmits,timeouts,ecn_marks,drops,deadline_ps,deadline_met,tag,deadline_class,ideal_group_fct_ps,slowdown_group,attr_sender_ps,attr_recovery_ps,attr_nic_hol_ps,attr_pfc_ps,attr_serialization_ps,attr_propagation_ps,attr_switch_queue_ps,attr_switch_higher_ps,attr_switch_residual_ps,attr_switch_lower_ps,attr_receiver_ps";

/// Column list of the per-run and experiment `summary.csv` (sweep axes, when any, come
/// after `seed`, one column each).
pub const SUMMARY_COLUMNS: &str = "run,scheme,seed,class,flows,finished,avg_fct_us,p50_fct_us,p99_fct_us,p999_fct_us,avg_slowdown,p50_slowdown,p99_slowdown,p999_slowdown,class_drops,deadline_flows,deadline_met,avg_slowdown_group,p50_slowdown_group,p99_slowdown_group,p999_slowdown_group,drops,timeouts,pfc_pauses,mean_util_fabric_links,st_alpha,st_alpha_pred,st_alpha_ratio,st_amplitude,st_amplitude_pred,st_amplitude_ratio,st_period_rtts,st_period_pred,st_period_ratio,st_period_ratio_delay,st_q_p99,st_q_max_pred,st_k_bound,st_empty_fraction,attr_sender_us,attr_recovery_us,attr_nic_hol_us,attr_pfc_us,attr_serialization_us,attr_propagation_us,attr_switch_queue_us,attr_switch_higher_us,attr_switch_residual_us,attr_switch_lower_us,attr_receiver_us,end_reason";

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x:.6}")
    }
}

/// A CSV table written through the `csv` crate: a field holding a comma, quote or line break
/// is quoted, so user text (sweep values, names) never shifts a column.
pub struct CsvTable {
    w: csv::Writer<Vec<u8>>,
}

impl CsvTable {
    /// A table with this header row.
    pub fn new<I, S>(header: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        let mut t = CsvTable {
            w: csv::WriterBuilder::new()
                .terminator(csv::Terminator::Any(b'\n'))
                .from_writer(Vec::new()),
        };
        t.row(header);
        t
    }

    /// Appends one row.
    pub fn row<I, S>(&mut self, fields: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        self.w
            .write_record(fields)
            .expect("writing CSV into memory cannot fail");
    }

    /// The table's text.
    pub fn finish(self) -> String {
        let bytes = self
            .w
            .into_inner()
            .expect("writing CSV into memory cannot fail");
        String::from_utf8(bytes).expect("CSV fields are UTF-8")
    }
}

/// Reads CSV text through the `csv` crate: the header and the records (every record must
/// have the header's number of fields; errors name the line).
pub fn read_csv(text: &str) -> Result<(Vec<String>, Vec<csv::StringRecord>), String> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = r
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(String::from)
        .collect();
    if header.is_empty() || header.iter().all(|h| h.is_empty()) {
        return Err("empty file (no header row)".into());
    }
    let mut rows = Vec::new();
    for rec in r.records() {
        rows.push(rec.map_err(|e| match e.position() {
            Some(p) => format!("line {}: {e}", p.line()),
            None => e.to_string(),
        })?);
    }
    Ok((header, rows))
}

/// The delay-attribution cells of a row: the components, or empty cells.
fn attribution_cells<T: std::fmt::Display>(v: Option<impl Iterator<Item = T>>) -> Vec<String> {
    match v {
        Some(it) => it.map(|x| x.to_string()).collect(),
        None => vec![String::new(); crate::sim::attrib::Attribution::NAMES.len()],
    }
}

/// `fct.csv` contents.
pub fn fct_csv(r: &RunResult) -> String {
    let mut t = CsvTable::new(FCT_COLUMNS.split(','));
    for f in &r.records {
        let mut row = vec![
            f.flow_id.to_string(),
            f.src.to_string(),
            f.dst.to_string(),
            f.size_bytes.to_string(),
            f.start_ps.to_string(),
            opt(f.finish_ps),
            opt(f.rcv_finish_ps),
            opt(f.fct_ps),
            f.ideal_fct_ps.to_string(),
            f.slowdown.map(num).unwrap_or_default(),
            f.size_class.clone(),
            f.retransmits.to_string(),
            f.timeouts.to_string(),
            f.ecn_marks.to_string(),
            f.drops.to_string(),
            opt(f.deadline_ps),
            opt(f.deadline_met.map(|m| m as u8)),
            f.tag.to_string(),
            f.deadline_class.clone().unwrap_or_default(),
            f.ideal_group_fct_ps.to_string(),
            f.slowdown_group.map(num).unwrap_or_default(),
        ];
        row.extend(attribution_cells(
            f.attribution.map(|a| a.values().into_iter()),
        ));
        t.row(row);
    }
    t.finish()
}

fn summary_row(t: &mut CsvTable, r: &RunResult, c: &ClassSummary) {
    let tot = &r.totals;
    let mut row = vec![
        r.plan.id.clone(),
        r.plan.scheme.name.clone(),
        r.plan.seed.to_string(),
    ];
    row.extend(r.plan.axes.iter().map(|(_, v)| crate::sweep::value_text(v)));
    row.extend([
        c.class.clone(),
        c.flows.to_string(),
        c.finished.to_string(),
        num(c.avg_fct_us),
        num(c.p50_fct_us),
        num(c.p99_fct_us),
        num(c.p999_fct_us),
        num(c.avg_slowdown),
        num(c.p50_slowdown),
        num(c.p99_slowdown),
        num(c.p999_slowdown),
        c.drops.to_string(),
        c.deadline_flows.to_string(),
        num(c.deadline_met),
        num(c.avg_slowdown_group),
        num(c.p50_slowdown_group),
        num(c.p99_slowdown_group),
        num(c.p999_slowdown_group),
        tot.drops.to_string(),
        tot.timeouts.to_string(),
        tot.pfc_pauses.to_string(),
        num(tot.mean_util_fabric_links),
    ]);
    row.extend(sawtooth_cells(tot.sawtooth.as_ref()));
    row.extend(attribution_cells(
        (!c.attribution_us.is_empty()).then(|| c.attribution_us.iter().map(|x| num(*x))),
    ));
    row.push(r.end_reason.name().to_string());
    t.row(row);
}

/// The sawtooth probe's cells of a summary row (empty without a probe).
fn sawtooth_cells(s: Option<&crate::probe::SawtoothStats>) -> Vec<String> {
    let Some(s) = s else {
        return vec![String::new(); 14];
    };
    let (m, p) = (&s.measured, &s.predicted);
    [
        m.alpha,
        p.alpha,
        m.alpha / p.alpha,
        m.amplitude,
        p.amplitude,
        m.amplitude / p.amplitude,
        m.period_rtts,
        p.period_rtts,
        m.period_rtts / p.period_rtts,
        m.period_rtts / (p.period_rtts + 1.0),
        m.q_p99,
        p.q_max,
        p.k_bound,
        m.empty_fraction,
    ]
    .iter()
    .map(|x| num(*x))
    .collect()
}

/// The header of `summary.csv` for runs with these sweep axes (dotted keys).
pub fn summary_header(axes: &[&str]) -> Vec<String> {
    let mut h: Vec<String> = Vec::new();
    for c in SUMMARY_COLUMNS.split(',') {
        h.push(c.to_string());
        if c == "seed" {
            h.extend(axes.iter().map(|k| crate::sweep::axis_column(k)));
        }
    }
    h
}

/// `summary.csv` rows (one per size class, `all` first) for one run, with the header.
pub fn summary_csv(runs: &[&RunResult]) -> String {
    let axes: Vec<&str> = runs
        .first()
        .map(|r| r.plan.axes.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let mut t = CsvTable::new(summary_header(&axes));
    for r in runs {
        for c in &r.classes {
            summary_row(&mut t, r, c);
        }
    }
    t.finish()
}

fn switches_csv(r: &RunResult) -> String {
    let mut t = CsvTable::new([
        "switch",
        "lb_hash",
        "lb_other",
        "lb_congested",
        "drops_lossy",
        "drops_lossless",
        "pfc_frames",
        "peak_buffer_bytes",
    ]);
    for w in &r.switches {
        t.row([
            w.switch.clone(),
            w.lb_hash.to_string(),
            w.lb_other.to_string(),
            w.lb_congested.to_string(),
            w.drops_lossy.to_string(),
            w.drops_lossless.to_string(),
            w.pfc_frames.to_string(),
            w.peak_buffer_bytes.to_string(),
        ]);
    }
    t.finish()
}

fn ports_csv(r: &RunResult) -> String {
    let mut t = CsvTable::new([
        "port",
        "node",
        "peer",
        "rate_bps",
        "tx_pkts",
        "tx_bytes",
        "utilization",
        "drops",
        "ecn_marks",
        "pfc_pauses_rx",
        "paused_ps",
        "max_queue_bytes",
        "node_id",
        "peer_id",
    ]);
    for p in &r.ports {
        t.row([
            p.port.to_string(),
            p.node.clone(),
            p.peer.clone(),
            p.rate_bps.to_string(),
            p.tx_pkts.to_string(),
            p.tx_bytes.to_string(),
            num(p.utilization),
            p.drops.to_string(),
            p.ecn_marks.to_string(),
            p.pfc_pauses_rx.to_string(),
            p.paused_ps.to_string(),
            p.max_queue_bytes.to_string(),
            p.node_id.to_string(),
            p.peer_id.to_string(),
        ]);
    }
    t.finish()
}

#[derive(Serialize)]
struct Manifest<'a> {
    dcsim_version: &'static str,
    git_revision: &'static str,
    git_dirty: &'static str,
    command_line: Vec<String>,
    /// Hash of what the run's results depend on (`identity`), also in the `complete` marker.
    config_hash: &'a str,
    /// Input files read (as named in the config) and hashes of their contents.
    inputs: &'a std::collections::BTreeMap<String, String>,
    experiment: &'a str,
    run: &'a str,
    scheme: &'a crate::config::Scheme,
    seed: u64,
    end_reason: crate::sim::EndReason,
    wall_seconds: f64,
    events: u64,
    packet_hops: u64,
    sim_end_ps: u64,
    conservation: &'a crate::sim::Conservation,
    conservation_holds: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pcap: Option<crate::experiment::PcapSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeseries: Option<crate::experiment::TimeSeriesSummary>,
    definitions: Definitions,
    /// Values the run derived from others (absent when none applies).
    #[serde(skip_serializing_if = "Option::is_none")]
    derived: Option<Derived>,
    /// The run's config: the experiment's, with the run's sweep values applied.
    config: &'a Config,
    /// What `config_hash` covers (the config without the keys that do not change results,
    /// the scheme, the seed, the input hashes).
    identity: &'a serde_json::Value,
}

/// Parameters a run derived rather than read.
#[derive(Serialize)]
struct Derived {
    /// GPMP's outstanding-bytes limit L per low-priority queue pair.
    gpmp_limit_bytes: u64,
    /// "config" when `[gpmp] limit` set it, "bdp" when derived from the path.
    gpmp_limit_source: &'static str,
}

impl Derived {
    fn of(cfg: &Config, scheme: &crate::config::Scheme) -> Option<Derived> {
        (scheme.rdma_host == Some(crate::config::RdmaHostKind::Gpmp)).then(|| Derived {
            gpmp_limit_bytes: cfg.gpmp_limit(),
            gpmp_limit_source: if cfg.gpmp.limit.is_some() {
                "config"
            } else {
                "bdp"
            },
        })
    }
}

#[derive(Serialize)]
struct Definitions {
    fct: &'static str,
    ideal_fct: &'static str,
    slowdown: &'static str,
    percentiles: &'static str,
    utilization: &'static str,
}

const DEFS: Definitions = Definitions {
    fct: "sender side: flow start to the arrival of the ACK covering the last byte (UDP: last byte received)",
    ideal_fct: "idle network, unlimited window: store-and-forward pipeline of the flow's packets (mss + header bytes each, the last one shorter) over the shortest paths, exact per-packet serialization plus propagation, the packets free to use every link the shortest paths use at each stage (so a lower bound for every load balancer; the single-path ideal where the fabric is no slower than the host links), plus the final ACK (header bytes) over the reverse path (no ACK term for UDP)",
    slowdown: "fct / ideal_fct",
    percentiles: "nearest rank: value at rank ceil(p * n) of the sorted finished flows",
    utilization: "time the port spent serializing within the run (the packet on the wire at the end counted up to the end) / simulated duration; at most 1",
};

/// Writes `bytes` to `path` atomically: into a hidden temporary file beside it, then renamed
/// over it, so a reader (or an interrupted run) never sees a half-written file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.partial"));
    fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// The marker a run directory holds once every other file is written: the run's config hash.
pub const COMPLETE_MARKER: &str = "complete";

/// A temporary name in `dir` for `name`, unique to this process and call.
pub fn temp_name(dir: &Path, name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.partial-{}-{n}", std::process::id()))
}

/// Writes one run's files into `<exp_dir>/<run id>/` atomically: into a temporary directory
/// unique to this process, with the `complete` marker (the config hash) written last, then
/// renamed into place.
pub fn write_run(exp_dir: &Path, cfg: &Config, r: &RunResult) -> std::io::Result<PathBuf> {
    let dir = exp_dir.join(&r.plan.id);
    let tmp = temp_name(exp_dir, &r.plan.id);
    fs::create_dir_all(&tmp)?;
    let result = (|| {
        fs::write(tmp.join("fct.csv"), fct_csv(r))?;
        fs::write(tmp.join("summary.csv"), summary_csv(&[r]))?;
        fs::write(tmp.join("ports.csv"), ports_csv(r))?;
        fs::write(tmp.join("switches.csv"), switches_csv(r))?;
        if let Some(b) = &r.pcap_bytes {
            fs::write(tmp.join("trace.pcap"), b)?;
        }
        if let Some([q, l, f]) = &r.timeseries_csv {
            fs::write(tmp.join("ts_queues.csv"), q)?;
            fs::write(tmp.join("ts_links.csv"), l)?;
            fs::write(tmp.join("ts_flows.csv"), f)?;
        }
        let json = serde_json::to_string_pretty(r).map_err(std::io::Error::other)?;
        fs::write(tmp.join("summary.json"), json + "\n")?;
        let m = Manifest {
            dcsim_version: env!("CARGO_PKG_VERSION"),
            git_revision: crate::provenance::GIT_REV,
            git_dirty: crate::provenance::GIT_DIRTY,
            command_line: crate::provenance::command_line(),
            config_hash: &r.plan.identity.hash,
            inputs: &r.plan.identity.inputs,
            identity: &r.plan.identity.identity,
            experiment: &cfg.name,
            run: &r.plan.id,
            scheme: &r.plan.scheme,
            seed: r.plan.seed,
            end_reason: r.end_reason,
            wall_seconds: r.wall_seconds,
            events: r.totals.events,
            packet_hops: r.totals.packet_hops,
            sim_end_ps: r.totals.sim_end_ps,
            conservation: &r.conservation,
            conservation_holds: r.conservation.holds(),
            pcap: r.pcap,
            timeseries: r.timeseries,
            definitions: DEFS,
            derived: Derived::of(&r.plan.config, &r.plan.scheme),
            config: &r.plan.config,
        };
        let json = serde_json::to_string_pretty(&m).map_err(std::io::Error::other)?;
        fs::write(tmp.join("manifest.json"), json + "\n")?;
        fs::write(
            tmp.join(COMPLETE_MARKER),
            format!("{}\n", r.plan.identity.hash),
        )?;
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        fs::rename(&tmp, &dir)
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result.map(|_| dir)
}

/// The terminal comparison table: one block per size class, one row per run.
pub fn table(runs: &[RunResult]) -> String {
    let mut s = String::new();
    // Classes in first-seen order (runs of a sweep may have different ones), columns as wide
    // as their longest entry.
    let mut classes: Vec<&str> = Vec::new();
    for r in runs {
        for k in &r.classes {
            if !classes.contains(&k.class.as_str()) {
                classes.push(&k.class);
            }
        }
    }
    let wr = runs
        .iter()
        .map(|r| r.plan.id.len())
        .max()
        .unwrap_or(0)
        .max(3);
    let wc = classes.iter().map(|c| c.len()).max().unwrap_or(0).max(5);
    let _ = writeln!(
        s,
        "{:<wr$} {:<wc$} {:>7} {:>12} {:>12} {:>10} {:>10} {:>8} {:>8}",
        "run",
        "class",
        "flows",
        "avg_fct_us",
        "p99_fct_us",
        "avg_sd",
        "p99_sd",
        "drops",
        "timeouts"
    );
    for (c, class) in classes.iter().enumerate() {
        for r in runs {
            let Some(k) = r.classes.iter().find(|k| k.class == *class) else {
                continue;
            };
            let unfinished = k.flows - k.finished;
            let _ = writeln!(
                s,
                "{:<wr$} {:<wc$} {:>7} {:>12.1} {:>12.1} {:>10.2} {:>10.2} {:>8} {:>8}{}",
                r.plan.id,
                k.class,
                k.flows,
                k.avg_fct_us,
                k.p99_fct_us,
                k.avg_slowdown,
                k.p99_slowdown,
                if c == 0 {
                    r.totals.drops.to_string()
                } else {
                    String::new()
                },
                if c == 0 {
                    r.totals.timeouts.to_string()
                } else {
                    String::new()
                },
                if unfinished > 0 {
                    format!("  ({unfinished} unfinished)")
                } else {
                    String::new()
                },
            );
        }
    }
    s
}
