//! DCTCP (Alizadeh et al., SIGCOMM 2010; PDTCP reconstruction §1.2).
//!
//! Modelled: the sender's estimate of the fraction of marked bytes,
//! `alpha ← (1 − g)·alpha + g·F`, updated once per window of data, where `F` = marked bytes /
//! acknowledged bytes in that window (a duplicate ACK counts one segment, as in Linux); the
//! first window boundary is at sequence 0, as in ns-2, so the first ACK already updates alpha.
//! On an ECN echo, at most once per window (the TCP sender enforces it),
//! `cwnd ← cwnd·(1 − alpha/2)`, `ssthresh ← cwnd`. Growth and loss are Reno's.
//!
//! Not modelled: delayed-ACK state machine for CE (every packet is acknowledged), DCTCP's
//! handling of the ECE bit in the SYN exchange.

use super::{AckFeedback, FlowCtx, SenderView, WindowCc};
use serde::Serialize;

/// DCTCP with gain `g` and initial `alpha`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Dctcp {
    pub g: f64,
    pub init_alpha: f64,
}

/// DCTCP's congestion estimate and its per-window byte counts (also D2TCP's and PDTCP's).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AlphaEstimator {
    pub alpha: f64,
    /// The current window of data ends when the cumulative ACK reaches this sequence.
    pub win_end: u64,
    acked_bytes: u64,
    marked_bytes: u64,
}

impl AlphaEstimator {
    pub fn new(init_alpha: f64) -> Self {
        AlphaEstimator {
            alpha: init_alpha,
            win_end: 0,
            acked_bytes: 0,
            marked_bytes: 0,
        }
    }

    /// Counts one ACK with gain `g`; returns true when it closes a window of data (alpha was
    /// updated and the next window runs up to what is sent now).
    #[inline]
    pub fn on_ack(&mut self, g: f64, fb: AckFeedback, s: &SenderView) -> bool {
        let counted = if fb.newly > 0 { fb.newly } else { s.mss as u64 };
        self.acked_bytes += counted;
        if fb.ece {
            self.marked_bytes += counted;
        }
        if s.snd_una < self.win_end {
            return false;
        }
        if self.acked_bytes > 0 {
            let f = self.marked_bytes as f64 / self.acked_bytes as f64;
            self.alpha = (1.0 - g) * self.alpha + g * f;
        }
        self.acked_bytes = 0;
        self.marked_bytes = 0;
        self.win_end = s.snd_nxt;
        true
    }
}

/// The penalty `alpha^e` of the DCTCP family (exactly `alpha` for `e = 1`).
#[inline]
pub fn penalty(alpha: f64, e: f64) -> f64 {
    if e == 1.0 { alpha } else { alpha.powf(e) }
}

impl WindowCc for Dctcp {
    type State = AlphaEstimator;

    fn state(&self) -> AlphaEstimator {
        AlphaEstimator::new(self.init_alpha)
    }

    #[inline]
    fn on_ack(&self, st: &mut AlphaEstimator, fb: AckFeedback, s: &SenderView, _: &FlowCtx) {
        st.on_ack(self.g, fb, s);
    }

    #[inline]
    fn ecn_penalty(&self, st: &AlphaEstimator) -> Option<f64> {
        Some(st.alpha)
    }

    fn alpha(&self, st: &AlphaEstimator) -> Option<f64> {
        Some(st.alpha)
    }

    fn exponent(&self, _: &AlphaEstimator) -> Option<f64> {
        Some(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(snd_una: u64, snd_nxt: u64) -> SenderView {
        SenderView {
            size: u64::MAX,
            snd_una,
            snd_nxt,
            cwnd: 10.0,
            srtt: None,
            mss: 1000,
        }
    }

    #[test]
    fn alpha_is_the_ewma_of_the_marked_fraction_per_window() {
        let g = 1.0 / 16.0;
        let mut e = AlphaEstimator::new(0.0);
        // The first ACK closes the initial (empty) window: F = 0.
        let fb = |newly, ece| AckFeedback {
            newly,
            ece,
            rtt: crate::units::SimTime::ZERO,
        };
        assert!(e.on_ack(g, fb(1000, false), &view(1000, 8000)));
        assert_eq!(e.alpha, 0.0);
        // The next window runs to 8000: 7 ACKs, 2 marked; a duplicate ACK counts one MSS.
        for i in 0..6u64 {
            assert!(!e.on_ack(g, fb(1000, i == 1 || i == 4), &view(2000 + i * 1000, 8000)));
        }
        assert!(!e.on_ack(g, fb(0, false), &view(7000, 8000)));
        assert!(e.on_ack(g, fb(1000, false), &view(8000, 9000)));
        let want = g * (2.0 / 8.0);
        assert!((e.alpha - want).abs() < 1e-15, "alpha {}", e.alpha);
        assert_eq!(e.win_end, 9000);
    }

    #[test]
    fn penalty_is_alpha_to_the_exponent() {
        assert_eq!(penalty(0.3, 1.0), 0.3);
        assert!((penalty(0.25, 2.0) - 0.0625).abs() < 1e-15);
        assert!((penalty(0.25, 0.5) - 0.5).abs() < 1e-15);
    }
}
