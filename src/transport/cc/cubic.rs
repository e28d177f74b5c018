//! CUBIC (RFC 8312, "CUBIC for Fast Long-Distance Networks", 2018) as a window controller on
//! the NewReno/SACK sender.
//!
//! After a congestion event at window `W_max` the window follows, in congestion avoidance,
//! `W_cubic(t) = C·(t − K)³ + W_max` with `t` the time since the epoch began (the first
//! growth after the event), `C` = 0.4 segments/s³ and `K = ∛((W_max − cwnd₀)/C)` where
//! `cwnd₀` is the window the epoch starts from (`∛(W_max·(1 − β)/C)` in the RFC's case
//! `cwnd₀ = β·W_max`). Each ACK of `segs` segments moves the window by
//! `(W_cubic(t + RTT) − cwnd)/cwnd · segs` towards the curve one RTT ahead (§4.3, §4.4), and
//! never below the TCP-friendly estimate `W_est(t) = β·W_max + 3(1 − β)/(1 + β) · t/RTT`
//! (§4.2). A loss sets `ssthresh = max(β·cwnd, 2)` with `β` = 0.7 (§4.5) and, with fast
//! convergence, lowers `W_max` to `cwnd·(1 + β)/2` when the window had not regained the
//! previous `W_max` (§4.6). A timeout sets `ssthresh` the same way and restarts the epoch
//! (§4.7). Below `ssthresh` the window grows by slow start, which stops at `ssthresh`: the
//! rest of an ACK counts in congestion avoidance (as Linux's `tcp_slow_start`), so an ACK
//! that closes a large hole after a timeout does not throw the window far past `ssthresh`.
//! RTT is the sender's smoothed RTT.
//!
//! Not modelled: HyStart (slow start exits only at `ssthresh` or a loss), the RFC's
//! `cwnd`-validation and application-limited rules, and ECN (CUBIC's scheme is not
//! ECN-capable). In data-center round trips `t` stays far below `K`, so the TCP-friendly
//! region usually sets the pace: CUBIC grows about like Reno there, as the RFC intends.

use super::{Growth, WindowCc};
use crate::units::SimTime;
use serde::Serialize;

/// CUBIC's parameters (`[cubic]`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Cubic {
    /// `C`, segments per second cubed (RFC 8312: 0.4).
    pub c: f64,
    /// `β_cubic`, the window kept at a loss (RFC 8312: 0.7).
    pub beta: f64,
    /// Fast convergence (§4.6).
    pub fast_convergence: bool,
    /// The TCP-friendly region (§4.2).
    pub tcp_friendly: bool,
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendly: true,
        }
    }
}

/// CUBIC's state of one flow.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct CubicState {
    /// The window before the last reduction (`W_max`), segments; 0 before the first.
    pub w_max: f64,
    /// `W_max` before the last reduction, for fast convergence.
    w_last_max: f64,
    /// The current epoch: its start and `K` (seconds).
    epoch: Option<(SimTime, f64)>,
    pub reductions: u64,
}

impl Cubic {
    /// `W_cubic(t)` of an epoch with `K = k` seconds, at `t` seconds into it.
    pub fn w_cubic(&self, w_max: f64, k: f64, t: f64) -> f64 {
        self.c * (t - k).powi(3) + w_max
    }

    /// `K`, seconds: when the curve from `cwnd0` regains `w_max`.
    pub fn k(&self, w_max: f64, cwnd0: f64) -> f64 {
        ((w_max - cwnd0).max(0.0) / self.c).cbrt()
    }

    /// A congestion event at window `cwnd`: `W_max` (with fast convergence) and the new
    /// `ssthresh`.
    fn reduce(&self, st: &mut CubicState, cwnd: f64) -> f64 {
        if self.fast_convergence && cwnd < st.w_last_max {
            st.w_last_max = cwnd;
            st.w_max = cwnd * (1.0 + self.beta) / 2.0;
        } else {
            st.w_last_max = cwnd;
            st.w_max = cwnd;
        }
        st.epoch = None;
        st.reductions += 1;
        (cwnd * self.beta).max(2.0)
    }
}

impl WindowCc for Cubic {
    type State = CubicState;

    fn state(&self) -> CubicState {
        CubicState::default()
    }

    fn grow(&self, st: &mut CubicState, cwnd: &mut f64, mut g: Growth) {
        // Slow start stops at ssthresh; the rest of the ACK counts in congestion avoidance.
        if *cwnd < g.ssthresh {
            let room = g.ssthresh - *cwnd;
            if g.segs <= room {
                *cwnd += g.segs;
                return;
            }
            *cwnd = g.ssthresh;
            g.segs -= room;
        }
        // Before the first loss the curve starts here: W_max is the current window.
        let (start, k) = *st.epoch.get_or_insert_with(|| {
            let w_max = if st.w_max > 0.0 { st.w_max } else { *cwnd };
            st.w_max = w_max;
            (g.now, self.k(w_max, *cwnd))
        });
        let rtt = g.srtt.map_or(0.0, |r| r.0 as f64 * 1e-12);
        let t = (g.now.0 - start.0) as f64 * 1e-12;
        let target = self.w_cubic(st.w_max, k, t + rtt);
        if target > *cwnd {
            *cwnd += (target - *cwnd) / *cwnd * g.segs;
        }
        if self.tcp_friendly && rtt > 0.0 {
            let w_est =
                self.beta * st.w_max + 3.0 * (1.0 - self.beta) / (1.0 + self.beta) * t / rtt;
            *cwnd = cwnd.max(w_est);
        }
    }

    fn on_loss(&self, st: &mut CubicState, _now: SimTime, cwnd: f64, _flight: f64) -> f64 {
        self.reduce(st, cwnd)
    }

    fn on_timeout(&self, st: &mut CubicState, _now: SimTime, cwnd: f64, _flight: f64) -> f64 {
        self.reduce(st, cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: SimTime = SimTime(100_000_000_000); // 100 ms

    fn growth(now: SimTime, ssthresh: f64) -> Growth {
        Growth {
            segs: 1.0,
            ssthresh,
            now,
            srtt: Some(RTT),
        }
    }

    /// The RFC's curve by hand, for W_max = 100, C = 0.4, β = 0.7: K = ∛(100·0.3/0.4) =
    /// ∛75 = 4.2172 s; W(0) = 70, W(1 s) = 0.4·(1 − 4.2172)³ + 100 = 86.68, W(K) = 100,
    /// W(2K) = 130.
    #[test]
    fn the_curve_and_k_are_the_rfcs() {
        let c = Cubic::default();
        let k = c.k(100.0, 70.0);
        assert!((k - 4.217_163).abs() < 1e-6, "{k}");
        assert!((c.w_cubic(100.0, k, 0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(100.0, k, 1.0) - 86.68).abs() < 0.01);
        assert!((c.w_cubic(100.0, k, k) - 100.0).abs() < 1e-9);
        assert!((c.w_cubic(100.0, k, 2.0 * k) - 130.0).abs() < 1e-9);
    }

    /// A loss at 100 segments, then one ACK per segment in flight, each RTT: the window
    /// tracks W(t) (one RTT ahead, as §4.3 asks), concave up to W_max at K and convex after.
    #[test]
    fn the_window_follows_w_of_t_after_a_loss() {
        let c = Cubic {
            tcp_friendly: false,
            ..Cubic::default()
        };
        let mut st = c.state();
        let ssthresh = c.on_loss(&mut st, SimTime::ZERO, 100.0, 100.0);
        assert_eq!(ssthresh, 70.0);
        let mut cwnd = ssthresh;
        let k = c.k(100.0, 70.0);
        let mut now = SimTime::ZERO;
        let mut checked = 0;
        for round in 0..90 {
            // Each RTT the sender receives one ACK per segment of its window.
            let acks = cwnd.floor() as u64;
            for i in 0..acks {
                let at = SimTime(now.0 + RTT.0 * i / acks);
                c.grow(&mut st, &mut cwnd, growth(at, ssthresh));
            }
            now += RTT;
            let t = now.0 as f64 * 1e-12;
            // After a round the window has closed on W(t) (it aims one RTT ahead).
            if round >= 2 {
                let w = c.w_cubic(100.0, k, t);
                assert!(
                    (cwnd - w).abs() < 1.5,
                    "t = {t:.1} s: cwnd {cwnd:.2}, W(t) {w:.2}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 88);
        // Past K (4.2 s) the window is above W_max: the convex region.
        assert!(cwnd > 105.0, "{cwnd}");
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_window_did_not_recover() {
        let c = Cubic::default();
        let mut st = c.state();
        c.on_loss(&mut st, SimTime::ZERO, 100.0, 100.0);
        assert_eq!(st.w_max, 100.0);
        // The next loss at 80 < 100: W_max = 80·(1 + 0.7)/2 = 68.
        let ss = c.on_loss(&mut st, SimTime::ZERO, 80.0, 80.0);
        assert!((st.w_max - 68.0).abs() < 1e-9);
        assert!((ss - 56.0).abs() < 1e-9);
        // A timeout reduces the same way and restarts the epoch.
        let ss = c.on_timeout(&mut st, SimTime::ZERO, 1.5, 1.5);
        assert_eq!(ss, 2.0);
        assert!(st.epoch.is_none());
    }

    /// In a data-center round trip (10 µs) the cubic term hardly moves in a millisecond; the
    /// TCP-friendly estimate grows 3(1 − β)/(1 + β) = 0.529 segments per RTT.
    #[test]
    fn the_tcp_friendly_region_sets_the_pace_at_short_rtts() {
        let c = Cubic::default();
        let mut st = c.state();
        let ss = c.on_loss(&mut st, SimTime::ZERO, 100.0, 100.0);
        let mut cwnd = ss;
        let rtt = SimTime::from_us(10);
        let mut g = Growth {
            segs: 1.0,
            ssthresh: ss,
            now: SimTime::ZERO,
            srtt: Some(rtt),
        };
        c.grow(&mut st, &mut cwnd, g);
        g.now = SimTime::from_us(1000); // 100 RTTs
        c.grow(&mut st, &mut cwnd, g);
        let w_est = 70.0 + 3.0 * 0.3 / 1.7 * 100.0;
        assert!((cwnd - w_est).abs() < 1e-6, "{cwnd} vs {w_est}");
    }
}
