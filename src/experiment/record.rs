//! Recording a run's results: per-flow records (spilled to disk in chunks for long runs),
//! their ideal FCTs and delay attribution, per-port and per-switch records, and the totals
//! and class summaries of a [`RunResult`].

use super::*;

/// The ideal's view of host pair `src` -> `dst` for flows that lived through `[a, b]`: per
/// routing epoch overlapping it, the pair's paths with every port at its best rate over that
/// time (usable if up at any moment of it), and the least time of the final ACK (`ack` bytes)
/// back; without a path in any of them, the network before any failure.
pub(in crate::experiment) fn pair_ideal(
    net: &crate::net::Network,
    src: u32,
    dst: u32,
    a: SimTime,
    b: SimTime,
    ack: Option<u32>,
    ns_floor: bool,
) -> PairIdeal {
    use crate::net::paths::NetView;
    let back_of = |v: &NetView| -> Option<SimTime> {
        match ack {
            None => Some(SimTime::ZERO),
            Some(_) => v.least(dst, src, |h| crate::metrics::ack_time(&[h], ack, ns_floor)),
        }
    };
    let state = |p: crate::ids::PortId| {
        let port = &net.ports[p.idx()];
        (port.rate, port.down)
    };
    let Some(h) = &net.history else {
        let port = |p| {
            let (r, down) = state(p);
            (!down).then_some(r)
        };
        let v = NetView {
            net,
            routes: &net.routes,
            port: &port,
        };
        let epochs = v.forward(src, dst).zip(back_of(&v)).into_iter().collect();
        return PairIdeal {
            epochs,
            mixed: false,
        };
    };
    let port = |p| h.best_rate(p, a, b, state(p));
    let epochs: Vec<_> = h
        .epochs(a, b)
        .filter_map(|routes| {
            let v = NetView {
                net,
                routes,
                port: &port,
            };
            v.forward(src, dst).zip(back_of(&v))
        })
        .collect();
    if !epochs.is_empty() {
        return PairIdeal {
            epochs,
            mixed: h.rerouted_within(a, b),
        };
    }
    let initial = |p| {
        let (r, down) = h.initial(p, state(p));
        (!down).then_some(r)
    };
    let v = NetView {
        net,
        routes: &h.routes[0].1,
        port: &initial,
    };
    PairIdeal {
        epochs: v.forward(src, dst).zip(back_of(&v)).into_iter().collect(),
        mixed: false,
    }
}

/// The delay attribution of unit `i` (flow or message), for finished ones.
pub(in crate::experiment) fn attribution_of(
    sim: &Sim,
    i: usize,
    finished: bool,
) -> Option<crate::sim::attrib::Attribution> {
    if !finished {
        return None;
    }
    sim.attrib.as_ref().and_then(|a| a.results[i])
}

/// What the ideal FCT of a host pair needs, per routing epoch the flows of a cache entry lived
/// through: the pair's paths and the least time of the final ACK back (see
/// [`crate::net::paths`]), and whether those flows span a reroute (they are then judged as
/// if their packets could spread over each epoch's stages).
#[derive(Clone, Debug)]
pub(in crate::experiment) struct PairIdeal {
    epochs: Vec<(crate::net::paths::PairPaths, SimTime)>,
    mixed: bool,
}

/// Turns a run's flows into `fct.csv` records and the totals they add up to: as they are
/// released during a retiring run (`sim::Retire`), and at its end for the flows still held.
/// A record depends only on the flow's final state and the network's routes (no run with
/// failures retires), so when it is made does not change it.
pub struct Recorder {
    classes: crate::metrics::SizeClasses,
    mss: u32,
    header: u32,
    ack: Option<u32>,
    ns_floor: bool,
    spread_lb: bool,
    rdma_host: Option<crate::config::RdmaHostKind>,
    /// Paths of the host pairs that have flows (not every pair: hosts² would not fit at scale),
    /// by pair and the span of network states their flows lived through (see
    /// [`Recorder::segments`]).
    paths: std::collections::HashMap<(u32, u32, u32, u32), PairIdeal>,
    /// Runs with failures: the times at which the network changed, in order.
    changes: Vec<SimTime>,
    /// Records with their sort key (workload id, arrival order).
    records: Vec<(u32, u32, FlowRecord)>,
    retransmits: u64,
    timeouts: u64,
    ecn_marks: u64,
    finished: u64,
    spurious_retx: u64,
    /// Per traffic kind, with the arrival order of its first flow (the order they are listed).
    reductions: Vec<(u32, ReductionStats)>,
    /// Bytes per group, for the contention-aware ideal (runs that keep every flow).
    group_bytes: Vec<u64>,
    /// The summary rows, fed one record at a time.
    summary: crate::metrics::SummaryBuilder,
    /// Records go out to `fct.csv` chunks once `spill_at` of them are held: where, and the
    /// first error (reported when the run is collected).
    spill: Option<(std::path::PathBuf, String)>,
    spilled: Option<crate::report::FctSpill>,
    spill_at: usize,
    error: Option<String>,
}

/// Records a retiring run holds before it writes them out as a sorted `fct.csv` chunk (a
/// 10 M-flow run writes 153 chunks, merged when the run is written).
pub const SPILL_ROWS: usize = 1 << 16;

/// Host pairs whose paths a recorder keeps for the ideal FCTs at most.
pub(in crate::experiment) const PATH_CACHE: usize = 1 << 16;

impl Recorder {
    pub fn new(sim: &Sim, plan: &RunPlan, cfg: &Config) -> Recorder {
        let lb = plan.scheme.lb.unwrap_or(cfg.switch.load_balancer);
        // Bytes per group, for the contention-aware ideal.
        let mut group_bytes: Vec<u64> = Vec::new();
        if sim.transport.messages().is_none() {
            for f in &sim.flows {
                if f.group != u32::MAX {
                    let g = f.group as usize;
                    if g >= group_bytes.len() {
                        group_bytes.resize(g + 1, 0);
                    }
                    group_bytes[g] += f.size;
                }
            }
        }
        Recorder {
            classes: cfg.size_classes(),
            mss: sim.spec.mss(),
            header: sim.spec.header(),
            ack: sim.spec.ack_bytes(),
            ns_floor: cfg.quirks.ns_floor,
            // A flow whose packets may take several paths (per-packet load balancers; GPMP's
            // sliced long messages; MP-RDMA) gets the multipath ideal, the lower bound for it;
            // any other flow the single-path ideal, which it attains exactly on an idle path.
            spread_lb: lb != crate::net::lb::LbKind::Ecmp,
            rdma_host: plan.scheme.rdma_host,
            paths: std::collections::HashMap::new(),
            changes: Vec::new(),
            // Every flow's record (a retiring run: a chunk's): no room left over from doubling.
            records: Vec::with_capacity(match sim.retiring() {
                true => sim.total.min(SPILL_ROWS),
                false => sim.total,
            }),
            retransmits: 0,
            timeouts: 0,
            ecn_marks: 0,
            finished: 0,
            spurious_retx: 0,
            reductions: Vec::new(),
            group_bytes,
            summary: crate::metrics::SummaryBuilder::new(cfg.size_classes()),
            spill: None,
            spilled: None,
            spill_at: usize::MAX,
            error: None,
        }
    }

    /// Writes records out in sorted chunks of `rows` to a hidden directory of `dir` (named
    /// after run `run`) instead of holding them all, for runs whose flows are released.
    pub fn spill_to(&mut self, dir: std::path::PathBuf, run: &str, rows: usize) {
        self.summary.spill_to(dir.clone(), run, rows);
        self.spill = Some((dir, run.to_string()));
        self.spill_at = rows.max(1);
    }

    /// Writes the held records out as one chunk.
    pub(in crate::experiment) fn spill_chunk(&mut self) {
        if self.error.is_some() {
            return;
        }
        if self.spilled.is_none() {
            let (dir, run) = self.spill.as_ref().expect("spilling");
            match crate::report::FctSpill::new(dir, run) {
                Ok(sp) => self.spilled = Some(sp),
                Err(e) => {
                    self.error = Some(format!("writing fct.csv rows under {}: {e}", dir.display()));
                    return;
                }
            }
        }
        let rows = std::mem::take(&mut self.records);
        if let Err(e) = self.spilled.as_mut().expect("spill").chunk(rows) {
            self.error = Some(format!("writing fct.csv rows: {e}"));
        }
    }

    /// The ideal FCT of `size` bytes from `src` to `dst` on an idle network, for a flow that
    /// lived from `a` to `b` (its finish, or `SimTime::MAX` if it did not finish): the best
    /// the network could do for it alone in the states it went through (see
    /// [`crate::net::paths`]).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::experiment) fn ideal(
        &mut self,
        net: &crate::net::Network,
        src: u32,
        dst: u32,
        size: u64,
        spread: bool,
        a: SimTime,
        b: SimTime,
    ) -> SimTime {
        let (lo, hi) = self.segments(net, a, b);
        let key = (src, dst, lo, hi);
        if self.paths.len() >= PATH_CACHE && !self.paths.contains_key(&key) {
            // Bounded: a run with millions of host pairs recomputes instead of growing.
            self.paths.clear();
        }
        let (ack, ns_floor) = (self.ack, self.ns_floor);
        let pi = self
            .paths
            .entry(key)
            .or_insert_with(|| pair_ideal(net, src, dst, a, b, ack, ns_floor));
        let mut best = SimTime::MAX;
        for (paths, back) in &pi.epochs {
            let fwd = if spread || pi.mixed {
                crate::metrics::ideal_fct_spread(
                    size,
                    self.mss,
                    self.header,
                    &paths.stages,
                    ns_floor,
                )
            } else {
                paths
                    .seqs
                    .iter()
                    .map(|seq| {
                        crate::metrics::ideal_fct_with(
                            size,
                            self.mss,
                            self.header,
                            seq,
                            &[],
                            &[],
                            None,
                            ns_floor,
                        )
                    })
                    .min()
                    .expect("a path")
            };
            best = best.min(fwd + *back);
        }
        if best == SimTime::MAX {
            // No path in any state it lived through: it cannot have finished.
            SimTime::ZERO
        } else {
            best
        }
    }

    /// The span of network states `[a, b]` overlaps: the first and last of the segments
    /// between the times the network changed (both 0 without failures).
    pub(in crate::experiment) fn segments(
        &mut self,
        net: &crate::net::Network,
        a: SimTime,
        b: SimTime,
    ) -> (u32, u32) {
        let Some(h) = &net.history else {
            return (0, 0);
        };
        if self.changes.is_empty() {
            let mut t: Vec<SimTime> = h.routes[1..].iter().map(|r| r.0).collect();
            t.extend(h.ports.values().flat_map(|v| v[1..].iter().map(|s| s.0)));
            t.sort();
            t.dedup();
            t.retain(|&x| x > SimTime::ZERO);
            self.changes = t;
        }
        let lo = self.changes.partition_point(|&t| t < a) as u32;
        let hi = self.changes.partition_point(|&t| t <= b) as u32;
        (lo, hi)
    }

    /// Records a released flow or message.
    pub fn retired(&mut self, net: &crate::net::Network, r: &crate::sim::Retired) {
        match (&r.msg, &r.flow) {
            (Some(m), _) => self.message(net, m, r.attribution),
            (None, Some(f)) => self.flow(net, f, r.tcp, r.attribution),
            (None, None) => unreachable!("a released flow or message"),
        }
    }

    /// Records RDMA message `m` in its final state (`attribution`: its delay attribution, if it
    /// finished).
    pub fn message(
        &mut self,
        net: &crate::net::Network,
        m: &crate::transport::rdma::Msg,
        attribution: Option<crate::sim::attrib::Attribution>,
    ) {
        use crate::config::RdmaHostKind;
        let spread = self.spread_lb
            || self.rdma_host == Some(RdmaHostKind::MpRdma)
            || (self.rdma_host == Some(RdmaHostKind::Gpmp) && !m.short);
        let until = m.finish.unwrap_or(SimTime::MAX);
        let ideal = self.ideal(net, m.src, m.dst, m.size, spread, m.start, until);
        self.push(Ended {
            ext_id: m.ext_id,
            order: m.order,
            src: m.src,
            dst: m.dst,
            size: m.size,
            start: m.start,
            finish: m.finish,
            rcv_finish: m.rcv_finish,
            retransmits: m.retx,
            timeouts: 0,
            ecn_marks: m.ce,
            drops: m.drops,
            deadline: m.deadline.map(|t| m.start + t),
            deadline_met: m
                .deadline
                .map(|d| m.rcv_finish.is_some_and(|r| r <= m.start + d)),
            tag: m.tag.name(),
            deadline_class: m.deadline_class,
            ideal,
            ideal_group: ideal,
            attribution,
        });
    }

    /// Writes out what is still held (a spilling recorder's last chunk), adds the totals and
    /// returns the records held (in arrival order, as a run that keeps every flow iterates
    /// them).
    pub(in crate::experiment) fn flush(
        &mut self,
        totals: &mut RunTotals,
    ) -> Result<Vec<FlowRecord>, String> {
        if self.spilled.is_some() && !self.records.is_empty() {
            self.spill_chunk();
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // Arrival orders are distinct: an unstable sort gives the same order, without the
        // stable sort's buffer.
        self.records.sort_unstable_by_key(|&(_, order, _)| order);
        debug_assert!(self.records.windows(2).all(|w| w[0].1 < w[1].1));
        // Collected in place (the standard library reuses the buffer): the records are not
        // held twice at the run's peak.
        let records = std::mem::take(&mut self.records)
            .into_iter()
            .map(|(_, _, r)| r)
            .collect();
        totals.retransmits += self.retransmits;
        totals.timeouts += self.timeouts;
        totals.ecn_marks += self.ecn_marks;
        totals.finished += self.finished;
        totals.spurious_retx += self.spurious_retx;
        self.reductions.sort_by_key(|&(first, _)| first);
        totals.reductions = self.reductions.drain(..).map(|(_, r)| r).collect();
        Ok(records)
    }

    /// Records TCP-family or UDP flow `f` in its final state (`tcp`: its TCP counters;
    /// `attribution`: its delay attribution, if it finished).
    pub fn flow(
        &mut self,
        net: &crate::net::Network,
        f: &crate::transport::Flow,
        tcp: Option<crate::transport::tcp::TcpStats>,
        attribution: Option<crate::sim::attrib::Attribution>,
    ) {
        let spread = self.spread_lb;
        let until = f.finish.unwrap_or(SimTime::MAX);
        let ideal = self.ideal(net, f.src, f.dst, f.size, spread, f.start, until);
        let group = (f.group != u32::MAX)
            .then(|| self.group_bytes[f.group as usize])
            .filter(|&b| b > f.size);
        let ideal_group = match group {
            Some(b) => self.ideal(net, f.src, f.dst, b, spread, f.start, until),
            None => ideal,
        };
        if let Some(snd) = &tcp {
            self.spurious_retx += snd.duplicates;
            let tag = f.tag.name();
            let i = match self.reductions.iter().position(|(_, r)| r.tag == tag) {
                Some(i) => i,
                None => {
                    self.reductions.push((
                        f.order,
                        ReductionStats {
                            tag,
                            window_bins: crate::transport::tcp::REDUCTION_BINS.to_vec(),
                            by_window: vec![0; crate::transport::tcp::REDUCTION_BINS.len()],
                            exponent_bins: crate::transport::tcp::EXPONENT_BINS.to_vec(),
                            by_exponent: vec![0; crate::transport::tcp::EXPONENT_BINS.len()],
                            flows_by_exponent_at_end: vec![
                                0;
                                crate::transport::tcp::EXPONENT_BINS
                                    .len()
                            ],
                            ..Default::default()
                        },
                    ));
                    self.reductions.len() - 1
                }
            };
            let (first, r) = &mut self.reductions[i];
            *first = (*first).min(f.order);
            r.flows += 1;
            r.reductions += snd.ecn_reductions;
            for (a, b) in r.by_window.iter_mut().zip(snd.reductions_by_window) {
                *a += b as u64;
            }
            r.same_window_half_vs_two += snd.reductions_same_window as u64;
            for (a, b) in r.by_exponent.iter_mut().zip(snd.reductions_by_exponent) {
                *a += b as u64;
            }
            r.flows_by_exponent_at_end
                [crate::transport::tcp::exponent_bin(snd.exponent.unwrap_or(1.0))] += 1;
            if let Some(a) = snd.alpha {
                if r.flows_by_alpha_at_end.is_empty() {
                    r.flows_by_alpha_at_end = vec![0; 100];
                }
                r.flows_by_alpha_at_end[((a * 100.0).floor().max(0.0) as usize).min(99)] += 1;
            }
        }
        let (retx, to) = match &tcp {
            Some(c) => (c.retransmits, c.timeouts),
            None => (0, 0),
        };
        self.push(Ended {
            ext_id: f.ext_id,
            order: f.order,
            src: f.src,
            dst: f.dst,
            size: f.size,
            start: f.start,
            finish: f.finish,
            rcv_finish: f.rcv_finish,
            retransmits: retx,
            timeouts: to,
            ecn_marks: f.stats.ce_rcvd,
            drops: f.stats.drops,
            deadline: f.deadline,
            // Unstarted dependent flows have no absolute deadline yet: they missed it.
            deadline_met: f
                .rel_deadline
                .map(|_| matches!((f.rcv_finish, f.deadline), (Some(r), Some(d)) if r <= d)),
            tag: f.tag.name(),
            deadline_class: f.deadline_class,
            ideal,
            ideal_group,
            attribution,
        });
    }

    /// Adds the record of a flow or message that ended to the totals, the class summaries and
    /// the records (spilling a full chunk).
    fn push(&mut self, e: Ended) {
        let fct = e.finish.map(|t| t - e.start);
        self.retransmits += e.retransmits;
        self.timeouts += e.timeouts;
        self.ecn_marks += e.ecn_marks;
        if fct.is_some() {
            self.finished += 1;
        }
        let rec = FlowRecord {
            flow_id: e.ext_id,
            src: e.src,
            dst: e.dst,
            size_bytes: e.size,
            start_ps: e.start.0,
            finish_ps: e.finish.map(|t| t.0),
            rcv_finish_ps: e.rcv_finish.map(|t| t.0),
            fct_ps: fct.map(|t| t.0),
            ideal_fct_ps: e.ideal.0,
            slowdown: fct.map(|t| t.0 as f64 / e.ideal.0 as f64),
            size_class: self.classes.name(self.classes.class_of(e.size)),
            retransmits: e.retransmits,
            timeouts: e.timeouts,
            ecn_marks: e.ecn_marks,
            drops: e.drops,
            deadline_ps: e.deadline.map(|t| t.0),
            deadline_met: e.deadline_met,
            tag: e.tag,
            deadline_class: e.deadline_class.map(|d| d.to_string()),
            ideal_group_fct_ps: e.ideal_group.0,
            slowdown_group: fct.map(|t| t.0 as f64 / e.ideal_group.0 as f64),
            attribution: e.attribution.filter(|_| fct.is_some()),
        };
        self.summary.add(&rec, e.deadline_class);
        self.records.push((e.ext_id, e.order, rec));
        if self.records.len() >= self.spill_at {
            self.spill_chunk();
        }
    }
}

/// A flow or an RDMA message as it ended: what its record takes from it.
struct Ended {
    ext_id: u32,
    order: u32,
    src: u32,
    dst: u32,
    size: u64,
    start: SimTime,
    finish: Option<SimTime>,
    rcv_finish: Option<SimTime>,
    retransmits: u64,
    timeouts: u64,
    ecn_marks: u64,
    drops: u64,
    /// The absolute deadline.
    deadline: Option<SimTime>,
    deadline_met: Option<bool>,
    tag: &'static str,
    deadline_class: Option<SimTime>,
    ideal: SimTime,
    ideal_group: SimTime,
    attribution: Option<crate::sim::attrib::Attribution>,
}

/// Gathers the results of a finished (or stopped) simulation.
pub fn collect(
    sim: &Sim,
    end_reason: EndReason,
    plan: RunPlan,
    cfg: &Config,
    wall: Instant,
) -> RunResult {
    let rec = Recorder::new(sim, &plan, cfg);
    collect_with(sim, rec, end_reason, plan, cfg, wall)
        .expect("a recorder that holds its records writes nothing that could fail")
}

/// Gathers the results of a finished (or stopped) simulation whose released flows `rec`
/// recorded.
pub fn collect_with(
    sim: &Sim,
    mut rec: Recorder,
    end_reason: EndReason,
    plan: RunPlan,
    cfg: &Config,
    wall: Instant,
) -> Result<RunResult, String> {
    let msgs = sim.transport.messages();
    let mut totals = RunTotals {
        flows: match (msgs, cfg.end_when) {
            (None, Some(_)) => sim.flows.iter().filter(|f| f.started).count() as u64,
            _ => sim.total as u64,
        },
        ..Default::default()
    };
    let mut records = if let Some(msgs) = msgs {
        if let Some(q) = sim.transport.qp_totals() {
            totals.timeouts += q.timeouts;
            totals.nacks += q.nacks;
            totals.cnps += q.cnps;
            totals.rate_decreases += q.rate_decreases;
        }
        totals.queue_pairs = sim.transport.queue_pairs().unwrap_or(0);
        if sim.retiring() {
            // Released messages the driver did not take yet, then the messages still held.
            for r in sim.retired_pending() {
                rec.retired(&sim.net, r);
            }
            for (slot, m) in sim.held_messages() {
                let attribution =
                    slot.and_then(|i| attribution_of(sim, i as usize, m.finish.is_some()));
                rec.message(&sim.net, &m, attribution);
            }
        } else {
            for (i, m) in msgs.iter().enumerate() {
                rec.message(&sim.net, m, attribution_of(sim, i, m.finish.is_some()));
            }
        }
        rec.flush(&mut totals)?
    } else {
        // Released flows the driver did not take yet, then the flows still held.
        for r in sim.retired_pending() {
            rec.retired(&sim.net, r);
        }
        // With `end_when`, flows that never started did not happen.
        let counted = |f: &crate::transport::Flow| f.started || cfg.end_when.is_none();
        if sim.retiring() {
            for f in sim.held_flows().iter().filter(|f| counted(f)) {
                let tcp = (f.id.0 != u32::MAX)
                    .then(|| sim.transport.tcp(f.id))
                    .flatten();
                let attribution = (f.id.0 != u32::MAX)
                    .then(|| attribution_of(sim, f.id.idx(), f.finish.is_some()))
                    .flatten();
                rec.flow(&sim.net, f, tcp, attribution);
            }
        } else {
            for f in sim.flows.iter().filter(|f| counted(f)) {
                let tcp = sim.transport.tcp(f.id);
                let attribution = attribution_of(sim, f.id.idx(), f.finish.is_some());
                rec.flow(&sim.net, f, tcp, attribution);
            }
        }
        rec.flush(&mut totals)?
    };
    // Flow ids are distinct: an unstable sort gives the same order, without the stable
    // sort's buffer of half the records.
    records.sort_unstable_by_key(|r| r.flow_id);
    debug_assert!(records.windows(2).all(|w| w[0].flow_id < w[1].flow_id));
    let training = sim.training.as_ref().map_or(Vec::new(), |t| {
        let calcs = sim.calc_runs();
        t.results(|c| calcs[c as usize].done, |c| calcs[c as usize].duration)
    });
    let collectives = sim
        .collectives
        .iter()
        .enumerate()
        .map(|(i, c)| {
            c.result(i, |id| {
                let k = records.binary_search_by_key(&id, |r| r.flow_id).ok()?;
                Some((records[k].start_ps, records[k].rcv_finish_ps))
            })
        })
        .collect();
    if !sim.retiring() {
        // Every flow's deadline class has a row, counted or not.
        for d in sim.flows.iter().filter_map(|f| f.deadline_class) {
            rec.summary.deadline_class(d);
        }
    }
    // `all`, each size class, each cumulative class, each traffic kind the workload labels,
    // each deadline class in increasing order of the mean.
    let summaries = rec.summary.finish()?;
    let dur = sim.now.0.max(1) as f64;
    let mut ports = Vec::with_capacity(sim.net.ports.len());
    let (mut hu, mut hn, mut fu, mut fnn) = (0.0, 0usize, 0.0, 0usize);
    for (i, p) in sim.net.ports.iter().enumerate() {
        let util = p.busy_through(sim.now) as f64 / dur;
        let peer_node = sim.net.ports[p.peer.idx()].node;
        let host_link = sim.net.is_host(p.node) || sim.net.is_host(peer_node);
        if host_link {
            hu += util;
            hn += 1;
        } else {
            fu += util;
            fnn += 1;
            totals.max_util_fabric_links = totals.max_util_fabric_links.max(util);
        }
        totals.pfc_pauses += p.stats.pause_rx;
        totals.max_queue_bytes = totals.max_queue_bytes.max(p.stats.max_qbytes);
        ports.push(PortRecord {
            port: i as u32,
            node: sim.net.nodes[p.node.idx()].name.clone(),
            peer: sim.net.nodes[peer_node.idx()].name.clone(),
            node_id: p.node.0,
            peer_id: peer_node.0,
            rate_bps: p.rate.bps(),
            tx_pkts: p.stats.tx_pkts,
            tx_bytes: p.stats.tx_bytes,
            utilization: util,
            drops: p.stats.drops,
            ecn_marks: p.stats.ecn_marks,
            pfc_pauses_rx: p.stats.pause_rx,
            paused_ps: p.stats.paused_time.0,
            max_queue_bytes: p.stats.max_qbytes,
        });
    }
    totals.mean_util_host_links = if hn > 0 { hu / hn as f64 } else { 0.0 };
    totals.mean_util_fabric_links = if fnn > 0 { fu / fnn as f64 } else { 0.0 };
    let switches: Vec<SwitchRecord> = sim
        .net
        .switches
        .iter()
        .enumerate()
        .map(|(i, s)| SwitchRecord {
            switch: sim.net.nodes[sim.net.n_hosts + i].name.clone(),
            lb_hash: s.lb.decisions[0],
            lb_other: s.lb.decisions[1],
            lb_congested: s.lb.decisions[2],
            drops_lossy: s.drops[0],
            drops_lossless: s.drops[1],
            pfc_frames: s.pfc_sent,
            peak_buffer_bytes: s.mmu.peak,
        })
        .collect();
    for s in &sim.net.switches {
        totals.lb_hash += s.lb.decisions[0];
        totals.lb_other += s.lb.decisions[1];
        totals.lb_congested += s.lb.decisions[2];
        totals.drops += s.drops[0] + s.drops[1];
        totals.drops_lossless += s.drops[1];
        totals.pfc_frames += s.pfc_sent;
    }
    // Packets lost with a failed link (its wire, a host's queue, no route left).
    totals.drops += sim.failure_losses;
    totals.sim_end_ps = sim.now.0;
    totals.events = sim.events();
    totals.packet_hops = sim.packet_hops;
    Ok(RunResult {
        plan,
        end_reason,
        totals,
        classes: summaries,
        records,
        fct_spill: rec.spilled.take().map(std::sync::Arc::new),
        ports,
        switches,
        conservation: sim.conservation(),
        wall_seconds: wall.elapsed().as_secs_f64(),
        pcap: None,
        pcap_bytes: None,
        timeseries: None,
        timeseries_csv: None,
        window: None,
        collectives,
        iterations: crate::workload::training::iterations(&training),
        training,
    })
}
