//! Workloads: what flows exist, between which hosts, of what size, starting when.
//!
//! A workload expands, before the run, into a list of [`FlowSpec`]s sorted by start time.
//! Generators:
//!
//! * `poisson`: every host is an independent Poisson source at a target load of its access
//!   link, `mean inter-arrival = mean_size · 8 / (load · host_rate)` (HPCC `traffic_gen`, GPMP
//!   spec §6); sizes from an empirical CDF; destinations uniform over the other hosts. The
//!   superposition is generated directly (total rate × hosts, uniform source), which is the
//!   same process.
//! * `csv`: an explicit flow list with the header `flow_id,src,dst,size_bytes,start_ns`
//!   (optional extra columns `prio`, `deadline_ns`).
//! * `incast`: `fan_in` synchronised senders to one receiver.
//! * `flows`: an inline list, for small examples and tests.
//!
//! Not modelled here (later issues): closed-loop workloads whose next flow depends on the
//! completion of a previous one (partition-aggregate, dependent-sequential).

pub mod cdf;

use crate::engine::RngStream;
use crate::units::{BitRate, Bytes, SimTime};
use cdf::Cdf;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One flow to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: SimTime,
    /// Priority class override (queue index); `None` uses the scheme's.
    pub prio: Option<u8>,
    /// Absolute deadline, if any.
    pub deadline: Option<SimTime>,
}

fn d_cdf() -> String {
    "web_search".into()
}
fn d_load() -> f64 {
    0.6
}
fn d_flows() -> u64 {
    2000
}

/// An inline flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InlineFlow {
    pub src: u32,
    pub dst: u32,
    pub size: Bytes,
    #[serde(default)]
    pub start: SimTime,
    #[serde(default)]
    pub prio: Option<u8>,
}

/// `[workload]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// Poisson arrivals at a per-host load with sizes from a CDF.
    Poisson {
        /// `"web_search"`, `"data_mining"`, or a path to a CDF file (relative to the config).
        /// Default `"web_search"`.
        #[serde(default = "d_cdf")]
        size_cdf: String,
        /// Offered load per host access link, in (0, 1]. Default 0.6.
        #[serde(default = "d_load")]
        load: f64,
        /// Number of flows, 1..=10,000,000. Default 2000.
        #[serde(default = "d_flows")]
        flows: u64,
        /// Time of the first possible arrival. Default 0s.
        #[serde(default)]
        start: SimTime,
        /// Generate arrivals only until this time (optional; the flow count still caps).
        #[serde(default)]
        until: Option<SimTime>,
    },
    /// Flows from a CSV file `flow_id,src,dst,size_bytes,start_ns[,prio][,deadline_ns]`.
    Csv {
        /// Path, relative to the config file.
        file: PathBuf,
    },
    /// `fan_in` senders start together towards one receiver, `bursts` times.
    Incast {
        /// Number of senders (1..=hosts−1).
        fan_in: u32,
        /// Bytes per sender; with `size_max`, uniform in `[size, size_max]`.
        size: Bytes,
        #[serde(default)]
        size_max: Option<Bytes>,
        /// Receiving host. Default: host 0 with the lowest-numbered senders for a single
        /// burst; with `random = true`, a random receiver and random distinct senders per burst.
        #[serde(default)]
        receiver: u32,
        #[serde(default)]
        random: bool,
        /// Start of the first burst. Default 0s.
        #[serde(default)]
        start: SimTime,
        /// Number of bursts, 1..=100000. Default 1.
        #[serde(default = "d_one")]
        bursts: u32,
        /// Time between bursts. Default 1ms.
        #[serde(default = "d_interval")]
        interval: SimTime,
    },
    /// An explicit list of flows.
    Flows { flows: Vec<InlineFlow> },
    /// The union of several workloads (flow ids renumbered in start order).
    Mix { parts: Vec<WorkloadConfig> },
}

fn d_one() -> u32 {
    1
}
fn d_interval() -> SimTime {
    SimTime::from_ms(1)
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig::Poisson {
            size_cdf: d_cdf(),
            load: d_load(),
            flows: d_flows(),
            start: SimTime::ZERO,
            until: None,
        }
    }
}

/// Resolves a CDF name or file path.
pub fn load_cdf(name: &str, base: &Path) -> Result<Cdf, String> {
    if let Some(c) = Cdf::builtin(name) {
        return Ok(c);
    }
    let p = base.join(name);
    let text = std::fs::read_to_string(&p).map_err(|e| {
        format!(
            "`{name}` is neither a built-in CDF ({}) nor a readable file ({}: {e})",
            Cdf::BUILTIN.join(", "),
            p.display()
        )
    })?;
    Cdf::parse(&text).map_err(|e| format!("{}: {e}", p.display()))
}

impl WorkloadConfig {
    /// Checks the workload against the topology; returns `(key, message)`.
    pub fn validate(&self, n_hosts: usize, base: &Path) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        match self {
            WorkloadConfig::Poisson {
                size_cdf,
                load,
                flows,
                ..
            } => {
                if !(*load > 0.0 && *load <= 1.0) {
                    return e("load", format!("must be in (0, 1], got {load}"));
                }
                if *flows == 0 || *flows > 10_000_000 {
                    return e("flows", format!("must be in 1..=10000000, got {flows}"));
                }
                if n_hosts < 2 {
                    return e("kind", "poisson needs at least 2 hosts".into());
                }
                load_cdf(size_cdf, base).map_err(|m| ("size_cdf".to_string(), m))?;
            }
            WorkloadConfig::Csv { file } => {
                read_csv(&base.join(file), n_hosts).map_err(|m| ("file".to_string(), m))?;
            }
            WorkloadConfig::Incast {
                fan_in,
                size,
                size_max,
                receiver,
                bursts,
                ..
            } => {
                if *receiver as usize >= n_hosts {
                    return e(
                        "receiver",
                        format!("must be in 0..{n_hosts}, got {receiver}"),
                    );
                }
                if *fan_in == 0 || *fan_in as usize >= n_hosts {
                    return e(
                        "fan_in",
                        format!("must be in 1..={}, got {fan_in}", n_hosts - 1),
                    );
                }
                if size.0 == 0 {
                    return e("size", "must be positive".into());
                }
                if size_max.is_some_and(|m| m < *size) {
                    return e("size_max", format!("must be at least size ({size})"));
                }
                if *bursts == 0 || *bursts > 100_000 {
                    return e("bursts", format!("must be in 1..=100000, got {bursts}"));
                }
            }
            WorkloadConfig::Mix { parts } => {
                if parts.is_empty() {
                    return e("parts", "lists no workloads".into());
                }
                for (i, p) in parts.iter().enumerate() {
                    p.validate(n_hosts, base)
                        .map_err(|(k, m)| (format!("parts[{i}].{k}"), m))?;
                }
            }
            WorkloadConfig::Flows { flows } => {
                if flows.is_empty() {
                    return e("flows", "the list is empty".into());
                }
                for (i, f) in flows.iter().enumerate() {
                    if f.src as usize >= n_hosts || f.dst as usize >= n_hosts || f.src == f.dst {
                        return e(
                            &format!("flows[{i}]"),
                            format!("src and dst must be distinct hosts in 0..{n_hosts}"),
                        );
                    }
                    if f.size.0 == 0 {
                        return e(&format!("flows[{i}].size"), "must be positive".into());
                    }
                    if f.prio.is_some_and(|p| p >= 8) {
                        return e(&format!("flows[{i}].prio"), "must be in 0..8".into());
                    }
                }
            }
        }
        Ok(())
    }

    /// Expands the workload into flows sorted by start time (ties by id).
    pub fn generate(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
    ) -> Result<Vec<FlowSpec>, String> {
        let mut v = match self {
            WorkloadConfig::Poisson {
                size_cdf,
                load,
                flows,
                start,
                until,
            } => {
                let cdf = load_cdf(size_cdf, base)?;
                let mut arr = RngStream::new(seed, "workload.arrivals");
                let mut sizes = RngStream::new(seed, "workload.sizes");
                let mut ends = RngStream::new(seed, "workload.endpoints");
                let per_host_ia = cdf.mean() * 8.0 / (load * host_rate.bps() as f64);
                let mean_ia = per_host_ia / n_hosts as f64;
                let mut t = start.as_secs_f64();
                let mut out = Vec::with_capacity(*flows as usize);
                for id in 0..*flows {
                    t += arr.exp(mean_ia);
                    let st = SimTime::from_secs_f64(t);
                    if until.is_some_and(|u| st >= u) {
                        break;
                    }
                    let src = ends.below(n_hosts as u64) as u32;
                    let mut dst = ends.below(n_hosts as u64 - 1) as u32;
                    if dst >= src {
                        dst += 1;
                    }
                    out.push(FlowSpec {
                        id: id as u32,
                        src,
                        dst,
                        size: cdf.sample(&mut sizes),
                        start: st,
                        prio: None,
                        deadline: None,
                    });
                }
                out
            }
            WorkloadConfig::Csv { file } => read_csv(&base.join(file), n_hosts)?,
            WorkloadConfig::Incast {
                fan_in,
                size,
                size_max,
                receiver,
                random,
                start,
                bursts,
                interval,
            } => {
                let mut rng = RngStream::new(seed, "workload.incast");
                let mut out = Vec::new();
                for b in 0..*bursts {
                    let t = *start + SimTime(interval.0 * b as u64);
                    let (dst, senders): (u32, Vec<u32>) = if *random {
                        let dst = rng.below(n_hosts as u64) as u32;
                        let mut pool: Vec<u32> =
                            (0..n_hosts as u32).filter(|&h| h != dst).collect();
                        let mut chosen = Vec::with_capacity(*fan_in as usize);
                        for _ in 0..*fan_in {
                            let i = rng.below(pool.len() as u64) as usize;
                            chosen.push(pool.swap_remove(i));
                        }
                        (dst, chosen)
                    } else {
                        let s = (0..n_hosts as u32).filter(|h| h != receiver);
                        (*receiver, s.take(*fan_in as usize).collect())
                    };
                    for src in senders {
                        let sz = match size_max {
                            Some(m) if m.0 > size.0 => size.0 + rng.below(m.0 - size.0 + 1),
                            _ => size.0,
                        };
                        out.push(FlowSpec {
                            id: out.len() as u32,
                            src,
                            dst,
                            size: sz,
                            start: t,
                            prio: None,
                            deadline: None,
                        });
                    }
                }
                out
            }
            WorkloadConfig::Mix { parts } => {
                let mut all = Vec::new();
                for (i, p) in parts.iter().enumerate() {
                    // Each part draws from its own streams.
                    let part_seed = crate::engine::rng::mix64(seed ^ (0x9E37 + i as u64));
                    all.extend(p.generate(n_hosts, host_rate, part_seed, base)?);
                }
                all.sort_by_key(|f| f.start);
                for (i, f) in all.iter_mut().enumerate() {
                    f.id = i as u32;
                }
                all
            }
            WorkloadConfig::Flows { flows } => flows
                .iter()
                .enumerate()
                .map(|(i, f)| FlowSpec {
                    id: i as u32,
                    src: f.src,
                    dst: f.dst,
                    size: f.size.0,
                    start: f.start,
                    prio: f.prio,
                    deadline: None,
                })
                .collect(),
        };
        v.sort_by_key(|f| (f.start, f.id));
        Ok(v)
    }
}

/// Reads the flow-list CSV format.
pub fn read_csv(path: &Path, n_hosts: usize) -> Result<Vec<FlowSpec>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines
        .next()
        .ok_or_else(|| format!("{}: empty file", path.display()))?;
    let cols: Vec<&str> = header.split(',').map(|s| s.trim()).collect();
    let need = ["flow_id", "src", "dst", "size_bytes", "start_ns"];
    if cols.len() < 5 || cols[..5] != need {
        return Err(format!(
            "{}: the header must start with `{}`, got `{header}`",
            path.display(),
            need.join(",")
        ));
    }
    for c in &cols[5..] {
        if !["prio", "deadline_ns"].contains(c) {
            return Err(format!(
                "{}: unknown column `{c}` (optional columns: prio, deadline_ns)",
                path.display()
            ));
        }
    }
    let mut out = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split(',').map(|s| s.trim()).collect();
        let at = || format!("{} line {}", path.display(), n + 1);
        if f.len() != cols.len() {
            return Err(format!(
                "{}: expected {} fields, got {}",
                at(),
                cols.len(),
                f.len()
            ));
        }
        let num = |i: usize| -> Result<u64, String> {
            f[i].parse::<u64>().map_err(|_| {
                format!(
                    "{}: `{}` = `{}` is not a non-negative integer",
                    at(),
                    cols[i],
                    f[i]
                )
            })
        };
        let (id, src, dst, size, start) = (num(0)?, num(1)?, num(2)?, num(3)?, num(4)?);
        if src as usize >= n_hosts || dst as usize >= n_hosts {
            return Err(format!("{}: hosts must be in 0..{n_hosts}", at()));
        }
        if src == dst {
            return Err(format!("{}: src and dst are the same host", at()));
        }
        if size == 0 {
            return Err(format!("{}: size_bytes must be positive", at()));
        }
        if id > u32::MAX as u64 || !ids.insert(id) {
            return Err(format!("{}: flow_id {id} is duplicated or too large", at()));
        }
        let mut spec = FlowSpec {
            id: id as u32,
            src: src as u32,
            dst: dst as u32,
            size,
            start: SimTime::from_ns(start),
            prio: None,
            deadline: None,
        };
        for (i, c) in cols.iter().enumerate().skip(5) {
            let v = num(i)?;
            match *c {
                "prio" if v < 8 => spec.prio = Some(v as u8),
                "prio" => return Err(format!("{}: prio must be in 0..8", at())),
                _ => spec.deadline = Some(spec.start + SimTime::from_ns(v)),
            }
        }
        out.push(spec);
    }
    if out.is_empty() {
        return Err(format!("{}: no flows", path.display()));
    }
    Ok(out)
}

/// Default path base for configs given on stdin or built in.
pub fn no_base() -> PathBuf {
    PathBuf::from(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_rate_matches_load() {
        let w = WorkloadConfig::Poisson {
            size_cdf: "web_search".into(),
            load: 0.5,
            flows: 20_000,
            start: SimTime::ZERO,
            until: None,
        };
        let rate = BitRate::from_gbps(10);
        let v = w.generate(16, rate, 1, Path::new(".")).unwrap();
        assert_eq!(v.len(), 20_000);
        let span = v.last().unwrap().start.as_secs_f64();
        let bytes: u64 = v.iter().map(|f| f.size).sum();
        let load = bytes as f64 * 8.0 / span / (16.0 * 1e10);
        assert!((load - 0.5).abs() < 0.05, "offered load {load}");
        assert!(v.iter().all(|f| f.src != f.dst));
        assert!(v.windows(2).all(|w| w[0].start <= w[1].start));
    }
}
