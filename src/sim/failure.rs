//! Link failures and repairs during a run: a failed link's wire and queues are flushed
//! (their packets counted as lost, by cause), routes are recomputed after the configured
//! convergence delay, and packets that meet a dead link meanwhile are detoured or dropped.
//! Not modelled: partial failures (loss rates, flapping below the event granularity).

use super::*;

impl Sim {
    /// Schedules a failure at `at` on `ports` (both directions of each link it touches);
    /// routes are recomputed `convergence` after each down or up.
    pub fn add_failure(
        &mut self,
        at: SimTime,
        ports: Vec<PortId>,
        kind: FailKind,
        convergence: SimTime,
    ) {
        self.failing = true;
        self.detour = true;
        self.convergence = convergence;
        if self.net.history.is_none() {
            self.net.history = Some(Box::new(crate::net::paths::NetHistory::new(&self.net)));
        }
        self.ev.push(at, Ev::Fail(self.failures.len() as u32));
        self.fail_at.push(at);
        self.fails_pending += 1;
        self.failures.push((ports, kind));
    }

    /// Failure `i` happens now.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn on_fail(&mut self, i: usize) {
        let (ports, kind) = self.failures[i].clone();
        if let Some(mut h) = self.net.history.take() {
            for &p in &ports {
                let port = &self.net.ports[p.idx()];
                let (rate, down) = match kind {
                    FailKind::Rate(r) => (r, port.down),
                    FailKind::Up => (port.rate, false),
                    FailKind::Down => (port.rate, true),
                };
                h.port_changes(&self.net, self.now, p, rate, down);
            }
            self.net.history = Some(h);
        }
        match kind {
            FailKind::Rate(r) => {
                for &p in &ports {
                    self.net.ports[p.idx()].set_rate(r);
                }
                return;
            }
            FailKind::Up => {
                for &p in &ports {
                    self.net.ports[p.idx()].down = false;
                }
                for &p in &ports {
                    self.kick(p);
                }
            }
            FailKind::Down => {
                for &p in &ports {
                    self.net.ports[p.idx()].down = true;
                }
                for &p in &ports {
                    self.flush_port(p);
                }
            }
        }
        self.ev.push(self.now + self.convergence, Ev::Reroute);
        self.reroutes_pending += 1;
    }

    /// Whether nothing left can finish (checked in runs with failures, every 2^16 events):
    /// no failure, recovery or reroute is pending, no flow is due to start (by arrival, or
    /// by a dependency already met), and every unit (flow, or message) that started and has
    /// not finished is between hosts that cannot reach each other any more
    /// ([`Network::reachable`]). Their senders would retransmit for ever.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn stranded(&self) -> bool {
        if self.stranded_pending(self.finished) {
            return false;
        }
        let mut reach = std::collections::HashMap::new();
        let mut cut = |src: u32, dst: u32| {
            !*reach
                .entry((src, dst))
                .or_insert_with(|| self.net.reachable(src, dst))
        };
        let mut any = false;
        if self.msg_units {
            let msgs = self.transport.messages().unwrap_or(&[]);
            for m in msgs.iter().filter(|m| {
                let o = m.order as usize;
                self.deps.message_started(o, self.next_start, self.n_static) && m.finish.is_none()
            }) {
                if !cut(m.src, m.dst) {
                    return false;
                }
                any = true;
            }
        } else {
            for f in self
                .flows
                .iter()
                .filter(|f| f.started && f.finish.is_none())
            {
                if !cut(f.src, f.dst) {
                    return false;
                }
                any = true;
            }
        }
        any
    }

    /// Whether something pending here may yet let a unit finish (a failure, recovery or
    /// reroute; a dependency's news or start; an arrival), or none is left to finish (of the
    /// run's `finished` units).
    pub(in crate::sim) fn stranded_pending(&self, finished: usize) -> bool {
        self.fails_pending > 0
            || self.reroutes_pending > 0
            || self.starts_pending > 0
            || self.arrivals_pending > 0
            || finished == self.total
            || (!self.draining && self.next_release() < SimTime::MAX)
    }

    /// Whether an `Arrive` event for port `p` now finds no packet due: the packets it was
    /// for were lost with their link (`[[failures]]`).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn stale_arrival(&self, p: PortId) -> bool {
        !matches!(self.net.ports[p.idx()].wire.front(), Some(w) if w.at == self.now)
    }

    /// Whether `pkt`, arriving over port `p`'s link, is lost to the link's random loss
    /// (counted).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn lost_on_wire(&mut self, p: PortId, pkt: &Packet) -> bool {
        let loss = self.net.ports[p.idx()].loss;
        if loss > 0.0 && self.loss_rngs[p.idx()].uniform() < loss {
            self.count_loss(p, pkt);
            return true;
        }
        false
    }

    /// A link went down under port `p`: its queued packets and those on its wire are lost.
    pub(in crate::sim) fn flush_port(&mut self, p: PortId) {
        let node = self.net.ports[p.idx()].node;
        let sw = (!self.net.is_host(node)).then(|| self.net.switch_idx(node));
        let port = &mut self.net.ports[p.idx()];
        let mut lost: Vec<Packet> = Vec::new();
        for q in 0..port.nq() {
            while let Some(pkt) = port.pop_queue(q) {
                lost.push(pkt);
            }
        }
        let queued = lost.len();
        // The wire's pending Arrive event will find no packet due and do nothing.
        while let Some(InFlight { pkt, .. }) = port.wire.pop_front() {
            port.wire_bytes -= pkt.size as u64;
            lost.push(pkt);
        }
        for (k, pkt) in lost.iter().enumerate() {
            match sw {
                Some(s) if k < queued => {
                    self.release(s, pkt.in_port, p, pkt.prio, pkt.size as u32);
                    self.count_drop(s, p, pkt, false);
                }
                _ => self.count_loss(p, pkt),
            }
        }
    }

    /// How `pkt` leaves switch `node` (in at `inp`) when the run has pinned paths or
    /// failures: its pinned port, the routes, or nowhere (`[[failures]]` left no route: the
    /// packet is counted lost).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn detour_port(
        &mut self,
        node: NodeId,
        inp: PortId,
        pkt: &mut Packet,
    ) -> Detour {
        if self.pins.is_some()
            && let Some(out) = self.pinned_port(node, pkt)
        {
            return Detour::Pinned(out);
        }
        if self.net.routes.next_hops(node, pkt.dst).is_empty() {
            pkt.in_port = inp;
            self.count_loss(inp, pkt);
            return Detour::Lost;
        }
        Detour::Route
    }

    /// Counts packet `pkt` lost at port `p` outside a switch's buffer (a host's queue or a
    /// wire cut by a failure).
    pub(in crate::sim) fn count_loss(&mut self, p: PortId, pkt: &Packet) {
        self.failure_losses += 1;
        self.account_drop(p, pkt);
    }
}
