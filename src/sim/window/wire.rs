//! Messages between partitions as bytes: what one process of a run will send another (the
//! partitions of a run on MPI ranks exchange these buffers after every window).
//!
//! A buffer is one window's messages from one partition to another, in the order they were
//! sent, in a compact binary form (`postcard`: variable-length integers, times as integer
//! picoseconds), with a packet's telemetry stack and delay-attribution record when it
//! carries them. Packing and unpacking change nothing: `[run] exchange = "bytes"` sends every
//! message through them on one machine, and the tests check that the outputs do not move.
//!
//! Not here: versioning across builds (every process of a run is the same binary), or
//! compression.

use super::Remote;

/// Appends `msgs`, packed, to `out`.
pub(in crate::sim) fn pack(msgs: &[Remote], out: &mut Vec<u8>) {
    let bytes = postcard::to_extend(msgs, std::mem::take(out))
        .expect("messages pack (no type of theirs can fail to)");
    *out = bytes;
}

/// The messages `bytes` holds (as [`pack`] wrote them).
pub(in crate::sim) fn unpack(bytes: &[u8]) -> Result<Vec<Remote>, String> {
    postcard::from_bytes(bytes).map_err(|e| format!("a partition's messages did not unpack: {e}"))
}

#[cfg(test)]
mod tests {
    use super::super::{Carried, Ev};
    use super::*;
    use crate::ids::{FlowId, PortId};
    use crate::net::int::{IntHop, IntStack};
    use crate::net::packet::{Hdr, Packet, PktKind};
    use crate::units::SimTime;

    fn packet(i: u64) -> Packet {
        Packet {
            flow: FlowId(7 + i as u32),
            src: 3,
            dst: 11,
            seq: 1_460 * i + u32::MAX as u64,
            hdr: Hdr::NONE,
            ts: SimTime(123_456_789 * i),
            size: 1_538,
            payload: 1_460,
            sport: 40_000 + i as u16,
            dport: 5_001,
            in_port: PortId(9),
            kind: PktKind::Data,
            prio: 3,
            ecn: 2,
            flags: 1,
            uid: 0,
        }
    }

    fn messages() -> Vec<Remote> {
        let mut int = IntStack::default();
        int.push(IntHop {
            time: SimTime(5),
            tx_bytes: u64::MAX,
            qlen: 3_000,
            rate_bps: 100_000_000_000,
        });
        vec![
            Remote::Packet {
                link: PortId(4),
                at: SimTime(1_000_000),
                index: 0,
                pkt: packet(0),
                carried: Carried {
                    int: None,
                    trace: None,
                },
            },
            Remote::Packet {
                link: PortId(u32::MAX),
                at: SimTime(u64::MAX),
                index: u64::MAX,
                pkt: packet(5),
                carried: Carried {
                    int: Some(Box::new(int)),
                    trace: Some(Box::default()),
                },
            },
            Remote::Event {
                at: SimTime(77),
                tie: 1 << 63,
                ev: Ev::Pfc {
                    port: PortId(2),
                    prio: 3,
                    pause: true,
                },
            },
            Remote::Event {
                at: SimTime(78),
                tie: 0,
                ev: Ev::JoinNews(12),
            },
        ]
    }

    /// What is packed unpacks to the same messages: packing them again gives the same bytes,
    /// and the fields read back are the ones written.
    #[test]
    fn messages_survive_packing() {
        let msgs = messages();
        let mut bytes = vec![0xAB];
        pack(&msgs, &mut bytes);
        assert_eq!(bytes[0], 0xAB, "appends");
        let back = unpack(&bytes[1..]).unwrap();
        let mut again = Vec::new();
        pack(&back, &mut again);
        assert_eq!(&bytes[1..], &again[..]);
        match (&msgs[1], &back[1]) {
            (
                Remote::Packet {
                    pkt: a,
                    carried: ca,
                    ..
                },
                Remote::Packet {
                    pkt: b,
                    carried: cb,
                    at,
                    index,
                    link,
                },
            ) => {
                assert_eq!(a, b);
                assert_eq!(ca.int, cb.int);
                assert!(cb.trace.is_some());
                assert_eq!(
                    (*at, *index, *link),
                    (SimTime(u64::MAX), u64::MAX, PortId(u32::MAX))
                );
            }
            _ => panic!("a packet"),
        }
        match &back[2] {
            Remote::Event { at, tie, ev } => {
                assert_eq!((*at, *tie), (SimTime(77), 1 << 63));
                assert_eq!(
                    *ev,
                    Ev::Pfc {
                        port: PortId(2),
                        prio: 3,
                        pause: true
                    }
                );
            }
            _ => panic!("an event"),
        }
        // Compact: a plain data packet takes well under its 56 bytes in memory plus its key.
        let mut one = Vec::new();
        pack(&msgs[..1], &mut one);
        assert!(one.len() < 48, "{} bytes", one.len());
    }

    /// Bytes that are not a packing are refused, never a panic.
    #[test]
    fn garbage_is_refused() {
        let mut bytes = Vec::new();
        pack(&messages(), &mut bytes);
        assert!(unpack(&bytes[..bytes.len() / 2]).is_err());
        assert!(unpack(&[0xFF; 16]).is_err());
    }
}
