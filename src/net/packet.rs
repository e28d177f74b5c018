//! The packet as it moves through the simulated network: a small `Copy` value (56 bytes)
//! carried by value through queues and links, never allocated per packet.
//!
//! A packet carries no payload bytes, only the header fields the models read. `size` is the
//! wire size (payload + configured header overhead), which is what links serialize and buffers
//! account; `payload` is what the transport counts as delivered.

use crate::ids::{FlowId, PortId};
use crate::units::SimTime;

/// What a packet is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum PktKind {
    /// Transport data.
    Data = 0,
    /// Transport acknowledgement (cumulative `seq`, optional SACK block in `aux`).
    Ack = 1,
    /// Negative acknowledgement (RDMA go-back-N).
    Nack = 2,
    /// Congestion notification packet (RDMA DCQCN).
    Cnp = 3,
}

/// ECN codepoint bits kept in `Packet::ecn`.
pub mod ecn {
    /// ECN-capable transport (ECT(0)).
    pub const ECT: u8 = 1;
    /// Congestion experienced (set by a switch on an ECT packet).
    pub const CE: u8 = 2;
    /// ECN-echo, on ACKs: the acknowledged data packet carried CE.
    pub const ECE: u8 = 4;
}

/// A packet (56 bytes). Keep it small: it is copied into queues and links at every hop.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Packet {
    /// Owning flow (or queue pair).
    pub flow: FlowId,
    /// Source and destination host.
    pub src: u32,
    pub dst: u32,
    /// Data: byte offset of the first payload byte. ACK: cumulative acknowledgement (next
    /// expected byte). RDMA: packet sequence number.
    pub seq: u64,
    /// Transport-specific word. TCP ACK: SACK block as `start_segment << 32 | end_segment`
    /// (0 when none). Otherwise free for the transport.
    pub aux: u64,
    /// Data: time the packet was handed to the NIC. ACK: the echoed value (RTT sampling).
    pub ts: SimTime,
    /// Bytes on the wire (payload + headers; at most 9 200 by config validation).
    pub size: u16,
    /// Payload bytes.
    pub payload: u16,
    /// UDP/TCP ports: part of the ECMP 5-tuple.
    pub sport: u16,
    pub dport: u16,
    /// Ingress port at the current switch (for ingress buffer accounting / PFC).
    pub in_port: PortId,
    pub kind: PktKind,
    /// Priority class = egress queue index (0 is the highest priority).
    pub prio: u8,
    /// ECN bits, see [`ecn`].
    pub ecn: u8,
    /// Transport flags (e.g. retransmission).
    pub flags: u8,
    /// Record in the delay-attribution side table (0: none; see `sim::attrib`).
    pub uid: u32,
}

/// `Packet::flags` bits.
pub mod flags {
    /// The data packet is a retransmission.
    pub const RETX: u8 = 1;
}

impl Packet {
    #[inline]
    pub fn is_data(&self) -> bool {
        self.kind == PktKind::Data
    }
    #[inline]
    pub fn ce(&self) -> bool {
        self.ecn & ecn::CE != 0
    }
}

/// IP protocol number used in the ECMP hash: 6 (TCP) or 17 (UDP/RoCEv2).
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

#[cfg(test)]
mod tests {
    #[test]
    fn packet_is_small() {
        assert!(std::mem::size_of::<super::Packet>() <= 56);
    }
}
