//! RoCEv2 reliable-connection queue pairs: work requests, go-back-N loss recovery with NACKs
//! and a retransmission timeout, per-packet acknowledgements (GPMP reconstruction §5.4, HPCC ns-3
//! semantics), paced by a rate controller per queue pair (`transport::cc::RateCc`: DCQCN, or
//! none for line rate).
//!
//! Sender: work-queue elements (WQEs: a message or a slice of one) are packetised into MTU
//! payloads with consecutive packet sequence numbers (PSNs); a packet never spans two WQEs. The
//! sender sends in PSN order, paced at its controller's rate; an ACK carries the receiver's next
//! expected PSN and completes every WQE below it; a NACK rewinds `snd_nxt` to the PSN it
//! names (go-back-N); a timeout with data outstanding rewinds to the oldest unacknowledged PSN.
//! No window: the sender is purely rate based (HPCC `HAS_WIN 0`); an ACK's CNP flag goes to the
//! rate controller.
//!
//! Receiver: a packet with the expected PSN is accepted and acknowledged; one above it is
//! dropped and answered by a NACK for the expected PSN, at most once per `nack_interval` unless
//! the expected PSN changed; one below it (a duplicate) is acknowledged again. Every ACK and
//! NACK echoes CE as the CNP flag (HPCC: no separate CNP pacing).
//!
//! With `[rdma] recovery = "irn"` (the `IRN` scheme) loss recovery is IRN's selective repeat
//! instead ([`super::irn`]): the receiver keeps out-of-order packets, NACKs carry a selective
//! acknowledgement, the sender retransmits only the holes, caps its packets in flight at the
//! BDP and times out with IRN's two timeouts.
//!
//! Not modelled: read/atomic verbs, memory registration, QP context caching on the NIC.

use super::irn::{self, IrnParams, IrnReceiver, IrnReply, IrnSender};
use super::{Acked, Msg, QpTotals, QueuePair, RdmaSpec};
use crate::engine::RngStream;
use crate::ids::FlowId;
use crate::net::packet::{Hdr, Packet, PktKind, ecn, flags};
use crate::transport::cc::{IntHop, RateAck, RateCc};
use crate::transport::{FlowSample, Host, reply};
use crate::units::SimTime;
use serde::Serialize;
use std::collections::VecDeque;

/// Parameters of the RDMA transport.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct RdmaParams {
    /// Payload bytes per full packet.
    pub mtu: u32,
    /// Header bytes per packet on the wire (data, ACK, NACK).
    pub header: u32,
    pub nack_interval: SimTime,
    /// Retransmission timeout (go back to the oldest unacknowledged PSN); none: NACKs only.
    pub rto: Option<SimTime>,
    /// Queue of ACK/NACK/CNP packets.
    pub ack_prio: u8,
    /// Wire bytes of an ACK or NACK.
    pub ack_bytes: u32,
    /// Bytes in flight a queue pair may have (HPCC ns-3 `HAS_WIN`, one BDP there); None: no
    /// window, purely rate based.
    pub window: Option<u64>,
    /// The window scales with the rate: `window · rate / line rate`, at least 1 byte
    /// (`VAR_WIN`).
    pub var_win: bool,
    /// A pacing gap that ends is recomputed at the current rate (false: the send time set
    /// when the last packet left stands).
    pub repace: bool,
    /// Pacing gaps are floored to whole nanoseconds (`[quirks] ns_floor`).
    pub ns_floor: bool,
    /// IRN loss recovery (selective repeat, BDP cap, two timeouts) instead of go-back-N.
    pub irn: Option<IrnParams>,
}

/// A work-queue element: `bytes` of message `msg` as packets `[psn_start, psn_start+npkts)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Wqe {
    pub msg: u32,
    pub bytes: u64,
    pub psn_start: u64,
    pub npkts: u64,
    /// Wire priority (switch queue) of its packets.
    pub prio: u8,
    /// Payload bytes of the queue pair before this WQE.
    pub byte_start: u64,
}

impl Wqe {
    fn end(&self) -> u64 {
        self.psn_start + self.npkts
    }
}

/// A packet the sender wants to transmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RdmaSeg {
    pub psn: u64,
    pub payload: u32,
    pub msg: u32,
    pub prio: u8,
    pub retx: bool,
}

/// Sender side of a queue pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct QpSender {
    pub wqes: VecDeque<Wqe>,
    /// Index in `wqes` of the WQE holding `snd_nxt`.
    hint: usize,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest PSN ever sent + 1 (below it, sending again is a retransmission).
    pub high_tx: u64,
    pub psn_tail: u64,
    /// Payload bytes ever posted.
    pub byte_tail: u64,
    /// Bytes posted and not yet completed.
    pub outstanding: u64,
    /// Bytes posted and not yet sent for the first time.
    pub unsent_bytes: u64,
    /// Time and wire size of the last transmission (for pacing).
    pub last_tx: SimTime,
    pub last_size: u32,
    pub retx_pkts: u64,
    pub nacks: u64,
    pub timeouts: u64,
    /// IRN selective repeat (None: go-back-N).
    pub irn: Option<Box<IrnSender>>,
}

impl Default for QpSender {
    fn default() -> Self {
        Self::new()
    }
}

impl QpSender {
    pub fn new() -> Self {
        QpSender {
            wqes: VecDeque::new(),
            hint: 0,
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            psn_tail: 0,
            byte_tail: 0,
            outstanding: 0,
            unsent_bytes: 0,
            last_tx: SimTime::ZERO,
            last_size: 0,
            retx_pkts: 0,
            nacks: 0,
            timeouts: 0,
            irn: None,
        }
    }

    /// A sender with IRN's selective repeat, at most `bdp_cap` packets in flight.
    pub fn with_irn(bdp_cap: u64) -> Self {
        QpSender {
            irn: Some(Box::new(IrnSender {
                cap: bdp_cap,
                ..IrnSender::default()
            })),
            ..Self::new()
        }
    }

    /// Posts `bytes` of message `msg` at wire priority `prio`.
    pub fn post(&mut self, msg: u32, bytes: u64, prio: u8, mtu: u32) {
        debug_assert!(bytes > 0);
        let npkts = bytes.div_ceil(mtu as u64);
        self.wqes.push_back(Wqe {
            msg,
            bytes,
            psn_start: self.psn_tail,
            npkts,
            prio,
            byte_start: self.byte_tail,
        });
        self.psn_tail += npkts;
        self.byte_tail += bytes;
        self.outstanding += bytes;
        self.unsent_bytes += bytes;
    }

    pub fn has_unsent(&self) -> bool {
        self.snd_nxt < self.psn_tail
    }

    /// Whether packets are sent and not acknowledged.
    pub fn in_flight(&self) -> bool {
        self.snd_una < self.snd_nxt
    }

    /// The PSN to send next, if the sender may send: with IRN the lowest lost packet in
    /// recovery, else a new one within the BDP cap; with go-back-N `snd_nxt`.
    #[inline]
    pub fn next_psn(&self) -> Option<u64> {
        if let Some(irn) = &self.irn {
            if let Some(p) = irn.next_lost(self.snd_una) {
                return Some(p);
            }
            if self.snd_nxt - self.snd_una >= irn.cap {
                return None;
            }
        }
        self.has_unsent().then_some(self.snd_nxt)
    }

    /// Whether the next packet is an IRN retransmission of a lost one.
    #[inline]
    pub fn retransmits(&self) -> bool {
        self.irn
            .as_ref()
            .is_some_and(|irn| irn.next_lost(self.snd_una).is_some())
    }

    /// The payload byte offset of packet `psn` (the queue pair's byte sequence number): packets
    /// are full `mtu` payloads except each WQE's last.
    pub fn byte_of(&self, psn: u64, mtu: u32) -> u64 {
        if psn >= self.psn_tail {
            return self.byte_tail;
        }
        let i = self.wqes.partition_point(|w| w.end() <= psn);
        match self.wqes.get(i) {
            Some(w) if w.psn_start <= psn => w.byte_start + (psn - w.psn_start) * mtu as u64,
            // Below every WQE still held: completed and acknowledged.
            _ => self.wqes.front().map_or(self.byte_tail, |w| w.byte_start),
        }
    }

    /// Payload bytes sent and not acknowledged.
    pub fn bytes_in_flight(&self, mtu: u32) -> u64 {
        self.byte_of(self.snd_nxt, mtu) - self.byte_of(self.snd_una, mtu)
    }

    fn seek(&mut self, psn: u64) -> usize {
        if self.hint >= self.wqes.len() || self.wqes[self.hint].psn_start > psn {
            self.hint = 0;
        }
        while self.wqes[self.hint].end() <= psn {
            self.hint += 1;
        }
        self.hint
    }

    /// The WQE priority of the next packet, if any.
    pub fn next_prio(&mut self) -> Option<u8> {
        let psn = self.next_psn()?;
        let i = self.seek(psn);
        Some(self.wqes[i].prio)
    }

    /// Takes the next packet: in PSN order, or (IRN) the next lost one.
    pub fn next_segment(&mut self, mtu: u32) -> Option<RdmaSeg> {
        let psn = self.next_psn()?;
        let i = self.seek(psn);
        let w = self.wqes[i];
        let k = psn - w.psn_start;
        let payload = if k + 1 == w.npkts {
            (w.bytes - k * mtu as u64) as u32
        } else {
            mtu
        };
        let retx = psn < self.high_tx;
        if retx {
            self.retx_pkts += 1;
        } else {
            self.unsent_bytes -= payload as u64;
            self.high_tx = psn + 1;
        }
        if psn == self.snd_nxt {
            self.snd_nxt += 1;
        } else if let Some(irn) = &mut self.irn {
            irn.retx_next = psn + 1;
        }
        Some(RdmaSeg {
            psn,
            payload,
            msg: w.msg,
            prio: w.prio,
            retx,
        })
    }

    /// A cumulative ACK: the receiver expects `expected` next. Returns the WQEs it completes,
    /// oldest first, through `done`.
    pub fn on_ack(&mut self, expected: u64, mut done: impl FnMut(Wqe)) {
        if expected <= self.snd_una {
            return;
        }
        let expected = expected.min(self.high_tx);
        self.snd_una = expected;
        if self.snd_nxt < expected {
            self.snd_nxt = expected;
        }
        while let Some(w) = self.wqes.front() {
            if w.end() > expected {
                break;
            }
            let w = self.wqes.pop_front().expect("front");
            self.outstanding -= w.bytes;
            self.hint = self.hint.saturating_sub(1);
            done(w);
        }
        if let Some(irn) = &mut self.irn {
            irn.on_cumulative(expected);
        }
    }

    /// An IRN NACK: cumulative acknowledgement `expected`, selective acknowledgement `sack`;
    /// starts loss recovery if not in it.
    pub fn on_irn_nack(&mut self, expected: u64, sack: u64, done: impl FnMut(Wqe)) {
        self.nacks += 1;
        self.on_ack(expected, done);
        let (una, high) = (self.snd_una, self.high_tx);
        if let Some(irn) = &mut self.irn {
            irn.on_sack(sack, una, high);
        }
    }

    /// A NACK naming the receiver's expected PSN: go back to it.
    pub fn on_nack(&mut self, expected: u64, done: impl FnMut(Wqe)) {
        self.nacks += 1;
        self.on_ack(expected, done);
        if expected < self.snd_nxt && expected >= self.snd_una {
            self.snd_nxt = expected;
        }
    }

    /// Retransmission timeout: resend from the oldest unacknowledged PSN.
    pub fn on_timeout(&mut self) {
        self.timeouts += 1;
        match &mut self.irn {
            Some(irn) => irn.on_timeout(self.snd_una, self.high_tx),
            None => self.snd_nxt = self.snd_una,
        }
    }

    /// Earliest time the next packet may start at rate `rate_bps`, given the last one: the
    /// gap rounded up to the picosecond, or floored to whole nanoseconds (`ns_floor`, the
    /// reference's `Seconds(rate.CalculateTxTime(size))`).
    pub fn next_allowed(&self, rate_bps: f64, ns_floor: bool) -> SimTime {
        if self.last_size == 0 {
            return SimTime::ZERO;
        }
        self.last_tx + gap(self.last_size, rate_bps, ns_floor)
    }
}

/// The time `bytes` take at `rate_bps`: rounded up to the picosecond, or floored to whole
/// nanoseconds.
fn gap(bytes: u32, rate_bps: f64, ns_floor: bool) -> SimTime {
    if ns_floor {
        SimTime((bytes as f64 * 8.0 / rate_bps * 1e9).floor() as u64 * 1000)
    } else {
        SimTime((bytes as f64 * 8.0 / rate_bps * 1e12).ceil() as u64)
    }
}

/// What the receiver answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxReply {
    /// Accepted (or duplicate): ACK with the next expected PSN.
    Ack(u64),
    /// Out of order: NACK the expected PSN.
    Nack(u64),
    /// Out of order, NACK suppressed by the rate limit.
    Silent,
}

/// Receiver side of a queue pair.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct QpReceiver {
    pub expected: u64,
    last_nack_at: Option<SimTime>,
    last_nack_psn: u64,
    /// Packets dropped because they arrived out of order.
    pub ooo_dropped: u64,
    pub duplicates: u64,
    /// IRN: out-of-order packets are kept (None: go-back-N drops them).
    pub irn: Option<Box<IrnReceiver>>,
}

impl QpReceiver {
    /// Packet `psn` arrives: the reply, and whether the packet is new (its payload was not
    /// received before).
    pub fn receive(&mut self, psn: u64, now: SimTime, nack_interval: SimTime) -> (RxReply, bool) {
        if let Some(irn) = &mut self.irn {
            return match irn.on_data(psn, &mut self.expected) {
                IrnReply::Ack { expected, new } => {
                    self.duplicates += !new as u64;
                    (RxReply::Ack(expected), new)
                }
                IrnReply::Nack { expected, sack } => {
                    (RxReply::Nack(irn::nack_seq(expected, sack)), true)
                }
            };
        }
        let before = self.expected;
        let r = self.on_data(psn, now, nack_interval);
        (r, self.expected > before)
    }

    /// Go-back-N: packet `psn` arrives.
    pub fn on_data(&mut self, psn: u64, now: SimTime, nack_interval: SimTime) -> RxReply {
        if psn == self.expected {
            self.expected += 1;
            RxReply::Ack(self.expected)
        } else if psn < self.expected {
            self.duplicates += 1;
            RxReply::Ack(self.expected)
        } else {
            self.ooo_dropped += 1;
            let allowed = match self.last_nack_at {
                None => true,
                Some(t) => self.last_nack_psn != self.expected || now >= t + nack_interval,
            };
            if allowed {
                self.last_nack_at = Some(now);
                self.last_nack_psn = self.expected;
                RxReply::Nack(self.expected)
            } else {
                RxReply::Silent
            }
        }
    }
}

/// A reliable-connection queue pair paced by rate controller `R`: both ends, the sender's
/// line rate and the controller's state.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RcQp<R: RateCc> {
    pub snd: QpSender,
    pub rcv: QpReceiver,
    pub line_bps: f64,
    pub rate: R::State,
}

impl<R: RateCc> QueuePair for RcQp<R> {
    type Params = R;

    fn telemetry(_cc: &R) -> bool {
        R::TELEMETRY
    }

    fn create(line_bps: f64, spec: &RdmaSpec, cc: &R) -> Self {
        let (snd, rcv) = match spec.params.irn {
            Some(irn) => (
                QpSender::with_irn(irn.bdp_cap),
                QpReceiver {
                    irn: Some(Box::default()),
                    ..QpReceiver::default()
                },
            ),
            None => (QpSender::new(), QpReceiver::default()),
        };
        RcQp {
            snd,
            rcv,
            line_bps,
            rate: cc.state(line_bps),
        }
    }

    fn post(&mut self, msg: u32, bytes: u64, prio: u8, mtu: u32, _rng: &mut RngStream) {
        self.snd.post(msg, bytes, prio, mtu);
    }

    /// Unsent data, and room in the window if there is one (HPCC ns-3 `IsWinBound`: bytes in
    /// flight below the window, the window scaled by the current rate with `var_win`); with
    /// IRN a lost packet to retransmit (windows do not hold it back), or new data within the
    /// BDP cap and the window.
    #[inline]
    fn has_data(&self, spec: &RdmaSpec, cc: &R) -> bool {
        if self.snd.irn.is_some() {
            if self.snd.retransmits() {
                return true;
            }
            if self.snd.next_psn().is_none() {
                return false;
            }
        } else if !self.snd.has_unsent() {
            return false;
        }
        let p = &spec.params;
        let Some(w) = p.window else {
            return true;
        };
        let w = if p.var_win {
            let r = cc.current_rate(&self.rate) as u128;
            ((w as u128 * r / self.line_bps as u128) as u64).max(1)
        } else {
            w
        };
        self.snd.bytes_in_flight(p.mtu) < w
    }

    fn next_prio(&mut self) -> Option<u8> {
        self.snd.next_prio()
    }

    fn outstanding(&self) -> u64 {
        self.snd.outstanding
    }

    fn drained(&self) -> bool {
        self.snd.unsent_bytes == 0
    }

    fn busy(&self) -> bool {
        self.snd.in_flight()
    }

    /// The next packet in PSN order, then the pacing gap its DCQCN rate asks for (when it
    /// outlasts the packet's own serialization) and the retransmission timer.
    #[inline]
    fn emit(
        &mut self,
        f: FlowId,
        h: &mut impl Host,
        pkt: &mut Packet,
        spec: &RdmaSpec,
        cc: &R,
        msgs: &mut [Msg],
        _rng: &mut RngStream,
    ) -> Option<bool> {
        let now = h.now();
        let p = &spec.params;
        let snd = &mut self.snd;
        let seg = snd.next_segment(p.mtu)?;
        pkt.seq = seg.psn;
        pkt.payload = seg.payload as u16;
        pkt.size = (seg.payload + p.header) as u16;
        pkt.prio = seg.prio;
        pkt.ecn = ecn::ECT;
        pkt.hdr = Hdr::with_message(seg.msg);
        if seg.retx {
            pkt.flags |= flags::RETX;
            msgs[seg.msg as usize].retx += 1;
        }
        h.flow_mut(f).stats.data_pkts += 1;
        snd.last_tx = now;
        snd.last_size = pkt.size as u32;
        let line = self.line_bps;
        let rate = cc.rate_at(&mut self.rate, now);
        let allowed = snd.next_allowed(rate, p.ns_floor);
        let nic_done = now + gap(pkt.size as u32, line, p.ns_floor);
        let drained = snd.unsent_bytes == 0;
        if allowed > nic_done {
            h.set_pace(f, allowed);
        }
        if let Some(rto) = self.rto(spec)
            && !h.timer_armed(f)
        {
            h.set_timer(f, now + rto);
        }
        Some(drained)
    }

    /// The pacing gap ended: with `repace` it is recomputed at the current rate (a cut
    /// postpones the send); otherwise the time set at the last send stands.
    fn pace_wake(&mut self, now: SimTime, spec: &RdmaSpec, cc: &R) -> Option<SimTime> {
        if !spec.params.repace {
            return None;
        }
        self.rescheduled(now, spec, cc)
    }

    fn rescheduled(&mut self, now: SimTime, spec: &RdmaSpec, cc: &R) -> Option<SimTime> {
        let rate = cc.rate_at(&mut self.rate, now);
        let allowed = self.snd.next_allowed(rate, spec.params.ns_floor);
        (allowed > now).then_some(allowed)
    }

    fn on_data(
        &mut self,
        h: &mut impl Host,
        pkt: &Packet,
        spec: &RdmaSpec,
        _: &R,
        msgs: &mut [Msg],
    ) -> Option<Packet> {
        let now = h.now();
        let p = &spec.params;
        let (r, new) = self.rcv.receive(pkt.seq, now, p.nack_interval);
        let msg = &mut msgs[pkt.hdr.message()];
        if pkt.ce() {
            msg.ce += 1;
            h.flow_mut(pkt.flow).stats.ce_rcvd += 1;
        }
        if new {
            msg.rcvd += pkt.payload as u64;
            if msg.rcvd == msg.size {
                msg.rcv_finish = Some(now);
            }
        }
        let (kind, seq) = match r {
            RxReply::Ack(e) => (PktKind::Ack, e),
            RxReply::Nack(e) => (PktKind::Nack, e),
            RxReply::Silent => return None,
        };
        Some(reply(pkt, kind, seq, pkt.hdr, p.ack_bytes, p.ack_prio))
    }

    /// An ACK completes the work requests below it; a NACK also rewinds the sender to the PSN
    /// it names; then the CNP flag (ECE) and the acknowledgement go to the rate controller (the
    /// reference's order: acknowledge, recover, CNP, the controller's ACK handler).
    fn on_control(
        &mut self,
        now: SimTime,
        pkt: &Packet,
        spec: &RdmaSpec,
        cc: &R,
        int: &[IntHop],
        done: &mut Vec<Wqe>,
    ) -> Acked {
        let snd = &mut self.snd;
        let una_before = snd.snd_una;
        let nack = pkt.kind == PktKind::Nack;
        let mut cum = pkt.seq;
        if nack && snd.irn.is_some() {
            let (e, sack) = irn::nack_fields(pkt.seq);
            cum = e;
            snd.on_irn_nack(e, sack, |w| done.push(w));
        } else if nack {
            snd.on_nack(pkt.seq, |w| done.push(w));
        } else {
            snd.on_ack(pkt.seq, |w| done.push(w));
        }
        let ece = pkt.ecn & ecn::ECE != 0;
        if ece {
            cc.on_congestion(&mut self.rate, now);
        }
        let mtu = spec.params.mtu;
        let fb = RateAck {
            now,
            ack_bytes: snd.byte_of(cum.min(snd.high_tx), mtu),
            nxt_bytes: snd.byte_of(snd.snd_nxt, mtu),
            ece,
            nack,
            rtt: now.saturating_sub(pkt.ts),
            int,
        };
        let repace = cc.on_ack(&mut self.rate, &fb);
        Acked {
            advanced: snd.snd_una > una_before,
            repace,
        }
    }

    fn on_timeout(&mut self, _rng: &mut RngStream) {
        self.snd.on_timeout();
    }

    /// IRN: RTO_low with at most N packets in flight, RTO_high otherwise.
    fn rto(&self, spec: &RdmaSpec) -> Option<SimTime> {
        match &spec.params.irn {
            Some(irn) => Some(irn.rto(self.snd.snd_nxt - self.snd.snd_una)),
            None => spec.params.rto,
        }
    }

    fn sample(&self, cc: &R) -> FlowSample {
        let (alpha, rate_bps) = cc.sample(&self.rate);
        FlowSample {
            cwnd_pkts: None,
            alpha,
            priority: None,
            rate_bps,
        }
    }

    fn swap_receiver(&mut self, other: &mut Self) {
        std::mem::swap(&mut self.rcv, &mut other.rcv);
    }

    fn add_totals(&self, cc: &R, t: &mut QpTotals) {
        let (cnps, decreases) = cc.counters(&self.rate);
        t.timeouts += self.snd.timeouts;
        t.nacks += self.snd.nacks;
        t.cnps += cnps;
        t.rate_decreases += decreases;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packetisation_never_spans_wqes() {
        let mut s = QpSender::new();
        s.post(7, 2500, 1, 1000);
        s.post(8, 1000, 2, 1000);
        let segs: Vec<RdmaSeg> = std::iter::from_fn(|| s.next_segment(1000)).collect();
        let got: Vec<(u64, u32, u32, u8)> = segs
            .iter()
            .map(|x| (x.psn, x.payload, x.msg, x.prio))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 1000, 7, 1),
                (1, 1000, 7, 1),
                (2, 500, 7, 1),
                (3, 1000, 8, 2)
            ]
        );
        assert_eq!(s.unsent_bytes, 0);
        let mut done = Vec::new();
        s.on_ack(3, |w| done.push(w.msg));
        assert_eq!(done, vec![7]);
        assert_eq!(s.outstanding, 1000);
    }

    #[test]
    fn go_back_n_recovers_from_a_forced_drop() {
        let mut s = QpSender::new();
        let mut r = QpReceiver::default();
        s.post(1, 10_000, 1, 1000);
        let now = SimTime::ZERO;
        let ni = SimTime::from_us(500);
        let mut delivered = Vec::new();
        let mut completed = Vec::new();
        // Send everything, dropping PSN 3 once.
        let mut dropped = false;
        let mut rounds = 0;
        while completed.is_empty() && rounds < 10 {
            rounds += 1;
            let mut replies = Vec::new();
            while let Some(seg) = s.next_segment(1000) {
                if seg.psn == 3 && !dropped {
                    dropped = true;
                    continue;
                }
                let rep = r.on_data(seg.psn, now, ni);
                if let RxReply::Ack(_) = rep
                    && !delivered.contains(&seg.psn)
                {
                    delivered.push(seg.psn);
                }
                replies.push(rep);
            }
            for rep in replies {
                match rep {
                    RxReply::Ack(e) => s.on_ack(e, |w| completed.push(w.msg)),
                    RxReply::Nack(e) => s.on_nack(e, |w| completed.push(w.msg)),
                    RxReply::Silent => {}
                }
            }
        }
        assert_eq!(completed, vec![1]);
        assert_eq!(
            delivered,
            (0..10).collect::<Vec<u64>>(),
            "in order, each once"
        );
        // One NACK (the rest suppressed), and PSNs 3..9 were resent.
        assert_eq!(s.nacks, 1);
        assert_eq!(s.retx_pkts, 7);
        assert_eq!(r.ooo_dropped, 6);
    }

    /// Delivers everything `s` sends to `r`, dropping the PSNs in `drop` on their first
    /// transmission, feeding the replies back, until the message completes; returns the PSNs
    /// delivered as new, in order of arrival.
    fn irn_exchange(s: &mut QpSender, r: &mut QpReceiver, drop: &[u64]) -> Vec<u64> {
        let ni = SimTime::from_us(500);
        let mut dropped = Vec::new();
        let mut delivered = Vec::new();
        let mut done = false;
        for _ in 0..50 {
            let mut replies = Vec::new();
            while let Some(seg) = s.next_segment(1000) {
                if drop.contains(&seg.psn) && !dropped.contains(&seg.psn) {
                    dropped.push(seg.psn);
                    continue;
                }
                let (rep, new) = r.receive(seg.psn, SimTime::ZERO, ni);
                if new {
                    delivered.push(seg.psn);
                }
                replies.push(rep);
            }
            for rep in replies {
                match rep {
                    RxReply::Ack(e) => s.on_ack(e, |_| done = true),
                    RxReply::Nack(x) => {
                        let (e, sack) = irn::nack_fields(x);
                        s.on_irn_nack(e, sack, |_| done = true)
                    }
                    RxReply::Silent => unreachable!("IRN always answers"),
                }
            }
            if done {
                break;
            }
        }
        assert!(done, "the message completes");
        delivered
    }

    #[test]
    fn irn_retransmits_only_what_was_lost() {
        // Ten packets, 3 and 7 lost once: the receiver keeps the rest, every out-of-order
        // arrival is NACKed (4, 5, 6, 8, 9: five NACKs), and exactly two packets are sent again.
        let mut s = QpSender::with_irn(100);
        let mut r = QpReceiver {
            irn: Some(Box::default()),
            ..QpReceiver::default()
        };
        s.post(1, 10_000, 1, 1000);
        let delivered = irn_exchange(&mut s, &mut r, &[3, 7]);
        let mut sorted = delivered.clone();
        sorted.sort();
        assert_eq!(sorted, (0..10).collect::<Vec<u64>>(), "each once");
        assert_eq!(&delivered[8..], &[3, 7], "the holes arrive last");
        assert_eq!(s.retx_pkts, 2);
        assert_eq!(s.nacks, 5);
        assert_eq!((r.ooo_dropped, r.duplicates), (0, 0));
        assert_eq!(s.irn.as_ref().unwrap().recovery_end, None);
        // Go-back-N on the same losses resends everything after the first hole.
        let mut g = QpSender::new();
        let mut gr = QpReceiver::default();
        g.post(1, 10_000, 1, 1000);
        let mut dropped = Vec::new();
        let mut complete = false;
        while !complete {
            let mut replies = Vec::new();
            while let Some(seg) = g.next_segment(1000) {
                if [3, 7].contains(&seg.psn) && !dropped.contains(&seg.psn) {
                    dropped.push(seg.psn);
                    continue;
                }
                replies.push(gr.receive(seg.psn, SimTime::ZERO, SimTime::ZERO).0);
            }
            for rep in replies {
                match rep {
                    RxReply::Ack(e) => g.on_ack(e, |_| complete = true),
                    RxReply::Nack(e) => g.on_nack(e, |_| complete = true),
                    RxReply::Silent => {}
                }
            }
        }
        assert!(g.retx_pkts > 2 * s.retx_pkts, "go-back-N: {}", g.retx_pkts);
    }

    #[test]
    fn irn_caps_packets_in_flight_at_the_bdp() {
        let mut s = QpSender::with_irn(4);
        s.post(1, 10_000, 1, 1000);
        let sent: Vec<u64> = std::iter::from_fn(|| s.next_segment(1000).map(|x| x.psn)).collect();
        assert_eq!(sent, vec![0, 1, 2, 3]);
        s.on_ack(2, |_| {});
        let sent: Vec<u64> = std::iter::from_fn(|| s.next_segment(1000).map(|x| x.psn)).collect();
        assert_eq!(sent, vec![4, 5]);
        // A NACK (cumulative 2, selective 5): 2..=4 are holes and go first, even at the cap.
        s.on_irn_nack(2, 5, |_| {});
        let sent: Vec<(u64, bool)> =
            std::iter::from_fn(|| s.next_segment(1000).map(|x| (x.psn, x.retx))).collect();
        assert_eq!(sent, vec![(2, true), (3, true), (4, true)]);
    }

    #[test]
    fn irn_timeout_resends_the_unacknowledged_and_no_more() {
        let mut s = QpSender::with_irn(100);
        s.post(1, 6000, 1, 1000);
        while s.next_segment(1000).is_some() {}
        s.on_irn_nack(1, 4, |_| {});
        // 1..=3 are holes; a timeout before any retransmission adds 5 (not 4, acknowledged).
        s.on_timeout();
        let sent: Vec<u64> = std::iter::from_fn(|| s.next_segment(1000).map(|x| x.psn)).collect();
        assert_eq!(sent, vec![1, 2, 3, 5]);
        assert_eq!(s.snd_nxt, 6, "IRN never rewinds snd_nxt");
    }

    #[test]
    fn nack_rate_limit() {
        let mut r = QpReceiver::default();
        let ni = SimTime::from_us(500);
        assert_eq!(r.on_data(2, SimTime::ZERO, ni), RxReply::Nack(0));
        assert_eq!(r.on_data(3, SimTime::from_us(10), ni), RxReply::Silent);
        assert_eq!(r.on_data(4, SimTime::from_us(500), ni), RxReply::Nack(0));
        assert_eq!(r.on_data(0, SimTime::from_us(501), ni), RxReply::Ack(1));
        // The expected PSN changed: a NACK may go at once.
        assert_eq!(r.on_data(5, SimTime::from_us(502), ni), RxReply::Nack(1));
    }

    #[test]
    fn timeout_rewinds_to_una() {
        let mut s = QpSender::new();
        s.post(1, 5000, 1, 1000);
        while s.next_segment(1000).is_some() {}
        s.on_ack(2, |_| {});
        s.on_timeout();
        assert_eq!(s.next_segment(1000).unwrap().psn, 2);
        assert!(s.next_segment(1000).unwrap().retx);
    }

    #[test]
    fn pacing_gap_follows_rate() {
        let mut s = QpSender::new();
        s.last_tx = SimTime::from_us(1);
        s.last_size = 1000;
        assert_eq!(
            s.next_allowed(1e9, false),
            SimTime::from_us(1) + SimTime::from_ns(8000)
        );
    }
}
