//! A training iteration as a workload (`[workload] kind = "training"`): the compute steps and
//! collectives data, tensor, pipeline and expert parallelism put on the network, as one
//! dependency graph per iteration.
//!
//! Ranks: `dp × tp × pp` of them, rank `(stage · dp + d) · tp + t` on host `ranks[...]`
//! (tensor-parallel ranks adjacent, then data-parallel, then pipeline stages: Megatron-LM's
//! order). The model's `layers` are split over the `pp` stages as evenly as they go (the
//! first stages take one more).
//!
//! One iteration (a reconstruction of Megatron-LM with a GPipe schedule; every size and time
//! a parameter):
//!
//! * **Forward**, micro-batch by micro-batch: at each of its layers a rank computes for
//!   `forward`, then (`tp` > 1) all-reduces `activation` bytes over its tensor-parallel group
//!   before the next layer can start; a mixture-of-experts layer (every `moe_every`-th) then
//!   sends `tokens` bytes through an all-to-all over its expert-parallel group (`ep` ranks of
//!   its data-parallel group), computes its experts for `expert`, and sends them back through
//!   a second all-to-all. A stage's output for a micro-batch goes to the same (d, t) rank of the
//!   next stage (`activation` bytes), whose first layer waits for it.
//! * **Backward** once a stage has run every micro-batch forward: micro-batches in order,
//!   layers in reverse, `backward` per layer, the same tensor-parallel all-reduces and expert
//!   all-to-alls; gradients go to the previous stage. Once a layer's last micro-batch is done
//!   at a rank, its gradients (`params / tp` bytes) are all-reduced over the data-parallel
//!   group (`dp` > 1) while the rank computes on (gradient buckets of one layer, overlapped
//!   with the backward pass, as PyTorch DDP does).
//! * **Optimizer step**: `optimizer` of compute at each rank once its backward pass and every
//!   one of its gradient all-reduces are done; the next iteration starts there after it.
//!
//! A rank's compute steps run one at a time, in that order (one compute stream per GPU);
//! collectives run beside them. Results: per iteration its time and, per rank, its compute
//! time and the time its compute stream stood idle (waiting for the network, or for a rank
//! upstream: pipeline bubbles count as waiting), `training.csv`; every collective in
//! `collectives.csv`.
//!
//! Not modelled: 1F1B and interleaved pipeline schedules, activation recomputation, ZeRO
//! sharding, gradient bucketing across layers, compute slowed by communication, memory.

use super::collective::{
    Algorithm, CollectiveOp, Graph, Params, add_collective, d_chunk, d_depth, d_slice,
};
use super::*;

fn one() -> u32 {
    1
}
fn d_layers() -> u32 {
    4
}
fn d_micro() -> u32 {
    1
}
fn d_params() -> Bytes {
    Bytes(64 << 20)
}
fn d_activation() -> Bytes {
    Bytes(4 << 20)
}
fn d_forward() -> SimTime {
    SimTime::from_us(100)
}
fn d_backward() -> SimTime {
    SimTime::from_us(200)
}
fn d_channels() -> u32 {
    2
}

/// `[workload] kind = "training"` (see the module).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingConfig {
    /// Data-, tensor-, pipeline- and expert-parallel degrees (`ep` divides `dp`). Default 1.
    #[serde(default = "one")]
    pub dp: u32,
    #[serde(default = "one")]
    pub tp: u32,
    #[serde(default = "one")]
    pub pp: u32,
    #[serde(default = "one")]
    pub ep: u32,
    /// Host of each rank; default: hosts 0..dp·tp·pp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<u32>>,
    /// Layers of the model, 1..=10000. Default 4.
    #[serde(default = "d_layers")]
    pub layers: u32,
    /// Micro-batches per iteration, 1..=1024. Default 1.
    #[serde(default = "d_micro")]
    pub microbatches: u32,
    /// Gradient bytes of one layer (before tensor parallelism shards it). Default 64MiB.
    #[serde(default = "d_params")]
    pub params: Bytes,
    /// Bytes of one micro-batch's activations at a layer's output. Default 4MiB.
    #[serde(default = "d_activation")]
    pub activation: Bytes,
    /// Compute per layer per micro-batch. Defaults 100us and 200us.
    #[serde(default = "d_forward")]
    pub forward: SimTime,
    #[serde(default = "d_backward")]
    pub backward: SimTime,
    /// Compute of the optimizer step. Default 0s.
    #[serde(default)]
    pub optimizer: SimTime,
    /// Mixture of experts: every `moe_every`-th layer (0: none). Default 0.
    #[serde(default)]
    pub moe_every: u32,
    /// Bytes each rank sends through one expert all-to-all. Default 4MiB.
    #[serde(default = "d_activation")]
    pub tokens: Bytes,
    /// Expert compute per micro-batch, forward (backward: twice). Default 100us.
    #[serde(default = "d_forward")]
    pub expert: SimTime,
    /// Iterations, 1..=1000. Default 1.
    #[serde(default = "one")]
    pub iterations: u32,
    /// Algorithms: data-parallel and tensor-parallel all-reduces (default ring), expert
    /// all-to-all (default pairwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp_algorithm: Option<Algorithm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tp_algorithm: Option<Algorithm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ep_algorithm: Option<Algorithm>,
    /// Collectives' channels, chunk, slice and depth (`collective`). Defaults 2, 2MiB, 512KiB, 8.
    #[serde(default = "d_channels")]
    pub channels: u32,
    #[serde(default = "d_chunk")]
    pub chunk: Bytes,
    #[serde(default = "d_slice")]
    pub slice: Bytes,
    #[serde(default = "d_depth")]
    pub depth: u32,
    /// Start of the first iteration. Default 0s.
    #[serde(default)]
    pub start: SimTime,
}

/// The compute steps of one iteration, per rank, for its results.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingInfo {
    /// Host of each rank.
    pub hosts: Vec<u32>,
    /// Per iteration, per rank: its compute steps in order (numbers in the graph's
    /// [`Dag::calcs`]); the last is the optimizer step.
    pub iterations: Vec<Vec<Vec<u32>>>,
    /// The start of the first iteration.
    pub start: SimTime,
}

/// What became of one rank in one iteration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankIteration {
    pub iteration: u32,
    pub rank: u32,
    pub host: u32,
    /// When its iteration started (the previous optimizer step done) and ended (its own
    /// optimizer step done; none if the run ended first).
    pub start_ps: u64,
    pub finish_ps: Option<u64>,
    /// Its compute steps' total, and the time its compute stream stood idle in between.
    pub compute_ps: u64,
    pub idle_ps: Option<u64>,
}

impl TrainingInfo {
    /// Per iteration and rank, from each compute step's end (`done(c)`: None if it did not
    /// run) and length (`len(c)`).
    pub fn results(
        &self,
        done: impl Fn(u32) -> Option<SimTime>,
        len: impl Fn(u32) -> SimTime,
    ) -> Vec<RankIteration> {
        let mut out = Vec::new();
        let mut prev: Vec<Option<u64>> = vec![Some(self.start.0); self.hosts.len()];
        for (i, ranks) in self.iterations.iter().enumerate() {
            for (r, calcs) in ranks.iter().enumerate() {
                let compute: u64 = calcs.iter().map(|&c| len(c).0).sum();
                let finish = calcs.last().and_then(|&c| done(c)).map(|t| t.0);
                let start = prev[r].unwrap_or(u64::MAX);
                out.push(RankIteration {
                    iteration: i as u32,
                    rank: r as u32,
                    host: self.hosts[r],
                    start_ps: start,
                    finish_ps: finish.filter(|_| start != u64::MAX),
                    compute_ps: compute,
                    idle_ps: finish.map(|f| f.saturating_sub(start).saturating_sub(compute)),
                });
                prev[r] = finish;
            }
        }
        out
    }
}

/// One iteration over every rank.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IterationResult {
    pub iteration: u32,
    /// The first rank's start and the last rank's end (none if a rank did not finish).
    pub start_ps: u64,
    pub finish_ps: Option<u64>,
    pub time_ps: Option<u64>,
    /// The largest compute total of a rank, and the ranks' idle times (mean, largest).
    pub compute_max_ps: u64,
    pub idle_mean_ps: Option<f64>,
    pub idle_max_ps: Option<u64>,
}

/// Each iteration's summary over its ranks' rows (as [`TrainingInfo::results`] orders them).
pub fn iterations(rows: &[RankIteration]) -> Vec<IterationResult> {
    let mut out: Vec<IterationResult> = Vec::new();
    for chunk in rows.chunk_by(|a, b| a.iteration == b.iteration) {
        let start = chunk.iter().map(|r| r.start_ps).min().unwrap_or(0);
        let all = chunk.iter().all(|r| r.finish_ps.is_some());
        let finish = all.then(|| {
            chunk
                .iter()
                .filter_map(|r| r.finish_ps)
                .max()
                .unwrap_or(start)
        });
        let idle: Option<Vec<u64>> = chunk.iter().map(|r| r.idle_ps).collect();
        out.push(IterationResult {
            iteration: chunk[0].iteration,
            start_ps: start,
            finish_ps: finish,
            time_ps: finish.map(|f| f - start),
            compute_max_ps: chunk.iter().map(|r| r.compute_ps).max().unwrap_or(0),
            idle_mean_ps: idle
                .as_ref()
                .map(|v| v.iter().sum::<u64>() as f64 / v.len().max(1) as f64),
            idle_max_ps: idle.as_ref().and_then(|v| v.iter().copied().max()),
        });
    }
    out
}

/// A rank's compute stream while the graph is built: what its next step waits for.
struct Stream {
    host: u32,
    /// What the next compute step waits for (the previous step, data that arrived).
    wait: Vec<Pred>,
    /// Its steps this iteration.
    steps: Vec<u32>,
}

impl Stream {
    /// Adds a compute step of `dur` after what the stream waits for (and `extra`).
    fn compute(&mut self, g: &mut Graph, dur: SimTime, extra: &[Pred]) -> Pred {
        let mut preds = std::mem::take(&mut self.wait);
        preds.extend_from_slice(extra);
        let c = match preds.is_empty() {
            true => g.dag.calc(self.host, dur, g.start, None),
            false => {
                let j = g.dag.join(self.host, preds);
                g.dag.calc(self.host, dur, SimTime::ZERO, Some(j))
            }
        };
        self.steps.push(c);
        self.wait = vec![Pred::Calc(c)];
        Pred::Calc(c)
    }
}

impl TrainingConfig {
    fn world(&self) -> usize {
        (self.dp * self.tp * self.pp) as usize
    }

    fn hosts(&self, n_hosts: usize) -> Result<Vec<u32>, String> {
        let w = self.world();
        let hosts = match &self.ranks {
            Some(r) => r.clone(),
            None if w <= n_hosts => (0..w as u32).collect(),
            None => {
                return Err(format!(
                    "dp × tp × pp = {w} ranks, but the topology has {n_hosts} hosts"
                ));
            }
        };
        if hosts.len() != w {
            return Err(format!(
                "{} hosts listed for dp × tp × pp = {w} ranks",
                hosts.len()
            ));
        }
        if w >= 2 {
            host_set(&Some(hosts.clone()), n_hosts)?;
        } else if hosts[0] as usize >= n_hosts {
            return Err(format!("host {} is not in 0..{n_hosts}", hosts[0]));
        }
        Ok(hosts)
    }

    /// The rank of (stage, d, t).
    fn rank(&self, s: u32, d: u32, t: u32) -> usize {
        ((s * self.dp + d) * self.tp + t) as usize
    }

    /// The graph of every iteration, and what its results need.
    #[allow(clippy::needless_range_loop)] // micro-batch m indexes per-rank tables
    pub fn graph(&self, n_hosts: usize) -> Result<(Graph, TrainingInfo), String> {
        let hosts = self.hosts(n_hosts)?;
        let mut g = Graph::new(self.start);
        let p = Params {
            server: 0,
            channels: self.channels,
            chunk: self.chunk.0,
            slice: self.slice.0,
            depth: self.depth,
            root: 0,
        };
        let (dp, tp, pp) = (self.dp, self.tp, self.pp);
        // Layers of each stage (the first `layers mod pp` stages take one more).
        let stage_layers: Vec<std::ops::Range<u32>> = {
            let (q, r) = (self.layers / pp, self.layers % pp);
            let mut from = 0;
            (0..pp)
                .map(|s| {
                    let n = q + u32::from(s < r);
                    from += n;
                    from - n..from
                })
                .collect()
        };
        let moe = |l: u32| self.moe_every > 0 && (l + 1).is_multiple_of(self.moe_every);
        let mut info = TrainingInfo {
            hosts: hosts.clone(),
            iterations: Vec::new(),
            start: self.start,
        };
        let mut streams: Vec<Stream> = hosts
            .iter()
            .map(|&h| Stream {
                host: h,
                wait: Vec::new(),
                steps: Vec::new(),
            })
            .collect();
        let dp_alg = self.dp_algorithm.unwrap_or(Algorithm::Ring);
        let tp_alg = self.tp_algorithm.unwrap_or(Algorithm::Ring);
        let ep_alg = self.ep_algorithm.unwrap_or(Algorithm::Pairwise);
        // A collective over the ranks `group`, each entering after its stream's last step;
        // each stream's next step then waits for the collective's end at its rank.
        let blocking = |g: &mut Graph,
                        streams: &mut [Stream],
                        group: &[usize],
                        op: CollectiveOp,
                        alg: Algorithm,
                        size: u64| {
            let entry: Vec<Vec<Pred>> = group.iter().map(|&r| streams[r].wait.clone()).collect();
            let group_hosts: Vec<u32> = group.iter().map(|&r| hosts[r]).collect();
            let exit = add_collective(g, op, alg, size, &group_hosts, p, &entry);
            for (&r, e) in group.iter().zip(exit) {
                streams[r].wait = e;
            }
        };
        let tp_group =
            |s: u32, d: u32| -> Vec<usize> { (0..tp).map(|t| self.rank(s, d, t)).collect() };
        let ep_group = |s: u32, d: u32, t: u32| -> Vec<usize> {
            let first = d / self.ep * self.ep;
            (first..first + self.ep)
                .map(|x| self.rank(s, x, t))
                .collect()
        };
        // One pass of one layer at stage `s` for micro-batch `m`: each rank computes for `dur`
        // (the stage's boundary layer also waits for what `arrived` from the neighbouring
        // stage), then all-reduces over its tensor-parallel group.
        let layer = |g: &mut Graph,
                     streams: &mut [Stream],
                     s: u32,
                     m: usize,
                     dur: SimTime,
                     arrived: Option<&[Vec<Option<Pred>>]>| {
            for d in 0..dp {
                for t in 0..tp {
                    let r = self.rank(s, d, t);
                    let extra: Vec<Pred> =
                        arrived.map_or(Vec::new(), |a| a[r][m].into_iter().collect());
                    streams[r].compute(g, dur, &extra);
                }
                if tp > 1 {
                    blocking(
                        g,
                        streams,
                        &tp_group(s, d),
                        CollectiveOp::AllReduce,
                        tp_alg,
                        self.activation.0,
                    );
                }
            }
        };
        // Micro-batch `m`'s activations (or gradients) from every rank of stage `from` to the
        // same (d, t) rank of stage `to`, once that rank's last step is done.
        let hand_over = |g: &mut Graph,
                         streams: &[Stream],
                         from: u32,
                         to: u32,
                         m: usize,
                         table: &mut [Vec<Option<Pred>>]| {
            for d in 0..dp {
                for t in 0..tp {
                    let (a, b) = (self.rank(from, d, t), self.rank(to, d, t));
                    table[b][m] =
                        Some(g.send(hosts[a], hosts[b], self.activation.0, &streams[a].wait));
                }
            }
        };
        for _ in 0..self.iterations {
            for st in streams.iter_mut() {
                st.steps.clear();
            }
            // Per (stage, d, t): what the stage's first layer waits for, per micro-batch.
            let mut grads: Vec<Vec<Pred>> = vec![Vec::new(); hosts.len()];
            // Forward.
            let mut inbound: Vec<Vec<Option<Pred>>> =
                vec![vec![None; self.microbatches as usize]; hosts.len()];
            for m in 0..self.microbatches as usize {
                for s in 0..pp {
                    let first = stage_layers[s as usize].start;
                    for l in stage_layers[s as usize].clone() {
                        let arrived = (l == first).then_some(&inbound[..]);
                        layer(&mut g, &mut streams, s, m, self.forward, arrived);
                        if moe(l) {
                            self.expert_layer(
                                &mut g,
                                &mut streams,
                                s,
                                &ep_group,
                                ep_alg,
                                p,
                                &hosts,
                                1,
                            );
                        }
                    }
                    if s + 1 < pp {
                        hand_over(&mut g, &streams, s, s + 1, m, &mut inbound);
                    }
                }
            }
            // Backward: micro-batches in order, stages from the last.
            let mut outbound: Vec<Vec<Option<Pred>>> =
                vec![vec![None; self.microbatches as usize]; hosts.len()];
            for m in 0..self.microbatches as usize {
                let last_mb = m + 1 == self.microbatches as usize;
                for s in (0..pp).rev() {
                    let last = stage_layers[s as usize].end;
                    for l in stage_layers[s as usize].clone().rev() {
                        if moe(l) {
                            self.expert_layer(
                                &mut g,
                                &mut streams,
                                s,
                                &ep_group,
                                ep_alg,
                                p,
                                &hosts,
                                2,
                            );
                        }
                        let arrived = (l + 1 == last).then_some(&outbound[..]);
                        layer(&mut g, &mut streams, s, m, self.backward, arrived);
                        if last_mb && dp > 1 {
                            // This layer's gradients are complete: all-reduce them over each
                            // data-parallel group, beside the compute that follows.
                            for t in 0..tp {
                                let group: Vec<usize> =
                                    (0..dp).map(|d| self.rank(s, d, t)).collect();
                                let entry: Vec<Vec<Pred>> =
                                    group.iter().map(|&r| streams[r].wait.clone()).collect();
                                let gh: Vec<u32> = group.iter().map(|&r| hosts[r]).collect();
                                let size = (self.params.0 / tp as u64).max(dp as u64);
                                let exit = add_collective(
                                    &mut g,
                                    CollectiveOp::AllReduce,
                                    dp_alg,
                                    size,
                                    &gh,
                                    p,
                                    &entry,
                                );
                                for (&r, e) in group.iter().zip(exit) {
                                    grads[r].extend(e);
                                }
                            }
                        }
                    }
                    if s > 0 {
                        hand_over(&mut g, &streams, s, s - 1, m, &mut outbound);
                    }
                }
            }
            // Optimizer step at every rank, after its gradients are all-reduced.
            for (r, st) in streams.iter_mut().enumerate() {
                let extra = std::mem::take(&mut grads[r]);
                st.compute(&mut g, self.optimizer, &extra);
            }
            info.iterations
                .push(streams.iter().map(|st| st.steps.clone()).collect());
        }
        Ok((g, info))
    }

    /// A mixture-of-experts layer at stage `s` for one micro-batch: all-to-all, expert
    /// compute (`times` × `expert`), all-to-all, per expert-parallel group.
    #[allow(clippy::too_many_arguments)]
    fn expert_layer(
        &self,
        g: &mut Graph,
        streams: &mut [Stream],
        s: u32,
        ep_group: &dyn Fn(u32, u32, u32) -> Vec<usize>,
        alg: Algorithm,
        p: Params,
        hosts: &[u32],
        times: u64,
    ) {
        if self.ep < 2 {
            for d in 0..self.dp {
                for t in 0..self.tp {
                    let r = self.rank(s, d, t);
                    streams[r].compute(g, SimTime(self.expert.0 * times), &[]);
                }
            }
            return;
        }
        for d0 in (0..self.dp).step_by(self.ep as usize) {
            for t in 0..self.tp {
                let group = ep_group(s, d0, t);
                let gh: Vec<u32> = group.iter().map(|&r| hosts[r]).collect();
                let size = self.tokens.0 * self.ep as u64;
                for pass in 0..2 {
                    let entry: Vec<Vec<Pred>> =
                        group.iter().map(|&r| streams[r].wait.clone()).collect();
                    let exit = add_collective(g, CollectiveOp::AllToAll, alg, size, &gh, p, &entry);
                    for (&r, e) in group.iter().zip(exit) {
                        streams[r].wait = e;
                        if pass == 0 {
                            streams[r].compute(g, SimTime(self.expert.0 * times), &[]);
                        }
                    }
                }
            }
        }
    }

    /// Checks against the topology; `(key, message)`.
    pub fn validate(&self, n_hosts: usize, host_rate: BitRate) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        for (k, v, hi) in [
            ("dp", self.dp, 4096),
            ("tp", self.tp, 64),
            ("pp", self.pp, 512),
            ("ep", self.ep, 4096),
            ("layers", self.layers, 10_000),
            ("microbatches", self.microbatches, 1024),
            ("iterations", self.iterations, 1000),
            ("channels", self.channels, 64),
            ("depth", self.depth, 64),
        ] {
            if v == 0 || v > hi {
                return e(k, format!("must be in 1..={hi}, got {v}"));
            }
        }
        if !self.dp.is_multiple_of(self.ep) {
            return e(
                "ep",
                format!("must divide dp ({}), got {}", self.dp, self.ep),
            );
        }
        if self.layers < self.pp {
            return e(
                "layers",
                format!(
                    "{} layers cannot fill {} pipeline stages",
                    self.layers, self.pp
                ),
            );
        }
        self.hosts(n_hosts).map_err(|m| ("ranks".to_string(), m))?;
        for (k, a, op) in [
            ("dp_algorithm", self.dp_algorithm, CollectiveOp::AllReduce),
            ("tp_algorithm", self.tp_algorithm, CollectiveOp::AllReduce),
            ("ep_algorithm", self.ep_algorithm, CollectiveOp::AllToAll),
        ] {
            if let Some(a) = a
                && !a.supports(op)
            {
                return e(k, format!("{} does not implement {}", a.name(), op.name()));
            }
            if a == Some(Algorithm::Hierarchical) {
                // A training group spans at most one GPU per server (dp, ep) or one server
                // (tp), so the phases inside and between servers do not apply.
                return e(
                    k,
                    "hierarchical all-reduce is for a collective workload with gpus_per_server; a training group's ranks are one per server or in one server: use ring, tree or halving_doubling".into(),
                );
            }
        }
        let pow2 = |n: u32| n.is_power_of_two();
        if self.dp_algorithm == Some(Algorithm::HalvingDoubling) && !pow2(self.dp) {
            return e(
                "dp_algorithm",
                format!("halving_doubling needs a power of two, dp = {}", self.dp),
            );
        }
        if self.tp_algorithm == Some(Algorithm::HalvingDoubling) && !pow2(self.tp) {
            return e(
                "tp_algorithm",
                format!("halving_doubling needs a power of two, tp = {}", self.tp),
            );
        }
        if self.chunk.0 == 0 || self.slice.0 == 0 || self.slice > self.chunk {
            return e(
                "slice",
                format!(
                    "need 0 < slice <= chunk, got {} and {}",
                    self.slice, self.chunk
                ),
            );
        }
        for (k, b) in [
            ("params", self.params),
            ("activation", self.activation),
            ("tokens", self.tokens),
        ] {
            if b.0 < (self.channels as u64) * (self.dp.max(self.tp).max(self.ep) as u64) {
                return e(
                    k,
                    format!("{b} is too small to give every rank of every channel a byte"),
                );
            }
            too_long(k, b.0, host_rate)?;
        }
        let flows = self.max_flows();
        if flows > 10_000_000 {
            return e(
                "slice",
                format!(
                    "about {flows} flows: at most 10000000; raise `slice` or lower `iterations`"
                ),
            );
        }
        Ok(())
    }

    /// An upper bound on its flows.
    pub fn max_flows(&self) -> u64 {
        // An all-reduce of `bytes` over `n` ranks: per rank and channel, a ring's 2(n − 1)
        // steps send 2·part/slice pieces, plus one per step and loop for a piece cut short
        // (at most 2·part/chunk + 2n); a tree or halving-doubling sends fewer. In all, at most
        // n(4·bytes/slice + 2·channels·n + 4) flows.
        let ch = self.channels as u64;
        let per = |bytes: u64, n: u32| -> u64 {
            let n = n as u64;
            n * (4 * (bytes / self.slice.0.max(1)) + 2 * ch * n + 4)
        };
        // An all-to-all of `bytes` per rank: n − 1 peers of part/n each, in slices, per
        // channel: at most n(bytes/slice + channels·n + 1).
        let per_a2a = |bytes: u64, n: u32| -> u64 {
            let n = n as u64;
            n * (bytes / self.slice.0.max(1) + ch * n + 1)
        };
        let (mb, layers) = (self.microbatches as u64, self.layers as u64);
        let (dp, tp, pp, ep) = (
            self.dp as u64,
            self.tp as u64,
            self.pp as u64,
            self.ep as u64,
        );
        // Every layer sits on one stage: per micro-batch and pass, one tensor-parallel
        // all-reduce per data-parallel replica; per layer one gradient all-reduce per tensor
        // rank; per expert layer, micro-batch and pass, two all-to-alls per expert group.
        let tp_flows = if tp > 1 {
            2 * mb * layers * dp * per(self.activation.0, self.tp)
        } else {
            0
        };
        let dp_flows = if dp > 1 {
            layers * tp * per(self.params.0 / tp, self.dp)
        } else {
            0
        };
        let moe_layers = layers.checked_div(self.moe_every as u64).unwrap_or(0);
        let ep_flows = if ep > 1 {
            4 * mb * moe_layers * (dp / ep) * tp * per_a2a(self.tokens.0 * ep, self.ep)
        } else {
            0
        };
        let p2p = 2 * mb * (pp - 1) * dp * tp;
        (tp_flows + dp_flows + ep_flows + p2p).saturating_mul(self.iterations as u64)
    }

    /// The bytes its flows carry (an estimate for planning: the collectives' bytes).
    pub fn bytes(&self) -> f64 {
        let (dp, tp, pp, ep) = (
            self.dp as f64,
            self.tp as f64,
            self.pp as f64,
            self.ep as f64,
        );
        let mb = self.microbatches as f64;
        let layers = self.layers as f64;
        let ar = |n: f64, s: f64| if n > 1.0 { 2.0 * (n - 1.0) * s } else { 0.0 };
        let tp_b = 2.0 * mb * layers * dp * ar(tp, self.activation.0 as f64);
        let dp_b = layers * tp * ar(dp, self.params.0 as f64 / tp);
        let moe_layers = self.layers.checked_div(self.moe_every).unwrap_or(0) as f64;
        let ep_b = if ep > 1.0 {
            4.0 * mb * moe_layers * dp * tp * (ep - 1.0) * self.tokens.0 as f64
        } else {
            0.0
        };
        let p2p = 2.0 * mb * (pp - 1.0) * dp * tp * self.activation.0 as f64;
        self.iterations as f64 * (tp_b + dp_b + ep_b + p2p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound on flows holds, and is not loose by more than a small factor.
    #[test]
    fn max_flows_bounds_the_graph() {
        for extra in [
            "dp = 4\ntp = 2\npp = 2\nlayers = 4\nmicrobatches = 2",
            "dp = 8\ntp = 1\npp = 1\nep = 4\nmoe_every = 2\nlayers = 4\nslice = \"1MB\"",
            "dp = 2\ntp = 4\npp = 2\nlayers = 6\nmicrobatches = 3\nchannels = 1\nslice = \"64KB\"\nchunk = \"64KB\"",
            // experiments/ai/moe.toml's iteration.
            "dp = 16\ntp = 8\nep = 8\nmoe_every = 2\nlayers = 8\nmicrobatches = 2\nparams = \"32MB\"\nactivation = \"4MB\"\ntokens = \"4MB\"\nslice = \"1MiB\"",
            // Slices just above the chunk's quarter: pieces cut short at every step.
            "dp = 8\ntp = 2\nlayers = 2\nparams = \"64MB\"\nchunk = \"1MB\"\nslice = \"260KB\"\nchannels = 2",
        ] {
            let t: TrainingConfig = toml::from_str(extra).unwrap();
            let (g, _) = t.graph(128).unwrap();
            let n = g.flows.len() as u64;
            let bound = t.max_flows();
            assert!(n <= bound, "{extra}: {n} flows > bound {bound}");
            assert!(bound <= 8 * n, "{extra}: bound {bound} for {n} flows");
        }
    }
}
