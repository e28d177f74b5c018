//! The event loop, and the decisions it takes beside handling events: every one of them local
//! to a node or taken at fixed instants, so that any partitioning of the nodes reproduces it
//! (`window`).
//!
//! * **The grid.** Whether the run has ended (every unit finished; the `end_when` tag done,
//!   after which nothing new starts; nothing reachable left after failures) is decided at the
//!   instants `k · [run] grid`, from the state once every event before the instant has run,
//!   and at the stop time; never after an arbitrary event, whose position among the events of
//!   other nodes no partition knows. The run's last events are therefore those before the
//!   first grid point at which it had ended.
//! * **Starts.** Each flow (or RDMA message) of the workload starts by an event of its own at
//!   its source host, keyed by that host and its place in the workload
//!   (`sched::Schedule::push_start`); the events due before the next grid point are pushed
//!   when the run reaches a grid point (a streamed workload is read that far).
//! * **Dependencies.** A join (a group of flows, or any set of flows, messages and compute
//!   steps a dependency graph names) is counted at its host (a group's: the destination of
//!   its first member). A completion at another host tells the join one base latency later
//!   (`Sim::host_latency`); a waiting unit or compute step at another host than the join's
//!   starts no sooner than one base latency after the join completed (its own delay when
//!   that is longer): the news travels as a control message would on an idle network, never
//!   instantaneously. One at the join's host itself starts after its own delay (`deps`).
//!   Compute steps without a join are released like arrivals.
//!
//! Random draws are per node as well: each switch's, each sending host's (RDMA source ports,
//! MP-RDMA's path probing), each link's (random loss).
//!
//! Not here: the windowed kernel that runs partitions between grid points (`window`).

use super::*;

/// Default spacing of the grid (`[run] grid`).
pub const DEFAULT_GRID: SimTime = SimTime(1_000_000);

/// Base latencies between hosts: the time a 64-byte frame takes over an idle least-latency
/// path (serialization plus propagation per link), computed per source switch on demand.
#[derive(Default)]
pub(in crate::sim) struct Latencies {
    /// Per switch index: the latency from it to every switch (MAX: unreachable), once asked.
    from_switch: Vec<Option<Vec<SimTime>>>,
}

/// The frame whose serialization a base latency counts at every hop.
const CONTROL_FRAME: u32 = 64;

impl Sim {
    /// The grid point after `t` (the grid's spacing divides time from zero).
    pub(in crate::sim) fn grid_after(&self, t: SimTime) -> SimTime {
        let q = self.grid.0;
        SimTime((t.0 / q).saturating_add(1).saturating_mul(q))
    }

    /// The event loop; the contract of `advance`.
    pub(in crate::sim) fn advance_keyed(
        &mut self,
        until: SimTime,
        mut progress: impl FnMut(Progress),
        drain: &mut dyn FnMut(&Network, Vec<Retired>),
    ) -> Option<EndReason> {
        let reason = loop {
            // The next instant something is due: an event, or a workload arrival not pushed
            // yet (all those before the next grid point are).
            let next_ev = self.ev.peek_time();
            let next_start = match self.draining {
                true => SimTime::MAX,
                false => self.next_arrival,
            };
            let at = next_ev.map_or(next_start, |t| t.min(next_start));
            if at >= self.next_grid || at > self.stop_time {
                // A grid point (or the stop time, or the end of all events) has come: every
                // event before it has run.
                if let Some(r) = self.grid_end() {
                    break r;
                }
                if at == SimTime::MAX && next_ev.is_none() {
                    break EndReason::Idle;
                }
                if at > self.stop_time {
                    self.now = self.stop_time;
                    break if at == SimTime::MAX {
                        EndReason::TimeLimit
                    } else {
                        EndReason::StopTime
                    };
                }
                self.next_grid = self.grid_after(at);
                if !self.draining {
                    self.release_due(self.next_grid);
                }
                continue;
            }
            if at > until {
                self.now = self.now.max(until);
                return None;
            }
            while at >= self.sample_at {
                if !self.take_sample() {
                    break;
                }
            }
            // Every event before the next point where the loop must look up: the grid, the
            // stop time, the caller's limit, the next sample.
            let limit = self
                .next_grid
                .min(self.stop_time + SimTime(1))
                .min(until + SimTime(1))
                .min(self.sample_at);
            while let Some((t, ev)) = self.ev.pop_before(limit) {
                self.now = t;
                self.dispatch_keyed(ev, drain);
                let n = self.ev.popped();
                if n & 0xF_FFFF == 0 {
                    progress(Progress {
                        now: self.now,
                        stop_time: self.stop_time,
                        events: n,
                        finished: self.finished,
                        total: self.total,
                        packet_hops: self.packet_hops,
                    });
                }
            }
        };
        for p in self.net.ports.iter_mut() {
            p.close_pauses(self.now);
        }
        self.ended = Some(reason);
        Some(reason)
    }

    /// Handles event `ev` (popped, the clock at its time).
    #[inline(always)]
    pub(in crate::sim) fn dispatch_keyed(
        &mut self,
        ev: Ev,
        drain: &mut dyn FnMut(&Network, Vec<Retired>),
    ) {
        self.ev.set_origin(self.origin_of(&ev));
        if self.warm {
            self.warm_up();
        }
        match ev {
            Ev::Arrival { host, index } => {
                self.arrivals_pending -= 1;
                self.on_arrival(host, index as usize);
                if let Some(r) = &mut self.retire
                    && !r.out.is_empty()
                {
                    drain(&self.net, std::mem::take(&mut r.out));
                }
            }
            Ev::TxDone(p) => {
                self.net.ports[p.idx()].txdone_pending = false;
                self.start_tx(p);
            }
            Ev::Arrive(p) => self.on_arrive(p),
            Ev::Pfc { port, prio, pause } => self.on_pfc(port, prio, pause),
            Ev::Timer(f, g) => self.on_timer(f, g),
            Ev::Pace(f, g) => self.on_pace(f, g),
            Ev::Start(u) => {
                self.starts_pending -= 1;
                self.start_unit(u as usize);
            }
            Ev::JoinNews(j) => {
                self.starts_pending -= 1;
                self.join_counts(j);
            }
            Ev::CalcDone(c) => {
                self.starts_pending -= 1;
                self.calc_done(c);
            }
            Ev::Fail(i) => {
                self.fails_pending -= 1;
                self.run_events += 1;
                self.on_fail(i as usize);
            }
            Ev::Reroute => {
                self.reroutes_pending -= 1;
                self.run_events += 1;
                self.net.reroute();
                if let Some(h) = &mut self.net.history {
                    h.rerouted(self.now, &self.net.routes);
                }
            }
        }
    }

    /// At a grid point: whether the run has ended, from the state every earlier event left.
    /// The `end_when` tag being done starts the draining (nothing new starts from here on).
    fn grid_end(&mut self) -> Option<EndReason> {
        if self.finished == self.total && self.deps.calcs_done == self.deps.calcs.len() {
            return Some(EndReason::AllFinished);
        }
        if self.end_tag.is_some() && self.tag_finished == self.tag_total {
            self.draining = true;
            if self.finished == self.started {
                return Some(EndReason::TagFinished);
            }
        }
        if self.failing && self.stranded() {
            return Some(EndReason::Unreachable);
        }
        None
    }

    /// Pushes the start of every arrival due before `before` (a streamed workload is read
    /// that far; its specs wait in `start_buf` until they start).
    pub(in crate::sim) fn release_due(&mut self, before: SimTime) {
        while let Some(t) = self.arrival_time(self.next_start)
            && t < before
        {
            let i = self.next_start;
            let host = match (&mut self.stream, self.retire.is_some()) {
                (Some(st), true) => {
                    let next = st.1.next();
                    let spec = std::mem::replace(&mut st.0, next).expect("an arrival was due");
                    let h = spec.src;
                    self.start_buf.push_back(Some(spec));
                    h
                }
                (None, true) => self.specs[i].src,
                _ => match self.transport.messages() {
                    Some(m) => m[i].src,
                    None => self.flows[i].src,
                },
            };
            self.next_start += 1;
            self.next_arrival = self.next_release();
            if !self.owns_host(host) {
                // Another partition's (its spec, if read ahead, is never needed here).
                if self.stream.is_some() && self.retire.is_some() {
                    self.start_buf.back_mut().expect("pushed").take();
                }
                continue;
            }
            self.arrivals_pending += 1;
            self.ev.push_start(t.max(self.now), host, i as u32);
        }
        if self.deps.next_root().is_some_and(|t| t < before) {
            self.release_calcs(before);
            self.next_arrival = self.next_release();
        }
    }

    /// Arrival `i` of the workload (a flow, or an RDMA message) starts at its source `host`.
    fn on_arrival(&mut self, host: u32, i: usize) {
        if self.draining {
            return;
        }
        if let Some(r) = &self.retire
            && r.pending.len() >= 2 * r.scanned + 64
        {
            self.retire_scan();
        }
        self.started += 1;
        if self.msg_units {
            let (m, src) = match self.retire {
                Some(_) => self.open_message(i),
                None => (
                    i as u32,
                    self.transport.messages().expect("message units")[i].src,
                ),
            };
            debug_assert_eq!(src, host);
            if let Some(a) = &mut self.attrib {
                a.unit_start(m as usize, src as usize, self.now);
            }
            let (t, mut h) = self.host();
            t.on_message(m, &mut h);
            self.flush_wakes();
            debug_assert!(
                self.retire.as_ref().is_none_or(|r| r.slot.is_none()),
                "a message's connection takes its slot"
            );
        } else {
            let f = match self.retire {
                Some(_) => self.open_flow(i),
                None => FlowId(i as u32),
            };
            debug_assert_eq!(self.flows[f.idx()].src, host);
            self.flows[f.idx()].started = true;
            if let Some(a) = &mut self.attrib {
                a.unit_start(f.idx(), host as usize, self.now);
            }
            self.make_ready(f);
        }
    }

    /// The base latency from host `a` to host `b`: a 64-byte frame's serialization and
    /// propagation over every link of the least-latency path of the network as built (failures
    /// aside); zero from a host to itself. Never shorter than the delay of any link the path
    /// crosses, so never shorter than the parallel kernel's lookahead between two partitions.
    pub(in crate::sim) fn host_latency(&mut self, a: u32, b: u32) -> SimTime {
        if a == b {
            return SimTime::ZERO;
        }
        if self.net.multi_homed() {
            return self.multi_homed_latency(a, b);
        }
        let net = &self.net;
        let hop = |p: PortId| {
            let port = &net.ports[p.idx()];
            port.ser_time(CONTROL_FRAME) + port.delay
        };
        let (pa, pb) = (net.host_port(a), net.host_port(b));
        let (sa, sb) = (net.ports[pa.idx()].peer_node, net.ports[pb.idx()].peer_node);
        if net.is_host(sa) {
            // Hosts wired to each other (or to a host that forwards nothing).
            return hop(pa);
        }
        let last = hop(net.ports[pb.idx()].peer);
        let first = hop(pa);
        if net.is_host(sb) {
            return first + last;
        }
        let (ia, ib) = (net.switch_idx(sa), net.switch_idx(sb));
        let lat = &mut self.latencies;
        if lat.from_switch.len() < net.switches.len() {
            lat.from_switch.resize(net.switches.len(), None);
        }
        let dist = lat.from_switch[ia].get_or_insert_with(|| switch_latencies(net, ia));
        first + dist[ib] + last
    }
}

impl Sim {
    /// [`host_latency`](Sim::host_latency) where hosts may have several ports: the least
    /// over the ports `a` sends from and those `b` is reached through (`SimTime::MAX` if
    /// none connects them).
    #[cold]
    #[inline(never)]
    fn multi_homed_latency(&mut self, a: u32, b: u32) -> SimTime {
        let net = &self.net;
        let hop = |p: PortId| {
            let port = &net.ports[p.idx()];
            port.ser_time(CONTROL_FRAME) + port.delay
        };
        let lat = &mut self.latencies;
        if lat.from_switch.len() < net.switches.len() {
            lat.from_switch.resize(net.switches.len(), None);
        }
        let mut best = SimTime::MAX;
        for &pa in net.ports_of_host(a) {
            let sa = net.ports[pa.idx()].peer_node;
            if sa.idx() == b as usize {
                best = best.min(hop(pa));
                continue;
            }
            if net.is_host(sa) {
                continue;
            }
            let ia = net.switch_idx(sa);
            let dist = lat.from_switch[ia].get_or_insert_with(|| switch_latencies(net, ia));
            for &pb in net.ports_of_host(b) {
                let sb = net.ports[pb.idx()].peer_node;
                if net.is_host(sb) || dist[net.switch_idx(sb)] == SimTime::MAX {
                    continue;
                }
                let t = hop(pa) + dist[net.switch_idx(sb)] + hop(net.ports[pb.idx()].peer);
                best = best.min(t);
            }
        }
        best
    }
}

/// Least latencies from switch `from` (an index) to every switch over switch-to-switch links
/// (Dijkstra; a link's weight is a 64-byte frame's serialization plus its delay).
fn switch_latencies(net: &Network, from: usize) -> Vec<SimTime> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = net.switches.len();
    let mut dist = vec![SimTime::MAX; n];
    let mut heap = BinaryHeap::new();
    dist[from] = SimTime::ZERO;
    heap.push(Reverse((SimTime::ZERO, from)));
    while let Some(Reverse((d, s))) = heap.pop() {
        if d > dist[s] {
            continue;
        }
        for &p in &net.nodes[net.n_hosts + s].ports {
            let port = &net.ports[p.idx()];
            if net.is_host(port.peer_node) {
                continue;
            }
            let t = net.switch_idx(port.peer_node);
            let nd = d + port.ser_time(CONTROL_FRAME) + port.delay;
            if nd < dist[t] {
                dist[t] = nd;
                heap.push(Reverse((nd, t)));
            }
        }
    }
    dist
}
