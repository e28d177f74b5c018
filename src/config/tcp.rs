//! The window transports' sections: `[packet]`, `[tcp]`, `[dctcp]`, `[d2tcp]`, `[pdtcp]`,
//! `[pfabric]`, and the TCP-side load balancers `[am]` and `[flowlet]`. Schema and defaults
//! only; the checks are in `validate`.

use super::*;

/// `[packet]`: packet sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PacketConfig {
    /// Payload bytes per full data packet (TCP MSS), 64B..=9000B. Default 1460B.
    pub mss: Bytes,
    /// Header bytes added to every packet on the wire, data and ACK alike, 20B..=200B.
    /// Default 78B: TCP/IPv4 40 + Ethernet 18 + preamble and inter-frame gap 20.
    pub header: Bytes,
}

impl Default for PacketConfig {
    fn default() -> Self {
        PacketConfig {
            mss: Bytes(1460),
            header: Bytes(78),
        }
    }
}

/// `[tcp]`: TCP parameters shared by the TCP-family schemes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Initial window in segments, 1..=1000. Default 10.
    pub init_cwnd: f64,
    /// Minimum window in segments, 1..=10. Default 1.
    pub min_cwnd: f64,
    /// Minimum retransmission timeout, 1us..=10s. Default 10ms (the DCTCP paper's testbed).
    pub rto_min: SimTime,
    /// Maximum retransmission timeout (backoff cap), >= rto_min. Default 1s.
    pub rto_max: SimTime,
    /// Timeout before the first RTT sample. Default: rto_min.
    pub rto_init: Option<SimTime>,
    /// Factor applied to the timeout at each expiry, 1..=16. Default 2.
    pub rto_backoff: f64,
    /// Duplicate-ACK / SACK threshold for fast retransmit, 1..=1000. Default 3.
    pub dupthresh: u32,
    /// Largest window: "none", "bdp" (the network's largest bandwidth-delay product, as
    /// `[rdma] window`) or a size; in segments of `mss` payload bytes, at least one. Default
    /// "none".
    pub max_window: WindowSpec,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            init_cwnd: 10.0,
            min_cwnd: 1.0,
            rto_min: SimTime::from_ms(10),
            rto_max: SimTime::from_ms(1000),
            rto_init: None,
            rto_backoff: 2.0,
            dupthresh: 3,
            max_window: WindowSpec::None,
        }
    }
}

/// `[dctcp]`: DCTCP parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpConfig {
    /// Gain of the alpha estimator, (0, 1]. Default 1/16.
    pub g: f64,
    /// Initial alpha, [0, 1]. Default 1.0 (RFC 8257, Linux, ns-3).
    pub init_alpha: f64,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            init_alpha: 1.0,
        }
    }
}

/// `[d2tcp]`: D2TCP (gain and initial alpha come from `[dctcp]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct D2tcpConfig {
    /// Exponent after a missed deadline, [0.5, 2]. Default 0.5 (FujiZ ns-3; Linux uses 1).
    pub missed_d: f64,
}

impl Default for D2tcpConfig {
    fn default() -> Self {
        D2tcpConfig { missed_d: 0.5 }
    }
}

/// `[cubic]`: CUBIC (scheme `CUBIC`; RFC 8312).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CubicConfig {
    /// `C`, segments per second cubed, (0, 100]. Default 0.4 (RFC 8312).
    pub c: f64,
    /// `β_cubic`, the fraction of the window kept at a loss, (0, 1). Default 0.7 (RFC 8312).
    pub beta: f64,
    /// Fast convergence (RFC 8312 §4.6). Default true.
    pub fast_convergence: bool,
    /// The TCP-friendly region (RFC 8312 §4.2). Default true.
    pub tcp_friendly: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendly: true,
        }
    }
}

impl CubicConfig {
    /// At its defaults (then it is left out of a run's identity, as before CUBIC existed).
    pub fn is_default(&self) -> bool {
        *self == CubicConfig::default()
    }

    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.c > 0.0 && self.c <= 100.0) {
            return Err(("cubic.c", format!("must be in (0, 100], got {}", self.c)));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err((
                "cubic.beta",
                format!("must be in (0, 1), got {}", self.beta),
            ));
        }
        Ok(())
    }
}

/// `[pdtcp]`: PDTCP (gain and initial alpha come from `[dctcp]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PdtcpConfig {
    /// Priority form: "rd_over_ra" (default, the reconstruction), "tc_over_d" (D2TCP's),
    /// "rd_over_chost".
    pub policy: crate::transport::cc::pdtcp::ExponentPolicy,
    /// Sticky early flip to p = 0.5 once the deadline is missed or out of reach. Default true.
    pub flip: bool,
    /// Pin the exponent to this value, [0.5, 2] (the analysis check). Default: none.
    pub fixed_p: Option<f64>,
}

impl Default for PdtcpConfig {
    fn default() -> Self {
        PdtcpConfig {
            policy: crate::transport::cc::pdtcp::ExponentPolicy::RdOverRa,
            flip: true,
            fixed_p: None,
        }
    }
}

/// `[pfabric]`: pFabric's end host (Alizadeh et al., SIGCOMM 2013, from its published
/// description; the switch side is the `pfabric` scheduler with priority dropping).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct PfabricConfig {
    /// Initial window in segments, 1..=10000. Default: one bandwidth-delay product of the
    /// longest host-to-host path, in full packets, rounded up ("flows start at line rate").
    pub init_cwnd: Option<f64>,
    /// Largest window in segments, >= init_cwnd. Default: none (TCP's window growth).
    pub max_cwnd: Option<f64>,
    /// Retransmission timeout, fixed (no backoff), 1us..=10s. Default: three unloaded round
    /// trips of the longest path (the paper: about 3 RTTs).
    pub rto: Option<SimTime>,
    /// Switch buffer per egress port (static), >= one packet. Default: two bandwidth-delay
    /// products of the longest path at the host rate (the paper's small buffers, 2 x BDP).
    pub buffer: Option<Bytes>,
}

/// `[am]`: PDTCP's adaptive multipath at switches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct AmConfig {
    /// Congestion threshold T_am (an egress queue at or above it is congested). Default: the
    /// ECN step threshold K of `[switch] ecn` (PDTCP reconstruction §10 item 6), else 30KB.
    pub threshold: Option<Bytes>,
}

/// `[flowlet]`: flowlet switching at switches (the `flowlet` load balancer, `+LetFlow`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlowletConfig {
    /// Inactivity gap that ends a flowlet, 1us..=1s. Default 500us (CONGA's flowlet timeout,
    /// LetFlow's hardware setting).
    pub gap: SimTime,
    /// Flowlet-table entries per switch, a power of two in 1..=1048576 (flows whose hashes
    /// collide share an entry). Default 4096.
    pub table: u32,
}

impl Default for FlowletConfig {
    fn default() -> Self {
        FlowletConfig {
            gap: SimTime::from_us(500),
            table: 4096,
        }
    }
}

impl TcpConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self, mss: Bytes) -> Result<(), (&'static str, String)> {
        if !(1.0..=1000.0).contains(&self.init_cwnd) {
            return Err((
                "tcp.init_cwnd",
                format!("must be in 1..=1000, got {}", self.init_cwnd),
            ));
        }
        if !(1.0..=10.0).contains(&self.min_cwnd) {
            return Err((
                "tcp.min_cwnd",
                format!("must be in 1..=10, got {}", self.min_cwnd),
            ));
        }
        if self.rto_min < SimTime::from_us(1) || self.rto_min > SimTime::from_ms(10_000) {
            return Err((
                "tcp.rto_min",
                format!("must be in 1us..=10s, got {}", self.rto_min),
            ));
        }
        if self.rto_max < self.rto_min {
            return Err((
                "tcp.rto_max",
                format!(
                    "must be >= rto_min ({}), got {}",
                    self.rto_min, self.rto_max
                ),
            ));
        }
        if self.rto_init.is_some_and(|r| r.0 == 0) {
            return Err(("tcp.rto_init", "must be positive".into()));
        }
        if !(1.0..=16.0).contains(&self.rto_backoff) {
            return Err((
                "tcp.rto_backoff",
                format!("must be in 1..=16, got {}", self.rto_backoff),
            ));
        }
        if self.dupthresh == 0 || self.dupthresh > 1000 {
            return Err((
                "tcp.dupthresh",
                format!("must be in 1..=1000, got {}", self.dupthresh),
            ));
        }
        if let WindowSpec::Bytes(b) = self.max_window
            && b.0 < mss.0
        {
            return Err((
                "tcp.max_window",
                format!("must hold one segment ({} B)", mss.0),
            ));
        }
        Ok(())
    }
}

impl DctcpConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(("dctcp.g", format!("must be in (0, 1], got {}", self.g)));
        }
        if !(0.0..=1.0).contains(&self.init_alpha) {
            return Err((
                "dctcp.init_alpha",
                format!("must be in [0, 1], got {}", self.init_alpha),
            ));
        }
        Ok(())
    }
}

impl PfabricConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self, packet: u64) -> Result<(), (&'static str, String)> {
        if self
            .init_cwnd
            .is_some_and(|w| !(1.0..=10_000.0).contains(&w))
        {
            return Err(("pfabric.init_cwnd", "must be in 1..=10000".into()));
        }
        if let Some(m) = self.max_cwnd
            && !(m >= 1.0 && m >= self.init_cwnd.unwrap_or(1.0) && m <= 1e6)
        {
            return Err((
                "pfabric.max_cwnd",
                "must be in 1..=1000000 and at least init_cwnd".into(),
            ));
        }
        if self
            .rto
            .is_some_and(|t| t < SimTime::from_us(1) || t > SimTime::from_ms(10_000))
        {
            return Err(("pfabric.rto", "must be in 1us..=10s".into()));
        }
        if self.buffer.is_some_and(|b| b.0 < packet) {
            return Err((
                "pfabric.buffer",
                format!("must hold at least one packet ({packet} B)"),
            ));
        }
        Ok(())
    }
}

impl FlowletConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.gap < SimTime::from_us(1) || self.gap > SimTime::from_ms(1000) {
            return Err((
                "flowlet.gap",
                format!("must be in 1us..=1s, got {}", self.gap),
            ));
        }
        if !self.table.is_power_of_two() || self.table > 1 << 20 {
            return Err((
                "flowlet.table",
                format!("must be a power of two in 1..=1048576, got {}", self.table),
            ));
        }
        Ok(())
    }
}

impl D2tcpConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(0.5..=2.0).contains(&self.missed_d) {
            return Err(("d2tcp.missed_d", "must be in [0.5, 2]".into()));
        }
        Ok(())
    }
}

impl PdtcpConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.fixed_p.is_some_and(|p| !(0.5..=2.0).contains(&p)) {
            return Err(("pdtcp.fixed_p", "must be in [0.5, 2]".into()));
        }
        Ok(())
    }
}
