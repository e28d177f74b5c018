//! Dependency graphs: what a workload's flows (or RDMA messages) and compute steps wait for,
//! beyond their start times.
//!
//! A graph has two kinds of node besides flows:
//!
//! * **Joins**, the points where completions are counted. A join completes once each of its
//!   predecessors has completed (a flow: received completely at its destination; a compute
//!   step: finished) and the news has reached the join's host. The flows and compute steps
//!   that wait for a join (`FlowSpec::after`, [`Calc::after`]) start once it completes. A
//!   workload's groups (`FlowSpec::group`: the flows of a query, a step of a workflow) are
//!   joins whose predecessors are their members and whose host is the destination of their
//!   first member; a [`Dag`] adds joins of its own, with any predecessors, including flows
//!   that already belong to other joins, and a host of its choosing.
//! * **Compute steps** ([`Calc`]): a host busy for a fixed time (a GPU's kernel, a reduction,
//!   the forward pass of a layer), started at a time of its own or after a join; it uses no
//!   resource of the simulated network, and several may run at one host at once (a graph
//!   that wants them in sequence chains them).
//!
//! News travels as a control message would on an idle network: a completion at host `a`
//! reaches a join at host `b` one base latency later (a 64-byte frame's serialization and
//! propagation along the least-latency path); a flow or compute step waiting at another host
//! than its join's starts no sooner than one base latency after the join completed (its own
//! delay, `start`, when that is longer). The rules are the simulator's (`sim::grid`); this
//! module holds the graph as a workload describes it.
//!
//! Not modelled: compute steps sharing a host's processor (they overlap), dependencies on a
//! flow's start rather than its completion.

use crate::units::SimTime;

/// What a join waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pred {
    /// The flow with this workload id, received completely at its destination.
    Flow(u32),
    /// Compute step `i` of [`Dag::calcs`], finished.
    Calc(u32),
}

/// A point where completions are counted (see the module).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Join {
    /// Where its predecessors' news is counted; None: the destination of its first member
    /// flow (a group's rule).
    pub host: Option<u32>,
    /// Predecessors beyond the flows whose `group` is this join.
    pub preds: Vec<Pred>,
}

/// A compute step: `host` busy for `duration`.
#[derive(Clone, Debug, PartialEq)]
pub struct Calc {
    pub host: u32,
    pub duration: SimTime,
    /// Its start: absolute without `after`, the delay after the join with it.
    pub start: SimTime,
    /// The join it waits for.
    pub after: Option<u32>,
}

/// The joins and compute steps of a workload (see the module). Join `j` is the one that
/// `FlowSpec::after = Some(j)`, `FlowSpec::group = Some(j)` and `Calc::after = Some(j)` name;
/// `joins` may be shorter than the number of joins the flows name (those are plain groups).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dag {
    pub joins: Vec<Join>,
    pub calcs: Vec<Calc>,
}

impl Dag {
    /// Whether it adds nothing to the flows' groups.
    pub fn is_empty(&self) -> bool {
        self.joins.is_empty() && self.calcs.is_empty()
    }

    /// A new join at `host` waiting for `preds`; its number.
    pub fn join(&mut self, host: u32, preds: Vec<Pred>) -> u32 {
        self.joins.push(Join {
            host: Some(host),
            preds,
        });
        self.joins.len() as u32 - 1
    }

    /// A new compute step; its number.
    pub fn calc(
        &mut self,
        host: u32,
        duration: SimTime,
        start: SimTime,
        after: Option<u32>,
    ) -> u32 {
        self.calcs.push(Calc {
            host,
            duration,
            start,
            after,
        });
        self.calcs.len() as u32 - 1
    }

    /// Appends `other`, whose joins are numbered from `join_base` and whose flow ids are
    /// mapped by `flow_id` (a `mix` of workloads).
    pub fn append(&mut self, other: Dag, join_base: u32, flow_id: impl Fn(u32) -> u32) {
        let calc_base = self.calcs.len() as u32;
        if !other.joins.is_empty() {
            self.joins.resize(join_base as usize, Join::default());
        }
        for j in other.joins {
            let preds = j
                .preds
                .into_iter()
                .map(|p| match p {
                    Pred::Flow(id) => Pred::Flow(flow_id(id)),
                    Pred::Calc(c) => Pred::Calc(calc_base + c),
                })
                .collect();
            self.joins.push(Join {
                host: j.host,
                preds,
            });
        }
        for c in other.calcs {
            self.calcs.push(Calc {
                after: c.after.map(|a| a + join_base),
                ..c
            });
        }
    }

    /// The number of joins named: by `flows` (groups and waits) or by the graph.
    pub fn n_joins(&self, flows: &[super::FlowSpec]) -> usize {
        let by_flows = flows
            .iter()
            .filter_map(|f| f.group.max(f.after))
            .max()
            .map_or(0, |g| g as usize + 1);
        let by_calcs = self
            .calcs
            .iter()
            .filter_map(|c| c.after)
            .max()
            .map_or(0, |g| g as usize + 1);
        by_flows.max(by_calcs).max(self.joins.len())
    }
}
