//! The sawtooth probe: measures the queue oscillation of N long flows on M parallel bottleneck
//! links and compares it with the DCTCP/PDTCP fluid analysis (the paper's §2.4, equations (5) to
//! (20), whose images our copy lost, rebuilt in PDTCP reconstruction §2 from DCTCP's SIGCOMM'10 §3.3; with
//! M = 1 and p = 1 they are DCTCP's). Numbers are the paper's (the reconstruction numbers its
//! steps differently: its (10), (12), (13), (14), (19) are the paper's (12), (15), (16), (17), (20)).
//!
//! With `C` the per-link capacity in packets per second, `RTT` the base round-trip time, `K`
//! the marking threshold in packets, `N` flows of priority exponent `p` spread evenly over `M`
//! links:
//!
//! * (6) `W* = M(C·RTT + K)/N`, the window at which the per-link queue reaches K;
//! * (12) `alpha ≈ (2/W*)^(1/(p+1))`;
//! * (15) aggregate amplitude `A ≈ ½·2^(p/(p+1))·N^(p/(p+1))·[M(C·RTT+K)]^(1/(p+1))`, per link
//!   `A/M`;
//! * (16) period `T_C ≈ ½·2^(p/(p+1))·[M(C·RTT+K)/N]^(1/(p+1))` round trips;
//! * (20) no underflow needs `K > r_p/(1−r_p)·C·RTT`, `r_p = ½·p^p/(p+1)^(p+1)`.
//!
//! Measurement: after a warm-up, every switch-to-switch egress port's queue is sampled at a
//! fixed interval (packets = bytes / full packet size). A cycle ends when the queue rises above
//! its mean + 2 packets after having fallen below mean − 2 (the hysteresis keeps single-packet
//! jitter from splitting cycles); the amplitude is the mean peak-to-trough height over cycles,
//! averaged over links, and the period the mean cycle length. Periods are reported in
//! microseconds and in round trips of the measured RTT (base RTT plus the mean queueing delay),
//! since windows grow by one packet per actual round trip. Alpha is the mean over flows and
//! samples.
//!
//! Equation (16) counts only the additive-increase phase of a cycle; in a packet simulation
//! each cycle also contains the round trip between the queue crossing K and the senders'
//! reductions taking effect, so `period_ratio_delay` compares the measured period with
//! `T_C + 1` round trips as well (our addition, reported beside the raw comparison).

use crate::units::SimTime;
use serde::{Deserialize, Serialize};

/// `[probe]`: measure the sawtooth (runs must have finite-time, long flows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeConfig {
    /// Start sampling after this. Default 10ms.
    #[serde(default = "d_warmup")]
    pub warmup: SimTime,
    /// Sample for this long. Default 20ms.
    #[serde(default = "d_duration")]
    pub duration: SimTime,
    /// Sampling interval. Default 500ns.
    #[serde(default = "d_interval")]
    pub interval: SimTime,
}

/// Most samples per probed queue (duration / interval).
pub const MAX_SAMPLES: u64 = 10_000_000;

impl ProbeConfig {
    /// Checks ranges; returns `(key, message)` on error.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.interval < SimTime::from_ns(10) || self.interval > SimTime::from_ms(1000) {
            return Err(("interval".into(), "must be in 10ns..=1s".into()));
        }
        if self.duration.0 == 0 || self.duration > SimTime::from_ms(1_000_000) {
            return Err(("duration".into(), "must be in (0, 1000s]".into()));
        }
        if self.warmup > SimTime::from_ms(1_000_000) {
            return Err(("warmup".into(), "must be at most 1000s".into()));
        }
        let n = self.duration.0 / self.interval.0;
        if n > MAX_SAMPLES {
            return Err((
                "interval".into(),
                format!(
                    "duration / interval = {n} samples per queue, at most {MAX_SAMPLES}: sample less often"
                ),
            ));
        }
        Ok(())
    }
}

fn d_warmup() -> SimTime {
    SimTime::from_ms(10)
}
fn d_duration() -> SimTime {
    SimTime::from_ms(20)
}
fn d_interval() -> SimTime {
    SimTime::from_ns(500)
}

/// The analysis' predictions (packets, round trips).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Default)]
pub struct Prediction {
    pub w_star: f64,
    pub alpha: f64,
    /// Per-link amplitude A/M.
    pub amplitude: f64,
    pub period_rtts: f64,
    /// Lower bound on K from (20), in packets.
    pub k_bound: f64,
    /// Per-link peak K + N/M (17).
    pub q_max: f64,
}

/// Evaluates the analysis for `n` flows over `m` links of `c_rtt` packets per RTT each,
/// threshold `k` packets, exponent `p`.
pub fn predict(n: f64, m: f64, c_rtt: f64, k: f64, p: f64) -> Prediction {
    let w_star = m * (c_rtt + k) / n;
    let e = p / (p + 1.0);
    let inv = 1.0 / (p + 1.0);
    let alpha = (2.0 / w_star).powf(inv);
    let a_total = 0.5 * 2f64.powf(e) * n.powf(e) * (m * (c_rtt + k)).powf(inv);
    let period = 0.5 * 2f64.powf(e) * (m * (c_rtt + k) / n).powf(inv);
    let r_p = 0.5 * p.powf(p) / (p + 1.0).powf(p + 1.0);
    Prediction {
        w_star,
        alpha,
        amplitude: a_total / m,
        period_rtts: period,
        k_bound: r_p / (1.0 - r_p) * c_rtt,
        q_max: k + n / m,
    }
}

/// What the probe measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Default)]
pub struct Measured {
    pub alpha: f64,
    /// Mean per-link amplitude in packets.
    pub amplitude: f64,
    pub cycles: u64,
    pub period_us: f64,
    pub period_rtts: f64,
    pub mean_queue: f64,
    /// 99th percentile of the per-link queue, in packets.
    pub q_p99: f64,
    /// Fraction of samples in which some bottleneck link's queue was empty.
    pub empty_fraction: f64,
}

/// Probe results of a run: parameters, prediction, measurement.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Default)]
pub struct SawtoothStats {
    pub flows: u64,
    pub links: u64,
    pub p: f64,
    pub c_rtt_pkts: f64,
    pub k_pkts: f64,
    pub base_rtt_us: f64,
    pub predicted: Prediction,
    pub measured: Measured,
}

/// Amplitude (mean peak-to-trough over cycles), cycle count and mean cycle length in
/// samples, by the hysteresis rule of the module header.
pub fn cycles(q: &[f64]) -> (f64, usize, f64) {
    if q.is_empty() {
        return (f64::NAN, 0, f64::NAN);
    }
    let mean = q.iter().sum::<f64>() / q.len() as f64;
    let (mut mx, mut mn) = (f64::MIN, f64::MAX);
    let (mut amps, mut lens) = (Vec::new(), Vec::new());
    let (mut started, mut armed, mut last) = (false, false, 0usize);
    for (i, &x) in q.iter().enumerate() {
        mx = mx.max(x);
        mn = mn.min(x);
        if x < mean - 2.0 {
            armed = true;
        }
        if armed && x > mean + 2.0 {
            if started {
                amps.push(mx - mn);
                lens.push((i - last) as f64);
            }
            started = true;
            armed = false;
            last = i;
            mx = f64::MIN;
            mn = f64::MAX;
        }
    }
    if amps.is_empty() {
        return (f64::NAN, 0, f64::NAN);
    }
    let n = amps.len();
    (
        amps.iter().sum::<f64>() / n as f64,
        n,
        lens.iter().sum::<f64>() / n as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduces_to_dctcp_at_m1_p1() {
        let (n, crtt, k) = (10.0, 83.0, 65.0);
        let pr = predict(n, 1.0, crtt, k, 1.0);
        let w = (crtt + k) / n;
        assert!((pr.alpha - (2.0 / w).sqrt()).abs() < 1e-12);
        assert!((pr.amplitude - 0.5 * (2.0 * n * (crtt + k)).sqrt()).abs() < 1e-9);
        assert!((pr.period_rtts - 0.5 * (2.0 * (crtt + k) / n).sqrt()).abs() < 1e-12);
        assert!((pr.k_bound - crtt / 7.0).abs() < 1e-9);
        assert_eq!(pr.q_max, k + n);
    }

    #[test]
    fn k_bound_by_priority_matches_the_spec_table() {
        // PDTCP reconstruction §2.1: K / (C·RTT) > 0.238 (p = 0.5), 0.143 (1), 0.080 (2).
        for (p, want) in [(0.5, 0.2383), (1.0, 0.1429), (2.0, 0.0800)] {
            let b = predict(1.0, 1.0, 1.0, 0.0, p).k_bound;
            assert!((b - want).abs() < 5e-4, "p = {p}: {b}");
        }
    }

    #[test]
    fn spreading_lowers_the_per_link_amplitude() {
        // A/M ∝ M^(−p/(p+1)) for fixed N.
        let a1 = predict(8.0, 1.0, 80.0, 40.0, 1.0).amplitude;
        let a4 = predict(8.0, 4.0, 80.0, 40.0, 1.0).amplitude;
        assert!((a4 / a1 - 4f64.powf(-0.5)).abs() < 1e-9);
    }

    #[test]
    fn cycle_detection_on_a_synthetic_sawtooth() {
        // Period 100 samples, from 10 to 30.
        let q: Vec<f64> = (0..10_000)
            .map(|i| 10.0 + 20.0 * ((i % 100) as f64 / 99.0))
            .collect();
        let (a, n, len) = cycles(&q);
        assert!((a - 20.0).abs() < 0.5, "amplitude {a}");
        assert!(n > 90);
        assert!((len - 100.0).abs() < 1e-9);
    }
}
