//! D2TCP (Vamanan et al., SIGCOMM 2012; PDTCP reconstruction §1.4): DCTCP with a deadline-aware penalty.
//!
//! Modelled: DCTCP's `alpha` ([`super::dctcp`]) and, on an ECN echo, `cwnd ← cwnd·(1 − P/2)`
//! with `P = alpha^d`, `d = clip(Tc/D, 0.5, 2)`: `Tc = B·RTT/(0.75·W)` is the time the flow
//! still needs at its current window (B bytes left, W the window in bytes, RTT the smoothed
//! RTT) and `D` the time left to the deadline. `d` is recomputed with alpha, once per window,
//! and holds until the next window; it is 1 until the first ACK, without an RTT sample and for
//! flows without a deadline (pure DCTCP); after a missed deadline it is `missed_d`.
//!
//! Not modelled: the paper's deadline-agnostic fallback knobs beyond `missed_d`.

use super::dctcp::{AlphaEstimator, penalty};
use super::{AckFeedback, FlowCtx, SenderView, WindowCc};
use serde::Serialize;

/// D2TCP: penalty `alpha^d`, `d = clip(Tc/D, 0.5, 2)`; `missed_d` after the deadline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct D2tcp {
    pub g: f64,
    pub init_alpha: f64,
    pub missed_d: f64,
}

/// A D2TCP flow's state: DCTCP's estimate and the current exponent `d`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct D2tcpState {
    pub est: AlphaEstimator,
    pub d: f64,
}

/// `clip(x, 0.5, 2)`, the range of D2TCP's and PDTCP's exponents.
#[inline]
pub fn clip(x: f64) -> f64 {
    x.clamp(0.5, 2.0)
}

/// D2TCP's `clip(Tc/D)` for `left` picoseconds to the deadline (1 without an RTT sample).
pub fn tc_over_d(s: &SenderView, left: f64) -> f64 {
    let b_rem = (s.size - s.snd_una) as f64;
    match s.srtt {
        Some(rtt) if s.cwnd > 0.0 => {
            let w = s.cwnd * s.mss as f64;
            let tc = b_rem * rtt.0 as f64 / (0.75 * w);
            clip(tc / left)
        }
        _ => 1.0,
    }
}

impl D2tcp {
    /// The deadline imminence `d` for the next window.
    pub fn imminence(&self, s: &SenderView, ctx: &FlowCtx) -> f64 {
        match ctx.deadline {
            None => 1.0,
            Some(dl) if ctx.now >= dl => self.missed_d,
            Some(dl) => tc_over_d(s, (dl - ctx.now).0 as f64),
        }
    }
}

impl WindowCc for D2tcp {
    type State = D2tcpState;

    fn state(&self) -> D2tcpState {
        D2tcpState {
            est: AlphaEstimator::new(self.init_alpha),
            d: 1.0,
        }
    }

    #[inline]
    fn on_ack(&self, st: &mut D2tcpState, fb: AckFeedback, s: &SenderView, ctx: &FlowCtx) {
        if st.est.on_ack(self.g, fb, s) {
            st.d = self.imminence(s, ctx);
        }
    }

    #[inline]
    fn ecn_penalty(&self, st: &D2tcpState) -> Option<f64> {
        Some(penalty(st.est.alpha, st.d))
    }

    fn alpha(&self, st: &D2tcpState) -> Option<f64> {
        Some(st.est.alpha)
    }

    fn exponent(&self, st: &D2tcpState) -> Option<f64> {
        Some(st.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimTime;

    pub(crate) fn ctx_at(now_us: u64, deadline_us: u64) -> FlowCtx {
        FlowCtx {
            now: SimTime::from_us(now_us),
            start: SimTime::ZERO,
            deadline: Some(SimTime::from_us(deadline_us)),
            host_bytes_per_ps: 10e9 / 8e12,
        }
    }

    #[test]
    fn imminence_on_hand_computed_cases() {
        let cc = D2tcp {
            g: 1.0 / 16.0,
            init_alpha: 0.0,
            missed_d: 0.5,
        };
        // 100 KB left, RTT 100 us, a window of 10 segments of 1000 B.
        let s = SenderView {
            size: 100_000,
            snd_una: 0,
            snd_nxt: 0,
            cwnd: 10.0,
            srtt: Some(SimTime::from_us(100)),
            mss: 1000,
        };
        // Tc = 100 KB x 100 us / (0.75 x 10 KB) = 1333.3 us.
        let d = cc.imminence(&s, &ctx_at(0, 1_000));
        assert!((d - 1_333.333_333 / 1000.0).abs() < 1e-6, "d {d}");
        assert_eq!(cc.imminence(&s, &ctx_at(0, 10_000)), 0.5);
        assert_eq!(cc.imminence(&s, &ctx_at(0, 500)), 2.0);
        assert_eq!(cc.imminence(&s, &ctx_at(600, 500)), 0.5, "missed deadline");
        let mut nd = ctx_at(0, 0);
        nd.deadline = None;
        assert_eq!(cc.imminence(&s, &nd), 1.0);
        let no_rtt = SenderView { srtt: None, ..s };
        assert_eq!(cc.imminence(&no_rtt, &ctx_at(0, 1_000)), 1.0);
    }
}
