//! Validation of a whole config: every key against its range and the keys against each
//! other, per scheme, with errors naming the file, the key and what is allowed. A section's
//! own ranges are its `validate()`, next to its struct (`tcp.rs`, `rdma.rs`, `net.rs`); this
//! file calls them and checks what crosses sections (the topology, the schemes, buffers,
//! priorities, sweeps, plots).

use super::*;

impl Config {
    /// Checks every range and cross-field constraint, for each scheme on the config it runs
    /// with ([`Config::for_scheme`]: its transport's defaults and `[per_scheme]`).
    pub fn validate(&self, file: &str, base: &Path) -> Result<(), ConfigError> {
        if self.schemes.iter().any(|s| Scheme::builtin(s).is_none()) || self.schemes.is_empty() {
            // Names the bad scheme (or the empty list) with the usual message.
            return self.validate_for(file, base, &self.schemes);
        }
        self.check_per_scheme(file)?;
        // The transport defaults read the host rate, which a topology file gives.
        self.topology
            .load_file(base)
            .map_err(|(k, m)| ConfigError {
                file: file.to_string(),
                key: format!("topology.{k}"),
                msg: m,
            })?;
        // Schemes whose configs come out equal are checked together, once.
        let mut groups: Vec<(Config, Vec<String>)> = Vec::new();
        for name in &self.schemes {
            let scheme = Scheme::builtin(name).expect("checked above");
            let c = self.for_scheme(name, &scheme, file)?;
            match groups.iter_mut().find(|(g, _)| *g == c) {
                Some((_, names)) => names.push(name.clone()),
                None => groups.push((c, vec![name.clone()])),
            }
        }
        let mut plain = self.clone();
        plain.per_scheme.clear();
        for (c, names) in &groups {
            c.validate_for(file, base, names).map_err(|e| {
                if *c == plain {
                    e
                } else {
                    ConfigError {
                        msg: format!(
                            "{} (scheme {}, with its transport's defaults{})",
                            e.msg,
                            names.join(", "),
                            if names.iter().any(|n| self.per_scheme.contains_key(n)) {
                                " and [per_scheme]"
                            } else {
                                ""
                            }
                        ),
                        ..e
                    }
                }
            })?;
        }
        Ok(())
    }

    /// [`Config::validate`] of this config as it stands, the per-scheme checks for `schemes`.
    pub(in crate::config) fn validate_for(
        &self,
        file: &str,
        base: &Path,
        schemes: &[String],
    ) -> Result<(), ConfigError> {
        let err = |key: &str, msg: String| ConfigError {
            file: file.to_string(),
            key: key.to_string(),
            msg,
        };
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            || self.name.starts_with('.')
        {
            return Err(err(
                "name",
                format!(
                    "`{}`: use letters, digits, `-`, `_` and `.` (not first)",
                    self.name
                ),
            ));
        }
        // A topology file first (everything below asks the topology), then ranges: nothing
        // below builds anything.
        self.topology
            .load_file(base)
            .map_err(|(k, m)| err(&format!("topology.{k}"), m))?;
        self.topology
            .validate()
            .map_err(|(k, m)| err(&format!("topology.{k}"), m))?;
        let n_nodes = self.topology.n_hosts() + self.topology.n_switches();
        if let Some(p) = &self.pcap {
            p.validate(n_nodes).map_err(|(k, m)| err(&k, m))?;
        }
        if let Some(ts) = &self.timeseries {
            ts.validate(n_nodes).map_err(|(k, m)| err(&k, m))?;
        }
        if let Some(p) = &self.probe {
            p.validate()
                .map_err(|(k, m)| err(&format!("probe.{k}"), m))?;
        }
        if self.seeds == 0 || self.seeds > 1000 {
            return Err(err(
                "seeds",
                format!("must be in 1..=1000, got {}", self.seeds),
            ));
        }
        if self.seed.checked_add(self.seeds as u64 - 1).is_none() {
            return Err(err(
                "seed",
                format!(
                    "seed {} plus {} seeds passes the largest seed ({}): start lower",
                    self.seed,
                    self.seeds,
                    u64::MAX
                ),
            ));
        }
        if let Some(t) = self.end_when
            && !self.workload.tags().contains(&t)
        {
            let have: Vec<&str> = self.workload.tags().iter().map(|t| t.name()).collect();
            return Err(err(
                "end_when",
                format!(
                    "no flow of this workload is tagged `{}` (its tags: {}): the run would end at once",
                    t.name(),
                    have.join(", ")
                ),
            ));
        }
        if self.stop_time == Some(SimTime::ZERO) {
            return Err(err("stop_time", "must be positive".into()));
        }
        if self.schemes.is_empty() {
            return Err(err("schemes", "list at least one scheme".into()));
        }
        for (i, s) in self.schemes.iter().enumerate() {
            if let Err(m) = Scheme::parse(s) {
                return Err(err(&format!("schemes[{i}]"), m));
            }
            if self.schemes[..i].contains(s) {
                return Err(err(
                    &format!("schemes[{i}]"),
                    format!("`{s}` is listed twice"),
                ));
            }
        }
        self.switch
            .validate()
            .map_err(|(k, m)| err(&format!("switch.{k}"), m))?;
        let p = &self.packet;
        if !(64..=9000).contains(&p.mss.0) {
            return Err(err(
                "packet.mss",
                format!("must be in 64B..=9000B, got {}", p.mss),
            ));
        }
        if !(20..=200).contains(&p.header.0) {
            return Err(err(
                "packet.header",
                format!("must be in 20B..=200B, got {}", p.header),
            ));
        }
        let max_prio = self.workload.max_prio(self.topology.n_hosts(), base);
        // Buffers that can hold what they promise, for the switch every scheme runs with.
        for name in schemes {
            if let Some(scheme) = Scheme::builtin(name) {
                if let Some(p) = max_prio {
                    let nq = self.switch_for(&scheme).queues;
                    if p >= nq {
                        return Err(err(
                            "workload",
                            format!(
                                "a flow asks for priority {p}, but scheme {name}'s switches have {nq} queue(s) (0..{nq}): raise switch.queues"
                            ),
                        ));
                    }
                }
                if scheme.transport == TransportKind::Rdma {
                    self.irn_for(&scheme).map_err(|m| err("rdma.recovery", m))?;
                }
                if scheme.transport == TransportKind::Rdma
                    && self.rdma.rto.is_none()
                    && !self.irn_for(&scheme).unwrap_or(false)
                {
                    let sw = self.switch_for(&scheme);
                    let lossless = sw.pfc.mask(sw.queues);
                    let data = if scheme.class_prio { 0b110 } else { 0b010 };
                    if lossless & data != data {
                        return Err(err(
                            "rdma.rto",
                            format!(
                                "scheme {name} sends data on priorities PFC does not protect, and without a retransmission timeout go-back-N strands a message whose last packets are lost: set rdma.rto (e.g. \"1ms\") or enable PFC for them"
                            ),
                        ));
                    }
                    // PFC keeps buffers from overflowing, not links from failing or losing.
                    let cause = if self.failures.iter().any(|f| f.action == FailAction::Down) {
                        Some(
                            "[[failures]] that take links or switches down lose the packets on and queued for them",
                        )
                    } else if self.topology.build().links.iter().any(|l| l.loss > 0.0) {
                        Some("lossy links of the topology file lose packets")
                    } else {
                        None
                    };
                    // Go-back-N drops what arrives out of order and NACKs at most once per
                    // nack_interval for the same expected PSN, so a sprayed queue pair's tail
                    // can wait for a NACK that never comes (RoCE NICs time out).
                    let lb = scheme.lb.unwrap_or(self.switch.load_balancer);
                    if lb.reorders() {
                        return Err(err(
                            "rdma.rto",
                            format!(
                                "scheme {name}: the {} load balancer reorders packets; go-back-N drops those that arrive out of order, and without a retransmission timeout a message whose last packets were dropped waits forever: set rdma.rto (RoCE NICs time out after milliseconds; e.g. \"1ms\") or use IRN's recovery",
                                lb.name()
                            ),
                        ));
                    }
                    if let Some(cause) = cause {
                        return Err(err(
                            "rdma.rto",
                            format!(
                                "scheme {name}: {cause} even on priorities PFC protects, and without a retransmission timeout a message whose last packets are lost never finishes: set rdma.rto (e.g. \"1ms\")"
                            ),
                        ));
                    }
                }
                self.check_buffers(&self.switch_for(&scheme))
                    .map_err(|(k, m)| {
                        // pFabric's per-port buffer is `[pfabric] buffer` (or its default),
                        // not the switch's.
                        if scheme.transport.is_pfabric() && k == "per_port" {
                            let default = match self.pfabric.buffer {
                                Some(_) => String::new(),
                                None => format!(
                                    " (not set: two bandwidth-delay products, {} B); set it",
                                    self.pfabric_buffer()
                                ),
                            };
                            err("pfabric.buffer", format!("{m}{default} (scheme {name})"))
                        } else {
                            err(
                                &format!("switch.buffer.{k}"),
                                format!("{m} (scheme {name})"),
                            )
                        }
                    })?;
                // Switches with their own buffer (topology files) must hold what it promises.
                let spec = self.topology.build();
                for sw in spec.switches.iter().filter(|s| s.buffer.is_some()) {
                    let mut c = self.switch_for(&scheme);
                    c.buffer = c.buffer.with_size(sw.buffer).into_owned();
                    self.check_buffers(&c).map_err(|(k, m)| {
                        err(
                            "topology.file",
                            format!("switch {}'s buffer: {k}: {m} (scheme {name})", sw.name),
                        )
                    })?;
                }
            }
        }
        self.tcp
            .validate(self.packet.mss)
            .map_err(|(k, m)| err(k, m))?;
        self.dctcp.validate().map_err(|(k, m)| err(k, m))?;
        let nq = self.switch.queues;
        for (k, v) in [
            ("priorities.data", self.priorities.data),
            ("priorities.ack", self.priorities.ack),
        ] {
            if v >= nq {
                return Err(err(k, format!("must be < switch.queues ({nq}), got {v}")));
            }
        }
        let b = &self.metrics.size_classes;
        if b.windows(2).any(|w| w[0] >= w[1]) || b.first().is_some_and(|x| x.0 == 0) {
            return Err(err(
                "metrics.size_classes",
                "boundaries must be positive and strictly increasing".into(),
            ));
        }
        if self.metrics.below.iter().any(|x| x.0 == 0) {
            return Err(err("metrics.below", "sizes must be positive".into()));
        }
        self.rdma.validate().map_err(|(k, m)| err(k, m))?;
        self.gpmp
            .validate(self.packet.mss)
            .map_err(|(k, m)| err(k, m))?;
        self.pfabric
            .validate(self.packet.mss.0 + self.packet.header.0)
            .map_err(|(k, m)| err(k, m))?;
        if let Some(pin) = &self.routing.pin {
            let path = base.join(pin);
            match crate::fileid::read_to_string(&path) {
                Err(m) => {
                    return Err(err("routing.pin", m));
                }
                Ok(t) if t.lines().next().map(str::trim) != Some("flow_id,direction,nodes") => {
                    return Err(err(
                        "routing.pin",
                        format!(
                            "{}: line 1: the header must be `flow_id,direction,nodes`",
                            path.display()
                        ),
                    ));
                }
                Ok(_) => {}
            }
        }
        self.powertcp.validate().map_err(|(k, m)| err(k, m))?;
        self.hpcc.validate().map_err(|(k, m)| err(k, m))?;
        self.timely.validate().map_err(|(k, m)| err(k, m))?;
        self.cubic.validate().map_err(|(k, m)| err(k, m))?;
        self.swift.validate().map_err(|(k, m)| err(k, m))?;
        self.irn
            .validate(self.packet.mss)
            .map_err(|(k, m)| err(k, m))?;
        self.run.validate().map_err(|(k, m)| err(k, m))?;
        if self.routing.convergence > SimTime::from_ms(10_000) {
            return Err(err(
                "routing.convergence",
                format!("must be in 0us..=10s, got {}", self.routing.convergence),
            ));
        }
        if !self.failures.is_empty() {
            let spec = self.topology.build();
            for (i, f) in self.failures.iter().enumerate() {
                let key = format!("failures[{i}]");
                f.links(&spec, &self.topology.node_map())
                    .map_err(|m| err(&key, m))?;
                match (f.action, f.rate) {
                    (FailAction::Rate, None) => {
                        return Err(err(
                            &format!("{key}.rate"),
                            "action \"rate\" needs a `rate`".into(),
                        ));
                    }
                    (FailAction::Rate, Some(r))
                        if r < BitRate::from_mbps(1) || r > BitRate::from_gbps(100_000) =>
                    {
                        return Err(err(
                            &format!("{key}.rate"),
                            format!("must be in 1Mbps..=100Tbps, got {r}"),
                        ));
                    }
                    (FailAction::Down | FailAction::Up, Some(_)) => {
                        return Err(err(
                            &format!("{key}.rate"),
                            "only action \"rate\" takes a rate".into(),
                        ));
                    }
                    _ => {}
                }
                if f.switch.is_some() && f.action == FailAction::Rate {
                    return Err(err(
                        &format!("{key}.action"),
                        "a switch goes \"down\" or \"up\"; change a link's rate with `link`".into(),
                    ));
                }
            }
        }
        self.dctcp_rdma.validate().map_err(|(k, m)| err(k, m))?;
        match self.nic.tsq {
            WindowSpec::Bdp => {
                return Err(err(
                    "nic.tsq",
                    "\"none\" or a size (\"bdp\" is not defined for a host queue)".into(),
                ));
            }
            WindowSpec::Bytes(b) if b.0 < self.packet.mss.0 => {
                return Err(err(
                    "nic.tsq",
                    format!("must hold one packet ({} B)", self.packet.mss.0),
                ));
            }
            _ => {}
        }
        if self.nic.qdisc == Qdisc::Fifo
            && let Some(name) = schemes.iter().find(|n| {
                Scheme::builtin(n)
                    .is_some_and(|s| s.transport == TransportKind::Rdma || s.transport.is_pfabric())
            })
        {
            return Err(err(
                "nic.qdisc",
                format!(
                    "\"fifo\" models a host kernel queue for TCP and UDP; scheme {name} schedules its NIC itself (RDMA queue pairs, pFabric ranks)"
                ),
            ));
        }
        if let Some(WindowSpec::Bytes(b)) = self.rdma.window
            && b.0 == 0
        {
            return Err(err(
                "rdma.window",
                "must be > 0 (\"none\" for no window)".into(),
            ));
        }
        if let Some(a) = self.rdma.ack_size
            && !(20..=9000).contains(&a.0)
        {
            return Err(err("rdma.ack_size", "must be in 20B..=9000B".into()));
        }
        // PFC headroom is sized for data packets: a larger ACK could overflow it and drop
        // "lossless" packets.
        let frame = self.packet.mss.0 + self.packet.header.0;
        if let Some(a) = self.rdma.ack_size
            && a.0 > frame
            && let Some(name) = schemes.iter().find(|n| {
                Scheme::builtin(n).is_some_and(|sc| {
                    sc.transport == TransportKind::Rdma && self.switch_for(&sc).pfc.enabled
                })
            })
        {
            return Err(err(
                "rdma.ack_size",
                format!(
                    "{a} is larger than a data packet ({frame} B on the wire: packet.mss + packet.header), and scheme {name} runs on PFC, whose headroom holds data packets: ACKs at most {frame} B"
                ),
            ));
        }
        self.flowlet.validate().map_err(|(k, m)| err(k, m))?;
        self.d2tcp.validate().map_err(|(k, m)| err(k, m))?;
        self.pdtcp.validate().map_err(|(k, m)| err(k, m))?;
        self.mprdma.validate().map_err(|(k, m)| err(k, m))?;
        self.srm
            .validate(self.packet.mss)
            .map_err(|(k, m)| err(k, m))?;
        let rdma_schemes = schemes
            .iter()
            .filter(|s| Scheme::builtin(s).is_some_and(|s| s.transport == TransportKind::Rdma))
            .count();
        if rdma_schemes > 0 && self.packet.mss.0 > 4096 {
            return Err(err(
                "packet.mss",
                "RDMA payloads are at most 4096B (RoCEv2 MTU)".into(),
            ));
        }
        let runs = self
            .sweep
            .axes
            .iter()
            .fold(self.schemes.len() as u128 * self.seeds as u128, |n, a| {
                n * a.values.len() as u128
            });
        if runs > MAX_RUNS as u128 {
            return Err(err(
                "sweep.axes",
                format!(
                    "{runs} runs (schemes x seeds x the values of every axis); at most {MAX_RUNS} in one experiment: split it"
                ),
            ));
        }
        for (i, a) in self.sweep.axes.iter().enumerate() {
            if a.values.is_empty() {
                return Err(err(&format!("sweep.axes[{i}]"), "lists no values".into()));
            }
            if self.sweep.axes[..i].iter().any(|b| b.key == a.key) {
                return Err(err(
                    &format!("sweep.axes[{i}]"),
                    format!("`{}` twice", a.key),
                ));
            }
            let top = a.key.split('.').next().unwrap_or_default();
            if [
                "sweep",
                "plot",
                "schemes",
                "seed",
                "seeds",
                "name",
                "output_dir",
            ]
            .contains(&top)
            {
                return Err(err(
                    &format!("sweep.axes[{i}].key"),
                    format!(
                        "`{}` cannot be swept: schemes go in `schemes`, seeds in `seed`/`seeds`; `name`, `output_dir`, `[sweep]` and `[[plot]]` describe the experiment, not a run",
                        a.key
                    ),
                ));
            }
            let fixed = crate::columns::summary_header(&[]);
            if fixed.contains(&a.column()) {
                return Err(err(
                    &format!("sweep.axes[{i}].key"),
                    format!(
                        "`{}` would add the summary column `{}`, which summary.csv already has: sweep a differently named key",
                        a.key,
                        a.column()
                    ),
                ));
            }
            if let Some(b) = self.sweep.axes[..i]
                .iter()
                .find(|b| b.column() == a.column())
            {
                return Err(err(
                    &format!("sweep.axes[{i}].key"),
                    format!(
                        "`{}` and `{}` would share the summary column `{}`: sweep one of them",
                        b.key,
                        a.key,
                        a.column()
                    ),
                ));
            }
        }
        let class_names = self.size_classes().names();
        for (i, p) in self.plot.iter().enumerate() {
            let k = |f: &str| format!("plot[{i}].{f}");
            if !p.file.ends_with(".svg") || p.file.contains('/') || p.file.contains('\\') {
                return Err(err(
                    &k("file"),
                    format!("`{}`: a plain file name ending in .svg", p.file),
                ));
            }
            // The figure and its table (<stem>.csv) must not overwrite what dcsim writes
            // in the experiment directory, nor another figure.
            let stem = &p.file[..p.file.len() - 4];
            if stem.is_empty()
                || stem.starts_with('.')
                || stem == "summary"
                || stem.starts_with("summary.shard-")
                || stem == "manifest"
            {
                return Err(err(
                    &k("file"),
                    format!(
                        "`{}` is reserved: dcsim writes summary.csv, summary.shard-*.csv, manifest.json and hidden files in the experiment directory (a figure also writes <name>.csv)",
                        p.file
                    ),
                ));
            }
            if self.plot[..i].iter().any(|q| q.file == p.file) {
                return Err(err(&k("file"), format!("`{}` twice", p.file)));
            }
            let axes: Vec<&str> = self.sweep.axes.iter().map(|a| a.key.as_str()).collect();
            use crate::config::plot::PlotKind;
            if p.kind == PlotKind::Sweep {
                if !axes.contains(&p.x.as_str()) {
                    return Err(err(
                        &k("x"),
                        format!("`{}` is not a sweep axis; axes: {axes:?}", p.x),
                    ));
                }
                if let Some(s) = &p.series
                    && !axes.contains(&s.as_str())
                {
                    return Err(err(&k("series"), format!("`{s}` is not a sweep axis")));
                }
                let metrics = crate::columns::summary_metrics();
                if metrics.iter().all(|(m, _)| *m != p.y) {
                    let names: Vec<&str> = metrics.iter().map(|m| m.0.as_str()).collect();
                    return Err(err(
                        &k("y"),
                        format!("`{}` is not a metric; one of {names:?}", p.y),
                    ));
                }
            } else {
                if let Some(a) = p.at.keys().find(|a| !axes.contains(&a.as_str())) {
                    return Err(err(
                        &k("at"),
                        format!("`{a}` is not a sweep axis; axes: {axes:?}"),
                    ));
                }
                if p.kind == PlotKind::SlowdownVsSize
                    && !p.y.is_empty()
                    && !crate::config::plot::SIZE_STATS.contains(&p.y.as_str())
                {
                    return Err(err(
                        &k("y"),
                        format!(
                            "`{}`: one of {:?} for a slowdown_vs_size figure",
                            p.y,
                            crate::config::plot::SIZE_STATS
                        ),
                    ));
                }
                if !(2..=200).contains(&p.bins) {
                    return Err(err(
                        &k("bins"),
                        format!("must be in 2..=200, got {}", p.bins),
                    ));
                }
                if p.series.is_some() {
                    return Err(err(
                        &k("series"),
                        "only sweep figures have series; select a point with `at`".into(),
                    ));
                }
                if p.kind == PlotKind::QueueTimeseries && self.timeseries.is_none() {
                    return Err(err(
                        &k("kind"),
                        "a queue_timeseries figure needs a [timeseries] section".into(),
                    ));
                }
            }
            // Tag classes: the tags this workload gives its flows (`flow`, unlabelled, has
            // none), so that a figure of a class no run can have is refused now, not after
            // every run.
            let mut tags: Vec<String> = self
                .workload
                .tags()
                .into_iter()
                .filter(|t| *t != crate::workload::FlowTag::Flow)
                .map(|t| format!("tag:{}", t.name()))
                .collect();
            tags.sort();
            tags.dedup();
            if p.class != "all"
                && !class_names.contains(&p.class)
                && !tags.contains(&p.class)
                && !p.class.starts_with("deadline:")
            {
                let what = if p.class.starts_with("tag:") {
                    "is not a tag this workload gives its flows"
                } else {
                    "is not a class"
                };
                return Err(err(
                    &k("class"),
                    format!(
                        "`{}` {what}; classes: all, {}{}{}",
                        p.class,
                        class_names.join(", "),
                        if tags.is_empty() { "" } else { ", " },
                        tags.join(", ")
                    ),
                ));
            }
        }
        // HPCC flow files name hosts by the topology file's own ids.
        if let Some(ids) = self.topology.original_ids() {
            let hosts = ids[..self.topology.n_hosts()].to_vec();
            self.workload.set_file_host_ids(&hosts);
        }
        self.workload
            .validate(self.topology.n_hosts(), self.topology.host_rate(), base)
            .map_err(|(k, m)| err(&format!("workload.{k}"), m))?;
        Ok(())
    }

    /// Checks that switch buffers `s` hold what their configuration promises in this topology:
    /// a static port at least one packet (and its PFC XOFF threshold no more than the port),
    /// a shared pool at least its reserves and PFC headrooms plus one packet.
    pub(in crate::config) fn check_buffers(
        &self,
        s: &SwitchConfig,
    ) -> Result<(), (String, String)> {
        use crate::net::buffer::{BufferKind, Headroom};
        let b = &s.buffer;
        let packet = self.packet.mss.0 + self.packet.header.0;
        match b.kind {
            BufferKind::Static => {
                if b.per_port.0 < packet {
                    return Err((
                        "per_port".into(),
                        format!(
                            "{} holds no packet ({packet} B on the wire): every packet would be dropped",
                            b.per_port
                        ),
                    ));
                }
                if let Some(x) = b.pfc_xoff
                    && (x > b.per_port || x.0 < packet)
                {
                    return Err((
                        "pfc_xoff".into(),
                        format!(
                            "{x} must lie between one packet ({packet} B) and per_port ({})",
                            b.per_port
                        ),
                    ));
                }
            }
            BufferKind::Shared => {
                let (ports, rate, delay) = self.topology.switch_extremes();
                let lossless = s.pfc.mask(s.queues).count_ones() as u64;
                let headroom = match b.headroom {
                    Headroom::Bytes(h) => h.0,
                    Headroom::Auto => 2 * rate.bytes_in(delay) + 2 * packet + 64,
                };
                let set_aside =
                    (b.reserve.0 * s.queues as u64 + headroom * lossless) * ports as u64;
                if set_aside + packet > b.size.0 {
                    return Err((
                        "size".into(),
                        format!(
                            "{} is smaller than what a switch of {ports} ports sets aside: {} reserve x {} queues{} per port = {set_aside} B, plus one packet",
                            b.size,
                            b.reserve,
                            s.queues,
                            if lossless > 0 {
                                format!(
                                    " + {headroom} B PFC headroom x {lossless} lossless priorities"
                                )
                            } else {
                                String::new()
                            }
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
