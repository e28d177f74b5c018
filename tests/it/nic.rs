//! The host side of the NIC: per-flow round robin (`[nic] qdisc = "fq"`, the default) against
//! a FIFO host queue (`"fifo"`) with and without a per-flow limit (`[nic] tsq`).

use crate::common::{cfg, run};

/// A long TCP flow keeps host 0's NIC busy; a 30-packet flow starts behind it. Returns the
/// short flow's FCT and head-of-line time (us).
fn short_behind_long(nic: &str) -> (f64, f64) {
    let c = cfg(&format!(
        "schemes = [\"TCP\"]\n[topology]\nkind = \"leaf_spine\"\n\
        [switch]\nbuffer = {{ kind = \"static\", per_port = \"10MB\" }}\n\
        [tcp]\ninit_cwnd = 10\n[metrics]\nattribution = true\n{nic}\
        [workload]\nkind = \"flows\"\nflows = [\n\
          {{ src = 0, dst = 1, size = \"20MB\", start = \"0us\" }},\n\
          {{ src = 0, dst = 5, size = \"43800B\", start = \"2000us\" }},\n]\n"
    ));
    let r = run(&c, "TCP");
    let rec = r
        .records
        .iter()
        .find(|x| x.size_bytes == 43_800)
        .expect("short flow");
    let a = rec.attribution.expect("attribution");
    (
        rec.fct_ps.expect("finished") as f64 / 1e6,
        a.nic_hol as f64 / 1e6,
    )
}

#[test]
fn a_fifo_host_queue_puts_short_flows_behind_whole_windows() {
    let (fq_fct, fq_hol) = short_behind_long("");
    let (fifo_fct, fifo_hol) = short_behind_long("[nic]\nqdisc = \"fifo\"\n");
    let (tsq_fct, tsq_hol) = short_behind_long("[nic]\nqdisc = \"fifo\"\ntsq = \"1538B\"\n");
    eprintln!(
        "short flow FCT / NIC HOL (us): fq {fq_fct:.1} / {fq_hol:.1}, fifo {fifo_fct:.1} / \
         {fifo_hol:.1}, fifo+tsq 1 packet {tsq_fct:.1} / {tsq_hol:.1}"
    );
    // Per-flow round robin: about one long-flow packet (1.2304 us) per short-flow packet.
    assert!(
        (27.0 * 1.2304..=33.0 * 1.2304).contains(&fq_hol),
        "{fq_hol}"
    );
    // FIFO: the short flow queues behind everything the long flow's window has put in the
    // host queue.
    assert!(fifo_hol > 5.0 * fq_hol && fifo_fct > 2.0 * fq_fct);
    // With one packet per flow in the queue, FIFO is round robin again.
    assert!(
        (tsq_hol - fq_hol).abs() < 3.0 * 1.2304,
        "{tsq_hol} vs {fq_hol}"
    );
}
