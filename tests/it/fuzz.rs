//! Property-based fuzzing of configurations: generated configs with values near and past every
//! documented range. For each, parsing and validation must not panic and must either accept
//! the config or name the key at fault; an accepted config (when small enough to run here)
//! must run within a step budget, without panicking, to a result that keeps every invariant
//! of `common::assert_conserved`.

use crate::common::assert_conserved;
use dcsim::config::Config;
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, RngSeed, TestRunner};
use std::path::Path;

fn pick(v: &'static [&'static str]) -> impl Strategy<Value = String> + Clone {
    proptest::sample::select(v).prop_map(String::from)
}

/// Mostly (9 in 10) a value inside the documented ranges, else one at or past an edge.
fn mostly(
    good: &'static [&'static str],
    bad: &'static [&'static str],
) -> impl Strategy<Value = String> + Clone {
    prop_oneof![9 => pick(good), 1 => pick(bad)]
}

fn topology() -> impl Strategy<Value = String> {
    let rate = mostly(
        &["\"1Mbps\"", "\"1Gbps\"", "\"10Gbps\"", "\"100Gbps\""],
        &["\"0bps\"", "\"999Kbps\"", "\"200Tbps\""],
    );
    let delay = mostly(
        &["\"0s\"", "\"1ns\"", "\"1us\"", "\"1ms\""],
        &["\"1s\"", "\"2s\""],
    );
    prop_oneof![
        (1u32..5, 1u32..4, 1u32..4, rate.clone(), rate.clone(), delay.clone()).prop_map(
            |(h, l, s, hr, fr, d)| format!(
                "[topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = {h}\nleaves = {l}\nspines = {s}\nhost_rate = {hr}\nfabric_rate = {fr}\nlink_delay = {d}\n"
            )
        ),
        (prop_oneof![4 => Just(2u32), 4 => Just(4u32), 1 => proptest::sample::select(&[0u32, 1, 3, 65][..])], rate.clone(), delay.clone())
            .prop_map(|(k, r, d)| format!(
                "[topology]\nkind = \"fat_tree\"\nk = {k}\nhost_rate = {r}\nlink_delay = {d}\n"
            )),
        (1u32..5, 1u32..5, 1u32..3, rate, delay).prop_map(|(l, r, n, br, d)| format!(
            "[topology]\nkind = \"dumbbell\"\nleft = {l}\nright = {r}\nbottleneck_links = {n}\nbottleneck_rate = {br}\nbottleneck_delay = {d}\n"
        )),
    ]
}

fn switch() -> impl Strategy<Value = String> {
    let queues = prop_oneof![9 => proptest::sample::select(&[1u8, 2, 3, 8][..]), 1 => proptest::sample::select(&[0u8, 9][..])];
    let buffer = mostly(
        &[
            "{ kind = \"static\", per_port = \"1538B\" }",
            "{ kind = \"static\", per_port = \"20KB\" }",
            "{ kind = \"static\", per_port = \"150KB\" }",
            "{ kind = \"shared\", size = \"3MB\" }",
            "{ kind = \"shared\", size = \"300KB\", alpha = 2.0 }",
        ],
        &[
            "{ kind = \"static\", per_port = \"0B\" }",
            "{ kind = \"static\", per_port = \"1000B\" }",
            "{ kind = \"static\", per_port = \"20KB\", pfc_xoff = \"30KB\" }",
            "{ kind = \"shared\", size = \"10KB\", reserve = \"1MB\" }",
            "{ kind = \"shared\", size = \"3MB\", alpha = 0.0 }",
        ],
    );
    let ecn = mostly(
        &[
            "{ kind = \"none\" }",
            "{ kind = \"step\", k = \"0B\" }",
            "{ kind = \"step\", k = \"30KB\" }",
            "{ kind = \"red\", kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01 }",
        ],
        &[
            "{ kind = \"red\", kmin = \"40KB\", kmax = \"10KB\", pmax = 0.2 }",
            "{ kind = \"red\", kmin = \"5KB\", kmax = \"200KB\", pmax = 1.5 }",
        ],
    );
    let lb = pick(&["\"ecmp\"", "\"spray\"", "\"adaptive\"", "\"round_robin\""]);
    (queues, buffer, ecn, lb, any::<bool>()).prop_map(|(q, b, e, lb, pfc)| {
        format!(
            "[switch]\nqueues = {q}\nbuffer = {b}\necn = {e}\nload_balancer = {lb}\npfc = {{ enabled = {pfc} }}\n"
        )
    })
}

fn workload() -> impl Strategy<Value = String> {
    let load = mostly(&["0.05", "0.3", "0.7", "1.0"], &["0.0", "1e-12", "1.5"]);
    let flows = prop_oneof![9 => proptest::sample::select(&[1u64, 5, 40][..]), 1 => Just(0u64)];
    let cdf = mostly(
        &[
            "\"web_search\"",
            "\"data_mining\"",
            "\"uniform(1KB, 20KB)\"",
        ],
        &["\"uniform(0KB, 1KB)\"", "\"nowhere.cdf\""],
    );
    prop_oneof![
        (load, flows, cdf).prop_map(|(l, f, c)| format!(
            "[workload]\nkind = \"poisson\"\nload = {l}\nflows = {f}\nsize_cdf = {c}\n"
        )),
        (0u32..6, mostly(&["\"1B\"", "\"20KB\""], &["\"0B\""]), 0u32..3).prop_map(|(n, s, b)| format!(
            "[workload]\nkind = \"incast\"\nfan_in = {n}\nsize = {s}\nbursts = {b}\n"
        )),
        (0u32..5, 0u32..5, 0u8..3, mostly(&["\"0s\"", "\"1us\""], &["\"100s\""])).prop_map(
            |(a, b, p, st)| format!(
                "[workload]\nkind = \"flows\"\nflows = [{{ src = {a}, dst = {b}, size = \"3KB\", prio = {p}, start = {st} }}]\n"
            )
        ),
        (0u32..8, 0u32..4).prop_map(|(n, q)| format!(
            "[workload]\nkind = \"partition_aggregate\"\nfan_in = {n}\nqueries = {q}\nresponse_size = \"2KB\"\n"
        )),
    ]
}

fn top_level() -> impl Strategy<Value = String> {
    let scheme = pick(&[
        "\"TCP\"",
        "\"DCTCP\"",
        "\"UDP\"",
        "\"PDTCP+AM\"",
        "\"D2TCP+FH\"",
        "\"pFabric\"",
        "\"pFabric-EDF\"",
        "\"SP-RDMA\"",
        "\"GPMP\"",
        "\"MP-RDMA\"",
        "\"NEM-like\"",
        "\"QUIC\"",
    ]);
    let seeds = prop_oneof![9 => Just(1u32), 1 => proptest::sample::select(&[0u32, 1001][..])];
    let stop = mostly(&["", "stop_time = \"2ms\"\n"], &["stop_time = \"0s\"\n"]);
    let tcp = mostly(
        &[
            "",
            "[tcp]\ndupthresh = 1\nmin_cwnd = 10\n",
            "[rdma]\nrto = \"1ms\"\n",
            "[packet]\nmss = \"9000B\"\nheader = \"200B\"\n",
            "[pfabric]\nrto = \"50us\"\n",
        ],
        &[
            "[tcp]\ninit_cwnd = 0\n",
            "[tcp]\nrto_min = \"0s\"\n",
            "[gpmp]\nslice = \"1B\"\n",
            "[pfabric]\nbuffer = \"100B\"\n",
            "[packet]\nmss = \"63B\"\n",
        ],
    );
    (scheme, seeds, stop, tcp)
        .prop_map(|(s, n, st, t)| format!("schemes = [{s}]\nseeds = {n}\n{st}{t}"))
}

/// Runs an accepted config within a budget: simulated time in 100 us steps up to 20 ms (or
/// its stop time), at most 3 million events.
fn run_bounded(c: &Config) {
    for scheme in &c.schemes {
        let plan = dcsim::experiment::RunPlan::single(c, scheme, c.seed);
        let Ok(mut sim) = dcsim::experiment::build_sim(&plan.config, Path::new("."), &plan) else {
            continue; // refused at build (e.g. a workload that cannot be placed): an error, fine
        };
        let mut t = dcsim::units::SimTime::ZERO;
        let end = c.stop_time.unwrap_or(dcsim::units::SimTime::from_ms(20));
        let mut reason = None;
        while t < end {
            t += dcsim::units::SimTime::from_us(100);
            reason = sim.run_until(t);
            assert!(sim.events() < 3_000_000, "event budget exceeded: {c:?}");
            if reason.is_some() {
                break;
            }
        }
        let reason = reason.unwrap_or(dcsim::sim::EndReason::StopTime);
        let r = dcsim::experiment::collect(
            &sim,
            reason,
            plan.clone(),
            &plan.config,
            std::time::Instant::now(),
        );
        assert_conserved(&r);
    }
}

#[test]
fn generated_configs_are_refused_by_name_or_run_keeping_the_invariants() {
    let mut runner = TestRunner::new(PtConfig {
        cases: 160,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0xdc51_u64),
        ..PtConfig::default()
    });
    let accepted = std::cell::Cell::new(0u32);
    runner
        .run(
            &(top_level(), topology(), switch(), workload()),
            |(a, b, c, d)| {
                let text = format!("{a}{b}{c}{d}");
                let parsed = std::panic::catch_unwind(|| Config::parse(&text, "fuzz.toml"));
                let Ok(parsed) = parsed else {
                    panic!("parse panicked on:\n{text}");
                };
                let Ok(cfg) = parsed else {
                    let e = parsed.unwrap_err();
                    prop_assert!(!e.msg.is_empty(), "empty error for:\n{text}");
                    return Ok(());
                };
                match cfg.validate("fuzz.toml", Path::new(".")) {
                    Err(e) => {
                        prop_assert!(
                            !e.key.is_empty() || e.msg.contains("line"),
                            "error names no key: {e}\n{text}"
                        );
                    }
                    Ok(()) => {
                        let small = cfg.topology.n_hosts() <= 64
                            && dcsim::budget::estimate(&cfg, Path::new(".")).total() < 256 << 20;
                        if small {
                            accepted.set(accepted.get() + 1);
                            let r = std::panic::catch_unwind(|| run_bounded(&cfg));
                            prop_assert!(
                                r.is_ok(),
                                "the run broke an invariant or panicked:\n{text}"
                            );
                        }
                    }
                }
                Ok(())
            },
        )
        .unwrap();
    // The generator must not only produce rejects.
    assert!(
        accepted.get() >= 10,
        "only {} configs accepted",
        accepted.get()
    );
}
