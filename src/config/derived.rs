//! Values derived from a config for planning and lowering: GPMP's path count and limit, the
//! base RTT, pFabric's window, buffer and timeout, sweep points, size classes, the switch a
//! scheme runs with.

use super::*;

impl Config {
    /// Low-priority queue pairs per host pair for GPMP: `[gpmp] paths`, or the number of
    /// uplinks of a leaf/edge switch when 0.
    pub fn gpmp_paths(&self) -> u32 {
        if self.gpmp.paths > 0 {
            return self.gpmp.paths;
        }
        match self.topology {
            TopologyConfig::LeafSpine { spines, .. } => spines,
            TopologyConfig::FatTree { k, .. } => k / 2,
            TopologyConfig::Dumbbell { .. } => 1,
            TopologyConfig::Rail(ref r) => r.uplinks(),
            TopologyConfig::File { .. } => self.topology.uplinks_of_host0().max(1),
        }
    }

    /// GPMP's outstanding-bytes limit L per low-priority queue pair, in bytes: `[gpmp] limit`
    /// when set, else one bandwidth-delay product of the topology's longest host-to-host
    /// path at the host line rate, at least one slice. The round trip is the ideal FCT of one
    /// full packet (`mss + header` bytes, store-and-forward) and its ACK (`header` bytes), as
    /// in the ideal-FCT formula of `docs/outputs.md`. [Reconstruction: the paper gives no value; the
    /// summary says the byte limit "avoids path congestion", which a limit of about one BDP
    /// per path does and a larger one does not (`docs/reproduction/gpmp.md`).]
    pub fn gpmp_limit(&self) -> u64 {
        if let Some(l) = self.gpmp.limit {
            return l.0;
        }
        self.topology
            .host_rate()
            .bytes_in(self.base_rtt())
            .max(self.gpmp.slice.0)
    }

    /// The unloaded round trip of the topology's longest host-to-host path: the ideal FCT of
    /// one full packet (`mss + header` bytes, store-and-forward) and its ACK (`header` bytes).
    pub fn base_rtt(&self) -> SimTime {
        let path = self.topology.longest_path();
        let rev: Vec<_> = path.iter().rev().copied().collect();
        let mss = self.packet.mss.0 as u32;
        crate::metrics::ideal_fct(
            mss as u64,
            mss,
            self.packet.header.0 as u32,
            &path,
            &rev,
            Some(self.packet.header.0 as u32),
        )
    }

    /// pFabric's initial window in segments: `[pfabric] init_cwnd`, else one bandwidth-delay
    /// product of the longest path in full packets, rounded up.
    pub fn pfabric_init_cwnd(&self) -> f64 {
        self.pfabric.init_cwnd.unwrap_or_else(|| {
            let bdp = self.topology.host_rate().bytes_in(self.base_rtt());
            bdp.div_ceil(self.packet.mss.0 + self.packet.header.0) as f64
        })
    }

    /// pFabric's switch buffer per egress port: `[pfabric] buffer`, else two bandwidth-delay
    /// products of the longest path at the host rate.
    pub fn pfabric_buffer(&self) -> u64 {
        self.pfabric.buffer.map_or_else(
            || 2 * self.topology.host_rate().bytes_in(self.base_rtt()),
            |b| b.0,
        )
    }

    /// pFabric's fixed retransmission timeout: `[pfabric] rto`, else three base round trips.
    pub fn pfabric_rto(&self) -> SimTime {
        self.pfabric
            .rto
            .unwrap_or_else(|| SimTime(3 * self.base_rtt().0))
    }

    /// The config of one combination: the experiment's config with the axis values applied,
    /// without the sweep itself.
    pub fn at_sweep_point(
        &self,
        values: &[toml::Value],
        file: &str,
    ) -> Result<Config, ConfigError> {
        let cfg = self;
        let err = |key: &str, msg: String| ConfigError {
            file: file.to_string(),
            key: key.to_string(),
            msg,
        };
        let mut table = toml::Table::try_from(cfg).map_err(|e| err("", e.to_string()))?;
        table.remove("sweep");
        table.remove("plot");
        for (a, v) in cfg.sweep.axes.iter().zip(values) {
            crate::sweep::set_key(&mut table, &a.key, v.clone()).map_err(|m| err(&a.key, m))?;
        }
        let text = toml::to_string(&table).map_err(|e| err("", e.to_string()))?;
        let c = Config::parse(&text, file).map_err(|e| {
            // The error's line refers to the generated text: name the axes instead.
            let msg = match e.msg.strip_prefix("line ") {
                Some(r) => r.split_once(": ").map_or(r, |(_, m)| m),
                None => &e.msg,
            };
            let set: Vec<String> = cfg
                .sweep
                .axes
                .iter()
                .zip(values)
                .map(|(a, v)| format!("{} = {}", a.key, crate::sweep::value_text(v)))
                .collect();
            ConfigError {
                key: "sweep.axes".into(),
                msg: format!("with {}: {msg}", set.join(", ")),
                ..e
            }
        })?;
        // The generated text holds every value; what the experiment set is its own keys and
        // the axes.
        let mut c = c;
        c.explicit = cfg.explicit.clone();
        for a in &cfg.sweep.axes {
            c.explicit.insert(&a.key);
        }
        Ok(c)
    }

    /// The size classes of `[metrics]`.
    pub fn size_classes(&self) -> crate::metrics::SizeClasses {
        crate::metrics::SizeClasses {
            bounds: self.metrics.size_classes.iter().map(|b| b.0).collect(),
            below: self.metrics.below.iter().map(|b| b.0).collect(),
        }
    }

    /// Whether RDMA scheme `scheme`'s queue pairs recover losses with IRN (else go-back-N):
    /// `[rdma] recovery`, by default IRN for the IRN scheme only; an error for a contradiction.
    pub fn irn_for(&self, scheme: &Scheme) -> Result<bool, String> {
        let mprdma = scheme.rdma_host == Some(crate::scheme::RdmaHostKind::MpRdma);
        match self.rdma.recovery {
            None => Ok(scheme.irn),
            Some(LossRecovery::GoBackN) if scheme.irn => Err(format!(
                "scheme {} is IRN's loss recovery; \"go_back_n\" contradicts it",
                scheme.name
            )),
            Some(LossRecovery::Irn) if mprdma => Err(format!(
                "scheme {} has its own loss recovery; \"irn\" applies to queue-pair schemes",
                scheme.name
            )),
            Some(r) => Ok(r == LossRecovery::Irn),
        }
    }

    /// The short-message threshold in bytes.
    pub fn short_threshold(&self) -> u64 {
        match self.gpmp.short_threshold_time {
            Some(t) => self.topology.host_rate().bytes_in(t),
            None => self.gpmp.short_threshold.0,
        }
    }

    /// AM's congestion threshold in bytes.
    pub fn am_threshold(&self) -> u64 {
        match (self.am.threshold, self.switch.ecn) {
            (Some(t), _) => t.0,
            (None, crate::net::port::EcnConfig::Step { k, .. }) => k.0,
            _ => 30_000,
        }
    }

    /// The switch configuration a scheme runs with: RDMA schemes use three queues (control,
    /// short, long); GPMP's switch side replaces the scheduler with strict priority plus a
    /// minimum bandwidth per data queue (queue 0, control, strictly first) and sets the
    /// per-priority dynamic-threshold alphas.
    pub fn switch_for(&self, scheme: &Scheme) -> SwitchConfig {
        let mut s = self.switch.clone();
        if scheme.transport == TransportKind::Rdma {
            s.queues = s.queues.max(3);
        }
        if scheme.transport.is_pfabric() {
            // pFabric's switch: serve and drop by rank, small static per-port buffers.
            s.scheduler = crate::net::port::SchedulerConfig::Pfabric;
            s.buffer.kind = crate::net::buffer::BufferKind::Static;
            s.buffer.per_port = Bytes(self.pfabric_buffer());
        }
        if scheme.irn {
            // IRN's premise: a lossy fabric, no PFC (`[rdma] recovery = "irn"` on another
            // scheme keeps `[switch.pfc]` as configured).
            s.pfc.enabled = false;
        }
        if scheme.gpmp_switch {
            let mut min_rate = vec![BitRate(0); s.queues as usize];
            for r in min_rate.iter_mut().skip(1) {
                *r = self.gpmp.min_bw;
            }
            s.scheduler = crate::net::port::SchedulerConfig::StrictMinBw {
                min_rate,
                depth: Bytes(2000),
                strict_top: 1,
            };
            let mut alphas = vec![s.buffer.alpha; s.queues as usize];
            alphas[1] = self.gpmp.alpha_high;
            alphas[2] = self.gpmp.alpha_low;
            s.buffer.alpha_per_prio = alphas;
        }
        s
    }
}
