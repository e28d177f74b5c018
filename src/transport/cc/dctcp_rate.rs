//! DCTCP on RDMA queue pairs, rate based (the HPCC ns-3 simulator's `CC_MODE 8`,
//! `rdma-hw.cc` HandleAckDctcp), so that a comparison with that simulator's "DCTCP" is like
//! for like. Sequence numbers are payload bytes of the queue pair.
//!
//! Per queue pair: the rate `R` (line rate at start), DCTCP's `alpha` (1 at start), a count of
//! flagged acknowledgements in the current batch, and a congestion-window-reduced (CWR) state.
//! On every acknowledgement:
//!
//! 1. a flagged one (an echoed CE mark) counts;
//! 2. one that acknowledges past the batch boundary closes the batch: the first time it only
//!    sets the boundary to the next byte to send and the batch size to `snd_nxt/mtu + 1`;
//!    afterwards `alpha ← (1−g)·alpha + g·min(1, flagged/batch)`, the boundary moves to
//!    `snd_nxt`, the count resets, the batch size becomes `(snd_nxt − ack)/mtu + 1`;
//! 3. CWR ends once an acknowledgement passes the sequence recorded when it began;
//! 4. a flagged acknowledgement outside CWR cuts `R ← max(min_rate, R·(1 − alpha/2))` and
//!    enters CWR until `snd_nxt`;
//! 5. outside CWR, an acknowledgement that closed a batch adds `R_AI` (capped at line rate).
//!
//! The queue pair's window (`[rdma] window`, one BDP scaled by `R / line` in the reference)
//! bounds the bytes in flight. A rate change does not move an already scheduled send.
//!
//! Not modelled: TCP's slow start and loss reaction (this is a rate controller; loss recovery
//! is the queue pair's go-back-N).

use super::{RateAck, RateCc};
use serde::Serialize;

/// DCTCP-rate parameters (rates in bit/s).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct DctcpRate {
    /// Alpha gain g.
    pub g: f64,
    /// Additive increase per batch.
    pub rai_bps: f64,
    pub min_rate_bps: f64,
    /// Payload bytes per packet (batch sizes are in packets).
    pub mtu: u32,
}

/// DCTCP-rate state of one queue pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DctcpRateState {
    line: f64,
    pub rate: f64,
    pub alpha: f64,
    last_update: u64,
    ecn_cnt: u64,
    batch: u64,
    cwr: bool,
    high_seq: u64,
    pub flagged: u64,
    pub cuts: u64,
}

impl RateCc for DctcpRate {
    type State = DctcpRateState;

    fn state(&self, line_bps: f64) -> DctcpRateState {
        DctcpRateState {
            line: line_bps,
            rate: line_bps,
            alpha: 1.0,
            last_update: 0,
            ecn_cnt: 0,
            batch: 0,
            cwr: false,
            high_seq: 0,
            flagged: 0,
            cuts: 0,
        }
    }

    fn on_ack(&self, st: &mut DctcpRateState, a: &RateAck) -> bool {
        let mtu = self.mtu as u64;
        st.ecn_cnt += a.ece as u64;
        st.flagged += a.ece as u64;
        let mut new_batch = false;
        if a.ack_bytes > st.last_update {
            new_batch = true;
            if st.last_update == 0 {
                st.last_update = a.nxt_bytes;
                st.batch = a.nxt_bytes / mtu + 1;
            } else {
                let frac = (st.ecn_cnt as f64 / st.batch as f64).min(1.0);
                st.alpha = (1.0 - self.g) * st.alpha + self.g * frac;
                st.last_update = a.nxt_bytes;
                st.ecn_cnt = 0;
                st.batch = a.nxt_bytes.saturating_sub(a.ack_bytes) / mtu + 1;
            }
        }
        if st.cwr && a.ack_bytes > st.high_seq {
            st.cwr = false;
        }
        if a.ece && !st.cwr {
            st.rate = (st.rate * (1.0 - st.alpha / 2.0)).max(self.min_rate_bps);
            st.cwr = true;
            st.high_seq = a.nxt_bytes;
            st.cuts += 1;
        }
        if !st.cwr && new_batch {
            st.rate = (st.rate + self.rai_bps).min(st.line);
        }
        false
    }

    fn current_rate(&self, st: &DctcpRateState) -> f64 {
        st.rate
    }

    fn sample(&self, st: &DctcpRateState) -> (Option<f64>, Option<f64>) {
        (Some(st.alpha), Some(st.rate))
    }

    fn counters(&self, st: &DctcpRateState) -> (u64, u64) {
        (st.flagged, st.cuts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimTime;

    fn ack(ack: u64, nxt: u64, ece: bool) -> RateAck<'static> {
        RateAck {
            now: SimTime::ZERO,
            ack_bytes: ack,
            nxt_bytes: nxt,
            ece,
            nack: false,
            rtt: SimTime::ZERO,
            int: &[],
        }
    }

    #[test]
    fn alpha_and_rate_by_hand() {
        let cc = DctcpRate {
            g: 1.0 / 16.0,
            rai_bps: 615e6,
            min_rate_bps: 1e9,
            mtu: 1000,
        };
        let mut s = cc.state(100e9);
        // First ACK (1000 acknowledged, 10 000 sent): the first batch only sets the boundary;
        // unflagged, outside CWR, it closed a batch: +R_AI, capped at line rate.
        cc.on_ack(&mut s, &ack(1000, 10_000, false));
        assert_eq!((s.last_update, s.batch, s.rate), (10_000, 11, 100e9));
        // A flagged ACK inside the batch: counted; cut R by alpha/2 = 1/2; CWR until 12 000.
        cc.on_ack(&mut s, &ack(2000, 12_000, true));
        assert_eq!(s.rate, 50e9);
        assert_eq!(s.alpha, 1.0);
        // Two more flagged in CWR: counted, no further cut.
        cc.on_ack(&mut s, &ack(3000, 13_000, true));
        cc.on_ack(&mut s, &ack(4000, 14_000, true));
        assert_eq!((s.ecn_cnt, s.rate, s.cuts), (3, 50e9, 1));
        // The ACK past 10 000 closes the batch: alpha = 15/16 + 1/16 · 3/11; batch = (15000 −
        // 11000)/1000 + 1 = 5; still in CWR (11 000 < 12 000... but > high_seq? no: 12 000).
        cc.on_ack(&mut s, &ack(11_000, 15_000, false));
        let a = 15.0 / 16.0 + 3.0 / 11.0 / 16.0;
        assert!((s.alpha - a).abs() < 1e-12);
        assert_eq!((s.batch, s.rate), (5, 50e9));
        // Past 12 000: CWR ends; not a new batch (boundary 15 000): no increase yet.
        cc.on_ack(&mut s, &ack(12_001, 15_000, false));
        assert_eq!(s.rate, 50e9);
        // Past 15 000: a new batch, no flags: alpha decays, +R_AI.
        cc.on_ack(&mut s, &ack(15_001, 20_000, false));
        assert!((s.alpha - a * 15.0 / 16.0).abs() < 1e-12);
        assert_eq!(s.rate, 50e9 + 615e6);
        // The floor.
        let mut t = cc.state(100e9);
        for i in 0..200u64 {
            cc.on_ack(&mut t, &ack(i * 1000 + 1, i * 1000 + 2, true));
        }
        assert_eq!(t.rate, 1e9);
    }
}
