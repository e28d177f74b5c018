//! The windowed kernel: one run split into partitions of the network that advance in
//! lockstep windows, and give the bytes of the unpartitioned run for any partitioning.
//!
//! A **partition** owns a set of nodes: each switch with the hosts wired to it (a host's link
//! is never cut), assigned round robin over the switches or at random (seeded). Each
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
//! Not yet: threads and processes (the partitions run one after another), and the probe;
//! every flow is kept (no release of finished flows).

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
    /// `parts` partitions of `net`'s nodes: each switch with the hosts wired to it, switches
    /// dealt round robin in index order (`seed` 0) or each to a partition drawn at random
    /// (`seed` > 0; every partition gets at least one switch when there are enough). Errors
    /// when a link of zero delay would be cut (it leaves no lookahead).
    pub fn new(net: &Network, parts: usize, seed: u64) -> Result<PartitionMap, String> {
        let n_sw = net.switches.len();
        if parts == 0 || parts > u16::MAX as usize {
            return Err(format!("run.partitions: must be in 1..=65535, got {parts}"));
        }
        let mut sw_part: Vec<u16> = (0..n_sw).map(|s| (s % parts) as u16).collect();
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
        }
        let mut owner = vec![0u16; net.nodes.len()];
        for (s, &p) in sw_part.iter().enumerate() {
            owner[net.n_hosts + s] = p;
        }
        for h in 0..net.n_hosts {
            let peer = net.ports[net.host_port(h as u32).idx()].peer_node;
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

/// What a partition's replica knows of the partitioning, and what it sends the others.
pub(in crate::sim) struct Part {
    owner: Arc<Vec<u16>>,
    me: u16,
    /// Nothing sent may arrive before this (the current window's end).
    window_end: SimTime,
    outbox: Vec<Remote>,
}

/// What a packet takes with it to another partition besides itself: the in-band telemetry
/// it carries (runs with telemetry) and its delay-attribution record (runs with attribution),
/// both kept in side tables by its replica.
pub(in crate::sim) struct Carried {
    pub int: Option<Box<crate::net::int::IntStack>>,
    pub trace: Option<Box<attrib::Trace>>,
}

/// Something one partition sends another.
pub(in crate::sim) enum Remote {
    /// The `index`-th packet over port `link`'s link, due at its far end at `at`.
    Packet {
        to: u16,
        link: PortId,
        at: SimTime,
        index: u64,
        pkt: Packet,
        /// What travels with it beside the packet.
        carried: Carried,
    },
    /// An event under the key its sender gave it.
    Event {
        to: u16,
        at: SimTime,
        tie: u64,
        ev: Ev,
    },
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
        self.outbox.push(Remote::Packet {
            to: self.owner[to.idx()],
            link,
            at,
            index,
            pkt,
            carried,
        });
    }
}

impl Sim {
    /// Makes this run the replica of partition `me` under `owner` (node → partition).
    pub(in crate::sim) fn set_partition(&mut self, owner: Arc<Vec<u16>>, me: u16) {
        self.part = Some(Box::new(Part {
            owner,
            me,
            window_end: SimTime::ZERO,
            outbox: Vec::new(),
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
                part.outbox.push(Remote::Event {
                    to: part.owner[node.idx()],
                    at: t,
                    tie,
                    ev,
                });
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
                if matches!(ev, Ev::StartFlow(_) | Ev::GroupDone(_)) {
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
        while let Some(t) = self.ev.peek_time()
            && t < end
        {
            let (t, ev) = self.ev.pop().expect("peeked");
            self.now = t;
            self.dispatch_keyed(ev, &mut |_, _| {});
        }
    }
}

/// What the windowed kernel measured of its own work.
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowStats {
    /// Windows run (each ended by a barrier).
    pub windows: u64,
    /// Messages between partitions (packets over cut links, PFC frames, dependencies).
    pub messages: u64,
}

/// A run split into partitions, run window by window (see the module).
pub struct Windowed {
    parts: Vec<Sim>,
    /// The time series (`[timeseries]`), sampled from every partition between windows.
    sampler: Option<Box<timeseries::Sampler>>,
    map: PartitionMap,
    shuffle: RngStream,
    /// The instants of the run's own events (failures and their route recomputations).
    run_events: Vec<SimTime>,
    pub stats: WindowStats,
}

impl Windowed {
    /// The run of which `parts` are replicas (built alike, one per partition of `map`).
    pub fn new(mut parts: Vec<Sim>, map: PartitionMap, seed: u64) -> Result<Windowed, String> {
        assert_eq!(parts.len(), map.parts, "one replica per partition");
        let first = &parts[0];
        if first.retire.is_some() {
            return Err("run.partitions: partitioned runs keep every flow (no retiring)".into());
        }
        // The time series is taken by the driver from every partition's state at once;
        // packet traces and delay attribution are kept per partition and merged.
        let sampler = parts[0].sampler.take();
        for s in parts.iter_mut() {
            s.sampler = None;
            s.sample_at = SimTime::MAX;
            if let Some(w) = &mut s.pcap {
                w.defer();
            }
            if let Some(a) = &mut s.attrib {
                a.for_partition();
            }
        }
        let owner = Arc::new(map.owner.clone());
        for (i, s) in parts.iter_mut().enumerate() {
            s.set_partition(owner.clone(), i as u16);
        }
        let conv = parts[0].convergence;
        let mut run_events: Vec<SimTime> = Vec::new();
        // Failures are scheduled as run events at setup; each is followed by a reroute.
        run_events.extend(parts[0].fail_at.iter().flat_map(|&t| [t, t + conv]));
        run_events.sort();
        run_events.dedup();
        Ok(Windowed {
            parts,
            sampler,
            map,
            shuffle: RngStream::new(seed, "partition-order"),
            run_events,
            stats: WindowStats::default(),
        })
    }

    /// Runs to the end; the reason it ended.
    pub fn run(&mut self) -> EndReason {
        let stop = self.parts[0].stop_time;
        let mut next_grid = SimTime::ZERO;
        let mut order: Vec<usize> = (0..self.parts.len()).collect();
        let reason = loop {
            let next = self.parts.iter_mut().filter_map(|p| p.next_due()).min();
            let at = next.unwrap_or(SimTime::MAX);
            if at >= next_grid || at > stop {
                if let Some(r) = self.grid_end() {
                    break r;
                }
                let Some(t) = next else {
                    break EndReason::Idle;
                };
                if t > stop {
                    for p in &mut self.parts {
                        p.now = stop;
                    }
                    break if t == SimTime::MAX {
                        EndReason::TimeLimit
                    } else {
                        EndReason::StopTime
                    };
                }
                next_grid = self.parts[0].grid_after(t);
                for p in &mut self.parts {
                    p.next_grid = next_grid;
                    if !p.draining {
                        p.release_due(next_grid);
                    }
                }
                continue;
            }
            if let Some(sp) = &mut self.sampler {
                while at >= sp.next {
                    sample(&self.parts, &self.map.owner, sp);
                }
            }
            let mut end = (at + self.map.lookahead).min(next_grid);
            if let Some(sp) = &self.sampler {
                end = end.min(sp.next);
            }
            if stop < SimTime::MAX {
                end = end.min(stop + SimTime(1));
            }
            if let Some(&r) = self.run_events.iter().find(|&&r| r > at) {
                end = end.min(r);
            }
            for i in (1..order.len()).rev() {
                let j = self.shuffle.below(i as u64 + 1) as usize;
                order.swap(i, j);
            }
            for &i in &order {
                self.parts[i].run_window(end);
            }
            self.exchange();
            self.stats.windows += 1;
        };
        let now = self.parts.iter().map(|p| p.now).max().expect("a partition");
        for p in &mut self.parts {
            p.now = now;
            for port in p.net.ports.iter_mut() {
                port.close_pauses(now);
            }
            p.ended = Some(reason);
        }
        reason
    }

    /// Delivers every message sent during the window.
    fn exchange(&mut self) {
        for i in 0..self.parts.len() {
            let out = std::mem::take(&mut self.parts[i].part.as_mut().expect("partitioned").outbox);
            self.stats.messages += out.len() as u64;
            for r in out {
                let to = match &r {
                    Remote::Packet { to, .. } | Remote::Event { to, .. } => *to as usize,
                };
                self.parts[to].receive(r);
            }
        }
    }

    /// At a grid point: whether the run has ended, from every partition's counts (the
    /// sequential kernel's `grid_end` over the whole run).
    fn grid_end(&mut self) -> Option<EndReason> {
        let sum = |f: fn(&Sim) -> usize| -> usize { self.parts.iter().map(f).sum() };
        let finished = sum(|p| p.finished);
        let started = sum(|p| p.started);
        let tag_finished = sum(|p| p.tag_finished);
        let first = &self.parts[0];
        if finished == first.total {
            return Some(EndReason::AllFinished);
        }
        if first.end_tag.is_some() && tag_finished == first.tag_total {
            for p in &mut self.parts {
                p.draining = true;
            }
            if finished == started {
                return Some(EndReason::TagFinished);
            }
        }
        let first = &self.parts[0];
        if first.failing {
            let pending = self.parts.iter().any(|p| p.stranded_pending(finished));
            if pending {
                return None;
            }
            // Every flow started (at its source) and not finished (at either end: UDP
            // finishes at its receiver) must be between hosts that cannot reach each other.
            let (owner, parts) = (&self.map.owner, &self.parts);
            let mut reach = std::collections::HashMap::new();
            let mut any = false;
            if parts[0].msg_units {
                for (i, m) in parts[0]
                    .transport
                    .messages()
                    .unwrap_or(&[])
                    .iter()
                    .enumerate()
                {
                    let s = owner[m.src as usize] as usize;
                    let snd = &parts[s].transport.messages().expect("RDMA")[i];
                    if (m.order as usize) >= parts[s].next_start || snd.finish.is_some() {
                        continue;
                    }
                    let ok = *reach
                        .entry((m.src, m.dst))
                        .or_insert_with(|| parts[0].net.reachable(m.src, m.dst));
                    if ok {
                        return None;
                    }
                    any = true;
                }
                return any.then_some(EndReason::Unreachable);
            }
            for f in 0..parts[0].flows.len() {
                let fl = &parts[0].flows[f];
                let (s, d) = (
                    owner[fl.src as usize] as usize,
                    owner[fl.dst as usize] as usize,
                );
                let snd = &parts[s].flows[f];
                if !snd.started || snd.finish.is_some() || parts[d].flows[f].finish.is_some() {
                    continue;
                }
                // Routes and link states are the same in every partition.
                let ok = *reach
                    .entry((fl.src, fl.dst))
                    .or_insert_with(|| parts[0].net.reachable(fl.src, fl.dst));
                if ok {
                    return None;
                }
                any = true;
            }
            if any {
                return Some(EndReason::Unreachable);
            }
        }
        None
    }

    /// The partitions merged into one run: what the sequential kernel would hold at the end.
    pub fn into_sim(self) -> Sim {
        let Windowed {
            parts,
            map,
            sampler,
            ..
        } = self;
        let mut sim = merge(parts, &map);
        sim.sample_at = sampler.as_ref().map_or(SimTime::MAX, |s| s.next);
        sim.sampler = sampler;
        sim
    }
}

/// Takes the time-series sample due, each port's state from its node's partition and each
/// flow's from its sender's (the sequential kernel's `take_sample` over the whole run).
fn sample(parts: &[Sim], owner: &[u16], sp: &mut timeseries::Sampler) {
    sample_state(
        sp,
        |p| {
            let k = owner[parts[0].net.ports[p].node.idx()] as usize;
            &parts[k].net.ports[p]
        },
        |f| {
            parts.iter().find_map(|s| match s.flows.get(f as usize) {
                Some(fl) if !fl.is_placeholder() && s.owns_host(fl.src) => {
                    s.transport.sample(FlowId(f))
                }
                _ => None,
            })
        },
    );
}

/// Merges the replicas into the first (see the module): ports and switches from their
/// owners, wires from the node at their far end, flows' halves from their hosts' partitions,
/// counters summed.
fn merge(parts: Vec<Sim>, map: &PartitionMap) -> Sim {
    let mut parts = parts;
    let owner = &map.owner;
    // Each port's wire from the partition of its far end, the rest from its node's.
    let n_ports = parts[0].net.ports.len();
    let mut wires = Vec::with_capacity(n_ports);
    for p in 0..n_ports {
        let k = owner[parts[0].net.ports[p].peer_node.idx()] as usize;
        // Losses on the wire (a failed link, random loss) are counted against the port
        // where the wire ends, by the partition that owns it: drops are summed.
        let drops: u64 = parts.iter().map(|s| s.net.ports[p].stats.drops).sum();
        let drop_bytes: u64 = parts.iter().map(|s| s.net.ports[p].stats.drop_bytes).sum();
        let port = &mut parts[k].net.ports[p];
        wires.push((
            std::mem::take(&mut port.wire),
            port.wire_bytes,
            drops,
            drop_bytes,
        ));
    }
    let (first, rest) = parts.split_at_mut(1);
    let base = &mut first[0];
    for (p, (wire, bytes, drops, drop_bytes)) in wires.into_iter().enumerate() {
        let k = owner[base.net.ports[p].node.idx()] as usize;
        if k > 0 {
            std::mem::swap(&mut base.net.ports[p], &mut rest[k - 1].net.ports[p]);
        }
        let port = &mut base.net.ports[p];
        port.wire = wire;
        port.wire_bytes = bytes;
        port.stats.drops = drops;
        port.stats.drop_bytes = drop_bytes;
    }
    for s in 0..base.net.switches.len() {
        let k = owner[base.net.n_hosts + s] as usize;
        if k > 0 {
            std::mem::swap(&mut base.net.switches[s], &mut rest[k - 1].net.switches[s]);
        }
    }
    // Flows (RDMA: connections, numbered by sending host, which other replicas may lack).
    let n_flows = std::iter::once(&*base)
        .chain(rest.iter())
        .map(|s| s.flows.len())
        .max()
        .unwrap_or(0);
    let n = base.flows.len();
    base.flows
        .extend((n..n_flows).map(|i| Flow::placeholder(FlowId(i as u32))));
    for f in 0..n_flows {
        let Some((src, dst)) = std::iter::once(&*base)
            .chain(rest.iter())
            .filter_map(|s| s.flows.get(f))
            .find(|x| !x.is_placeholder())
            .map(|x| {
                (
                    owner[x.src as usize] as usize,
                    owner[x.dst as usize] as usize,
                )
            })
        else {
            continue;
        };
        let drops: u64 = std::iter::once(&*base)
            .chain(rest.iter())
            .filter_map(|s| s.flows.get(f))
            .map(|x| x.stats.drops)
            .sum();
        let id = FlowId(f as u32);
        let rcv = match dst {
            0 => base.flows[f].clone(),
            k => rest[k - 1]
                .flows
                .get(f)
                .cloned()
                .unwrap_or(Flow::placeholder(id)),
        };
        if src > 0 {
            base.flows[f] = rest[src - 1].flows[f].clone();
            base.transport.adopt(&mut rest[src - 1].transport, id, true);
        }
        if dst > 0 {
            base.transport
                .adopt(&mut rest[dst - 1].transport, id, false);
        }
        let fl = &mut base.flows[f];
        fl.rcv_finish = rcv.rcv_finish;
        fl.finish = fl.finish.or(rcv.finish);
        fl.stats.ce_rcvd = rcv.stats.ce_rcvd;
        fl.stats.drops = drops;
    }
    // RDMA messages: the sender's half from its source's partition, the receiver's from its
    // destination's; what every partition counted, summed.
    let ends: Vec<(usize, usize)> = base.transport.messages().map_or(Vec::new(), |m| {
        m.iter()
            .map(|m| {
                (
                    owner[m.src as usize] as usize,
                    owner[m.dst as usize] as usize,
                )
            })
            .collect()
    });
    for (m, &(src, dst)) in ends.iter().enumerate() {
        if src > 0 {
            base.transport
                .adopt_message(&mut rest[src - 1].transport, m, true);
        }
        if dst > 0 {
            base.transport
                .adopt_message(&mut rest[dst - 1].transport, m, false);
        }
    }
    for o in rest.iter() {
        base.transport.add_counts(&o.transport);
    }
    for o in rest.iter() {
        base.cons.sent_pkts += o.cons.sent_pkts;
        base.cons.sent_bytes += o.cons.sent_bytes;
        base.cons.delivered_pkts += o.cons.delivered_pkts;
        base.cons.delivered_bytes += o.cons.delivered_bytes;
        base.cons.dropped_pkts += o.cons.dropped_pkts;
        base.cons.dropped_bytes += o.cons.dropped_bytes;
        base.packet_hops += o.packet_hops;
        base.failure_losses += o.failure_losses;
        base.finished += o.finished;
        base.tag_finished += o.tag_finished;
        base.started += o.started;
        // The run's own events were handled by every partition: counted once.
        base.events_elsewhere += o.ev.popped() - o.run_events;
    }
    // Packet traces: every partition's captures, in the run's order.
    if base.pcap.is_some() {
        let mut caps = Vec::new();
        for s in std::iter::once(&mut *base).chain(rest.iter_mut()) {
            if let Some(w) = &mut s.pcap {
                caps.extend(w.take_deferred());
            }
        }
        base.pcap.as_mut().expect("pcap").write_merged(caps);
    }
    // Delay attribution: each unit's result from the partition that finished it (its
    // sender's), with the losses every partition saw before the finish.
    if base.attrib.is_some() {
        let srcs: Vec<u32> = match base.transport.messages() {
            Some(m) => m.iter().map(|m| m.src).collect(),
            None => base.flows.iter().map(|f| f.src).collect(),
        };
        let merged: Vec<Option<attrib::Attribution>> = {
            let all: Vec<&Sim> = std::iter::once(&*base).chain(rest.iter()).collect();
            let logs: Vec<&[_]> = all
                .iter()
                .map(|s| s.attrib.as_ref().map_or(&[][..], |a| a.losses()))
                .collect();
            srcs.iter()
                .enumerate()
                .map(|(u, &src)| {
                    let k = owner[src as usize] as usize;
                    all[k]
                        .attrib
                        .as_ref()
                        .and_then(|a| a.merged_result(u, &logs))
                })
                .collect()
        };
        if let Some(a) = &mut base.attrib {
            a.results = merged;
        }
    }
    if let Some(t) = &mut base.telemetry {
        t.live += rest
            .iter()
            .map(|o| o.telemetry.as_ref().map_or(0, |t| t.live))
            .sum::<usize>();
    }
    base.part = None;
    parts.swap_remove(0)
}
