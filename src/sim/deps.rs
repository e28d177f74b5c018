//! Dependencies at run time: joins counting completions, the units (flows, or RDMA messages)
//! and compute steps waiting for them, and compute steps' runs (the graph as a workload gives
//! it: `workload::dag`).
//!
//! Every decision is taken at one host, by events keyed there, so that any partitioning of the
//! network reproduces it (`grid`): a completion is counted at its join's host (immediately when
//! it happened there, else one base latency later, `Ev::JoinNews`); a waiting unit or compute
//! step at another host than its join's starts no sooner than one base latency after the join
//! completed (`Ev::Start`, `Ev::CalcDone`), or its own delay when that is longer. A compute step
//! without a join starts at its own time, released like the workload's arrivals.
//!
//! Not here: the base latency (`grid::host_latency`), what a unit does once started
//! (`retire::start_unit`).

use super::*;
use crate::workload::{Dag, Pred};

/// A unit or compute step that waits for a join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) enum Waiter {
    /// A flow or RDMA message, by its index in the run.
    Unit(u32),
    Calc(u32),
}

/// A compute step's parameters and what became of it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CalcRun {
    pub host: u32,
    pub duration: SimTime,
    /// Its start: absolute without a join, else the delay after its join.
    pub offset: SimTime,
    /// It waits for a join.
    pub dependent: bool,
    /// When it finished (set where it ran).
    pub done: Option<SimTime>,
}

/// Indices into a flat list, per item (compressed rows).
#[derive(Default)]
struct Rows {
    first: Vec<u32>,
    items: Vec<u32>,
}

impl Rows {
    fn build(n: usize, pairs: &mut [(u32, u32)]) -> Rows {
        pairs.sort_by_key(|&(i, _)| i);
        let mut first = vec![0u32; n + 1];
        for &(i, _) in pairs.iter() {
            first[i as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        Rows {
            first,
            items: pairs.iter().map(|&(_, j)| j).collect(),
        }
    }

    fn get(&self, i: usize) -> &[u32] {
        match self.first.get(i + 1) {
            Some(&end) => &self.items[self.first[i] as usize..end as usize],
            None => &[],
        }
    }
}

/// The run's dependencies (empty in runs without any).
#[derive(Default)]
pub(in crate::sim) struct Deps {
    /// Per join: completions not yet counted, its host, who waits for it (units in workload
    /// order, then compute steps).
    left: Vec<u32>,
    host: Vec<u32>,
    waiters: Vec<Vec<Waiter>>,
    /// The joins each unit, and each compute step, completes a part of.
    unit_joins: Rows,
    calc_joins: Rows,
    /// Compute steps.
    pub(in crate::sim) calcs: Vec<CalcRun>,
    /// Compute steps without a join, by start (ties by number), and the next not released.
    roots: Vec<u32>,
    next_root: usize,
    /// Compute steps finished here.
    pub(in crate::sim) calcs_done: usize,
    /// Units that waited for a join and have started here (RDMA messages; flows say it
    /// themselves).
    started: Vec<bool>,
}

impl Deps {
    /// The dependencies of a run whose units are `flows` (in the run's order; `n_static`
    /// start on their own), with the graph `dag`.
    pub(in crate::sim) fn new(
        flows: &[FlowSpec],
        n_static: usize,
        dag: &Dag,
    ) -> Result<Deps, String> {
        let n_joins = dag.n_joins(flows);
        let mut d = Deps {
            left: vec![0; n_joins],
            host: vec![u32::MAX; n_joins],
            waiters: vec![Vec::new(); n_joins],
            started: vec![false; flows.len() - n_static],
            ..Deps::default()
        };
        if n_joins == 0 && dag.calcs.is_empty() {
            return Ok(d);
        }
        for (j, join) in dag.joins.iter().enumerate() {
            if let Some(h) = join.host {
                d.host[j] = h;
            }
        }
        let mut unit_pairs = Vec::new();
        for (i, f) in flows.iter().enumerate() {
            if let Some(g) = f.group {
                d.left[g as usize] += 1;
                if d.host[g as usize] == u32::MAX {
                    d.host[g as usize] = f.dst;
                }
                unit_pairs.push((i as u32, g));
            }
            if let Some(g) = f.after {
                d.waiters[g as usize].push(Waiter::Unit(i as u32));
            }
        }
        let mut calc_pairs = Vec::new();
        if dag.joins.iter().any(|j| !j.preds.is_empty()) {
            let index: std::collections::HashMap<u32, u32> = flows
                .iter()
                .enumerate()
                .map(|(i, f)| (f.id, i as u32))
                .collect();
            for (j, join) in dag.joins.iter().enumerate() {
                for p in &join.preds {
                    d.left[j] += 1;
                    match *p {
                        // A flow not in the run (it would have started after the stop time)
                        // never completes: the join waits for ever.
                        Pred::Flow(id) => {
                            if let Some(&u) = index.get(&id) {
                                unit_pairs.push((u, j as u32));
                            }
                        }
                        Pred::Calc(c) => {
                            if c as usize >= dag.calcs.len() {
                                return Err(format!(
                                    "join {j} waits for compute step {c}, but there are {}",
                                    dag.calcs.len()
                                ));
                            }
                            calc_pairs.push((c, j as u32));
                        }
                    }
                }
                if d.host[j] == u32::MAX && !join.preds.is_empty() {
                    return Err(format!("join {j} has no host and no member flow"));
                }
            }
        }
        for (c, calc) in dag.calcs.iter().enumerate() {
            match calc.after {
                Some(g) => d.waiters[g as usize].push(Waiter::Calc(c as u32)),
                None => d.roots.push(c as u32),
            }
            d.calcs.push(CalcRun {
                host: calc.host,
                duration: calc.duration,
                offset: calc.start,
                dependent: calc.after.is_some(),
                done: None,
            });
        }
        d.roots.sort_by_key(|&c| (dag.calcs[c as usize].start, c));
        d.unit_joins = Rows::build(flows.len(), &mut unit_pairs);
        d.calc_joins = Rows::build(dag.calcs.len(), &mut calc_pairs);
        Ok(d)
    }

    /// The start of the next compute step without a join not released yet.
    pub(in crate::sim) fn next_root(&self) -> Option<SimTime> {
        let &c = self.roots.get(self.next_root)?;
        Some(self.calcs[c as usize].offset)
    }

    /// Dependent unit `u` has started here.
    pub(in crate::sim) fn mark_started(&mut self, u: usize, n_static: usize) {
        self.started[u - n_static] = true;
    }

    /// Whether RDMA message `o` (its place in the workload) has started, with `next_start`
    /// arrivals released: by its arrival, or (one that waited) by its join.
    pub(in crate::sim) fn message_started(
        &self,
        o: usize,
        next_start: usize,
        n_static: usize,
    ) -> bool {
        o < next_start || self.started(o, n_static)
    }

    /// Whether dependent unit `u` (the `n_static`-th unit is the first) has started here.
    pub(in crate::sim) fn started(&self, u: usize, n_static: usize) -> bool {
        u >= n_static && self.started[u - n_static]
    }
}

impl Sim {
    /// Unit `u` (a flow, or an RDMA message) was received completely at its destination:
    /// each join it is part of counts it now (its host is here) or one base latency later.
    #[inline(never)]
    pub(in crate::sim) fn on_received(&mut self, u: usize) {
        let n = self.deps.unit_joins.get(u).len();
        if n == 0 {
            return;
        }
        let here = self.unit_ends(u).1;
        for k in 0..n {
            let j = self.deps.unit_joins.get(u)[k];
            self.news(here, j);
        }
    }

    /// The news of a completion at host `here` for join `j`.
    fn news(&mut self, here: u32, j: u32) {
        let owner = self.deps.host[j as usize];
        if here == owner {
            self.join_counts(j);
        } else {
            let at = self.now + self.host_latency(here, owner);
            self.push_start_event(NodeId(owner), at, Ev::JoinNews(j));
        }
    }

    /// One more completion counted at join `j`'s host; the last one starts whatever waits
    /// for the join (its delay later, and no sooner than the news can reach its host).
    #[inline(never)]
    pub(in crate::sim) fn join_counts(&mut self, j: u32) {
        let left = &mut self.deps.left[j as usize];
        *left -= 1;
        if *left > 0 {
            return;
        }
        let owner = self.deps.host[j as usize];
        let waiting = std::mem::take(&mut self.deps.waiters[j as usize]);
        for w in waiting {
            let (host, offset) = match w {
                Waiter::Unit(u) => (self.unit_ends(u as usize).0, self.unit_offset(u as usize)),
                Waiter::Calc(c) => {
                    let c = &self.deps.calcs[c as usize];
                    (c.host, c.offset)
                }
            };
            let delay = if host == owner {
                offset
            } else {
                offset.max(self.host_latency(owner, host))
            };
            match w {
                Waiter::Unit(u) if delay == SimTime::ZERO => self.start_unit(u as usize),
                Waiter::Unit(u) => {
                    let at = self.now + delay;
                    if !self.msg_units {
                        self.flows[u as usize].start = at;
                    }
                    self.push_start_event(NodeId(host), at, Ev::Start(u));
                }
                Waiter::Calc(c) => {
                    let at = self.now + delay + self.deps.calcs[c as usize].duration;
                    if at == self.now {
                        self.calc_done(c);
                    } else {
                        self.push_start_event(NodeId(host), at, Ev::CalcDone(c));
                    }
                }
            }
        }
    }

    /// Compute step `c` has finished (now, at its host): each join it is part of counts it.
    #[inline(never)]
    pub(in crate::sim) fn calc_done(&mut self, c: u32) {
        let calc = &mut self.deps.calcs[c as usize];
        calc.done = Some(self.now);
        let here = calc.host;
        self.deps.calcs_done += 1;
        let n = self.deps.calc_joins.get(c as usize).len();
        for k in 0..n {
            let j = self.deps.calc_joins.get(c as usize)[k];
            self.news(here, j);
        }
    }

    /// The run's compute steps and what became of them.
    pub fn calc_runs(&self) -> &[CalcRun] {
        &self.deps.calcs
    }

    /// Pushes the end of every compute step without a join that starts before `before`
    /// (those at hosts of this partition), keyed by its host and number like an arrival.
    #[inline(never)]
    pub(in crate::sim) fn release_calcs(&mut self, before: SimTime) {
        let n_units = self.n_units() as u32;
        while let Some(t) = self.deps.next_root()
            && t < before
        {
            let c = self.deps.roots[self.deps.next_root];
            self.deps.next_root += 1;
            let calc = &self.deps.calcs[c as usize];
            if !self.owns_host(calc.host) {
                continue;
            }
            let at = t.max(self.now) + calc.duration;
            self.starts_pending += 1;
            self.ev
                .push_start_ev(at, calc.host, n_units + c, Ev::CalcDone(c));
        }
    }

    /// Schedules a dependency's event (a join's news, a waiting unit's start, a compute
    /// step's end) at `node`, counted as pending where it will be handled.
    pub(in crate::sim) fn push_start_event(&mut self, node: NodeId, at: SimTime, ev: Ev) {
        if self.owns(node) {
            self.starts_pending += 1;
        }
        self.push_to(node, at, ev);
    }

    /// The number of units (flows, or RDMA messages) of the run.
    pub(in crate::sim) fn n_units(&self) -> usize {
        match self.transport.messages() {
            Some(m) => m.len(),
            None => self.flows.len(),
        }
    }

    /// Unit `u`'s source and destination hosts.
    pub(in crate::sim) fn unit_ends(&self, u: usize) -> (u32, u32) {
        match self.transport.messages() {
            Some(m) if self.msg_units => (m[u].src, m[u].dst),
            _ => (self.flows[u].src, self.flows[u].dst),
        }
    }

    /// Unit `u`'s start: for a unit that waits, its delay after its join (until it starts).
    fn unit_offset(&self, u: usize) -> SimTime {
        match self.transport.messages() {
            Some(m) if self.msg_units => m[u].start,
            _ => self.flows[u].start,
        }
    }

    /// The host where event `ev` of the dependencies happens.
    pub(in crate::sim) fn dep_host(&self, ev: &Ev) -> u32 {
        match *ev {
            Ev::Start(u) => self.unit_ends(u as usize).0,
            Ev::JoinNews(j) => self.deps.host[j as usize],
            Ev::CalcDone(c) => self.deps.calcs[c as usize].host,
            _ => unreachable!("not a dependency's event"),
        }
    }
}
