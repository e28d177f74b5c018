//! Experiment configuration: the TOML schema, its defaults and ranges, scheme bundles, and
//! validation with errors that name the file, the key and what is allowed.
//!
//! Every section and field is optional; omitted fields take the documented defaults. Unknown
//! keys are errors (`deny_unknown_fields`). Quantities carry units in strings ("10Gbps", "1us",
//! "64KiB"). `docs/config.md` lists every field; [`DEFAULT_CONFIG`] is the
//! embedded default experiment run by `dcsim run` without arguments.
//!
//! A **scheme** is a named bundle of end-host and switch choices (transport, congestion
//! control, ECN capability, load balancer), so an experiment compares schemes on identical
//! topology, workload and seeds by listing their names.
//!
//! Files: this one holds [`Config`] (the whole file's schema) and its error type; the
//! sections' schemas and defaults are in `tcp` (window transports, `[am]`, `[flowlet]`), `rdma`
//! (RDMA transports, rate controls, schedulers) and `net` (NIC, routing, failures, priorities,
//! metrics), `run` the kernel's `[run]`; `per_scheme` holds the transport defaults and `[per_scheme.<scheme>]`; `load`
//! reads text and files, `validate` checks, `derived` computes values for planning. The
//! topology, switch and workload sections live with their models (`topology`, `net`,
//! `workload`).

use crate::net::SwitchConfig;
use crate::topology::TopologyConfig;
use crate::units::{BitRate, Bytes, SimTime};
use crate::workload::WorkloadConfig;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

mod derived;
mod load;
mod net;
pub mod plot;
mod rdma;
mod run;
mod tcp;
mod validate;

pub use net::*;
pub use rdma::*;
pub use run::*;
pub use tcp::*;

/// The embedded default experiment: TCP against DCTCP on a 16-host leaf-spine at 10 Gbps,
/// web-search flows at load 0.6.
pub const DEFAULT_CONFIG: &str = include_str!("../../experiments/default.toml");

/// A configuration error: which file, which key, what is wrong or allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub key: String,
    pub msg: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file, self.msg)
        } else {
            write!(f, "{}: `{}`: {}", self.file, self.key, self.msg)
        }
    }
}

impl std::error::Error for ConfigError {}

fn d_name() -> String {
    "experiment".into()
}
fn d_seed() -> u64 {
    1
}
fn d_seeds() -> u32 {
    1
}
fn d_schemes() -> Vec<String> {
    vec!["DCTCP".into()]
}
fn d_out() -> PathBuf {
    PathBuf::from("results")
}

/// One `--set key=value`: the dotted key and its value (TOML if it parses as one, else a
/// string).
pub fn parse_set(set: &str) -> Result<(String, toml::Value), String> {
    let (k, v) = set
        .split_once('=')
        .ok_or_else(|| format!("`{set}`: expected key=value (e.g. workload.load=0.5)"))?;
    let (k, v) = (k.trim(), v.trim());
    if k.is_empty()
        || k.split('.')
            .any(|s| s.is_empty() || s.contains(char::is_whitespace))
    {
        return Err(format!(
            "`{set}`: the key must be dotted names (e.g. switch.buffer.size)"
        ));
    }
    let value = toml::from_str::<toml::Table>(&format!("v = {v}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(v.to_string()));
    Ok((k.to_string(), value))
}

/// The whole experiment file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `--set key=value` overrides applied on the command line, as given (for the manifest).
    #[serde(skip)]
    pub overrides: Vec<String>,
    /// The keys the experiment sets itself (file, `--set`, sweep axes): the others take the
    /// defaults of the transport of each scheme ([`Config::for_scheme`]).
    #[serde(skip)]
    pub explicit: ExplicitKeys,
    /// Experiment name; results go to `<output_dir>/<name>/`. Letters, digits, `-`, `_`, `.`.
    /// Default "experiment".
    #[serde(default = "d_name")]
    pub name: String,
    /// Master seed. Default 1.
    #[serde(default = "d_seed")]
    pub seed: u64,
    /// Runs per scheme with seeds `seed, seed+1, …`, 1..=1000. Default 1.
    #[serde(default = "d_seeds")]
    pub seeds: u32,
    /// Simulated-time limit. Default: none (run until every flow finishes).
    #[serde(default)]
    pub stop_time: Option<SimTime>,
    /// End the run when every flow with this tag has finished ("query", "workflow", ...); flows
    /// that have not started by then are left out of the results. Default: none.
    #[serde(default)]
    pub end_when: Option<crate::workload::FlowTag>,
    /// Schemes to compare, by name (`<bundle>[+<load balancer>]`, see [`crate::scheme`]).
    /// Default ["DCTCP"].
    #[serde(default = "d_schemes")]
    pub schemes: Vec<String>,
    /// Where results go, relative to the working directory. Default "results".
    #[serde(default = "d_out")]
    pub output_dir: PathBuf,
    /// `[run]`: kernel settings (the tie order of same-time events).
    #[serde(default, skip_serializing_if = "RunConfig::is_default")]
    pub run: RunConfig,
    #[serde(default)]
    pub topology: TopologyConfig,
    #[serde(default)]
    pub switch: SwitchConfig,
    #[serde(default)]
    pub packet: PacketConfig,
    #[serde(default)]
    pub tcp: TcpConfig,
    #[serde(default)]
    pub dctcp: DctcpConfig,
    #[serde(default)]
    pub d2tcp: D2tcpConfig,
    #[serde(default)]
    pub pdtcp: PdtcpConfig,
    #[serde(default, skip_serializing_if = "CubicConfig::is_default")]
    pub cubic: CubicConfig,
    #[serde(default)]
    pub pfabric: PfabricConfig,
    #[serde(default)]
    pub am: AmConfig,
    #[serde(default)]
    pub flowlet: FlowletConfig,
    #[serde(default)]
    pub routing: RoutingConfig,
    /// Link and switch failures and degradations, in any order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailureConfig>,
    #[serde(default)]
    pub quirks: QuirksConfig,
    #[serde(default)]
    pub nic: NicConfig,
    #[serde(default)]
    pub hpcc: HpccConfig,
    #[serde(default)]
    pub timely: TimelyConfig,
    #[serde(default)]
    pub dctcp_rdma: DctcpRdmaConfig,
    #[serde(default)]
    pub powertcp: PowerTcpConfig,
    #[serde(default)]
    pub irn: IrnConfig,
    #[serde(default)]
    pub swift: SwiftConfig,
    #[serde(default)]
    pub udp: UdpConfig,
    #[serde(default)]
    pub priorities: PriorityConfig,
    #[serde(default)]
    pub rdma: RdmaConfig,
    #[serde(default)]
    pub gpmp: GpmpConfig,
    #[serde(default)]
    pub srm: SrmConfig,
    #[serde(default)]
    pub mprdma: MpRdmaConfig,
    #[serde(default)]
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// Sawtooth probe (the PDTCP analysis check): sample the switch-to-switch queues.
    #[serde(default)]
    pub probe: Option<crate::probe::ProbeConfig>,
    /// Packet capture into `trace.pcap` of each run (opt-in).
    #[serde(default)]
    pub pcap: Option<crate::pcap::PcapConfig>,
    /// Time series of queues, pauses, links and flows (opt-in).
    #[serde(default)]
    pub timeseries: Option<crate::sim::timeseries::TimeSeriesConfig>,
    /// Parameter sweep: axes expanded into runs.
    #[serde(default)]
    pub sweep: crate::sweep::SweepConfig,
    /// Figures drawn after the runs.
    #[serde(default)]
    pub plot: Vec<crate::config::plot::PlotSpec>,
    /// `[per_scheme.<scheme>]`: end-host and switch keys that differ for one scheme (see
    /// [`Config::for_scheme`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub per_scheme: std::collections::BTreeMap<String, toml::Table>,
}

pub use crate::scheme::{RdmaHostKind, Scheme, TransportKind};

mod per_scheme;
pub use per_scheme::{ExplicitKeys, PER_SCHEME_SECTIONS, TransportDefault};

/// Most runs one experiment may plan.
pub const MAX_RUNS: usize = 1_000_000;

#[cfg(test)]
mod tests;
