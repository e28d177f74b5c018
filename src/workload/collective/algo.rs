//! The algorithms: each adds the pieces (flows) of one channel of a collective to a graph,
//! with what each waits for (see the parent module for the model).

use super::*;

/// Per connection, the pieces sent so far (for the slot rule).
#[derive(Default)]
pub(super) struct Conns(std::collections::HashMap<(u32, u32, u32), Vec<Pred>>);

impl Conns {
    /// Sends a piece on connection (`ch`, `src` -> `dst`) after `data`, and after the piece
    /// `depth` before it on the connection.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send(
        &mut self,
        g: &mut Graph,
        depth: u32,
        ch: u32,
        src: u32,
        dst: u32,
        size: u64,
        data: &[Pred],
    ) -> Pred {
        let sent = self.0.entry((ch, src, dst)).or_default();
        let mut preds = data.to_vec();
        if sent.len() >= depth as usize {
            preds.push(sent[sent.len() - depth as usize]);
        }
        preds.sort_unstable();
        preds.dedup();
        let p = g.send(src, dst, size, &preds);
        sent.push(p);
        p
    }
}

/// A ring over `ranks` for `steps` steps (2(n−1): all-reduce; n−1: all-gather or
/// reduce-scatter) on one channel's `part` bytes, in loops of one chunk per rank: at step s
/// rank r sends a chunk to rank r + 1, slice by slice, each slice once the slice it reduces
/// or forwards has arrived from rank r − 1 (the previous step's).
#[allow(clippy::too_many_arguments)]
pub(super) fn ring(
    g: &mut Graph,
    conns: &mut Conns,
    ch: u32,
    part: u64,
    ranks: &[u32],
    p: Params,
    steps: usize,
    entry: &[Vec<Pred>],
) -> Vec<Vec<Pred>> {
    let n = ranks.len();
    if p.server > 0 {
        // Rail-aligned: the ring over this channel's order, exits back in rank order.
        let order = rail_ring(n, p.server as usize, ch as usize);
        let r: Vec<u32> = order.iter().map(|&i| ranks[i]).collect();
        let e: Vec<Vec<Pred>> = order.iter().map(|&i| entry[i].clone()).collect();
        let q = Params { server: 0, ..p };
        let ex = ring(g, conns, ch, part, &r, q, steps, &e);
        let mut exit = vec![Vec::new(); n];
        for (pos, &i) in order.iter().enumerate() {
            exit[i] = ex[pos].clone();
        }
        return exit;
    }
    // NCCL shrinks the chunk of a small buffer so that every rank has one.
    let chunk = p.chunk.min(part.div_ceil(n as u64)).max(1);
    let loops = part.div_ceil(chunk * n as u64).max(1);
    let mut exit = vec![Vec::new(); n];
    for loop_bytes in split(part, loops) {
        let chunks: Vec<u64> = split(loop_bytes, n as u64).collect();
        // Slices per chunk (the first chunk is the largest).
        let slices = chunks[0].div_ceil(p.slice).max(1);
        // What each rank received at the previous step, per slice.
        let mut got: Vec<Vec<Option<Pred>>> = vec![vec![None; slices as usize]; n];
        for s in 0..steps {
            let mut now: Vec<Vec<Option<Pred>>> = vec![vec![None; slices as usize]; n];
            for r in 0..n {
                let to = (r + 1) % n;
                let bytes = chunks[(r + n - s % n) % n];
                for (j, size) in split(bytes, slices).enumerate() {
                    if size == 0 {
                        continue;
                    }
                    let data = match got[r][j] {
                        Some(x) => vec![x],
                        None => entry[r].clone(),
                    };
                    let f = conns.send(g, p.depth, ch, ranks[r], ranks[to], size, &data);
                    now[to][j] = Some(f);
                }
            }
            got = now;
        }
        for r in 0..n {
            exit[r].extend(got[r].iter().flatten());
        }
    }
    exit
}

/// Hierarchical all-reduce over servers of `p.server` consecutive ranks (see the module):
/// reduce-scatter inside each server, all-reduce of each local rank's share between servers
/// (a ring among the ranks of one local index), all-gather inside each server; every phase a
/// ring in rank order.
pub(super) fn hierarchical(
    g: &mut Graph,
    conns: &mut Conns,
    ch: u32,
    part: u64,
    ranks: &[u32],
    p: Params,
    entry: &[Vec<Pred>],
) -> Vec<Vec<Pred>> {
    let n = ranks.len();
    let gs = p.server as usize;
    let m = n / gs;
    let q = Params { server: 0, ..p };
    // A ring of gs − 1 steps inside each server (reduce-scatter, all-gather) over the part,
    // each rank entering after `input`.
    let inside = |g: &mut Graph, conns: &mut Conns, input: &[Vec<Pred>]| -> Vec<Vec<Pred>> {
        ranks
            .chunks(gs)
            .zip(input.chunks(gs))
            .flat_map(|(r, e)| ring(g, conns, ch, part, r, q, gs - 1, e))
            .collect()
    };
    // Phase 1: reduce-scatter of the part inside each server.
    let mut held = inside(g, conns, entry);
    // Phase 2: each local rank's share all-reduced among the servers (its rail).
    if m > 1 {
        for (i, share) in split(part, gs as u64).enumerate() {
            let idx: Vec<usize> = (0..m).map(|k| k * gs + i).collect();
            let rail: Vec<u32> = idx.iter().map(|&r| ranks[r]).collect();
            let e: Vec<Vec<Pred>> = idx.iter().map(|&r| held[r].clone()).collect();
            let ex = ring(g, conns, ch, share, &rail, q, 2 * (m - 1), &e);
            for (&r, x) in idx.iter().zip(ex) {
                held[r] = x;
            }
        }
    }
    // Phase 3: all-gather of the part inside each server.
    inside(g, conns, &held)
}

/// The ring order (rank indices) of channel `ch` over `n` ranks in servers of `g`: server k
/// from local rank c (= ch mod g) up to c − 1 when k is even, from c − 1 down to c when k is
/// odd, so that each step between servers stays on one rail (c − 1 from an even server to
/// the next, c from an odd one), as NCCL keeps its rings' inter-server steps on one NIC's
/// rail. With an odd number of servers the step that closes the ring changes rails.
pub(super) fn rail_ring(n: usize, g: usize, ch: usize) -> Vec<usize> {
    let c = ch % g;
    let mut order = Vec::with_capacity(n);
    for k in 0..n / g {
        let local: Vec<usize> = (0..g).map(|i| (c + i) % g).collect();
        let it: Box<dyn Iterator<Item = &usize>> = match k % 2 {
            0 => Box::new(local.iter()),
            _ => Box::new(local.iter().rev()),
        };
        order.extend(it.map(|&i| k * g + i));
    }
    order
}

/// Broadcast from `root` as a pipelined chain root, root + 1, ...: each piece forwarded once
/// received.
#[allow(clippy::too_many_arguments)]
pub(super) fn chain(
    g: &mut Graph,
    conns: &mut Conns,
    ch: u32,
    part: u64,
    ranks: &[u32],
    p: Params,
    root: usize,
    entry: &[Vec<Pred>],
) -> Vec<Vec<Pred>> {
    let n = ranks.len();
    let pieces = part.div_ceil(p.slice).max(1);
    let mut exit = vec![Vec::new(); n];
    for size in split(part, pieces) {
        let mut data = entry[root].clone();
        for k in 0..n - 1 {
            let (a, b) = ((root + k) % n, (root + k + 1) % n);
            let mut preds = data;
            preds.extend(entry[b].iter().copied());
            let f = conns.send(g, p.depth, ch, ranks[a], ranks[b], size, &preds);
            data = vec![f];
            if k + 2 == n {
                exit[b].push(f);
            }
        }
    }
    exit
}

/// Recursive halving (reduce-scatter, log2 n steps: at step k rank r exchanges half of what
/// it holds with rank r XOR n/2^(k+1)) then recursive doubling (all-gather, the steps in
/// reverse); each step's exchange cut into pieces of at most `chunk`, and waiting for all of
/// the previous step's data at the rank.
pub(super) fn halving_doubling(
    g: &mut Graph,
    conns: &mut Conns,
    ch: u32,
    part: u64,
    ranks: &[u32],
    p: Params,
    entry: &[Vec<Pred>],
) -> Vec<Vec<Pred>> {
    let n = ranks.len();
    let k_max = n.trailing_zeros() as usize;
    // Bytes exchanged at each step: part/2, part/4, ..., part/n, then back up.
    let mut sizes: Vec<u64> = (1..=k_max).map(|k| part >> k).collect();
    let dists: Vec<usize> = (1..=k_max).map(|k| n >> k).collect();
    let mut order: Vec<usize> = (0..k_max).collect();
    order.extend((0..k_max).rev());
    sizes = order.iter().map(|&k| sizes[k].max(1)).collect();
    let mut held: Vec<Vec<Pred>> = entry.to_vec();
    for (step, &k) in order.iter().enumerate() {
        let mut now: Vec<Vec<Pred>> = vec![Vec::new(); n];
        let bytes = sizes[step];
        let pieces = bytes.div_ceil(p.slice).max(1);
        for r in 0..n {
            let peer = r ^ dists[k];
            for size in split(bytes, pieces) {
                let f = conns.send(g, p.depth, ch, ranks[r], ranks[peer], size, &held[r]);
                now[peer].push(f);
            }
        }
        held = now;
    }
    held
}

/// NCCL's double binary tree: two binary trees over the ranks (the second mirrored for an
/// even count, so that each rank is an inner node of at most one; shifted by one for an odd
/// count); each tree reduces half the buffer towards its root and broadcasts the result back
/// down, slice by slice.
pub(super) fn double_tree(
    g: &mut Graph,
    conns: &mut Conns,
    ch: u32,
    part: u64,
    ranks: &[u32],
    p: Params,
    entry: &[Vec<Pred>],
) -> Vec<Vec<Pred>> {
    let n = ranks.len();
    let mut exit = vec![Vec::new(); n];
    let halves: Vec<u64> = split(part, 2).collect();
    for (t, &half) in halves.iter().enumerate() {
        if half == 0 {
            continue;
        }
        // Tree 0 over rank order; tree 1 over the mirrored order (n even) or shifted by one
        // (n odd), as NCCL builds them.
        let pos_of = |r: usize| match t {
            0 => r,
            _ if n.is_multiple_of(2) => n - 1 - r,
            _ => (r + n - 1) % n,
        };
        let mut rank_at = vec![0usize; n];
        for r in 0..n {
            rank_at[pos_of(r)] = r;
        }
        let (parent, children) = btree(n);
        // Ranks in order from the leaves up (deepest positions first).
        let depth_of = |mut x: usize| {
            let mut d = 0;
            while let Some(u) = parent[x] {
                x = u;
                d += 1;
            }
            d
        };
        let mut up_order: Vec<usize> = (0..n).collect();
        up_order.sort_by_key(|&x| std::cmp::Reverse(depth_of(x)));
        let pieces = half.div_ceil(p.slice).max(1);
        let ch_t = 2 * ch + t as u32;
        for size in split(half, pieces) {
            // Reduce: a node sends up once its children's pieces (and its own entry) are in.
            let mut up: Vec<Vec<Pred>> = vec![Vec::new(); n];
            for &x in &up_order {
                let r = rank_at[x];
                let mut preds = entry[r].clone();
                preds.extend(up[x].iter().copied());
                if let Some(u) = parent[x] {
                    let f = conns.send(g, p.depth, ch_t, ranks[r], ranks[rank_at[u]], size, &preds);
                    up[u].push(f);
                } else {
                    // The root holds the reduced piece once its children's are in.
                    up[x] = preds;
                }
            }
            // Broadcast down from the root.
            let root = (0..n)
                .find(|&x| parent[x].is_none())
                .expect("a tree has a root");
            let mut down: Vec<Vec<Pred>> = vec![Vec::new(); n];
            down[root] = up[root].clone();
            let mut stack = vec![root];
            while let Some(x) = stack.pop() {
                for &c in &children[x] {
                    let f = conns.send(
                        g,
                        p.depth,
                        ch_t,
                        ranks[rank_at[x]],
                        ranks[rank_at[c]],
                        size,
                        &down[x],
                    );
                    down[c] = vec![f];
                    stack.push(c);
                }
            }
            for x in 0..n {
                exit[rank_at[x]].extend(down[x].iter().copied());
            }
        }
    }
    exit
}

/// NCCL's binary tree over positions 0..n: position 0 is the root (with one child, the
/// highest power of two below n); any other position x, whose lowest set bit is b, has the
/// parent (x − b) | 2b, or x − b where that is beyond n; odd positions are leaves. Returns
/// each position's parent and children.
pub fn btree(n: usize) -> (Vec<Option<usize>>, Vec<Vec<usize>>) {
    let mut parent = vec![None; n];
    let mut children = vec![Vec::new(); n];
    for (x, p) in parent.iter_mut().enumerate().skip(1) {
        let bit = x & x.wrapping_neg();
        let mut up = (x ^ bit) | (bit << 1);
        if up >= n {
            up = x ^ bit;
        }
        *p = Some(up);
        children[up].push(x);
    }
    (parent, children)
}

/// All-to-all of `part` bytes per rank: `part / n` from every rank to every other, either all
/// at once (`direct`) or in n − 1 steps, at step k rank r sending to rank r + k once its
/// step k − 1 exchange is done (`pairwise`: what it sent has been received and what it was
/// sent has arrived).
#[allow(clippy::too_many_arguments)]
pub(super) fn all_to_all(
    g: &mut Graph,
    conns: &mut Conns,
    ch: u32,
    part: u64,
    ranks: &[u32],
    p: Params,
    pairwise: bool,
    entry: &[Vec<Pred>],
) -> Vec<Vec<Pred>> {
    let n = ranks.len();
    let each = (part / n as u64).max(1);
    let pieces = each.div_ceil(p.slice).max(1);
    let mut exit = vec![Vec::new(); n];
    let mut prev: Vec<Vec<Pred>> = entry.to_vec();
    for k in 1..n {
        let mut sent: Vec<Vec<Pred>> = vec![Vec::new(); n];
        let mut got: Vec<Vec<Pred>> = vec![Vec::new(); n];
        for r in 0..n {
            let to = (r + k) % n;
            let data = if pairwise {
                prev[r].clone()
            } else {
                entry[r].clone()
            };
            for size in split(each, pieces) {
                let f = conns.send(g, p.depth, ch, ranks[r], ranks[to], size, &data);
                sent[r].push(f);
                got[to].push(f);
            }
        }
        for r in 0..n {
            exit[r].extend(got[r].iter().copied());
            if pairwise {
                prev[r] = sent[r].iter().chain(&got[r]).copied().collect();
            }
        }
    }
    exit
}
