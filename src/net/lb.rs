//! Load balancing: how a switch picks one egress port among the shortest-path candidates.
//!
//! * **ECMP**: a hash of the 5-tuple (source, destination, protocol, source port, destination
//!   port) with a per-switch salt, modulo the number of candidates. Hosts can compute the same
//!   hash ([`ecmp_index`]) to steer a flow onto a chosen path by picking its source port, as
//!   GPMP and MP-RDMA do with the RoCEv2 UDP source port.
//! * **Spray**: a uniformly random candidate per packet (random packet spraying).
//!
//! The [`LoadBalancer`] enum is the hook where switch-local adaptive policies (the adaptive
//! multipath of PDTCP+AM) plug in: `choose` sees the candidate ports and their queue state.

use crate::engine::RngStream;
use crate::engine::rng::mix64;
use crate::ids::PortId;
use crate::net::packet::{PROTO_TCP, PROTO_UDP, Packet, PktKind};
use crate::net::port::Port;
use serde::{Deserialize, Serialize};

/// Load-balancer choice in configs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LbKind {
    /// Per-flow hashing of the 5-tuple (flow hashing, "FH").
    #[default]
    Ecmp,
    /// Per-packet uniform random choice.
    Spray,
}

/// The 5-tuple hash used by ECMP. `salt` is the switch's salt.
#[inline]
pub fn ecmp_hash(src: u32, dst: u32, proto: u8, sport: u16, dport: u16, salt: u64) -> u64 {
    let a = (src as u64) << 32 | dst as u64;
    let b = (proto as u64) << 32 | (sport as u64) << 16 | dport as u64;
    mix64(mix64(a ^ salt) ^ b)
}

/// Index chosen by ECMP among `n` candidates: the high 32 bits of the hash scaled to `n`
/// (multiply-shift range reduction, no division on the per-packet path).
#[inline]
pub fn ecmp_index(
    src: u32,
    dst: u32,
    proto: u8,
    sport: u16,
    dport: u16,
    salt: u64,
    n: usize,
) -> usize {
    (((ecmp_hash(src, dst, proto, sport, dport, salt) >> 32) * n as u64) >> 32) as usize
}

/// Protocol number of a packet for hashing: RDMA kinds are UDP, TCP otherwise.
#[inline]
pub fn proto_of(p: &Packet, rdma: bool) -> u8 {
    if rdma || matches!(p.kind, PktKind::Nack | PktKind::Cnp) {
        PROTO_UDP
    } else {
        PROTO_TCP
    }
}

/// Runtime load balancer of one switch.
#[derive(Clone, Debug)]
pub struct LoadBalancer {
    pub kind: LbKind,
    pub salt: u64,
    /// Whether hashed packets are UDP (RoCEv2) rather than TCP.
    pub udp: bool,
    /// Decisions taken, by kind: [hash, random].
    pub decisions: [u64; 2],
}

impl LoadBalancer {
    pub fn new(kind: LbKind, salt: u64, udp: bool) -> Self {
        LoadBalancer {
            kind,
            salt,
            udp,
            decisions: [0; 2],
        }
    }

    /// Picks one of `cands` (non-empty) for `pkt`.
    #[inline]
    pub fn choose(
        &mut self,
        cands: &[PortId],
        pkt: &mut Packet,
        _ports: &[Port],
        rng: &mut RngStream,
    ) -> PortId {
        if cands.len() == 1 {
            return cands[0];
        }
        match self.kind {
            LbKind::Ecmp => {
                self.decisions[0] += 1;
                let proto = if self.udp {
                    PROTO_UDP
                } else {
                    proto_of(pkt, false)
                };
                cands[ecmp_index(
                    pkt.src,
                    pkt.dst,
                    proto,
                    pkt.sport,
                    pkt.dport,
                    self.salt,
                    cands.len(),
                )]
            }
            LbKind::Spray => {
                self.decisions[1] += 1;
                cands[rng.below(cands.len() as u64) as usize]
            }
        }
    }
}
