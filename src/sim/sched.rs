//! The run's event schedule: the event queue plus the rule that orders events of the same
//! picosecond (`engine::tie`: the run's own events first, then `(π(origin), sequence of the
//! origin)`), an order any partitioning of the run keeps, because it needs no run-wide push
//! order.
//!
//! Every event pushed while a node event is handled takes the origin of the node that event
//! acts on ([`Sim::origin_of`]); a packet's arrival takes its link and the packet's index on
//! the link instead, so that it gets one key whoever pushes it (the sender when the wire was
//! empty, the receiver when the previous packet arrived); a workload flow's start takes its
//! host's start origin and its place in the workload, so that it gets one key whenever it is
//! pushed. Events pushed by the run's own events (failures, reroutes) and at setup take the
//! run's class.

use super::*;
use crate::engine::tie::{MAX_ORIGINS, TieKeys};

/// The event queue of a run and its tie state: the keys, the current origin and each
/// origin's next sequence number.
pub(in crate::sim) struct Schedule {
    q: EventQueue<Ev>,
    keys: TieKeys,
    /// The origin of the events pushed now (None: the run).
    origin: Option<u32>,
    /// Next sequence number of each node (`0..n_nodes`).
    seqs: Vec<u64>,
    /// Next sequence number of the run's own events.
    run_seq: u64,
    /// Origin of host 0's starts; host `h`'s is `start_base + h`.
    start_base: u32,
    /// Origin of link (port) 0; port `p`'s link is `link_base + p`.
    link_base: u32,
}

impl Schedule {
    /// The schedule of a network of `n_nodes` nodes (the first `n_hosts` of them hosts) and
    /// `n_ports` ports, or an error when the network has more origins than a key can name.
    pub(in crate::sim) fn new(
        seed: u64,
        n_nodes: usize,
        n_hosts: usize,
        n_ports: usize,
    ) -> Result<Self, String> {
        let origins = (n_nodes + n_hosts + n_ports) as u64;
        if origins > MAX_ORIGINS {
            return Err(format!(
                "the network has {n_nodes} nodes, {n_hosts} of them hosts, and {n_ports} ports: \
                 {origins} tie origins; at most {MAX_ORIGINS} fit in a tie key"
            ));
        }
        Ok(Schedule {
            q: EventQueue::new(),
            keys: TieKeys::new(seed),
            origin: None,
            seqs: vec![0; n_nodes],
            run_seq: 0,
            start_base: n_nodes as u32,
            link_base: (n_nodes + n_hosts) as u32,
        })
    }

    /// Makes `node` (None: the run itself) the origin of the events pushed from now on.
    #[inline(always)]
    pub(in crate::sim) fn set_origin(&mut self, node: Option<NodeId>) {
        self.origin = node.map(|n| n.0);
    }

    /// The key the current origin's next event at `t` takes (it is used up here; see also
    /// [`Schedule::push_keyed`] for an event another partition will push).
    #[inline(always)]
    pub(in crate::sim) fn next_tie(&mut self, t: SimTime) -> u64 {
        match self.origin {
            Some(o) => {
                let s = &mut self.seqs[o as usize];
                let tie = self.keys.tie(t, o, *s);
                *s += 1;
                tie
            }
            None => {
                self.run_seq += 1;
                TieKeys::run_tie(self.run_seq - 1)
            }
        }
    }

    /// Schedules `ev` at `t` from the current origin.
    #[inline(always)]
    pub(in crate::sim) fn push(&mut self, t: SimTime, ev: Ev) {
        let tie = self.next_tie(t);
        self.q.push_tie(t, tie, ev);
    }

    /// Schedules `ev` at `t` under the key another partition gave it.
    #[inline]
    pub(in crate::sim) fn push_keyed(&mut self, t: SimTime, tie: u64, ev: Ev) {
        self.q.push_tie(t, tie, ev);
    }

    /// Schedules the arrival at `t` of the `index`-th packet sent over port `p`'s link.
    #[inline(always)]
    pub(in crate::sim) fn push_arrival(&mut self, t: SimTime, p: PortId, index: u64) {
        let tie = self.keys.tie(t, self.link_base + p.0, index);
        self.q.push_tie(t, tie, Ev::Arrive(p));
    }

    /// Schedules the start at `t` of arrival `index` of the workload (a flow or an RDMA
    /// message) at its source host `host`. Its key depends on nothing else, so it may be
    /// pushed at any time before `t`.
    #[inline]
    pub(in crate::sim) fn push_start(&mut self, t: SimTime, host: u32, index: u32) {
        let tie = self.keys.tie(t, self.start_base + host, index as u64);
        self.q.push_tie(t, tie, Ev::Arrival { host, index });
    }

    /// Schedules `ev`, a dependency's event released like an arrival (a compute step without
    /// a join), at `t` at `host`, keyed as arrival `index` of the host would be.
    #[inline]
    pub(in crate::sim) fn push_start_ev(&mut self, t: SimTime, host: u32, index: u32, ev: Ev) {
        let tie = self.keys.tie(t, self.start_base + host, index as u64);
        self.q.push_tie(t, tie, ev);
    }

    /// The earliest event if it is due before `limit`.
    #[inline(always)]
    pub(in crate::sim) fn pop_before(&mut self, limit: SimTime) -> Option<(SimTime, Ev)> {
        self.q.pop_before(limit)
    }

    #[inline(always)]
    pub(in crate::sim) fn peek_time(&mut self) -> Option<SimTime> {
        self.q.peek_time()
    }

    #[inline(always)]
    pub(in crate::sim) fn peek_ahead(&self, k: usize) -> Option<&Ev> {
        self.q.peek_ahead(k)
    }

    pub(in crate::sim) fn popped(&self) -> u64 {
        self.q.popped()
    }

    /// The key (time, tie) of the event being handled: its place in the run's order.
    #[inline]
    pub(in crate::sim) fn current_key(&self, now: SimTime) -> (SimTime, u64) {
        (now, self.q.last_tie())
    }
}

impl Sim {
    /// The node event `ev` acts on (None: the run itself), whose origin the events it pushes
    /// take.
    #[inline]
    pub(in crate::sim) fn origin_of(&self, ev: &Ev) -> Option<NodeId> {
        match *ev {
            Ev::TxDone(p) | Ev::Pfc { port: p, .. } => Some(self.net.ports[p.idx()].node),
            Ev::Arrive(p) => Some(self.net.ports[p.idx()].peer_node),
            Ev::Timer(f, _) | Ev::Pace(f, _) => Some(NodeId(self.flows[f.idx()].src)),
            Ev::Arrival { host, .. } => Some(NodeId(host)),
            Ev::Start(_) | Ev::JoinNews(_) | Ev::CalcDone(_) => Some(NodeId(self.dep_host(ev))),
            Ev::Fail(_) | Ev::Reroute => None,
        }
    }
}
