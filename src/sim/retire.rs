//! A flow's life at its hosts: release (start time or dependencies met), opening its
//! transport state (a flow, or an RDMA message on a queue pair), completion, and retiring
//! finished flows so that a run's memory follows the flows in progress, not all of them.

use super::*;

impl Sim {
    /// A unit (flow, or RDMA message) that waited for a join starts now.
    #[inline(never)]
    pub(in crate::sim) fn start_unit(&mut self, u: usize) {
        if self.draining {
            return;
        }
        self.started += 1;
        let now = self.now;
        if self.msg_units {
            let n_static = self.n_static;
            self.deps.mark_started(u, n_static);
            let src = self.transport.start_message(u as u32, now);
            if let Some(a) = &mut self.attrib {
                a.unit_start(u, src as usize, now);
            }
            let (t, mut h) = self.host();
            t.on_message(u as u32, &mut h);
            self.flush_wakes();
            return;
        }
        let f = FlowId(u as u32);
        let fl = &mut self.flows[f.idx()];
        fl.start = now;
        fl.deadline = fl.rel_deadline.map(|d| now + d);
        fl.started = true;
        if let Some(a) = &mut self.attrib {
            a.unit_start(f.idx(), fl.src as usize, now);
        }
        self.make_ready(f);
    }

    /// Retiring mode: the record of arrival `i` in a free slot (or a new one), with fresh
    /// transport and attribution state.
    pub(in crate::sim) fn open_flow(&mut self, i: usize) -> FlowId {
        let r = self.retire.as_mut().expect("retiring mode");
        let slot = r.free.pop().unwrap_or(self.flows.len() as u32);
        let f = FlowId(slot);
        let spec = self.next_spec(i);
        let prio = spec.prio.unwrap_or(self.data_prio);
        let mut fl = Flow::new(f, &spec, prio, self.ack_prio);
        fl.order = i as u32;
        let line = self.net.ports[self.net.egress(fl.src, fl.dst, fl.sport, fl.dport).idx()].rate;
        self.transport.open(f, &fl, line);
        if let Some(a) = &mut self.attrib {
            a.clear_unit(f.idx());
        }
        if f.idx() == self.flows.len() {
            self.flows.push(fl);
        } else {
            let old = &self.flows[f.idx()];
            fl.timer = old.timer.successor();
            fl.pace = old.pace.successor();
            self.flows[f.idx()] = fl;
        }
        f
    }

    /// Retiring mode: the spec of arrival `i`, the next one due.
    pub(in crate::sim) fn next_spec(&mut self, i: usize) -> FlowSpec {
        if self.stream.is_none() {
            return self.specs[i].clone();
        }
        // Read ahead when its start was pushed; arrivals of one instant start in key order.
        let spec = self.start_buf[i - self.start_buf_base]
            .take()
            .expect("an arrival starts once");
        while let Some(None) = self.start_buf.front() {
            self.start_buf.pop_front();
            self.start_buf_base += 1;
        }
        spec
    }

    /// Retiring mode, RDMA: message arrival `i` in a free slot (or a new one), which its
    /// connection will take, with fresh attribution state. Returns the slot and the source.
    pub(in crate::sim) fn open_message(&mut self, i: usize) -> (u32, u32) {
        let spec = self.next_spec(i);
        let r = self.retire.as_mut().expect("retiring mode");
        let n = self.transport.messages().map_or(0, |m| m.len());
        let slot = r.free.pop().unwrap_or(n as u32);
        match &mut self.msg_in_net {
            // Its queue pairs carry other messages: its data packets are counted.
            Some(c) if slot as usize == c.len() => c.push(0),
            Some(_) => {}
            // A queue pair of its own, created in the same slot.
            None => r.slot = Some(slot),
        }
        self.transport.open_message(slot, &spec, i as u32);
        if let Some(a) = &mut self.attrib {
            a.clear_unit(slot as usize);
        }
        (slot, spec.src)
    }

    /// Retiring mode: releases every finished flow of which nothing is left (see [`Retire`]).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn retire_scan(&mut self) {
        let mut r = self.retire.take().expect("retiring mode");
        let mut pending = std::mem::take(&mut r.pending);
        pending.retain(|&f| {
            let left = match &self.msg_in_net {
                // A message whose queue pairs carry others: released once none of its data
                // packets is left (it has finished, so none is made any more).
                Some(c) => c[f.idx()] > 0,
                None => {
                    let fl = &self.flows[f.idx()];
                    debug_assert!(self.msg_units || fl.done(), "only finished flows retire");
                    // Timers cancelled are enough: an event they left queued finds the next
                    // occupant's timers (their generations continue) stale, as it would find
                    // these idle; either way nothing happens.
                    fl.in_net > 0 || fl.in_ready || fl.timer.armed() || fl.pace.armed()
                }
            };
            if left {
                return true;
            }
            r.out.push(Retired {
                flow: self
                    .msg_in_net
                    .is_none()
                    .then(|| self.flows[f.idx()].clone()),
                tcp: self.transport.tcp(f),
                attribution: self.attrib.as_mut().and_then(|a| a.take_result(f.idx())),
                msg: self.transport.release_message(f.0),
            });
            r.free.push(f.0);
            false
        });
        r.scanned = pending.len();
        r.pending = pending;
        self.retire = Some(r);
    }

    /// Retiring mode: the flows released since the last call, to record (empty otherwise).
    pub fn take_retired(&mut self) -> Vec<Retired> {
        match &mut self.retire {
            Some(r) => std::mem::take(&mut r.out),
            None => Vec::new(),
        }
    }

    /// At the end of the run: the streamed workload's file was not changed while the run
    /// read it (see [`crate::workload::FlowStream::finish`]); if it was, the run's results
    /// would be wrong.
    pub fn finish_stream(&mut self) -> Result<(), String> {
        match &mut self.stream {
            Some(st) => {
                let (_, s, c) = &mut **st;
                s.finish(c)
            }
            None => Ok(()),
        }
    }

    /// Whether the run releases flows as they finish (`Retire`).
    pub fn retiring(&self) -> bool {
        self.retire.is_some()
    }

    /// The flows of the run still held: every flow, or in retiring mode the ones not
    /// released, then those not started yet (new records, not in any slot).
    pub fn held_flows(&self) -> Vec<Flow> {
        let Some(r) = &self.retire else {
            return self.flows.clone();
        };
        let free = free_slots(r, self.flows.len());
        let mut v: Vec<Flow> = self
            .flows
            .iter()
            .zip(&free)
            .filter(|(_, free)| !**free)
            .map(|(f, _)| f.clone())
            .collect();
        for (i, spec) in self.unstarted() {
            let prio = spec.prio.unwrap_or(self.data_prio);
            let mut fl = Flow::new(FlowId(u32::MAX), &spec, prio, self.ack_prio);
            fl.order = i as u32;
            v.push(fl);
        }
        v
    }

    /// Retiring mode: the arrivals not started yet, with their places in the arrival order.
    pub(in crate::sim) fn unstarted(&self) -> Vec<(usize, FlowSpec)> {
        let specs: Vec<FlowSpec> = match &self.stream {
            Some(st) => st.0.iter().cloned().chain(st.1.rest()).collect(),
            None => self.specs[self.next_start.min(self.specs.len())..].to_vec(),
        };
        // Starts pushed but not handled (the run ended first).
        let buffered = (self.start_buf_base..)
            .zip(&self.start_buf)
            .filter_map(|(i, s)| s.clone().map(|s| (i, s)));
        buffered.chain((self.next_start..).zip(specs)).collect()
    }

    /// Retiring mode, RDMA: the messages still held, by slot (None: not started yet, a new
    /// record), in no particular order.
    pub fn held_messages(&self) -> Vec<(Option<u32>, crate::transport::Msg)> {
        let (Some(r), Some(msgs)) = (&self.retire, self.transport.messages()) else {
            return Vec::new();
        };
        let free = free_slots(r, msgs.len());
        let mut v: Vec<_> = (0..msgs.len())
            .filter(|&i| !free[i])
            .map(|i| (Some(i as u32), msgs[i].clone()))
            .collect();
        for (i, spec) in self.unstarted() {
            let m = self.transport.unstarted_message(&spec, i as u32);
            v.push((None, m.expect("an RDMA run")));
        }
        v
    }

    /// Puts `f` in its host's ready list if it can send, and kicks the NIC.
    pub(in crate::sim) fn make_ready(&mut self, f: FlowId) {
        if self.host_fifo.is_some() {
            self.fifo_fill(f);
            return;
        }
        if self.flows[f.idx()].in_ready || !self.can_send(f) {
            return;
        }
        let fl = &mut self.flows[f.idx()];
        fl.in_ready = true;
        let (h, class) = (fl.src, fl.nic_class);
        let p = self.net.egress(h, fl.dst, fl.sport, fl.dport);
        self.ready[self.net.slot(h as usize, p)][class as usize].push_back(f);
        self.note_wait(f, Some(self.now));
        self.kick(p);
    }

    /// Delay attribution of flows: flow `f` stops waiting for its NIC now, and waits again
    /// from `from` (None: it does not).
    #[inline(always)]
    pub(in crate::sim) fn note_wait(&mut self, f: FlowId, from: Option<SimTime>) {
        if self.observed
            && !self.msg_units
            && let Some(a) = &mut self.attrib
        {
            a.wait(f.idx(), from, self.now);
        }
    }
}

/// Which of `n` slots are free (released and not taken again).
pub(in crate::sim) fn free_slots(r: &Retire, n: usize) -> Vec<bool> {
    let mut free = vec![false; n];
    for &s in &r.free {
        free[s as usize] = true;
    }
    free
}
