//! Packet capture: an opt-in, filtered, size-capped pcap trace of what the simulated links
//! carry, readable by Wireshark and tshark.
//!
//! What it models: every transmission onto a link (the first bit leaving an egress port) of
//! the selected nodes, flows and time window, as a nanosecond-resolution pcap record
//! (link type Ethernet) with synthetic but well-formed headers:
//! - Ethernet II, locally administered MACs derived from the source and destination hosts;
//! - IPv4 from `10.a.b.c` (host number `a*65536 + b*256 + c`), TTL 64, DSCP = class selector
//!   `CS(7 - priority)` (dcsim's priority 0 is the highest, so it maps to CS7), ECN bits from
//!   the packet (ECT(0), or CE once marked);
//! - TCP-family transports: a TCP header with the packet's ports, sequence number (data) or
//!   acknowledgement number (ACKs, flag ACK, plus ECE when the ACK echoes CE);
//! - RDMA: UDP to port 4791 with an InfiniBand base transport header (RoCEv2): data as
//!   RC RDMA WRITE Middle, ACK and NAK as RC Acknowledge with an AETH (NAK: PSN sequence error),
//!   CNP as opcode 0x81 with its 16 reserved bytes; the destination QP is 0x100 + the queue
//!   pair id;
//! - constant-rate UDP: a plain UDP header.
//!
//! The payload bytes do not exist in the simulator: by default (TCP, UDP) only headers are
//! captured, each record's captured length being its header length and its original length
//! what the headers declare (14 + the IPv4 total length, which counts the transport payload
//! and, for RoCEv2, the 4-byte ICRC); RDMA traces (or any with `full_frames = true`) hold
//! whole frames with zero payload and ICRC, because Wireshark's RoCE dissector reports a
//! header-only packet as malformed. That is the real frame size for the packet's payload, not dcsim's configured header
//! overhead, which is a model parameter. Checksums are zero (Wireshark does not validate them
//! by default).
//!
//! What it does not do: capture receptions separately (a packet's arrival is its transmission
//! time plus serialization and propagation), PFC frames (they are modelled as events, not
//! packets), or write more than `max_bytes`: the trace stops there and the run's manifest says
//! it was truncated.

use crate::net::packet::{Packet, PktKind, ecn};
use crate::units::{Bytes, SimTime};
use serde::{Deserialize, Serialize};

/// `[pcap]`: what to capture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PcapConfig {
    /// Capture transmissions from these nodes (the `node_id` of `ports.csv`: hosts first, then
    /// switches). Default: all nodes.
    pub nodes: Vec<u32>,
    /// Capture only these flows (TCP) or queue pairs (RDMA), by id. Default: all.
    pub flows: Vec<u32>,
    /// Capture window start. Default 0.
    pub start: SimTime,
    /// Capture window end. Default: the end of the run.
    pub end: Option<SimTime>,
    /// Size cap of the trace file, 1KiB..=4GiB. Default 64MiB.
    pub max_bytes: Bytes,
    /// Capture whole frames (headers, zero-filled payload and ICRC) instead of headers only.
    /// Default: true for RDMA (Wireshark's RoCE dissector reports a header-only BTH as
    /// malformed), false otherwise.
    pub full_frames: Option<bool>,
}

impl Default for PcapConfig {
    fn default() -> Self {
        PcapConfig {
            nodes: Vec::new(),
            flows: Vec::new(),
            start: SimTime::ZERO,
            end: None,
            max_bytes: Bytes(64 << 20),
            full_frames: None,
        }
    }
}

impl PcapConfig {
    /// Checks the fields against a network of `n_nodes` nodes; errors name the key.
    pub fn validate(&self, n_nodes: usize) -> Result<(), (String, String)> {
        if let Some(&n) = self.nodes.iter().find(|&&n| n as usize >= n_nodes) {
            return Err((
                "pcap.nodes".into(),
                format!(
                    "node {n} does not exist (the topology has nodes 0..={})",
                    n_nodes - 1
                ),
            ));
        }
        if let Some(e) = self.end
            && e <= self.start
        {
            return Err((
                "pcap.end".into(),
                format!("must be after pcap.start ({})", self.start),
            ));
        }
        if !(1024..=4 << 30).contains(&self.max_bytes.0) {
            return Err((
                "pcap.max_bytes".into(),
                format!("{} is out of range 1KiB..=4GiB", self.max_bytes),
            ));
        }
        Ok(())
    }
}

/// Which headers the transport's packets get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    Tcp,
    Rdma,
    Udp,
}

/// Queue pair `q` appears as QP number `QP_BASE + q` (QPs 0 and 1 are InfiniBand's
/// management queue pairs, which Wireshark dissects as management datagrams).
pub const QP_BASE: u32 = 0x100;

/// RoCEv2's UDP destination port.
pub const ROCE_PORT: u16 = 4791;
const GLOBAL_HEADER: usize = 24;
const RECORD_HEADER: usize = 16;

/// An in-memory pcap trace being captured.
#[derive(Debug)]
pub struct PcapWriter {
    buf: Vec<u8>,
    proto: Proto,
    /// Bit per node: capture its transmissions.
    nodes: Vec<bool>,
    flows: Option<Vec<bool>>,
    start: SimTime,
    end: SimTime,
    cap: usize,
    full: bool,
    /// Packets captured, and whether the size cap cut the trace short.
    pub packets: u64,
    pub truncated: bool,
    /// A partition's replica in a partitioned run: the captures selected, with their event's
    /// key and place in the event, to be written in the run's order once merged.
    deferred: Option<Vec<Deferred>>,
    /// The key of the last deferred capture's event, and how many it captured.
    last_key: (SimTime, u64, u32),
}

/// A capture waiting for the merge: `(time, tie, index within its event, packet)`.
pub type Deferred = (SimTime, u64, u32, Packet);

impl PcapWriter {
    pub fn new(cfg: &PcapConfig, proto: Proto, n_nodes: usize) -> Self {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond pcap
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        buf.extend_from_slice(&65535u32.to_le_bytes()); // snaplen
        buf.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
        debug_assert_eq!(buf.len(), GLOBAL_HEADER);
        let nodes = if cfg.nodes.is_empty() {
            vec![true; n_nodes]
        } else {
            let mut v = vec![false; n_nodes];
            for &n in &cfg.nodes {
                v[n as usize] = true;
            }
            v
        };
        let flows = (!cfg.flows.is_empty()).then(|| {
            let max = *cfg.flows.iter().max().expect("non-empty") as usize;
            let mut v = vec![false; max + 1];
            for &f in &cfg.flows {
                v[f as usize] = true;
            }
            v
        });
        PcapWriter {
            buf,
            proto,
            nodes,
            flows,
            start: cfg.start,
            end: cfg.end.unwrap_or(SimTime::MAX),
            cap: cfg.max_bytes.0 as usize,
            full: cfg.full_frames.unwrap_or(proto == Proto::Rdma),
            packets: 0,
            truncated: false,
            deferred: None,
            last_key: (SimTime::MAX, 0, 0),
        }
    }

    /// Keeps the captures for a merge instead of writing them (a partitioned run's replica).
    pub fn defer(&mut self) {
        self.deferred = Some(Vec::new());
    }

    /// The deferred captures (empty when not deferring).
    pub fn take_deferred(&mut self) -> Vec<Deferred> {
        self.deferred
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Adds captures taken by another process's replica of the same partition.
    pub fn put_deferred(&mut self, caps: Vec<Deferred>) {
        if let Some(d) = &mut self.deferred {
            d.extend(caps);
        }
    }

    /// Writes the captures of every partition, merged into the run's order: by time, by
    /// their event's tie, and by their order within the event.
    pub fn write_merged(&mut self, mut caps: Vec<Deferred>) {
        self.deferred = None;
        caps.sort_unstable_by_key(|c| (c.0, c.1, c.2));
        for (t, _, _, pkt) in caps {
            self.record(t, &pkt);
        }
    }

    /// The trace so far (a complete pcap file).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Records `pkt` starting transmission at `now` from node `node`, if selected, during the
    /// event of tie key `tie`.
    #[inline]
    pub fn capture(&mut self, now: SimTime, tie: u64, node: usize, pkt: &Packet) {
        if now < self.start || now > self.end || !self.nodes[node] {
            return;
        }
        if let Some(f) = &self.flows
            && !f.get(pkt.flow.idx()).copied().unwrap_or(false)
        {
            return;
        }
        if let Some(d) = &mut self.deferred {
            let n = match self.last_key {
                (t, k, n) if t == now && k == tie => n + 1,
                _ => 0,
            };
            self.last_key = (now, tie, n);
            d.push((now, tie, n, *pkt));
            return;
        }
        self.record(now, pkt);
    }

    fn record(&mut self, now: SimTime, pkt: &Packet) {
        let mut hdr = [0u8; 128];
        let (hlen, ip_total) = self.headers(pkt, &mut hdr);
        let frame = 14 + ip_total;
        let incl = if self.full { frame } else { hlen };
        if self.truncated || self.buf.len() + RECORD_HEADER + incl > self.cap {
            self.truncated = true;
            return;
        }
        let ns = now.0 / 1000;
        self.buf
            .extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        self.buf
            .extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&(incl as u32).to_le_bytes());
        self.buf.extend_from_slice(&(frame as u32).to_le_bytes());
        self.buf.extend_from_slice(&hdr[..hlen]);
        self.buf.resize(self.buf.len() + (incl - hlen), 0);
        self.packets += 1;
    }

    /// Writes the synthetic headers of `pkt` into `h`; returns (header bytes, IPv4 total length).
    fn headers(&self, pkt: &Packet, h: &mut [u8; 128]) -> (usize, usize) {
        let payload = pkt.payload as usize;
        // Ethernet II.
        h[0..6].copy_from_slice(&mac(pkt.dst));
        h[6..12].copy_from_slice(&mac(pkt.src));
        h[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        // Transport header after the IPv4 header at 14..34.
        let l4 = 34;
        let (l4_len, ip_proto, l4_payload) = match self.proto {
            Proto::Tcp => {
                let t = &mut h[l4..l4 + 20];
                t[0..2].copy_from_slice(&pkt.sport.to_be_bytes());
                t[2..4].copy_from_slice(&pkt.dport.to_be_bytes());
                let mut fl = 0x10u8; // ACK
                if pkt.kind == PktKind::Data {
                    t[4..8].copy_from_slice(&(pkt.seq as u32).to_be_bytes());
                    fl |= 0x08; // PSH
                } else {
                    t[8..12].copy_from_slice(&(pkt.seq as u32).to_be_bytes());
                    if pkt.ecn & ecn::ECE != 0 {
                        fl |= 0x40;
                    }
                }
                t[12] = 5 << 4;
                t[13] = fl;
                t[14..16].copy_from_slice(&65535u16.to_be_bytes());
                let data = if pkt.kind == PktKind::Data {
                    payload
                } else {
                    0
                };
                (20, 6u8, data)
            }
            Proto::Udp => {
                udp(&mut h[l4..l4 + 8], pkt.sport, pkt.dport, 8 + payload);
                (8, 17u8, payload)
            }
            Proto::Rdma => {
                let bth = l4 + 8;
                let (opcode, extra, data) = match pkt.kind {
                    PktKind::Data => (0x07u8, 0usize, payload),
                    PktKind::Ack | PktKind::Nack => (0x11, 4, 0),
                    PktKind::Cnp => (0x81, 16, 0),
                };
                let b = &mut h[bth..bth + 12 + extra];
                b[0] = opcode;
                b[1] = 0; // SE 0, MigReq 0, pad 0, TVer 0
                b[2..4].copy_from_slice(&0xffffu16.to_be_bytes()); // default P_Key
                let qp = (pkt.flow.0 + QP_BASE) & 0x00ff_ffff;
                b[5..8].copy_from_slice(&qp.to_be_bytes()[1..4]);
                let psn = (pkt.seq as u32) & 0x00ff_ffff;
                b[9..12].copy_from_slice(&psn.to_be_bytes()[1..4]);
                if matches!(pkt.kind, PktKind::Ack | PktKind::Nack) {
                    // AETH: syndrome (ACK: 0x1f = unlimited credit; NAK: 0x60, PSN sequence
                    // error), then the MSN.
                    b[12] = if pkt.kind == PktKind::Nack {
                        0x60
                    } else {
                        0x1f
                    };
                }
                let udp_len = 8 + 12 + extra + data + 4; // + ICRC
                udp(&mut h[l4..l4 + 8], pkt.sport, ROCE_PORT, udp_len);
                (8 + 12 + extra, 17u8, data + 4)
            }
        };
        let ip_total = 20 + l4_len + l4_payload;
        let ip = &mut h[14..34];
        ip[0] = 0x45;
        let dscp = (7 - pkt.prio.min(7)) << 3;
        let ecn_bits = if pkt.ce() {
            3
        } else if pkt.ecn & ecn::ECT != 0 {
            2
        } else {
            0
        };
        ip[1] = (dscp << 2) | ecn_bits;
        ip[2..4].copy_from_slice(&(ip_total.min(65535) as u16).to_be_bytes());
        ip[6] = 0x40; // don't fragment
        ip[8] = 64;
        ip[9] = ip_proto;
        ip[12..16].copy_from_slice(&ipv4(pkt.src));
        ip[16..20].copy_from_slice(&ipv4(pkt.dst));
        (l4 + l4_len, ip_total)
    }
}

fn udp(u: &mut [u8], sport: u16, dport: u16, len: usize) {
    u[0..2].copy_from_slice(&sport.to_be_bytes());
    u[2..4].copy_from_slice(&dport.to_be_bytes());
    u[4..6].copy_from_slice(&(len.min(65535) as u16).to_be_bytes());
}

/// The IPv4 address of host `h`: `10.a.b.c` with `h = a*65536 + b*256 + c`.
pub fn ipv4(h: u32) -> [u8; 4] {
    [10, (h >> 16) as u8, (h >> 8) as u8, h as u8]
}

fn mac(h: u32) -> [u8; 6] {
    let b = h.to_be_bytes();
    [0x02, 0, b[0], b[1], b[2], b[3]]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, PortId};
    use crate::net::packet::Hdr;

    fn pkt(kind: PktKind) -> Packet {
        Packet {
            flow: FlowId(7),
            src: 1,
            dst: 258,
            seq: 1460 * 3,
            hdr: Hdr::NONE,
            ts: SimTime::ZERO,
            size: 1500,
            payload: if kind == PktKind::Data { 1460 } else { 0 },
            sport: 1234,
            dport: 80,
            in_port: PortId(0),
            kind,
            prio: 1,
            ecn: ecn::ECT | ecn::CE,
            flags: 0,
            uid: 0,
        }
    }

    #[test]
    fn record_layout_and_fields() {
        let mut w = PcapWriter::new(&PcapConfig::default(), Proto::Tcp, 4);
        w.capture(SimTime(1_500_000_000_123_456), 0, 0, &pkt(PktKind::Data));
        let b = w.bytes();
        assert_eq!(&b[0..4], &0xa1b2_3c4du32.to_le_bytes());
        let r = &b[GLOBAL_HEADER..];
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), 1500);
        assert_eq!(u32::from_le_bytes(r[4..8].try_into().unwrap()), 123); // ns
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 54);
        assert_eq!(
            u32::from_le_bytes(r[12..16].try_into().unwrap()),
            14 + 40 + 1460
        );
        let f = &r[16..];
        assert_eq!(&f[26..30], &[10, 0, 0, 1]);
        assert_eq!(&f[30..34], &[10, 0, 1, 2]);
        assert_eq!(f[15], (6 << 3 << 2) | 3, "CS6 and CE");
        assert_eq!(u32::from_be_bytes(f[38..42].try_into().unwrap()), 4380);
    }

    #[test]
    fn filters_and_cap() {
        let cfg = PcapConfig {
            nodes: vec![2],
            flows: vec![7],
            start: SimTime(10),
            end: Some(SimTime(20)),
            max_bytes: Bytes(24 + 2 * (16 + 54)),
            full_frames: None,
        };
        let mut w = PcapWriter::new(&cfg, Proto::Tcp, 4);
        let p = pkt(PktKind::Data);
        w.capture(SimTime(15), 0, 1, &p); // other node
        w.capture(SimTime(5), 0, 2, &p); // before the window
        w.capture(SimTime(25), 0, 2, &p); // after it
        let mut q = p;
        q.flow = FlowId(8);
        w.capture(SimTime(15), 0, 2, &q); // other flow
        assert_eq!(w.packets, 0);
        for _ in 0..3 {
            w.capture(SimTime(15), 0, 2, &p);
        }
        assert_eq!(w.packets, 2);
        assert!(w.truncated);
        assert_eq!(w.bytes().len(), 24 + 2 * 70);
    }

    #[test]
    fn roce_headers() {
        let cfg = PcapConfig {
            full_frames: Some(false),
            ..Default::default()
        };
        let mut w = PcapWriter::new(&cfg, Proto::Rdma, 4);
        w.capture(SimTime::ZERO, 0, 0, &pkt(PktKind::Data));
        w.capture(SimTime::ZERO, 0, 0, &pkt(PktKind::Nack));
        let b = w.bytes();
        let f = &b[GLOBAL_HEADER + 16..];
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), ROCE_PORT);
        assert_eq!(f[42], 0x07);
        assert_eq!(&f[47..50], &[0, 1, 7], "destination QP");
        let g = &b[GLOBAL_HEADER + 16 + 54 + 16..];
        assert_eq!(g[42], 0x11);
        assert_eq!(g[54], 0x60, "NAK syndrome");
    }
}
