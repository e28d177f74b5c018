//! Pinned paths: a file names, for some flows, the exact path of their data and of their
//! acknowledgements, and switches forward those packets along it instead of asking their load
//! balancer. This separates congestion-control differences from hashing differences when
//! comparing with another simulator (whose ECMP picks other paths for the same flows).
//!
//! File format (CSV, header `flow_id,direction,nodes`): `direction` is `data` or `ack`;
//! `nodes` lists the node ids (hosts first, then switches, as in `ports.csv`) from the sending
//! host to the receiving host, separated by spaces. Flows not listed use the load balancer.
//!
//! Not modelled: pinning by 5-tuple (a flow's retransmissions and every packet of an RDMA
//! message follow its pinned path); paths that are not shortest paths are allowed as long as
//! consecutive nodes are linked.

use crate::ids::{NodeId, PortId};
use crate::net::Network;
use std::collections::HashMap;
use std::path::Path;

/// The egress port of each pinned (flow, direction, switch).
#[derive(Debug, Default)]
pub struct Pins {
    next: HashMap<(u32, bool, u32), PortId>,
}

impl Pins {
    /// The port a packet of workload flow `flow` (data or not) leaves switch `node` by, if
    /// its path is pinned.
    #[inline]
    pub fn next(&self, flow: u32, data: bool, node: NodeId) -> Option<PortId> {
        self.next.get(&(flow, data, node.0)).copied()
    }

    pub fn len(&self) -> usize {
        self.next.len()
    }

    pub fn is_empty(&self) -> bool {
        self.next.is_empty()
    }

    /// Reads `path`; `endpoints` gives each known flow id's (source, destination) hosts.
    /// Errors name the file and line.
    pub fn load(
        path: &Path,
        net: &Network,
        endpoints: &HashMap<u32, (u32, u32)>,
        map: &crate::topology::NodeMap,
    ) -> Result<Pins, String> {
        let text = crate::fileid::read_to_string(path)?;
        Pins::parse(&text, net, endpoints, map).map_err(|m| format!("{}: {m}", path.display()))
    }

    /// Parses a pin file whose node ids `map` translates to dcsim's (a topology file's own
    /// ids, see `[topology] node_ids`).
    pub fn parse(
        text: &str,
        net: &Network,
        endpoints: &HashMap<u32, (u32, u32)>,
        map: &crate::topology::NodeMap,
    ) -> Result<Pins, String> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, h)) if h.trim() == "flow_id,direction,nodes" => {}
            _ => return Err("line 1: the header must be `flow_id,direction,nodes`".into()),
        }
        let n_nodes = net.nodes.len();
        let mut pins = Pins::default();
        for (i, line) in lines {
            let ln = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(',').collect();
            if f.len() != 3 {
                return Err(format!("line {ln}: expected 3 fields, got {}", f.len()));
            }
            let id: u32 = f[0]
                .trim()
                .parse()
                .map_err(|_| format!("line {ln}: flow_id `{}` is not an integer", f[0]))?;
            let data = match f[1].trim() {
                "data" => true,
                "ack" => false,
                d => return Err(format!("line {ln}: direction `{d}`: `data` or `ack`")),
            };
            let nodes: Vec<u32> = f[2]
                .split_whitespace()
                .map(|n| {
                    n.parse::<u32>()
                        .ok()
                        .and_then(|id| map.dcsim(id).ok())
                        .filter(|&n| (n as usize) < n_nodes)
                        .ok_or_else(|| {
                            if map.translates() {
                                format!("line {ln}: node `{n}` is not a node of the topology file (by its own ids)")
                            } else {
                                format!("line {ln}: node `{n}` is not in 0..{n_nodes}")
                            }
                        })
                })
                .collect::<Result<_, _>>()?;
            let Some(&(src, dst)) = endpoints.get(&id) else {
                return Err(format!("line {ln}: the workload has no flow {id}"));
            };
            let (a, b) = if data { (src, dst) } else { (dst, src) };
            if nodes.len() < 2 || nodes[0] != a || nodes[nodes.len() - 1] != b {
                return Err(format!(
                    "line {ln}: a {} path of flow {id} runs from host {a} to host {b}",
                    f[1].trim()
                ));
            }
            for w in nodes.windows(2) {
                let here = NodeId(w[0]);
                let port = net.nodes[here.idx()]
                    .ports
                    .iter()
                    .copied()
                    .find(|p| net.ports[p.idx()].peer_node == NodeId(w[1]))
                    .ok_or_else(|| {
                        format!("line {ln}: nodes {} and {} are not linked", w[0], w[1])
                    })?;
                if !net.is_host(here) {
                    pins.next.insert((id, data, w[0]), port);
                }
            }
        }
        Ok(pins)
    }
}
