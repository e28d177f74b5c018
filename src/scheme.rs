//! The scheme registry: what a scheme name in a config selects.
//!
//! A scheme is a named bundle of choices: a transport (with its congestion control and host
//! scheduling), whether data is ECN-capable, the switch side it needs (class priorities,
//! GPMP's scheduler and thresholds, pFabric's rank scheduling) and optionally a load balancer.
//! Names are `<bundle>[+<load balancer>]`: the bundles are declared once in [`BUNDLES`], the
//! load-balancer suffixes once in [`SUFFIXES`]; `DCTCP+AM` is the `DCTCP` bundle with adaptive
//! multipath. Without a suffix a scheme uses `[switch] load_balancer`, except the RDMA
//! bundles, which default to ECMP; GPMP and MP-RDMA fix it (they bind paths by source port
//! against ECMP) and take no suffix, the other RDMA bundles take one (`DCQCN+spray`,
//! `IRN+LetFlow`: packet spraying and flowlets for queue pairs, whose receivers then see
//! reordering: go-back-N drops what arrives out of order, IRN keeps it).
//!
//! This module only describes schemes; turning a scheme and a config into model parameters
//! (the "lowering") is `lower`'s job.

use crate::net::lb::LbKind;
use serde::Serialize;

macro_rules! transport_kind {
    ([[$($before:tt)*] [$($after:tt)*]]
     window { $($kind:ident: $cm:ident::$cc:ident, $name:literal, $ecn:literal, $about:literal, $notes:literal;)* }
     rate { $($rkind:ident: $rcm:ident::$rcc:ident, $rname:literal, $win:literal, $mark:ident, $rabout:literal, $rnotes:literal;)* }) => {
        /// The transport family of a scheme: one TCP-family variant per window controller of
        /// the registry (`transport::registry`; `Tcp` is Reno), then pFabric, UDP and RDMA.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum TransportKind {
            $($kind,)*
            /// pFabric: rank = remaining flow size.
            Pfabric,
            /// pFabric with rank = deadline (earliest deadline first).
            PfabricEdf,
            Udp,
            Rdma,
        }

        impl TransportKind {
            /// Whether this is TCP with one of the registry's window controllers.
            pub fn is_window(self) -> bool {
                matches!(self, $(TransportKind::$kind)|*)
            }
        }

        /// The rate controller of an RDMA scheme's reliable-connection queue pairs: one
        /// variant per rate row of the registry (`transport::registry`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum RateCcKind {
            $(
                #[doc = concat!("`", $rname, "`: ", $rabout)]
                $rkind,
            )*
        }

        impl RateCcKind {
            /// The queue pairs get a bandwidth-delay-product window unless `[rdma] window`
            /// says otherwise.
            pub fn windowed(self) -> bool {
                match self {
                    $(RateCcKind::$rkind => $win,)*
                }
            }

            /// Data packets carry in-band telemetry (the header grows by default).
            pub fn telemetry(self) -> bool {
                match self {
                    $(RateCcKind::$rkind => <crate::transport::cc::$rcc as crate::transport::cc::RateCc>::TELEMETRY,)*
                }
            }

            /// The switches' default ECN marking for this controller.
            pub fn marking(self) -> Marking {
                match self {
                    $(RateCcKind::$rkind => Marking::$mark,)*
                }
            }
        }

        /// Every bundle, declared once: the registry's window controllers first, then UDP,
        /// pFabric and the first RDMA ones, the registry's rate controllers (a queue pair per
        /// message, as the HPCC ns-3 simulator runs them), and the other RDMA schemes.
        pub const BUNDLES: &[Bundle] = &[
            $(tcp($name, $about, TransportKind::$kind, $ecn, $notes),)*
            $($before)*
            $(rdma_cc($rname, $rabout, RateCcKind::$rkind, $rnotes),)*
            $($after)*
        ];
    };
}

/// The default ECN marking at switches a rate controller is run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marking {
    /// DCQCN's RED profile (K_min, K_max, P_max).
    Red,
    /// One threshold (DCTCP's step).
    Step,
}

impl TransportKind {
    /// Whether this is one of the pFabric transports.
    pub fn is_pfabric(self) -> bool {
        matches!(self, TransportKind::Pfabric | TransportKind::PfabricEdf)
    }
}

/// The host side of an RDMA scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RdmaHostKind {
    SinglePath,
    PerMessage,
    Nem,
    Srm,
    Gpmp,
    MpRdma,
}

/// A scheme: a named bundle of choices.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scheme {
    pub name: String,
    pub transport: TransportKind,
    /// Data packets are ECN-capable.
    pub ecn: bool,
    /// Load balancer override; None uses `[switch] load_balancer`.
    pub lb: Option<LbKind>,
    /// RDMA host scheduler.
    pub rdma_host: Option<RdmaHostKind>,
    /// RDMA: the queue pairs' rate controller.
    pub rate_cc: Option<RateCcKind>,
    /// RDMA: IRN loss recovery (selective repeat, BDP cap) instead of go-back-N.
    pub irn: bool,
    /// Short and long messages use different switch queues (global consistent priority).
    pub class_prio: bool,
    /// Switches run GPMP's strict priority with minimum bandwidth and per-priority buffer
    /// thresholds.
    pub gpmp_switch: bool,
    /// Which parts of the bundle are reconstructions or proxies, for the manifest.
    pub notes: String,
}

/// A bundle: a scheme without its load-balancer suffix.
pub struct Bundle {
    pub name: &'static str,
    pub about: &'static str,
    pub transport: TransportKind,
    pub ecn: bool,
    /// The bundle's own load balancer (None: `[switch] load_balancer`).
    pub lb: Option<LbKind>,
    /// `lb` is part of the scheme: the bundle takes no load-balancer suffix (GPMP and
    /// MP-RDMA bind their paths by source port against ECMP). The other RDMA bundles default
    /// to ECMP and take a suffix (`DCQCN+spray`).
    pub lb_fixed: bool,
    pub rdma_host: Option<RdmaHostKind>,
    pub rate_cc: Option<RateCcKind>,
    pub irn: bool,
    pub class_prio: bool,
    pub gpmp_switch: bool,
    pub notes: &'static str,
}

const fn tcp(
    name: &'static str,
    about: &'static str,
    transport: TransportKind,
    ecn: bool,
    notes: &'static str,
) -> Bundle {
    Bundle {
        name,
        about,
        transport,
        ecn,
        lb: None,
        lb_fixed: false,
        rdma_host: None,
        rate_cc: None,
        irn: false,
        class_prio: false,
        gpmp_switch: false,
        notes,
    }
}

const fn rdma(
    name: &'static str,
    about: &'static str,
    host: RdmaHostKind,
    class_prio: bool,
    gpmp_switch: bool,
    notes: &'static str,
) -> Bundle {
    Bundle {
        name,
        about,
        transport: TransportKind::Rdma,
        ecn: true,
        lb: Some(LbKind::Ecmp),
        lb_fixed: matches!(host, RdmaHostKind::Gpmp | RdmaHostKind::MpRdma),
        rdma_host: Some(host),
        rate_cc: Some(RateCcKind::Dcqcn),
        irn: false,
        class_prio,
        gpmp_switch,
        notes,
    }
}

/// An RDMA congestion-control bundle as the HPCC ns-3 simulator runs it: a queue pair per
/// message (flow), one data queue, ECMP.
const fn rdma_cc(
    name: &'static str,
    about: &'static str,
    cc: RateCcKind,
    notes: &'static str,
) -> Bundle {
    Bundle {
        rate_cc: Some(cc),
        ..rdma(name, about, RdmaHostKind::PerMessage, false, false, notes)
    }
}

// The TCP-family bundles and the rate controllers' come from the registry; these are the
// others.
crate::transport::registry::ccs!(transport_kind [[
    tcp(
        "UDP",
        "constant-rate unreliable stream at [udp] rate",
        TransportKind::Udp,
        false,
        "",
    ),
    tcp(
        "pFabric",
        "pFabric: rank = remaining size, switches serve and drop by rank, minimal rate control",
        TransportKind::Pfabric,
        false,
        "pFabric (SIGCOMM 2013) from its published description; no probe mode",
    ),
    tcp(
        "pFabric-EDF",
        "pFabric with rank = deadline (earliest deadline first; no deadline ranks last)",
        TransportKind::PfabricEdf,
        false,
        "pFabric with rank = deadline (the paper's deadline variant); no probe mode",
    ),
    rdma(
        "SP-RDMA",
        "RoCEv2 + DCQCN, one queue pair per host pair (FIFO), single path, one data queue",
        RdmaHostKind::SinglePath,
        false,
        false,
        "one QP per host pair [GPMP reconstruction §4.1]",
    ),
    rdma(
        "SP-RDMA-perflow",
        "SP-RDMA with a new queue pair (and ECMP path) per message (HPCC default)",
        RdmaHostKind::PerMessage,
        false,
        false,
        "QP per message [GPMP reconstruction §4.1]",
    ),
] [
    Bundle {
        irn: true,
        ..rdma_cc(
            "IRN",
            "RoCEv2 queue pair per message with DCQCN and IRN loss recovery: selective repeat, BDP cap, no PFC needed",
            RateCcKind::Dcqcn,
            "IRN (SIGCOMM 2018) from its published description: write-like messages only; [irn]",
        )
    },
    rdma(
        "NEM-like",
        "proxy: short/long queue pairs with NIC strict priority, no slicing, one data queue",
        RdmaHostKind::Nem,
        false,
        false,
        "PROXY: NEM not identified; end-host priority separation without slicing [GPMP reconstruction §4.3]",
    ),
    rdma(
        "SRM-like",
        "proxy: one queue pair, long messages in chunks, shortest remaining first at the NIC",
        RdmaHostKind::Srm,
        false,
        false,
        "PROXY: SRM not identified; chunking + shortest-remaining-first [GPMP reconstruction §4.3]",
    ),
    rdma(
        "GPMP",
        "short messages high priority end to end; long ones sliced over n path-bound QPs",
        RdmaHostKind::Gpmp,
        true,
        true,
        "RECONSTRUCTED: slicing S/L, path binding by source port, SP+min-BW token bucket, per-priority DT alphas [GPMP reconstruction §2]",
    ),
    rdma(
        "GPMP-end-only",
        "GPMP's end host with plain switches (one data queue, uniform thresholds)",
        RdmaHostKind::Gpmp,
        false,
        false,
        "ablation [GPMP reconstruction §4.4]",
    ),
    rdma(
        "GPMP-switch-only",
        "SP-RDMA host marking class priority; GPMP switches (SP + min-BW, per-prio alpha)",
        RdmaHostKind::SinglePath,
        true,
        true,
        "ablation [GPMP reconstruction §4.4]",
    ),
    rdma(
        "MP-RDMA",
        "one multipath connection per host pair: virtual paths, ACK clocking, OOO pruning",
        RdmaHostKind::MpRdma,
        false,
        false,
        "RECONSTRUCTED from abstract + ns-3 re-implementation; no synchronise, RTO-only recovery [GPMP reconstruction §4.2]",
    ),
]]);

/// Load-balancer suffixes: name, load balancer, what it is, notes for the manifest.
pub const SUFFIXES: &[(&str, LbKind, &str, &str)] = &[
    ("FH", LbKind::Ecmp, "flow hashing (ECMP)", ""),
    ("spray", LbKind::Spray, "per-packet random spraying", ""),
    (
        "RR",
        LbKind::RoundRobin,
        "per-packet round robin over the equal-cost ports",
        "",
    ),
    (
        "AM",
        LbKind::Adaptive,
        "PDTCP's adaptive multipath at switches (AM's marking is a no-op without ECN)",
        "AM with T_am = K on every hop [PDTCP reconstruction §1.1, §10.6]",
    ),
    (
        "LetFlow",
        LbKind::Flowlet,
        "flowlet switching, a random port per flowlet (LetFlow, NSDI 2017; [flowlet])",
        "",
    ),
    (
        "WCMP",
        LbKind::Wcmp,
        "weighted flow hashing: each next hop's share proportional to its link rate",
        "",
    ),
];

impl Scheme {
    /// The scheme a name selects: `<bundle>[+<suffix>]`; the error lists what exists.
    pub fn parse(name: &str) -> Result<Scheme, String> {
        let (base, suffix) = match name.split_once('+') {
            Some((b, s)) => (b, Some(s)),
            None => (name, None),
        };
        let known = || {
            let b: Vec<&str> = BUNDLES.iter().map(|b| b.name).collect();
            let s: Vec<&str> = SUFFIXES.iter().map(|s| s.0).collect();
            format!(
                "schemes are <bundle>[+<load balancer>] with bundles {} and load balancers {}",
                b.join(", "),
                s.join(", ")
            )
        };
        let b = BUNDLES
            .iter()
            .find(|b| b.name == base)
            .ok_or_else(|| format!("unknown scheme `{name}`: {}", known()))?;
        let mut notes = b.notes.to_string();
        let lb = match suffix {
            None => b.lb,
            Some(_) if b.lb_fixed => {
                return Err(format!(
                    "`{name}`: {} fixes its own load balancer and takes no suffix",
                    b.name
                ));
            }
            Some(s) => {
                let (_, lb, _, n) = SUFFIXES
                    .iter()
                    .find(|x| x.0 == s)
                    .ok_or_else(|| format!("unknown load balancer in `{name}`: {}", known()))?;
                if !n.is_empty() {
                    if !notes.is_empty() {
                        notes.push_str(" + ");
                    }
                    notes.push_str(n);
                }
                Some(*lb)
            }
        };
        Ok(Scheme {
            name: name.to_string(),
            transport: b.transport,
            ecn: b.ecn,
            lb,
            rdma_host: b.rdma_host,
            rate_cc: b.rate_cc,
            irn: b.irn,
            class_prio: b.class_prio,
            gpmp_switch: b.gpmp_switch,
            notes,
        })
    }

    /// The scheme `name`, if it exists.
    pub fn builtin(name: &str) -> Option<Scheme> {
        Scheme::parse(name).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_bundles_with_optional_load_balancers() {
        let s = Scheme::parse("PDTCP+AM").unwrap();
        assert_eq!(s.transport, TransportKind::Pdtcp);
        assert_eq!(s.lb, Some(LbKind::Adaptive));
        assert!(s.ecn && s.notes.contains("alpha^p") && s.notes.contains("T_am"));
        assert_eq!(Scheme::parse("DCTCP").unwrap().lb, None);
        assert_eq!(Scheme::parse("TCP+FH").unwrap().lb, Some(LbKind::Ecmp));
        assert_eq!(Scheme::parse("UDP+spray").unwrap().lb, Some(LbKind::Spray));
        let g = Scheme::parse("GPMP").unwrap();
        assert_eq!(
            (g.rdma_host, g.class_prio, g.gpmp_switch, g.lb),
            (Some(RdmaHostKind::Gpmp), true, true, Some(LbKind::Ecmp))
        );
        assert!(
            Scheme::parse("GPMP+spray")
                .unwrap_err()
                .contains("no suffix")
        );
        assert!(
            Scheme::parse("MP-RDMA+LetFlow")
                .unwrap_err()
                .contains("no suffix")
        );
        // The other RDMA bundles default to ECMP and take a suffix.
        assert_eq!(Scheme::parse("DCQCN").unwrap().lb, Some(LbKind::Ecmp));
        let s = Scheme::parse("IRN+spray").unwrap();
        assert_eq!((s.lb, s.irn), (Some(LbKind::Spray), true));
        assert!(Scheme::parse("QUIC").unwrap_err().contains("DCTCP"));
        assert!(Scheme::parse("TCP+XX").unwrap_err().contains("AM"));
    }
}
