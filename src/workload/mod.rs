//! Workloads: what flows exist, between which hosts, of what size, starting when.
//!
//! A workload expands, before the run, into a list of [`FlowSpec`]s sorted by start time.
//! Generators:
//!
//! * `poisson`: every host is an independent Poisson source at a target load of its access
//!   link, `mean inter-arrival = mean_size · 8 / (load · host_rate)` (HPCC `traffic_gen`, GPMP
//!   reconstruction §6); sizes from an empirical CDF; destinations uniform over the other hosts. The
//!   superposition is generated directly (total rate × hosts, uniform source), which is the
//!   same process.
//! * `csv`: an explicit flow list with the header `flow_id,src,dst,size_bytes,start_ns`
//!   (optional extra columns `prio`, `deadline_ns`).
//! * `incast`: `fan_in` synchronised senders to one receiver, once or in bursts.
//! * `flows`: an inline list, for small examples and tests.
//! * `partition_aggregate`: queries whose responses share a deadline class (PDTCP reconstruction §5.1),
//!   closed loop or Poisson.
//! * `sequential`: dependent-sequential workflows (PDTCP reconstruction §5.2): each request leaves when
//!   the previous response has arrived (flows with `after` start when their group completes).
//!
//! Not modelled: open-loop traces with arbitrary dependency graphs, imported flow files of
//! other simulators.

pub mod cdf;

use crate::engine::RngStream;
use crate::fileid::{FileIdent, HashingReader};
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
    /// Start time; for a flow with `after`, the delay after its group completes.
    pub start: SimTime,
    /// Priority class override (queue index); `None` uses the scheme's.
    pub prio: Option<u8>,
    /// Deadline relative to the flow's start, if any.
    pub deadline: Option<SimTime>,
    /// What kind of traffic this is (summaries are also given per tag).
    pub tag: FlowTag,
    /// Member of this group (a query, a step of a workflow).
    pub group: Option<u32>,
    /// Starts when every member of this group has been received.
    pub after: Option<u32>,
    /// The mean of the distribution the deadline was drawn from (its deadline class).
    pub deadline_class: Option<SimTime>,
}

impl FlowSpec {
    pub fn new(id: u32, src: u32, dst: u32, size: u64, start: SimTime) -> Self {
        FlowSpec {
            id,
            src,
            dst,
            size,
            start,
            prio: None,
            deadline: None,
            tag: FlowTag::Flow,
            group: None,
            after: None,
            deadline_class: None,
        }
    }
}

/// A topology file's own ids of its hosts, in dcsim's host order (ascending), shared by the
/// clones of a config; equal whatever it holds (the topology file identifies it).
#[derive(Clone, Debug, Default)]
pub struct FileHostIds(pub std::sync::Arc<std::sync::OnceLock<Vec<u32>>>);

impl PartialEq for FileHostIds {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl FileHostIds {
    fn ids(&self) -> Option<Vec<u32>> {
        self.0.get().cloned()
    }
}

/// Traffic kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FlowTag {
    /// Unlabelled.
    #[default]
    Flow,
    /// A partition-aggregate response.
    Query,
    /// Long background traffic.
    Background,
    /// A response of a dependent-sequential workflow.
    Workflow,
    /// A request of a dependent-sequential workflow.
    Request,
}

impl FlowTag {
    pub fn name(self) -> &'static str {
        match self {
            FlowTag::Flow => "flow",
            FlowTag::Query => "query",
            FlowTag::Background => "background",
            FlowTag::Workflow => "workflow",
            FlowTag::Request => "request",
        }
    }
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
    /// Deadline relative to the start.
    #[serde(default)]
    pub deadline: Option<SimTime>,
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
        /// Tag of the flows. Default "flow".
        #[serde(default)]
        tag: FlowTag,
        /// Inter-arrival times: "exponential" (default, Poisson arrivals) or "lognormal"
        /// (same mean, so the same load; burstier with a larger `sigma`).
        #[serde(default, skip_serializing_if = "is_default")]
        interarrival: Interarrival,
        /// Lognormal shape: the standard deviation of the inter-arrival's logarithm, in
        /// (0, 10]. Default 1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sigma: Option<f64>,
        /// On/off sources: each host sends only during its on periods (exponential, mean
        /// `on`), separated by off periods (exponential, mean `off`); flows arrive during on
        /// periods faster so that the long-run load is `load`. Default: always on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on: Option<SimTime>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        off: Option<SimTime>,
    },
    /// Flows from a CSV file `flow_id,src,dst,size_bytes,start_ns[,prio][,deadline_ns]`.
    Csv {
        /// Path, relative to the config file.
        file: PathBuf,
    },
    /// Ring all-reduce of `size` bytes per host over `hosts`: the buffer in N chunks (sizes
    /// differing by at most a byte, adding up to `size`; at least one byte each), 2(N−1) steps; at each step every host sends one chunk to the next host of the ring, once it
    /// has received the chunk of the step before (flow dependencies).
    #[serde(rename = "allreduce")]
    AllReduce {
        /// The ring, in order (at least 2 distinct hosts). Default: every host.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hosts: Option<Vec<u32>>,
        size: Bytes,
        #[serde(default)]
        start: SimTime,
    },
    /// Permutation: every host sends `size` bytes to one other host, all at `start`; the
    /// destinations are a random cyclic permutation of the hosts (Sattolo), so no host sends
    /// to itself and every host receives one flow.
    Permutation {
        size: Bytes,
        #[serde(default)]
        start: SimTime,
    },
    /// All-to-all: every host of `hosts` sends `size` bytes to every other, all at `start`.
    #[serde(rename = "alltoall")]
    AllToAll {
        /// Default: every host.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hosts: Option<Vec<u32>>,
        size: Bytes,
        #[serde(default)]
        start: SimTime,
    },
    /// Flows from a JSON list of objects `{"id", "src", "dst", "size", "start"}` (optional
    /// `"after"`: ids waited for, `"prio"`, `"deadline"`); sizes in bytes or with a unit
    /// ("64KB"), times in ns or with a unit ("10us").
    Json {
        /// Path, relative to the config file.
        file: PathBuf,
    },
    /// Flows from an htsim connection matrix (`.cm`: `Nodes`, `Connections`, `Triggers`
    /// headers; `src->dst id I start T size S [trigger T] [recv_done_trigger T]` lines;
    /// `trigger id T oneshot|multishot|barrier [count N]` lines), triggers mapped to flow
    /// dependencies.
    Htsim {
        /// Path, relative to the config file.
        file: PathBuf,
        /// Unit of `start` values: "ps" (default, current htsim) or "us" (older htsim).
        #[serde(default)]
        start_unit: CmStartUnit,
        /// A `send_done_trigger` fires when the flow is received instead (one path delay
        /// late); without this such files are refused. Default false.
        #[serde(default)]
        send_done_as_recv_done: bool,
    },
    /// Flows from an HPCC ns-3 flow file (`flow.txt`: a count, then `src dst pg dport size
    /// start_seconds` per flow); flow ids are 1, 2, ... in file order.
    Hpcc {
        /// Path, relative to the config file.
        file: PathBuf,
        /// Subtracted from every start (HPCC's scripts start flows at 2 s); a flow starting
        /// earlier is refused. Default 2s.
        #[serde(default = "d_two_s")]
        start_offset: SimTime,
        /// The topology file's own ids of its hosts, set at validation: the flow file names
        /// hosts by them (none: dcsim's `0..hosts`, for built-in topologies).
        #[serde(skip)]
        hosts: FileHostIds,
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
        /// Poisson incast: bursts arrive as a Poisson process whose mean spacing makes the
        /// bursts' bytes this fraction of the hosts' total access capacity, in (0, 1]
        /// (`interval` is then unused). Default: bursts every `interval`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        load: Option<f64>,
        /// Tag of the flows. Default "flow".
        #[serde(default)]
        tag: FlowTag,
    },
    /// Partition-aggregate queries (PDTCP reconstruction §5.1): a random aggregator, `fan_in` responses
    /// from workers drawn uniformly with replacement among the other hosts, all starting
    /// together, each with a deadline drawn from Exp(`deadline_mean`). Queries follow one
    /// another (the next starts when every response of the previous one has arrived) or, with
    /// `query_rate`, arrive as a Poisson process. Tag "query".
    PartitionAggregate {
        /// Responses per query, 1..=10000.
        fan_in: u32,
        /// Queries, 1..=1000000. Default 1000.
        #[serde(default = "d_queries")]
        queries: u32,
        /// Response size, uniform in `[response_size, response_size_max]`. Default 2KB..50KB.
        #[serde(default = "d_resp_min")]
        response_size: Bytes,
        #[serde(default = "d_resp_max")]
        response_size_max: Bytes,
        /// Mean of the exponential deadline. Default 20ms.
        #[serde(default = "d_deadline")]
        deadline_mean: SimTime,
        /// Several deadline classes (e.g. tight/moderate/lax 20/30/40ms): each query draws
        /// one of these means uniformly; replaces `deadline_mean`. Default: none.
        #[serde(default)]
        deadline_means: Vec<SimTime>,
        /// One deadline draw per query instead of per response. Default false.
        #[serde(default)]
        deadline_per_query: bool,
        /// Poisson arrival rate of queries per second; none: closed loop. Default none.
        #[serde(default)]
        query_rate: Option<f64>,
        /// Responses start uniformly within this window after the query. Default 0s.
        #[serde(default)]
        jitter: SimTime,
        /// First query. Default 0s.
        #[serde(default)]
        start: SimTime,
    },
    /// Dependent-sequential workflows (PDTCP reconstruction §5.2): Poisson arrivals at `rate` per second
    /// over the cluster; each workflow has a random front end that issues `requests` requests
    /// in sequence, each to a random server, each answered by a response; request i+1 leaves
    /// when response i has arrived. Responses (tag "workflow") carry a deadline drawn from
    /// Exp(`deadline_mean`); requests (tag "request") carry none.
    Sequential {
        /// Workflows per second, > 0.
        rate: f64,
        /// Number of workflows, 1..=1000000. Default 1000.
        #[serde(default = "d_queries")]
        workflows: u32,
        /// Requests per workflow, 1..=1000. Default 10.
        #[serde(default = "d_requests")]
        requests: u32,
        /// Request size (one packet). Default 1KB.
        #[serde(default = "d_request_size")]
        request_size: Bytes,
        /// Response size, uniform in the range. Default 2KB..32KB.
        #[serde(default = "d_resp_min")]
        response_size: Bytes,
        #[serde(default = "d_seq_max")]
        response_size_max: Bytes,
        /// Mean of the exponential deadline of each response. Default 20ms.
        #[serde(default = "d_deadline")]
        deadline_mean: SimTime,
        /// Several deadline classes: each workflow draws one of these means uniformly;
        /// replaces `deadline_mean`. Default: none.
        #[serde(default)]
        deadline_means: Vec<SimTime>,
        /// First arrival no earlier than this. Default 0s.
        #[serde(default)]
        start: SimTime,
    },
    /// An explicit list of flows.
    Flows { flows: Vec<InlineFlow> },
    /// The union of several workloads (flow ids renumbered in start order).
    Mix { parts: Vec<WorkloadConfig> },
}

fn d_one() -> u32 {
    1
}
fn d_queries() -> u32 {
    1000
}
fn d_requests() -> u32 {
    10
}
fn d_resp_min() -> Bytes {
    Bytes(2_000)
}
fn d_resp_max() -> Bytes {
    Bytes(50_000)
}
fn d_seq_max() -> Bytes {
    Bytes(32_000)
}
fn d_request_size() -> Bytes {
    Bytes(1_000)
}
fn d_deadline() -> SimTime {
    SimTime::from_ms(20)
}
/// Inter-arrival distribution of a Poisson-style workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Interarrival {
    #[default]
    Exponential,
    Lognormal,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// The unit of `start` in an htsim connection matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CmStartUnit {
    #[default]
    Ps,
    Us,
}

fn d_two_s() -> SimTime {
    SimTime::from_ms(2000)
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
            tag: FlowTag::Flow,
            interarrival: Interarrival::Exponential,
            sigma: None,
            on: None,
            off: None,
        }
    }
}

/// Resolves a CDF name or file path.
pub fn load_cdf(name: &str, base: &Path) -> Result<Cdf, String> {
    if let Some(c) = Cdf::builtin(name) {
        return Ok(c);
    }
    if let Some(args) = name
        .strip_prefix("uniform(")
        .and_then(|r| r.strip_suffix(')'))
    {
        let parts: Vec<&str> = args.split(',').map(str::trim).collect();
        let (Some(a), Some(b)) = (parts.first(), parts.get(1)) else {
            return Err(format!(
                "`{name}`: write uniform(MIN, MAX), e.g. uniform(1MB, 10MB)"
            ));
        };
        let lo: Bytes = a.parse().map_err(|e| format!("`{name}`: {e}"))?;
        let hi: Bytes = b.parse().map_err(|e| format!("`{name}`: {e}"))?;
        if parts.len() != 2 || hi < lo || lo.0 == 0 {
            return Err(format!("`{name}`: need 0 < MIN <= MAX"));
        }
        return Cdf::from_points(vec![(lo.0 as f64, 0.0), (hi.0 as f64, 1.0)]);
    }
    let p = base.join(name);
    let text = crate::fileid::read_to_string(&p).map_err(|e| {
        format!(
            "`{name}` is neither a built-in CDF ({}) nor a readable file ({e})",
            Cdf::BUILTIN.join(", "),
        )
    })?;
    Cdf::parse(&text).map_err(|e| format!("{}: {e}", p.display()))
}

impl WorkloadConfig {
    /// Whether this workload is a flow file that a run can read as its flows start (a CSV or
    /// HPCC flow file in start order, without dependencies: see [`WorkloadConfig::stream`]).
    /// Reads the file through once.
    pub fn file_streams(&self, base: &Path, n_hosts: usize, host_rate: BitRate) -> bool {
        match self {
            WorkloadConfig::Csv { file } => {
                check_csv_stream(&base.join(file), n_hosts, host_rate, None)
            }
            WorkloadConfig::Hpcc {
                file,
                start_offset,
                hosts,
            } => check_hpcc_stream(
                &base.join(file),
                n_hosts,
                hosts,
                host_rate,
                *start_offset,
                None,
            ),
            _ => None,
        }
        .is_some()
    }
}

/// Lines in file `path` (newlines plus one), read a block at a time.
fn line_count(path: &Path) -> std::io::Result<u64> {
    use std::io::Read;
    crate::fileid::regular(path).map_err(std::io::Error::other)?;
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 1u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            return Ok(n);
        }
        n += buf[..k].iter().filter(|&&c| c == b'\n').count() as u64;
    }
}

impl WorkloadConfig {
    /// An upper bound on the flows this workload generates (for a flow list: its lines,
    /// counted cheaply from the file size at 10 bytes a line when it cannot be read).
    pub fn max_flows(&self, base: &Path, n_hosts: usize) -> u64 {
        match self {
            WorkloadConfig::Poisson { flows, .. } => *flows,
            WorkloadConfig::Csv { file }
            | WorkloadConfig::Hpcc { file, .. }
            | WorkloadConfig::Htsim { file, .. }
            | WorkloadConfig::Json { file } => line_count(&base.join(file)).unwrap_or(0),
            WorkloadConfig::Incast { fan_in, bursts, .. } => *fan_in as u64 * *bursts as u64,
            WorkloadConfig::PartitionAggregate {
                fan_in, queries, ..
            } => *fan_in as u64 * *queries as u64,
            WorkloadConfig::Sequential {
                workflows,
                requests,
                ..
            } => 2 * *workflows as u64 * *requests as u64,
            WorkloadConfig::Flows { flows } => flows.len() as u64,
            WorkloadConfig::AllReduce { hosts, .. } => {
                let n = hosts.as_ref().map_or(n_hosts as u64, |h| h.len() as u64);
                2 * n.saturating_sub(1).saturating_mul(n)
            }
            WorkloadConfig::AllToAll { hosts, .. } => {
                let n = hosts.as_ref().map_or(n_hosts as u64, |h| h.len() as u64);
                n.saturating_mul(n.saturating_sub(1))
            }
            WorkloadConfig::Permutation { .. } => n_hosts as u64,
            WorkloadConfig::Mix { parts } => parts.iter().map(|p| p.max_flows(base, n_hosts)).sum(),
        }
    }

    /// The bytes this workload's flows carry, on average over seeds (the work estimate's);
    /// flow files are read through. None if a file cannot be read (validation says why).
    pub fn expected_bytes(&self, base: &Path, n_hosts: usize, host_rate: BitRate) -> Option<f64> {
        let mean = |lo: Bytes, hi: Option<Bytes>| (lo.0 + hi.unwrap_or(lo).0) as f64 / 2.0;
        let sum = |v: Vec<FlowSpec>| v.iter().map(|f| f.size as f64).sum::<f64>();
        let ring = |hosts: &Option<Vec<u32>>| hosts.as_ref().map_or(n_hosts, |h| h.len()) as f64;
        Some(match self {
            WorkloadConfig::Poisson {
                size_cdf, flows, ..
            } => *flows as f64 * load_cdf(size_cdf, base).ok()?.mean(),
            WorkloadConfig::Csv { file } => {
                let path = base.join(file);
                match check_csv_stream(&path, n_hosts, host_rate, None) {
                    Some(c) => c.bytes as f64,
                    None => sum(read_csv(&path, n_hosts).ok()?),
                }
            }
            WorkloadConfig::Hpcc {
                file,
                start_offset,
                hosts,
            } => {
                let path = base.join(file);
                match check_hpcc_stream(&path, n_hosts, hosts, host_rate, *start_offset, None) {
                    Some(c) => c.bytes as f64,
                    None => sum(read_hpcc(&path, n_hosts, hosts, *start_offset).ok()?),
                }
            }
            WorkloadConfig::Json { file } => sum(read_json(&base.join(file), n_hosts).ok()?),
            WorkloadConfig::Htsim {
                file,
                start_unit,
                send_done_as_recv_done,
            } => sum(read_htsim(
                &base.join(file),
                n_hosts,
                *start_unit,
                *send_done_as_recv_done,
            )
            .ok()?),
            WorkloadConfig::Incast {
                fan_in,
                size,
                size_max,
                bursts,
                ..
            } => *fan_in as f64 * *bursts as f64 * mean(*size, *size_max),
            WorkloadConfig::PartitionAggregate {
                fan_in,
                queries,
                response_size,
                response_size_max,
                ..
            } => *fan_in as f64 * *queries as f64 * mean(*response_size, Some(*response_size_max)),
            WorkloadConfig::Sequential {
                workflows,
                requests,
                request_size,
                response_size,
                response_size_max,
                ..
            } => {
                *workflows as f64
                    * *requests as f64
                    * (request_size.0 as f64 + mean(*response_size, Some(*response_size_max)))
            }
            WorkloadConfig::Flows { flows } => flows.iter().map(|f| f.size.0 as f64).sum(),
            WorkloadConfig::AllReduce { hosts, size, .. } => {
                2.0 * (ring(hosts) - 1.0) * size.0 as f64
            }
            WorkloadConfig::AllToAll { hosts, size, .. } => {
                ring(hosts) * (ring(hosts) - 1.0) * size.0 as f64
            }
            WorkloadConfig::Permutation { size, .. } => n_hosts as f64 * size.0 as f64,
            WorkloadConfig::Mix { parts } => {
                let mut t = 0.0;
                for p in parts {
                    t += p.expected_bytes(base, n_hosts, host_rate)?;
                }
                t
            }
        })
    }

    /// The highest priority (queue) a flow of this workload asks for, if any asks.
    pub fn max_prio(&self, n_hosts: usize, base: &Path) -> Option<u8> {
        match self {
            WorkloadConfig::Flows { flows } => flows.iter().filter_map(|f| f.prio).max(),
            WorkloadConfig::Csv { file } => read_csv(&base.join(file), n_hosts)
                .ok()?
                .iter()
                .filter_map(|f| f.prio)
                .max(),
            WorkloadConfig::Mix { parts } => {
                parts.iter().filter_map(|p| p.max_prio(n_hosts, base)).max()
            }
            _ => None,
        }
    }

    /// The tags its flows may carry.
    pub fn tags(&self) -> Vec<FlowTag> {
        match self {
            WorkloadConfig::Poisson { tag, .. } | WorkloadConfig::Incast { tag, .. } => vec![*tag],
            WorkloadConfig::PartitionAggregate { .. } => vec![FlowTag::Query],
            WorkloadConfig::Sequential { .. } => vec![FlowTag::Request, FlowTag::Workflow],
            WorkloadConfig::Csv { .. }
            | WorkloadConfig::Hpcc { .. }
            | WorkloadConfig::Json { .. }
            | WorkloadConfig::Htsim { .. }
            | WorkloadConfig::AllReduce { .. }
            | WorkloadConfig::AllToAll { .. }
            | WorkloadConfig::Permutation { .. }
            | WorkloadConfig::Flows { .. } => vec![FlowTag::Flow],
            WorkloadConfig::Mix { parts } => parts.iter().flat_map(|p| p.tags()).collect(),
        }
    }

    /// Gives HPCC flow files (here and in mix parts) the topology file's host ids, once.
    pub fn set_file_host_ids(&self, ids: &[u32]) {
        match self {
            WorkloadConfig::Hpcc { hosts, .. } => {
                let _ = hosts.0.set(ids.to_vec());
            }
            WorkloadConfig::Mix { parts } => parts.iter().for_each(|p| p.set_file_host_ids(ids)),
            _ => {}
        }
    }

    /// The files this workload reads (CDF files, flow lists), as given (relative to the
    /// config's directory).
    pub fn input_files(&self) -> Vec<PathBuf> {
        match self {
            WorkloadConfig::Poisson { size_cdf, .. }
                if Cdf::builtin(size_cdf).is_none() && !size_cdf.starts_with("uniform(") =>
            {
                vec![PathBuf::from(size_cdf)]
            }
            WorkloadConfig::Csv { file }
            | WorkloadConfig::Hpcc { file, .. }
            | WorkloadConfig::Htsim { file, .. }
            | WorkloadConfig::Json { file } => vec![file.clone()],
            WorkloadConfig::Mix { parts } => parts.iter().flat_map(|p| p.input_files()).collect(),
            _ => Vec::new(),
        }
    }

    /// Checks the workload against the topology; returns `(key, message)`.
    pub fn validate(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        base: &Path,
    ) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        match self {
            WorkloadConfig::Poisson {
                size_cdf,
                load,
                flows,
                start,
                interarrival,
                sigma,
                on,
                off,
                ..
            } => {
                if !(*load > 0.0 && *load <= 1.0) {
                    return e("load", format!("must be in (0, 1], got {load}"));
                }
                if let Some(s) = sigma {
                    if *interarrival != Interarrival::Lognormal {
                        return e("sigma", "only lognormal inter-arrivals take a sigma".into());
                    }
                    if !(*s > 0.0 && *s <= 10.0) {
                        return e("sigma", format!("must be in (0, 10], got {s}"));
                    }
                }
                match (on, off) {
                    (Some(a), Some(b)) => {
                        if a.0 == 0 || b.0 == 0 {
                            return e("on", "on and off periods must be > 0".into());
                        }
                    }
                    (None, None) => {}
                    _ => return e("on", "give both `on` and `off` (on/off sources)".into()),
                }
                if *flows == 0 || *flows > 10_000_000 {
                    return e("flows", format!("must be in 1..=10000000, got {flows}"));
                }
                if n_hosts < 2 {
                    return e("kind", "poisson needs at least 2 hosts".into());
                }
                let cdf = load_cdf(size_cdf, base).map_err(|m| ("size_cdf".to_string(), m))?;
                too_long("size_cdf", cdf.quantile(1.0) as u64, host_rate)?;
                // The arrivals must fit in simulated time: the expected time of the last.
                let span = start.as_secs_f64()
                    + *flows as f64 * cdf.mean() * 8.0
                        / (load * host_rate.bps() as f64 * n_hosts as f64);
                if span > MAX_ARRIVAL_SPAN_S {
                    return e(
                        "load",
                        format!(
                            "{flows} flows at load {load} would arrive over about {span:.3e} s of simulated time (mean size {:.0} B, {n_hosts} hosts); at most {MAX_ARRIVAL_SPAN_S} s: raise the load or lower `flows`",
                            cdf.mean()
                        ),
                    );
                }
            }
            // A file fit to stream is checked a row at a time, without holding its flows;
            // any other is read whole, which reports what is wrong with it.
            WorkloadConfig::Csv { file } => {
                let path = base.join(file);
                if check_csv_stream(&path, n_hosts, host_rate, None).is_none() {
                    let v = read_csv(&path, n_hosts).map_err(|m| ("file".to_string(), m))?;
                    within_horizon(&v, host_rate, &path)?;
                }
            }
            WorkloadConfig::Hpcc {
                file,
                start_offset,
                hosts,
            } => {
                let path = base.join(file);
                if check_hpcc_stream(&path, n_hosts, hosts, host_rate, *start_offset, None)
                    .is_none()
                {
                    let v = read_hpcc(&path, n_hosts, hosts, *start_offset)
                        .map_err(|m| ("file".to_string(), m))?;
                    within_horizon(&v, host_rate, &path)?;
                }
            }
            WorkloadConfig::Json { file } => {
                let path = base.join(file);
                let v = read_json(&path, n_hosts).map_err(|m| ("file".to_string(), m))?;
                within_horizon(&v, host_rate, &path)?;
            }
            WorkloadConfig::Htsim {
                file,
                start_unit,
                send_done_as_recv_done,
            } => {
                let path = base.join(file);
                let v = read_htsim(&path, n_hosts, *start_unit, *send_done_as_recv_done)
                    .map_err(|m| ("file".to_string(), m))?;
                within_horizon(&v, host_rate, &path)?;
            }
            WorkloadConfig::Permutation { size, .. } => {
                if size.0 == 0 {
                    return e("size", "must be positive".into());
                }
                if n_hosts < 2 {
                    return e("kind", "a permutation needs at least 2 hosts".into());
                }
                too_long("size", size.0, host_rate)?;
            }
            WorkloadConfig::AllReduce { hosts, size, .. }
            | WorkloadConfig::AllToAll { hosts, size, .. } => {
                let set = host_set(hosts, n_hosts).map_err(|m| ("hosts".to_string(), m))?;
                if size.0 == 0 {
                    return e("size", "must be positive".into());
                }
                if matches!(self, WorkloadConfig::AllReduce { .. }) && size.0 < set.len() as u64 {
                    return e(
                        "size",
                        format!(
                            "{size} cannot be cut into one chunk per host of the ring: at least \
                             {} B for {} hosts",
                            set.len(),
                            set.len()
                        ),
                    );
                }
                too_long("size", size.0, host_rate)?;
                if set.len() as u64 * set.len() as u64 > 10_000_000 {
                    return e("hosts", format!("{} hosts make too many flows", set.len()));
                }
            }
            WorkloadConfig::Incast {
                fan_in,
                size,
                size_max,
                receiver,
                bursts,
                load,
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
                match size_max {
                    Some(m) => too_long("size_max", m.0, host_rate)?,
                    None => too_long("size", size.0, host_rate)?,
                }
                if *bursts == 0 || *bursts > 100_000 {
                    return e("bursts", format!("must be in 1..=100000, got {bursts}"));
                }
                if let Some(l) = load
                    && !(*l > 0.0 && *l <= 1.0)
                {
                    return e("load", format!("must be in (0, 1], got {l}"));
                }
            }
            WorkloadConfig::PartitionAggregate {
                fan_in,
                queries,
                response_size,
                response_size_max,
                deadline_mean,
                deadline_means,
                query_rate,
                ..
            } => {
                if n_hosts < 2 {
                    return e("kind", "partition-aggregate needs at least 2 hosts".into());
                }
                if *fan_in == 0 || *fan_in > 10_000 {
                    return e("fan_in", format!("must be in 1..=10000, got {fan_in}"));
                }
                if *queries == 0 || *queries > 1_000_000 {
                    return e("queries", format!("must be in 1..=1000000, got {queries}"));
                }
                if response_size.0 == 0 || response_size_max < response_size {
                    return e(
                        "response_size_max",
                        "need 0 < response_size <= response_size_max".into(),
                    );
                }
                too_long("response_size_max", response_size_max.0, host_rate)?;
                if deadline_mean.0 == 0 || deadline_means.iter().any(|d| d.0 == 0) {
                    return e("deadline_mean", "deadline means must be positive".into());
                }
                if query_rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
                    return e(
                        "query_rate",
                        "must be a positive number of queries per second".into(),
                    );
                }
            }
            WorkloadConfig::Sequential {
                rate,
                workflows,
                requests,
                request_size,
                response_size,
                response_size_max,
                deadline_mean,
                deadline_means,
                ..
            } => {
                if n_hosts < 2 {
                    return e("kind", "workflows need at least 2 hosts".into());
                }
                if !(*rate > 0.0 && rate.is_finite()) {
                    return e(
                        "rate",
                        format!("must be a positive rate per second, got {rate}"),
                    );
                }
                if *workflows == 0 || *workflows > 1_000_000 {
                    return e(
                        "workflows",
                        format!("must be in 1..=1000000, got {workflows}"),
                    );
                }
                if *requests == 0 || *requests > 1000 {
                    return e("requests", format!("must be in 1..=1000, got {requests}"));
                }
                if request_size.0 == 0 || response_size.0 == 0 || response_size_max < response_size
                {
                    return e(
                        "response_size_max",
                        "sizes must be positive with response_size <= response_size_max".into(),
                    );
                }
                too_long("request_size", request_size.0, host_rate)?;
                too_long("response_size_max", response_size_max.0, host_rate)?;
                if deadline_mean.0 == 0 || deadline_means.iter().any(|d| d.0 == 0) {
                    return e("deadline_mean", "deadline means must be positive".into());
                }
            }
            WorkloadConfig::Mix { parts } => {
                if parts.is_empty() {
                    return e("parts", "lists no workloads".into());
                }
                for (i, p) in parts.iter().enumerate() {
                    p.validate(n_hosts, host_rate, base)
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
                    too_long(&format!("flows[{i}].size"), f.size.0, host_rate)?;
                    if f.prio.is_some_and(|p| p >= 8) {
                        return e(&format!("flows[{i}].prio"), "must be in 0..8".into());
                    }
                }
            }
        }
        Ok(())
    }

    /// Expands the workload into flows: those that start on their own, sorted by start time
    /// (ties by id), then those that wait for a group.
    pub fn generate(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
    ) -> Result<Vec<FlowSpec>, String> {
        let v = match self {
            WorkloadConfig::Poisson {
                size_cdf,
                load,
                flows,
                start,
                until,
                tag,
                interarrival,
                sigma,
                on: Some(on),
                off: Some(off),
            } => {
                let cdf = load_cdf(size_cdf, base)?;
                let mut arr = RngStream::new(seed, "workload.arrivals");
                let mut sizes = RngStream::new(seed, "workload.sizes");
                let mut ends = RngStream::new(seed, "workload.endpoints");
                let per_host_ia = cdf.mean() * 8.0 / (load * host_rate.bps() as f64);
                let sigma = sigma.unwrap_or(1.0);
                let lognormal = *interarrival == Interarrival::Lognormal;
                return in_order(
                    on_off(
                        OnOff {
                            n_hosts,
                            flows: *flows,
                            start: *start,
                            until: *until,
                            tag: *tag,
                            on_s: on.as_secs_f64(),
                            off_s: off.as_secs_f64(),
                            // Faster while on, so that the long-run load is `load`.
                            ia_on: per_host_ia * on.as_secs_f64()
                                / (on.as_secs_f64() + off.as_secs_f64()),
                            lognormal: lognormal.then_some(sigma),
                        },
                        &cdf,
                        &mut arr,
                        &mut sizes,
                        &mut ends,
                    ),
                    host_rate,
                );
            }
            WorkloadConfig::Poisson { until, .. } => self
                .poisson_stream(n_hosts, host_rate, seed, base, *until)?
                .expect("a Poisson workload")
                .collect(),
            WorkloadConfig::Csv { file } => read_csv(&base.join(file), n_hosts)?,
            WorkloadConfig::Hpcc {
                file,
                start_offset,
                hosts,
            } => read_hpcc(&base.join(file), n_hosts, hosts, *start_offset)?,
            WorkloadConfig::Json { file } => read_json(&base.join(file), n_hosts)?,
            WorkloadConfig::Htsim {
                file,
                start_unit,
                send_done_as_recv_done,
            } => read_htsim(
                &base.join(file),
                n_hosts,
                *start_unit,
                *send_done_as_recv_done,
            )?,
            WorkloadConfig::AllReduce { hosts, size, start } => {
                let ring = host_set(hosts, n_hosts)?;
                let n = ring.len();
                // Chunk c is ⌊size/N⌋ bytes, one more for the first size mod N chunks, so the
                // chunks make up the buffer exactly; at step s host i sends chunk (i − s) mod N
                // (reduce-scatter for s < N − 1, then all-gather).
                let (q, r) = (size.0 / n as u64, size.0 % n as u64);
                let chunk = |c: usize| q + u64::from((c as u64) < r);
                let steps = 2 * (n - 1);
                let mut out = Vec::with_capacity(steps * n);
                // Flow (step s, host i) has id s·n + i; from step 1 on it waits for the flow
                // that brought host i its chunk at step s − 1 (group = that flow's id).
                for s in 0..steps {
                    for i in 0..n {
                        let id = (s * n + i) as u32;
                        let mut f = FlowSpec::new(
                            id,
                            ring[i],
                            ring[(i + 1) % n],
                            chunk((i + n - s % n) % n),
                            if s == 0 { *start } else { SimTime::ZERO },
                        );
                        if s + 1 < steps {
                            f.group = Some(id);
                        }
                        if s > 0 {
                            f.after = Some(((s - 1) * n + (i + n - 1) % n) as u32);
                        }
                        out.push(f);
                    }
                }
                out
            }
            WorkloadConfig::Permutation { size, start } => {
                // Sattolo's shuffle: a uniformly random single cycle, so dst(h) != h.
                let mut rng = RngStream::new(seed, "workload.permutation");
                let mut dst: Vec<u32> = (0..n_hosts as u32).collect();
                for i in (1..n_hosts).rev() {
                    let j = rng.below(i as u64) as usize;
                    dst.swap(i, j);
                }
                (0..n_hosts)
                    .map(|h| FlowSpec::new(h as u32, h as u32, dst[h], size.0, *start))
                    .collect()
            }
            WorkloadConfig::AllToAll { hosts, size, start } => {
                let set = host_set(hosts, n_hosts)?;
                let mut out = Vec::new();
                for &a in &set {
                    for &b in &set {
                        if a != b {
                            out.push(FlowSpec::new(out.len() as u32, a, b, size.0, *start));
                        }
                    }
                }
                out
            }
            WorkloadConfig::PartitionAggregate {
                fan_in,
                queries,
                response_size,
                response_size_max,
                deadline_mean,
                deadline_means,
                deadline_per_query,
                query_rate,
                jitter,
                start,
            } => {
                let mut rng = RngStream::new(seed, "workload.queries");
                let mut dl = RngStream::new(seed, "workload.deadlines");
                let mut out = Vec::with_capacity((*fan_in * *queries) as usize);
                let mut t = *start;
                let means = if deadline_means.is_empty() {
                    vec![*deadline_mean]
                } else {
                    deadline_means.clone()
                };
                for q in 0..*queries {
                    let class = means[dl.below(means.len() as u64) as usize];
                    let mean_dl = class.as_secs_f64();
                    if let Some(rate) = query_rate
                        && q > 0
                    {
                        t += SimTime::from_secs_f64(rng.exp(1.0 / rate));
                    }
                    let agg = rng.below(n_hosts as u64) as u32;
                    let shared = SimTime::from_secs_f64(dl.exp(mean_dl));
                    for _ in 0..*fan_in {
                        let mut w = rng.below(n_hosts as u64 - 1) as u32;
                        if w >= agg {
                            w += 1;
                        }
                        let size =
                            response_size.0 + rng.below(response_size_max.0 - response_size.0 + 1);
                        let offset = if jitter.0 > 0 {
                            SimTime(rng.below(jitter.0 + 1))
                        } else {
                            SimTime::ZERO
                        };
                        // Closed loop: every query after the first waits for the previous one.
                        let closed = query_rate.is_none() && q > 0;
                        let mut f = FlowSpec::new(
                            out.len() as u32,
                            w,
                            agg,
                            size,
                            if closed { offset } else { t + offset },
                        );
                        f.tag = FlowTag::Query;
                        f.deadline_class = Some(class);
                        f.group = Some(q);
                        f.after = closed.then(|| q - 1);
                        f.deadline = Some(if *deadline_per_query {
                            shared
                        } else {
                            SimTime::from_secs_f64(dl.exp(mean_dl))
                        });
                        out.push(f);
                    }
                }
                out
            }
            WorkloadConfig::Sequential {
                rate,
                workflows,
                requests,
                request_size,
                response_size,
                response_size_max,
                deadline_mean,
                deadline_means,
                start,
            } => {
                let mut rng = RngStream::new(seed, "workload.workflows");
                let mut dl = RngStream::new(seed, "workload.deadlines");
                let means = if deadline_means.is_empty() {
                    vec![*deadline_mean]
                } else {
                    deadline_means.clone()
                };
                let mut out = Vec::with_capacity((*workflows * *requests * 2) as usize);
                let mut t = start.as_secs_f64();
                let mut group = 0u32;
                for _ in 0..*workflows {
                    t += rng.exp(1.0 / rate);
                    let class = means[dl.below(means.len() as u64) as usize];
                    let mean_dl = class.as_secs_f64();
                    let front = rng.below(n_hosts as u64) as u32;
                    let mut prev: Option<u32> = None;
                    for _ in 0..*requests {
                        let mut server = rng.below(n_hosts as u64 - 1) as u32;
                        if server >= front {
                            server += 1;
                        }
                        let start_at = match prev {
                            None => SimTime::from_secs_f64(t),
                            Some(_) => SimTime::ZERO,
                        };
                        let mut req = FlowSpec::new(
                            out.len() as u32,
                            front,
                            server,
                            request_size.0,
                            start_at,
                        );
                        req.tag = FlowTag::Request;
                        req.group = Some(group);
                        req.after = prev;
                        out.push(req);
                        let size =
                            response_size.0 + rng.below(response_size_max.0 - response_size.0 + 1);
                        let mut resp =
                            FlowSpec::new(out.len() as u32, server, front, size, SimTime::ZERO);
                        resp.tag = FlowTag::Workflow;
                        resp.deadline_class = Some(class);
                        resp.group = Some(group + 1);
                        resp.after = Some(group);
                        resp.deadline = Some(SimTime::from_secs_f64(dl.exp(mean_dl)));
                        out.push(resp);
                        prev = Some(group + 1);
                        group += 2;
                    }
                }
                out
            }
            WorkloadConfig::Incast {
                fan_in,
                size,
                size_max,
                receiver,
                random,
                start,
                bursts,
                interval,
                tag,
                load,
            } => {
                let mut rng = RngStream::new(seed, "workload.incast");
                let mut arr = RngStream::new(seed, "workload.incast.arrivals");
                // Poisson incast: mean burst spacing for the requested load.
                let mean_size =
                    size.0 as f64 + size_max.map_or(0.0, |m| (m.0 - size.0) as f64 / 2.0);
                let spacing = load.map(|l| {
                    *fan_in as f64 * mean_size * 8.0 / (l * n_hosts as f64 * host_rate.bps() as f64)
                });
                let mut t_poisson = start.as_secs_f64();
                let mut out = Vec::new();
                for b in 0..*bursts {
                    let t = match spacing {
                        Some(m) => {
                            t_poisson += arr.exp(m);
                            SimTime::from_secs_f64(t_poisson)
                        }
                        None => *start + SimTime(interval.0 * b as u64),
                    };
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
                        let mut f = FlowSpec::new(out.len() as u32, src, dst, sz, t);
                        f.tag = *tag;
                        out.push(f);
                    }
                }
                out
            }
            WorkloadConfig::Mix { parts } => {
                let mut all = Vec::new();
                let mut group_base = 0u32;
                for (i, p) in parts.iter().enumerate() {
                    // Each part draws from its own streams; groups get disjoint numbers.
                    let part_seed = crate::engine::rng::mix64(seed ^ (0x9E37 + i as u64));
                    let mut v = p.generate(n_hosts, host_rate, part_seed, base)?;
                    let mut top = 0;
                    for f in v.iter_mut() {
                        if let Some(g) = f.group.as_mut() {
                            *g += group_base;
                            top = top.max(*g + 1);
                        }
                        if let Some(a) = f.after.as_mut() {
                            *a += group_base;
                        }
                    }
                    group_base = group_base.max(top);
                    all.extend(v);
                }
                for (i, f) in all.iter_mut().enumerate() {
                    f.id = i as u32;
                }
                all
            }
            WorkloadConfig::Flows { flows } => flows
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let mut s = FlowSpec::new(i as u32, f.src, f.dst, f.size.0, f.start);
                    s.prio = f.prio;
                    s.deadline = f.deadline;
                    s
                })
                .collect(),
        };
        in_order(v, host_rate)
    }
}

/// Poisson arrivals (the `poisson` workload without on/off periods) generated one flow at a
/// time, in start order: [`WorkloadConfig::generate`] collects them, a run that releases its
/// flows pulls them as they start ([`WorkloadConfig::stream`]), so its memory does not grow
/// with the number of flows.
#[derive(Clone, Debug)]
pub struct PoissonStream {
    cdf: Cdf,
    arr: RngStream,
    sizes: RngStream,
    ends: RngStream,
    /// Mean inter-arrival over the cluster (s); lognormal shape, if not exponential.
    mean_ia: f64,
    lognormal: Option<f64>,
    /// No arrival at or after this time (`until`, or the run's stop time).
    end: Option<SimTime>,
    tag: FlowTag,
    n_hosts: usize,
    flows: u64,
    id: u64,
    t: f64,
}

impl Iterator for PoissonStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        if self.id >= self.flows {
            return None;
        }
        self.t += match self.lognormal {
            Some(sigma) => self.arr.lognormal(self.mean_ia, sigma),
            None => self.arr.exp(self.mean_ia),
        };
        let st = SimTime::from_secs_f64(self.t);
        if self.end.is_some_and(|u| st >= u) {
            self.flows = 0;
            return None;
        }
        let n = self.n_hosts as u64;
        let src = self.ends.below(n) as u32;
        let mut dst = self.ends.below(n - 1) as u32;
        if dst >= src {
            dst += 1;
        }
        let mut f = FlowSpec::new(
            self.id as u32,
            src,
            dst,
            self.cdf.sample(&mut self.sizes),
            st,
        );
        f.tag = self.tag;
        self.id += 1;
        Some(f)
    }
}

impl WorkloadConfig {
    /// The workload as a stream of flows in start order, for the workloads that can come
    /// that way: Poisson arrivals without on/off periods, and flow-list CSV files already in
    /// (start, flow id) order without dependencies. Flows at or after `stop` are not made.
    /// Checked to the end here (the count, the horizon [`WorkloadConfig::generate`] checks,
    /// for a file every row), so that pulling from it does not fail (a file that changes
    /// during the run ends its stream with [`FlowStream::error`]). None: the workload comes
    /// as a list ([`WorkloadConfig::generate`], which also reports what is wrong with it).
    pub fn stream(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
        stop: Option<SimTime>,
    ) -> Result<Option<(FlowStream, StreamCheck)>, String> {
        if let WorkloadConfig::Csv { file } = self {
            let path = base.join(file);
            let Some(c) = check_csv_stream(&path, n_hosts, host_rate, stop) else {
                return Ok(None);
            };
            let s = CsvStream::open(&path, n_hosts, stop)?;
            return Ok(Some((FlowStream::Csv(s), c)));
        }
        if let WorkloadConfig::Hpcc {
            file,
            start_offset,
            hosts,
        } = self
        {
            let path = base.join(file);
            let Some(c) = check_hpcc_stream(&path, n_hosts, hosts, host_rate, *start_offset, stop)
            else {
                return Ok(None);
            };
            let s = HpccStream::open(&path, n_hosts, hosts, *start_offset, stop)?;
            return Ok(Some((FlowStream::Hpcc(s), c)));
        }
        let WorkloadConfig::Poisson {
            until,
            on: None,
            off: None,
            ..
        } = self
        else {
            return Ok(None);
        };
        let end = match (*until, stop) {
            (Some(u), Some(s)) => Some(u.min(s)),
            (u, s) => u.or(s),
        };
        let s = self
            .poisson_stream(n_hosts, host_rate, seed, base, end)?
            .expect("a Poisson workload");
        let mut n = 0usize;
        for f in s.clone() {
            if let Some(e) = beyond_horizon(&f, host_rate) {
                return Err(e);
            }
            n += 1;
        }
        let c = StreamCheck {
            flows: n,
            ..Default::default()
        };
        Ok(Some((FlowStream::Poisson(s), c)))
    }

    /// A Poisson workload's arrivals (without its on/off periods, which the caller handles),
    /// none at or after `end`; None for other workloads.
    fn poisson_stream(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
        end: Option<SimTime>,
    ) -> Result<Option<PoissonStream>, String> {
        let WorkloadConfig::Poisson {
            size_cdf,
            load,
            flows,
            start,
            tag,
            interarrival,
            sigma,
            ..
        } = self
        else {
            return Ok(None);
        };
        let cdf = load_cdf(size_cdf, base)?;
        let per_host_ia = cdf.mean() * 8.0 / (load * host_rate.bps() as f64);
        let lognormal = *interarrival == Interarrival::Lognormal;
        Ok(Some(PoissonStream {
            cdf,
            arr: RngStream::new(seed, "workload.arrivals"),
            sizes: RngStream::new(seed, "workload.sizes"),
            ends: RngStream::new(seed, "workload.endpoints"),
            mean_ia: per_host_ia / n_hosts as f64,
            lognormal: lognormal.then_some(sigma.unwrap_or(1.0)),
            end,
            tag: *tag,
            n_hosts,
            flows: *flows,
            id: 0,
            t: start.as_secs_f64(),
        }))
    }
}

/// Checks a workload's flows against the simulated-time horizon and orders them: flows that
/// start on their own first, by start time (ties by id); dependent flows after.
fn in_order(mut v: Vec<FlowSpec>, host_rate: BitRate) -> Result<Vec<FlowSpec>, String> {
    if let Some(e) = v.iter().find_map(|f| beyond_horizon(f, host_rate)) {
        return Err(e);
    }
    v.sort_by_key(|f| (f.after.is_some(), f.start, f.id));
    Ok(v)
}

/// The error for flow `f` if it starts beyond [`MAX_START`], or if its bytes alone, at
/// `host_rate` (the fastest host link: no flow is sent faster), take longer than
/// [`MAX_ARRIVAL_SPAN_S`]: it could not finish within the horizon either.
fn beyond_horizon(f: &FlowSpec, host_rate: BitRate) -> Option<String> {
    if f.start > MAX_START {
        return Some(format!(
            "flow {} would start at {}, beyond {MAX_ARRIVAL_SPAN_S} s of simulated time",
            f.id, f.start
        ));
    }
    let need = f.size as f64 * 8.0 / host_rate.bps().max(1) as f64;
    (need > MAX_ARRIVAL_SPAN_S).then(|| {
        format!(
            "flow {} of {} B needs at least {need:.4e} s at {host_rate} (the fastest host link), beyond the {MAX_ARRIVAL_SPAN_S} s of simulated time a flow may take",
            f.id, f.size
        )
    })
}

/// `(key, message)` if a flow of `bytes` (the most key `key` allows) could not finish within
/// [`MAX_ARRIVAL_SPAN_S`] even at `host_rate`.
fn too_long(key: &str, bytes: u64, host_rate: BitRate) -> Result<(), (String, String)> {
    let need = bytes as f64 * 8.0 / host_rate.bps().max(1) as f64;
    if need > MAX_ARRIVAL_SPAN_S {
        return Err((
            key.to_string(),
            format!(
                "a flow of {bytes} B needs at least {need:.4e} s at {host_rate} (the fastest host link), beyond the {MAX_ARRIVAL_SPAN_S} s of simulated time a flow may take"
            ),
        ));
    }
    Ok(())
}

/// `("file", message)` naming `path` if a flow of `v` is beyond the horizon
/// ([`beyond_horizon`]).
fn within_horizon(v: &[FlowSpec], host_rate: BitRate, path: &Path) -> Result<(), (String, String)> {
    match v.iter().find_map(|f| beyond_horizon(f, host_rate)) {
        Some(m) => Err(("file".to_string(), format!("{}: {m}", path.display()))),
        None => Ok(()),
    }
}

/// The latest start a flow may have: [`MAX_ARRIVAL_SPAN_S`].
pub const MAX_START: SimTime = SimTime(MAX_ARRIVAL_SPAN_S as u64 * crate::units::PS_PER_SEC);

/// The error for a start read as `given` that lies beyond [`MAX_START`].
fn start_beyond(given: &str) -> String {
    format!("start {given} is beyond the {MAX_ARRIVAL_SPAN_S} s of simulated time a run may span")
}

/// Longest span of generated arrivals, in simulated seconds (a workload spread wider cannot
/// be simulated in any useful time; picosecond time itself would overflow at 213 days).
pub const MAX_ARRIVAL_SPAN_S: f64 = 10_000.0;

/// Largest time a flow list may give, in ns (about 11.6 days): sums of a start time and a
/// deadline stay far from overflowing picosecond time.
pub const MAX_CSV_TIME_NS: u64 = 1_000_000_000_000_000;

/// Reads the flow-list CSV format (through the `csv` crate: quoted fields, a UTF-8 byte-order
/// mark and blank lines are handled; errors name the file, line and column).
pub fn read_csv(path: &Path, n_hosts: usize) -> Result<Vec<FlowSpec>, String> {
    let text = crate::fileid::read_to_string(path)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut r = csv_reader(text.as_bytes());
    let cols = csv_header(&mut r, path)?;
    let mut out = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    // Per flow with `after`: its line and the flows it waits for.
    let mut deps: Vec<(usize, usize, Vec<u64>)> = Vec::new();
    for rec in r.records() {
        let f = rec.map_err(|e| format!("{}: {e}", path.display()))?;
        let Some((spec, after)) = csv_row(&f, &cols, path, n_hosts, &mut |id| ids.insert(id))?
        else {
            continue;
        };
        if let Some(list) = after {
            let line = f.position().map_or(0, |p| p.line());
            deps.push((out.len(), line as usize, list));
        }
        out.push(spec);
    }
    if out.is_empty() {
        return Err(format!("{}: no flows", path.display()));
    }
    link_dependencies(&mut out, deps, &path.display().to_string(), |l| {
        format!("line {l}")
    })?;
    Ok(out)
}

/// The reader of a flow-list CSV.
fn csv_reader<R: std::io::Read>(r: R) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(r)
}

/// A flow-list CSV's columns, checked.
fn csv_header<R: std::io::Read>(
    r: &mut csv::Reader<R>,
    path: &Path,
) -> Result<Vec<String>, String> {
    let cols: Vec<String> = r
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .iter()
        .map(String::from)
        .collect();
    if cols.iter().all(|c| c.is_empty()) {
        return Err(format!("{}: empty file", path.display()));
    }
    let need = ["flow_id", "src", "dst", "size_bytes", "start_ns"];
    if cols.len() < 5 || cols[..5] != need {
        return Err(format!(
            "{}: the header must start with `{}`, got `{}`",
            path.display(),
            need.join(","),
            cols.join(",")
        ));
    }
    for c in &cols[5..] {
        if !["prio", "deadline_ns", "after"].contains(&c.as_str()) {
            return Err(format!(
                "{}: unknown column `{c}` (optional columns: prio, deadline_ns, after)",
                path.display()
            ));
        }
    }
    Ok(cols)
}

/// A flow-list CSV row: its flow, and the flow ids it waits for (`after`), if any.
type CsvRow = (FlowSpec, Option<Vec<u64>>);

/// One flow-list CSV row: its flow and the ids it waits for (`after`), or None for a blank
/// row. `new_id` says whether a flow id was not seen before (and records it).
fn csv_row(
    f: &csv::StringRecord,
    cols: &[String],
    path: &Path,
    n_hosts: usize,
    new_id: &mut dyn FnMut(u64) -> bool,
) -> Result<Option<CsvRow>, String> {
    let line = f.position().map_or(0, |p| p.line());
    let at = || format!("{} line {line}", path.display());
    if f.iter().all(|x| x.is_empty()) {
        return Ok(None);
    }
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
                &f[i]
            )
        })
    };
    let time = |i: usize| -> Result<SimTime, String> {
        let v = num(i)?;
        if v > MAX_CSV_TIME_NS {
            return Err(format!(
                "{}: `{}` = {v} is out of range (at most {MAX_CSV_TIME_NS} ns)",
                at(),
                cols[i]
            ));
        }
        Ok(SimTime::from_ns(v))
    };
    let (id, src, dst, size, start) = (num(0)?, num(1)?, num(2)?, num(3)?, time(4)?);
    if start > MAX_START {
        let given = format!("`{}` = {}", cols[4], &f[4]);
        return Err(format!("{}: {}", at(), start_beyond(&given)));
    }
    if src as usize >= n_hosts || dst as usize >= n_hosts {
        return Err(format!("{}: hosts must be in 0..{n_hosts}", at()));
    }
    if src == dst {
        return Err(format!("{}: src and dst are the same host", at()));
    }
    if size == 0 {
        return Err(format!("{}: size_bytes must be positive", at()));
    }
    if id > u32::MAX as u64 || !new_id(id) {
        return Err(format!("{}: flow_id {id} is duplicated or too large", at()));
    }
    let mut spec = FlowSpec::new(id as u32, src as u32, dst as u32, size, start);
    let mut after = None;
    for (i, c) in cols.iter().enumerate().skip(5) {
        match c.as_str() {
            "prio" => match num(i)? {
                v if v < 8 => spec.prio = Some(v as u8),
                _ => return Err(format!("{}: prio must be in 0..8", at())),
            },
            "after" => {
                let text = f[i].trim();
                if !text.is_empty() {
                    let list = text
                        .split(';')
                        .map(|x| x.trim().parse::<u64>())
                        .collect::<Result<Vec<u64>, _>>()
                        .map_err(|_| {
                            format!(
                                "{}: `after` = `{text}`: flow ids separated by `;` (e.g. 3;4)",
                                at()
                            )
                        })?;
                    after = Some(list);
                }
            }
            _ => spec.deadline = Some(time(i)?),
        }
    }
    Ok(Some((spec, after)))
}

/// A flow-list CSV read row by row as its flows start (a file already in start order; see
/// [`WorkloadConfig::stream`]). A row that no longer parses (the file changed since it was
/// checked) ends the stream and is kept as its error.
#[derive(Debug)]
pub struct CsvStream {
    path: PathBuf,
    reader: csv::Reader<std::io::BufReader<HashingReader>>,
    cols: Vec<String>,
    n_hosts: usize,
    /// Records read so far (blank ones included).
    records: u64,
    progress: StreamProgress,
}

impl CsvStream {
    fn open(path: &Path, n_hosts: usize, end: Option<SimTime>) -> Result<CsvStream, String> {
        use std::io::BufRead;
        let file = open_regular(path)?;
        let mut b = std::io::BufReader::new(file);
        let bom = b
            .fill_buf()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .starts_with("\u{feff}".as_bytes());
        if bom {
            b.consume(3);
        }
        let mut reader = csv_reader(b);
        let cols = csv_header(&mut reader, path)?;
        Ok(CsvStream {
            path: path.to_path_buf(),
            reader,
            cols,
            n_hosts,
            records: 0,
            progress: StreamProgress::new(end),
        })
    }

    /// The next row's flow (blank rows skipped), whatever its start.
    fn next_row(
        &mut self,
        new_id: &mut dyn FnMut(u64) -> bool,
    ) -> Result<Option<(FlowSpec, bool)>, String> {
        let mut rec = csv::StringRecord::new();
        loop {
            let more = self
                .reader
                .read_record(&mut rec)
                .map_err(|e| format!("{}: {e}", self.path.display()))?;
            if !more {
                return Ok(None);
            }
            self.records += 1;
            if let Some((spec, after)) =
                csv_row(&rec, &self.cols, &self.path, self.n_hosts, new_id)?
            {
                return Ok(Some((spec, after.is_some())));
            }
        }
    }
}

impl CsvStream {
    /// The flows still to come: the file read again from the current row.
    fn rest(&self) -> Vec<FlowSpec> {
        if self.progress.done {
            return Vec::new();
        }
        let Ok(mut again) = CsvStream::open(&self.path, self.n_hosts, self.progress.end) else {
            return Vec::new();
        };
        let mut rec = csv::StringRecord::new();
        for _ in 0..self.records {
            if !again.reader.read_record(&mut rec).unwrap_or(false) {
                return Vec::new();
            }
        }
        again.records = self.records;
        again.progress.last = self.progress.last;
        again.collect()
    }
}

impl Iterator for CsvStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        if self.progress.done {
            return None;
        }
        let row = self
            .next_row(&mut |_| true)
            .map(|r| r.map(|(spec, _)| spec));
        let at = || {
            let line = self.reader.position().line();
            format!("{} line {line}", self.path.display())
        };
        self.progress.next(row, at)
    }
}

/// Where a flow file read as its flows start stands: how far it may go (`end`), whether it
/// is done, why it stopped early (`error`: the file changed), the last flow given and how
/// many were given.
#[derive(Clone, Debug)]
struct StreamProgress {
    end: Option<SimTime>,
    done: bool,
    error: Option<String>,
    /// (start, id) of the last flow given: each must come after it.
    last: Option<(SimTime, u32)>,
    given: usize,
}

impl StreamProgress {
    fn new(end: Option<SimTime>) -> StreamProgress {
        StreamProgress {
            end,
            done: false,
            error: None,
            last: None,
            given: 0,
        }
    }

    /// The next flow of the file, from `row` (the file's next flow, none at its end, or why
    /// it no longer parses; `at` names its line): None once it is done (at the end, at the
    /// first flow at or after `end`, or at an error, kept in `error`: a row that no longer
    /// parses, or a flow that does not come after the one before, as checking the file
    /// found).
    fn next(
        &mut self,
        row: Result<Option<FlowSpec>, String>,
        at: impl FnOnce() -> String,
    ) -> Option<FlowSpec> {
        let row = row.and_then(|r| match r {
            Some(f) if self.last.is_some_and(|l| l >= (f.start, f.id)) => Err(format!(
                "{}: flow {} starts at {}, before the flow read before it (the file was in start order when checked)",
                at(),
                f.id,
                f.start
            )),
            r => Ok(r),
        });
        match row {
            Ok(Some(spec)) if self.end.is_none_or(|e| spec.start < e) => {
                self.last = Some((spec.start, spec.id));
                self.given += 1;
                Some(spec)
            }
            Ok(_) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.error = Some(format!("{e} (the file changed during the run)"));
                None
            }
        }
    }

    /// After the stream's last flow: the file read to its end by `r` is the one `check`
    /// saw, and gave the flows `check` counted; `path` names it.
    fn verify(
        &self,
        r: &mut HashingReader,
        check: &StreamCheck,
        path: &Path,
    ) -> Result<(), String> {
        let changed = |what: String| {
            format!(
                "{what}: the file changed while the run read it; the run's results would not be this file's"
            )
        };
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        r.drain()
            .map_err(|e| changed(format!("{}: cannot read it any more ({e})", path.display())))?;
        let Some(before) = &check.file else {
            return Ok(());
        };
        let read = r.ident();
        if read.len != before.len || read.mtime != before.mtime {
            return Err(changed(format!(
                "{}: {} bytes read, {} when checked before the run",
                path.display(),
                read.len,
                before.len
            )));
        }
        if read.hash != before.hash {
            return Err(changed(format!(
                "{}: what the run read (hash {}) is not what was checked (hash {})",
                path.display(),
                read.hex(),
                before.hex()
            )));
        }
        if self.given != check.flows {
            return Err(changed(format!(
                "{}: {} flows read, {} when checked",
                path.display(),
                self.given,
                check.flows
            )));
        }
        before.matches_now(path).map_err(changed)
    }
}

/// A workload generated or read one flow at a time, in start order.
#[derive(Debug)]
pub enum FlowStream {
    Poisson(PoissonStream),
    Csv(CsvStream),
    Hpcc(HpccStream),
}

impl Iterator for FlowStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        match self {
            FlowStream::Poisson(p) => p.next(),
            FlowStream::Csv(c) => c.next(),
            FlowStream::Hpcc(h) => h.next(),
        }
    }
}

impl FlowStream {
    /// The flows still to come, read without consuming them (a run collected before its last
    /// arrivals, e.g. observed in time windows).
    pub fn rest(&self) -> Vec<FlowSpec> {
        match self {
            FlowStream::Poisson(p) => p.clone().collect(),
            FlowStream::Csv(c) => c.rest(),
            FlowStream::Hpcc(h) => h.rest(),
        }
    }

    /// Why the stream ended early, if it did (a file that no longer parses).
    pub fn error(&self) -> Option<&str> {
        match self {
            FlowStream::Csv(c) => c.progress.error.as_deref(),
            FlowStream::Hpcc(h) => h.progress.error.as_deref(),
            FlowStream::Poisson(_) => None,
        }
    }

    /// At the end of the run: a file read as it went was not changed while it was read. The
    /// rest of the stream is read through (flows the run did not reach are counted, not
    /// used), then what was read is compared with `check` (which read the file before the
    /// run): its length, modification time and hash, the number of flows, and each flow
    /// after the one before; and the file as it is now with the file then.
    pub fn finish(&mut self, check: &StreamCheck) -> Result<(), String> {
        while self.next().is_some() {}
        match self {
            FlowStream::Poisson(_) => Ok(()),
            FlowStream::Csv(c) => c
                .progress
                .verify(c.reader.get_mut().get_mut(), check, &c.path),
            FlowStream::Hpcc(h) => {
                let r = &mut h.reader;
                h.progress.verify(r.lines.get_mut(), check, &r.path)
            }
        }
    }
}

/// What checking a stream to its end found: its length, and per priority `p` the first flow
/// (id, priority) whose priority is at least `p` (a run with `p` queues refuses it).
#[derive(Clone, Debug, Default)]
pub struct StreamCheck {
    pub flows: usize,
    pub prio_at_least: [Option<(u32, u8)>; 9],
    /// A flow file's identity as the check read it (None for a generated workload).
    pub file: Option<FileIdent>,
    /// Bytes of the flows counted (the work estimate's; 0 for a generated workload).
    pub bytes: u64,
}

/// Checks flow-list CSV `path` for streaming: every row valid, no dependencies, rows in
/// increasing (start, flow id) order (the order a run sorts a list into), ids distinct and
/// below 2^28, every start within the horizon. None if it is not fit (the list reader then
/// reads it, and reports whatever is wrong with it).
fn check_csv_stream(
    path: &Path,
    n_hosts: usize,
    host_rate: BitRate,
    end: Option<SimTime>,
) -> Option<StreamCheck> {
    let mut s = CsvStream::open(path, n_hosts, None).ok()?;
    let mut seen: Vec<u64> = Vec::new();
    let mut fresh = |id: u64| {
        if id >= 1 << 28 {
            return true; // refused below
        }
        let (w, b) = ((id / 64) as usize, id % 64);
        if w >= seen.len() {
            seen.resize(w + 1, 0);
        }
        let new = seen[w] & (1 << b) == 0;
        seen[w] |= 1 << b;
        new
    };
    let mut last: Option<(SimTime, u32)> = None;
    let mut c = StreamCheck::default();
    while let Some((f, after)) = s.next_row(&mut fresh).ok()? {
        if after
            || f.id >= 1 << 28
            || beyond_horizon(&f, host_rate).is_some()
            || last.is_some_and(|l| l >= (f.start, f.id))
        {
            return None;
        }
        last = Some((f.start, f.id));
        if end.is_none_or(|e| f.start < e) {
            c.flows += 1;
            c.bytes = c.bytes.saturating_add(f.size);
            if let Some(p) = f.prio {
                for slot in &mut c.prio_at_least[..=p as usize] {
                    slot.get_or_insert((f.id, p));
                }
            }
        }
    }
    c.file = Some(whole_file(s.reader.get_mut().get_mut())?);
    (last.is_some()).then_some(c)
}

/// The identity of the file reader `r` has read to its end, if the file did not grow or
/// shrink while it was read.
fn whole_file(r: &mut HashingReader) -> Option<FileIdent> {
    r.drain().ok()?;
    let id = r.ident();
    (id.len == r.opened_len()).then_some(id)
}

/// The hosts of a collective: the given list (distinct, at least 2, each below `n_hosts`) or
/// every host.
fn host_set(hosts: &Option<Vec<u32>>, n_hosts: usize) -> Result<Vec<u32>, String> {
    let set: Vec<u32> = match hosts {
        Some(h) => h.clone(),
        None => (0..n_hosts as u32).collect(),
    };
    if set.len() < 2 {
        return Err(format!("need at least 2 hosts, got {}", set.len()));
    }
    let mut seen = std::collections::BTreeSet::new();
    for &h in &set {
        if h as usize >= n_hosts {
            return Err(format!("host {h} is not in 0..{n_hosts}"));
        }
        if !seen.insert(h) {
            return Err(format!("host {h} is listed twice"));
        }
    }
    Ok(set)
}

/// The parameters of on/off sources.
struct OnOff {
    n_hosts: usize,
    flows: u64,
    start: SimTime,
    until: Option<SimTime>,
    tag: FlowTag,
    on_s: f64,
    off_s: f64,
    /// Mean inter-arrival of a host's flows while it is on (s).
    ia_on: f64,
    /// Lognormal inter-arrivals with this sigma (None: exponential).
    lognormal: Option<f64>,
}

/// On/off sources: every host alternates exponential on and off periods (each host starts
/// at the beginning of an on period) and sends flows only while on; the flows of all hosts
/// merged in time order, `flows` of them (or until `until`).
fn on_off(
    p: OnOff,
    cdf: &Cdf,
    arr: &mut RngStream,
    sizes: &mut RngStream,
    ends: &mut RngStream,
) -> Vec<FlowSpec> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let t0 = p.start.as_secs_f64();
    let ia = |arr: &mut RngStream| match p.lognormal {
        Some(s) => arr.lognormal(p.ia_on, s),
        None => arr.exp(p.ia_on),
    };
    // Per host: the end of its current on period; the heap orders next arrivals.
    let mut on_end: Vec<f64> = (0..p.n_hosts).map(|_| t0 + arr.exp(p.on_s)).collect();
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let key = |t: f64| SimTime::from_secs_f64(t).0;
    let next: Vec<f64> = (0..p.n_hosts).map(|_| t0 + ia(arr)).collect();
    for (h, &t) in next.iter().enumerate() {
        heap.push(Reverse((key(t), h)));
    }
    let mut next = next;
    let mut out = Vec::with_capacity(p.flows.min(10_000_000) as usize);
    while (out.len() as u64) < p.flows {
        let Some(Reverse((_, h))) = heap.pop() else {
            break;
        };
        let mut t = next[h];
        // Skip off periods until the arrival falls inside an on period.
        while t > on_end[h] {
            let resume = on_end[h] + arr.exp(p.off_s);
            on_end[h] = resume + arr.exp(p.on_s);
            t = resume + ia(arr);
        }
        if t != next[h] {
            next[h] = t;
            heap.push(Reverse((key(t), h)));
            continue;
        }
        let st = SimTime::from_secs_f64(t);
        if p.until.is_some_and(|u| st >= u) {
            break;
        }
        let mut dst = ends.below(p.n_hosts as u64 - 1) as u32;
        if dst >= h as u32 {
            dst += 1;
        }
        let mut f = FlowSpec::new(out.len() as u32, h as u32, dst, cdf.sample(sizes), st);
        f.tag = p.tag;
        out.push(f);
        next[h] = t + ia(arr);
        heap.push(Reverse((key(next[h]), h)));
    }
    out
}

/// Reads an htsim connection matrix (see [`WorkloadConfig::Htsim`]). Triggers become flow
/// dependencies: a flow with `trigger T` starts when T fires; T fires when every flow that
/// names it in `recv_done_trigger` (or `send_done_trigger`, with `send_done_as_recv_done`)
/// has been received. That is htsim's `barrier` with `count` equal to those flows, and its
/// `oneshot`/`multishot` with one such flow; other combinations (a trigger fired by the
/// first of several flows, a barrier count different from its flows, a flow firing two
/// triggers) are refused, as are `failure` lines (use `[[failures]]`).
pub fn read_htsim(
    path: &Path,
    n_hosts: usize,
    unit: CmStartUnit,
    send_done_as_recv: bool,
) -> Result<Vec<FlowSpec>, String> {
    let file = path.display().to_string();
    let text = crate::fileid::read_to_string(path)?;
    let mut header: std::collections::BTreeMap<String, u64> = Default::default();
    let mut flows: Vec<FlowSpec> = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    // Trigger id -> (kind, count, line); (flow index, trigger, line) it waits for / fires.
    let mut triggers: std::collections::BTreeMap<u64, (String, Option<u64>, usize)> =
        Default::default();
    let mut waits: Vec<(usize, u64, usize)> = Vec::new();
    let mut fires: Vec<(usize, u64, usize)> = Vec::new();
    // The line of each connection, for checks against the header.
    let mut conn_lines: Vec<usize> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let at = |m: String| format!("{file} line {ln}: {m}");
        let t: Vec<&str> = raw.split_whitespace().collect();
        if t.is_empty() || t[0].starts_with('#') {
            continue;
        }
        let num = |s: &str, what: &str| -> Result<u64, String> {
            s.parse::<u64>()
                .map_err(|_| at(format!("{what} `{s}` is not a non-negative integer")))
        };
        match t[0] {
            "Nodes" | "Connections" | "Triggers" | "Failures" => {
                let v = t
                    .get(1)
                    .ok_or_else(|| at(format!("`{}` needs a number", t[0])))?;
                header.insert(t[0].to_string(), num(v, t[0])?);
            }
            "failure" => {
                return Err(at(
                    "htsim failure lines are not imported: describe failures in [[failures]]"
                        .into(),
                ));
            }
            "trigger" => {
                let (mut id, mut kind, mut count) = (None, None, None);
                let mut k = 1;
                while k < t.len() {
                    match t[k] {
                        "id" | "count" => {
                            let v = t
                                .get(k + 1)
                                .ok_or_else(|| at(format!("`{}` needs a value", t[k])))?;
                            let v = num(v, t[k])?;
                            if t[k] == "id" {
                                id = Some(v);
                            } else {
                                count = Some(v);
                            }
                            k += 2;
                        }
                        "oneshot" | "multishot" | "barrier" => {
                            kind = Some(t[k].to_string());
                            k += 1;
                        }
                        other => return Err(at(format!("unknown trigger attribute `{other}`"))),
                    }
                }
                let id = id
                    .filter(|&x| x > 0)
                    .ok_or_else(|| at("a trigger needs `id` > 0".into()))?;
                let kind =
                    kind.ok_or_else(|| at("a trigger needs oneshot, multishot or barrier".into()))?;
                if triggers.insert(id, (kind, count, ln)).is_some() {
                    return Err(at(format!("trigger {id} is defined twice")));
                }
            }
            first if first.contains("->") => {
                let (a, b) = first.split_once("->").expect("contains ->");
                let (src, dst) = (num(a, "src")?, num(b, "dst")?);
                let (mut id, mut start, mut size, mut wait, mut fire) =
                    (None, None, None, None, None);
                let mut k = 1;
                while k < t.len() {
                    let key = t[k];
                    let v = t
                        .get(k + 1)
                        .ok_or_else(|| at(format!("`{key}` needs a value")))?;
                    match key {
                        "id" => id = Some(num(v, "id")?),
                        "size" => size = Some(num(v, "size")?),
                        "start" => {
                            let x: f64 = v
                                .parse()
                                .ok()
                                .filter(|x: &f64| x.is_finite() && *x >= 0.0 && *x < 1e18)
                                .ok_or_else(|| at(format!("start `{v}` is not a time")))?;
                            let ps = match unit {
                                CmStartUnit::Ps => x.round(),
                                CmStartUnit::Us => (x * 1e6).round(),
                            };
                            if ps > MAX_START.0 as f64 {
                                let u = match unit {
                                    CmStartUnit::Ps => "ps",
                                    CmStartUnit::Us => "us",
                                };
                                return Err(at(start_beyond(&format!("`{v}` ({u})"))));
                            }
                            start = Some(SimTime(ps as u64));
                        }
                        "trigger" => wait = Some(num(v, "trigger")?),
                        "recv_done_trigger" | "send_done_trigger" => {
                            if key == "send_done_trigger" && !send_done_as_recv {
                                return Err(at(
                                    "send_done_trigger: dcsim starts dependent flows when flows are received; set [workload] send_done_as_recv_done = true to accept that (one path delay later than htsim)".into(),
                                ));
                            }
                            if fire.is_some() {
                                return Err(at("a connection fires one trigger only here".into()));
                            }
                            fire = Some(num(v, key)?);
                        }
                        "prio" => {
                            num(v, "prio")?;
                        }
                        other => {
                            return Err(at(format!("unknown connection attribute `{other}`")));
                        }
                    }
                    k += 2;
                }
                if src as usize >= n_hosts || dst as usize >= n_hosts {
                    return Err(at(format!("hosts must be in 0..{n_hosts}")));
                }
                if src == dst {
                    return Err(at("src and dst are the same host".into()));
                }
                let size = size
                    .filter(|&x| x > 0)
                    .ok_or_else(|| at("a connection needs `size` > 0".into()))?;
                let start = match (start, wait) {
                    (Some(_), Some(_)) => {
                        return Err(at("both `start` and `trigger`: give one".into()));
                    }
                    (None, None) => return Err(at("no `start` and no `trigger`".into())),
                    (s, _) => s.unwrap_or(SimTime::ZERO),
                };
                let id = match id {
                    Some(0) => return Err(at("flow id 0 is not allowed (as in htsim)".into())),
                    Some(x) => x,
                    None if wait.is_some() => {
                        return Err(at("a triggered connection needs an `id`".into()));
                    }
                    None => ids.iter().next_back().map_or(1, |m| m + 1),
                };
                if id > u32::MAX as u64 || !ids.insert(id) {
                    return Err(at(format!("flow id {id} is duplicated or too large")));
                }
                if let Some(w) = wait {
                    waits.push((flows.len(), w, ln));
                }
                if let Some(f) = fire {
                    fires.push((flows.len(), f, ln));
                }
                flows.push(FlowSpec::new(
                    id as u32, src as u32, dst as u32, size, start,
                ));
                conn_lines.push(ln);
            }
            other => return Err(at(format!("unknown line start `{other}`"))),
        }
    }
    if flows.is_empty() {
        return Err(format!("{file}: no connections"));
    }
    if let Some(&n) = header.get("Nodes")
        && n as usize > n_hosts
    {
        return Err(format!(
            "{file}: Nodes {n}, but the topology has {n_hosts} hosts"
        ));
    }
    if let Some(&n) = header.get("Nodes")
        && let Some((f, ln)) = flows
            .iter()
            .zip(&conn_lines)
            .find(|(f, _)| f.src as u64 >= n || f.dst as u64 >= n)
    {
        return Err(format!(
            "{file} line {ln}: connection {}->{} names a node beyond the header's `Nodes {n}` (nodes 0..{n})",
            f.src, f.dst
        ));
    }
    for (key, count) in [("Connections", flows.len()), ("Triggers", triggers.len())] {
        if let Some(&n) = header.get(key)
            && n as usize != count
        {
            return Err(format!("{file}: `{key} {n}` but {count} found"));
        }
    }
    for (&tid, (kind, count, ln)) in &triggers {
        let firing = fires.iter().filter(|f| f.1 == tid).count();
        let at = |m: String| format!("{file} line {ln}: trigger {tid}: {m}");
        if firing == 0 {
            return Err(at("no connection fires it".into()));
        }
        match kind.as_str() {
            "barrier" => {
                let c = count.ok_or_else(|| at("a barrier needs `count`".into()))?;
                if c as usize != firing {
                    return Err(at(format!(
                        "count {c} but {firing} connections fire it: only a barrier over all its connections is modelled"
                    )));
                }
            }
            _ if firing > 1 => {
                return Err(at(format!(
                    "{kind} fired by {firing} connections fires at the first: not modelled (use a barrier)"
                )));
            }
            _ => {}
        }
    }
    for &(_, tid, ln) in waits.iter().chain(&fires) {
        if !triggers.contains_key(&tid) {
            return Err(format!("{file} line {ln}: trigger {tid} is not defined"));
        }
    }
    // Each trigger's firing connections form a group; its waiters wait for that group.
    let deps: Vec<(usize, usize, Vec<u64>)> = waits
        .iter()
        .map(|&(who, tid, ln)| {
            let members = fires
                .iter()
                .filter(|f| f.1 == tid)
                .map(|f| flows[f.0].id as u64)
                .collect();
            (who, ln, members)
        })
        .collect();
    link_dependencies(&mut flows, deps, &file, |l| format!("line {l}"))?;
    Ok(flows)
}

/// Reads a JSON flow list (see [`WorkloadConfig::Json`]); errors name the file and the
/// entry (0-based index and id).
pub fn read_json(path: &Path, n_hosts: usize) -> Result<Vec<FlowSpec>, String> {
    use serde_json::Value;
    let file = path.display().to_string();
    let text = crate::fileid::read_to_string(path)?;
    // A byte-order mark is no part of the JSON (the CSV reader skips it likewise).
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let JsonFlows(list) = serde_json::from_str(text).map_err(|e| {
        let at = format!(" at line {} column {}", e.line(), e.column());
        let m = e.to_string();
        let m = m.strip_suffix(&at).unwrap_or(&m);
        format!("{file}: line {} column {}: {m}", e.line(), e.column())
    })?;
    if list.is_empty() {
        return Err(format!("{file}: no flows"));
    }
    let mut out = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    let mut deps = Vec::new();
    for (k, o) in list.iter().enumerate() {
        let at = |m: String| format!("{file}: flow [{k}]: {m}");
        for key in o.keys() {
            if ![
                "id", "src", "dst", "size", "start", "after", "prio", "deadline",
            ]
            .contains(&key.as_str())
            {
                return Err(at(format!(
                    "unknown key `{key}` (id, src, dst, size, start, after, prio, deadline)"
                )));
            }
        }
        let int = |key: &str| -> Result<u64, String> {
            o.get(key)
                .ok_or_else(|| at(format!("`{key}` is missing")))?
                .as_u64()
                .ok_or_else(|| at(format!("`{key}` must be a non-negative integer")))
        };
        // Sizes in bytes, times in ns, or strings with units.
        let sized = |key: &str, time: bool| -> Result<u64, String> {
            match o.get(key) {
                Some(Value::Number(n)) => n
                    .as_u64()
                    .ok_or_else(|| at(format!("`{key}` must be a non-negative integer"))),
                Some(Value::String(t)) if time => t
                    .parse::<SimTime>()
                    .map(|x| x.0 / 1000)
                    .map_err(|e| at(format!("`{key}` = \"{t}\": {e}"))),
                Some(Value::String(t)) => t
                    .parse::<Bytes>()
                    .map(|b| b.0)
                    .map_err(|e| at(format!("`{key}` = \"{t}\": {e}"))),
                Some(_) => Err(at(format!(
                    "`{key}` must be a number or a string with a unit"
                ))),
                None => Err(at(format!("`{key}` is missing"))),
            }
        };
        let id = int("id")?;
        let (src, dst) = (int("src")?, int("dst")?);
        let size = sized("size", false)?;
        let start = sized("start", true)?;
        if src as usize >= n_hosts || dst as usize >= n_hosts {
            return Err(at(format!("hosts must be in 0..{n_hosts}")));
        }
        if src == dst {
            return Err(at("src and dst are the same host".into()));
        }
        if size == 0 {
            return Err(at("size must be positive".into()));
        }
        if SimTime::from_ns(start.min(u64::MAX / 1000)) > MAX_START {
            return Err(at(start_beyond(&format!("`{}`", o["start"]))));
        }
        if id > u32::MAX as u64 || !ids.insert(id) {
            return Err(at(format!("id {id} is duplicated or too large")));
        }
        let mut spec = FlowSpec::new(
            id as u32,
            src as u32,
            dst as u32,
            size,
            SimTime::from_ns(start),
        );
        if o.contains_key("prio") {
            match int("prio")? {
                p if p < 8 => spec.prio = Some(p as u8),
                _ => return Err(at("prio must be in 0..8".into())),
            }
        }
        if o.contains_key("deadline") {
            spec.deadline = Some(SimTime::from_ns(sized("deadline", true)?));
        }
        if let Some(a) = o.get("after") {
            let list = a
                .as_array()
                .and_then(|l| l.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                .ok_or_else(|| at("`after` must be a list of flow ids".into()))?;
            if !list.is_empty() {
                deps.push((out.len(), k, list));
            }
        }
        out.push(spec);
    }
    link_dependencies(&mut out, deps, &file, |k| format!("flow [{k}]"))?;
    Ok(out)
}

/// A JSON flow file: an array of objects, each read with its keys checked for repeats
/// (`serde_json`'s own map keeps the last of a key given twice, silently).
struct JsonFlows(Vec<serde_json::Map<String, serde_json::Value>>);

impl<'de> Deserialize<'de> for JsonFlows {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Flows;
        impl<'de> serde::de::Visitor<'de> for Flows {
            type Value = JsonFlows;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON array of flows")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<JsonFlows, A::Error> {
                let mut v = Vec::new();
                while let Some(JsonFlow(o)) = a.next_element()? {
                    v.push(o);
                }
                Ok(JsonFlows(v))
            }
        }
        d.deserialize_seq(Flows)
    }
}

/// One flow of a [`JsonFlows`] file: an object whose keys are each given once.
struct JsonFlow(serde_json::Map<String, serde_json::Value>);

impl<'de> Deserialize<'de> for JsonFlow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Flow;
        impl<'de> serde::de::Visitor<'de> for Flow {
            type Value = JsonFlow;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a flow (an object)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<JsonFlow, A::Error> {
                let mut o = serde_json::Map::new();
                while let Some(k) = a.next_key::<String>()? {
                    let v = a.next_value()?;
                    if o.contains_key(&k) {
                        return Err(serde::de::Error::custom(format!("`{k}` is given twice")));
                    }
                    o.insert(k, v);
                }
                Ok(JsonFlow(o))
            }
        }
        d.deserialize_map(Flow)
    }
}

/// Turns per-flow `after` lists into groups: each distinct set of flows waited for becomes a
/// group whose members are those flows, and the waiting flows start their `start` after the
/// group has been received. A flow may be waited for in one set only (ring and barrier
/// patterns); cycles are refused. `deps`: (index in `flows`, where it was read — a line, an
/// index — that `loc` names, flow ids). Errors name the file, the place and the flow's id.
fn link_dependencies(
    flows: &mut [FlowSpec],
    deps: Vec<(usize, usize, Vec<u64>)>,
    file: &str,
    loc: impl Fn(usize) -> String,
) -> Result<(), String> {
    if deps.is_empty() {
        return Ok(());
    }
    let index: std::collections::HashMap<u64, usize> = flows
        .iter()
        .enumerate()
        .map(|(i, f)| (f.id as u64, i))
        .collect();
    let mut groups: std::collections::BTreeMap<Vec<u64>, u32> = std::collections::BTreeMap::new();
    let lines: std::collections::HashMap<usize, usize> =
        deps.iter().map(|&(who, line, _)| (who, line)).collect();
    for (who, line, mut list) in deps {
        list.sort_unstable();
        list.dedup();
        let at = format!("{file}: {} (flow {})", loc(line), flows[who].id);
        for id in &list {
            let Some(&j) = index.get(id) else {
                return Err(format!(
                    "{at}: `after` names flow {id}, which is not in the file"
                ));
            };
            if j == who {
                return Err(format!("{at}: a flow cannot wait for itself"));
            }
        }
        let next = groups.len() as u32;
        let g = *groups.entry(list.clone()).or_insert(next);
        for id in &list {
            let m = &mut flows[index[id]];
            match m.group {
                Some(h) if h != g => {
                    return Err(format!(
                        "{at}: flow {id} is already waited for with other flows; a flow may be in one `after` set only"
                    ));
                }
                _ => m.group = Some(g),
            }
        }
        flows[who].after = Some(g);
    }
    // Cycles: a flow that (transitively) waits for itself never starts.
    let n = flows.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the path, 2 done
    let members: Vec<Vec<usize>> = {
        let mut m = vec![Vec::new(); groups.len()];
        for (i, f) in flows.iter().enumerate() {
            if let Some(g) = f.group {
                m[g as usize].push(i);
            }
        }
        m
    };
    // Flows in an order where each comes after the flows it waits for (DFS post-order).
    let mut order = Vec::with_capacity(n);
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, false)];
        while let Some((i, leaving)) = stack.pop() {
            if leaving {
                state[i] = 2;
                order.push(i);
                continue;
            }
            if state[i] == 2 {
                continue;
            }
            state[i] = 1;
            stack.push((i, true));
            if let Some(g) = flows[i].after {
                for &j in &members[g as usize] {
                    match state[j] {
                        1 => {
                            return Err(format!(
                                "{file}: flows {} and {} wait for each other (a dependency cycle)",
                                flows[i].id, flows[j].id
                            ));
                        }
                        0 => stack.push((j, false)),
                        _ => {}
                    }
                }
            }
        }
    }
    // The earliest a flow can start: its own start (for a waiting flow, its delay after the
    // flows it waits for) after the earliest start of those (their transfers take longer
    // still). A chain of delays beyond the horizon is refused here, with the flow's place,
    // rather than when the run gets there.
    let mut earliest = vec![SimTime::ZERO; n];
    for &i in &order {
        let before = flows[i].after.map_or(SimTime::ZERO, |g| {
            members[g as usize]
                .iter()
                .map(|&j| earliest[j])
                .max()
                .unwrap_or(SimTime::ZERO)
        });
        earliest[i] = before + flows[i].start;
        if earliest[i] > MAX_START {
            let at = lines
                .get(&i)
                .map_or(String::new(), |&l| format!(" {}", loc(l)));
            return Err(format!(
                "{file}:{at} (flow {}): it waits (through `after`) for flows that start at {before} at the earliest; {} later, it would start at {}, beyond the {MAX_ARRIVAL_SPAN_S} s of simulated time a run may span",
                flows[i].id, flows[i].start, earliest[i]
            ));
        }
    }
    Ok(())
}

/// Seconds written as a decimal (`2.000035106`) to a time, exactly to the nanosecond (digits
/// beyond the ninth are dropped).
fn decimal_seconds(s: &str) -> Option<SimTime> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let all_digits = |x: &str| x.chars().all(|c| c.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) || int.len() > 9 {
        return None;
    }
    let secs: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut ns_text: String = frac.chars().take(9).collect();
    while ns_text.len() < 9 {
        ns_text.push('0');
    }
    let ns: u64 = ns_text.parse().ok()?;
    Some(SimTime::from_ns(secs * 1_000_000_000 + ns))
}

/// Reads an HPCC ns-3 flow file: a first line with the flow count, then `src dst pg dport
/// size start` per flow (start in seconds). Flow ids are 1.. in file order; `pg` and `dport`
/// are not used (the scheme decides priorities); node ids must be hosts: the topology file's
/// own host ids when `hosts` holds them, else dcsim's `0..n_hosts`.
/// Starts are read exactly to the nanosecond (the HPCC simulator goes through a `double` and
/// truncates, so some of its flows start 1 ns earlier), and `offset` is subtracted.
pub fn read_hpcc(
    path: &Path,
    n_hosts: usize,
    hosts: &FileHostIds,
    offset: SimTime,
) -> Result<Vec<FlowSpec>, String> {
    let mut r = HpccReader::open(path, n_hosts, hosts.ids(), offset)?;
    let mut out = Vec::with_capacity(r.n);
    while let Some(f) = r.next_flow()? {
        out.push(f);
    }
    Ok(out)
}

/// An HPCC ns-3 flow file read a line at a time ([`read_hpcc`]'s format and checks): the
/// declared count from the first line, then each flow, and at the end the check that the
/// file held exactly that many.
struct HpccReader {
    path: PathBuf,
    lines: std::io::BufReader<HashingReader>,
    /// Line number of the last line read.
    ln: usize,
    n_hosts: usize,
    /// The topology file's ids of the hosts, ascending (none: `0..n_hosts`).
    ids: Option<Vec<u32>>,
    offset: SimTime,
    /// Flows the first line declares, and flows read so far.
    n: usize,
    read: usize,
}

impl HpccReader {
    /// dcsim's host index of the host the file names `id`.
    fn host(&self, id: u64) -> Result<u64, String> {
        match &self.ids {
            None if (id as usize) < self.n_hosts => Ok(id),
            None => Err(format!(
                "{}: node {id} is not a host: hosts are 0..{} (a built-in topology numbers hosts first)",
                self.at(),
                self.n_hosts
            )),
            Some(ids) => u32::try_from(id)
                .ok()
                .and_then(|i| ids.binary_search(&i).ok())
                .map(|i| i as u64)
                .ok_or_else(|| {
                    let list = match (ids.first(), ids.last()) {
                        (Some(a), Some(b)) if (*b - *a) as usize + 1 == ids.len() => {
                            format!("{a}..={b}")
                        }
                        _ => {
                            let shown: Vec<String> =
                                ids.iter().take(8).map(u32::to_string).collect();
                            format!(
                                "{}{}",
                                shown.join(", "),
                                if ids.len() > 8 { ", ..." } else { "" }
                            )
                        }
                    };
                    format!(
                        "{}: node {id} is not a host of the topology file (its hosts are nodes {list}, by the file's own ids)",
                        self.at()
                    )
                }),
        }
    }

    fn open(
        path: &Path,
        n_hosts: usize,
        ids: Option<Vec<u32>>,
        offset: SimTime,
    ) -> Result<HpccReader, String> {
        let file = open_regular(path)?;
        let mut r = HpccReader {
            path: path.to_path_buf(),
            lines: std::io::BufReader::new(file),
            ln: 0,
            n_hosts,
            ids,
            offset,
            n: 0,
            read: 0,
        };
        let head = r
            .next_line()?
            .ok_or_else(|| format!("{}: empty file", path.display()))?;
        let n: usize = head
            .parse()
            .map_err(|_| format!("{}: expected the flow count, got `{head}`", r.at()))?;
        if n == 0 || n > 10_000_000 {
            return Err(format!(
                "{}: the flow count must be in 1..=10000000",
                r.at()
            ));
        }
        r.n = n;
        Ok(r)
    }

    fn at(&self) -> String {
        format!("{} line {}", self.path.display(), self.ln)
    }

    /// The next line that is not blank, trimmed.
    fn next_line(&mut self) -> Result<Option<String>, String> {
        use std::io::BufRead;
        let mut l = String::new();
        loop {
            l.clear();
            let k = self
                .lines
                .read_line(&mut l)
                .map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
            if k == 0 {
                return Ok(None);
            }
            self.ln += 1;
            let t = l.trim();
            if !t.is_empty() {
                return Ok(Some(t.to_string()));
            }
        }
    }

    /// The next flow; None after the last, once the count has been checked.
    fn next_flow(&mut self) -> Result<Option<FlowSpec>, String> {
        if self.read == self.n {
            // One line past the count is enough to know the count is wrong.
            if self.next_line()?.is_some() {
                return Err(format!(
                    "{}: more than {} flow lines, the first line says {}",
                    self.path.display(),
                    self.n,
                    self.n
                ));
            }
            return Ok(None);
        }
        let Some(l) = self.next_line()? else {
            return Err(format!(
                "{}: {} flow lines, the first line says {}",
                self.path.display(),
                self.read,
                self.n
            ));
        };
        let v: Vec<&str> = l.split_whitespace().collect();
        if v.len() != 6 {
            return Err(format!(
                "{}: expected `src dst pg dport size start_seconds`, got `{l}`",
                self.at()
            ));
        }
        let num = |i: usize, what: &str| -> Result<u64, String> {
            v[i].parse::<u64>().map_err(|_| {
                format!(
                    "{}: {what} `{}` is not a non-negative integer",
                    self.at(),
                    v[i]
                )
            })
        };
        let (src, dst, size) = (num(0, "src")?, num(1, "dst")?, num(4, "size")?);
        num(2, "pg")?;
        num(3, "dport")?;
        let (src, dst) = (self.host(src)?, self.host(dst)?);
        if src == dst {
            return Err(format!("{}: src and dst are the same host", self.at()));
        }
        if size == 0 {
            return Err(format!("{}: size must be positive", self.at()));
        }
        let t = decimal_seconds(v[5])
            .ok_or_else(|| format!("{}: start `{}` is not a time in seconds", self.at(), v[5]))?;
        let offset = self.offset;
        if t < offset {
            return Err(format!(
                "{}: starts at {t}, before start_offset {offset} (HPCC's scripts put flows at 2 s + start; set [workload] start_offset)",
                self.at()
            ));
        }
        let start = t - offset;
        if start > MAX_START {
            let given = format!("`{}` (less start_offset {offset})", v[5]);
            return Err(format!("{}: {}", self.at(), start_beyond(&given)));
        }
        self.read += 1;
        Ok(Some(FlowSpec::new(
            self.read as u32,
            src as u32,
            dst as u32,
            size,
            start,
        )))
    }
}

/// An HPCC flow file read as its flows start (a file in start order; see
/// [`WorkloadConfig::stream`]). A line that no longer parses (the file changed since it was
/// checked) ends the stream and is kept as its error.
#[derive(Debug)]
pub struct HpccStream {
    reader: HpccReader,
    progress: StreamProgress,
}

impl std::fmt::Debug for HpccReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HpccReader({} line {})", self.path.display(), self.ln)
    }
}

impl HpccStream {
    fn open(
        path: &Path,
        n_hosts: usize,
        hosts: &FileHostIds,
        offset: SimTime,
        end: Option<SimTime>,
    ) -> Result<HpccStream, String> {
        Ok(HpccStream {
            reader: HpccReader::open(path, n_hosts, hosts.ids(), offset)?,
            progress: StreamProgress::new(end),
        })
    }

    /// The flows still to come: the file read again from the current flow.
    fn rest(&self) -> Vec<FlowSpec> {
        if self.progress.done {
            return Vec::new();
        }
        let r = &self.reader;
        let again = HpccReader::open(&r.path, r.n_hosts, r.ids.clone(), r.offset).map(|reader| {
            HpccStream {
                reader,
                progress: StreamProgress::new(self.progress.end),
            }
        });
        let Ok(mut again) = again else {
            return Vec::new();
        };
        for _ in 0..r.read {
            if !matches!(again.reader.next_flow(), Ok(Some(_))) {
                return Vec::new();
            }
        }
        again.progress.last = self.progress.last;
        again.collect()
    }
}

impl Iterator for HpccStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        if self.progress.done {
            return None;
        }
        let row = self.reader.next_flow();
        let at = || self.reader.at();
        self.progress.next(row, at)
    }
}

/// Checks HPCC flow file `path` for streaming: every line valid, the count right, starts in
/// increasing order (ids are the line order, so (start, id) increases), every start within
/// the horizon. None if it is not fit (the list reader then reads it, and reports whatever is
/// wrong with it).
fn check_hpcc_stream(
    path: &Path,
    n_hosts: usize,
    hosts: &FileHostIds,
    host_rate: BitRate,
    offset: SimTime,
    end: Option<SimTime>,
) -> Option<StreamCheck> {
    let mut r = HpccReader::open(path, n_hosts, hosts.ids(), offset).ok()?;
    let mut last = SimTime::ZERO;
    let mut c = StreamCheck::default();
    while let Some(f) = r.next_flow().ok()? {
        if f.start < last || beyond_horizon(&f, host_rate).is_some() {
            return None;
        }
        last = f.start;
        if end.is_none_or(|e| f.start < e) {
            c.flows += 1;
            c.bytes = c.bytes.saturating_add(f.size);
        }
    }
    c.file = Some(whole_file(r.lines.get_mut())?);
    Some(c)
}

/// Opens flow file `path`, a regular file, for reading with its bytes hashed.
fn open_regular(path: &Path) -> Result<HashingReader, String> {
    crate::fileid::regular(path)?;
    HashingReader::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Default path base for configs given on stdin or built in.
pub fn no_base() -> PathBuf {
    PathBuf::from(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flow file workload `w` (8 hosts, under `base`) streamed with stop time `stop` gives the
    /// flows its list gives before `stop`, read through `rest()` as well; returns them and the
    /// stream's check.
    fn streams_as_listed(
        w: &WorkloadConfig,
        base: &Path,
        stop: Option<SimTime>,
    ) -> (Vec<FlowSpec>, StreamCheck) {
        let rate = BitRate::from_gbps(10);
        let mut listed = w.generate(8, rate, 1, base).unwrap();
        listed.retain(|f| stop.is_none_or(|s| f.start < s));
        let (mut st, c) = w.stream(8, rate, 1, base, stop).unwrap().unwrap();
        assert_eq!(c.flows, listed.len());
        let head: Vec<FlowSpec> = st.by_ref().take(40).collect();
        let rest = st.rest();
        let tail: Vec<FlowSpec> = st.by_ref().collect();
        assert_eq!(rest, tail, "rest() reads what is still to come");
        assert_eq!([head, tail].concat(), listed);
        assert!(st.error().is_none());
        (listed, c)
    }

    /// A stream of flow file `name` (workload `w`, text `text`) whose second half is replaced by
    /// `garbage` while it is read ends with an error.
    fn a_change_under_the_run_is_an_error(
        w: &WorkloadConfig,
        base: &Path,
        name: &str,
        text: &str,
        garbage: &str,
    ) {
        let (mut st, _) = w
            .stream(8, BitRate::from_gbps(10), 1, base, None)
            .unwrap()
            .unwrap();
        st.next().unwrap();
        let mut broken = text.to_string();
        broken.replace_range(text.len() / 2.., garbage);
        std::fs::write(base.join(name), broken).unwrap();
        let _ = st.by_ref().count();
        assert!(
            st.error().is_some_and(|e| e.contains("changed")),
            "{:?}",
            st.error()
        );
    }

    #[test]
    fn a_sorted_flow_file_streams_as_its_list_and_others_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let w = |name: &str, text: &str| {
            std::fs::write(dir.path().join(name), text).unwrap();
            WorkloadConfig::Csv { file: name.into() }
        };
        let mut text =
            String::from("\u{feff}flow_id,src,dst,size_bytes,start_ns,prio,deadline_ns\n");
        for i in 0..3000u32 {
            // Ties in start time ordered by id; blank lines skipped.
            let line = format!(
                "{},{},{},{},{},{},{}\n",
                i * 2,
                i % 7,
                (i % 7) + 1,
                1000 + i,
                i / 3 * 100,
                i % 3,
                5000
            );
            text.push_str(&line);
            if i % 50 == 0 {
                text.push('\n');
            }
        }
        let sorted = w("sorted.csv", &text);
        let rate = BitRate::from_gbps(10);
        let base = dir.path();
        for stop in [None, Some(SimTime::from_ns(4_000))] {
            let (listed, c) = streams_as_listed(&sorted, base, stop);
            // The first flow of priority at least 2, for a run with 2 queues.
            let first2 = listed.iter().find(|f| f.prio >= Some(2)).unwrap();
            assert_eq!(c.prio_at_least[2], Some((first2.id, 2)));
        }
        // Out of order, with a dependency, with an error: a list (which reports the error).
        let h = "flow_id,src,dst,size_bytes,start_ns\n";
        let unsorted = w("unsorted.csv", &format!("{h}0,0,1,100,50\n1,1,2,100,10\n"));
        assert!(unsorted.stream(8, rate, 1, base, None).unwrap().is_none());
        let dup = w("dup.csv", &format!("{h}3,0,1,100,10\n3,1,2,100,50\n"));
        assert!(dup.stream(8, rate, 1, base, None).unwrap().is_none());
        let dep = w(
            "dep.csv",
            "flow_id,src,dst,size_bytes,start_ns,after\n0,0,1,100,10,\n1,1,2,100,50,0\n",
        );
        assert!(dep.stream(8, rate, 1, base, None).unwrap().is_none());
        let bad = w("bad.csv", &format!("{h}0,0,1,100,10\n1,1,9,100,50\n"));
        assert!(bad.stream(8, rate, 1, base, None).unwrap().is_none());
        assert!(
            bad.generate(8, rate, 1, base)
                .unwrap_err()
                .contains("line 3")
        );
        // A file that changes under a run ends its stream with an error, not silently.
        a_change_under_the_run_is_an_error(&sorted, base, "sorted.csv", &text, "x,y\n");
    }

    #[test]
    fn a_sorted_hpcc_flow_file_streams_as_its_list_and_others_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let w = |name: &str, text: &str| {
            std::fs::write(dir.path().join(name), text).unwrap();
            WorkloadConfig::Hpcc {
                file: name.into(),
                start_offset: SimTime::from_secs_f64(2.0),
                hosts: FileHostIds::default(),
            }
        };
        let mut text = String::from("3000\n");
        for i in 0..3000u32 {
            // Ties in start time (ids are the line order); blank lines skipped.
            let t = format!("2.{:09}", i / 3 * 100);
            text += &format!("{} {} 3 100 {} {t}\n", i % 7, (i % 7) + 1, 1000 + i);
            if i % 50 == 0 {
                text.push('\n');
            }
        }
        let sorted = w("sorted.txt", &text);
        let (rate, base) = (BitRate::from_gbps(10), dir.path());
        assert!(sorted.file_streams(base, 8, BitRate::from_gbps(10)));
        for stop in [None, Some(SimTime::from_ns(4_000))] {
            streams_as_listed(&sorted, base, stop);
        }
        // Out of order, a wrong count, a bad line: a list (which reports the error).
        let unsorted = w("unsorted.txt", "2\n0 1 3 100 100 2.5\n1 2 3 100 100 2.1\n");
        assert!(unsorted.stream(8, rate, 1, base, None).unwrap().is_none());
        assert!(!unsorted.file_streams(base, 8, BitRate::from_gbps(10)));
        assert_eq!(unsorted.generate(8, rate, 1, base).unwrap().len(), 2);
        let short = w("short.txt", "3\n0 1 3 100 100 2.1\n1 2 3 100 100 2.5\n");
        assert!(short.stream(8, rate, 1, base, None).unwrap().is_none());
        let e = short.generate(8, rate, 1, base).unwrap_err();
        assert!(e.contains("2 flow lines, the first line says 3"), "{e}");
        let long = w("long.txt", "1\n0 1 3 100 100 2.1\n1 2 3 100 100 2.5\n");
        let e = long.generate(8, rate, 1, base).unwrap_err();
        assert!(e.contains("more than 1 flow lines"), "{e}");
        let bad = w("bad.txt", "2\n0 1 3 100 100 2.1\n1 9 3 100 100 2.5\n");
        assert!(bad.stream(8, rate, 1, base, None).unwrap().is_none());
        let e = bad.generate(8, rate, 1, base).unwrap_err();
        assert!(
            e.contains("line 3") && e.contains("node 9 is not a host: hosts are 0..8"),
            "{e}"
        );
        // A file that changes under a run ends its stream with an error, not silently.
        a_change_under_the_run_is_an_error(&sorted, base, "sorted.txt", &text, "x y\n");
    }

    #[test]
    fn a_streamed_poisson_workload_is_the_generated_one() {
        let rate = BitRate::from_gbps(100);
        for (interarrival, until, stop) in [
            (Interarrival::Exponential, None, None),
            (Interarrival::Lognormal, Some(SimTime::from_us(300)), None),
            (
                Interarrival::Exponential,
                Some(SimTime::from_us(300)),
                Some(SimTime::from_us(200)),
            ),
            (Interarrival::Exponential, None, Some(SimTime::from_us(100))),
        ] {
            let w = WorkloadConfig::Poisson {
                size_cdf: "web_search".into(),
                load: 0.4,
                flows: 5_000,
                start: SimTime::from_us(3),
                until,
                tag: FlowTag::Background,
                interarrival,
                sigma: Some(2.0),
                on: None,
                off: None,
            };
            let mut listed = w.generate(32, rate, 9, Path::new(".")).unwrap();
            // The run's stop time drops later arrivals from a list (experiment::build_sim).
            listed.retain(|f| stop.is_none_or(|s| f.start < s));
            let (st, c) = w
                .stream(32, rate, 9, Path::new("."), stop)
                .unwrap()
                .unwrap();
            let streamed: Vec<FlowSpec> = st.collect();
            let n = c.flows;
            assert_eq!(n, listed.len());
            assert!(n > 10, "{n} flows");
            assert_eq!(streamed, listed);
        }
        // On/off sources come as a list.
        let w = WorkloadConfig::Poisson {
            size_cdf: "web_search".into(),
            load: 0.4,
            flows: 100,
            start: SimTime::ZERO,
            until: None,
            tag: FlowTag::Flow,
            interarrival: Interarrival::Exponential,
            sigma: None,
            on: Some(SimTime::from_us(10)),
            off: Some(SimTime::from_us(10)),
        };
        assert!(
            w.stream(32, rate, 9, Path::new("."), None)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn poisson_rate_matches_load() {
        let w = WorkloadConfig::Poisson {
            size_cdf: "web_search".into(),
            load: 0.5,
            flows: 20_000,
            start: SimTime::ZERO,
            until: None,
            tag: FlowTag::Flow,
            interarrival: Interarrival::Exponential,
            sigma: None,
            on: None,
            off: None,
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

    #[test]
    fn partition_aggregate_queries_chain_in_closed_loop() {
        let w = WorkloadConfig::PartitionAggregate {
            fan_in: 8,
            queries: 5,
            response_size: Bytes(2_000),
            response_size_max: Bytes(50_000),
            deadline_mean: SimTime::from_ms(20),
            deadline_means: vec![],
            deadline_per_query: false,
            query_rate: None,
            jitter: SimTime::ZERO,
            start: SimTime::from_us(5),
        };
        let v = w
            .generate(16, BitRate::from_gbps(1), 3, Path::new("."))
            .unwrap();
        assert_eq!(v.len(), 40);
        // Query 0 starts on its own; query q waits for group q - 1.
        for f in &v {
            let q = f.group.unwrap();
            assert_eq!(f.after, q.checked_sub(1));
            assert!(f.size >= 2_000 && f.size <= 50_000);
            assert_eq!(f.tag, FlowTag::Query);
            assert!(f.deadline.is_some());
            assert_ne!(f.src, f.dst);
        }
        // All responses of a query go to one aggregator.
        for q in 0..5 {
            let aggs: std::collections::BTreeSet<u32> = v
                .iter()
                .filter(|f| f.group == Some(q))
                .map(|f| f.dst)
                .collect();
            assert_eq!(aggs.len(), 1);
        }
        assert!(
            v[..8]
                .iter()
                .all(|f| f.after.is_none() && f.start == SimTime::from_us(5))
        );
    }

    #[test]
    fn sequential_workflows_alternate_requests_and_responses() {
        let w = WorkloadConfig::Sequential {
            rate: 1000.0,
            workflows: 3,
            requests: 4,
            request_size: Bytes(1_000),
            response_size: Bytes(2_000),
            response_size_max: Bytes(32_000),
            deadline_mean: SimTime::from_ms(20),
            deadline_means: vec![SimTime::from_ms(20), SimTime::from_ms(40)],
            start: SimTime::ZERO,
        };
        let mut v = w
            .generate(16, BitRate::from_gbps(1), 9, Path::new("."))
            .unwrap();
        assert_eq!(v.len(), 3 * 4 * 2);
        v.sort_by_key(|f| f.id);
        for wf in v.chunks(8) {
            let front = wf[0].src;
            for (i, pair) in wf.chunks(2).enumerate() {
                let (req, resp) = (&pair[0], &pair[1]);
                assert_eq!((req.tag, resp.tag), (FlowTag::Request, FlowTag::Workflow));
                assert_eq!((req.src, resp.dst), (front, front));
                assert_eq!(req.dst, resp.src);
                assert_eq!(resp.after, req.group, "a response waits for its request");
                assert!(resp.deadline.is_some() && req.deadline.is_none());
                if i > 0 {
                    assert_eq!(
                        req.after,
                        wf[2 * i - 1].group,
                        "request i+1 waits for response i"
                    );
                }
            }
        }
    }
}
