//! Same config and seed: byte-identical outputs, whatever the thread count. Another seed:
//! different outputs.

use std::path::Path;
use std::process::Command;

const SMALL: &str = "name = \"det\"\nschemes = [\"TCP\", \"DCTCP\"]\nseeds = 2\n\
    [workload]\nkind = \"poisson\"\nload = 0.5\nflows = 300\n";

fn run_cli(dir: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args(args)
        .arg("--output-dir")
        .arg(dir)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn same_seed_same_bytes_any_thread_count_other_seed_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("det.toml");
    std::fs::write(&cfg, SMALL).unwrap();
    let cfg = cfg.to_str().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run_cli(&a, &["run", cfg, "-j", "1"]);
    run_cli(&b, &["run", cfg, "-j", "3"]);
    for run in ["TCP-s1", "TCP-s2", "DCTCP-s1", "DCTCP-s2"] {
        for file in ["fct.csv", "summary.csv", "ports.csv"] {
            let x = std::fs::read(a.join("det").join(run).join(file)).unwrap();
            let y = std::fs::read(b.join("det").join(run).join(file)).unwrap();
            assert!(x == y, "{run}/{file} differs between -j 1 and -j 3");
        }
    }
    assert_eq!(
        std::fs::read(a.join("det/summary.csv")).unwrap(),
        std::fs::read(b.join("det/summary.csv")).unwrap()
    );
    // Seeds 1 and 2 draw different workloads.
    let s1 = std::fs::read(a.join("det/DCTCP-s1/fct.csv")).unwrap();
    let s2 = std::fs::read(a.join("det/DCTCP-s2/fct.csv")).unwrap();
    assert_ne!(s1, s2);
    // --seed 2 reproduces the second seed's run exactly.
    let c = tmp.path().join("c");
    run_cli(&c, &["run", cfg, "--seed", "2", "-j", "2"]);
    assert_eq!(std::fs::read(c.join("det/DCTCP-s2/fct.csv")).unwrap(), s2);
}

#[test]
fn same_seed_same_result_in_process() {
    use crate::common::{cfg, run};
    let c = cfg("[switch]\nload_balancer = \"spray\"\n\
        [workload]\nkind = \"poisson\"\nload = 0.7\nflows = 200\n");
    let a = run(&c, "DCTCP");
    let b = run(&c, "DCTCP");
    assert_eq!(dcsim::report::fct_csv(&a), dcsim::report::fct_csv(&b));
    assert_eq!(a.totals.events, b.totals.events);
}
