//! Lowering: from a config and a scheme to the parameters the model runs with. This is the
//! one place where a scheme's bundle (`scheme`) meets the model's types: the transport of every
//! flow (TCP with its congestion control, UDP, RDMA with its host scheduler), its derived
//! parameters (pFabric's window and timeout, GPMP's outstanding limit), the switches' load
//! balancer, and the switch configuration a scheme runs with (`Config::switch_for`, which stays schema-level).
//!
//! Not here: validation (the config's), and building the network or the flows (`experiment`).

use crate::config::{Config, DcqcnProfile, RdmaHostKind, Scheme, TransportKind, WindowSpec};
use crate::net::lb::LbParams;
use crate::scheme::RateCcKind;
use crate::transport::TransportSpec;
use crate::transport::cc::{self, WindowCcSpec};
use crate::transport::rdma::{ConnSpec, RdmaSpec};
use crate::transport::tcp::{RankKind, TcpParams};
use crate::units::SimTime;

/// The transport a run of `scheme` under `cfg` uses.
pub fn transport(cfg: &Config, scheme: &Scheme) -> TransportSpec {
    if let Some(cc) = window_cc(cfg, scheme.transport) {
        return TransportSpec::Tcp {
            params: tcp_params(cfg, scheme),
            cc,
        };
    }
    match scheme.transport {
        TransportKind::Udp => TransportSpec::Udp {
            rate: cfg.udp.rate,
            mss: cfg.packet.mss.0 as u32,
            header: cfg.packet.header.0 as u32,
        },
        TransportKind::Rdma => TransportSpec::Rdma(Box::new(rdma_spec(cfg, scheme))),
        k => unreachable!("window_cc lowers every TCP-family transport, {k:?} included"),
    }
}

/// The load balancer every switch of a run of `scheme` under `cfg` uses.
pub fn load_balancer(cfg: &Config, scheme: &Scheme) -> LbParams {
    LbParams {
        kind: scheme.lb.unwrap_or(cfg.switch.load_balancer),
        udp: matches!(scheme.transport, TransportKind::Udp | TransportKind::Rdma),
        t_am: cfg.am_threshold(),
        flowlet_gap: cfg.flowlet.gap,
        flowlet_table: cfg.flowlet.table as usize,
    }
}

/// The network's largest unloaded round trip and bandwidth-delay product as the HPCC ns-3
/// simulator computes them (`maxRtt`, `maxBdp` in its `third.cc`): on the longest path, twice
/// the propagation plus one full payload's (`mss`) serialization per link; the BDP at the
/// path's slowest link. HPCC's `T` and base window, and the `"bdp"` window of `[rdma]`.
pub fn max_rtt_bdp(cfg: &Config) -> (SimTime, u64) {
    let path = cfg.topology.longest_path();
    let mss = cfg.packet.mss.0;
    let mut rtt = SimTime::ZERO;
    let mut slowest = u64::MAX;
    for &(rate, delay) in &path {
        rtt = rtt + SimTime(2 * delay.0) + rate.ser_time(mss);
        slowest = slowest.min(rate.bps());
    }
    let bdp = (rtt.0 as u128 * slowest as u128 / 8 / 1_000_000_000_000) as u64;
    (rtt, bdp)
}

/// pFabric's rank, for the pFabric transports.
pub fn pfabric_rank(t: TransportKind) -> Option<RankKind> {
    match t {
        TransportKind::Pfabric => Some(RankKind::RemainingSize),
        TransportKind::PfabricEdf => Some(RankKind::Deadline),
        _ => None,
    }
}

/// The RDMA transport of a scheme.
pub fn rdma_spec(cfg: &Config, scheme: &Scheme) -> RdmaSpec {
    use crate::transport::rdma::HostSched;
    let sched = match scheme.rdma_host.expect("RDMA scheme") {
        RdmaHostKind::SinglePath => HostSched::SinglePath,
        RdmaHostKind::PerMessage => HostSched::PerMessage,
        RdmaHostKind::Nem => HostSched::Nem,
        RdmaHostKind::Srm => HostSched::Srm {
            chunk: cfg.srm.chunk.0,
        },
        RdmaHostKind::Gpmp => HostSched::Gpmp {
            paths: cfg.gpmp_paths(),
            slice: cfg.gpmp.slice.0,
            limit: cfg.gpmp_limit(),
        },
        RdmaHostKind::MpRdma => HostSched::MpRdma,
    };
    let (max_rtt, max_bdp) = max_rtt_bdp(cfg);
    let cc = scheme.rate_cc.unwrap_or(RateCcKind::Dcqcn);
    let conn = if scheme.rdma_host == Some(RdmaHostKind::MpRdma) {
        ConnSpec::MpRdma(crate::transport::rdma::mprdma::MpParams {
            delta: cfg.mprdma.delta,
            l: cfg.mprdma.bitmap,
            probe: cfg.mprdma.probe,
            init_cwnd: cfg.mprdma.init_cwnd,
            base_rtt: cfg.mprdma.base_rtt,
        })
    } else {
        let ctx = RateCtx {
            host_bps: cfg.topology.host_rate().bps() as f64,
            min_rate_bps: cfg.rdma.min_rate.map_or(1e9, |r| r.bps() as f64),
            max_rtt,
            max_bdp,
        };
        rate_conn(cfg, cc, &ctx)
    };
    let windowed = cc.windowed();
    let window = match cfg.rdma.window {
        Some(WindowSpec::None) => None,
        Some(WindowSpec::Bdp) => Some(max_bdp),
        Some(WindowSpec::Bytes(b)) => Some(b.0),
        None => windowed.then_some(max_bdp),
    };
    RdmaSpec {
        params: crate::transport::rdma::qp::RdmaParams {
            mtu: cfg.packet.mss.0 as u32,
            header: cfg.packet.header.0 as u32,
            nack_interval: cfg.rdma.nack_interval,
            rto: cfg.rdma.rto,
            ack_prio: cfg.priorities.ack,
            ack_bytes: cfg
                .rdma
                .ack_size
                .map_or(cfg.packet.header.0 as u32, |b| b.0 as u32),
            window,
            var_win: cfg.rdma.var_win.unwrap_or(window.is_some()),
            repace: cfg.rdma.pacing == crate::config::PacingMode::Repace,
            ns_floor: cfg.quirks.ns_floor,
            irn: cfg.irn_for(scheme).unwrap_or(false).then(|| {
                let mtu = cfg.packet.mss.0;
                let cap = match cfg.irn.bdp_cap {
                    WindowSpec::Bytes(b) => b.0,
                    WindowSpec::Bdp | WindowSpec::None => max_bdp,
                };
                crate::transport::rdma::irn::IrnParams {
                    rto_low: cfg.irn.rto_low,
                    rto_high: cfg.irn.rto_high,
                    low_pkts: cfg.irn.low_pkts,
                    bdp_cap: cap.div_ceil(mtu).max(1),
                }
            }),
        },
        sched,
        short_threshold: cfg.short_threshold(),
        short_prio: 1,
        long_prio: if scheme.class_prio { 2 } else { 1 },
        conn,
    }
}

/// A window controller's parameters from the config: its section's lowering. Every
/// controller of the registry (`transport::registry`) must have one, or `window_cc`
/// does not compile.
pub trait FromConfig {
    fn from_config(cfg: &Config) -> Self;
}

impl FromConfig for cc::Reno {
    fn from_config(_: &Config) -> cc::Reno {
        cc::Reno
    }
}

impl FromConfig for cc::Dctcp {
    fn from_config(cfg: &Config) -> cc::Dctcp {
        cc::Dctcp {
            g: cfg.dctcp.g,
            init_alpha: cfg.dctcp.init_alpha,
        }
    }
}

impl FromConfig for cc::D2tcp {
    fn from_config(cfg: &Config) -> cc::D2tcp {
        cc::D2tcp {
            g: cfg.dctcp.g,
            init_alpha: cfg.dctcp.init_alpha,
            missed_d: cfg.d2tcp.missed_d,
        }
    }
}

impl FromConfig for cc::Pdtcp {
    fn from_config(cfg: &Config) -> cc::Pdtcp {
        cc::Pdtcp {
            g: cfg.dctcp.g,
            init_alpha: cfg.dctcp.init_alpha,
            policy: cfg.pdtcp.policy,
            flip: cfg.pdtcp.flip,
            fixed_p: cfg.pdtcp.fixed_p,
        }
    }
}

impl FromConfig for cc::Swift {
    fn from_config(cfg: &Config) -> cc::Swift {
        let sw = &cfg.swift;
        cc::Swift {
            ai: sw.ai,
            beta: sw.beta,
            max_mdf: sw.max_mdf,
            base_target: sw.base_target.unwrap_or_else(|| {
                let rtt = cfg.base_rtt();
                SimTime(rtt.0 + rtt.0 / 2)
            }),
            fs_range: sw.fs_range,
            fs_min_cwnd: sw.fs_min_cwnd,
            fs_max_cwnd: sw.fs_max_cwnd,
        }
    }
}

impl FromConfig for cc::Cubic {
    fn from_config(cfg: &Config) -> cc::Cubic {
        let c = &cfg.cubic;
        cc::Cubic {
            c: c.c,
            beta: c.beta,
            fast_convergence: c.fast_convergence,
            tcp_friendly: c.tcp_friendly,
        }
    }
}

/// What a rate controller's lowering may use besides the config: the host line rate, the
/// queue pairs' minimum rate (`[rdma] min_rate`, 1 Gbps by default), and the network's
/// largest unloaded round trip and bandwidth-delay product (`max_rtt_bdp`).
#[derive(Clone, Copy, Debug)]
pub struct RateCtx {
    pub host_bps: f64,
    pub min_rate_bps: f64,
    pub max_rtt: SimTime,
    pub max_bdp: u64,
}

/// A rate controller's parameters from the config: its section's lowering; None runs the
/// queue pairs at line rate (DCQCN with `[rdma] dcqcn = "off"`). Every rate controller of the
/// registry must have one, or `rate_conn` does not compile.
pub trait RateFromConfig: Sized {
    fn from_config(cfg: &Config, ctx: &RateCtx) -> Option<Self>;
}

impl RateFromConfig for cc::DcqcnParams {
    fn from_config(cfg: &Config, _: &RateCtx) -> Option<cc::DcqcnParams> {
        let bw = cfg.topology.host_rate().bps() as f64 / 1e9;
        let mut d = match cfg.rdma.dcqcn {
            DcqcnProfile::Off => return None,
            DcqcnProfile::Dcqcn => cc::DcqcnParams::hpcc_dcqcn(bw),
            _ => cc::DcqcnParams::hpcc_dcqcn_paper(bw),
        };
        if let Some(g) = cfg.rdma.g {
            d.g = g;
        }
        if let Some(m) = cfg.rdma.min_rate {
            d.min_rate_bps = m.bps() as f64;
        }
        if let Some(st) = cfg.rdma.stages {
            d.stages = st;
        }
        Some(d)
    }
}

impl RateFromConfig for cc::Hpcc {
    fn from_config(cfg: &Config, x: &RateCtx) -> Option<cc::Hpcc> {
        Some(cc::Hpcc {
            eta: cfg.hpcc.eta,
            rai_bps: cfg
                .hpcc
                .rate_ai
                .map_or(x.host_bps / 2500.0, |r| r.bps() as f64),
            min_rate_bps: x.min_rate_bps,
            mi_thresh: cfg.hpcc.mi_thresh,
            fast_react: cfg.hpcc.fast_react,
            base_rtt: x.max_rtt,
            win: x.max_bdp,
        })
    }
}

impl RateFromConfig for cc::Timely {
    fn from_config(cfg: &Config, x: &RateCtx) -> Option<cc::Timely> {
        let t = &cfg.timely;
        Some(cc::Timely {
            alpha: t.alpha,
            beta: t.beta,
            t_low: t.t_low,
            t_high: t.t_high,
            min_rtt: t.min_rtt,
            rai_bps: t.rate_ai.map_or(x.host_bps / 1000.0, |r| r.bps() as f64),
            rhai_bps: t.rate_hai.map_or(x.host_bps / 200.0, |r| r.bps() as f64),
            min_rate_bps: x.min_rate_bps,
            hai_after: 5,
        })
    }
}

impl RateFromConfig for cc::PowerTcp {
    fn from_config(cfg: &Config, x: &RateCtx) -> Option<cc::PowerTcp> {
        Some(cc::PowerTcp {
            gamma: cfg.powertcp.gamma,
            rai_bps: cfg
                .powertcp
                .rate_ai
                .map_or(x.host_bps / 2500.0, |r| r.bps() as f64),
            min_rate_bps: x.min_rate_bps,
            base_rtt: x.max_rtt,
        })
    }
}

impl RateFromConfig for cc::DctcpRate {
    fn from_config(cfg: &Config, x: &RateCtx) -> Option<cc::DctcpRate> {
        Some(cc::DctcpRate {
            g: cfg.dctcp_rdma.g,
            rai_bps: cfg
                .dctcp_rdma
                .rate_ai
                .map_or(x.host_bps * 0.00615, |r| r.bps() as f64),
            min_rate_bps: x.min_rate_bps,
            mtu: cfg.packet.mss.0 as u32,
        })
    }
}

macro_rules! lowering {
    ([]
     window { $($kind:ident: $cm:ident::$cc:ident, $name:literal, $ecn:literal, $about:literal, $notes:literal;)* }
     rate { $($rkind:ident: $rcm:ident::$rcc:ident, $rname:literal, $win:literal, $mark:ident, $rabout:literal, $rnotes:literal;)* }) => {
        /// The window controller of a TCP-family transport (pFabric's hosts run Reno); None
        /// for UDP and RDMA.
        pub fn window_cc(cfg: &Config, kind: TransportKind) -> Option<WindowCcSpec> {
            match kind {
                $(TransportKind::$kind => Some(WindowCcSpec::$cc(<cc::$cc as FromConfig>::from_config(cfg))),)*
                TransportKind::Pfabric | TransportKind::PfabricEdf => Some(WindowCcSpec::Reno(cc::Reno)),
                TransportKind::Udp | TransportKind::Rdma => None,
            }
        }

        /// The connections of reliable-connection queue pairs paced by `kind`.
        pub fn rate_conn(cfg: &Config, kind: RateCcKind, ctx: &RateCtx) -> ConnSpec {
            match kind {
                $(RateCcKind::$rkind => <cc::$rcc as RateFromConfig>::from_config(cfg, ctx)
                    .map_or(ConnSpec::LineRate, ConnSpec::$rkind),)*
            }
        }
    };
}
crate::transport::registry::ccs!(lowering []);

/// What a failure does to its links' ports.
pub fn fail_kind(f: &crate::config::FailureConfig) -> crate::sim::FailKind {
    use crate::config::FailAction;
    use crate::sim::FailKind;
    match f.action {
        FailAction::Down => FailKind::Down,
        FailAction::Up => FailKind::Up,
        FailAction::Rate => FailKind::Rate(f.rate.expect("validated: a rate failure has a rate")),
    }
}

/// The protocol headers a capture of a run of `scheme` writes.
pub fn pcap_proto(scheme: &Scheme) -> crate::pcap::Proto {
    match scheme.transport {
        TransportKind::Rdma => crate::pcap::Proto::Rdma,
        TransportKind::Udp => crate::pcap::Proto::Udp,
        _ => crate::pcap::Proto::Tcp,
    }
}

/// TCP parameters for a scheme.
pub fn tcp_params(cfg: &Config, scheme: &Scheme) -> TcpParams {
    let t = &cfg.tcp;
    let mut p = TcpParams {
        mss: cfg.packet.mss.0 as u32,
        header: cfg.packet.header.0 as u32,
        init_cwnd: t.init_cwnd,
        min_cwnd: t.min_cwnd,
        rto_min: t.rto_min,
        rto_max: t.rto_max,
        rto_init: t.rto_init.unwrap_or(t.rto_min),
        rto_backoff: t.rto_backoff,
        dupthresh: t.dupthresh,
        max_cwnd: match t.max_window {
            WindowSpec::None => f64::INFINITY,
            WindowSpec::Bdp => (max_rtt_bdp(cfg).1 / cfg.packet.mss.0).max(1) as f64,
            WindowSpec::Bytes(b) => (b.0 / cfg.packet.mss.0).max(1) as f64,
        },
        rank: pfabric_rank(scheme.transport),
        ecn: scheme.ecn,
    };
    if p.rank.is_some() {
        // pFabric's end host: start at about line rate, no fast retransmit, a fixed short
        // timeout, optional window cap.
        p.init_cwnd = cfg.pfabric_init_cwnd();
        p.max_cwnd = cfg.pfabric.max_cwnd.unwrap_or(f64::INFINITY);
        let rto = cfg.pfabric_rto();
        (p.rto_min, p.rto_max, p.rto_init, p.rto_backoff) = (rto, rto, rto, 1.0);
        p.dupthresh = u32::MAX;
    }
    p
}
