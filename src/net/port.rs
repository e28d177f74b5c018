//! An egress port: up to 8 priority queues, a scheduler that picks the next queue, ECN marking,
//! a serializer and the link's propagation FIFO.
//!
//! Modelled: store-and-forward serialization at the port rate, exact to the picosecond;
//! propagation as a FIFO of `(arrival time, packet)` with one pending event for its head
//! (htsim's pipe); per-priority PFC pause (a paused queue is not served; a packet already being
//! serialized finishes); schedulers strict priority, DWRR, and strict priority with a per-queue
//! minimum-bandwidth guarantee (token bucket), and pFabric's (strict priority between queues;
//! within a queue, the earliest packet of the flow holding the smallest-rank packet, with
//! priority dropping done by the switch, see `sim`); ECN marking by instantaneous step threshold K
//! (DCTCP) or RED-style Kmin/Kmax/Pmax (DCQCN), applied at enqueue or at dequeue, on the
//! occupancy of the packet's own queue, to ECN-capable data packets only.
//!
//! Not modelled: preemption, inter-frame gaps beyond what `header` bytes include, bit errors,
//! cut-through switching, a separate MAC-control lane (PFC frames are events, see `sim`).
//! Buffer admission is the switch MMU's job (`buffer`), not the port's.

use crate::engine::RngStream;
use crate::ids::{NodeId, PortId};
use crate::net::packet::{Packet, ecn};
use crate::units::{BitRate, Bytes, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Maximum number of priority queues per port.
pub const MAX_QUEUES: usize = 8;

/// When ECN marking is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    /// On arrival, on the queue occupancy seen by the arriving packet (DCTCP).
    #[default]
    Enqueue,
    /// When the packet starts transmission, on the occupancy it leaves behind (DCQCN/HPCC).
    Dequeue,
}

/// ECN marking policy of a switch egress queue.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum EcnConfig {
    /// No marking.
    #[default]
    None,
    /// Mark when the queue holds more than `k` bytes (DCTCP's instantaneous threshold).
    Step {
        k: Bytes,
        #[serde(default)]
        at: MarkAt,
    },
    /// Mark with probability 0 below `kmin`, `pmax·(q−kmin)/(kmax−kmin)` between, 1 above
    /// `kmax` (DCQCN/HPCC `ShouldSendCN`), on the instantaneous queue.
    Red {
        kmin: Bytes,
        kmax: Bytes,
        pmax: f64,
        #[serde(default = "dequeue")]
        at: MarkAt,
    },
}

fn dequeue() -> MarkAt {
    MarkAt::Dequeue
}

impl EcnConfig {
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            EcnConfig::Red {
                kmin, kmax, pmax, ..
            } => {
                if kmin > kmax {
                    return Err(format!("kmin ({kmin}) must not exceed kmax ({kmax})"));
                }
                if !(0.0..=1.0).contains(&pmax) {
                    return Err(format!("pmax must be in [0, 1], got {pmax}"));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Whether a packet meeting queue occupancy `q` (bytes) is marked. `rng` is drawn only by RED
    /// between its thresholds.
    #[inline]
    pub fn should_mark(&self, q: u64, rng: &mut RngStream) -> bool {
        match *self {
            EcnConfig::None => false,
            EcnConfig::Step { k, .. } => q > k.0,
            EcnConfig::Red {
                kmin, kmax, pmax, ..
            } => {
                if q > kmax.0 {
                    true
                } else if q > kmin.0 {
                    let p = pmax * (q - kmin.0) as f64 / (kmax.0 - kmin.0) as f64;
                    rng.uniform() < p
                } else {
                    false
                }
            }
        }
    }

    pub fn at(&self) -> Option<MarkAt> {
        match *self {
            EcnConfig::None => None,
            EcnConfig::Step { at, .. } | EcnConfig::Red { at, .. } => Some(at),
        }
    }
}

/// Egress scheduler configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum SchedulerConfig {
    /// Strict priority: the lowest-index non-empty, non-paused queue is served.
    #[default]
    Strict,
    /// Deficit weighted round robin; queue `i` gets `weights[i] × quantum` bytes per round.
    Dwrr {
        weights: Vec<u32>,
        #[serde(default = "default_quantum")]
        quantum: Bytes,
    },
    /// Strict priority with a minimum-bandwidth guarantee per queue (GPMP reconstruction §2.7): queues
    /// `0..strict_top` are served first, strictly; then any queue whose token bucket
    /// (rate `min_rate[i]`, depth `depth`) holds its head packet, lowest index first; then
    /// strict priority over the rest. Queues beyond `min_rate.len()` have no guarantee.
    StrictMinBw {
        min_rate: Vec<BitRate>,
        #[serde(default = "default_depth")]
        depth: Bytes,
        #[serde(default)]
        strict_top: u8,
    },
    /// pFabric (Alizadeh et al., SIGCOMM 2013): strict priority between queues; within a
    /// queue, the earliest packet of the flow that holds the packet of the smallest rank
    /// (data packets carry their rank, control packets rank 0). Switches drop by rank when
    /// the buffer is full.
    Pfabric,
}

fn default_quantum() -> Bytes {
    Bytes(1500)
}
fn default_depth() -> Bytes {
    Bytes(2000)
}

impl SchedulerConfig {
    pub fn validate(&self, nq: usize) -> Result<(), String> {
        match self {
            SchedulerConfig::Strict | SchedulerConfig::Pfabric => Ok(()),
            SchedulerConfig::Dwrr { weights, quantum } => {
                if weights.len() != nq {
                    return Err(format!(
                        "dwrr needs one weight per queue: {} weights for {nq} queues",
                        weights.len()
                    ));
                }
                if weights.contains(&0) {
                    return Err("dwrr weights must be >= 1".into());
                }
                if quantum.0 == 0 {
                    return Err("dwrr quantum must be positive".into());
                }
                Ok(())
            }
            SchedulerConfig::StrictMinBw {
                min_rate,
                depth,
                strict_top,
            } => {
                if min_rate.len() > nq {
                    return Err(format!(
                        "strict_min_bw: {} min rates for {nq} queues",
                        min_rate.len()
                    ));
                }
                if *strict_top as usize > nq {
                    return Err(format!("strict_top {strict_top} exceeds {nq} queues"));
                }
                if depth.0 == 0 {
                    return Err("strict_min_bw depth must be positive".into());
                }
                Ok(())
            }
        }
    }
}

/// Runtime state of a scheduler. The large states are boxed so that a port stays compact
/// (strict priority, the common case, carries no state).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Scheduler {
    Strict,
    Pfabric,
    Dwrr(Box<DwrrState>),
    StrictMinBw(Box<MinBwState>),
}

/// Deficit round robin state.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DwrrState {
    quantum: [u64; MAX_QUEUES],
    deficit: [u64; MAX_QUEUES],
    /// Whether the current queue already got its quantum this round.
    credited: bool,
    cursor: usize,
}

/// Token buckets of the minimum-bandwidth scheduler.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct MinBwState {
    /// Token rate per queue in bit/s (0 = no guarantee).
    rate: [u64; MAX_QUEUES],
    /// Tokens in bit·ps/s units (bits × 10^12), exact integers.
    tokens: [u128; MAX_QUEUES],
    cap: u128,
    last: SimTime,
    strict_top: usize,
}

impl Scheduler {
    pub fn new(cfg: &SchedulerConfig) -> Self {
        match cfg {
            SchedulerConfig::Strict => Scheduler::Strict,
            SchedulerConfig::Pfabric => Scheduler::Pfabric,
            SchedulerConfig::Dwrr { weights, quantum } => {
                let mut q = [0u64; MAX_QUEUES];
                for (i, w) in weights.iter().enumerate() {
                    q[i] = *w as u64 * quantum.0;
                }
                Scheduler::Dwrr(Box::new(DwrrState {
                    quantum: q,
                    deficit: [0; MAX_QUEUES],
                    credited: false,
                    cursor: 0,
                }))
            }
            SchedulerConfig::StrictMinBw {
                min_rate,
                depth,
                strict_top,
            } => {
                let mut rate = [0u64; MAX_QUEUES];
                for (i, r) in min_rate.iter().enumerate() {
                    rate[i] = r.0;
                }
                let cap = depth.0 as u128 * 8 * 1_000_000_000_000;
                Scheduler::StrictMinBw(Box::new(MinBwState {
                    rate,
                    tokens: [cap; MAX_QUEUES],
                    cap,
                    last: SimTime::ZERO,
                    strict_top: *strict_top as usize,
                }))
            }
        }
    }
}

/// pFabric rank of a packet: data packets carry theirs in the header word (set by the
/// sender), control packets rank 0 (first).
#[inline]
pub fn pfabric_rank(pkt: &Packet) -> u64 {
    if pkt.is_data() { pkt.hdr.rank() } else { 0 }
}

/// Counters of one port, those every transmission touches first.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PortStats {
    /// Packets / wire bytes that started transmission on this port.
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Serialization time of the packets that started transmission (ps).
    pub busy_ps: u64,
    /// Largest total queue occupancy seen, in bytes.
    pub max_qbytes: u64,
    /// Packets marked CE at this port.
    pub ecn_marks: u64,
    /// Packets / wire bytes dropped on admission to this port's queues.
    pub drops: u64,
    pub drop_bytes: u64,
    /// PFC pause (XOFF) frames received by this port (it was told to stop) and the total time
    /// some priority of it was paused.
    pub pause_rx: u64,
    pub paused_time: SimTime,
}

/// One priority queue of a port: its packets (a FIFO; it dereferences to the `VecDeque`)
/// and their bytes, side by side.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Queue {
    pkts: VecDeque<Packet>,
    /// Wire bytes of the packets queued.
    pub bytes: u64,
}

impl std::ops::Deref for Queue {
    type Target = VecDeque<Packet>;
    #[inline(always)]
    fn deref(&self) -> &VecDeque<Packet> {
        &self.pkts
    }
}

impl std::ops::DerefMut for Queue {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut VecDeque<Packet> {
        &mut self.pkts
    }
}

/// A packet on a link and the time it arrives at the far end: one cache line exactly, so that
/// taking it off the wire reads one line, not the two an unaligned 64-byte slot straddles.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
#[repr(C, align(64))]
pub struct InFlight {
    pub at: SimTime,
    pub pkt: Packet,
}

/// An egress port and the link it drives. The fields are laid out hottest first (`repr(C)`,
/// cache-line aligned) so that a packet's pass through a port with one queue touches four
/// cache lines: (0) the serializer, occupancy, peer and flags; (1) the wire's and the ECN
/// policy's headers; (2) the transmission counters; (3) the first queue. Further queues follow
/// in order; what only failures, PFC or other schedulers use comes last.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[repr(C, align(64))]
pub struct Port {
    /// The serializer is busy until this time.
    pub busy_until: SimTime,
    pub delay: SimTime,
    ps_per_byte: u64,
    pub total_bytes: u64,
    pub wire_bytes: u64,
    pub node: NodeId,
    /// The port at the far end of the link, and its node.
    pub peer: PortId,
    pub peer_node: NodeId,
    /// Bit `i` set: priority `i` is paused by the downstream's PFC.
    pub paused: u8,
    /// A `TxDone` event is pending for this port.
    pub txdone_pending: bool,
    nq: u8,
    /// Serialization times are floored to whole nanoseconds (a validation quirk).
    floor_ns: bool,
    /// The link is down (`[[failures]]`): nothing is sent, arrivals for it are dropped.
    pub down: bool,
    /// Packets serialized onto the link and not yet arrived, with their arrival times (the
    /// index on the link of the head is `stats.tx_pkts - wire.len()`). The receiving node
    /// owns it: in a partitioned run it lives with the far end, whose replica of this port
    /// counts in `stats.tx_pkts` the packets handed to it.
    pub wire: VecDeque<InFlight>,
    pub ecn: EcnConfig,
    pub stats: PortStats,
    /// Queues `0..nq` are in use.
    pub queues: [Queue; MAX_QUEUES],
    pub sched: Scheduler,
    pub rate: BitRate,
    /// Probability that a packet sent on this port is lost on the wire.
    pub loss: f64,
    paused_since: [SimTime; MAX_QUEUES],
    /// Closed pause intervals per priority (ps), for delay attribution.
    paused_total: [u64; MAX_QUEUES],
}

impl Port {
    pub fn new(
        node: NodeId,
        peer: PortId,
        rate: BitRate,
        delay: SimTime,
        nq: usize,
        sched: &SchedulerConfig,
        ecn: EcnConfig,
    ) -> Self {
        assert!((1..=MAX_QUEUES).contains(&nq));
        Port {
            busy_until: SimTime::ZERO,
            delay,
            ps_per_byte: rate.exact_ps_per_byte().unwrap_or(0),
            floor_ns: false,
            total_bytes: 0,
            wire_bytes: 0,
            node,
            peer,
            peer_node: NodeId(u32::MAX),
            paused: 0,
            txdone_pending: false,
            nq: nq as u8,
            wire: VecDeque::new(),
            stats: PortStats::default(),
            queues: Default::default(),
            sched: Scheduler::new(sched),
            ecn,
            rate,
            paused_since: [SimTime::ZERO; MAX_QUEUES],
            paused_total: [0; MAX_QUEUES],
            down: false,
            loss: 0.0,
        }
    }

    /// A new line rate (`[[failures]]` degradation); serialization times follow.
    pub fn set_rate(&mut self, rate: BitRate) {
        self.rate = rate;
        self.ps_per_byte = if self.floor_ns {
            0
        } else {
            rate.exact_ps_per_byte().unwrap_or(0)
        };
    }

    /// Total time priority `prio` has been paused up to `now` (ps).
    #[inline]
    pub fn paused_acc(&self, prio: u8, now: SimTime) -> u64 {
        let p = prio as usize;
        let open = if self.paused & (1 << prio) != 0 {
            now.0 - self.paused_since[p].0
        } else {
            0
        };
        self.paused_total[p] + open
    }

    /// Time this port spent serializing up to `t` (the packet on the wire counted up to `t`).
    pub fn busy_through(&self, t: SimTime) -> u64 {
        self.stats.busy_ps - self.busy_until.0.saturating_sub(t.0)
    }

    /// Serialization time of `bytes` on this port: exact, or floored to whole nanoseconds
    /// after [`Port::floor_to_ns`].
    #[inline]
    pub fn ser_time(&self, bytes: u32) -> SimTime {
        if self.ps_per_byte != 0 {
            SimTime(bytes as u64 * self.ps_per_byte)
        } else {
            let t = self.rate.ser_time(bytes as u64);
            if self.floor_ns { t.floor_ns() } else { t }
        }
    }

    /// Floors every serialization time on this port to whole nanoseconds (the HPCC ns-3
    /// simulator's quirk, for validation against it). Moves the port off the exact
    /// per-byte fast path.
    pub fn floor_to_ns(&mut self) {
        self.floor_ns = true;
        self.ps_per_byte = 0;
    }

    pub fn nq(&self) -> usize {
        self.nq as usize
    }

    /// Removes the head of queue `q`, if any (no scheduling).
    #[inline]
    pub fn pop_queue(&mut self, q: usize) -> Option<Packet> {
        let pkt = self.queues[q].pop_front()?;
        self.queues[q].bytes -= pkt.size as u64;
        self.total_bytes -= pkt.size as u64;
        Some(pkt)
    }

    /// Appends `pkt` to queue `q` (no admission control here).
    #[inline]
    pub fn enqueue(&mut self, q: usize, pkt: Packet) {
        self.queues[q].bytes += pkt.size as u64;
        self.total_bytes += pkt.size as u64;
        if self.total_bytes > self.stats.max_qbytes {
            self.stats.max_qbytes = self.total_bytes;
        }
        self.queues[q].push_back(pkt);
    }

    /// Whether some queue that is not paused holds a packet.
    #[inline]
    pub fn has_eligible(&self) -> bool {
        self.total_bytes > 0
            && self.queues[..self.nq as usize]
                .iter()
                .enumerate()
                .any(|(i, q)| self.paused & (1 << i) == 0 && !q.is_empty())
    }

    /// Picks the next queue to serve and removes its head packet.
    pub fn dequeue(&mut self, now: SimTime) -> Option<(usize, Packet)> {
        if self.total_bytes == 0 {
            return None;
        }
        let q = self.select(now)?;
        let pkt = match &self.sched {
            Scheduler::Pfabric => {
                let i = self.pfabric_pick(q);
                self.queues[q].remove(i)
            }
            _ => self.queues[q].pop_front(),
        }
        .expect("selected queue is non-empty");
        self.queues[q].bytes -= pkt.size as u64;
        self.total_bytes -= pkt.size as u64;
        Some((q, pkt))
    }

    /// pFabric's choice in non-empty queue `q`: the earliest packet of the flow (and kind)
    /// whose packet has the smallest rank (the earliest such packet on ties).
    fn pfabric_pick(&self, q: usize) -> usize {
        let queue = &self.queues[q];
        let mut best = 0;
        let mut best_rank = u64::MAX;
        for (i, p) in queue.iter().enumerate() {
            let r = pfabric_rank(p);
            if r < best_rank {
                best_rank = r;
                best = i;
            }
        }
        let (flow, kind) = (queue[best].flow, queue[best].kind);
        queue
            .iter()
            .position(|p| p.flow == flow && p.kind == kind)
            .unwrap_or(best)
    }

    /// pFabric's drop victim in queue `q` for an arriving packet of rank `rank`: the packet of
    /// the largest rank (the latest one on ties), if that rank is larger than `rank`.
    pub fn pfabric_victim(&self, q: usize, rank: u64) -> Option<usize> {
        let mut worst: Option<(usize, u64)> = None;
        for (i, p) in self.queues[q].iter().enumerate() {
            let r = pfabric_rank(p);
            if worst.is_none_or(|(_, w)| r >= w) {
                worst = Some((i, r));
            }
        }
        worst.filter(|&(_, w)| w > rank).map(|(i, _)| i)
    }

    /// Removes the packet at position `i` of queue `q` (pFabric's priority dropping).
    pub fn remove_at(&mut self, q: usize, i: usize) -> Packet {
        let pkt = self.queues[q].remove(i).expect("index within the queue");
        self.queues[q].bytes -= pkt.size as u64;
        self.total_bytes -= pkt.size as u64;
        pkt
    }

    fn select(&mut self, now: SimTime) -> Option<usize> {
        let nq = self.nq as usize;
        let paused = self.paused;
        let queues = &self.queues;
        let elig = |i: usize| paused & (1 << i) == 0 && !queues[i].is_empty();
        match &mut self.sched {
            Scheduler::Strict | Scheduler::Pfabric if nq == 1 => elig(0).then_some(0),
            Scheduler::Strict | Scheduler::Pfabric => (0..nq).find(|&i| elig(i)),
            Scheduler::Dwrr(st) => {
                let DwrrState {
                    quantum,
                    deficit,
                    credited,
                    cursor,
                } = &mut **st;
                if !(0..nq).any(elig) {
                    return None;
                }
                loop {
                    let i = *cursor;
                    if elig(i) {
                        if !*credited {
                            deficit[i] += quantum[i];
                            *credited = true;
                        }
                        let head = queues[i].front().unwrap().size as u64;
                        if deficit[i] >= head {
                            deficit[i] -= head;
                            if queues[i].len() == 1 {
                                // Queue empties: it forfeits its remaining deficit.
                                deficit[i] = 0;
                                *credited = false;
                                *cursor = (i + 1) % nq;
                            }
                            return Some(i);
                        }
                    } else if queues[i].is_empty() {
                        deficit[i] = 0;
                    }
                    *credited = false;
                    *cursor = (i + 1) % nq;
                }
            }
            Scheduler::StrictMinBw(st) => {
                let MinBwState {
                    rate,
                    tokens,
                    cap,
                    last,
                    strict_top,
                } = &mut **st;
                let dt = (now.0 - last.0) as u128;
                *last = now;
                if dt > 0 {
                    for i in 0..nq {
                        if rate[i] > 0 {
                            tokens[i] = (tokens[i] + dt * rate[i] as u128).min(*cap);
                        }
                    }
                }
                if let Some(i) = (0..*strict_top).find(|&i| elig(i)) {
                    return Some(i);
                }
                let pick = (0..nq)
                    .find(|&i| {
                        rate[i] > 0
                            && elig(i)
                            && tokens[i]
                                >= queues[i].front().unwrap().size as u128 * 8 * 1_000_000_000_000
                    })
                    .or_else(|| (0..nq).find(|&i| elig(i)))?;
                if rate[pick] > 0 {
                    let cost = queues[pick].front().unwrap().size as u128 * 8 * 1_000_000_000_000;
                    tokens[pick] = tokens[pick].saturating_sub(cost);
                }
                Some(pick)
            }
        }
    }

    /// Sets or clears the pause of priority `prio`; returns whether the state changed.
    pub fn set_paused(&mut self, prio: u8, pause: bool, now: SimTime) -> bool {
        let bit = 1u8 << prio;
        let was = self.paused & bit != 0;
        if was == pause {
            return false;
        }
        if pause {
            self.paused |= bit;
            self.paused_since[prio as usize] = now;
            self.stats.pause_rx += 1;
        } else {
            self.paused &= !bit;
            self.stats.paused_time += now - self.paused_since[prio as usize];
            self.paused_total[prio as usize] += (now - self.paused_since[prio as usize]).0;
        }
        true
    }

    /// Closes open pause intervals at the end of a run (for the paused-time statistic).
    pub fn close_pauses(&mut self, now: SimTime) {
        for p in 0..MAX_QUEUES {
            if self.paused & (1 << p) != 0 {
                self.stats.paused_time += now - self.paused_since[p];
                self.paused_total[p] += (now - self.paused_since[p]).0;
                self.paused_since[p] = now;
            }
        }
    }

    /// Marks `pkt` CE if it is ECN-capable data and the policy says so.
    #[inline]
    pub fn maybe_mark(&mut self, pkt: &mut Packet, q_bytes: u64, rng: &mut RngStream) {
        if pkt.ecn & ecn::ECT != 0 && pkt.is_data() && self.ecn.should_mark(q_bytes, rng) {
            if pkt.ecn & ecn::CE == 0 {
                self.stats.ecn_marks += 1;
            }
            pkt.ecn |= ecn::CE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::FlowId;
    use crate::net::packet::{Hdr, PktKind};

    #[test]
    fn a_packets_pass_touches_the_first_four_cache_lines() {
        use std::mem::offset_of;
        assert_eq!(std::mem::align_of::<Port>(), 64);
        let line = |off: usize| off / 64;
        // Line 0: serializer, occupancy, peer, flags.
        for off in [
            offset_of!(Port, busy_until),
            offset_of!(Port, delay),
            offset_of!(Port, total_bytes),
            offset_of!(Port, wire_bytes),
            offset_of!(Port, peer_node),
            offset_of!(Port, paused),
            offset_of!(Port, txdone_pending),
            offset_of!(Port, down),
        ] {
            assert_eq!(line(off), 0, "offset {off}");
        }
        // Line 1: the wire's and the ECN policy's headers, whole.
        assert_eq!(line(offset_of!(Port, wire)), 1);
        assert_eq!(line(offset_of!(Port, ecn) + size_of::<EcnConfig>() - 1), 1);
        // Line 2: the transmission counters; line 3: the first queue, with its bytes.
        assert_eq!(line(offset_of!(Port, stats)), 2);
        assert_eq!(
            line(offset_of!(Port, stats) + offset_of!(PortStats, ecn_marks)),
            2
        );
        let q0 = offset_of!(Port, queues);
        assert_eq!(line(q0), 3);
        assert_eq!(line(q0 + size_of::<Queue>() - 1), 3);
    }

    fn pkt(size: u32, prio: u8) -> Packet {
        Packet {
            flow: FlowId(prio as u32),
            src: 0,
            dst: 1,
            seq: 0,
            hdr: Hdr::NONE,
            ts: SimTime::ZERO,
            size: size as u16,
            payload: size as u16,
            sport: 0,
            dport: 0,
            in_port: PortId(0),
            kind: PktKind::Data,
            prio,
            ecn: ecn::ECT,
            flags: 0,
            uid: 0,
        }
    }

    fn port(nq: usize, s: SchedulerConfig) -> Port {
        Port::new(
            NodeId(0),
            PortId(1),
            BitRate::from_gbps(10),
            SimTime::from_us(1),
            nq,
            &s,
            EcnConfig::None,
        )
    }

    #[test]
    fn strict_serves_lowest_index_and_skips_paused() {
        let mut p = port(3, SchedulerConfig::Strict);
        p.enqueue(2, pkt(100, 2));
        p.enqueue(1, pkt(100, 1));
        p.enqueue(1, pkt(100, 1));
        p.set_paused(1, true, SimTime::ZERO);
        assert_eq!(p.dequeue(SimTime::ZERO).unwrap().0, 2);
        assert!(!p.has_eligible());
        assert!(p.dequeue(SimTime::ZERO).is_none());
        assert_eq!(p.paused_acc(1, SimTime(3)), 3);
        p.set_paused(1, false, SimTime(5));
        assert_eq!(p.dequeue(SimTime::ZERO).unwrap().0, 1);
        assert_eq!(p.stats.paused_time, SimTime(5));
        assert_eq!(p.paused_acc(1, SimTime(9)), 5);
        assert_eq!(p.paused_acc(0, SimTime(9)), 0);
    }

    #[test]
    fn dwrr_shares_bytes_by_weight() {
        let mut p = port(
            2,
            SchedulerConfig::Dwrr {
                weights: vec![3, 1],
                quantum: Bytes(1500),
            },
        );
        for _ in 0..4000 {
            p.enqueue(0, pkt(1000, 0));
            p.enqueue(1, pkt(1500, 1));
        }
        let mut bytes = [0u64; 2];
        for _ in 0..3000 {
            let (q, k) = p.dequeue(SimTime::ZERO).unwrap();
            bytes[q] += k.size as u64;
        }
        let share = bytes[0] as f64 / (bytes[0] + bytes[1]) as f64;
        assert!((share - 0.75).abs() < 0.01, "share {share}");
    }

    #[test]
    fn min_bw_token_bucket_serves_guaranteed_queue() {
        // 10 Gbps port, queue 1 guaranteed 1 Gbps, queue 0 always backlogged.
        let mut p = port(
            2,
            SchedulerConfig::StrictMinBw {
                min_rate: vec![BitRate(0), BitRate::from_gbps(1)],
                depth: Bytes(2000),
                strict_top: 0,
            },
        );
        let mut now = SimTime::ZERO;
        let mut low = 0u64;
        let mut total = 0u64;
        for _ in 0..20_000 {
            if p.queues[0].len() < 4 {
                p.enqueue(0, pkt(1000, 0));
            }
            if p.queues[1].len() < 4 {
                p.enqueue(1, pkt(1000, 1));
            }
            let (q, k) = p.dequeue(now).unwrap();
            now += p.ser_time(k.size as u32);
            total += k.size as u64;
            if q == 1 {
                low += k.size as u64;
            }
        }
        let low_rate = low as f64 * 8.0 / now.as_secs_f64();
        assert!((low_rate / 1e9 - 1.0).abs() < 0.02, "low {low_rate}");
        assert!(total > 0);
    }

    #[test]
    fn step_and_red_marking() {
        let mut rng = RngStream::new(1, "ecn");
        let s = EcnConfig::Step {
            k: Bytes(3000),
            at: MarkAt::Enqueue,
        };
        assert!(!s.should_mark(3000, &mut rng));
        assert!(s.should_mark(3001, &mut rng));
        let r = EcnConfig::Red {
            kmin: Bytes(1000),
            kmax: Bytes(3000),
            pmax: 0.5,
            at: MarkAt::Dequeue,
        };
        assert!(!r.should_mark(1000, &mut rng));
        assert!(r.should_mark(3001, &mut rng));
        let n = 100_000;
        let hits = (0..n).filter(|_| r.should_mark(2000, &mut rng)).count();
        let frac = hits as f64 / n as f64;
        assert!((frac - 0.25).abs() < 0.01, "frac {frac}");
    }

    #[test]
    fn ser_time_exact() {
        let p = port(1, SchedulerConfig::Strict);
        assert_eq!(p.ser_time(1500), SimTime(1_200_000));
    }

    #[test]
    fn pfabric_serves_the_smallest_rank_flow_from_its_earliest_packet() {
        let mut p = port(1, SchedulerConfig::Pfabric);
        // (flow, rank): flow 1's later packet has the smallest rank, so flow 1's earliest
        // packet goes first; an ACK (rank 0) beats every data packet.
        let mk = |flow: u32, rank: u64| Packet {
            flow: FlowId(flow),
            hdr: Hdr::with_rank(rank),
            seq: rank,
            ..pkt(100, 0)
        };
        for (f, r) in [(2, 50), (1, 90), (3, 40), (1, 30)] {
            p.enqueue(0, mk(f, r));
        }
        let seq = |p: &mut Port| p.dequeue(SimTime::ZERO).unwrap().1.seq;
        assert_eq!(seq(&mut p), 90);
        assert_eq!(seq(&mut p), 30);
        let mut ack = mk(9, 1000);
        ack.kind = PktKind::Ack;
        p.enqueue(0, ack);
        assert_eq!(p.dequeue(SimTime::ZERO).unwrap().1.kind, PktKind::Ack);
        assert_eq!(seq(&mut p), 40);
        assert_eq!(seq(&mut p), 50);
        assert!(p.dequeue(SimTime::ZERO).is_none());
        assert_eq!(p.total_bytes, 0);
    }

    #[test]
    fn pfabric_victim_is_the_largest_rank_above_the_arrival() {
        let mut p = port(1, SchedulerConfig::Pfabric);
        for (i, r) in [70u64, 20, 70, 10].into_iter().enumerate() {
            p.enqueue(
                0,
                Packet {
                    hdr: Hdr::with_rank(r),
                    seq: i as u64,
                    ..pkt(100, 0)
                },
            );
        }
        // The latest of the two rank-70 packets; nothing for an arrival ranked 70 or more.
        assert_eq!(p.pfabric_victim(0, 30), Some(2));
        assert_eq!(p.pfabric_victim(0, 70), None);
        assert_eq!(p.remove_at(0, 2).seq, 2);
        assert_eq!((p.queues[0].bytes, p.total_bytes), (300, 300));
    }
}
