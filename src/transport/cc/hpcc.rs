//! HPCC (Li et al., SIGCOMM 2019): rate and window control from in-band network telemetry, as
//! the HPCC ns-3 simulator implements it (`CC_MODE 3`, `rdma-hw.cc` HandleAckHp, UpdateRateHp,
//! FastReactHp; single rate, `MULTI_RATE 0`).
//!
//! Each data packet collects one telemetry record per switch egress it leaves (time, the
//! port's transmitted bytes, its queue, its line rate); the acknowledgement echoes the stack.
//! On every acknowledgement (`fast_react`), or only on those past the reference byte
//! (otherwise), the sender estimates each hop's utilisation against the records of the
//! previous acknowledgement:
//!
//! `u_i = txRate_i / B_i + min(q_i, q_i') · (R_nic / B_i) / W_base`, with
//! `txRate_i = Δbytes·8/τ_i`, `τ_i` the time between the two records;
//!
//! takes the most loaded hop `U = max u_i` (and its `τ`), smooths
//! `u ← (u·(T − τ) + U·τ)/T` with `τ` capped at the base RTT `T`, and sets
//! `R = R_c / (u/η) + R_AI` when `u/η ≥ 1` or after `mi_thresh` additive steps, else
//! `R = R_c + R_AI`, clamped to `[min_rate, line]`. Only an acknowledgement past the reference
//! byte (the next byte to send at the previous such update) moves the reference rate `R_c` and
//! the stage; the first acknowledgement only stores the records. A rate change moves an already
//! scheduled send (the reference's `ChangeRate`). The queue pair's window is `W_base · R / line`
//! (`[rdma] window` with `var_win`).
//!
//! Not modelled: per-hop rates (`MULTI_RATE 1`), sampled feedback, PINT; the telemetry fields'
//! quantisation (`sim::telemetry`).

use super::{INT_MAX_HOPS, IntHop, RateAck, RateCc};
use crate::units::SimTime;
use serde::Serialize;

/// HPCC parameters (rates in bit/s).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Hpcc {
    /// Target utilisation η.
    pub eta: f64,
    /// Additive increase W_AI, as a rate.
    pub rai_bps: f64,
    pub min_rate_bps: f64,
    /// Additive-increase stages before a multiplicative step (0: always multiplicative).
    pub mi_thresh: u32,
    /// React to every acknowledgement, not only once per round trip.
    pub fast_react: bool,
    /// The base RTT T (the reference: the largest unloaded RTT of the network).
    pub base_rtt: SimTime,
    /// The base window W_base in bytes (the reference: the largest BDP), the queue's
    /// normaliser.
    pub win: u64,
}

/// HPCC state of one queue pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct HpccState {
    line: f64,
    /// The sending rate R.
    pub rate: f64,
    /// The reference rate R_c.
    pub cur_rate: f64,
    pub u: f64,
    last_update: u64,
    inc_stage: u32,
    hops: [IntHop; INT_MAX_HOPS],
    pub updates: u64,
    pub decreases: u64,
}

impl RateCc for Hpcc {
    type State = HpccState;
    const TELEMETRY: bool = true;

    fn state(&self, line_bps: f64) -> HpccState {
        HpccState {
            line: line_bps,
            rate: line_bps,
            cur_rate: line_bps,
            u: 1.0,
            last_update: 0,
            inc_stage: 0,
            hops: [IntHop::default(); INT_MAX_HOPS],
            updates: 0,
            decreases: 0,
        }
    }

    fn on_ack(&self, st: &mut HpccState, a: &RateAck) -> bool {
        let full = a.ack_bytes > st.last_update;
        if !full && !self.fast_react {
            return false;
        }
        let n = a.int.len().min(INT_MAX_HOPS);
        if st.last_update == 0 {
            // First acknowledgement: keep the records, no update.
            st.hops[..n].copy_from_slice(&a.int[..n]);
            st.last_update = a.nxt_bytes;
            return false;
        }
        let mut changed = false;
        if n > 0 {
            let (mut big_u, mut dt) = (0.0f64, 0u64);
            for (i, h) in a.int[..n].iter().enumerate() {
                let prev = st.hops[i];
                let tau = h.time.0.saturating_sub(prev.time.0);
                if tau > 0 {
                    let tx_rate = h.tx_bytes.saturating_sub(prev.tx_bytes) as f64 * 8.0
                        / (tau as f64 * 1e-12);
                    let b = h.rate_bps as f64;
                    let u =
                        tx_rate / b + h.qlen.min(prev.qlen) as f64 * st.line / b / self.win as f64;
                    if u > big_u {
                        big_u = u;
                        dt = tau;
                    }
                }
                st.hops[i] = *h;
            }
            let t = self.base_rtt.0;
            let dt = dt.min(t);
            st.u = (st.u * (t - dt) as f64 + big_u * dt as f64) / t as f64;
            let max_c = st.u / self.eta;
            let (new_rate, new_stage) = if max_c >= 1.0 || st.inc_stage >= self.mi_thresh {
                (st.cur_rate / max_c + self.rai_bps, 0)
            } else {
                (st.cur_rate + self.rai_bps, st.inc_stage + 1)
            };
            let new_rate = new_rate.max(self.min_rate_bps).min(st.line);
            if new_rate < st.rate {
                st.decreases += 1;
            }
            changed = new_rate != st.rate;
            st.rate = new_rate;
            if full {
                st.updates += 1;
                st.cur_rate = new_rate;
                st.inc_stage = new_stage;
            }
        }
        if full && a.nxt_bytes > st.last_update {
            st.last_update = a.nxt_bytes;
        }
        changed
    }

    fn current_rate(&self, st: &HpccState) -> f64 {
        st.rate
    }

    fn sample(&self, st: &HpccState) -> (Option<f64>, Option<f64>) {
        (Some(st.u), Some(st.rate))
    }

    fn counters(&self, st: &HpccState) -> (u64, u64) {
        (st.updates, st.decreases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc() -> Hpcc {
        Hpcc {
            eta: 0.95,
            rai_bps: 40e6,
            min_rate_bps: 1e9,
            mi_thresh: 0,
            fast_react: true,
            base_rtt: SimTime::from_ns(12_480),
            win: 156_000,
        }
    }

    fn hop(t_ns: u64, bytes: u64, q: u64) -> IntHop {
        IntHop {
            time: SimTime::from_ns(t_ns),
            tx_bytes: bytes,
            qlen: q,
            rate_bps: 100_000_000_000,
        }
    }

    fn ack<'a>(ack: u64, nxt: u64, int: &'a [IntHop]) -> RateAck<'a> {
        RateAck {
            now: SimTime::ZERO,
            ack_bytes: ack,
            nxt_bytes: nxt,
            ece: false,
            nack: false,
            rtt: SimTime::ZERO,
            int,
        }
    }

    #[test]
    fn utilisation_and_rate_by_hand() {
        let c = cc();
        let mut s = c.state(100e9);
        // First ACK: stores the records.
        let h0 = [hop(1000, 0, 0), hop(2000, 0, 0)];
        assert!(!c.on_ack(&mut s, &ack(1000, 20_000, &h0)));
        assert_eq!(s.rate, 100e9);
        // 1 us later: hop 0 sent 12 500 B (100 Gbps: u = 1.0) with 15 600 B queued before and
        // after (+ 15 600/156 000 = 0.1): u0 = 1.1; hop 1 sent 6 250 B, empty: u1 = 0.5.
        let h1 = [hop(2000, 12_500, 15_600), hop(3000, 6_250, 0)];
        let h0q = [hop(1000, 0, 15_600), hop(2000, 0, 0)];
        let mut s = c.state(100e9);
        c.on_ack(&mut s, &ack(1000, 20_000, &h0q));
        // Inside the round trip (ack 2 000 < 20 000): fast react, R_c unchanged.
        assert!(c.on_ack(&mut s, &ack(2000, 21_000, &h1)));
        let t = 12_480.0;
        let u = (1.0 * (t - 1000.0) + 1.1 * 1000.0) / t;
        assert!((s.u - u).abs() < 1e-12, "u {}", s.u);
        let r = 100e9 / (u / 0.95) + 40e6;
        assert!(
            (s.rate - r.min(100e9)).abs() < 1.0,
            "rate {} vs {r}",
            s.rate
        );
        assert_eq!(s.cur_rate, 100e9, "a fast reaction leaves R_c");
        // A full update (past 20 000) with the same load moves R_c too.
        let h2 = [hop(3000, 25_000, 15_600), hop(4000, 12_500, 0)];
        c.on_ack(&mut s, &ack(20_001, 40_000, &h2));
        let u2 = (u * (t - 1000.0) + 1.1 * 1000.0) / t;
        assert!((s.u - u2).abs() < 1e-12);
        let r2 = (100e9 / (u2 / 0.95) + 40e6).min(100e9);
        assert!((s.rate - r2).abs() < 1.0);
        assert_eq!(s.cur_rate, s.rate);
        // A lightly loaded path (10 %, no queue): u falls towards 0.1, below η, and the
        // multiplicative step takes the rate back to line rate.
        for k in 1..400u64 {
            let h = [
                hop(3000 + 1000 * k, 25_000 + 1250 * k, 0),
                hop(4000 + 1000 * k, 12_500 + 1250 * k, 0),
            ];
            c.on_ack(&mut s, &ack(20_001 + 1000 * k, 40_000 + 1000 * k, &h));
        }
        assert_eq!(s.rate, 100e9);
        assert!((s.u - 0.1).abs() < 0.01, "u {}", s.u);
        // An idle hop (u = 0) never becomes the most loaded one, so it does not move u (the
        // reference's `u > U` with U starting at 0).
        let h = [hop(1_000_000, 0, 0), hop(1_000_000, 0, 0)];
        let mut z = c.state(100e9);
        c.on_ack(&mut z, &ack(1, 10, &h));
        let h = [hop(1_001_000, 0, 0), hop(1_001_000, 0, 0)];
        c.on_ack(&mut z, &ack(11, 20, &h));
        assert_eq!(z.u, 1.0);
    }
}
