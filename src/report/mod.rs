//! Writing results: per-run `fct.csv`, `summary.csv`, `summary.json`, `ports.csv`,
//! `manifest.json`; the experiment-level `summary.csv`; and the terminal comparison table.
//!
//! A run's directory is written under a temporary name and renamed into place only when
//! every file is complete, so a failed or interrupted run leaves no directory that looks
//! finished.

use crate::config::Config;
pub mod results;

use crate::metrics::{ClassSummary, FlowRecord};
pub use results::RunResult;
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use crate::columns::{Fct, Summary};

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// A float cell: six decimals, empty for NaN (not defined).
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

/// The cell of `fct.csv` column `c` for flow record `f`.
fn fct_cell(c: Fct, f: &FlowRecord) -> String {
    match c {
        Fct::FlowId => f.flow_id.to_string(),
        Fct::Src => f.src.to_string(),
        Fct::Dst => f.dst.to_string(),
        Fct::SizeBytes => f.size_bytes.to_string(),
        Fct::StartPs => f.start_ps.to_string(),
        Fct::FinishPs => opt(f.finish_ps),
        Fct::RcvFinishPs => opt(f.rcv_finish_ps),
        Fct::FctPs => opt(f.fct_ps),
        Fct::IdealFctPs => f.ideal_fct_ps.to_string(),
        Fct::Slowdown => f.slowdown.map(num).unwrap_or_default(),
        Fct::SizeClass => f.size_class.clone(),
        Fct::Retransmits => f.retransmits.to_string(),
        Fct::Timeouts => f.timeouts.to_string(),
        Fct::EcnMarks => f.ecn_marks.to_string(),
        Fct::Drops => f.drops.to_string(),
        Fct::DeadlinePs => opt(f.deadline_ps),
        Fct::DeadlineMet => opt(f.deadline_met.map(|m| m as u8)),
        Fct::Tag => f.tag.to_string(),
        Fct::DeadlineClass => f.deadline_class.clone().unwrap_or_default(),
        Fct::IdealGroupFctPs => f.ideal_group_fct_ps.to_string(),
        Fct::SlowdownGroup => f.slowdown_group.map(num).unwrap_or_default(),
        Fct::Attr(i) => opt(f.attribution.map(|a| a.values()[i])),
    }
}

/// The cell of `summary.csv` column `c` for run `r` and its size class `k`.
fn summary_cell(c: Summary, r: &RunResult, k: &ClassSummary) -> String {
    let t = &r.totals;
    match c {
        Summary::Class => k.class.clone(),
        Summary::Flows => k.flows.to_string(),
        Summary::Finished => k.finished.to_string(),
        Summary::AvgFct => num(k.avg_fct_us),
        Summary::P50Fct => num(k.p50_fct_us),
        Summary::P99Fct => num(k.p99_fct_us),
        Summary::P999Fct => num(k.p999_fct_us),
        Summary::AvgSlowdown => num(k.avg_slowdown),
        Summary::P50Slowdown => num(k.p50_slowdown),
        Summary::P99Slowdown => num(k.p99_slowdown),
        Summary::P999Slowdown => num(k.p999_slowdown),
        Summary::ClassDrops => k.drops.to_string(),
        Summary::DeadlineFlows => k.deadline_flows.to_string(),
        Summary::DeadlineMet => num(k.deadline_met),
        Summary::AvgSlowdownGroup => num(k.avg_slowdown_group),
        Summary::P50SlowdownGroup => num(k.p50_slowdown_group),
        Summary::P99SlowdownGroup => num(k.p99_slowdown_group),
        Summary::P999SlowdownGroup => num(k.p999_slowdown_group),
        Summary::Drops => t.drops.to_string(),
        Summary::Timeouts => t.timeouts.to_string(),
        Summary::PfcPauses => t.pfc_pauses.to_string(),
        Summary::MeanUtilFabricLinks => num(t.mean_util_fabric_links),
        Summary::Busbw => mean_of_all(r.collectives.iter().map(|c| c.busbw_gbps)),
        Summary::CollectiveTime => mean_of_all(
            r.collectives
                .iter()
                .map(|c| c.time_ps.map(|t| t as f64 / 1e6)),
        ),
        Summary::IterationTime => mean_of_all(
            r.iterations
                .iter()
                .map(|i| i.time_ps.map(|t| t as f64 / 1e6)),
        ),
        Summary::Sawtooth(i) => t
            .sawtooth
            .as_ref()
            .map(|s| num(sawtooth(s)[i]))
            .unwrap_or_default(),
        Summary::Attr(i) => k.attribution_us.get(i).map(|x| num(*x)).unwrap_or_default(),
        Summary::EndReason => r.end_reason.name().to_string(),
    }
}

/// The mean of `xs`, empty when there are none or one is missing (an unfinished collective
/// or iteration: a mean over the others would flatter the run).
fn mean_of_all(xs: impl Iterator<Item = Option<f64>>) -> String {
    let (mut sum, mut n) = (0.0, 0usize);
    for x in xs {
        match x {
            Some(v) => {
                sum += v;
                n += 1;
            }
            None => return String::new(),
        }
    }
    match n {
        0 => String::new(),
        _ => num(sum / n as f64),
    }
}

/// The sawtooth probe's values in the order of [`crate::columns::SAWTOOTH`].
fn sawtooth(s: &crate::probe::SawtoothStats) -> [f64; 14] {
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
}

/// `fct.csv` contents: one row per flow (or RDMA message).
pub fn fct_csv(r: &RunResult) -> String {
    let cols = crate::columns::fct();
    let mut t = CsvTable::new(cols.iter().map(|c| c.name.as_ref()));
    for f in &r.records {
        t.row(cols.iter().map(|c| fct_cell(c.id, f)));
    }
    t.finish()
}

/// One `fct.csv` row (with its line break) for flow record `f`.
fn fct_row(cols: &[crate::columns::Column<Fct>], f: &FlowRecord) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(cols.iter().map(|c| fct_cell(c.id, f)))
        .expect("writing CSV into memory cannot fail");
    w.into_inner().expect("writing CSV into memory cannot fail")
}

/// The `fct.csv` rows of a run with many flows, written out while it runs (its flows are
/// released as they finish, `sim::Retire`): in chunks of rows sorted by (workload flow id,
/// arrival order), in a hidden directory beside the experiment's runs, merged into `fct.csv`
/// in that order when the run is written: the file a run that keeps its records writes,
/// byte for byte. The directory is removed when the spill is dropped.
#[derive(Debug)]
pub struct FctSpill {
    dir: PathBuf,
    chunks: Vec<PathBuf>,
}

impl FctSpill {
    /// A spill for run `run` in a new hidden directory under `parent`.
    pub fn new(parent: &Path, run: &str) -> std::io::Result<FctSpill> {
        fs::create_dir_all(parent)?;
        let dir = temp_name(parent, &format!("{run}.fct-rows"));
        fs::create_dir_all(&dir)?;
        Ok(FctSpill {
            dir,
            chunks: Vec::new(),
        })
    }

    /// Writes `rows` (record, with its workload id and arrival order) as one sorted chunk.
    pub fn chunk(&mut self, mut rows: Vec<(u32, u32, FlowRecord)>) -> std::io::Result<()> {
        use std::io::Write;
        rows.sort_by_key(|&(id, order, _)| (id, order));
        let path = self.dir.join(format!("{}.rows", self.chunks.len()));
        let mut w = std::io::BufWriter::new(fs::File::create(&path)?);
        let cols = crate::columns::fct();
        for (id, order, rec) in &rows {
            write!(w, "{id} {order} ")?;
            w.write_all(&fct_row(&cols, rec))?;
        }
        w.flush()?;
        self.chunks.push(path);
        Ok(())
    }

    /// Rows written so far, in chunks.
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// Writes `fct.csv` at `path`: the header, then every chunk's rows merged in order.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        use std::io::{BufRead, Write};
        let bad = |c: &Path| std::io::Error::other(format!("{}: malformed row", c.display()));
        let cols = crate::columns::fct();
        let header = CsvTable::new(cols.iter().map(|c| c.name.as_ref())).finish();
        let mut out = std::io::BufWriter::new(fs::File::create(path)?);
        out.write_all(header.as_bytes())?;
        let mut readers = Vec::with_capacity(self.chunks.len());
        let mut heap = std::collections::BinaryHeap::new();
        // The next line of chunk `i`, keyed: (id, order, i) and the row after the keys.
        let next = |r: &mut std::io::BufReader<fs::File>,
                    c: &Path|
         -> std::io::Result<Option<(u32, u32, String)>> {
            let mut line = String::new();
            if r.read_line(&mut line)? == 0 {
                return Ok(None);
            }
            let mut it = line.splitn(3, ' ');
            let (Some(id), Some(order), Some(row)) = (it.next(), it.next(), it.next()) else {
                return Err(bad(c));
            };
            let id = id.parse().map_err(|_| bad(c))?;
            let order = order.parse().map_err(|_| bad(c))?;
            Ok(Some((id, order, row.to_string())))
        };
        let mut rows: Vec<String> = Vec::with_capacity(self.chunks.len());
        for (i, c) in self.chunks.iter().enumerate() {
            let mut r = std::io::BufReader::new(fs::File::open(c)?);
            let first = next(&mut r, c)?;
            readers.push(r);
            match first {
                Some((id, order, row)) => {
                    heap.push(std::cmp::Reverse((id, order, i)));
                    rows.push(row);
                }
                None => rows.push(String::new()),
            }
        }
        while let Some(std::cmp::Reverse((_, _, i))) = heap.pop() {
            out.write_all(rows[i].as_bytes())?;
            if let Some((id, order, row)) = next(&mut readers[i], &self.chunks[i])? {
                heap.push(std::cmp::Reverse((id, order, i)));
                rows[i] = row;
            }
        }
        out.flush()
    }
}

impl Drop for FctSpill {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// `summary.csv` rows (one per size class, `all` first) for these runs, with the header.
pub fn summary_csv(runs: &[&RunResult]) -> String {
    let axes: Vec<&str> = runs
        .first()
        .map(|r| r.plan.axes.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let cols = crate::columns::summary();
    let mut t = CsvTable::new(crate::columns::summary_header(&axes));
    for r in runs {
        for k in &r.classes {
            let mut row = vec![
                r.plan.id.clone(),
                r.plan.scheme.name.clone(),
                r.plan.seed.to_string(),
            ];
            row.extend(r.plan.axes.iter().map(|(_, v)| crate::sweep::value_text(v)));
            row.extend(cols.iter().map(|c| summary_cell(c.id, r, k)));
            t.row(row);
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

/// `collectives.csv`: one row per collective of the workload.
fn collectives_csv(r: &RunResult) -> String {
    let mut t = CsvTable::new([
        "collective",
        "op",
        "algorithm",
        "ranks",
        "size_bytes",
        "flows",
        "flows_finished",
        "start_ps",
        "finish_ps",
        "time_us",
        "algbw_gbps",
        "busbw_gbps",
    ]);
    let opt = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
    let optf = |v: Option<f64>| v.map_or(String::new(), num);
    for c in &r.collectives {
        t.row([
            c.collective.to_string(),
            c.op.to_string(),
            c.algorithm.to_string(),
            c.ranks.to_string(),
            c.size_bytes.to_string(),
            c.flows.to_string(),
            c.flows_finished.to_string(),
            opt(c.start_ps),
            opt(c.finish_ps),
            optf(c.time_ps.map(|t| t as f64 / 1e6)),
            optf(c.algbw_gbps),
            optf(c.busbw_gbps),
        ]);
    }
    t.finish()
}

/// `training.csv`: one row per rank and iteration of a training workload.
fn training_csv(r: &RunResult) -> String {
    let mut t = CsvTable::new([
        "iteration",
        "rank",
        "host",
        "start_ps",
        "finish_ps",
        "time_us",
        "compute_us",
        "idle_us",
    ]);
    let us = |v: Option<u64>| v.map_or(String::new(), |x| num(x as f64 / 1e6));
    for x in &r.training {
        t.row([
            x.iteration.to_string(),
            x.rank.to_string(),
            x.host.to_string(),
            x.start_ps.to_string(),
            x.finish_ps.map_or(String::new(), |f| f.to_string()),
            us(x.finish_ps.map(|f| f.saturating_sub(x.start_ps))),
            us(Some(x.compute_ps)),
            us(x.idle_ps),
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
    git_revision: &'a str,
    git_dirty: &'static str,
    source_hash: &'static str,
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
    pcap: Option<results::PcapSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeseries: Option<results::TimeSeriesSummary>,
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
    ideal_fct: "the best the network could do for the flow alone: idle network, unlimited window, store-and-forward pipeline of the flow's packets (mss + header bytes each, the last one shorter) with exact per-packet serialization plus propagation, over the fastest of the shortest paths in the network as it was while the flow lived (with failures: the least over the routing epochs it lived through, every link at its best rate then); for per-packet load balancers and multipath transports the packets free to use every link the shortest paths use at each stage; plus the final ACK (header bytes) over the fastest way back (no ACK term for UDP)",
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

pub use crate::io::temp_name;

/// Writes one run's files into `<exp_dir>/<run id>/` atomically: into a temporary directory
/// unique to this process, with the `complete` marker (the config hash) written last, then
/// renamed into place.
pub fn write_run(exp_dir: &Path, cfg: &Config, r: &RunResult) -> std::io::Result<PathBuf> {
    let dir = exp_dir.join(&r.plan.id);
    let tmp = temp_name(exp_dir, &r.plan.id);
    fs::create_dir_all(&tmp)?;
    let result = (|| {
        match &r.fct_spill {
            Some(sp) => sp.write(&tmp.join("fct.csv"))?,
            None => fs::write(tmp.join("fct.csv"), fct_csv(r))?,
        }
        fs::write(tmp.join("summary.csv"), summary_csv(&[r]))?;
        fs::write(tmp.join("ports.csv"), ports_csv(r))?;
        fs::write(tmp.join("switches.csv"), switches_csv(r))?;
        if let Some(b) = &r.pcap_bytes {
            fs::write(tmp.join("trace.pcap"), b)?;
        }
        if !r.collectives.is_empty() {
            fs::write(tmp.join("collectives.csv"), collectives_csv(r))?;
        }
        if !r.training.is_empty() {
            fs::write(tmp.join("training.csv"), training_csv(r))?;
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
            git_revision: &crate::provenance::build_info().git_revision,
            git_dirty: crate::provenance::build_info().git_dirty,
            source_hash: crate::provenance::build_info().source_hash,
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
        "{:<wr$} {:<wc$} {:>7} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8}",
        "run",
        "class",
        "flows",
        "avg_fct_us",
        "p99_fct_us",
        "avg_slowdown",
        "p99_slowdown",
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
                "{:<wr$} {:<wc$} {:>7} {:>12.1} {:>12.1} {:>12.2} {:>12.2} {:>8} {:>8}{}",
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
