//! What a run will need, known before anything is built: an estimate of its memory from the
//! config alone, checked against the machine, so that a config asking for more than the
//! machine holds stops with the estimate and the limit instead of aborting half-way.
//!
//! The estimate is an upper bound of the large parts: routing tables (a candidate list per
//! switch and destination host), flow state (spec, transport state, record, attribution,
//! about 1 KiB per flow), ports and queues, the time series and packet trace buffers, and the
//! sawtooth probe's samples. It does not model queue growth under load (bounded by the
//! buffers) or the allocator's overhead.

use crate::config::Config;
use crate::topology::TopologyConfig;
use std::path::Path;

/// Bytes of state per flow (spec, transport, record, attribution), an upper bound.
const PER_FLOW: u64 = 1024;
/// Bytes per port (the port with its queues' headers, counters, the MMU's share).
const PER_PORT: u64 = 1024;

/// A run's estimated memory, by part, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    pub routes: u64,
    pub flows: u64,
    pub ports: u64,
    pub observers: u64,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.routes + self.flows + self.ports + self.observers
    }
}

fn gib(b: u64) -> String {
    let x = b as f64;
    if b >= 1 << 30 {
        format!("{:.1} GiB", x / (1u64 << 30) as f64)
    } else if b >= 1 << 20 {
        format!("{:.0} MiB", x / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", x / 1024.0)
    }
}

impl std::fmt::Display for Estimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (routing tables {}, flows {}, ports {}, time series/trace/probe {})",
            gib(self.total()),
            gib(self.routes),
            gib(self.flows),
            gib(self.ports),
            gib(self.observers)
        )
    }
}

/// Switches, links and the most next hops a (switch, destination) entry can hold.
fn shape(t: &TopologyConfig) -> (u64, u64, u64) {
    match *t {
        TopologyConfig::LeafSpine {
            hosts_per_leaf,
            leaves,
            spines,
            ..
        } => {
            let (h, l, s) = (hosts_per_leaf as u64, leaves as u64, spines as u64);
            (l + s, h * l + l * s, s.max(1))
        }
        TopologyConfig::FatTree { k, .. } => {
            let hosts = t.n_hosts() as u64;
            let k = k as u64;
            (k * k + k * k / 4, hosts + k * k * k / 2, (k / 2).max(1))
        }
        TopologyConfig::Dumbbell {
            left,
            right,
            bottleneck_links,
            ..
        } => (
            2,
            (left + right + bottleneck_links) as u64,
            bottleneck_links as u64,
        ),
        TopologyConfig::File { .. } => {
            let spec = t.build();
            let most = t.switch_extremes().0 as u64;
            (
                spec.switches.len() as u64,
                spec.links.len() as u64,
                most.max(1),
            )
        }
    }
}

/// The memory one run of `cfg` needs, estimated from the config (input files under `base`).
pub fn estimate(cfg: &Config, base: &Path) -> Estimate {
    let hosts = cfg.topology.n_hosts() as u64;
    let (switches, links, nh) = shape(&cfg.topology);
    let routes = switches.saturating_mul(hosts).saturating_mul(8 + 4 * nh);
    let flows = cfg
        .workload
        .max_flows(base, cfg.topology.n_hosts())
        .saturating_mul(PER_FLOW);
    let ports = links.saturating_mul(2 * PER_PORT);
    let mut observers = 0u64;
    if let Some(t) = &cfg.timeseries {
        observers += t.max_rows.saturating_mul(64);
    }
    if let Some(p) = &cfg.pcap {
        observers += p.max_bytes.0;
    }
    if let Some(p) = &cfg.probe {
        let samples = p.duration.0 / p.interval.0.max(1);
        observers += samples.saturating_mul(links).saturating_mul(8);
    }
    Estimate {
        routes,
        flows,
        ports,
        observers,
    }
}

/// Memory this machine has available for runs (`MemAvailable`), if known.
pub fn available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Checks that `parallel` runs of `cfg` at once fit in `limit` bytes; the error gives both.
pub fn check(cfg: &Config, base: &Path, parallel: usize, limit: u64) -> Result<Estimate, String> {
    let e = estimate(cfg, base);
    let need = e.total().saturating_mul(parallel.max(1) as u64);
    if need > limit {
        return Err(format!(
            "a run needs about {e}{}; this machine has {} available. Shrink the topology or the workload{}",
            if parallel > 1 {
                format!(", {} for {parallel} runs at once", gib(need))
            } else {
                String::new()
            },
            gib(limit),
            if parallel > 1 {
                ", or run fewer at once (-j)"
            } else {
                ""
            }
        ));
    }
    Ok(e)
}
