//! Flow-state release (`sim::Retire`) and streamed `fct.csv` rows (`report::FctSpill`): a run
//! that releases its finished flows, and writes its records out in sorted chunks, gives the
//! same files byte for byte as one that keeps every flow and record, while holding only the
//! flows in progress.

use dcsim::experiment::{self, Recorder};
use dcsim::sim::Sim;
use std::path::Path;
use std::time::Instant;

/// Many short flows on a small fat-tree, some of them lost and retransmitted (a small static
/// buffer), with the delay attribution on.
fn config() -> dcsim::config::Config {
    crate::common::cfg(
        "name = \"retire\"\nseed = 3\nschemes = [\"DCTCP\"]\n\
         [topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate = \"10Gbps\"\nfabric_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         [switch.buffer]\nkind = \"static\"\nper_port = \"12KB\"\n\
         [packet]\nmss = \"1000B\"\n\
         [workload]\nkind = \"poisson\"\nsize_cdf = \"web_search\"\nload = 0.7\nflows = 1500\n",
    )
}

/// Runs `scheme` with or without releasing flows; records spill in chunks of `spill` rows.
fn run(
    c: &dcsim::config::Config,
    scheme: &str,
    retire: bool,
    spill: Option<(&Path, usize)>,
) -> (experiment::RunResult, usize) {
    let plan = crate::common::plan(c, scheme, c.seed);
    let mut sim: Sim =
        experiment::build_sim_with(&plan.config, Path::new("."), &plan, retire).unwrap();
    assert_eq!(sim.retiring(), retire);
    let mut rec = Recorder::new(&sim, &plan, &plan.config);
    if let Some((dir, rows)) = spill {
        rec.spill_to(dir.to_path_buf(), &plan.id, rows);
    }
    let reason = sim.run_draining(
        |_| {},
        |net, out| {
            for r in out {
                rec.retired(net, &r);
            }
        },
    );
    let slots = sim.flows.len();
    let r = experiment::collect_with(
        &sim,
        rec,
        reason,
        plan.clone(),
        &plan.config,
        Instant::now(),
    )
    .unwrap();
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    (r, slots)
}

/// `fct.csv` of a run, however its records were kept.
fn fct(r: &experiment::RunResult, dir: &Path) -> String {
    match &r.fct_spill {
        Some(sp) => {
            let p = dir.join("fct.csv");
            sp.write(&p).unwrap();
            std::fs::read_to_string(p).unwrap()
        }
        None => dcsim::report::fct_csv(r),
    }
}

/// `fct.csv`, `summary.csv` and `summary.json` of two runs of `scheme` are the same bytes.
fn assert_same_files(
    keep: &experiment::RunResult,
    rel: &experiment::RunResult,
    dir: &Path,
    scheme: &str,
) {
    assert_eq!(fct(keep, dir), fct(rel, dir), "{scheme}: fct.csv");
    assert_eq!(
        dcsim::report::summary_csv(&[keep]),
        dcsim::report::summary_csv(&[rel]),
        "{scheme}: summary.csv"
    );
    let json = |r: &experiment::RunResult| {
        let mut r = r.clone();
        r.wall_seconds = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    assert_eq!(json(keep), json(rel), "{scheme}: summary.json");
}

#[test]
fn released_flows_and_spilled_rows_give_the_same_files() {
    let c = config();
    let tmp = tempfile::tempdir().unwrap();
    for scheme in ["DCTCP", "UDP"] {
        let (keep, all_slots) = run(&c, scheme, false, None);
        let (rel, slots) = run(&c, scheme, true, Some((tmp.path(), 97)));
        assert_eq!(
            all_slots, 1500,
            "{scheme}: a run that keeps flows has one slot each"
        );
        // UDP flows that lost a packet never finish, and keep their slots.
        let bound = if scheme == "UDP" { 1200 } else { 500 };
        assert!(
            slots < bound,
            "{scheme}: {slots} slots for 1500 flows: finished flows were not released"
        );
        if scheme == "DCTCP" {
            assert!(
                keep.totals.drops > 0,
                "the buffer should drop (retransmissions)"
            );
        }
        let sp = rel.fct_spill.as_ref().expect("records spilled");
        assert!(sp.chunks() > 10, "{scheme}: {} chunks", sp.chunks());
        assert!(rel.records.is_empty());
        assert_same_files(&keep, &rel, tmp.path(), scheme);
    }
    // Every spill directory is gone with its run.
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "only fct.csv is left"
    );
}

#[test]
fn a_sorted_flow_file_streams_with_the_same_results() {
    // The Poisson run's flows written out as a flow file in start order: read as its flows
    // start (`workload::CsvStream`) by a retiring run, as a list by one that keeps them.
    let c = config();
    let flows = c
        .workload
        .generate(16, c.topology.host_rate(), 3, Path::new("."))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::from("flow_id,src,dst,size_bytes,start_ns,deadline_ns\n");
    for f in &flows {
        // Whole nanoseconds, and a deadline, so that the deadline columns are exercised.
        let ns = f.start.0 / 1000;
        let line = format!("{},{},{},{},{ns},200000\n", f.id, f.src, f.dst, f.size);
        text.push_str(&line);
    }
    let file = tmp.path().join("flows.csv");
    std::fs::write(&file, text).unwrap();
    let mut c = c;
    c.workload = dcsim::workload::WorkloadConfig::Csv { file };
    let spill = tmp.path().join("spill");
    let (keep, _) = run(&c, "DCTCP", false, None);
    let (rel, slots) = run(&c, "DCTCP", true, Some((&spill, 101)));
    assert!(slots < 500, "{slots} slots");
    assert!(rel.fct_spill.is_some());
    assert!(keep.classes[0].deadline_flows > 0);
    assert_eq!(fct(&keep, tmp.path()), fct(&rel, tmp.path()));
    assert_eq!(
        dcsim::report::summary_csv(&[&keep]),
        dcsim::report::summary_csv(&[&rel])
    );
}

/// Many short messages on a small fat-tree with a lossy buffer and a retransmission timeout
/// shorter than the queueing delays (see below).
fn rdma_config() -> dcsim::config::Config {
    crate::common::cfg(
        "name = \"retire-rdma\"\nseed = 5\nschemes = [\"DCQCN\"]\n\
         [topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate = \"10Gbps\"\nfabric_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         [switch.buffer]\nkind = \"static\"\nper_port = \"30KB\"\n\
         [switch.pfc]\nenabled = false\n\
         [packet]\nmss = \"1000B\"\n\
         [rdma]\nrto = \"20us\"\n\
         [workload]\nkind = \"poisson\"\nsize_cdf = \"google_rpc\"\nload = 0.6\nflows = 1200\n",
    )
}

#[test]
fn released_rdma_messages_give_the_same_files() {
    // A queue pair per message (DCQCN, HPCC with its telemetry, IRN): each message is released
    // with its queue pair once nothing of either is left. A small lossy buffer makes
    // go-back-N (and IRN's selective) retransmissions, and a retransmission timeout shorter
    // than the queueing delays makes spurious ones: duplicates still in flight when their
    // message has finished, which must not find its slot released (releasing a finished
    // message without waiting for its packets fails this test).
    let c = rdma_config();
    let tmp = tempfile::tempdir().unwrap();
    for scheme in ["DCQCN", "HPCC", "IRN"] {
        let (keep, all_slots) = run(&c, scheme, false, None);
        let (rel, slots) = run(&c, scheme, true, Some((tmp.path(), 89)));
        assert_eq!(all_slots, 1200, "{scheme}: a queue pair per message");
        assert!(
            slots < 400,
            "{scheme}: {slots} slots for 1200 messages: finished ones were not released"
        );
        assert_eq!(keep.totals.finished, 1200, "{scheme}");
        if scheme != "HPCC" {
            assert!(keep.totals.drops > 0, "{scheme}: the buffer should drop");
            assert!(keep.totals.retransmits > 0 && keep.totals.timeouts > 0);
        }
        assert_eq!(
            rel.totals.queue_pairs, 1200,
            "{scheme}: queue pairs created"
        );
        assert!(rel.fct_spill.as_ref().expect("records spilled").chunks() > 10);
        assert_drops_add_up(&keep, scheme);
        assert_same_files(&keep, &rel, tmp.path(), scheme);
    }
}

/// Every lost packet of a run (data, ACK, NACK) is in the `drops` of its flow's or message's
/// row.
pub fn assert_drops_add_up(r: &experiment::RunResult, what: &str) {
    let rows: u64 = r.records.iter().map(|x| x.drops).sum();
    assert_eq!(
        rows, r.totals.drops,
        "{what}: the rows' drops against the run's"
    );
}

#[test]
fn released_messages_of_shared_queue_pairs_give_the_same_files() {
    // Schedulers whose queue pairs carry a host pair's later messages too (SP-RDMA, GPMP and
    // its baselines, MP-RDMA): a message is released once it has finished and none of its
    // data packets is left, the queue pairs stay. Lossy and with spurious timeouts, as above.
    let mut c = rdma_config();
    c.switch.queues = 3;
    let tmp = tempfile::tempdir().unwrap();
    for scheme in ["SP-RDMA", "GPMP", "NEM-like", "SRM-like", "MP-RDMA"] {
        let (keep, _) = run(&c, scheme, false, None);
        let (rel, _) = run(&c, scheme, true, Some((tmp.path(), 89)));
        assert_eq!(keep.totals.finished, 1200, "{scheme}");
        let t = &keep.totals;
        assert!(
            t.retransmits > 0 && t.timeouts > 0,
            "{scheme}: retransmissions and timeouts expected: {} and {}",
            t.retransmits,
            t.timeouts
        );
        assert!(rel.fct_spill.as_ref().expect("records spilled").chunks() > 10);
        // The delay attribution adds up, also where MP-RDMA's reordering lets a packet of an
        // earlier message complete a later one (it did not before: the earlier message's
        // journey counted whole).
        for r in &keep.records {
            let a = r.attribution.expect("attribution of a finished message");
            assert_eq!(Some(a.total()), r.fct_ps, "{scheme}: {r:?}");
        }
        assert_drops_add_up(&keep, scheme);
        assert_same_files(&keep, &rel, tmp.path(), scheme);
    }
}

#[test]
fn a_sorted_hpcc_flow_file_streams_with_the_same_results() {
    // A Poisson workload written out as an HPCC ns-3 flow file in start order (`2 s + t`),
    // read as its messages start (`workload::HpccStream`) by a DCQCN run that releases them,
    // as a list by one that keeps them.
    let c = rdma_config();
    let flows = c
        .workload
        .generate(16, c.topology.host_rate(), 5, Path::new("."))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut text = format!("{}\n", flows.len());
    for f in &flows {
        let ns = f.start.0 / 1000;
        text += &format!("{} {} 3 100 {} 2.{ns:09}\n", f.src, f.dst, f.size);
    }
    let file = tmp.path().join("flows.txt");
    std::fs::write(&file, text).unwrap();
    let mut c = c;
    c.workload = dcsim::workload::WorkloadConfig::Hpcc {
        file,
        start_offset: dcsim::units::SimTime::from_secs_f64(2.0),
        hosts: Default::default(),
    };
    assert!(
        c.workload
            .file_streams(Path::new("."), 16, dcsim::units::BitRate::from_gbps(10))
    );
    let spill = tmp.path().join("spill");
    let (keep, _) = run(&c, "DCQCN", false, None);
    let (rel, slots) = run(&c, "DCQCN", true, Some((&spill, 101)));
    assert!(slots < 400, "{slots} slots");
    assert_eq!(keep.totals.finished, flows.len() as u64);
    assert_eq!(fct(&keep, tmp.path()), fct(&rel, tmp.path()));
    assert_eq!(
        dcsim::report::summary_csv(&[&keep]),
        dcsim::report::summary_csv(&[&rel])
    );
}
