//! The shortest paths of a host pair as the ideal FCT sees them, in the network as it was
//! over a span of simulated time.
//!
//! The ideal FCT of a flow is the best the network could do for that flow alone: the fastest
//! of the paths its packets may take (the routing table's shortest paths, each judged by the
//! store-and-forward pipeline over its own links' rates and delays), or with a per-packet load
//! balancer the best spread of its packets over every link those paths use at each stage.
//! This module finds, for one state of the network ([`NetView`]): the distinct sequences of
//! (rate, delay) hops of the shortest paths from a host to another (deduplicated, at most
//! [`MAX_SEQS`]; beyond that one sequence made of each stage's fastest link and shortest delay,
//! a lower bound for all of them), the stages (per hop, every link some shortest path takes
//! there), and the least additive cost of a path (the ACK's way back).
//!
//! The network changes during a run with `[[failures]]`: [`NetHistory`] keeps the routes in
//! force from each reroute and the states (rate, down) each changed port went through, so that
//! a flow's ideal is computed in the network of its own lifetime: the least, over the routing
//! epochs the flow lived through, of the ideal with every port at its best rate over that time
//! and usable if it was up at any moment of it.
//!
//! Not modelled: paths longer than the routing table's shortest ones (the router never uses
//! them), and a flow whose packets mix the paths of two routing epochs is judged as if it
//! could spread over each epoch's stages (the bound a per-packet load balancer gets).

use crate::ids::{NodeId, PortId};
use crate::net::Network;
use crate::net::routing::Routes;
use crate::units::{BitRate, SimTime};
use std::collections::HashMap;

/// One hop: link rate and propagation delay.
pub type Hop = (BitRate, SimTime);

/// Distinct hop sequences kept per node before the bound of per-stage best links is used.
pub const MAX_SEQS: usize = 64;

/// One state of the network as the ideal sees it: its routes, and per port its rate when it
/// may carry the flow (None: down).
pub struct NetView<'a> {
    pub net: &'a Network,
    pub routes: &'a Routes,
    pub port: &'a dyn Fn(PortId) -> Option<BitRate>,
}

/// What a host pair's packets could use in one state of the network.
#[derive(Clone, Debug, PartialEq)]
pub struct PairPaths {
    /// The distinct hop sequences of its shortest paths, or (`exact` false, more than
    /// [`MAX_SEQS`] of them somewhere) one sequence of each stage's fastest rate and shortest
    /// delay, a lower bound for every path.
    pub seqs: Vec<Vec<Hop>>,
    pub exact: bool,
    /// Per hop, every link some shortest path takes there.
    pub stages: Vec<Vec<Hop>>,
}

impl NetView<'_> {
    fn hop(&self, p: PortId) -> Option<Hop> {
        (self.port)(p).map(|r| (r, self.net.ports[p.idx()].delay))
    }

    /// Walks the shortest paths from host `src` to host `dst` stage by stage, calling `edge`
    /// with each usable link (from the node's state to the next node's), and returns the
    /// stages, or None when no path is left.
    fn walk<S: Clone>(
        &self,
        src: u32,
        dst: u32,
        start: S,
        mut edge: impl FnMut(&S, Hop, &mut Option<S>),
    ) -> Option<(Vec<Vec<Hop>>, S)> {
        let net = self.net;
        let hp = net.first_egress(src, dst);
        let first = self.hop(hp)?;
        let mut s0 = None;
        edge(&start, first, &mut s0);
        let mut layer: Vec<(NodeId, S)> = vec![(net.ports[hp.idx()].peer_node, s0?)];
        let mut stages = vec![vec![first]];
        let target = NodeId(dst);
        for _ in 0..net.nodes.len() {
            if let Some((_, s)) = layer.iter().find(|(n, _)| *n == target) {
                return Some((stages, s.clone()));
            }
            let mut next: Vec<(NodeId, Option<S>)> = Vec::new();
            let mut at: HashMap<NodeId, usize> = HashMap::new();
            let mut stage = Vec::new();
            for (n, s) in &layer {
                if net.is_host(*n) {
                    continue; // hosts do not forward
                }
                for &p in self.routes.next_hops(*n, dst) {
                    let Some(h) = self.hop(p) else { continue };
                    stage.push(h);
                    let m = net.ports[p.idx()].peer_node;
                    let k = *at.entry(m).or_insert_with(|| {
                        next.push((m, None));
                        next.len() - 1
                    });
                    edge(s, h, &mut next[k].1);
                }
            }
            if stage.is_empty() {
                return None;
            }
            stages.push(stage);
            layer = next
                .into_iter()
                .filter_map(|(n, s)| s.map(|s| (n, s)))
                .collect();
        }
        None
    }

    /// The shortest paths from host `src` to host `dst`; None when none is usable.
    pub fn forward(&self, src: u32, dst: u32) -> Option<PairPaths> {
        let mut exact = true;
        let (stages, seqs) = self.walk(
            src,
            dst,
            vec![Vec::new()],
            |pre: &Vec<Vec<Hop>>, h, into| {
                let set = into.get_or_insert_with(Vec::new);
                for s in pre {
                    if set.len() >= MAX_SEQS {
                        exact = false;
                        break;
                    }
                    let mut s = s.clone();
                    s.push(h);
                    if !set.contains(&s) {
                        set.push(s);
                    }
                }
            },
        )?;
        let seqs = match exact {
            true => seqs,
            false => vec![
                stages
                    .iter()
                    .map(|st| {
                        let r = st.iter().map(|h| h.0).max().expect("a link");
                        let d = st.iter().map(|h| h.1).min().expect("a link");
                        (r, d)
                    })
                    .collect(),
            ],
        };
        Some(PairPaths {
            seqs,
            exact,
            stages,
        })
    }

    /// The least sum of `cost` over the hops of a shortest path from `src` to `dst`.
    pub fn least(&self, src: u32, dst: u32, cost: impl Fn(Hop) -> SimTime) -> Option<SimTime> {
        self.walk(src, dst, SimTime::ZERO, |t, h, into| {
            let c = *t + cost(h);
            *into = Some(into.map_or(c, |x: SimTime| x.min(c)));
        })
        .map(|(_, t)| t)
    }
}

/// How the network changed during a run (`[[failures]]`): the routes in force from each
/// reroute, and every state of each port that changed.
#[derive(Clone, Debug, Default)]
pub struct NetHistory {
    /// Routes and the time from which each was in force; the first from time zero.
    pub routes: Vec<(SimTime, Routes)>,
    /// Per port that changed: (from, rate, down) in time order, the first from time zero.
    pub ports: HashMap<PortId, Vec<(SimTime, BitRate, bool)>>,
}

impl NetHistory {
    /// A history beginning with network `net` as it is now.
    pub fn new(net: &Network) -> NetHistory {
        NetHistory {
            routes: vec![(SimTime::ZERO, net.routes.clone())],
            ports: HashMap::new(),
        }
    }

    /// Port `p` of `net` changes at `now` to `rate` and `down` (call before applying it).
    pub fn port_changes(
        &mut self,
        net: &Network,
        now: SimTime,
        p: PortId,
        rate: BitRate,
        down: bool,
    ) {
        let port = &net.ports[p.idx()];
        self.ports
            .entry(p)
            .or_insert_with(|| vec![(SimTime::ZERO, port.rate, port.down)])
            .push((now, rate, down));
    }

    /// New routes in force from `now`.
    pub fn rerouted(&mut self, now: SimTime, routes: &Routes) {
        self.routes.push((now, routes.clone()));
    }

    /// The routing epochs that overlap `[a, b]` (both ends included).
    pub fn epochs(&self, a: SimTime, b: SimTime) -> impl Iterator<Item = &Routes> {
        let r = &self.routes;
        (0..r.len())
            .filter(move |&i| r[i].0 <= b && r.get(i + 1).is_none_or(|n| n.0 >= a))
            .map(move |i| &r[i].1)
    }

    /// Port `p`'s best rate over `[a, b]` among the states in which it was up (None: down all
    /// along); `now` is its rate and state if it never changed.
    pub fn best_rate(
        &self,
        p: PortId,
        a: SimTime,
        b: SimTime,
        now: (BitRate, bool),
    ) -> Option<BitRate> {
        let Some(states) = self.ports.get(&p) else {
            return (!now.1).then_some(now.0);
        };
        (0..states.len())
            .filter(|&i| states[i].0 <= b && states.get(i + 1).is_none_or(|n| n.0 >= a))
            .filter(|&i| !states[i].2)
            .map(|i| states[i].1)
            .max()
    }

    /// Port `p`'s rate and state at time zero (`now`: if it never changed).
    pub fn initial(&self, p: PortId, now: (BitRate, bool)) -> (BitRate, bool) {
        self.ports.get(&p).map_or(now, |s| (s[0].1, s[0].2))
    }

    /// Whether more than one routing epoch overlaps `[a, b]`.
    pub fn rerouted_within(&self, a: SimTime, b: SimTime) -> bool {
        self.epochs(a, b).nth(1).is_some()
    }
}
