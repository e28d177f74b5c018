//! The result types of a run: its plan (scheme, seed, sweep point, resolved config), totals,
//! per-switch records, packet-trace and time-series summaries. `experiment` makes them,
//! `report` writes them; they live here so that output never depends on how runs are made.

use crate::config::{Config, Scheme};
use crate::metrics::{ClassSummary, FlowRecord, PortRecord};
use crate::sim::{Conservation, EndReason};
use serde::Serialize;

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
    /// A partitioned run: what the windowed kernel measured of its own work (for `dcsim
    /// bench`; not an output: it depends on the machine).
    #[serde(skip)]
    pub window: Option<crate::sim::window::WindowStats>,
    /// The workload's collectives (`collectives.csv`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub collectives: Vec<crate::workload::collective::CollectiveResult>,
    /// Training iterations: per iteration, and per rank and iteration (`training.csv`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub iterations: Vec<crate::workload::training::IterationResult>,
    #[serde(skip)]
    pub training: Vec<crate::workload::training::RankIteration>,
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
