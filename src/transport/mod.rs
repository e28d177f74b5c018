//! Transports: the end-host protocol state of each flow.
//!
//! A flow is a message of `size` bytes from `src` to `dst` starting at `start`. Its sender
//! and receiver state live together in one [`Flow`] in the simulator's flow arena (the
//! simulator knows both ends). Transports are an enum ([`Proto`]) dispatched by `match`, not
//! trait objects:
//!
//! * `tcp`: NewReno/SACK with Reno or DCTCP congestion control (see [`tcp`]);
//! * `udp`: an unreliable constant-rate stream (no acknowledgements, no congestion control),
//!   for background load and for tests that need a saturating source.
//!
//! Host NICs pull packets from flows (see `sim`): a flow that may send is in its host's ready
//! list for its priority, and the NIC asks it for one packet at a time when the wire is free.

pub mod dcqcn;
pub mod mprdma;
pub mod rdma;
pub mod tcp;

use crate::ids::FlowId;
use crate::units::SimTime;
use mprdma::{MpReceiver, MpSender};
use rdma::{QpReceiver, QpSender};
use tcp::{TcpReceiver, TcpSender};

/// Protocol state of a flow. Not boxed: flows live in one arena and the TCP variant is the
/// common case, so the UDP variant's unused space costs less than an indirection per packet.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Proto {
    Tcp {
        snd: TcpSender,
        rcv: TcpReceiver,
    },
    Udp {
        /// Payload bytes handed to the NIC so far.
        sent: u64,
        /// Payload bytes received.
        rcvd: u64,
        /// Inter-packet gap for pacing below line rate (zero: send back to back).
        gap_per_byte_ps: u64,
    },
    /// An RDMA queue pair (messages are tracked by the run's RDMA host state).
    Rdma {
        snd: QpSender,
        rcv: QpReceiver,
        line_bps: f64,
    },
    /// An MP-RDMA connection.
    MpRdma {
        snd: MpSender,
        rcv: MpReceiver,
    },
}

/// Per-flow counters.
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    /// Data packets handed to the NIC (including retransmissions).
    pub data_pkts: u64,
    /// Data packets that arrived with CE set.
    pub ce_rcvd: u64,
    /// Packets of this flow (data or ACK) dropped in the network.
    pub drops: u64,
}

/// A flow: endpoints, size, timing, protocol state and counters.
#[derive(Clone, Debug)]
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
    pub proto: Proto,
    pub started: bool,
    /// Sender-side completion (last byte acknowledged; for UDP, last byte received).
    pub finish: Option<SimTime>,
    /// Receiver-side completion (last byte received in order).
    pub rcv_finish: Option<SimTime>,
    /// In its host's ready list.
    pub in_ready: bool,
    /// Retransmission / pacing timer: deadline (MAX = none), time of the pending event (MAX =
    /// none) and generation (a popped timer event with another generation is stale).
    pub timer_deadline: SimTime,
    pub timer_event: SimTime,
    pub timer_gen: u32,
    /// Pacing timer (same scheme): the flow may not send before it fires.
    pub pace_deadline: SimTime,
    pub pace_event: SimTime,
    pub pace_gen: u32,
    pub stats: FlowStats,
}

impl Flow {
    pub fn done(&self) -> bool {
        self.finish.is_some()
    }

    /// Whether the flow may hand a packet to the NIC at `now` (a paced UDP flow waits for its
    /// timer).
    pub fn can_send(&self, _now: SimTime) -> bool {
        self.pace_deadline == SimTime::MAX && self.has_data_to_send()
    }

    /// Whether the sender has a packet to transmit, ignoring pacing.
    pub fn has_data_to_send(&self) -> bool {
        if self.finish.is_some() || !self.started {
            return false;
        }
        match &self.proto {
            Proto::Tcp { snd, .. } => snd.can_send(),
            Proto::Udp { sent, .. } => *sent < self.size,
            Proto::Rdma { snd, .. } => snd.has_unsent(),
            Proto::MpRdma { snd, .. } => snd.can_send(),
        }
    }
}
