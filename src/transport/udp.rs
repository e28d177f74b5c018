//! UDP: an unreliable stream of `mss`-byte datagrams at a constant rate, for background load
//! and for tests that need a saturating source.
//!
//! Modelled: packets back to back at the host line rate, or paced at a lower configured rate
//! (the gap after a packet is its wire size at that rate); the flow finishes when its last byte
//! arrives at the receiver (receiver-side completion; nothing is acknowledged).
//!
//! Not modelled: acknowledgements, congestion control, loss recovery (a flow that loses a
//! packet never finishes; the run then ends idle or at its stop time).

use super::{Flow, Host, Protocol, Rx};
use crate::ids::FlowId;
use crate::net::packet::Packet;
use crate::units::{BitRate, SimTime};

/// One UDP flow's state.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct UdpFlow {
    /// Payload bytes handed to the NIC so far.
    pub sent: u64,
    /// Payload bytes received.
    pub rcvd: u64,
    /// Inter-packet gap per wire byte for pacing below line rate (zero: back to back).
    gap_per_byte_ps: u64,
}

/// The UDP transport of a run.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Udp {
    pub mss: u32,
    pub header: u32,
    pub flows: Vec<UdpFlow>,
    /// The sending rate (None: each host's line rate).
    rate: Option<BitRate>,
}

impl Udp {
    /// Flows send at `rate` (None: their host's line rate).
    pub fn new(
        rate: Option<BitRate>,
        mss: u32,
        header: u32,
        flows: &[Flow],
        line_rate: impl Fn(&Flow) -> BitRate,
    ) -> Udp {
        let flows = flows
            .iter()
            .map(|f| UdpFlow::new(rate, line_rate(f)))
            .collect();
        Udp {
            mss,
            header,
            flows,
            rate,
        }
    }

    /// A fresh flow state in slot `f` (one past the last, or a released one); `line` is its
    /// host's line rate.
    pub fn open(&mut self, f: FlowId, _fl: &Flow, line: BitRate) {
        let u = UdpFlow::new(self.rate, line);
        match f.idx().cmp(&self.flows.len()) {
            std::cmp::Ordering::Less => self.flows[f.idx()] = u,
            std::cmp::Ordering::Equal => self.flows.push(u),
            std::cmp::Ordering::Greater => unreachable!("slots are allocated in order"),
        }
    }
}

impl UdpFlow {
    /// A flow that sends at `rate` (None: `line`) from a host of line rate `line`.
    fn new(rate: Option<BitRate>, line: BitRate) -> UdpFlow {
        let r = rate.unwrap_or(line);
        UdpFlow {
            sent: 0,
            rcvd: 0,
            gap_per_byte_ps: if r >= line {
                0
            } else {
                r.ser_time(1 << 20).0 >> 20
            },
        }
    }
}

impl Protocol for Udp {
    #[inline]
    fn has_data(&self, f: FlowId, fl: &Flow) -> bool {
        self.flows[f.idx()].sent < fl.size
    }

    /// The next datagram; below line rate, the flow then waits out its pacing gap.
    #[inline]
    fn emit(&mut self, f: FlowId, h: &mut impl Host, pkt: &mut Packet) -> bool {
        let now = h.now();
        let u = &mut self.flows[f.idx()];
        let fl = h.flow_mut(f);
        if u.sent >= fl.size {
            return false;
        }
        let len = (fl.size - u.sent).min(self.mss as u64) as u32;
        pkt.seq = u.sent;
        u.sent += len as u64;
        pkt.payload = len as u16;
        pkt.size = (len + self.header) as u16;
        fl.stats.data_pkts += 1;
        if u.gap_per_byte_ps > 0 {
            let wait = SimTime(pkt.size as u64 * u.gap_per_byte_ps);
            h.set_pace(f, now + wait);
        }
        true
    }

    /// The receiver counts the payload; the flow finishes with its last byte.
    fn on_data(&mut self, h: &mut impl Host, pkt: &Packet) -> Rx {
        let now = h.now();
        let f = pkt.flow;
        let fl = h.flow_mut(f);
        if pkt.ce() {
            fl.stats.ce_rcvd += 1;
        }
        let u = &mut self.flows[f.idx()];
        u.rcvd += pkt.payload as u64;
        if u.rcvd >= fl.size && fl.finish.is_none() {
            fl.rcv_finish = Some(now);
            fl.finish = Some(now);
            let tag = fl.tag;
            h.finished(f.idx(), pkt.uid, true, tag);
            return Rx {
                reply: None,
                received: true,
            };
        }
        Rx::NONE
    }

    /// Nothing is acknowledged.
    fn on_control(&mut self, _h: &mut impl Host, _pkt: &Packet) -> bool {
        false
    }

    fn adopt(&mut self, other: &mut Self, f: FlowId, sender: bool) {
        let (a, b) = (&mut self.flows[f.idx()], &other.flows[f.idx()]);
        if sender {
            a.sent = b.sent;
        } else {
            a.rcvd = b.rcvd;
        }
    }

    /// No timers.
    fn on_timer(&mut self, _f: FlowId, _h: &mut impl Host) {}
}
