//! RDMA: messages carried by lazily created queue pairs, and the host message schedulers that
//! decide which queue pair (and so which path and priority) carries each message or slice.
//!
//! The message layer ([`Rdma`]) is generic over the connection type ([`QueuePair`]): RoCEv2
//! reliable-connection queue pairs with DCQCN ([`qp::RcQp`]) or MP-RDMA connections
//! ([`mprdma::MpQp`]). The decisions of the host message schedulers live in [`sched`]; this
//! module carries them out (creates queue pairs, posts work, wakes queue pairs).
//!
//! Host schedulers ([`HostSched`]), one per scheme family (GPMP reconstruction §2 and §4):
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
//!   hash (through the host's path-selection service).
//! * `mp_rdma`: one MP-RDMA connection per host pair, messages FIFO.
//!
//! A message is short when its transmission time at the host line rate is below the
//! threshold (`size < short_threshold` bytes). Its FCT runs from its arrival at the sender to
//! the ACK of its last byte (HPCC convention, GPMP reconstruction §5.8).
//!
//! Not modelled: connection setup, QP context caching on the NIC, the receiver's memory.

pub mod irn;
pub mod mprdma;
pub mod qp;
pub mod sched;

use super::{Flow, FlowSample, FlowStats, Host, Protocol, Rx};
use crate::engine::{LazyTimer, RngStream};
use crate::ids::FlowId;
use crate::net::packet::{PROTO_UDP, Packet};
use crate::transport::cc::{IntHop, IntStack};
use crate::units::SimTime;
use crate::workload::FlowSpec;
use mprdma::MpParams;
use qp::{RdmaParams, Wqe};
use serde::Serialize;
use std::collections::VecDeque;

pub use sched::{HostSched, path_offset};

/// RoCEv2 UDP destination port.
pub const ROCE_PORT: u16 = 4791;

/// The RDMA side of a run's transport choice.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct RdmaSpec {
    pub params: RdmaParams,
    pub sched: HostSched,
    /// Messages smaller than this many bytes are short.
    pub short_threshold: u64,
    /// Switch queue (wire priority) of short and of long messages' data.
    pub short_prio: u8,
    pub long_prio: u8,
    /// The kind of connection that carries the messages.
    pub conn: ConnSpec,
}

macro_rules! conn_spec {
    ([] window { $($window:tt)* } rate { $($kind:ident: $cm:ident::$cc:ident, $name:literal, $win:literal, $mark:ident, $about:literal, $notes:literal;)* }) => {
        /// The connections of an RDMA scheme: reliable-connection queue pairs paced by one
        /// of the registry's rate controllers (`transport::registry`), at line rate, or
        /// MP-RDMA connections.
        #[derive(Clone, Debug, Serialize, serde::Deserialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum ConnSpec {
            $(
                #[doc = concat!("Reliable-connection queue pairs paced by `", stringify!($cc), "`.")]
                $kind(crate::transport::cc::$cc),
            )*
            /// Reliable-connection queue pairs at line rate (no rate control).
            LineRate,
            /// MP-RDMA connections.
            MpRdma(MpParams),
        }
    };
}
crate::transport::registry::ccs!(conn_spec []);

/// One message of the workload.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Msg {
    pub ext_id: u32,
    /// Its position in the workload's arrival order.
    pub order: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: SimTime,
    pub deadline: Option<SimTime>,
    /// The deadline class (the mean the deadline was drawn from), as the workload gave it.
    pub deadline_class: Option<SimTime>,
    /// The workload's tag (query, background, ...), kept for the message's record.
    pub tag: crate::workload::FlowTag,
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
    /// Its packets lost: data packets and the replies (ACK, NACK) to them.
    pub drops: u64,
}

/// Counters summed over a run's connections.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct QpTotals {
    pub timeouts: u64,
    pub nacks: u64,
    pub cnps: u64,
    pub rate_decreases: u64,
}

/// A connection that carries messages: a reliable-connection queue pair or an MP-RDMA
/// connection. Both ends live in one value (the simulator knows both hosts).
pub trait QueuePair: Sized {
    /// Parameters of this kind of connection beyond [`RdmaSpec`].
    type Params;
    /// A new connection from a host whose NIC runs at `line_bps`.
    fn create(line_bps: f64, spec: &RdmaSpec, p: &Self::Params) -> Self;
    /// Posts `bytes` of message `msg` at wire priority `prio`.
    fn post(&mut self, msg: u32, bytes: u64, prio: u8, mtu: u32, rng: &mut RngStream);
    /// Whether the sender has a packet it may send now (ignoring pacing).
    fn has_data(&self, spec: &RdmaSpec, p: &Self::Params) -> bool;
    /// The wire priority of the next packet, if any.
    fn next_prio(&mut self) -> Option<u8>;
    /// Bytes posted and not yet acknowledged.
    fn outstanding(&self) -> u64;
    /// Everything posted has been sent at least once.
    fn drained(&self) -> bool;
    /// Packets are sent and not acknowledged.
    fn busy(&self) -> bool;
    /// Fills `pkt` with the next packet of connection `f`; `Some(drained)` (the connection has
    /// sent everything it was given) if there was one.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        f: FlowId,
        h: &mut impl Host,
        pkt: &mut Packet,
        spec: &RdmaSpec,
        p: &Self::Params,
        msgs: &mut [Msg],
        rng: &mut RngStream,
    ) -> Option<bool>;
    /// The pacing gap ended at `now`: `Some(t)` to wait until `t` instead.
    fn pace_wake(&mut self, now: SimTime, spec: &RdmaSpec, p: &Self::Params) -> Option<SimTime>;
    /// The rate changed under a scheduled send (HPCC's `ChangeRate`): when it now goes.
    fn rescheduled(&mut self, now: SimTime, spec: &RdmaSpec, p: &Self::Params) -> Option<SimTime> {
        self.pace_wake(now, spec, p)
    }
    /// A data packet arrived at the receiver: the reply to send, if any.
    fn on_data(
        &mut self,
        h: &mut impl Host,
        pkt: &Packet,
        spec: &RdmaSpec,
        p: &Self::Params,
        msgs: &mut [Msg],
    ) -> Option<Packet>;
    /// An ACK or NACK arrived at the sender with the telemetry it echoes: the work requests
    /// it completes go to `done`.
    #[allow(clippy::too_many_arguments)]
    fn on_control(
        &mut self,
        now: SimTime,
        pkt: &Packet,
        spec: &RdmaSpec,
        p: &Self::Params,
        int: &[IntHop],
        done: &mut Vec<Wqe>,
    ) -> Acked;
    /// Whether this connection's data packets collect in-band telemetry.
    fn telemetry(_p: &Self::Params) -> bool {
        false
    }
    /// After the completions of an ACK were handed out.
    fn after_acks(&mut self, _rng: &mut RngStream) {}
    /// Retransmission timeout with packets outstanding.
    fn on_timeout(&mut self, rng: &mut RngStream);
    /// The retransmission timeout to arm now (None: no timer).
    fn rto(&self, spec: &RdmaSpec) -> Option<SimTime> {
        spec.params.rto
    }
    fn sample(&self, p: &Self::Params) -> FlowSample;
    fn add_totals(&self, p: &Self::Params, t: &mut QpTotals);
    /// Swaps the receiving halves of two replicas of one connection (a partitioned run's
    /// merge; every counter of [`QueuePair::add_totals`] is the sender's).
    fn swap_receiver(&mut self, other: &mut Self);
}

/// What an acknowledgement did at the sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct Acked {
    /// The cumulative point advanced.
    pub advanced: bool,
    /// The rate changed so that an already scheduled send moves (re-pace now).
    pub repace: bool,
}

/// Queue pairs and pending messages of one (source, destination) host pair.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Pair {
    /// `single_path`/`srm`: [the QP]; `nem`: [short, long]; `gpmp`: [high, low 0..n].
    pub qps: Vec<FlowId>,
    /// Messages with bytes not yet posted (long messages under `gpmp`, all under `srm`).
    pub pending: VecDeque<u32>,
    used_sports: Sports,
}

/// First of the UDP source ports queue pairs take (49,152..=65,535, the ephemeral range).
const SPORT_BASE: u16 = 49_152;
/// How many there are.
const SPORTS: usize = 16_384;

/// The UDP source ports a host pair's queue pairs have taken: a short list while there are
/// few (most pairs), a bitmap of the whole range once there are many (a pair with a queue
/// pair per message), so that choosing a port stays O(1).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
enum Sports {
    List(Vec<u16>),
    Bits(#[serde(with = "bitmap")] Box<[u64; SPORTS / 64]>),
}

/// [`Sports::Bits`] as a sequence (serde derives stop at arrays of 32).
mod bitmap {
    use super::SPORTS;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(b: &[u64; SPORTS / 64], s: S) -> Result<S::Ok, S::Error> {
        b[..].serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Box<[u64; SPORTS / 64]>, D::Error> {
        let v = Vec::<u64>::deserialize(d)?;
        v.into_boxed_slice()
            .try_into()
            .map_err(|_| serde::de::Error::custom("a port bitmap of the wrong length"))
    }
}

impl Default for Sports {
    fn default() -> Self {
        Sports::List(Vec::new())
    }
}

impl Sports {
    /// Ports held in a list before it becomes a bitmap.
    const LIST_MAX: usize = 64;

    fn contains(&self, p: u16) -> bool {
        match self {
            Sports::List(v) => v.contains(&p),
            Sports::Bits(b) => {
                let i = (p - SPORT_BASE) as usize;
                b[i / 64] & (1 << (i % 64)) != 0
            }
        }
    }

    fn insert(&mut self, p: u16) {
        debug_assert!(p >= SPORT_BASE && !self.contains(p));
        if let Sports::List(v) = self {
            if v.len() < Self::LIST_MAX {
                v.push(p);
                return;
            }
            let mut b = Box::new([0u64; SPORTS / 64]);
            for &q in v.iter() {
                let i = (q - SPORT_BASE) as usize;
                b[i / 64] |= 1 << (i % 64);
            }
            *self = Sports::Bits(b);
        }
        if let Sports::Bits(b) = self {
            let i = (p - SPORT_BASE) as usize;
            b[i / 64] |= 1 << (i % 64);
        }
    }
}

/// The RDMA transport of a run: messages, host pairs, and every connection's state (indexed by
/// its [`FlowId`]: every flow of an RDMA run is a connection).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Rdma<Q: QueuePair> {
    pub spec: RdmaSpec,
    /// Parameters of the connections.
    pub qp_params: Q::Params,
    pub msgs: Vec<Msg>,
    /// By `src · n_hosts + dst`, only the pairs that exchanged messages.
    pairs: std::collections::BTreeMap<usize, Pair>,
    n_hosts: usize,
    /// The UDP source ports of new queue pairs, and the connections' draws (MP-RDMA's path
    /// probing): one stream each per sending host (a host's draws depend on nothing another
    /// host does).
    sport_rngs: Vec<RngStream>,
    rngs: Vec<RngStream>,
    scratch: Vec<Wqe>,
    pub qps: Vec<Q>,
    /// Per connection slot: in use (a released slot's counters are in `released`).
    live: Vec<bool>,
    /// Counters of the connections whose slots were released.
    released: QpTotals,
    /// Connections created so far.
    created: u64,
    /// Keyed kernel, every message kept: each sending host's range of connection ids (its
    /// first, and the next it gives), so that a connection's id depends on its host only.
    qp_ids: Option<(Vec<u32>, Vec<u32>)>,
}

impl Msg {
    /// Message `spec`, the `order`-th of the workload, not started.
    pub fn new(spec: &FlowSpec, order: u32, short_threshold: u64) -> Msg {
        Msg {
            ext_id: spec.id,
            order,
            src: spec.src,
            dst: spec.dst,
            size: spec.size,
            start: spec.start,
            deadline: spec.deadline,
            deadline_class: spec.deadline_class,
            tag: spec.tag,
            short: spec.size < short_threshold,
            unposted: spec.size,
            unacked: spec.size,
            rcvd: 0,
            finish: None,
            rcv_finish: None,
            retx: 0,
            ce: 0,
            drops: 0,
        }
    }
}

impl QpTotals {
    fn add(&mut self, o: &QpTotals) {
        self.timeouts += o.timeouts;
        self.nacks += o.nacks;
        self.cnps += o.cnps;
        self.rate_decreases += o.rate_decreases;
    }
}

/// Host `h`'s child of the stream `name`, for every host.
fn per_host(seed: u64, name: &str, n_hosts: usize) -> Vec<RngStream> {
    let r = RngStream::new(seed, name);
    (0..n_hosts as u64).map(|h| r.child(h)).collect()
}

impl<Q: QueuePair> Rdma<Q> {
    pub fn new(
        spec: RdmaSpec,
        qp_params: Q::Params,
        flows: &[FlowSpec],
        n_hosts: usize,
        seed: u64,
    ) -> Self {
        let msgs = flows
            .iter()
            .enumerate()
            .map(|(i, f)| Msg::new(f, i as u32, spec.short_threshold))
            .collect();
        Rdma {
            spec,
            qp_params,
            msgs,
            pairs: std::collections::BTreeMap::new(),
            n_hosts,
            sport_rngs: per_host(seed, "rdma.sport", n_hosts),
            rngs: per_host(seed, "mprdma", n_hosts),
            scratch: Vec::new(),
            qps: Vec::new(),
            live: Vec::new(),
            released: QpTotals::default(),
            created: 0,
            qp_ids: None,
        }
    }

    /// Numbers connections by sending host from now on (see [`crate::transport::Transport::per_host_ids`]):
    /// host `h`'s range holds as many ids as it can create, one per message with a
    /// connection per message, else one per queue pair of each host pair it sends to.
    pub fn per_host_ids(&mut self) {
        let mut need = vec![0u32; self.n_hosts];
        let per_pair = sched::pair_layout(self.spec.sched).len() as u32;
        let mut pairs = std::collections::BTreeSet::new();
        for m in &self.msgs {
            if self.per_message() {
                need[m.src as usize] += 1;
            } else if pairs.insert((m.src, m.dst)) {
                need[m.src as usize] += per_pair;
            }
        }
        let mut base = Vec::with_capacity(self.n_hosts);
        let mut next = 0u32;
        for n in &need {
            base.push(next);
            next += n;
        }
        self.qp_ids = Some((base.clone(), base));
    }

    /// Whether each message has a connection of its own (`per_message`), which nothing else
    /// uses: the two share a slot, and are released together.
    pub fn per_message(&self) -> bool {
        matches!(self.spec.sched, HostSched::PerMessage)
    }

    /// Message `spec` (the `order`-th of the workload) arrives in slot `m`: one past the
    /// last, or a released message's (runs that release them). With a connection per message,
    /// its connection takes the same slot.
    pub fn open(&mut self, m: u32, spec: &FlowSpec, order: u32) {
        let msg = Msg::new(spec, order, self.spec.short_threshold);
        match (m as usize).cmp(&self.msgs.len()) {
            std::cmp::Ordering::Less => self.msgs[m as usize] = msg,
            std::cmp::Ordering::Equal => self.msgs.push(msg),
            std::cmp::Ordering::Greater => panic!("message slot {m} beyond the next"),
        }
    }

    /// Releases message slot `m` (nothing of it is left anywhere), with a connection per
    /// message its connection's too: returns the message in its final state; the
    /// connection's counters are kept.
    pub fn release(&mut self, m: u32) -> Msg {
        let i = m as usize;
        if self.per_message() {
            debug_assert!(self.live[i], "slot {m} released twice");
            let mut t = QpTotals::default();
            self.qps[i].add_totals(&self.qp_params, &mut t);
            self.released.add(&t);
            self.live[i] = false;
        }
        self.msgs[i].clone()
    }

    /// Connections created so far.
    pub fn created(&self) -> u64 {
        self.created
    }

    /// The queue pairs of host pair `(src, dst)` (empty if none was created).
    pub fn pair_qps(&self, src: u32, dst: u32) -> &[FlowId] {
        match self.pairs.get(&self.key(src, dst)) {
            Some(p) => &p.qps,
            None => &[],
        }
    }

    /// Whether the connections' data packets collect in-band telemetry.
    pub fn telemetry(&self) -> bool {
        Q::telemetry(&self.qp_params)
    }

    /// Counters summed over every connection.
    pub fn totals(&self) -> QpTotals {
        let mut t = self.released;
        for (q, _) in self.qps.iter().zip(&self.live).filter(|(_, l)| **l) {
            q.add_totals(&self.qp_params, &mut t);
        }
        t
    }

    fn key(&self, src: u32, dst: u32) -> usize {
        src as usize * self.n_hosts + dst as usize
    }

    /// The UDP source port of a new queue pair from `src` to `dst`: random (hashed onto some
    /// path), or bound to path `k` by scanning ports until the source leaf's ECMP hash picks
    /// uplink `(k + offset) mod uplinks`, where `offset` is a fixed per-pair rotation
    /// ([`path_offset`]): a pair's QPs take distinct uplinks, and when there are fewer QPs
    /// than uplinks the pairs still spread over all of them.
    fn choose_sport(&mut self, h: &impl Host, src: u32, dst: u32, path: Option<u32>) -> u16 {
        let key = self.key(src, dst);
        let r = src as usize;
        let pair = self.pairs.entry(key).or_default();
        let first = SPORT_BASE + (self.sport_rngs[r].below(SPORTS as u64) as u16);
        let mut sport = first;
        let mut tried = 0;
        loop {
            if tried == SPORTS {
                // Every port this pair could use is taken (16,384 queue pairs, e.g. one per
                // message): the pair's ports are reused from now on, as a host reuses
                // ephemeral ports; the scan starts over.
                pair.used_sports = Sports::default();
            }
            if tried == 2 * SPORTS {
                // No port at all maps onto the path asked for: any port will do.
                pair.used_sports.insert(first);
                return first;
            }
            tried += 1;
            let fits = match path {
                None => true,
                Some(k) => {
                    let (i, n_up) = h.uplink_for(src, dst, PROTO_UDP, sport, ROCE_PORT);
                    n_up <= 1 || i == (k as usize + path_offset(src, dst, n_up)) % n_up
                }
            };
            if fits && !pair.used_sports.contains(sport) {
                pair.used_sports.insert(sport);
                return sport;
            }
            sport = if sport == u16::MAX {
                SPORT_BASE
            } else {
                sport + 1
            };
        }
    }

    /// Creates a queue pair from `src` to `dst` served in NIC class `class`.
    fn new_qp(
        &mut self,
        h: &mut impl Host,
        src: u32,
        dst: u32,
        class: u8,
        path: Option<u32>,
    ) -> FlowId {
        let sport = self.choose_sport(h, src, dst, path);
        let line = h.line_rate(src, dst, sport, ROCE_PORT).bps() as f64;
        let flow = Flow {
            id: FlowId(u32::MAX),
            ext_id: u32::MAX,
            src,
            dst,
            size: 0,
            start: h.now(),
            deadline: None,
            rel_deadline: None,
            tag: crate::workload::FlowTag::Flow,
            group: u32::MAX,
            deadline_class: None,
            sport,
            dport: ROCE_PORT,
            prio: 1,
            nic_class: class,
            ack_prio: self.spec.params.ack_prio,
            started: true,
            finish: None,
            rcv_finish: None,
            in_ready: false,
            timer: LazyTimer::IDLE,
            pace: LazyTimer::IDLE,
            stats: FlowStats::default(),
            order: u32::MAX,
            in_net: 0,
        };
        let id = match &mut self.qp_ids {
            Some((_, next)) => {
                let id = FlowId(next[src as usize]);
                next[src as usize] += 1;
                h.add_flow_at(id, flow);
                id
            }
            None => h.add_flow(flow),
        };
        let q = Q::create(line, &self.spec, &self.qp_params);
        self.put_qp(id, q, line);
        self.created += 1;
        if !self.per_message() {
            // A pair's queue pairs, for the schedulers that reuse them (a queue pair per
            // message is never looked up again).
            let key = self.key(src, dst);
            self.pairs.entry(key).or_default().qps.push(id);
        }
        id
    }

    /// Puts connection `q` in slot `id`: one past the last, a released one's, or (connections
    /// numbered by host) any, the slots below it not in use holding placeholders.
    fn put_qp(&mut self, id: FlowId, q: Q, line: f64) {
        let i = id.idx();
        if i >= self.qps.len() {
            let (spec, p) = (&self.spec, &self.qp_params);
            self.qps.resize_with(i + 1, || Q::create(line, spec, p));
            self.live.resize(i + 1, false);
        }
        self.qps[i] = q;
        self.live[i] = true;
    }

    /// A partitioned run: the receiving end of connection `pkt.flow`, which another
    /// partition's replica created, takes form here as its first packet arrives (the
    /// receiving half starts the same wherever it is created).
    #[cold]
    #[inline(never)]
    fn receiver_end(&mut self, h: &mut impl Host, pkt: &Packet) {
        let line = h.line_rate(pkt.src, pkt.dst, pkt.sport, pkt.dport).bps() as f64;
        let mut fl = Flow::placeholder(pkt.flow);
        fl.src = pkt.src;
        fl.dst = pkt.dst;
        fl.ack_prio = self.spec.params.ack_prio;
        h.add_flow_at(pkt.flow, fl);
        let q = Q::create(line, &self.spec, &self.qp_params);
        self.put_qp(pkt.flow, q, line);
    }

    /// Queue pair `i` of the pair, creating the pair's QPs on first use.
    fn pair_qp(&mut self, h: &mut impl Host, src: u32, dst: u32, i: usize) -> FlowId {
        let key = self.key(src, dst);
        if self.pairs.get(&key).is_none_or(|p| p.qps.is_empty()) {
            for (class, path) in sched::pair_layout(self.spec.sched) {
                self.new_qp(h, src, dst, class, path);
            }
        }
        self.pairs.get(&key).expect("created").qps[i]
    }

    /// Posts `bytes` of message `msg` on queue pair `qp`. The caller wakes the QP (the host
    /// makes it ready once the current call has returned).
    fn post(&mut self, qp: FlowId, msg: u32, bytes: u64) {
        debug_assert!(bytes > 0, "empty work request");
        let m = &mut self.msgs[msg as usize];
        m.unposted -= bytes;
        let prio = if m.short {
            self.spec.short_prio
        } else {
            self.spec.long_prio
        };
        let mtu = self.spec.params.mtu;
        let r = if self.rngs.len() == 1 {
            0
        } else {
            m.src as usize
        };
        self.qps[qp.idx()].post(msg, bytes, prio, mtu, &mut self.rngs[r]);
    }

    /// A message arrives at its sender.
    pub fn message_arrives(&mut self, m: u32, h: &mut impl Host) {
        let (src, dst, size, short) = {
            let msg = &self.msgs[m as usize];
            (msg.src, msg.dst, msg.size, msg.short)
        };
        match sched::placement(self.spec.sched, short) {
            sched::Place::Qp(i) => {
                let qp = self.pair_qp(h, src, dst, i);
                self.post(qp, m, size);
                h.wake(qp);
            }
            sched::Place::NewQp => {
                let qp = self.new_qp(h, src, dst, 1, None);
                self.post(qp, m, size);
                h.wake(qp);
            }
            sched::Place::Pending => {
                self.pair_qp(h, src, dst, 0);
                let key = self.key(src, dst);
                self.pairs
                    .get_mut(&key)
                    .expect("created")
                    .pending
                    .push_back(m);
                self.refill(h, src, dst, true);
            }
        }
    }

    /// Hands pending work of pair `(src, dst)` to its queue pairs as its scheduler decides
    /// (GPMP slicing, SRM chunks; nothing for the others). `wake`: wake the QPs given work.
    fn refill(&mut self, h: &mut impl Host, src: u32, dst: u32, wake: bool) {
        match self.spec.sched {
            HostSched::Gpmp { slice, limit, .. } => self.gpmp_dispatch(h, src, dst, slice, limit),
            HostSched::Srm { chunk } => self.srm_refill(h, src, dst, chunk, wake),
            _ => {}
        }
    }

    /// GPMP slicing: while the head long message has bytes left and the low-priority QP with
    /// the fewest outstanding bytes can take a slice within the limit, post one there.
    fn gpmp_dispatch(&mut self, h: &mut impl Host, src: u32, dst: u32, slice: u64, limit: u64) {
        let key = self.key(src, dst);
        let mut posted = [FlowId(u32::MAX); 64];
        let mut n_posted = 0;
        loop {
            let pair = self.pairs.get(&key).expect("pair");
            let Some(&m) = pair.pending.front() else {
                break;
            };
            let out = |q: &FlowId| self.qps[q.idx()].outstanding();
            let Some((qp, s)) = sched::gpmp_next_slice(
                &pair.qps[1..],
                out,
                self.msgs[m as usize].unposted,
                slice,
                limit,
            ) else {
                break;
            };
            self.post(qp, m, s);
            if self.msgs[m as usize].unposted == 0 {
                self.pairs.get_mut(&key).expect("pair").pending.pop_front();
            }
            if !posted[..n_posted].contains(&qp) {
                posted[n_posted] = qp;
                n_posted += 1;
            }
        }
        for &qp in &posted[..n_posted] {
            h.wake(qp);
        }
    }

    /// SRM: when the pair's QP has nothing left to send, post the next chunk of the pending
    /// message with the fewest unposted bytes (ties: earliest arrival).
    fn srm_refill(&mut self, h: &mut impl Host, src: u32, dst: u32, chunk: u64, wake: bool) {
        let key = self.key(src, dst);
        let Some(pair) = self.pairs.get(&key) else {
            return;
        };
        let qp = pair.qps[0];
        if !self.qps[qp.idx()].drained() {
            return;
        }
        let unposted = |m: u32| self.msgs[m as usize].unposted;
        let Some((pos, m)) = sched::srm_next(&pair.pending, unposted) else {
            return;
        };
        let s = chunk.min(self.msgs[m as usize].unposted);
        self.post(qp, m, s);
        if self.msgs[m as usize].unposted == 0 {
            self.pairs.get_mut(&key).expect("pair").pending.remove(pos);
        }
        if wake {
            h.wake(qp);
        }
    }

    /// `bytes` of message `msg` are acknowledged by the acknowledgement with attribution
    /// record `uid`; the message finishes when none are left.
    fn acked(&mut self, h: &mut impl Host, msg: u32, bytes: u64, uid: u32) {
        let m = &mut self.msgs[msg as usize];
        m.unacked -= bytes;
        if m.unacked == 0 {
            m.finish = Some(h.now());
            h.finished(msg as usize, uid, false, m.tag);
        }
    }
}

impl<Q: QueuePair> Protocol for Rdma<Q> {
    #[inline]
    fn has_data(&self, f: FlowId, _fl: &Flow) -> bool {
        self.qps[f.idx()].has_data(&self.spec, &self.qp_params)
    }

    /// Fills `pkt` with the next packet of queue pair `f`, if it has one.
    #[inline]
    fn emit(&mut self, f: FlowId, h: &mut impl Host, pkt: &mut Packet) -> bool {
        let r = h.flow(f).src as usize;
        let Some(drained) = self.qps[f.idx()].emit(
            f,
            h,
            pkt,
            &self.spec,
            &self.qp_params,
            &mut self.msgs,
            &mut self.rngs[r],
        ) else {
            return false;
        };
        if drained && matches!(self.spec.sched, HostSched::Srm { .. }) {
            // Inside the NIC's pull: the NIC re-queues this QP if it has data again.
            let fl = h.flow(f);
            let (src, dst) = (fl.src, fl.dst);
            self.refill(h, src, dst, false);
        }
        true
    }

    /// The pacing timer of queue pair `f` fired: send now, or wait longer if the rate fell.
    fn on_pace(&mut self, f: FlowId, h: &mut impl Host) -> bool {
        match self.qps[f.idx()].pace_wake(h.now(), &self.spec, &self.qp_params) {
            Some(t) => {
                h.set_pace(f, t);
                false
            }
            None => true,
        }
    }

    /// A data packet of queue pair `pkt.flow` arrives at its destination.
    fn on_data(&mut self, h: &mut impl Host, pkt: &Packet) -> Rx {
        if !self.live.get(pkt.flow.idx()).copied().unwrap_or(false) {
            self.receiver_end(h, pkt);
        }
        let m = pkt.hdr.message();
        let before = self.msgs[m].rcv_finish.is_some();
        let reply =
            self.qps[pkt.flow.idx()].on_data(h, pkt, &self.spec, &self.qp_params, &mut self.msgs);
        Rx {
            reply,
            received: !before && self.msgs[m].rcv_finish.is_some(),
        }
    }

    /// An ACK or NACK of queue pair `pkt.flow` arrives at its sender.
    fn on_control(&mut self, h: &mut impl Host, pkt: &Packet) -> bool {
        let now = h.now();
        let f = pkt.flow;
        let mut done = std::mem::take(&mut self.scratch);
        let int = if Q::telemetry(&self.qp_params) {
            h.telemetry(pkt)
        } else {
            IntStack::default()
        };
        let q = &mut self.qps[f.idx()];
        let acked = q.on_control(now, pkt, &self.spec, &self.qp_params, int.hops(), &mut done);
        if !q.busy() {
            h.clear_timer(f);
        } else if acked.advanced
            && let Some(rto) = q.rto(&self.spec)
        {
            h.set_timer(f, now + rto);
        }
        if acked.repace && h.flow(f).pace.armed() {
            // The rate changed under a scheduled send: it moves to the new rate's time.
            let at = q
                .rescheduled(now, &self.spec, &self.qp_params)
                .unwrap_or(now);
            h.set_pace(f, at);
        }
        let any = !done.is_empty();
        for w in done.drain(..) {
            self.acked(h, w.msg, w.bytes, pkt.uid);
        }
        self.scratch = done;
        let r = h.flow(f).src as usize;
        self.qps[f.idx()].after_acks(&mut self.rngs[r]);
        if any {
            let fl = h.flow(f);
            let (src, dst) = (fl.src, fl.dst);
            self.refill(h, src, dst, true);
        }
        true
    }

    /// Retransmission timeout of queue pair `f`.
    fn on_timer(&mut self, f: FlowId, h: &mut impl Host) {
        let r = h.flow(f).src as usize;
        let q = &mut self.qps[f.idx()];
        if q.busy() {
            q.on_timeout(&mut self.rngs[r]);
            if let Some(rto) = q.rto(&self.spec) {
                h.set_timer(f, h.now() + rto);
            }
        }
    }

    /// A packet of a message was lost: its data packets and their replies (ACK, NACK) all
    /// name the message in their header word, so a message's `drops` count both and add up to the run's.
    fn on_drop(&mut self, pkt: &Packet) {
        self.msgs[pkt.hdr.message()].drops += 1;
    }

    /// A message arrives at its sender.
    fn on_message(&mut self, m: u32, h: &mut impl Host) {
        self.message_arrives(m, h)
    }

    /// The wire priority of the queue pair's next packet.
    fn next_prio(&mut self, f: FlowId, _fl: &Flow) -> Option<u8> {
        self.qps[f.idx()].next_prio()
    }

    fn adopt(&mut self, other: &mut Self, f: FlowId, sender: bool) {
        let i = f.idx();
        if other.live.get(i).copied() != Some(true) {
            return;
        }
        if self.qps.len() <= i {
            let (spec, p) = (&self.spec, &self.qp_params);
            let q = Q::create(0.0, spec, p);
            self.put_qp(f, q, 0.0);
            self.live[i] = false;
        }
        if sender {
            // The sender's half, with its counters; the receiver's stays.
            std::mem::swap(&mut self.qps[i], &mut other.qps[i]);
            self.qps[i].swap_receiver(&mut other.qps[i]);
            self.live[i] = true;
        } else {
            self.qps[i].swap_receiver(&mut other.qps[i]);
        }
    }

    fn adopt_message(&mut self, other: &mut Self, m: usize, sender: bool) {
        let (a, b) = (&mut self.msgs[m], &other.msgs[m]);
        if sender {
            // A message that waited for a dependency started where its sender is.
            a.start = b.start;
            a.unposted = b.unposted;
            a.unacked = b.unacked;
            a.finish = b.finish;
            a.retx = b.retx;
        } else {
            a.rcvd = b.rcvd;
            a.rcv_finish = b.rcv_finish;
            a.ce = b.ce;
        }
    }

    fn add_counts(&mut self, other: &Self) {
        self.created += other.created;
        for (a, b) in self.msgs.iter_mut().zip(&other.msgs) {
            a.drops += b.drops;
        }
    }

    /// Flow `f`'s sampled state for the time series (None: not a connection of this run).
    fn sample(&self, f: FlowId) -> Option<FlowSample> {
        self.qps.get(f.idx()).map(|q| q.sample(&self.qp_params))
    }
}
