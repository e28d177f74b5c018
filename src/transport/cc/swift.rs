//! Swift (Kumar et al., SIGCOMM 2020): delay-based window control for the TCP sender. Every
//! ACK carries an RTT sample (the echoed send time); the window grows while the delay is
//! below a target and shrinks in proportion to the excess, at most once per RTT:
//!
//! * `delay < target`: `cwnd += ai · acked / cwnd` (`ai · acked` below one packet);
//! * otherwise, if the last decrease is at least one RTT old:
//!   `cwnd ← cwnd · max(1 − β·(delay − target)/delay, 1 − max_mdf)`.
//!
//! The target is `base_target` plus flow scaling: `α/√cwnd + β_fs`, clamped to
//! `[0, fs_range]`, with α and β_fs chosen so that it is `fs_range` at `fs_min_cwnd` and 0 at
//! `fs_max_cwnd` (flows with small windows tolerate more delay, which restores fairness).
//! Loss recovery (fast recovery halves the window, as Swift's `1 − max_mdf` = 0.5 does; a
//! timeout restarts from the minimum window) is the TCP sender's. ECN is ignored.
//!
//! RECONSTRUCTION from the paper's description: one delay (no separate fabric and host
//! targets: dcsim models no host delay), no per-hop target scaling (`base_target` is given
//! for the topology), and no windows below one packet (the paper paces them).

use super::{AckFeedback, FlowCtx, Growth, SenderView, WindowCc};
use crate::units::SimTime;
use serde::Serialize;

/// Swift parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Swift {
    /// Additive increase per RTT, in packets.
    pub ai: f64,
    /// Multiplicative decrease factor.
    pub beta: f64,
    /// Largest decrease at once (0.5: at most halve).
    pub max_mdf: f64,
    /// Target delay without flow scaling.
    pub base_target: SimTime,
    /// Largest flow-scaling addition (0: no flow scaling).
    pub fs_range: SimTime,
    pub fs_min_cwnd: f64,
    pub fs_max_cwnd: f64,
}

/// Swift state of one flow.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct SwiftState {
    /// The last RTT sample.
    pub delay: SimTime,
    last_decrease: Option<SimTime>,
    pub decreases: u64,
}

impl Swift {
    /// The target delay for a window of `cwnd` packets.
    pub fn target(&self, cwnd: f64) -> SimTime {
        if self.fs_range == SimTime::ZERO {
            return self.base_target;
        }
        let range = self.fs_range.0 as f64;
        let alpha = range / (1.0 / self.fs_min_cwnd.sqrt() - 1.0 / self.fs_max_cwnd.sqrt());
        let beta = -alpha / self.fs_max_cwnd.sqrt();
        let fs = (alpha / cwnd.sqrt() + beta).clamp(0.0, range);
        self.base_target + SimTime(fs as u64)
    }
}

impl WindowCc for Swift {
    type State = SwiftState;

    fn state(&self) -> SwiftState {
        SwiftState::default()
    }

    #[inline]
    fn on_ack(&self, st: &mut SwiftState, fb: AckFeedback, _s: &SenderView, _ctx: &FlowCtx) {
        st.delay = fb.rtt;
    }

    fn grow(&self, st: &mut SwiftState, cwnd: &mut f64, g: Growth) {
        let segs = g.segs;
        let target = self.target(*cwnd);
        if st.delay < target {
            *cwnd += if *cwnd >= 1.0 {
                self.ai * segs / *cwnd
            } else {
                self.ai * segs
            };
        } else if st.last_decrease.is_none_or(|t| g.now >= t + st.delay) {
            let excess = (st.delay.0 - target.0) as f64 / st.delay.0 as f64;
            *cwnd *= (1.0 - self.beta * excess).max(1.0 - self.max_mdf);
            *cwnd = cwnd.max(1.0);
            st.last_decrease = Some(g.now);
            st.decreases += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc() -> Swift {
        Swift {
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            base_target: SimTime::from_us(20),
            fs_range: SimTime::ZERO,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
        }
    }

    fn ack(s: &mut SwiftState, c: &Swift, now_us: u64, rtt_us: u64) {
        let ctx = FlowCtx {
            now: SimTime::from_us(now_us),
            start: SimTime::ZERO,
            deadline: None,
            host_bytes_per_ps: 1.25e-3,
        };
        let view = SenderView {
            size: u64::MAX,
            snd_una: 0,
            snd_nxt: 0,
            cwnd: 10.0,
            srtt: None,
            mss: 1000,
        };
        let fb = AckFeedback {
            newly: 1000,
            ece: false,
            rtt: SimTime::from_us(rtt_us),
        };
        c.on_ack(s, fb, &view, &ctx);
    }

    fn growth(now_us: u64) -> Growth {
        Growth {
            segs: 1.0,
            ssthresh: 0.0,
            now: SimTime::from_us(now_us),
            srtt: None,
        }
    }

    #[test]
    fn increase_below_target_decrease_above_once_per_rtt() {
        let c = cc();
        let mut s = c.state();
        let mut w = 10.0;
        // Below target: +1/cwnd per acknowledged packet.
        ack(&mut s, &c, 0, 15);
        c.grow(&mut s, &mut w, growth(0));
        assert!((w - 10.1).abs() < 1e-12);
        // 40 us against a 20 us target: cwnd × max(1 − 0.8 · 20/40, 0.5) = × 0.6.
        ack(&mut s, &c, 100, 40);
        c.grow(&mut s, &mut w, growth(100));
        assert!((w - 6.06).abs() < 1e-9, "{w}");
        // Again within one RTT (40 us): no second decrease.
        ack(&mut s, &c, 120, 40);
        c.grow(&mut s, &mut w, growth(120));
        assert!((w - 6.06).abs() < 1e-9);
        // One RTT later, 60 us: 1 − 0.8 · 40/60 = 0.47, but a cut is at most max_mdf (0.5).
        ack(&mut s, &c, 200, 60);
        c.grow(&mut s, &mut w, growth(200));
        assert!((w - 3.03).abs() < 1e-9);
        assert_eq!(s.decreases, 2);
    }

    #[test]
    fn flow_scaling_gives_small_windows_a_larger_target() {
        let c = Swift {
            fs_range: SimTime::from_us(50),
            ..cc()
        };
        assert_eq!(c.target(0.1), SimTime::from_us(70));
        assert_eq!(c.target(100.0), SimTime::from_us(20));
        assert_eq!(c.target(1000.0), SimTime::from_us(20));
        assert!(c.target(1.0) > c.target(10.0));
    }
}
