//! In-band network telemetry (INT) for the runs whose congestion control reads it (HPCC):
//! every data packet gets a slot in a side table; each switch it leaves pushes one hop (time,
//! the port's transmitted bytes before the packet, its queue after the packet left, its line
//! rate); the receiver's acknowledgement carries the slot back and the sender's controller
//! reads it; the slot is freed when the acknowledgement has been processed, or when the packet
//! or its reply is dropped or left unanswered.
//!
//! The packet itself does not grow: the slot is part of the header word of RDMA data packets
//! and their replies, beside their message (`Hdr::telemetry_slot`, the one field of that word
//! a switch writes). Runs without telemetry allocate nothing and leave the word alone.
//!
//! Values are exact unless `quantize` (`[quirks] int_units`): then each hop is recorded in the
//! HPCC ns-3 simulator's units (time in whole nanoseconds, transmitted bytes in 512-byte units,
//! queue in 320-byte units, floored). Not modelled: the fields' wrap-around (20 and 17 bits,
//! 24-bit time), which differences over one round trip never reach.

use crate::net::int::{IntHop, IntStack};
use crate::net::packet::Packet;

/// The telemetry stacks of the packets in flight.
#[derive(Debug, Default)]
pub struct Telemetry {
    slots: Vec<IntStack>,
    free: Vec<u32>,
    /// Slots in use (for the leak check).
    pub live: usize,
    /// Record hops in the reference's units.
    pub quantize: bool,
}

impl Telemetry {
    /// The slot a packet carries, if any.
    #[inline]
    pub fn slot_of(pkt: &Packet) -> Option<u32> {
        pkt.hdr.telemetry_slot()
    }

    /// Gives `pkt` an empty stack.
    pub fn attach(&mut self, pkt: &mut Packet) {
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = IntStack::default();
                s
            }
            None => {
                self.slots.push(IntStack::default());
                (self.slots.len() - 1) as u32
            }
        };
        self.live += 1;
        pkt.hdr.set_telemetry_slot(s);
    }

    /// A switch stamps a hop on `pkt`.
    #[inline]
    pub fn push(&mut self, pkt: &Packet, mut hop: IntHop) {
        if let Some(s) = Self::slot_of(pkt) {
            if self.quantize {
                hop.time = hop.time.floor_ns();
                hop.tx_bytes -= hop.tx_bytes % 512;
                hop.qlen -= hop.qlen % 320;
            }
            self.slots[s as usize].push(hop);
        }
    }

    /// The stack `pkt` carries (empty if none).
    pub fn get(&self, pkt: &Packet) -> IntStack {
        Self::slot_of(pkt).map_or_else(IntStack::default, |s| self.slots[s as usize])
    }

    /// Takes the stack `pkt` carries and frees its slot (the packet leaves for another
    /// partition's replica, which attaches it again: [`Telemetry::attach_stack`]).
    pub fn take(&mut self, pkt: &Packet) -> Option<IntStack> {
        let st = Self::slot_of(pkt).map(|s| self.slots[s as usize]);
        self.release(pkt);
        st
    }

    /// Gives `pkt` a slot holding `stack` (a packet from another partition).
    pub fn attach_stack(&mut self, pkt: &mut Packet, stack: IntStack) {
        self.attach(pkt);
        let s = Self::slot_of(pkt).expect("attached");
        self.slots[s as usize] = stack;
    }

    /// Frees the slot `pkt` carries, if any.
    pub fn release(&mut self, pkt: &Packet) {
        if let Some(s) = Self::slot_of(pkt) {
            self.free.push(s);
            self.live -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Hdr;
    use crate::units::SimTime;

    #[test]
    fn slots_are_reused_and_stacks_start_empty() {
        let mut t = Telemetry::default();
        let mut p: Packet = test_packet();
        p.hdr = Hdr::with_message(7);
        t.attach(&mut p);
        assert_eq!(p.hdr.message(), 7, "the message id is kept");
        let hop = IntHop {
            time: SimTime::from_ns(5),
            tx_bytes: 100,
            qlen: 3,
            rate_bps: 1,
        };
        t.push(&p, hop);
        t.push(&p, hop);
        assert_eq!(t.get(&p).hops(), &[hop, hop]);
        t.release(&p);
        assert_eq!(t.live, 0);
        let mut q = test_packet();
        t.attach(&mut q);
        assert_eq!(Telemetry::slot_of(&q), Telemetry::slot_of(&p));
        assert!(t.get(&q).hops().is_empty());
        for _ in 0..7 {
            t.push(&q, hop);
        }
        assert_eq!(t.get(&q).hops().len(), crate::net::int::INT_MAX_HOPS);
    }

    fn test_packet() -> Packet {
        Packet {
            flow: crate::ids::FlowId(0),
            src: 0,
            dst: 1,
            seq: 0,
            hdr: Hdr::NONE,
            ts: SimTime::ZERO,
            size: 100,
            payload: 50,
            sport: 1,
            dport: 2,
            in_port: crate::ids::PortId(0),
            kind: crate::net::packet::PktKind::Data,
            prio: 0,
            ecn: 0,
            flags: 0,
            uid: 0,
        }
    }
}
