//! The host NIC: which flow's packet goes next (strict priority over the control queue and
//! the ready flows, round robin within a priority, or per-priority FIFOs with `[nic] qdisc =
//! "fifo"`), and serialization onto the host's link, honouring PFC pauses from its leaf.

use super::window::Carried;
use super::*;

impl Sim {
    /// Serialization time of a packet of `size` bytes at port `p`.
    pub(in crate::sim) fn ser_at(&self, p: PortId, size: u16) -> SimTime {
        self.net.ports[p.idx()].ser_time(size as u32)
    }

    /// Makes sure port `p` is transmitting if it can.
    #[inline]
    pub(in crate::sim) fn kick(&mut self, p: PortId) {
        let port = &mut self.net.ports[p.idx()];
        if port.txdone_pending {
            return;
        }
        if port.busy_until > self.now {
            port.txdone_pending = true;
            let t = port.busy_until;
            self.ev.push(t, Ev::TxDone(p));
            return;
        }
        self.start_tx(p);
    }

    pub(in crate::sim) fn host_has_backlog(&self, h: usize, p: PortId) -> bool {
        let h = self.net.slot(h, p);
        let port = &self.net.ports[p.idx()];
        (0..port.nq()).any(|q| {
            (port.paused & (1 << q) == 0 && !port.queues[q].is_empty())
                || !self.ready[h][q].is_empty()
        }) || self
            .host_fifo
            .as_ref()
            .is_some_and(|x| x.queues[h].iter().any(|q| !q.is_empty()))
    }

    /// `[nic] qdisc = "fifo"`: flow `f` hands the host queue every packet its transport lets
    /// it send, up to the per-flow limit, and the NIC is kicked.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn fifo_fill(&mut self, f: FlowId) {
        let mut any = false;
        loop {
            let fifo = self.host_fifo.as_ref().expect("host FIFO");
            if fifo.queued.get(f.idx()).copied().unwrap_or(0) >= fifo.limit || !self.can_send(f) {
                break;
            }
            let Some(pkt) = self.emit(f) else {
                break;
            };
            let fl = &self.flows[f.idx()];
            let p = self.net.egress(fl.src, fl.dst, fl.sport, fl.dport);
            let (h, class) = (self.net.slot(fl.src as usize, p), fl.nic_class as usize);
            let fifo = self.host_fifo.as_mut().expect("host FIFO");
            if fifo.queued.len() <= f.idx() {
                fifo.queued.resize(f.idx() + 1, 0);
            }
            let first = fifo.queued[f.idx()] == 0;
            fifo.queued[f.idx()] += pkt.size as u64;
            fifo.queues[h][class].push_back(pkt);
            if first {
                self.note_wait(f, Some(self.now));
            }
            any = true;
        }
        if any && !self.in_pull {
            let fl = &self.flows[f.idx()];
            let p = self.net.egress(fl.src, fl.dst, fl.sport, fl.dport);
            self.kick(p);
        }
    }

    /// `[nic] qdisc = "fifo"`: the head of the host queue of the highest NIC class whose head
    /// is not paused; its flow may then queue more.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn fifo_pull(&mut self, h: usize, p: PortId) -> Option<Packet> {
        let paused = self.net.ports[p.idx()].paused;
        let fifo = self.host_fifo.as_mut().expect("host FIFO");
        let pkt = fifo.queues[h].iter_mut().find_map(|q| match q.front() {
            Some(x) if paused & (1 << x.prio) == 0 => q.pop_front(),
            _ => None,
        })?;
        fifo.queued[pkt.flow.idx()] -= pkt.size as u64;
        self.note_wait(pkt.flow, None);
        self.fifo_fill(pkt.flow);
        if self.host_fifo.as_ref().expect("host FIFO").queued[pkt.flow.idx()] > 0 {
            // Waiting again once its own packet has left.
            let at = self.now + self.ser_at(p, pkt.size);
            self.note_wait(pkt.flow, Some(at));
        }
        Some(pkt)
    }

    /// Starts transmitting the next packet on idle port `p`, if there is one.
    pub(in crate::sim) fn start_tx(&mut self, p: PortId) {
        debug_assert!(self.net.ports[p.idx()].busy_until <= self.now);
        let node = self.net.ports[p.idx()].node;
        let is_host = self.net.is_host(node);
        let pkt = if is_host {
            if self.failing && self.net.ports[p.idx()].down {
                // A host's cut link sends nothing (a switch's down port holds nothing).
                return;
            }
            debug_assert!(!self.in_pull, "re-entrant host NIC pull at {p}");
            self.in_pull = true;
            let pkt = self.host_pull(node.idx(), p);
            self.in_pull = false;
            pkt
        } else {
            self.switch_dequeue(node, p)
        };
        let Some(pkt) = pkt else {
            return;
        };
        let mut pkt = pkt;
        self.transmit(p, &mut pkt, is_host);
    }

    /// Puts `pkt` on the wire of idle port `p` and schedules what follows.
    #[inline]
    pub(in crate::sim) fn transmit(&mut self, p: PortId, pkt: &mut Packet, is_host: bool) {
        let now = self.now;
        // Attribution of a multi-homed host's port: its transmit slot.
        let slot = match self.observed && is_host && self.net.multi_homed() {
            true => Some(self.net.slot(self.net.ports[p.idx()].node.idx(), p)),
            false => None,
        };
        let port = &mut self.net.ports[p.idx()];
        let ser = port.ser_time(pkt.size as u32);
        if self.observed {
            if let Some(a) = &mut self.attrib {
                if is_host {
                    let unit = attrib_unit(self.msg_units, pkt);
                    let slot = slot.unwrap_or(port.node.idx());
                    pkt.uid = a.nic_tx(slot, now, ser, unit, pkt.uid);
                } else {
                    a.switch_tx(p.idx(), pkt.prio, now, ser);
                }
                a.hop(pkt.uid, ser, port.delay);
            }
            if let Some(w) = &mut self.pcap {
                w.capture(now, self.ev.current_key(now).1, port.node.idx(), pkt);
            }
        }
        port.busy_until = now + ser;
        let arrive = port.busy_until + port.delay;
        match &mut self.part {
            Some(part) if !part.owns(port.peer_node) => {
                // The far end is another partition's: the packet goes to its wire there, with
                // its telemetry and attribution records.
                let carried = Carried {
                    int: self
                        .telemetry
                        .as_mut()
                        .and_then(|t| t.take(pkt))
                        .map(Box::new),
                    trace: self.attrib.as_mut().and_then(|a| a.take_trace(pkt.uid)),
                };
                part.send_packet(p, arrive, port.stats.tx_pkts, *pkt, port.peer_node, carried);
            }
            _ => {
                if port.wire.is_empty() {
                    self.ev.push_arrival(arrive, p, port.stats.tx_pkts);
                }
                port.wire.push_back(InFlight {
                    at: arrive,
                    pkt: *pkt,
                });
                port.wire_bytes += pkt.size as u64;
            }
        }
        port.stats.tx_pkts += 1;
        port.stats.tx_bytes += pkt.size as u64;
        port.stats.busy_ps += ser.0;
        self.packet_hops += 1;
        if is_host {
            self.cons.sent_pkts += 1;
            self.cons.sent_bytes += pkt.size as u64;
        }
        let backlog = if is_host {
            self.host_has_backlog(port_node_idx(&self.net, p), p)
        } else {
            self.net.ports[p.idx()].has_eligible()
        };
        if backlog {
            let port = &mut self.net.ports[p.idx()];
            port.txdone_pending = true;
            let t = port.busy_until;
            self.ev.push(t, Ev::TxDone(p));
        }
    }

    /// The next packet host `h`'s NIC sends: control packets, then ready flows, by priority.
    pub(in crate::sim) fn host_pull(&mut self, h: usize, p: PortId) -> Option<Packet> {
        // The port's own queues: a multi-homed host's ports send independently.
        let h = self.net.slot(h, p);
        let nq = self.net.ports[p.idx()].nq();
        // Control packets first, by priority.
        for q in 0..nq {
            let port = &mut self.net.ports[p.idx()];
            if port.paused & (1 << q) == 0
                && let Some(pkt) = port.pop_queue(q)
            {
                return Some(pkt);
            }
        }
        if self.host_fifo.is_some() {
            return self.fifo_pull(h, p);
        }
        // Then ready flows by NIC class, round robin one packet at a time within a class (pFabric:
        // the flow of the smallest rank first). A flow whose next packet's priority is paused
        // by PFC waits (head-of-line in its flow).
        for c in 0..nq {
            let pick = match self.nic_rank {
                Some(kind) => Some(NicPick::Rank(kind)),
                None => self.nic_rr_last.is_some().then_some(NicPick::Index),
            };
            if let Some(pick) = pick {
                if let Some(pkt) = self.pull_by_key(h, p, c, pick) {
                    return Some(pkt);
                }
                continue;
            }
            for _ in 0..self.ready[h][c].len() {
                let Some(f) = self.ready[h][c].pop_front() else {
                    break;
                };
                self.flows[f.idx()].in_ready = false;
                let paused = self.net.ports[p.idx()].paused;
                if paused != 0
                    && let Some(wp) = self.next_wire_prio(f)
                    && paused & (1 << wp) != 0
                {
                    self.flows[f.idx()].in_ready = true;
                    self.ready[h][c].push_back(f);
                    continue;
                }
                if let Some(pkt) = self.emit(f) {
                    let again = self.can_send(f);
                    if again {
                        self.flows[f.idx()].in_ready = true;
                        self.ready[h][c].push_back(f);
                    }
                    if self.observed {
                        self.served_wait(f, p, &pkt, again);
                    }
                    return Some(pkt);
                }
                if self.observed {
                    self.note_wait(f, None);
                }
            }
        }
        None
    }

    /// The next packet of the ready flow of class `c` that `pick` puts first (the first in
    /// ready order on ties), skipping flows whose next packet's priority is paused: pFabric's
    /// NIC (smallest rank) or `[nic] order = "index"` (the smallest index after the last one
    /// served, wrapping, as the HPCC ns-3 simulator's NIC round-robins over its queue pairs).
    #[inline(never)]
    pub(in crate::sim) fn pull_by_key(
        &mut self,
        h: usize,
        p: PortId,
        c: usize,
        pick: NicPick,
    ) -> Option<Packet> {
        let paused = self.net.ports[p.idx()].paused;
        loop {
            let last = match (pick, &self.nic_rr_last) {
                (NicPick::Index, Some(l)) => l[h][c],
                _ => 0,
            };
            let mut best: Option<(usize, u64)> = None;
            for (i, &f) in self.ready[h][c].iter().enumerate() {
                let fl = &self.flows[f.idx()];
                if paused != 0
                    && let Some(wp) = self.transport.next_prio(f, fl)
                    && paused & (1 << wp) != 0
                {
                    continue;
                }
                let key = match pick {
                    NicPick::Rank(kind) => self.transport.rank(f, fl, kind),
                    // Indices after `last` first, then the others, each ascending.
                    NicPick::Index => f.0.wrapping_sub(last.wrapping_add(1)) as u64,
                };
                if best.is_none_or(|(_, b)| key < b) {
                    best = Some((i, key));
                }
            }
            let (i, _) = best?;
            let f = self.ready[h][c]
                .remove(i)
                .expect("index within the ready list");
            self.flows[f.idx()].in_ready = false;
            if let Some(pkt) = self.emit_outlined(f) {
                if let (NicPick::Index, Some(l)) = (pick, &mut self.nic_rr_last) {
                    l[h][c] = f.0;
                }
                let again = self.can_send(f);
                if again {
                    self.flows[f.idx()].in_ready = true;
                    self.ready[h][c].push_back(f);
                }
                self.served_wait(f, p, &pkt, again);
                return Some(pkt);
            }
            self.note_wait(f, None);
        }
    }

    /// Delay attribution: the NIC took `pkt` of flow `f` now; the flow waits again once the
    /// packet has left if it is still ready (`again`).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn served_wait(&mut self, f: FlowId, p: PortId, pkt: &Packet, again: bool) {
        let from = again.then(|| self.now + self.ser_at(p, pkt.size));
        self.note_wait(f, from);
    }

    /// Wire priority of flow `f`'s next packet.
    pub(in crate::sim) fn next_wire_prio(&mut self, f: FlowId) -> Option<u8> {
        self.transport.next_prio(f, &self.flows[f.idx()])
    }
}
