//! Unit tests of the collectives' graphs.

use super::*;

#[test]
fn btree_is_nccls() {
    // NCCL's illustration for 14 ranks: 0 -> 8; 8 -> 4, 12; 4 -> 2, 6; 12 -> 10, 13; ...
    let (parent, children) = btree(14);
    assert_eq!(parent[0], None);
    assert_eq!(children[0], vec![8]);
    assert_eq!(children[8], vec![4, 12]);
    assert_eq!(children[4], vec![2, 6]);
    assert_eq!(children[12], vec![10, 13]);
    assert_eq!(children[10], vec![9, 11]);
    assert_eq!(parent[13], Some(12));
    for x in (1..14).step_by(2) {
        assert!(children[x].is_empty(), "odd positions are leaves");
    }
    for n in 1..300 {
        let (parent, _) = btree(n);
        for (x, &p) in parent.iter().enumerate().skip(1) {
            let p = p.expect("every position but the root has a parent");
            assert!(p < n);
            // Parents have a larger lowest set bit (or are the root): no cycle.
            assert!(p == 0 || (p & p.wrapping_neg()) > (x & x.wrapping_neg()));
        }
    }
}

#[test]
fn double_tree_inner_ranks_are_disjoint_for_even_counts() {
    for n in (2..64).step_by(2) {
        let (_, children) = btree(n);
        let inner: Vec<bool> = (0..n).map(|x| !children[x].is_empty()).collect();
        for r in 0..n {
            assert!(!(inner[r] && inner[n - 1 - r]), "n = {n}, rank {r}");
        }
    }
}

#[test]
fn every_byte_moves_once_per_step() {
    let cfg = |op: &str, alg: &str, extra: &str| -> CollectiveConfig {
        toml::from_str(&format!(
            "op = \"{op}\"\nalgorithm = \"{alg}\"\nsize = \"1000003B\"\n{extra}"
        ))
        .unwrap()
    };
    let bytes = |c: &CollectiveConfig, n: usize| -> u64 {
        c.graph(n).unwrap().flows.iter().map(|f| f.size).sum()
    };
    let s = 1_000_003u64;
    // Ring all-reduce: every rank sends 2(n-1) chunks of S/n.
    let c = cfg(
        "allreduce",
        "ring",
        "channels = 3\nchunk = \"64KB\"\nslice = \"10KB\"",
    );
    assert_eq!(bytes(&c, 5), 2 * 4 * s);
    assert_eq!(c.bytes(5), (2 * 4 * s) as f64);
    let c = cfg("allgather", "ring", "slice = \"7KB\"");
    assert_eq!(bytes(&c, 6), 5 * s);
    let c = cfg("allreduce", "tree", "slice = \"7KB\"");
    // Up and down each tree: every rank but a root sends its half up once and every
    // rank but a leaf sends it down to each child: 2(n-1) half-buffer transfers each.
    assert_eq!(bytes(&c, 6), 2 * 5 * s);
    // Hierarchical over 3 servers of 4: each server reduce-scatters and all-gathers the
    // buffer (3 steps of S/4 per rank each way), each local rank all-reduces its S/4 share
    // over the 3 servers (4 steps of S/12): 6S/4·12 + 4S/12·12 = 22S in all.
    let c = cfg(
        "allreduce",
        "hierarchical",
        "gpus_per_server = 4\nslice = \"9KB\"",
    );
    assert_eq!(bytes(&c, 12), 22 * s);
    let c = cfg("broadcast", "ring", "root = 2");
    assert_eq!(bytes(&c, 4), 3 * s);
    let c = cfg("alltoall", "pairwise", "");
    assert_eq!(bytes(&c, 4), 12 * (s / 4));
}

#[test]
fn a_ring_slice_waits_for_the_slice_it_forwards_and_a_free_slot() {
    let c: CollectiveConfig = toml::from_str(
        "op = \"allgather\"\nsize = \"4000B\"\nslice = \"500B\"\nchunk = \"1000B\"\ndepth = 1",
    )
    .unwrap();
    let g = c.graph(4).unwrap();
    // 3 steps x 4 ranks x 2 slices; the first slice of each rank waits for nothing.
    assert_eq!(g.flows.len(), 24);
    let waits: Vec<&Vec<Pred>> = g
        .flows
        .iter()
        .map(|f| f.after.map_or(&EMPTY, |j| &g.dag.joins[j as usize].preds))
        .collect();
    assert!(waits[0].is_empty());
    // Rank 0's second slice of step 0 waits for its first (depth 1).
    assert_eq!(*waits[1], vec![Pred::Flow(0)]);
    // Rank 1's first slice of step 1 forwards what rank 0 sent it (flow 0), after its
    // own last slice of step 0 (flow 3).
    assert_eq!(*waits[8 + 2], vec![Pred::Flow(0), Pred::Flow(3)]);
}

static EMPTY: Vec<Pred> = Vec::new();

#[test]
fn rail_rings_snake_through_servers_on_one_rail_per_step() {
    // 3 servers of 4: channel 1 goes 1 2 3 0 | 0 3 2 1 | 1 2 3 0 (local ranks).
    assert_eq!(
        algo::rail_ring(12, 4, 1),
        [1, 2, 3, 0, 4, 7, 6, 5, 9, 10, 11, 8]
    );
    for ch in 0..8 {
        let o = algo::rail_ring(32, 8, ch);
        let mut sorted = o.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..32).collect::<Vec<_>>(), "a permutation");
        // Each step between servers stays on one rail (local rank), the closing one too
        // (an even number of servers).
        for i in 0..32 {
            let (a, b) = (o[i], o[(i + 1) % 32]);
            if a / 8 != b / 8 {
                assert_eq!(a % 8, b % 8, "channel {ch}: {a} -> {b}");
            }
        }
    }
}

#[test]
fn the_flow_bound_holds_and_is_not_loose() {
    // The validation bound on a collective's flows (`max_flows`): never below the graph's,
    // and within 16x of it, for every algorithm, at sizes from a slice per rank to many.
    for (op, alg) in [
        (CollectiveOp::AllReduce, Algorithm::Ring),
        (CollectiveOp::AllReduce, Algorithm::Tree),
        (CollectiveOp::AllReduce, Algorithm::HalvingDoubling),
        (CollectiveOp::AllReduce, Algorithm::Hierarchical),
        (CollectiveOp::AllGather, Algorithm::Ring),
        (CollectiveOp::AllToAll, Algorithm::Pairwise),
        (CollectiveOp::Broadcast, Algorithm::Ring),
    ] {
        for (size, channels) in [
            (1u64 << 20, 1u32),
            (1 << 20, 8),
            (64 << 20, 4),
            (256 << 20, 8),
        ] {
            let c: CollectiveConfig = toml::from_str(&format!(
                "op = \"{}\"\nalgorithm = \"{}\"\nsize = \"{size}B\"\nchannels = {channels}\ngpus_per_server = 8\n",
                op.name(),
                alg.name()
            ))
            .unwrap();
            let flows = c.graph(32).unwrap().flows.len() as u64;
            let bound = c.max_flows(32);
            assert!(bound >= flows, "{op:?} {alg:?} {size}: {bound} < {flows}");
            assert!(
                bound <= 16 * flows,
                "{op:?} {alg:?} {size}: {bound} vs {flows}"
            );
        }
    }
}
