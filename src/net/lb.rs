//! Load balancing: how a switch picks one egress port among the shortest-path candidates.
//!
//! * **ECMP**: a hash of the 5-tuple (source, destination, protocol, source port, destination
//!   port) with a per-switch salt, modulo the number of candidates. Hosts can compute the same
//!   hash ([`ecmp_index`]) to steer a flow onto a chosen path by picking its source port, as
//!   GPMP and MP-RDMA do with the RoCEv2 UDP source port.
//! * **Spray**: a uniformly random candidate per packet (random packet spraying).
//! * **Round robin**: the candidates in turn, per switch (ideal even spraying, for the
//!   PDTCP analysis check).
//! * **Adaptive** (AM of PDTCP+AM, spec §1.1): each egress port's signal bit is set while its
//!   queue holds fewer than `T_am` bytes (read before the packet is enqueued). Keep the ECMP
//!   port if its bit is set; else pick uniformly among the candidates whose bit is set; else
//!   keep the ECMP port and set CE on an ECN-capable packet. Applied literally on every hop,
//!   including those with a single candidate (where it can only mark). Decisions are counted
//!   per kind.
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
    /// Per-packet round robin over the candidates.
    RoundRobin,
    /// PDTCP's adaptive multipath (AM).
    Adaptive,
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
    /// AM's congestion threshold in bytes.
    pub t_am: u64,
    rr: u32,
    /// Decisions taken: [kept the hash port, picked another port, all congested (marked)].
    pub decisions: [u64; 3],
}

impl LoadBalancer {
    pub fn new(kind: LbKind, salt: u64, udp: bool, t_am: u64) -> Self {
        LoadBalancer {
            kind,
            salt,
            udp,
            t_am,
            rr: 0,
            decisions: [0; 3],
        }
    }

    #[inline]
    fn hash_index(&self, pkt: &Packet, n: usize) -> usize {
        let proto = if self.udp {
            PROTO_UDP
        } else {
            proto_of(pkt, false)
        };
        ecmp_index(pkt.src, pkt.dst, proto, pkt.sport, pkt.dport, self.salt, n)
    }

    /// Picks one of `cands` (non-empty) for `pkt`.
    #[inline]
    pub fn choose(
        &mut self,
        cands: &[PortId],
        pkt: &mut Packet,
        ports: &[Port],
        rng: &mut RngStream,
    ) -> PortId {
        if cands.len() == 1 && self.kind != LbKind::Adaptive {
            return cands[0];
        }
        match self.kind {
            LbKind::Ecmp => {
                self.decisions[0] += 1;
                cands[self.hash_index(pkt, cands.len())]
            }
            LbKind::Spray => {
                self.decisions[1] += 1;
                cands[rng.below(cands.len() as u64) as usize]
            }
            LbKind::RoundRobin => {
                self.decisions[1] += 1;
                self.rr = self.rr.wrapping_add(1);
                cands[self.rr as usize % cands.len()]
            }
            LbKind::Adaptive => {
                let h = if cands.len() == 1 {
                    cands[0]
                } else {
                    cands[self.hash_index(pkt, cands.len())]
                };
                let ok = |p: PortId| ports[p.idx()].total_bytes < self.t_am;
                if ok(h) {
                    self.decisions[0] += 1;
                    return h;
                }
                let n = cands.iter().filter(|&&c| ok(c)).count();
                if n > 0 {
                    self.decisions[1] += 1;
                    let k = rng.below(n as u64) as usize;
                    return *cands.iter().filter(|&&c| ok(c)).nth(k).expect("k < n");
                }
                self.decisions[2] += 1;
                if pkt.ecn & crate::net::packet::ecn::ECT != 0 {
                    pkt.ecn |= crate::net::packet::ecn::CE;
                }
                h
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::net::packet::{PktKind, ecn};
    use crate::net::port::{EcnConfig, SchedulerConfig};
    use crate::units::{BitRate, SimTime};

    fn ports(n: usize) -> Vec<Port> {
        (0..n)
            .map(|i| {
                Port::new(
                    NodeId(0),
                    PortId(i as u32),
                    BitRate::from_gbps(1),
                    SimTime::from_us(1),
                    1,
                    &SchedulerConfig::Strict,
                    EcnConfig::None,
                )
            })
            .collect()
    }

    fn pkt(sport: u16) -> Packet {
        Packet {
            flow: FlowId(0),
            src: 1,
            dst: 2,
            seq: 0,
            aux: 0,
            ts: SimTime::ZERO,
            size: 1500,
            payload: 1460,
            sport,
            dport: 80,
            in_port: PortId(0),
            kind: PktKind::Data,
            prio: 0,
            ecn: ecn::ECT,
            flags: 0,
            uid: 0,
        }
    }

    fn fill(p: &mut Port, bytes: u64) {
        p.total_bytes = bytes;
    }

    #[test]
    fn am_keeps_the_hash_port_when_it_is_uncongested() {
        let mut ps = ports(4);
        let cands: Vec<PortId> = (0..4).map(PortId).collect();
        let mut lb = LoadBalancer::new(LbKind::Adaptive, 99, false, 30_000);
        let mut rng = RngStream::new(1, "am");
        for sport in 1000..1100u16 {
            let mut p = pkt(sport);
            let h = cands[lb.hash_index(&p, 4)];
            // Congest every port except the hash port.
            for (i, port) in ps.iter_mut().enumerate() {
                fill(
                    port,
                    if PortId(i as u32) == h {
                        29_999
                    } else {
                        1_000_000
                    },
                );
            }
            assert_eq!(lb.choose(&cands, &mut p, &ps, &mut rng), h);
            assert_eq!(p.ecn & ecn::CE, 0);
        }
        assert_eq!(lb.decisions, [100, 0, 0]);
    }

    #[test]
    fn am_picks_uniformly_among_uncongested_ports_otherwise() {
        let mut ps = ports(5);
        let cands: Vec<PortId> = (0..5).map(PortId).collect();
        let mut lb = LoadBalancer::new(LbKind::Adaptive, 7, false, 30_000);
        let mut rng = RngStream::new(2, "am");
        let p0 = pkt(2000);
        let h = lb.hash_index(&p0, 5);
        // The hash port and one other are congested: three candidates remain.
        let other = (h + 1) % 5;
        for (i, port) in ps.iter_mut().enumerate() {
            fill(port, if i == h || i == other { 30_000 } else { 0 });
        }
        let mut counts = [0u32; 5];
        let n = 30_000;
        for _ in 0..n {
            let mut p = p0;
            let c = lb.choose(&cands, &mut p, &ps, &mut rng).idx();
            counts[c] += 1;
        }
        assert_eq!(counts[h] + counts[other], 0);
        assert_eq!(lb.decisions, [0, n as u64, 0]);
        // Chi-square over the three free ports, 2 dof: 13.8 is the 0.999 quantile.
        let e = n as f64 / 3.0;
        let chi: f64 = (0..5)
            .filter(|&i| i != h && i != other)
            .map(|i| (counts[i] as f64 - e).powi(2) / e)
            .sum();
        assert!(chi < 13.8, "counts {counts:?}, chi2 {chi}");
    }

    #[test]
    fn am_marks_ce_when_every_candidate_is_congested() {
        let mut ps = ports(3);
        for p in ps.iter_mut() {
            fill(p, 40_000);
        }
        let cands: Vec<PortId> = (0..3).map(PortId).collect();
        let mut lb = LoadBalancer::new(LbKind::Adaptive, 3, false, 30_000);
        let mut rng = RngStream::new(3, "am");
        let mut p = pkt(5);
        let h = cands[lb.hash_index(&p, 3)];
        assert_eq!(lb.choose(&cands, &mut p, &ps, &mut rng), h);
        assert_ne!(p.ecn & ecn::CE, 0);
        // A non-ECT packet (the TCP+AM baseline) is forwarded on the hash port unmarked.
        let mut q = pkt(5);
        q.ecn = 0;
        assert_eq!(lb.choose(&cands, &mut q, &ps, &mut rng), h);
        assert_eq!(q.ecn, 0);
        // On a single-candidate hop AM can only mark.
        let mut r = pkt(9);
        assert_eq!(lb.choose(&cands[..1], &mut r, &ps, &mut rng), cands[0]);
        assert_ne!(r.ecn & ecn::CE, 0);
        assert_eq!(lb.decisions, [0, 0, 3]);
    }

    #[test]
    fn round_robin_cycles() {
        let ps = ports(3);
        let cands: Vec<PortId> = (0..3).map(PortId).collect();
        let mut lb = LoadBalancer::new(LbKind::RoundRobin, 3, false, 0);
        let mut rng = RngStream::new(3, "rr");
        let picks: Vec<usize> = (0..6)
            .map(|_| lb.choose(&cands, &mut pkt(1), &ps, &mut rng).idx())
            .collect();
        assert_eq!(picks, vec![1, 2, 0, 1, 2, 0]);
    }
}
