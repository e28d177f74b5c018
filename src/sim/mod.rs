//! One simulation run: the event loop and what happens at each event.
//!
//! Events (a `Copy` enum, one `match`):
//!
//! * `Start`: flows whose start time has come become active (one pending event for the whole
//!   sorted flow list);
//! * `TxDone(port)`: the port's serializer is free and it has a backlog: start the next packet;
//! * `Arrive(port)`: the head of the port's wire reaches the far end (the next packet on the
//!   wire is then scheduled);
//! * `Pfc { port, prio, pause }`: a PFC frame reaches the upstream egress `port`;
//! * `Timer(flow, generation)`: a flow's retransmission or pacing timer (lazy cancellation).
//!
//! A transmission puts the packet on the wire at once with its arrival time
//! `start + serialization + propagation`; a `TxDone` is scheduled only if another packet is
//! waiting, so an uncongested hop costs one event. Host NICs serve, in strict priority order,
//! their control queue (ACKs) and then the flows that are ready at that priority, round robin
//! one packet at a time (a flow's packet is made when the NIC takes it); with `[nic] qdisc =
//! "fifo"` flows instead fill a FIFO host queue per priority as soon as their transport lets
//! them, up to a per-flow byte limit (TCP small queues). They honour PFC pauses from their leaf. Hosts have unlimited memory
//! and never drop. PFC frames are not queued behind data: they reach the upstream port after
//! the serialization of a 64-byte frame plus the link's propagation delay.
//!
//! Conservation is tracked in wire bytes and packets: every byte a host transmits is, at any
//! time, delivered to a host, dropped by a switch, queued in a switch, or on a wire.

pub mod attrib;
pub mod telemetry;
pub mod timeseries;

pub use crate::transport::TransportSpec;

use crate::engine::{EventQueue, Fired};
use crate::ids::{FlowId, NodeId, PortId};
use crate::net::packet::Packet;
use crate::net::port::{InFlight, MarkAt, Port, Scheduler, pfabric_rank};
use crate::net::{BuildOpts, Network};
use crate::transport::tcp::RankKind;
use crate::transport::{Flow, Host, Transport};
use crate::units::{BitRate, SimTime};
use crate::workload::FlowSpec;
use std::collections::VecDeque;

#[inline]
/// The delay-attribution unit a data packet belongs to: its message (RDMA, in `aux`) or its
/// flow; None for control packets.
fn attrib_unit(msg_units: bool, pkt: &Packet) -> Option<usize> {
    pkt.is_data().then(|| {
        if msg_units {
            crate::transport::rdma::msg_of(pkt.aux)
        } else {
            pkt.flow.idx()
        }
    })
}

fn port_node_idx(net: &Network, p: PortId) -> usize {
    net.ports[p.idx()].node.idx()
}

/// Networks with at least this many ports prefetch ahead in the event loop.
pub const PREFETCH_MIN_PORTS: usize = 512;

/// Prefetches the cache line holding `p` (a hint; a no-op off x86-64).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect (it reads nothing into the program and an
    // invalid address does not fault), and SSE, which it needs, is part of the x86-64 baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Wire size of a PFC frame unless `[switch.pfc] frame_size` says otherwise.
pub const PFC_FRAME_BYTES: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Start,
    TxDone(PortId),
    Arrive(PortId),
    Pfc {
        port: PortId,
        prio: u8,
        pause: bool,
    },
    Timer(FlowId, u32),
    Pace(FlowId, u32),
    /// A dependent flow whose group completed starts (after its delay).
    StartFlow(FlowId),
    /// Failure `i` of `[[failures]]` happens.
    Fail(u32),
    /// Routes are recomputed after a failure (its convergence delay later).
    Reroute,
}

/// Where a packet goes at a switch when the run has pinned paths or failures.
enum Detour {
    Pinned(PortId),
    Route,
    Lost,
}

/// What a `[[failures]]` entry does to its ports (both directions of each link).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FailKind {
    /// The links go down: their queues and wires are dropped (counted), nothing is sent.
    Down,
    /// The links come back.
    Up,
    /// The links run at a new rate from now on (degradation).
    Rate(BitRate),
}

/// How a host NIC orders a class's ready flows when not in the order they became ready.
#[derive(Clone, Copy, Debug)]
enum NicPick {
    /// pFabric: the smallest rank.
    Rank(RankKind),
    /// `[nic] order = "index"`: round robin by flow index.
    Index,
}

/// Byte and packet conservation counters (wire bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Conservation {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    pub in_flight_pkts: u64,
    pub in_flight_bytes: u64,
}

impl Conservation {
    /// `sent = delivered + dropped + in flight`, in packets and in bytes.
    pub fn holds(&self) -> bool {
        self.sent_bytes == self.delivered_bytes + self.dropped_bytes + self.in_flight_bytes
            && self.sent_pkts == self.delivered_pkts + self.dropped_pkts + self.in_flight_pkts
    }
}

/// Everything needed to run: the network, flows and parameters.
pub struct SimSetup<'a> {
    pub topo: &'a crate::topology::TopoSpec,
    pub build: BuildOpts<'a>,
    pub transport: TransportSpec,
    pub flows: Vec<FlowSpec>,
    /// Release each flow's state once it has finished and its last packet is gone
    /// (`Retire`); honoured for TCP and UDP workloads without dependencies.
    pub retire: bool,
    /// The workload as a stream in start order, with its length, instead of `flows` (which
    /// is then empty): pulled as flows start in retiring mode, collected otherwise.
    pub stream: Option<(crate::workload::FlowStream, crate::workload::StreamCheck)>,
    pub data_prio: u8,
    pub ack_prio: u8,
    pub stop_time: Option<SimTime>,
    /// Seed of the run (for transport-side random streams).
    pub seed: u64,
    /// End when every flow with this tag has finished.
    pub end_when: Option<crate::workload::FlowTag>,
}

/// The stop time of a run without `stop_time`: the last instant the clock holds. Times add
/// saturating, so an event computed beyond it lies at [`SimTime::MAX`], after it, and the run
/// ends ([`EndReason::TimeLimit`]) instead of the clock wrapping into the past.
pub const NO_STOP: SimTime = SimTime(u64::MAX - 1);

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Every flow finished.
    AllFinished,
    /// Every flow with the `end_when` tag finished, and then every flow already started.
    TagFinished,
    /// The configured stop time was reached.
    StopTime,
    /// No events were left (e.g. unreliable flows lost packets).
    Idle,
    /// Nothing left could finish: after the last failure or recovery took effect, every
    /// unfinished flow (or message) that had started was between hosts that could no longer
    /// reach each other, and no other flow was due to start.
    Unreachable,
    /// The clock would have passed the largest time it holds (2^64 − 1 ps, about 213 days).
    TimeLimit,
}

impl EndReason {
    pub fn name(self) -> &'static str {
        match self {
            EndReason::AllFinished => "all_finished",
            EndReason::TagFinished => "tag_finished",
            EndReason::StopTime => "stop_time",
            EndReason::Idle => "idle",
            EndReason::Unreachable => "unreachable",
            EndReason::TimeLimit => "time_limit",
        }
    }
}

/// A snapshot of a run's progress, reported every 2^20 events.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulated time now.
    pub now: SimTime,
    /// The configured stop time ([`NO_STOP`] when the run ends with its flows).
    pub stop_time: SimTime,
    /// Events processed so far.
    pub events: u64,
    /// Flows finished so far, of `total`.
    pub finished: usize,
    pub total: usize,
    /// Packet-hops so far.
    pub packet_hops: u64,
}

/// The hosts' FIFO queues in front of their NICs (`[nic] qdisc = "fifo"`).
#[derive(Debug)]
pub struct HostFifo {
    /// Per host and NIC class: packets in the order their flows queued them.
    queues: Vec<Vec<VecDeque<Packet>>>,
    /// Per flow: wire bytes it has in its host's queue.
    queued: Vec<u64>,
    /// A flow queues more only below this many bytes (TCP small queues; MAX: no limit).
    limit: u64,
}

/// Flow-state release (retiring mode): a finished flow's slot in [`Sim::flows`] (and its
/// transport and attribution state) is reused once nothing of the flow is left: no packet of
/// it anywhere (host queue, wire, switch buffer; [`Flow::in_net`]), no timer armed, not in its
/// host's ready list. Nothing then can change its record, so it is handed out
/// ([`Sim::take_retired`]) and the run's memory follows the flows in progress, not the flows
/// of the run. A cancelled timer's event may still be queued (a retransmission timer's, up to
/// an RTO later): the next occupant's timers continue its generations
/// ([`LazyTimer::successor`](crate::engine::LazyTimer::successor)), so that event finds them
/// stale, as it would have found the finished flow's idle: it does nothing either way.
///
/// Slots are indices only: no decision depends on a flow's slot (ECMP hashes the 5-tuple,
/// whose source port comes from the workload's flow id; NIC lists keep ready order), so the
/// run's events and outputs are those of a run that keeps every flow. Runs that would read
/// flows by slot (per-flow time series or pcap filters, pinned paths, `[nic] order =
/// "index"`, `end_when`, failures whose routes the ideal FCTs read at the end, dependent
/// workloads) keep every flow instead.
///
/// RDMA: the units are messages and the flows their queue pairs. Where each message has a
/// queue pair of its own (`per_message`: DCQCN, HPCC, TIMELY, IRN, ...), the two share a
/// slot: the message takes a free one as it arrives, its queue pair the same, and both are
/// released together once the message has finished and nothing of its queue pair is left
/// (late duplicates of a spurious retransmission included). Schedulers that keep a host
/// pair's queue pairs for later messages (SP-RDMA, GPMP, ...) keep the queue pairs and
/// release a finished message's slot once none of its packets (data, or replies to them) is
/// left
/// (`Sim::msg_in_net`, counted where the transport makes one and where it is delivered or
/// lost): a late packet would otherwise count against the slot's next message.
struct Retire {
    /// Finished flows not yet released, and the length of that list after the last scan
    /// (the next scan waits until it has doubled: a flow is checked a bounded number of
    /// times on average).
    pending: Vec<FlowId>,
    scanned: usize,
    /// Released slots, reused last-in first-out.
    free: Vec<u32>,
    /// Released flows not yet taken by the driver.
    out: Vec<Retired>,
    /// RDMA: the slot of the message arriving now, which its connection takes.
    slot: Option<u32>,
}

/// A released flow (or RDMA message): its final record, transport counters and delay
/// attribution.
pub struct Retired {
    /// The flow; for an RDMA message, its connection if it had its own.
    pub flow: Option<Flow>,
    pub tcp: Option<crate::transport::tcp::TcpStats>,
    pub attribution: Option<attrib::Attribution>,
    /// RDMA: the message.
    pub msg: Option<crate::transport::rdma::Msg>,
}

/// A simulation run in progress.
pub struct Sim {
    pub now: SimTime,
    ev: EventQueue<Ev>,
    pub net: Network,
    /// Ready flows per host and priority.
    ready: Vec<Vec<VecDeque<FlowId>>>,
    /// pFabric: host NICs send the ready flow of the smallest rank first.
    nic_rank: Option<RankKind>,
    /// Flow records by slot (a flow's [`FlowId`]): every flow of the run, or in retiring
    /// mode the flows in progress, in reused slots (`Retire`).
    pub flows: Vec<Flow>,
    /// Retiring mode: the workload's flows, started in order from `next_start`, and what is
    /// being released.
    specs: Vec<FlowSpec>,
    /// Retiring mode with a streamed workload: its next flow, the rest, and what checking it
    /// before the run found (to compare the file read with at the end).
    stream: Option<
        Box<(
            Option<FlowSpec>,
            crate::workload::FlowStream,
            crate::workload::StreamCheck,
        )>,
    >,
    retire: Option<Box<Retire>>,
    data_prio: u8,
    ack_prio: u8,
    next_start: usize,
    /// The run's transport choice and parameters.
    pub spec: TransportSpec,
    /// The run's transport: every flow's protocol state.
    pub transport: Transport,
    stop_time: SimTime,
    /// Units (flows, or messages for RDMA) finished, out of `total`.
    pub finished: usize,
    pub total: usize,
    /// The units are the transport's messages (RDMA), not flows.
    msg_units: bool,
    /// Flows the transport woke during its last call, made ready when it returns.
    wake: Vec<FlowId>,
    /// Flows `0..n_static` start on their own; the rest wait for a group.
    n_static: usize,
    /// `end_when`: the tag, how many flows carry it, how many of those finished.
    end_tag: Option<crate::workload::FlowTag>,
    tag_total: usize,
    pub tag_finished: usize,
    /// After the `end_when` tag is done: start nothing new, finish what runs.
    draining: bool,
    started: usize,
    /// Events pending: failures (and recoveries), reroutes, dependent flows' starts (see
    /// [`Sim::stranded`]).
    fails_pending: u32,
    reroutes_pending: u32,
    starts_pending: u32,
    /// Members of each group not yet received, and the flows waiting for it.
    group_left: Vec<u32>,
    waiters: Vec<Vec<FlowId>>,
    cons: Conservation,
    /// Hop count per packet transmitted (packet-hops), for the benchmark.
    pub packet_hops: u64,
    primed: bool,
    ended: Option<EndReason>,
    /// A host NIC is choosing its next packet: transports must not start transmissions
    /// from inside (checked in debug builds).
    in_pull: bool,
    /// The packet trace, when `[pcap]` is set.
    pub pcap: Option<Box<crate::pcap::PcapWriter>>,
    /// `attrib` or `pcap` is set (see [`Sim::observe`]): one branch per hop when neither is.
    observed: bool,
    /// Delay attribution, when `[metrics] attribution` is on.
    pub attrib: Option<Box<attrib::Attrib>>,
    /// Time-series sampler (`[timeseries]`) and its next sampling time (MAX: none).
    pub sampler: Option<Box<timeseries::Sampler>>,
    pub sample_at: SimTime,
    /// In-band telemetry side table (runs whose congestion control reads it).
    telemetry: Option<telemetry::Telemetry>,
    /// Pinned paths (`[routing] pin`): switches forward these flows' packets along them.
    pins: Option<crate::net::pin::Pins>,
    /// Pinned paths or failures: switches route through [`Sim::detour_port`].
    detour: bool,
    /// `[nic] order = "index"`: per host and NIC class, the index of the flow served last.
    pub nic_rr_last: Option<Vec<Vec<u32>>>,
    /// `[nic] qdisc = "fifo"`: the hosts' FIFO queues in front of the NIC.
    pub host_fifo: Option<Box<HostFifo>>,
    /// Wire bytes of a PFC frame.
    pfc_frame: u32,
    /// `[[failures]]`: the ports each failure touches and what it does; the routing
    /// convergence delay. `failing`: there are failures, so the cold checks are on.
    failures: Vec<(Vec<PortId>, FailKind)>,
    convergence: SimTime,
    failing: bool,
    /// Packets lost outside switch buffers to `[[failures]]` (cut wires, a host's queue, no
    /// route left) and to links' random loss; they count as drops.
    pub failure_losses: u64,
    /// Draws for links' random loss.
    loss_rng: crate::engine::RngStream,
    /// The event loop prefetches ahead ([`Sim::warm_up`]): networks of
    /// [`PREFETCH_MIN_PORTS`] ports or more.
    warm: bool,
    /// Retiring RDMA runs whose queue pairs carry several messages: packets in the network
    /// per message slot, its data packets and their replies (None in other runs, and where
    /// each message has a queue pair of its own, which shares its slot).
    msg_in_net: Option<Vec<u32>>,
}

impl Sim {
    pub fn new(s: SimSetup) -> Result<Sim, String> {
        let mut s = s;
        let mut stream = s.stream.take();
        let streamed = stream.as_ref().map_or(0, |(_, c)| c.flows);
        // RDMA messages share their slot with their connection when each has its own.
        let per_message = matches!(&s.transport, TransportSpec::Rdma(r)
            if matches!(r.sched, crate::transport::rdma::HostSched::PerMessage));
        let msg_units = matches!(s.transport, TransportSpec::Rdma(_));
        if !s.retire {
            // Only a retiring run pulls flows as they start.
            if let Some((mut st, check)) = stream.take() {
                s.flows = st.by_ref().collect();
                st.finish(&check)?;
            }
        }
        let pfc_frame = s
            .build
            .switch
            .pfc
            .frame_size
            .map_or(PFC_FRAME_BYTES, |b| b.0 as u32);
        let net = Network::build(s.topo, &s.build)?;
        // Links with random loss need the cold per-arrival check.
        let lossy = net.ports.iter().any(|p| p.loss > 0.0);
        let nq = net.nq as usize;
        if s.data_prio as usize >= nq || s.ack_prio as usize >= nq {
            return Err(format!(
                "priorities (data {}, ack {}) need {} queues but switches have {nq}",
                s.data_prio,
                s.ack_prio,
                s.data_prio.max(s.ack_prio) + 1
            ));
        }
        // A streamed workload's flows were checked as it was read, but not against the queues.
        if let Some((_, c)) = &stream
            && let Some(Some((id, prio))) = c.prio_at_least.get(nq)
        {
            return Err(format!("flow {id}: priority {prio} but only {nq} queues"));
        }
        let host_rate = |h: u32| net.ports[net.host_port(h).idx()].rate;
        let mut flows = Vec::with_capacity(s.flows.len());
        for f in &s.flows {
            if f.src as usize >= net.n_hosts || f.dst as usize >= net.n_hosts || f.src == f.dst {
                return Err(format!(
                    "flow {}: bad endpoints {} -> {}",
                    f.id, f.src, f.dst
                ));
            }
        }
        let dependent = s
            .flows
            .iter()
            .any(|f| f.group.is_some() || f.after.is_some());
        let retiring = s.retire && !dependent;
        if let TransportSpec::Rdma(spec) = &s.transport {
            for p in [spec.short_prio, spec.long_prio, spec.params.ack_prio] {
                if p as usize >= nq {
                    return Err(format!("RDMA priority {p} needs more than {nq} queues"));
                }
            }
        } else {
            // Flows are the units; RDMA's flows are queue pairs created on demand.
            for (i, f) in s.flows.iter().enumerate() {
                let prio = f.prio.unwrap_or(s.data_prio);
                if prio as usize >= nq {
                    return Err(format!(
                        "flow {}: priority {prio} but only {nq} queues",
                        f.id
                    ));
                }
                if !retiring {
                    flows.push(Flow::new(FlowId(i as u32), f, prio, s.ack_prio));
                }
            }
        }
        let transport = Transport::new(
            &s.transport,
            // A retiring run's messages come as they start.
            if retiring { &[] } else { &s.flows },
            &flows,
            host_rate,
            net.n_hosts,
            s.seed,
        );
        let total = match transport.messages() {
            _ if retiring && stream.is_some() => streamed,
            _ if retiring => s.flows.len(),
            Some(m) => m.len(),
            None => s.flows.len(),
        };
        // Groups and the flows that wait for them.
        let n_groups = s
            .flows
            .iter()
            .filter_map(|f| f.group.max(f.after))
            .max()
            .map_or(0, |g| g as usize + 1);
        if n_groups > 0 && msg_units {
            return Err("dependent workloads (partition-aggregate, sequential) need a TCP-family or UDP scheme".into());
        }
        let mut group_left = vec![0u32; n_groups];
        let mut waiters: Vec<Vec<FlowId>> = vec![Vec::new(); n_groups];
        for (i, f) in s.flows.iter().enumerate() {
            if let Some(g) = f.group {
                group_left[g as usize] += 1;
            }
            if let Some(g) = f.after {
                waiters[g as usize].push(FlowId(i as u32));
            }
        }
        let n_static = s.flows.iter().take_while(|f| f.after.is_none()).count();
        if s.flows[n_static..].iter().any(|f| f.after.is_none()) {
            return Err("flows that wait for a group must come after the others".into());
        }
        let ready = (0..net.n_hosts)
            .map(|_| (0..nq).map(|_| VecDeque::new()).collect())
            .collect();
        let nic_rank = transport.nic_rank();
        let telemetry = transport.telemetry().then(telemetry::Telemetry::default);
        // Prefetching pays where the ports outgrow the caches (a k = 8 fat-tree has 768); a
        // small network would only pay its instructions (about 40 per packet-hop).
        let warm_ports = net.ports.len() >= PREFETCH_MIN_PORTS;
        let tag_total = s
            .end_when
            .map_or(0, |t| s.flows.iter().filter(|f| f.tag == t).count());
        let (specs, retire) = if retiring {
            let r = Retire {
                pending: Vec::new(),
                scanned: 0,
                free: Vec::new(),
                out: Vec::new(),
                slot: None,
            };
            (s.flows, Some(Box::new(r)))
        } else {
            (Vec::new(), None)
        };
        // Messages on queue pairs that outlive them: each message's data packets are counted,
        // so that its slot is reused only once none is left.
        let msg_in_net = (retiring && msg_units && !per_message).then(Vec::new);
        Ok(Sim {
            msg_in_net,
            now: SimTime::ZERO,
            ev: EventQueue::new(),
            net,
            ready,
            flows,
            specs,
            stream: stream.map(|(mut st, c)| Box::new((st.next(), st, c))),
            retire,
            data_prio: s.data_prio,
            ack_prio: s.ack_prio,
            next_start: 0,
            spec: s.transport,
            transport,
            stop_time: s.stop_time.unwrap_or(NO_STOP).min(NO_STOP),
            finished: 0,
            total,
            msg_units,
            wake: Vec::new(),
            n_static,
            end_tag: s.end_when,
            tag_total,
            tag_finished: 0,
            draining: false,
            started: 0,
            fails_pending: 0,
            reroutes_pending: 0,
            starts_pending: 0,
            group_left,
            waiters,
            cons: Conservation::default(),
            packet_hops: 0,
            primed: false,
            ended: None,
            in_pull: false,
            nic_rank,
            pcap: None,
            observed: false,
            attrib: None,
            sampler: None,
            sample_at: SimTime::MAX,
            telemetry,
            pins: None,
            nic_rr_last: None,
            detour: false,
            host_fifo: None,
            pfc_frame,
            failures: Vec::new(),
            convergence: SimTime::ZERO,
            failing: lossy,
            failure_losses: 0,
            warm: warm_ports,
            loss_rng: crate::engine::RngStream::new(s.seed, "link.loss"),
        })
    }

    /// Puts a FIFO queue (a host kernel's single-queue qdisc) in front of every host NIC: a
    /// flow hands packets to it as soon as its transport lets it, while it has fewer than
    /// `limit` wire bytes queued there (TCP small queues; `u64::MAX`: no limit).
    pub fn use_host_fifo(&mut self, limit: u64) {
        let nq = self.net.nq as usize;
        self.host_fifo = Some(Box::new(HostFifo {
            queues: vec![vec![VecDeque::new(); nq]; self.net.n_hosts],
            queued: vec![0; self.flows.len()],
            limit,
        }));
    }

    /// Schedules a failure at `at` on `ports` (both directions of each link it touches);
    /// routes are recomputed `convergence` after each down or up.
    pub fn add_failure(
        &mut self,
        at: SimTime,
        ports: Vec<PortId>,
        kind: FailKind,
        convergence: SimTime,
    ) {
        self.failing = true;
        self.detour = true;
        self.convergence = convergence;
        if self.net.history.is_none() {
            self.net.history = Some(Box::new(crate::net::paths::NetHistory::new(&self.net)));
        }
        self.ev.push(at, Ev::Fail(self.failures.len() as u32));
        self.fails_pending += 1;
        self.failures.push((ports, kind));
    }

    /// Failure `i` happens now.
    #[cold]
    #[inline(never)]
    fn on_fail(&mut self, i: usize) {
        let (ports, kind) = self.failures[i].clone();
        if let Some(mut h) = self.net.history.take() {
            for &p in &ports {
                let port = &self.net.ports[p.idx()];
                let (rate, down) = match kind {
                    FailKind::Rate(r) => (r, port.down),
                    FailKind::Up => (port.rate, false),
                    FailKind::Down => (port.rate, true),
                };
                h.port_changes(&self.net, self.now, p, rate, down);
            }
            self.net.history = Some(h);
        }
        match kind {
            FailKind::Rate(r) => {
                for &p in &ports {
                    self.net.ports[p.idx()].set_rate(r);
                }
                return;
            }
            FailKind::Up => {
                for &p in &ports {
                    self.net.ports[p.idx()].down = false;
                }
                for &p in &ports {
                    self.kick(p);
                }
            }
            FailKind::Down => {
                for &p in &ports {
                    self.net.ports[p.idx()].down = true;
                }
                for &p in &ports {
                    self.flush_port(p);
                }
            }
        }
        self.ev.push(self.now + self.convergence, Ev::Reroute);
        self.reroutes_pending += 1;
    }

    /// Whether nothing left can finish (checked in runs with failures, every 2^16 events):
    /// no failure, recovery or reroute is pending, no flow is due to start (by arrival, or
    /// by a dependency already met), and every unit (flow, or message) that started and has
    /// not finished is between hosts that cannot reach each other any more
    /// ([`Network::reachable`]). Their senders would retransmit for ever.
    #[cold]
    #[inline(never)]
    fn stranded(&self) -> bool {
        if self.fails_pending > 0
            || self.reroutes_pending > 0
            || self.starts_pending > 0
            || self.finished == self.total
            || (!self.draining && self.arrival_time(self.next_start).is_some())
        {
            return false;
        }
        let mut reach = std::collections::HashMap::new();
        let mut cut = |src: u32, dst: u32| {
            !*reach
                .entry((src, dst))
                .or_insert_with(|| self.net.reachable(src, dst))
        };
        let mut any = false;
        if self.msg_units {
            let msgs = self.transport.messages().unwrap_or(&[]);
            for m in msgs
                .iter()
                .filter(|m| (m.order as usize) < self.next_start && m.finish.is_none())
            {
                if !cut(m.src, m.dst) {
                    return false;
                }
                any = true;
            }
        } else {
            for f in self
                .flows
                .iter()
                .filter(|f| f.started && f.finish.is_none())
            {
                if !cut(f.src, f.dst) {
                    return false;
                }
                any = true;
            }
        }
        any
    }

    /// Whether an `Arrive` event for port `p` now finds no packet due: the packets it was
    /// for were lost with their link (`[[failures]]`).
    #[cold]
    #[inline(never)]
    fn stale_arrival(&self, p: PortId) -> bool {
        !matches!(self.net.ports[p.idx()].wire.front(), Some(w) if w.at == self.now)
    }

    /// Whether `pkt`, arriving over port `p`'s link, is lost to the link's random loss
    /// (counted).
    #[cold]
    #[inline(never)]
    fn lost_on_wire(&mut self, p: PortId, pkt: &Packet) -> bool {
        let loss = self.net.ports[p.idx()].loss;
        if loss > 0.0 && self.loss_rng.uniform() < loss {
            self.count_loss(p, pkt);
            return true;
        }
        false
    }

    /// A link went down under port `p`: its queued packets and those on its wire are lost.
    fn flush_port(&mut self, p: PortId) {
        let node = self.net.ports[p.idx()].node;
        let sw = (!self.net.is_host(node)).then(|| self.net.switch_idx(node));
        let port = &mut self.net.ports[p.idx()];
        let mut lost: Vec<Packet> = Vec::new();
        for q in 0..port.nq() {
            while let Some(pkt) = port.pop_queue(q) {
                lost.push(pkt);
            }
        }
        let queued = lost.len();
        // The wire's pending Arrive event will find no packet due and do nothing.
        while let Some(InFlight { pkt, .. }) = port.wire.pop_front() {
            port.wire_bytes -= pkt.size as u64;
            lost.push(pkt);
        }
        for (k, pkt) in lost.iter().enumerate() {
            match sw {
                Some(s) if k < queued => {
                    self.release(s, pkt.in_port, p, pkt.prio, pkt.size as u32);
                    self.count_drop(s, p, pkt, false);
                }
                _ => self.count_loss(p, pkt),
            }
        }
    }

    /// How `pkt` leaves switch `node` (in at `inp`) when the run has pinned paths or
    /// failures: its pinned port, the routes, or nowhere (`[[failures]]` left no route: the
    /// packet is counted lost).
    #[cold]
    #[inline(never)]
    fn detour_port(&mut self, node: NodeId, inp: PortId, pkt: &mut Packet) -> Detour {
        if self.pins.is_some()
            && let Some(out) = self.pinned_port(node, pkt)
        {
            return Detour::Pinned(out);
        }
        if self.net.routes.next_hops(node, pkt.dst).is_empty() {
            pkt.in_port = inp;
            self.count_loss(inp, pkt);
            return Detour::Lost;
        }
        Detour::Route
    }

    /// Counts packet `pkt` lost at port `p` outside a switch's buffer (a host's queue or a
    /// wire cut by a failure).
    fn count_loss(&mut self, p: PortId, pkt: &Packet) {
        self.failure_losses += 1;
        let port = &mut self.net.ports[p.idx()];
        port.stats.drops += 1;
        port.stats.drop_bytes += pkt.size as u64;
        self.cons.dropped_pkts += 1;
        self.cons.dropped_bytes += pkt.size as u64;
        self.flows[pkt.flow.idx()].stats.drops += 1;
        self.gone(pkt);
        self.transport.on_drop(pkt);
        if let Some(tm) = &mut self.telemetry {
            tm.release(pkt);
        }
        if let Some(a) = &mut self.attrib {
            let unit = attrib_unit(self.msg_units, pkt);
            a.lost(pkt.uid, unit, pkt.ts);
        }
    }

    /// Pins flows' paths (`[routing] pin`).
    pub fn set_pins(&mut self, pins: crate::net::pin::Pins) {
        self.pins = Some(pins);
        self.detour = true;
    }

    /// Telemetry slots in use (0 once every packet's was freed; None without telemetry).
    pub fn telemetry_live(&self) -> Option<usize> {
        self.telemetry.as_ref().map(|t| t.live)
    }

    /// In-band telemetry in the reference's units (`[quirks] int_units`).
    pub fn quantize_telemetry(&mut self) {
        if let Some(t) = &mut self.telemetry {
            t.quantize = true;
        }
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.ev.popped()
    }

    /// Runs until every flow finishes, the stop time, or no events remain.
    pub fn run(&mut self) -> EndReason {
        self.run_with(|_| {})
    }

    /// Like [`run`](Self::run), calling `progress` with a snapshot every 2^20 events.
    pub fn run_with(&mut self, progress: impl FnMut(Progress)) -> EndReason {
        let r = self.advance(SimTime::MAX, progress, &mut |_, _| {});
        r.expect("an unbounded run always ends")
    }

    /// Like [`run_with`](Self::run_with), handing the flows released in retiring mode to
    /// `drain` as they are released (with the network, for their records), so that their
    /// records need not wait in the simulator.
    pub fn run_draining(
        &mut self,
        progress: impl FnMut(Progress),
        mut drain: impl FnMut(&Network, Vec<Retired>),
    ) -> EndReason {
        let r = self.advance(SimTime::MAX, progress, &mut drain);
        r.expect("an unbounded run always ends")
    }

    /// Released flows not taken yet (retiring mode; empty otherwise).
    pub fn retired_pending(&self) -> &[Retired] {
        self.retire.as_ref().map_or(&[], |r| &r.out)
    }

    /// Processes every event up to and including time `t` (or the stop time), then returns
    /// `Some(reason)` if the run has ended, `None` if it can continue. The clock is left at
    /// `min(t, stop time)` when the run continues. Used to observe a run in time windows.
    pub fn run_until(&mut self, t: SimTime) -> Option<EndReason> {
        self.advance(t, |_| {}, &mut |_, _| {})
    }

    fn advance(
        &mut self,
        until: SimTime,
        mut progress: impl FnMut(Progress),
        drain: &mut dyn FnMut(&Network, Vec<Retired>),
    ) -> Option<EndReason> {
        if let Some(r) = self.ended {
            return Some(r);
        }
        if self.total == 0 {
            self.ended = Some(EndReason::AllFinished);
            return self.ended;
        }
        if !self.primed {
            self.primed = true;
            let t = self.arrival_time(0).expect("total > 0");
            self.ev.push(t, Ev::Start);
        }
        let reason = loop {
            let Some(t) = self.ev.peek_time() else {
                break EndReason::Idle;
            };
            if t > self.stop_time {
                self.now = self.stop_time;
                break if t == SimTime::MAX {
                    EndReason::TimeLimit
                } else {
                    EndReason::StopTime
                };
            }
            if t > until {
                self.now = self.now.max(until);
                return None;
            }
            while t >= self.sample_at {
                if !self.take_sample() {
                    break;
                }
            }
            let (t, ev) = self.ev.pop().expect("peeked");
            self.now = t;
            if self.warm {
                self.warm_up();
            }
            match ev {
                Ev::Start => {
                    self.on_start();
                    if let Some(r) = &mut self.retire
                        && !r.out.is_empty()
                    {
                        drain(&self.net, std::mem::take(&mut r.out));
                    }
                }
                Ev::TxDone(p) => {
                    self.net.ports[p.idx()].txdone_pending = false;
                    self.start_tx(p);
                }
                Ev::Arrive(p) => self.on_arrive(p),
                Ev::Pfc { port, prio, pause } => self.on_pfc(port, prio, pause),
                Ev::Timer(f, g) => self.on_timer(f, g),
                Ev::Pace(f, g) => self.on_pace(f, g),
                Ev::StartFlow(f) => {
                    self.starts_pending -= 1;
                    self.start_flow(f);
                }
                Ev::Fail(i) => {
                    self.fails_pending -= 1;
                    self.on_fail(i as usize);
                }
                Ev::Reroute => {
                    self.reroutes_pending -= 1;
                    self.net.reroute();
                    if let Some(h) = &mut self.net.history {
                        h.rerouted(self.now, &self.net.routes);
                    }
                }
            }
            if self.finished == self.total {
                break EndReason::AllFinished;
            }
            if self.end_tag.is_some() && self.tag_finished == self.tag_total {
                // No new flows from now on; the run ends when the started ones finish.
                self.draining = true;
                if self.finished == self.started {
                    break EndReason::TagFinished;
                }
            }
            let n = self.ev.popped();
            if n & 0xFFFF == 0 {
                if self.failing && self.stranded() {
                    break EndReason::Unreachable;
                }
                if n & 0xF_FFFF == 0 {
                    progress(Progress {
                        now: self.now,
                        stop_time: self.stop_time,
                        events: n,
                        finished: self.finished,
                        total: self.total,
                        packet_hops: self.packet_hops,
                    });
                }
            }
        };
        for p in self.net.ports.iter_mut() {
            p.close_pauses(self.now);
        }
        self.ended = Some(reason);
        Some(reason)
    }

    /// Asks the cache for what the next events will read while this one runs: the event two
    /// ahead gets its port's first two lines, the next one (whose port lines should be there
    /// by now) the packet at the head of its wire. A hint only: nothing is read for it, and
    /// the outputs do not depend on it. (Deeper or wider variants, three stages down to the
    /// attribution record, or a transmission's queue lines too, measured no better.)
    #[inline(always)]
    fn warm_up(&self) {
        if let Some(&Ev::Arrive(p) | &Ev::TxDone(p)) = self.ev.peek_ahead(1) {
            let port: *const Port = &self.net.ports[p.idx()];
            prefetch(port.cast::<u8>());
            prefetch(port.cast::<u8>().wrapping_add(64));
        }
        if let Some(&Ev::Arrive(p)) = self.ev.peek_ahead(0)
            && let Some(w) = self.net.ports[p.idx()].wire.front()
        {
            prefetch(w);
        }
    }

    /// Takes the time-series sample due at `sample_at` (the state just before that instant's
    /// events, which have not run yet).
    /// Returns false (and never samples again) when there is no sampler.
    fn take_sample(&mut self) -> bool {
        let Some(mut sp) = self.sampler.take() else {
            self.sample_at = SimTime::MAX;
            return false;
        };
        let t = self.sample_at;
        for i in 0..sp.ports.len() {
            let p = sp.ports[i];
            let port = &self.net.ports[p];
            let node = port.node.0;
            for q in 0..port.nq() {
                let v = (
                    crate::units::Bytes(port.queues[q].bytes),
                    port.paused & (1 << q) != 0,
                );
                sp.queue(t, i, q, p, node, v);
            }
            let (tx, busy) = (port.stats.tx_bytes, port.busy_through(t));
            sp.link(t, i, p, node, tx, busy);
        }
        for i in 0..sp.flows.len() {
            let f = sp.flows[i] as usize;
            if f >= self.flows.len() {
                continue;
            }
            let Some(s) = self.transport.sample(FlowId(f as u32)) else {
                continue;
            };
            sp.flow(t, i, s);
        }
        sp.advance(t);
        self.sample_at = sp.next;
        self.sampler = Some(sp);
        true
    }

    /// Call after setting `attrib` or `pcap`: transmissions are observed from now on.
    pub fn observe(&mut self) {
        self.observed = self.attrib.is_some() || self.pcap.is_some();
    }

    /// Conservation counters at the current time.
    pub fn conservation(&self) -> Conservation {
        let mut c = self.cons;
        for p in self.net.ports.iter() {
            c.in_flight_bytes += p.wire_bytes;
            c.in_flight_pkts += p.wire.len() as u64;
            if !self.net.is_host(p.node) {
                c.in_flight_bytes += p.total_bytes;
                c.in_flight_pkts += p.queues.iter().map(|q| q.len() as u64).sum::<u64>();
            }
        }
        c
    }

    /// Start time of arrival `i` (a flow, or an RDMA message).
    fn arrival_time(&self, i: usize) -> Option<SimTime> {
        if self.retire.is_some() {
            return match &self.stream {
                Some(st) => st.0.as_ref().map(|f| f.start),
                None => self.specs.get(i).map(|f| f.start),
            };
        }
        match self.transport.messages() {
            Some(m) => m.get(i).map(|m| m.start),
            None if i < self.n_static => Some(self.flows[i].start),
            None => None,
        }
    }

    /// Flow `f` was received completely: it may complete its group, starting the flows that
    /// wait for the group.
    fn on_received(&mut self, f: FlowId) {
        let g = self.flows[f.idx()].group;
        if g == u32::MAX {
            return;
        }
        let left = &mut self.group_left[g as usize];
        *left -= 1;
        if *left > 0 {
            return;
        }
        let waiting = std::mem::take(&mut self.waiters[g as usize]);
        for w in waiting {
            let offset = self.flows[w.idx()].start;
            if offset == SimTime::ZERO {
                self.start_flow(w);
            } else {
                let at = self.now + offset;
                self.flows[w.idx()].start = at;
                self.ev.push(at, Ev::StartFlow(w));
                self.starts_pending += 1;
            }
        }
    }

    /// A dependent flow starts now.
    fn start_flow(&mut self, f: FlowId) {
        if self.draining {
            return;
        }
        self.started += 1;
        let now = self.now;
        let fl = &mut self.flows[f.idx()];
        fl.start = now;
        fl.deadline = fl.rel_deadline.map(|d| now + d);
        fl.started = true;
        if let Some(a) = &mut self.attrib {
            a.unit_start(f.idx(), fl.src as usize, now);
        }
        self.make_ready(f);
    }

    fn on_start(&mut self) {
        if self.draining {
            return;
        }
        if let Some(r) = &self.retire
            && r.pending.len() >= 2 * r.scanned + 64
        {
            self.retire_scan();
        }
        while let Some(t) = self.arrival_time(self.next_start)
            && t <= self.now
        {
            let i = self.next_start;
            self.next_start += 1;
            self.started += 1;
            if self.msg_units {
                let (m, src) = match self.retire {
                    Some(_) => self.open_message(i),
                    None => (
                        i as u32,
                        self.transport.messages().expect("message units")[i].src,
                    ),
                };
                if let Some(a) = &mut self.attrib {
                    a.unit_start(m as usize, src as usize, self.now);
                }
                let (t, mut h) = self.host();
                t.on_message(m, &mut h);
                self.flush_wakes();
                debug_assert!(
                    self.retire.as_ref().is_none_or(|r| r.slot.is_none()),
                    "a message's connection takes its slot"
                );
            } else {
                let f = match self.retire {
                    Some(_) => self.open_flow(i),
                    None => FlowId(i as u32),
                };
                self.flows[f.idx()].started = true;
                if let Some(a) = &mut self.attrib {
                    a.unit_start(f.idx(), self.flows[f.idx()].src as usize, self.now);
                }
                self.make_ready(f);
            }
        }
        if let Some(t) = self.arrival_time(self.next_start) {
            self.ev.push(t, Ev::Start);
        }
    }

    /// Retiring mode: the record of arrival `i` in a free slot (or a new one), with fresh
    /// transport and attribution state.
    fn open_flow(&mut self, i: usize) -> FlowId {
        let r = self.retire.as_mut().expect("retiring mode");
        let slot = r.free.pop().unwrap_or(self.flows.len() as u32);
        let f = FlowId(slot);
        let spec = self.next_spec(i);
        let prio = spec.prio.unwrap_or(self.data_prio);
        let mut fl = Flow::new(f, &spec, prio, self.ack_prio);
        fl.order = i as u32;
        let line = self.net.ports[self.net.host_port(fl.src).idx()].rate;
        self.transport.open(f, &fl, line);
        if let Some(a) = &mut self.attrib {
            a.clear_unit(f.idx());
        }
        if f.idx() == self.flows.len() {
            self.flows.push(fl);
        } else {
            let old = &self.flows[f.idx()];
            fl.timer = old.timer.successor();
            fl.pace = old.pace.successor();
            self.flows[f.idx()] = fl;
        }
        f
    }

    /// Retiring mode: the spec of arrival `i`, the next one due.
    fn next_spec(&mut self, i: usize) -> FlowSpec {
        match &mut self.stream {
            Some(st) => {
                let next = st.1.next();
                std::mem::replace(&mut st.0, next).expect("an arrival was due")
            }
            None => self.specs[i].clone(),
        }
    }

    /// Retiring mode, RDMA: message arrival `i` in a free slot (or a new one), which its
    /// connection will take, with fresh attribution state. Returns the slot and the source.
    fn open_message(&mut self, i: usize) -> (u32, u32) {
        let spec = self.next_spec(i);
        let r = self.retire.as_mut().expect("retiring mode");
        let n = self.transport.messages().map_or(0, |m| m.len());
        let slot = r.free.pop().unwrap_or(n as u32);
        match &mut self.msg_in_net {
            // Its queue pairs carry other messages: its data packets are counted.
            Some(c) if slot as usize == c.len() => c.push(0),
            Some(_) => {}
            // A queue pair of its own, created in the same slot.
            None => r.slot = Some(slot),
        }
        self.transport.open_message(slot, &spec, i as u32);
        if let Some(a) = &mut self.attrib {
            a.clear_unit(slot as usize);
        }
        (slot, spec.src)
    }

    /// Retiring mode: releases every finished flow of which nothing is left (see [`Retire`]).
    #[cold]
    #[inline(never)]
    fn retire_scan(&mut self) {
        let mut r = self.retire.take().expect("retiring mode");
        let mut pending = std::mem::take(&mut r.pending);
        pending.retain(|&f| {
            let left = match &self.msg_in_net {
                // A message whose queue pairs carry others: released once none of its data
                // packets is left (it has finished, so none is made any more).
                Some(c) => c[f.idx()] > 0,
                None => {
                    let fl = &self.flows[f.idx()];
                    debug_assert!(self.msg_units || fl.done(), "only finished flows retire");
                    // Timers cancelled are enough: an event they left queued finds the next
                    // occupant's timers (their generations continue) stale, as it would find
                    // these idle; either way nothing happens.
                    fl.in_net > 0 || fl.in_ready || fl.timer.armed() || fl.pace.armed()
                }
            };
            if left {
                return true;
            }
            r.out.push(Retired {
                flow: self
                    .msg_in_net
                    .is_none()
                    .then(|| self.flows[f.idx()].clone()),
                tcp: self.transport.tcp(f),
                attribution: self.attrib.as_mut().and_then(|a| a.take_result(f.idx())),
                msg: self.transport.release_message(f.0),
            });
            r.free.push(f.0);
            false
        });
        r.scanned = pending.len();
        r.pending = pending;
        self.retire = Some(r);
    }

    /// Retiring mode: the flows released since the last call, to record (empty otherwise).
    pub fn take_retired(&mut self) -> Vec<Retired> {
        match &mut self.retire {
            Some(r) => std::mem::take(&mut r.out),
            None => Vec::new(),
        }
    }

    /// At the end of the run: the streamed workload's file was not changed while the run
    /// read it (see [`crate::workload::FlowStream::finish`]); if it was, the run's results
    /// would be wrong.
    pub fn finish_stream(&mut self) -> Result<(), String> {
        match &mut self.stream {
            Some(st) => {
                let (_, s, c) = &mut **st;
                s.finish(c)
            }
            None => Ok(()),
        }
    }

    /// Whether the run releases flows as they finish (`Retire`).
    pub fn retiring(&self) -> bool {
        self.retire.is_some()
    }

    /// The flows of the run still held: every flow, or in retiring mode the ones not
    /// released, then those not started yet (new records, not in any slot).
    pub fn held_flows(&self) -> Vec<Flow> {
        let Some(r) = &self.retire else {
            return self.flows.clone();
        };
        let free = free_slots(r, self.flows.len());
        let mut v: Vec<Flow> = self
            .flows
            .iter()
            .zip(&free)
            .filter(|(_, free)| !**free)
            .map(|(f, _)| f.clone())
            .collect();
        for (i, spec) in self.unstarted() {
            let prio = spec.prio.unwrap_or(self.data_prio);
            let mut fl = Flow::new(FlowId(u32::MAX), &spec, prio, self.ack_prio);
            fl.order = i as u32;
            v.push(fl);
        }
        v
    }

    /// Retiring mode: the arrivals not started yet, with their places in the arrival order.
    fn unstarted(&self) -> Vec<(usize, FlowSpec)> {
        let specs: Vec<FlowSpec> = match &self.stream {
            Some(st) => st.0.iter().cloned().chain(st.1.rest()).collect(),
            None => self.specs[self.next_start.min(self.specs.len())..].to_vec(),
        };
        (self.next_start..).zip(specs).collect()
    }

    /// Retiring mode, RDMA: the messages still held, by slot (None: not started yet, a new
    /// record), in no particular order.
    pub fn held_messages(&self) -> Vec<(Option<u32>, crate::transport::rdma::Msg)> {
        let (Some(r), Some(msgs)) = (&self.retire, self.transport.messages()) else {
            return Vec::new();
        };
        let free = free_slots(r, msgs.len());
        let mut v: Vec<_> = (0..msgs.len())
            .filter(|&i| !free[i])
            .map(|i| (Some(i as u32), msgs[i].clone()))
            .collect();
        for (i, spec) in self.unstarted() {
            let m = self.transport.unstarted_message(&spec, i as u32);
            v.push((None, m.expect("an RDMA run")));
        }
        v
    }

    /// Puts `f` in its host's ready list if it can send, and kicks the NIC.
    fn make_ready(&mut self, f: FlowId) {
        if self.host_fifo.is_some() {
            self.fifo_fill(f);
            return;
        }
        if self.flows[f.idx()].in_ready || !self.can_send(f) {
            return;
        }
        let fl = &mut self.flows[f.idx()];
        fl.in_ready = true;
        let (h, class) = (fl.src, fl.nic_class);
        self.ready[h as usize][class as usize].push_back(f);
        self.note_wait(f, Some(self.now));
        let p = self.net.host_port(h);
        self.kick(p);
    }

    /// Delay attribution of flows: flow `f` stops waiting for its NIC now, and waits again
    /// from `from` (None: it does not).
    #[inline(always)]
    fn note_wait(&mut self, f: FlowId, from: Option<SimTime>) {
        if self.observed
            && !self.msg_units
            && let Some(a) = &mut self.attrib
        {
            a.wait(f.idx(), from, self.now);
        }
    }

    /// Serialization time of a packet of `size` bytes at port `p`.
    fn ser_at(&self, p: PortId, size: u16) -> SimTime {
        self.net.ports[p.idx()].ser_time(size as u32)
    }

    /// Makes sure port `p` is transmitting if it can.
    #[inline]
    fn kick(&mut self, p: PortId) {
        let port = &mut self.net.ports[p.idx()];
        if port.txdone_pending {
            return;
        }
        if port.busy_until > self.now {
            port.txdone_pending = true;
            let t = port.busy_until;
            self.ev.push(t, Ev::TxDone(p));
            return;
        }
        self.start_tx(p);
    }

    fn host_has_backlog(&self, h: usize, p: PortId) -> bool {
        let port = &self.net.ports[p.idx()];
        (0..port.nq()).any(|q| {
            (port.paused & (1 << q) == 0 && !port.queues[q].is_empty())
                || !self.ready[h][q].is_empty()
        }) || self
            .host_fifo
            .as_ref()
            .is_some_and(|x| x.queues[h].iter().any(|q| !q.is_empty()))
    }

    /// `[nic] qdisc = "fifo"`: flow `f` hands the host queue every packet its transport lets
    /// it send, up to the per-flow limit, and the NIC is kicked.
    #[cold]
    #[inline(never)]
    fn fifo_fill(&mut self, f: FlowId) {
        let mut any = false;
        loop {
            let fifo = self.host_fifo.as_ref().expect("host FIFO");
            if fifo.queued.get(f.idx()).copied().unwrap_or(0) >= fifo.limit || !self.can_send(f) {
                break;
            }
            let Some(pkt) = self.emit(f) else {
                break;
            };
            let fl = &self.flows[f.idx()];
            let (h, class) = (fl.src as usize, fl.nic_class as usize);
            let fifo = self.host_fifo.as_mut().expect("host FIFO");
            if fifo.queued.len() <= f.idx() {
                fifo.queued.resize(f.idx() + 1, 0);
            }
            let first = fifo.queued[f.idx()] == 0;
            fifo.queued[f.idx()] += pkt.size as u64;
            fifo.queues[h][class].push_back(pkt);
            if first {
                self.note_wait(f, Some(self.now));
            }
            any = true;
        }
        if any && !self.in_pull {
            let p = self.net.host_port(self.flows[f.idx()].src);
            self.kick(p);
        }
    }

    /// `[nic] qdisc = "fifo"`: the head of the host queue of the highest NIC class whose head
    /// is not paused; its flow may then queue more.
    #[cold]
    #[inline(never)]
    fn fifo_pull(&mut self, h: usize, p: PortId) -> Option<Packet> {
        let paused = self.net.ports[p.idx()].paused;
        let fifo = self.host_fifo.as_mut().expect("host FIFO");
        let pkt = fifo.queues[h].iter_mut().find_map(|q| match q.front() {
            Some(x) if paused & (1 << x.prio) == 0 => q.pop_front(),
            _ => None,
        })?;
        fifo.queued[pkt.flow.idx()] -= pkt.size as u64;
        self.note_wait(pkt.flow, None);
        self.fifo_fill(pkt.flow);
        if self.host_fifo.as_ref().expect("host FIFO").queued[pkt.flow.idx()] > 0 {
            // Waiting again once its own packet has left.
            let at = self.now + self.ser_at(p, pkt.size);
            self.note_wait(pkt.flow, Some(at));
        }
        Some(pkt)
    }

    /// Starts transmitting the next packet on idle port `p`, if there is one.
    fn start_tx(&mut self, p: PortId) {
        debug_assert!(self.net.ports[p.idx()].busy_until <= self.now);
        let node = self.net.ports[p.idx()].node;
        let is_host = self.net.is_host(node);
        let pkt = if is_host {
            if self.failing && self.net.ports[p.idx()].down {
                // A host's cut link sends nothing (a switch's down port holds nothing).
                return;
            }
            debug_assert!(!self.in_pull, "re-entrant host NIC pull at {p}");
            self.in_pull = true;
            let pkt = self.host_pull(node.idx(), p);
            self.in_pull = false;
            pkt
        } else {
            self.switch_dequeue(node, p)
        };
        let Some(pkt) = pkt else {
            return;
        };
        let mut pkt = pkt;
        self.transmit(p, &mut pkt, is_host);
    }

    /// Puts `pkt` on the wire of idle port `p` and schedules what follows.
    #[inline]
    fn transmit(&mut self, p: PortId, pkt: &mut Packet, is_host: bool) {
        let now = self.now;
        let port = &mut self.net.ports[p.idx()];
        let ser = port.ser_time(pkt.size as u32);
        if self.observed {
            if let Some(a) = &mut self.attrib {
                if is_host {
                    let unit = attrib_unit(self.msg_units, pkt);
                    pkt.uid = a.nic_tx(port.node.idx(), now, ser, unit, pkt.uid);
                } else {
                    a.switch_tx(p.idx(), pkt.prio, now, ser);
                }
                a.hop(pkt.uid, ser, port.delay);
            }
            if let Some(w) = &mut self.pcap {
                w.capture(now, port.node.idx(), pkt);
            }
        }
        port.busy_until = now + ser;
        let arrive = port.busy_until + port.delay;
        if port.wire.is_empty() {
            self.ev.push(arrive, Ev::Arrive(p));
        }
        port.wire.push_back(InFlight {
            at: arrive,
            pkt: *pkt,
        });
        port.wire_bytes += pkt.size as u64;
        port.stats.tx_pkts += 1;
        port.stats.tx_bytes += pkt.size as u64;
        port.stats.busy_ps += ser.0;
        self.packet_hops += 1;
        if is_host {
            self.cons.sent_pkts += 1;
            self.cons.sent_bytes += pkt.size as u64;
        }
        let backlog = if is_host {
            self.host_has_backlog(port_node_idx(&self.net, p), p)
        } else {
            self.net.ports[p.idx()].has_eligible()
        };
        if backlog {
            let port = &mut self.net.ports[p.idx()];
            port.txdone_pending = true;
            let t = port.busy_until;
            self.ev.push(t, Ev::TxDone(p));
        }
    }

    fn switch_dequeue(&mut self, node: NodeId, p: PortId) -> Option<Packet> {
        let sw = self.net.switch_idx(node);
        let now = self.now;
        let port = &mut self.net.ports[p.idx()];
        let (q, mut pkt) = port.dequeue(now)?;
        if let Some(a) = &mut self.attrib {
            a.dequeue(
                pkt.uid,
                now,
                port.paused_acc(pkt.prio, now),
                p.idx(),
                pkt.prio,
            );
        }
        let mark = (port.ecn.at() == Some(MarkAt::Dequeue)).then(|| port.queues[q].bytes);
        self.egress(sw, p, &mut pkt, mark);
        Some(pkt)
    }

    /// What a packet leaving switch `sw` through egress `out` does, on both ways out (the
    /// queue and the idle-port fast path): it meets the queue it leaves for ECN when `mark`
    /// holds that queue's bytes, and its buffer is released, which may resume its ingress by
    /// PFC.
    #[inline(always)]
    fn egress(&mut self, sw: usize, out: PortId, pkt: &mut Packet, mark: Option<u64>) {
        if let Some(qb) = mark {
            let rng = &mut self.net.switches[sw].rng;
            self.net.ports[out.idx()].maybe_mark(pkt, qb, rng);
        }
        if self.telemetry.is_some() {
            self.stamp(out, pkt);
        }
        self.release(sw, pkt.in_port, out, pkt.prio, pkt.size as u32);
    }

    /// In-band telemetry: a data packet leaving egress `out` collects the port's state.
    #[cold]
    #[inline(never)]
    fn stamp(&mut self, out: PortId, pkt: &Packet) {
        if let Some(tm) = &mut self.telemetry
            && pkt.is_data()
        {
            let port = &self.net.ports[out.idx()];
            let hop = crate::transport::cc::IntHop {
                time: self.now,
                tx_bytes: port.stats.tx_bytes,
                qlen: port.total_bytes,
                rate_bps: port.rate.bps(),
            };
            tm.push(pkt, hop);
        }
    }

    /// Frees the telemetry slot `pkt` carries (runs with telemetry).
    #[cold]
    #[inline(never)]
    fn release_telemetry(&mut self, pkt: &Packet) {
        if let Some(tm) = &mut self.telemetry {
            tm.release(pkt);
        }
    }

    /// Gives a data packet a telemetry slot (runs with telemetry).
    #[cold]
    #[inline(never)]
    fn attach_telemetry(&mut self, pkt: &mut Packet) {
        if let Some(tm) = &mut self.telemetry {
            tm.attach(pkt);
        }
    }

    /// Returns `bytes` of priority `prio` that came in through `inp` and were held for egress
    /// `out` to switch `sw`'s buffer; a PFC resume goes upstream when the ingress drops below
    /// its threshold.
    #[inline(always)]
    fn release(&mut self, sw: usize, inp: PortId, out: PortId, prio: u8, bytes: u32) {
        let (il, ol) = (
            self.net.local[inp.idx()] as usize,
            self.net.local[out.idx()] as usize,
        );
        let switch = &mut self.net.switches[sw];
        if switch.mmu.release(il, ol, prio, bytes) {
            switch.pfc_sent += 1;
            self.send_pfc(inp, prio, false);
        }
    }

    /// Sends a PFC frame out of switch port `in_port` to the port feeding it.
    fn send_pfc(&mut self, in_port: PortId, prio: u8, pause: bool) {
        let port = &self.net.ports[in_port.idx()];
        let at = self.now + port.ser_time(self.pfc_frame) + port.delay;
        let upstream = port.peer;
        self.ev.push(
            at,
            Ev::Pfc {
                port: upstream,
                prio,
                pause,
            },
        );
    }

    fn on_pfc(&mut self, port: PortId, prio: u8, pause: bool) {
        let now = self.now;
        let changed = self.net.ports[port.idx()].set_paused(prio, pause, now);
        if changed && let Some(a) = &mut self.attrib {
            let pt = &self.net.ports[port.idx()];
            if self.net.is_host(pt.node) {
                a.nic_pause(pt.node.idx(), pt.paused != 0, now);
            }
        }
        if changed && !pause {
            self.kick(port);
        }
    }

    fn on_arrive(&mut self, p: PortId) {
        if self.failing && self.stale_arrival(p) {
            return;
        }
        let port = &mut self.net.ports[p.idx()];
        let InFlight { pkt, .. } = port.wire.pop_front().expect("arrival with an empty wire");
        port.wire_bytes -= pkt.size as u64;
        if let Some(w) = port.wire.front() {
            let t = w.at;
            self.ev.push(t, Ev::Arrive(p));
        }
        let ingress = port.peer;
        let node = port.peer_node;
        if self.failing && self.lost_on_wire(p, &pkt) {
            return;
        }
        if self.net.is_host(node) {
            self.host_receive(pkt);
        } else {
            self.switch_receive(node, ingress, pkt);
        }
    }

    fn switch_receive(&mut self, node: NodeId, inp: PortId, mut pkt: Packet) {
        let sw = self.net.switch_idx(node);
        let now = self.now;
        let detour = self.detour;
        let pinned = if detour {
            match self.detour_port(node, inp, &mut pkt) {
                Detour::Pinned(out) => Some(out),
                Detour::Route => None,
                Detour::Lost => return,
            }
        } else {
            None
        };
        let net = &mut self.net;
        let switch = &mut net.switches[sw];
        let out = match pinned {
            Some(out) => out,
            None => {
                let cands = net.routes.next_hops(node, pkt.dst);
                debug_assert!(!cands.is_empty(), "no route at {node} to host {}", pkt.dst);
                switch
                    .lb
                    .choose(cands, &mut pkt, &net.ports, now, &mut switch.rng)
            }
        };
        pkt.in_port = inp;
        if detour && net.ports[out.idx()].down {
            // Routes still point at a failed link (before they converge).
            self.count_drop(sw, out, &pkt, false);
            return;
        }
        let prio = pkt.prio;
        let (il, ol) = (net.local[inp.idx()] as usize, net.local[out.idx()] as usize);
        match switch.mmu.admit(il, ol, prio, pkt.size as u32) {
            crate::net::buffer::Admit::Drop { lossless } => {
                if !self.make_room(sw, out, inp, &pkt, lossless) {
                    return;
                }
            }
            crate::net::buffer::Admit::Accept { xoff } => {
                if xoff {
                    switch.pfc_sent += 1;
                    self.send_pfc(inp, prio, true);
                }
            }
        }
        let now = self.now;
        let port = &mut self.net.ports[out.idx()];
        if port.total_bytes == 0
            && !port.txdone_pending
            && port.busy_until <= now
            && port.paused & (1 << prio) == 0
        {
            // Fast path: the egress is idle and empty, so the packet would be enqueued and
            // dequeued at once. Same effects without the queue round trip: it is counted in
            // the peak occupancy, meets an empty queue for ECN (either marking point), and
            // leaves the buffer as it starts transmission.
            port.stats.max_qbytes = port.stats.max_qbytes.max(pkt.size as u64);
            let mark = port.ecn.at().map(|_| 0);
            self.egress(sw, out, &mut pkt, mark);
            self.transmit(out, &mut pkt, false);
            return;
        }
        if port.ecn.at() == Some(MarkAt::Enqueue) {
            let qb = port.queues[prio as usize].bytes;
            port.maybe_mark(&mut pkt, qb, &mut self.net.switches[sw].rng);
        }
        if let Some(a) = &mut self.attrib {
            a.enqueue(pkt.uid, now, port.paused_acc(prio, now), out.idx(), prio);
        }
        port.enqueue(prio as usize, pkt);
        self.kick(out);
    }

    /// `pkt` (from ingress `inp`) did not fit at egress `out` of switch `sw`. On a pFabric port,
    /// drop the queued packets of the largest rank while they rank below `pkt` until it fits;
    /// returns whether it was admitted (else it is counted as dropped).
    #[cold]
    #[inline(never)]
    fn make_room(
        &mut self,
        sw: usize,
        out: PortId,
        inp: PortId,
        pkt: &Packet,
        lossless: bool,
    ) -> bool {
        let prio = pkt.prio;
        let (il, ol) = (
            self.net.local[inp.idx()] as usize,
            self.net.local[out.idx()] as usize,
        );
        let mut lossless = lossless;
        loop {
            let port = &self.net.ports[out.idx()];
            let victim = if matches!(port.sched, Scheduler::Pfabric) {
                port.pfabric_victim(prio as usize, pfabric_rank(pkt))
            } else {
                None
            };
            let Some(i) = victim else {
                self.count_drop(sw, out, pkt, lossless);
                return false;
            };
            let v = self.net.ports[out.idx()].remove_at(prio as usize, i);
            self.release(sw, v.in_port, out, prio, v.size as u32);
            self.count_drop(sw, out, &v, lossless);
            match self.net.switches[sw]
                .mmu
                .admit(il, ol, prio, pkt.size as u32)
            {
                crate::net::buffer::Admit::Drop { lossless: l } => lossless = l,
                crate::net::buffer::Admit::Accept { xoff } => {
                    if xoff {
                        self.net.switches[sw].pfc_sent += 1;
                        self.send_pfc(inp, prio, true);
                    }
                    return true;
                }
            }
        }
    }

    /// The port a pinned path (`[routing] pin`) sends `pkt` out of at `node`, if any.
    #[cold]
    #[inline(never)]
    fn pinned_port(&self, node: NodeId, pkt: &Packet) -> Option<PortId> {
        let pins = self.pins.as_ref()?;
        pins.next(self.ext_id(pkt), pkt.is_data(), node)
    }

    /// The workload's id of the flow (or RDMA message) packet `pkt` belongs to.
    fn ext_id(&self, pkt: &Packet) -> u32 {
        match self.transport.messages() {
            Some(m) if self.msg_units => m[crate::transport::rdma::msg_of(pkt.aux)].ext_id,
            _ => self.flows[pkt.flow.idx()].ext_id,
        }
    }

    /// Counts packet `pkt` dropped at egress port `out` of switch `sw`.
    fn count_drop(&mut self, sw: usize, out: PortId, pkt: &Packet, lossless: bool) {
        self.net.switches[sw].drops[lossless as usize] += 1;
        let port = &mut self.net.ports[out.idx()];
        port.stats.drops += 1;
        port.stats.drop_bytes += pkt.size as u64;
        self.cons.dropped_pkts += 1;
        self.cons.dropped_bytes += pkt.size as u64;
        self.flows[pkt.flow.idx()].stats.drops += 1;
        self.gone(pkt);
        self.transport.on_drop(pkt);
        if let Some(tm) = &mut self.telemetry {
            tm.release(pkt);
        }
        if let Some(a) = &mut self.attrib {
            let unit = attrib_unit(self.msg_units, pkt);
            a.lost(pkt.uid, unit, pkt.ts);
        }
    }

    /// The next packet host `h`'s NIC sends: control packets, then ready flows, by priority.
    fn host_pull(&mut self, h: usize, p: PortId) -> Option<Packet> {
        let nq = self.net.ports[p.idx()].nq();
        // Control packets first, by priority.
        for q in 0..nq {
            let port = &mut self.net.ports[p.idx()];
            if port.paused & (1 << q) == 0
                && let Some(pkt) = port.pop_queue(q)
            {
                return Some(pkt);
            }
        }
        if self.host_fifo.is_some() {
            return self.fifo_pull(h, p);
        }
        // Then ready flows by NIC class, round robin one packet at a time within a class (pFabric:
        // the flow of the smallest rank first). A flow whose next packet's priority is paused
        // by PFC waits (head-of-line in its flow).
        for c in 0..nq {
            let pick = match self.nic_rank {
                Some(kind) => Some(NicPick::Rank(kind)),
                None => self.nic_rr_last.is_some().then_some(NicPick::Index),
            };
            if let Some(pick) = pick {
                if let Some(pkt) = self.pull_by_key(h, p, c, pick) {
                    return Some(pkt);
                }
                continue;
            }
            for _ in 0..self.ready[h][c].len() {
                let Some(f) = self.ready[h][c].pop_front() else {
                    break;
                };
                self.flows[f.idx()].in_ready = false;
                let paused = self.net.ports[p.idx()].paused;
                if paused != 0
                    && let Some(wp) = self.next_wire_prio(f)
                    && paused & (1 << wp) != 0
                {
                    self.flows[f.idx()].in_ready = true;
                    self.ready[h][c].push_back(f);
                    continue;
                }
                if let Some(pkt) = self.emit(f) {
                    let again = self.can_send(f);
                    if again {
                        self.flows[f.idx()].in_ready = true;
                        self.ready[h][c].push_back(f);
                    }
                    if self.observed {
                        self.served_wait(f, p, &pkt, again);
                    }
                    return Some(pkt);
                }
                if self.observed {
                    self.note_wait(f, None);
                }
            }
        }
        None
    }

    /// The next packet of the ready flow of class `c` that `pick` puts first (the first in
    /// ready order on ties), skipping flows whose next packet's priority is paused: pFabric's
    /// NIC (smallest rank) or `[nic] order = "index"` (the smallest index after the last one
    /// served, wrapping, as the HPCC ns-3 simulator's NIC round-robins over its queue pairs).
    #[inline(never)]
    fn pull_by_key(&mut self, h: usize, p: PortId, c: usize, pick: NicPick) -> Option<Packet> {
        let paused = self.net.ports[p.idx()].paused;
        loop {
            let last = match (pick, &self.nic_rr_last) {
                (NicPick::Index, Some(l)) => l[h][c],
                _ => 0,
            };
            let mut best: Option<(usize, u64)> = None;
            for (i, &f) in self.ready[h][c].iter().enumerate() {
                let fl = &self.flows[f.idx()];
                if paused != 0
                    && let Some(wp) = self.transport.next_prio(f, fl)
                    && paused & (1 << wp) != 0
                {
                    continue;
                }
                let key = match pick {
                    NicPick::Rank(kind) => self.transport.rank(f, fl, kind),
                    // Indices after `last` first, then the others, each ascending.
                    NicPick::Index => f.0.wrapping_sub(last.wrapping_add(1)) as u64,
                };
                if best.is_none_or(|(_, b)| key < b) {
                    best = Some((i, key));
                }
            }
            let (i, _) = best?;
            let f = self.ready[h][c]
                .remove(i)
                .expect("index within the ready list");
            self.flows[f.idx()].in_ready = false;
            if let Some(pkt) = self.emit_outlined(f) {
                if let (NicPick::Index, Some(l)) = (pick, &mut self.nic_rr_last) {
                    l[h][c] = f.0;
                }
                let again = self.can_send(f);
                if again {
                    self.flows[f.idx()].in_ready = true;
                    self.ready[h][c].push_back(f);
                }
                self.served_wait(f, p, &pkt, again);
                return Some(pkt);
            }
            self.note_wait(f, None);
        }
    }

    /// Delay attribution: the NIC took `pkt` of flow `f` now; the flow waits again once the
    /// packet has left if it is still ready (`again`).
    #[cold]
    #[inline(never)]
    fn served_wait(&mut self, f: FlowId, p: PortId, pkt: &Packet, again: bool) {
        let from = again.then(|| self.now + self.ser_at(p, pkt.size));
        self.note_wait(f, from);
    }

    /// Wire priority of flow `f`'s next packet.
    fn next_wire_prio(&mut self, f: FlowId) -> Option<u8> {
        self.transport.next_prio(f, &self.flows[f.idx()])
    }

    /// [`emit`](Self::emit) kept out of line, for the rarely used callers.
    #[inline(never)]
    fn emit_outlined(&mut self, f: FlowId) -> Option<Packet> {
        self.emit(f)
    }

    /// Asks flow `f` for its next packet.
    #[inline(always)]
    fn emit(&mut self, f: FlowId) -> Option<Packet> {
        let fl = &self.flows[f.idx()];
        if fl.done() || !fl.started {
            return None;
        }
        let mut pkt = fl.data_packet(self.now);
        let (t, mut h) = self.host();
        let sent = t.emit(f, &mut h, &mut pkt);
        debug_assert!(
            self.wake.is_empty(),
            "a transport woke a flow while sending"
        );
        if sent && self.telemetry.is_some() {
            self.attach_telemetry(&mut pkt);
        }
        if sent {
            let fl = &mut self.flows[f.idx()];
            fl.in_net = fl.in_net.wrapping_add(1);
            if let Some(c) = &mut self.msg_in_net {
                debug_assert!(pkt.is_data(), "a transport emits data packets");
                c[crate::transport::rdma::msg_of(pkt.aux)] += 1;
            }
        }
        sent.then_some(pkt)
    }

    /// Whether flow `f` may hand a packet to the NIC now: started, unfinished, not held back
    /// by pacing, and with data its transport lets it send.
    #[inline(always)]
    fn can_send(&self, f: FlowId) -> bool {
        let fl = &self.flows[f.idx()];
        !fl.pace.armed() && fl.finish.is_none() && fl.started && self.transport.has_data(f, fl)
    }

    /// The transport and the services the simulator lends it for one call.
    #[inline(always)]
    fn host(&mut self) -> (&mut Transport, SimHost<'_>) {
        (
            &mut self.transport,
            SimHost {
                now: self.now,
                ev: &mut self.ev,
                flows: &mut self.flows,
                net: &self.net,
                wake: &mut self.wake,
                attrib: &mut self.attrib,
                finished: &mut self.finished,
                retire: &mut self.retire,
                tag_finished: &mut self.tag_finished,
                end_tag: self.end_tag,
                telemetry: &self.telemetry,
            },
        )
    }

    /// Makes ready the flows the transport woke during its last call, in order.
    fn flush_wakes(&mut self) {
        if self.wake.is_empty() {
            return;
        }
        let w = std::mem::take(&mut self.wake);
        for &f in &w {
            self.make_ready(f);
        }
        debug_assert!(
            self.wake.is_empty(),
            "a flow woke another while being made ready"
        );
        self.wake = w;
        self.wake.clear();
    }

    /// Flow `f`'s pacing gap (event generation `generation`) ended: it may send again, unless
    /// its transport holds it back longer.
    fn on_pace(&mut self, f: FlowId, generation: u32) {
        let fl = &mut self.flows[f.idx()];
        match fl.pace.fire(generation, self.now) {
            Fired::Stale | Fired::Idle => return,
            Fired::Later(d) => {
                set_pace(&mut self.ev, fl, f, d);
                return;
            }
            Fired::Due => fl.pace.cancel(),
        }
        let (t, mut h) = self.host();
        if !t.on_pace(f, &mut h) {
            return;
        }
        self.make_ready(f);
    }

    /// Flow `f`'s retransmission timer (event generation `generation`) fired.
    fn on_timer(&mut self, f: FlowId, generation: u32) {
        let fl = &mut self.flows[f.idx()];
        match fl.timer.fire(generation, self.now) {
            Fired::Stale | Fired::Idle => return,
            _ if fl.done() => return,
            Fired::Later(d) => {
                set_timer(&mut self.ev, fl, f, d);
                return;
            }
            Fired::Due => fl.timer.cancel(),
        }
        let (t, mut h) = self.host();
        t.on_timer(f, &mut h);
        self.make_ready(f);
    }

    #[inline(never)]
    fn host_receive(&mut self, pkt: Packet) {
        self.cons.delivered_pkts += 1;
        self.cons.delivered_bytes += pkt.size as u64;
        if pkt.is_data() {
            let (t, mut h) = self.host();
            let rx = t.on_data(&mut h, &pkt);
            if rx.reply.is_none() && self.telemetry.is_some() {
                self.release_telemetry(&pkt);
            }
            if let Some(mut ctl) = rx.reply {
                let fl = &mut self.flows[ctl.flow.idx()];
                fl.in_net = fl.in_net.wrapping_add(1);
                if let Some(c) = &mut self.msg_in_net {
                    // A reply names its message too: the message is not released (and its
                    // slot not reused) while the reply is in the network.
                    c[crate::transport::rdma::msg_of(ctl.aux)] += 1;
                }
                if let Some(a) = &mut self.attrib {
                    ctl.uid = a.ack_for(pkt.uid, self.now);
                }
                let hp = self.net.host_port(ctl.src);
                self.send_control(hp, ctl);
            }
            if rx.received {
                self.on_received(pkt.flow);
            }
        } else {
            let (t, mut h) = self.host();
            let wake = t.on_control(&mut h, &pkt);
            if self.telemetry.is_some() {
                self.release_telemetry(&pkt);
            }
            self.flush_wakes();
            if wake {
                self.make_ready(pkt.flow);
            }
        }
        if let Some(a) = &mut self.attrib {
            a.release(pkt.uid);
        }
        self.gone(&pkt);
    }

    /// Packet `pkt` left the network (delivered or lost): one fewer of its flow's.
    #[inline(always)]
    fn gone(&mut self, pkt: &Packet) {
        let fl = &mut self.flows[pkt.flow.idx()];
        debug_assert!(
            self.retire.is_none() || fl.in_net > 0,
            "flow {} lost more packets than it had",
            fl.ext_id
        );
        fl.in_net = fl.in_net.wrapping_sub(1);
        if let Some(c) = &mut self.msg_in_net {
            c[crate::transport::rdma::msg_of(pkt.aux)] -= 1;
        }
    }

    /// Hands a control packet (ACK) to host NIC `hp`: straight onto the wire when the NIC is
    /// idle (then nothing else is waiting at a priority that is not paused, so strict priority
    /// would pick it anyway), else into its priority queue.
    fn send_control(&mut self, hp: PortId, pkt: Packet) {
        let now = self.now;
        let port = &mut self.net.ports[hp.idx()];
        if !port.txdone_pending && port.busy_until <= now && port.paused & (1 << pkt.prio) == 0 {
            let mut pkt = pkt;
            self.transmit(hp, &mut pkt, true);
        } else {
            port.enqueue(pkt.prio as usize, pkt);
            self.kick(hp);
        }
    }
}

/// Which of `n` slots are free (released and not taken again).
fn free_slots(r: &Retire, n: usize) -> Vec<bool> {
    let mut free = vec![false; n];
    for &s in &r.free {
        free[s as usize] = true;
    }
    free
}

/// Arms flow `f`'s retransmission timer for `deadline`: one pending event per flow, moved
/// earlier when needed; a later deadline is picked up when the pending event fires.
#[inline]
fn set_timer(ev: &mut EventQueue<Ev>, fl: &mut Flow, f: FlowId, deadline: SimTime) {
    if let Some(g) = fl.timer.arm(deadline) {
        ev.push(deadline, Ev::Timer(f, g));
    }
}

/// Holds flow `f` back until `at` (the same scheme as [`set_timer`], for pacing).
#[inline]
fn set_pace(ev: &mut EventQueue<Ev>, fl: &mut Flow, f: FlowId, at: SimTime) {
    if let Some(g) = fl.pace.arm(at) {
        ev.push(at, Ev::Pace(f, g));
    }
}

/// The services the simulator lends the transport during one call (see [`Host`]): disjoint
/// borrows of the simulator's state, built per call.
struct SimHost<'a> {
    now: SimTime,
    ev: &'a mut EventQueue<Ev>,
    flows: &'a mut Vec<Flow>,
    net: &'a Network,
    wake: &'a mut Vec<FlowId>,
    attrib: &'a mut Option<Box<attrib::Attrib>>,
    finished: &'a mut usize,
    retire: &'a mut Option<Box<Retire>>,
    tag_finished: &'a mut usize,
    end_tag: Option<crate::workload::FlowTag>,
    telemetry: &'a Option<telemetry::Telemetry>,
}

impl Host for SimHost<'_> {
    #[inline(always)]
    fn now(&self) -> SimTime {
        self.now
    }
    #[inline(always)]
    fn flow(&self, f: FlowId) -> &Flow {
        &self.flows[f.idx()]
    }
    #[inline(always)]
    fn flow_mut(&mut self, f: FlowId) -> &mut Flow {
        &mut self.flows[f.idx()]
    }
    #[inline(always)]
    fn set_timer(&mut self, f: FlowId, at: SimTime) {
        set_timer(self.ev, &mut self.flows[f.idx()], f, at);
    }
    #[inline(always)]
    fn clear_timer(&mut self, f: FlowId) {
        self.flows[f.idx()].timer.cancel();
    }
    #[inline(always)]
    fn timer_armed(&self, f: FlowId) -> bool {
        self.flows[f.idx()].timer.armed()
    }
    #[inline(always)]
    fn set_pace(&mut self, f: FlowId, at: SimTime) {
        set_pace(self.ev, &mut self.flows[f.idx()], f, at);
    }
    fn wake(&mut self, f: FlowId) {
        self.wake.push(f);
    }
    fn finished(
        &mut self,
        unit: usize,
        uid: u32,
        receiver_side: bool,
        tag: crate::workload::FlowTag,
    ) {
        if let Some(a) = self.attrib {
            a.finish(unit, uid, self.now, receiver_side);
        }
        *self.finished += 1;
        if let Some(r) = self.retire {
            r.pending.push(FlowId(unit as u32));
        }
        // RDMA messages count too (they were left out, so `end_when` never ended an RDMA run).
        if Some(tag) == self.end_tag {
            *self.tag_finished += 1;
        }
    }
    #[inline]
    fn line_rate(&self, h: u32) -> BitRate {
        self.net.ports[self.net.host_port(h).idx()].rate
    }
    fn uplink_for(&self, src: u32, dst: u32, proto: u8, sport: u16, dport: u16) -> (usize, usize) {
        let net = self.net;
        let tor = net.ports[net.host_port(src).idx()].peer_node;
        if net.is_host(tor) {
            return (0, 1);
        }
        let n = net.routes.next_hops(tor, dst).len();
        if n <= 1 {
            return (0, 1);
        }
        let salt = net.switches[net.switch_idx(tor)].lb.salt;
        (
            crate::net::lb::ecmp_index(src, dst, proto, sport, dport, salt, n),
            n,
        )
    }
    fn telemetry(&self, pkt: &Packet) -> crate::transport::cc::IntStack {
        self.telemetry
            .as_ref()
            .map_or_else(Default::default, |t| t.get(pkt))
    }
    fn add_flow(&mut self, mut flow: Flow) -> FlowId {
        // A retiring run's new connection takes its message's slot.
        match self.retire.as_mut().and_then(|r| r.slot.take()) {
            Some(s) if (s as usize) < self.flows.len() => {
                let id = FlowId(s);
                flow.id = id;
                let old = &self.flows[id.idx()];
                flow.timer = old.timer.successor();
                flow.pace = old.pace.successor();
                self.flows[id.idx()] = flow;
                id
            }
            _ => {
                let id = FlowId(self.flows.len() as u32);
                flow.id = id;
                self.flows.push(flow);
                id
            }
        }
    }
}
