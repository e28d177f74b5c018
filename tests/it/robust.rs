//! Results that cannot be silently wrong: CSV quoting end to end, flow lists read strictly,
//! time values that would overflow rejected with file and line.

use crate::common::cfg;
use std::process::Command;

fn dcsim(args: &[&str], cwd: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

#[test]
fn a_sweep_value_with_a_comma_keeps_every_column_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("c.toml"),
        "name = \"q\"\nschemes = [\"DCTCP\"]\n\
         [workload]\nkind = \"poisson\"\nflows = 30\nload = 0.3\n\
         [sweep]\naxes = [{ key = \"workload.size_cdf\", values = [\"uniform(10KB, 20KB)\", \"uniform(30KB, 40KB)\"] }]\n\
         [[plot]]\nfile = \"f.svg\"\ntitle = \"t\"\nx = \"workload.size_cdf\"\ny = \"avg_fct_us\"\n",
    )
    .unwrap();
    let o = dcsim(&["run", "c.toml", "-q", "-j", "1"], tmp.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(tmp.path().join("results/q/summary.csv")).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().unwrap().clone();
    let ci = header.iter().position(|h| h == "size_cdf").unwrap();
    let cls = header.iter().position(|h| h == "class").unwrap();
    let mut seen = Vec::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        assert_eq!(rec.len(), header.len());
        seen.push(rec[ci].to_string());
        assert!(["all", "<100KB", "100KB-1MB", "1MB-10MB", ">=10MB"].contains(&&rec[cls]));
    }
    assert!(
        seen.contains(&"uniform(10KB, 20KB)".to_string()),
        "{seen:?}"
    );
    // The figure's table was drawn from it, one point per value, the value quoted like any
    // other field with a comma.
    let t = std::fs::read_to_string(tmp.path().join("results/q/f.csv")).unwrap();
    assert_eq!(t.lines().count(), 3, "{t}");
    let mut r = csv::Reader::from_reader(t.as_bytes());
    let h = r.headers().unwrap().clone();
    assert_eq!(h.len(), 6, "{t}");
    let xs: Vec<String> = r
        .records()
        .map(|x| {
            let x = x.unwrap();
            assert_eq!(x.len(), 6, "{t}");
            x[1].to_string()
        })
        .collect();
    assert_eq!(xs, ["uniform(10KB, 20KB)", "uniform(30KB, 40KB)"], "{t}");
    // The figure's x axis names the two values (not 0 and 1).
    let svg = std::fs::read_to_string(tmp.path().join("results/q/f.svg")).unwrap();
    assert!(
        svg.contains("\nuniform(10KB, 20KB)\n") && svg.contains("\nuniform(30KB, 40KB)\n"),
        "no category labels in the figure"
    );
}

fn flow_list(body: &str) -> Result<Vec<dcsim::workload::FlowSpec>, String> {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("flows.csv");
    std::fs::write(&p, body).unwrap();
    dcsim::workload::read_csv(&p, 4)
}

#[test]
fn flow_lists_are_read_strictly() {
    // A byte-order mark, quoted fields and blank lines are fine.
    let f = flow_list(
        "\u{feff}flow_id,src,dst,size_bytes,start_ns\n0,0,1,\"1000\",5\n\n1, 2 ,3,2000,10\n",
    )
    .unwrap();
    assert_eq!(f.len(), 2);
    assert_eq!(f[1].start.0, 10_000);
    // A start time that would overflow picoseconds names the file, line and column.
    let e = flow_list(
        "flow_id,src,dst,size_bytes,start_ns\n0,0,1,1000,0\n1,0,1,1000,18446744073709551\n",
    )
    .unwrap_err();
    assert!(
        e.contains("flows.csv line 3") && e.contains("start_ns") && e.contains("out of range"),
        "{e}"
    );
    let e = flow_list(
        "flow_id,src,dst,size_bytes,start_ns,deadline_ns\n0,0,1,1000,0,99999999999999999\n",
    )
    .unwrap_err();
    assert!(e.contains("deadline_ns"), "{e}");
    let e = flow_list("flow_id,src,dst,size_bytes,start_ns\n0,0,1,1000\n").unwrap_err();
    assert!(
        e.contains("line 2") && e.contains("expected 5 fields"),
        "{e}"
    );
    let e = flow_list("").unwrap_err();
    assert!(e.contains("empty"), "{e}");
}

#[test]
fn a_config_with_a_comma_value_validates_like_any_other() {
    // The value docs/config.md documents for size_cdf.
    cfg("[workload]\nkind = \"poisson\"\nsize_cdf = \"uniform(10KB, 20KB)\"\n");
}

fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const SMALL: &str = "name = \"e\"\nschemes = [\"TCP\", \"DCTCP\"]\nseeds = 2\n\
                     [workload]\nkind = \"poisson\"\nload = 0.4\nflows = 60\n";

#[test]
fn a_second_run_on_a_busy_experiment_directory_refuses_naming_the_holder() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "c.toml",
        "name = \"e\"\nschemes = [\"TCP\", \"DCTCP\"]\nseeds = 12\n\
         [workload]\nkind = \"poisson\"\nload = 0.5\nflows = 300\n",
    );
    let mut first = Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args(["run", "c.toml", "-q", "-j", "1"])
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock = tmp.path().join("results/e/.lock");
    let t0 = std::time::Instant::now();
    while !lock.exists() && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let o = dcsim(&["run", "c.toml", "-q", "-j", "1"], tmp.path());
    // (If the first run happened to finish before the second started, the second may run.)
    if !o.status.success() {
        let e = err(&o);
        assert!(
            e.contains("in use") && e.contains(&format!("pid {}", first.id())),
            "{e}"
        );
    }
    assert!(first.wait().unwrap().success());
    // The first run's results are whole: every run complete, the summary has every row.
    let summary = std::fs::read_to_string(tmp.path().join("results/e/summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1 + 24 * 5);
    assert!(!lock.exists(), "the lock outlived its run");
}

#[test]
fn a_lock_held_by_a_live_process_is_respected_and_a_dead_ones_taken_over() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "c.toml", SMALL);
    let exp = tmp.path().join("results/e");
    std::fs::create_dir_all(&exp).unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    // This test process is alive: its lock holds, for whole runs and shards alike.
    let me = format!(
        "host={} pid={} since_unix_s=0 command=test\n",
        host.trim(),
        std::process::id()
    );
    write(&exp, ".lock", &me);
    for args in [
        &["run", "c.toml", "-q"][..],
        &["run", "c.toml", "-q", "--shard", "1/2"],
    ] {
        let o = dcsim(args, tmp.path());
        assert!(!o.status.success(), "{args:?} ran under a held lock");
        assert!(
            err(&o).contains(&format!("pid {}", std::process::id())),
            "{}",
            err(&o)
        );
    }
    // A shard's lock blocks a whole run but not another shard.
    std::fs::remove_file(exp.join(".lock")).unwrap();
    write(&exp, ".lock.shard-1-of-2", &me);
    assert!(!dcsim(&["run", "c.toml", "-q"], tmp.path()).status.success());
    assert!(
        dcsim(&["run", "c.toml", "-q", "--shard", "2/2"], tmp.path())
            .status
            .success()
    );
    // A lock whose process is gone (pid 2^22 + 1 exceeds Linux's pid_max) is stale.
    write(
        &exp,
        ".lock.shard-1-of-2",
        &format!(
            "host={} pid=4194305 since_unix_s=0 command=x\n",
            host.trim()
        ),
    );
    assert!(dcsim(&["run", "c.toml", "-q"], tmp.path()).status.success());
    assert!(!exp.join(".lock").exists());
}

#[test]
fn runs_from_another_config_are_never_reused_or_merged() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "c.toml", SMALL);
    assert!(dcsim(&["run", "c.toml", "-q"], tmp.path()).status.success());
    // Same config: everything is reused.
    let o = dcsim(&["run", "c.toml", "--skip-existing"], tmp.path());
    assert!(
        o.status.success() && err(&o).contains("skipping 4 complete run(s)"),
        "{}",
        err(&o)
    );
    // Edited config: resuming refuses and names the changed key.
    write(
        tmp.path(),
        "c.toml",
        &format!("{SMALL}[tcp]\nrto_min = \"2ms\"\n"),
    );
    let o = dcsim(&["run", "c.toml", "--skip-existing"], tmp.path());
    assert!(!o.status.success(), "stale runs reused");
    assert!(err(&o).contains("tcp.rto_min"), "{}", err(&o));
    // The dry run says so too.
    let o = dcsim(&["run", "c.toml", "--dry-run"], tmp.path());
    assert!(String::from_utf8_lossy(&o.stdout).contains("stale: tcp.rto_min"));
    // Shards made from different configs do not merge.
    write(
        tmp.path(),
        "a.toml",
        &format!("output_dir = \"sa\"\n{SMALL}"),
    );
    write(
        tmp.path(),
        "b.toml",
        &format!("output_dir = \"sb\"\n{SMALL}[dctcp]\ng = 0.5\n"),
    );
    assert!(
        dcsim(&["run", "a.toml", "-q", "--shard", "1/2"], tmp.path())
            .status
            .success()
    );
    assert!(
        dcsim(&["run", "b.toml", "-q", "--shard", "2/2"], tmp.path())
            .status
            .success()
    );
    let o = dcsim(
        &["merge", "a.toml", "sa/e", "sb/e", "--output-dir", "m"],
        tmp.path(),
    );
    assert!(
        !o.status.success(),
        "a merge of foreign shards was accepted"
    );
    assert!(err(&o).contains("dctcp.g"), "{}", err(&o));
    // A run directory without the completion marker (an older dcsim, or cut short) is not
    // complete: it is rerun.
    std::fs::remove_file(tmp.path().join("results/e/TCP-s1/complete")).unwrap();
    write(tmp.path(), "c.toml", SMALL);
    let o = dcsim(&["run", "c.toml", "--skip-existing"], tmp.path());
    assert!(
        o.status.success() && err(&o).contains("skipping 3 complete run(s)"),
        "{}",
        err(&o)
    );
}

#[test]
fn input_files_are_part_of_a_runs_identity() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "sizes.cdf", "1000 0\n20000 1\n");
    let c = "name = \"e\"\nschemes = [\"DCTCP\"]\n[workload]\nkind = \"poisson\"\nsize_cdf = \"sizes.cdf\"\nflows = 40\n";
    write(tmp.path(), "c.toml", c);
    assert!(dcsim(&["run", "c.toml", "-q"], tmp.path()).status.success());
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("results/e/DCTCP-s1/manifest.json")).unwrap(),
    )
    .unwrap();
    for k in [
        "git_revision",
        "git_dirty",
        "command_line",
        "config_hash",
        "identity",
    ] {
        assert!(m.get(k).is_some(), "manifest lacks {k}");
    }
    // The revision is read when the run is written (a commit costs no rebuild): in a checkout
    // that holds the binary's sources, it is the checkout's HEAD.
    assert_eq!(m["source_hash"].as_str().unwrap().len(), 16);
    let head = std::process::Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Some(head) = head {
        assert_eq!(m["git_revision"].as_str().unwrap(), head);
        assert!(["true", "false"].contains(&m["git_dirty"].as_str().unwrap()));
    }
    assert!(m["inputs"]["sizes.cdf"].as_str().unwrap().len() == 16);
    assert!(tmp.path().join("results/e/manifest.json").exists());
    write(tmp.path(), "sizes.cdf", "1000 0\n30000 1\n");
    let o = dcsim(&["run", "c.toml", "--skip-existing"], tmp.path());
    assert!(
        !o.status.success() && err(&o).contains("sizes.cdf"),
        "{}",
        err(&o)
    );
}

#[test]
fn files_that_must_be_byte_identical_are() {
    // Same config and seed, run twice: every result file but the manifest (which holds wall
    // time and the command line) is byte-identical.
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "c.toml", SMALL);
    for out in ["a", "b"] {
        let o = dcsim(&["run", "c.toml", "-q", "--output-dir", out], tmp.path());
        assert!(o.status.success());
    }
    for f in [
        "fct.csv",
        "summary.csv",
        "summary.json",
        "ports.csv",
        "switches.csv",
        "complete",
    ] {
        let a = std::fs::read(tmp.path().join("a/e/DCTCP-s2").join(f)).unwrap();
        let b = std::fs::read(tmp.path().join("b/e/DCTCP-s2").join(f)).unwrap();
        assert_eq!(a, b, "{f} differs between identical runs");
    }
}

#[test]
fn sweeps_refuse_what_they_cannot_vary() {
    let tmp = tempfile::tempdir().unwrap();
    for (axes, needle) in [
        ("{ key = \"seed\", values = [1, 2] }", "cannot be swept"),
        ("{ key = \"seeds\", values = [1, 2] }", "cannot be swept"),
        (
            "{ key = \"name\", values = [\"a\", \"b\"] }",
            "cannot be swept",
        ),
        (
            "{ key = \"output_dir\", values = [\"a\", \"b\"] }",
            "cannot be swept",
        ),
        (
            "{ key = \"topology.k\", values = [4] }, { key = \"switch.ecn.k\", values = [\"10KB\"] }",
            "share the summary column",
        ),
        (
            "{ key = \"pcap.flows\", values = [[1], [2]] }",
            "which summary.csv already has",
        ),
        (
            "{ key = \"workload.load\", values = [0.5, 0.5] }",
            "two runs would be named",
        ),
        (
            "{ key = \"workload.size_cdf\", values = [\"uniform(1KB, 2KB)\", \"uniform(1KB,_2KB)\"] }",
            "two runs would be named",
        ),
    ] {
        let topo = if axes.contains("topology.k") {
            "[topology]\nkind = \"fat_tree\"\n[switch]\necn = { kind = \"step\", k = \"10KB\" }\n"
        } else {
            ""
        };
        write(
            tmp.path(),
            "s.toml",
            &format!(
                "{topo}[workload]\nkind = \"poisson\"\nflows = 10\n[sweep]\naxes = [{axes}]\n"
            ),
        );
        let o = dcsim(&["validate", "s.toml"], tmp.path());
        assert!(!o.status.success(), "accepted: {axes}");
        assert!(err(&o).contains(needle), "{axes}: {}", err(&o));
    }
}

#[test]
fn figures_cannot_overwrite_dcsim_files() {
    let tmp = tempfile::tempdir().unwrap();
    for (file, needle) in [("summary.svg", "reserved"), ("manifest.svg", "reserved")] {
        write(
            tmp.path(),
            "p.toml",
            &format!(
                "[sweep]\naxes = [{{ key = \"workload.load\", values = [0.3] }}]\n\
                 [[plot]]\nfile = \"{file}\"\ntitle = \"t\"\nx = \"workload.load\"\ny = \"avg_fct_us\"\n"
            ),
        );
        let o = dcsim(&["validate", "p.toml"], tmp.path());
        assert!(
            !o.status.success() && err(&o).contains(needle),
            "{file}: {}",
            err(&o)
        );
    }
}

/// A memory limit of `bytes`, as the machine's available memory.
fn machine(bytes: u64) -> dcsim::budget::Limit {
    dcsim::budget::Limit {
        bytes,
        what: "this machine has",
    }
}

#[test]
fn the_memory_check_heeds_the_address_space_limit() {
    // About 3.8 GiB of flow state (2 M flows generated up front, 2 KiB each at most) under
    // `ulimit -v` 1.5 GiB: refused before anything is built, naming the limit (the check
    // compared with the machine's free memory only, and the run aborted with exit 134 when
    // it allocated).
    let tmp = tempfile::tempdir().unwrap();
    let text = "[workload]\nkind = \"poisson\"\nflows = 2000000\non = \"1ms\"\noff = \"1ms\"\n";
    write(tmp.path(), "m.toml", text);
    let bin = env!("CARGO_BIN_EXE_dcsim");
    for cmd in ["validate", "run -q"] {
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v 1572864 && exec {bin} {cmd} m.toml"))
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let e = err(&o);
        assert!(!o.status.success(), "{cmd}: accepted under ulimit -v");
        assert!(
            e.contains("address-space limit (ulimit -v) leaves") && e.contains("3.8 GiB"),
            "{cmd}: {e}"
        );
        assert!(
            !e.contains("panicked") && o.status.code() == Some(1),
            "{cmd}: {e}"
        );
    }
    // Without the limit, on a machine with the memory, it passes.
    let need = dcsim::budget::estimate(&cfg(text), std::path::Path::new(".")).total();
    if dcsim::budget::available().is_some_and(|a| a.bytes > need) {
        let o = dcsim(&["validate", "m.toml"], tmp.path());
        assert!(o.status.success(), "{}", err(&o));
    }
}

#[test]
fn a_config_bigger_than_the_machine_stops_before_allocating() {
    // k = 64: 65 536 hosts. Its routing tables are kept per (switch, ToR), tens of MiB, not
    // the tens of GiB a table per (switch, host) would take; 1000 bursts of a 60 000-host
    // incast are 60 M flows of flow state, far beyond 24 GiB.
    let big = "[topology]\nkind = \"fat_tree\"\nk = 64\n[workload]\nkind = \"incast\"\nfan_in = 60000\nsize = \"10KB\"\nbursts = 1000\n";
    let c = cfg(big);
    let base = std::path::Path::new(".");
    let e = dcsim::budget::estimate(&c, base);
    assert!(e.routes < 200 << 20, "{e}");
    assert!(e.flows > 50 << 30, "{e}");
    let msg = dcsim::budget::check(&c, base, 1, &machine(24 << 30)).unwrap_err();
    assert!(
        msg.contains("GiB") && msg.contains("24.0 GiB available"),
        "{msg}"
    );
    // The same check through the command line, when this machine is smaller than the need.
    if dcsim::budget::available().is_some_and(|a| a.bytes < e.total()) {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "big.toml", big);
        for cmd in ["validate", "run"] {
            let t0 = std::time::Instant::now();
            let o = dcsim(&[cmd, "big.toml"], tmp.path());
            assert!(
                !o.status.success() && err(&o).contains("available"),
                "{}",
                err(&o)
            );
            assert!(t0.elapsed().as_secs() < 5, "{cmd} built something first");
        }
    }
    // Ten million flows of flow state, with 8 runs at once, against 24 GiB: generated up front
    // (on/off sources), they do not fit; streamed (plain Poisson arrivals, made as they start
    // and released as they finish), they hold a chunk of records and the flows in progress.
    let listed =
        cfg("[workload]\nkind = \"poisson\"\nflows = 10000000\non = \"1ms\"\noff = \"1ms\"\n");
    assert!(
        dcsim::budget::check(&listed, base, 8, &machine(24 << 30))
            .unwrap_err()
            .contains("-j")
    );
    assert!(dcsim::budget::check(&listed, base, 1, &machine(24 << 30)).is_ok());
    let streamed = cfg("[workload]\nkind = \"poisson\"\nflows = 10000000\n");
    let e = dcsim::budget::estimate(&streamed, base);
    assert!(e.flows < 200 << 20, "{e}");
    assert!(dcsim::budget::check(&streamed, base, 8, &machine(24 << 30)).is_ok());
    // RDMA messages are released as they finish too, whatever their queue pairs; a run that
    // keeps every flow (a per-flow time series) holds them all.
    let rdma = |scheme: &str, extra: &str| {
        cfg(&format!(
            "schemes = [\"{scheme}\"]\n[rdma]\nrto = \"1ms\"\n[workload]\nkind = \"poisson\"\nflows = 10000000\n{extra}"
        ))
    };
    assert!(dcsim::budget::estimate(&rdma("GPMP", ""), base).flows < 200 << 20);
    assert!(dcsim::budget::estimate(&rdma("DCQCN", ""), base).flows < 200 << 20);
    let kept = rdma("GPMP", "[timeseries]\ninterval = \"10us\"\n");
    assert!(dcsim::budget::estimate(&kept, base).flows > 8 << 30);
}

#[test]
fn impossible_amounts_of_work_are_rejected_up_front() {
    let tmp = tempfile::tempdir().unwrap();
    // 10 values on each of 8 axes, 2 schemes: 2 * 10^8 runs.
    let mut huge = String::from("schemes = [\"TCP\", \"DCTCP\"]\n[sweep]\naxes = [\n");
    for (i, k) in [
        "workload.load",
        "tcp.init_cwnd",
        "tcp.min_cwnd",
        "dctcp.g",
        "tcp.dupthresh",
        "tcp.rto_backoff",
        "workload.flows",
        "packet.mss",
    ]
    .iter()
    .enumerate()
    {
        let vals: Vec<String> = (1..=10).map(|v| format!("{}", v + i)).collect();
        huge += &format!("  {{ key = \"{k}\", values = [{}] }},\n", vals.join(", "));
    }
    huge += "]\n";
    for (text, needle) in [
        (huge.as_str(), "at most 1000000"),
        ("[probe]\ninterval = \"0s\"\n", "probe.interval"),
        (
            "[probe]\ninterval = \"10ns\"\nduration = \"10s\"\n",
            "samples per queue",
        ),
        ("[topology]\nkind = \"fat_tree\"\nk = 66\n", "topology.k"),
    ] {
        write(tmp.path(), "w.toml", text);
        let t0 = std::time::Instant::now();
        let o = dcsim(&["validate", "w.toml"], tmp.path());
        assert!(!o.status.success(), "accepted:\n{text}");
        assert!(err(&o).contains(needle), "{needle}: {}", err(&o));
        assert!(t0.elapsed().as_secs() < 5);
    }
    let o = dcsim(&["run", "-j", "100000"], tmp.path());
    assert!(
        !o.status.success() && err(&o).contains("1..=1024"),
        "{}",
        err(&o)
    );
}

#[test]
fn configurations_that_cannot_make_progress_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    for (text, needle) in [
        // Arrivals spread over 10^12 times the useful time (used to run forever).
        (
            "[workload]\nkind = \"poisson\"\nload = 1e-12\nflows = 20\n",
            "workload.load",
        ),
        // A port that holds no packet drops everything (used to never end).
        (
            "[switch]\nbuffer = { kind = \"static\", per_port = \"1000B\" }\n",
            "holds no packet",
        ),
        // A 1-byte GPMP slice: a packet per byte.
        (
            "schemes = [\"GPMP\"]\n[rdma]\nrto = \"1ms\"\n[gpmp]\nslice = \"1B\"\n",
            "gpmp.slice",
        ),
        (
            "schemes = [\"SRM-like\"]\n[rdma]\nrto = \"1ms\"\n[srm]\nchunk = \"10B\"\n",
            "srm.chunk",
        ),
        (
            "[topology]\nkind = \"dumbbell\"\nlink_delay = \"1000s\"\n",
            "topology.link_delay",
        ),
        (
            "[topology]\nkind = \"leaf_spine\"\nhost_rate = \"100Kbps\"\n",
            "topology.host_rate",
        ),
        // RDMA on a lossy fabric without a timeout (used to strand messages, exit 0).
        (
            "schemes = [\"GPMP\"]\n[switch.pfc]\nenabled = false\n",
            "rdma.rto",
        ),
        // A tag no workload part has (used to end after one flow).
        (
            "end_when = \"query\"\n[workload]\nkind = \"poisson\"\n",
            "end_when",
        ),
        // Inconsistent buffers: reserves beyond the pool, XOFF beyond the port.
        (
            "[switch]\nqueues = 2\nbuffer = { kind = \"shared\", size = \"10KB\", reserve = \"1MB\" }\n",
            "sets aside",
        ),
        (
            "[switch]\npfc = { enabled = true }\nbuffer = { kind = \"static\", per_port = \"3KB\", pfc_xoff = \"100KB\" }\n",
            "pfc_xoff",
        ),
    ] {
        write(tmp.path(), "n.toml", text);
        let t0 = std::time::Instant::now();
        let o = dcsim(&["run", "n.toml", "-q"], tmp.path());
        assert!(!o.status.success(), "accepted:\n{text}");
        assert!(err(&o).contains(needle), "{needle}: {}", err(&o));
        assert!(t0.elapsed().as_secs() < 5, "{text}");
    }
}

#[test]
fn arrivals_after_the_stop_time_are_not_generated() {
    // At load 0.5 on 16 hosts web-search flows arrive at about 5 800/s, so the 2000 flows over
    // about 0.34 s; with a 5 ms stop only the ~29 arriving before it exist (none counted as
    // unfinished that never began).
    let c = cfg("stop_time = \"5ms\"\n[workload]\nkind = \"poisson\"\nload = 0.5\nflows = 2000\n");
    let r = crate::common::run(&c, "DCTCP");
    assert!((10..60).contains(&r.totals.flows), "{}", r.totals.flows);
    assert!(r.records.iter().all(|f| f.start_ps < 5_000_000_000));
}

#[test]
fn a_run_that_strands_flows_says_so() {
    // Unreliable UDP into a 3-packet port: packets are lost, flows never finish, the run
    // ends idle. It must say so on stderr (even with -q) and in summary.csv.
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "u.toml",
        "name = \"u\"\nschemes = [\"UDP\"]\n[switch]\nbuffer = { kind = \"static\", per_port = \"4.5KB\" }\n\
         [workload]\nkind = \"incast\"\nfan_in = 4\nsize = \"100KB\"\n",
    );
    let o = dcsim(&["run", "u.toml", "-q"], tmp.path());
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains("never finished") && err(&o).contains("idle"),
        "{}",
        err(&o)
    );
    let text = std::fs::read_to_string(tmp.path().join("results/u/summary.csv")).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().unwrap().clone();
    let i = h.iter().position(|c| c == "end_reason").unwrap();
    assert!(r.records().all(|x| &x.unwrap()[i] == "idle"));
}

#[test]
fn the_ideal_fct_is_a_lower_bound_for_spraying_too() {
    // 10 Gbps hosts over four 2.5 Gbps spines: sprayed, one flow uses all four at once and
    // beats the single-path ideal (a 2.5 Gbps pipe), which used to give slowdowns below 1.
    let c = cfg(
        "schemes = [\"TCP+spray\"]\n[topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 1\nleaves = 2\nspines = 4\n\
         fabric_rate = \"2.5Gbps\"\n[tcp]\ninit_cwnd = 1000\n\
         [workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 1, size = \"1MB\" }]\n",
    );
    let r = crate::common::run(&c, "TCP+spray"); // checks FCT >= ideal
    let f = &r.records[0];
    let (h, fab, d) = (
        dcsim::units::BitRate::from_gbps(10),
        dcsim::units::BitRate::from_mbps(2500),
        dcsim::units::SimTime::from_us(1),
    );
    let path = [(h, d), (fab, d), (fab, d), (h, d)];
    let single = dcsim::metrics::ideal_fct(1_000_000, 1460, 78, &path, &path, Some(78));
    let fct = f.fct_ps.unwrap();
    assert!(
        fct < single.0,
        "spraying should beat one 2.5 Gbps path: {fct} vs {}",
        single.0
    );
    // The ideal now lets the packets use the four spines (10 Gbps of fabric): it is below
    // the FCT, and below the single-path figure.
    assert!(f.ideal_fct_ps <= fct && f.ideal_fct_ps < single.0, "{f:?}");
}

#[test]
fn a_closed_pipe_ends_dcsim_quietly() {
    // `dcsim run --dry-run | head -1`: the reader goes away; no panic message.
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "p.toml",
        "seeds = 200\n[sweep]\naxes = [{ key = \"workload.load\", values = [0.1, 0.2, 0.3] }]\n",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args(["run", "p.toml", "--dry-run"])
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // close the read end at once
    let o = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
}

#[test]
fn a_full_disk_fails_the_run_cleanly() {
    // A 64 KiB tmpfs as the output directory (needs root to mount; skipped otherwise): the
    // run must fail with an error that says why, and leave no run directory that looks done.
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a small tmpfs here (not root?)");
        return;
    }
    write(
        tmp.path(),
        "c.toml",
        "name = \"e\"\nschemes = [\"TCP\", \"DCTCP\"]\nseeds = 3\n[workload]\nkind = \"poisson\"\nflows = 600\n",
    );
    let o = dcsim(
        &["run", "c.toml", "-q", "--output-dir", "small"],
        tmp.path(),
    );
    let e = err(&o);
    // (name, is a directory, holds the completion marker) of what the run left.
    let listing: Vec<(String, bool, bool)> = std::fs::read_dir(mnt.join("e"))
        .map(|d| {
            d.filter_map(|x| x.ok())
                .map(|x| {
                    let p = x.path();
                    (
                        x.file_name().to_string_lossy().into_owned(),
                        p.is_dir(),
                        p.join("complete").exists(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let _ = Command::new("umount").arg(&mnt).status();
    assert!(!o.status.success(), "a run onto a full disk succeeded");
    assert!(e.contains("No space left"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    // Every visible run directory is complete (its marker is written last); no summary.
    for (n, dir, complete) in &listing {
        assert!(n != "summary.csv", "a summary of a failed experiment");
        assert!(
            !dir || n.starts_with('.') || *complete,
            "{n} looks done but is not"
        );
    }
}

#[test]
fn the_work_estimate_brackets_what_runs_make() {
    // The packet-hops a run makes lie within the estimate's range, across workloads and
    // transports (the range is wide by design: paths of two links up to the longest, an ACK
    // per packet or none).
    let cases = [
        ("DCTCP", "[workload]\nflows = 400\n"),
        (
            "TCP",
            "[workload]\nkind = \"incast\"\nfan_in = 8\nsize = \"64KB\"\nreceiver = 3\nbursts = 5\n",
        ),
        (
            "DCQCN",
            "[rdma]\nrto = \"1ms\"\n[workload]\nflows = 300\nsize_cdf = \"uniform(1KB, 100KB)\"\n",
        ),
        (
            "DCTCP",
            "[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\nkind = \"allreduce\"\nsize = \"2MB\"\n",
        ),
        (
            "DCTCP",
            "[workload]\nkind = \"permutation\"\nsize = \"500KB\"\n",
        ),
    ];
    for (scheme, text) in cases {
        let c = cfg(&format!("schemes = [\"{scheme}\"]\n{text}"));
        // On the config the scheme runs with (its transport's packet size), as `dcsim` does.
        let p = crate::common::plan(&c, scheme, 1);
        let w = dcsim::work::estimate(&p.config, std::path::Path::new(".")).expect("an estimate");
        let r = crate::common::run(&c, scheme);
        let hops = r.totals.packet_hops as f64;
        assert!(
            (w.hops.0..=w.hops.1).contains(&hops),
            "{scheme} {text}: {hops} packet-hops outside {:?}",
            w.hops
        );
    }
    // Through the command line: the estimate, a long run announced, timeouts below the round
    // trip warned about; nothing runs.
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "big.toml", "[workload]\nflows = 10000000\n");
    let o = dcsim(&["validate", "big.toml"], tmp.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("estimated work"),
        "{out}"
    );
    assert!(err(&o).contains("a long run, not a hang"), "{}", err(&o));
    write(
        tmp.path(),
        "rto.toml",
        "schemes = [\"DCTCP\"]\n[tcp]\nrto_min = \"5us\"\nrto_max = \"10us\"\n",
    );
    let o = dcsim(&["validate", "rto.toml"], tmp.path());
    let e = err(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("tcp.rto_max = 10us is below the base round trip")
            && e.contains("tcp.rto_min = 5us"),
        "{e}"
    );
    let o = dcsim(&["validate", "big.toml"], tmp.path());
    assert!(!err(&o).contains("rto"), "no timeout warning by default");
}
