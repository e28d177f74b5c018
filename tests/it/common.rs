use dcsim::config::Config;
use dcsim::experiment::{self, RunPlan, RunResult};
use dcsim::sim::Sim;
use std::path::Path;
use std::time::Instant;

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

/// Builds the simulation of `scheme` under `c`.
pub fn sim(c: &Config, scheme: &str) -> Sim {
    experiment::build_sim(c, Path::new("."), &plan(c, scheme, c.seed)).expect("builds")
}

/// Runs `scheme` under `c` to the end and checks byte conservation.
pub fn run(c: &Config, scheme: &str) -> RunResult {
    let r = experiment::execute(c, Path::new("."), &plan(c, scheme, c.seed)).expect("runs");
    assert_conserved(&r);
    r
}

/// Collects a run driven by hand and checks conservation.
pub fn collect(s: &Sim, c: &Config, scheme: &str, reason: dcsim::sim::EndReason) -> RunResult {
    let r = experiment::collect(s, reason, plan(c, scheme, c.seed), c, Instant::now());
    assert_conserved(&r);
    r
}

pub fn assert_conserved(r: &RunResult) {
    assert!(
        r.conservation.holds(),
        "byte conservation violated in {}: {:?}",
        r.plan.id,
        r.conservation
    );
}
