//! One simulation run: the event loop and what happens at each event.
//!
//! Events (a `Copy` enum, one `match`):
//!
//! * `Arrival { host, index }`: a flow (or RDMA message) of the workload starts at its source;
//! * `Start(unit)`, `JoinNews(join)`, `CalcDone(step)`: dependencies (see [`deps`]);
//! * `Fail(i)`, `Reroute`: failures and route recomputation, the run's own events;
//! * `TxDone(port)`: the port's serializer is free and it has a backlog: start the next packet;
//! * `Arrive(port)`: the head of the port's wire reaches the far end (the next packet on the
//!   wire is then scheduled);
//! * `Pfc { port, prio, pause }`: a PFC frame reaches the upstream egress `port`;
//! * `Timer(flow, generation)`, `Pace(flow, generation)`: a flow's retransmission or pacing
//!   timer (lazy cancellation).
//!
//! Events of the same picosecond are ordered by keys that depend only on where each came from
//! (`sched`, `engine::tie`), never on a run-wide push order; every decision is local to one
//! node or taken at fixed instants (`grid`); so a run split into partitions of the network
//! (`window`) gives the same bytes as a run that is not.
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
//!
//! Files: this one holds the run's state ([`Sim`]) and its setup; `grid` the event loop, the
//! starts, the dependencies and the end of a run; `sched` the event keys; `window` the
//! partitioned run; `switch` the switch pipeline, `nic` the host NIC, `host` what transports see of their host,
//! `retire` a flow's release, opening and retiring, `failure` link failures; `attrib`,
//! `telemetry` and `timeseries` what is observed.

pub mod attrib;
pub mod deps;
mod failure;
pub mod grid;
mod host;
mod nic;
mod retire;
mod sched;
mod switch;
pub mod telemetry;
pub mod timeseries;
pub mod window;

pub use crate::transport::TransportSpec;

use crate::engine::{EventQueue, Fired};
use crate::ids::{FlowId, NodeId, PortId};
use crate::net::packet::Packet;
use crate::net::port::{InFlight, MarkAt, Port, Scheduler, pfabric_rank};
use crate::net::{BuildOpts, Network};
use crate::transport::{Flow, Host, RankKind, Transport};
use crate::units::{BitRate, SimTime};
use crate::workload::FlowSpec;
use std::collections::VecDeque;

#[inline]
/// The delay-attribution unit a data packet belongs to: its message (RDMA, in the header word) or its
/// flow; None for control packets.
fn attrib_unit(msg_units: bool, pkt: &Packet) -> Option<usize> {
    pkt.is_data().then(|| {
        if msg_units {
            crate::transport::message_of(pkt)
        } else {
            pkt.flow.idx()
        }
    })
}

fn port_node_idx(net: &Network, p: PortId) -> usize {
    net.ports[p.idx()].node.idx()
}

/// Takes the time-series sample due at `sp.next` (the state just before that instant's
/// events): every selected port's queues and counters (`port`), every selected flow's
/// transport state (`flow`; None: not sampled, e.g. not created yet), then schedules the next.
pub(in crate::sim) fn sample_state<'a>(
    sp: &mut timeseries::Sampler,
    port: impl Fn(usize) -> &'a Port,
    mut flow: impl FnMut(u32) -> Option<crate::transport::FlowSample>,
) {
    let t = sp.next;
    for i in 0..sp.ports.len() {
        let p = sp.ports[i];
        let port = port(p);
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
        if let Some(s) = flow(sp.flows[i]) {
            sp.flow(t, i, s);
        }
    }
    sp.advance(t);
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Ev {
    TxDone(PortId),
    Arrive(PortId),
    Pfc {
        port: PortId,
        prio: u8,
        pause: bool,
    },
    Timer(FlowId, u32),
    Pace(FlowId, u32),
    /// A unit (flow, or RDMA message) whose join completed starts (after its delay).
    Start(u32),
    /// Failure `i` of `[[failures]]` happens.
    Fail(u32),
    /// Routes are recomputed after a failure (its convergence delay later).
    Reroute,
    /// Arrival `index` of the workload (a flow, or an RDMA message) starts at
    /// its source `host`.
    Arrival {
        host: u32,
        index: u32,
    },
    /// A completion counted by join `j` happened at another host than the join's, and the
    /// news reaches it.
    JoinNews(u32),
    /// Compute step `c` of the dependencies finishes.
    CalcDone(u32),
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// What the flows and compute steps wait for beyond the flows' groups.
    pub dag: crate::workload::Dag,
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
    /// The grid's spacing (`[run] grid`; > 0; see [`grid`]).
    pub grid: SimTime,
}

/// The stop time of a run without `stop_time`: the last instant the clock holds. Times add
/// saturating, so an event computed beyond it lies at [`SimTime::MAX`], after it, and the run
/// ends ([`EndReason::TimeLimit`]) instead of the clock wrapping into the past.
pub const NO_STOP: SimTime = SimTime(u64::MAX - 1);

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// Every reason, in order (`from_index` inverts `as usize`).
    const ALL: [EndReason; 6] = [
        EndReason::AllFinished,
        EndReason::TagFinished,
        EndReason::StopTime,
        EndReason::Idle,
        EndReason::Unreachable,
        EndReason::TimeLimit,
    ];

    /// The reason numbered `i` (`reason as usize`).
    pub fn from_index(i: usize) -> EndReason {
        Self::ALL[i]
    }

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
    pub tcp: Option<crate::transport::TcpStats>,
    pub attribution: Option<attrib::Attribution>,
    /// RDMA: the message.
    pub msg: Option<crate::transport::Msg>,
}

/// A simulation run in progress.
pub struct Sim {
    pub now: SimTime,
    ev: sched::Schedule,
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
    /// Joins, what waits for them, compute steps (`deps`).
    pub(in crate::sim) deps: deps::Deps,
    /// The workload's collectives (their flows are reported together).
    pub collectives: Vec<crate::workload::collective::CollectiveInfo>,
    /// The workload's training iterations (their compute steps are reported).
    pub training: Option<crate::workload::training::TrainingInfo>,
    /// The grid's spacing and the next grid point; arrivals pushed and not yet
    /// handled; a streamed workload's specs read ahead (by arrival index from
    /// `start_buf_base`; None once started).
    grid: SimTime,
    next_grid: SimTime,
    /// The start of the next arrival not pushed yet (MAX: none).
    next_arrival: SimTime,
    arrivals_pending: u32,
    start_buf: VecDeque<Option<FlowSpec>>,
    start_buf_base: usize,
    /// Base latencies between hosts, computed as dependencies need them.
    latencies: grid::Latencies,
    /// A partitioned run: this replica's partition (None: the whole run).
    part: Option<Box<window::Part>>,
    /// The times of `[[failures]]`, in order of `failures`.
    fail_at: Vec<SimTime>,
    /// The run's own events handled (failures, reroutes): every partition handles them.
    run_events: u64,
    /// Events handled by the other partitions of a merged partitioned run.
    events_elsewhere: u64,
    cons: Conservation,
    /// Hop count per packet transmitted (packet-hops), for the benchmark.
    pub packet_hops: u64,
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
    /// Draws for links' random loss: a stream per link (by port; drawn where the link
    /// delivers). Empty when no link loses packets.
    loss_rngs: Vec<crate::engine::RngStream>,
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
        let per_message = s.transport.message_per_connection();
        let msg_units = s.transport.units_are_messages();
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
        let n_ports = net.ports.len();
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
        let host_rate = |f: &Flow| net.ports[net.egress(f.src, f.dst, f.sport, f.dport).idx()].rate;
        let mut flows = Vec::with_capacity(s.flows.len());
        for f in &s.flows {
            if f.src as usize >= net.n_hosts || f.dst as usize >= net.n_hosts || f.src == f.dst {
                return Err(format!(
                    "flow {}: bad endpoints {} -> {}",
                    f.id, f.src, f.dst
                ));
            }
        }
        let dependent = !s.dag.is_empty()
            || s.flows
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
        let mut transport = Transport::new(
            &s.transport,
            // A retiring run's messages come as they start.
            if retiring { &[] } else { &s.flows },
            &flows,
            host_rate,
            net.n_hosts,
            s.seed,
        );
        if !retiring {
            transport.per_host_ids();
        }
        let total = match transport.messages() {
            _ if retiring && stream.is_some() => streamed,
            _ if retiring => s.flows.len(),
            Some(m) => m.len(),
            None => s.flows.len(),
        };
        let n_static = s.flows.iter().take_while(|f| f.after.is_none()).count();
        if s.flows[n_static..].iter().any(|f| f.after.is_none()) {
            return Err("flows that wait for a group must come after the others".into());
        }
        // Joins and what waits for them (none in a retiring run).
        let deps = match retiring {
            true => deps::Deps::default(),
            false => deps::Deps::new(&s.flows, n_static, &s.dag)?,
        };
        let ready = (0..net.n_slots())
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
        let mut sim = Sim {
            msg_in_net,
            now: SimTime::ZERO,
            ev: sched::Schedule::new(s.seed, net.nodes.len(), net.n_hosts, net.ports.len())?,
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
            deps,
            collectives: Vec::new(),
            training: None,
            grid: s.grid.max(SimTime(1)),
            next_grid: SimTime::ZERO,
            next_arrival: SimTime::MAX,
            arrivals_pending: 0,
            start_buf: VecDeque::new(),
            start_buf_base: 0,
            latencies: grid::Latencies::default(),
            part: None,
            fail_at: Vec::new(),
            run_events: 0,
            events_elsewhere: 0,
            cons: Conservation::default(),
            packet_hops: 0,
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
            loss_rngs: match lossy {
                true => {
                    let r = crate::engine::RngStream::new(s.seed, "link.loss");
                    (0..n_ports as u64).map(|p| r.child(p)).collect()
                }
                false => Vec::new(),
            },
        };
        sim.next_arrival = sim.next_release();
        Ok(sim)
    }

    /// Puts a FIFO queue (a host kernel's single-queue qdisc) in front of every host NIC: a
    /// flow hands packets to it as soon as its transport lets it, while it has fewer than
    /// `limit` wire bytes queued there (TCP small queues; `u64::MAX`: no limit).
    pub fn use_host_fifo(&mut self, limit: u64) {
        let nq = self.net.nq as usize;
        self.host_fifo = Some(Box::new(HostFifo {
            queues: vec![vec![VecDeque::new(); nq]; self.net.n_slots()],
            queued: vec![0; self.flows.len()],
            limit,
        }));
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
        self.ev.popped() + self.events_elsewhere
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
        progress: impl FnMut(Progress),
        drain: &mut dyn FnMut(&Network, Vec<Retired>),
    ) -> Option<EndReason> {
        if let Some(r) = self.ended {
            return Some(r);
        }
        if self.total == 0 && self.deps.calcs.is_empty() {
            self.ended = Some(EndReason::AllFinished);
            return self.ended;
        }
        self.advance_keyed(until, progress, drain)
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
        let (ports, flows, transport) = (&self.net.ports, &self.flows, &self.transport);
        sample_state(
            &mut sp,
            |p| &ports[p],
            |f| match flows.get(f as usize) {
                Some(fl) if !fl.is_placeholder() => transport.sample(FlowId(f)),
                _ => None,
            },
        );
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
            _ if i >= self.n_static => None,
            Some(m) => m.get(i).map(|m| m.start),
            None => Some(self.flows[i].start),
        }
    }

    /// The next instant a release is due: a workload arrival not pushed yet, or a compute
    /// step without a join (MAX: none).
    pub(in crate::sim) fn next_release(&self) -> SimTime {
        let a = self.arrival_time(self.next_start).unwrap_or(SimTime::MAX);
        a.min(self.deps.next_root().unwrap_or(SimTime::MAX))
    }
}
