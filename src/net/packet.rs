//! The packet as it moves through the simulated network: a small `Copy` value (56 bytes)
//! carried by value through queues and links, never allocated per packet.
//!
//! A packet carries no payload bytes, only the header fields the models read. `size` is the
//! wire size (payload + configured header overhead), which is what links serialize and buffers
//! account; `payload` is what the transport counts as delivered.

use crate::ids::{FlowId, PortId};
use crate::units::SimTime;

/// What a packet is.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum PktKind {
    /// Transport data.
    Data = 0,
    /// Transport acknowledgement (cumulative `seq`, optional SACK block in `hdr`).
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
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct Packet {
    /// Owning flow (or queue pair).
    pub flow: FlowId,
    /// Source and destination host.
    pub src: u32,
    pub dst: u32,
    /// Data: byte offset of the first payload byte. ACK: cumulative acknowledgement (next
    /// expected byte). RDMA: packet sequence number.
    pub seq: u64,
    /// The protocol's header word: the pFabric rank, a SACK block, an RDMA message and its
    /// telemetry slot (see [`Hdr`]).
    pub hdr: Hdr,
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

/// The eight header bytes whose meaning depends on the protocol and the packet's kind. Every
/// meaning has its constructor and its accessor here, so no code elsewhere does bit
/// arithmetic on the word, and what a switch may read is named:
///
/// | packets               | meaning                                    | read by                  |
/// |-----------------------|--------------------------------------------|--------------------------|
/// | pFabric data          | the rank (smaller is served first)         | switches ([`Hdr::rank`]) |
/// | TCP ACK               | one SACK block, in segments                | the sender               |
/// | RDMA data, ACK, NACK  | the message; the in-band telemetry slot    | hosts; switches stamp the slot ([`Hdr::telemetry_slot`]) |
/// | MP-RDMA ACK           | the message; the acknowledged PSN's offset | the sender               |
///
/// Packets with none of these meanings carry [`Hdr::NONE`]. Eight bytes, not a field per
/// meaning, because a packet on a wire is one cache line.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Hdr(u64);

impl Hdr {
    /// No header word.
    pub const NONE: Hdr = Hdr(0);

    /// A pFabric data packet's rank.
    #[inline(always)]
    pub const fn with_rank(rank: u64) -> Hdr {
        Hdr(rank)
    }

    /// The rank a pFabric sender gave a data packet.
    #[inline(always)]
    pub const fn rank(self) -> u64 {
        self.0
    }

    /// A TCP ACK's SACK block, segments `lo..hi` (`hi` > `lo`, both below 2^32).
    #[inline(always)]
    pub const fn with_sack(lo: u64, hi: u64) -> Hdr {
        Hdr(lo << 32 | hi)
    }

    /// A TCP ACK's SACK block in segments, if it carries one.
    #[inline(always)]
    pub fn sack(self) -> Option<(u64, u64)> {
        (self.0 != 0).then_some((self.0 >> 32, self.0 & 0xFFFF_FFFF))
    }

    /// An RDMA packet of message `m` (no telemetry slot yet).
    #[inline(always)]
    pub const fn with_message(m: u32) -> Hdr {
        Hdr(m as u64)
    }

    /// The RDMA message a data packet (or its reply) belongs to.
    #[inline(always)]
    pub const fn message(self) -> usize {
        (self.0 & 0xFFFF_FFFF) as usize
    }

    /// The in-band telemetry slot an RDMA packet carries, if any.
    #[inline(always)]
    pub const fn telemetry_slot(self) -> Option<u32> {
        match (self.0 >> 32) as u32 {
            0 => None,
            s => Some(s - 1),
        }
    }

    /// Gives an RDMA packet telemetry slot `s`, keeping its message.
    #[inline(always)]
    pub fn set_telemetry_slot(&mut self, s: u32) {
        self.0 = (self.0 & 0xFFFF_FFFF) | ((s as u64 + 1) << 32);
    }

    /// An MP-RDMA ACK of message `m` acknowledging the PSN `offset` from a reference the
    /// protocol defines.
    #[inline(always)]
    pub const fn with_psn_offset(m: u32, offset: u32) -> Hdr {
        Hdr((offset as u64) << 32 | m as u64)
    }

    /// An MP-RDMA ACK's PSN offset ([`Hdr::with_psn_offset`]).
    #[inline(always)]
    pub const fn psn_offset(self) -> u64 {
        self.0 >> 32
    }
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
    use super::Hdr;

    #[test]
    fn packet_is_small() {
        assert!(std::mem::size_of::<super::Packet>() <= 56);
    }

    #[test]
    fn each_meaning_of_the_header_word_reads_back() {
        assert_eq!(Hdr::with_rank(u64::MAX - 3).rank(), u64::MAX - 3);
        assert_eq!(Hdr::NONE.sack(), None);
        assert_eq!(Hdr::with_sack(5, 9).sack(), Some((5, 9)));
        let mut h = Hdr::with_message(7);
        assert_eq!((h.message(), h.telemetry_slot()), (7, None));
        h.set_telemetry_slot(0);
        assert_eq!((h.message(), h.telemetry_slot()), (7, Some(0)));
        h.set_telemetry_slot(41);
        assert_eq!((h.message(), h.telemetry_slot()), (7, Some(41)));
        let a = Hdr::with_psn_offset(3, 1 << 31);
        assert_eq!((a.message(), a.psn_offset()), (3, 1 << 31));
    }
}
