//! Load balancing: how a switch picks one egress port among the shortest-path candidates.
//!
//! * **ECMP**: a hash of the 5-tuple (source, destination, protocol, source port, destination
//!   port) with a per-switch salt, modulo the number of candidates. Hosts can compute the same
//!   hash ([`ecmp_index`]) to steer a flow onto a chosen path by picking its source port, as
//!   GPMP and MP-RDMA do with the RoCEv2 UDP source port.
//! * **Spray**: a uniformly random candidate per packet (random packet spraying).
//! * **Round robin**: the candidates in turn, per switch (ideal even spraying, for the
//!   PDTCP analysis check).
//! * **Adaptive** (AM of PDTCP+AM, PDTCP reconstruction §1.1): each egress port's signal bit is set while its
//!   queue holds fewer than `T_am` bytes (read before the packet is enqueued). Keep the ECMP
//!   port if its bit is set; else pick uniformly among the candidates whose bit is set; else
//!   keep the ECMP port and set CE on an ECN-capable packet. Applied literally on every hop,
//!   including those with a single candidate (where it can only mark). Decisions are counted
//!   per kind.
//! * **Flowlet** (LetFlow, NSDI 2017): a table of `table` entries per switch, indexed by the
//!   5-tuple hash, holds each entry's port and the time its last packet arrived. A packet
//!   arriving more than `gap` after the previous packet of its entry starts a new flowlet on a
//!   uniformly random candidate; otherwise it follows its flowlet's port. As in hardware,
//!   flows whose hashes collide share an entry; a stored port that is not a candidate for the
//!   packet (a colliding flow to another destination) starts a new flowlet. Decisions: packets
//!   that followed their flowlet, packets that started one.
//! * **WCMP**: the 5-tuple hash mapped onto the candidates in proportion to their link rates
//!   (weights in Mb/s, [`weighted_index`]): for unequal paths, e.g. a 10 and a 40 Gbps uplink,
//!   about 1:4 of the flows.
//!
//! Not modelled: CONGA-style path congestion feedback, flowlet tables that age or evict
//! entries other than by overwrite.
//!
//! The [`LoadBalancer`] enum is the hook where switch-local adaptive policies (the adaptive
//! multipath of PDTCP+AM) plug in: `choose` sees the candidate ports and their queue state.

use crate::engine::RngStream;
use crate::engine::rng::mix64;
use crate::ids::PortId;
use crate::net::packet::{PROTO_TCP, PROTO_UDP, Packet, PktKind};
use crate::net::port::Port;
use crate::units::SimTime;
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
    /// Flowlet switching with a random port per flowlet (LetFlow).
    Flowlet,
    /// Weighted flow hashing (WCMP): the 5-tuple hash picks a candidate with probability
    /// proportional to its link rate (equal rates: ECMP's spread, not its choices).
    Wcmp,
}

impl LbKind {
    /// The config name (`[switch] load_balancer`).
    pub fn name(self) -> &'static str {
        match self {
            LbKind::Ecmp => "ecmp",
            LbKind::Spray => "spray",
            LbKind::RoundRobin => "round_robin",
            LbKind::Adaptive => "adaptive",
            LbKind::Flowlet => "flowlet",
            LbKind::Wcmp => "wcmp",
        }
    }

    /// Whether packets of one flow may take different paths, and so arrive out of order
    /// (flowlets: when a flowlet's gap is shorter than the difference of its paths' delays).
    pub fn reorders(self) -> bool {
        !matches!(self, LbKind::Ecmp | LbKind::Wcmp)
    }
}

/// A run's load-balancer parameters (every switch gets the same).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LbParams {
    pub kind: LbKind,
    /// Whether hashed packets are UDP (RoCEv2) rather than TCP.
    pub udp: bool,
    /// AM's congestion threshold in bytes.
    pub t_am: u64,
    /// Flowlet: the inactivity gap that ends a flowlet.
    pub flowlet_gap: SimTime,
    /// Flowlet: table entries per switch, a power of two.
    pub flowlet_table: usize,
}

impl LbParams {
    /// Load balancer `kind` with the defaults of the other kinds' parameters (tests).
    pub fn new(kind: LbKind) -> Self {
        LbParams {
            kind,
            udp: false,
            t_am: 30_000,
            flowlet_gap: SimTime::from_us(500),
            flowlet_table: 4096,
        }
    }
}

/// One flowlet-table entry: the port of its current flowlet and when its last packet came.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct FlowletEntry {
    last: SimTime,
    port: PortId,
}

/// No port yet: never a candidate.
const NO_PORT: PortId = PortId(u32::MAX);

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
/// The candidate that the 32-bit hash value `h` picks when each candidate's share of the
/// hash space is proportional to its port's rate.
pub fn weighted_index(h: u64, cands: &[PortId], ports: &[Port]) -> usize {
    let w = |p: &PortId| ports[p.idx()].rate.bps() / 1_000_000;
    let total: u64 = cands.iter().map(w).sum();
    let mut point = ((h as u128 * total as u128) >> 32) as u64;
    for (i, c) in cands.iter().enumerate() {
        let x = w(c);
        if point < x {
            return i;
        }
        point -= x;
    }
    cands.len() - 1
}

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
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LoadBalancer {
    pub kind: LbKind,
    pub salt: u64,
    /// Whether hashed packets are UDP (RoCEv2) rather than TCP.
    pub udp: bool,
    /// AM's congestion threshold in bytes.
    pub t_am: u64,
    rr: u32,
    flowlet_gap: SimTime,
    /// Flowlet table (empty unless the kind is `Flowlet`); its length is a power of two.
    flowlets: Vec<FlowletEntry>,
    /// Decisions taken: [kept the hash port, picked another port, all congested (marked)];
    /// flowlet: [followed the flowlet, started one, 0].
    pub decisions: [u64; 3],
}

impl LoadBalancer {
    pub fn new(p: &LbParams, salt: u64) -> Self {
        let n = if p.kind == LbKind::Flowlet {
            debug_assert!(p.flowlet_table.is_power_of_two());
            p.flowlet_table
        } else {
            0
        };
        LoadBalancer {
            kind: p.kind,
            salt,
            udp: p.udp,
            t_am: p.t_am,
            rr: 0,
            flowlet_gap: p.flowlet_gap,
            flowlets: vec![
                FlowletEntry {
                    last: SimTime::ZERO,
                    port: NO_PORT,
                };
                n
            ],
            decisions: [0; 3],
        }
    }

    #[inline]
    fn proto(&self, pkt: &Packet) -> u8 {
        if self.udp {
            PROTO_UDP
        } else {
            proto_of(pkt, false)
        }
    }

    #[inline]
    fn hash_index(&self, pkt: &Packet, n: usize) -> usize {
        let proto = self.proto(pkt);
        ecmp_index(pkt.src, pkt.dst, proto, pkt.sport, pkt.dport, self.salt, n)
    }

    /// Flowlet switching: the packet's entry, a new random port when the gap has passed.
    fn flowlet(
        &mut self,
        cands: &[PortId],
        pkt: &Packet,
        now: SimTime,
        rng: &mut RngStream,
    ) -> PortId {
        let h = ecmp_hash(
            pkt.src,
            pkt.dst,
            self.proto(pkt),
            pkt.sport,
            pkt.dport,
            self.salt,
        );
        let i = h as usize & (self.flowlets.len() - 1);
        let gap = self.flowlet_gap;
        let e = &mut self.flowlets[i];
        let fresh = now.saturating_sub(e.last) <= gap && cands.contains(&e.port);
        e.last = now;
        if fresh {
            self.decisions[0] += 1;
        } else {
            self.decisions[1] += 1;
            e.port = cands[rng.below(cands.len() as u64) as usize];
        }
        e.port
    }

    /// Picks one of `cands` (non-empty) for `pkt`, arriving at `now`.
    #[inline]
    pub fn choose(
        &mut self,
        cands: &[PortId],
        pkt: &mut Packet,
        ports: &[Port],
        now: SimTime,
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
            LbKind::Flowlet => self.flowlet(cands, pkt, now, rng),
            LbKind::Wcmp => {
                self.decisions[0] += 1;
                let proto = self.proto(pkt);
                let h = ecmp_hash(pkt.src, pkt.dst, proto, pkt.sport, pkt.dport, self.salt) >> 32;
                cands[weighted_index(h, cands, ports)]
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
    use crate::net::packet::{Hdr, PktKind, ecn};
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
            hdr: Hdr::NONE,
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
        let mut lb = LoadBalancer::new(
            &LbParams {
                t_am: 30_000,
                ..LbParams::new(LbKind::Adaptive)
            },
            99,
        );
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
            assert_eq!(lb.choose(&cands, &mut p, &ps, SimTime::ZERO, &mut rng), h);
            assert_eq!(p.ecn & ecn::CE, 0);
        }
        assert_eq!(lb.decisions, [100, 0, 0]);
    }

    #[test]
    fn am_picks_uniformly_among_uncongested_ports_otherwise() {
        let mut ps = ports(5);
        let cands: Vec<PortId> = (0..5).map(PortId).collect();
        let mut lb = LoadBalancer::new(
            &LbParams {
                t_am: 30_000,
                ..LbParams::new(LbKind::Adaptive)
            },
            7,
        );
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
            let c = lb
                .choose(&cands, &mut p, &ps, SimTime::ZERO, &mut rng)
                .idx();
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
        let mut lb = LoadBalancer::new(
            &LbParams {
                t_am: 30_000,
                ..LbParams::new(LbKind::Adaptive)
            },
            3,
        );
        let mut rng = RngStream::new(3, "am");
        let mut p = pkt(5);
        let h = cands[lb.hash_index(&p, 3)];
        assert_eq!(lb.choose(&cands, &mut p, &ps, SimTime::ZERO, &mut rng), h);
        assert_ne!(p.ecn & ecn::CE, 0);
        // A non-ECT packet (the TCP+AM baseline) is forwarded on the hash port unmarked.
        let mut q = pkt(5);
        q.ecn = 0;
        assert_eq!(lb.choose(&cands, &mut q, &ps, SimTime::ZERO, &mut rng), h);
        assert_eq!(q.ecn, 0);
        // On a single-candidate hop AM can only mark.
        let mut r = pkt(9);
        assert_eq!(
            lb.choose(&cands[..1], &mut r, &ps, SimTime::ZERO, &mut rng),
            cands[0]
        );
        assert_ne!(r.ecn & ecn::CE, 0);
        assert_eq!(lb.decisions, [0, 0, 3]);
    }

    #[test]
    fn round_robin_cycles() {
        let ps = ports(3);
        let cands: Vec<PortId> = (0..3).map(PortId).collect();
        let mut lb = LoadBalancer::new(
            &LbParams {
                t_am: 0,
                ..LbParams::new(LbKind::RoundRobin)
            },
            3,
        );
        let mut rng = RngStream::new(3, "rr");
        let picks: Vec<usize> = (0..6)
            .map(|_| {
                lb.choose(&cands, &mut pkt(1), &ps, SimTime::ZERO, &mut rng)
                    .idx()
            })
            .collect();
        assert_eq!(picks, vec![1, 2, 0, 1, 2, 0]);
    }

    fn flowlet(gap_us: u64, table: usize) -> LoadBalancer {
        let p = LbParams {
            flowlet_gap: SimTime::from_us(gap_us),
            flowlet_table: table,
            ..LbParams::new(LbKind::Flowlet)
        };
        LoadBalancer::new(&p, 11)
    }

    #[test]
    fn flowlet_keeps_its_port_within_the_gap_and_repicks_after_it() {
        let ps = ports(8);
        let cands: Vec<PortId> = (0..8).map(PortId).collect();
        let mut lb = flowlet(100, 4096);
        let mut rng = RngStream::new(4, "fl");
        // Packets 50 us apart (within the 100 us gap) stay on one port, however long.
        let first = lb.choose(&cands, &mut pkt(7), &ps, SimTime::ZERO, &mut rng);
        for i in 1..1000u64 {
            let t = SimTime::from_us(50 * i);
            assert_eq!(lb.choose(&cands, &mut pkt(7), &ps, t, &mut rng), first);
        }
        assert_eq!(lb.decisions, [999, 1, 0]);
        // Exactly the gap continues the flowlet; just over it starts a new one.
        let t = SimTime::from_us(50 * 999);
        let at_gap = t + SimTime::from_us(100);
        assert_eq!(lb.choose(&cands, &mut pkt(7), &ps, at_gap, &mut rng), first);
        let mut picks = [0u32; 8];
        let mut t = at_gap;
        let n = 8000;
        for _ in 0..n {
            t = t + SimTime::from_us(100) + SimTime::from_ps(1);
            picks[lb.choose(&cands, &mut pkt(7), &ps, t, &mut rng).idx()] += 1;
        }
        assert_eq!(lb.decisions, [1000, 1 + n as u64, 0]);
        // Each new flowlet takes a uniformly random port: chi-square, 7 dof, 0.999 quantile 24.3.
        let e = n as f64 / 8.0;
        let chi: f64 = picks.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        assert!(chi < 24.3, "picks {picks:?}, chi2 {chi}");
    }

    #[test]
    fn flowlet_entries_are_per_flow_and_collisions_respect_the_candidates() {
        let ps = ports(8);
        let cands: Vec<PortId> = (0..4).map(PortId).collect();
        let others: Vec<PortId> = (4..8).map(PortId).collect();
        // A one-entry table: every flow collides.
        let mut lb = flowlet(100, 1);
        let mut rng = RngStream::new(5, "fl");
        let a = lb.choose(&cands, &mut pkt(1), &ps, SimTime::ZERO, &mut rng);
        // A colliding flow within the gap follows the entry's port when it is a candidate...
        let t = SimTime::from_us(10);
        assert_eq!(lb.choose(&cands, &mut pkt(2), &ps, t, &mut rng), a);
        // ...and starts a new flowlet among its own candidates when it is not.
        let b = lb.choose(&others, &mut pkt(3), &ps, t, &mut rng);
        assert!(others.contains(&b));
        assert_eq!(lb.decisions, [1, 2, 0]);
        // With a large table, flows are independent: many flows spread over the ports.
        let mut lb = flowlet(100, 1 << 16);
        let mut used = [false; 4];
        for sport in 0..200u16 {
            let p = lb.choose(&cands, &mut pkt(sport), &ps, SimTime::ZERO, &mut rng);
            used[p.idx()] = true;
        }
        assert!(used.iter().all(|&u| u));
        // A single candidate needs no table.
        assert_eq!(
            lb.choose(&cands[..1], &mut pkt(9), &ps, SimTime::ZERO, &mut rng),
            cands[0]
        );
    }
}
