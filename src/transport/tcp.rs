//! TCP: NewReno with SACK-based loss recovery; the congestion controller is a type parameter
//! ([`super::cc::WindowCc`]: Reno, DCTCP, D2TCP, PDTCP, Swift, CUBIC), asked at fixed points of
//! every ACK and at every loss and timeout.
//!
//! Modelled (per flow, connection pre-established, no SYN/FIN):
//! * segments of `mss` payload bytes at fixed offsets; the window `cwnd` is in segments (a
//!   float, as in ns-2); growth is the controller's (Reno's by default: slow start, then +1
//!   segment per RTT);
//! * the receiver acknowledges every data packet with the cumulative ACK, one SACK block (the
//!   received block holding the segment that triggered the ACK, like Linux's first block), the
//!   packet's CE echoed as ECE, and the packet's send timestamp echoed for RTT sampling;
//! * an RFC 6675-style scoreboard: a segment is lost when `dupthresh` segments above it are
//!   SACKed; on the first loss the sender enters fast recovery once per window
//!   (`ssthresh` from the controller's `on_loss`, Reno's `max(flight/2, 2)` by default;
//!   `cwnd = ssthresh`), retransmits lost segments first and sends while
//!   `pipe < cwnd`; recovery ends when the cumulative ACK passes the `recover` point;
//! * retransmission timeout `max(rto_min, srtt + 4·rttvar)` (RFC 6298), doubled per expiry up
//!   to `rto_max`; on expiry every un-SACKed outstanding segment is marked lost, `ssthresh`
//!   comes from the controller's `on_timeout`, `cwnd` drops to the minimum and slow start resumes (go-back-N over the scoreboard);
//! * ECN: every ACK's feedback goes to the controller first; then, on an ECN echo, at most once
//!   per window (ns-2: only for ACKs beyond the `snd_nxt` recorded at the previous reduction)
//!   and never during loss recovery, the window shrinks by the controller's penalty:
//!   `cwnd ← cwnd·(1 − P/2)`, `ssthresh ← cwnd`, which also ends slow start.
//!
//! * pFabric's end host (Alizadeh et al., SIGCOMM 2013, from the published description): the
//!   same sender with an initial window of about one bandwidth-delay product ("start at line
//!   rate"), no fast retransmit (losses are found by a fixed, short timeout), TCP's window
//!   growth, an optional window cap, and every data packet stamped with a rank
//!   ([`RankKind`]) that pFabric switches schedule and drop by (`net::port`).
//!
//! Not modelled: pFabric's probe mode after repeated timeouts (a flow keeps retransmitting
//! one segment per timeout instead), delayed ACKs, receive-window limits, Nagle, timestamps on the wire, SACK
//! reneging, lost-retransmission detection other than by timeout, limited transmit.

use super::cc::{AckFeedback, FlowCtx, Growth, SenderView, WindowCc};
use super::{Flow, FlowSample, Host, Protocol, Rx, reply};
use crate::ids::FlowId;
use crate::net::packet::{Hdr, Packet, PktKind, ecn, flags};
use crate::units::SimTime;
use serde::Serialize;
use std::collections::VecDeque;

/// What a pFabric packet's rank (priority number, smaller first) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankKind {
    /// The flow's remaining size: bytes not yet acknowledged when the packet is sent
    /// (shortest remaining processing time first).
    RemainingSize,
    /// The flow's absolute deadline in picoseconds (earliest deadline first); flows without a
    /// deadline rank after every flow with one, among themselves by remaining size.
    Deadline,
}

/// Rank of flows without a deadline under [`RankKind::Deadline`]: above every deadline (2^62
/// ps is 53 days) and ordered by remaining size.
const NO_DEADLINE_RANK: u64 = 1 << 62;

impl RankKind {
    /// The rank of a packet of a flow of `size` bytes with `acked` bytes acknowledged.
    #[inline]
    pub fn rank(self, size: u64, acked: u64, deadline: Option<SimTime>) -> u64 {
        let remaining = size - acked.min(size);
        match (self, deadline) {
            (RankKind::Deadline, Some(d)) => d.0.min(NO_DEADLINE_RANK - 1),
            (RankKind::Deadline, None) => NO_DEADLINE_RANK + remaining,
            (RankKind::RemainingSize, _) => remaining,
        }
    }
}

/// Parameters shared by every TCP flow of a run.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TcpParams {
    pub mss: u32,
    /// Header bytes added to every packet on the wire (data and ACK).
    pub header: u32,
    pub init_cwnd: f64,
    pub min_cwnd: f64,
    pub rto_min: SimTime,
    pub rto_max: SimTime,
    pub rto_init: SimTime,
    /// Factor applied to the timeout at each expiry.
    pub rto_backoff: f64,
    pub dupthresh: u32,
    /// Data packets are sent ECN-capable (ECT).
    pub ecn: bool,
    /// Largest window in segments (`f64::INFINITY`: none).
    pub max_cwnd: f64,
    /// pFabric: the rank stamped on data packets (None: not a pFabric flow).
    pub rank: Option<RankKind>,
}

/// Per-segment scoreboard flags.
const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETX: u8 = 4;

/// The sender's view of outstanding segments `[una, nxt)`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Scoreboard {
    /// Segment index of `st[0]` (= snd_una / mss).
    base: u64,
    st: VecDeque<u8>,
    n_sacked: u64,
    /// Lost and neither SACKed nor retransmitted.
    n_lost: u64,
    /// Retransmitted and not SACKed (counted in pipe).
    n_retx: u64,
    /// Lowest segment that may still need retransmission.
    retx_hint: u64,
    /// SACKed segments as sorted, disjoint, non-adjacent runs `[lo, hi)`: SACK processing and
    /// loss marking work on runs, so an ACK costs O(runs + new segments), not O(window).
    runs: Vec<(u64, u64)>,
}

impl Scoreboard {
    fn out(&self) -> u64 {
        self.st.len() as u64
    }
    /// RFC 6675 pipe, in segments.
    fn pipe(&self) -> u64 {
        self.out() - self.n_sacked - self.n_lost
    }
    fn push(&mut self) {
        self.st.push_back(0);
    }
    /// Removes segments below `seg` (cumulatively acknowledged).
    fn advance(&mut self, seg: u64) {
        while self.base < seg {
            let Some(f) = self.st.pop_front() else {
                self.base = seg;
                break;
            };
            if f & SACKED != 0 {
                self.n_sacked -= 1;
            } else {
                if f & LOST != 0 && f & RETX == 0 {
                    self.n_lost -= 1;
                }
                if f & RETX != 0 {
                    self.n_retx -= 1;
                }
            }
            self.base += 1;
        }
        if self.retx_hint < self.base {
            self.retx_hint = self.base;
        }
        let drop = self.runs.partition_point(|r| r.1 <= self.base);
        self.runs.drain(..drop);
        if let Some(r) = self.runs.first_mut() {
            r.0 = r.0.max(self.base);
        }
    }
    /// Marks `[lo, hi)` SACKed; returns whether anything new was SACKed.
    fn sack(&mut self, lo: u64, hi: u64) -> bool {
        let lo = lo.max(self.base);
        let hi = hi.min(self.base + self.out());
        if lo >= hi {
            return false;
        }
        // Mark the parts of [lo, hi) that no run covers yet.
        let mut new = false;
        let mut cur = lo;
        let mut j = self.runs.partition_point(|r| r.1 <= lo);
        while cur < hi {
            if j < self.runs.len() && self.runs[j].0 <= cur {
                cur = cur.max(self.runs[j].1);
                j += 1;
                continue;
            }
            let gap_end = if j < self.runs.len() {
                self.runs[j].0.min(hi)
            } else {
                hi
            };
            for s in cur..gap_end {
                let f = &mut self.st[(s - self.base) as usize];
                debug_assert!(*f & SACKED == 0);
                if *f & LOST != 0 && *f & RETX == 0 {
                    self.n_lost -= 1;
                }
                if *f & RETX != 0 {
                    self.n_retx -= 1;
                }
                *f = SACKED;
                self.n_sacked += 1;
                new = true;
            }
            cur = gap_end;
        }
        // Merge [lo, hi) into the runs (absorbing overlapping and adjacent ones).
        let a = self.runs.partition_point(|r| r.1 < lo);
        let b = self.runs.partition_point(|r| r.0 <= hi);
        let (mut nlo, mut nhi) = (lo, hi);
        if a < b {
            nlo = nlo.min(self.runs[a].0);
            nhi = nhi.max(self.runs[b - 1].1);
        }
        self.runs.splice(a..b, std::iter::once((nlo, nhi)));
        debug_assert_eq!(
            self.runs.iter().map(|r| r.1 - r.0).sum::<u64>(),
            self.n_sacked
        );
        new
    }
    /// Marks as lost every hole with at least `dupthresh` SACKed segments above it. Scans from
    /// the top and stops at the first segment already lost (everything below it is lost or
    /// SACKed already).
    fn mark_lost(&mut self, dupthresh: u32) {
        if self.n_sacked < dupthresh as u64 {
            return;
        }
        // Holes are the gaps below each run; every segment of a gap has the same number of
        // SACKed segments above it.
        let mut above = 0u64;
        for k in (0..self.runs.len()).rev() {
            above += self.runs[k].1 - self.runs[k].0;
            let gap_hi = self.runs[k].0;
            let gap_lo = if k > 0 { self.runs[k - 1].1 } else { self.base };
            if gap_lo >= gap_hi || above < dupthresh as u64 {
                continue;
            }
            for s in (gap_lo..gap_hi).rev() {
                let f = &mut self.st[(s - self.base) as usize];
                if *f & LOST != 0 {
                    return;
                }
                *f |= LOST;
                self.n_lost += 1;
                if s < self.retx_hint {
                    self.retx_hint = s;
                }
            }
        }
    }
    /// Marks the first outstanding segment lost (dupthresh duplicate ACKs without SACK info).
    fn mark_first_lost(&mut self) {
        if let Some(f) = self.st.front_mut()
            && *f & (SACKED | LOST) == 0
        {
            *f |= LOST;
            self.n_lost += 1;
            self.retx_hint = self.base;
        }
    }
    /// After a timeout: everything outstanding and not SACKed is lost, nothing is in flight.
    fn mark_all_lost(&mut self) {
        self.n_lost = 0;
        self.n_retx = 0;
        for f in self.st.iter_mut() {
            if *f & SACKED == 0 {
                *f = LOST;
                self.n_lost += 1;
            }
        }
        self.retx_hint = self.base;
    }
    /// Lowest lost segment not yet retransmitted.
    fn next_lost(&mut self) -> Option<u64> {
        if self.n_lost == 0 {
            return None;
        }
        let start = (self.retx_hint - self.base) as usize;
        for i in start..self.st.len() {
            let f = self.st[i];
            if f & LOST != 0 && f & (SACKED | RETX) == 0 {
                self.retx_hint = self.base + i as u64;
                return Some(self.retx_hint);
            }
        }
        None
    }
    fn mark_retx(&mut self, seg: u64) {
        let f = &mut self.st[(seg - self.base) as usize];
        debug_assert!(*f & LOST != 0 && *f & RETX == 0);
        *f |= RETX;
        self.n_lost -= 1;
        self.n_retx += 1;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Recovery {
    None,
    /// Fast recovery after SACK/duplicate-ACK loss detection.
    Fast,
    /// Loss recovery after a timeout (slow start over the scoreboard).
    Timeout,
}

/// What the sender wants to transmit next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retx: bool,
}

/// Outcome of processing an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckResult {
    /// The cumulative ACK advanced.
    pub advanced: bool,
    /// The whole message is acknowledged.
    pub done: bool,
    /// The congestion window was reduced by ECN on this ACK.
    pub ecn_reduced: bool,
    /// Fast recovery started on this ACK.
    pub entered_recovery: bool,
}

/// TCP sender state, with its window controller's state.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TcpSender<C: WindowCc> {
    pub size: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub cwnd: f64,
    pub ssthresh: f64,
    dupacks: u32,
    recovery: Recovery,
    recover: u64,
    /// Entering fast recovery retransmits the first lost segment regardless of pipe (RFC 6675
    /// step 4.3).
    force_retx: bool,
    sb: Scoreboard,
    srtt: f64,
    rttvar: f64,
    has_rtt: bool,
    pub rto: SimTime,
    /// The window controller's state.
    pub cc: C::State,
    cwr_end: u64,
    /// Counters.
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub ecn_reductions: u64,
    /// ECN reductions by the window before them, in segments (bins [`REDUCTION_BINS`]).
    pub reductions_by_window: [u32; REDUCTION_BINS.len()],
    /// ECN reductions after which the exponents 0.5 and 2 would have left the same whole
    /// window (`floor(W·(1 − alpha^e/2))`): how much room the priority exponent has.
    pub reductions_same_window: u32,
    /// ECN reductions by the priority exponent in force (bins [`exponent_bin`]); all in the
    /// bin of 1 for controllers without one.
    pub reductions_by_exponent: [u32; EXPONENT_BINS.len()],
}

/// Lower bounds (segments) of the bins of [`TcpSender::reductions_by_window`].
pub const REDUCTION_BINS: [u32; 7] = [0, 2, 3, 4, 5, 8, 16];

/// The bins of a priority exponent (PDTCP's `p`, clipped to [0.5, 2]): at the floor, between
/// it and 1, exactly 1, between 1 and the ceiling, at the ceiling.
pub const EXPONENT_BINS: [&str; 5] = ["0.5", "(0.5,1)", "1", "(1,2)", "2"];

/// The bin of [`EXPONENT_BINS`] exponent `e` falls in.
pub fn exponent_bin(e: f64) -> usize {
    if e <= 0.5 {
        0
    } else if e < 1.0 {
        1
    } else if e == 1.0 {
        2
    } else if e < 2.0 {
        3
    } else {
        4
    }
}

impl<C: WindowCc> TcpSender<C> {
    pub fn new(size: u64, p: &TcpParams, cc: &C) -> Self {
        TcpSender {
            size,
            snd_una: 0,
            snd_nxt: 0,
            cwnd: p.init_cwnd.min(p.max_cwnd),
            ssthresh: f64::INFINITY,
            dupacks: 0,
            recovery: Recovery::None,
            recover: 0,
            force_retx: false,
            sb: Scoreboard::default(),
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            rto: p.rto_init,
            cc: cc.state(),
            cwr_end: 0,
            retransmits: 0,
            timeouts: 0,
            fast_recoveries: 0,
            ecn_reductions: 0,
            reductions_by_window: [0; REDUCTION_BINS.len()],
            reductions_same_window: 0,
            reductions_by_exponent: [0; EXPONENT_BINS.len()],
        }
    }

    fn seg_len(&self, seg: u64, mss: u32) -> u32 {
        let off = seg * mss as u64;
        (self.size - off).min(mss as u64) as u32
    }

    fn window(&self) -> u64 {
        // Send while pipe < floor(cwnd); never less than one segment.
        (self.cwnd.floor() as u64).max(1)
    }

    /// Whether the sender has a segment it may transmit now.
    pub fn can_send(&self) -> bool {
        if self.force_retx && self.sb.n_lost > 0 {
            return true;
        }
        if self.sb.pipe() >= self.window() {
            return false;
        }
        self.sb.n_lost > 0 || self.snd_nxt < self.size
    }

    /// Bytes sent and not yet cumulatively acknowledged.
    pub fn in_flight_bytes(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Takes the next segment to transmit (a retransmission first), if the window allows.
    pub fn next_segment(&mut self, p: &TcpParams) -> Option<Segment> {
        let forced = std::mem::take(&mut self.force_retx) && self.sb.n_lost > 0;
        if !forced && self.sb.pipe() >= self.window() {
            return None;
        }
        let mss = p.mss;
        if let Some(seg) = self.sb.next_lost() {
            self.sb.mark_retx(seg);
            self.retransmits += 1;
            return Some(Segment {
                seq: seg * mss as u64,
                len: self.seg_len(seg, mss),
                retx: true,
            });
        }
        if self.snd_nxt < self.size {
            let seg = self.snd_nxt / mss as u64;
            let len = self.seg_len(seg, mss);
            self.sb.push();
            let s = Segment {
                seq: self.snd_nxt,
                len,
                retx: false,
            };
            self.snd_nxt += len as u64;
            return Some(s);
        }
        None
    }

    fn rtt_sample(&mut self, r: SimTime, p: &TcpParams) {
        let r = r.0 as f64;
        if !self.has_rtt {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        let rto = (self.srtt + 4.0 * self.rttvar).round() as u64;
        self.rto = SimTime(rto.clamp(p.rto_min.0, p.rto_max.0));
    }

    /// Smoothed RTT, if measured.
    pub fn srtt(&self) -> Option<SimTime> {
        self.has_rtt.then_some(SimTime(self.srtt as u64))
    }

    /// What the window controller may read of this sender.
    #[inline]
    fn view(&self, mss: u32) -> SenderView {
        SenderView {
            size: self.size,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            cwnd: self.cwnd,
            srtt: self.srtt(),
            mss,
        }
    }

    /// Processes an ACK: cumulative `ack`, optional SACK block in segments, ECE flag, and the
    /// RTT sample `rtt` (now minus the echoed timestamp); the window controller `cc` is told
    /// about the feedback and asked for the ECN penalty and the growth.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        ack: u64,
        sack: Option<(u64, u64)>,
        ece: bool,
        rtt: SimTime,
        p: &TcpParams,
        cc: &C,
        ctx: &FlowCtx,
    ) -> AckResult {
        let mut res = AckResult::default();
        let mss = p.mss as u64;
        let newly = ack.saturating_sub(self.snd_una);
        if newly > 0 {
            res.advanced = true;
            self.snd_una = ack;
            self.sb
                .advance(ack.div_ceil(mss).min(self.snd_nxt.div_ceil(mss)));
            self.dupacks = 0;
            self.rtt_sample(rtt, p);
        } else if self.snd_nxt > self.snd_una {
            self.dupacks += 1;
        }
        let mut new_sack = false;
        if let Some((lo, hi)) = sack {
            new_sack = self.sb.sack(lo, hi);
        }
        if new_sack {
            self.sb.mark_lost(p.dupthresh);
        } else if newly == 0 && self.dupacks >= p.dupthresh && self.recovery == Recovery::None {
            self.sb.mark_first_lost();
        }

        // The controller takes the feedback (DCTCP: the per-window fraction of marked bytes).
        let view = self.view(p.mss);
        cc.on_ack(&mut self.cc, AckFeedback { newly, ece, rtt }, &view, ctx);

        // End of recovery.
        match self.recovery {
            Recovery::Fast if self.snd_una >= self.recover => {
                self.recovery = Recovery::None;
                self.cwnd = self.ssthresh.max(p.min_cwnd);
            }
            Recovery::Timeout if self.snd_una >= self.recover => {
                self.recovery = Recovery::None;
            }
            _ => {}
        }

        // Entering fast recovery (once per window: not before the previous recover point).
        if self.recovery == Recovery::None && self.sb.n_lost > 0 && self.snd_una >= self.recover {
            let flight = self.sb.out() as f64;
            self.ssthresh = cc.on_loss(&mut self.cc, ctx.now, self.cwnd, flight);
            self.cwnd = self.ssthresh.max(p.min_cwnd);
            self.recover = self.snd_nxt;
            self.recovery = Recovery::Fast;
            self.force_retx = true;
            self.fast_recoveries += 1;
            res.entered_recovery = true;
        }

        // ECN reaction: at most once per window (ns-2: only for ACKs beyond the `snd_nxt` recorded
        // at the previous reduction), not during loss recovery.
        if ece
            && self.recovery == Recovery::None
            && self.snd_una > self.cwr_end
            && let Some(penalty) = cc.ecn_penalty(&self.cc)
        {
            let before = self.cwnd;
            let bin = REDUCTION_BINS.partition_point(|&b| b as f64 <= before.floor()) - 1;
            self.reductions_by_window[bin] += 1;
            let alpha = cc.alpha(&self.cc).unwrap_or(penalty);
            let whole = |e: f64| {
                (before * (1.0 - alpha.powf(e) / 2.0))
                    .max(p.min_cwnd)
                    .floor()
            };
            if whole(0.5) == whole(2.0) {
                self.reductions_same_window += 1;
            }
            self.reductions_by_exponent[exponent_bin(cc.exponent(&self.cc).unwrap_or(1.0))] += 1;
            self.cwnd = (self.cwnd * (1.0 - penalty / 2.0)).max(p.min_cwnd);
            self.ssthresh = self.cwnd.max(p.min_cwnd);
            self.cwr_end = self.snd_nxt;
            self.ecn_reductions += 1;
            res.ecn_reduced = true;
        }

        // Window growth on new data acknowledged, outside fast recovery.
        if newly > 0 && !res.ecn_reduced && self.recovery != Recovery::Fast {
            let segs = newly as f64 / mss as f64;
            let g = Growth {
                segs,
                ssthresh: self.ssthresh,
                now: ctx.now,
                srtt: view.srtt,
            };
            cc.grow(&mut self.cc, &mut self.cwnd, g);
            self.cwnd = self.cwnd.min(p.max_cwnd);
        }
        res.done = self.snd_una >= self.size;
        res
    }

    /// Retransmission timeout.
    pub fn on_timeout(&mut self, p: &TcpParams, cc: &C, now: SimTime) {
        self.timeouts += 1;
        let flight = self.sb.out() as f64;
        self.ssthresh = cc.on_timeout(&mut self.cc, now, self.cwnd, flight);
        self.cwnd = p.min_cwnd;
        self.sb.mark_all_lost();
        self.recovery = Recovery::Timeout;
        self.recover = self.snd_nxt;
        self.dupacks = 0;
        let backed = (self.rto.0 as f64 * p.rto_backoff).min(p.rto_max.0 as f64);
        self.rto = SimTime(backed as u64);
    }

    /// Whether data is outstanding (the retransmission timer should run).
    pub fn outstanding(&self) -> bool {
        self.snd_una < self.snd_nxt
    }
}

/// TCP receiver state.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TcpReceiver {
    pub rcv_nxt: u64,
    /// Out-of-order blocks above `rcv_nxt`, sorted and disjoint, `[lo, hi)` in bytes.
    ooo: Vec<(u64, u64)>,
    /// Data packets that carried nothing new (spurious retransmissions).
    pub duplicates: u64,
}

/// What the receiver answers to one data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcvResult {
    pub ack: u64,
    /// The received block containing the segment, in bytes, when above `ack`.
    pub sack: Option<(u64, u64)>,
    pub duplicate: bool,
}

impl TcpReceiver {
    pub fn on_data(&mut self, seq: u64, len: u32) -> RcvResult {
        let (lo, hi) = (seq, seq + len as u64);
        let mut duplicate = false;
        if hi <= self.rcv_nxt {
            duplicate = true;
        } else if lo <= self.rcv_nxt {
            self.rcv_nxt = hi;
            // Absorb out-of-order blocks now contiguous.
            while let Some(&(a, b)) = self.ooo.first() {
                if a <= self.rcv_nxt {
                    self.rcv_nxt = self.rcv_nxt.max(b);
                    self.ooo.remove(0);
                } else {
                    break;
                }
            }
        } else {
            // Insert [lo, hi) and merge.
            let i = self.ooo.partition_point(|&(_, b)| b < lo);
            if i < self.ooo.len() && self.ooo[i].0 <= lo && self.ooo[i].1 >= hi {
                duplicate = true;
            } else {
                let mut nlo = lo;
                let mut nhi = hi;
                let mut j = i;
                while j < self.ooo.len() && self.ooo[j].0 <= nhi {
                    nlo = nlo.min(self.ooo[j].0);
                    nhi = nhi.max(self.ooo[j].1);
                    j += 1;
                }
                self.ooo.splice(i..j, std::iter::once((nlo, nhi)));
            }
        }
        if duplicate {
            self.duplicates += 1;
        }
        let sack = if lo >= self.rcv_nxt {
            self.ooo.iter().find(|&&(a, b)| a <= lo && hi <= b).copied()
        } else {
            None
        };
        RcvResult {
            ack: self.rcv_nxt,
            sack,
            duplicate,
        }
    }
}

/// The SACK block of an ACK as its header word: in segments, not bytes, so that the word
/// holds both ends.
#[inline]
fn encode_sack(sack: Option<(u64, u64)>, mss: u64) -> Hdr {
    sack.map(|(lo, hi)| Hdr::with_sack(lo / mss, hi.div_ceil(mss)))
        .unwrap_or(Hdr::NONE)
}

/// One TCP connection: both ends (the simulator knows both hosts).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TcpConn<C: WindowCc> {
    pub snd: TcpSender<C>,
    pub rcv: TcpReceiver,
}

/// A TCP connection's counters and congestion state, whatever its window controller.
#[derive(Clone, Copy, Debug)]
pub struct TcpStats {
    /// Bytes cumulatively acknowledged.
    pub snd_una: u64,
    pub alpha: Option<f64>,
    pub exponent: Option<f64>,
    pub retransmits: u64,
    pub timeouts: u64,
    pub ecn_reductions: u64,
    pub reductions_by_window: [u32; REDUCTION_BINS.len()],
    pub reductions_same_window: u32,
    pub reductions_by_exponent: [u32; EXPONENT_BINS.len()],
    /// Data packets that carried nothing new to the receiver.
    pub duplicates: u64,
}

/// The TCP transport of a run with window controller `C`: its parameters and every flow's
/// connection.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Tcp<C: WindowCc> {
    pub params: TcpParams,
    pub cc: C,
    pub conns: Vec<TcpConn<C>>,
}

impl<C: WindowCc> Tcp<C> {
    pub fn new(params: TcpParams, cc: C, flows: &[Flow]) -> Self {
        let conns = flows
            .iter()
            .map(|f| TcpConn {
                snd: TcpSender::new(f.size, &params, &cc),
                rcv: TcpReceiver::default(),
            })
            .collect();
        Tcp { params, cc, conns }
    }

    /// A fresh connection for flow `fl` in slot `f` (one past the last, or a released one).
    pub fn open(&mut self, f: FlowId, fl: &Flow) {
        let c = TcpConn {
            snd: TcpSender::new(fl.size, &self.params, &self.cc),
            rcv: TcpReceiver::default(),
        };
        match f.idx().cmp(&self.conns.len()) {
            std::cmp::Ordering::Less => self.conns[f.idx()] = c,
            std::cmp::Ordering::Equal => self.conns.push(c),
            std::cmp::Ordering::Greater => unreachable!("slots are allocated in order"),
        }
    }

    /// Flow `f`'s counters and congestion state.
    pub fn stats(&self, f: FlowId) -> TcpStats {
        let TcpConn { snd, rcv } = &self.conns[f.idx()];
        TcpStats {
            snd_una: snd.snd_una,
            alpha: self.cc.alpha(&snd.cc),
            exponent: self.cc.exponent(&snd.cc),
            retransmits: snd.retransmits,
            timeouts: snd.timeouts,
            ecn_reductions: snd.ecn_reductions,
            reductions_by_window: snd.reductions_by_window,
            reductions_same_window: snd.reductions_same_window,
            reductions_by_exponent: snd.reductions_by_exponent,
            duplicates: rcv.duplicates,
        }
    }
}

impl<C: WindowCc> Protocol for Tcp<C> {
    #[inline(always)]
    fn has_data(&self, f: FlowId, _fl: &Flow) -> bool {
        self.conns[f.idx()].snd.can_send()
    }

    /// The next segment (a retransmission first) if the window allows; pFabric stamps its
    /// rank in its header word. Arms the retransmission timer if it is not running.
    #[inline(always)]
    fn emit(&mut self, f: FlowId, h: &mut impl Host, pkt: &mut Packet) -> bool {
        let now = h.now();
        let tp = &self.params;
        let snd = &mut self.conns[f.idx()].snd;
        let Some(seg) = snd.next_segment(tp) else {
            return false;
        };
        let fl = h.flow_mut(f);
        if let Some(r) = tp.rank {
            pkt.hdr = Hdr::with_rank(r.rank(fl.size, snd.snd_una, fl.deadline));
        }
        pkt.seq = seg.seq;
        pkt.payload = seg.len as u16;
        pkt.size = (seg.len + tp.header) as u16;
        if tp.ecn {
            pkt.ecn = ecn::ECT;
        }
        if seg.retx {
            pkt.flags |= flags::RETX;
        }
        fl.stats.data_pkts += 1;
        if !fl.timer.armed() {
            let rto = snd.rto;
            h.set_timer(f, now + rto);
        }
        true
    }

    /// The receiver takes the segment and answers with an ACK: cumulative point, one SACK
    /// block, the echoed timestamp and CE as ECE.
    #[inline]
    fn on_data(&mut self, h: &mut impl Host, pkt: &Packet) -> Rx {
        let now = h.now();
        let f = pkt.flow;
        let fl = h.flow_mut(f);
        if pkt.ce() {
            fl.stats.ce_rcvd += 1;
        }
        let r = self.conns[f.idx()].rcv.on_data(pkt.seq, pkt.payload as u32);
        let received = r.ack >= fl.size && fl.rcv_finish.is_none();
        if received {
            fl.rcv_finish = Some(now);
        }
        let hdr = encode_sack(r.sack, self.params.mss as u64);
        let ack = reply(
            pkt,
            PktKind::Ack,
            r.ack,
            hdr,
            self.params.header,
            fl.ack_prio,
        );
        Rx {
            reply: Some(ack),
            received,
        }
    }

    /// The sender takes an ACK: the flow finishes when everything is acknowledged; otherwise
    /// the retransmission timer restarts when the cumulative point advanced.
    #[inline]
    fn on_control(&mut self, h: &mut impl Host, pkt: &Packet) -> bool {
        if pkt.kind != PktKind::Ack {
            return false;
        }
        let now = h.now();
        let f = pkt.flow;
        // The sender's port: the data's connection is the ACK's, reversed.
        let host_rate = h.line_rate(pkt.dst, pkt.src, pkt.dport, pkt.sport);
        let fl = h.flow(f);
        if fl.done() {
            return false;
        }
        let ctx = FlowCtx {
            now,
            start: fl.start,
            deadline: fl.deadline,
            host_bytes_per_ps: host_rate.bps() as f64 / 8e12,
        };
        let snd = &mut self.conns[f.idx()].snd;
        let r = snd.on_ack(
            pkt.seq,
            pkt.hdr.sack(),
            pkt.ecn & ecn::ECE != 0,
            now - pkt.ts,
            &self.params,
            &self.cc,
            &ctx,
        );
        if r.done {
            h.flow_mut(f).finish = Some(now);
            h.clear_timer(f);
            let tag = h.flow(f).tag;
            h.finished(f.idx(), pkt.uid, false, tag);
            return false;
        }
        if r.advanced {
            if snd.outstanding() {
                let rto = snd.rto;
                h.set_timer(f, now + rto);
            } else {
                h.clear_timer(f);
            }
        }
        true
    }

    /// Retransmission timeout: go back over the scoreboard and restart the timer.
    fn on_timer(&mut self, f: FlowId, h: &mut impl Host) {
        let snd = &mut self.conns[f.idx()].snd;
        if snd.outstanding() {
            snd.on_timeout(&self.params, &self.cc, h.now());
            let rto = snd.rto;
            h.set_timer(f, h.now() + rto);
        }
    }

    fn adopt(&mut self, other: &mut Self, f: FlowId, sender: bool) {
        let (a, b) = (&mut self.conns[f.idx()], &mut other.conns[f.idx()]);
        if sender {
            std::mem::swap(&mut a.snd, &mut b.snd);
        } else {
            std::mem::swap(&mut a.rcv, &mut b.rcv);
        }
    }

    fn sample(&self, f: FlowId) -> Option<FlowSample> {
        let snd = &self.conns[f.idx()].snd;
        Some(FlowSample {
            cwnd_pkts: Some(snd.cwnd),
            alpha: self.cc.alpha(&snd.cc),
            priority: self.cc.exponent(&snd.cc),
            rate_bps: None,
        })
    }
}

#[cfg(test)]
mod tests;
