use dcsim::config::Config;
use dcsim::experiment::{self, RunPlan, RunResult};
use dcsim::sim::Sim;
use std::path::Path;
use std::time::Instant;

/// The port of node `from` whose link leads to node `to`.
pub fn port_between(s: &Sim, from: usize, to: usize) -> usize {
    (0..s.net.ports.len())
        .find(|&p| s.net.ports[p].node.idx() == from && s.net.ports[p].peer_node.idx() == to)
        .unwrap_or_else(|| panic!("no link from node {from} to node {to}"))
}

/// Parses and validates a config given inline.
pub fn cfg(toml: &str) -> Config {
    let c = Config::parse(toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
    c.validate("<test>", Path::new("."))
        .unwrap_or_else(|e| panic!("{e}"));
    c
}

pub fn plan(c: &Config, scheme: &str, seed: u64) -> RunPlan {
    RunPlan::single(c, scheme, seed)
}

/// Builds the simulation of `scheme` under `c`, keeping every flow and message (tests read
/// its state by index; `run` releases them as a run does).
pub fn sim(c: &Config, scheme: &str) -> Sim {
    let p = plan(c, scheme, c.seed);
    experiment::build_sim_with(&p.config, Path::new("."), &p, false).expect("builds")
}

/// Runs `scheme` under `c` to the end and checks byte conservation.
pub fn run(c: &Config, scheme: &str) -> RunResult {
    let p = plan(c, scheme, c.seed);
    let r = experiment::execute(&p.config, Path::new("."), &p).expect("runs");
    assert_conserved(&r);
    r
}

/// Collects a run driven by hand and checks conservation.
pub fn collect(s: &Sim, c: &Config, scheme: &str, reason: dcsim::sim::EndReason) -> RunResult {
    let p = plan(c, scheme, c.seed);
    let r = experiment::collect(s, reason, p.clone(), &p.config, Instant::now());
    assert_conserved(&r);
    r
}

/// The invariants every run of the suite must keep: byte conservation; per finished flow,
/// finish after start, FCT at least the ideal (a lower bound for every load balancer), the
/// delay attribution summing to the FCT; per port, utilization at most 1 and (static buffers)
/// no more queued than the port holds; no drops in lossless priorities.
pub fn assert_conserved(r: &RunResult) {
    let id = &r.plan.id;
    assert!(
        r.conservation.holds(),
        "byte conservation violated in {id}: {:?}",
        r.conservation
    );
    for f in &r.records {
        if let (Some(fin), Some(fct)) = (f.finish_ps, f.fct_ps) {
            assert!(
                fin >= f.start_ps,
                "{id}: flow {} finished before it started",
                f.flow_id
            );
            assert!(
                fct >= f.ideal_fct_ps,
                "{id}: flow {} beat its ideal FCT ({fct} < {} ps)",
                f.flow_id,
                f.ideal_fct_ps
            );
            if let Some(a) = f.attribution {
                assert_eq!(
                    a.total(),
                    fct,
                    "{id}: flow {}: attribution {a:?}",
                    f.flow_id
                );
            }
        }
    }
    let sw = r.plan.config.switch_for(&r.plan.scheme);
    // A static port's size bounds its lossy traffic; lossless traffic is bounded per ingress
    // (XOFF plus headroom), so with PFC an egress may hold more (docs/config.md, `[switch.buffer]`).
    let static_cap = (sw.buffer.kind == dcsim::net::buffer::BufferKind::Static
        && sw.pfc.mask(sw.queues) == 0)
        .then_some(sw.buffer.per_port.0);
    for p in &r.ports {
        assert!(
            p.utilization <= 1.0 + 1e-9,
            "{id}: port {} utilization {}",
            p.port,
            p.utilization
        );
        if let Some(cap) = static_cap
            && !p.node.starts_with('h')
        {
            assert!(
                p.max_queue_bytes <= cap,
                "{id}: port {} queued {} B, buffer {cap} B",
                p.port,
                p.max_queue_bytes
            );
        }
    }
    assert!(
        r.switches.iter().all(|s| s.drops_lossless == 0),
        "{id}: a lossless priority dropped packets"
    );
}
