//! The registry of congestion controllers: one row per algorithm, from which everything that
//! names an algorithm is generated, so that a controller without a lowering, a dispatch arm or
//! a scheme does not compile (and never silently runs another algorithm).
//!
//! Window controllers (the TCP family) have rows
//!
//! `Kind: module::Type, "scheme name", ECN-capable, "about", "notes";`
//!
//! and rate controllers (RDMA queue pairs)
//!
//! `Kind: module::Type, "scheme name", window, marking, "about", "notes";`
//!
//! where `Type` is the controller in its file `transport/cc/module.rs` (the row declares the
//! module and re-exports the type: `cc::Type`), `window` says whether its queue pairs
//! get a bandwidth-delay-product window by default and `marking` the switches' default ECN
//! marking for it (`Red`: DCQCN's RED profile, `Step`: one threshold). Whether its packets
//! carry in-band telemetry is the controller's own `RateCc::TELEMETRY`.
//!
//! Generated from the rows: the controllers' modules and `WindowCcSpec` (`cc`), the scheme
//! bundles, `TransportKind` and `RateCcKind` (`scheme`), `ConnSpec` (`rdma`), the
//! `Transport` variants and their dispatch (`transport`), and the lowering's exhaustive matches (`lower::window_cc`,
//! `lower::rate_conn`), which call each controller's `FromConfig` / `RateFromConfig` impl.
//! Adding an algorithm: its file in `transport/cc/`, a row here, its config section and its
//! lowering impl (docs/architecture.md walks it with CUBIC).
//!
//! `ccs!(then [extra...])` calls `then! { [extra...] window { rows } rate { rows } }`.
//!
//! Not here: the algorithms themselves (`transport::cc`), host schedulers (`transport::rdma`).

macro_rules! ccs {
    ($then:ident [$($extra:tt)*]) => {
        $then! { [$($extra)*]
            window {
                Tcp: reno::Reno, "TCP", false, "NewReno/SACK, not ECN-capable", "";
                Dctcp: dctcp::Dctcp, "DCTCP", true, "DCTCP over NewReno/SACK, ECN-capable", "";
                D2tcp: d2tcp::D2tcp, "D2TCP", true, "deadline-aware DCTCP (gamma penalty, d = Tc/D)", "";
                Pdtcp: pdtcp::Pdtcp, "PDTCP", true,
                    "deadline-priority DCTCP (p = RD/RA, early flip; PD2TCP in the paper)",
                    "RECONSTRUCTED: p = clip(RD/RA), P = alpha^p, flip rule [PDTCP reconstruction §1.3]";
                Swift: swift::Swift, "Swift", false,
                    "Swift's delay-based window over NewReno/SACK loss recovery (target [swift] base_target)",
                    "RECONSTRUCTED from the Swift paper: one delay, no per-hop scaling, window >= 1 packet";
                Cubic: cubic::Cubic, "CUBIC", false,
                    "CUBIC (RFC 8312) over NewReno/SACK loss recovery, not ECN-capable",
                    "RFC 8312 without HyStart";
            }
            rate {
                Dcqcn: dcqcn::DcqcnParams, "DCQCN", false, Red,
                    "RoCEv2 queue pair per message with DCQCN (HPCC ns-3 CC_MODE 1)",
                    "";
                Hpcc: hpcc::Hpcc, "HPCC", true, Red,
                    "RoCEv2 queue pair per message with HPCC: in-band telemetry, rate + window (CC_MODE 3)",
                    "HPCC as the HPCC ns-3 simulator implements it (single rate, exact telemetry)";
                Timely: timely::Timely, "TIMELY", false, Red,
                    "RoCEv2 queue pair per message with TIMELY: RTT-gradient rate control (CC_MODE 7)",
                    "TIMELY as the HPCC ns-3 simulator implements it (update once per RTT of bytes)";
                DctcpRate: dctcp_rate::DctcpRate, "DCTCP-RDMA", true, Step,
                    "RoCEv2 queue pair per message with rate-based DCTCP and a BDP window (CC_MODE 8)",
                    "the HPCC ns-3 simulator's rate-based DCTCP, not TCP";
                PowerTcp: powertcp::PowerTcp, "PowerTCP", true, Red,
                    "RoCEv2 queue pair per message with PowerTCP: window from bottleneck power (queue x its gradient), in-band telemetry",
                    "RECONSTRUCTED from the PowerTCP paper (NSDI 2022, Algorithm 1, INT variant) on RoCE queue pairs; [powertcp]";
            }
        }
    };
}
pub(crate) use ccs;
