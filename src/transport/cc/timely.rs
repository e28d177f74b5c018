//! TIMELY (Mittal et al., SIGCOMM 2015): RTT-gradient rate control, as the HPCC ns-3 simulator
//! implements it (`CC_MODE 7`, `rdma-hw.cc` HandleAckTimely / UpdateRateTimely).
//!
//! Every data packet carries its send time; the acknowledgement echoes it, so each ACK gives
//! an RTT sample. The rate is updated about once per round trip: on an acknowledgement past
//! the byte that was next to send at the previous update. The first such update only records
//! the RTT. Each later one:
//!
//! * `rtt_diff ← (1−α)·rtt_diff + α·(rtt − last_rtt)` (α weights the new sample), and the
//!   gradient is `rtt_diff / min_rtt`;
//! * `rtt < T_low`: increase; `rtt > T_high`: `R ← R·(1 − β·(1 − T_high/rtt))`; gradient ≤ 0:
//!   increase; else `R ← R·max(0, 1 − β·gradient)`;
//! * an increase adds `R_AI` while fewer than five increases happened in a row, else `R_HAI`
//!   (hyper-active increase), capped at line rate; a decrease is floored at `min_rate` and
//!   resets the count.
//!
//! A rate change does not move an already scheduled send. No window.
//!
//! Not modelled: the paper's per-segment (64 KB) update granularity (the reference updates once
//! per RTT of acknowledged bytes).

use super::{RateAck, RateCc};
use crate::units::SimTime;
use serde::Serialize;

/// TIMELY parameters (rates in bit/s).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Timely {
    /// EWMA weight of a new RTT difference.
    pub alpha: f64,
    /// Multiplicative decrease factor.
    pub beta: f64,
    pub t_low: SimTime,
    pub t_high: SimTime,
    /// The gradient's normaliser.
    pub min_rtt: SimTime,
    pub rai_bps: f64,
    pub rhai_bps: f64,
    pub min_rate_bps: f64,
    /// Increases in a row before hyper-active increase.
    pub hai_after: u32,
}

/// TIMELY state of one queue pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TimelyState {
    line: f64,
    pub rate: f64,
    last_update: u64,
    inc_stage: u32,
    last_rtt: SimTime,
    rtt_diff_ps: f64,
    pub updates: u64,
    pub decreases: u64,
}

impl RateCc for Timely {
    type State = TimelyState;

    fn state(&self, line_bps: f64) -> TimelyState {
        TimelyState {
            line: line_bps,
            rate: line_bps,
            last_update: 0,
            inc_stage: 0,
            last_rtt: SimTime::ZERO,
            rtt_diff_ps: 0.0,
            updates: 0,
            decreases: 0,
        }
    }

    fn on_ack(&self, st: &mut TimelyState, a: &RateAck) -> bool {
        if a.ack_bytes <= st.last_update {
            return false;
        }
        let rtt = a.rtt;
        if st.last_update != 0 {
            st.updates += 1;
            let new_diff = rtt.0 as f64 - st.last_rtt.0 as f64;
            let diff = (1.0 - self.alpha) * st.rtt_diff_ps + self.alpha * new_diff;
            let gradient = diff / self.min_rtt.0 as f64;
            let factor = if rtt < self.t_low {
                None
            } else if rtt > self.t_high {
                Some(1.0 - self.beta * (1.0 - self.t_high.0 as f64 / rtt.0 as f64))
            } else if gradient <= 0.0 {
                None
            } else {
                Some((1.0 - self.beta * gradient).max(0.0))
            };
            match factor {
                None => {
                    let step = if st.inc_stage < self.hai_after {
                        self.rai_bps
                    } else {
                        self.rhai_bps
                    };
                    st.rate = (st.rate + step).min(st.line);
                    st.inc_stage += 1;
                }
                Some(c) => {
                    st.rate = (st.rate * c).max(self.min_rate_bps);
                    st.inc_stage = 0;
                    st.decreases += 1;
                }
            }
            st.rtt_diff_ps = diff;
        }
        if a.nxt_bytes > st.last_update {
            st.last_update = a.nxt_bytes;
            st.last_rtt = rtt;
        }
        false
    }

    fn current_rate(&self, st: &TimelyState) -> f64 {
        st.rate
    }

    fn sample(&self, st: &TimelyState) -> (Option<f64>, Option<f64>) {
        (None, Some(st.rate))
    }

    fn counters(&self, st: &TimelyState) -> (u64, u64) {
        (st.updates, st.decreases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc() -> Timely {
        Timely {
            alpha: 0.875,
            beta: 0.8,
            t_low: SimTime::from_us(50),
            t_high: SimTime::from_us(500),
            min_rtt: SimTime::from_us(20),
            rai_bps: 100e6,
            rhai_bps: 500e6,
            min_rate_bps: 1e9,
            hai_after: 5,
        }
    }

    fn ack(ack: u64, nxt: u64, rtt_us: u64) -> RateAck<'static> {
        RateAck {
            now: SimTime::ZERO,
            ack_bytes: ack,
            nxt_bytes: nxt,
            ece: false,
            nack: false,
            rtt: SimTime::from_us(rtt_us),
            int: &[],
        }
    }

    #[test]
    fn gradient_by_hand() {
        let c = cc();
        let mut s = c.state(100e9);
        // First update: records the RTT (60 us) and the boundary.
        c.on_ack(&mut s, &ack(1000, 50_000, 60));
        assert_eq!((s.rate, s.last_update), (100e9, 50_000));
        // ACKs inside the round trip change nothing.
        c.on_ack(&mut s, &ack(40_000, 60_000, 400));
        assert_eq!(s.rate, 100e9);
        // Next round: rtt 80 us, diff = 0.875 · 20 us = 17.5 us, gradient 0.875:
        // R = 100G · (1 − 0.8 · 0.875) = 30G.
        c.on_ack(&mut s, &ack(50_001, 100_000, 80));
        assert!((s.rate - 30e9).abs() < 1.0, "rate {}", s.rate);
        // Next: rtt 70 us: diff = 0.125 · 17.5 + 0.875 · (−10) = −6.5625 us < 0: increase.
        c.on_ack(&mut s, &ack(100_001, 150_000, 70));
        assert!((s.rate - 30.1e9).abs() < 1.0);
        // Below T_low: increase whatever the gradient; after five, hyper-active steps.
        let mut nxt = 150_000;
        for _ in 0..4 {
            c.on_ack(&mut s, &ack(nxt + 1, nxt + 50_000, 40));
            nxt += 50_000;
        }
        assert!((s.rate - 30.5e9).abs() < 1.0);
        c.on_ack(&mut s, &ack(nxt + 1, nxt + 50_000, 40));
        nxt += 50_000;
        assert!((s.rate - 31.0e9).abs() < 1.0, "hyper: {}", s.rate);
        // Above T_high (1 ms): R ← R · (1 − 0.8 · (1 − 0.5)) = 0.6 R.
        let before = s.rate;
        c.on_ack(&mut s, &ack(nxt + 1, nxt + 50_000, 1000));
        assert!((s.rate - 0.6 * before).abs() < 1.0);
        assert_eq!(s.decreases, 2);
    }
}
