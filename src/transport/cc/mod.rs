//! Congestion control, in two families, each algorithm in its own file.
//!
//! * The **window family** ([`WindowCc`]) rides on the TCP sender (`transport::tcp`), which
//!   owns loss recovery (SACK scoreboard, fast recovery, timeouts) and asks its controller, at
//!   fixed points of every ACK, what the feedback means for the window: [`reno`] (no ECN
//!   reaction), [`dctcp`] (the marked fraction `alpha`, window cut by `alpha/2`), [`d2tcp`] and
//!   [`pdtcp`] (DCTCP's `alpha` raised to a deadline-dependent exponent).
//! * The **rate family** ([`RateCc`]) paces an RDMA queue pair (`transport::rdma::qp`):
//!   [`dcqcn`].
//!
//! A controller is a small value of per-run parameters with an associated per-flow `State`;
//! every hook has a default, so an algorithm implements only what it changes. Controllers are
//! told about events and asked for decisions; they never schedule anything themselves.
//!
//! Not here: loss recovery (the sender's), pacing mechanics (the host's timers), and the
//! switch side of ECN (`net::port`).

pub mod d2tcp;
pub mod dcqcn;
pub mod dctcp;
pub mod pdtcp;
pub mod reno;

use crate::units::SimTime;
use serde::Serialize;

pub use d2tcp::D2tcp;
pub use dcqcn::DcqcnParams;
pub use dctcp::Dctcp;
pub use pdtcp::Pdtcp;
pub use reno::Reno;

/// What a deadline-aware controller needs to know about its flow.
#[derive(Clone, Copy, Debug)]
pub struct FlowCtx {
    pub now: SimTime,
    pub start: SimTime,
    /// Absolute deadline.
    pub deadline: Option<SimTime>,
    /// Host line rate in bytes per picosecond.
    pub host_bytes_per_ps: f64,
}

/// What a window controller may read of its sender.
#[derive(Clone, Copy, Debug)]
pub struct SenderView {
    /// The flow's size in bytes.
    pub size: u64,
    /// Cumulatively acknowledged and sent bytes.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The window in segments (before this ACK's reaction).
    pub cwnd: f64,
    /// Smoothed RTT, once measured.
    pub srtt: Option<SimTime>,
    pub mss: u32,
}

/// The congestion feedback of one ACK.
#[derive(Clone, Copy, Debug)]
pub struct AckFeedback {
    /// Bytes newly acknowledged cumulatively (0: a duplicate ACK).
    pub newly: u64,
    /// The ACK echoes a CE mark.
    pub ece: bool,
}

/// A window congestion controller (per-run parameters; per-flow state in `State`).
pub trait WindowCc: Clone + std::fmt::Debug {
    type State: Clone + std::fmt::Debug;

    /// The state of a new flow.
    fn state(&self) -> Self::State;

    /// Every ACK, after the cumulative point and the RTT estimate moved and before the
    /// sender's loss-recovery and ECN reactions.
    #[inline(always)]
    fn on_ack(&self, _st: &mut Self::State, _fb: AckFeedback, _s: &SenderView, _ctx: &FlowCtx) {}

    /// The penalty of an ECN echo (the window shrinks by `penalty / 2`), asked at most once per
    /// window and never during loss recovery; None: ECN echoes are ignored.
    #[inline(always)]
    fn ecn_penalty(&self, _st: &Self::State) -> Option<f64> {
        None
    }

    /// Growth on `segs` newly acknowledged segments, outside fast recovery and not on an ACK
    /// that cut the window: slow start below `ssthresh`, else one segment per window (Reno).
    #[inline(always)]
    fn grow(&self, _st: &mut Self::State, cwnd: &mut f64, ssthresh: f64, segs: f64) {
        if *cwnd < ssthresh {
            *cwnd += segs;
        } else {
            *cwnd += segs / *cwnd;
        }
    }

    /// The congestion estimate (DCTCP's `alpha`), for diagnostics and time series.
    fn alpha(&self, _st: &Self::State) -> Option<f64> {
        None
    }

    /// The exponent of the penalty `alpha^e` (D2TCP's `d`, PDTCP's `p`), for diagnostics and
    /// time series.
    fn exponent(&self, _st: &Self::State) -> Option<f64> {
        None
    }
}

/// The window controller a TCP scheme uses, with its parameters (the lowered configuration).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "algorithm", rename_all = "snake_case")]
pub enum WindowCcSpec {
    Reno,
    Dctcp(Dctcp),
    D2tcp(D2tcp),
    Pdtcp(Pdtcp),
}

/// A rate congestion controller of an RDMA queue pair (per-run parameters; per-queue-pair
/// state in `State`).
pub trait RateCc: Clone + std::fmt::Debug {
    type State: Clone + std::fmt::Debug;

    /// The state of a new queue pair on a host whose line rate is `line_bps`.
    fn state(&self, line_bps: f64) -> Self::State;

    /// An acknowledgement echoed congestion (a CNP) at `now`.
    fn on_congestion(&self, _st: &mut Self::State, _now: SimTime) {}

    /// The sending rate at `now`, in bits per second.
    fn rate_at(&self, st: &mut Self::State, now: SimTime) -> f64;

    /// The sampled state (`alpha`, rate) for the time series.
    fn sample(&self, _st: &Self::State) -> (Option<f64>, Option<f64>) {
        (None, None)
    }

    /// Congestion notifications received and rate decreases made.
    fn counters(&self, _st: &Self::State) -> (u64, u64) {
        (0, 0)
    }
}

/// No rate control: every queue pair sends at its host's line rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LineRate;

impl RateCc for LineRate {
    /// The line rate.
    type State = f64;

    fn state(&self, line_bps: f64) -> f64 {
        line_bps
    }

    #[inline]
    fn rate_at(&self, st: &mut f64, _now: SimTime) -> f64 {
        *st
    }

    fn sample(&self, st: &f64) -> (Option<f64>, Option<f64>) {
        (None, Some(*st))
    }
}
