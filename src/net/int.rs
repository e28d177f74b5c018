//! In-band network telemetry (INT) as HPCC and PowerTCP use it: each switch port stamps a hop
//! record (time, bytes sent, queue length, line rate) onto a data packet as it leaves, up to
//! five hops. The records live in a side table keyed by the packet (`sim::telemetry`), not in
//! the packet. Not modelled: telemetry header bytes on the wire (a packet's size does not
//! grow with the hops it carries).

use crate::units::SimTime;

/// One hop of in-band network telemetry, stamped by a switch as the packet leaves it (HPCC).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntHop {
    /// When the packet left the port.
    pub time: SimTime,
    /// Bytes the port had transmitted before this packet (all classes), cumulative.
    pub tx_bytes: u64,
    /// Bytes queued at the port (all classes) after this packet left.
    pub qlen: u64,
    /// The port's line rate in bit/s.
    pub rate_bps: u64,
}

/// Hops of telemetry a packet carries at most (HPCC's five).
pub const INT_MAX_HOPS: usize = 5;

/// The telemetry stack of one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntStack {
    pub n: u8,
    pub hops: [IntHop; INT_MAX_HOPS],
}

impl IntStack {
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
    /// Appends a hop; beyond [`INT_MAX_HOPS`] the stack keeps its first hops.
    pub fn push(&mut self, h: IntHop) {
        if (self.n as usize) < INT_MAX_HOPS {
            self.hops[self.n as usize] = h;
            self.n += 1;
        }
    }
}
