//! Shortest-path routing tables, precomputed once per topology.
//!
//! For every switch and destination host the router knows the set of egress ports that lie on
//! some shortest path (by hop count) to that host: the candidate set of ECMP and of adaptive
//! load balancers. Hosts never forward.
//!
//! Every shortest path to a host ends through one of the switches it is wired to (its
//! "attachments": one ToR for most hosts): at any other switch the candidates towards the host
//! are the candidates towards that set of switches, and at an attachment the ports to the
//! host. The table is therefore kept per (switch, attachment set), not per (switch, host):
//! `switches × ToRs` entries for single-homed hosts (a k = 32 fat-tree: 1,280 × 512) instead of
//! `switches × hosts` (1,280 × 8,192), built by one breadth-first search per attachment set,
//! with identical candidate lists stored once. The candidates and their order are exactly
//! those of a search from each host (the order of the switch's ports). Lookups are three small
//! vector reads; nothing is hashed or allocated per packet.
//!
//! Multi-homed hosts (several NICs, or a NIC with several ports, or a GPU with a port on its
//! server's internal switch) are routed to through whichever of their switches is closest,
//! and choose the port they send from ([`Routes::host_hops`]): the ports whose switch is
//! closest to the destination (a GPU sends to another GPU of its server through the server's
//! switch, to other servers through its NIC; a dual-homed host over both of its ToRs).
//!
//! Not modelled: weights or costs other than hop count (WCMP weighs among these candidates by
//! link rate, see `lb`).

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
/// `HostRoute::tor` of a multi-homed host: its `port` indexes `Routes::attach`.
const MULTI: u32 = u32::MAX - 1;

/// How a destination host is reached: its switch, that switch's row of the table, and the
/// switch's port to the host.
#[derive(Clone, Copy, Debug)]
struct HostRoute {
    /// Node index of the host's switch (`NONE`: the host's link is down or not to a switch;
    /// `MULTI`: the host is multi-homed, and `port` is the index of its attachments).
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
    /// Multi-homed hosts' attachments: per host (`HostRoute::port`), `(start, len)` into
    /// `attach_at`; each entry a switch and the list of its ports to the host.
    attach: Vec<(u32, u32)>,
    attach_at: Vec<(NodeId, u32)>,
    /// Per host, its row of `src_cells` (`NONE`: single-homed, it sends from its one port).
    src_row: Vec<u32>,
    /// Per (multi-homed source, destination column): the list of the source's ports that
    /// start a shortest path.
    src_cells: Vec<u32>,
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
        let mut lists = vec![(0u32, 0u32)];
        let mut ports = Vec::new();
        // Candidate lists already stored, and their numbers.
        let mut seen: std::collections::HashMap<Vec<PortId>, u32> = Default::default();
        let mut store = |cands: &Vec<PortId>,
                         lists: &mut Vec<(u32, u32)>,
                         ports: &mut Vec<PortId>| match seen.get(cands) {
            Some(&l) => l,
            None => {
                let l = lists.len() as u32;
                lists.push((ports.len() as u32, cands.len() as u32));
                ports.extend_from_slice(cands);
                seen.insert(cands.clone(), l);
                l
            }
        };
        // Each host's switches (over its links that are up) and the switches' ports back; a
        // column per distinct set of switches, in the order hosts first name them.
        let mut col_of = vec![NONE; g.n_nodes];
        let mut set_col: std::collections::HashMap<Vec<usize>, u32> = Default::default();
        let mut cols: Vec<Vec<usize>> = Vec::new();
        let mut hosts = Vec::with_capacity(g.n_hosts);
        let mut attach = Vec::new();
        let mut attach_at = Vec::new();
        let mut src_row = vec![NONE; g.n_hosts];
        let mut multi_srcs = Vec::new();
        for (h, row) in src_row.iter_mut().enumerate() {
            let back = |t: usize| -> Vec<PortId> {
                g.ports_of[t]
                    .iter()
                    .copied()
                    .filter(|p| g.peer_node[p.idx()].idx() == h)
                    .collect()
            };
            if g.ports_of[h].len() > 1 {
                *row = multi_srcs.len() as u32;
                multi_srcs.push(h);
                let mut set: Vec<usize> = g.ports_of[h]
                    .iter()
                    .map(|p| g.peer_node[p.idx()].idx())
                    .filter(|&t| is_switch(t))
                    .collect();
                set.sort_unstable();
                set.dedup();
                if set.is_empty() {
                    hosts.push(HostRoute {
                        tor: NONE,
                        col: NONE,
                        port: PortId(NONE),
                    });
                    continue;
                }
                let start = attach_at.len() as u32;
                for &t in &set {
                    let l = store(&back(t), &mut lists, &mut ports);
                    attach_at.push((NodeId(t as u32), l));
                }
                attach.push((start, set.len() as u32));
                let c = match set_col.get(&set) {
                    Some(&c) => c,
                    None => {
                        let c = cols.len() as u32;
                        set_col.insert(set.clone(), c);
                        cols.push(set);
                        c
                    }
                };
                hosts.push(HostRoute {
                    tor: MULTI,
                    col: c,
                    port: PortId(attach.len() as u32 - 1),
                });
                continue;
            }
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
                col_of[t] = match set_col.get(&vec![t]) {
                    Some(&c) => c,
                    None => {
                        let c = cols.len() as u32;
                        set_col.insert(vec![t], c);
                        cols.push(vec![t]);
                        c
                    }
                };
            }
            let port = back(t).first().copied().unwrap_or(PortId(NONE));
            hosts.push(HostRoute {
                tor: t as u32,
                col: col_of[t],
                port,
            });
        }
        let n_cols = cols.len();
        let stride = n_cols + 1;
        for h in hosts.iter_mut().filter(|h| h.col == NONE) {
            h.col = n_cols as u32;
        }
        let mut cells = vec![0u32; n_sw * stride];
        let mut src_cells = vec![0u32; multi_srcs.len() * stride];
        // Which columns each column's switches reach (for the connectivity check).
        let mut reach = vec![false; n_cols * n_cols];
        let mut dist = vec![u32::MAX; g.n_nodes];
        let mut queue = std::collections::VecDeque::new();
        let mut cands: Vec<PortId> = Vec::new();
        for (c, set) in cols.iter().enumerate() {
            // Hosts do not forward.
            hops_from(g, set, &mut dist, &mut queue, is_switch);
            for (d, other) in cols.iter().enumerate() {
                reach[d * n_cols + c] = other.iter().any(|&s| dist[s] != u32::MAX);
            }
            for s in g.n_hosts..g.n_nodes {
                let i = (s - g.n_hosts) * stride + c;
                if dist[s] == 0 || dist[s] == u32::MAX {
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
                cells[i] = store(&cands, &mut lists, &mut ports);
            }
            // A multi-homed host sends from the ports whose switch is closest.
            for (r, &x) in multi_srcs.iter().enumerate() {
                let reach_of = |p: &PortId| {
                    let m = g.peer_node[p.idx()].idx();
                    if is_switch(m) { dist[m] } else { u32::MAX }
                };
                let best = g.ports_of[x].iter().map(reach_of).min().unwrap_or(u32::MAX);
                if best == u32::MAX {
                    continue;
                }
                cands.clear();
                cands.extend(g.ports_of[x].iter().filter(|p| reach_of(p) == best));
                src_cells[r * stride + c] = store(&cands, &mut lists, &mut ports);
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
            attach,
            attach_at,
            src_row,
            src_cells,
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
        if n == 0 && h.tor == MULTI {
            return self.attached(h.port.0, node);
        }
        &self.ports[s as usize..(s + n) as usize]
    }

    /// A multi-homed host's ports at switch `node`, if it is one of its attachments.
    #[cold]
    #[inline(never)]
    fn attached(&self, a: u32, node: NodeId) -> &[PortId] {
        let (start, len) = self.attach[a as usize];
        self.attach_at[start as usize..(start + len) as usize]
            .iter()
            .find(|x| x.0 == node)
            .map_or(&[], |&(_, l)| {
                let (s, n) = self.lists[l as usize];
                &self.ports[s as usize..(s + n) as usize]
            })
    }

    /// Whether host `h` is multi-homed (sends from a port it chooses per destination).
    #[inline]
    pub fn multi_homed(&self, h: u32) -> bool {
        self.src_row[h as usize] != NONE
    }

    /// The ports multi-homed host `src` may send from towards host `dst`: those whose
    /// switch is closest to it (empty if none reaches it). Single-homed hosts: empty.
    pub fn host_hops(&self, src: u32, dst: u32) -> &[PortId] {
        let r = self.src_row[src as usize];
        if r == NONE {
            return &[];
        }
        let col = self.hosts[dst as usize].col as usize;
        let (s, n) = self.lists[self.src_cells[r as usize * (self.n_cols + 1) + col] as usize];
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

/// Breadth-first search from nodes `srcs`: `dist[n]` becomes the number of links from the
/// nearest of them to `n` (`u32::MAX` if unreachable), going on only through nodes for which
/// `forwards` holds.
fn hops_from(
    g: &Graph,
    srcs: &[usize],
    dist: &mut [u32],
    queue: &mut std::collections::VecDeque<usize>,
    forwards: impl Fn(usize) -> bool,
) {
    dist.iter_mut().for_each(|d| *d = u32::MAX);
    queue.clear();
    for &src in srcs {
        dist[src] = 0;
        queue.push_back(src);
    }
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
            hops_from(g, &[h], &mut dist, &mut queue, |n| n >= g.n_hosts || n == h);
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
    fn multi_homed_hosts_are_reached_through_their_closest_switch_and_send_from_it() {
        // Servers A (GPUs 0, 1) and B (GPUs 2, 3): GPU i's NIC on rail switch i % 2 (r0,
        // r1), rails joined by a spine, each server's GPUs on its internal switch (na, nb).
        // Host 4 is dual-homed on both rails; hosts 5 and 6 on ToRs t1 and t2, both of them.
        let (r0, r1, sp, na, nb, t1, t2) = (7, 8, 9, 10, 11, 12, 13);
        let links = [
            (0, r0),
            (1, r1),
            (2, r0),
            (3, r1),
            (r0, sp),
            (r1, sp),
            (0, na),
            (1, na),
            (2, nb),
            (3, nb),
            (4, r0),
            (4, r1),
            (5, t1),
            (5, t2),
            (6, t1),
            (6, t2),
            (t1, sp),
            (t2, sp),
        ];
        let g = graph(7, 14, &links, &[]);
        let r = same_as_per_host(&g, false);
        let to = |h: usize, n: usize| {
            g.ports_of[h]
                .iter()
                .copied()
                .find(|p| g.peer_node[p.idx()].idx() == n)
                .unwrap()
        };
        assert!(r.multi_homed(0) && r.multi_homed(4));
        // Within a server over its switch; to the other server over the NIC.
        assert_eq!(r.host_hops(0, 1), &[to(0, na)]);
        assert_eq!(r.host_hops(0, 2), &[to(0, r0)]);
        assert_eq!(r.host_hops(0, 3), &[to(0, r0)]);
        assert_eq!(r.host_hops(4, 0), &[to(4, r0)]);
        assert_eq!(r.host_hops(4, 3), &[to(4, r1)]);
        // Dual-homed hosts on the same pair of ToRs: either.
        assert_eq!(r.host_hops(5, 6), &[to(5, t1), to(5, t2)]);
        assert_eq!(r.host_hops(5, 0), &[to(5, t1), to(5, t2)]);
        // A GPU's own server switch reaches no other server.
        assert!(r.next_hops(NodeId(na as u32), 2).is_empty());
        assert_eq!(r.next_hops(NodeId(na as u32), 1), &[to(na, 1)]);
        // Failures: host 4's link to rail 0 down both ways: it is reached over rail 1 only,
        // and is single-homed as far as the table goes (the network sends from its one port
        // that is up).
        let p = to(4, r0).0;
        let q = to(r0, 4).0;
        let g = graph(7, 14, &links, &[p, q]);
        let r = same_as_per_host(&g, true);
        assert!(!r.multi_homed(4) && r.host_hops(4, 0).is_empty());
        // Host 5's link to t1 down one way (t1 to 5): as for a single-homed host, t1 stays
        // an attachment with no port to it; 5 still sends over both.
        let g = graph(7, 14, &links, &[to(t1, 5).0]);
        let r = same_as_per_host(&g, true);
        assert_eq!(r.host_hops(5, 6), &[to(5, t1), to(5, t2)]);
        assert!(r.next_hops(NodeId(t1 as u32), 5).is_empty());
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
