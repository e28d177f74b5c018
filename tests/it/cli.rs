//! The command line: outputs, validation, and clear errors on bad input.

use std::process::{Command, Output};

fn dcsim(args: &[&str], cwd: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` as a config and runs `dcsim validate` and `dcsim run` on it; both must fail,
/// mention the file and every `needles`, and leave no results behind.
fn rejects(text: &str, needles: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.toml");
    std::fs::write(&path, text).unwrap();
    for cmd in ["validate", "run"] {
        let o = dcsim(&[cmd, "bad.toml"], tmp.path());
        assert!(!o.status.success(), "{cmd} accepted:\n{text}");
        let e = stderr(&o);
        assert!(e.contains("bad.toml"), "error does not name the file: {e}");
        for n in needles {
            assert!(e.contains(n), "error lacks `{n}`: {e}");
        }
        assert!(!e.contains("panicked"), "{e}");
    }
    assert!(
        !tmp.path().join("results").exists(),
        "a failed run wrote results"
    );
}

#[test]
fn unknown_key() {
    rejects("[tcp]\nrto_mn = \"1ms\"\n", &["rto_mn", "line 2"]);
    rejects("[topology]\nkind = \"leaf_spine\"\nk = 4\n", &["`k`"]);
    rejects("nmae = \"x\"\n", &["nmae"]);
}

#[test]
fn bad_unit() {
    rejects(
        "[topology]\nkind = \"leaf_spine\"\nhost_rate = \"10GB\"\n",
        &["unknown rate unit", "Gbps"],
    );
    rejects("[tcp]\nrto_min = 10\n", &["no unit"]);
    rejects("[switch.buffer]\nper_port = \"lots\"\n", &["lots"]);
}

#[test]
fn out_of_range() {
    rejects(
        "[topology]\nkind = \"fat_tree\"\nk = 7\n",
        &["topology.k", "even"],
    );
    rejects(
        "[workload]\nkind = \"poisson\"\nload = 0\n",
        &["workload.load", "(0, 1]"],
    );
    rejects("[switch]\nqueues = 9\n", &["switch.queues", "1..=8"]);
    rejects("[dctcp]\ng = 2.0\n", &["dctcp.g"]);
    rejects("[cubic]\nbeta = 1.0\n", &["cubic.beta", "(0, 1)"]);
    rejects("[cubic]\nc = 0\n", &["cubic.c", "(0, 100]"]);
    rejects("schemes = [\"Homa\"]\n", &["schemes[0]", "DCTCP"]);
    rejects(
        "[switch.pfc]\nenabled = true\npriorities = [3]\n",
        &["switch.pfc.priorities"],
    );
}

#[test]
fn missing_files() {
    let tmp = tempfile::tempdir().unwrap();
    let o = dcsim(&["run", "nope.toml"], tmp.path());
    assert!(!o.status.success());
    assert!(stderr(&o).contains("nope.toml"), "{}", stderr(&o));
    rejects(
        "[workload]\nkind = \"csv\"\nfile = \"flows.csv\"\n",
        &["workload.file", "flows.csv"],
    );
    rejects(
        "[workload]\nkind = \"poisson\"\nsize_cdf = \"my.cdf\"\n",
        &["workload.size_cdf", "my.cdf", "web_search"],
    );
}

#[test]
fn bad_csv_rows_are_located() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("f.csv"),
        "flow_id,src,dst,size_bytes,start_ns\n0,1,2,1000,0\n1,3,99,5,0\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("x.toml"),
        "[workload]\nkind = \"csv\"\nfile = \"f.csv\"\n",
    )
    .unwrap();
    let o = dcsim(&["validate", "x.toml"], tmp.path());
    assert!(!o.status.success());
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
}

#[test]
fn csv_workload_runs_and_writes_every_output() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("flows.csv"),
        "flow_id,src,dst,size_bytes,start_ns\n7,0,5,20000,0\n3,4,1,300000,1000\n9,2,3,1460,500\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("e.toml"),
        "name = \"csvrun\"\nschemes = [\"TCP\", \"DCTCP\"]\n[workload]\nkind = \"csv\"\nfile = \"flows.csv\"\n",
    )
    .unwrap();
    let o = dcsim(&["validate", "e.toml"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = dcsim(&["run", "e.toml", "--quiet"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("TCP-s1") && table.contains("DCTCP-s1"),
        "{table}"
    );
    let dir = tmp.path().join("results/csvrun/DCTCP-s1");
    for f in [
        "fct.csv",
        "summary.csv",
        "summary.json",
        "manifest.json",
        "ports.csv",
        "switches.csv",
    ] {
        assert!(dir.join(f).exists(), "missing {f}");
    }
    let fct = std::fs::read_to_string(dir.join("fct.csv")).unwrap();
    let mut lines = fct.lines();
    let header: Vec<String> = dcsim::columns::fct()
        .into_iter()
        .map(|c| c.name.into_owned())
        .collect();
    assert_eq!(lines.next().unwrap(), header.join(","));
    let ids: Vec<&str> = lines.map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(ids, ["3", "7", "9"], "rows keep the CSV's flow ids, sorted");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["seed"], 1);
    assert_eq!(m["conservation_holds"], true);
    assert!(m["events"].as_u64().unwrap() > 0);
    assert_eq!(m["config"]["workload"]["kind"], "csv");
    assert!(!tmp.path().join("results/csvrun/.DCTCP-s1.partial").exists());
    assert!(tmp.path().join("results/csvrun/summary.csv").exists());
}

#[test]
fn schemes_and_default_config_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let o = dcsim(&["schemes"], tmp.path());
    assert!(String::from_utf8_lossy(&o.stdout).contains("DCTCP"));
    let o = dcsim(&["default-config"], tmp.path());
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    std::fs::write(tmp.path().join("d.toml"), &text).unwrap();
    let o = dcsim(&["validate", "d.toml"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn dry_run_lists_and_skip_existing_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("s.toml"),
        "name = \"sw\"\nschemes = [\"TCP\", \"DCTCP\"]\n\
         [workload]\nkind = \"poisson\"\nload = 0.5\nflows = 50\n\
         [sweep]\naxes = [{ key = \"workload.load\", values = [0.3, 0.7] }]\n",
    )
    .unwrap();
    let o = dcsim(&["run", "s.toml", "--dry-run"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("TCP-load=0.3-s1") && out.contains("DCTCP-load=0.7-s1"),
        "{out}"
    );
    assert!(out.contains("4 run(s)"));
    assert!(
        !tmp.path().join("results").exists(),
        "a dry run writes nothing"
    );
    // Run everything, then delete one run and resume: only that one runs again.
    let o = dcsim(&["run", "s.toml", "-q"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = tmp.path().join("results/sw");
    let before = std::fs::read(exp.join("summary.csv")).unwrap();
    let kept = std::fs::metadata(exp.join("TCP-load=0.3-s1/fct.csv"))
        .unwrap()
        .modified()
        .unwrap();
    std::fs::remove_dir_all(exp.join("DCTCP-load=0.7-s1")).unwrap();
    let o = dcsim(&["run", "s.toml", "--skip-existing"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("skipping 3 complete run(s), running 1"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(exp.join("summary.csv")).unwrap(),
        before,
        "same summary after resuming"
    );
    let still = std::fs::metadata(exp.join("TCP-load=0.3-s1/fct.csv"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(kept, still, "complete runs are not rewritten");
    let o = dcsim(&["run", "s.toml", "--dry-run"], tmp.path());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout)
            .matches("(complete)")
            .count(),
        4
    );
}

/// The ids a `--dry-run` lists (first column of each run line).
fn listed(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.contains("run(s)"))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn shards_partition_the_sweep_and_merge_to_the_whole() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("s.toml"),
        "name = \"sh\"\nschemes = [\"TCP\", \"DCTCP\"]\nseeds = 2\n\
         [workload]\nkind = \"poisson\"\nload = 0.5\nflows = 40\n\
         [sweep]\naxes = [{ key = \"workload.load\", values = [0.3, 0.7] }]\n\
         [[plot]]\nfile = \"fct.svg\"\ntitle = \"t\"\nx = \"workload.load\"\ny = \"avg_fct_us\"\n",
    )
    .unwrap();
    let all = listed(&dcsim(&["run", "s.toml", "--dry-run"], tmp.path()));
    assert_eq!(all.len(), 8);
    // Union of the shards' listings is the whole plan; no run is in two shards.
    let mut union = Vec::new();
    for i in 1..=3 {
        let o = dcsim(
            &["run", "s.toml", "--dry-run", "--shard", &format!("{i}/3")],
            tmp.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let ids = listed(&o);
        assert!(!ids.is_empty());
        union.extend(ids);
    }
    let mut sorted = union.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), union.len(), "a run is in two shards");
    let mut whole = all.clone();
    whole.sort();
    assert_eq!(sorted, whole, "the shards do not cover the sweep");

    // Each shard into its own output directory (as on node-local disks), then merge.
    for i in 1..=3 {
        let o = dcsim(
            &[
                "run",
                "s.toml",
                "-q",
                "--shard",
                &format!("{i}/3"),
                "--output-dir",
                &format!("shard{i}"),
            ],
            tmp.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            tmp.path()
                .join(format!("shard{i}/sh/summary.shard-{i}-of-3.csv"))
                .exists()
        );
    }
    // Merging only two shards fails, naming what is missing, unless partial is allowed.
    let o = dcsim(
        &[
            "merge",
            "s.toml",
            "shard1/sh",
            "shard2/sh",
            "--output-dir",
            "m",
        ],
        tmp.path(),
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("missing"), "{}", stderr(&o));
    let o = dcsim(
        &["merge", "s.toml", "shard3/sh", "--output-dir", "m"],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(tmp.path().join("m/sh/fct.svg").exists());
    // The merged results equal one unsharded run.
    let o = dcsim(&["run", "s.toml", "-q", "--output-dir", "w"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(tmp.path().join("m/sh/summary.csv")).unwrap(),
        std::fs::read(tmp.path().join("w/sh/summary.csv")).unwrap()
    );
    for id in &all {
        assert_eq!(
            std::fs::read(tmp.path().join(format!("m/sh/{id}/fct.csv"))).unwrap(),
            std::fs::read(tmp.path().join(format!("w/sh/{id}/fct.csv"))).unwrap(),
            "{id}"
        );
    }
    for bad in ["0/3", "4/3", "1/0", "x"] {
        let o = dcsim(&["run", "s.toml", "--shard", bad], tmp.path());
        assert!(!o.status.success());
        assert!(stderr(&o).contains("--shard"), "{}", stderr(&o));
    }
}

#[test]
fn flow_level_figures_and_their_validation() {
    let tmp = tempfile::tempdir().unwrap();
    let base = "name = \"fl\"\nschemes = [\"TCP\", \"DCTCP\"]\n\
         [workload]\nkind = \"poisson\"\nload = 0.5\nflows = 200\n\
         [sweep]\naxes = [{ key = \"workload.load\", values = [0.3, 0.7] }]\n";
    std::fs::write(
        tmp.path().join("f.toml"),
        format!(
            "{base}[[plot]]\nfile = \"cdf.svg\"\ntitle = \"t\"\nkind = \"fct_cdf\"\n\
             at = {{ \"workload.load\" = 0.7 }}\n\
             [[plot]]\nfile = \"sz.svg\"\ntitle = \"t\"\nkind = \"slowdown_vs_size\"\n\
             y = \"p50_slowdown\"\nbins = 5\n\
             [[plot]]\nfile = \"attr.svg\"\ntitle = \"t\"\nkind = \"attribution\"\n\
             at = {{ \"workload.load\" = 0.3 }}\n"
        ),
    )
    .unwrap();
    let o = dcsim(&["run", "f.toml", "-q"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = tmp.path().join("results/fl");
    let cdf = std::fs::read_to_string(exp.join("cdf.csv")).unwrap();
    assert!(cdf.starts_with("series,fct_us,cdf\n"));
    // Only the load-0.7 runs: each scheme's CDF has one point per finished flow there (200).
    for s in ["TCP", "DCTCP"] {
        let pts: Vec<&str> = cdf
            .lines()
            .filter(|l| l.starts_with(&format!("{s},")))
            .collect();
        assert_eq!(pts.len(), 200, "{s}");
        assert!(pts.last().unwrap().ends_with(",1"));
    }
    let sz = std::fs::read_to_string(exp.join("sz.csv")).unwrap();
    // Both loads pooled: 5 bins of 80 flows per scheme.
    assert_eq!(
        sz.lines().filter(|l| l.ends_with(",80")).count(),
        10,
        "{sz}"
    );
    assert!(exp.join("cdf.svg").exists() && exp.join("sz.svg").exists());
    // Attribution: one bar per scheme whose components add up to the mean FCT of the class.
    let attr = std::fs::read_to_string(exp.join("attr.csv")).unwrap();
    let summary = std::fs::read_to_string(exp.join("summary.csv")).unwrap();
    let head: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    for s in ["TCP", "DCTCP"] {
        let row: Vec<f64> = attr
            .lines()
            .find(|l| l.starts_with(&format!("{s},")))
            .unwrap()
            .split(',')
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect();
        let n = dcsim::sim::attrib::Attribution::NAMES.len();
        assert_eq!(row.len(), n + 1);
        let total = row[n];
        assert!((row[..n].iter().sum::<f64>() - total).abs() < 1e-6 * total);
        let avg: f64 = summary
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f[col("run")] == format!("{s}-load=0.3-s1") && f[col("class")] == "all")
            .map(|f| f[col("avg_fct_us")].parse().unwrap())
            .unwrap();
        assert!(
            (total - avg).abs() < 1e-3 * avg,
            "{s}: attribution {total} vs avg FCT {avg}"
        );
    }

    for (plot, needle) in [
        (
            "kind = \"fct_cdf\"\nat = { \"workload.lod\" = 0.7 }",
            "plot[0].at",
        ),
        (
            "kind = \"slowdown_vs_size\"\ny = \"p98_slowdown\"",
            "plot[0].y",
        ),
        ("kind = \"slowdown_vs_size\"\nbins = 1", "plot[0].bins"),
    ] {
        std::fs::write(
            tmp.path().join("bad.toml"),
            format!("{base}[[plot]]\nfile = \"x.svg\"\ntitle = \"t\"\n{plot}\n"),
        )
        .unwrap();
        let o = dcsim(&["validate", "bad.toml"], tmp.path());
        assert!(!o.status.success());
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
    }
}

#[test]
fn sweep_ranges_expand_with_units_and_bad_ranges_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("r.toml"),
        "name = \"rg\"\n[switch]\necn = { kind = \"step\", k = \"30KB\" }\n\
         [sweep]\naxes = [\n\
           { key = \"workload.load\", range = { from = 0.3, to = 0.5, step = 0.1 } },\n\
           { key = \"switch.ecn.k\", range = { from = \"20KB\", to = \"60KB\", step = \"20KB\" } },\n]\n",
    )
    .unwrap();
    let o = dcsim(&["run", "r.toml", "--dry-run"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("9 run(s)"), "{out}");
    for id in [
        "DCTCP-load=0.3-k=20KB-s1",
        "DCTCP-load=0.4-k=40KB-s1",
        "DCTCP-load=0.5-k=60KB-s1",
    ] {
        assert!(out.contains(id), "{id} missing from\n{out}");
    }
    rejects(
        "[sweep]\naxes = [{ key = \"workload.load\", range = { from = \"1KB\", to = \"1MB\", step = \"1KB\" } }]\n",
        &["sweep.axes[0].range", "one unit"],
    );
    rejects(
        "[sweep]\naxes = [{ key = \"workload.load\", values = [0.5], range = { from = 0.1, to = 0.2, step = 0.1 } }]\n",
        &["sweep.axes[0].range", "not both"],
    );
}

#[test]
fn queue_timeseries_figure() {
    let tmp = tempfile::tempdir().unwrap();
    let base = "name = \"qt\"\nschemes = [\"TCP\", \"DCTCP\"]\n\
         [topology]\nkind = \"dumbbell\"\nleft = 2\nright = 2\n\
         [switch]\necn = { kind = \"step\", k = \"30KB\" }\n\
         [workload]\nkind = \"flows\"\nflows = [\n\
           { src = 0, dst = 2, size = \"2MB\" },\n{ src = 1, dst = 3, size = \"2MB\" },\n]\n\
         [[plot]]\nfile = \"q.svg\"\ntitle = \"t\"\nkind = \"queue_timeseries\"\n";
    std::fs::write(
        tmp.path().join("q.toml"),
        format!("{base}[timeseries]\ninterval = \"1us\"\nnodes = [4]\n"),
    )
    .unwrap();
    let o = dcsim(&["run", "q.toml", "-q"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = tmp.path().join("results/qt");
    let t = std::fs::read_to_string(exp.join("q.csv")).unwrap();
    // TCP fills the 150 KB default buffer (to within one packet); DCTCP, marking at 30 KB,
    // peaks lower (its slow-start overshoot) before settling.
    let peak = |s: &str| {
        t.lines()
            .filter(|l| l.starts_with(s))
            .map(|l| l.rsplit(',').next().unwrap().parse::<f64>().unwrap())
            .fold(0.0, f64::max)
    };
    let (tcp, dctcp) = (peak("TCP (port"), peak("DCTCP (port"));
    assert!(
        tcp > 148.0 - 1.6 && tcp <= 150.0 && dctcp > 30.0 && dctcp < 0.6 * tcp,
        "peaks: TCP {tcp} KB, DCTCP {dctcp} KB"
    );
    assert!(exp.join("q.svg").exists());
    std::fs::write(tmp.path().join("bad.toml"), base).unwrap();
    let o = dcsim(&["validate", "bad.toml"], tmp.path());
    assert!(
        !o.status.success() && stderr(&o).contains("plot[0].kind"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn interrupting_a_sweep_leaves_only_complete_runs_and_resume_finishes_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("i.toml"),
        "name = \"int\"\nschemes = [\"TCP\", \"DCTCP\"]\nseeds = 4\n\
         [workload]\nkind = \"poisson\"\nload = 0.5\nflows = 200\n\
         [sweep]\naxes = [{ key = \"workload.load\", values = [0.3, 0.5, 0.7, 0.8] }]\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args(["run", "i.toml", "-q", "-j", "1"])
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let exp = tmp.path().join("results/int");
    let complete = || -> Vec<String> {
        std::fs::read_dir(&exp)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.') && !n.ends_with(".csv"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let t0 = std::time::Instant::now();
    // Interrupt as soon as the first run is complete (31 runs still to go).
    while complete().is_empty() && t0.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // SIGKILL: the process stops at an arbitrary instruction, the harshest case of Ctrl-C
    // (and SIGINT may be ignored by a process started in the background by a shell).
    let st = Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = child.wait().unwrap();
    let done = complete();
    assert!(
        !status.success() && done.len() < 32,
        "the sweep was not interrupted ({} runs done)",
        done.len()
    );
    // Every run directory that exists is whole: its manifest and a full fct.csv.
    for d in &done {
        let dir = exp.join(d);
        assert!(dir.join("manifest.json").exists(), "{d} has no manifest");
        let fct = std::fs::read_to_string(dir.join("fct.csv")).unwrap();
        assert_eq!(fct.lines().count(), 201, "{d}: truncated fct.csv");
    }
    assert!(
        !exp.join("summary.csv").exists(),
        "a summary of an unfinished sweep"
    );
    // Resuming runs only the rest; the result equals an uninterrupted sweep.
    let o = dcsim(&["run", "i.toml", "--skip-existing"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("skipping {} complete run(s)", done.len())),
        "{}",
        stderr(&o)
    );
    let o = dcsim(
        &["run", "i.toml", "-q", "--output-dir", "fresh"],
        tmp.path(),
    );
    assert!(o.status.success());
    assert_eq!(
        std::fs::read(exp.join("summary.csv")).unwrap(),
        std::fs::read(tmp.path().join("fresh/int/summary.csv")).unwrap()
    );
}

#[test]
fn set_overrides_keys_and_is_recorded() {
    // `--set` changes the config as a sweep axis would, validates the result, and the
    // experiment manifest records the overrides; the same keys work on validate and plot.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("e.toml");
    std::fs::write(
        &cfg,
        "name = \"e\"\nschemes = [\"TCP\", \"DCTCP\"]\n[workload]\nkind = \"incast\"\nfan_in = 4\nsize = \"20KB\"\n",
    )
    .unwrap();
    let args = [
        "run",
        "e.toml",
        "-q",
        "--set",
        "schemes=[\"DCTCP\"]",
        "--set",
        "workload.fan_in=6",
        "--set",
        "topology.host_rate=25Gbps",
    ];
    let o = dcsim(&args, tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("results/e/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        m["overrides"],
        serde_json::json!([
            "schemes=[\"DCTCP\"]",
            "workload.fan_in=6",
            "topology.host_rate=25Gbps"
        ])
    );
    assert_eq!(m["config"]["schemes"], serde_json::json!(["DCTCP"]));
    assert_eq!(m["config"]["topology"]["host_rate"], "25Gbps");
    assert_eq!(m["config"]["workload"]["fan_in"], 6);
    assert_eq!(m["runs"].as_array().unwrap().len(), 1);
    let o = dcsim(
        &["validate", "e.toml", "--set", "workload.fan_in=0"],
        tmp.path(),
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--set workload.fan_in=0"),
        "{}",
        stderr(&o)
    );
    let o = dcsim(
        &["plot", "e.toml", "--set", "schemes=[\"DCTCP\"]"],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_scaling_benchmark_runs_a_point() {
    // `dcsim bench --scenario scale` runs each point in its own process; one small point here.
    let tmp = tempfile::tempdir().unwrap();
    let o = dcsim(&["bench", "--scenario", "scale:4:permutation"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let line = String::from_utf8_lossy(&o.stdout).into_owned();
    let v: Vec<&str> = line.split_whitespace().collect();
    assert_eq!((v[0], v[1], v[2]), ("4", "16", "permutation"), "{line}");
    assert_eq!(v[5], "360000", "16 flows of 2 MB over 4 or 6 hops: {line}");
    let o = dcsim(&["bench", "--scenario", "scale:4:nothing"], tmp.path());
    assert!(!o.status.success() && stderr(&o).contains("websearch or permutation"));
    // The AI benchmark's points are multiples of 128 GPUs (its iteration runs in
    // experiments/ai's smoke test); others are refused, saying so.
    for bad in ["ai:100", "ai:x"] {
        let o = dcsim(&["bench", "--scenario", bad], tmp.path());
        assert!(
            !o.status.success() && stderr(&o).contains("multiple of 128"),
            "{bad}: {}",
            stderr(&o)
        );
    }
    // Split into 4 partitions on 2 threads: the same packet-hops and events, and the window
    // statistics of 4 partitions.
    let point = |extra: &[&str]| {
        let mut a = vec![
            "bench",
            "--scenario",
            "scale:4:websearch",
            "--sim-time",
            "0.2ms",
        ];
        a.extend_from_slice(extra);
        let o = dcsim(&a, tmp.path());
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let (one, split) = (point(&[]), point(&["-t", "2", "-p", "4"]));
    let cols = |s: &str| -> Vec<String> {
        let v: Vec<&str> = s.lines().next().unwrap().split_whitespace().collect();
        vec![v[3].into(), v[5].into(), v[10].into()]
    };
    assert_eq!(cols(&one), cols(&split), "{one}\n{split}");
    assert_eq!(cols(&one)[0], "0.200", "{one}");
    assert!(split.contains("4 partitions on 2 threads"), "{split}");
    let imbalance: f64 = split
        .split("event imbalance ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|x| x.parse().ok())
        .expect("an event imbalance");
    assert!((1.0..=4.0).contains(&imbalance), "{split}");
    let o = dcsim(
        &[
            "bench",
            "--scenario",
            "scale:4:websearch",
            "--sim-time",
            "2xs",
        ],
        tmp.path(),
    );
    assert!(!o.status.success(), "a bad time is refused");
}

#[test]
fn a_named_pipe_as_an_input_is_refused_without_blocking() {
    // Opening a named pipe blocks until something writes into it: a FIFO given as the config,
    // the topology, a size CDF or a flow list hung `validate` and `run` for ever.
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    let ok = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(ok.success(), "mkfifo");
    let configs = [
        ("config", None),
        (
            "topology",
            Some("[topology]\nkind = \"file\"\nfile = \"pipe\"\n"),
        ),
        ("size CDF", Some("[workload]\nsize_cdf = \"pipe\"\n")),
        (
            "CSV flows",
            Some("[workload]\nkind = \"csv\"\nfile = \"pipe\"\n"),
        ),
        (
            "JSON flows",
            Some("[workload]\nkind = \"json\"\nfile = \"pipe\"\n"),
        ),
        (
            "htsim flows",
            Some("[workload]\nkind = \"htsim\"\nfile = \"pipe\"\n"),
        ),
    ];
    for (what, text) in configs {
        let cfg = match text {
            None => fifo.clone(),
            Some(t) => {
                let p = d.path().join("c.toml");
                std::fs::write(&p, t).unwrap();
                p
            }
        };
        for cmd in ["validate", "run"] {
            let mut child = Command::new(env!("CARGO_BIN_EXE_dcsim"))
                .args([cmd, cfg.to_str().unwrap()])
                .args(if cmd == "run" { &["-q"][..] } else { &[] })
                .current_dir(d.path())
                .stderr(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let t0 = std::time::Instant::now();
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break s;
                }
                if t0.elapsed() > std::time::Duration::from_secs(60) {
                    child.kill().unwrap();
                    panic!("{what}: `dcsim {cmd}` blocked on the named pipe");
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            };
            let mut e = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut e).unwrap();
            assert!(
                !status.success(),
                "{what}: `dcsim {cmd}` accepted a named pipe"
            );
            assert!(e.contains("not a regular file"), "{what}: {cmd}: {e}");
        }
    }
}

#[test]
fn a_figure_that_cannot_be_drawn_does_not_cost_the_others() {
    // The first figure asks for a deadline class no flow has: it is reported with its class
    // and the classes there are, and the second figure is still drawn (the first failure used
    // to stop them all, exit 1, no figure at all).
    let tmp = tempfile::tempdir().unwrap();
    let text = "name = \"figs\"\nschemes = [\"DCTCP\"]\n\
                [workload]\nflows = 40\nload = 0.3\ntag = \"background\"\n\
                [sweep]\naxes = [{ key = \"workload.load\", values = [0.3, 0.5] }]\n\
                [[plot]]\nfile = \"none.svg\"\ntitle = \"none\"\nx = \"workload.load\"\ny = \"avg_fct_us\"\nclass = \"deadline:5ms\"\n\
                [[plot]]\nfile = \"bg.svg\"\ntitle = \"background\"\nx = \"workload.load\"\ny = \"avg_fct_us\"\nclass = \"tag:background\"\n";
    std::fs::write(tmp.path().join("f.toml"), text).unwrap();
    let o = dcsim(&["run", "f.toml", "-q", "--output-dir", "out"], tmp.path());
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("figure none.svg")
            && e.contains("class `deadline:5ms`")
            && e.contains("tag:background"),
        "{e}"
    );
    assert!(
        e.contains("1 of 2 figure(s) could not be drawn (none.svg)"),
        "{e}"
    );
    let dir = tmp.path().join("out/figs");
    assert!(dir.join("bg.svg").is_file() && dir.join("bg.csv").is_file());
    assert!(!dir.join("none.svg").exists() && !dir.join(".none.svg.partial").exists());
}

#[test]
fn plot_without_figures_says_so_and_schemes_marks_fixed_balancers_once() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("p.toml"), "schemes = [\"DCTCP\"]\n").unwrap();
    let o = dcsim(&["plot", "p.toml"], tmp.path());
    assert!(
        o.status.success() && stderr(&o).contains("no [[plot]] sections"),
        "{}",
        stderr(&o)
    );
    let o = dcsim(&["schemes"], tmp.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert_eq!(out.matches("load balancer)").count(), 1, "{out}");
}

#[test]
fn templates_validate_and_rdma_schemes_run_with_their_transports_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    for t in ["tcp", "rdma", "gpmp", "pdtcp"] {
        let o = dcsim(&["default-config", "--template", t], tmp.path());
        assert!(o.status.success(), "{t}: {}", stderr(&o));
        let file = format!("{t}.toml");
        std::fs::write(tmp.path().join(&file), &o.stdout).unwrap();
        let v = dcsim(&["validate", &file], tmp.path());
        assert!(v.status.success(), "template {t}: {}", stderr(&v));
    }
    let o = dcsim(&["default-config", "--template", "rmda"], tmp.path());
    assert!(!o.status.success() && stderr(&o).contains("tcp, rdma, gpmp, pdtcp"));
    // validate says which defaults each scheme takes, and none the file sets.
    let v = dcsim(&["validate", "rdma.toml"], tmp.path());
    let out = String::from_utf8_lossy(&v.stdout).to_string();
    assert!(
        out.contains("HPCC takes its transport's defaults")
            && out.contains("packet.header = \"124B\"")
            && out.contains("packet.header = \"82B\""),
        "{out}"
    );
    std::fs::write(
        tmp.path().join("own.toml"),
        "schemes = [\"DCQCN\"]\n[packet]\nheader = \"90B\"\n[rdma]\nrto = \"1ms\"\n",
    )
    .unwrap();
    let v = dcsim(&["validate", "own.toml"], tmp.path());
    let out = String::from_utf8_lossy(&v.stdout).to_string();
    assert!(
        out.contains("packet.mss") && !out.contains("packet.header"),
        "{out}"
    );
    // The runs: HPCC's packets carry its telemetry, DCQCN's do not, the template's
    // [per_scheme.HPCC] applies to HPCC only, TCP's defaults are untouched.
    let r = dcsim(&["run", "rdma.toml", "--smoke", "-q"], tmp.path());
    assert!(r.status.success(), "{}", stderr(&r));
    let cfg = |run: &str| -> serde_json::Value {
        let m: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                tmp.path()
                    .join(format!("results/rdma-smoke/{run}/manifest.json")),
            )
            .unwrap(),
        )
        .unwrap();
        m["identity"]["config"].clone()
    };
    let (d, h) = (cfg("DCQCN-s1"), cfg("HPCC-s1"));
    assert_eq!(d["packet"]["header"], "82B");
    assert_eq!(h["packet"]["header"], "124B");
    assert_eq!(d["switch"]["ecn"]["kind"], "red");
    assert_eq!(d["switch"]["buffer"]["kind"], "shared");
    assert_eq!(d["switch"]["pfc"]["enabled"], true);
    assert!(d.get("per_scheme").is_none() && h.get("per_scheme").is_none());
    let r = dcsim(
        &[
            "run",
            "tcp.toml",
            "--smoke",
            "-q",
            "--set",
            "schemes=[\"DCTCP\"]",
        ],
        tmp.path(),
    );
    assert!(r.status.success(), "{}", stderr(&r));
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            tmp.path()
                .join("results/default-smoke/DCTCP-s1/manifest.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(m["identity"]["config"]["packet"]["header"], "78B");
    assert_eq!(
        m["identity"]["config"]["switch"]["buffer"]["kind"],
        "static"
    );
}

/// Ctrl-C in the middle of an experiment: it stops with 130, saying how many runs are complete
/// and the command that resumes it, releases the lock, and that command finishes the rest.
#[cfg(unix)]
#[test]
fn an_interrupted_experiment_says_what_is_complete_and_how_to_resume() {
    let tmp = tempfile::tempdir().unwrap();
    // Four runs of about a second each, one at a time.
    let args = [
        "run",
        "-j",
        "1",
        "--set",
        "seeds=2",
        "--set",
        "workload.flows=1500",
    ];
    let child = Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args(args)
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let exp = tmp.path().join("results/default");
    let complete = || {
        std::fs::read_dir(&exp).map_or(0, |rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().join("complete").exists())
                .count()
        })
    };
    let t0 = std::time::Instant::now();
    while complete() == 0 && t0.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let done_before = complete();
    assert!(done_before >= 1, "no run completed");
    // SAFETY: sends SIGINT to the child we spawned.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    if done_before == 4 {
        // The machine was fast enough to finish before the signal: nothing to check.
        return;
    }
    assert_eq!(out.status.code(), Some(130), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("interrupted: "))
        .unwrap_or_else(|| panic!("no summary: {err}"));
    let n: usize = line["interrupted: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(n >= done_before && n < 4, "{line}");
    assert!(
        line.contains(" of 4 run(s) complete in results/default"),
        "{line}"
    );
    let resume = err
        .lines()
        .skip_while(|l| *l != line)
        .nth(1)
        .unwrap()
        .trim();
    assert!(
        resume.ends_with("--skip-existing") && resume.contains("seeds=2"),
        "{resume}"
    );
    assert!(!exp.join(".lock").exists(), "the lock was left behind");
    // The resume command, as printed (without the program's path), runs only what is missing.
    let words: Vec<&str> = resume.split(' ').skip(1).collect();
    let r = dcsim(&words, tmp.path());
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(
        stderr(&r).contains(&format!("skipping {n} complete run(s), running {}", 4 - n)),
        "{}",
        stderr(&r)
    );
    assert_eq!(complete(), 4);
}
