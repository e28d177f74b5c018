//! PowerTCP (Addanki, Michel, Schmid, NSDI 2022): window control from the "power" of the
//! bottleneck, the product of its queue-plus-BDP ("voltage") and its arrival rate ("current"),
//! measured with the same in-band telemetry as HPCC. A reconstruction from the paper's
//! Algorithm 1 (INT variant) run on RoCE queue pairs, as its authors' ns-3 evaluation (built
//! on the HPCC ns-3 simulator) does.
//!
//! On every acknowledgement, against the telemetry of the previous one, for each hop `i`
//! with `dt_i > 0` between the two records:
//!
//! * current `λ_i = max(0, Δq_i/dt_i + Δtx_i/dt_i)` (the queue's gradient plus the transmit
//!   rate: the arrival rate), in bytes per second;
//! * voltage `v_i = q_i + B_i·τ` (queue plus the hop's bandwidth-delay product), bytes;
//! * normalised power `Γ_i = λ_i·v_i / (B_i²·τ)`: 1 at a full link with an empty queue.
//!
//! The hop with the largest `Γ` (and its `dt`) counts; `Γ` is smoothed over the base RTT
//! `τ` like HPCC's `U` (`Γs ← (Γs·(τ − dt) + Γ·dt)/τ`, `dt ≤ τ`, the first value taken as
//! is), and the window follows
//!
//! `W ← γ·(W_old/Γs + β) + (1 − γ)·W`,
//!
//! where `W_old` is the window when the acknowledged data was sent (kept once per round trip
//! of bytes, as the reference byte of HPCC), `β` the additive increase in bytes and `γ` the
//! EWMA weight. The rate is `W/τ`, clamped to `[min_rate, line]` (so `W ≤` one host BDP);
//! a rate change moves an already scheduled send, and the queue pair's window is `W` (the
//! `[rdma] window = "bdp"` with `var_win` that the scheme defaults to).
//!
//! Not modelled: θ-PowerTCP (the RTT-gradient variant without telemetry), per-hop path
//! changes (a changed hop count restarts from the stored records).

use super::{INT_MAX_HOPS, IntHop, RateAck, RateCc};
use crate::units::SimTime;
use serde::Serialize;

/// PowerTCP parameters (rates in bit/s).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct PowerTcp {
    /// EWMA weight γ of the window update, (0, 1].
    pub gamma: f64,
    /// Additive increase β as a rate (β in bytes is `rai·τ/8`).
    pub rai_bps: f64,
    pub min_rate_bps: f64,
    /// The base RTT τ (the largest unloaded RTT of the network).
    pub base_rtt: SimTime,
}

/// PowerTCP state of one queue pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PowerTcpState {
    line: f64,
    /// The window W in bytes.
    pub win: f64,
    /// The window when the data now acknowledged was sent.
    pub win_old: f64,
    /// Windows set by past updates, with the next byte to send at the time: the window in
    /// force when a byte was sent is the last one set at or below it.
    history: std::collections::VecDeque<(u64, f64)>,
    /// The smoothed normalised power Γs (0 before the first measurement).
    pub power: f64,
    /// The rate W/τ in bit/s, clamped.
    pub rate: f64,
    n_hops: usize,
    hops: [IntHop; INT_MAX_HOPS],
    pub updates: u64,
    pub decreases: u64,
}

impl PowerTcp {
    fn tau_s(&self) -> f64 {
        self.base_rtt.0 as f64 * 1e-12
    }

    /// The normalised power of one hop from two of its records (None when no time passed).
    pub fn hop_power(&self, prev: &IntHop, h: &IntHop) -> Option<(f64, u64)> {
        let dt = h.time.0.saturating_sub(prev.time.0);
        if dt == 0 {
            return None;
        }
        let dt_s = dt as f64 * 1e-12;
        let b = h.rate_bps as f64 / 8.0;
        let dq = h.qlen as f64 - prev.qlen as f64;
        let dtx = h.tx_bytes.saturating_sub(prev.tx_bytes) as f64;
        let current = ((dq + dtx) / dt_s).max(0.0);
        let tau = self.tau_s();
        let voltage = h.qlen as f64 + b * tau;
        Some((current * voltage / (b * b * tau), dt))
    }
}

impl RateCc for PowerTcp {
    type State = PowerTcpState;
    const TELEMETRY: bool = true;

    fn state(&self, line_bps: f64) -> PowerTcpState {
        let win = line_bps / 8.0 * self.tau_s();
        PowerTcpState {
            line: line_bps,
            win,
            win_old: win,
            power: 0.0,
            rate: line_bps,
            history: std::collections::VecDeque::new(),
            n_hops: 0,
            hops: [IntHop::default(); INT_MAX_HOPS],
            updates: 0,
            decreases: 0,
        }
    }

    fn on_ack(&self, st: &mut PowerTcpState, a: &RateAck) -> bool {
        let n = a.int.len().min(INT_MAX_HOPS);
        if n == 0 {
            return false;
        }
        if st.n_hops != n {
            // First acknowledgement (or a new path): keep the records, no update.
            st.hops[..n].copy_from_slice(&a.int[..n]);
            st.n_hops = n;
            return false;
        }
        let (mut big, mut dt) = (None::<f64>, 0u64);
        for (i, h) in a.int[..n].iter().enumerate() {
            if let Some((p, d)) = self.hop_power(&st.hops[i], h)
                && big.is_none_or(|b| p > b)
            {
                big = Some(p);
                dt = d;
            }
            st.hops[i] = *h;
        }
        let Some(p) = big else {
            return false;
        };
        let t = self.base_rtt.0;
        let dt = dt.min(t);
        st.power = if st.power == 0.0 {
            p
        } else {
            (st.power * (t - dt) as f64 + p * dt as f64) / t as f64
        };
        // W_old: the window in force when the acknowledged byte was sent.
        while st.history.len() > 1 && st.history[1].0 <= a.ack_bytes {
            st.history.pop_front();
        }
        if let Some(&(at, w)) = st.history.front()
            && at <= a.ack_bytes
        {
            st.win_old = w;
        }
        let tau = self.tau_s();
        let beta = self.rai_bps / 8.0 * tau;
        let target = st.win_old / st.power.max(1e-9) + beta;
        let w = self.gamma * target + (1.0 - self.gamma) * st.win;
        let rate = (w * 8.0 / tau).clamp(self.min_rate_bps, st.line);
        st.win = rate / 8.0 * tau;
        st.updates += 1;
        if rate < st.rate {
            st.decreases += 1;
        }
        let changed = rate != st.rate;
        st.rate = rate;
        match st.history.back_mut() {
            Some(last) if last.0 == a.nxt_bytes => last.1 = st.win,
            _ => st.history.push_back((a.nxt_bytes, st.win)),
        }
        changed
    }

    fn current_rate(&self, st: &PowerTcpState) -> f64 {
        st.rate
    }

    /// The smoothed normalised power (as `alpha`) and the rate.
    fn sample(&self, st: &PowerTcpState) -> (Option<f64>, Option<f64>) {
        (Some(st.power), Some(st.rate))
    }

    fn counters(&self, st: &PowerTcpState) -> (u64, u64) {
        (st.updates, st.decreases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc() -> PowerTcp {
        PowerTcp {
            gamma: 0.9,
            rai_bps: 40e6,
            min_rate_bps: 1e9,
            base_rtt: SimTime::from_us(10),
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
    fn power_by_hand() {
        let c = cc();
        // 100 Gbps = 12.5 GB/s, τ = 10 us: BDP 125 000 B, e = B²τ.
        // A full link with a steady empty queue: Γ = 1.
        let (p, dt) = c.hop_power(&hop(0, 0, 0), &hop(1000, 12_500, 0)).unwrap();
        assert_eq!(dt, 1_000_000);
        assert!((p - 1.0).abs() < 1e-12, "{p}");
        // Same, with the queue at 125 000 B (one BDP) and steady: voltage doubles, Γ = 2.
        let (p, _) = c
            .hop_power(&hop(0, 0, 125_000), &hop(1000, 12_500, 125_000))
            .unwrap();
        assert!((p - 2.0).abs() < 1e-12, "{p}");
        // The queue grows 12 500 B in 1 us on a full link: arrivals at twice the line rate,
        // voltage (137 500 + 125 000 B) / BDP = 2.1: Γ = 2 · 2.1 = 4.2.
        let (p, _) = c
            .hop_power(&hop(0, 0, 125_000), &hop(1000, 12_500, 137_500))
            .unwrap();
        assert!((p - 4.2).abs() < 1e-12, "{p}");
        // A draining queue lowers the current below the transmit rate.
        let (p, _) = c
            .hop_power(&hop(0, 0, 12_500), &hop(1000, 12_500, 6_250))
            .unwrap();
        assert!((p - 0.5 * (131_250.0 / 125_000.0)).abs() < 1e-12, "{p}");
        // No time between the records: no measurement.
        assert!(c.hop_power(&hop(5, 0, 0), &hop(5, 10, 0)).is_none());
    }

    #[test]
    fn window_update_by_hand() {
        let c = cc();
        let bdp = 125_000.0;
        let beta = 50.0; // 40 Mb/s · 10 us
        let mut s = c.state(100e9);
        assert!((s.win - bdp).abs() < 1e-6);
        // First ACK: records only.
        assert!(!c.on_ack(&mut s, &ack(1000, 50_000, &[hop(0, 0, 125_000)])));
        // Γ = 4.2 (see power_by_hand), taken as is; no window history yet, so W_old is the
        // initial window: W1 = 0.9·(W_old/4.2 + β) + 0.1·W.
        assert!(c.on_ack(&mut s, &ack(2000, 51_000, &[hop(1000, 12_500, 137_500)])));
        let w1 = 0.9 * (bdp / 4.2 + beta) + 0.1 * bdp;
        assert!((s.win - w1).abs() < 1e-6, "{} vs {w1}", s.win);
        assert!((s.rate - w1 * 8.0 / 10e-6).abs() < 1.0);
        // 1 us later the queue is steady at 137 500 B on a full link: Γ = 2.1, smoothed
        // Γs = (4.2·9 + 2.1·1)/10 = 3.99. Byte 50 001 was sent before W1 was set (at byte
        // 51 000): W_old is still the initial window.
        c.on_ack(&mut s, &ack(50_001, 100_000, &[hop(2000, 25_000, 137_500)]));
        assert!((s.power - 3.99).abs() < 1e-12, "{}", s.power);
        let w2 = 0.9 * (bdp / 3.99 + beta) + 0.1 * w1;
        assert!((s.win - w2).abs() < 1e-6);
        // Byte 51 000 was sent under W1: W_old = W1, Γs = (3.99·9 + 2.1)/10 = 3.801.
        c.on_ack(&mut s, &ack(51_000, 100_001, &[hop(3000, 37_500, 137_500)]));
        assert!((s.win_old - w1).abs() < 1e-6);
        let w3 = 0.9 * (w1 / 3.801 + beta) + 0.1 * w2;
        assert!((s.win - w3).abs() < 1e-6, "{} vs {w3}", s.win);
        // An idle path (Γ → 0) never exceeds line rate.
        let (mut t, mut b) = (3000, 37_500);
        for k in 0..100 {
            t += 1000;
            b += 100;
            c.on_ack(&mut s, &ack(100_001 + k, 100_002 + k, &[hop(t, b, 0)]));
        }
        assert_eq!(s.rate, 100e9);
    }

    #[test]
    fn equilibrium_at_full_link_and_empty_queue_is_additive_increase() {
        // Γ = 1 everywhere: W converges to W_old + β per round trip, capped at line rate.
        let c = cc();
        let mut s = c.state(100e9);
        s.win = 50_000.0;
        s.win_old = 50_000.0;
        s.rate = 40e9;
        c.on_ack(&mut s, &ack(1, 10, &[hop(0, 0, 0)]));
        c.on_ack(&mut s, &ack(2, 10, &[hop(1000, 12_500, 0)]));
        let w = 0.9 * (50_000.0 + 50.0) + 0.1 * 50_000.0;
        assert!((s.win - w).abs() < 1e-6);
    }
}
