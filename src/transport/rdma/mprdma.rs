//! MP-RDMA (Lu et al., NSDI 2018 / ToN 2019) as reconstructed in GPMP reconstruction §4.2 from the
//! paper's abstract and an HPCC-based ns-3 re-implementation.
//!
//! One connection per host pair, one congestion window (in packets, a float) for all paths:
//!
//! * **Virtual paths** are UDP source ports; ECMP maps each onto some physical path. Every data
//!   packet carries its virtual path's port and its ACK echoes it.
//! * **ACK clocking**: each ACK on virtual path `v` grows the window by `1/cwnd` (no ECN) or
//!   shrinks it by 1/2 (ECN), then lets up to `min(awnd, 2)` new packets go out on `v`, with
//!   `awnd = cwnd − (snd_nxt − snd_una − inflate)` and `inflate` the packets acknowledged
//!   above the cumulative point. Congested paths (marked ACKs, shrinking window) so carry less.
//! * **Probing**: with probability `probe` per new packet, at most once per base RTT, a packet
//!   takes a fresh random port in [49152, 65535] instead of the clocking path.
//! * **Out-of-order-aware path selection**: an ACK for a packet at least `delta` below the
//!   highest acknowledged one (not a retransmission) comes from a slow path: it clocks nothing,
//!   which prunes that path. The receiver tracks `l` packets beyond its cumulative point in a
//!   bitmap and drops packets further ahead; the sender never sends beyond that bound.
//! * **Loss recovery**: on a timeout the sender retransmits the unacknowledged packets below
//!   `snd_nxt` (selectively, skipping acknowledged ones) with the window reset to one packet.
//!   The receiver acknowledges a duplicate again (the first ACK may have been lost).
//!
//! Not modelled (labelled as simplifications): the synchronise mechanism for in-order memory
//! updates (it only gates sync packets, which the GPMP workloads do not issue) and NACK-driven
//! recovery (the GPMP experiments that use MP-RDMA are lossless, so no loss occurs).

use super::qp::Wqe;
use super::{Acked, Msg, QpTotals, QueuePair, RdmaSpec};
use crate::engine::RngStream;
use crate::ids::FlowId;
use crate::net::packet::{Hdr, Packet, PktKind, ecn, flags};
use crate::transport::cc::IntHop;
use crate::transport::{FlowSample, Host, reply};
use crate::units::SimTime;
use serde::Serialize;
use std::collections::VecDeque;

/// MP-RDMA parameters (GPMP reconstruction §9 item 14).
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct MpParams {
    /// Out-of-order tolerance Δ in packets. Default 32.
    pub delta: u64,
    /// Receiver bitmap length L in packets. Default 64.
    pub l: u64,
    /// Probability of probing a new virtual path per new packet. Default 0.01.
    pub probe: f64,
    /// Initial window in packets. Default 16.
    pub init_cwnd: f64,
    /// Base RTT (probe spacing).
    pub base_rtt: SimTime,
}

/// A packet the MP-RDMA sender wants to transmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpSeg {
    pub psn: u64,
    pub payload: u32,
    pub msg: u32,
    pub sport: u16,
    pub retx: bool,
}

const ACKED: u8 = 1;

/// Sender state.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct MpSender {
    pub wqes: VecDeque<Wqe>,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub psn_tail: u64,
    pub outstanding: u64,
    /// Flags of packets `[snd_una, snd_nxt)`.
    st: VecDeque<u8>,
    inflate: u64,
    /// Highest PSN acknowledged + 1.
    max_acked: u64,
    pub cwnd: f64,
    /// Virtual paths clocked to carry the next new packets.
    credits: VecDeque<u16>,
    /// Retransmission pointer (recovery after a timeout), `None` outside recovery.
    retx_next: Option<u64>,
    recover_end: u64,
    last_probe: SimTime,
    pub retx_pkts: u64,
    pub timeouts: u64,
    pub pruned_acks: u64,
    pub probes: u64,
    /// The receiver's bitmap length: never send beyond `snd_una + l`.
    l: u64,
}

impl MpSender {
    pub fn new(p: &MpParams) -> Self {
        MpSender {
            wqes: VecDeque::new(),
            snd_una: 0,
            snd_nxt: 0,
            psn_tail: 0,
            outstanding: 0,
            st: VecDeque::new(),
            inflate: 0,
            max_acked: 0,
            cwnd: p.init_cwnd,
            credits: VecDeque::new(),
            retx_next: None,
            recover_end: 0,
            last_probe: SimTime::ZERO,
            retx_pkts: 0,
            timeouts: 0,
            pruned_acks: 0,
            probes: 0,
            l: p.l.min(64),
        }
    }

    pub fn post(&mut self, msg: u32, bytes: u64, prio: u8, mtu: u32) {
        let npkts = bytes.div_ceil(mtu as u64);
        self.wqes.push_back(Wqe {
            byte_start: 0, // MP-RDMA counts packets, not bytes
            msg,
            bytes,
            psn_start: self.psn_tail,
            npkts,
            prio,
        });
        self.psn_tail += npkts;
        self.outstanding += bytes;
    }

    fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una - self.inflate
    }

    pub fn busy(&self) -> bool {
        self.snd_una < self.snd_nxt
    }

    /// Gives the sender fresh random virtual paths to start with when nothing is in flight
    /// (connection start, or new work after an idle period).
    pub fn kickstart(&mut self, rng: &mut RngStream) {
        if self.snd_una == self.snd_nxt && self.snd_nxt < self.psn_tail && self.credits.is_empty() {
            for _ in 0..(self.cwnd.floor() as u64).max(1) {
                self.credits.push_back(random_port(rng));
            }
        }
    }

    /// Whether a packet may go now.
    pub fn can_send(&self) -> bool {
        if let Some(r) = self.retx_next {
            return r < self.recover_end && !self.credits.is_empty();
        }
        self.snd_nxt < self.psn_tail
            && !self.credits.is_empty()
            && self.snd_nxt < self.snd_una + self.l
    }

    fn payload_of(&self, psn: u64, mtu: u32) -> (u32, u32, u8) {
        let w = self
            .wqes
            .iter()
            .find(|w| psn < w.psn_start + w.npkts)
            .expect("psn within posted work");
        let k = psn - w.psn_start;
        let payload = if k + 1 == w.npkts {
            (w.bytes - k * mtu as u64) as u32
        } else {
            mtu
        };
        (payload, w.msg, w.prio)
    }

    /// Takes the next packet: a retransmission in recovery, else a new one; its port is the
    /// next clocked virtual path, or a probe.
    pub fn next_segment(
        &mut self,
        now: SimTime,
        mtu: u32,
        p: &MpParams,
        rng: &mut RngStream,
    ) -> Option<(MpSeg, u8)> {
        if !self.can_send() {
            return None;
        }
        let vp = self.credits.pop_front().expect("credit");
        if let Some(r) = self.retx_next {
            // Skip packets already acknowledged: selectively, or cumulatively since the
            // recovery began (a retransmission position below the cumulative point used to
            // index before the window and crash).
            let mut psn = r.max(self.snd_una);
            while psn < self.recover_end && self.st[(psn - self.snd_una) as usize] & ACKED != 0 {
                psn += 1;
            }
            if psn >= self.recover_end {
                self.retx_next = None;
                self.credits.push_front(vp);
                return self.next_segment(now, mtu, p, rng);
            }
            self.retx_next = Some(psn + 1);
            if psn + 1 >= self.recover_end {
                self.retx_next = None;
            }
            self.retx_pkts += 1;
            let (payload, msg, prio) = self.payload_of(psn, mtu);
            return Some((
                MpSeg {
                    psn,
                    payload,
                    msg,
                    sport: vp,
                    retx: true,
                },
                prio,
            ));
        }
        let psn = self.snd_nxt;
        self.snd_nxt += 1;
        self.st.push_back(0);
        let mut sport = vp;
        if rng.uniform() < p.probe && now >= self.last_probe + p.base_rtt {
            sport = random_port(rng);
            self.last_probe = now;
            self.probes += 1;
        }
        let (payload, msg, prio) = self.payload_of(psn, mtu);
        Some((
            MpSeg {
                psn,
                payload,
                msg,
                sport,
                retx: false,
            },
            prio,
        ))
    }

    /// An ACK: cumulative point `aack`, the packet `psn` it acknowledges, the virtual path it
    /// came back on, its ECN echo and whether that packet was a retransmission. Completed WQEs
    /// go to `done`.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        aack: u64,
        psn: u64,
        vp: u16,
        ece: bool,
        retx: bool,
        p: &MpParams,
        mut done: impl FnMut(Wqe),
    ) {
        // Selective acknowledgement of `psn`.
        if psn >= self.snd_una && psn < self.snd_nxt {
            let f = &mut self.st[(psn - self.snd_una) as usize];
            if *f & ACKED == 0 {
                *f |= ACKED;
                self.inflate += 1;
            }
        }
        // Cumulative acknowledgement.
        let aack = aack.min(self.snd_nxt);
        while self.snd_una < aack {
            let f = self.st.pop_front().unwrap_or(0);
            if f & ACKED != 0 {
                self.inflate -= 1;
            }
            self.snd_una += 1;
        }
        while let Some(w) = self.wqes.front() {
            if w.psn_start + w.npkts > self.snd_una {
                break;
            }
            let w = self.wqes.pop_front().expect("front");
            self.outstanding -= w.bytes;
            done(w);
        }
        // Window update per ACK.
        if ece {
            self.cwnd = (self.cwnd - 0.5).max(1.0);
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
        // Out-of-order-aware pruning: a late ACK clocks nothing.
        let late = psn + p.delta <= self.max_acked && !retx;
        self.max_acked = self.max_acked.max(psn + 1);
        if late {
            self.pruned_acks += 1;
            return;
        }
        let awnd = self.cwnd - self.in_flight() as f64 - self.credits.len() as f64;
        let n = awnd.floor().clamp(0.0, 2.0) as u64;
        for _ in 0..n {
            self.credits.push_back(vp);
        }
    }

    /// Timeout: retransmit unacknowledged packets below `snd_nxt` with a window of one.
    pub fn on_timeout(&mut self, rng: &mut RngStream) {
        self.timeouts += 1;
        self.cwnd = 1.0;
        self.retx_next = Some(self.snd_una);
        self.recover_end = self.snd_nxt;
        self.credits.clear();
        self.credits.push_back(random_port(rng));
    }
}

fn random_port(rng: &mut RngStream) -> u16 {
    49_152 + rng.below(16_384) as u16
}

/// An ACK's header word: the message of the data packet it answers in the low 32 bits (as every RDMA
/// reply's, so that a lost ACK is counted against its message), and in the high 32 bits the
/// PSN it acknowledges, as its offset from the cumulative acknowledgement `aack` plus 2^31.
/// The receiver answers packets within its bitmap, so a PSN is at most the bitmap's 64
/// packets beyond `aack`; a duplicate far below it (more than 2^31 packets) is recorded as
/// 2^31 below, which the cumulative point acknowledges anyway.
fn ack_hdr(msg: u32, psn: u64, aack: u64) -> Hdr {
    let psn = psn.max(aack.saturating_sub(1 << 31));
    let off = psn + (1 << 31) - aack;
    debug_assert!(off < 1 << 32, "a PSN near the cumulative acknowledgement");
    Hdr::with_psn_offset(msg, off as u32)
}

/// The PSN an ACK acknowledges ([`ack_hdr`]).
fn acked_psn(hdr: Hdr, aack: u64) -> u64 {
    aack + hdr.psn_offset() - (1 << 31)
}

/// What the receiver made of a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Not received before: its bytes count.
    New,
    /// Received before (below the cumulative point or already in the bitmap).
    Duplicate,
    /// Further ahead than the bitmap reaches: dropped.
    Beyond,
}

/// Receiver: cumulative point and a bitmap of `l` packets beyond it.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct MpReceiver {
    pub aack: u64,
    /// Bit i: packet `aack + 1 + i` received (`l` ≤ 64).
    bits: u64,
    pub dropped_beyond: u64,
    pub duplicates: u64,
}

impl MpReceiver {
    /// A data packet: new, a duplicate, or beyond the bitmap.
    pub fn on_data(&mut self, psn: u64, l: u64) -> Arrival {
        if psn < self.aack {
            self.duplicates += 1;
            return Arrival::Duplicate;
        }
        if psn >= self.aack + l.min(64) {
            self.dropped_beyond += 1;
            return Arrival::Beyond;
        }
        if psn == self.aack {
            self.aack += 1;
            while self.bits & 1 != 0 {
                self.bits >>= 1;
                self.aack += 1;
            }
            self.bits >>= 1;
            Arrival::New
        } else {
            let bit = 1u64 << (psn - self.aack - 1);
            if self.bits & bit != 0 {
                self.duplicates += 1;
                return Arrival::Duplicate;
            }
            self.bits |= bit;
            Arrival::New
        }
    }
}

/// An MP-RDMA connection: both ends.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct MpQp {
    pub snd: MpSender,
    pub rcv: MpReceiver,
}

impl QueuePair for MpQp {
    type Params = MpParams;

    fn create(_line_bps: f64, _spec: &RdmaSpec, p: &MpParams) -> Self {
        MpQp {
            snd: MpSender::new(p),
            rcv: MpReceiver::default(),
        }
    }

    fn post(&mut self, msg: u32, bytes: u64, prio: u8, mtu: u32, rng: &mut RngStream) {
        self.snd.post(msg, bytes, prio, mtu);
        self.snd.kickstart(rng);
    }

    #[inline]
    fn has_data(&self, _spec: &RdmaSpec, _mp: &MpParams) -> bool {
        self.snd.can_send()
    }

    fn next_prio(&mut self) -> Option<u8> {
        self.snd.wqes.front().map(|w| w.prio)
    }

    fn outstanding(&self) -> u64 {
        self.snd.outstanding
    }

    fn drained(&self) -> bool {
        self.snd.snd_nxt >= self.snd.psn_tail
    }

    fn busy(&self) -> bool {
        self.snd.busy()
    }

    /// The next packet (a retransmission in recovery, else a new one) on the next clocked
    /// virtual path, then the retransmission timer. No pacing: the window clocks the sender.
    fn emit(
        &mut self,
        f: FlowId,
        h: &mut impl Host,
        pkt: &mut Packet,
        spec: &RdmaSpec,
        mp: &MpParams,
        msgs: &mut [Msg],
        rng: &mut RngStream,
    ) -> Option<bool> {
        let now = h.now();
        let p = &spec.params;
        let (seg, prio) = self.snd.next_segment(now, p.mtu, mp, rng)?;
        pkt.seq = seg.psn;
        pkt.payload = seg.payload as u16;
        pkt.size = (seg.payload + p.header) as u16;
        pkt.prio = prio;
        pkt.ecn = ecn::ECT;
        pkt.hdr = Hdr::with_message(seg.msg);
        pkt.sport = seg.sport;
        if seg.retx {
            pkt.flags |= flags::RETX;
            msgs[seg.msg as usize].retx += 1;
        }
        h.flow_mut(f).stats.data_pkts += 1;
        if let Some(rto) = p.rto
            && !h.timer_armed(f)
        {
            h.set_timer(f, now + rto);
        }
        Some(self.drained())
    }

    fn pace_wake(&mut self, _now: SimTime, _: &RdmaSpec, _: &MpParams) -> Option<SimTime> {
        None
    }

    /// Packets within the bitmap, duplicates included, are acknowledged individually: the ACK
    /// carries the cumulative point, the packet's PSN, its virtual path (the reversed
    /// ports) and its retransmission flag.
    fn on_data(
        &mut self,
        h: &mut impl Host,
        pkt: &Packet,
        spec: &RdmaSpec,
        mp: &MpParams,
        msgs: &mut [Msg],
    ) -> Option<Packet> {
        let p = &spec.params;
        let msg = &mut msgs[pkt.hdr.message()];
        if pkt.ce() {
            msg.ce += 1;
            h.flow_mut(pkt.flow).stats.ce_rcvd += 1;
        }
        match self.rcv.on_data(pkt.seq, mp.l) {
            // Beyond the bitmap: dropped without an ACK (the sender never sends there).
            Arrival::Beyond => return None,
            // A duplicate is acknowledged again: its first ACK may have been lost, and a
            // sender that retransmits a packet the receiver already holds would otherwise
            // time out for ever (the message never completes).
            Arrival::Duplicate => {}
            Arrival::New => {
                msg.rcvd += pkt.payload as u64;
                if msg.rcvd == msg.size {
                    msg.rcv_finish = Some(h.now());
                }
            }
        }
        let aack = self.rcv.aack;
        let mut ack = reply(
            pkt,
            PktKind::Ack,
            aack,
            ack_hdr(pkt.hdr.message() as u32, pkt.seq, aack),
            p.header,
            p.ack_prio,
        );
        ack.flags = pkt.flags & flags::RETX;
        Some(ack)
    }

    fn on_control(
        &mut self,
        _now: SimTime,
        pkt: &Packet,
        _spec: &RdmaSpec,
        mp: &MpParams,
        _int: &[IntHop],
        done: &mut Vec<Wqe>,
    ) -> Acked {
        let snd = &mut self.snd;
        let una_before = snd.snd_una;
        snd.on_ack(
            pkt.seq,
            acked_psn(pkt.hdr, pkt.seq),
            pkt.dport,
            pkt.ecn & ecn::ECE != 0,
            pkt.flags & flags::RETX != 0,
            mp,
            |w| done.push(w),
        );
        Acked {
            advanced: snd.snd_una > una_before,
            repace: false,
        }
    }

    fn after_acks(&mut self, rng: &mut RngStream) {
        self.snd.kickstart(rng);
    }

    fn on_timeout(&mut self, rng: &mut RngStream) {
        self.snd.on_timeout(rng);
    }

    fn sample(&self, _: &MpParams) -> FlowSample {
        FlowSample {
            cwnd_pkts: Some(self.snd.cwnd),
            ..Default::default()
        }
    }

    fn swap_receiver(&mut self, other: &mut Self) {
        std::mem::swap(&mut self.rcv, &mut other.rcv);
    }

    fn add_totals(&self, _: &MpParams, t: &mut QpTotals) {
        t.timeouts += self.snd.timeouts;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> MpParams {
        MpParams {
            delta: 32,
            l: 64,
            probe: 0.0,
            init_cwnd: 4.0,
            base_rtt: SimTime::from_us(10),
        }
    }

    #[test]
    fn receiver_bitmap_and_bound() {
        let mut r = MpReceiver::default();
        assert_eq!(r.on_data(1, 64), Arrival::New);
        assert_eq!(r.on_data(2, 64), Arrival::New);
        assert_eq!(r.aack, 0);
        assert_eq!(r.on_data(0, 64), Arrival::New);
        assert_eq!(r.aack, 3);
        assert_eq!(r.on_data(2, 64), Arrival::Duplicate);
        assert_eq!(r.on_data(3 + 64, 64), Arrival::Beyond, "beyond the bitmap");
        assert_eq!(r.dropped_beyond, 1);
    }

    #[test]
    fn ack_clocking_sends_on_the_acked_path() {
        let p = params();
        let mut rng = RngStream::new(1, "mp");
        let mut s = MpSender::new(&p);
        s.post(0, 100_000, 1, 1000);
        s.kickstart(&mut rng);
        let mut sent = Vec::new();
        while let Some((seg, _)) = s.next_segment(SimTime::ZERO, 1000, &p, &mut rng) {
            sent.push(seg);
        }
        assert_eq!(sent.len(), 4);
        // ACK for packet 0 on path 7777 without ECN: cwnd 4.25, awnd 1.25 -> one credit on 7777.
        s.on_ack(1, 0, 7777, false, false, &p, |_| {});
        let (seg, _) = s.next_segment(SimTime::ZERO, 1000, &p, &mut rng).unwrap();
        assert_eq!((seg.psn, seg.sport), (4, 7777));
        // A marked ACK shrinks the window and clocks nothing.
        s.on_ack(2, 1, 8888, true, false, &p, |_| {});
        assert!(s.next_segment(SimTime::ZERO, 1000, &p, &mut rng).is_none());
        assert!((s.cwnd - (4.0 + 0.25 - 0.5)).abs() < 1e-9);
    }

    #[test]
    fn late_acks_are_pruned() {
        let mut p = params();
        p.delta = 2;
        p.init_cwnd = 10.0;
        let mut rng = RngStream::new(1, "mp");
        let mut s = MpSender::new(&p);
        s.post(0, 100_000, 1, 1000);
        s.kickstart(&mut rng);
        while s.next_segment(SimTime::ZERO, 1000, &p, &mut rng).is_some() {}
        // Packet 5 acked first, then packet 1: 1 + 2 <= 6, so the ACK of 1 is late.
        s.on_ack(0, 5, 100, false, false, &p, |_| {});
        let credits = s.credits.len();
        s.on_ack(0, 1, 200, false, false, &p, |_| {});
        assert_eq!(s.pruned_acks, 1);
        assert_eq!(s.credits.len(), credits, "a late ACK clocks nothing");
    }

    #[test]
    fn a_lost_ack_is_answered_again_after_the_timeout() {
        // The last packet arrives, its ACK is lost: the retransmission is a duplicate at the
        // receiver, whose ACK again carries the cumulative point, and the work completes.
        let p = params();
        let mut rng = RngStream::new(1, "mp");
        let mut s = MpSender::new(&p);
        let mut r = MpReceiver::default();
        s.post(0, 1000, 1, 1000);
        s.kickstart(&mut rng);
        let (seg, _) = s.next_segment(SimTime::ZERO, 1000, &p, &mut rng).unwrap();
        assert_eq!(r.on_data(seg.psn, p.l), Arrival::New);
        s.on_timeout(&mut rng);
        let (again, _) = s.next_segment(SimTime::ZERO, 1000, &p, &mut rng).unwrap();
        assert!(again.retx);
        assert_eq!(r.on_data(again.psn, p.l), Arrival::Duplicate);
        let hdr = ack_hdr(0, again.psn, r.aack);
        let mut done = 0;
        s.on_ack(
            r.aack,
            acked_psn(hdr, r.aack),
            again.sport,
            false,
            true,
            &p,
            |_| done += 1,
        );
        assert_eq!((done, s.outstanding), (1, 0));
    }

    #[test]
    fn an_ack_carries_its_psn_around_the_cumulative_point() {
        for (psn, aack) in [(0, 0), (5, 3), (3, 5), (1 << 40, (1 << 40) + 64), (70, 6)] {
            let hdr = ack_hdr(7, psn, aack);
            assert_eq!((hdr.message(), acked_psn(hdr, aack)), (7, psn));
        }
        // Far below the cumulative point: recorded 2^31 below it.
        let aack = 1u64 << 40;
        assert_eq!(acked_psn(ack_hdr(7, 1, aack), aack), aack - (1 << 31));
    }
}
