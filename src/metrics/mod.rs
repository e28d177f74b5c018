//! Metrics: per-flow records, the ideal FCT, percentiles and per-run summaries.
//!
//! **FCT** is sender-side: from the flow's start time to the arrival at the sender of the ACK
//! that covers its last byte (for UDP, which has no ACKs: to the arrival of its last byte).
//! The receiver-side completion time (last byte received in order) is recorded too.
//!
//! **Ideal FCT** (one formula, used for every flow): the completion time of the same message
//! on an idle network with an unlimited window: its packets (`⌈size/mss⌉` of them, all
//! `mss + header` bytes on the wire except the last) cross the hops of a path
//! store-and-forward, back to back; the last packet leaves hop `i` at
//! `L_i = max(L_{i−1} + d_{i−1}, D_i) + s_last/r_i`, where `D_i = Σ_{k≤i} s/r_k + Σ_{k<i} d_k +
//! max_{k≤i} pipe_k` is when the previous (full) packet leaves hop `i`; `pipe_k` is how long
//! after the first full packet the last full one can leave stage `k` at the earliest:
//! `(n−2)·s/r_k` on a single link, and over parallel links the least time in which they carry
//! the `n − 1` full packets together, less one serialization on the fastest
//! ([`ideal_fct_spread`]; `(⌈(n−1)/w⌉ − 1)·s/r` over `w` equal links); then the final ACK
//! (`header` bytes) returns, `Σ (header/r_k + d_k)`. Serialization times are exact integer
//! picoseconds per packet. UDP flows have no ACK term. Which paths and which state of the
//! network a flow is judged on (the fastest shortest path, or every link of each stage for a
//! flow whose packets may spread, in the network of its lifetime) is `net::paths`' part.
//!
//! **Slowdown** = FCT / ideal FCT (≥ 1 up to rounding on an idle path).
//!
//! **Group slowdown** (the contention-aware normalised FCT of PDTCP reconstruction §6): FCT divided by
//! the ideal FCT of all the bytes of the flow's group (a partition-aggregate query's responses)
//! sent as one message over the flow's path, i.e. `RTT_base + Σ bytes / C` in the same exact
//! form; for a flow alone in its group (or in none) it equals the slowdown.
//!
//! **Deadline met**: the last byte was received in order no later than start + deadline
//! (receiver side, PDTCP reconstruction §6); an unfinished flow has missed its deadline.
//!
//! **Percentiles** are nearest-rank: the p-th percentile of n sorted values is the value at
//! rank `⌈p·n⌉`.

use crate::units::SimTime;
use serde::Serialize;

pub use crate::net::paths::Hop;

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
    let p = Packets::of(size, mss, header);
    let stages = fwd.iter().enumerate().map(|(i, &(r, d))| {
        let w = widths.get(i).copied().unwrap_or(1).max(1) as u64;
        let sf = ser(r, p.s_full, ns_floor);
        StageTimes {
            sf,
            sl: ser(r, p.s_last, ns_floor),
            d,
            w,
            pipe: SimTime(sf.0 * (p.n.saturating_sub(1).div_ceil(w).saturating_sub(1))),
        }
    });
    pipeline(p.n, stages) + ack_time(rev, ack, ns_floor)
}

/// The forward part of the ideal FCT (no ACK) of a `size`-byte message whose packets may take
/// any of the links of each stage (`stages[k]`: the links some shortest path takes at hop
/// `k`, which may differ in rate and delay). A lower bound for every way of spreading the
/// packets over those links: the first packet crosses each stage on its fastest link with its
/// shortest delay, and the full packets cross stage `k` no faster than the least time `T` in
/// which the stage's links together serialize them (`Σ_j ⌊T / s_j⌋ ≥ n − 1`, `s_j` a full
/// packet's serialization on link `j`). With equal links this is [`ideal_fct_with`]'s width
/// bound exactly, and with one link per stage the single-path formula.
pub fn ideal_fct_spread(
    size: u64,
    mss: u32,
    header: u32,
    stages: &[Vec<Hop>],
    ns_floor: bool,
) -> SimTime {
    assert!(size > 0 && !stages.is_empty() && stages.iter().all(|s| !s.is_empty()));
    let p = Packets::of(size, mss, header);
    let times = stages.iter().map(|links| {
        let fulls: Vec<SimTime> = links
            .iter()
            .map(|&(r, _)| ser(r, p.s_full, ns_floor))
            .collect();
        let sf = *fulls.iter().min().expect("a link");
        let sl = links
            .iter()
            .map(|&(r, _)| ser(r, p.s_last, ns_floor))
            .min()
            .expect("a link");
        let d = links.iter().map(|&(_, d)| d).min().expect("a link");
        let pipe = match p.n {
            1 => SimTime::ZERO,
            n => makespan(n - 1, &fulls) - sf,
        };
        StageTimes {
            sf,
            sl,
            d,
            w: links.len() as u64,
            pipe,
        }
    });
    pipeline(p.n, times)
}

/// The time the final ACK (`ack` bytes) takes back over `rev` (zero without an ACK).
pub fn ack_time(rev: &[Hop], ack: Option<u32>, ns_floor: bool) -> SimTime {
    let Some(a) = ack else {
        return SimTime::ZERO;
    };
    rev.iter().fold(SimTime::ZERO, |t, &(r, d)| {
        t + ser(r, a as u64, ns_floor) + d
    })
}

/// The least time in which links that serialize one packet in `times[j]` each carry `m`
/// packets together: the least `T` with `Σ_j ⌊T / times[j]⌋ ≥ m` (some `k · times[j]`).
fn makespan(m: u64, times: &[SimTime]) -> SimTime {
    let fastest = *times.iter().min().expect("a link");
    if times.iter().all(|&t| t == fastest) {
        return SimTime(m.div_ceil(times.len() as u64) * fastest.0);
    }
    let carried = |t: u64| -> u64 {
        times
            .iter()
            .map(|x| t / x.0.max(1))
            .fold(0u64, u64::saturating_add)
    };
    // The fastest link alone takes m·fastest; the answer is at most that.
    let (mut lo, mut hi) = (0u64, m.saturating_mul(fastest.0.max(1)));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if carried(mid) >= m {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    SimTime(lo)
}

/// A message as packets: `n` of them, full ones of `s_full` wire bytes, the last `s_last`.
struct Packets {
    n: u64,
    s_full: u64,
    s_last: u64,
}

impl Packets {
    fn of(size: u64, mss: u32, header: u32) -> Packets {
        let mss = mss as u64;
        let n = size.div_ceil(mss);
        Packets {
            n,
            s_full: mss + header as u64,
            s_last: size - (n - 1) * mss + header as u64,
        }
    }
}

/// One stage of the pipeline: serialization of a full and of the last packet (on the
/// stage's fastest link), its propagation delay, its number of links, and how long after the
/// first full packet the last full one can leave it at the earliest.
struct StageTimes {
    sf: SimTime,
    sl: SimTime,
    d: SimTime,
    w: u64,
    pipe: SimTime,
}

/// When the last of `n` packets has arrived, over `stages` (see the module header).
fn pipeline(n: u64, stages: impl Iterator<Item = StageTimes>) -> SimTime {
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
    for (i, st) in stages.enumerate() {
        let StageTimes { sf, sl, d, w, pipe } = st;
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
            max_pipe = max_pipe.max(pipe);
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
    all_dep + prev_delay
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
        let n = fct.len();
        ClassSummary::from_stats(
            class,
            sums,
            n,
            [
                stats(fct.into_iter(), n),
                stats(sd.into_iter(), n),
                stats(sdg.into_iter(), n),
            ],
        )
    }

    /// The summary of a set of flows from its sums and the [`stats`] of its `finished` flows'
    /// FCTs (us), slowdowns and group slowdowns.
    fn from_stats(
        class: String,
        sums: &ClassSums,
        finished: usize,
        [fct, sd, sdg]: [[f64; 4]; 3],
    ) -> ClassSummary {
        let (dl_n, dl_met) = (sums.deadline_flows, sums.deadline_met);
        ClassSummary {
            class,
            flows: sums.flows,
            finished: finished as u64,
            avg_fct_us: fct[0],
            p50_fct_us: fct[1],
            p99_fct_us: fct[2],
            p999_fct_us: fct[3],
            avg_slowdown: sd[0],
            p50_slowdown: sd[1],
            p99_slowdown: sd[2],
            p999_slowdown: sd[3],
            drops: sums.drops,
            deadline_flows: dl_n,
            deadline_met: if dl_n > 0 {
                dl_met as f64 / dl_n as f64
            } else {
                f64::NAN
            },
            avg_slowdown_group: sdg[0],
            p50_slowdown_group: sdg[1],
            p99_slowdown_group: sdg[2],
            p999_slowdown_group: sdg[3],
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

/// Mean, median, 99th and 99.9th percentile (nearest rank, as [`percentile`]) of `n` values
/// given in increasing order; NaN when there are none. The mean is summed in that order (what
/// a reader re-deriving it from `fct.csv` gets by sorting first), so values held in memory or
/// merged from sorted runs on disk give the same bits.
fn stats(sorted: impl Iterator<Item = f64>, n: usize) -> [f64; 4] {
    if n == 0 {
        return [f64::NAN; 4];
    }
    let rank = |p: f64| ((p * n as f64).ceil().max(1.0) as usize).min(n) - 1;
    let ranks = [rank(0.5), rank(0.99), rank(0.999)];
    let mut at = [f64::NAN; 3];
    let sum: f64 = sorted
        .enumerate()
        .map(|(i, v)| {
            for (a, &r) in at.iter_mut().zip(&ranks) {
                if i == r {
                    *a = v;
                }
            }
            v
        })
        .sum();
    [sum / n as f64, at[0], at[1], at[2]]
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

/// A summary row: which flows it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    All,
    Class(usize),
    Below(usize),
    Tag(usize),
    Deadline(u64),
}

impl Group {
    /// Its name in spill files.
    fn file(self) -> String {
        match self {
            Group::All => "all".into(),
            Group::Class(c) => format!("c{c}"),
            Group::Below(i) => format!("b{i}"),
            Group::Tag(t) => format!("t{t}"),
            Group::Deadline(d) => format!("d{d}"),
        }
    }
}

/// Sorted runs of a summary's values on disk (runs with many flows): per chunk of finished
/// flows, per summary row and value (FCT, slowdown, group slowdown), the chunk's values sorted,
/// as little-endian f64; merged in order when the rows are made. The directory is removed
/// when dropped.
#[derive(Debug)]
struct ValueSpill {
    /// Where the directory goes, named after the run, until it is made.
    parent: std::path::PathBuf,
    run: String,
    dir: Option<std::path::PathBuf>,
    rows: usize,
    chunks: usize,
    /// Run files per (row, value).
    runs: std::collections::BTreeMap<(Group, u8), Vec<std::path::PathBuf>>,
}

impl Drop for ValueSpill {
    fn drop(&mut self) {
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Values merged in increasing order from sorted runs of little-endian f64.
struct Merge {
    readers: Vec<std::io::BufReader<std::fs::File>>,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(Total, usize)>>,
    error: Option<std::io::Error>,
}

/// An f64 ordered by `total_cmp` (the order `sort_by(f64::total_cmp)` gives).
#[derive(Clone, Copy, Debug)]
struct Total(f64);

impl PartialEq for Total {
    fn eq(&self, o: &Self) -> bool {
        self.0.total_cmp(&o.0).is_eq()
    }
}
impl Eq for Total {}
impl PartialOrd for Total {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Total {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

impl Merge {
    fn new(files: &[std::path::PathBuf]) -> std::io::Result<Merge> {
        let mut m = Merge {
            readers: Vec::with_capacity(files.len()),
            heap: std::collections::BinaryHeap::new(),
            error: None,
        };
        for (i, f) in files.iter().enumerate() {
            let mut r = std::io::BufReader::new(std::fs::File::open(f)?);
            if let Some(v) = read_f64(&mut r)? {
                m.heap.push(std::cmp::Reverse((Total(v), i)));
            }
            m.readers.push(r);
        }
        Ok(m)
    }
}

fn read_f64(r: &mut impl std::io::Read) -> std::io::Result<Option<f64>> {
    let mut b = [0u8; 8];
    match r.read_exact(&mut b) {
        Ok(()) => Ok(Some(f64::from_le_bytes(b))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

impl Iterator for Merge {
    type Item = f64;
    fn next(&mut self) -> Option<f64> {
        let std::cmp::Reverse((Total(v), i)) = self.heap.pop()?;
        match read_f64(&mut self.readers[i]) {
            Ok(Some(w)) => self.heap.push(std::cmp::Reverse((Total(w), i))),
            Ok(None) => {}
            Err(e) => {
                self.error = Some(e);
                self.heap.clear();
            }
        }
        Some(v)
    }
}

/// A run's summary rows, built one flow record at a time: `all`, each size class, each
/// cumulative class, each traffic kind present, each deadline class (increasing). It keeps
/// the sums of each row and 40 bytes per finished flow (exact percentiles and sorted-order
/// means need every value), not the records; with [`SummaryBuilder::spill_to`], only a chunk
/// of them: the rest are sorted runs on disk, merged when the rows are made.
#[derive(Debug)]
pub struct SummaryBuilder {
    classes: SizeClasses,
    cumulative: Vec<(String, u64)>,
    all: ClassSums,
    by_class: Vec<ClassSums>,
    below: Vec<ClassSums>,
    tags: [ClassSums; TAGS.len()],
    deadline: std::collections::BTreeMap<crate::units::SimTime, ClassSums>,
    finished: Vec<Finished>,
    spill: Option<ValueSpill>,
    /// The first error writing the spill (reported by [`SummaryBuilder::finish`]).
    error: Option<String>,
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
            spill: None,
            error: None,
        }
    }

    /// Writes the finished flows' values out in sorted runs of `rows` flows, in a hidden
    /// directory under `parent` named after run `run` (made when the first run is written).
    pub fn spill_to(&mut self, parent: std::path::PathBuf, run: &str, rows: usize) {
        self.spill = Some(ValueSpill {
            parent,
            run: run.to_string(),
            dir: None,
            rows: rows.max(1),
            chunks: 0,
            runs: Default::default(),
        });
    }

    /// The rows, in order (deadline classes known so far).
    fn groups(&self) -> Vec<Group> {
        let mut v = vec![Group::All];
        v.extend((0..self.by_class.len()).map(Group::Class));
        v.extend((0..self.below.len()).map(Group::Below));
        v.extend((0..TAGS.len()).map(Group::Tag));
        v.extend(self.deadline.keys().map(|d| Group::Deadline(d.0)));
        v
    }

    /// Whether row `g` covers finished flow `f`.
    fn covers(&self, g: Group, f: &Finished) -> bool {
        match g {
            Group::All => true,
            Group::Class(c) => self.classes.class_of(f.size) == c,
            Group::Below(i) => f.size < self.cumulative[i].1,
            Group::Tag(t) => f.tag as usize == t,
            Group::Deadline(d) => f.deadline_class == d,
        }
    }

    /// Row `g`'s values (FCT in us, slowdown, group slowdown) among `fin`.
    fn values(&self, g: Group, fin: &[Finished]) -> [Vec<f64>; 3] {
        let (mut fct, mut sd, mut sdg) = (Vec::new(), Vec::new(), Vec::new());
        for f in fin.iter().filter(|f| self.covers(g, f)) {
            fct.push(f.fct_ps as f64 / 1e6);
            sd.push(f.slowdown);
            sdg.push(f.slowdown_group);
        }
        [fct, sd, sdg]
    }

    /// Writes the held finished flows out as one chunk of sorted runs.
    fn spill_chunk(&mut self) {
        let fin = std::mem::take(&mut self.finished);
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.write_chunk(&fin) {
            self.error = Some(format!("writing summary values: {e}"));
        }
    }

    fn write_chunk(&mut self, fin: &[Finished]) -> std::io::Result<()> {
        use std::io::Write;
        let groups = self.groups();
        let mut out: Vec<(Group, [Vec<f64>; 3])> = Vec::new();
        for g in groups {
            let v = self.values(g, fin);
            if !v[0].is_empty() {
                out.push((g, v));
            }
        }
        let sp = self.spill.as_mut().expect("spilling");
        if sp.dir.is_none() {
            std::fs::create_dir_all(&sp.parent)?;
            let d = crate::io::temp_name(&sp.parent, &format!("{}.summary-values", sp.run));
            std::fs::create_dir_all(&d)?;
            sp.dir = Some(d);
        }
        let dir = sp.dir.clone().expect("made");
        for (g, vals) in out {
            for (m, mut v) in vals.into_iter().enumerate() {
                v.sort_by(f64::total_cmp);
                let path = dir.join(format!("{}-{}-{m}.f64", sp.chunks, g.file()));
                let mut w = std::io::BufWriter::new(std::fs::File::create(&path)?);
                for x in v {
                    w.write_all(&x.to_le_bytes())?;
                }
                w.flush()?;
                sp.runs.entry((g, m as u8)).or_default().push(path);
            }
        }
        sp.chunks += 1;
        Ok(())
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
        if self
            .spill
            .as_ref()
            .is_some_and(|sp| self.finished.len() >= sp.rows)
        {
            self.spill_chunk();
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

    /// The rows, in order; an error if the spill could not be written or read.
    pub fn finish(mut self) -> Result<Vec<ClassSummary>, String> {
        if self.spill.is_some() && !self.finished.is_empty() {
            self.spill_chunk();
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let mut v = Vec::new();
        for g in self.groups() {
            let (name, sums) = match g {
                Group::All => ("all".to_string(), &self.all),
                Group::Class(c) => (self.classes.name(c), &self.by_class[c]),
                Group::Below(i) => (self.cumulative[i].0.clone(), &self.below[i]),
                Group::Tag(t) if self.tags[t].flows > 0 => {
                    (format!("tag:{}", TAGS[t].name()), &self.tags[t])
                }
                Group::Tag(_) => continue,
                Group::Deadline(d) => {
                    let d = crate::units::SimTime(d);
                    (format!("deadline:{d}"), &self.deadline[&d])
                }
            };
            let row = match &self.spill {
                None => {
                    let [fct, sd, sdg] = self.values(g, &self.finished);
                    ClassSummary::from_parts(name, sums, fct, sd, sdg)
                }
                Some(sp) => {
                    let mut st = [[f64::NAN; 4]; 3];
                    let mut n = 0;
                    for (m, s) in st.iter_mut().enumerate() {
                        let files = sp.runs.get(&(g, m as u8)).map_or(&[][..], |f| &f[..]);
                        let len = files
                            .iter()
                            .map(|f| std::fs::metadata(f).map(|m| m.len() as usize / 8))
                            .sum::<std::io::Result<usize>>()
                            .map_err(|e| format!("reading summary values: {e}"))?;
                        let mut merge = Merge::new(files)
                            .map_err(|e| format!("reading summary values: {e}"))?;
                        *s = stats(&mut merge, len);
                        if let Some(e) = merge.error {
                            return Err(format!("reading summary values: {e}"));
                        }
                        n = len;
                    }
                    ClassSummary::from_stats(name, sums, n, st)
                }
            };
            v.push(row);
        }
        Ok(v)
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
mod tests;
