//! IRN loss recovery for RoCE queue pairs (Mittal et al., "Revisiting Network Support for
//! RDMA", SIGCOMM 2018): selective repeat instead of go-back-N, so that the fabric need not be
//! lossless.
//!
//! * Receiver: an out-of-order packet is kept (a bitmap of the PSNs received above the
//!   expected one) and answered by a NACK that carries both the cumulative acknowledgement
//!   (the expected PSN) and the PSN that arrived (a selective acknowledgement of one packet);
//!   an in-order packet advances the expected PSN past every packet already held and is
//!   acknowledged cumulatively.
//! * Sender: the first NACK starts loss recovery, whose end is the highest PSN sent so far;
//!   in recovery a packet is lost when a higher PSN was selectively acknowledged and it was
//!   not, and lost packets are retransmitted (each once per recovery, lowest first) before any
//!   new packet; recovery ends when the cumulative acknowledgement passes its end.
//! * BDP flow control: the PSNs sent and not cumulatively acknowledged are capped at
//!   `bdp_cap` packets (the paper's BDP-FC), which also bounds both bitmaps.
//! * Timeouts: `rto_low` when at most `low_pkts` packets are in flight, `rto_high` otherwise
//!   (the paper's RTO_low / RTO_high with N = 3); a timeout treats every packet in flight that
//!   was not selectively acknowledged as lost.
//!
//! Not modelled: the NIC's memory for the bitmaps (unbounded here apart from the BDP cap),
//! the paper's extensions for read, atomic and send/receive verbs (only write-like messages
//! whose packets place directly), and a lost retransmission inside one recovery episode is
//! recovered by the timeout, as in the paper.

use crate::units::SimTime;
use serde::Serialize;
use std::collections::VecDeque;

/// Parameters of IRN loss recovery (`[irn]`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct IrnParams {
    /// Timeout when at most `low_pkts` packets are in flight.
    pub rto_low: SimTime,
    /// Timeout otherwise.
    pub rto_high: SimTime,
    /// N: the in-flight packet count up to which `rto_low` applies.
    pub low_pkts: u64,
    /// BDP-FC: PSNs sent and not cumulatively acknowledged, at most this many packets.
    pub bdp_cap: u64,
}

impl IrnParams {
    /// The timeout for `in_flight` packets sent and not acknowledged.
    pub fn rto(&self, in_flight: u64) -> SimTime {
        if in_flight <= self.low_pkts {
            self.rto_low
        } else {
            self.rto_high
        }
    }
}

/// A set of PSNs at or above a moving base, as a bitmap of 64-bit words.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PsnBitmap {
    /// PSN of bit 0 of the first word (a multiple of 64).
    base: u64,
    words: VecDeque<u64>,
}

impl PsnBitmap {
    pub fn contains(&self, psn: u64) -> bool {
        if psn < self.base {
            return false;
        }
        let i = ((psn - self.base) / 64) as usize;
        self.words
            .get(i)
            .is_some_and(|w| (w >> (psn % 64)) & 1 == 1)
    }

    pub fn insert(&mut self, psn: u64) {
        if self.words.is_empty() {
            self.base = psn / 64 * 64;
        }
        while psn < self.base {
            self.words.push_front(0);
            self.base -= 64;
        }
        let i = ((psn - self.base) / 64) as usize;
        if i >= self.words.len() {
            self.words.resize(i + 1, 0);
        }
        self.words[i] |= 1 << (psn % 64);
    }

    /// Forgets every PSN below `psn`.
    pub fn forget_below(&mut self, psn: u64) {
        while !self.words.is_empty() && self.base + 64 <= psn {
            self.words.pop_front();
            self.base += 64;
        }
        if self.words.is_empty() {
            self.base = psn / 64 * 64;
        } else if psn > self.base {
            self.words[0] &= !((1u64 << (psn - self.base)) - 1);
        }
    }

    /// The lowest PSN in `[from, to)` not in the set.
    pub fn first_absent(&self, from: u64, to: u64) -> Option<u64> {
        let mut psn = from;
        while psn < to {
            if psn < self.base {
                return Some(psn);
            }
            let i = ((psn - self.base) / 64) as usize;
            let Some(&w) = self.words.get(i) else {
                return Some(psn);
            };
            let holes = !w >> (psn % 64);
            if holes != 0 {
                let p = psn + holes.trailing_zeros() as u64;
                return (p < to).then_some(p);
            }
            psn = (psn / 64 + 1) * 64;
        }
        None
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
}

/// The sender's IRN state beside the queue pair's PSN pointers.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct IrnSender {
    /// BDP-FC: at most this many PSNs sent and not cumulatively acknowledged.
    pub cap: u64,
    /// PSNs selectively acknowledged, at or above the cumulative point.
    pub sacked: PsnBitmap,
    /// In loss recovery until the cumulative acknowledgement passes this PSN.
    pub recovery_end: Option<u64>,
    /// Retransmissions of this recovery go on from here.
    pub retx_next: u64,
    /// Packets below this PSN and not selectively acknowledged are lost (in recovery).
    pub lost_below: u64,
}

impl IrnSender {
    /// The next lost packet to retransmit, given the cumulative point `una`.
    pub fn next_lost(&self, una: u64) -> Option<u64> {
        self.recovery_end?;
        self.sacked
            .first_absent(self.retx_next.max(una), self.lost_below)
    }

    /// The cumulative acknowledgement moved to `una` (`high_tx`: one above the highest PSN
    /// sent).
    pub fn on_cumulative(&mut self, una: u64) {
        self.sacked.forget_below(una);
        if self.recovery_end.is_some_and(|end| una > end) {
            self.recovery_end = None;
        }
    }

    /// A NACK selectively acknowledged `sack` (cumulative point `una`, highest PSN sent
    /// `high_tx - 1`).
    pub fn on_sack(&mut self, sack: u64, una: u64, high_tx: u64) {
        if sack >= una && sack < high_tx {
            self.sacked.insert(sack);
            self.lost_below = self.lost_below.max(sack);
        }
        if self.recovery_end.is_none() {
            self.recovery_end = Some(high_tx.saturating_sub(1));
            self.retx_next = una;
        }
    }

    /// A timeout: every packet in flight not selectively acknowledged is lost.
    pub fn on_timeout(&mut self, una: u64, high_tx: u64) {
        self.recovery_end = Some(high_tx.saturating_sub(1));
        self.retx_next = una;
        self.lost_below = high_tx;
    }
}

/// What an IRN receiver answers a data packet with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrnReply {
    /// Cumulative acknowledgement: the next expected PSN; `new` when the packet was not held
    /// before.
    Ack { expected: u64, new: bool },
    /// Out of order and kept: the expected PSN and the PSN that arrived.
    Nack { expected: u64, sack: u64 },
}

/// The receiver's IRN state: packets held above the expected PSN.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct IrnReceiver {
    pub held: PsnBitmap,
}

impl IrnReceiver {
    /// Packet `psn` arrives while `expected` is the next in-order PSN; updates `expected`.
    pub fn on_data(&mut self, psn: u64, expected: &mut u64) -> IrnReply {
        if psn == *expected {
            let far = u64::MAX;
            *expected = self.held.first_absent(psn + 1, far).unwrap_or(far);
            self.held.forget_below(*expected);
            IrnReply::Ack {
                expected: *expected,
                new: true,
            }
        } else if psn < *expected || self.held.contains(psn) {
            IrnReply::Ack {
                expected: *expected,
                new: false,
            }
        } else {
            self.held.insert(psn);
            IrnReply::Nack {
                expected: *expected,
                sack: psn,
            }
        }
    }
}

/// An IRN NACK's sequence field: the cumulative acknowledgement in the low 32 bits, the
/// selectively acknowledged PSN in the high 32 (both are below 2^32 in any run: 4 G packets
/// per queue pair).
pub fn nack_seq(expected: u64, sack: u64) -> u64 {
    debug_assert!(expected < 1 << 32 && sack < 1 << 32, "PSN beyond 32 bits");
    expected | (sack << 32)
}

/// The (cumulative, selective) acknowledgements of an IRN NACK's sequence field.
pub fn nack_fields(seq: u64) -> (u64, u64) {
    (seq & 0xFFFF_FFFF, seq >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_set_forget_and_holes() {
        let mut b = PsnBitmap::default();
        for p in [3, 4, 6, 70, 130] {
            b.insert(p);
        }
        assert!(b.contains(4) && b.contains(130) && !b.contains(5) && !b.contains(2));
        assert_eq!(b.first_absent(3, 200), Some(5));
        assert_eq!(b.first_absent(6, 200), Some(7));
        assert_eq!(b.first_absent(3, 5), None);
        assert_eq!(b.first_absent(70, 71), None);
        assert_eq!(b.first_absent(0, 3), Some(0));
        b.forget_below(6);
        assert!(!b.contains(4) && b.contains(6));
        b.forget_below(129);
        assert!(!b.contains(70) && b.contains(130));
        b.forget_below(131);
        assert!(b.is_empty());
        // A PSN below the first one inserted extends the bitmap downwards.
        let mut d = PsnBitmap::default();
        d.insert(130);
        d.insert(5);
        assert!(d.contains(5) && d.contains(130) && !d.contains(64));
        assert_eq!(d.first_absent(5, 200), Some(6));
        assert_eq!(d.first_absent(0, 200), Some(0));
        // A bitmap that emptied restarts at any PSN.
        b.insert(1_000_003);
        assert!(b.contains(1_000_003));
        assert_eq!(b.first_absent(1_000_003, 1_000_010), Some(1_000_004));
    }

    #[test]
    fn receiver_holds_out_of_order_packets_and_jumps() {
        let mut r = IrnReceiver::default();
        let mut e = 0;
        assert_eq!(
            r.on_data(0, &mut e),
            IrnReply::Ack {
                expected: 1,
                new: true
            }
        );
        // 1 is lost: 2, 3, 5 are kept, each NACKed with the cumulative point and itself.
        for p in [2, 3, 5] {
            assert_eq!(
                r.on_data(p, &mut e),
                IrnReply::Nack {
                    expected: 1,
                    sack: p
                }
            );
        }
        // A duplicate of a held packet is acknowledged, not new.
        assert_eq!(
            r.on_data(3, &mut e),
            IrnReply::Ack {
                expected: 1,
                new: false
            }
        );
        // The retransmission of 1 completes 1..=3; 4 is still missing.
        assert_eq!(
            r.on_data(1, &mut e),
            IrnReply::Ack {
                expected: 4,
                new: true
            }
        );
        assert_eq!(
            r.on_data(4, &mut e),
            IrnReply::Ack {
                expected: 6,
                new: true
            }
        );
        assert!(r.held.is_empty());
    }

    #[test]
    fn sender_retransmits_only_the_holes_then_leaves_recovery() {
        let mut s = IrnSender::default();
        // PSNs 0..10 sent; 1 and 4 lost; NACKs for 2, 3, 5 arrive with cumulative point 1.
        let high = 10;
        s.on_sack(2, 1, high);
        assert_eq!(s.recovery_end, Some(9));
        assert_eq!(s.next_lost(1), Some(1));
        s.on_sack(3, 1, high);
        s.on_sack(5, 1, high);
        // Lost: 1 and 4 (below the highest selective acknowledgement, not acknowledged).
        assert_eq!(s.next_lost(1), Some(1));
        s.retx_next = 2;
        assert_eq!(s.next_lost(1), Some(4));
        s.retx_next = 5;
        assert_eq!(s.next_lost(1), None, "6..9 are not known lost");
        s.on_cumulative(4);
        assert!(s.recovery_end.is_some());
        s.on_cumulative(10);
        assert_eq!(s.recovery_end, None);
        assert_eq!(s.next_lost(10), None);
    }

    #[test]
    fn timeout_marks_everything_unacknowledged_lost() {
        let mut s = IrnSender::default();
        s.on_sack(6, 2, 8);
        s.on_timeout(2, 8);
        let mut lost = Vec::new();
        while let Some(p) = s.next_lost(2) {
            lost.push(p);
            s.retx_next = p + 1;
        }
        assert_eq!(lost, vec![2, 3, 4, 5, 7]);
    }

    #[test]
    fn nack_fields_round_trip() {
        assert_eq!(
            nack_fields(nack_seq(17, 4_000_000_000)),
            (17, 4_000_000_000)
        );
    }

    #[test]
    fn rto_low_for_few_packets() {
        let p = IrnParams {
            rto_low: SimTime::from_us(100),
            rto_high: SimTime::from_us(320),
            low_pkts: 3,
            bdp_cap: 100,
        };
        assert_eq!(p.rto(3), SimTime::from_us(100));
        assert_eq!(p.rto(4), SimTime::from_us(320));
    }
}
