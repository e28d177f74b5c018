//! The RDMA sections: `[rdma]`, its rate controls (`[dcqcn]` profile, `[hpcc]`,
//! `[powertcp]`, `[timely]`, `[swift]`, `[dctcp_rdma]`, `[irn]`) and its schedulers (`[gpmp]`,
//! `[srm]`, `[mprdma]`). Schema and defaults only; the checks are in `validate`.

use super::*;

/// DCQCN parameter profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnProfile {
    /// HPCC `run.py` "dcqcn": t_alpha 1 us, t_dec 4 us, t_inc 300 us.
    #[default]
    Dcqcn,
    /// HPCC `run.py` "dcqcn_paper": t_alpha 50 us, t_dec 50 us, t_inc 55 us.
    DcqcnPaper,
    /// No rate control: queue pairs send at line rate.
    Off,
}

/// A queue pair's window (`[rdma] window`): `"none"` (purely rate based), `"bdp"` (the largest
/// bandwidth-delay product of the network, as the HPCC ns-3 simulator's `HAS_WIN`) or a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WindowSpec {
    #[default]
    None,
    Bdp,
    Bytes(Bytes),
}

impl Serialize for WindowSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WindowSpec::None => s.serialize_str("none"),
            WindowSpec::Bdp => s.serialize_str("bdp"),
            WindowSpec::Bytes(b) => b.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for WindowSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let t = String::deserialize(d)?;
        match t.as_str() {
            "none" => Ok(WindowSpec::None),
            "bdp" => Ok(WindowSpec::Bdp),
            _ => t.parse::<Bytes>().map(WindowSpec::Bytes).map_err(|e| {
                serde::de::Error::custom(format!("`{t}`: \"none\", \"bdp\" or a size ({e})"))
            }),
        }
    }
}

/// `[hpcc]`: HPCC (scheme `HPCC`). Defaults: HPCC ns-3 `run.py` at the host link rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// Target utilisation η, (0, 1]. Default 0.95.
    pub eta: f64,
    /// Additive increase W_AI as a rate. Default: host rate / 2500 (40Mbps at 100 Gbps).
    pub rate_ai: Option<BitRate>,
    /// Additive stages before a multiplicative one, 0..=1000. Default 0 (run.py).
    pub mi_thresh: u32,
    /// React to every acknowledgement. Default true.
    pub fast_react: bool,
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            eta: 0.95,
            rate_ai: None,
            mi_thresh: 0,
            fast_react: true,
        }
    }
}

/// `[powertcp]`: PowerTCP (scheme `PowerTCP`). Defaults: the PowerTCP paper's γ = 0.9; the
/// additive increase of HPCC (so that the two compare on equal terms) (a reconstruction).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PowerTcpConfig {
    /// EWMA weight γ of the window update, (0, 1]. Default 0.9.
    pub gamma: f64,
    /// Additive increase β as a rate (β = rate_ai × base RTT in bytes). Default: host rate /
    /// 2500 (40Mbps at 100 Gbps, HPCC's W_AI).
    pub rate_ai: Option<BitRate>,
}

impl Default for PowerTcpConfig {
    fn default() -> Self {
        PowerTcpConfig {
            gamma: 0.9,
            rate_ai: None,
        }
    }
}

/// `[timely]`: TIMELY (scheme `TIMELY`). Defaults: the HPCC ns-3 simulator's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyConfig {
    /// EWMA weight of a new RTT difference, (0, 1]. Default 0.875.
    pub alpha: f64,
    /// Multiplicative decrease factor, (0, 1]. Default 0.8.
    pub beta: f64,
    /// Below this RTT: increase. Default 50us.
    pub t_low: SimTime,
    /// Above this RTT: decrease. Default 500us.
    pub t_high: SimTime,
    /// The gradient's normaliser. Default 20us.
    pub min_rtt: SimTime,
    /// Additive increase. Default: host rate / 1000 (100Mbps at 100 Gbps).
    pub rate_ai: Option<BitRate>,
    /// Hyper-active increase. Default: host rate / 200 (500Mbps at 100 Gbps).
    pub rate_hai: Option<BitRate>,
}

impl Default for TimelyConfig {
    fn default() -> Self {
        TimelyConfig {
            alpha: 0.875,
            beta: 0.8,
            t_low: SimTime::from_us(50),
            t_high: SimTime::from_us(500),
            min_rtt: SimTime::from_us(20),
            rate_ai: None,
            rate_hai: None,
        }
    }
}

/// `[swift]`: Swift (scheme `Swift`), a reconstruction from the paper.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwiftConfig {
    /// Additive increase per RTT in packets, (0, 100]. Default 1.
    pub ai: f64,
    /// Multiplicative decrease factor, (0, 1]. Default 0.8.
    pub beta: f64,
    /// Largest decrease at once, (0, 1). Default 0.5.
    pub max_mdf: f64,
    /// Target delay. Default: 1.5 × the unloaded RTT of the longest path.
    pub base_target: Option<SimTime>,
    /// Flow scaling's largest addition to the target. Default 0 (off).
    pub fs_range: SimTime,
    /// Windows (packets) at which flow scaling adds `fs_range` and nothing. Default 0.1, 100.
    pub fs_min_cwnd: f64,
    pub fs_max_cwnd: f64,
}

impl Default for SwiftConfig {
    fn default() -> Self {
        SwiftConfig {
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            base_target: None,
            fs_range: SimTime::ZERO,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
        }
    }
}

/// `[dctcp_rdma]`: rate-based DCTCP on RDMA queue pairs (scheme `DCTCP-RDMA`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpRdmaConfig {
    /// Alpha gain, (0, 1]. Default 0.0625.
    pub g: f64,
    /// Additive increase per batch. Default: host rate × 0.00615 (615Mbps at 100 Gbps).
    pub rate_ai: Option<BitRate>,
}

impl Default for DctcpRdmaConfig {
    fn default() -> Self {
        DctcpRdmaConfig {
            g: 0.0625,
            rate_ai: None,
        }
    }
}

/// `[irn]`: IRN loss recovery (scheme `IRN`, or `[rdma] recovery = "irn"`). Defaults: the
/// IRN paper (SIGCOMM 2018, 40 Gbps): RTO_low 100 us for N = 3 packets in flight or fewer,
/// RTO_high 320 us, BDP cap one bandwidth-delay product.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IrnConfig {
    /// Timeout with at most `low_pkts` packets in flight, > 0. Default 100us.
    pub rto_low: SimTime,
    /// Timeout otherwise, >= rto_low. Default 320us.
    pub rto_high: SimTime,
    /// N, 0..=1000000. Default 3.
    pub low_pkts: u64,
    /// BDP-FC: bytes of PSNs in flight per queue pair, rounded up to whole packets: "bdp"
    /// (default: the network's largest bandwidth-delay product, as `[rdma] window = "bdp"`)
    /// or a size (at least one packet).
    pub bdp_cap: WindowSpec,
}

impl Default for IrnConfig {
    fn default() -> Self {
        IrnConfig {
            rto_low: SimTime::from_us(100),
            rto_high: SimTime::from_us(320),
            low_pkts: 3,
            bdp_cap: WindowSpec::Bdp,
        }
    }
}

/// Loss recovery of RDMA queue pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossRecovery {
    /// Go-back-N on a NACK or timeout (RoCEv2 NICs, the HPCC ns-3 simulator).
    GoBackN,
    /// IRN's selective repeat with a BDP cap and two timeouts (`[irn]`).
    Irn,
}

/// `[rdma]`: the RoCEv2 transport (GPMP reconstruction §3 and §5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RdmaConfig {
    /// DCQCN profile: "dcqcn" (default), "dcqcn_paper" or "off". Rates scale with the host
    /// link rate as in HPCC: R_AI = 5·bw/25 Mb/s, R_HAI = 50·bw/25 Mb/s (bw in Gb/s).
    pub dcqcn: DcqcnProfile,
    /// Override of the profile's g, (0, 1].
    pub g: Option<f64>,
    /// Override of the minimum rate. Profile: 1Gbps.
    pub min_rate: Option<BitRate>,
    /// Override of the fast-recovery stages F, 0..=100. Profile: 1.
    pub stages: Option<u32>,
    /// Minimum gap between NACKs for the same expected PSN. Default 500us (HPCC).
    pub nack_interval: SimTime,
    /// Retransmission timeout (go back to the oldest unacknowledged PSN), for lossy runs.
    /// Default: none (HPCC's lossless model relies on NACKs alone; with PFC a long pause is
    /// not a loss). Set it (e.g. "1ms") when the fabric can drop.
    pub rto: Option<SimTime>,
    /// Bytes in flight per queue pair. Default: "bdp" for HPCC, PowerTCP and DCTCP-RDMA, "none"
    /// otherwise (the HPCC ns-3 presets' `HAS_WIN`).
    pub window: Option<WindowSpec>,
    /// Scale the window by rate / line rate (`VAR_WIN`). Default: with the window.
    pub var_win: Option<bool>,
    /// Wire bytes of an ACK or NACK. Default: the packet header (`[packet] header`).
    pub ack_size: Option<Bytes>,
    /// What a rate change does to an already scheduled send: "repace" (default) or
    /// "at_send" (the reference's).
    pub pacing: PacingMode,
    /// Loss recovery of reliable-connection queue pairs: "go_back_n" or "irn". Default:
    /// "irn" for scheme IRN, "go_back_n" otherwise (MP-RDMA has its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<LossRecovery>,
}

impl Default for RdmaConfig {
    fn default() -> Self {
        RdmaConfig {
            dcqcn: DcqcnProfile::Dcqcn,
            g: None,
            min_rate: None,
            stages: None,
            nack_interval: SimTime::from_us(500),
            rto: None,
            window: None,
            var_win: None,
            ack_size: None,
            pacing: PacingMode::Repace,
            recovery: None,
        }
    }
}

/// `[gpmp]`: GPMP and the classification shared by the priority-aware RDMA schemes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GpmpConfig {
    /// Messages smaller than this are short (high priority). Default 50KB (GPMP summary).
    pub short_threshold: Bytes,
    /// Alternative form: transmission time at the host line rate (t = m/b); when set it
    /// replaces `short_threshold` (40us at 10 Gbps = 50KB).
    pub short_threshold_time: Option<SimTime>,
    /// Low-priority queue pairs per host pair, 0..=64; 0 = the number of uplinks of the source
    /// leaf (4 in the 4-spine leaf-spine). Default 0.
    pub paths: u32,
    /// Slice size S of long messages. Default 16KB [GPMP reconstruction §2.4].
    pub slice: Bytes,
    /// Outstanding-bytes limit L per low-priority queue pair. Default: one bandwidth-delay
    /// product of the longest host-to-host path (host line rate × the unloaded round trip of
    /// one full packet and its ACK), at least one slice: 16 KB in the paper's 10 Gbps
    /// leaf-spine [reconstruction; see [`Config::gpmp_limit`]].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Bytes>,
    /// Minimum bandwidth guaranteed to each data queue at switches. Default 1Gbps.
    pub min_bw: BitRate,
    /// Dynamic-threshold alpha of the high (short-message) priority. Default 1.0
    /// [GPMP reconstruction §2.8].
    pub alpha_high: f64,
    /// Dynamic-threshold alpha of the low (long-message) priority. Default 0.125.
    pub alpha_low: f64,
}

impl Default for GpmpConfig {
    fn default() -> Self {
        GpmpConfig {
            short_threshold: Bytes(50_000),
            short_threshold_time: None,
            paths: 0,
            slice: Bytes(16_000),
            limit: None,
            min_bw: BitRate::from_gbps(1),
            alpha_high: 1.0,
            alpha_low: 0.125,
        }
    }
}

/// `[srm]`: the SRM-like proxy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SrmConfig {
    /// Chunk size of long messages. Default 64KB [proxy, GPMP reconstruction §4.3].
    pub chunk: Bytes,
}

impl Default for SrmConfig {
    fn default() -> Self {
        SrmConfig {
            chunk: Bytes(64_000),
        }
    }
}

/// `[mprdma]`: MP-RDMA (GPMP reconstruction §4.2, §9 item 14).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MpRdmaConfig {
    /// Out-of-order tolerance Δ in packets, 1..=1024. Default 32.
    pub delta: u64,
    /// Receiver bitmap length L in packets, 1..=64. Default 64.
    pub bitmap: u64,
    /// Probability of probing a new path per packet, [0, 1]. Default 0.01.
    pub probe: f64,
    /// Initial window in packets, 1..=1000. Default 16 [our choice: about one BDP at 10 Gbps].
    pub init_cwnd: f64,
    /// Base RTT for probe spacing. Default 10us.
    pub base_rtt: SimTime,
}

impl Default for MpRdmaConfig {
    fn default() -> Self {
        MpRdmaConfig {
            delta: 32,
            bitmap: 64,
            probe: 0.01,
            init_cwnd: 16.0,
            base_rtt: SimTime::from_us(10),
        }
    }
}

impl RdmaConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.g.is_some_and(|g| !(g > 0.0 && g <= 1.0)) {
            return Err(("rdma.g", "must be in (0, 1]".into()));
        }
        if self.stages.is_some_and(|s| s > 100) {
            return Err(("rdma.stages", "must be in 0..=100".into()));
        }
        if self.rto.is_some_and(|t| t.0 == 0) {
            return Err(("rdma.rto", "must be > 0".into()));
        }
        if self.nack_interval.0 == 0 {
            return Err(("rdma.nack_interval", "must be > 0".into()));
        }
        Ok(())
    }
}

impl GpmpConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self, mss: Bytes) -> Result<(), (&'static str, String)> {
        if self.paths > 64 {
            return Err((
                "gpmp.paths",
                format!("must be in 0..=64, got {}", self.paths),
            ));
        }
        if self.slice < mss {
            return Err((
                "gpmp.slice",
                format!(
                    "must be at least one packet's payload (packet.mss = {}), got {}",
                    mss, self.slice
                ),
            ));
        }
        if let Some(limit) = self.limit
            && limit < self.slice
        {
            return Err((
                "gpmp.limit",
                format!(
                    "must be at least the slice size ({}), got {}",
                    self.slice, limit
                ),
            ));
        }
        for (k, a) in [
            ("gpmp.alpha_high", self.alpha_high),
            ("gpmp.alpha_low", self.alpha_low),
        ] {
            if !(a > 0.0 && a <= 64.0) {
                return Err((k, format!("must be in (0, 64], got {a}")));
            }
        }
        Ok(())
    }
}

impl PowerTcpConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err((
                "powertcp.gamma",
                format!("must be in (0, 1], got {}", self.gamma),
            ));
        }
        Ok(())
    }
}

impl HpccConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(("hpcc.eta", format!("must be in (0, 1], got {}", self.eta)));
        }
        if self.mi_thresh > 1000 {
            return Err(("hpcc.mi_thresh", "must be in 0..=1000".into()));
        }
        Ok(())
    }
}

impl TimelyConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        for (k, v) in [("timely.alpha", self.alpha), ("timely.beta", self.beta)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err((k, format!("must be in (0, 1], got {v}")));
            }
        }
        if self.min_rtt == SimTime::ZERO {
            return Err(("timely.min_rtt", "must be > 0".into()));
        }
        if self.t_low > self.t_high {
            return Err(("timely.t_low", "must not exceed timely.t_high".into()));
        }
        Ok(())
    }
}

impl SwiftConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.ai > 0.0 && self.ai <= 100.0) {
            return Err(("swift.ai", format!("must be in (0, 100], got {}", self.ai)));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err((
                "swift.beta",
                format!("must be in (0, 1], got {}", self.beta),
            ));
        }
        if !(self.max_mdf > 0.0 && self.max_mdf < 1.0) {
            return Err((
                "swift.max_mdf",
                format!("must be in (0, 1), got {}", self.max_mdf),
            ));
        }
        if self.base_target == Some(SimTime::ZERO) {
            return Err(("swift.base_target", "must be > 0".into()));
        }
        if !(self.fs_min_cwnd > 0.0 && self.fs_min_cwnd < self.fs_max_cwnd) {
            return Err((
                "swift.fs_min_cwnd",
                "must be > 0 and below swift.fs_max_cwnd".into(),
            ));
        }
        Ok(())
    }
}

impl IrnConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self, mss: Bytes) -> Result<(), (&'static str, String)> {
        if self.rto_low == SimTime::ZERO {
            return Err(("irn.rto_low", "must be > 0".into()));
        }
        if self.rto_high < self.rto_low {
            return Err((
                "irn.rto_high",
                format!("must be >= irn.rto_low ({})", self.rto_low),
            ));
        }
        if self.low_pkts > 1_000_000 {
            return Err((
                "irn.low_pkts",
                format!("must be in 0..=1000000, got {}", self.low_pkts),
            ));
        }
        match self.bdp_cap {
            WindowSpec::None => {
                return Err(("irn.bdp_cap", "IRN needs a cap: \"bdp\" or a size".into()));
            }
            WindowSpec::Bytes(b) if b.0 < mss.0 => {
                return Err(("irn.bdp_cap", format!("must hold one packet ({} B)", mss.0)));
            }
            _ => {}
        }
        Ok(())
    }
}

impl DctcpRdmaConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(("dctcp_rdma.g", format!("must be in (0, 1], got {}", self.g)));
        }
        Ok(())
    }
}

impl MpRdmaConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(1..=1024).contains(&self.delta) {
            return Err((
                "mprdma.delta",
                format!("must be in 1..=1024, got {}", self.delta),
            ));
        }
        if !(1..=64).contains(&self.bitmap) {
            return Err((
                "mprdma.bitmap",
                format!("must be in 1..=64, got {}", self.bitmap),
            ));
        }
        if !(0.0..=1.0).contains(&self.probe) {
            return Err((
                "mprdma.probe",
                format!("must be in [0, 1], got {}", self.probe),
            ));
        }
        if !(1.0..=1000.0).contains(&self.init_cwnd) {
            return Err(("mprdma.init_cwnd", "must be in 1..=1000".into()));
        }
        Ok(())
    }
}

impl SrmConfig {
    /// The section's own checks: `(key, message)` of the first value out of range.
    pub fn validate(&self, mss: Bytes) -> Result<(), (&'static str, String)> {
        if self.chunk < mss {
            return Err((
                "srm.chunk",
                format!(
                    "must be at least one packet's payload (packet.mss = {}), got {}",
                    mss, self.chunk
                ),
            ));
        }
        Ok(())
    }
}
