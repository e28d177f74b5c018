//! Metrics: per-flow records, the ideal FCT, percentiles and per-run summaries.
//!
//! **FCT** is sender-side: from the flow's start time to the arrival at the sender of the ACK
//! that covers its last byte (for UDP, which has no ACKs: to the arrival of its last byte).
//! The receiver-side completion time (last byte received in order) is recorded too.
//!
//! **Ideal FCT** (one formula, used for every flow): the completion time of the same message
//! on an idle network with an unlimited window: its packets (`⌈size/mss⌉` of them, all
//! `mss + header` bytes on the wire except the last) cross the hops of a shortest path
//! store-and-forward, back to back; the last packet leaves hop `i` at
//! `L_i = max(L_{i−1} + d_{i−1}, D_i) + s_last/r_i`, where `D_i = Σ_{k≤i} s/r_k + Σ_{k<i} d_k +
//! max_{k≤i} (⌈(n−1)/w_k⌉ − 1)·s/r_k` is when the previous (full) packet leaves hop `i`, with
//! `w_k` the number of parallel equal links the flow's packets may take at hop `k` (1 for a
//! single-path load balancer, where the term is `(n−2)·max s/r_k`; the equal-cost next hops for
//! per-packet load balancers and multipath transports, so that the ideal is a lower bound for
//! every load balancer); then the final ACK (`header` bytes) returns over the reverse path,
//! `Σ (header/r_k + d_k)`. Serialization times are exact integer picoseconds per packet. UDP
//! flows have no ACK term.
//!
//! **Slowdown** = FCT / ideal FCT (≥ 1 up to rounding on an idle path).
//!
//! **Group slowdown** (the contention-aware normalised FCT of PDTCP spec §6): FCT divided by
//! the ideal FCT of all the bytes of the flow's group (a partition-aggregate query's responses)
//! sent as one message over the flow's path, i.e. `RTT_base + Σ bytes / C` in the same exact
//! form; for a flow alone in its group (or in none) it equals the slowdown.
//!
//! **Deadline met**: the last byte was received in order no later than start + deadline
//! (receiver side, PDTCP spec §6); an unfinished flow has missed its deadline.
//!
//! **Percentiles** are nearest-rank: the p-th percentile of n sorted values is the value at
//! rank `⌈p·n⌉`.

use crate::units::{BitRate, SimTime};
use serde::Serialize;

/// One hop: link rate and propagation delay.
pub type Hop = (BitRate, SimTime);

/// Ideal FCT of a `size`-byte message as documented in the module header.
pub fn ideal_fct(
    size: u64,
    mss: u32,
    header: u32,
    fwd: &[Hop],
    rev: &[Hop],
    ack: Option<u32>,
) -> SimTime {
    ideal_fct_with(size, mss, header, fwd, &[], rev, ack, false)
}

/// [`ideal_fct`] for a flow whose packets may take `widths[k]` parallel equal links at hop
/// `k` (missing entries: 1): the full packets cross hop `k` in at least `⌈(n−1)/w_k⌉` rounds,
/// so the last full packet leaves it no earlier than `⌈(n−1)/w_k⌉ − 1` serializations after
/// the first. With every width 1 this is the single-path formula.
///
/// With `ns_floor` (`[quirks] ns_floor`) serialization times are floored to whole nanoseconds,
/// so the ideal follows the links' timing.
#[allow(clippy::too_many_arguments)]
pub fn ideal_fct_with(
    size: u64,
    mss: u32,
    header: u32,
    fwd: &[Hop],
    widths: &[u32],
    rev: &[Hop],
    ack: Option<u32>,
    ns_floor: bool,
) -> SimTime {
    assert!(size > 0 && !fwd.is_empty());
    let mss = mss as u64;
    let n = size.div_ceil(mss);
    let s_full = mss + header as u64;
    let s_last = size - (n - 1) * mss + header as u64;
    // Departure of the (n-1)th packet (the last full one) from each hop, and of the last.
    let mut last_dep = SimTime::ZERO;
    let mut first_dep = SimTime::ZERO; // departure of packet 1 from hop i
    let mut max_pipe = SimTime::ZERO;
    // Once packets may take parallel links they may arrive out of order: the last packet no
    // longer necessarily waits behind the full ones, and a single link's bound is that it
    // must carry all of them after the earliest could start.
    let mut reordered = false;
    let mut all_dep = SimTime::ZERO;
    let mut prev_delay = SimTime::ZERO;
    for (i, &(r, d)) in fwd.iter().enumerate() {
        let w = widths.get(i).copied().unwrap_or(1).max(1) as u64;
        let sf = ser(r, s_full, ns_floor);
        let sl = ser(r, s_last, ns_floor);
        if n == 1 {
            last_dep = if i == 0 {
                sl
            } else {
                last_dep + prev_delay + sl
            };
            all_dep = last_dep;
        } else {
            first_dep = if i == 0 {
                sf
            } else {
                first_dep + prev_delay + sf
            };
            max_pipe = max_pipe.max(SimTime(sf.0 * ((n - 1).div_ceil(w) - 1)));
            let d_prev = first_dep + max_pipe; // departure of the last full packet
            let arrive_last = if i == 0 {
                SimTime::ZERO
            } else {
                last_dep + prev_delay
            };
            last_dep = if w == 1 && !reordered {
                // In order on one link: the last packet leaves after the full one before it.
                arrive_last.max(d_prev) + sl
            } else {
                arrive_last + sl
            };
            all_dep = d_prev.max(last_dep);
            if w == 1 && reordered {
                // One link carries every packet, from the earliest possible start.
                let start = (first_dep - sf).min(last_dep - sl);
                all_dep = all_dep.max(start + SimTime(sf.0 * (n - 1)) + sl);
            }
            reordered |= w > 1;
        }
        prev_delay = d;
    }
    // The flow is complete when its last packet to arrive has arrived.
    let mut t = all_dep + prev_delay;
    if let Some(a) = ack {
        for &(r, d) in rev {
            t += ser(r, a as u64, ns_floor) + d;
        }
    }
    t
}

fn ser(r: crate::units::BitRate, bytes: u64, ns_floor: bool) -> SimTime {
    let t = r.ser_time(bytes);
    if ns_floor { t.floor_ns() } else { t }
}

/// Nearest-rank percentile of sorted values (`p` in [0, 1]).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// Size classes: boundaries in bytes, classes `[0,b0), [b0,b1), …, [b_last, ∞)`; plus
/// cumulative classes `[0, b)` for each `below` bound (they overlap the partition).
#[derive(Clone, Debug)]
pub struct SizeClasses {
    pub bounds: Vec<u64>,
    pub below: Vec<u64>,
}

fn short(b: u64) -> String {
    crate::units::Bytes(b).to_string()
}

impl SizeClasses {
    pub fn class_of(&self, size: u64) -> usize {
        self.bounds.partition_point(|&b| b <= size)
    }
    pub fn name(&self, i: usize) -> String {
        match i {
            0 if self.bounds.is_empty() => "all".into(),
            0 => format!("<{}", short(self.bounds[0])),
            i if i == self.bounds.len() => format!(">={}", short(self.bounds[i - 1])),
            i => format!("{}-{}", short(self.bounds[i - 1]), short(self.bounds[i])),
        }
    }
    pub fn count(&self) -> usize {
        self.bounds.len() + 1
    }
    /// The cumulative classes `<b` as (name, bound), leaving out any whose name the partition
    /// already has (the same set of flows).
    pub fn cumulative(&self) -> Vec<(String, u64)> {
        let part: Vec<String> = (0..self.count()).map(|c| self.name(c)).collect();
        let mut v: Vec<(String, u64)> = Vec::new();
        for &b in &self.below {
            let name = format!("<{}", short(b));
            if !part.contains(&name) && v.iter().all(|(n, _)| *n != name) {
                v.push((name, b));
            }
        }
        v
    }
    /// Every class name: the partition's, then the cumulative ones.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = (0..self.count()).map(|c| self.name(c)).collect();
        v.extend(self.cumulative().into_iter().map(|(n, _)| n));
        v
    }
}

/// Everything recorded about one flow.
#[derive(Clone, Debug, Serialize)]
pub struct FlowRecord {
    pub flow_id: u32,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub start_ps: u64,
    /// Sender completion; None if unfinished.
    pub finish_ps: Option<u64>,
    pub rcv_finish_ps: Option<u64>,
    pub fct_ps: Option<u64>,
    pub ideal_fct_ps: u64,
    pub slowdown: Option<f64>,
    pub size_class: String,
    pub retransmits: u64,
    pub timeouts: u64,
    pub ecn_marks: u64,
    pub drops: u64,
    pub deadline_ps: Option<u64>,
    /// Whether the deadline was met (None without a deadline).
    pub deadline_met: Option<bool>,
    pub tag: &'static str,
    /// Deadline class (e.g. "20ms"), if any.
    pub deadline_class: Option<String>,
    /// Ideal FCT of the flow's whole group, and FCT over it.
    pub ideal_group_fct_ps: u64,
    pub slowdown_group: Option<f64>,
    /// Where the FCT went (`[metrics] attribution`; finished flows only).
    pub attribution: Option<crate::sim::attrib::Attribution>,
}

/// Summary statistics of FCT and slowdown over one set of flows.
#[derive(Clone, Debug, Serialize, Default)]
pub struct ClassSummary {
    pub class: String,
    pub flows: u64,
    pub finished: u64,
    pub avg_fct_us: f64,
    pub p50_fct_us: f64,
    pub p99_fct_us: f64,
    pub p999_fct_us: f64,
    pub avg_slowdown: f64,
    pub p50_slowdown: f64,
    pub p99_slowdown: f64,
    pub p999_slowdown: f64,
    /// Packets of these flows dropped in the network.
    pub drops: u64,
    /// Flows with a deadline, and the fraction of them that met it (unfinished = missed).
    pub deadline_flows: u64,
    pub deadline_met: f64,
    /// Group slowdown (contention-aware normalised FCT) statistics.
    pub avg_slowdown_group: f64,
    pub p50_slowdown_group: f64,
    pub p99_slowdown_group: f64,
    pub p999_slowdown_group: f64,
    /// Mean of each delay-attribution component over the finished flows (us), in
    /// [`Attribution::NAMES`](crate::sim::attrib::Attribution::NAMES) order; empty without
    /// attribution.
    pub attribution_us: Vec<f64>,
}

impl ClassSummary {
    pub fn of<'a>(class: String, recs: impl Iterator<Item = &'a FlowRecord>) -> ClassSummary {
        let mut sums = ClassSums::default();
        let mut fct = Vec::new();
        let mut sd = Vec::new();
        let mut sdg = Vec::new();
        for r in recs {
            sums.add(r);
            if let (Some(f), Some(s)) = (r.fct_ps, r.slowdown) {
                fct.push(f as f64 / 1e6);
                sd.push(s);
                sdg.push(r.slowdown_group.unwrap_or(s));
            }
        }
        ClassSummary::from_parts(class, &sums, fct, sd, sdg)
    }

    /// The summary of a set of flows from its sums and its finished flows' FCTs (us),
    /// slowdowns and group slowdowns, in any order.
    pub fn from_parts(
        class: String,
        sums: &ClassSums,
        mut fct: Vec<f64>,
        mut sd: Vec<f64>,
        mut sdg: Vec<f64>,
    ) -> ClassSummary {
        fct.sort_by(f64::total_cmp);
        sd.sort_by(f64::total_cmp);
        sdg.sort_by(f64::total_cmp);
        // Means are summed in sorted order (what a reader re-deriving them from fct.csv
        // would get by sorting first).
        let avg = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let (dl_n, dl_met) = (sums.deadline_flows, sums.deadline_met);
        ClassSummary {
            class,
            flows: sums.flows,
            finished: fct.len() as u64,
            avg_fct_us: avg(&fct),
            p50_fct_us: percentile(&fct, 0.5),
            p99_fct_us: percentile(&fct, 0.99),
            p999_fct_us: percentile(&fct, 0.999),
            avg_slowdown: avg(&sd),
            p50_slowdown: percentile(&sd, 0.5),
            p99_slowdown: percentile(&sd, 0.99),
            p999_slowdown: percentile(&sd, 0.999),
            drops: sums.drops,
            deadline_flows: dl_n,
            deadline_met: if dl_n > 0 {
                dl_met as f64 / dl_n as f64
            } else {
                f64::NAN
            },
            avg_slowdown_group: avg(&sdg),
            p50_slowdown_group: percentile(&sdg, 0.5),
            p99_slowdown_group: percentile(&sdg, 0.99),
            p999_slowdown_group: percentile(&sdg, 0.999),
            attribution_us: if sums.attr_n > 0 {
                sums.attr_sum
                    .iter()
                    .map(|s| *s as f64 / sums.attr_n as f64 / 1e6)
                    .collect()
            } else {
                Vec::new()
            },
        }
    }
}

/// What a summary adds up over its flows, one flow at a time (everything but the sorted
/// FCTs and slowdowns).
#[derive(Clone, Debug, Default)]
pub struct ClassSums {
    pub flows: u64,
    pub drops: u64,
    pub deadline_flows: u64,
    pub deadline_met: u64,
    attr_sum: [u128; crate::sim::attrib::Attribution::NAMES.len()],
    attr_n: u64,
}

impl ClassSums {
    pub fn add(&mut self, r: &FlowRecord) {
        self.flows += 1;
        if let Some(a) = &r.attribution {
            self.attr_n += 1;
            for (s, v) in self.attr_sum.iter_mut().zip(a.values()) {
                *s += v as u128;
            }
        }
        self.drops += r.drops;
        if let Some(m) = r.deadline_met {
            self.deadline_flows += 1;
            self.deadline_met += m as u64;
        }
    }
}

/// A finished flow as the summaries need it once its record is gone: 40 bytes.
#[derive(Clone, Copy, Debug)]
struct Finished {
    fct_ps: u64,
    slowdown: f64,
    slowdown_group: f64,
    size: u64,
    /// Its deadline class in ps (u64::MAX: none); its traffic kind (index in [`TAGS`]).
    deadline_class: u64,
    tag: u8,
}

/// The traffic kinds that get their own summary row when the workload has them.
const TAGS: [crate::workload::FlowTag; 4] = [
    crate::workload::FlowTag::Query,
    crate::workload::FlowTag::Workflow,
    crate::workload::FlowTag::Request,
    crate::workload::FlowTag::Background,
];

/// A run's summary rows, built one flow record at a time: `all`, each size class, each
/// cumulative class, each traffic kind present, each deadline class (increasing). It keeps
/// the sums of each row and 40 bytes per finished flow (exact percentiles and sorted-order
/// means need every value), not the records.
#[derive(Clone, Debug)]
pub struct SummaryBuilder {
    classes: SizeClasses,
    cumulative: Vec<(String, u64)>,
    all: ClassSums,
    by_class: Vec<ClassSums>,
    below: Vec<ClassSums>,
    tags: [ClassSums; TAGS.len()],
    deadline: std::collections::BTreeMap<crate::units::SimTime, ClassSums>,
    finished: Vec<Finished>,
}

impl SummaryBuilder {
    pub fn new(classes: SizeClasses) -> SummaryBuilder {
        let cumulative = classes.cumulative();
        SummaryBuilder {
            by_class: vec![ClassSums::default(); classes.count()],
            below: vec![ClassSums::default(); cumulative.len()],
            cumulative,
            classes,
            all: ClassSums::default(),
            tags: Default::default(),
            deadline: Default::default(),
            finished: Vec::new(),
        }
    }

    /// Adds flow record `r`, of deadline class `dl` (the record's `deadline_class`).
    pub fn add(&mut self, r: &FlowRecord, dl: Option<crate::units::SimTime>) {
        self.all.add(r);
        self.by_class[self.classes.class_of(r.size_bytes)].add(r);
        for (i, (_, b)) in self.cumulative.iter().enumerate() {
            if r.size_bytes < *b {
                self.below[i].add(r);
            }
        }
        let tag = TAGS.iter().position(|t| t.name() == r.tag);
        if let Some(t) = tag {
            self.tags[t].add(r);
        }
        if let Some(d) = dl {
            self.deadline.entry(d).or_default().add(r);
        }
        if let (Some(f), Some(s)) = (r.fct_ps, r.slowdown) {
            self.finished.push(Finished {
                fct_ps: f,
                slowdown: s,
                slowdown_group: r.slowdown_group.unwrap_or(s),
                size: r.size_bytes,
                deadline_class: dl.map_or(u64::MAX, |d| d.0),
                tag: tag.map_or(u8::MAX, |t| t as u8),
            });
        }
    }

    /// A deadline class with a row even if none of its flows is counted.
    pub fn deadline_class(&mut self, d: crate::units::SimTime) {
        self.deadline.entry(d).or_default();
    }

    /// The rows, in order.
    pub fn finish(self) -> Vec<ClassSummary> {
        let fin = &self.finished;
        let row = |name: String, sums: &ClassSums, keep: &dyn Fn(&Finished) -> bool| {
            let (mut fct, mut sd, mut sdg) = (Vec::new(), Vec::new(), Vec::new());
            for f in fin.iter().filter(|f| keep(f)) {
                fct.push(f.fct_ps as f64 / 1e6);
                sd.push(f.slowdown);
                sdg.push(f.slowdown_group);
            }
            ClassSummary::from_parts(name, sums, fct, sd, sdg)
        };
        let classes = &self.classes;
        let mut v = vec![row("all".into(), &self.all, &|_| true)];
        for (c, sums) in self.by_class.iter().enumerate() {
            v.push(row(classes.name(c), sums, &|f| {
                classes.class_of(f.size) == c
            }));
        }
        for ((name, b), sums) in self.cumulative.iter().zip(&self.below) {
            v.push(row(name.clone(), sums, &|f| f.size < *b));
        }
        for (t, sums) in self.tags.iter().enumerate() {
            if sums.flows > 0 {
                let name = format!("tag:{}", TAGS[t].name());
                v.push(row(name, sums, &|f| f.tag as usize == t));
            }
        }
        for (d, sums) in &self.deadline {
            let name = format!("deadline:{d}");
            v.push(row(name, sums, &|f| f.deadline_class == d.0));
        }
        v
    }
}

/// Per-port counters for `ports.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct PortRecord {
    pub port: u32,
    pub node: String,
    pub peer: String,
    /// Node numbers (hosts first, then switches), as `[pcap]` and `[timeseries]` take them.
    pub node_id: u32,
    pub peer_id: u32,
    pub rate_bps: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// tx_bytes·8 / (rate · duration of the run).
    pub utilization: f64,
    pub drops: u64,
    pub ecn_marks: u64,
    pub pfc_pauses_rx: u64,
    pub paused_ps: u64,
    pub max_queue_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hops(n: usize, gbps: u64, us: u64) -> Vec<Hop> {
        vec![(BitRate::from_gbps(gbps), SimTime::from_us(us)); n]
    }

    #[test]
    fn ideal_single_packet() {
        // 1000 B payload + 40 B header at 10 Gbps = 832 ns per hop, 1 us per link, 2 hops;
        // ACK 40 B = 32 ns per hop.
        let f = hops(2, 10, 1);
        let t = ideal_fct(1000, 1000, 40, &f, &f, Some(40));
        assert_eq!(t, SimTime::from_ns(2 * 832 + 2_000 + 2 * 32 + 2_000));
    }

    #[test]
    fn ideal_uniform_pipeline() {
        // n equal packets over h equal hops: (n + h - 1) s + h d.
        let f = hops(3, 10, 1);
        let t = ideal_fct(5000, 1000, 0, &f, &f, None);
        assert_eq!(t, SimTime::from_ns((5 + 2) * 800 + 3_000));
        // A short last packet.
        let t = ideal_fct(4500, 1000, 0, &f, &f, None);
        assert_eq!(t, SimTime::from_ns(800 + 800 + 800 + 3 * 800 + 400 + 3_000));
    }

    #[test]
    fn ideal_bottleneck_in_the_middle() {
        // 10G, 1G, 10G: packets leave the 1G hop every 8 us and cross the last hop unqueued.
        let f = vec![
            (BitRate::from_gbps(10), SimTime::ZERO),
            (BitRate::from_gbps(1), SimTime::ZERO),
            (BitRate::from_gbps(10), SimTime::ZERO),
        ];
        let t = ideal_fct(3000, 1000, 0, &f, &f, None);
        assert_eq!(t, SimTime::from_ns(800 + 3 * 8_000 + 800));
    }

    #[test]
    fn percentiles_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&v, 0.999), 100.0);
        assert_eq!(percentile(&[3.0], 0.99), 3.0);
    }

    #[test]
    fn size_classes() {
        let c = SizeClasses {
            bounds: vec![100_000, 1_000_000],
            below: vec![30_000, 100_000, 30_000, 2_000_000],
        };
        assert_eq!(c.class_of(99_999), 0);
        assert_eq!(c.class_of(100_000), 1);
        assert_eq!(c.class_of(5_000_000), 2);
        assert_eq!(c.name(0), "<100KB");
        assert_eq!(c.name(1), "100KB-1MB");
        assert_eq!(c.name(2), ">=1MB");
        // Cumulative classes: "<100KB" is already the first class, duplicates collapse.
        assert_eq!(
            c.cumulative(),
            vec![
                ("<30KB".to_string(), 30_000),
                ("<2MB".to_string(), 2_000_000)
            ]
        );
        assert_eq!(
            c.names(),
            ["<100KB", "100KB-1MB", ">=1MB", "<30KB", "<2MB"].map(String::from)
        );
    }
}
