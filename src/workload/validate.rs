//! What a workload is before it runs: its checks against the topology and the horizon
//! (`validate`), and what planning asks of it (flow counts, expected bytes, priorities,
//! tags, input files). Models nothing itself; generation is in `generate`.

use super::*;

impl WorkloadConfig {
    /// Whether this workload is a flow file that a run can read as its flows start (a CSV or
    /// HPCC flow file in start order, without dependencies: see [`WorkloadConfig::stream`]).
    /// Reads the file through once.
    pub fn file_streams(&self, base: &Path, n_hosts: usize, host_rate: BitRate) -> bool {
        match self {
            WorkloadConfig::Csv { file } => {
                check_csv_stream(&base.join(file), n_hosts, host_rate, None)
            }
            WorkloadConfig::Hpcc {
                file,
                start_offset,
                hosts,
            } => check_hpcc_stream(
                &base.join(file),
                n_hosts,
                hosts,
                host_rate,
                *start_offset,
                None,
            ),
            _ => None,
        }
        .is_some()
    }
}

/// Lines in file `path` (newlines plus one), read a block at a time.
pub(in crate::workload) fn line_count(path: &Path) -> std::io::Result<u64> {
    use std::io::Read;
    crate::fileid::regular(path).map_err(std::io::Error::other)?;
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 1u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            return Ok(n);
        }
        n += buf[..k].iter().filter(|&&c| c == b'\n').count() as u64;
    }
}

impl WorkloadConfig {
    /// An upper bound on the flows this workload generates (for a flow list: its lines,
    /// counted cheaply from the file size at 10 bytes a line when it cannot be read).
    pub fn max_flows(&self, base: &Path, n_hosts: usize) -> u64 {
        match self {
            WorkloadConfig::Poisson { flows, .. } => *flows,
            WorkloadConfig::Csv { file }
            | WorkloadConfig::Hpcc { file, .. }
            | WorkloadConfig::Htsim { file, .. }
            | WorkloadConfig::Json { file } => line_count(&base.join(file)).unwrap_or(0),
            WorkloadConfig::Incast { fan_in, bursts, .. } => *fan_in as u64 * *bursts as u64,
            WorkloadConfig::PartitionAggregate {
                fan_in, queries, ..
            } => *fan_in as u64 * *queries as u64,
            WorkloadConfig::Sequential {
                workflows,
                requests,
                ..
            } => 2 * *workflows as u64 * *requests as u64,
            WorkloadConfig::Flows { flows } => flows.len() as u64,
            WorkloadConfig::Collective(c) => c.max_flows(n_hosts),
            WorkloadConfig::Training(t) => t.max_flows(),
            WorkloadConfig::Goal { file, .. } => line_count(&base.join(file)).unwrap_or(0),
            WorkloadConfig::AllReduce { hosts, .. } => {
                let n = hosts.as_ref().map_or(n_hosts as u64, |h| h.len() as u64);
                2 * n.saturating_sub(1).saturating_mul(n)
            }
            WorkloadConfig::AllToAll { hosts, .. } => {
                let n = hosts.as_ref().map_or(n_hosts as u64, |h| h.len() as u64);
                n.saturating_mul(n.saturating_sub(1))
            }
            WorkloadConfig::Permutation { .. } => n_hosts as u64,
            WorkloadConfig::Mix { parts } => parts.iter().map(|p| p.max_flows(base, n_hosts)).sum(),
        }
    }

    /// The bytes this workload's flows carry, on average over seeds (the work estimate's);
    /// flow files are read through. None if a file cannot be read (validation says why).
    pub fn expected_bytes(&self, base: &Path, n_hosts: usize, host_rate: BitRate) -> Option<f64> {
        let mean = |lo: Bytes, hi: Option<Bytes>| (lo.0 + hi.unwrap_or(lo).0) as f64 / 2.0;
        let sum = |v: Vec<FlowSpec>| v.iter().map(|f| f.size as f64).sum::<f64>();
        let ring = |hosts: &Option<Vec<u32>>| hosts.as_ref().map_or(n_hosts, |h| h.len()) as f64;
        Some(match self {
            WorkloadConfig::Poisson {
                size_cdf, flows, ..
            } => *flows as f64 * load_cdf(size_cdf, base).ok()?.mean(),
            WorkloadConfig::Csv { file } => {
                let path = base.join(file);
                match check_csv_stream(&path, n_hosts, host_rate, None) {
                    Some(c) => c.bytes as f64,
                    None => sum(read_csv(&path, n_hosts).ok()?),
                }
            }
            WorkloadConfig::Hpcc {
                file,
                start_offset,
                hosts,
            } => {
                let path = base.join(file);
                match check_hpcc_stream(&path, n_hosts, hosts, host_rate, *start_offset, None) {
                    Some(c) => c.bytes as f64,
                    None => sum(read_hpcc(&path, n_hosts, hosts, *start_offset).ok()?),
                }
            }
            WorkloadConfig::Json { file } => sum(read_json(&base.join(file), n_hosts).ok()?),
            WorkloadConfig::Htsim {
                file,
                start_unit,
                send_done_as_recv_done,
            } => sum(read_htsim(
                &base.join(file),
                n_hosts,
                *start_unit,
                *send_done_as_recv_done,
            )
            .ok()?),
            WorkloadConfig::Incast {
                fan_in,
                size,
                size_max,
                bursts,
                ..
            } => *fan_in as f64 * *bursts as f64 * mean(*size, *size_max),
            WorkloadConfig::PartitionAggregate {
                fan_in,
                queries,
                response_size,
                response_size_max,
                ..
            } => *fan_in as f64 * *queries as f64 * mean(*response_size, Some(*response_size_max)),
            WorkloadConfig::Sequential {
                workflows,
                requests,
                request_size,
                response_size,
                response_size_max,
                ..
            } => {
                *workflows as f64
                    * *requests as f64
                    * (request_size.0 as f64 + mean(*response_size, Some(*response_size_max)))
            }
            WorkloadConfig::Flows { flows } => flows.iter().map(|f| f.size.0 as f64).sum(),
            WorkloadConfig::Collective(c) => c.bytes(n_hosts),
            WorkloadConfig::Training(t) => t.bytes(),
            WorkloadConfig::Goal { file, ranks, start } => {
                read_goal(&base.join(file), ranks.as_deref(), n_hosts, *start)
                    .ok()?
                    .flows
                    .iter()
                    .map(|f| f.size as f64)
                    .sum()
            }
            WorkloadConfig::AllReduce { hosts, size, .. } => {
                2.0 * (ring(hosts) - 1.0) * size.0 as f64
            }
            WorkloadConfig::AllToAll { hosts, size, .. } => {
                ring(hosts) * (ring(hosts) - 1.0) * size.0 as f64
            }
            WorkloadConfig::Permutation { size, .. } => n_hosts as f64 * size.0 as f64,
            WorkloadConfig::Mix { parts } => {
                let mut t = 0.0;
                for p in parts {
                    t += p.expected_bytes(base, n_hosts, host_rate)?;
                }
                t
            }
        })
    }

    /// The highest priority (queue) a flow of this workload asks for, if any asks.
    pub fn max_prio(&self, n_hosts: usize, base: &Path) -> Option<u8> {
        match self {
            WorkloadConfig::Flows { flows } => flows.iter().filter_map(|f| f.prio).max(),
            WorkloadConfig::Csv { file } => read_csv(&base.join(file), n_hosts)
                .ok()?
                .iter()
                .filter_map(|f| f.prio)
                .max(),
            WorkloadConfig::Mix { parts } => {
                parts.iter().filter_map(|p| p.max_prio(n_hosts, base)).max()
            }
            _ => None,
        }
    }

    /// Whether it holds a collective (whose results are read from every flow's record).
    pub fn has_collectives(&self) -> bool {
        match self {
            WorkloadConfig::Collective(_) | WorkloadConfig::Training(_) => true,
            WorkloadConfig::Mix { parts } => parts.iter().any(|p| p.has_collectives()),
            _ => false,
        }
    }

    /// The tags its flows may carry.
    pub fn tags(&self) -> Vec<FlowTag> {
        match self {
            WorkloadConfig::Poisson { tag, .. } | WorkloadConfig::Incast { tag, .. } => vec![*tag],
            WorkloadConfig::PartitionAggregate { .. } => vec![FlowTag::Query],
            WorkloadConfig::Sequential { .. } => vec![FlowTag::Request, FlowTag::Workflow],
            WorkloadConfig::Csv { .. }
            | WorkloadConfig::Hpcc { .. }
            | WorkloadConfig::Json { .. }
            | WorkloadConfig::Htsim { .. }
            | WorkloadConfig::AllReduce { .. }
            | WorkloadConfig::AllToAll { .. }
            | WorkloadConfig::Permutation { .. }
            | WorkloadConfig::Flows { .. }
            | WorkloadConfig::Collective(_)
            | WorkloadConfig::Training(_)
            | WorkloadConfig::Goal { .. } => vec![FlowTag::Flow],
            WorkloadConfig::Mix { parts } => parts.iter().flat_map(|p| p.tags()).collect(),
        }
    }

    /// Gives HPCC flow files (here and in mix parts) the topology file's host ids, once.
    pub fn set_file_host_ids(&self, ids: &[u32]) {
        match self {
            WorkloadConfig::Hpcc { hosts, .. } => {
                let _ = hosts.0.set(ids.to_vec());
            }
            WorkloadConfig::Mix { parts } => parts.iter().for_each(|p| p.set_file_host_ids(ids)),
            _ => {}
        }
    }

    /// The files this workload reads (CDF files, flow lists), as given (relative to the
    /// config's directory).
    pub fn input_files(&self) -> Vec<PathBuf> {
        match self {
            WorkloadConfig::Poisson { size_cdf, .. }
                if Cdf::builtin(size_cdf).is_none() && !size_cdf.starts_with("uniform(") =>
            {
                vec![PathBuf::from(size_cdf)]
            }
            WorkloadConfig::Csv { file }
            | WorkloadConfig::Hpcc { file, .. }
            | WorkloadConfig::Htsim { file, .. }
            | WorkloadConfig::Json { file }
            | WorkloadConfig::Goal { file, .. } => vec![file.clone()],
            WorkloadConfig::Mix { parts } => parts.iter().flat_map(|p| p.input_files()).collect(),
            _ => Vec::new(),
        }
    }

    /// Checks the workload against the topology; returns `(key, message)`.
    pub fn validate(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        base: &Path,
    ) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((k.to_string(), m));
        match self {
            WorkloadConfig::Poisson {
                size_cdf,
                load,
                flows,
                start,
                interarrival,
                sigma,
                on,
                off,
                ..
            } => {
                if !(*load > 0.0 && *load <= 1.0) {
                    return e("load", format!("must be in (0, 1], got {load}"));
                }
                if let Some(s) = sigma {
                    if *interarrival != Interarrival::Lognormal {
                        return e("sigma", "only lognormal inter-arrivals take a sigma".into());
                    }
                    if !(*s > 0.0 && *s <= 10.0) {
                        return e("sigma", format!("must be in (0, 10], got {s}"));
                    }
                }
                match (on, off) {
                    (Some(a), Some(b)) => {
                        if a.0 == 0 || b.0 == 0 {
                            return e("on", "on and off periods must be > 0".into());
                        }
                    }
                    (None, None) => {}
                    _ => return e("on", "give both `on` and `off` (on/off sources)".into()),
                }
                if *flows == 0 || *flows > 10_000_000 {
                    return e("flows", format!("must be in 1..=10000000, got {flows}"));
                }
                if n_hosts < 2 {
                    return e("kind", "poisson needs at least 2 hosts".into());
                }
                let cdf = load_cdf(size_cdf, base).map_err(|m| ("size_cdf".to_string(), m))?;
                too_long("size_cdf", cdf.quantile(1.0) as u64, host_rate)?;
                // The arrivals must fit in simulated time: the expected time of the last.
                let span = start.as_secs_f64()
                    + *flows as f64 * cdf.mean() * 8.0
                        / (load * host_rate.bps() as f64 * n_hosts as f64);
                if span > MAX_ARRIVAL_SPAN_S {
                    return e(
                        "load",
                        format!(
                            "{flows} flows at load {load} would arrive over about {span:.3e} s of simulated time (mean size {:.0} B, {n_hosts} hosts); at most {MAX_ARRIVAL_SPAN_S} s: raise the load or lower `flows`",
                            cdf.mean()
                        ),
                    );
                }
            }
            // A file fit to stream is checked a row at a time, without holding its flows;
            // any other is read whole, which reports what is wrong with it.
            WorkloadConfig::Csv { file } => {
                let path = base.join(file);
                if check_csv_stream(&path, n_hosts, host_rate, None).is_none() {
                    let v = read_csv(&path, n_hosts).map_err(|m| ("file".to_string(), m))?;
                    within_horizon(&v, host_rate, &path)?;
                }
            }
            WorkloadConfig::Hpcc {
                file,
                start_offset,
                hosts,
            } => {
                let path = base.join(file);
                if check_hpcc_stream(&path, n_hosts, hosts, host_rate, *start_offset, None)
                    .is_none()
                {
                    let v = read_hpcc(&path, n_hosts, hosts, *start_offset)
                        .map_err(|m| ("file".to_string(), m))?;
                    within_horizon(&v, host_rate, &path)?;
                }
            }
            WorkloadConfig::Json { file } => {
                let path = base.join(file);
                let v = read_json(&path, n_hosts).map_err(|m| ("file".to_string(), m))?;
                within_horizon(&v, host_rate, &path)?;
            }
            WorkloadConfig::Htsim {
                file,
                start_unit,
                send_done_as_recv_done,
            } => {
                let path = base.join(file);
                let v = read_htsim(&path, n_hosts, *start_unit, *send_done_as_recv_done)
                    .map_err(|m| ("file".to_string(), m))?;
                within_horizon(&v, host_rate, &path)?;
            }
            WorkloadConfig::Permutation { size, .. } => {
                if size.0 == 0 {
                    return e("size", "must be positive".into());
                }
                if n_hosts < 2 {
                    return e("kind", "a permutation needs at least 2 hosts".into());
                }
                too_long("size", size.0, host_rate)?;
            }
            WorkloadConfig::AllReduce { hosts, size, .. }
            | WorkloadConfig::AllToAll { hosts, size, .. } => {
                let set = host_set(hosts, n_hosts).map_err(|m| ("hosts".to_string(), m))?;
                if size.0 == 0 {
                    return e("size", "must be positive".into());
                }
                if matches!(self, WorkloadConfig::AllReduce { .. }) && size.0 < set.len() as u64 {
                    return e(
                        "size",
                        format!(
                            "{size} cannot be cut into one chunk per host of the ring: at least \
                             {} B for {} hosts",
                            set.len(),
                            set.len()
                        ),
                    );
                }
                too_long("size", size.0, host_rate)?;
                if set.len() as u64 * set.len() as u64 > 10_000_000 {
                    return e("hosts", format!("{} hosts make too many flows", set.len()));
                }
            }
            WorkloadConfig::Incast {
                fan_in,
                size,
                size_max,
                receiver,
                bursts,
                load,
                ..
            } => {
                if *receiver as usize >= n_hosts {
                    return e(
                        "receiver",
                        format!("must be in 0..{n_hosts}, got {receiver}"),
                    );
                }
                if *fan_in == 0 || *fan_in as usize >= n_hosts {
                    return e(
                        "fan_in",
                        format!("must be in 1..={}, got {fan_in}", n_hosts - 1),
                    );
                }
                if size.0 == 0 {
                    return e("size", "must be positive".into());
                }
                if size_max.is_some_and(|m| m < *size) {
                    return e("size_max", format!("must be at least size ({size})"));
                }
                match size_max {
                    Some(m) => too_long("size_max", m.0, host_rate)?,
                    None => too_long("size", size.0, host_rate)?,
                }
                if *bursts == 0 || *bursts > 100_000 {
                    return e("bursts", format!("must be in 1..=100000, got {bursts}"));
                }
                if let Some(l) = load
                    && !(*l > 0.0 && *l <= 1.0)
                {
                    return e("load", format!("must be in (0, 1], got {l}"));
                }
            }
            WorkloadConfig::PartitionAggregate {
                fan_in,
                queries,
                response_size,
                response_size_max,
                deadline_mean,
                deadline_means,
                query_rate,
                ..
            } => {
                if n_hosts < 2 {
                    return e("kind", "partition-aggregate needs at least 2 hosts".into());
                }
                if *fan_in == 0 || *fan_in > 10_000 {
                    return e("fan_in", format!("must be in 1..=10000, got {fan_in}"));
                }
                if *queries == 0 || *queries > 1_000_000 {
                    return e("queries", format!("must be in 1..=1000000, got {queries}"));
                }
                if response_size.0 == 0 || response_size_max < response_size {
                    return e(
                        "response_size_max",
                        "need 0 < response_size <= response_size_max".into(),
                    );
                }
                too_long("response_size_max", response_size_max.0, host_rate)?;
                if deadline_mean.0 == 0 || deadline_means.iter().any(|d| d.0 == 0) {
                    return e("deadline_mean", "deadline means must be positive".into());
                }
                if query_rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
                    return e(
                        "query_rate",
                        "must be a positive number of queries per second".into(),
                    );
                }
            }
            WorkloadConfig::Sequential {
                rate,
                workflows,
                requests,
                request_size,
                response_size,
                response_size_max,
                deadline_mean,
                deadline_means,
                ..
            } => {
                if n_hosts < 2 {
                    return e("kind", "workflows need at least 2 hosts".into());
                }
                if !(*rate > 0.0 && rate.is_finite()) {
                    return e(
                        "rate",
                        format!("must be a positive rate per second, got {rate}"),
                    );
                }
                if *workflows == 0 || *workflows > 1_000_000 {
                    return e(
                        "workflows",
                        format!("must be in 1..=1000000, got {workflows}"),
                    );
                }
                if *requests == 0 || *requests > 1000 {
                    return e("requests", format!("must be in 1..=1000, got {requests}"));
                }
                if request_size.0 == 0 || response_size.0 == 0 || response_size_max < response_size
                {
                    return e(
                        "response_size_max",
                        "sizes must be positive with response_size <= response_size_max".into(),
                    );
                }
                too_long("request_size", request_size.0, host_rate)?;
                too_long("response_size_max", response_size_max.0, host_rate)?;
                if deadline_mean.0 == 0 || deadline_means.iter().any(|d| d.0 == 0) {
                    return e("deadline_mean", "deadline means must be positive".into());
                }
            }
            WorkloadConfig::Collective(c) => c.validate(n_hosts, host_rate)?,
            WorkloadConfig::Training(t) => t.validate(n_hosts, host_rate)?,
            WorkloadConfig::Goal { file, ranks, start } => {
                let path = base.join(file);
                let g = read_goal(&path, ranks.as_deref(), n_hosts, *start)
                    .map_err(|m| ("file".to_string(), m))?;
                within_horizon(&g.flows, host_rate, &path)?;
            }
            WorkloadConfig::Mix { parts } => {
                if parts.is_empty() {
                    return e("parts", "lists no workloads".into());
                }
                for (i, p) in parts.iter().enumerate() {
                    p.validate(n_hosts, host_rate, base)
                        .map_err(|(k, m)| (format!("parts[{i}].{k}"), m))?;
                }
            }
            WorkloadConfig::Flows { flows } => {
                if flows.is_empty() {
                    return e("flows", "the list is empty".into());
                }
                for (i, f) in flows.iter().enumerate() {
                    if f.src as usize >= n_hosts || f.dst as usize >= n_hosts || f.src == f.dst {
                        return e(
                            &format!("flows[{i}]"),
                            format!("src and dst must be distinct hosts in 0..{n_hosts}"),
                        );
                    }
                    if f.size.0 == 0 {
                        return e(&format!("flows[{i}].size"), "must be positive".into());
                    }
                    too_long(&format!("flows[{i}].size"), f.size.0, host_rate)?;
                    if f.prio.is_some_and(|p| p >= 8) {
                        return e(&format!("flows[{i}].prio"), "must be in 0..8".into());
                    }
                }
            }
        }
        Ok(())
    }
}
