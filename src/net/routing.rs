//! Shortest-path routing tables, precomputed once per topology.
//!
//! For every switch and destination host the table holds the set of egress ports that lie on
//! some shortest path (by hop count) to that host: the candidate set of ECMP and of adaptive
//! load balancers. Hosts never forward. Lookups are two vector reads; nothing is hashed or
//! allocated per packet.

use crate::ids::{NodeId, PortId};

/// Minimal view of the graph the router needs.
pub struct Graph<'a> {
    pub n_hosts: usize,
    pub n_nodes: usize,
    /// `ports_of[node]` = that node's ports.
    pub ports_of: &'a [Vec<PortId>],
    /// The node at the far end of each port.
    pub peer_node: &'a [NodeId],
}

/// Next-hop candidate sets indexed by (switch, destination host).
#[derive(Clone, Debug, Default)]
pub struct Routes {
    n_hosts: usize,
    first_switch: usize,
    /// `(start, len)` into `ports` per (switch, destination), one cache line read per lookup.
    entries: Vec<(u32, u32)>,
    ports: Vec<PortId>,
}

impl Routes {
    /// Breadth-first search from each destination host.
    pub fn build(g: &Graph) -> Result<Routes, String> {
        Self::build_with(g, false)
    }

    /// As [`Routes::build`]; with `partial` a host another cannot reach (after failures) is
    /// not an error: switches that cannot reach it get no next hop.
    pub fn build_with(g: &Graph, partial: bool) -> Result<Routes, String> {
        let n_sw = g.n_nodes - g.n_hosts;
        let mut r = Routes {
            n_hosts: g.n_hosts,
            first_switch: g.n_hosts,
            entries: vec![(0, 0); n_sw * g.n_hosts],
            ports: Vec::new(),
        };
        let mut dist = vec![u32::MAX; g.n_nodes];
        let mut queue = std::collections::VecDeque::new();
        for h in 0..g.n_hosts {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[h] = 0;
            queue.clear();
            queue.push_back(h);
            while let Some(n) = queue.pop_front() {
                // Hosts other than the destination do not forward.
                if n < g.n_hosts && n != h {
                    continue;
                }
                for &p in &g.ports_of[n] {
                    let m = g.peer_node[p.idx()].idx();
                    if dist[m] == u32::MAX {
                        dist[m] = dist[n] + 1;
                        queue.push_back(m);
                    }
                }
            }
            for s in g.n_hosts..g.n_nodes {
                let i = (s - g.n_hosts) * g.n_hosts + h;
                let start = r.ports.len() as u32;
                r.entries[i] = (start, 0);
                if dist[s] == u32::MAX {
                    continue;
                }
                for &p in &g.ports_of[s] {
                    let m = g.peer_node[p.idx()].idx();
                    // A next hop is one step closer; hosts only if they are the destination.
                    if dist[m] != u32::MAX && dist[m] + 1 == dist[s] && (m >= g.n_hosts || m == h) {
                        r.ports.push(p);
                    }
                }
                r.entries[i].1 = r.ports.len() as u32 - start;
            }
            for (s, &d) in dist.iter().enumerate().take(g.n_hosts) {
                if !partial && s != h && d == u32::MAX {
                    return Err(format!(
                        "host {s} cannot reach host {h}: topology is disconnected"
                    ));
                }
            }
        }
        Ok(r)
    }

    /// Candidate egress ports at switch `node` towards host `dst`.
    #[inline]
    pub fn next_hops(&self, node: NodeId, dst: u32) -> &[PortId] {
        let i = (node.idx() - self.first_switch) * self.n_hosts + dst as usize;
        let (s, n) = self.entries[i];
        &self.ports[s as usize..(s + n) as usize]
    }
}
