//! The windowed kernel: one run split into partitions of the network that advance in
//! lockstep windows, and give the bytes of the unpartitioned run for any partitioning.
//!
//! A **partition** owns a set of nodes: each switch with the hosts wired to it (a host's link
//! is never cut; a host with several links goes with the switch of its shortest one, and its
//! other links may be cut), in cells kept together (a fat-tree's pods: [`balanced_cells`]) dealt to
//! balance the partitions, or at random (seeded). Each
//! partition is a replica of the whole run ([`Sim`]) that handles only the events of its own
//! nodes; the state of other nodes stays untouched in it. What one node does to another
//! crosses a link, and the links between partitions (the **cut** links) become messages:
//! a packet put on a cut link goes to the far end's partition, which queues it on that
//! link's wire (the receiving node owns it) and schedules its arrival under the key it
//! would have had anyway (its link and its index on it); a PFC frame, a dependency's news
//! and a dependent flow's start travel as events carrying the key their sender gave them.
//!
//! **Windows.** From `T`, the earliest pending time of any partition, every partition
//! handles its events before `T + L`, where the lookahead `L` is the shortest delay of a cut
//! link: anything one partition sends another arrives at least `L` after it is sent, so no
//! partition can receive, during a window, anything due within it. Windows also end at the
//! grid points (where the run decides whether it has ended, from every partition's counts)
//! and at the run's own events (failures, route recomputations), which every partition
//! handles, first among the events of their instant. Messages are delivered between windows,
//! in any order: every event's key is fixed by where it came from, so the order in which a
//! partition handles its events is the one the sequential kernel gives them, whatever the
//! windows, the partitioning or the order partitions run in (they run in a shuffled order
//! here, single-threaded, to show it).
//!
//! At the end the partitions' records are merged into one run: each port, switch and
//! counter from its owner, each flow's sender half from its source's partition and its
//! receiver half from its destination's, drops (counted where they happen) summed.
//!
//! Observers: packet traces are captured per partition with their event's key and merged
//! in the run's order; the time series is sampled between windows from every partition's
//! state; a packet's delay-attribution record travels with it, and a unit's split between
//! `sender` and `recovery` takes in the losses every partition saw before it finished.
//!
//! The partitions run one after another on one thread (in a shuffled order each window), or
//! at once on several (`drive`). Messages cross as values, or packed into bytes and unpacked
//! (`wire`, `[run] exchange = "bytes"`), as they will between processes.
//!
//! Processes: the partitions of a run may be spread over processes (MPI ranks, [`Procs`]),
//! each running the same driver; per window they agree on the next time and the counts by
//! collectives, exchange the messages between their partitions as bytes, and at the end send
//! their partitions' state (`state`) to process 0, which merges.
//!
//! A time series sample on several processes gathers the sampled ports and flows at process
//! 0; with failures, whether the run has ended with unreachable units joins every process's
//! view of their ends.
//!
//! Not yet: the probe; every flow is kept (no release of finished flows).

mod drive;
mod merge;
mod state;
mod wire;

pub use drive::{WindowStats, Windowed};

use super::*;
use crate::engine::RngStream;
use std::sync::Arc;

/// Which partition owns each node of a network, and the lookahead between partitions.
#[derive(Clone, Debug)]
pub struct PartitionMap {
    /// Per node: its partition.
    pub owner: Vec<u16>,
    pub parts: usize,
    /// The shortest delay of a link between two partitions (MAX when no link is cut).
    pub lookahead: SimTime,
    /// Links (ports) whose ends are in different partitions.
    pub cut_links: usize,
}

impl PartitionMap {
    /// `parts` partitions of `net`'s nodes, each switch with the hosts wired to it. `seed` 0:
    /// balanced ([`balanced_cells`]: the switches below the top tier joined by their links
    /// into cells, a fat-tree's pods; each cell dealt, largest first, to the least loaded
    /// partition); another value: each switch to a partition drawn at random (every partition
    /// gets at least one switch when there are enough). `tiers` is each switch's tier (1 edge,
    /// 2 aggregation, 3 core). Errors when a link of zero delay would be cut (it leaves no
    /// lookahead).
    pub fn new(
        net: &Network,
        tiers: &[u8],
        parts: usize,
        seed: u64,
    ) -> Result<PartitionMap, String> {
        let n_sw = net.switches.len();
        if parts == 0 || parts > u16::MAX as usize {
            return Err(format!("run.partitions: must be in 1..=65535, got {parts}"));
        }
        let mut sw_part: Vec<u16> = vec![0; n_sw];
        if seed > 0 {
            let mut r = RngStream::new(seed, "partition-map");
            for (s, p) in sw_part.iter_mut().enumerate() {
                *p = if s < parts && n_sw >= parts {
                    // The first `parts` switches seed every partition, then a shuffle.
                    s as u16
                } else {
                    r.below(parts as u64) as u16
                };
            }
            for i in (1..n_sw).rev() {
                let j = r.below(i as u64 + 1) as usize;
                sw_part.swap(i, j);
            }
        } else {
            let (cell, weight) = balanced_cells(net, tiers);
            let mut order: Vec<usize> = (0..weight.len()).collect();
            order.sort_by_key(|&c| (std::cmp::Reverse(weight[c]), c));
            let mut load = vec![0u64; parts];
            let mut cell_part = vec![0u16; weight.len()];
            for c in order {
                let p = (0..parts)
                    .min_by_key(|&p| (load[p], p))
                    .expect("a partition");
                load[p] += weight[c];
                cell_part[c] = p as u16;
            }
            for s in 0..n_sw {
                sw_part[s] = cell_part[cell[s]];
            }
        }
        let mut owner = vec![0u16; net.nodes.len()];
        for (s, &p) in sw_part.iter().enumerate() {
            owner[net.n_hosts + s] = p;
        }
        for h in 0..net.n_hosts {
            // A multi-homed host goes with the switch of its shortest link (a GPU with its
            // server's switch), so that the links left to cut are the longer ones (its NICs')
            // and the lookahead stays theirs; the first such link on a tie.
            let home = net
                .ports_of_host(h as u32)
                .iter()
                .copied()
                .min_by_key(|&p| (net.ports[p.idx()].delay, p.idx()))
                .unwrap_or(net.host_port(h as u32));
            let peer = net.ports[home.idx()].peer_node;
            // A host wired to another host: the lower-numbered one's partition.
            owner[h] = if net.is_host(peer) {
                (peer.idx().min(h) % parts) as u16
            } else {
                owner[peer.idx()]
            };
        }
        let (mut lookahead, mut cut) = (SimTime::MAX, 0);
        for (i, p) in net.ports.iter().enumerate() {
            if owner[p.node.idx()] != owner[p.peer_node.idx()] {
                if p.delay == SimTime::ZERO {
                    return Err(format!(
                        "run.partitions: the link from {} to {} (port {i}) has no delay and \
                         would join two partitions; a partitioned run needs a delay on every \
                         link between partitions",
                        net.nodes[p.node.idx()].name,
                        net.nodes[p.peer_node.idx()].name
                    ));
                }
                lookahead = lookahead.min(p.delay);
                cut += 1;
            }
        }
        Ok(PartitionMap {
            owner,
            parts,
            lookahead,
            cut_links: cut,
        })
    }
}

/// Cells of switches that a balanced partitioning keeps together: switches below the top
/// tier joined by their links (a fat-tree's pods; a leaf-spine's leaves stay apart, having no
/// links between them), and switches joined by a link without delay (it cannot be cut). Every
/// top-tier switch is a cell of its own. Returns each switch's cell and each cell's weight:
/// the ports of its switches, hosts' included (what it forwards grows with them).
pub fn balanced_cells(net: &Network, tiers: &[u8]) -> (Vec<usize>, Vec<u64>) {
    let n_sw = net.switches.len();
    let top = tiers.iter().copied().max().unwrap_or(0);
    let mut parent: Vec<usize> = (0..n_sw).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let tier = |s: usize| tiers.get(s).copied().unwrap_or(top);
    for p in &net.ports {
        if net.is_host(p.node) || net.is_host(p.peer_node) {
            continue;
        }
        let (a, b) = (net.switch_idx(p.node), net.switch_idx(p.peer_node));
        if (tier(a) < top && tier(b) < top) || p.delay == SimTime::ZERO {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            // The smaller index roots the cell, so cells are numbered the same every time.
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut id = vec![usize::MAX; n_sw];
    let mut cell = vec![0; n_sw];
    let mut weight = Vec::new();
    for (s, c) in cell.iter_mut().enumerate() {
        let r = find(&mut parent, s);
        if id[r] == usize::MAX {
            id[r] = weight.len();
            weight.push(0);
        }
        *c = id[r];
        weight[id[r]] += net.nodes[net.n_hosts + s].ports.len() as u64;
    }
    (cell, weight)
}

/// The processes one run is spread over (MPI ranks), as the windowed kernel needs them. Each
/// process holds some of the partitions ([`Procs::holds`]) and runs the same driver, which
/// decides alike in every process from what these collectives give them all; they are
/// called from one thread of each process at a time, in the same order everywhere.
pub trait Procs: Send + Sync {
    /// This process's number, `0..size`.
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Sends `out[r]` to process `r` (this process's own entry is not sent); returns what
    /// each process sent this one (its own entry empty).
    fn all_to_all(&self, out: &[Vec<u8>]) -> Vec<Vec<u8>>;
    /// Element-wise minimum over every process, in place.
    fn min(&self, v: &mut [u64]);
    /// Element-wise sum over every process, in place.
    fn sum(&self, v: &mut [u64]);
    /// Every process's `mine`, in rank order, at process 0 (None elsewhere).
    fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>>;

    /// The process that holds partition `p`: partitions are dealt round-robin.
    fn holder(&self, p: usize) -> usize {
        p % self.size()
    }

    /// Whether this process holds partition `p`.
    fn holds(&self, p: usize) -> bool {
        self.holder(p) == self.rank()
    }
}

/// What a partition's replica knows of the partitioning, and what it sends the others.
pub(in crate::sim) struct Part {
    owner: Arc<Vec<u16>>,
    me: u16,
    /// Nothing sent may arrive before this (the current window's end).
    window_end: SimTime,
    /// What this partition sent in the current window, by destination partition, and the
    /// destinations it sent anything to.
    outbox: Vec<Vec<Remote>>,
    touched: Vec<u16>,
}

/// What a packet takes with it to another partition besides itself: the in-band telemetry
/// it carries (runs with telemetry) and its delay-attribution record (runs with attribution),
/// both kept in side tables by its replica.
#[derive(serde::Serialize, serde::Deserialize)]
pub(in crate::sim) struct Carried {
    pub int: Option<Box<crate::net::int::IntStack>>,
    pub trace: Option<Box<attrib::Trace>>,
}

/// Something one partition sends another.
#[derive(serde::Serialize, serde::Deserialize)]
pub(in crate::sim) enum Remote {
    /// The `index`-th packet over port `link`'s link, due at its far end at `at`.
    Packet {
        link: PortId,
        at: SimTime,
        index: u64,
        pkt: Packet,
        /// What travels with it beside the packet.
        carried: Carried,
    },
    /// An event under the key its sender gave it.
    Event { at: SimTime, tie: u64, ev: Ev },
}

impl Part {
    /// Whether node `n` is this partition's.
    #[inline(always)]
    pub(in crate::sim) fn owns(&self, n: NodeId) -> bool {
        self.owner[n.idx()] == self.me
    }

    /// Sends the `index`-th packet over `link` to the partition of `to` (the far end).
    #[inline]
    pub(in crate::sim) fn send_packet(
        &mut self,
        link: PortId,
        at: SimTime,
        index: u64,
        pkt: Packet,
        to: NodeId,
        carried: Carried,
    ) {
        assert!(
            at >= self.window_end,
            "a packet over link {link} due at {at}, inside the window ending at {}: the \
             lookahead is wrong",
            self.window_end
        );
        let to = self.owner[to.idx()];
        if self.outbox[to as usize].is_empty() {
            self.touched.push(to);
        }
        self.outbox[to as usize].push(Remote::Packet {
            link,
            at,
            index,
            pkt,
            carried,
        });
    }
}

impl Sim {
    /// Makes this run the replica of partition `me` of `n` under `owner` (node →
    /// partition): without a time series of its own (the driver samples every partition),
    /// keeping its packet captures and delay attribution's losses for the merge.
    pub(in crate::sim) fn make_replica(&mut self, owner: Arc<Vec<u16>>, me: u16, n: usize) {
        self.sampler = None;
        self.sample_at = SimTime::MAX;
        if let Some(w) = &mut self.pcap {
            w.defer();
        }
        if let Some(a) = &mut self.attrib {
            a.for_partition();
        }
        self.part = Some(Box::new(Part {
            owner,
            me,
            window_end: SimTime::ZERO,
            outbox: (0..n).map(|_| Vec::new()).collect(),
            touched: Vec::new(),
        }));
    }

    /// Whether node `n` is handled here (always, unpartitioned).
    #[inline(always)]
    pub(in crate::sim) fn owns(&self, n: NodeId) -> bool {
        self.part.as_ref().is_none_or(|p| p.owns(n))
    }

    /// Whether host `h` is handled here.
    #[inline(always)]
    pub(in crate::sim) fn owns_host(&self, h: u32) -> bool {
        self.owns(NodeId(h))
    }

    /// Schedules `ev` at `t` for `node` (here, or sent to its partition with the key it
    /// takes here). What crosses to another partition must be due after the window.
    #[inline]
    pub(in crate::sim) fn push_to(&mut self, node: NodeId, t: SimTime, ev: Ev) {
        match &mut self.part {
            Some(part) if !part.owns(node) => {
                assert!(
                    t >= part.window_end,
                    "{ev:?} for node {node} due at {t}, inside the window ending at {}",
                    part.window_end
                );
                let tie = self.ev.next_tie(t);
                let to = part.owner[node.idx()];
                if part.outbox[to as usize].is_empty() {
                    part.touched.push(to);
                }
                part.outbox[to as usize].push(Remote::Event { at: t, tie, ev });
            }
            _ => self.ev.push(t, ev),
        }
    }

    /// Takes in what another partition sent.
    fn receive(&mut self, r: Remote) {
        match r {
            Remote::Packet {
                link,
                at,
                index,
                mut pkt,
                carried,
                ..
            } => {
                if let (Some(t), Some(st)) = (&mut self.telemetry, carried.int) {
                    t.attach_stack(&mut pkt, *st);
                }
                if let (Some(a), Some(tr)) = (&mut self.attrib, carried.trace) {
                    pkt.uid = a.put_trace(&tr);
                }
                let port = &mut self.net.ports[link.idx()];
                if port.wire.is_empty() {
                    self.ev.push_arrival(at, link, index);
                }
                port.wire.push_back(InFlight { at, pkt });
                port.wire_bytes += pkt.size as u64;
                // This replica's count of the link's packets (the sender's is merged).
                port.stats.tx_pkts = index + 1;
            }
            Remote::Event { at, tie, ev, .. } => {
                if matches!(ev, Ev::Start(_) | Ev::JoinNews(_) | Ev::CalcDone(_)) {
                    self.starts_pending += 1;
                }
                self.ev.push_keyed(at, tie, ev);
            }
        }
    }

    /// The earliest time something is due here: an event, or a workload arrival not pushed
    /// yet (None: nothing).
    fn next_due(&mut self) -> Option<SimTime> {
        let a = self.ev.peek_time();
        let b = match self.draining || self.next_arrival == SimTime::MAX {
            true => None,
            false => Some(self.next_arrival),
        };
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handles every event here due before `end`.
    fn run_window(&mut self, end: SimTime) {
        if let Some(p) = &mut self.part {
            p.window_end = end;
        }
        while let Some((t, ev)) = self.ev.pop_before(end) {
            self.now = t;
            self.dispatch_keyed(ev, &mut |_, _| {});
        }
    }
}
