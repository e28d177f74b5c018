//! PDTCP (PDTCP reconstruction §1.3, reconstructed): DCTCP with a deadline-priority penalty.
//!
//! Modelled: DCTCP's `alpha` ([`super::dctcp`]) and, on an ECN echo, `cwnd ← cwnd·(1 − P/2)`
//! with `P = alpha^p`. The priority exponent `p = clip(RD/RA, 0.5, 2)` compares the rate the
//! flow still needs, `RD = B_rem/(T_dl − now)`, with the rate it achieved,
//! `RA = B_acked/(now − t0)`; it is recomputed with alpha, once per window, holds until the next
//! window, and is 1 until the first ACK and for flows without a deadline (pure DCTCP). With the
//! early flip on, once `now ≥ T_dl` or `RD > C_host` the flow drops to `p = 0.5` for good.
//! Alternatives (switchable, [`ExponentPolicy`]): D2TCP's `Tc/D`, or `RD/C_host`; a fixed `p`
//! for the analysis check.
//!
//! Not modelled: anything of PDTCP the reconstruction could not recover from the paper (see
//! `docs/reconstruction/pdtcp.md` and `docs/reproduction/pdtcp.md`).

use super::d2tcp::{clip, tc_over_d};
use super::dctcp::{AlphaEstimator, penalty};
use super::{AckFeedback, FlowCtx, SenderView, WindowCc};
use crate::units::SimTime;
use serde::Serialize;

/// How PDTCP computes its priority exponent (PDTCP reconstruction §1.3; the alternatives are switchable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ExponentPolicy {
    /// `p = RD/RA`: rate needed over rate achieved since the start (the recommended form).
    #[default]
    RdOverRa,
    /// D2TCP's `Tc/D` (instantaneous-rate version).
    TcOverD,
    /// `RD/C_host`: urgency relative to the host line rate.
    RdOverChost,
}

/// PDTCP: penalty `alpha^p`; `fixed_p` pins the exponent (analysis check).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Pdtcp {
    pub g: f64,
    pub init_alpha: f64,
    pub policy: ExponentPolicy,
    pub flip: bool,
    pub fixed_p: Option<f64>,
}

/// A PDTCP flow's state: DCTCP's estimate, the current exponent `p`, and when the early flip
/// happened.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PdtcpState {
    pub est: AlphaEstimator,
    pub p: f64,
    pub flipped_at: Option<SimTime>,
}

impl Pdtcp {
    /// The priority exponent `p` for the next window (may flip the flow for good).
    pub fn priority(&self, flipped_at: &mut Option<SimTime>, s: &SenderView, ctx: &FlowCtx) -> f64 {
        if let Some(fp) = self.fixed_p {
            return fp;
        }
        let Some(dl) = ctx.deadline else {
            return 1.0;
        };
        if flipped_at.is_some() {
            return 0.5;
        }
        let b_rem = (s.size - s.snd_una) as f64;
        let left = dl.0 as f64 - ctx.now.0 as f64;
        let rd = if left > 0.0 {
            b_rem / left
        } else {
            f64::INFINITY
        };
        if self.flip && (left <= 0.0 || rd > ctx.host_bytes_per_ps) {
            *flipped_at = Some(ctx.now);
            return 0.5;
        }
        if left <= 0.0 {
            return 0.5;
        }
        match self.policy {
            ExponentPolicy::RdOverRa => {
                let elapsed = (ctx.now - ctx.start).0 as f64;
                if s.snd_una == 0 || elapsed <= 0.0 {
                    1.0
                } else {
                    clip(rd / (s.snd_una as f64 / elapsed))
                }
            }
            ExponentPolicy::TcOverD => tc_over_d(s, left),
            ExponentPolicy::RdOverChost => clip(rd / ctx.host_bytes_per_ps),
        }
    }
}

impl WindowCc for Pdtcp {
    type State = PdtcpState;

    fn state(&self) -> PdtcpState {
        PdtcpState {
            est: AlphaEstimator::new(self.init_alpha),
            p: 1.0,
            flipped_at: None,
        }
    }

    #[inline]
    fn on_ack(&self, st: &mut PdtcpState, fb: AckFeedback, s: &SenderView, ctx: &FlowCtx) {
        if st.est.on_ack(self.g, fb, s) {
            st.p = self.priority(&mut st.flipped_at, s, ctx);
        }
    }

    #[inline]
    fn ecn_penalty(&self, st: &PdtcpState) -> Option<f64> {
        Some(penalty(st.est.alpha, st.p))
    }

    fn alpha(&self, st: &PdtcpState) -> Option<f64> {
        Some(st.est.alpha)
    }

    fn exponent(&self, st: &PdtcpState) -> Option<f64> {
        Some(st.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(policy: ExponentPolicy) -> Pdtcp {
        Pdtcp {
            g: 1.0 / 16.0,
            init_alpha: 0.0,
            policy,
            flip: true,
            fixed_p: None,
        }
    }

    fn ctx_at(now_us: u64, deadline_us: u64) -> FlowCtx {
        FlowCtx {
            now: SimTime::from_us(now_us),
            start: SimTime::ZERO,
            deadline: Some(SimTime::from_us(deadline_us)),
            host_bytes_per_ps: 10e9 / 8e12,
        }
    }

    fn acked(snd_una: u64) -> SenderView {
        SenderView {
            size: 100_000,
            snd_una,
            snd_nxt: snd_una,
            cwnd: 10.0,
            srtt: None,
            mss: 1000,
        }
    }

    #[test]
    fn priority_on_hand_computed_cases() {
        let c = cc(ExponentPolicy::RdOverRa);
        let mut flip = None;
        // At 2 ms of a 10 ms deadline: RA = acked / 2 ms, RD = left / 8 ms.
        for (a, want) in [
            (20_000, 1.0),
            (10_000, 2.0),
            (50_000, 0.5),
            (16_000, 84.0 / 8.0 / 8.0),
        ] {
            let e = c.priority(&mut flip, &acked(a), &ctx_at(2_000, 10_000));
            assert!((e - f64::min(want, 2.0)).abs() < 1e-12, "acked {a}: p {e}");
        }
        // Before any byte is acknowledged, and without a deadline: p = 1.
        assert_eq!(c.priority(&mut flip, &acked(0), &ctx_at(10, 10_000)), 1.0);
        let mut ctx = ctx_at(2_000, 10_000);
        ctx.deadline = None;
        assert_eq!(c.priority(&mut flip, &acked(10_000), &ctx), 1.0);
        // The RD/C_host alternative: RD = 90 KB / 8 ms = 11.25 MB/s against 1.25 GB/s -> 0.5.
        let c2 = cc(ExponentPolicy::RdOverChost);
        assert_eq!(
            c2.priority(&mut flip, &acked(10_000), &ctx_at(2_000, 10_000)),
            0.5
        );
        assert!(flip.is_none());
        // A fixed p pins it.
        let fixed = Pdtcp {
            fixed_p: Some(1.5),
            ..c
        };
        assert_eq!(
            fixed.priority(&mut flip, &acked(0), &ctx_at(5_000, 5_000)),
            1.5
        );
    }

    #[test]
    fn flip_fires_exactly_when_its_condition_holds_and_sticks() {
        let c = cc(ExponentPolicy::RdOverRa);
        let mut flip = None;
        // 100 KB at 1.25 B/ns needs exactly 80 us: not beyond line rate, no flip.
        let e = c.priority(&mut flip, &acked(0), &ctx_at(1_000, 1_080));
        assert!(flip.is_none(), "flipped with RD = C_host");
        assert_eq!(e, 1.0);
        // 79.999 us left: RD > C_host, flip.
        let mut t = ctx_at(1_000, 1_080);
        t.now += SimTime::from_ns(1);
        assert_eq!(c.priority(&mut flip, &acked(0), &t), 0.5);
        assert_eq!(flip, Some(t.now));
        // Sticky: plenty of time later changes nothing.
        assert_eq!(
            c.priority(&mut flip, &acked(99_000), &ctx_at(2_000, 1_000_000)),
            0.5
        );
        // A passed deadline flips too.
        let mut flip = None;
        assert_eq!(
            c.priority(&mut flip, &acked(50_000), &ctx_at(5_000, 5_000)),
            0.5
        );
        assert!(flip.is_some());
        // With the flip off, a missed deadline still gives the lowest priority but no flag.
        let off = Pdtcp { flip: false, ..c };
        let mut flip = None;
        assert_eq!(
            off.priority(&mut flip, &acked(50_000), &ctx_at(5_000, 5_000)),
            0.5
        );
        assert!(flip.is_none());
    }
}
