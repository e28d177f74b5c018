//! Transports: every end-host protocol, end to end, behind one seam.
//!
//! What lives here: the per-flow record the simulator keeps for every flow ([`Flow`]: endpoints,
//! size, timing, NIC class, timers, counters), the services a host lends its transport
//! ([`Host`]), and the run's transport ([`Transport`]): one enum whose variant is fixed for the
//! whole run and which owns the protocol state of every flow of the run. The simulator (`sim`)
//! knows no protocol: it asks the transport whether a flow has data, lets it fill the next
//! packet, hands it every packet that reaches a host, and tells it when a flow's timer or pacing
//! gap expires. The transport answers with packets (the ACK it builds for a data packet) and
//! through the [`Host`] services (arm a timer, hold a flow back until a time, wake a flow,
//! report a finished unit, ask which uplink a 5-tuple hashes to).
//!
//! * [`tcp`]: NewReno/SACK with the window congestion controllers of [`cc`] (Reno, DCTCP,
//!   D2TCP, PDTCP) and pFabric's end host;
//! * [`udp`]: an unreliable constant-rate stream (no acknowledgements, no congestion control),
//!   for background load and for tests that need a saturating source;
//! * [`rdma`]: RoCEv2 messages over reliable-connection queue pairs with DCQCN ([`rdma::qp`]) or
//!   over MP-RDMA connections ([`rdma::mprdma`]), placed on queue pairs by the host message
//!   schedulers ([`rdma::sched`]: single path, per message, NEM-like, SRM-like, GPMP).
//!
//! Dispatch is by `match` on [`Transport`], never through trait objects: the variant is the
//! same for every call of a run, so the branch predicts perfectly, and each protocol's hot
//! functions inline into the simulator's NIC pull.
//!
//! What this module deliberately does not do: schedule events, touch ports or switches, or
//! send packets itself. A transport decides; the host acts.

pub mod cc;
pub mod rdma;
pub mod registry;
pub mod tcp;
pub mod udp;

use crate::engine::LazyTimer;
use crate::ids::FlowId;
use crate::net::packet::{Hdr, Packet, PktKind, ecn};
use crate::units::{BitRate, SimTime};
use crate::workload::FlowSpec;

// The protocol types the simulator sees through this seam: what a run's transport reports
// (TCP counters, RDMA messages) and the pFabric rank its host NICs schedule by.
pub use rdma::Msg;
pub use tcp::{RankKind, TcpStats};

/// The RDMA message a data packet (or its reply) belongs to, in runs whose units are
/// messages ([`TransportSpec::units_are_messages`]).
#[inline(always)]
pub fn message_of(pkt: &Packet) -> usize {
    pkt.hdr.message()
}

/// One protocol's end-host behaviour: what the simulator asks of a transport. [`Transport`]
/// holds one implementation per run and forwards every call to it; a new protocol implements
/// this trait and adds one variant. Hooks with a default are for protocols that need them
/// (pacing, message arrivals, drops, per-queue-pair priorities, sampled state).
pub trait Protocol {
    /// Whether flow `f` (started, unfinished) has a packet it may send, ignoring pacing.
    fn has_data(&self, f: FlowId, fl: &Flow) -> bool;
    /// Fills `pkt` (headers preset from the flow) with flow `f`'s next packet; false if none.
    fn emit(&mut self, f: FlowId, h: &mut impl Host, pkt: &mut Packet) -> bool;
    /// A data packet of flow `pkt.flow` reached its destination: the reply it builds, and
    /// whether the flow's last byte was received.
    fn on_data(&mut self, h: &mut impl Host, pkt: &Packet) -> Rx;
    /// A control packet (ACK, NACK) of flow `pkt.flow` reached its sender; true: wake the flow.
    fn on_control(&mut self, h: &mut impl Host, pkt: &Packet) -> bool;
    /// Flow `f`'s retransmission timer expired (it was armed and is due).
    fn on_timer(&mut self, f: FlowId, h: &mut impl Host);
    /// Flow `f`'s pacing gap ended; false: it holds back longer (the protocol re-armed it).
    fn on_pace(&mut self, _f: FlowId, _h: &mut impl Host) -> bool {
        true
    }
    /// A message `m` arrives at its sender (message-based protocols; flows start in the
    /// simulator instead).
    fn on_message(&mut self, _m: u32, _h: &mut impl Host) {}
    /// A packet of flow `pkt.flow` was dropped in the network.
    fn on_drop(&mut self, _pkt: &Packet) {}
    /// The wire priority of flow `f`'s next packet (None: nothing to send).
    fn next_prio(&mut self, _f: FlowId, fl: &Flow) -> Option<u8> {
        Some(fl.prio)
    }
    /// The sampled state of flow `f` for the time series (None: nothing to sample).
    fn sample(&self, _f: FlowId) -> Option<FlowSample> {
        None
    }
    /// A partitioned run's merge: message `m`'s half, from `other` (RDMA).
    fn adopt_message(&mut self, _other: &mut Self, _m: usize, _sender: bool) {}
    /// A partitioned run's merge: what `other` counted of the whole run.
    fn add_counts(&mut self, _other: &Self) {}
    /// A partitioned run's merge: flow `f`'s sender half (`sender`) or receiver half, from
    /// `other`, the replica that handled that end (see `sim::window`).
    fn adopt(&mut self, other: &mut Self, f: FlowId, sender: bool)
    where
        Self: Sized;
}

/// The services a host lends its transport during a call. Implemented by the simulator; a
/// transport never reaches into simulator state except through these.
pub trait Host {
    /// The current simulated time.
    fn now(&self) -> SimTime;
    /// The simulator's record of flow `f`.
    fn flow(&self, f: FlowId) -> &Flow;
    fn flow_mut(&mut self, f: FlowId) -> &mut Flow;
    /// Arms (or moves) flow `f`'s retransmission timer to fire at `at`.
    fn set_timer(&mut self, f: FlowId, at: SimTime);
    /// Disarms flow `f`'s retransmission timer.
    fn clear_timer(&mut self, f: FlowId);
    /// Whether flow `f`'s retransmission timer is armed.
    fn timer_armed(&self, f: FlowId) -> bool;
    /// Holds flow `f` back from sending until `at` (pacing).
    fn set_pace(&mut self, f: FlowId, at: SimTime);
    /// Flow `f` may have data to send: the host puts it in its NIC's ready list once the
    /// current call has returned (never during it, so a transport is never re-entered).
    fn wake(&mut self, f: FlowId);
    /// Unit `unit` (a flow, or an RDMA message) finished; `uid` is the attribution record of the
    /// packet that finished it, `receiver_side` whether it finished at the receiver (UDP),
    /// `tag` the workload's tag of the unit (for `end_when`).
    fn finished(
        &mut self,
        unit: usize,
        uid: u32,
        receiver_side: bool,
        tag: crate::workload::FlowTag,
    );
    /// The line rate of the port host `src` sends the connection (`src`, `dst`, `sport`,
    /// `dport`) from (its NIC's, for a host with one).
    fn line_rate(&self, src: u32, dst: u32, sport: u16, dport: u16) -> BitRate;
    /// Path selection: which of its `n` equal-cost uplinks host `src`'s first switch picks for
    /// a packet to `dst` with this IP protocol and these ports, as `(index, n)` (`(0, 1)` when
    /// there is no choice).
    fn uplink_for(&self, src: u32, dst: u32, proto: u8, sport: u16, dport: u16) -> (usize, usize);
    /// Adds a flow (an RDMA queue pair created on demand) and returns its id.
    fn add_flow(&mut self, flow: Flow) -> FlowId;
    /// Adds a flow under id `id` (unused until now; the slots below it that are not in use
    /// hold placeholders, [`Flow::placeholder`]).
    fn add_flow_at(&mut self, id: FlowId, flow: Flow);
    /// The in-band telemetry a packet carries (empty in runs without telemetry).
    fn telemetry(&self, pkt: &Packet) -> cc::IntStack;
}

/// Per-flow counters.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct FlowStats {
    /// Data packets handed to the NIC (including retransmissions).
    pub data_pkts: u64,
    /// Data packets that arrived with CE set.
    pub ce_rcvd: u64,
    /// Packets of this flow (data or ACK) dropped in the network.
    pub drops: u64,
}

/// A flow as the simulator sees it: endpoints, size, timing, NIC class, timers and counters.
/// The protocol state lives in the run's [`Transport`], indexed by the same [`FlowId`].
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Flow {
    pub id: FlowId,
    /// The workload's flow id (as in the input CSV).
    pub ext_id: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: SimTime,
    /// Absolute deadline (set when the flow starts).
    pub deadline: Option<SimTime>,
    /// Deadline relative to the start.
    pub rel_deadline: Option<SimTime>,
    pub tag: crate::workload::FlowTag,
    /// Group membership (u32::MAX: none).
    pub group: u32,
    /// Deadline class (the mean the deadline was drawn from).
    pub deadline_class: Option<SimTime>,
    pub sport: u16,
    pub dport: u16,
    /// Priority class (switch queue) of data packets and of ACKs.
    pub prio: u8,
    pub ack_prio: u8,
    /// Class at the host NIC (served in strict priority, 0 first, after control packets).
    pub nic_class: u8,
    pub started: bool,
    /// Sender-side completion (last byte acknowledged; for UDP, last byte received).
    pub finish: Option<SimTime>,
    /// Receiver-side completion (last byte received in order).
    pub rcv_finish: Option<SimTime>,
    /// In its host's ready list.
    pub in_ready: bool,
    /// Retransmission timer (the host arms it for the transport).
    pub timer: LazyTimer,
    /// Pacing timer: while armed, the flow may not send.
    pub pace: LazyTimer,
    pub stats: FlowStats,
    /// Its position in the workload's arrival order (the index of its [`FlowSpec`]).
    pub order: u32,
    /// Its packets that exist (created by its transport, not yet delivered or lost): a
    /// released flow's slot is reused only once none is left anywhere (see `sim`).
    pub in_net: u32,
}

impl Flow {
    /// The record of a slot no flow uses (yet): endpoints `u32::MAX`, never started.
    pub fn placeholder(id: FlowId) -> Flow {
        Flow {
            id,
            ext_id: u32::MAX,
            src: u32::MAX,
            dst: u32::MAX,
            size: 0,
            start: SimTime::ZERO,
            deadline: None,
            rel_deadline: None,
            tag: crate::workload::FlowTag::Flow,
            group: u32::MAX,
            deadline_class: None,
            sport: 0,
            dport: 0,
            prio: 0,
            ack_prio: 0,
            nic_class: 0,
            started: false,
            finish: None,
            rcv_finish: None,
            in_ready: false,
            timer: LazyTimer::IDLE,
            pace: LazyTimer::IDLE,
            stats: FlowStats::default(),
            order: u32::MAX,
            in_net: 0,
        }
    }

    /// Whether this is a slot no flow uses ([`Flow::placeholder`]).
    pub fn is_placeholder(&self) -> bool {
        self.src == u32::MAX
    }

    /// A flow that has not started, with no timer armed.
    pub fn new(id: FlowId, spec: &FlowSpec, prio: u8, ack_prio: u8) -> Flow {
        Flow {
            id,
            ext_id: spec.id,
            src: spec.src,
            dst: spec.dst,
            size: spec.size,
            start: spec.start,
            deadline: match spec.after {
                None => spec.deadline.map(|d| spec.start + d),
                // Set when the flow starts.
                Some(_) => None,
            },
            rel_deadline: spec.deadline,
            tag: spec.tag,
            group: spec.group.unwrap_or(u32::MAX),
            deadline_class: spec.deadline_class,
            // Ephemeral-port-like source ports, distinct per flow, for ECMP entropy.
            sport: 10_000u16.wrapping_add((spec.id % 50_000) as u16),
            dport: 5_000,
            prio,
            ack_prio,
            nic_class: prio,
            started: false,
            finish: None,
            rcv_finish: None,
            in_ready: false,
            timer: LazyTimer::IDLE,
            pace: LazyTimer::IDLE,
            stats: FlowStats::default(),
            order: id.0,
            in_net: 0,
        }
    }

    pub fn done(&self) -> bool {
        self.finish.is_some()
    }

    /// The header fields of the next data packet of this flow, handed to the transport to fill.
    #[inline(always)]
    pub fn data_packet(&self, now: SimTime) -> Packet {
        Packet {
            flow: self.id,
            src: self.src,
            dst: self.dst,
            seq: 0,
            hdr: Hdr::NONE,
            ts: now,
            size: 0,
            payload: 0,
            sport: self.sport,
            dport: self.dport,
            in_port: crate::ids::PortId(0),
            kind: PktKind::Data,
            prio: self.prio,
            ecn: 0,
            flags: 0,
            uid: 0,
        }
    }
}

/// The control packet (ACK or NACK) answering data packet `data`: back to its sender on the
/// reversed 5-tuple, echoing its timestamp and its CE mark as ECE. The simulator fills in the
/// attribution record.
#[inline]
pub fn reply(data: &Packet, kind: PktKind, seq: u64, hdr: Hdr, size: u32, prio: u8) -> Packet {
    Packet {
        flow: data.flow,
        src: data.dst,
        dst: data.src,
        seq,
        hdr,
        ts: data.ts,
        size: size as u16,
        payload: 0,
        sport: data.dport,
        dport: data.sport,
        in_port: crate::ids::PortId(0),
        kind,
        prio,
        ecn: if data.ce() { ecn::ECE } else { 0 },
        flags: 0,
        uid: 0,
    }
}

/// What a data packet's arrival at its receiver produced.
#[derive(Clone, Copy, Debug)]
pub struct Rx {
    /// The control packet to send back (sent by the receiving host's NIC ahead of its data).
    pub reply: Option<Packet>,
    /// The flow's last byte (RDMA: its message's) was received in order just now (what
    /// waits for it may start).
    pub received: bool,
}

impl Rx {
    pub const NONE: Rx = Rx {
        reply: None,
        received: false,
    };
}

/// One flow's sampled transport state for the time series (None: does not apply).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowSample {
    pub cwnd_pkts: Option<f64>,
    pub alpha: Option<f64>,
    pub priority: Option<f64>,
    pub rate_bps: Option<f64>,
}

/// Which transport the flows of a run use, with its parameters (the lowered scheme).
#[derive(Clone, Debug)]
pub enum TransportSpec {
    /// TCP with a window congestion controller.
    Tcp {
        params: tcp::TcpParams,
        cc: cc::WindowCcSpec,
    },
    /// Constant-rate UDP at `rate` (None: the host link rate), `mss` payload per packet.
    Udp {
        rate: Option<BitRate>,
        mss: u32,
        header: u32,
    },
    /// RDMA queue pairs carrying messages.
    Rdma(Box<rdma::RdmaSpec>),
}

impl TransportSpec {
    /// The units the workload's flows become are RDMA messages (carried by queue pairs), not
    /// flows of their own.
    pub fn units_are_messages(&self) -> bool {
        matches!(self, TransportSpec::Rdma(_))
    }

    /// Each RDMA message has its own queue pair, which takes the message's flow slot.
    pub fn message_per_connection(&self) -> bool {
        matches!(self, TransportSpec::Rdma(r) if matches!(r.sched, rdma::HostSched::PerMessage))
    }

    pub fn mss(&self) -> u32 {
        match self {
            TransportSpec::Tcp { params, .. } => params.mss,
            TransportSpec::Udp { mss, .. } => *mss,
            TransportSpec::Rdma(r) => r.params.mtu,
        }
    }
    /// Wire bytes of an acknowledgement; None: the transport sends none (UDP).
    pub fn ack_bytes(&self) -> Option<u32> {
        match self {
            TransportSpec::Tcp { params, .. } => Some(params.header),
            TransportSpec::Udp { .. } => None,
            TransportSpec::Rdma(r) => Some(r.params.ack_bytes),
        }
    }
    pub fn header(&self) -> u32 {
        match self {
            TransportSpec::Tcp { params, .. } => params.header,
            TransportSpec::Udp { header, .. } => *header,
            TransportSpec::Rdma(r) => r.params.header,
        }
    }
}

// The transport enum and its dispatch, with one TCP variant per window controller and one
// RDMA variant per rate controller of the registry (`registry::ccs`). `$d` is a `$` for the
// macros defined inside.
macro_rules! transport_enum {
    ([$d:tt]
     window { $($kind:ident: $cm:ident::$cc:ident, $name:literal, $ecn:literal, $about:literal, $notes:literal;)* }
     rate { $($rkind:ident: $rcm:ident::$rcc:ident, $rname:literal, $win:literal, $mark:ident, $rabout:literal, $rnotes:literal;)* }) => {
        /// The transport of a run: one variant for the whole run, owning every flow's protocol
        /// state.
        #[allow(clippy::large_enum_variant)]
        #[derive(serde::Serialize, serde::Deserialize)]
        pub enum Transport {
            $(
                #[doc = concat!("TCP (NewReno/SACK) with the `", stringify!($cc), "` window controller.")]
                $cc(tcp::Tcp<cc::$cc>),
            )*
            Udp(udp::Udp),
            $(
                #[doc = concat!("RoCEv2 reliable-connection queue pairs paced by `", stringify!($rcc), "`.")]
                $rkind(Box<rdma::Rdma<rdma::qp::RcQp<cc::$rcc>>>),
            )*
            /// Queue pairs without rate control (line rate).
            RdmaLine(Box<rdma::Rdma<rdma::qp::RcQp<cc::LineRate>>>),
            /// MP-RDMA connections.
            MpRdma(Box<rdma::Rdma<rdma::mprdma::MpQp>>),
        }

        /// Dispatches a call to the run's transport.
        macro_rules! each {
            ($d self_:expr, $d t:ident => $d e:expr) => {
                match $d self_ {
                    $(Transport::$cc($d t) => $d e,)*
                    Transport::Udp($d t) => $d e,
                    $(Transport::$rkind($d t) => $d e,)*
                    Transport::RdmaLine($d t) => $d e,
                    Transport::MpRdma($d t) => $d e,
                }
            };
        }

        /// Dispatches a call over two transports of the same kind (replicas of one run);
        /// `$other` when their kinds differ.
        macro_rules! each_pair {
            ($d a:expr, $d b:expr, $d x:ident, $d y:ident => $d e:expr, $d other:expr) => {
                match ($d a, $d b) {
                    $((Transport::$cc($d x), Transport::$cc($d y)) => $d e,)*
                    (Transport::Udp($d x), Transport::Udp($d y)) => $d e,
                    $((Transport::$rkind($d x), Transport::$rkind($d y)) => $d e,)*
                    (Transport::RdmaLine($d x), Transport::RdmaLine($d y)) => $d e,
                    (Transport::MpRdma($d x), Transport::MpRdma($d y)) => $d e,
                    _ => $d other,
                }
            };
        }

        /// Applies an expression to the run's TCP transport, whatever its controller; `$other`
        /// for the other transports.
        macro_rules! with_tcp {
            ($d self_:expr, $d t:ident => $d e:expr, $d other:expr) => {
                match $d self_ {
                    $(Transport::$cc($d t) => $d e,)*
                    Transport::Udp(_)
                    $(| Transport::$rkind(_))*
                    | Transport::RdmaLine(_)
                    | Transport::MpRdma(_) => $d other,
                }
            };
        }

        /// Applies an expression to the run's RDMA transport, whatever its connections;
        /// `$other` for the other transports.
        macro_rules! with_rdma {
            ($d self_:expr, $d t:ident => $d e:expr, $d other:expr) => {
                match $d self_ {
                    $(Transport::$rkind($d t) => $d e,)*
                    Transport::RdmaLine($d t) => $d e,
                    Transport::MpRdma($d t) => $d e,
                    $(Transport::$cc(_))|* | Transport::Udp(_) => $d other,
                }
            };
        }

        impl Transport {
            /// The TCP transport with window controller `spec`.
            fn new_tcp(p: tcp::TcpParams, spec: cc::WindowCcSpec, flows: &[Flow]) -> Transport {
                match spec {
                    $(cc::WindowCcSpec::$cc(c) => Transport::$cc(tcp::Tcp::new(p, c, flows)),)*
                }
            }

            /// The RDMA transport of `r`.
            fn new_rdma(r: &rdma::RdmaSpec, specs: &[FlowSpec], n_hosts: usize, seed: u64) -> Transport {
                let s = r.clone();
                match &r.conn {
                    $(rdma::ConnSpec::$rkind(c) => Transport::$rkind(Box::new(rdma::Rdma::new(
                        s,
                        c.clone(),
                        specs,
                        n_hosts,
                        seed,
                    ))),)*
                    rdma::ConnSpec::LineRate => Transport::RdmaLine(Box::new(rdma::Rdma::new(
                        s,
                        cc::LineRate,
                        specs,
                        n_hosts,
                        seed,
                    ))),
                    rdma::ConnSpec::MpRdma(mp) => Transport::MpRdma(Box::new(rdma::Rdma::new(
                        s,
                        mp.clone(),
                        specs,
                        n_hosts,
                        seed,
                    ))),
                }
            }
        }
    };
}
registry::ccs!(transport_enum [$]);

impl Transport {
    /// The transport of a run: `flows` are the simulator's records of the workload's flows
    /// (TCP, UDP; empty for RDMA, whose flows are queue pairs created on demand), `specs` the
    /// workload itself.
    pub fn new(
        spec: &TransportSpec,
        specs: &[FlowSpec],
        flows: &[Flow],
        line_rate: impl Fn(&Flow) -> BitRate,
        n_hosts: usize,
        seed: u64,
    ) -> Transport {
        match spec {
            TransportSpec::Tcp { params, cc } => Transport::new_tcp(params.clone(), *cc, flows),
            TransportSpec::Udp { rate, mss, header } => {
                Transport::Udp(udp::Udp::new(*rate, *mss, *header, flows, line_rate))
            }
            TransportSpec::Rdma(r) => Transport::new_rdma(r, specs, n_hosts, seed),
        }
    }

    /// A partitioned run's merge: flow `f`'s sender half (`sender`) or receiver half from
    /// `from`, the replica of the partition that handled that end.
    pub fn adopt(&mut self, from: &mut Transport, f: FlowId, sender: bool) {
        each_pair!(self, from, a, b => a.adopt(b, f, sender),
            unreachable!("replicas of one run have one transport"))
    }

    /// A partitioned run's merge, RDMA: message `m`'s sender half (`sender`) or receiver
    /// half from `from`.
    pub fn adopt_message(&mut self, from: &mut Transport, m: usize, sender: bool) {
        each_pair!(self, from, a, b => a.adopt_message(b, m, sender), ())
    }

    /// A partitioned run's merge: adds what `from` counted of the whole run (RDMA: queue
    /// pairs created, messages' drops).
    pub fn add_counts(&mut self, from: &Transport) {
        each_pair!(self, from, a, b => a.add_counts(b), ())
    }

    /// Every flow kept: RDMA queue pairs are numbered by sending host (host
    /// `h`'s `k`-th is the `k`-th id of its range), not in the order the run created them.
    pub fn per_host_ids(&mut self) {
        with_rdma!(self, r => r.per_host_ids(), ())
    }

    /// The work units of the run whose completion ends it: flows, or RDMA messages.
    pub fn messages(&self) -> Option<&[rdma::Msg]> {
        with_rdma!(self, r => Some(&r.msgs), None)
    }

    /// Counters summed over the connections of an RDMA run.
    pub fn qp_totals(&self) -> Option<rdma::QpTotals> {
        with_rdma!(self, r => Some(r.totals()), None)
    }

    /// Connections an RDMA run created.
    pub fn queue_pairs(&self) -> Option<u64> {
        with_rdma!(self, r => Some(r.created()), None)
    }

    /// RDMA: message `spec`, the `order`-th of the workload, arrives in slot `m` (runs that
    /// release messages).
    pub fn open_message(&mut self, m: u32, spec: &FlowSpec, order: u32) {
        with_rdma!(self, r => r.open(m, spec, order), unreachable!("only RDMA runs have messages"))
    }

    /// RDMA: message `m`, which waited for a dependency, starts at `now`; its source host.
    pub fn start_message(&mut self, m: u32, now: SimTime) -> u32 {
        with_rdma!(self, r => {
            let msg = &mut r.msgs[m as usize];
            msg.start = now;
            msg.src
        }, unreachable!("only RDMA runs have messages"))
    }

    /// RDMA: releases message slot `m` (and its connection's, where each message has its
    /// own); the message's final state. None in other runs.
    pub fn release_message(&mut self, m: u32) -> Option<rdma::Msg> {
        with_rdma!(self, r => Some(r.release(m)), None)
    }

    /// RDMA: the record of a message that has not started (`spec`, the `order`-th).
    pub fn unstarted_message(&self, spec: &FlowSpec, order: u32) -> Option<rdma::Msg> {
        with_rdma!(self, r => Some(rdma::Msg::new(spec, order, r.spec.short_threshold)), None)
    }

    /// Sets up the protocol state of a flow that starts in slot `f` (a new slot, one past the
    /// last, or a released flow's): TCP and UDP runs whose flow state is released
    /// ([`crate::sim::Sim`]'s retiring mode). `line` is its host's line rate.
    pub fn open(&mut self, f: FlowId, fl: &Flow, line: BitRate) {
        match self {
            Transport::Udp(u) => u.open(f, fl, line),
            _ => {
                with_tcp!(self, t => t.open(f, fl), unreachable!("only TCP and UDP flows are opened"))
            }
        }
    }

    /// Flow `f`'s TCP counters and congestion state, in TCP runs.
    pub fn tcp(&self, f: FlowId) -> Option<tcp::TcpStats> {
        with_tcp!(self, t => (f.idx() < t.conns.len()).then(|| t.stats(f)), None)
    }

    /// Whether data packets collect in-band telemetry at switches (HPCC).
    pub fn telemetry(&self) -> bool {
        with_rdma!(self, t => t.telemetry(), false)
    }

    /// Whether the flows' packets carry a pFabric rank the host NIC schedules by.
    pub fn nic_rank(&self) -> Option<tcp::RankKind> {
        with_tcp!(self, t => t.params.rank, None)
    }

    /// Whether flow `f` (started, unfinished) has a packet it may send, ignoring pacing.
    #[inline(always)]
    pub fn has_data(&self, f: FlowId, fl: &Flow) -> bool {
        each!(self, t => t.has_data(f, fl))
    }

    /// Fills `pkt` (headers preset from the flow) with flow `f`'s next packet; false if none.
    #[inline(always)]
    pub fn emit(&mut self, f: FlowId, h: &mut impl Host, pkt: &mut Packet) -> bool {
        each!(self, t => t.emit(f, h, pkt))
    }

    /// The wire priority of flow `f`'s next packet (None: nothing to send).
    pub fn next_prio(&mut self, f: FlowId, fl: &Flow) -> Option<u8> {
        each!(self, t => t.next_prio(f, fl))
    }

    /// pFabric: the rank of flow `f`'s next packet (its host NIC sends the smallest first).
    pub fn rank(&self, f: FlowId, fl: &Flow, kind: tcp::RankKind) -> u64 {
        let acked = with_tcp!(self, t => t.conns[f.idx()].snd.snd_una, 0);
        kind.rank(fl.size, acked, fl.deadline)
    }

    /// A data packet of flow `pkt.flow` reached its destination.
    #[inline]
    pub fn on_data(&mut self, h: &mut impl Host, pkt: &Packet) -> Rx {
        each!(self, t => t.on_data(h, pkt))
    }

    /// A control packet (ACK, NACK) of flow `pkt.flow` reached its sender; true: wake the flow.
    #[inline(always)]
    pub fn on_control(&mut self, h: &mut impl Host, pkt: &Packet) -> bool {
        each!(self, t => t.on_control(h, pkt))
    }

    /// Flow `f`'s retransmission timer expired (it was armed and is due).
    pub fn on_timer(&mut self, f: FlowId, h: &mut impl Host) {
        each!(self, t => t.on_timer(f, h))
    }

    /// Flow `f`'s pacing gap ended; false: it holds back longer (the transport re-armed it).
    pub fn on_pace(&mut self, f: FlowId, h: &mut impl Host) -> bool {
        each!(self, t => t.on_pace(f, h))
    }

    /// RDMA: message `m` arrives at its sender (flows start in the simulator instead).
    pub fn on_message(&mut self, m: u32, h: &mut impl Host) {
        each!(self, t => t.on_message(m, h))
    }

    /// A packet of flow `pkt.flow` was dropped in the network.
    pub fn on_drop(&mut self, pkt: &Packet) {
        each!(self, t => t.on_drop(pkt))
    }

    /// The sampled state of flow `f` for the time series (None: nothing to sample).
    pub fn sample(&self, f: FlowId) -> Option<FlowSample> {
        each!(self, t => t.sample(f))
    }
}
