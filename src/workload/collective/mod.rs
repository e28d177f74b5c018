//! Collective communication (NCCL, MPI) as dependency graphs of flows: each algorithm is the
//! messages its ranks exchange, step by step, each message waiting for the data it carries
//! (received from the previous step) and for a free slot on its connection.
//!
//! Model (a reconstruction of NCCL's Simple protocol; every parameter configurable):
//!
//! * **Channels.** The buffer is cut into `channels` contiguous parts (sizes differing by at
//!   most a byte), each moved by its own copy of the algorithm over the same ranks, in
//!   parallel (NCCL's channels, each its own ring or tree and connections).
//! * **Chunks and slices.** Data moves in pieces of `slice` bytes, each one flow (RDMA: one
//!   message). A ring works through its channel's part in loops of `chunk` bytes per rank
//!   (NCCL's chunk: 2 MiB, four 512 KiB steps of its Simple protocol), each step's chunk sent
//!   slice by slice; the other algorithms cut each transfer into slices.
//! * **Slots.** A connection (one sender to one receiver in one channel) carries its pieces in
//!   order, at most `depth` of them in flight: piece k waits until piece k − `depth` has been
//!   received (NCCL: a 4 MiB buffer of 8 steps of 512 KiB).
//! * **Data.** A piece that forwards or reduces what a rank received waits for that piece's
//!   arrival (its dependency is on the flow that brought it; reduction compute is free).
//!
//! Algorithms: `ring` (all-reduce as reduce-scatter then all-gather, 2(n−1) steps; all-gather
//! and reduce-scatter n−1 steps; broadcast as a pipelined chain from the root);
//! `halving_doubling` (all-reduce as recursive halving then doubling, log2 n steps each, n a
//! power of two); `tree` (all-reduce over NCCL's double binary tree: half the buffer per
//! tree, reduced up and broadcast down, pipelined by chunks); `hierarchical` (all-reduce in
//! three phases over servers of `gpus_per_server` ranks: a ring reduce-scatter inside each
//! server, a ring all-reduce of each local rank's share between servers, among the ranks of
//! one local index, and a ring all-gather inside each server; a rank starts a phase once
//! its part of the previous one has completed, as Horovod's and BlueConnect's run them, not
//! pipelined across phases); `pairwise` and `direct`
//! all-to-all (n−1 steps, one peer per step; every peer at once).
//!
//! Sizes follow nccl-tests: `size` is the all-reduce buffer, the all-gather output, the
//! reduce-scatter input, the all-to-all buffer per rank (`size / n` to each rank) and the
//! broadcast buffer. Bus bandwidth = algorithm bandwidth (size / time) × 2(n−1)/n for
//! all-reduce, × (n−1)/n for all-gather, reduce-scatter and all-to-all, × 1 for broadcast.
//!
//! Not modelled: the LL and LL128 protocols, reduction compute time, GPU memory bandwidth,
//! NCCL's automatic choice of algorithm and channel count (the algorithm is always the one
//! configured, never swapped).

use super::*;
use algo::*;

mod algo;
#[cfg(test)]
mod tests;

/// A collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveOp {
    #[serde(rename = "allreduce")]
    AllReduce,
    #[serde(rename = "allgather")]
    AllGather,
    ReduceScatter,
    #[serde(rename = "alltoall")]
    AllToAll,
    Broadcast,
}

impl CollectiveOp {
    pub fn name(self) -> &'static str {
        match self {
            CollectiveOp::AllReduce => "allreduce",
            CollectiveOp::AllGather => "allgather",
            CollectiveOp::ReduceScatter => "reduce_scatter",
            CollectiveOp::AllToAll => "alltoall",
            CollectiveOp::Broadcast => "broadcast",
        }
    }

    /// nccl-tests' factor from algorithm bandwidth to bus bandwidth over `n` ranks.
    pub fn bus_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            CollectiveOp::AllReduce => 2.0 * (n - 1.0) / n,
            CollectiveOp::AllGather | CollectiveOp::ReduceScatter | CollectiveOp::AllToAll => {
                (n - 1.0) / n
            }
            CollectiveOp::Broadcast => 1.0,
        }
    }

    /// The algorithm used when none is given.
    pub fn default_algorithm(self) -> Algorithm {
        match self {
            CollectiveOp::AllToAll => Algorithm::Pairwise,
            _ => Algorithm::Ring,
        }
    }
}

/// How a collective is carried out (see the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    Ring,
    Tree,
    HalvingDoubling,
    Hierarchical,
    Pairwise,
    Direct,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::HalvingDoubling => "halving_doubling",
            Algorithm::Hierarchical => "hierarchical",
            Algorithm::Pairwise => "pairwise",
            Algorithm::Direct => "direct",
        }
    }

    /// The operations it implements.
    pub fn supports(self, op: CollectiveOp) -> bool {
        use CollectiveOp::*;
        match self {
            Algorithm::Ring => op != AllToAll,
            Algorithm::Tree | Algorithm::HalvingDoubling | Algorithm::Hierarchical => {
                op == AllReduce
            }
            Algorithm::Pairwise | Algorithm::Direct => op == AllToAll,
        }
    }
}

fn d_channels() -> u32 {
    1
}
/// NCCL's defaults (the Simple protocol; see the module), shared with `training`.
pub(in crate::workload) fn d_chunk() -> Bytes {
    Bytes(2 << 20)
}
pub(in crate::workload) fn d_slice() -> Bytes {
    Bytes(512 << 10)
}
pub(in crate::workload) fn d_depth() -> u32 {
    8
}
fn d_repeat() -> u32 {
    1
}

/// `[workload] kind = "collective"`: one collective over a set of ranks, or several back to
/// back (`repeat`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveConfig {
    pub op: CollectiveOp,
    /// Default: ring (pairwise for all-to-all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<Algorithm>,
    /// Bytes (see the module for what they measure per operation).
    pub size: Bytes,
    /// The host of each rank, in rank order (at least 2, distinct). Default: every host, rank
    /// i on host i.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<u32>>,
    /// Parallel copies of the algorithm, each over its share of the buffer, 1..=64. Default 1.
    #[serde(default = "d_channels")]
    pub channels: u32,
    /// A ring's bytes per rank per loop (NCCL's chunk; smaller for a buffer under
    /// `ranks × chunk` per channel). Default 2MiB.
    #[serde(default = "d_chunk")]
    pub chunk: Bytes,
    /// Bytes per piece: one flow (RDMA: one message). Default 512KiB.
    #[serde(default = "d_slice")]
    pub slice: Bytes,
    /// Pieces in flight per connection, 1..=64. Default 8.
    #[serde(default = "d_depth")]
    pub depth: u32,
    /// Broadcast: the root rank. Default 0.
    #[serde(default)]
    pub root: u32,
    /// Start of the first. Default 0s.
    #[serde(default)]
    pub start: SimTime,
    /// Collectives back to back, each starting at a rank once the previous one has finished
    /// there, 1..=10000. Default 1.
    #[serde(default = "d_repeat")]
    pub repeat: u32,
    /// Compute before each collective at every rank (a compute step of this length, after
    /// the previous collective finished there). Default 0s: none.
    #[serde(default, skip_serializing_if = "is_zero_time")]
    pub compute: SimTime,
    /// The ranks come in servers of this many consecutive ranks (rank `i` of a server on
    /// rail `i`). Rings are then rail-aligned: channel c's ring snakes through each server
    /// so that it leaves and enters servers on rails c and c − 1. Hierarchical all-reduce
    /// needs it (its phases inside and between servers). Default: none, every channel's
    /// ring in rank order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_server: Option<u32>,
}

fn is_zero_time(t: &SimTime) -> bool {
    *t == SimTime::ZERO
}

/// What one collective of a workload is, for its results.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveInfo {
    pub op: CollectiveOp,
    pub algorithm: Algorithm,
    pub size: u64,
    pub ranks: usize,
    /// The workload ids of its flows.
    pub flows: Vec<u32>,
}

impl CollectiveInfo {
    /// Its result, from the records of its flows (`record(id)`: start and time received, ps).
    pub fn result(
        &self,
        index: usize,
        record: impl Fn(u32) -> Option<(u64, Option<u64>)>,
    ) -> CollectiveResult {
        let (mut start, mut finish, mut done) = (u64::MAX, 0u64, 0u32);
        for &id in &self.flows {
            if let Some((s, f)) = record(id) {
                start = start.min(s);
                if let Some(f) = f {
                    finish = finish.max(f);
                    done += 1;
                }
            }
        }
        let all = done as usize == self.flows.len();
        let time = all.then(|| finish.saturating_sub(start));
        let algbw = time
            .filter(|&t| t > 0)
            .map(|t| self.size as f64 * 8.0 / (t as f64 * 1e-12) / 1e9);
        CollectiveResult {
            collective: index as u32,
            op: self.op.name(),
            algorithm: self.algorithm.name(),
            ranks: self.ranks as u32,
            size_bytes: self.size,
            flows: self.flows.len() as u32,
            flows_finished: done,
            start_ps: if start == u64::MAX { None } else { Some(start) },
            finish_ps: all.then_some(finish),
            time_ps: time,
            algbw_gbps: algbw,
            busbw_gbps: algbw.map(|a| a * self.op.bus_factor(self.ranks)),
        }
    }
}

/// What became of one collective of a run (nccl-tests' measures, in Gbit/s: divide by 8 for
/// their GB/s).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CollectiveResult {
    /// Its place among the workload's collectives.
    pub collective: u32,
    pub op: &'static str,
    pub algorithm: &'static str,
    pub ranks: u32,
    pub size_bytes: u64,
    pub flows: u32,
    pub flows_finished: u32,
    /// The first of its flows' starts; none if none started.
    pub start_ps: Option<u64>,
    /// The last of its flows' arrivals, once every one has arrived.
    pub finish_ps: Option<u64>,
    pub time_ps: Option<u64>,
    /// Algorithm bandwidth: `size_bytes` over the time.
    pub algbw_gbps: Option<f64>,
    /// Bus bandwidth: the algorithm bandwidth times the operation's factor (see the module).
    pub busbw_gbps: Option<f64>,
}

/// A dependency graph under construction: flows, joins and compute steps.
pub struct Graph {
    pub flows: Vec<FlowSpec>,
    pub dag: Dag,
    pub collectives: Vec<CollectiveInfo>,
    /// Start of flows that wait for nothing.
    pub start: SimTime,
}

impl Graph {
    pub fn new(start: SimTime) -> Graph {
        Graph {
            flows: Vec::new(),
            dag: Dag::default(),
            collectives: Vec::new(),
            start,
        }
    }

    /// A flow of `size` bytes from `src` to `dst` once every one of `preds` has completed
    /// (at `self.start` when there are none); the predecessor its completion is.
    pub fn send(&mut self, src: u32, dst: u32, size: u64, preds: &[Pred]) -> Pred {
        let id = self.flows.len() as u32;
        let mut f = FlowSpec::new(id, src, dst, size, self.start);
        if !preds.is_empty() {
            f.start = SimTime::ZERO;
            f.after = Some(self.dag.join(src, preds.to_vec()));
        }
        self.flows.push(f);
        Pred::Flow(id)
    }
}

/// Cuts `total` bytes into `n` parts differing by at most one byte (the first `total mod n`
/// one byte longer).
fn split(total: u64, n: u64) -> impl Iterator<Item = u64> {
    let (q, r) = (total / n, total % n);
    (0..n).map(move |i| q + u64::from(i < r))
}

/// The parameters an algorithm runs with.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub channels: u32,
    /// A ring's bytes per rank per loop.
    pub chunk: u64,
    /// Bytes per piece (flow).
    pub slice: u64,
    pub depth: u32,
    /// Broadcast: the root rank.
    pub root: u32,
    /// Ranks in servers of this many: rail-aligned rings, hierarchical all-reduce (0: every
    /// channel's ring in rank order).
    pub server: u32,
}

/// Adds collective `op` over `ranks` (hosts, in rank order) to `g`: rank r starts once
/// `entry[r]` has completed (nothing: at `g.start`). Returns, per rank, what completes the
/// collective there (the pieces it receives last).
pub fn add_collective(
    g: &mut Graph,
    op: CollectiveOp,
    algorithm: Algorithm,
    size: u64,
    ranks: &[u32],
    p: Params,
    entry: &[Vec<Pred>],
) -> Vec<Vec<Pred>> {
    let first = g.flows.len() as u32;
    let n = ranks.len();
    let mut exit = vec![Vec::new(); n];
    let mut conns = Conns::default();
    for (ch, part) in split(size, p.channels as u64).enumerate() {
        let ch = ch as u32;
        let ex = match (op, algorithm) {
            (CollectiveOp::AllReduce, Algorithm::Ring) => {
                ring(g, &mut conns, ch, part, ranks, p, 2 * (n - 1), entry)
            }
            (CollectiveOp::AllGather | CollectiveOp::ReduceScatter, Algorithm::Ring) => {
                ring(g, &mut conns, ch, part, ranks, p, n - 1, entry)
            }
            (CollectiveOp::Broadcast, Algorithm::Ring) => {
                chain(g, &mut conns, ch, part, ranks, p, p.root as usize, entry)
            }
            (CollectiveOp::AllReduce, Algorithm::HalvingDoubling) => {
                halving_doubling(g, &mut conns, ch, part, ranks, p, entry)
            }
            (CollectiveOp::AllReduce, Algorithm::Tree) => {
                double_tree(g, &mut conns, ch, part, ranks, p, entry)
            }
            (CollectiveOp::AllReduce, Algorithm::Hierarchical) => {
                hierarchical(g, &mut conns, ch, part, ranks, p, entry)
            }
            (CollectiveOp::AllToAll, Algorithm::Pairwise | Algorithm::Direct) => all_to_all(
                g,
                &mut conns,
                ch,
                part,
                ranks,
                p,
                algorithm == Algorithm::Pairwise,
                entry,
            ),
            _ => unreachable!("validated: {} does not do {}", algorithm.name(), op.name()),
        };
        for (e, x) in exit.iter_mut().zip(ex) {
            e.extend(x);
        }
    }
    g.collectives.push(CollectiveInfo {
        op,
        algorithm,
        size,
        ranks: n,
        flows: (first..g.flows.len() as u32).collect(),
    });
    exit
}

impl CollectiveConfig {
    /// The algorithm it runs.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm.unwrap_or(self.op.default_algorithm())
    }

    /// Its ranks' hosts.
    pub fn rank_hosts(&self, n_hosts: usize) -> Result<Vec<u32>, String> {
        host_set(&self.ranks, n_hosts)
    }

    /// The flows, joins and collectives it makes.
    pub fn graph(&self, n_hosts: usize) -> Result<Graph, String> {
        let ranks = self.rank_hosts(n_hosts)?;
        let mut g = Graph::new(self.start);
        let p = Params {
            channels: self.channels,
            chunk: self.chunk.0,
            slice: self.slice.0,
            depth: self.depth,
            root: self.root,
            server: self.gpus_per_server.unwrap_or(0),
        };
        let mut entry: Vec<Vec<Pred>> = vec![Vec::new(); ranks.len()];
        for _ in 0..self.repeat {
            if self.compute > SimTime::ZERO {
                for (r, e) in entry.iter_mut().enumerate() {
                    let c = match e.is_empty() {
                        true => g.dag.calc(ranks[r], self.compute, self.start, None),
                        false => {
                            let j = g.dag.join(ranks[r], std::mem::take(e));
                            g.dag.calc(ranks[r], self.compute, SimTime::ZERO, Some(j))
                        }
                    };
                    *e = vec![Pred::Calc(c)];
                }
            }
            entry = add_collective(
                &mut g,
                self.op,
                self.algorithm(),
                self.size.0,
                &ranks,
                p,
                &entry,
            );
        }
        Ok(g)
    }

    /// Checks against the topology; `(key, message)`.
    pub fn validate(&self, n_hosts: usize, host_rate: BitRate) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        let ranks = self
            .rank_hosts(n_hosts)
            .map_err(|m| ("ranks".to_string(), m))?;
        let n = ranks.len();
        let a = self.algorithm();
        if !a.supports(self.op) {
            return e(
                "algorithm",
                format!(
                    "{} does not implement {}; choose {}",
                    a.name(),
                    self.op.name(),
                    [
                        Algorithm::Ring,
                        Algorithm::Tree,
                        Algorithm::HalvingDoubling,
                        Algorithm::Hierarchical,
                        Algorithm::Pairwise,
                        Algorithm::Direct
                    ]
                    .iter()
                    .filter(|x| x.supports(self.op))
                    .map(|x| x.name())
                    .collect::<Vec<_>>()
                    .join(", ")
                ),
            );
        }
        if a == Algorithm::HalvingDoubling && !n.is_power_of_two() {
            return e(
                "ranks",
                format!("halving_doubling needs a power of two of ranks, got {n}"),
            );
        }
        if !(1..=64).contains(&self.channels) {
            return e(
                "channels",
                format!("must be in 1..=64, got {}", self.channels),
            );
        }
        if !(1..=64).contains(&self.depth) {
            return e("depth", format!("must be in 1..=64, got {}", self.depth));
        }
        if a == Algorithm::Hierarchical && self.gpus_per_server.is_none() {
            return e(
                "gpus_per_server",
                "hierarchical all-reduce needs the ranks' servers: set gpus_per_server".into(),
            );
        }
        if let Some(g) = self.gpus_per_server
            && (g < 2 || !n.is_multiple_of(g as usize))
        {
            return e(
                "gpus_per_server",
                format!("must be at least 2 and divide the {n} ranks, got {g}"),
            );
        }
        if self.chunk.0 == 0 {
            return e("chunk", "must be positive".into());
        }
        if self.slice.0 == 0 || self.slice > self.chunk {
            return e(
                "slice",
                format!("must be in 1B..=chunk ({}), got {}", self.chunk, self.slice),
            );
        }
        if !(1..=10_000).contains(&self.repeat) {
            return e(
                "repeat",
                format!("must be in 1..=10000, got {}", self.repeat),
            );
        }
        if self.op == CollectiveOp::Broadcast && self.root as usize >= n {
            return e(
                "root",
                format!("must be a rank in 0..{n}, got {}", self.root),
            );
        }
        let least = self.channels as u64 * n as u64;
        if self.size.0 < least {
            return e(
                "size",
                format!(
                    "{} cannot give every rank of every channel a byte: at least {least} B for {n} ranks and {} channels",
                    self.size, self.channels
                ),
            );
        }
        too_long("size", self.size.0, host_rate)?;
        let flows = self.max_flows(n_hosts);
        if flows > 10_000_000 {
            return e(
                "slice",
                format!("{flows} flows (pieces) is too many: at most 10000000; raise `slice`"),
            );
        }
        Ok(())
    }

    /// An upper bound on its flows.
    pub fn max_flows(&self, n_hosts: usize) -> u64 {
        let n = self.ranks.as_ref().map_or(n_hosts, |r| r.len()) as u64;
        let chunks = self.size.0.div_ceil(self.slice.0.max(1)) + self.channels as u64;
        let per = match (self.op, self.algorithm()) {
            // Per peer and channel its share's slices, plus a partial one.
            (CollectiveOp::AllToAll, _) => chunks + n * self.channels as u64,
            (_, Algorithm::Tree) => 4 * chunks.saturating_mul(2),
            // A rank sends part/2 + part/4 + ... per channel halving, as much doubling: at
            // most the buffer's slices plus a partial one per step and channel, twice.
            (_, Algorithm::HalvingDoubling) => 2 * (chunks + 64 * self.channels as u64),
            // Two rings inside servers over the buffer, one between them over a share.
            (_, Algorithm::Hierarchical) => 3 * (chunks + n * self.channels as u64),
            // A chain forwards the buffer once per rank.
            (CollectiveOp::Broadcast, _) => chunks,
            // A ring step per rank and channel at least, each step's chunk in slices.
            _ => 2 * (chunks + n * self.channels as u64),
        };
        per.saturating_mul(n).saturating_mul(self.repeat as u64)
    }

    /// The bytes its flows carry.
    pub fn bytes(&self, n_hosts: usize) -> f64 {
        let n = self.ranks.as_ref().map_or(n_hosts, |r| r.len()) as f64;
        let s = self.size.0 as f64;
        self.repeat as f64
            * match self.op {
                CollectiveOp::AllReduce => 2.0 * (n - 1.0) * s,
                CollectiveOp::AllGather | CollectiveOp::ReduceScatter => (n - 1.0) * s,
                CollectiveOp::AllToAll => (n - 1.0) * s,
                CollectiveOp::Broadcast => (n - 1.0) * s,
            }
    }
}
