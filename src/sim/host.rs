//! The host side the transports see: emitting packets, timers and pacing, delivering
//! packets to a flow's receiver or sender half, and the [`Host`] services (`SimHost`) a
//! transport calls back into.

use super::*;

impl Sim {
    /// [`emit`](Self::emit) kept out of line, for the rarely used callers.
    #[inline(never)]
    pub(in crate::sim) fn emit_outlined(&mut self, f: FlowId) -> Option<Packet> {
        self.emit(f)
    }

    /// Asks flow `f` for its next packet.
    #[inline(always)]
    pub(in crate::sim) fn emit(&mut self, f: FlowId) -> Option<Packet> {
        let fl = &self.flows[f.idx()];
        if fl.done() || !fl.started {
            return None;
        }
        let mut pkt = fl.data_packet(self.now);
        let (t, mut h) = self.host();
        let sent = t.emit(f, &mut h, &mut pkt);
        debug_assert!(
            self.wake.is_empty(),
            "a transport woke a flow while sending"
        );
        if sent && self.telemetry.is_some() {
            self.attach_telemetry(&mut pkt);
        }
        if sent {
            let fl = &mut self.flows[f.idx()];
            fl.in_net = fl.in_net.wrapping_add(1);
            if let Some(c) = &mut self.msg_in_net {
                debug_assert!(pkt.is_data(), "a transport emits data packets");
                c[crate::transport::message_of(&pkt)] += 1;
            }
        }
        sent.then_some(pkt)
    }

    /// Whether flow `f` may hand a packet to the NIC now: started, unfinished, not held back
    /// by pacing, and with data its transport lets it send.
    #[inline(always)]
    pub(in crate::sim) fn can_send(&self, f: FlowId) -> bool {
        let fl = &self.flows[f.idx()];
        !fl.pace.armed() && fl.finish.is_none() && fl.started && self.transport.has_data(f, fl)
    }

    /// The transport and the services the simulator lends it for one call.
    #[inline(always)]
    pub(in crate::sim) fn host(&mut self) -> (&mut Transport, SimHost<'_>) {
        (
            &mut self.transport,
            SimHost {
                now: self.now,
                ev: &mut self.ev,
                flows: &mut self.flows,
                net: &self.net,
                wake: &mut self.wake,
                attrib: &mut self.attrib,
                finished: &mut self.finished,
                retire: &mut self.retire,
                tag_finished: &mut self.tag_finished,
                end_tag: self.end_tag,
                telemetry: &self.telemetry,
            },
        )
    }

    /// Makes ready the flows the transport woke during its last call, in order.
    pub(in crate::sim) fn flush_wakes(&mut self) {
        if self.wake.is_empty() {
            return;
        }
        let w = std::mem::take(&mut self.wake);
        for &f in &w {
            self.make_ready(f);
        }
        debug_assert!(
            self.wake.is_empty(),
            "a flow woke another while being made ready"
        );
        self.wake = w;
        self.wake.clear();
    }

    /// Flow `f`'s pacing gap (event generation `generation`) ended: it may send again, unless
    /// its transport holds it back longer.
    pub(in crate::sim) fn on_pace(&mut self, f: FlowId, generation: u32) {
        let fl = &mut self.flows[f.idx()];
        match fl.pace.fire(generation, self.now) {
            Fired::Stale | Fired::Idle => return,
            Fired::Later(d) => {
                set_pace(&mut self.ev, fl, f, d);
                return;
            }
            Fired::Due => fl.pace.cancel(),
        }
        let (t, mut h) = self.host();
        if !t.on_pace(f, &mut h) {
            return;
        }
        self.make_ready(f);
    }

    /// Flow `f`'s retransmission timer (event generation `generation`) fired.
    pub(in crate::sim) fn on_timer(&mut self, f: FlowId, generation: u32) {
        let fl = &mut self.flows[f.idx()];
        match fl.timer.fire(generation, self.now) {
            Fired::Stale | Fired::Idle => return,
            _ if fl.done() => return,
            Fired::Later(d) => {
                set_timer(&mut self.ev, fl, f, d);
                return;
            }
            Fired::Due => fl.timer.cancel(),
        }
        let (t, mut h) = self.host();
        t.on_timer(f, &mut h);
        self.make_ready(f);
    }

    #[inline(never)]
    pub(in crate::sim) fn host_receive(&mut self, pkt: Packet) {
        self.cons.delivered_pkts += 1;
        self.cons.delivered_bytes += pkt.size as u64;
        if pkt.is_data() {
            let (t, mut h) = self.host();
            let rx = t.on_data(&mut h, &pkt);
            if rx.reply.is_none() && self.telemetry.is_some() {
                self.release_telemetry(&pkt);
            }
            if let Some(mut ctl) = rx.reply {
                let fl = &mut self.flows[ctl.flow.idx()];
                fl.in_net = fl.in_net.wrapping_add(1);
                if let Some(c) = &mut self.msg_in_net {
                    // A reply names its message too: the message is not released (and its
                    // slot not reused) while the reply is in the network.
                    c[crate::transport::message_of(&ctl)] += 1;
                }
                if let Some(a) = &mut self.attrib {
                    ctl.uid = a.ack_for(pkt.uid, self.now);
                }
                let hp = self.net.egress(ctl.src, ctl.dst, ctl.sport, ctl.dport);
                self.send_control(hp, ctl);
            }
            if rx.received {
                let u = match self.msg_units {
                    true => crate::transport::message_of(&pkt),
                    false => pkt.flow.idx(),
                };
                self.on_received(u);
            }
        } else {
            let (t, mut h) = self.host();
            let wake = t.on_control(&mut h, &pkt);
            if self.telemetry.is_some() {
                self.release_telemetry(&pkt);
            }
            self.flush_wakes();
            if wake {
                self.make_ready(pkt.flow);
            }
        }
        if let Some(a) = &mut self.attrib {
            a.release(pkt.uid);
        }
        self.gone(&pkt);
    }

    /// Packet `pkt` left the network (delivered or lost): one fewer of its flow's.
    #[inline(always)]
    pub(in crate::sim) fn gone(&mut self, pkt: &Packet) {
        let fl = &mut self.flows[pkt.flow.idx()];
        debug_assert!(
            self.retire.is_none() || fl.in_net > 0,
            "flow {} lost more packets than it had",
            fl.ext_id
        );
        fl.in_net = fl.in_net.wrapping_sub(1);
        if let Some(c) = &mut self.msg_in_net {
            c[crate::transport::message_of(pkt)] -= 1;
        }
    }

    /// Hands a control packet (ACK) to host NIC `hp`: straight onto the wire when the NIC is
    /// idle (then nothing else is waiting at a priority that is not paused, so strict priority
    /// would pick it anyway), else into its priority queue.
    pub(in crate::sim) fn send_control(&mut self, hp: PortId, pkt: Packet) {
        let now = self.now;
        let port = &mut self.net.ports[hp.idx()];
        if !port.txdone_pending && port.busy_until <= now && port.paused & (1 << pkt.prio) == 0 {
            let mut pkt = pkt;
            self.transmit(hp, &mut pkt, true);
        } else {
            port.enqueue(pkt.prio as usize, pkt);
            self.kick(hp);
        }
    }
}

/// Arms flow `f`'s retransmission timer for `deadline`: one pending event per flow, moved
/// earlier when needed; a later deadline is picked up when the pending event fires.
#[inline]
pub(in crate::sim) fn set_timer(
    ev: &mut sched::Schedule,
    fl: &mut Flow,
    f: FlowId,
    deadline: SimTime,
) {
    if let Some(g) = fl.timer.arm(deadline) {
        ev.push(deadline, Ev::Timer(f, g));
    }
}

/// Holds flow `f` back until `at` (the same scheme as [`set_timer`], for pacing).
#[inline]
pub(in crate::sim) fn set_pace(ev: &mut sched::Schedule, fl: &mut Flow, f: FlowId, at: SimTime) {
    if let Some(g) = fl.pace.arm(at) {
        ev.push(at, Ev::Pace(f, g));
    }
}

/// The services the simulator lends the transport during one call (see [`Host`]): disjoint
/// borrows of the simulator's state, built per call.
pub(in crate::sim) struct SimHost<'a> {
    now: SimTime,
    ev: &'a mut sched::Schedule,
    flows: &'a mut Vec<Flow>,
    net: &'a Network,
    wake: &'a mut Vec<FlowId>,
    attrib: &'a mut Option<Box<attrib::Attrib>>,
    finished: &'a mut usize,
    retire: &'a mut Option<Box<Retire>>,
    tag_finished: &'a mut usize,
    end_tag: Option<crate::workload::FlowTag>,
    telemetry: &'a Option<telemetry::Telemetry>,
}

impl Host for SimHost<'_> {
    #[inline(always)]
    fn now(&self) -> SimTime {
        self.now
    }
    #[inline(always)]
    fn flow(&self, f: FlowId) -> &Flow {
        &self.flows[f.idx()]
    }
    #[inline(always)]
    fn flow_mut(&mut self, f: FlowId) -> &mut Flow {
        &mut self.flows[f.idx()]
    }
    #[inline(always)]
    fn set_timer(&mut self, f: FlowId, at: SimTime) {
        set_timer(self.ev, &mut self.flows[f.idx()], f, at);
    }
    #[inline(always)]
    fn clear_timer(&mut self, f: FlowId) {
        self.flows[f.idx()].timer.cancel();
    }
    #[inline(always)]
    fn timer_armed(&self, f: FlowId) -> bool {
        self.flows[f.idx()].timer.armed()
    }
    #[inline(always)]
    fn set_pace(&mut self, f: FlowId, at: SimTime) {
        set_pace(self.ev, &mut self.flows[f.idx()], f, at);
    }
    fn wake(&mut self, f: FlowId) {
        self.wake.push(f);
    }
    fn finished(
        &mut self,
        unit: usize,
        uid: u32,
        receiver_side: bool,
        tag: crate::workload::FlowTag,
    ) {
        if let Some(a) = self.attrib {
            let key = self.ev.current_key(self.now);
            a.finish(unit, uid, self.now, receiver_side, key);
        }
        *self.finished += 1;
        if let Some(r) = self.retire {
            r.pending.push(FlowId(unit as u32));
        }
        // RDMA messages count too (they were left out, so `end_when` never ended an RDMA run).
        if Some(tag) == self.end_tag {
            *self.tag_finished += 1;
        }
    }
    #[inline]
    fn line_rate(&self, src: u32, dst: u32, sport: u16, dport: u16) -> BitRate {
        self.net.ports[self.net.egress(src, dst, sport, dport).idx()].rate
    }
    fn uplink_for(&self, src: u32, dst: u32, proto: u8, sport: u16, dport: u16) -> (usize, usize) {
        let net = self.net;
        let tor = net.ports[net.egress(src, dst, sport, dport).idx()].peer_node;
        if net.is_host(tor) {
            return (0, 1);
        }
        let n = net.routes.next_hops(tor, dst).len();
        if n <= 1 {
            return (0, 1);
        }
        let salt = net.switches[net.switch_idx(tor)].lb.salt;
        (
            crate::net::lb::ecmp_index(src, dst, proto, sport, dport, salt, n),
            n,
        )
    }
    fn telemetry(&self, pkt: &Packet) -> crate::net::int::IntStack {
        self.telemetry
            .as_ref()
            .map_or_else(Default::default, |t| t.get(pkt))
    }
    fn add_flow_at(&mut self, id: FlowId, mut flow: Flow) {
        if id.idx() >= self.flows.len() {
            let n = self.flows.len();
            self.flows
                .extend((n..=id.idx()).map(|i| Flow::placeholder(FlowId(i as u32))));
        }
        flow.id = id;
        self.flows[id.idx()] = flow;
    }
    fn add_flow(&mut self, mut flow: Flow) -> FlowId {
        // A retiring run's new connection takes its message's slot.
        match self.retire.as_mut().and_then(|r| r.slot.take()) {
            Some(s) if (s as usize) < self.flows.len() => {
                let id = FlowId(s);
                flow.id = id;
                let old = &self.flows[id.idx()];
                flow.timer = old.timer.successor();
                flow.pace = old.pace.successor();
                self.flows[id.idx()] = flow;
                id
            }
            _ => {
                let id = FlowId(self.flows.len() as u32);
                flow.id = id;
                self.flows.push(flow);
                id
            }
        }
    }
}
