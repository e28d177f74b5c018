//! Shortest-path routing tables, precomputed once per topology.
//!
//! For every switch and destination host the router knows the set of egress ports that lie on
//! some shortest path (by hop count) to that host: the candidate set of ECMP and of adaptive
//! load balancers. Hosts never forward.
//!
//! A host has exactly one link, so every shortest path to it ends through its switch (its
//! "ToR"): at any other switch the candidates towards the host are the candidates towards
//! that ToR, and at the ToR the one port to the host. The table is therefore kept per
//! (switch, ToR), not per (switch, host): `switches × ToRs` entries (a k = 32 fat-tree: 1,280
//! × 512) instead of `switches × hosts` (1,280 × 8,192), built by one breadth-first search
//! per ToR, with identical candidate lists stored once. The candidates and their order are
//! exactly those of a search from each host (the order of the switch's ports). Lookups are
//! three small vector reads; nothing is hashed or allocated per packet.
//!
//! Not modelled: weights or costs other than hop count (WCMP weighs among these candidates by
//! link rate, see `lb`), and multi-homed hosts.

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

const NONE: u32 = u32::MAX;

/// How a destination host is reached: its switch, that switch's row of the table, and the
/// switch's port to the host.
#[derive(Clone, Copy, Debug)]
struct HostRoute {
    /// Node index of the host's switch (`NONE`: the host's link is down or not to a switch).
    tor: u32,
    /// Column of the host's switch in the table (the empty last column: unreachable).
    col: u32,
    /// The switch's port to the host (`NONE`: that direction of the link is down).
    port: PortId,
}

/// The table's cells: the number of a distinct candidate list, in two bytes while there are
/// few enough lists (the table a packet reads stays a quarter the size).
#[derive(Clone, Debug)]
enum Cells {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Default for Cells {
    fn default() -> Self {
        Cells::Narrow(Vec::new())
    }
}

impl Cells {
    #[inline(always)]
    fn get(&self, i: usize) -> usize {
        match self {
            Cells::Narrow(v) => v[i] as usize,
            Cells::Wide(v) => v[i] as usize,
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        match self {
            Cells::Narrow(v) => v.len(),
            Cells::Wide(v) => v.len(),
        }
    }

    #[cfg(test)]
    fn cell_bytes(&self) -> usize {
        match self {
            Cells::Narrow(_) => 2,
            Cells::Wide(_) => 4,
        }
    }
}

/// Next-hop candidate sets indexed by (switch, destination host).
#[derive(Clone, Debug, Default)]
pub struct Routes {
    first_switch: usize,
    /// Number of distinct host switches; the table has one more column, always empty, for
    /// the hosts no switch reaches.
    n_cols: usize,
    hosts: Vec<HostRoute>,
    /// The candidate list per (switch, destination ToR column); list 0 is the empty one.
    cells: Cells,
    /// `(start, len)` into `ports` per distinct list.
    lists: Vec<(u32, u32)>,
    ports: Vec<PortId>,
}

impl Routes {
    /// Breadth-first search from each host switch.
    pub fn build(g: &Graph) -> Result<Routes, String> {
        Self::build_with(g, false)
    }

    /// As [`Routes::build`]; with `partial` a host another cannot reach (after failures) is
    /// not an error: switches that cannot reach it get no next hop.
    pub fn build_with(g: &Graph, partial: bool) -> Result<Routes, String> {
        let n_sw = g.n_nodes - g.n_hosts;
        let is_switch = |n: usize| n >= g.n_hosts;
        // Each host's switch (over its link if that is up) and the switch's port back.
        let mut col_of = vec![NONE; g.n_nodes];
        let mut tors: Vec<usize> = Vec::new();
        let mut hosts = Vec::with_capacity(g.n_hosts);
        for h in 0..g.n_hosts {
            let tor = g.ports_of[h]
                .first()
                .map(|p| g.peer_node[p.idx()].idx())
                .filter(|&t| is_switch(t));
            let Some(t) = tor else {
                hosts.push(HostRoute {
                    tor: NONE,
                    col: NONE,
                    port: PortId(NONE),
                });
                continue;
            };
            if col_of[t] == NONE {
                col_of[t] = tors.len() as u32;
                tors.push(t);
            }
            let port = g.ports_of[t]
                .iter()
                .copied()
                .find(|p| g.peer_node[p.idx()].idx() == h)
                .unwrap_or(PortId(NONE));
            hosts.push(HostRoute {
                tor: t as u32,
                col: col_of[t],
                port,
            });
        }
        let n_cols = tors.len();
        let stride = n_cols + 1;
        for h in hosts.iter_mut().filter(|h| h.col == NONE) {
            h.col = n_cols as u32;
        }
        let mut cells = vec![0u32; n_sw * stride];
        let mut lists = vec![(0u32, 0u32)];
        let mut ports = Vec::new();
        // Which host switches each host switch reaches (for the connectivity check).
        let mut reach = vec![false; n_cols * n_cols];
        let mut dist = vec![u32::MAX; g.n_nodes];
        let mut queue = std::collections::VecDeque::new();
        // Candidate lists already stored, and their numbers.
        let mut seen: std::collections::HashMap<Vec<PortId>, u32> = Default::default();
        let mut cands: Vec<PortId> = Vec::new();
        for (c, &t) in tors.iter().enumerate() {
            // Hosts do not forward.
            hops_from(g, t, &mut dist, &mut queue, is_switch);
            for s in g.n_hosts..g.n_nodes {
                if col_of[s] != NONE && dist[s] != u32::MAX {
                    reach[col_of[s] as usize * n_cols + c] = true;
                }
                let i = (s - g.n_hosts) * stride + c;
                if s == t || dist[s] == u32::MAX {
                    continue;
                }
                cands.clear();
                for &p in &g.ports_of[s] {
                    let m = g.peer_node[p.idx()].idx();
                    // A next hop is a switch one step closer.
                    if is_switch(m) && dist[m] != u32::MAX && dist[m] + 1 == dist[s] {
                        cands.push(p);
                    }
                }
                if cands.is_empty() {
                    continue;
                }
                cells[i] = match seen.get(&cands) {
                    Some(&l) => l,
                    None => {
                        let l = lists.len() as u32;
                        lists.push((ports.len() as u32, cands.len() as u32));
                        ports.extend_from_slice(&cands);
                        seen.insert(cands.clone(), l);
                        l
                    }
                };
            }
        }
        let cells = if lists.len() <= u16::MAX as usize + 1 {
            Cells::Narrow(cells.into_iter().map(|c| c as u16).collect())
        } else {
            Cells::Wide(cells)
        };
        let r = Routes {
            first_switch: g.n_hosts,
            n_cols,
            hosts,
            cells,
            lists,
            ports,
        };
        if !partial {
            r.check_connected(g, &reach)?;
        }
        Ok(r)
    }

    /// Every host reaches every other: the first pair that does not (by destination, then
    /// source) is the error.
    fn check_connected(&self, g: &Graph, reach: &[bool]) -> Result<(), String> {
        // Host `s` reaches host `h`: a host link in each direction and a path between their
        // switches (the same switch, or one that leads there); two hosts linked directly
        // reach only each other.
        let reaches = |s: usize, h: usize| {
            let (a, b) = (self.hosts[s], self.hosts[h]);
            if a.tor == NONE || b.tor == NONE {
                let direct = |x: usize, y: usize| {
                    g.ports_of[x]
                        .first()
                        .is_some_and(|p| g.peer_node[p.idx()].idx() == y)
                };
                return direct(h, s);
            }
            b.port.0 != NONE
                && a.port.0 != NONE
                && reach[a.col as usize * self.n_cols + b.col as usize]
        };
        let all = (0..self.n_cols).all(|c| (0..self.n_cols).all(|d| reach[c * self.n_cols + d]))
            && self.hosts.iter().all(|x| x.tor != NONE && x.port.0 != NONE);
        if all {
            return Ok(());
        }
        for h in 0..g.n_hosts {
            for s in 0..g.n_hosts {
                if s != h && !reaches(s, h) {
                    return Err(format!(
                        "host {s} cannot reach host {h}: topology is disconnected"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Candidate egress ports at switch `node` towards host `dst`.
    #[inline(always)]
    pub fn next_hops(&self, node: NodeId, dst: u32) -> &[PortId] {
        let h = &self.hosts[dst as usize];
        if node.0 == h.tor {
            return if h.port.0 == NONE {
                &[]
            } else {
                std::slice::from_ref(&h.port)
            };
        }
        let i = (node.idx() - self.first_switch) * (self.n_cols + 1) + h.col as usize;
        let (s, n) = self.lists[self.cells.get(i)];
        &self.ports[s as usize..(s + n) as usize]
    }

    /// Bytes the table holds.
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        self.hosts.len() * std::mem::size_of::<HostRoute>()
            + self.cells.len() * self.cells.cell_bytes()
            + self.lists.len() * std::mem::size_of::<(u32, u32)>()
            + self.ports.len() * std::mem::size_of::<PortId>()
    }
}

/// Breadth-first search from node `src`: `dist[n]` becomes the number of links from `src` to
/// `n` (`u32::MAX` if unreachable), going on only through nodes for which `forwards` holds.
fn hops_from(
    g: &Graph,
    src: usize,
    dist: &mut [u32],
    queue: &mut std::collections::VecDeque<usize>,
    forwards: impl Fn(usize) -> bool,
) {
    dist.iter_mut().for_each(|d| *d = u32::MAX);
    dist[src] = 0;
    queue.clear();
    queue.push_back(src);
    while let Some(n) = queue.pop_front() {
        if !forwards(n) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-host reference: a breadth-first search from every destination host, the
    /// candidates of every switch read off its distances (the table before it was kept per
    /// ToR).
    fn per_host(g: &Graph) -> Vec<Vec<Vec<PortId>>> {
        let mut out = vec![vec![Vec::new(); g.n_hosts]; g.n_nodes - g.n_hosts];
        // `h` is a node as well as a column of `out`.
        #[allow(clippy::needless_range_loop)]
        for h in 0..g.n_hosts {
            let mut dist = vec![u32::MAX; g.n_nodes];
            let mut queue = std::collections::VecDeque::new();
            hops_from(g, h, &mut dist, &mut queue, |n| n >= g.n_hosts || n == h);
            for s in g.n_hosts..g.n_nodes {
                if dist[s] == u32::MAX {
                    continue;
                }
                for &p in &g.ports_of[s] {
                    let m = g.peer_node[p.idx()].idx();
                    if dist[m] != u32::MAX && dist[m] + 1 == dist[s] && (m >= g.n_hosts || m == h) {
                        out[s - g.n_hosts][h].push(p);
                    }
                }
            }
        }
        out
    }

    /// A graph from undirected links (node pairs, parallel links repeated), ports numbered in
    /// link order, two per link; `down` ports are left out of their node's list.
    struct G {
        n_hosts: usize,
        ports_of: Vec<Vec<PortId>>,
        peer_node: Vec<NodeId>,
    }

    fn graph(n_hosts: usize, n_nodes: usize, links: &[(usize, usize)], down: &[u32]) -> G {
        let mut ports_of = vec![Vec::new(); n_nodes];
        let mut peer_node = Vec::new();
        for &(a, b) in links {
            for (me, peer) in [(a, b), (b, a)] {
                let p = PortId(peer_node.len() as u32);
                peer_node.push(NodeId(peer as u32));
                if !down.contains(&p.0) {
                    ports_of[me].push(p);
                }
            }
        }
        G {
            n_hosts,
            ports_of,
            peer_node,
        }
    }

    impl G {
        fn view(&self) -> Graph<'_> {
            Graph {
                n_hosts: self.n_hosts,
                n_nodes: self.ports_of.len(),
                ports_of: &self.ports_of,
                peer_node: &self.peer_node,
            }
        }
    }

    fn same_as_per_host(g: &G, partial: bool) -> Routes {
        let v = g.view();
        let r = Routes::build_with(&v, partial).expect("builds");
        let want = per_host(&v);
        for (i, row) in want.iter().enumerate() {
            let s = v.n_hosts + i;
            for (h, cands) in row.iter().enumerate() {
                assert_eq!(
                    r.next_hops(NodeId(s as u32), h as u32),
                    &cands[..],
                    "switch {s} to host {h}"
                );
            }
        }
        r
    }

    /// A fat-tree of arity k: hosts, then edge, aggregation and core switches.
    fn fat_tree(k: usize) -> (usize, usize, Vec<(usize, usize)>) {
        let (half, hosts) = (k / 2, k * k * k / 4);
        let edge = |e: usize| hosts + e;
        let agg = |a: usize| hosts + k * half + a;
        let core = |c: usize| hosts + 2 * k * half + c;
        let mut links = Vec::new();
        for h in 0..hosts {
            links.push((h, edge(h / half)));
        }
        for pod in 0..k {
            for e in 0..half {
                for a in 0..half {
                    links.push((edge(pod * half + e), agg(pod * half + a)));
                }
            }
            for a in 0..half {
                for c in 0..half {
                    links.push((agg(pod * half + a), core(a * half + c)));
                }
            }
        }
        (hosts, hosts + 2 * k * half + half * half, links)
    }

    #[test]
    fn fat_tree_tables_equal_the_per_host_search() {
        for k in [2, 4, 6] {
            let (h, n, links) = fat_tree(k);
            let r = same_as_per_host(&graph(h, n, &links, &[]), false);
            // One column per edge switch, not per host.
            assert_eq!(r.n_cols, k * k / 2);
        }
    }

    #[test]
    fn irregular_graphs_with_parallel_links_and_failures_equal_the_per_host_search() {
        // 6 hosts on 3 ToRs (host 5 alone), a ring of 4 switches with a chord and a doubled
        // link: ECMP candidates of different sizes and paths of different lengths.
        let links = [
            (0, 6),
            (1, 6),
            (2, 7),
            (3, 7),
            (4, 8),
            (5, 8),
            (6, 9),
            (9, 7),
            (7, 8),
            (8, 9),
            (6, 10),
            (10, 8),
            (9, 10),
            (9, 10),
        ];
        same_as_per_host(&graph(6, 11, &links, &[]), false);
        // Failures (partial tables): a host link down either way, a ToR's uplink, one of
        // the parallel links, a switch cut off entirely.
        for down in [
            vec![0, 1],
            vec![1],
            vec![0],
            vec![12, 13],
            vec![26],
            vec![12, 13, 20, 21, 14, 15],
            vec![8, 9, 10, 11],
        ] {
            same_as_per_host(&graph(6, 11, &links, &down), true);
        }
    }

    #[test]
    fn a_disconnected_graph_names_the_first_pair() {
        // Hosts 0, 1 on switch 4; hosts 2, 3 on switch 5; no link between the switches.
        let g = graph(4, 6, &[(0, 4), (1, 4), (2, 5), (3, 5)], &[]);
        let e = Routes::build(&g.view()).unwrap_err();
        assert_eq!(e, "host 2 cannot reach host 0: topology is disconnected");
        // Partial tables build, with no next hop across the cut.
        let r = Routes::build_with(&g.view(), true).unwrap();
        assert!(r.next_hops(NodeId(4), 2).is_empty());
        assert_eq!(r.next_hops(NodeId(4), 1), &[PortId(3)]);
    }

    #[test]
    fn the_table_grows_with_switches_times_tors() {
        let (h, n, links) = fat_tree(8);
        let r = Routes::build(&graph(h, n, &links, &[]).view()).unwrap();
        // 80 switches x (32 edge switches + the empty column), 2 bytes each, plus a few
        // hundred distinct lists.
        assert_eq!(r.cells.len(), 80 * 33);
        assert!(matches!(r.cells, Cells::Narrow(_)));
        assert!(r.heap_bytes() < 12_000, "{}", r.heap_bytes());
    }
}
