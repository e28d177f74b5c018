//! DCQCN rate control (Zhu et al., SIGCOMM 2015), Mellanox variant as modelled by the HPCC
//! ns-3 simulator (`rdma-hw.cc`; GPMP reconstruction §5.1).
//!
//! Per queue pair: a current rate `R_C`, a target rate `R_T` and the congestion estimate
//! `alpha`. On the first CNP alpha becomes 1, `R_T = R_C = rate_on_first_cnp · R_C`, and three
//! periodic timers start:
//!
//! * every `t_alpha`: `alpha ← (1−g)·alpha + g` if a CNP arrived in the interval, else
//!   `alpha ← (1−g)·alpha`;
//! * every `t_dec` (offset 1 ns after the alpha timer, as in HPCC): if a CNP arrived in the
//!   interval, `R_T ← R_C` (unless `clamp_target` is off and the increase stage is 0),
//!   `R_C ← max(min_rate, R_C·(1 − alpha/2))`, the increase stage resets to 0 and the increase
//!   timer restarts;
//! * every `t_inc` since the last decrease (an increase due at the same instant as a decrease
//!   runs first, as in the reference, where it was scheduled earlier): stage `< F` fast
//!   recovery `R_C ← (R_C + R_T)/2`;
//!   stage `= F` additive increase `R_T ← min(line, R_T + R_AI)` then the average; stage `> F`
//!   hyper increase with `R_HAI`; then the stage increments.
//!
//! The timers are not events: [`Dcqcn::advance`] replays every tick up to a given time in tick
//! order, in closed form for runs of ticks that change nothing but alpha's decay. Callers
//! advance to `now` before applying a CNP and before reading the rate, which gives exactly the
//! timer-driven result (checked against a literal timer implementation in the tests) without
//! one event per microsecond per queue pair. Not modelled: the byte counter of the DCQCN
//! paper (HPCC's model has none), CNP pacing at the receiver (HPCC's receiver flags every ACK
//! of a marked packet).

use super::RateCc;
use crate::units::SimTime;
use serde::{Deserialize, Serialize};

/// DCQCN parameters (rates in bit/s).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnParams {
    pub g: f64,
    pub t_alpha: SimTime,
    pub t_dec: SimTime,
    pub t_inc: SimTime,
    pub rai_bps: f64,
    pub rhai_bps: f64,
    pub min_rate_bps: f64,
    /// Fast-recovery stages F.
    pub stages: u32,
    pub rate_on_first_cnp: f64,
    pub clamp_target: bool,
}

impl DcqcnParams {
    /// HPCC `run.py` profile "dcqcn" at link rate `bw_gbps` (GPMP reconstruction §3): g = 1/256,
    /// t_alpha 1 us, t_dec 4 us, t_inc 300 us, R_AI = 5·bw/25 Mb/s, R_HAI = 50·bw/25 Mb/s, min
    /// rate 1 Gb/s, F = 1, rate on first CNP 1.0, no target clamping.
    pub fn hpcc_dcqcn(bw_gbps: f64) -> Self {
        DcqcnParams {
            g: 1.0 / 256.0,
            t_alpha: SimTime::from_us(1),
            t_dec: SimTime::from_us(4),
            t_inc: SimTime::from_us(300),
            rai_bps: 5.0 * bw_gbps / 25.0 * 1e6,
            rhai_bps: 50.0 * bw_gbps / 25.0 * 1e6,
            min_rate_bps: 1e9,
            stages: 1,
            rate_on_first_cnp: 1.0,
            clamp_target: false,
        }
    }

    /// HPCC `run.py` profile "dcqcn_paper": as "dcqcn" with t_alpha 50 us, t_dec 50 us,
    /// t_inc 55 us.
    pub fn hpcc_dcqcn_paper(bw_gbps: f64) -> Self {
        DcqcnParams {
            t_alpha: SimTime::from_us(50),
            t_dec: SimTime::from_us(50),
            t_inc: SimTime::from_us(55),
            ..Self::hpcc_dcqcn(bw_gbps)
        }
    }
}

const NEVER: SimTime = SimTime::MAX;

/// DCQCN state of one queue pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Dcqcn {
    line: f64,
    pub rate: f64,
    pub target: f64,
    pub alpha: f64,
    started: bool,
    alpha_cnp: bool,
    dec_cnp: bool,
    next_alpha: SimTime,
    next_dec: SimTime,
    next_inc: SimTime,
    pub stage: u32,
    /// Counters.
    pub cnps: u64,
    pub decreases: u64,
}

impl Dcqcn {
    pub fn new(line_bps: f64) -> Self {
        Dcqcn {
            line: line_bps,
            rate: line_bps,
            target: line_bps,
            alpha: 1.0,
            started: false,
            alpha_cnp: false,
            dec_cnp: false,
            next_alpha: NEVER,
            next_dec: NEVER,
            next_inc: NEVER,
            stage: 0,
            cnps: 0,
            decreases: 0,
        }
    }

    fn increase(&mut self, p: &DcqcnParams) {
        if self.stage < p.stages {
            // Fast recovery.
        } else if self.stage == p.stages {
            self.target = (self.target + p.rai_bps).min(self.line);
        } else {
            self.target = (self.target + p.rhai_bps).min(self.line);
        }
        self.rate = ((self.rate + self.target) / 2.0).min(self.line);
        self.stage += 1;
    }

    /// Replays every timer tick at or before `now`, in time order. Ticks at the same time run
    /// in the order they were scheduled, as the reference's event queue runs them: an increase
    /// tick (scheduled `t_inc` earlier) before a decrease tick (scheduled `t_dec` earlier) when
    /// `t_inc > t_dec`, so a decrease that lands on an increase no longer swallows it. The
    /// alpha tick goes first at a tie with a decrease; with the decrease timer's 1 ns offset the
    /// two never coincide for periods in whole nanoseconds.
    pub fn advance(&mut self, now: SimTime, p: &DcqcnParams) {
        if !self.started {
            return;
        }
        loop {
            let t = self.next_alpha.min(self.next_dec).min(self.next_inc);
            if t > now {
                return;
            }
            if self.next_alpha == t {
                if self.alpha_cnp {
                    self.alpha = (1.0 - p.g) * self.alpha + p.g;
                    self.alpha_cnp = false;
                    self.next_alpha += p.t_alpha;
                } else {
                    // Quiet alpha ticks only decay alpha; the one tick that reads alpha, a
                    // decrease with a CNP pending, bounds the run (alpha goes first at ties).
                    let limit = if self.dec_cnp {
                        now.min(self.next_dec)
                    } else {
                        now
                    };
                    let k = (limit.0 - self.next_alpha.0) / p.t_alpha.0 + 1;
                    self.alpha *= (1.0 - p.g).powf(k as f64);
                    self.next_alpha += SimTime(k * p.t_alpha.0);
                }
            } else if self.next_dec == t && !(self.next_inc == t && p.t_inc > p.t_dec) {
                if self.dec_cnp {
                    let clamp = p.clamp_target || self.stage != 0;
                    if clamp {
                        self.target = self.rate;
                    }
                    self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(p.min_rate_bps);
                    self.stage = 0;
                    self.dec_cnp = false;
                    self.decreases += 1;
                    self.next_inc = t + p.t_inc;
                    self.next_dec += p.t_dec;
                } else {
                    // Quiet decrease ticks change nothing.
                    let k = (now.0 - self.next_dec.0) / p.t_dec.0 + 1;
                    self.next_dec += SimTime(k * p.t_dec.0);
                }
            } else {
                self.increase(p);
                self.next_inc += p.t_inc;
            }
        }
    }

    /// A CNP (an ACK flagged with congestion) arrives at `now`.
    pub fn on_cnp(&mut self, now: SimTime, p: &DcqcnParams) {
        self.advance(now, p);
        self.cnps += 1;
        self.alpha_cnp = true;
        self.dec_cnp = true;
        if !self.started {
            self.started = true;
            self.alpha = 1.0;
            self.alpha_cnp = false;
            self.next_alpha = now + p.t_alpha;
            self.next_dec = now + p.t_dec + SimTime::from_ns(1);
            self.rate *= p.rate_on_first_cnp;
            self.target = self.rate;
        }
    }

    /// The current rate in bit/s, after replaying the timers up to `now`.
    pub fn rate_at(&mut self, now: SimTime, p: &DcqcnParams) -> f64 {
        self.advance(now, p);
        self.rate
    }
}

/// DCQCN as a rate controller: the parameters are the controller, [`Dcqcn`] its per-queue-pair
/// state.
impl RateCc for DcqcnParams {
    type State = Dcqcn;

    fn state(&self, line_bps: f64) -> Dcqcn {
        Dcqcn::new(line_bps)
    }

    #[inline]
    fn on_congestion(&self, st: &mut Dcqcn, now: SimTime) {
        st.on_cnp(now, self);
    }

    #[inline]
    fn rate_at(&self, st: &mut Dcqcn, now: SimTime) -> f64 {
        st.rate_at(now, self)
    }

    fn current_rate(&self, st: &Dcqcn) -> f64 {
        st.rate
    }

    fn sample(&self, st: &Dcqcn) -> (Option<f64>, Option<f64>) {
        (Some(st.alpha), Some(st.rate))
    }

    fn counters(&self, st: &Dcqcn) -> (u64, u64) {
        (st.cnps, st.decreases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    /// A literal timer-driven DCQCN (HPCC's structure): every timer is an explicit event.
    struct Reference {
        d: Dcqcn,
        /// (time, kind 0 alpha / 1 dec / 2 inc, increase generation, scheduling sequence).
        events: Vec<(SimTime, u8, u64, u64)>,
        seq: u64,
        inc_gen: u64,
    }

    impl Reference {
        fn schedule(&mut self, t: SimTime, kind: u8) {
            self.seq += 1;
            let tag = if kind == 2 { self.inc_gen } else { 0 };
            self.events.push((t, kind, tag, self.seq));
        }
        fn run_until(&mut self, now: SimTime, p: &DcqcnParams) {
            loop {
                // Earliest event at or before now; ties in scheduling order (ns-3's FIFO).
                let Some(i) = (0..self.events.len())
                    .filter(|&i| self.events[i].0 <= now)
                    .min_by_key(|&i| (self.events[i].0, self.events[i].3))
                else {
                    return;
                };
                let (t, kind, tag, _) = self.events.swap_remove(i);
                let d = &mut self.d;
                match kind {
                    0 => {
                        d.alpha = if d.alpha_cnp {
                            (1.0 - p.g) * d.alpha + p.g
                        } else {
                            (1.0 - p.g) * d.alpha
                        };
                        d.alpha_cnp = false;
                        self.schedule(t + p.t_alpha, 0);
                    }
                    1 => {
                        self.schedule(t + p.t_dec, 1);
                        let d = &mut self.d;
                        if d.dec_cnp {
                            if p.clamp_target || d.stage != 0 {
                                d.target = d.rate;
                            }
                            d.rate = (d.rate * (1.0 - d.alpha / 2.0)).max(p.min_rate_bps);
                            d.stage = 0;
                            d.dec_cnp = false;
                            self.inc_gen += 1;
                            self.schedule(t + p.t_inc, 2);
                        }
                    }
                    _ => {
                        if tag == self.inc_gen {
                            self.schedule(t + p.t_inc, 2);
                            self.d.increase(p);
                        }
                    }
                }
            }
        }
        fn cnp(&mut self, now: SimTime, p: &DcqcnParams) {
            self.run_until(now, p);
            let d = &mut self.d;
            d.alpha_cnp = true;
            d.dec_cnp = true;
            if !d.started {
                d.started = true;
                d.alpha = 1.0;
                d.alpha_cnp = false;
                d.rate *= p.rate_on_first_cnp;
                d.target = d.rate;
                self.schedule(now + p.t_alpha, 0);
                self.schedule(now + p.t_dec + SimTime::from_ns(1), 1);
            }
        }
    }

    #[test]
    fn first_cnp_then_decrease_step_by_step() {
        let p = DcqcnParams::hpcc_dcqcn(10.0);
        let mut d = Dcqcn::new(10e9);
        d.on_cnp(SimTime::from_us(10), &p);
        assert_eq!((d.rate, d.target, d.alpha), (10e9, 10e9, 1.0));
        // Alpha ticks at 11, 12, 13 us (no CNP since the first): alpha decays 3 times. The
        // decrease tick at 14 us + 1 ns sees the first CNP's flag: R_C = 10G * (1 - a/2).
        let a = (1.0 - p.g).powi(4); // ticks at 11, 12, 13, 14 us
        d.advance(SimTime::from_us(14) + SimTime::from_ns(1), &p);
        assert!((d.alpha - a).abs() < 1e-12);
        assert!(
            (d.rate - 10e9 * (1.0 - a / 2.0)).abs() < 1.0,
            "rate {}",
            d.rate
        );
        assert_eq!(d.target, 10e9, "no clamping at stage 0");
        assert_eq!(d.decreases, 1);
        // 300 us later: the first increase (fast recovery, F = 1): R_C = (R_C + R_T) / 2.
        let before = d.rate;
        d.advance(SimTime::from_us(314) + SimTime::from_ns(1), &p);
        assert!((d.rate - (before + 10e9) / 2.0).abs() < 1.0);
        assert_eq!(d.stage, 1);
        // Next: additive increase stage: R_T stays at line rate (capped).
        d.advance(SimTime::from_us(614) + SimTime::from_ns(1), &p);
        assert_eq!(d.stage, 2);
        assert!(d.target <= 10e9);
    }

    #[test]
    fn an_increase_due_with_a_decrease_runs_first() {
        let p = DcqcnParams::hpcc_dcqcn(10.0);
        let mut d = Dcqcn::new(10e9);
        d.on_cnp(SimTime::from_us(10), &p);
        // First decrease at 14 us + 1 ns; its increase tick is due 300 us later, exactly on a
        // decrease tick (300 is a multiple of 4).
        let t1 = SimTime::from_us(14) + SimTime::from_ns(1);
        d.advance(t1, &p);
        let (r1, a1) = (d.rate, d.alpha);
        assert_eq!(d.stage, 0);
        // A CNP 1 us before that tick: the decrease tick at t1 + 300 us has a CNP pending.
        let t2 = t1 + SimTime::from_us(300);
        d.on_cnp(t2 - SimTime::from_us(1), &p);
        d.advance(t2, &p);
        // The increase runs first (fast recovery towards the target, line rate), stage 1...
        let after_inc = (r1 + 10e9) / 2.0;
        // ...then the decrease: the target clamps to the current rate (stage 1 != 0) and the
        // rate is cut by alpha / 2. Alpha: 299 quiet ticks of decay and one with the CNP.
        let mut a = a1;
        for _ in 0..299 {
            a *= 1.0 - p.g;
        }
        a = (1.0 - p.g) * a + p.g;
        assert!((d.alpha - a).abs() < 1e-12, "alpha {} vs {a}", d.alpha);
        assert!((d.target - after_inc).abs() < 1.0, "target {}", d.target);
        let expect = after_inc * (1.0 - a / 2.0);
        assert!((d.rate - expect).abs() < 1.0, "rate {} vs {expect}", d.rate);
        assert_eq!((d.stage, d.decreases), (0, 2));
    }

    #[test]
    fn a_cnp_in_each_interval_keeps_alpha_rising() {
        let p = DcqcnParams::hpcc_dcqcn(10.0);
        let mut d = Dcqcn::new(10e9);
        d.on_cnp(SimTime::ZERO, &p);
        let mut t = SimTime::ZERO;
        for _ in 0..100 {
            t += SimTime::from_ns(900);
            d.on_cnp(t, &p);
        }
        assert!(d.alpha > 0.9, "alpha {}", d.alpha);
        assert!(d.rate < 2e9, "rate {}", d.rate);
        assert!(d.rate >= p.min_rate_bps);
    }

    #[test]
    fn lazy_replay_equals_explicit_timers() {
        for profile in 0..2 {
            let p = if profile == 0 {
                DcqcnParams::hpcc_dcqcn(10.0)
            } else {
                DcqcnParams::hpcc_dcqcn_paper(10.0)
            };
            let mut r = RngStream::new(3 + profile, "dcqcn");
            let mut lazy = Dcqcn::new(10e9);
            let mut refm = Reference {
                d: Dcqcn::new(10e9),
                events: Vec::new(),
                seq: 0,
                inc_gen: 0,
            };
            let mut t = SimTime::ZERO;
            for _ in 0..3000 {
                // Bursts of CNPs separated by quiet periods of up to 2 ms.
                let gap = match r.below(4) {
                    0 => r.below(2_000_000),
                    1 => r.below(20_000_000),
                    2 => r.below(400_000_000),
                    _ => r.below(2_000_000_000),
                };
                t += SimTime(gap);
                if r.below(3) > 0 {
                    lazy.on_cnp(t, &p);
                    refm.cnp(t, &p);
                } else {
                    lazy.advance(t, &p);
                    refm.run_until(t, &p);
                }
                let (a, b) = (&lazy, &refm.d);
                assert!(
                    (a.rate - b.rate).abs() <= 1e-6 * b.rate,
                    "rate {} vs {} at {t}",
                    a.rate,
                    b.rate
                );
                assert!((a.target - b.target).abs() <= 1e-6 * b.target);
                assert!(
                    (a.alpha - b.alpha).abs() <= 1e-9,
                    "alpha {} vs {}",
                    a.alpha,
                    b.alpha
                );
                assert_eq!(a.stage, b.stage, "stage at {t}");
            }
            assert!(lazy.decreases > 100);
        }
    }
}
