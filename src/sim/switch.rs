//! The switch pipeline of a run: a packet arriving at a switch is routed (load balancer,
//! pins, failures), admitted by the buffer (dropping or marking), queued and served by the
//! egress scheduler, with PFC pause frames and in-band telemetry. The parts themselves (port,
//! buffer, lb, routing) are in `net`; this file is their order.

use super::*;

impl Sim {
    pub(in crate::sim) fn switch_dequeue(&mut self, node: NodeId, p: PortId) -> Option<Packet> {
        let sw = self.net.switch_idx(node);
        let now = self.now;
        let port = &mut self.net.ports[p.idx()];
        let (q, mut pkt) = port.dequeue(now)?;
        if let Some(a) = &mut self.attrib {
            a.dequeue(
                pkt.uid,
                now,
                port.paused_acc(pkt.prio, now),
                p.idx(),
                pkt.prio,
            );
        }
        let mark = (port.ecn.at() == Some(MarkAt::Dequeue)).then(|| port.queues[q].bytes);
        self.egress(sw, p, &mut pkt, mark);
        Some(pkt)
    }

    /// What a packet leaving switch `sw` through egress `out` does, on both ways out (the
    /// queue and the idle-port fast path): it meets the queue it leaves for ECN when `mark`
    /// holds that queue's bytes, and its buffer is released, which may resume its ingress by
    /// PFC.
    #[inline(always)]
    pub(in crate::sim) fn egress(
        &mut self,
        sw: usize,
        out: PortId,
        pkt: &mut Packet,
        mark: Option<u64>,
    ) {
        if let Some(qb) = mark {
            let rng = &mut self.net.switches[sw].rng;
            self.net.ports[out.idx()].maybe_mark(pkt, qb, rng);
        }
        if self.telemetry.is_some() {
            self.stamp(out, pkt);
        }
        self.release(sw, pkt.in_port, out, pkt.prio, pkt.size as u32);
    }

    /// In-band telemetry: a data packet leaving egress `out` collects the port's state.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn stamp(&mut self, out: PortId, pkt: &Packet) {
        if let Some(tm) = &mut self.telemetry
            && pkt.is_data()
        {
            let port = &self.net.ports[out.idx()];
            let hop = crate::net::int::IntHop {
                time: self.now,
                tx_bytes: port.stats.tx_bytes,
                qlen: port.total_bytes,
                rate_bps: port.rate.bps(),
            };
            tm.push(pkt, hop);
        }
    }

    /// Frees the telemetry slot `pkt` carries (runs with telemetry).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn release_telemetry(&mut self, pkt: &Packet) {
        if let Some(tm) = &mut self.telemetry {
            tm.release(pkt);
        }
    }

    /// Gives a data packet a telemetry slot (runs with telemetry).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn attach_telemetry(&mut self, pkt: &mut Packet) {
        if let Some(tm) = &mut self.telemetry {
            tm.attach(pkt);
        }
    }

    /// Returns `bytes` of priority `prio` that came in through `inp` and were held for egress
    /// `out` to switch `sw`'s buffer; a PFC resume goes upstream when the ingress drops below
    /// its threshold.
    #[inline(always)]
    pub(in crate::sim) fn release(
        &mut self,
        sw: usize,
        inp: PortId,
        out: PortId,
        prio: u8,
        bytes: u32,
    ) {
        let (il, ol) = (
            self.net.local[inp.idx()] as usize,
            self.net.local[out.idx()] as usize,
        );
        let switch = &mut self.net.switches[sw];
        if switch.mmu.release(il, ol, prio, bytes) {
            switch.pfc_sent += 1;
            self.send_pfc(inp, prio, false);
        }
    }

    /// Sends a PFC frame out of switch port `in_port` to the port feeding it.
    pub(in crate::sim) fn send_pfc(&mut self, in_port: PortId, prio: u8, pause: bool) {
        let port = &self.net.ports[in_port.idx()];
        let at = self.now + port.ser_time(self.pfc_frame) + port.delay;
        let (upstream, node) = (port.peer, port.peer_node);
        self.push_to(
            node,
            at,
            Ev::Pfc {
                port: upstream,
                prio,
                pause,
            },
        );
    }

    pub(in crate::sim) fn on_pfc(&mut self, port: PortId, prio: u8, pause: bool) {
        let now = self.now;
        let changed = self.net.ports[port.idx()].set_paused(prio, pause, now);
        if changed && let Some(a) = &mut self.attrib {
            let pt = &self.net.ports[port.idx()];
            if self.net.is_host(pt.node) {
                a.nic_pause(self.net.slot(pt.node.idx(), port), pt.paused != 0, now);
            }
        }
        if changed && !pause {
            self.kick(port);
        }
    }

    pub(in crate::sim) fn on_arrive(&mut self, p: PortId) {
        if self.failing && self.stale_arrival(p) {
            return;
        }
        let port = &mut self.net.ports[p.idx()];
        let InFlight { pkt, .. } = port.wire.pop_front().expect("arrival with an empty wire");
        port.wire_bytes -= pkt.size as u64;
        if let Some(w) = port.wire.front() {
            // The wire holds the last packets sent over the link, the head the oldest.
            let (t, index) = (w.at, port.stats.tx_pkts - port.wire.len() as u64);
            self.ev.push_arrival(t, p, index);
        }
        let ingress = port.peer;
        let node = port.peer_node;
        if self.failing && self.lost_on_wire(p, &pkt) {
            return;
        }
        if self.net.is_host(node) {
            self.host_receive(pkt);
        } else {
            self.switch_receive(node, ingress, pkt);
        }
    }

    pub(in crate::sim) fn switch_receive(&mut self, node: NodeId, inp: PortId, mut pkt: Packet) {
        let sw = self.net.switch_idx(node);
        let now = self.now;
        let detour = self.detour;
        let pinned = if detour {
            match self.detour_port(node, inp, &mut pkt) {
                Detour::Pinned(out) => Some(out),
                Detour::Route => None,
                Detour::Lost => return,
            }
        } else {
            None
        };
        let net = &mut self.net;
        let switch = &mut net.switches[sw];
        let out = match pinned {
            Some(out) => out,
            None => {
                let cands = net.routes.next_hops(node, pkt.dst);
                debug_assert!(!cands.is_empty(), "no route at {node} to host {}", pkt.dst);
                switch
                    .lb
                    .choose(cands, &mut pkt, &net.ports, now, &mut switch.rng)
            }
        };
        pkt.in_port = inp;
        if detour && net.ports[out.idx()].down {
            // Routes still point at a failed link (before they converge).
            self.count_drop(sw, out, &pkt, false);
            return;
        }
        let prio = pkt.prio;
        let (il, ol) = (net.local[inp.idx()] as usize, net.local[out.idx()] as usize);
        match switch.mmu.admit(il, ol, prio, pkt.size as u32) {
            crate::net::buffer::Admit::Drop { lossless } => {
                if !self.make_room(sw, out, inp, &pkt, lossless) {
                    return;
                }
            }
            crate::net::buffer::Admit::Accept { xoff } => {
                if xoff {
                    switch.pfc_sent += 1;
                    self.send_pfc(inp, prio, true);
                }
            }
        }
        let now = self.now;
        let port = &mut self.net.ports[out.idx()];
        if port.total_bytes == 0
            && !port.txdone_pending
            && port.busy_until <= now
            && port.paused & (1 << prio) == 0
        {
            // Fast path: the egress is idle and empty, so the packet would be enqueued and
            // dequeued at once. Same effects without the queue round trip: it is counted in
            // the peak occupancy, meets an empty queue for ECN (either marking point), and
            // leaves the buffer as it starts transmission.
            port.stats.max_qbytes = port.stats.max_qbytes.max(pkt.size as u64);
            let mark = port.ecn.at().map(|_| 0);
            self.egress(sw, out, &mut pkt, mark);
            self.transmit(out, &mut pkt, false);
            return;
        }
        if port.ecn.at() == Some(MarkAt::Enqueue) {
            let qb = port.queues[prio as usize].bytes;
            port.maybe_mark(&mut pkt, qb, &mut self.net.switches[sw].rng);
        }
        if let Some(a) = &mut self.attrib {
            a.enqueue(pkt.uid, now, port.paused_acc(prio, now), out.idx(), prio);
        }
        port.enqueue(prio as usize, pkt);
        self.kick(out);
    }

    /// `pkt` (from ingress `inp`) did not fit at egress `out` of switch `sw`. On a pFabric port,
    /// drop the queued packets of the largest rank while they rank below `pkt` until it fits;
    /// returns whether it was admitted (else it is counted as dropped).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn make_room(
        &mut self,
        sw: usize,
        out: PortId,
        inp: PortId,
        pkt: &Packet,
        lossless: bool,
    ) -> bool {
        let prio = pkt.prio;
        let (il, ol) = (
            self.net.local[inp.idx()] as usize,
            self.net.local[out.idx()] as usize,
        );
        let mut lossless = lossless;
        loop {
            let port = &self.net.ports[out.idx()];
            let victim = if matches!(port.sched, Scheduler::Pfabric) {
                port.pfabric_victim(prio as usize, pfabric_rank(pkt))
            } else {
                None
            };
            let Some(i) = victim else {
                self.count_drop(sw, out, pkt, lossless);
                return false;
            };
            let v = self.net.ports[out.idx()].remove_at(prio as usize, i);
            self.release(sw, v.in_port, out, prio, v.size as u32);
            self.count_drop(sw, out, &v, lossless);
            match self.net.switches[sw]
                .mmu
                .admit(il, ol, prio, pkt.size as u32)
            {
                crate::net::buffer::Admit::Drop { lossless: l } => lossless = l,
                crate::net::buffer::Admit::Accept { xoff } => {
                    if xoff {
                        self.net.switches[sw].pfc_sent += 1;
                        self.send_pfc(inp, prio, true);
                    }
                    return true;
                }
            }
        }
    }

    /// The port a pinned path (`[routing] pin`) sends `pkt` out of at `node`, if any.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn pinned_port(&self, node: NodeId, pkt: &Packet) -> Option<PortId> {
        let pins = self.pins.as_ref()?;
        pins.next(self.ext_id(pkt), pkt.is_data(), node)
    }

    /// The workload's id of the flow (or RDMA message) packet `pkt` belongs to.
    pub(in crate::sim) fn ext_id(&self, pkt: &Packet) -> u32 {
        match self.transport.messages() {
            Some(m) if self.msg_units => m[crate::transport::message_of(pkt)].ext_id,
            _ => self.flows[pkt.flow.idx()].ext_id,
        }
    }

    /// Placeholder records up to flow `f` (see [`Flow::placeholder`]).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn grow_flows(&mut self, f: FlowId) {
        let n = self.flows.len();
        self.flows
            .extend((n..=f.idx()).map(|i| Flow::placeholder(FlowId(i as u32))));
    }

    /// Counts packet `pkt` dropped at egress port `out` of switch `sw`.
    pub(in crate::sim) fn count_drop(
        &mut self,
        sw: usize,
        out: PortId,
        pkt: &Packet,
        lossless: bool,
    ) {
        self.net.switches[sw].drops[lossless as usize] += 1;
        self.account_drop(out, pkt);
    }

    /// Accounts packet `pkt` lost at port `p`, wherever it was lost: the port's and the flow's
    /// drop counters, byte conservation, the transport, telemetry and attribution.
    pub(in crate::sim) fn account_drop(&mut self, p: PortId, pkt: &Packet) {
        let port = &mut self.net.ports[p.idx()];
        port.stats.drops += 1;
        port.stats.drop_bytes += pkt.size as u64;
        self.cons.dropped_pkts += 1;
        self.cons.dropped_bytes += pkt.size as u64;
        if pkt.flow.idx() >= self.flows.len() {
            // A partitioned run: a connection another partition created (RDMA).
            self.grow_flows(pkt.flow);
        }
        self.flows[pkt.flow.idx()].stats.drops += 1;
        self.gone(pkt);
        self.transport.on_drop(pkt);
        if let Some(tm) = &mut self.telemetry {
            tm.release(pkt);
        }
        if let Some(a) = &mut self.attrib {
            let unit = attrib_unit(self.msg_units, pkt);
            a.lost(pkt.uid, unit, pkt.ts, self.ev.current_key(self.now));
        }
    }
}
