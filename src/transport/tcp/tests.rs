use super::*;

#[test]
fn exponent_bins_separate_the_clip_bounds_and_one() {
    let bins: Vec<usize> = [0.5, 0.50001, 0.99, 1.0, 1.01, 1.99, 2.0]
        .iter()
        .map(|&e| exponent_bin(e))
        .collect();
    assert_eq!(bins, [0, 1, 1, 2, 3, 3, 4]);
    assert_eq!(EXPONENT_BINS.len(), 5);
}

use crate::transport::cc::pdtcp::ExponentPolicy;
use crate::transport::cc::{Dctcp, Pdtcp, Reno};

/// A test's TCP parameters and window controller.
struct P<C> {
    tcp: TcpParams,
    cc: C,
}

impl<C: WindowCc> TcpSender<C> {
    /// `on_ack` for flows without a deadline, at time zero.
    fn on_ack_t(
        &mut self,
        ack: u64,
        sack: Option<(u64, u64)>,
        ece: bool,
        rtt: SimTime,
        p: &P<C>,
    ) -> AckResult {
        let ctx = FlowCtx {
            now: SimTime::ZERO,
            start: SimTime::ZERO,
            deadline: None,
            host_bytes_per_ps: 10e9 / 8e12,
        };
        self.on_ack(ack, sack, ece, rtt, &p.tcp, &p.cc, &ctx)
    }
}

fn params<C: WindowCc>(cc: C) -> P<C> {
    let tcp = TcpParams {
        mss: 1000,
        header: 40,
        init_cwnd: 2.0,
        min_cwnd: 1.0,
        rto_min: SimTime::from_ms(1),
        rto_max: SimTime::from_ms(100),
        rto_init: SimTime::from_ms(1),
        rto_backoff: 2.0,
        dupthresh: 3,
        ecn: true,
        max_cwnd: f64::INFINITY,
        rank: None,
    };
    P { tcp, cc }
}

fn sender<C: WindowCc>(size: u64, p: &P<C>) -> TcpSender<C> {
    TcpSender::new(size, &p.tcp, &p.cc)
}

fn drain<C: WindowCc>(s: &mut TcpSender<C>, p: &P<C>) -> Vec<Segment> {
    std::iter::from_fn(|| s.next_segment(&p.tcp)).collect()
}

/// The run-based scoreboard agrees with a naive per-segment model: SACKed set, and a hole
/// is lost exactly when at least `dupthresh` SACKed segments lie above it.
#[test]
fn scoreboard_runs_match_naive_model() {
    let mut r = crate::engine::RngStream::new(9, "sb");
    for _case in 0..200 {
        let n = 1 + r.below(80);
        let mut sb = Scoreboard::default();
        for _ in 0..n {
            sb.push();
        }
        let mut naive = vec![false; n as usize];
        let base = r.below(3).min(n - 1);
        sb.advance(base);
        for _ in 0..r.below(12) {
            let lo = r.below(n);
            let hi = (lo + 1 + r.below(6)).min(n);
            sb.sack(lo, hi);
            for s in lo.max(base)..hi {
                naive[s as usize] = true;
            }
            sb.mark_lost(3);
        }
        for s in base..n {
            let f = sb.st[(s - base) as usize];
            assert_eq!(f & SACKED != 0, naive[s as usize], "segment {s}");
            let above = naive[s as usize + 1..].iter().filter(|&&x| x).count();
            if !naive[s as usize] {
                assert_eq!(
                    f & LOST != 0,
                    above >= 3,
                    "segment {s}, {above} SACKed above"
                );
            }
        }
        let sacked = naive[base as usize..].iter().filter(|&&x| x).count() as u64;
        assert_eq!(sb.n_sacked, sacked);
        assert_eq!(sb.pipe(), (n - base) - sb.n_sacked - sb.n_lost);
    }
}

#[test]
fn slow_start_doubles_per_rtt() {
    let p = params(Reno);
    let mut s = sender(100_000, &p);
    let segs = drain(&mut s, &p);
    assert_eq!(segs.len(), 2);
    for seg in &segs {
        s.on_ack_t(
            seg.seq + seg.len as u64,
            None,
            false,
            SimTime::from_us(10),
            &p,
        );
    }
    assert_eq!(s.cwnd, 4.0);
    assert_eq!(drain(&mut s, &p).len(), 4);
}

#[test]
fn receiver_reorders_and_sacks() {
    let mut r = TcpReceiver::default();
    assert_eq!(r.on_data(0, 100).ack, 100);
    let x = r.on_data(200, 100);
    assert_eq!((x.ack, x.sack), (100, Some((200, 300))));
    let x = r.on_data(400, 100);
    assert_eq!(x.sack, Some((400, 500)));
    let x = r.on_data(300, 100);
    assert_eq!(x.sack, Some((200, 500)));
    let x = r.on_data(100, 100);
    assert_eq!((x.ack, x.sack), (500, None));
    assert!(r.on_data(0, 100).duplicate);
    assert_eq!(r.duplicates, 1);
}

#[test]
fn three_sacks_trigger_fast_retransmit_of_the_hole() {
    let p = params(Reno);
    let mut s = sender(100_000, &p);
    s.cwnd = 10.0;
    s.ssthresh = 10.0;
    let segs = drain(&mut s, &p);
    assert_eq!(segs.len(), 10);
    // Segment 0 lost; 1, 2, 3 arrive.
    for k in 1..=3u64 {
        let r = s.on_ack_t(0, Some((1, k + 1)), false, SimTime::from_us(10), &p);
        assert_eq!(r.entered_recovery, k == 3);
    }
    assert_eq!(s.ssthresh, 5.0);
    let next = s.next_segment(&p.tcp).unwrap();
    assert_eq!(
        next,
        Segment {
            seq: 0,
            len: 1000,
            retx: true
        }
    );
    assert_eq!(s.retransmits, 1);
    // The retransmission fills the hole: cumulative ACK jumps past the SACKed block.
    let r = s.on_ack_t(4000, None, false, SimTime::from_us(10), &p);
    assert!(r.advanced);
    assert_eq!(s.snd_una, 4000);
}

#[test]
fn timeout_collapses_window_and_retransmits_from_una() {
    let p = params(Reno);
    let mut s = sender(10_000, &p);
    s.cwnd = 4.0;
    let segs = drain(&mut s, &p);
    assert_eq!(segs.len(), 4);
    s.on_timeout(&p.tcp, &Reno, SimTime::ZERO);
    assert_eq!(s.cwnd, 1.0);
    assert_eq!(s.rto, SimTime::from_ms(2));
    let seg = s.next_segment(&p.tcp).unwrap();
    assert_eq!((seg.seq, seg.retx), (0, true));
    assert!(s.next_segment(&p.tcp).is_none(), "window is one segment");
}

#[test]
fn dctcp_alpha_and_single_reduction_per_window() {
    let p = params(Dctcp {
        g: 1.0 / 16.0,
        init_alpha: 1.0,
    });
    let mut s = sender(1_000_000, &p);
    s.cwnd = 10.0;
    s.ssthresh = 10.0;
    let segs = drain(&mut s, &p);
    // First ACK ends the (empty) initial window: alpha decays towards F=1 (stays 1).
    let mut reductions = 0;
    let mut after_first = 0.0;
    for (i, seg) in segs.iter().enumerate() {
        let r = s.on_ack_t(
            seg.seq + seg.len as u64,
            None,
            true,
            SimTime::from_us(10),
            &p,
        );
        reductions += r.ecn_reduced as u32;
        if i == 0 {
            assert!(r.ecn_reduced);
            after_first = s.cwnd;
        }
    }
    assert_eq!(reductions, 1, "one reduction per window of data");
    // alpha = 1: cwnd halves (10 -> 5), then grows in congestion avoidance.
    assert_eq!(after_first, 5.0);
    assert_eq!(s.ssthresh, 5.0);
    // The next window's first ECE reduces again.
    let seg = s.next_segment(&p.tcp).unwrap();
    let r = s.on_ack_t(
        seg.seq + seg.len as u64,
        None,
        true,
        SimTime::from_us(10),
        &p,
    );
    assert!(r.ecn_reduced);
}

#[test]
fn dctcp_alpha_is_ewma_of_marked_fraction_per_window() {
    let g = 1.0 / 16.0;
    let p = params(Dctcp { g, init_alpha: 0.0 });
    let mut s = sender(u64::MAX / 2, &p);
    s.cwnd = 8.0;
    s.ssthresh = 1.0;
    // Window 0 ends at the first ACK (nothing recorded yet): alpha = g * F(first ACK) = 0.
    let segs = drain(&mut s, &p);
    assert_eq!(segs.len(), 8);
    let ack = |s: &mut TcpSender<Dctcp>, seg: &Segment, ece: bool| {
        s.on_ack_t(
            seg.seq + seg.len as u64,
            None,
            ece,
            SimTime::from_us(10),
            &p,
        )
    };
    ack(&mut s, &segs[0], false);
    assert_eq!(s.cc.alpha, 0.0);
    // The next window is [1000, 8000): 7 ACKs, 2 of them marked. It closes when the
    // cumulative ACK reaches 8000, at the last of them.
    for (i, seg) in segs[1..].iter().enumerate() {
        ack(&mut s, seg, i == 2 || i == 5);
    }
    let expect = g * (2.0 / 7.0);
    assert!(
        (s.cc.alpha - expect).abs() < 1e-12,
        "alpha {} expected {expect}",
        s.cc.alpha
    );
}

fn pdtcp(policy: ExponentPolicy) -> P<Pdtcp> {
    params(Pdtcp {
        g: 1.0 / 16.0,
        init_alpha: 0.0,
        policy,
        flip: true,
        fixed_p: None,
    })
}

fn ctx_at(now_us: u64, deadline_us: u64) -> FlowCtx {
    FlowCtx {
        now: SimTime::from_us(now_us),
        start: SimTime::ZERO,
        deadline: Some(SimTime::from_us(deadline_us)),
        host_bytes_per_ps: 10e9 / 8e12,
    }
}

#[test]
fn pdtcp_penalty_and_window_update() {
    let p = pdtcp(ExponentPolicy::RdOverRa);
    let mut s = sender(1_000_000, &p);
    s.cwnd = 40.0;
    s.ssthresh = 40.0;
    let segs = drain(&mut s, &p);
    s.cc.est.alpha = 0.25;
    s.cc.p = 2.0;
    s.cc.est.win_end = u64::MAX; // keep alpha and p fixed for this ACK
    let seg = segs[0];
    let r = s.on_ack_t(
        seg.seq + seg.len as u64,
        None,
        true,
        SimTime::from_us(10),
        &p,
    );
    assert!(r.ecn_reduced);
    // P = 0.25^2 = 0.0625; W = 40 (1 - 0.03125) = 38.75.
    assert!((s.cwnd - 38.75).abs() < 1e-12, "cwnd {}", s.cwnd);
    // With p = 0.5: P = 0.5, W = 40 * 0.75 = 30.
    let mut s = sender(1_000_000, &p);
    s.cwnd = 40.0;
    let segs = drain(&mut s, &p);
    s.cc.est.alpha = 0.25;
    s.cc.p = 0.5;
    s.cc.est.win_end = u64::MAX;
    s.on_ack_t(
        segs[0].seq + segs[0].len as u64,
        None,
        true,
        SimTime::from_us(10),
        &p,
    );
    assert!((s.cwnd - 30.0).abs() < 1e-12, "cwnd {}", s.cwnd);
}

#[test]
fn pdtcp_exponent_applies_from_the_first_ack() {
    // DCTCP's window boundary starts at 0 (as in ns-2), so alpha and p are first updated
    // by the first ACK, and then once per window of data.
    let p = pdtcp(ExponentPolicy::RdOverRa);
    let mut s = sender(100_000, &p);
    s.cwnd = 4.0;
    let segs = drain(&mut s, &p);
    assert_eq!(s.cc.p, 1.0);
    // First ACK at 100 us of a 1 ms deadline: RA = 1000 B / 100 us, RD = 99 000 B / 900 us,
    // RD/RA = 11, clipped to 2.
    let ack = |s: &mut TcpSender<Pdtcp>, seg: &Segment, now_us| {
        s.on_ack(
            seg.seq + seg.len as u64,
            None,
            false,
            SimTime::from_us(10),
            &p.tcp,
            &p.cc,
            &ctx_at(now_us, 1_000),
        )
    };
    ack(&mut s, &segs[0], 100);
    assert_eq!(s.cc.p, 2.0);
    // Within the same window (up to the 4 000 B sent) it holds: at 950 us the flow could
    // no longer make its deadline at line rate, but the flip waits for the next window.
    ack(&mut s, &segs[1], 950);
    assert_eq!((s.cc.p, s.cc.flipped_at), (2.0, None));
    ack(&mut s, &segs[3], 951);
    assert_eq!(s.cc.p, 0.5);
    assert!(s.cc.flipped_at.is_some());
}
