//! GOAL schedules (`[workload] kind = "goal"`): small schedules made here, their timing
//! checked against what the format's rules imply, and bad files refused with the line.

use crate::common::{cfg, run};

/// Runs GOAL schedule `text` on a single switch of 4 hosts at 100 Gbps (1 us links) with
/// `scheme`.
fn goal(text: &str, extra: &str, scheme: &str) -> dcsim::experiment::RunResult {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.goal");
    std::fs::write(&f, text).unwrap();
    let c = cfg(&format!(
        "schemes = [\"{scheme}\"]\n[topology]\nkind = \"leaf_spine\"\nhosts_per_leaf = 4\n\
         leaves = 1\nspines = 1\nhost_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
         [workload]\nkind = \"goal\"\nfile = \"{}\"\n{extra}",
        f.display()
    ));
    run(&c, scheme)
}

const PING_PONG: &str = "// ping-pong with compute on both sides
num_ranks 2
rank 0 {
  c1: calc 1000
  s1: send 1000b to 1 tag 3
  r1: recv 2000b from 1 tag 4
  c2: calc 200 cpu 0
  s1 requires c1
  r1 requires s1   /* posted after the send */
  c2 requires r1
}
rank 1 {
  r1: recv 1000b from 0 tag 3
  c1: calc 500
  s1: send 2000b to 0 tag 4 nic 0
  c1 requires r1
  s1 requires c1
}
";

#[test]
fn a_ping_pong_follows_the_schedule() {
    for scheme in ["DCTCP", "SP-RDMA"] {
        let r = goal(PING_PONG, "", scheme);
        assert_eq!(r.totals.finished, 2, "{scheme}");
        let f = |id: u32| r.records.iter().find(|x| x.flow_id == id).unwrap();
        // The send waits for 1000 ns of compute at rank 0.
        assert_eq!(f(0).start_ps, 1_000_000, "{scheme}");
        assert_eq!((f(0).src, f(0).dst, f(0).size_bytes), (0, 1, 1000));
        // Rank 1 computes 500 ns once the message has arrived, then answers.
        assert_eq!(
            f(1).start_ps,
            f(0).rcv_finish_ps.unwrap() + 500_000,
            "{scheme}"
        );
        assert_eq!((f(1).src, f(1).dst, f(1).size_bytes), (1, 0, 2000));
        // The run ends with rank 0's last compute, 200 ns after the answer arrived: the grid
        // point after it.
        assert_eq!(r.end_reason, dcsim::sim::EndReason::AllFinished);
    }
}

#[test]
fn ranks_map_onto_hosts_and_irequires_starts_with_its_target() {
    let text = "num_ranks 3
rank 0 {
  a: calc 4000
  b: send 100b to 2
  b irequires a
}
rank 1 {
  x: send 100b to 2
}
rank 2 {
  r0: recv 100b from 0
  r1: recv 100b from 1
}
";
    let r = goal(text, "ranks = [3, 1, 0]\n", "DCTCP");
    let f = |id: u32| r.records.iter().find(|x| x.flow_id == id).unwrap();
    // `b irequires a`: b starts when a starts (at 0), not when it ends (4 us).
    assert_eq!(f(0).start_ps, 0);
    assert_eq!((f(0).src, f(0).dst), (3, 0));
    assert_eq!((f(1).src, f(1).dst), (1, 0));
    // The compute step still runs: the run lasts at least its 4 us.
    assert!(r.totals.sim_end_ps >= 4_000_000);
}

#[test]
fn bad_schedules_are_refused_with_the_line() {
    let cases = [
        ("rank 0 {\n}\n", "1: `rank` before `num_ranks`"),
        (
            "num_ranks 2\nrank 0 {\n  s: send 10b to 1\n}\nrank 1 {\n}\n",
            "3: this send has no match",
        ),
        (
            "num_ranks 2\nrank 0 {\n  s: send 10b to 1\n}\nrank 1 {\n  r: recv 10b from -1\n}\n",
            "6: a receive from any source",
        ),
        (
            "num_ranks 2\nrank 0 {\n  s: send 10b to 1\n  s requires t\n}\nrank 1 {\n}\n",
            "4: label `t` is not defined",
        ),
        (
            "num_ranks 2\nrank 0 {\n  s: send 10 to 1\n}\n",
            "3: `10`: a size is a byte count",
        ),
        (
            "num_ranks 2\nrank 0 {\n  s: send 10b to 1\n  r: recv 10b from 1\n  s requires r\n}\n\
             rank 1 {\n  r: recv 10b from 0\n  s: send 10b to 0\n  s requires r\n}\n",
            "dependency cycle",
        ),
        (
            "num_ranks 2\nrank 0 {\n  s: send 10b to 1\n}\nrank 1 {\n  r: recv 20b from 0\n}\n",
            "expects 20 B",
        ),
        (
            "num_ranks 2\nrank 0 {\n  c: calc 5\n",
            "block is not closed",
        ),
        ("num_ranks 2\nrank 5 {\n}\n", "2: rank 5 is not in 0..2"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (text, want)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("b{i}.goal"));
        std::fs::write(&f, text).unwrap();
        let e = dcsim::config::Config::parse(
            &format!("[workload]\nkind = \"goal\"\nfile = \"{}\"\n", f.display()),
            "x.toml",
        )
        .unwrap()
        .validate("x.toml", std::path::Path::new("."))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(want) && e.contains(&format!("b{i}.goal")),
            "case {i}: {e}"
        );
    }
}
