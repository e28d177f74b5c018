//! The network: nodes, ports (each the egress end of a full-duplex link), switch state (MMU,
//! load balancer, salt, random stream) and the routing tables.
//!
//! ```text
//!   host NIC port ──wire──▶ switch ingress ─▶ route + LB ─▶ MMU admit ─▶ egress queues
//!        ▲                                                                   │ scheduler
//!        │                                                                   ▼
//!   transport pull ◀── host ◀──wire── ... ◀── serializer ◀──────────── dequeue (ECN, release)
//! ```
//!
//! This module owns the static structure and the per-switch state; the event-driven behaviour
//! (what happens when a packet arrives or a transmission ends) is in `sim`.

pub mod buffer;
pub mod int;
pub mod lb;
pub mod packet;
pub mod paths;
pub mod pin;
pub mod port;
pub mod routing;

use crate::engine::RngStream;
use crate::ids::{NodeId, PortId};
use crate::topology::TopoSpec;
use buffer::{BufferConfig, Headroom, Mmu};
use lb::{LbKind, LbParams, LoadBalancer};
use port::{EcnConfig, MAX_QUEUES, Port, SchedulerConfig};
use routing::{Graph, Routes};
use serde::{Deserialize, Serialize};

/// `[switch.pfc]`: priority flow control.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct PfcConfig {
    /// Enable PFC. Default false.
    pub enabled: bool,
    /// Lossless priorities (queue indices). Default: every queue.
    pub priorities: Option<Vec<u8>>,
    /// Wire size of a pause frame, 1B..=1500B. Default 64B (the minimum Ethernet frame; the
    /// HPCC ns-3 simulator's are 43B).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_size: Option<crate::units::Bytes>,
}

impl PfcConfig {
    /// Bitmask of lossless priorities given `nq` queues.
    pub fn mask(&self, nq: u8) -> u8 {
        if !self.enabled {
            return 0;
        }
        match &self.priorities {
            None => ((1u16 << nq) - 1) as u8,
            Some(v) => v.iter().fold(0u8, |m, p| m | (1 << p)),
        }
    }
}

fn d_queues() -> u8 {
    1
}

/// `[switch]`: queueing, buffering, marking and load balancing of every switch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Priority queues per port, 1..=8. Default 1.
    #[serde(default = "d_queues")]
    pub queues: u8,
    /// Egress scheduler. Default strict priority.
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    #[serde(default)]
    pub buffer: BufferConfig,
    /// ECN marking. Default: DCTCP step marking at K = 97,500 B (65 × 1500 B, DCTCP's 10 Gbps
    /// guideline), on enqueue. Only ECN-capable packets are marked.
    #[serde(default = "default_ecn")]
    pub ecn: EcnConfig,
    /// ECN marking for the ports of given rates (the HPCC ns-3 simulator's `KMIN_MAP`,
    /// `KMAX_MAP`, `PMAX_MAP`): a switch port whose link runs at one of these rates marks
    /// with its entry, the others with `ecn`. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ecn_by_rate: Vec<EcnForRate>,
    #[serde(default)]
    pub pfc: PfcConfig,
    /// `"ecmp"` or `"spray"`. Default ECMP. Schemes may override.
    #[serde(default)]
    pub load_balancer: LbKind,
}

/// One entry of `[switch] ecn_by_rate`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnForRate {
    pub rate: crate::units::BitRate,
    pub ecn: EcnConfig,
}

pub fn default_ecn() -> EcnConfig {
    EcnConfig::Step {
        k: crate::units::Bytes(97_500),
        at: port::MarkAt::Enqueue,
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            queues: 1,
            scheduler: SchedulerConfig::Strict,
            buffer: BufferConfig::default(),
            ecn: default_ecn(),
            ecn_by_rate: Vec::new(),
            pfc: PfcConfig::default(),
            load_balancer: LbKind::Ecmp,
        }
    }
}

impl SwitchConfig {
    /// The ECN marking of a switch port whose link runs at `rate`.
    pub fn ecn_for(&self, rate: crate::units::BitRate) -> EcnConfig {
        self.ecn_by_rate
            .iter()
            .find(|e| e.rate == rate)
            .map_or(self.ecn, |e| e.ecn)
    }

    /// Checks ranges; returns `(key, message)`.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.queues == 0 || self.queues as usize > MAX_QUEUES {
            return Err((
                "queues".into(),
                format!("must be in 1..={MAX_QUEUES}, got {}", self.queues),
            ));
        }
        self.scheduler
            .validate(self.queues as usize)
            .map_err(|m| ("scheduler".to_string(), m))?;
        self.buffer
            .validate()
            .map_err(|(k, m)| (format!("buffer.{k}"), m))?;
        self.ecn.validate().map_err(|m| ("ecn".to_string(), m))?;
        for (i, e) in self.ecn_by_rate.iter().enumerate() {
            e.ecn
                .validate()
                .map_err(|m| (format!("ecn_by_rate[{i}].ecn"), m))?;
            if self.ecn_by_rate[..i].iter().any(|x| x.rate == e.rate) {
                return Err((
                    format!("ecn_by_rate[{i}].rate"),
                    format!("{} is listed twice", e.rate),
                ));
            }
        }
        if let Some(ps) = &self.pfc.priorities {
            for p in ps {
                if *p >= self.queues {
                    return Err((
                        "pfc.priorities".into(),
                        format!("priority {p} does not exist with {} queues", self.queues),
                    ));
                }
            }
        }
        if let Some(f) = self.pfc.frame_size
            && !(1..=1500).contains(&f.0)
        {
            return Err((
                "pfc.frame_size".into(),
                format!("must be in 1B..=1500B, got {f}"),
            ));
        }
        Ok(())
    }
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch { tier: u8 },
}

/// A node and its ports.
#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    pub name: String,
    pub ports: Vec<PortId>,
}

/// Per-switch state.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Switch {
    pub mmu: Mmu,
    pub lb: LoadBalancer,
    /// Random stream for spraying and RED marking.
    pub rng: RngStream,
    /// Drops by reason: [lossy, lossless-headroom overflow].
    pub drops: [u64; 2],
    pub pfc_sent: u64,
}

/// The whole network.
#[derive(Debug)]
pub struct Network {
    pub n_hosts: usize,
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    /// Index of each port within its node.
    pub local: Vec<u16>,
    /// Each host's NIC port (a flat copy of its node's first port, read per packet).
    host_ports: Vec<PortId>,
    /// Some host has several ports (multi-NIC servers, dual-ToR, multi-plane): hosts then
    /// pick the port each flow sends from ([`Network::egress`]) and every host port has its
    /// own transmit queues ([`Network::slot`]).
    multi: bool,
    /// With `multi`: each port's transmit slot (a host's first port: the host's number; its
    /// others: `n_hosts..`), and each host's salt for picking among equal ports.
    slots: Vec<u32>,
    n_slots: usize,
    host_salt: Vec<u64>,
    pub switches: Vec<Switch>,
    pub routes: Routes,
    pub nq: u8,
    pub lossless: u8,
    /// How the network changed during the run (runs with `[[failures]]`; the ideal FCT is
    /// computed in the network of each flow's lifetime).
    pub history: Option<Box<paths::NetHistory>>,
}

/// Options for building a network beyond the switch config.
pub struct BuildOpts<'a> {
    pub switch: &'a SwitchConfig,
    /// Every switch's load balancer.
    pub lb: LbParams,
    pub seed: u64,
    /// Largest wire packet, for the automatic PFC headroom.
    pub max_packet: u64,
    /// Floor serialization times to whole nanoseconds (`[quirks] ns_floor`).
    pub ns_floor: bool,
}

impl Network {
    /// Recomputes the routes over the links that are up (after `[[failures]]`); destinations
    /// a switch can no longer reach get no next hop.
    pub fn reroute(&mut self) {
        let ports_of: Vec<Vec<PortId>> = self
            .nodes
            .iter()
            .map(|n| {
                n.ports
                    .iter()
                    .copied()
                    .filter(|p| !self.ports[p.idx()].down)
                    .collect()
            })
            .collect();
        let peer_node: Vec<NodeId> = self.ports.iter().map(|p| p.peer_node).collect();
        self.routes = Routes::build_with(
            &Graph {
                n_hosts: self.n_hosts,
                n_nodes: self.nodes.len(),
                ports_of: &ports_of,
                peer_node: &peer_node,
            },
            true,
        )
        .expect("partial routes always build");
    }

    pub fn build(t: &TopoSpec, o: &BuildOpts) -> Result<Network, String> {
        let n_nodes = t.n_hosts + t.switches.len();
        let nq = o.switch.queues;
        let mut nodes: Vec<Node> = (0..t.n_hosts)
            .map(|h| Node {
                kind: NodeKind::Host,
                name: format!("host{h}"),
                ports: Vec::new(),
            })
            .collect();
        nodes.extend(t.switches.iter().map(|s| Node {
            kind: NodeKind::Switch { tier: s.tier },
            name: s.name.clone(),
            ports: Vec::new(),
        }));
        let mut ports = Vec::with_capacity(t.links.len() * 2);
        let mut local = Vec::with_capacity(t.links.len() * 2);
        for l in &t.links {
            if l.a.idx() >= n_nodes || l.b.idx() >= n_nodes || l.a == l.b {
                return Err(format!("bad link {} -- {}", l.a, l.b));
            }
            let pa = PortId(ports.len() as u32);
            let pb = PortId(ports.len() as u32 + 1);
            for (n, me, peer) in [(l.a, pa, pb), (l.b, pb, pa)] {
                let is_host = n.idx() < t.n_hosts;
                let (sched, ecn) = if is_host {
                    (SchedulerConfig::Strict, EcnConfig::None)
                } else {
                    (o.switch.scheduler.clone(), o.switch.ecn_for(l.rate))
                };
                let mut port = Port::new(n, peer, l.rate, l.delay, nq as usize, &sched, ecn);
                port.loss = l.loss;
                ports.push(port);
                local.push(nodes[n.idx()].ports.len() as u16);
                nodes[n.idx()].ports.push(me);
            }
        }
        for (h, n) in nodes.iter().enumerate().take(t.n_hosts) {
            if n.ports.is_empty() {
                return Err(format!("host {h} has no link"));
            }
        }
        if o.ns_floor {
            for p in ports.iter_mut() {
                p.floor_to_ns();
            }
        }
        let peer_node: Vec<NodeId> = ports.iter().map(|p| ports[p.peer.idx()].node).collect();
        for (p, &n) in ports.iter_mut().zip(&peer_node) {
            p.peer_node = n;
        }
        let ports_of: Vec<Vec<PortId>> = nodes.iter().map(|n| n.ports.clone()).collect();
        let routes = Routes::build(&Graph {
            n_hosts: t.n_hosts,
            n_nodes,
            ports_of: &ports_of,
            peer_node: &peer_node,
        })?;
        let lossless = o.switch.pfc.mask(nq);
        let ecmp_rng = RngStream::new(o.seed, "ecmp-salt");
        let mut switches = Vec::with_capacity(t.switches.len());
        for s in 0..t.switches.len() {
            let node = &nodes[t.n_hosts + s];
            let headroom: Vec<u64> = node
                .ports
                .iter()
                .map(|&p| match o.switch.buffer.headroom {
                    Headroom::Bytes(b) => b.0,
                    Headroom::Auto => {
                        let port = &ports[p.idx()];
                        2 * port.rate.bytes_in(port.delay) + 2 * o.max_packet + 64
                    }
                })
                .collect();
            let salt = ecmp_rng.child(s as u64).next_u64();
            switches.push(Switch {
                mmu: Mmu::new(
                    &o.switch.buffer.with_size(t.switches[s].buffer),
                    headroom,
                    nq as usize,
                    lossless,
                ),
                lb: LoadBalancer::new(&o.lb, salt),
                rng: RngStream::new(o.seed, "switch").child(s as u64),
                drops: [0; 2],
                pfc_sent: 0,
            });
        }
        let host_ports = nodes[..t.n_hosts].iter().map(|n| n.ports[0]).collect();
        let multi = nodes[..t.n_hosts].iter().any(|n| n.ports.len() > 1);
        let (mut slots, mut n_slots, mut host_salt) = (Vec::new(), t.n_hosts, Vec::new());
        if multi {
            slots = vec![u32::MAX; ports.len()];
            let salts = RngStream::new(o.seed, "host-ecmp-salt");
            for (h, n) in nodes[..t.n_hosts].iter().enumerate() {
                slots[n.ports[0].idx()] = h as u32;
                for &p in &n.ports[1..] {
                    slots[p.idx()] = n_slots as u32;
                    n_slots += 1;
                }
                host_salt.push(salts.child(h as u64).next_u64());
            }
        }
        Ok(Network {
            n_hosts: t.n_hosts,
            nodes,
            ports,
            local,
            host_ports,
            multi,
            slots,
            n_slots,
            host_salt,
            switches,
            routes,
            history: None,
            nq,
            lossless,
        })
    }

    /// The NIC port of host `h` (its first, when it has several: see [`Network::egress`]).
    #[inline]
    pub fn host_port(&self, h: u32) -> PortId {
        self.host_ports[h as usize]
    }

    /// Whether some host has several ports.
    #[inline]
    pub fn multi_homed(&self) -> bool {
        self.multi
    }

    /// The port host `src` sends a packet of the connection (`src`, `dst`, `sport`, `dport`)
    /// from: its only port; or, for a multi-homed host, among its ports whose switch is
    /// closest to `dst` over links that are up, the fastest (a GPU's port on its server's
    /// switch before its NIC), and among those the one a hash of the connection picks (so a
    /// connection keeps its port while the network does not change); its first port that is
    /// up if none reaches `dst`.
    #[inline]
    pub fn egress(&self, src: u32, dst: u32, sport: u16, dport: u16) -> PortId {
        if !self.multi {
            return self.host_ports[src as usize];
        }
        self.egress_multi(src, dst, sport, dport)
    }

    #[inline(never)]
    fn egress_multi(&self, src: u32, dst: u32, sport: u16, dport: u16) -> PortId {
        let mine = &self.nodes[src as usize].ports;
        if mine.len() == 1 {
            return mine[0];
        }
        let c = self.routes.host_hops(src, dst);
        match c.len() {
            0 => mine
                .iter()
                .copied()
                .find(|p| !self.ports[p.idx()].down)
                .unwrap_or(mine[0]),
            1 => c[0],
            _ => {
                // The fastest of the closest (a server switch before a NIC the same number
                // of hops away), then a hash of the connection.
                let best = self.fastest(c);
                let n = c
                    .iter()
                    .filter(|p| self.ports[p.idx()].rate == best)
                    .count();
                let salt = self.host_salt[src as usize];
                let k = lb::ecmp_index(src, dst, 0, sport, dport, salt, n);
                c.iter()
                    .copied()
                    .filter(|p| self.ports[p.idx()].rate == best)
                    .nth(k)
                    .expect("k < n")
            }
        }
    }

    /// The highest link rate among ports `c`.
    fn fastest(&self, c: &[PortId]) -> crate::units::BitRate {
        c.iter()
            .map(|p| self.ports[p.idx()].rate)
            .max()
            .unwrap_or_default()
    }

    /// The transmit slot (NIC queues) of host `h`'s port `p`: `h` for its first port.
    #[inline]
    pub fn slot(&self, h: usize, p: PortId) -> usize {
        if !self.multi {
            return h;
        }
        self.slots[p.idx()] as usize
    }

    /// Transmit slots: one per host port.
    pub fn n_slots(&self) -> usize {
        self.n_slots
    }

    /// The ports of host `h`.
    pub fn ports_of_host(&self, h: u32) -> &[PortId] {
        &self.nodes[h as usize].ports
    }

    #[inline]
    pub fn is_host(&self, n: NodeId) -> bool {
        n.idx() < self.n_hosts
    }

    /// Switch index of node `n` (which must be a switch).
    #[inline]
    pub fn switch_idx(&self, n: NodeId) -> usize {
        n.idx() - self.n_hosts
    }

    /// The first of the ports host `src` may send to `dst` from.
    pub fn first_egress(&self, src: u32, dst: u32) -> PortId {
        let c = self.routes.host_hops(src, dst);
        let best = self.fastest(c);
        match c.iter().find(|p| self.ports[p.idx()].rate == best) {
            Some(&p) if self.multi => p,
            _ => self.egress(src, dst, 0, 0),
        }
    }

    /// Whether host `src` can reach host `dst` now: its link is up and, from its switch on,
    /// the routes in force lead over links that are up to `dst`.
    pub fn reachable(&self, src: u32, dst: u32) -> bool {
        let hp = self.first_egress(src, dst);
        if self.ports[hp.idx()].down {
            return false;
        }
        let mut at = self.ports[hp.idx()].peer;
        for _ in 0..self.nodes.len() {
            let n = self.ports[at.idx()].node;
            if n.idx() == dst as usize {
                return true;
            }
            let hops = self.routes.next_hops(n, dst);
            let Some(p) = hops.iter().find(|p| !self.ports[p.idx()].down) else {
                return false;
            };
            at = self.ports[p.idx()].peer;
        }
        false
    }

    /// A shortest path from host `src` to host `dst` as the sequence of egress ports it
    /// crosses, always taking the first candidate (all candidates are equivalent in the
    /// symmetric topologies built here).
    pub fn first_path(&self, src: u32, dst: u32) -> Vec<PortId> {
        let first = self.first_egress(src, dst);
        let mut path = vec![first];
        let mut node = self.ports[first.idx()].peer;
        loop {
            let n = self.ports[node.idx()].node;
            if n.idx() == dst as usize {
                break;
            }
            let hops = self.routes.next_hops(n, dst);
            let p = hops[0];
            path.push(p);
            node = self.ports[p.idx()].peer;
            if path.len() > self.nodes.len() {
                break;
            }
        }
        path
    }
}
