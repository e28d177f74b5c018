//! Switch buffer management (the MMU): admission, drop decisions and PFC pause/resume.
//!
//! Two buffer models:
//!
//! * **static**: every egress port owns `per_port` bytes shared by its queues; a lossy packet is
//!   dropped when the port's lossy occupancy would exceed it (drop-tail).
//! * **shared**: one pool of `size` bytes per switch with a Broadcom-style dynamic threshold:
//!   a queue may hold `reserve` bytes of its own plus at most `T_p = alpha_p · F` shared bytes,
//!   where `F = size − reserved − headroom − shared occupancy` is the free shared buffer and
//!   `alpha_p` is configured per priority (GPMP's per-priority thresholds, GPMP reconstruction §2.8).
//!
//! A lossy priority is accounted at its **egress** queue (port, priority) and dropped above its
//! threshold. A lossless priority (PFC enabled for it) is accounted at its **ingress** counter
//! (ingress port, priority), following the HPCC ns-3 MMU (`switch-mmu.cc`): bytes fill the
//! reserve, then the shared pool up to `T_p` (static model: up to `pfc_xoff`), then the
//! per-port headroom; the ingress sends XOFF for that priority when it uses headroom or reaches
//! `T_p`, and XON once the headroom is empty and the shared part has fallen `resume_offset`
//! below `T_p`. A lossless packet is dropped only when its headroom is exhausted, which means
//! the headroom is too small for the link; such drops are counted separately.
//!
//! Bytes leave the buffer when their packet starts transmission (as in the HPCC model).
//! Not modelled: per-port ingress limits for lossy traffic, multicast, cell granularity.

use serde::{Deserialize, Serialize};

use crate::net::port::MAX_QUEUES;
use crate::units::Bytes;

/// Buffer model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BufferKind {
    /// Static per-egress-port drop-tail buffer.
    #[default]
    Static,
    /// Shared buffer with a dynamic threshold per priority.
    Shared,
}

/// Headroom per (ingress port, lossless priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Headroom {
    /// `2 × rate × delay + 2 × MTU + 64 B`: what can arrive after XOFF is decided (the pause
    /// frame's flight, the packet being serialized upstream, and the link's in-flight bytes).
    #[default]
    Auto,
    Bytes(Bytes),
}

impl Serialize for Headroom {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Headroom::Auto => s.serialize_str("auto"),
            Headroom::Bytes(b) => b.serialize(s),
        }
    }
}
impl<'de> Deserialize<'de> for Headroom {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "auto" {
            Ok(Headroom::Auto)
        } else {
            s.parse::<Bytes>()
                .map(Headroom::Bytes)
                .map_err(|e| serde::de::Error::custom(format!("{e} (or \"auto\")")))
        }
    }
}

/// `[switch.buffer]`: buffer configuration of every switch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BufferConfig {
    /// `"static"` (per-port drop-tail) or `"shared"` (dynamic threshold). Default `"static"`.
    pub kind: BufferKind,
    /// Static model: bytes per egress port. Default 150KB (100 × 1500 B, PDTCP reconstruction §3).
    pub per_port: Bytes,
    /// Static model: ingress XOFF threshold for lossless priorities. Default `per_port / 2`.
    pub pfc_xoff: Option<Bytes>,
    /// Shared model: total buffer per switch. Default 3MB (GPMP reconstruction §3).
    pub size: Bytes,
    /// Shared model: dynamic-threshold factor for every priority. Default 0.125 (HPCC).
    pub alpha: f64,
    /// Shared model: per-priority override of `alpha`, indexed by priority.
    pub alpha_per_prio: Vec<f64>,
    /// Shared model: bytes reserved per (port, queue) counter. Default 4KiB (HPCC).
    pub reserve: Bytes,
    /// PFC headroom per (ingress port, lossless priority): "auto" or a size. Default "auto".
    pub headroom: Headroom,
    /// PFC resume offset (XON hysteresis). Default 3KiB (HPCC).
    pub resume_offset: Bytes,
}

impl BufferConfig {
    /// This config with its size replaced: the shared buffer's total, or a static buffer's
    /// bytes per port (a switch's own buffer in a topology file).
    pub fn with_size(
        &self,
        size: Option<crate::units::Bytes>,
    ) -> std::borrow::Cow<'_, BufferConfig> {
        match size {
            None => std::borrow::Cow::Borrowed(self),
            Some(b) => {
                let mut c = self.clone();
                match c.kind {
                    BufferKind::Shared => c.size = b,
                    BufferKind::Static => c.per_port = b,
                }
                std::borrow::Cow::Owned(c)
            }
        }
    }
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            kind: BufferKind::Static,
            per_port: Bytes(150_000),
            pfc_xoff: None,
            size: Bytes(3_000_000),
            alpha: 0.125,
            alpha_per_prio: Vec::new(),
            reserve: Bytes(4096),
            headroom: Headroom::Auto,
            resume_offset: Bytes(3072),
        }
    }
}

impl BufferConfig {
    /// Checks ranges; returns `(key, message)` on error.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let bad = |k: &str, m: String| Err((k.to_string(), m));
        if self.per_port.0 == 0 {
            return bad("per_port", "must be positive".into());
        }
        if self.size.0 == 0 {
            return bad("size", "must be positive".into());
        }
        if !(self.alpha > 0.0 && self.alpha <= 64.0) {
            return bad("alpha", format!("must be in (0, 64], got {}", self.alpha));
        }
        if self.alpha_per_prio.len() > MAX_QUEUES {
            return bad(
                "alpha_per_prio",
                format!(
                    "at most {MAX_QUEUES} entries, got {}",
                    self.alpha_per_prio.len()
                ),
            );
        }
        for a in &self.alpha_per_prio {
            if !(*a > 0.0 && *a <= 64.0) {
                return bad(
                    "alpha_per_prio",
                    format!("each must be in (0, 64], got {a}"),
                );
            }
        }
        Ok(())
    }

    pub fn alpha_of(&self, prio: usize) -> f64 {
        self.alpha_per_prio.get(prio).copied().unwrap_or(self.alpha)
    }
}

/// The outcome of admission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Dropped. `lossless` is set when a lossless priority overflowed its headroom.
    Drop { lossless: bool },
    /// Accepted; `xoff` asks the caller to pause this priority at the upstream of the ingress.
    Accept { xoff: bool },
}

#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Ingress {
    rsv: u64,
    shared: u64,
    hdrm: u64,
    paused: bool,
}

/// The MMU of one switch. Ports are indexed locally (0..n_ports).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Mmu {
    kind: BufferKind,
    per_port: u64,
    pfc_xoff: u64,
    size: u64,
    alpha: [f64; MAX_QUEUES],
    reserve: u64,
    resume_offset: u64,
    /// Headroom per local ingress port.
    headroom: Vec<u64>,
    lossless: u8,
    /// Reserved + headroom bytes set aside from the shared pool.
    set_aside: u64,
    ingress: Vec<Ingress>,
    /// Lossy bytes per (egress port, priority).
    egress: Vec<u64>,
    /// Lossy bytes per egress port (static model).
    port_lossy: Vec<u64>,
    shared_used: u64,
    used: u64,
    /// Peak total occupancy in bytes.
    pub peak: u64,
}

impl Mmu {
    /// `headroom[i]` is the resolved headroom of local port `i`; `nq` the queues per port.
    pub fn new(cfg: &BufferConfig, headroom: Vec<u64>, nq: usize, lossless: u8) -> Self {
        let n = headroom.len();
        let mut alpha = [cfg.alpha; MAX_QUEUES];
        for (p, a) in alpha.iter_mut().enumerate() {
            *a = cfg.alpha_of(p);
        }
        let n_lossless = (lossless as u32).count_ones() as u64;
        let set_aside = cfg.reserve.0 * (n * nq) as u64 + headroom.iter().sum::<u64>() * n_lossless;
        Mmu {
            kind: cfg.kind,
            per_port: cfg.per_port.0,
            pfc_xoff: cfg.pfc_xoff.map(|b| b.0).unwrap_or(cfg.per_port.0 / 2),
            size: cfg.size.0,
            alpha,
            reserve: if cfg.kind == BufferKind::Shared {
                cfg.reserve.0
            } else {
                0
            },
            resume_offset: cfg.resume_offset.0,
            headroom,
            lossless,
            set_aside,
            ingress: vec![Ingress::default(); n * MAX_QUEUES],
            egress: vec![0; n * MAX_QUEUES],
            port_lossy: vec![0; n],
            shared_used: 0,
            used: 0,
            peak: 0,
        }
    }

    #[inline]
    pub fn is_lossless(&self, prio: u8) -> bool {
        self.lossless & (1 << prio) != 0
    }

    /// The free shared buffer `F` (shared model).
    fn free(&self) -> u64 {
        self.size
            .saturating_sub(self.set_aside)
            .saturating_sub(self.shared_used)
    }

    /// Current threshold on the shared bytes of one counter of priority `prio`.
    pub fn threshold(&self, prio: u8) -> u64 {
        match self.kind {
            BufferKind::Static => self.pfc_xoff,
            BufferKind::Shared => (self.alpha[prio as usize] * self.free() as f64) as u64,
        }
    }

    /// Bytes buffered in the switch.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Admission of a `size`-byte packet arriving on local port `inp` for local egress port
    /// `outp`, priority `prio`.
    #[inline(always)]
    pub fn admit(&mut self, inp: usize, outp: usize, prio: u8, size: u32) -> Admit {
        let size = size as u64;
        let r = if self.is_lossless(prio) {
            let t = self.threshold(prio);
            let shared_kind = self.kind == BufferKind::Shared;
            let hdrm_cap = self.headroom[inp];
            let c = &mut self.ingress[inp * MAX_QUEUES + prio as usize];
            if shared_kind && c.rsv + size <= self.reserve {
                c.rsv += size;
            } else if c.shared + size <= t {
                c.shared += size;
                if shared_kind {
                    self.shared_used += size;
                }
            } else if c.hdrm + size <= hdrm_cap {
                c.hdrm += size;
            } else {
                return Admit::Drop { lossless: true };
            }
            let xoff = !c.paused && (c.hdrm > 0 || c.shared >= t);
            if xoff {
                c.paused = true;
            }
            Admit::Accept { xoff }
        } else {
            match self.kind {
                BufferKind::Static => {
                    if self.port_lossy[outp] + size > self.per_port {
                        return Admit::Drop { lossless: false };
                    }
                    self.port_lossy[outp] += size;
                }
                BufferKind::Shared => {
                    let i = outp * MAX_QUEUES + prio as usize;
                    let old = self.egress[i];
                    let new = old + size;
                    let old_sh = old.saturating_sub(self.reserve);
                    let new_sh = new.saturating_sub(self.reserve);
                    let delta = new_sh - old_sh;
                    if delta > 0 {
                        let t = self.threshold(prio);
                        if new_sh > t || delta > self.free() {
                            return Admit::Drop { lossless: false };
                        }
                    }
                    self.egress[i] = new;
                    self.shared_used += delta;
                }
            }
            Admit::Accept { xoff: false }
        };
        self.used += size;
        if self.used > self.peak {
            self.peak = self.used;
        }
        r
    }

    /// Releases the bytes of a packet that leaves the buffer; returns `true` when the ingress
    /// counter should send XON for `prio`.
    #[inline(always)]
    pub fn release(&mut self, inp: usize, outp: usize, prio: u8, size: u32) -> bool {
        let mut size = size as u64;
        self.used -= size;
        if self.is_lossless(prio) {
            let shared_freed = {
                // Bytes leave the headroom first, then the shared part, then the reserve.
                let c = &mut self.ingress[inp * MAX_QUEUES + prio as usize];
                let h = size.min(c.hdrm);
                c.hdrm -= h;
                size -= h;
                let s = size.min(c.shared);
                c.shared -= s;
                size -= s;
                debug_assert!(size <= c.rsv, "ingress accounting underflow");
                c.rsv -= size.min(c.rsv);
                s
            };
            if self.kind == BufferKind::Shared {
                self.shared_used -= shared_freed;
            }
            let t = self.threshold(prio);
            let ro = self.resume_offset;
            let c = &mut self.ingress[inp * MAX_QUEUES + prio as usize];
            if c.paused && c.hdrm == 0 && (c.shared == 0 || c.shared + ro <= t) {
                c.paused = false;
                return true;
            }
            false
        } else {
            match self.kind {
                BufferKind::Static => self.port_lossy[outp] -= size,
                BufferKind::Shared => {
                    let i = outp * MAX_QUEUES + prio as usize;
                    let old = self.egress[i];
                    let new = old - size;
                    self.shared_used -=
                        old.saturating_sub(self.reserve) - new.saturating_sub(self.reserve);
                    self.egress[i] = new;
                }
            }
            false
        }
    }

    /// Whether the ingress counter (port, prio) is currently paused (has sent XOFF).
    pub fn ingress_paused(&self, inp: usize, prio: u8) -> bool {
        self.ingress[inp * MAX_QUEUES + prio as usize].paused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(alpha: f64, per_prio: Vec<f64>) -> BufferConfig {
        BufferConfig {
            kind: BufferKind::Shared,
            size: Bytes(100_000),
            alpha,
            alpha_per_prio: per_prio,
            reserve: Bytes(0),
            ..Default::default()
        }
    }

    #[test]
    fn static_drop_tail_per_port() {
        let cfg = BufferConfig {
            per_port: Bytes(3000),
            ..Default::default()
        };
        let mut m = Mmu::new(&cfg, vec![0; 2], 1, 0);
        assert_eq!(m.admit(0, 1, 0, 1500), Admit::Accept { xoff: false });
        assert_eq!(m.admit(0, 1, 0, 1500), Admit::Accept { xoff: false });
        assert_eq!(m.admit(0, 1, 0, 1), Admit::Drop { lossless: false });
        // Other port unaffected.
        assert_eq!(m.admit(1, 0, 0, 1500), Admit::Accept { xoff: false });
        m.release(0, 1, 0, 1500);
        assert_eq!(m.admit(0, 1, 0, 1500), Admit::Accept { xoff: false });
        assert_eq!(m.used(), 4500);
    }

    #[test]
    fn dynamic_threshold_converges_to_alpha_share() {
        // One queue alone under DT with alpha: q <= alpha (B - q)  =>  q* = alpha B / (1 + alpha).
        let mut m = Mmu::new(&shared(1.0, vec![]), vec![0; 2], 1, 0);
        let mut q = 0;
        while let Admit::Accept { .. } = m.admit(0, 1, 0, 100) {
            q += 100;
        }
        assert!((q as i64 - 50_000).abs() <= 100, "q {q}");
    }

    #[test]
    fn per_priority_alpha_lets_high_priority_take_more() {
        let mut m = Mmu::new(&shared(0.125, vec![0.125, 1.0, 0.125]), vec![0; 4], 3, 0);
        let fill = |m: &mut Mmu, out: usize, prio: u8| {
            let mut q = 0u64;
            while let Admit::Accept { .. } = m.admit(0, out, prio, 100) {
                q += 100;
            }
            q
        };
        let low = fill(&mut m, 1, 2);
        let high = fill(&mut m, 2, 1);
        assert!(high > 3 * low, "high {high} low {low}");
    }

    #[test]
    fn pfc_pauses_before_dropping_and_resumes() {
        let cfg = BufferConfig {
            kind: BufferKind::Shared,
            size: Bytes(100_000),
            alpha: 0.125,
            reserve: Bytes(1000),
            resume_offset: Bytes(500),
            ..Default::default()
        };
        let mut m = Mmu::new(&cfg, vec![5000, 5000], 2, 0b10);
        let mut xoff_at = None;
        let mut accepted = 0u64;
        for i in 0..200 {
            match m.admit(0, 1, 1, 500) {
                Admit::Accept { xoff } => {
                    accepted += 500;
                    if xoff {
                        assert!(xoff_at.is_none(), "XOFF sent twice");
                        xoff_at = Some(i);
                    }
                }
                Admit::Drop { lossless } => {
                    assert!(lossless);
                    break;
                }
            }
        }
        assert!(xoff_at.is_some());
        // Accepted = reserve + threshold + headroom.
        let t = m.threshold(1);
        assert!(accepted <= 1000 + t + 5000 + 500);
        assert!(m.ingress_paused(0, 1));
        // Lossy priority 0 on the same switch still works independently.
        assert!(matches!(m.admit(1, 0, 0, 500), Admit::Accept { .. }));
        let mut xon = false;
        while accepted > 0 {
            xon |= m.release(0, 1, 1, 500);
            accepted -= 500;
            if xon {
                break;
            }
        }
        assert!(xon, "XON never sent");
        assert!(!m.ingress_paused(0, 1));
    }

    /// GPMP's per-priority thresholds (alpha_high = 1, alpha_low = 1/8): under the same
    /// arrival pattern the low priority pauses (lossless) or drops (lossy) first, and the
    /// high priority absorbs several times more before it does.
    #[test]
    fn per_priority_thresholds_pause_or_drop_the_low_class_first() {
        for lossless in [true, false] {
            let cfg = BufferConfig {
                kind: BufferKind::Shared,
                size: Bytes(1_000_000),
                alpha: 0.125,
                alpha_per_prio: vec![0.125, 1.0, 0.125],
                reserve: Bytes(0),
                ..Default::default()
            };
            let mask = if lossless { 0b110 } else { 0 };
            let mut m = Mmu::new(&cfg, vec![20_000; 4], 3, mask);
            let mut first = None;
            let mut taken = [0u64; 3];
            for _ in 0..4000 {
                for (prio, inp, out) in [(1u8, 0usize, 2usize), (2, 1, 3)] {
                    if taken[prio as usize] == u64::MAX {
                        continue;
                    }
                    match m.admit(inp, out, prio, 500) {
                        Admit::Accept { xoff } => {
                            taken[prio as usize] += 500;
                            if xoff && first.is_none() {
                                first = Some(prio);
                            }
                        }
                        Admit::Drop { .. } => {
                            if first.is_none() {
                                first = Some(prio);
                            }
                        }
                    }
                }
            }
            assert_eq!(
                first,
                Some(2),
                "lossless={lossless}: the low priority must react first"
            );
            if !lossless {
                assert!(
                    taken[1] > 3 * taken[2],
                    "high {} low {}",
                    taken[1],
                    taken[2]
                );
            }
        }
    }
}
