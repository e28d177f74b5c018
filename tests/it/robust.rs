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
    // The figure's table was drawn from it, one point per value.
    let t = std::fs::read_to_string(tmp.path().join("results/q/f.csv")).unwrap();
    assert_eq!(t.lines().count(), 3, "{t}");
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
    // The value the README documents for size_cdf.
    cfg("[workload]\nkind = \"poisson\"\nsize_cdf = \"uniform(10KB, 20KB)\"\n");
}
