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

use crate::net::SwitchConfig;
use crate::topology::TopologyConfig;
use crate::units::{BitRate, Bytes, SimTime};
use crate::workload::WorkloadConfig;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The embedded default experiment: TCP against DCTCP on a 16-host leaf-spine at 10 Gbps,
/// web-search flows at load 0.6.
pub const DEFAULT_CONFIG: &str = include_str!("../experiments/default.toml");

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

/// `[packet]`: packet sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PacketConfig {
    /// Payload bytes per full data packet (TCP MSS), 64B..=9000B. Default 1460B.
    pub mss: Bytes,
    /// Header bytes added to every packet on the wire, data and ACK alike, 20B..=200B.
    /// Default 78B: TCP/IPv4 40 + Ethernet 18 + preamble and inter-frame gap 20.
    pub header: Bytes,
}

impl Default for PacketConfig {
    fn default() -> Self {
        PacketConfig {
            mss: Bytes(1460),
            header: Bytes(78),
        }
    }
}

/// `[tcp]`: TCP parameters shared by the TCP-family schemes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Initial window in segments, 1..=1000. Default 10.
    pub init_cwnd: f64,
    /// Minimum window in segments, 1..=10. Default 1.
    pub min_cwnd: f64,
    /// Minimum retransmission timeout, 1us..=10s. Default 10ms (the DCTCP paper's testbed).
    pub rto_min: SimTime,
    /// Maximum retransmission timeout (backoff cap), >= rto_min. Default 1s.
    pub rto_max: SimTime,
    /// Timeout before the first RTT sample. Default: rto_min.
    pub rto_init: Option<SimTime>,
    /// Factor applied to the timeout at each expiry, 1..=16. Default 2.
    pub rto_backoff: f64,
    /// Duplicate-ACK / SACK threshold for fast retransmit, 1..=1000. Default 3.
    pub dupthresh: u32,
    /// Largest window: "none", "bdp" (the network's largest bandwidth-delay product, as
    /// `[rdma] window`) or a size; in segments of `mss` payload bytes, at least one. Default
    /// "none".
    pub max_window: WindowSpec,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            init_cwnd: 10.0,
            min_cwnd: 1.0,
            rto_min: SimTime::from_ms(10),
            rto_max: SimTime::from_ms(1000),
            rto_init: None,
            rto_backoff: 2.0,
            dupthresh: 3,
            max_window: WindowSpec::None,
        }
    }
}

/// `[dctcp]`: DCTCP parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpConfig {
    /// Gain of the alpha estimator, (0, 1]. Default 1/16.
    pub g: f64,
    /// Initial alpha, [0, 1]. Default 1.0 (RFC 8257, Linux, ns-3).
    pub init_alpha: f64,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            init_alpha: 1.0,
        }
    }
}

/// `[d2tcp]`: D2TCP (gain and initial alpha come from `[dctcp]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct D2tcpConfig {
    /// Exponent after a missed deadline, [0.5, 2]. Default 0.5 (FujiZ ns-3; Linux uses 1).
    pub missed_d: f64,
}

impl Default for D2tcpConfig {
    fn default() -> Self {
        D2tcpConfig { missed_d: 0.5 }
    }
}

/// `[pdtcp]`: PDTCP (gain and initial alpha come from `[dctcp]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PdtcpConfig {
    /// Priority form: "rd_over_ra" (default, the reconstruction), "tc_over_d" (D2TCP's),
    /// "rd_over_chost".
    pub policy: crate::transport::cc::pdtcp::ExponentPolicy,
    /// Sticky early flip to p = 0.5 once the deadline is missed or out of reach. Default true.
    pub flip: bool,
    /// Pin the exponent to this value, [0.5, 2] (the analysis check). Default: none.
    pub fixed_p: Option<f64>,
}

impl Default for PdtcpConfig {
    fn default() -> Self {
        PdtcpConfig {
            policy: crate::transport::cc::pdtcp::ExponentPolicy::RdOverRa,
            flip: true,
            fixed_p: None,
        }
    }
}

/// `[pfabric]`: pFabric's end host (Alizadeh et al., SIGCOMM 2013, from its published
/// description; the switch side is the `pfabric` scheduler with priority dropping).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct PfabricConfig {
    /// Initial window in segments, 1..=10000. Default: one bandwidth-delay product of the
    /// longest host-to-host path, in full packets, rounded up ("flows start at line rate").
    pub init_cwnd: Option<f64>,
    /// Largest window in segments, >= init_cwnd. Default: none (TCP's window growth).
    pub max_cwnd: Option<f64>,
    /// Retransmission timeout, fixed (no backoff), 1us..=10s. Default: three unloaded round
    /// trips of the longest path (the paper: about 3 RTTs).
    pub rto: Option<SimTime>,
    /// Switch buffer per egress port (static), >= one packet. Default: two bandwidth-delay
    /// products of the longest path at the host rate (the paper's small buffers, 2 x BDP).
    pub buffer: Option<Bytes>,
}

/// `[am]`: PDTCP's adaptive multipath at switches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct AmConfig {
    /// Congestion threshold T_am (an egress queue at or above it is congested). Default: the
    /// ECN step threshold K of `[switch] ecn` (PDTCP reconstruction §10 item 6), else 30KB.
    pub threshold: Option<Bytes>,
}

/// `[flowlet]`: flowlet switching at switches (the `flowlet` load balancer, `+LetFlow`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlowletConfig {
    /// Inactivity gap that ends a flowlet, 1us..=1s. Default 500us (CONGA's flowlet timeout,
    /// LetFlow's hardware setting).
    pub gap: SimTime,
    /// Flowlet-table entries per switch, a power of two in 1..=1048576 (flows whose hashes
    /// collide share an entry). Default 4096.
    pub table: u32,
}

impl Default for FlowletConfig {
    fn default() -> Self {
        FlowletConfig {
            gap: SimTime::from_us(500),
            table: 4096,
        }
    }
}

/// `[quirks]`: behaviours of other simulators, emulated for validation only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct QuirksConfig {
    /// Floor every serialization time (links, PFC frames) and RDMA pacing gap to whole
    /// nanoseconds, as the HPCC ns-3 simulator does (its links then run up to 1 % fast).
    /// Default false.
    pub ns_floor: bool,
    /// Record HPCC's in-band telemetry in the HPCC ns-3 simulator's units (time in whole
    /// nanoseconds, transmitted bytes in 512 B units, queue in 320 B units). Default false.
    pub int_units: bool,
}

/// When an RDMA queue pair's rate changes, what happens to the send it already scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PacingMode {
    /// The gap is recomputed at the current rate when it ends (a cut postpones the send).
    #[default]
    Repace,
    /// The send time computed at the last send stands (the HPCC ns-3 simulator, real NICs);
    /// HPCC still moves it, as the reference's ChangeRate does.
    AtSend,
}

/// How a host NIC picks among its ready flows (queue pairs) of one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum NicOrder {
    /// Round robin in the order flows became ready (a flow that sent goes to the back).
    #[default]
    Ready,
    /// Round robin by flow index after the last one served (the HPCC ns-3 simulator's NIC).
    Index,
}

/// `[nic]`: the host NIC's scheduling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// "ready" (default) or "index".
    pub order: NicOrder,
    /// What sits between a host's flows and its NIC: "fq" (default: per-flow round robin,
    /// one packet at a time; a flow's packets are made when the NIC takes them, so nothing
    /// queues in the host: Linux's fq with TCP small queues at its tightest) or "fifo" (one
    /// FIFO per NIC class that flows fill as soon as their windows open: pfifo_fast).
    pub qdisc: Qdisc,
    /// With "fifo": the bytes a flow may have in the host queue before it waits (TCP small
    /// queues), "none" (default) or a size of at least one packet. Linux's
    /// tcp_limit_output_bytes is 1 MiB, usually lowered to about 1 ms of the pacing rate.
    pub tsq: WindowSpec,
}

/// The host queueing discipline in front of the NIC (`[nic] qdisc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Qdisc {
    #[default]
    Fq,
    Fifo,
}

/// `[routing]`: routing beyond shortest-path load balancing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// A file pinning the paths of some flows (`net::pin`: `flow_id,direction,nodes`),
    /// relative to the config. Default: none.
    pub pin: Option<PathBuf>,
    /// After a link or switch goes down or comes back (`[[failures]]`), routes are
    /// recomputed this much later; until then switches keep forwarding into a failed link
    /// (those packets are dropped). 0us..=10s. Default 0us.
    pub convergence: SimTime,
}

/// What a `[[failures]]` entry does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailAction {
    Down,
    Up,
    /// The link runs at `rate` from then on.
    Rate,
}

/// `[[failures]]`: a link or a switch goes down, comes back up, or (a link) changes rate, at
/// a given time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureConfig {
    pub at: SimTime,
    pub action: FailAction,
    /// The link between these two nodes (both directions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<[u32; 2]>,
    /// Which of several parallel links between them (0-based, in topology order); default:
    /// all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<u32>,
    /// Every link of this switch (node id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch: Option<u32>,
    /// The new rate (action "rate").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<BitRate>,
}

impl FailureConfig {
    /// The topology's link indices this entry touches.
    pub fn links(
        &self,
        t: &crate::topology::TopoSpec,
        map: &crate::topology::NodeMap,
    ) -> Result<Vec<usize>, String> {
        let n_nodes = (t.n_hosts + t.switches.len()) as u32;
        // By the topology file's own ids where it is renumbered (`[topology] node_ids`).
        let by_file = if map.translates() {
            " (by the topology file's ids)"
        } else {
            ""
        };
        match (self.link, self.switch) {
            (Some([fa, fb]), None) => {
                let (a, b) = (map.dcsim(fa)?, map.dcsim(fb)?);
                if a >= n_nodes || b >= n_nodes {
                    return Err(format!("link [{a}, {b}]: node ids must be below {n_nodes}"));
                }
                let all: Vec<usize> = t
                    .links
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| (l.a.0, l.b.0) == (a, b) || (l.a.0, l.b.0) == (b, a))
                    .map(|(i, _)| i)
                    .collect();
                if all.is_empty() {
                    return Err(format!(
                        "there is no link between nodes {fa} and {fb}{by_file}"
                    ));
                }
                match self.parallel {
                    None => Ok(all),
                    Some(k) => all.get(k as usize).map(|&i| vec![i]).ok_or_else(|| {
                        format!(
                            "parallel = {k}: nodes {fa} and {fb} have {} link(s)",
                            all.len()
                        )
                    }),
                }
            }
            (None, Some(fs)) => {
                let s = map.dcsim(fs)?;
                if (s as usize) < t.n_hosts || s >= n_nodes {
                    return Err(if map.translates() {
                        format!("switch {fs}: node {fs} of the topology file is a host")
                    } else {
                        format!("switch {s}: switches are nodes {}..{n_nodes}", t.n_hosts)
                    });
                }
                if self.parallel.is_some() {
                    return Err("`parallel` applies to a link, not a switch".into());
                }
                Ok(t.links
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.a.0 == s || l.b.0 == s)
                    .map(|(i, _)| i)
                    .collect())
            }
            _ => Err("give either `link = [a, b]` or `switch = id`".into()),
        }
    }
}

/// `[udp]`: the constant-rate UDP transport.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct UdpConfig {
    /// Sending rate; default: the host link rate.
    pub rate: Option<BitRate>,
}

/// `[priorities]`: which queue data and ACKs use (0 is the highest priority).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct PriorityConfig {
    /// Queue of data packets, 0..queues. Default 0.
    pub data: u8,
    /// Queue of ACKs, 0..queues. Default 0.
    pub ack: u8,
}

fn d_classes() -> Vec<Bytes> {
    vec![Bytes(100_000), Bytes(1_000_000), Bytes(10_000_000)]
}

/// `[metrics]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Boundaries of the flow-size classes, increasing. Default ["100KB", "1MB", "10MB"].
    pub size_classes: Vec<Bytes>,
    /// Extra cumulative classes: for each size `b`, a class `<b` of every flow smaller than
    /// `b` (overlapping the size classes). Default none.
    pub below: Vec<Bytes>,
    /// Split every flow's FCT into where it went (`sim::attrib`): the `attr_*` columns of
    /// `fct.csv` and `summary.csv`. Default true.
    pub attribution: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            size_classes: d_classes(),
            below: Vec::new(),
            attribution: true,
        }
    }
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
    pub plot: Vec<crate::plot::spec::PlotSpec>,
    /// `[per_scheme.<scheme>]`: end-host and switch keys that differ for one scheme (see
    /// [`Config::for_scheme`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub per_scheme: std::collections::BTreeMap<String, toml::Table>,
}

/// DCQCN parameter profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnProfile {
    /// HPCC `run.py` "dcqcn": t_alpha 1 us, t_dec 4 us, t_inc 300 us.
    #[default]
    Dcqcn,
    /// HPCC `run.py` "dcqcn_paper": t_alpha 50 us, t_dec 50 us, t_inc 55 us.
    DcqcnPaper,
    /// No rate control: queue pairs send at line rate.
    Off,
}

/// A queue pair's window (`[rdma] window`): `"none"` (purely rate based), `"bdp"` (the largest
/// bandwidth-delay product of the network, as the HPCC ns-3 simulator's `HAS_WIN`) or a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WindowSpec {
    #[default]
    None,
    Bdp,
    Bytes(Bytes),
}

impl Serialize for WindowSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WindowSpec::None => s.serialize_str("none"),
            WindowSpec::Bdp => s.serialize_str("bdp"),
            WindowSpec::Bytes(b) => b.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for WindowSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let t = String::deserialize(d)?;
        match t.as_str() {
            "none" => Ok(WindowSpec::None),
            "bdp" => Ok(WindowSpec::Bdp),
            _ => t.parse::<Bytes>().map(WindowSpec::Bytes).map_err(|e| {
                serde::de::Error::custom(format!("`{t}`: \"none\", \"bdp\" or a size ({e})"))
            }),
        }
    }
}

/// `[hpcc]`: HPCC (scheme `HPCC`). Defaults: HPCC ns-3 `run.py` at the host link rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// Target utilisation η, (0, 1]. Default 0.95.
    pub eta: f64,
    /// Additive increase W_AI as a rate. Default: host rate / 2500 (40Mbps at 100 Gbps).
    pub rate_ai: Option<BitRate>,
    /// Additive stages before a multiplicative one, 0..=1000. Default 0 (run.py).
    pub mi_thresh: u32,
    /// React to every acknowledgement. Default true.
    pub fast_react: bool,
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            eta: 0.95,
            rate_ai: None,
            mi_thresh: 0,
            fast_react: true,
        }
    }
}

/// `[powertcp]`: PowerTCP (scheme `PowerTCP`). Defaults: the PowerTCP paper's γ = 0.9; the
/// additive increase of HPCC (so that the two compare on equal terms) (a reconstruction).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PowerTcpConfig {
    /// EWMA weight γ of the window update, (0, 1]. Default 0.9.
    pub gamma: f64,
    /// Additive increase β as a rate (β = rate_ai × base RTT in bytes). Default: host rate /
    /// 2500 (40Mbps at 100 Gbps, HPCC's W_AI).
    pub rate_ai: Option<BitRate>,
}

impl Default for PowerTcpConfig {
    fn default() -> Self {
        PowerTcpConfig {
            gamma: 0.9,
            rate_ai: None,
        }
    }
}

/// `[timely]`: TIMELY (scheme `TIMELY`). Defaults: the HPCC ns-3 simulator's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyConfig {
    /// EWMA weight of a new RTT difference, (0, 1]. Default 0.875.
    pub alpha: f64,
    /// Multiplicative decrease factor, (0, 1]. Default 0.8.
    pub beta: f64,
    /// Below this RTT: increase. Default 50us.
    pub t_low: SimTime,
    /// Above this RTT: decrease. Default 500us.
    pub t_high: SimTime,
    /// The gradient's normaliser. Default 20us.
    pub min_rtt: SimTime,
    /// Additive increase. Default: host rate / 1000 (100Mbps at 100 Gbps).
    pub rate_ai: Option<BitRate>,
    /// Hyper-active increase. Default: host rate / 200 (500Mbps at 100 Gbps).
    pub rate_hai: Option<BitRate>,
}

impl Default for TimelyConfig {
    fn default() -> Self {
        TimelyConfig {
            alpha: 0.875,
            beta: 0.8,
            t_low: SimTime::from_us(50),
            t_high: SimTime::from_us(500),
            min_rtt: SimTime::from_us(20),
            rate_ai: None,
            rate_hai: None,
        }
    }
}

/// `[swift]`: Swift (scheme `Swift`), a reconstruction from the paper.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwiftConfig {
    /// Additive increase per RTT in packets, (0, 100]. Default 1.
    pub ai: f64,
    /// Multiplicative decrease factor, (0, 1]. Default 0.8.
    pub beta: f64,
    /// Largest decrease at once, (0, 1). Default 0.5.
    pub max_mdf: f64,
    /// Target delay. Default: 1.5 × the unloaded RTT of the longest path.
    pub base_target: Option<SimTime>,
    /// Flow scaling's largest addition to the target. Default 0 (off).
    pub fs_range: SimTime,
    /// Windows (packets) at which flow scaling adds `fs_range` and nothing. Default 0.1, 100.
    pub fs_min_cwnd: f64,
    pub fs_max_cwnd: f64,
}

impl Default for SwiftConfig {
    fn default() -> Self {
        SwiftConfig {
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            base_target: None,
            fs_range: SimTime::ZERO,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
        }
    }
}

/// `[dctcp_rdma]`: rate-based DCTCP on RDMA queue pairs (scheme `DCTCP-RDMA`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpRdmaConfig {
    /// Alpha gain, (0, 1]. Default 0.0625.
    pub g: f64,
    /// Additive increase per batch. Default: host rate × 0.00615 (615Mbps at 100 Gbps).
    pub rate_ai: Option<BitRate>,
}

impl Default for DctcpRdmaConfig {
    fn default() -> Self {
        DctcpRdmaConfig {
            g: 0.0625,
            rate_ai: None,
        }
    }
}

/// `[irn]`: IRN loss recovery (scheme `IRN`, or `[rdma] recovery = "irn"`). Defaults: the
/// IRN paper (SIGCOMM 2018, 40 Gbps): RTO_low 100 us for N = 3 packets in flight or fewer,
/// RTO_high 320 us, BDP cap one bandwidth-delay product.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IrnConfig {
    /// Timeout with at most `low_pkts` packets in flight, > 0. Default 100us.
    pub rto_low: SimTime,
    /// Timeout otherwise, >= rto_low. Default 320us.
    pub rto_high: SimTime,
    /// N, 0..=1000000. Default 3.
    pub low_pkts: u64,
    /// BDP-FC: bytes of PSNs in flight per queue pair, rounded up to whole packets: "bdp"
    /// (default: the network's largest bandwidth-delay product, as `[rdma] window = "bdp"`)
    /// or a size (at least one packet).
    pub bdp_cap: WindowSpec,
}

impl Default for IrnConfig {
    fn default() -> Self {
        IrnConfig {
            rto_low: SimTime::from_us(100),
            rto_high: SimTime::from_us(320),
            low_pkts: 3,
            bdp_cap: WindowSpec::Bdp,
        }
    }
}

/// Loss recovery of RDMA queue pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossRecovery {
    /// Go-back-N on a NACK or timeout (RoCEv2 NICs, the HPCC ns-3 simulator).
    GoBackN,
    /// IRN's selective repeat with a BDP cap and two timeouts (`[irn]`).
    Irn,
}

/// `[rdma]`: the RoCEv2 transport (GPMP reconstruction §3 and §5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RdmaConfig {
    /// DCQCN profile: "dcqcn" (default), "dcqcn_paper" or "off". Rates scale with the host
    /// link rate as in HPCC: R_AI = 5·bw/25 Mb/s, R_HAI = 50·bw/25 Mb/s (bw in Gb/s).
    pub dcqcn: DcqcnProfile,
    /// Override of the profile's g, (0, 1].
    pub g: Option<f64>,
    /// Override of the minimum rate. Profile: 1Gbps.
    pub min_rate: Option<BitRate>,
    /// Override of the fast-recovery stages F, 0..=100. Profile: 1.
    pub stages: Option<u32>,
    /// Minimum gap between NACKs for the same expected PSN. Default 500us (HPCC).
    pub nack_interval: SimTime,
    /// Retransmission timeout (go back to the oldest unacknowledged PSN), for lossy runs.
    /// Default: none (HPCC's lossless model relies on NACKs alone; with PFC a long pause is
    /// not a loss). Set it (e.g. "1ms") when the fabric can drop.
    pub rto: Option<SimTime>,
    /// Bytes in flight per queue pair. Default: "bdp" for HPCC, PowerTCP and DCTCP-RDMA, "none"
    /// otherwise (the HPCC ns-3 presets' `HAS_WIN`).
    pub window: Option<WindowSpec>,
    /// Scale the window by rate / line rate (`VAR_WIN`). Default: with the window.
    pub var_win: Option<bool>,
    /// Wire bytes of an ACK or NACK. Default: the packet header (`[packet] header`).
    pub ack_size: Option<Bytes>,
    /// What a rate change does to an already scheduled send: "repace" (default) or
    /// "at_send" (the reference's).
    pub pacing: PacingMode,
    /// Loss recovery of reliable-connection queue pairs: "go_back_n" or "irn". Default:
    /// "irn" for scheme IRN, "go_back_n" otherwise (MP-RDMA has its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<LossRecovery>,
}

impl Default for RdmaConfig {
    fn default() -> Self {
        RdmaConfig {
            dcqcn: DcqcnProfile::Dcqcn,
            g: None,
            min_rate: None,
            stages: None,
            nack_interval: SimTime::from_us(500),
            rto: None,
            window: None,
            var_win: None,
            ack_size: None,
            pacing: PacingMode::Repace,
            recovery: None,
        }
    }
}

/// `[gpmp]`: GPMP and the classification shared by the priority-aware RDMA schemes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GpmpConfig {
    /// Messages smaller than this are short (high priority). Default 50KB (GPMP summary).
    pub short_threshold: Bytes,
    /// Alternative form: transmission time at the host line rate (t = m/b); when set it
    /// replaces `short_threshold` (40us at 10 Gbps = 50KB).
    pub short_threshold_time: Option<SimTime>,
    /// Low-priority queue pairs per host pair, 0..=64; 0 = the number of uplinks of the source
    /// leaf (4 in the 4-spine leaf-spine). Default 0.
    pub paths: u32,
    /// Slice size S of long messages. Default 16KB [GPMP reconstruction §2.4].
    pub slice: Bytes,
    /// Outstanding-bytes limit L per low-priority queue pair. Default: one bandwidth-delay
    /// product of the longest host-to-host path (host line rate × the unloaded round trip of
    /// one full packet and its ACK), at least one slice: 16 KB in the paper's 10 Gbps
    /// leaf-spine [reconstruction; see [`Config::gpmp_limit`]].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Bytes>,
    /// Minimum bandwidth guaranteed to each data queue at switches. Default 1Gbps.
    pub min_bw: BitRate,
    /// Dynamic-threshold alpha of the high (short-message) priority. Default 1.0
    /// [GPMP reconstruction §2.8].
    pub alpha_high: f64,
    /// Dynamic-threshold alpha of the low (long-message) priority. Default 0.125.
    pub alpha_low: f64,
}

impl Default for GpmpConfig {
    fn default() -> Self {
        GpmpConfig {
            short_threshold: Bytes(50_000),
            short_threshold_time: None,
            paths: 0,
            slice: Bytes(16_000),
            limit: None,
            min_bw: BitRate::from_gbps(1),
            alpha_high: 1.0,
            alpha_low: 0.125,
        }
    }
}

/// `[srm]`: the SRM-like proxy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SrmConfig {
    /// Chunk size of long messages. Default 64KB [proxy, GPMP reconstruction §4.3].
    pub chunk: Bytes,
}

impl Default for SrmConfig {
    fn default() -> Self {
        SrmConfig {
            chunk: Bytes(64_000),
        }
    }
}

/// `[mprdma]`: MP-RDMA (GPMP reconstruction §4.2, §9 item 14).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MpRdmaConfig {
    /// Out-of-order tolerance Δ in packets, 1..=1024. Default 32.
    pub delta: u64,
    /// Receiver bitmap length L in packets, 1..=64. Default 64.
    pub bitmap: u64,
    /// Probability of probing a new path per packet, [0, 1]. Default 0.01.
    pub probe: f64,
    /// Initial window in packets, 1..=1000. Default 16 [our choice: about one BDP at 10 Gbps].
    pub init_cwnd: f64,
    /// Base RTT for probe spacing. Default 10us.
    pub base_rtt: SimTime,
}

impl Default for MpRdmaConfig {
    fn default() -> Self {
        MpRdmaConfig {
            delta: 32,
            bitmap: 64,
            probe: 0.01,
            init_cwnd: 16.0,
            base_rtt: SimTime::from_us(10),
        }
    }
}

pub use crate::scheme::{RdmaHostKind, Scheme, TransportKind};

mod per_scheme;
pub use per_scheme::{ExplicitKeys, PER_SCHEME_SECTIONS, TransportDefault};

/// Inserts the default `kind` into `[topology]`, `[workload]` and `[[workload.parts]]` tables
/// that do not set one (`leaf_spine`, `poisson`), so that every key is optional and an error
/// elsewhere in the table is reported as itself. Returns the text and the (1-based, patched)
/// numbers of the inserted lines.
fn default_kinds(text: &str) -> (String, Vec<usize>) {
    let lines: Vec<&str> = text.lines().collect();
    let header = |l: &str| {
        let t = l.split('#').next().unwrap_or("").trim();
        t.starts_with('[').then(|| t.to_string())
    };
    let mut out = String::with_capacity(text.len() + 64);
    let mut inserted = Vec::new();
    let mut n_out = 0;
    for (i, l) in lines.iter().enumerate() {
        out.push_str(l);
        out.push('\n');
        n_out += 1;
        let default = match header(l).as_deref() {
            Some("[topology]") => "leaf_spine",
            Some("[workload]") | Some("[[workload.parts]]") => "poisson",
            _ => continue,
        };
        let has_kind = lines[i + 1..]
            .iter()
            .take_while(|m| header(m).is_none())
            .any(|m| {
                let t = m.trim_start();
                t.strip_prefix("kind")
                    .is_some_and(|r| r.trim_start().starts_with('='))
            });
        if !has_kind {
            out.push_str(&format!("kind = \"{default}\"\n"));
            n_out += 1;
            inserted.push(n_out);
        }
    }
    (out, inserted)
}

/// A `[workload]` of kind `mix` is read as one tagged value, so an error inside one of its
/// `[[workload.parts]]` points at `[workload]`'s header. When `line` is that header, the
/// header line of the first part that does not read on its own (None: not that case, or the
/// parts are written inline).
fn part_header_line(text: &str, line: usize) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let bare = |l: &str| l.split('#').next().unwrap_or("").trim().to_string();
    if bare(lines.get(line.checked_sub(1)?)?) != "[workload]" {
        return None;
    }
    let table: toml::Table = toml::from_str(text).ok()?;
    let parts = table.get("workload")?.get("parts")?.as_array()?;
    let bad = parts.iter().position(|p| {
        let mut p = p.clone();
        if let Some(t) = p.as_table_mut() {
            t.entry("kind")
                .or_insert_with(|| toml::Value::String("poisson".into()));
        }
        crate::workload::WorkloadConfig::deserialize(p).is_err()
    })?;
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| bare(l) == "[[workload.parts]]")
        .nth(bad)
        .map(|(i, _)| i + 1)
}

/// When a parse error points at a table's header line, the line within that table the error
/// is about: the key an "unknown field" names, or the value an "invalid type/value" quotes.
fn refine_line(text: &str, line: usize, msg: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    if !lines
        .get(line.wrapping_sub(1))
        .is_some_and(|l| l.trim_start().starts_with('['))
    {
        return line;
    }
    let between = |m: &str, a: &str, b: &str| -> Option<String> {
        let i = m.find(a)? + a.len();
        let j = m[i..].find(b)? + i;
        Some(m[i..j].to_string())
    };
    let matches: Box<dyn Fn(&str) -> bool> = if let Some(key) = between(msg, "unknown field `", "`")
    {
        Box::new(move |l: &str| {
            l.split(['{', ',']).any(|part| {
                part.trim_start()
                    .strip_prefix(key.as_str())
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
        })
    } else if let Some(v) =
        between(msg, "string \"", "\"").or_else(|| between(msg, "unknown variant `", "`"))
    {
        let q = format!("\"{v}\"");
        Box::new(move |l: &str| l.contains(&q))
    } else if let Some(v) =
        between(msg, "integer `", "`").or_else(|| between(msg, "floating point `", "`"))
    {
        Box::new(move |l: &str| {
            l.split('=')
                .skip(1)
                .any(|r| r.trim_start().starts_with(v.as_str()))
        })
    } else {
        return line;
    };
    for (i, l) in lines.iter().enumerate().skip(line) {
        if l.trim_start().starts_with('[') {
            break;
        }
        if matches(l) {
            return i + 1;
        }
    }
    line
}

/// Most runs one experiment may plan.
pub const MAX_RUNS: usize = 1_000_000;

impl Config {
    /// Parses TOML text; `file` names the source in errors.
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let mut c = Self::parse_raw(text, file)?;
        for (i, a) in c.sweep.axes.iter_mut().enumerate() {
            a.expand().map_err(|msg| ConfigError {
                file: file.to_string(),
                key: format!("sweep.axes[{i}].range"),
                msg,
            })?;
        }
        Ok(c)
    }

    fn parse_raw(text: &str, file: &str) -> Result<Config, ConfigError> {
        let (patched, inserted) = default_kinds(text);
        let mut c = toml::from_str::<Config>(&patched).map_err(|e| {
            let msg = e.message().to_string();
            let loc = e
                .span()
                .map(|s| {
                    let line = patched[..s.start.min(patched.len())].matches('\n').count() + 1;
                    // Back to the user's numbering, then from a table header to the line the
                    // error is about (tagged tables report their header).
                    let line = line - inserted.iter().filter(|&&l| l < line).count();
                    let line = part_header_line(text, line).unwrap_or(line);
                    format!("line {}: ", refine_line(text, line, &msg))
                })
                .unwrap_or_default();
            ConfigError {
                file: file.to_string(),
                key: String::new(),
                msg: format!("{loc}{msg}"),
            }
        })?;
        if let Ok(t) = toml::from_str::<toml::Table>(text) {
            c.explicit = ExplicitKeys::of(&t);
        }
        Ok(c)
    }

    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let text = crate::fileid::read_to_string(path).map_err(|msg| ConfigError {
            file: file.clone(),
            key: String::new(),
            msg,
        })?;
        let c = Config::parse(&text, &file)?;
        c.validate(&file, &Config::base_dir(path))?;
        Ok(c)
    }

    /// Loads `path` (None: the embedded default experiment) with `--set key=value` overrides
    /// applied before validation. Keys are dotted, as sweep axes' (`workload.load`,
    /// `switch.buffer.size`, `workload.parts.0.fan_in`); a value is read as TOML (`0.5`,
    /// `true`, `["DCTCP"]`) and otherwise as a string (`100Gbps`).
    pub fn load_with(path: Option<&Path>, sets: &[String]) -> Result<Config, ConfigError> {
        let (file, text, base) = match path {
            Some(p) => {
                let file = p.display().to_string();
                let text = crate::fileid::read_to_string(p).map_err(|msg| ConfigError {
                    file: file.clone(),
                    key: String::new(),
                    msg,
                })?;
                (file, text, Config::base_dir(p))
            }
            None => (
                "<embedded default>".to_string(),
                DEFAULT_CONFIG.to_string(),
                PathBuf::from("."),
            ),
        };
        if sets.is_empty() {
            let c = Config::parse(&text, &file)?;
            c.validate(&file, &base)?;
            return Ok(c);
        }
        // The file must stand on its own first, so that its errors keep their line numbers.
        Config::parse(&text, &file)?;
        let (patched, _) = default_kinds(&text);
        let mut table: toml::Table = toml::from_str(&patched).map_err(|e| ConfigError {
            file: file.clone(),
            key: String::new(),
            msg: e.message().to_string(),
        })?;
        let mut keys = Vec::new();
        for set in sets {
            let (k, v) = parse_set(set).map_err(|msg| ConfigError {
                file: file.clone(),
                key: "--set".into(),
                msg,
            })?;
            crate::sweep::set_key(&mut table, &k, v).map_err(|msg| ConfigError {
                file: file.clone(),
                key: k.clone(),
                msg: format!("{msg} (--set {set})"),
            })?;
            keys.push(k);
        }
        let with = format!("with --set {}", sets.join(", --set "));
        let named = |e: ConfigError| {
            // The generated text's line numbers mean nothing to the user: name the overrides.
            let msg = match e.msg.strip_prefix("line ") {
                Some(r) => r.split_once(": ").map_or(r, |(_, m)| m).to_string(),
                None => e.msg,
            };
            ConfigError {
                msg: format!("{msg} ({with})"),
                ..e
            }
        };
        let generated = toml::to_string(&table).map_err(|e| ConfigError {
            file: file.clone(),
            key: String::new(),
            msg: e.to_string(),
        })?;
        let mut c = Config::parse(&generated, &file).map_err(named)?;
        c.validate(&file, &base).map_err(named)?;
        c.overrides = sets.to_vec();
        Ok(c)
    }

    /// Directory against which relative paths in a config resolve.
    pub fn base_dir(path: &Path) -> PathBuf {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// The embedded default experiment.
    pub fn default_experiment() -> Config {
        let c = Config::parse(DEFAULT_CONFIG, "<embedded default>")
            .expect("the embedded default config parses");
        c.validate("<embedded default>", Path::new("."))
            .expect("the embedded default config is valid");
        c
    }

    /// Checks every range and cross-field constraint, for each scheme on the config it runs
    /// with ([`Config::for_scheme`]: its transport's defaults and `[per_scheme]`).
    pub fn validate(&self, file: &str, base: &Path) -> Result<(), ConfigError> {
        if self.schemes.iter().any(|s| Scheme::builtin(s).is_none()) || self.schemes.is_empty() {
            // Names the bad scheme (or the empty list) with the usual message.
            return self.validate_for(file, base, &self.schemes);
        }
        self.check_per_scheme(file)?;
        // The transport defaults read the host rate, which a topology file gives.
        self.topology
            .load_file(base)
            .map_err(|(k, m)| ConfigError {
                file: file.to_string(),
                key: format!("topology.{k}"),
                msg: m,
            })?;
        // Schemes whose configs come out equal are checked together, once.
        let mut groups: Vec<(Config, Vec<String>)> = Vec::new();
        for name in &self.schemes {
            let scheme = Scheme::builtin(name).expect("checked above");
            let c = self.for_scheme(name, &scheme, file)?;
            match groups.iter_mut().find(|(g, _)| *g == c) {
                Some((_, names)) => names.push(name.clone()),
                None => groups.push((c, vec![name.clone()])),
            }
        }
        let mut plain = self.clone();
        plain.per_scheme.clear();
        for (c, names) in &groups {
            c.validate_for(file, base, names).map_err(|e| {
                if *c == plain {
                    e
                } else {
                    ConfigError {
                        msg: format!(
                            "{} (scheme {}, with its transport's defaults{})",
                            e.msg,
                            names.join(", "),
                            if names.iter().any(|n| self.per_scheme.contains_key(n)) {
                                " and [per_scheme]"
                            } else {
                                ""
                            }
                        ),
                        ..e
                    }
                }
            })?;
        }
        Ok(())
    }

    /// [`Config::validate`] of this config as it stands, the per-scheme checks for `schemes`.
    fn validate_for(&self, file: &str, base: &Path, schemes: &[String]) -> Result<(), ConfigError> {
        let err = |key: &str, msg: String| ConfigError {
            file: file.to_string(),
            key: key.to_string(),
            msg,
        };
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            || self.name.starts_with('.')
        {
            return Err(err(
                "name",
                format!(
                    "`{}`: use letters, digits, `-`, `_` and `.` (not first)",
                    self.name
                ),
            ));
        }
        // A topology file first (everything below asks the topology), then ranges: nothing
        // below builds anything.
        self.topology
            .load_file(base)
            .map_err(|(k, m)| err(&format!("topology.{k}"), m))?;
        self.topology
            .validate()
            .map_err(|(k, m)| err(&format!("topology.{k}"), m))?;
        let n_nodes = self.topology.n_hosts() + self.topology.n_switches();
        if let Some(p) = &self.pcap {
            p.validate(n_nodes).map_err(|(k, m)| err(&k, m))?;
        }
        if let Some(ts) = &self.timeseries {
            ts.validate(n_nodes).map_err(|(k, m)| err(&k, m))?;
        }
        if let Some(p) = &self.probe {
            p.validate()
                .map_err(|(k, m)| err(&format!("probe.{k}"), m))?;
        }
        if self.seeds == 0 || self.seeds > 1000 {
            return Err(err(
                "seeds",
                format!("must be in 1..=1000, got {}", self.seeds),
            ));
        }
        if self.seed.checked_add(self.seeds as u64 - 1).is_none() {
            return Err(err(
                "seed",
                format!(
                    "seed {} plus {} seeds passes the largest seed ({}): start lower",
                    self.seed,
                    self.seeds,
                    u64::MAX
                ),
            ));
        }
        if let Some(t) = self.end_when
            && !self.workload.tags().contains(&t)
        {
            let have: Vec<&str> = self.workload.tags().iter().map(|t| t.name()).collect();
            return Err(err(
                "end_when",
                format!(
                    "no flow of this workload is tagged `{}` (its tags: {}): the run would end at once",
                    t.name(),
                    have.join(", ")
                ),
            ));
        }
        if self.stop_time == Some(SimTime::ZERO) {
            return Err(err("stop_time", "must be positive".into()));
        }
        if self.schemes.is_empty() {
            return Err(err("schemes", "list at least one scheme".into()));
        }
        for (i, s) in self.schemes.iter().enumerate() {
            if let Err(m) = Scheme::parse(s) {
                return Err(err(&format!("schemes[{i}]"), m));
            }
            if self.schemes[..i].contains(s) {
                return Err(err(
                    &format!("schemes[{i}]"),
                    format!("`{s}` is listed twice"),
                ));
            }
        }
        self.switch
            .validate()
            .map_err(|(k, m)| err(&format!("switch.{k}"), m))?;
        let p = &self.packet;
        if !(64..=9000).contains(&p.mss.0) {
            return Err(err(
                "packet.mss",
                format!("must be in 64B..=9000B, got {}", p.mss),
            ));
        }
        if !(20..=200).contains(&p.header.0) {
            return Err(err(
                "packet.header",
                format!("must be in 20B..=200B, got {}", p.header),
            ));
        }
        let max_prio = self.workload.max_prio(self.topology.n_hosts(), base);
        // Buffers that can hold what they promise, for the switch every scheme runs with.
        for name in schemes {
            if let Some(scheme) = Scheme::builtin(name) {
                if let Some(p) = max_prio {
                    let nq = self.switch_for(&scheme).queues;
                    if p >= nq {
                        return Err(err(
                            "workload",
                            format!(
                                "a flow asks for priority {p}, but scheme {name}'s switches have {nq} queue(s) (0..{nq}): raise switch.queues"
                            ),
                        ));
                    }
                }
                if scheme.transport == TransportKind::Rdma {
                    self.irn_for(&scheme).map_err(|m| err("rdma.recovery", m))?;
                }
                if scheme.transport == TransportKind::Rdma
                    && self.rdma.rto.is_none()
                    && !self.irn_for(&scheme).unwrap_or(false)
                {
                    let sw = self.switch_for(&scheme);
                    let lossless = sw.pfc.mask(sw.queues);
                    let data = if scheme.class_prio { 0b110 } else { 0b010 };
                    if lossless & data != data {
                        return Err(err(
                            "rdma.rto",
                            format!(
                                "scheme {name} sends data on priorities PFC does not protect, and without a retransmission timeout go-back-N strands a message whose last packets are lost: set rdma.rto (e.g. \"1ms\") or enable PFC for them"
                            ),
                        ));
                    }
                    // PFC keeps buffers from overflowing, not links from failing or losing.
                    let cause = if self.failures.iter().any(|f| f.action == FailAction::Down) {
                        Some(
                            "[[failures]] that take links or switches down lose the packets on and queued for them",
                        )
                    } else if self.topology.build().links.iter().any(|l| l.loss > 0.0) {
                        Some("lossy links of the topology file lose packets")
                    } else {
                        None
                    };
                    if let Some(cause) = cause {
                        return Err(err(
                            "rdma.rto",
                            format!(
                                "scheme {name}: {cause} even on priorities PFC protects, and without a retransmission timeout a message whose last packets are lost never finishes: set rdma.rto (e.g. \"1ms\")"
                            ),
                        ));
                    }
                }
                self.check_buffers(&self.switch_for(&scheme))
                    .map_err(|(k, m)| {
                        // pFabric's per-port buffer is `[pfabric] buffer` (or its default),
                        // not the switch's.
                        if scheme.transport.is_pfabric() && k == "per_port" {
                            let default = match self.pfabric.buffer {
                                Some(_) => String::new(),
                                None => format!(
                                    " (not set: two bandwidth-delay products, {} B); set it",
                                    self.pfabric_buffer()
                                ),
                            };
                            err("pfabric.buffer", format!("{m}{default} (scheme {name})"))
                        } else {
                            err(
                                &format!("switch.buffer.{k}"),
                                format!("{m} (scheme {name})"),
                            )
                        }
                    })?;
                // Switches with their own buffer (topology files) must hold what it promises.
                let spec = self.topology.build();
                for sw in spec.switches.iter().filter(|s| s.buffer.is_some()) {
                    let mut c = self.switch_for(&scheme);
                    c.buffer = c.buffer.with_size(sw.buffer).into_owned();
                    self.check_buffers(&c).map_err(|(k, m)| {
                        err(
                            "topology.file",
                            format!("switch {}'s buffer: {k}: {m} (scheme {name})", sw.name),
                        )
                    })?;
                }
            }
        }
        let t = &self.tcp;
        if !(1.0..=1000.0).contains(&t.init_cwnd) {
            return Err(err(
                "tcp.init_cwnd",
                format!("must be in 1..=1000, got {}", t.init_cwnd),
            ));
        }
        if !(1.0..=10.0).contains(&t.min_cwnd) {
            return Err(err(
                "tcp.min_cwnd",
                format!("must be in 1..=10, got {}", t.min_cwnd),
            ));
        }
        if t.rto_min < SimTime::from_us(1) || t.rto_min > SimTime::from_ms(10_000) {
            return Err(err(
                "tcp.rto_min",
                format!("must be in 1us..=10s, got {}", t.rto_min),
            ));
        }
        if t.rto_max < t.rto_min {
            return Err(err(
                "tcp.rto_max",
                format!("must be >= rto_min ({}), got {}", t.rto_min, t.rto_max),
            ));
        }
        if t.rto_init.is_some_and(|r| r.0 == 0) {
            return Err(err("tcp.rto_init", "must be positive".into()));
        }
        if !(1.0..=16.0).contains(&t.rto_backoff) {
            return Err(err(
                "tcp.rto_backoff",
                format!("must be in 1..=16, got {}", t.rto_backoff),
            ));
        }
        if t.dupthresh == 0 || t.dupthresh > 1000 {
            return Err(err(
                "tcp.dupthresh",
                format!("must be in 1..=1000, got {}", t.dupthresh),
            ));
        }
        let d = &self.dctcp;
        if !(d.g > 0.0 && d.g <= 1.0) {
            return Err(err("dctcp.g", format!("must be in (0, 1], got {}", d.g)));
        }
        if !(0.0..=1.0).contains(&d.init_alpha) {
            return Err(err(
                "dctcp.init_alpha",
                format!("must be in [0, 1], got {}", d.init_alpha),
            ));
        }
        let nq = self.switch.queues;
        for (k, v) in [
            ("priorities.data", self.priorities.data),
            ("priorities.ack", self.priorities.ack),
        ] {
            if v >= nq {
                return Err(err(k, format!("must be < switch.queues ({nq}), got {v}")));
            }
        }
        let b = &self.metrics.size_classes;
        if b.windows(2).any(|w| w[0] >= w[1]) || b.first().is_some_and(|x| x.0 == 0) {
            return Err(err(
                "metrics.size_classes",
                "boundaries must be positive and strictly increasing".into(),
            ));
        }
        if self.metrics.below.iter().any(|x| x.0 == 0) {
            return Err(err("metrics.below", "sizes must be positive".into()));
        }
        let r = &self.rdma;
        if r.g.is_some_and(|g| !(g > 0.0 && g <= 1.0)) {
            return Err(err("rdma.g", "must be in (0, 1]".into()));
        }
        if r.stages.is_some_and(|s| s > 100) {
            return Err(err("rdma.stages", "must be in 0..=100".into()));
        }
        if r.rto.is_some_and(|t| t.0 == 0) || r.nack_interval.0 == 0 {
            return Err(err(
                "rdma.rto",
                "rto and nack_interval must be positive".into(),
            ));
        }
        let g = &self.gpmp;
        if g.paths > 64 {
            return Err(err(
                "gpmp.paths",
                format!("must be in 0..=64, got {}", g.paths),
            ));
        }
        if g.slice < self.packet.mss {
            return Err(err(
                "gpmp.slice",
                format!(
                    "must be at least one packet's payload (packet.mss = {}), got {}",
                    self.packet.mss, g.slice
                ),
            ));
        }
        if let Some(limit) = g.limit
            && limit < g.slice
        {
            return Err(err(
                "gpmp.limit",
                format!(
                    "must be at least the slice size ({}), got {}",
                    g.slice, limit
                ),
            ));
        }
        for (k, a) in [
            ("gpmp.alpha_high", g.alpha_high),
            ("gpmp.alpha_low", g.alpha_low),
        ] {
            if !(a > 0.0 && a <= 64.0) {
                return Err(err(k, format!("must be in (0, 64], got {a}")));
            }
        }
        let pf = &self.pfabric;
        if pf.init_cwnd.is_some_and(|w| !(1.0..=10_000.0).contains(&w)) {
            return Err(err("pfabric.init_cwnd", "must be in 1..=10000".into()));
        }
        if let Some(m) = pf.max_cwnd
            && !(m >= 1.0 && m >= pf.init_cwnd.unwrap_or(1.0) && m <= 1e6)
        {
            return Err(err(
                "pfabric.max_cwnd",
                "must be in 1..=1000000 and at least init_cwnd".into(),
            ));
        }
        if pf
            .rto
            .is_some_and(|t| t < SimTime::from_us(1) || t > SimTime::from_ms(10_000))
        {
            return Err(err("pfabric.rto", "must be in 1us..=10s".into()));
        }
        let packet = self.packet.mss.0 + self.packet.header.0;
        if pf.buffer.is_some_and(|b| b.0 < packet) {
            return Err(err(
                "pfabric.buffer",
                format!("must hold at least one packet ({packet} B)"),
            ));
        }
        if let Some(pin) = &self.routing.pin {
            let path = base.join(pin);
            match crate::fileid::read_to_string(&path) {
                Err(m) => {
                    return Err(err("routing.pin", m));
                }
                Ok(t) if t.lines().next().map(str::trim) != Some("flow_id,direction,nodes") => {
                    return Err(err(
                        "routing.pin",
                        format!(
                            "{}: line 1: the header must be `flow_id,direction,nodes`",
                            path.display()
                        ),
                    ));
                }
                Ok(_) => {}
            }
        }
        let pt = &self.powertcp;
        if !(pt.gamma > 0.0 && pt.gamma <= 1.0) {
            return Err(err(
                "powertcp.gamma",
                format!("must be in (0, 1], got {}", pt.gamma),
            ));
        }
        let hp = &self.hpcc;
        if !(hp.eta > 0.0 && hp.eta <= 1.0) {
            return Err(err(
                "hpcc.eta",
                format!("must be in (0, 1], got {}", hp.eta),
            ));
        }
        if hp.mi_thresh > 1000 {
            return Err(err("hpcc.mi_thresh", "must be in 0..=1000".into()));
        }
        let tm = &self.timely;
        for (k, v) in [("timely.alpha", tm.alpha), ("timely.beta", tm.beta)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(err(k, format!("must be in (0, 1], got {v}")));
            }
        }
        if tm.min_rtt == SimTime::ZERO {
            return Err(err("timely.min_rtt", "must be > 0".into()));
        }
        if tm.t_low > tm.t_high {
            return Err(err("timely.t_low", "must not exceed timely.t_high".into()));
        }
        let sw = &self.swift;
        if !(sw.ai > 0.0 && sw.ai <= 100.0) {
            return Err(err(
                "swift.ai",
                format!("must be in (0, 100], got {}", sw.ai),
            ));
        }
        if !(sw.beta > 0.0 && sw.beta <= 1.0) {
            return Err(err(
                "swift.beta",
                format!("must be in (0, 1], got {}", sw.beta),
            ));
        }
        if !(sw.max_mdf > 0.0 && sw.max_mdf < 1.0) {
            return Err(err(
                "swift.max_mdf",
                format!("must be in (0, 1), got {}", sw.max_mdf),
            ));
        }
        if sw.base_target == Some(SimTime::ZERO) {
            return Err(err("swift.base_target", "must be > 0".into()));
        }
        if !(sw.fs_min_cwnd > 0.0 && sw.fs_min_cwnd < sw.fs_max_cwnd) {
            return Err(err(
                "swift.fs_min_cwnd",
                "must be > 0 and below swift.fs_max_cwnd".into(),
            ));
        }
        let irn = &self.irn;
        if irn.rto_low == SimTime::ZERO {
            return Err(err("irn.rto_low", "must be > 0".into()));
        }
        if irn.rto_high < irn.rto_low {
            return Err(err(
                "irn.rto_high",
                format!("must be >= irn.rto_low ({})", irn.rto_low),
            ));
        }
        if irn.low_pkts > 1_000_000 {
            return Err(err(
                "irn.low_pkts",
                format!("must be in 0..=1000000, got {}", irn.low_pkts),
            ));
        }
        match irn.bdp_cap {
            WindowSpec::None => {
                return Err(err(
                    "irn.bdp_cap",
                    "IRN needs a cap: \"bdp\" or a size".into(),
                ));
            }
            WindowSpec::Bytes(b) if b.0 < self.packet.mss.0 => {
                return Err(err(
                    "irn.bdp_cap",
                    format!("must hold one packet ({} B)", self.packet.mss.0),
                ));
            }
            _ => {}
        }
        if self.routing.convergence > SimTime::from_ms(10_000) {
            return Err(err(
                "routing.convergence",
                format!("must be in 0us..=10s, got {}", self.routing.convergence),
            ));
        }
        if !self.failures.is_empty() {
            let spec = self.topology.build();
            for (i, f) in self.failures.iter().enumerate() {
                let key = format!("failures[{i}]");
                f.links(&spec, &self.topology.node_map())
                    .map_err(|m| err(&key, m))?;
                match (f.action, f.rate) {
                    (FailAction::Rate, None) => {
                        return Err(err(
                            &format!("{key}.rate"),
                            "action \"rate\" needs a `rate`".into(),
                        ));
                    }
                    (FailAction::Rate, Some(r))
                        if r < BitRate::from_mbps(1) || r > BitRate::from_gbps(100_000) =>
                    {
                        return Err(err(
                            &format!("{key}.rate"),
                            format!("must be in 1Mbps..=100Tbps, got {r}"),
                        ));
                    }
                    (FailAction::Down | FailAction::Up, Some(_)) => {
                        return Err(err(
                            &format!("{key}.rate"),
                            "only action \"rate\" takes a rate".into(),
                        ));
                    }
                    _ => {}
                }
                if f.switch.is_some() && f.action == FailAction::Rate {
                    return Err(err(
                        &format!("{key}.action"),
                        "a switch goes \"down\" or \"up\"; change a link's rate with `link`".into(),
                    ));
                }
            }
        }
        let dr = &self.dctcp_rdma;
        if !(dr.g > 0.0 && dr.g <= 1.0) {
            return Err(err(
                "dctcp_rdma.g",
                format!("must be in (0, 1], got {}", dr.g),
            ));
        }
        if let WindowSpec::Bytes(b) = self.tcp.max_window
            && b.0 < self.packet.mss.0
        {
            return Err(err(
                "tcp.max_window",
                format!("must hold one segment ({} B)", self.packet.mss.0),
            ));
        }
        match self.nic.tsq {
            WindowSpec::Bdp => {
                return Err(err(
                    "nic.tsq",
                    "\"none\" or a size (\"bdp\" is not defined for a host queue)".into(),
                ));
            }
            WindowSpec::Bytes(b) if b.0 < self.packet.mss.0 => {
                return Err(err(
                    "nic.tsq",
                    format!("must hold one packet ({} B)", self.packet.mss.0),
                ));
            }
            _ => {}
        }
        if self.nic.qdisc == Qdisc::Fifo
            && let Some(name) = schemes.iter().find(|n| {
                Scheme::builtin(n)
                    .is_some_and(|s| s.transport == TransportKind::Rdma || s.transport.is_pfabric())
            })
        {
            return Err(err(
                "nic.qdisc",
                format!(
                    "\"fifo\" models a host kernel queue for TCP and UDP; scheme {name} schedules its NIC itself (RDMA queue pairs, pFabric ranks)"
                ),
            ));
        }
        if let Some(WindowSpec::Bytes(b)) = self.rdma.window
            && b.0 == 0
        {
            return Err(err(
                "rdma.window",
                "must be > 0 (\"none\" for no window)".into(),
            ));
        }
        if let Some(a) = self.rdma.ack_size
            && !(20..=9000).contains(&a.0)
        {
            return Err(err("rdma.ack_size", "must be in 20B..=9000B".into()));
        }
        // PFC headroom is sized for data packets: a larger ACK could overflow it and drop
        // "lossless" packets.
        let frame = self.packet.mss.0 + self.packet.header.0;
        if let Some(a) = self.rdma.ack_size
            && a.0 > frame
            && let Some(name) = schemes.iter().find(|n| {
                Scheme::builtin(n).is_some_and(|sc| {
                    sc.transport == TransportKind::Rdma && self.switch_for(&sc).pfc.enabled
                })
            })
        {
            return Err(err(
                "rdma.ack_size",
                format!(
                    "{a} is larger than a data packet ({frame} B on the wire: packet.mss + packet.header), and scheme {name} runs on PFC, whose headroom holds data packets: ACKs at most {frame} B"
                ),
            ));
        }
        let fl = &self.flowlet;
        if fl.gap < SimTime::from_us(1) || fl.gap > SimTime::from_ms(1000) {
            return Err(err(
                "flowlet.gap",
                format!("must be in 1us..=1s, got {}", fl.gap),
            ));
        }
        if !fl.table.is_power_of_two() || fl.table > 1 << 20 {
            return Err(err(
                "flowlet.table",
                format!("must be a power of two in 1..=1048576, got {}", fl.table),
            ));
        }
        if !(0.5..=2.0).contains(&self.d2tcp.missed_d) {
            return Err(err("d2tcp.missed_d", "must be in [0.5, 2]".into()));
        }
        if self
            .pdtcp
            .fixed_p
            .is_some_and(|p| !(0.5..=2.0).contains(&p))
        {
            return Err(err("pdtcp.fixed_p", "must be in [0.5, 2]".into()));
        }
        let m = &self.mprdma;
        if !(1..=1024).contains(&m.delta) {
            return Err(err(
                "mprdma.delta",
                format!("must be in 1..=1024, got {}", m.delta),
            ));
        }
        if !(1..=64).contains(&m.bitmap) {
            return Err(err(
                "mprdma.bitmap",
                format!("must be in 1..=64, got {}", m.bitmap),
            ));
        }
        if !(0.0..=1.0).contains(&m.probe) {
            return Err(err(
                "mprdma.probe",
                format!("must be in [0, 1], got {}", m.probe),
            ));
        }
        if !(1.0..=1000.0).contains(&m.init_cwnd) {
            return Err(err("mprdma.init_cwnd", "must be in 1..=1000".into()));
        }
        if self.srm.chunk < self.packet.mss {
            return Err(err(
                "srm.chunk",
                format!(
                    "must be at least one packet's payload (packet.mss = {}), got {}",
                    self.packet.mss, self.srm.chunk
                ),
            ));
        }
        let rdma_schemes = schemes
            .iter()
            .filter(|s| Scheme::builtin(s).is_some_and(|s| s.transport == TransportKind::Rdma))
            .count();
        if rdma_schemes > 0 && self.packet.mss.0 > 4096 {
            return Err(err(
                "packet.mss",
                "RDMA payloads are at most 4096B (RoCEv2 MTU)".into(),
            ));
        }
        let runs = self
            .sweep
            .axes
            .iter()
            .fold(self.schemes.len() as u128 * self.seeds as u128, |n, a| {
                n * a.values.len() as u128
            });
        if runs > MAX_RUNS as u128 {
            return Err(err(
                "sweep.axes",
                format!(
                    "{runs} runs (schemes x seeds x the values of every axis); at most {MAX_RUNS} in one experiment: split it"
                ),
            ));
        }
        for (i, a) in self.sweep.axes.iter().enumerate() {
            if a.values.is_empty() {
                return Err(err(&format!("sweep.axes[{i}]"), "lists no values".into()));
            }
            if self.sweep.axes[..i].iter().any(|b| b.key == a.key) {
                return Err(err(
                    &format!("sweep.axes[{i}]"),
                    format!("`{}` twice", a.key),
                ));
            }
            let top = a.key.split('.').next().unwrap_or_default();
            if [
                "sweep",
                "plot",
                "schemes",
                "seed",
                "seeds",
                "name",
                "output_dir",
            ]
            .contains(&top)
            {
                return Err(err(
                    &format!("sweep.axes[{i}].key"),
                    format!(
                        "`{}` cannot be swept: schemes go in `schemes`, seeds in `seed`/`seeds`; `name`, `output_dir`, `[sweep]` and `[[plot]]` describe the experiment, not a run",
                        a.key
                    ),
                ));
            }
            let fixed = crate::columns::summary_header(&[]);
            if fixed.contains(&a.column()) {
                return Err(err(
                    &format!("sweep.axes[{i}].key"),
                    format!(
                        "`{}` would add the summary column `{}`, which summary.csv already has: sweep a differently named key",
                        a.key,
                        a.column()
                    ),
                ));
            }
            if let Some(b) = self.sweep.axes[..i]
                .iter()
                .find(|b| b.column() == a.column())
            {
                return Err(err(
                    &format!("sweep.axes[{i}].key"),
                    format!(
                        "`{}` and `{}` would share the summary column `{}`: sweep one of them",
                        b.key,
                        a.key,
                        a.column()
                    ),
                ));
            }
        }
        let class_names = self.size_classes().names();
        for (i, p) in self.plot.iter().enumerate() {
            let k = |f: &str| format!("plot[{i}].{f}");
            if !p.file.ends_with(".svg") || p.file.contains('/') || p.file.contains('\\') {
                return Err(err(
                    &k("file"),
                    format!("`{}`: a plain file name ending in .svg", p.file),
                ));
            }
            // The figure and its table (<stem>.csv) must not overwrite what dcsim writes
            // in the experiment directory, nor another figure.
            let stem = &p.file[..p.file.len() - 4];
            if stem.is_empty()
                || stem.starts_with('.')
                || stem == "summary"
                || stem.starts_with("summary.shard-")
                || stem == "manifest"
            {
                return Err(err(
                    &k("file"),
                    format!(
                        "`{}` is reserved: dcsim writes summary.csv, summary.shard-*.csv, manifest.json and hidden files in the experiment directory (a figure also writes <name>.csv)",
                        p.file
                    ),
                ));
            }
            if self.plot[..i].iter().any(|q| q.file == p.file) {
                return Err(err(&k("file"), format!("`{}` twice", p.file)));
            }
            let axes: Vec<&str> = self.sweep.axes.iter().map(|a| a.key.as_str()).collect();
            use crate::plot::spec::PlotKind;
            if p.kind == PlotKind::Sweep {
                if !axes.contains(&p.x.as_str()) {
                    return Err(err(
                        &k("x"),
                        format!("`{}` is not a sweep axis; axes: {axes:?}", p.x),
                    ));
                }
                if let Some(s) = &p.series
                    && !axes.contains(&s.as_str())
                {
                    return Err(err(&k("series"), format!("`{s}` is not a sweep axis")));
                }
                let metrics = crate::columns::summary_metrics();
                if metrics.iter().all(|(m, _)| *m != p.y) {
                    let names: Vec<&str> = metrics.iter().map(|m| m.0.as_str()).collect();
                    return Err(err(
                        &k("y"),
                        format!("`{}` is not a metric; one of {names:?}", p.y),
                    ));
                }
            } else {
                if let Some(a) = p.at.keys().find(|a| !axes.contains(&a.as_str())) {
                    return Err(err(
                        &k("at"),
                        format!("`{a}` is not a sweep axis; axes: {axes:?}"),
                    ));
                }
                if p.kind == PlotKind::SlowdownVsSize
                    && !p.y.is_empty()
                    && !crate::plot::spec::SIZE_STATS.contains(&p.y.as_str())
                {
                    return Err(err(
                        &k("y"),
                        format!(
                            "`{}`: one of {:?} for a slowdown_vs_size figure",
                            p.y,
                            crate::plot::spec::SIZE_STATS
                        ),
                    ));
                }
                if !(2..=200).contains(&p.bins) {
                    return Err(err(
                        &k("bins"),
                        format!("must be in 2..=200, got {}", p.bins),
                    ));
                }
                if p.series.is_some() {
                    return Err(err(
                        &k("series"),
                        "only sweep figures have series; select a point with `at`".into(),
                    ));
                }
                if p.kind == PlotKind::QueueTimeseries && self.timeseries.is_none() {
                    return Err(err(
                        &k("kind"),
                        "a queue_timeseries figure needs a [timeseries] section".into(),
                    ));
                }
            }
            // Tag classes: the tags this workload gives its flows (`flow`, unlabelled, has
            // none), so that a figure of a class no run can have is refused now, not after
            // every run.
            let mut tags: Vec<String> = self
                .workload
                .tags()
                .into_iter()
                .filter(|t| *t != crate::workload::FlowTag::Flow)
                .map(|t| format!("tag:{}", t.name()))
                .collect();
            tags.sort();
            tags.dedup();
            if p.class != "all"
                && !class_names.contains(&p.class)
                && !tags.contains(&p.class)
                && !p.class.starts_with("deadline:")
            {
                let what = if p.class.starts_with("tag:") {
                    "is not a tag this workload gives its flows"
                } else {
                    "is not a class"
                };
                return Err(err(
                    &k("class"),
                    format!(
                        "`{}` {what}; classes: all, {}{}{}",
                        p.class,
                        class_names.join(", "),
                        if tags.is_empty() { "" } else { ", " },
                        tags.join(", ")
                    ),
                ));
            }
        }
        // HPCC flow files name hosts by the topology file's own ids.
        if let Some(ids) = self.topology.original_ids() {
            let hosts = ids[..self.topology.n_hosts()].to_vec();
            self.workload.set_file_host_ids(&hosts);
        }
        self.workload
            .validate(self.topology.n_hosts(), self.topology.host_rate(), base)
            .map_err(|(k, m)| err(&format!("workload.{k}"), m))?;
        Ok(())
    }

    /// Low-priority queue pairs per host pair for GPMP: `[gpmp] paths`, or the number of
    /// uplinks of a leaf/edge switch when 0.
    pub fn gpmp_paths(&self) -> u32 {
        if self.gpmp.paths > 0 {
            return self.gpmp.paths;
        }
        match self.topology {
            TopologyConfig::LeafSpine { spines, .. } => spines,
            TopologyConfig::FatTree { k, .. } => k / 2,
            TopologyConfig::Dumbbell { .. } => 1,
            TopologyConfig::File { .. } => self.topology.uplinks_of_host0().max(1),
        }
    }

    /// GPMP's outstanding-bytes limit L per low-priority queue pair, in bytes: `[gpmp] limit`
    /// when set, else one bandwidth-delay product of the topology's longest host-to-host
    /// path at the host line rate, at least one slice. The round trip is the ideal FCT of one
    /// full packet (`mss + header` bytes, store-and-forward) and its ACK (`header` bytes), as
    /// in the ideal-FCT formula of `docs/outputs.md`. [Reconstruction: the paper gives no value; the
    /// summary says the byte limit "avoids path congestion", which a limit of about one BDP
    /// per path does and a larger one does not (`docs/reproduction/gpmp.md`).]
    pub fn gpmp_limit(&self) -> u64 {
        if let Some(l) = self.gpmp.limit {
            return l.0;
        }
        self.topology
            .host_rate()
            .bytes_in(self.base_rtt())
            .max(self.gpmp.slice.0)
    }

    /// The unloaded round trip of the topology's longest host-to-host path: the ideal FCT of
    /// one full packet (`mss + header` bytes, store-and-forward) and its ACK (`header` bytes).
    pub fn base_rtt(&self) -> SimTime {
        let path = self.topology.longest_path();
        let rev: Vec<_> = path.iter().rev().copied().collect();
        let mss = self.packet.mss.0 as u32;
        crate::metrics::ideal_fct(
            mss as u64,
            mss,
            self.packet.header.0 as u32,
            &path,
            &rev,
            Some(self.packet.header.0 as u32),
        )
    }

    /// pFabric's initial window in segments: `[pfabric] init_cwnd`, else one bandwidth-delay
    /// product of the longest path in full packets, rounded up.
    pub fn pfabric_init_cwnd(&self) -> f64 {
        self.pfabric.init_cwnd.unwrap_or_else(|| {
            let bdp = self.topology.host_rate().bytes_in(self.base_rtt());
            bdp.div_ceil(self.packet.mss.0 + self.packet.header.0) as f64
        })
    }

    /// pFabric's switch buffer per egress port: `[pfabric] buffer`, else two bandwidth-delay
    /// products of the longest path at the host rate.
    pub fn pfabric_buffer(&self) -> u64 {
        self.pfabric.buffer.map_or_else(
            || 2 * self.topology.host_rate().bytes_in(self.base_rtt()),
            |b| b.0,
        )
    }

    /// pFabric's fixed retransmission timeout: `[pfabric] rto`, else three base round trips.
    pub fn pfabric_rto(&self) -> SimTime {
        self.pfabric
            .rto
            .unwrap_or_else(|| SimTime(3 * self.base_rtt().0))
    }

    /// Checks that switch buffers `s` hold what their configuration promises in this topology:
    /// a static port at least one packet (and its PFC XOFF threshold no more than the port),
    /// a shared pool at least its reserves and PFC headrooms plus one packet.
    fn check_buffers(&self, s: &SwitchConfig) -> Result<(), (String, String)> {
        use crate::net::buffer::{BufferKind, Headroom};
        let b = &s.buffer;
        let packet = self.packet.mss.0 + self.packet.header.0;
        match b.kind {
            BufferKind::Static => {
                if b.per_port.0 < packet {
                    return Err((
                        "per_port".into(),
                        format!(
                            "{} holds no packet ({packet} B on the wire): every packet would be dropped",
                            b.per_port
                        ),
                    ));
                }
                if let Some(x) = b.pfc_xoff
                    && (x > b.per_port || x.0 < packet)
                {
                    return Err((
                        "pfc_xoff".into(),
                        format!(
                            "{x} must lie between one packet ({packet} B) and per_port ({})",
                            b.per_port
                        ),
                    ));
                }
            }
            BufferKind::Shared => {
                let (ports, rate, delay) = self.topology.switch_extremes();
                let lossless = s.pfc.mask(s.queues).count_ones() as u64;
                let headroom = match b.headroom {
                    Headroom::Bytes(h) => h.0,
                    Headroom::Auto => 2 * rate.bytes_in(delay) + 2 * packet + 64,
                };
                let set_aside =
                    (b.reserve.0 * s.queues as u64 + headroom * lossless) * ports as u64;
                if set_aside + packet > b.size.0 {
                    return Err((
                        "size".into(),
                        format!(
                            "{} is smaller than what a switch of {ports} ports sets aside: {} reserve x {} queues{} per port = {set_aside} B, plus one packet",
                            b.size,
                            b.reserve,
                            s.queues,
                            if lossless > 0 {
                                format!(
                                    " + {headroom} B PFC headroom x {lossless} lossless priorities"
                                )
                            } else {
                                String::new()
                            }
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The config of one combination: the experiment's config with the axis values applied,
    /// without the sweep itself.
    pub fn at_sweep_point(
        &self,
        values: &[toml::Value],
        file: &str,
    ) -> Result<Config, ConfigError> {
        let cfg = self;
        let err = |key: &str, msg: String| ConfigError {
            file: file.to_string(),
            key: key.to_string(),
            msg,
        };
        let mut table = toml::Table::try_from(cfg).map_err(|e| err("", e.to_string()))?;
        table.remove("sweep");
        table.remove("plot");
        for (a, v) in cfg.sweep.axes.iter().zip(values) {
            crate::sweep::set_key(&mut table, &a.key, v.clone()).map_err(|m| err(&a.key, m))?;
        }
        let text = toml::to_string(&table).map_err(|e| err("", e.to_string()))?;
        let c = Config::parse(&text, file).map_err(|e| {
            // The error's line refers to the generated text: name the axes instead.
            let msg = match e.msg.strip_prefix("line ") {
                Some(r) => r.split_once(": ").map_or(r, |(_, m)| m),
                None => &e.msg,
            };
            let set: Vec<String> = cfg
                .sweep
                .axes
                .iter()
                .zip(values)
                .map(|(a, v)| format!("{} = {}", a.key, crate::sweep::value_text(v)))
                .collect();
            ConfigError {
                key: "sweep.axes".into(),
                msg: format!("with {}: {msg}", set.join(", ")),
                ..e
            }
        })?;
        // The generated text holds every value; what the experiment set is its own keys and
        // the axes.
        let mut c = c;
        c.explicit = cfg.explicit.clone();
        for a in &cfg.sweep.axes {
            c.explicit.insert(&a.key);
        }
        Ok(c)
    }

    /// The size classes of `[metrics]`.
    pub fn size_classes(&self) -> crate::metrics::SizeClasses {
        crate::metrics::SizeClasses {
            bounds: self.metrics.size_classes.iter().map(|b| b.0).collect(),
            below: self.metrics.below.iter().map(|b| b.0).collect(),
        }
    }

    /// Whether RDMA scheme `scheme`'s queue pairs recover losses with IRN (else go-back-N):
    /// `[rdma] recovery`, by default IRN for the IRN scheme only; an error for a contradiction.
    pub fn irn_for(&self, scheme: &Scheme) -> Result<bool, String> {
        let mprdma = scheme.rdma_host == Some(crate::scheme::RdmaHostKind::MpRdma);
        match self.rdma.recovery {
            None => Ok(scheme.irn),
            Some(LossRecovery::GoBackN) if scheme.irn => Err(format!(
                "scheme {} is IRN's loss recovery; \"go_back_n\" contradicts it",
                scheme.name
            )),
            Some(LossRecovery::Irn) if mprdma => Err(format!(
                "scheme {} has its own loss recovery; \"irn\" applies to queue-pair schemes",
                scheme.name
            )),
            Some(r) => Ok(r == LossRecovery::Irn),
        }
    }

    /// The short-message threshold in bytes.
    pub fn short_threshold(&self) -> u64 {
        match self.gpmp.short_threshold_time {
            Some(t) => self.topology.host_rate().bytes_in(t),
            None => self.gpmp.short_threshold.0,
        }
    }

    /// AM's congestion threshold in bytes.
    pub fn am_threshold(&self) -> u64 {
        match (self.am.threshold, self.switch.ecn) {
            (Some(t), _) => t.0,
            (None, crate::net::port::EcnConfig::Step { k, .. }) => k.0,
            _ => 30_000,
        }
    }

    /// The switch configuration a scheme runs with: RDMA schemes use three queues (control,
    /// short, long); GPMP's switch side replaces the scheduler with strict priority plus a
    /// minimum bandwidth per data queue (queue 0, control, strictly first) and sets the
    /// per-priority dynamic-threshold alphas.
    pub fn switch_for(&self, scheme: &Scheme) -> SwitchConfig {
        let mut s = self.switch.clone();
        if scheme.transport == TransportKind::Rdma {
            s.queues = s.queues.max(3);
        }
        if scheme.transport.is_pfabric() {
            // pFabric's switch: serve and drop by rank, small static per-port buffers.
            s.scheduler = crate::net::port::SchedulerConfig::Pfabric;
            s.buffer.kind = crate::net::buffer::BufferKind::Static;
            s.buffer.per_port = Bytes(self.pfabric_buffer());
        }
        if scheme.irn {
            // IRN's premise: a lossy fabric, no PFC (`[rdma] recovery = "irn"` on another
            // scheme keeps `[switch.pfc]` as configured).
            s.pfc.enabled = false;
        }
        if scheme.gpmp_switch {
            let mut min_rate = vec![BitRate(0); s.queues as usize];
            for r in min_rate.iter_mut().skip(1) {
                *r = self.gpmp.min_bw;
            }
            s.scheduler = crate::net::port::SchedulerConfig::StrictMinBw {
                min_rate,
                depth: Bytes(2000),
                strict_top: 1,
            };
            let mut alphas = vec![s.buffer.alpha; s.queues as usize];
            alphas[1] = self.gpmp.alpha_high;
            alphas[2] = self.gpmp.alpha_low;
            s.buffer.alpha_per_prio = alphas;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_experiment_is_valid() {
        let c = Config::default_experiment();
        assert_eq!(c.topology.n_hosts(), 16);
        assert_eq!(c.schemes, vec!["TCP", "DCTCP"]);
    }

    #[test]
    fn empty_config_takes_defaults() {
        let c = Config::parse("", "x.toml").unwrap();
        c.validate("x.toml", Path::new(".")).unwrap();
        assert_eq!(c.tcp.rto_min, SimTime::from_ms(10));
    }

    #[test]
    fn unknown_key_is_named() {
        let e = Config::parse("[tcp]\nrto_mn = \"1ms\"\n", "x.toml").unwrap_err();
        assert!(e.to_string().contains("rto_mn"), "{e}");
        assert!(e.to_string().contains("x.toml"), "{e}");
        let e =
            Config::parse("[topology]\nkind = \"fat_tree\"\nleaves = 3\n", "x.toml").unwrap_err();
        assert!(e.to_string().contains("leaves"), "{e}");
    }

    #[test]
    fn bad_unit_is_explained() {
        let e = Config::parse("[tcp]\nrto_min = \"1 fortnight\"\n", "x.toml").unwrap_err();
        assert!(e.to_string().contains("unknown time unit"), "{e}");
        let e = Config::parse("[tcp]\nrto_min = 5\n", "x.toml").unwrap_err();
        assert!(e.to_string().contains("no unit"), "{e}");
    }

    #[test]
    fn out_of_range_names_key_and_range() {
        let c = Config::parse("[topology]\nkind = \"fat_tree\"\nk = 5\n", "x.toml").unwrap();
        let e = c.validate("x.toml", Path::new(".")).unwrap_err();
        assert_eq!(e.key, "topology.k");
        let c = Config::parse("[workload]\nkind = \"poisson\"\nload = 1.5\n", "x.toml").unwrap();
        let e = c.validate("x.toml", Path::new(".")).unwrap_err();
        assert_eq!(e.key, "workload.load");
        assert!(e.msg.contains("(0, 1]"));
        let c = Config::parse("schemes = [\"QUIC\"]\n", "x.toml").unwrap();
        let e = c.validate("x.toml", Path::new(".")).unwrap_err();
        assert!(e.msg.contains("DCTCP"), "{e}");
    }

    #[test]
    fn gpmp_limit_is_one_bdp_of_the_longest_path() {
        // Leaf-spine, 10 Gbps, 1 us links, 1000 B + 82 B packets: the round trip of one full
        // packet is 4 x 865.6 ns serialization + 4 x 65.6 ns for the ACK + 8 us propagation
        // = 11.7248 us, i.e. 14 656 B at 10 Gbps.
        let base = "[packet]\nmss = \"1000B\"\nheader = \"82B\"\n";
        let c = Config::parse(&format!("{base}[gpmp]\nslice = \"8KB\"\n"), "x").unwrap();
        assert_eq!(c.gpmp_limit(), 14_656);
        // At least one slice (the default 16 KB).
        let c = Config::parse(base, "x").unwrap();
        assert_eq!(c.gpmp_limit(), 16_000);
        // An explicit value wins; below one slice is an error naming the key.
        let c = Config::parse(&format!("{base}[gpmp]\nlimit = \"64KB\"\n"), "x").unwrap();
        assert_eq!(c.gpmp_limit(), 64_000);
        let c = Config::parse(&format!("{base}[gpmp]\nlimit = \"8KB\"\n"), "x").unwrap();
        assert_eq!(
            c.validate("x", Path::new(".")).unwrap_err().key,
            "gpmp.limit"
        );
        // 100 Gbps fat-tree (6 hops): 6 x 86.56 + 6 x 6.56 ns + 12 us = 12.5587 us -> 156 984 B.
        let c = Config::parse(
            &format!(
                "{base}[topology]\nkind = \"fat_tree\"\nhost_rate = \"100Gbps\"\nfabric_rate = \"100Gbps\"\n"
            ),
            "x",
        )
        .unwrap();
        assert_eq!(c.gpmp_limit(), 156_984);
    }
    #[test]
    fn apply_overrides_and_validates_through_the_schema() {
        let text = "[workload]\nkind = \"poisson\"\nload = 0.5\n\
                    [sweep]\naxes = [{ key = \"workload.load\", values = [0.3, 0.9] }, \
                    { key = \"tcp.rto_min\", values = [\"2ms\"] }]\n";
        let c = Config::parse(text, "s.toml").unwrap();
        let combos = crate::sweep::combinations(&c.sweep.axes);
        let r = c.at_sweep_point(&combos[1], "s.toml").unwrap();
        match r.workload {
            crate::workload::WorkloadConfig::Poisson { load, .. } => assert_eq!(load, 0.9),
            _ => panic!(),
        }
        assert_eq!(r.tcp.rto_min, crate::units::SimTime::from_ms(2));
        // Array elements by index.
        let mut t: toml::Table = toml::from_str("[w]\nparts = [{ a = 1 }, { a = 2 }]\n").unwrap();
        crate::sweep::set_key(&mut t, "w.parts.1.a", 9.into()).unwrap();
        assert_eq!(t["w"]["parts"][1]["a"].as_integer(), Some(9));
        assert!(crate::sweep::set_key(&mut t, "w.parts.5.a", 9.into()).is_err());
        assert!(r.sweep.axes.is_empty());
        // A bad value is reported with the sweep values.
        let bad = "[sweep]\naxes = [{ key = \"tcp.rto_min\", values = [\"2 parsecs\"] }]\n";
        let c = Config::parse(bad, "s.toml").unwrap();
        let e = c
            .at_sweep_point(&crate::sweep::combinations(&c.sweep.axes)[0], "s.toml")
            .unwrap_err();
        assert!(e.to_string().contains("2 parsecs"), "{e}");
    }
}
