//! Workloads: what flows exist, between which hosts, of what size, starting when.
//!
//! A workload expands, before the run, into a list of [`FlowSpec`]s sorted by start time, or
//! (Poisson arrivals, flow files in start order) into a stream the run pulls as flows start.
//! Generators:
//!
//! * `poisson`: every host is an independent Poisson source at a target load of its access
//!   link, `mean inter-arrival = mean_size · 8 / (load · host_rate)` (HPCC `traffic_gen`, GPMP
//!   reconstruction §6); sizes from an empirical CDF; destinations uniform over the other hosts. The
//!   superposition is generated directly (total rate × hosts, uniform source), which is the
//!   same process. Optional on/off periods per source.
//! * `incast`: `fan_in` synchronised senders to one receiver, once or in bursts.
//! * `permutation`, `all_to_all`, `all_reduce` (a ring, its steps chained by dependencies).
//! * `partition_aggregate`: queries whose responses share a deadline class (PDTCP reconstruction §5.1),
//!   closed loop or Poisson.
//! * `sequential`: dependent-sequential workflows (PDTCP reconstruction §5.2): each request leaves when
//!   the previous response has arrived (flows with `after` start when their group completes).
//! * `flows`: an inline list, for small examples and tests; `mix`: several of these at once.
//! * Flow files: `csv` (`flow_id,src,dst,size_bytes,start_ns`, optional `prio`,
//!   `deadline_ns`, `after`), `json`, and other simulators' formats (`htsim` connection
//!   matrices, `hpcc` flow files).
//!
//! Files: this one holds the schema ([`WorkloadConfig`], [`FlowSpec`]) and the horizon
//! checks every reader shares; `validate` (checks and what planning asks), `generate`,
//! `stream`, `csv`, `import/` (htsim, HPCC, JSON), `cdf` (size distributions).
//!
//! Not modelled: open-loop traces with dependency graphs beyond groups (a flow waits for one
//! set of flows), closed-loop applications other than the two PDTCP ones.

pub mod cdf;
pub mod collective;
mod csv;
pub mod dag;
mod generate;
mod import;
mod stream;
pub mod training;
mod validate;

use csv::*;
pub use csv::{CsvStream, read_csv};
pub use dag::{Calc, Dag, Join, Pred};
use generate::*;
use import::*;
pub use import::{HpccStream, read_goal, read_hpcc, read_htsim, read_json};
use stream::*;
pub use stream::{FlowStream, PoissonStream, StreamCheck};

use crate::engine::RngStream;
use crate::fileid::{FileIdent, HashingReader};
use crate::units::{BitRate, Bytes, SimTime};
use cdf::Cdf;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A workload expanded: its flows (ordered as [`WorkloadConfig::generate`] orders them),
/// the joins and compute steps they wait for beyond their groups, its collectives and its
/// training iterations.
#[derive(Debug, Default)]
pub struct Graphed {
    pub flows: Vec<FlowSpec>,
    pub dag: Dag,
    pub collectives: Vec<collective::CollectiveInfo>,
    pub training: Option<training::TrainingInfo>,
}

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
    /// Collective communication (all-reduce, all-gather, reduce-scatter, all-to-all,
    /// broadcast) over a set of ranks, as a dependency graph of flows (`collective`).
    Collective(collective::CollectiveConfig),
    /// Training iterations: data, tensor, pipeline and expert parallelism's compute steps and
    /// collectives as one dependency graph (`training`).
    Training(training::TrainingConfig),
    /// A GOAL schedule (LogGOPSim, ATLAHS: per rank `send`, `recv`, `calc` and their
    /// dependencies) as flows, compute steps and joins (`import::goal`).
    Goal {
        /// Path, relative to the config file.
        file: PathBuf,
        /// Host of each rank; default: rank i on host i.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ranks: Option<Vec<u32>>,
        /// When operations that wait for nothing start. Default 0s.
        #[serde(default)]
        start: SimTime,
    },
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
mod tests;
