//! Training iterations (`[workload] kind = "training"`): checks against formulas no one tuned.
//!
//! * Without a network (one rank), an iteration takes exactly its compute: layers ×
//!   micro-batches × (forward + backward) plus the optimizer step, and the rank never idles.
//! * A GPipe pipeline of S stages and M micro-batches whose activations are one packet each
//!   takes (M + S − 1)(F + B) + 2(S − 1)δ + O, F and B a stage's forward and backward compute
//!   per micro-batch, δ one hop of a one-packet message between adjacent hosts (two links'
//!   serialization and propagation), O the optimizer step: to the picosecond.
//! * Data, tensor, pipeline and expert parallelism together: every flow arrives, iterations
//!   follow each other at every rank, the collectives are the ones the parallelism implies.

use crate::common::{cfg, run};
use dcsim::experiment::RunResult;

fn two_hosts(workload: &str) -> RunResult {
    let c = cfg(&format!(
        "schemes = [\"SP-RDMA\"]\n[topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 2\n\
         leaves = 1\nspines = 1\nhost_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
         [workload]\nkind = \"training\"\n{workload}"
    ));
    run(&c, "SP-RDMA")
}

const PIPE: &str = "layers = 6\nmicrobatches = 4\nactivation = \"1000B\"\nforward = \"10us\"\n\
                    backward = \"20us\"\noptimizer = \"5us\"\niterations = 2\n";

#[test]
fn an_iteration_without_network_is_its_compute() {
    let r = two_hosts(PIPE);
    let want = 6 * 4 * 30_000_000 + 5_000_000;
    assert_eq!(r.iterations.len(), 2);
    for (i, it) in r.iterations.iter().enumerate() {
        assert_eq!(it.time_ps, Some(want), "iteration {i}");
        assert_eq!(it.start_ps, i as u64 * want);
        assert_eq!(it.idle_max_ps, Some(0));
        assert_eq!(it.compute_max_ps, want);
    }
    assert_eq!(r.totals.flows, 0);
    assert_eq!(r.training.len(), 2, "one rank, two iterations");
}

#[test]
fn a_pipeline_takes_its_bubbles_and_hops() {
    let r = two_hosts(&format!("pp = 2\n{PIPE}"));
    let (s, m) = (2u64, 4u64);
    let (f, b, o) = (3 * 10_000_000u64, 3 * 20_000_000u64, 5_000_000u64);
    let hop = 2 * ((1000 + 82) * 8 * 10 + 1_000_000);
    let want = (m + s - 1) * (f + b) + 2 * (s - 1) * hop + o;
    assert_eq!(r.iterations[0].time_ps, Some(want));
    // Each stage computes (F + B) per micro-batch plus O; the rest it waits.
    for row in r.training.iter().filter(|x| x.iteration == 0) {
        assert_eq!(row.compute_ps, m * (f + b) + o);
        assert!(row.idle_ps.unwrap() > 0);
    }
    // 4 micro-batches forward and backward across the one stage boundary.
    assert_eq!(r.totals.flows, 2 * 2 * 4);
}

#[test]
fn data_tensor_pipeline_and_expert_parallelism_together() {
    let c = cfg(
        "schemes = [\"SP-RDMA\"]\n[topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 8\n\
         leaves = 2\nspines = 2\nhost_rate = \"100Gbps\"\nfabric_rate = \"100Gbps\"\n\
         [workload]\nkind = \"training\"\ndp = 4\ntp = 2\npp = 2\nep = 2\nlayers = 4\n\
         microbatches = 2\nmoe_every = 2\nparams = \"2MB\"\nactivation = \"256KB\"\n\
         tokens = \"128KB\"\nforward = \"20us\"\nbackward = \"40us\"\nexpert = \"10us\"\n\
         optimizer = \"10us\"\niterations = 2\nslice = \"128KB\"\nchunk = \"256KB\"\n",
    );
    let r = run(&c, "SP-RDMA");
    assert_eq!(r.totals.finished, r.totals.flows);
    let count = |op: &str, n: u32| {
        r.collectives
            .iter()
            .filter(|c| c.op == op && c.ranks == n)
            .count()
    };
    // Per iteration: tensor-parallel all-reduces after each layer of each micro-batch, both
    // passes, for each (stage, d) pair: 4 layers x 2 micro-batches x 2 passes x 4 = 64;
    // data-parallel all-reduces once per layer and tensor rank: 4 x 2 = 8; expert
    // all-to-alls: 2 MoE layers x 2 micro-batches x 2 passes x 2 (there and back) x 2 groups
    // x 2 tensor ranks = 64.
    assert_eq!(count("allreduce", 2), 2 * 64);
    assert_eq!(count("allreduce", 4), 2 * 8);
    assert_eq!(count("alltoall", 2), 2 * 64);
    assert!(r.collectives.iter().all(|c| c.flows == c.flows_finished));
    // Iteration 1 starts at a rank when its iteration 0 ended; compute is the same.
    let rows = &r.training;
    assert_eq!(rows.len(), 2 * 16);
    for k in 0..16 {
        assert_eq!(rows[16 + k].start_ps, rows[k].finish_ps.unwrap());
        assert_eq!(rows[16 + k].compute_ps, rows[k].compute_ps);
        // 2 layers x 2 micro-batches x 60 us, 1 MoE layer x 2 micro-batches x 30 us, 10 us.
        assert_eq!(rows[k].compute_ps, (240 + 60 + 10) * 1_000_000);
    }
}

#[test]
fn bad_training_configs_are_refused_with_the_key() {
    let cases = [
        ("dp = 4\nep = 3", "ep"),
        ("dp = 64", "ranks"),
        ("pp = 8\nlayers = 4", "layers"),
        ("dp = 2\ndp_algorithm = \"pairwise\"", "dp_algorithm"),
        (
            "dp = 3\ndp_algorithm = \"halving_doubling\"",
            "power of two",
        ),
        ("microbatches = 0", "microbatches"),
        ("dp = 2\nranks = [0, 0]", "listed twice"),
    ];
    for (w, want) in cases {
        let e = dcsim::config::Config::parse(
            &format!("[workload]\nkind = \"training\"\n{w}\n"),
            "x.toml",
        )
        .unwrap()
        .validate("x.toml", std::path::Path::new("."))
        .unwrap_err()
        .to_string();
        assert!(e.contains(want) && e.contains("workload"), "{w}: {e}");
    }
}
