//! What a run will need, known before anything is built: an estimate of its memory from the
//! config alone, checked against the machine ([`available`]: free memory, the address-space
//! limit, the cgroup's limit, whichever is least), so that a config asking for more than the
//! process may have stops with the estimate and the limit instead of aborting half-way.
//!
//! The estimate is an upper bound of the large parts: routing tables (a candidate list per
//! switch and destination ToR, see `net::routing`), flow state (spec, transport state,
//! record, attribution, up to 2 KiB per flow, the record's half once however the run is
//! split; for a streamed workload, Poisson arrivals or a
//! flow file in start order, only a chunk of records and the flows in progress), ports and
//! queues, the time series and packet trace buffers, and the sawtooth probe's samples. It
//! does not model queue growth under load (bounded by the buffers) or the allocator's
//! overhead.

use crate::config::Config;
use crate::topology::TopologyConfig;
use std::path::Path;

/// Bytes of state per flow (spec, transport, dependency joins, attribution state), an upper
/// bound, held by every partition of a split run; and bytes of its record (its `fct.csv` row
/// with delay attribution), made once, when the run ends. An RDMA run of dependent messages
/// peaked at 1.7 KB per message in all (`experiments/ai/moe.toml`, 128 GPUs, 290,816
/// messages, 480 MiB; at 1,024 GPUs 1.5 KB, and each further partition added 0.66 KB).
const PER_FLOW: u64 = 1024;
const PER_RECORD: u64 = 1024;
/// Flows in progress per host a streamed run is allowed for (an upper bound by assumption:
/// with flows released as they finish, what is held follows the load, not the workload).
const STREAMED_PER_HOST: u64 = 256;

/// Whether every run of `cfg` pulls its workload as flows start and releases them as they
/// finish: Poisson arrivals without on/off periods or a CSV or HPCC flow file in start order,
/// and nothing that keeps every flow (`experiment::retires`). Any scheme: RDMA messages are
/// released too (a host pair's queue pairs stay, at most one set per pair in use).
fn streams(cfg: &Config, base: &Path) -> bool {
    crate::experiment::retires(cfg)
        && (matches!(
            cfg.workload,
            crate::workload::WorkloadConfig::Poisson {
                on: None,
                off: None,
                ..
            }
        ) || cfg
            .workload
            .file_streams(base, cfg.topology.n_hosts(), cfg.topology.host_rate()))
}

/// Bytes per port (the port with its queues' headers, counters, the MMU's share).
const PER_PORT: u64 = 1024;

/// A run's estimated memory, by part, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    pub routes: u64,
    /// Flow state (every partition of a split run holds it).
    pub flows: u64,
    /// Flow records (made once, at the end of the run).
    pub records: u64,
    pub ports: u64,
    pub observers: u64,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.routes + self.flows + self.records + self.ports + self.observers
    }

    /// What a run split into `parts` partitions holds: each partition replicates the run but
    /// for the records, made once from the merged partitions.
    pub fn split(&self, parts: u64) -> u64 {
        (self.total() - self.records)
            .saturating_mul(parts.max(1))
            .saturating_add(self.records)
    }
}

/// Bytes as GiB, MiB or KiB.
pub fn gib(b: u64) -> String {
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
            "{} (routing tables {}, flows {}, records {}, ports {}, time series/trace/probe {})",
            gib(self.total()),
            gib(self.routes),
            gib(self.flows),
            gib(self.records),
            gib(self.ports),
            gib(self.observers)
        )
    }
}

/// The shape the routing table's size follows.
struct Shape {
    switches: u64,
    links: u64,
    /// Switches with hosts attached (the table's columns), at most.
    tors: u64,
    /// Ports of the busiest switch.
    radix: u64,
    /// The most next hops a (switch, destination) entry can hold.
    next_hops: u64,
}

fn shape(t: &TopologyConfig) -> Shape {
    let radix = t.switch_extremes().0 as u64;
    match *t {
        TopologyConfig::LeafSpine {
            hosts_per_leaf,
            leaves,
            spines,
            ..
        } => {
            let (h, l, s) = (hosts_per_leaf as u64, leaves as u64, spines as u64);
            Shape {
                switches: l + s,
                links: h * l + l * s,
                tors: l,
                radix,
                next_hops: s.max(1),
            }
        }
        TopologyConfig::FatTree { k, .. } => {
            let hosts = t.n_hosts() as u64;
            let k = k as u64;
            Shape {
                switches: k * k + k * k / 4,
                links: hosts + k * k * k / 2,
                tors: k * k / 2,
                radix,
                next_hops: (k / 2).max(1),
            }
        }
        TopologyConfig::Dumbbell {
            left,
            right,
            bottleneck_links,
            ..
        } => Shape {
            switches: 2,
            links: (left + right + bottleneck_links) as u64,
            tors: 2,
            radix,
            next_hops: bottleneck_links as u64,
        },
        TopologyConfig::Rail(_) => {
            let spec = t.build();
            Shape {
                switches: spec.switches.len() as u64,
                links: spec.links.len() as u64,
                // Multi-homed GPUs: up to a column per host.
                tors: t.n_hosts() as u64,
                radix,
                next_hops: radix.max(1),
            }
        }
        TopologyConfig::File { .. } => {
            let spec = t.build();
            let switches = spec.switches.len() as u64;
            Shape {
                switches,
                links: spec.links.len() as u64,
                tors: switches.min(t.n_hosts() as u64),
                radix,
                next_hops: radix.max(1),
            }
        }
    }
}

/// Bytes of the routing tables: an entry per (switch, ToR) (8 bytes, above the 2 or 4 a cell
/// takes) and a route per host, plus the distinct candidate lists, 4 bytes per port in the
/// table and 16 of slack for the build's map of lists (a copy of each as a key); a list is a
/// set of one switch's ports, so a switch holds at most one per ToR, of at most `next_hops`
/// ports, and (as it sends each ToR's traffic down one port or up a set of them in the
/// built-in topologies) far fewer.
fn routes_bytes(s: &Shape, hosts: u64, file: bool) -> u64 {
    let lists = if file {
        s.switches
            .saturating_mul(s.tors)
            .saturating_mul(s.next_hops)
    } else {
        s.switches.saturating_mul(s.radix + s.next_hops)
    };
    s.switches
        .saturating_mul(s.tors)
        .saturating_mul(8)
        .saturating_add(hosts.saturating_mul(12))
        .saturating_add(lists.saturating_mul(4 + 16))
}

/// The memory one run of `cfg` needs, estimated from the config (input files under `base`).
pub fn estimate(cfg: &Config, base: &Path) -> Estimate {
    let hosts = cfg.topology.n_hosts() as u64;
    let sh = shape(&cfg.topology);
    let file = matches!(cfg.topology, TopologyConfig::File { .. });
    let routes = routes_bytes(&sh, hosts, file);
    let links = sh.links;
    let mut held = cfg.workload.max_flows(base, cfg.topology.n_hosts());
    if streams(cfg, base) {
        // Flows are made as they start and released as they finish, records written out in
        // chunks: what is held is the chunk and the flows in progress, not the workload.
        held = held
            .min(crate::experiment::SPILL_ROWS as u64 + hosts.saturating_mul(STREAMED_PER_HOST));
    }
    let flows = held.saturating_mul(PER_FLOW);
    let records = held.saturating_mul(PER_RECORD);
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
        records,
        ports,
        observers,
    }
}

/// How much memory runs may take, and what sets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    /// What the limit is: "this machine has", "the process's address-space limit (ulimit -v)
    /// leaves", "the cgroup's memory.max leaves".
    pub what: &'static str,
}

/// The least of what the machine has available (`MemAvailable`), what the process's
/// address-space limit (`RLIMIT_AS`, `ulimit -v`) leaves beyond the address space it already
/// maps, and what its cgroup's memory limit (v2 `memory.max` less `memory.current`, or v1
/// `memory.limit_in_bytes` less usage, the tightest of the cgroup and its ancestors) leaves;
/// None if none is known.
pub fn available() -> Option<Limit> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let mut best: Option<Limit> = None;
    let mut take = |bytes: Option<u64>, what: &'static str| {
        if let Some(b) = bytes
            && best.as_ref().is_none_or(|l| b < l.bytes)
        {
            best = Some(Limit { bytes: b, what });
        }
    };
    take(
        read("/proc/meminfo").and_then(|t| mem_available(&t)),
        "this machine has",
    );
    take(
        read("/proc/self/limits")
            .and_then(|t| address_space_limit(&t))
            .map(|lim| {
                let mapped = read("/proc/self/status")
                    .and_then(|t| vm_size(&t))
                    .unwrap_or(0);
                lim.saturating_sub(mapped)
            }),
        "the process's address-space limit (ulimit -v) leaves",
    );
    take(
        read("/proc/self/cgroup").and_then(|t| cgroup_room(&t, &|p| read(p))),
        "the cgroup's memory limit leaves",
    );
    best
}

/// `MemAvailable` in `/proc/meminfo`, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The soft `Max address space` of `/proc/self/limits`, in bytes (None: unlimited).
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// `VmSize` of `/proc/self/status`, in bytes.
fn vm_size(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What the memory limits of the cgroup named in `/proc/self/cgroup` (and of its ancestors)
/// leave, read through `read` (a path to its text). cgroup v2 (`0::/path`): `memory.max` less
/// `memory.current`; v1 (`N:memory:/path`): `memory.limit_in_bytes` less
/// `memory.usage_in_bytes`. None: no limit.
fn cgroup_room(cgroup: &str, read: &dyn Fn(&str) -> Option<String>) -> Option<u64> {
    let num = |p: String| read(&p).and_then(|t| t.trim().parse::<u64>().ok());
    let mut room: Option<u64> = None;
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrl, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (root, max, cur) = if ctrl.is_empty() {
            ("/sys/fs/cgroup", "memory.max", "memory.current")
        } else if ctrl.split(',').any(|c| c == "memory") {
            (
                "/sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        // The cgroup and each ancestor up to the root.
        let mut dir = path.trim_end_matches('/').to_string();
        loop {
            if let Some(limit) = num(format!("{root}{dir}/{max}")) {
                let used = num(format!("{root}{dir}/{cur}")).unwrap_or(0);
                let r = limit.saturating_sub(used);
                room = Some(room.map_or(r, |x| x.min(r)));
            }
            match dir.rfind('/') {
                Some(i) => dir.truncate(i),
                None => break,
            }
            if dir.is_empty() {
                break;
            }
        }
    }
    room
}

/// Checks that `parallel` runs of `cfg` at once fit in `limit` bytes; the error gives both.
pub fn check(
    cfg: &Config,
    base: &Path,
    parallel: usize,
    limit: &Limit,
) -> Result<Estimate, String> {
    let e = estimate(cfg, base);
    // A partitioned run holds a replica of the run per partition (`sim::window`), but for
    // the records.
    let split = cfg.run.split() as u64;
    let need = e.split(split).saturating_mul(parallel.max(1) as u64);
    if need > limit.bytes {
        return Err(format!(
            "a run needs about {e}{}{}; {} {} available. Shrink the topology or the workload{}",
            if split > 1 {
                format!(
                    " unsplit, {} for its {split} partitions",
                    gib(e.split(split))
                )
            } else {
                String::new()
            },
            if parallel > 1 {
                format!(", {} for {parallel} runs at once", gib(need))
            } else {
                String::new()
            },
            limit.what,
            gib(limit.bytes),
            if parallel > 1 {
                ", or run fewer at once (-j)"
            } else {
                ""
            }
        ));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_read_from_proc_and_the_cgroup_tree() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max cpu time              unlimited            unlimited            seconds\n\
                      Max address space         3221225472           unlimited            bytes\n";
        assert_eq!(address_space_limit(limits), Some(3 << 30));
        assert_eq!(
            address_space_limit(
                "Max address space         unlimited            unlimited            bytes\n"
            ),
            None
        );
        assert_eq!(vm_size("Name:\tx\nVmSize:\t  1024 kB\n"), Some(1 << 20));
        assert_eq!(
            mem_available("MemTotal: 10 kB\nMemAvailable: 2 kB\n"),
            Some(2048)
        );
        // v2: the tightest of the cgroup and its ancestors, less what each uses.
        let files = |p: &str| -> Option<String> {
            match p {
                "/sys/fs/cgroup/a/b/memory.max" => Some("max\n".into()),
                "/sys/fs/cgroup/a/memory.max" => Some("1000000\n".into()),
                "/sys/fs/cgroup/a/memory.current" => Some("400000\n".into()),
                "/sys/fs/cgroup/memory/job/memory.limit_in_bytes" => Some("500000".into()),
                "/sys/fs/cgroup/memory/job/memory.usage_in_bytes" => Some("100000".into()),
                _ => None,
            }
        };
        assert_eq!(cgroup_room("0::/a/b\n", &files), Some(600_000));
        assert_eq!(cgroup_room("0::/\n", &files), None);
        assert_eq!(
            cgroup_room("4:memory:/job\n2:cpu:/x\n", &files),
            Some(400_000)
        );
    }
}
