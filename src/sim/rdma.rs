//! The RDMA host side of a run: messages, lazily created queue pairs, and the host message
//! schedulers that decide which queue pair (and so which path and priority) carries each
//! message or slice.
//!
//! Host schedulers ([`HostSched`]), one per scheme family (GPMP spec §2 and §4):
//!
//! * `single_path`: one queue pair per host pair, every message FIFO in it (SP-RDMA; also the
//!   host of the GPMP switch-only ablation, which marks each message's packets with its class
//!   priority).
//! * `per_message`: a new queue pair (new UDP source port, so a new ECMP path) per message
//!   (HPCC's default).
//! * `nem`: two queue pairs per host pair, short messages on one served first by the NIC, long
//!   ones on the other, no slicing (the NEM-like proxy).
//! * `srm`: one queue pair; long messages cut into chunks; whenever the queue pair has sent all
//!   it was given, the next chunk of the message with the fewest bytes left goes in
//!   (shortest-remaining-first at the NIC; the SRM-like proxy).
//! * `gpmp`: GPMP's end host: short messages on a high-priority queue pair; long messages cut
//!   into slices of `slice` bytes dispatched to the low-priority queue pair with the fewest
//!   outstanding bytes, while that stays within `limit`; each low-priority queue pair is bound
//!   to one uplink of the source leaf by choosing its UDP source port against the leaf's ECMP
//!   hash.
//!
//! A message is short when its transmission time at the host line rate is below the
//! threshold (`size < short_threshold` bytes). Its FCT runs from its arrival at the sender to
//! the ACK of its last byte (HPCC convention, GPMP spec §5.8).

use super::*;
use crate::engine::RngStream;
use crate::net::lb::ecmp_index;
use crate::net::packet::PROTO_UDP;
use crate::transport::mprdma::{MpParams, MpReceiver, MpSender};
use crate::transport::rdma::{QpReceiver, QpSender, RdmaParams, RxReply, Wqe};
use serde::Serialize;

/// RoCEv2 UDP destination port.
pub const ROCE_PORT: u16 = 4791;

/// The per-pair rotation of GPMP's path binding: low-priority QP `k` of pair `(src, dst)` is
/// bound to uplink `(k + path_offset) mod uplinks` [our choice; the spec binds QP k to uplink
/// k for every pair, which with fewer QPs than uplinks would leave uplinks unused].
pub fn path_offset(src: u32, dst: u32, n_up: usize) -> usize {
    (crate::engine::rng::mix64((src as u64) << 32 | dst as u64) % n_up.max(1) as u64) as usize
}

/// Which host message scheduler a scheme uses.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostSched {
    SinglePath,
    PerMessage,
    Nem,
    Srm {
        chunk: u64,
    },
    Gpmp {
        paths: u32,
        slice: u64,
        limit: u64,
    },
    /// One MP-RDMA connection per host pair, messages FIFO.
    MpRdma,
}

/// The RDMA side of a run's transport choice.
#[derive(Clone, Debug, Serialize)]
pub struct RdmaSpec {
    pub params: RdmaParams,
    pub sched: HostSched,
    /// Messages smaller than this many bytes are short.
    pub short_threshold: u64,
    /// Switch queue (wire priority) of short and of long messages' data.
    pub short_prio: u8,
    pub long_prio: u8,
    /// MP-RDMA parameters (for `HostSched::MpRdma`).
    pub mp: Option<MpParams>,
}

/// One message of the workload.
#[derive(Clone, Debug)]
pub struct Msg {
    pub ext_id: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: SimTime,
    pub deadline: Option<SimTime>,
    pub short: bool,
    /// Bytes not yet posted to a queue pair.
    pub unposted: u64,
    /// Bytes not yet acknowledged.
    pub unacked: u64,
    /// Bytes received in order at the destination.
    pub rcvd: u64,
    pub finish: Option<SimTime>,
    pub rcv_finish: Option<SimTime>,
    pub retx: u64,
    pub ce: u64,
    pub drops: u64,
}

/// Queue pairs and pending messages of one (source, destination) host pair.
#[derive(Clone, Debug, Default)]
pub struct Pair {
    /// `single_path`/`srm`: [the QP]; `nem`: [short, long]; `gpmp`: [high, low 0..n].
    pub qps: Vec<FlowId>,
    /// Messages with bytes not yet posted (long messages under `gpmp`, all under `srm`).
    pub pending: VecDeque<u32>,
    used_sports: Vec<u16>,
}

/// RDMA host state of a run.
pub struct RdmaHost {
    pub spec: RdmaSpec,
    pub msgs: Vec<Msg>,
    /// By `src · n_hosts + dst`, only the pairs that exchanged messages.
    pairs: std::collections::BTreeMap<usize, Pair>,
    n_hosts: usize,
    sport_rng: RngStream,
    mp_rng: RngStream,
    scratch: Vec<Wqe>,
}

impl RdmaHost {
    pub fn new(spec: RdmaSpec, flows: &[FlowSpec], n_hosts: usize, seed: u64) -> Self {
        let msgs = flows
            .iter()
            .map(|f| Msg {
                ext_id: f.id,
                src: f.src,
                dst: f.dst,
                size: f.size,
                start: f.start,
                deadline: f.deadline,
                short: f.size < spec.short_threshold,
                unposted: f.size,
                unacked: f.size,
                rcvd: 0,
                finish: None,
                rcv_finish: None,
                retx: 0,
                ce: 0,
                drops: 0,
            })
            .collect();
        RdmaHost {
            spec,
            msgs,
            pairs: std::collections::BTreeMap::new(),
            n_hosts,
            sport_rng: RngStream::new(seed, "rdma.sport"),
            mp_rng: RngStream::new(seed, "mprdma"),
            scratch: Vec::new(),
        }
    }

    /// The queue pairs of host pair `(src, dst)` (empty if none was created).
    pub fn pair_qps(&self, src: u32, dst: u32) -> &[FlowId] {
        match self
            .pairs
            .get(&(src as usize * self.n_hosts + dst as usize))
        {
            Some(p) => &p.qps,
            None => &[],
        }
    }
}

impl Sim {
    fn rdma(&mut self) -> &mut RdmaHost {
        self.rdma.as_mut().expect("RDMA run")
    }

    /// The UDP source port of a new queue pair from `src` to `dst`: random (hashed onto some
    /// path), or bound to path `k` by scanning ports until the source leaf's ECMP hash picks
    /// uplink `(k + offset) mod uplinks`, where `offset` is a fixed per-pair rotation
    /// ([`path_offset`]): a pair's QPs take distinct uplinks, and when there are fewer QPs
    /// than uplinks the pairs still spread over all of them.
    fn choose_sport(&mut self, src: u32, dst: u32, path: Option<u32>) -> u16 {
        let key = src as usize * self.net.n_hosts + dst as usize;
        let tor = self.net.ports[self.net.host_port(src).idx()].peer_node;
        let (salt, n_up) = if self.net.is_host(tor) {
            (0, 1)
        } else {
            (
                self.net.switches[self.net.switch_idx(tor)].lb.salt,
                self.net.routes.next_hops(tor, dst).len(),
            )
        };
        let host = self.rdma.as_mut().expect("RDMA run");
        let pair = host.pairs.entry(key).or_default();
        let mut sport = 49_152 + (host.sport_rng.below(16_384) as u16);
        loop {
            let fits = match path {
                None => true,
                Some(k) => {
                    n_up <= 1
                        || ecmp_index(src, dst, PROTO_UDP, sport, ROCE_PORT, salt, n_up)
                            == (k as usize + path_offset(src, dst, n_up)) % n_up
                }
            };
            if fits && !pair.used_sports.contains(&sport) {
                pair.used_sports.push(sport);
                return sport;
            }
            sport = if sport == u16::MAX { 49_152 } else { sport + 1 };
        }
    }

    /// Creates a queue pair from `src` to `dst` served in NIC class `class`.
    fn new_qp(&mut self, src: u32, dst: u32, class: u8, path: Option<u32>) -> FlowId {
        let sport = self.choose_sport(src, dst, path);
        let line = self.net.ports[self.net.host_port(src).idx()].rate.bps() as f64;
        let id = FlowId(self.flows.len() as u32);
        let ack_prio = self.rdma().spec.params.ack_prio;
        self.flows.push(Flow {
            id,
            ext_id: u32::MAX,
            src,
            dst,
            size: 0,
            start: self.now,
            deadline: None,
            rel_deadline: None,
            tag: crate::workload::FlowTag::Flow,
            group: u32::MAX,
            deadline_class: None,
            sport,
            dport: ROCE_PORT,
            prio: 1,
            nic_class: class,
            ack_prio,
            proto: match &self.rdma.as_ref().expect("RDMA run").spec.mp {
                Some(mp) => Proto::MpRdma {
                    snd: MpSender::new(mp),
                    rcv: MpReceiver::default(),
                },
                None => Proto::Rdma {
                    snd: QpSender::new(line),
                    rcv: QpReceiver::default(),
                    line_bps: line,
                },
            },
            started: true,
            finish: None,
            rcv_finish: None,
            in_ready: false,
            timer_deadline: SimTime::MAX,
            timer_event: SimTime::MAX,
            timer_gen: 0,
            pace_deadline: SimTime::MAX,
            pace_event: SimTime::MAX,
            pace_gen: 0,
            stats: FlowStats::default(),
        });
        let key = src as usize * self.net.n_hosts + dst as usize;
        self.rdma().pairs.entry(key).or_default().qps.push(id);
        id
    }

    /// Queue pair `i` of the pair, creating the pair's QPs on first use.
    fn pair_qp(&mut self, src: u32, dst: u32, i: usize) -> FlowId {
        let key = src as usize * self.net.n_hosts + dst as usize;
        let have = self.rdma().pairs.get(&key).map_or(0, |p| p.qps.len());
        if have == 0 {
            match self.rdma().spec.sched {
                HostSched::SinglePath
                | HostSched::Srm { .. }
                | HostSched::PerMessage
                | HostSched::MpRdma => {
                    self.new_qp(src, dst, 1, None);
                }
                HostSched::Nem => {
                    self.new_qp(src, dst, 0, None);
                    self.new_qp(src, dst, 1, None);
                }
                HostSched::Gpmp { paths, .. } => {
                    self.new_qp(src, dst, 0, None);
                    for k in 0..paths {
                        self.new_qp(src, dst, 1, Some(k));
                    }
                }
            }
        }
        self.rdma().pairs.get(&key).expect("created").qps[i]
    }

    /// Posts `bytes` of message `msg` on queue pair `qp`. The caller makes the QP ready once
    /// its own bookkeeping is done: making it ready may start a transmission at once, which
    /// can re-enter the scheduler.
    fn post(&mut self, qp: FlowId, msg: u32, bytes: u64) {
        debug_assert!(bytes > 0, "empty work request");
        let host = self.rdma.as_mut().expect("RDMA run");
        let m = &mut host.msgs[msg as usize];
        m.unposted -= bytes;
        let prio = if m.short {
            host.spec.short_prio
        } else {
            host.spec.long_prio
        };
        let mtu = host.spec.params.mtu;
        match &mut self.flows[qp.idx()].proto {
            Proto::Rdma { snd, .. } => snd.post(msg, bytes, prio, mtu),
            Proto::MpRdma { snd, .. } => {
                snd.post(msg, bytes, prio, mtu);
                snd.kickstart(&mut host.mp_rng);
            }
            _ => unreachable!(),
        }
    }

    /// A message arrives at its sender.
    pub(super) fn rdma_on_message(&mut self, m: u32) {
        let (src, dst, size, short) = {
            let msg = &self.rdma().msgs[m as usize];
            (msg.src, msg.dst, msg.size, msg.short)
        };
        let now = self.now;
        if let Some(a) = &mut self.attrib {
            a.unit_start(m as usize, src as usize, now);
        }
        match self.rdma().spec.sched {
            HostSched::SinglePath | HostSched::MpRdma => {
                let qp = self.pair_qp(src, dst, 0);
                self.post(qp, m, size);
                self.make_ready(qp);
            }
            HostSched::PerMessage => {
                let qp = self.new_qp(src, dst, 1, None);
                self.post(qp, m, size);
                self.make_ready(qp);
            }
            HostSched::Nem => {
                let qp = self.pair_qp(src, dst, if short { 0 } else { 1 });
                self.post(qp, m, size);
                self.make_ready(qp);
            }
            HostSched::Srm { .. } => {
                self.pair_qp(src, dst, 0);
                let key = src as usize * self.net.n_hosts + dst as usize;
                self.rdma()
                    .pairs
                    .get_mut(&key)
                    .expect("created")
                    .pending
                    .push_back(m);
                self.srm_refill(src, dst, true);
            }
            HostSched::Gpmp { .. } => {
                if short {
                    let qp = self.pair_qp(src, dst, 0);
                    self.post(qp, m, size);
                    self.make_ready(qp);
                } else {
                    self.pair_qp(src, dst, 0);
                    let key = src as usize * self.net.n_hosts + dst as usize;
                    self.rdma()
                        .pairs
                        .get_mut(&key)
                        .expect("created")
                        .pending
                        .push_back(m);
                    self.gpmp_dispatch(src, dst);
                }
            }
        }
    }

    /// GPMP slicing: while the head long message has bytes left and the low-priority QP with
    /// the fewest outstanding bytes can take a slice within the limit, post one there.
    fn gpmp_dispatch(&mut self, src: u32, dst: u32) {
        let HostSched::Gpmp { slice, limit, .. } = self.rdma().spec.sched else {
            return;
        };
        let key = src as usize * self.net.n_hosts + dst as usize;
        let mut posted = [FlowId(u32::MAX); 64];
        let mut n_posted = 0;
        loop {
            let host = self.rdma.as_ref().expect("RDMA run");
            let pair = host.pairs.get(&key).expect("pair");
            let Some(&m) = pair.pending.front() else {
                break;
            };
            let mut best: Option<(u64, FlowId)> = None;
            for &q in &pair.qps[1..] {
                let out = match &self.flows[q.idx()].proto {
                    Proto::Rdma { snd, .. } => snd.outstanding,
                    _ => unreachable!(),
                };
                if best.is_none_or(|(b, _)| out < b) {
                    best = Some((out, q));
                }
            }
            let Some((out, qp)) = best else { break };
            let s = slice.min(host.msgs[m as usize].unposted);
            if out + s > limit {
                break;
            }
            self.post(qp, m, s);
            if self.rdma().msgs[m as usize].unposted == 0 {
                self.rdma().pairs.get_mut(&key).unwrap().pending.pop_front();
            }
            if !posted[..n_posted].contains(&qp) {
                posted[n_posted] = qp;
                n_posted += 1;
            }
        }
        for &qp in &posted[..n_posted] {
            self.make_ready(qp);
        }
    }

    /// SRM: when the pair's QP has nothing left to send, post the next chunk of the pending
    /// message with the fewest unposted bytes (ties: earliest arrival).
    fn srm_refill(&mut self, src: u32, dst: u32, kick: bool) {
        let HostSched::Srm { chunk } = self.rdma().spec.sched else {
            return;
        };
        let key = src as usize * self.net.n_hosts + dst as usize;
        let host = self.rdma.as_ref().expect("RDMA run");
        let Some(pair) = host.pairs.get(&key) else {
            return;
        };
        let qp = pair.qps[0];
        if let Proto::Rdma { snd, .. } = &self.flows[qp.idx()].proto
            && snd.unsent_bytes > 0
        {
            return;
        }
        let Some((pos, &m)) = pair
            .pending
            .iter()
            .enumerate()
            .min_by_key(|&(i, &m)| (host.msgs[m as usize].unposted, i))
        else {
            return;
        };
        let s = chunk.min(host.msgs[m as usize].unposted);
        self.post(qp, m, s);
        if self.rdma().msgs[m as usize].unposted == 0 {
            self.rdma().pairs.get_mut(&key).unwrap().pending.remove(pos);
        }
        if kick {
            self.make_ready(qp);
        }
    }

    /// Fills `pkt` with the next packet of queue pair `f`, if it has one.
    pub(super) fn rdma_emit(&mut self, f: FlowId, pkt: &mut Packet) -> bool {
        let now = self.now;
        let host = self.rdma.as_mut().expect("RDMA run");
        let p = &host.spec.params;
        let fl = &mut self.flows[f.idx()];
        if let Proto::MpRdma { snd, .. } = &mut fl.proto {
            let mp = host.spec.mp.as_ref().expect("MP-RDMA parameters");
            let Some((seg, prio)) = snd.next_segment(now, p.mtu, mp, &mut host.mp_rng) else {
                return false;
            };
            pkt.seq = seg.psn;
            pkt.payload = seg.payload as u16;
            pkt.size = (seg.payload + p.header) as u16;
            pkt.prio = prio;
            pkt.ecn = ecn::ECT;
            pkt.aux = seg.msg as u64;
            pkt.sport = seg.sport;
            if seg.retx {
                pkt.flags |= flags::RETX;
                host.msgs[seg.msg as usize].retx += 1;
            }
            fl.stats.data_pkts += 1;
            if let Some(rto) = p.rto
                && fl.timer_deadline == SimTime::MAX
            {
                self.set_timer(f, now + rto);
            }
            return true;
        }
        let Proto::Rdma { snd, line_bps, .. } = &mut fl.proto else {
            unreachable!()
        };
        let Some(seg) = snd.next_segment(p.mtu) else {
            return false;
        };
        pkt.seq = seg.psn;
        pkt.payload = seg.payload as u16;
        pkt.size = (seg.payload + p.header) as u16;
        pkt.prio = seg.prio;
        pkt.ecn = ecn::ECT;
        pkt.aux = seg.msg as u64;
        if seg.retx {
            pkt.flags |= flags::RETX;
            host.msgs[seg.msg as usize].retx += 1;
        }
        fl.stats.data_pkts += 1;
        snd.last_tx = now;
        snd.last_size = pkt.size as u32;
        let line = *line_bps;
        let rate = snd.rate(now, p, line);
        let allowed = snd.next_allowed(rate);
        let nic_done = now + SimTime((pkt.size as f64 * 8.0 / line * 1e12).ceil() as u64);
        let drained = snd.unsent_bytes == 0;
        let (src, dst) = (fl.src, fl.dst);
        let rto = p.rto;
        if allowed > nic_done {
            self.set_pace(f, allowed);
        }
        if let Some(rto) = rto
            && self.flows[f.idx()].timer_deadline == SimTime::MAX
        {
            self.set_timer(f, now + rto);
        }
        if drained && matches!(self.rdma().spec.sched, HostSched::Srm { .. }) {
            // Inside the NIC's pull: the NIC re-queues this QP if it has data again.
            self.srm_refill(src, dst, false);
        }
        true
    }

    /// The pacing timer of queue pair `f` fired: send now, or wait longer if the rate fell.
    pub(super) fn rdma_pace_wake(&mut self, f: FlowId) -> bool {
        let now = self.now;
        let host = self.rdma.as_mut().expect("RDMA run");
        let p = &host.spec.params;
        let Proto::Rdma { snd, line_bps, .. } = &mut self.flows[f.idx()].proto else {
            return true;
        };
        let rate = snd.rate(now, p, *line_bps);
        let allowed = snd.next_allowed(rate);
        if allowed > now {
            self.set_pace(f, allowed);
            return false;
        }
        true
    }

    /// A data packet of queue pair `pkt.flow` arrives at its destination.
    pub(super) fn rdma_on_data(&mut self, pkt: Packet) {
        let now = self.now;
        let host = self.rdma.as_mut().expect("RDMA run");
        let p = &host.spec.params;
        let fl = &mut self.flows[pkt.flow.idx()];
        if let Proto::MpRdma { rcv, .. } = &mut fl.proto {
            let l = host.spec.mp.as_ref().expect("MP-RDMA parameters").l;
            let msg = &mut host.msgs[pkt.aux as usize];
            if pkt.ce() {
                msg.ce += 1;
                fl.stats.ce_rcvd += 1;
            }
            if !rcv.on_data(pkt.seq, l) {
                // Beyond the bitmap or a duplicate: dropped without an ACK.
                return;
            }
            msg.rcvd += pkt.payload as u64;
            if msg.rcvd == msg.size {
                msg.rcv_finish = Some(now);
            }
            let ack = Packet {
                flow: pkt.flow,
                src: fl.dst,
                dst: fl.src,
                seq: rcv.aack,
                aux: pkt.seq,
                ts: pkt.ts,
                size: p.header as u16,
                payload: 0,
                sport: pkt.dport,
                dport: pkt.sport,
                in_port: PortId(0),
                kind: PktKind::Ack,
                prio: p.ack_prio,
                ecn: if pkt.ce() { ecn::ECE } else { 0 },
                flags: pkt.flags & flags::RETX,
                uid: match &mut self.attrib {
                    Some(a) => a.ack_for(pkt.uid, now),
                    None => 0,
                },
            };
            let hp = self.net.host_port(fl.dst);
            self.send_control(hp, ack);
            return;
        }
        let Proto::Rdma { rcv, .. } = &mut fl.proto else {
            unreachable!()
        };
        let before = rcv.expected;
        let reply = rcv.on_data(pkt.seq, now, p.nack_interval);
        let msg = &mut host.msgs[pkt.aux as usize];
        if pkt.ce() {
            msg.ce += 1;
            fl.stats.ce_rcvd += 1;
        }
        if rcv.expected > before {
            msg.rcvd += pkt.payload as u64;
            if msg.rcvd == msg.size {
                msg.rcv_finish = Some(now);
            }
        }
        let (kind, seq) = match reply {
            RxReply::Ack(e) => (PktKind::Ack, e),
            RxReply::Nack(e) => (PktKind::Nack, e),
            RxReply::Silent => return,
        };
        let ctl = Packet {
            flow: pkt.flow,
            src: fl.dst,
            dst: fl.src,
            seq,
            aux: pkt.aux,
            ts: pkt.ts,
            size: p.header as u16,
            payload: 0,
            sport: fl.dport,
            dport: fl.sport,
            in_port: PortId(0),
            kind,
            prio: p.ack_prio,
            ecn: if pkt.ce() { ecn::ECE } else { 0 },
            flags: 0,
            uid: match &mut self.attrib {
                Some(a) => a.ack_for(pkt.uid, now),
                None => 0,
            },
        };
        let hp = self.net.host_port(fl.dst);
        self.send_control(hp, ctl);
    }

    /// `bytes` of message `msg` are acknowledged by the acknowledgement with attribution
    /// record `uid`; the message finishes when none are left.
    fn rdma_acked(&mut self, msg: u32, bytes: u64, uid: u32) {
        let now = self.now;
        let m = &mut self.rdma().msgs[msg as usize];
        m.unacked -= bytes;
        if m.unacked == 0 {
            m.finish = Some(now);
            self.finished += 1;
            if let Some(a) = &mut self.attrib {
                a.finish(msg as usize, uid, now, false);
            }
        }
    }

    /// An ACK or NACK of queue pair `pkt.flow` arrives at its sender.
    pub(super) fn rdma_on_ctl(&mut self, pkt: Packet) {
        let now = self.now;
        let f = pkt.flow;
        let host = self.rdma.as_mut().expect("RDMA run");
        let p = &host.spec.params;
        let fl = &mut self.flows[f.idx()];
        if let Proto::MpRdma { snd, .. } = &mut fl.proto {
            let mp = host.spec.mp.as_ref().expect("MP-RDMA parameters");
            let mut done = std::mem::take(&mut host.scratch);
            let una_before = snd.snd_una;
            snd.on_ack(
                pkt.seq,
                pkt.aux,
                pkt.dport,
                pkt.ecn & ecn::ECE != 0,
                pkt.flags & flags::RETX != 0,
                mp,
                |w| done.push(w),
            );
            let (busy, progressed) = (snd.busy(), snd.snd_una > una_before);
            let rto = p.rto;
            if !busy {
                fl.timer_deadline = SimTime::MAX;
            } else if progressed && let Some(rto) = rto {
                self.set_timer(f, now + rto);
            }
            for w in done.drain(..) {
                self.rdma_acked(w.msg, w.bytes, pkt.uid);
            }
            let host = self.rdma.as_mut().expect("RDMA run");
            host.scratch = done;
            if let Proto::MpRdma { snd, .. } = &mut self.flows[f.idx()].proto {
                snd.kickstart(&mut host.mp_rng);
            }
            self.make_ready(f);
            return;
        }
        let Proto::Rdma { snd, .. } = &mut fl.proto else {
            unreachable!()
        };
        if pkt.ecn & ecn::ECE != 0
            && let Some(d) = &p.dcqcn
        {
            snd.dcqcn.on_cnp(now, d);
        }
        let mut done = std::mem::take(&mut host.scratch);
        let una_before = snd.snd_una;
        if pkt.kind == PktKind::Nack {
            snd.on_nack(pkt.seq, |w| done.push(w));
        } else {
            snd.on_ack(pkt.seq, |w| done.push(w));
        }
        let in_flight = snd.in_flight();
        let progressed = snd.snd_una > una_before;
        let (src, dst) = (fl.src, fl.dst);
        let rto = p.rto;
        if in_flight {
            if progressed && let Some(rto) = rto {
                self.set_timer(f, now + rto);
            }
        } else {
            self.flows[f.idx()].timer_deadline = SimTime::MAX;
        }
        let mut any = false;
        for w in done.drain(..) {
            any = true;
            self.rdma_acked(w.msg, w.bytes, pkt.uid);
        }
        self.rdma().scratch = done;
        if any {
            match self.rdma().spec.sched {
                HostSched::Gpmp { .. } => self.gpmp_dispatch(src, dst),
                HostSched::Srm { .. } => self.srm_refill(src, dst, true),
                _ => {}
            }
        }
        self.make_ready(f);
    }

    /// Retransmission timeout of queue pair `f`.
    pub(super) fn rdma_timeout(&mut self, f: FlowId) {
        let now = self.now;
        let Some(rto) = self.rdma().spec.params.rto else {
            return;
        };
        let host = self.rdma.as_mut().expect("RDMA run");
        match &mut self.flows[f.idx()].proto {
            Proto::Rdma { snd, .. } if snd.in_flight() => {
                snd.on_timeout();
                self.set_timer(f, now + rto);
            }
            Proto::MpRdma { snd, .. } if snd.busy() => {
                snd.on_timeout(&mut host.mp_rng);
                self.set_timer(f, now + rto);
            }
            _ => {}
        }
    }
}
