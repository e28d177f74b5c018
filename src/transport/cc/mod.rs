//! Congestion control, in two families, each algorithm in its own file.
//!
//! * The **window family** ([`WindowCc`]) rides on the TCP sender (`transport::tcp`), which
//!   owns loss recovery (SACK scoreboard, fast recovery, timeouts) and asks its controller, at
//!   fixed points of every ACK, what the feedback means for the window: [`reno`] (no ECN
//!   reaction), [`dctcp`] (the marked fraction `alpha`, window cut by `alpha/2`), [`d2tcp`] and
//!   [`pdtcp`] (DCTCP's `alpha` raised to a deadline-dependent exponent), [`swift`] (delay
//!   against a target), [`cubic`] (RFC 8312: a cubic function of the time since the last
//!   reduction, β = 0.7). Its hooks: `on_ack` (feedback), `ecn_penalty`, `grow` (with the time
//!   and smoothed RTT), `on_loss` and `on_timeout` (the new `ssthresh`; Reno's half the flight
//!   by default).
//! * The **rate family** ([`RateCc`]) paces an RDMA queue pair (`transport::rdma::qp`),
//!   told about every acknowledgement ([`RateAck`]: sequence numbers, the congestion flag, the
//!   RTT sample, echoed telemetry): [`dcqcn`], [`hpcc`], [`timely`], [`dctcp_rate`],
//!   [`powertcp`], and [`LineRate`] (none).
//!
//! Each controller is one row of `transport::registry`, from which its scheme name, its
//! `Transport` variant and its lowering derive.
//!
//! A controller is a small value of per-run parameters with an associated per-flow `State`;
//! every hook has a default, so an algorithm implements only what it changes. Controllers are
//! told about events and asked for decisions; they never schedule anything themselves.
//!
//! Not here: loss recovery (the sender's), pacing mechanics (the host's timers), and the
//! switch side of ECN (`net::port`).

use crate::units::SimTime;
use serde::Serialize;

pub use crate::net::int::{INT_MAX_HOPS, IntHop, IntStack};

// One module per registry row (`transport/cc/<module>.rs`), its controller re-exported:
// `pub mod cubic; pub use cubic::Cubic;` and so on.
macro_rules! cc_modules {
    ([] window { $($kind:ident: $cm:ident::$cc:ident, $name:literal, $ecn:literal, $about:literal, $notes:literal;)* }
     rate { $($rkind:ident: $rcm:ident::$rcc:ident, $rname:literal, $win:literal, $mark:ident, $rabout:literal, $rnotes:literal;)* }) => {
        $(
            pub mod $cm;
            pub use $cm::$cc;
        )*
        $(
            pub mod $rcm;
            pub use $rcm::$rcc;
        )*
    };
}
crate::transport::registry::ccs!(cc_modules []);

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
    /// The RTT sample of this ACK: now − the send time it echoes.
    pub rtt: SimTime,
}

/// What a window controller's growth is told: segments newly acknowledged, the slow-start
/// threshold, the time and the smoothed RTT (once measured).
#[derive(Clone, Copy, Debug)]
pub struct Growth {
    pub segs: f64,
    pub ssthresh: f64,
    pub now: SimTime,
    pub srtt: Option<SimTime>,
}

/// A window congestion controller (per-run parameters; per-flow state in `State`).
pub trait WindowCc: Clone + std::fmt::Debug {
    type State: Clone + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned;

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

    /// Growth on `g.segs` newly acknowledged segments, outside fast recovery and not on an
    /// ACK that cut the window: slow start below `ssthresh`, else one segment per window
    /// (Reno).
    #[inline(always)]
    fn grow(&self, _st: &mut Self::State, cwnd: &mut f64, g: Growth) {
        if *cwnd < g.ssthresh {
            *cwnd += g.segs;
        } else {
            *cwnd += g.segs / *cwnd;
        }
    }

    /// Loss detected at `now` (the sender enters fast recovery) with the window at `cwnd` and
    /// `flight` segments outstanding: returns the new `ssthresh`, which the window drops to
    /// (at least the sender's minimum). Reno: half the flight, at least 2.
    #[inline(always)]
    fn on_loss(&self, _st: &mut Self::State, _now: SimTime, _cwnd: f64, flight: f64) -> f64 {
        (flight / 2.0).max(2.0)
    }

    /// Retransmission timeout at `now`: returns the new `ssthresh` (the window restarts from
    /// the sender's minimum). Reno: half the flight, at least 2.
    #[inline(always)]
    fn on_timeout(&self, _st: &mut Self::State, _now: SimTime, _cwnd: f64, flight: f64) -> f64 {
        (flight / 2.0).max(2.0)
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

macro_rules! window_cc_spec {
    ([] window { $($kind:ident: $cm:ident::$cc:ident, $name:literal, $ecn:literal, $about:literal, $notes:literal;)* } rate { $($rate:tt)* }) => {
        /// The window controller a TCP scheme uses, with its parameters (the lowered
        /// configuration): one variant per window row of the registry
        /// (`transport::registry`).
        #[derive(Clone, Copy, Debug, PartialEq, Serialize)]
        #[serde(tag = "algorithm", rename_all = "snake_case")]
        pub enum WindowCcSpec {
            $($cc($cc),)*
        }
    };
}
crate::transport::registry::ccs!(window_cc_spec []);

/// The feedback of one acknowledgement at an RDMA sender (sequence numbers in payload bytes
/// from the queue pair's first byte, as in the HPCC ns-3 simulator).
#[derive(Clone, Copy, Debug)]
pub struct RateAck<'a> {
    pub now: SimTime,
    /// The receiver's next expected byte (cumulative acknowledgement).
    pub ack_bytes: u64,
    /// The sender's next byte to send, after this acknowledgement was processed.
    pub nxt_bytes: u64,
    /// The acknowledgement carries the congestion flag (an echoed CE mark).
    pub ece: bool,
    /// A NACK (go-back-N) rather than an ACK.
    pub nack: bool,
    /// Round trip of the acknowledged packet: now − the send time it echoes.
    pub rtt: SimTime,
    /// The acknowledged packet's telemetry, echoed (empty without telemetry).
    pub int: &'a [IntHop],
}

/// A rate congestion controller of an RDMA queue pair (per-run parameters; per-queue-pair
/// state in `State`).
pub trait RateCc: Clone + std::fmt::Debug {
    type State: Clone + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned;

    /// The state of a new queue pair on a host whose line rate is `line_bps`.
    fn state(&self, line_bps: f64) -> Self::State;

    /// Whether data packets of this controller's queue pairs collect in-band telemetry.
    const TELEMETRY: bool = false;

    /// An acknowledgement echoed congestion (a CNP) at `now`.
    fn on_congestion(&self, _st: &mut Self::State, _now: SimTime) {}

    /// Every acknowledgement (ACK or NACK), after the sender processed it; returns whether the
    /// rate changed in a way that moves an already scheduled send (HPCC's `ChangeRate`).
    fn on_ack(&self, _st: &mut Self::State, _ack: &RateAck) -> bool {
        false
    }

    /// The current rate in bit/s as of the last update, without advancing any timer (for
    /// rate-scaled windows).
    fn current_rate(&self, st: &Self::State) -> f64;

    /// The sending rate at `now`, in bits per second. By default the rate as of the last
    /// update; a controller whose rate moves with time (DCQCN's timers) overrides it.
    #[inline]
    fn rate_at(&self, st: &mut Self::State, _now: SimTime) -> f64 {
        self.current_rate(st)
    }

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct LineRate;

impl RateCc for LineRate {
    /// The line rate.
    type State = f64;

    fn state(&self, line_bps: f64) -> f64 {
        line_bps
    }

    fn current_rate(&self, st: &f64) -> f64 {
        *st
    }

    fn sample(&self, st: &f64) -> (Option<f64>, Option<f64>) {
        (None, Some(*st))
    }
}
