//! Input files that change while a run reads them: a streamed CSV or HPCC flow file truncated,
//! rewritten in place (sizes, starts) or appended to part-way through a run fails the run, and
//! so does a flow list or CDF edited before the run's end (its manifest would name contents the
//! run never saw). The change is made between two steps of the run (`Sim::run_until`), so the
//! tests are deterministic.

use crate::common::{cfg, plan};
use dcsim::experiment;
use dcsim::units::SimTime;
use std::path::Path;

/// A CSV flow list in start order: `n` flows of 1000 B, one every microsecond, across 16 hosts.
fn csv_text(n: usize) -> String {
    let mut s = String::from("flow_id,src,dst,size_bytes,start_ns\n");
    for i in 0..n {
        s += &format!("{i},{},{},1000,{}\n", i % 16, (i + 5) % 16, i * 1000);
    }
    s
}

/// The same flows as an HPCC flow file (start in seconds, 9 decimals).
fn hpcc_text(n: usize) -> String {
    let mut s = format!("{n}\n");
    for i in 0..n {
        s += &format!(
            "{} {} 3 100 1000 {:.9}\n",
            i % 16,
            (i + 5) % 16,
            i as f64 * 1e-6
        );
    }
    s
}

/// Runs DCTCP on the flow file `file` (workload `kind`), letting `edit` change the file once a
/// quarter of the flows have started; returns what the end of the run said.
fn run_with_edit(
    kind: &str,
    file: &Path,
    n: usize,
    edit: impl FnOnce(&Path),
) -> Result<(), String> {
    let offset = if kind == "hpcc" {
        "start_offset = \"0s\"\n"
    } else {
        ""
    };
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n[workload]\nkind = \"{kind}\"\nfile = \"{}\"\n{offset}",
        file.display()
    ));
    let p = plan(&c, "DCTCP", 1);
    let mut sim = experiment::build_sim(&p.config, Path::new("."), &p).expect("builds");
    assert!(sim.retiring(), "the file is streamed");
    assert!(
        sim.run_until(SimTime::from_ns(n as u64 * 250)).is_none(),
        "the run goes on"
    );
    edit(file);
    sim.run_draining(|_| {}, |_, _| {});
    sim.finish_stream()?;
    dcsim::provenance::inputs_unchanged(Path::new("."), &p.identity)
}

/// A change made to a file, by name.
type Edit<'a> = (&'static str, Box<dyn Fn(&Path) + 'a>);

/// Every kind of change to a streamed file of `kind` made by `text(n)`, and no change.
fn every_change_fails_the_run(kind: &str, text: fn(usize) -> String, ext: &str) {
    let n = 4000;
    let orig = text(n);
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join(format!("flows.{ext}"));
    let lines: Vec<&str> = orig.lines().collect();
    let edits: Vec<Edit> = vec![
        (
            "truncated at a row boundary",
            Box::new(|p: &Path| {
                std::fs::write(p, lines[..lines.len() * 3 / 4].join("\n") + "\n").unwrap()
            }),
        ),
        (
            "sizes rewritten in place",
            Box::new(|p: &Path| {
                std::fs::write(
                    p,
                    orig.replace(" 1000 ", " 2000 ").replace(",1000,", ",2000,"),
                )
                .unwrap()
            }),
        ),
        (
            "a start rewritten into the past",
            Box::new(|p: &Path| {
                let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
                let k = l.len() * 3 / 4;
                l[k] = lines[10].to_string();
                std::fs::write(p, l.join("\n") + "\n").unwrap()
            }),
        ),
        (
            "appended to",
            Box::new(|p: &Path| {
                let last = lines.last().unwrap();
                std::fs::write(p, format!("{orig}{last}\n")).unwrap()
            }),
        ),
    ];
    for (what, edit) in &edits {
        std::fs::write(&f, &orig).unwrap();
        let e = run_with_edit(kind, &f, n, edit).expect_err(what);
        assert!(e.contains("changed"), "{kind}, {what}: {e}");
    }
    std::fs::write(&f, &orig).unwrap();
    run_with_edit(kind, &f, n, |_| {}).expect("an unchanged file");
}

#[test]
fn a_streamed_csv_file_changed_during_the_run_fails_it() {
    every_change_fails_the_run("csv", csv_text, "csv");
}

#[test]
fn a_streamed_hpcc_file_changed_during_the_run_fails_it() {
    every_change_fails_the_run("hpcc", hpcc_text, "txt");
}

#[test]
fn a_flow_list_edited_before_the_run_ends_fails_it() {
    // A JSON list is read whole when the run is built; editing it later still makes the
    // manifest's hash (taken when the run was planned) name contents the run did not read.
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("flows.json");
    let text = r#"[{"id": 1, "src": 0, "dst": 5, "size": 100000, "start": "0us"}]"#;
    std::fs::write(&f, text).unwrap();
    let c = cfg(&format!(
        "schemes = [\"DCTCP\"]\n[workload]\nkind = \"json\"\nfile = \"{}\"\n",
        f.display()
    ));
    let p = plan(&c, "DCTCP", 1);
    let mut sim = experiment::build_sim(&p.config, Path::new("."), &p).expect("builds");
    sim.run();
    dcsim::provenance::inputs_unchanged(Path::new("."), &p.identity).expect("unchanged");
    std::fs::write(&f, text.replace("100000", "200000")).unwrap();
    let e = dcsim::provenance::inputs_unchanged(Path::new("."), &p.identity).unwrap_err();
    assert!(e.contains("flows.json") && e.contains("changed"), "{e}");
    // And `execute` (what `dcsim run` calls) refuses a file changed since it was planned.
    let e = experiment::execute(&p.config, Path::new("."), &p).unwrap_err();
    assert!(e.contains("changed"), "{e}");
}
