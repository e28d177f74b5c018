//! The sections of the network and what is observed of it: `[quirks]`, `[nic]`,
//! `[routing]`, `[[failures]]`, `[udp]`, `[priority]`, `[metrics]`. Schema and defaults only;
//! the checks are in `validate`.

use super::*;

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

pub(in crate::config) fn d_classes() -> Vec<Bytes> {
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
