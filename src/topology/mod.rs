//! Topologies: parameterised builders for leaf-spine, k-ary fat-tree and dumbbell networks.
//!
//! A builder returns a [`TopoSpec`]: nodes (hosts first, numbered `0..n_hosts`, then switches)
//! and full-duplex links with a rate and a propagation delay. Numbering conventions, relied on
//! by workloads and tests:
//!
//! * leaf-spine: host `h` hangs off leaf `h / hosts_per_leaf`; every leaf connects to every
//!   spine. Switches: leaves, then spines.
//! * fat-tree(k): `k³/4` hosts, `k` pods of `k/2` edge and `k/2` aggregation switches, `(k/2)²`
//!   cores. Host `h` hangs off edge switch `h / (k/2)` (`h / hosts_per_edge` when the edges
//!   are oversubscribed: `k²·hosts_per_edge/2` hosts); edge switch `e` sits in pod `e / (k/2)`
//!   and connects to every aggregation switch of its pod; aggregation switch `j` of a pod
//!   connects to cores `j·k/2 .. (j+1)·k/2`. Switches: edges, aggregations, cores.
//! * dumbbell: `left` hosts on switch L, `right` hosts on switch R, one L–R bottleneck link.
//! * rail: GPU `h` of server `h / gpus` with its NIC on rail switch `h % gpus`, rails joined
//!   by spines; with options, server switches (NVLink-like), planes and dual ToRs, which make
//!   hosts multi-homed ([`rail`]).
//! * file: any graph from a topology file ([`mod@file`]: dcsim's TOML format or the HPCC ns-3
//!   simulator's `topology.txt`), hosts first.
//!
//! Not modelled: asymmetric link rates within a tier of the built-in families (a file can
//! have them).

pub mod file;
pub mod rail;

use crate::ids::NodeId;
use crate::units::{BitRate, SimTime};
use serde::{Deserialize, Serialize};

/// A full-duplex link between two nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub a: NodeId,
    pub b: NodeId,
    pub rate: BitRate,
    pub delay: SimTime,
    /// Probability that a packet crossing the link (either way) is lost, in [0, 1).
    pub loss: f64,
}

/// A switch of the topology.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchSpec {
    pub name: String,
    /// Tier: 1 = edge/leaf (rail), 2 = aggregation/spine, 3 = core; 0 = inside a server
    /// (rail fabrics' NVLink-like switches).
    pub tier: u8,
    /// This switch's buffer instead of `[switch.buffer]`'s: the shared buffer's size, or a
    /// static buffer's bytes per port (topology files).
    pub buffer: Option<crate::units::Bytes>,
}

/// A built topology, before it is turned into ports and queues.
#[derive(Clone, Debug, PartialEq)]
pub struct TopoSpec {
    pub n_hosts: usize,
    pub switches: Vec<SwitchSpec>,
    pub links: Vec<LinkSpec>,
}

fn default_rate() -> BitRate {
    BitRate::from_gbps(10)
}
fn default_delay() -> SimTime {
    SimTime::from_us(1)
}
fn d_hpl() -> u32 {
    4
}
fn d_four() -> u32 {
    4
}
fn d_k() -> u32 {
    4
}
fn d_side() -> u32 {
    4
}
fn d_one_link() -> u32 {
    1
}

/// `[topology]`: which network to build.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// Two-tier leaf-spine: every leaf connects to every spine.
    LeafSpine {
        /// Hosts per leaf (1..=1024). Default 4.
        #[serde(default = "d_hpl")]
        hosts_per_leaf: u32,
        /// Leaf switches (1..=1024). Default 4.
        #[serde(default = "d_four")]
        leaves: u32,
        /// Spine switches (1..=1024). Default 4.
        #[serde(default = "d_four")]
        spines: u32,
        /// Host–leaf link rate. Default 10Gbps.
        #[serde(default = "default_rate")]
        host_rate: BitRate,
        /// Leaf–spine link rate. Default 10Gbps.
        #[serde(default = "default_rate")]
        fabric_rate: BitRate,
        /// Propagation delay of every link. Default 1us.
        #[serde(default = "default_delay")]
        link_delay: SimTime,
    },
    /// k-ary fat-tree (Al-Fares et al.).
    FatTree {
        /// Even arity, 2..=64. Default 4 (16 hosts, 20 switches).
        #[serde(default = "d_k")]
        k: u32,
        /// Host–edge link rate. Default 10Gbps.
        #[serde(default = "default_rate")]
        host_rate: BitRate,
        /// Edge–aggregation (and, without `core_rate`, aggregation–core) link rate. Default
        /// 10Gbps.
        #[serde(default = "default_rate")]
        fabric_rate: BitRate,
        /// Aggregation–core link rate (htsim's per-tier rates). Default: `fabric_rate`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        core_rate: Option<BitRate>,
        /// Hosts per edge switch, 1..=1024 (more than k/2 oversubscribes the edge uplinks by
        /// hosts_per_edge / (k/2), as htsim's oversubscribed fat-trees). Default k/2.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hosts_per_edge: Option<u32>,
        /// Propagation delay of every link. Default 1us.
        #[serde(default = "default_delay")]
        link_delay: SimTime,
    },
    /// Two switches joined by one bottleneck link.
    Dumbbell {
        /// Hosts on the left switch (1..=4096). Default 4.
        #[serde(default = "d_side")]
        left: u32,
        /// Hosts on the right switch (1..=4096). Default 4.
        #[serde(default = "d_side")]
        right: u32,
        /// Host link rate. Default 10Gbps.
        #[serde(default = "default_rate")]
        host_rate: BitRate,
        /// Bottleneck (switch–switch) rate. Default 10Gbps.
        #[serde(default = "default_rate")]
        bottleneck_rate: BitRate,
        /// Host link propagation delay. Default 1us.
        #[serde(default = "default_delay")]
        link_delay: SimTime,
        /// Bottleneck propagation delay. Default 1us.
        #[serde(default = "default_delay")]
        bottleneck_delay: SimTime,
        /// Parallel bottleneck links between the two switches, 1..=64. Default 1.
        #[serde(default = "d_one_link")]
        bottleneck_links: u32,
    },
    /// A rail-optimised AI fabric (`topology::rail`): multi-NIC servers, rails, spines,
    /// optionally NVLink-like server switches, planes and dual ToRs.
    Rail(rail::RailConfig),
    /// A topology file (`topology::file`).
    File {
        /// The file, relative to the config.
        file: std::path::PathBuf,
        /// "dcsim" (TOML, default) or "hpcc" (`topology.txt`).
        #[serde(default)]
        format: file::TopoFormat,
        /// How `[[failures]]` and `[routing] pin` name nodes: "file" (default), by the file's
        /// own ids; "dcsim", by dcsim's numbering (hosts first). HPCC flow files always use
        /// the file's ids.
        #[serde(default, skip_serializing_if = "NodeIds::is_file")]
        node_ids: NodeIds,
        /// The loaded topology (at validation).
        #[serde(skip)]
        loaded: Loaded,
    },
}

/// How a config names the nodes of a topology file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeIds {
    /// The file's own ids.
    #[default]
    File,
    /// dcsim's numbering: hosts first, in ascending file id, then switches.
    Dcsim,
}

impl NodeIds {
    fn is_file(&self) -> bool {
        *self == NodeIds::File
    }
}

/// From the ids a config uses to dcsim's node numbers.
#[derive(Clone, Debug, Default)]
pub struct NodeMap(Option<Vec<(u32, u32)>>);

impl NodeMap {
    /// dcsim's node number of the node the config calls `id`.
    pub fn dcsim(&self, id: u32) -> Result<u32, String> {
        match &self.0 {
            None => Ok(id),
            Some(v) => v
                .binary_search_by_key(&id, |p| p.0)
                .map(|i| v[i].1)
                .map_err(|_| {
                    format!("node {id} is not a node of the topology file (by its own ids)")
                }),
        }
    }

    /// Whether ids are translated (a topology file that dcsim renumbers).
    pub fn translates(&self) -> bool {
        self.0.is_some()
    }
}

/// A topology file's contents, loaded once when the config is validated (equal whatever is
/// loaded: the path and format identify it).
#[derive(Clone, Debug, Default)]
pub struct Loaded(std::sync::Arc<std::sync::OnceLock<file::FileTopo>>);

impl PartialEq for Loaded {
    fn eq(&self, _: &Loaded) -> bool {
        true
    }
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig::LeafSpine {
            hosts_per_leaf: 4,
            leaves: 4,
            spines: 4,
            host_rate: default_rate(),
            fabric_rate: default_rate(),
            link_delay: default_delay(),
        }
    }
}

impl TopologyConfig {
    /// Loads a topology file (relative to `base`), once; nothing for the built-in families.
    pub fn load_file(&self, base: &std::path::Path) -> Result<(), (String, String)> {
        if let TopologyConfig::File {
            file,
            format,
            loaded,
            ..
        } = self
            && loaded.0.get().is_none()
        {
            let path = base.join(file);
            let t = file::load(&path, *format)
                .map_err(|m| ("file".to_string(), format!("{}: {m}", path.display())))?;
            let _ = loaded.0.set(t);
        }
        Ok(())
    }

    /// The loaded topology file.
    fn file_topo(&self) -> Option<&file::FileTopo> {
        match self {
            TopologyConfig::File { loaded, .. } => Some(
                loaded
                    .0
                    .get()
                    .expect("a topology file is loaded when its config is validated"),
            ),
            _ => None,
        }
    }

    /// Checks ranges; returns `(key, message)` on error.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.file_topo().is_some() {
            // Checked line by line when the file was loaded.
            return Ok(());
        }
        if let TopologyConfig::Rail(r) = self {
            return r.validate();
        }
        let range = |k: &str, v: u32, lo: u32, hi: u32| {
            if v < lo || v > hi {
                Err((k.to_string(), format!("must be in {lo}..={hi}, got {v}")))
            } else {
                Ok(())
            }
        };
        type Named<T> = Vec<(&'static str, T)>;
        let (rates, delays): (Named<BitRate>, Named<SimTime>) = match *self {
            TopologyConfig::LeafSpine {
                host_rate,
                fabric_rate,
                link_delay,
                ..
            } => (
                vec![("host_rate", host_rate), ("fabric_rate", fabric_rate)],
                vec![("link_delay", link_delay)],
            ),
            TopologyConfig::FatTree {
                host_rate,
                fabric_rate,
                core_rate,
                link_delay,
                ..
            } => (
                vec![
                    ("host_rate", host_rate),
                    ("fabric_rate", fabric_rate),
                    ("core_rate", core_rate.unwrap_or(fabric_rate)),
                ],
                vec![("link_delay", link_delay)],
            ),
            TopologyConfig::Dumbbell {
                host_rate,
                bottleneck_rate,
                link_delay,
                bottleneck_delay,
                ..
            } => (
                vec![
                    ("host_rate", host_rate),
                    ("bottleneck_rate", bottleneck_rate),
                ],
                vec![
                    ("link_delay", link_delay),
                    ("bottleneck_delay", bottleneck_delay),
                ],
            ),
            TopologyConfig::File { .. } | TopologyConfig::Rail(_) => return Ok(()),
        };
        for (k, r) in rates {
            if r < BitRate::from_mbps(1) || r > BitRate::from_gbps(100_000) {
                return Err((k.into(), format!("must be in 1Mbps..=100Tbps, got {r}")));
            }
        }
        for (k, d) in delays {
            if d > SimTime::from_ms(1000) {
                return Err((k.into(), format!("must be at most 1s, got {d}")));
            }
        }
        match *self {
            TopologyConfig::LeafSpine {
                hosts_per_leaf,
                leaves,
                spines,
                ..
            } => {
                range("hosts_per_leaf", hosts_per_leaf, 1, 1024)?;
                range("leaves", leaves, 1, 1024)?;
                range("spines", spines, 1, 1024)?;
                if hosts_per_leaf * leaves < 2 {
                    return Err(("hosts_per_leaf".into(), "need at least 2 hosts".into()));
                }
            }
            TopologyConfig::FatTree {
                k, hosts_per_edge, ..
            } => {
                range("k", k, 2, 64)?;
                if k % 2 != 0 {
                    return Err(("k".into(), format!("must be even, got {k}")));
                }
                if let Some(h) = hosts_per_edge {
                    range("hosts_per_edge", h, 1, 1024)?;
                }
            }
            TopologyConfig::Dumbbell {
                left,
                right,
                bottleneck_links,
                ..
            } => {
                range("left", left, 1, 4096)?;
                range("right", right, 1, 4096)?;
                range("bottleneck_links", bottleneck_links, 1, 64)?;
            }
            TopologyConfig::File { .. } | TopologyConfig::Rail(_) => {}
        }
        Ok(())
    }

    /// Number of hosts.
    pub fn n_hosts(&self) -> usize {
        match *self {
            TopologyConfig::LeafSpine {
                hosts_per_leaf,
                leaves,
                ..
            } => (hosts_per_leaf * leaves) as usize,
            TopologyConfig::FatTree {
                k, hosts_per_edge, ..
            } => (k * k * hosts_per_edge.unwrap_or(k / 2) / 2) as usize,
            TopologyConfig::Dumbbell { left, right, .. } => (left + right) as usize,
            TopologyConfig::Rail(ref r) => r.n_hosts(),
            TopologyConfig::File { .. } => self.file_topo().expect("file").spec.n_hosts,
        }
    }

    /// The most ports a switch has, and the fastest link rate and longest delay of the
    /// topology (bounds for buffer checks).
    pub fn switch_extremes(&self) -> (usize, BitRate, SimTime) {
        match *self {
            TopologyConfig::LeafSpine {
                hosts_per_leaf,
                leaves,
                spines,
                host_rate,
                fabric_rate,
                link_delay,
            } => (
                ((hosts_per_leaf + spines).max(leaves)) as usize,
                host_rate.max(fabric_rate),
                link_delay,
            ),
            TopologyConfig::FatTree {
                k,
                host_rate,
                fabric_rate,
                core_rate,
                hosts_per_edge,
                link_delay,
            } => (
                (k.max(hosts_per_edge.unwrap_or(k / 2) + k / 2)) as usize,
                host_rate
                    .max(fabric_rate)
                    .max(core_rate.unwrap_or(fabric_rate)),
                link_delay,
            ),
            TopologyConfig::Dumbbell {
                left,
                right,
                host_rate,
                bottleneck_rate,
                link_delay,
                bottleneck_delay,
                bottleneck_links,
            } => (
                (left.max(right) + bottleneck_links) as usize,
                host_rate.max(bottleneck_rate),
                link_delay.max(bottleneck_delay),
            ),
            TopologyConfig::Rail(ref r) => r.extremes(),
            TopologyConfig::File { .. } => {
                let t = self.file_topo().expect("file");
                (t.max_ports, t.max_rate, t.max_delay)
            }
        }
    }

    /// Number of switches.
    pub fn n_switches(&self) -> usize {
        match *self {
            TopologyConfig::LeafSpine { leaves, spines, .. } => (leaves + spines) as usize,
            TopologyConfig::FatTree { k, .. } => (k * k + k * k / 4) as usize,
            TopologyConfig::Dumbbell { .. } => 2,
            TopologyConfig::Rail(ref r) => r.n_switches(),
            TopologyConfig::File { .. } => self.file_topo().expect("file").spec.switches.len(),
        }
    }

    /// The rate of the host access links.
    pub fn host_rate(&self) -> BitRate {
        match *self {
            TopologyConfig::LeafSpine { host_rate, .. }
            | TopologyConfig::FatTree { host_rate, .. }
            | TopologyConfig::Dumbbell { host_rate, .. } => host_rate,
            TopologyConfig::Rail(ref r) => r.nic_rate,
            TopologyConfig::File { .. } => self.file_topo().expect("file").host_rate,
        }
    }

    /// The hops (rate, propagation delay) of the longest host-to-host shortest path, from
    /// the source host's link to the destination host's: between leaves (leaf-spine), between
    /// pods (fat-tree), across the bottleneck (dumbbell). Computed from the parameters, not
    /// the graph.
    pub fn longest_path(&self) -> Vec<(BitRate, SimTime)> {
        match *self {
            TopologyConfig::LeafSpine {
                leaves,
                host_rate,
                fabric_rate,
                link_delay,
                ..
            } => {
                let h = (host_rate, link_delay);
                if leaves > 1 {
                    vec![h, (fabric_rate, link_delay), (fabric_rate, link_delay), h]
                } else {
                    vec![h, h]
                }
            }
            TopologyConfig::FatTree {
                host_rate,
                fabric_rate,
                core_rate,
                link_delay,
                ..
            } => {
                let f = (fabric_rate, link_delay);
                let c = (core_rate.unwrap_or(fabric_rate), link_delay);
                vec![(host_rate, link_delay), f, c, c, f, (host_rate, link_delay)]
            }
            TopologyConfig::Dumbbell {
                host_rate,
                bottleneck_rate,
                link_delay,
                bottleneck_delay,
                ..
            } => vec![
                (host_rate, link_delay),
                (bottleneck_rate, bottleneck_delay),
                (host_rate, link_delay),
            ],
            TopologyConfig::Rail(ref r) => r.longest_path(),
            TopologyConfig::File { .. } => self.file_topo().expect("file").longest.clone(),
        }
    }

    pub fn build(&self) -> TopoSpec {
        match *self {
            TopologyConfig::LeafSpine {
                hosts_per_leaf,
                leaves,
                spines,
                host_rate,
                fabric_rate,
                link_delay,
            } => leaf_spine(
                hosts_per_leaf as usize,
                leaves as usize,
                spines as usize,
                host_rate,
                fabric_rate,
                link_delay,
            ),
            TopologyConfig::FatTree {
                k,
                host_rate,
                fabric_rate,
                core_rate,
                hosts_per_edge,
                link_delay,
            } => fat_tree_with(
                k as usize,
                hosts_per_edge.map_or(k as usize / 2, |h| h as usize),
                host_rate,
                fabric_rate,
                core_rate.unwrap_or(fabric_rate),
                link_delay,
            ),
            TopologyConfig::Dumbbell {
                left,
                right,
                host_rate,
                bottleneck_rate,
                link_delay,
                bottleneck_delay,
                bottleneck_links,
            } => dumbbell(
                left as usize,
                right as usize,
                host_rate,
                bottleneck_rate,
                link_delay,
                bottleneck_delay,
                bottleneck_links as usize,
            ),
            TopologyConfig::Rail(ref r) => r.build(),
            TopologyConfig::File { .. } => self.file_topo().expect("file").spec.clone(),
        }
    }

    /// Links from host 0's switch to other switches (a file's GPMP path count).
    pub fn uplinks_of_host0(&self) -> u32 {
        let spec = self.build();
        let n = spec.n_hosts as u32;
        let Some(sw) = spec
            .links
            .iter()
            .find_map(|l| (l.a.0 == 0).then_some(l.b).or((l.b.0 == 0).then_some(l.a)))
        else {
            return 0;
        };
        spec.links
            .iter()
            .filter(|l| (l.a == sw && l.b.0 >= n) || (l.b == sw && l.a.0 >= n))
            .count() as u32
    }

    /// The original id of each node of a topology file, by dcsim node number (identity for
    /// dcsim's format); None for the built-in families.
    pub fn original_ids(&self) -> Option<&[u32]> {
        self.file_topo().map(|t| t.node_ids.as_slice())
    }

    /// How `[[failures]]` and pins name nodes: the file's ids when it is renumbered and
    /// `node_ids = "file"`, else dcsim's.
    pub fn node_map(&self) -> NodeMap {
        match (self, self.original_ids()) {
            (TopologyConfig::File { node_ids, .. }, Some(ids))
                if *node_ids == NodeIds::File
                    && ids.iter().enumerate().any(|(i, &id)| id as usize != i) =>
            {
                let mut v: Vec<(u32, u32)> = ids
                    .iter()
                    .enumerate()
                    .map(|(i, &id)| (id, i as u32))
                    .collect();
                v.sort_unstable();
                NodeMap(Some(v))
            }
            _ => NodeMap(None),
        }
    }
}

fn link(a: usize, b: usize, rate: BitRate, delay: SimTime) -> LinkSpec {
    LinkSpec {
        a: NodeId(a as u32),
        b: NodeId(b as u32),
        rate,
        delay,
        loss: 0.0,
    }
}

/// Leaf-spine: hosts, then leaves, then spines.
pub fn leaf_spine(
    hpl: usize,
    leaves: usize,
    spines: usize,
    host_rate: BitRate,
    fabric_rate: BitRate,
    delay: SimTime,
) -> TopoSpec {
    let n_hosts = hpl * leaves;
    let leaf = |l: usize| n_hosts + l;
    let spine = |s: usize| n_hosts + leaves + s;
    let mut links = Vec::new();
    for h in 0..n_hosts {
        links.push(link(h, leaf(h / hpl), host_rate, delay));
    }
    for l in 0..leaves {
        for s in 0..spines {
            links.push(link(leaf(l), spine(s), fabric_rate, delay));
        }
    }
    let mut switches: Vec<SwitchSpec> = (0..leaves)
        .map(|l| SwitchSpec {
            name: format!("leaf{l}"),
            tier: 1,
            buffer: None,
        })
        .collect();
    switches.extend((0..spines).map(|s| SwitchSpec {
        name: format!("spine{s}"),
        tier: 2,
        buffer: None,
    }));
    TopoSpec {
        n_hosts,
        switches,
        links,
    }
}

/// k-ary fat-tree: hosts, edges, aggregations, cores.
pub fn fat_tree(k: usize, host_rate: BitRate, fabric_rate: BitRate, delay: SimTime) -> TopoSpec {
    fat_tree_with(k, k / 2, host_rate, fabric_rate, fabric_rate, delay)
}

/// A k-ary fat-tree with `hpe` hosts per edge switch (k/2: the full-bisection tree; more:
/// oversubscribed edges) and its own aggregation–core rate.
pub fn fat_tree_with(
    k: usize,
    hpe: usize,
    host_rate: BitRate,
    fabric_rate: BitRate,
    core_rate: BitRate,
    delay: SimTime,
) -> TopoSpec {
    let half = k / 2;
    let n_hosts = k * half * hpe;
    let n_edge = k * half;
    let n_agg = k * half;
    let n_core = half * half;
    let edge = |e: usize| n_hosts + e;
    let agg = |a: usize| n_hosts + n_edge + a;
    let core = |c: usize| n_hosts + n_edge + n_agg + c;
    let mut links = Vec::new();
    for h in 0..n_hosts {
        links.push(link(h, edge(h / hpe), host_rate, delay));
    }
    for e in 0..n_edge {
        let pod = e / half;
        for j in 0..half {
            links.push(link(edge(e), agg(pod * half + j), fabric_rate, delay));
        }
    }
    for a in 0..n_agg {
        let j = a % half;
        for c in 0..half {
            links.push(link(agg(a), core(j * half + c), core_rate, delay));
        }
    }
    let mut switches = Vec::new();
    for e in 0..n_edge {
        switches.push(SwitchSpec {
            name: format!("edge{e}"),
            tier: 1,
            buffer: None,
        });
    }
    for a in 0..n_agg {
        switches.push(SwitchSpec {
            name: format!("agg{a}"),
            tier: 2,
            buffer: None,
        });
    }
    for c in 0..n_core {
        switches.push(SwitchSpec {
            name: format!("core{c}"),
            tier: 3,
            buffer: None,
        });
    }
    TopoSpec {
        n_hosts,
        switches,
        links,
    }
}

/// Dumbbell: left hosts `0..left`, right hosts `left..left+right`, switches L and R joined by
/// `links` parallel bottleneck links.
pub fn dumbbell(
    left: usize,
    right: usize,
    host_rate: BitRate,
    bottleneck_rate: BitRate,
    delay: SimTime,
    bottleneck_delay: SimTime,
    n_links: usize,
) -> TopoSpec {
    let n_hosts = left + right;
    let (l, r) = (n_hosts, n_hosts + 1);
    let mut links = Vec::new();
    for h in 0..left {
        links.push(link(h, l, host_rate, delay));
    }
    for h in left..n_hosts {
        links.push(link(h, r, host_rate, delay));
    }
    for _ in 0..n_links {
        links.push(link(l, r, bottleneck_rate, bottleneck_delay));
    }
    TopoSpec {
        n_hosts,
        switches: vec![
            SwitchSpec {
                name: "L".into(),
                tier: 1,
                buffer: None,
            },
            SwitchSpec {
                name: "R".into(),
                tier: 1,
                buffer: None,
            },
        ],
        links,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degree(t: &TopoSpec, n: usize) -> usize {
        t.links
            .iter()
            .filter(|l| l.a.idx() == n || l.b.idx() == n)
            .count()
    }

    #[test]
    fn fat_tree_shape() {
        let r = BitRate::from_gbps(10);
        for k in [2usize, 4, 6, 8] {
            let t = fat_tree(k, r, r, SimTime::from_us(1));
            let c = TopologyConfig::FatTree {
                k: k as u32,
                host_rate: r,
                fabric_rate: r,
                core_rate: None,
                hosts_per_edge: None,
                link_delay: SimTime::from_us(1),
            };
            assert_eq!((c.n_hosts(), c.n_switches()), (t.n_hosts, t.switches.len()));
            assert_eq!(t.n_hosts, k * k * k / 4);
            assert_eq!(t.switches.len(), k * k + k * k / 4);
            // Every switch has k ports; every host one.
            for s in 0..t.switches.len() {
                assert_eq!(degree(&t, t.n_hosts + s), k, "k={k} switch {s}");
            }
            for h in 0..t.n_hosts {
                assert_eq!(degree(&t, h), 1);
            }
        }
        // k=4: host 5 hangs off edge 2 (pod 1).
        let t = fat_tree(4, r, r, SimTime::from_us(1));
        let l = &t.links[5];
        assert_eq!((l.a.idx(), l.b.idx()), (5, 16 + 2));
    }

    #[test]
    fn leaf_spine_shape() {
        let r = BitRate::from_gbps(10);
        let t = leaf_spine(4, 4, 4, r, r, SimTime::from_us(1));
        assert_eq!(t.n_hosts, 16);
        assert_eq!(t.switches.len(), 8);
        assert_eq!(t.links.len(), 16 + 16);
        assert_eq!(t.links[7].b.idx(), 16 + 1);
        for s in 0..8 {
            assert_eq!(degree(&t, 16 + s), if s < 4 { 8 } else { 4 });
        }
    }
}
