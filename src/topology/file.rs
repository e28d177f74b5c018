//! Topologies from files: dcsim's own format (TOML) and the HPCC ns-3 simulator's
//! `topology.txt`.
//!
//! dcsim's format (`[topology] kind = "file"`, `format = "dcsim"`):
//!
//! ```toml
//! hosts = 4                # nodes 0..hosts are hosts
//! switches = 2             # nodes hosts..hosts+switches are switches
//! rate = "100Gbps"         # defaults for links that do not say
//! delay = "1us"
//!
//! [[link]]
//! a = 0                    # node ids
//! b = 4
//! [[link]]
//! a = 4
//! b = 5
//! rate = "400Gbps"
//! count = 2                # parallel links (ECMP spreads over them)
//! loss = 0.0001            # packet-loss probability each way (default 0)
//! ```
//!
//! The HPCC format (`format = "hpcc"`): a line `nodes switches links`, a line with the switch
//! ids, then one line per link `a b rate delay error_rate` (`0 16 100Gbps 0.001ms 0`). Nodes
//! not listed as switches are hosts. dcsim numbers hosts first: hosts in ascending original
//! id become `0..hosts`, switches in ascending id follow; [`FileTopo::node_ids`] keeps each
//! node's original id (flow lists in the HPCC format name original ids). The error rate is
//! the link's packet-loss probability, each way.
//!
//! Switch tiers (for reports) are the hop distance to the nearest host. Routing is the usual
//! shortest-path ECMP over whatever graph results (`net::routing`), parallel links included.
//!
//! `[[switch]]` entries (`id`, `buffer`) give single switches their own buffer: the shared
//! buffer's size, or a static buffer's bytes per port; the rest of `[switch.buffer]` applies.
//!
//! Not modelled: hosts with several links.

use super::{LinkSpec, SwitchSpec, TopoSpec};
use crate::ids::NodeId;
use crate::units::{BitRate, SimTime};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A topology file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TopoFormat {
    /// dcsim's TOML format.
    #[default]
    Dcsim,
    /// The HPCC ns-3 simulator's `topology.txt`.
    Hpcc,
}

/// A topology loaded from a file, with what the builders compute from their parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FileTopo {
    pub spec: TopoSpec,
    /// The original id of each node (identity for dcsim's format).
    pub node_ids: Vec<u32>,
    /// The fastest host access link.
    pub host_rate: BitRate,
    /// The hops of the host-to-host shortest path with the largest unloaded round trip.
    pub longest: Vec<(BitRate, SimTime)>,
    /// Most ports of one switch, fastest link, longest delay.
    pub max_ports: usize,
    pub max_rate: BitRate,
    pub max_delay: SimTime,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DcsimFile {
    hosts: u32,
    switches: u32,
    rate: Option<BitRate>,
    delay: Option<SimTime>,
    #[serde(default)]
    link: Vec<DcsimLink>,
    #[serde(default)]
    switch: Vec<DcsimSwitch>,
}

/// `[[switch]]`: one switch's own buffer (the shared buffer's size, or a static buffer's
/// bytes per port).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DcsimSwitch {
    id: u32,
    buffer: crate::units::Bytes,
}

/// A parsed file: hosts, switches, links, each node's original id, per-switch buffers.
type Parsed = (
    usize,
    usize,
    Vec<LinkSpec>,
    Vec<u32>,
    std::collections::BTreeMap<u32, crate::units::Bytes>,
);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DcsimLink {
    a: u32,
    b: u32,
    rate: Option<BitRate>,
    delay: Option<SimTime>,
    count: Option<u32>,
    /// Packet loss probability, [0, 1).
    loss: Option<f64>,
}

/// Loads the topology in `path`.
pub fn load(path: &Path, format: TopoFormat) -> Result<FileTopo, String> {
    let text = crate::fileid::read_to_string(path)?;
    let (n_hosts, n_switches, links, node_ids, buffers) = match format {
        TopoFormat::Dcsim => parse_dcsim(&text)?,
        TopoFormat::Hpcc => parse_hpcc(&text)?,
    };
    finish(n_hosts, n_switches, links, node_ids, buffers)
}

fn parse_dcsim(text: &str) -> Result<Parsed, String> {
    let f: DcsimFile = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        match line {
            Some(l) => format!("line {l}: {}", e.message()),
            None => e.message().to_string(),
        }
    })?;
    let n = f.hosts as u64 + f.switches as u64;
    if f.hosts < 2 || n > 1_000_000 {
        return Err(format!(
            "`hosts` must be at least 2 and hosts + switches at most 1000000, got {} + {}",
            f.hosts, f.switches
        ));
    }
    let mut links = Vec::new();
    for (i, l) in f.link.iter().enumerate() {
        let what = format!("link {} (a = {}, b = {})", i + 1, l.a, l.b);
        let rate = l
            .rate
            .or(f.rate)
            .ok_or_else(|| format!("{what}: no `rate` and no default `rate`"))?;
        let delay = l
            .delay
            .or(f.delay)
            .ok_or_else(|| format!("{what}: no `delay` and no default `delay`"))?;
        let count = l.count.unwrap_or(1);
        if !(1..=64).contains(&count) {
            return Err(format!("{what}: `count` must be in 1..=64, got {count}"));
        }
        let loss = l.loss.unwrap_or(0.0);
        if !(0.0..1.0).contains(&loss) {
            return Err(format!("{what}: `loss` must be in [0, 1), got {loss}"));
        }
        for _ in 0..count {
            let mut link = check_link(&what, l.a, l.b, rate, delay, n)?;
            link.loss = loss;
            links.push(link);
        }
    }
    let mut buffers = std::collections::BTreeMap::new();
    for (i, sw) in f.switch.iter().enumerate() {
        let what = format!("switch {} ([[switch]] {})", sw.id, i + 1);
        if sw.id < f.hosts || sw.id as u64 >= n {
            return Err(format!("{what}: switches are nodes {}..{n}", f.hosts));
        }
        if !(1_000..=1_000_000_000_000).contains(&sw.buffer.0) {
            return Err(format!(
                "{what}: buffer must be in 1KB..=1TB, got {}",
                sw.buffer
            ));
        }
        if buffers.insert(sw.id, sw.buffer).is_some() {
            return Err(format!("{what}: listed twice"));
        }
    }
    Ok((
        f.hosts as usize,
        f.switches as usize,
        links,
        (0..n as u32).collect(),
        buffers,
    ))
}

fn check_link(
    what: &str,
    a: u32,
    b: u32,
    rate: BitRate,
    delay: SimTime,
    n: u64,
) -> Result<LinkSpec, String> {
    if a as u64 >= n || b as u64 >= n {
        return Err(format!("{what}: node ids must be below {n}"));
    }
    if a == b {
        return Err(format!("{what}: a link joins two different nodes"));
    }
    if rate < BitRate::from_mbps(1) || rate > BitRate::from_gbps(100_000) {
        return Err(format!(
            "{what}: rate must be in 1Mbps..=100Tbps, got {rate}"
        ));
    }
    if delay > SimTime::from_ms(1000) {
        return Err(format!("{what}: delay must be at most 1s, got {delay}"));
    }
    Ok(LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate,
        delay,
        loss: 0.0,
    })
}

fn parse_hpcc(text: &str) -> Result<Parsed, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (ln, head) = lines.next().ok_or("empty file")?;
    let nums: Vec<u64> = head
        .split_whitespace()
        .map(|x| x.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("line {ln}: expected `nodes switches links`, got `{head}`"))?;
    let [n_nodes, n_sw, n_links] = nums[..] else {
        return Err(format!(
            "line {ln}: expected `nodes switches links`, got `{head}`"
        ));
    };
    if n_nodes > 1_000_000 || n_sw >= n_nodes || n_links > 10_000_000 {
        return Err(format!(
            "line {ln}: need switches < nodes <= 1000000 and links <= 10000000, got `{head}`"
        ));
    }
    let mut is_switch = vec![false; n_nodes as usize];
    let mut sw_count = 0;
    if n_sw > 0 {
        let (ln, sws) = lines.next().ok_or("the switch-id line is missing")?;
        for x in sws.split_whitespace() {
            let id: u64 = x
                .parse()
                .map_err(|_| format!("line {ln}: switch id `{x}` is not a number"))?;
            if id >= n_nodes || is_switch[id as usize] {
                return Err(format!(
                    "line {ln}: switch id {id} is out of range (0..{n_nodes}) or repeated"
                ));
            }
            is_switch[id as usize] = true;
            sw_count += 1;
        }
        if sw_count != n_sw {
            return Err(format!(
                "line {ln}: {sw_count} switch ids, the first line says {n_sw}"
            ));
        }
    }
    // Original id -> dcsim id: hosts first, each group in ascending id.
    let n_hosts = (n_nodes - n_sw) as usize;
    if n_hosts < 2 {
        return Err(format!("line 1: at least 2 hosts needed, got {n_hosts}"));
    }
    let mut to_dcsim = vec![0u32; n_nodes as usize];
    let mut node_ids = Vec::with_capacity(n_nodes as usize);
    for want_switch in [false, true] {
        for id in 0..n_nodes as usize {
            if is_switch[id] == want_switch {
                to_dcsim[id] = node_ids.len() as u32;
                node_ids.push(id as u32);
            }
        }
    }
    let mut links = Vec::new();
    for _ in 0..n_links {
        let (ln, l) = lines
            .next()
            .ok_or_else(|| format!("{} link lines, the first line says {n_links}", links.len()))?;
        let v: Vec<&str> = l.split_whitespace().collect();
        if v.len() != 5 {
            return Err(format!(
                "line {ln}: expected `a b rate delay error_rate`, got `{l}`"
            ));
        }
        let id = |s: &str| -> Result<u32, String> {
            let x: u64 = s
                .parse()
                .map_err(|_| format!("line {ln}: node id `{s}` is not a number"))?;
            if x >= n_nodes {
                return Err(format!("line {ln}: node id {x} is not below {n_nodes}"));
            }
            Ok(to_dcsim[x as usize])
        };
        let (a, b) = (id(v[0])?, id(v[1])?);
        let rate: BitRate = v[2]
            .parse()
            .map_err(|e| format!("line {ln}: rate `{}`: {e}", v[2]))?;
        let delay: SimTime = v[3]
            .parse()
            .map_err(|e| format!("line {ln}: delay `{}`: {e}", v[3]))?;
        let err: f64 = v[4]
            .parse()
            .map_err(|_| format!("line {ln}: error rate `{}` is not a number", v[4]))?;
        if !(0.0..1.0).contains(&err) {
            return Err(format!(
                "line {ln}: error rate {err} is not a probability in [0, 1)"
            ));
        }
        let mut link = check_link(&format!("line {ln}"), a, b, rate, delay, n_nodes)?;
        link.loss = err;
        links.push(link);
    }
    if let Some((ln, l)) = lines.next() {
        return Err(format!(
            "line {ln}: `{l}` after the {n_links} links the first line announces"
        ));
    }
    Ok((n_hosts, n_sw as usize, links, node_ids, Default::default()))
}

/// Checks the graph (hosts link to switches only, everything is connected) and derives what
/// the parameterised topologies compute from their parameters. A host may have several links
/// (multi-NIC servers, dual ToRs, planes; see `net::routing`); the longest path counts each
/// host through its *home* link: its first link to a switch that links to other switches
/// (a NIC's ToR rather than a server's internal switch), else its first.
fn finish(
    n_hosts: usize,
    n_switches: usize,
    links: Vec<LinkSpec>,
    node_ids: Vec<u32>,
    buffers: std::collections::BTreeMap<u32, crate::units::Bytes>,
) -> Result<FileTopo, String> {
    let n = n_hosts + n_switches;
    let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (i, l) in links.iter().enumerate() {
        adj[l.a.idx()].push((l.b.idx(), i));
        adj[l.b.idx()].push((l.a.idx(), i));
    }
    let name = |x: usize| node_ids[x];
    for (h, a) in adj.iter().enumerate().take(n_hosts) {
        if a.is_empty() {
            return Err(format!("host {} has no link", name(h)));
        }
        if let Some(&(o, _)) = a.iter().find(|x| x.0 < n_hosts) {
            return Err(format!(
                "hosts {} and {} are linked directly: hosts connect to switches",
                name(h),
                name(o)
            ));
        }
    }
    // Each host's home link first, for the longest path.
    for h in 0..n_hosts {
        let home = (0..adj[h].len())
            .find(|&i| adj[adj[h][i].0].iter().any(|&(y, _)| y >= n_hosts))
            .unwrap_or(0);
        adj[h].swap(0, home);
    }
    // Tiers: hop distance from the nearest host (multi-source BFS).
    let mut dist = vec![u32::MAX; n];
    let mut q = std::collections::VecDeque::new();
    for (h, d) in dist.iter_mut().enumerate().take(n_hosts) {
        *d = 0;
        q.push_back(h);
    }
    while let Some(x) = q.pop_front() {
        for &(y, _) in &adj[x] {
            if dist[y] == u32::MAX {
                dist[y] = dist[x] + 1;
                q.push_back(y);
            }
        }
    }
    if let Some(x) = (0..n).find(|&x| dist[x] == u32::MAX) {
        return Err(format!("node {} is not connected to any host", name(x)));
    }
    let switches = (n_hosts..n)
        .map(|s| SwitchSpec {
            name: format!("s{}", name(s)),
            tier: dist[s].min(255) as u8,
            buffer: buffers.get(&(s as u32)).copied(),
        })
        .collect();
    let host_rate = (0..n_hosts)
        .map(|h| links[adj[h][0].1].rate)
        .max()
        .expect("hosts");
    let max_ports = (n_hosts..n).map(|s| adj[s].len()).max().unwrap_or(0);
    let max_rate = links.iter().map(|l| l.rate).max().unwrap_or(host_rate);
    let max_delay = links.iter().map(|l| l.delay).max().unwrap_or(SimTime::ZERO);
    let longest = longest_path(n_hosts, &adj, &links)?;
    Ok(FileTopo {
        spec: TopoSpec {
            n_hosts,
            switches,
            links,
        },
        node_ids,
        host_rate,
        longest,
        max_ports,
        max_rate,
        max_delay,
    })
}

/// The hops of the host-to-host shortest path (by hop count, hosts not forwarding) with the
/// largest unloaded round trip of a 1500-byte packet: `2·delay + serialization` per link;
/// of equal ones, the first host pair (by source, then destination), and of that pair's
/// shortest paths the first found with the largest cost.
///
/// Counting hosts by their home link (the first of `adj`), a host pair's cost is its two links' plus the costliest
/// shortest path between their switches (ToRs): one breadth-first search per ToR (and one
/// more for the winning pair's path), not one per host, which was quadratic in hosts.
fn longest_path(
    n_hosts: usize,
    adj: &[Vec<(usize, usize)>],
    links: &[LinkSpec],
) -> Result<Vec<(BitRate, SimTime)>, String> {
    let n = adj.len();
    let cost = |l: usize| 2 * links[l].delay.0 as u128 + links[l].rate.ser_time(1500).0 as u128;
    let tor_of = |h: usize| adj[h][0].0;
    let up = |h: usize| cost(adj[h][0].1);
    // Per ToR: its hosts' two costliest links (with the first host of each cost).
    let mut top: std::collections::BTreeMap<usize, [Option<(u128, usize)>; 2]> = Default::default();
    for h in 0..n_hosts {
        let t = top.entry(tor_of(h)).or_default();
        let c = (up(h), h);
        // Larger cost first; of equal costs the smaller host id.
        let better = |a: (u128, usize), b: Option<(u128, usize)>| {
            b.is_none_or(|b| a.0 > b.0 || (a.0 == b.0 && a.1 < b.1))
        };
        if better(c, t[0]) {
            t[1] = t[0];
            t[0] = Some(c);
        } else if better(c, t[1]) {
            t[1] = Some(c);
        }
    }
    // ToRs in the order of their first host (the order the errors name them in), and the
    // hosts of each.
    let mut tors: Vec<usize> = Vec::with_capacity(top.len());
    let mut hosts_at: Vec<Vec<usize>> = vec![Vec::new(); n];
    for h in 0..n_hosts {
        if hosts_at[tor_of(h)].is_empty() {
            tors.push(tor_of(h));
        }
        hosts_at[tor_of(h)].push(h);
    }
    let mut search = Search::new(n);
    // Each host's costliest partner: its link plus the best over the other ToRs' costliest
    // host, or over its own ToR's other hosts.
    let mut best_of = vec![0u128; n_hosts];
    for &t in &tors {
        search.from(t, n_hosts, adj, &cost);
        if let Some(&u) = tors.iter().find(|&&u| search.dist[u] == u32::MAX) {
            // The first ToR is host 0's: host 0 and the first host it cannot reach.
            let (src, d) = (hosts_at[t][0], hosts_at[u][0]);
            return Err(format!("no path from host {src} to host {d}"));
        }
        // The two best (value, host) over every host, counted through its ToR.
        let mut best: [Option<(u128, usize)>; 2] = [None, None];
        for &u in &tors {
            for (c, h) in top[&u].iter().flatten() {
                let v = search.acc[u] + c;
                if best[0].is_none_or(|b| v > b.0) {
                    best[1] = best[0];
                    best[0] = Some((v, *h));
                } else if best[1].is_none_or(|b| v > b.0) {
                    best[1] = Some((v, *h));
                }
            }
        }
        for &h in &hosts_at[t] {
            let partner = match best {
                [Some((_, bh)), second] if bh == h => second,
                [first, _] => first,
            };
            best_of[h] = partner.map_or(0, |(v, _)| up(h) + v);
        }
    }
    if n_hosts < 2 {
        return Err("no two hosts".into());
    }
    let m = *best_of.iter().max().expect("hosts");
    let src = (0..n_hosts).find(|&h| best_of[h] == m).expect("a maximum");
    let t = tor_of(src);
    search.from(t, n_hosts, adj, &cost);
    let dst = (0..n_hosts)
        .find(|&d| d != src && up(src) + search.acc[tor_of(d)] + up(d) == m)
        .expect("the maximum's partner");
    // The path: the source's link, the ToRs' path as the search found it, the destination's.
    let mut mid = Vec::new();
    let mut x = tor_of(dst);
    while x != t {
        let l = search.via[x];
        mid.push(l);
        x = if links[l].a.idx() == x {
            links[l].b.idx()
        } else {
            links[l].a.idx()
        };
    }
    mid.reverse();
    Ok(std::iter::once(adj[src][0].1)
        .chain(mid)
        .chain(std::iter::once(adj[dst][0].1))
        .map(|l| (links[l].rate, links[l].delay))
        .collect())
}

/// A breadth-first search over switches from one switch: hop distance, the costliest
/// shortest path's cost to each switch, and the link it arrives over.
struct Search {
    dist: Vec<u32>,
    acc: Vec<u128>,
    via: Vec<usize>,
    order: Vec<usize>,
}

#[cfg(test)]
thread_local! {
    /// Searches made on this thread (tests count them: one per ToR, one more).
    static SEARCHES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Search {
    fn new(n: usize) -> Search {
        Search {
            dist: vec![u32::MAX; n],
            acc: vec![0; n],
            via: vec![usize::MAX; n],
            order: Vec::with_capacity(n),
        }
    }

    /// From switch `t`; hosts (`0..n_hosts`) are not entered.
    fn from(
        &mut self,
        t: usize,
        n_hosts: usize,
        adj: &[Vec<(usize, usize)>],
        cost: &dyn Fn(usize) -> u128,
    ) {
        #[cfg(test)]
        SEARCHES.with(|c| c.set(c.get() + 1));
        self.dist.iter_mut().for_each(|d| *d = u32::MAX);
        self.order.clear();
        self.dist[t] = 0;
        self.acc[t] = 0;
        self.order.push(t);
        let mut i = 0;
        while i < self.order.len() {
            let x = self.order[i];
            i += 1;
            for &(y, li) in &adj[x] {
                if y < n_hosts {
                    continue;
                }
                let c = self.acc[x] + cost(li);
                if self.dist[y] == u32::MAX {
                    self.dist[y] = self.dist[x] + 1;
                    self.acc[y] = c;
                    self.via[y] = li;
                    self.order.push(y);
                } else if self.dist[y] == self.dist[x] + 1 && c > self.acc[y] {
                    self.acc[y] = c;
                    self.via[y] = li;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search from every host that [`longest_path`] replaces (quadratic in hosts), as
    /// the reference its result must equal.
    fn longest_path_reference(
        n_hosts: usize,
        adj: &[Vec<(usize, usize)>],
        links: &[LinkSpec],
    ) -> Result<Vec<(BitRate, SimTime)>, String> {
        let n = adj.len();
        let cost = |l: &LinkSpec| 2 * l.delay.0 as u128 + l.rate.ser_time(1500).0 as u128;
        let mut best: Option<(u128, Vec<usize>)> = None;
        let mut dist = vec![u32::MAX; n];
        let mut acc = vec![0u128; n];
        let mut via = vec![usize::MAX; n];
        let mut order = Vec::with_capacity(n);
        for src in 0..n_hosts {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            order.clear();
            dist[src] = 0;
            acc[src] = 0;
            order.push(src);
            let mut i = 0;
            while i < order.len() {
                let x = order[i];
                i += 1;
                if x < n_hosts && x != src {
                    continue;
                }
                for &(y, li) in &adj[x] {
                    let c = acc[x] + cost(&links[li]);
                    if dist[y] == u32::MAX {
                        dist[y] = dist[x] + 1;
                        acc[y] = c;
                        via[y] = li;
                        order.push(y);
                    } else if dist[y] == dist[x] + 1 && c > acc[y] {
                        acc[y] = c;
                        via[y] = li;
                    }
                }
            }
            for dst in 0..n_hosts {
                if dst == src {
                    continue;
                }
                if dist[dst] == u32::MAX {
                    return Err(format!("no path from host {src} to host {dst}"));
                }
                if best.as_ref().is_none_or(|(b, _)| acc[dst] > *b) {
                    let mut path = Vec::new();
                    let mut x = dst;
                    while x != src {
                        let l = via[x];
                        path.push(l);
                        x = if links[l].a.idx() == x {
                            links[l].b.idx()
                        } else {
                            links[l].a.idx()
                        };
                    }
                    path.reverse();
                    best = Some((acc[dst], path));
                }
            }
        }
        let (_, path) = best.ok_or("no two hosts")?;
        Ok(path
            .iter()
            .map(|&l| (links[l].rate, links[l].delay))
            .collect())
    }

    /// A random fabric: `tors` ToRs and `spines` spines, each ToR linked to a random
    /// non-empty subset of spines (sometimes twice), some ToR-ToR links, hosts spread at
    /// random; rates and delays from small sets, so that equal costs (ties) are common.
    fn random_fabric(rng: &mut crate::engine::RngStream) -> (usize, Vec<LinkSpec>) {
        let rates = [10, 25, 40, 100];
        let delays = [1, 2, 3];
        let pick = |rng: &mut crate::engine::RngStream, k: usize| rng.below(k as u64) as usize;
        let hosts = 2 + pick(rng, 30);
        let tors = 1 + pick(rng, 6);
        let spines = pick(rng, 4);
        let mut links = Vec::new();
        let mut link = |a: usize, b: usize, rng: &mut crate::engine::RngStream| {
            links.push(LinkSpec {
                a: NodeId(a as u32),
                b: NodeId(b as u32),
                rate: BitRate::from_gbps(rates[pick(rng, 4)]),
                delay: SimTime::from_us(delays[pick(rng, 3)]),
                loss: 0.0,
            });
        };
        for h in 0..hosts {
            link(h, hosts + pick(rng, tors), rng);
        }
        for t in 0..tors {
            for s in 0..spines {
                if spines == 1 || rng.uniform() < 0.6 {
                    link(hosts + t, hosts + tors + s, rng);
                }
                if rng.uniform() < 0.1 {
                    link(hosts + t, hosts + tors + s, rng);
                }
            }
            if t > 0 && rng.uniform() < 0.3 {
                link(hosts + t, hosts + t - 1, rng);
            }
        }
        (hosts, links)
    }

    #[test]
    fn one_search_per_tor_finds_what_a_search_per_host_found() {
        let mut rng = crate::engine::RngStream::new(7, "fabrics");
        let (mut same, mut disconnected) = (0, 0);
        for _ in 0..3000 {
            let (hosts, links) = random_fabric(&mut rng);
            let n = 1 + links
                .iter()
                .map(|l| l.a.idx().max(l.b.idx()))
                .max()
                .unwrap();
            let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
            for (i, l) in links.iter().enumerate() {
                adj[l.a.idx()].push((l.b.idx(), i));
                adj[l.b.idx()].push((l.a.idx(), i));
            }
            let want = longest_path_reference(hosts, &adj, &links);
            SEARCHES.with(|c| c.set(0));
            let got = longest_path(hosts, &adj, &links);
            assert_eq!(got, want, "{hosts} hosts, links {links:?}");
            let tors = (0..hosts)
                .map(|h| adj[h][0].0)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            let searches = SEARCHES.with(|c| c.get());
            assert!(searches <= tors + 1, "{searches} searches for {tors} ToRs");
            if got.is_ok() {
                same += 1;
            } else {
                disconnected += 1;
            }
        }
        assert!(same > 1000 && disconnected > 50, "{same} {disconnected}");
    }

    #[test]
    fn a_large_star_takes_two_searches() {
        // 20,000 hosts on one switch: a search from every host was 20,000 searches over
        // 20,000 links each (seconds; 61 s at 40,000 hosts).
        let mut t =
            String::from("hosts = 20000\nswitches = 1\nrate = \"10Gbps\"\ndelay = \"1us\"\n");
        for h in 0..20_000 {
            t += &format!("[[link]]\na = {h}\nb = 20000\n");
        }
        let f = write(&t);
        SEARCHES.with(|c| c.set(0));
        let topo = load(f.path(), TopoFormat::Dcsim).unwrap();
        assert_eq!(SEARCHES.with(|c| c.get()), 2);
        assert_eq!(topo.longest.len(), 2);
    }

    fn write(text: &str) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn dcsim_format_with_parallel_links_and_defaults() {
        let f = write(
            "hosts = 2\nswitches = 2\nrate = \"10Gbps\"\ndelay = \"1us\"\n\
             [[link]]\na = 0\nb = 2\n[[link]]\na = 1\nb = 3\n\
             [[link]]\na = 2\nb = 3\nrate = \"40Gbps\"\ndelay = \"2us\"\ncount = 3\n",
        );
        let t = load(f.path(), TopoFormat::Dcsim).unwrap();
        assert_eq!(t.spec.n_hosts, 2);
        assert_eq!(t.spec.links.len(), 5);
        assert_eq!(t.max_ports, 4);
        assert_eq!(t.max_rate, BitRate::from_gbps(40));
        assert_eq!(t.host_rate, BitRate::from_gbps(10));
        assert_eq!(
            t.longest,
            vec![
                (BitRate::from_gbps(10), SimTime::from_us(1)),
                (BitRate::from_gbps(40), SimTime::from_us(2)),
                (BitRate::from_gbps(10), SimTime::from_us(1)),
            ]
        );
        assert_eq!(
            t.spec.switches.iter().map(|s| s.tier).collect::<Vec<_>>(),
            vec![1, 1]
        );
    }

    #[test]
    fn hpcc_format_renumbers_hosts_first() {
        // Node 0 is a switch, 1 and 2 hosts.
        let f = write("3 1 2\n0\n1 0 100Gbps 0.001ms 0\n0 2 100Gbps 0.001ms 0\n");
        let t = load(f.path(), TopoFormat::Hpcc).unwrap();
        assert_eq!(t.node_ids, vec![1, 2, 0]);
        assert_eq!(t.spec.links[0].a, NodeId(0));
        assert_eq!(t.spec.links[0].b, NodeId(2));
        assert_eq!(t.spec.links[0].delay, SimTime::from_us(1));
    }

    #[test]
    fn malformed_files_name_the_line() {
        let cases = [
            ("3 1\n0\n", "line 1: expected `nodes switches links`"),
            ("3 1 1\n5\n", "line 2: switch id 5"),
            ("3 1 2\n0\n1 0 100Gbps 1us 0\n", "1 link lines"),
            ("3 1 1\n0\n1 0 fast 1us 0\n", "line 3: rate `fast`"),
            ("3 1 1\n0\n1 0 1Gbps 1us 1.5\n", "line 3: error rate 1.5"),
            ("3 1 1\n0\n1 9 1Gbps 1us 0\n", "line 3: node id 9"),
            (
                "3 1 2\n0\n1 0 1Gbps 1us 0\n0 2 1Gbps 1us 0\n0 1 1Gbps 1us 0\n",
                "line 5",
            ),
            (
                "4 1 2\n0\n1 0 1Gbps 1us 0\n2 0 1Gbps 1us 0\n",
                "host 3 has no link",
            ),
            (
                "5 2 3\n0 4\n1 0 1Gbps 1us 0\n2 0 1Gbps 1us 0\n3 0 1Gbps 1us 0\n",
                "node 4 is not connected",
            ),
        ];
        for (text, want) in cases {
            let f = write(text);
            let e = load(f.path(), TopoFormat::Hpcc).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let f = write("hosts = 2\nswitches = 1\n[[link]]\na = 0\nb = 2\n");
        let e = load(f.path(), TopoFormat::Dcsim).unwrap_err();
        assert!(e.contains("link 1 (a = 0, b = 2): no `rate`"), "{e}");
        let f = write(
            "hosts = 2\nswitches = 1\nrate = \"1Gbps\"\ndelay = \"1us\"\n[[link]]\na = 0\nb = 7\n",
        );
        let e = load(f.path(), TopoFormat::Dcsim).unwrap_err();
        assert!(e.contains("below 3"), "{e}");
        let f = write("hosts = 2\nswitches = 1\nlinks = 3\n");
        let e = load(f.path(), TopoFormat::Dcsim).unwrap_err();
        assert!(e.contains("line 3") && e.contains("unknown field"), "{e}");
    }
}
