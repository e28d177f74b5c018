//! Expanding a workload into its flow list (`WorkloadConfig::generate`): the generators of
//! the module doc, with their host sets and on/off sources. Streaming (flows made as they
//! start) is in `stream`; flow files are read by `csv` and `import`.

use super::*;

impl WorkloadConfig {
    /// Expands a workload without a dependency graph beyond groups into flows: those that
    /// start on their own, sorted by start time (ties by id), then those that wait for a
    /// group. A workload with a graph (collectives, a mix holding one) is refused: see
    /// [`WorkloadConfig::generate_graph`].
    pub fn generate(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
    ) -> Result<Vec<FlowSpec>, String> {
        let g = self.generate_graph(n_hosts, host_rate, seed, base)?;
        if !g.dag.is_empty() {
            return Err("this workload has a dependency graph: generate_graph gives it".into());
        }
        Ok(g.flows)
    }

    /// Expands the workload with its dependency graph, collectives and training iterations.
    pub fn generate_graph(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
    ) -> Result<Graphed, String> {
        match self {
            WorkloadConfig::Mix { parts } => self.mix(parts, n_hosts, host_rate, seed, base),
            WorkloadConfig::Collective(c) => {
                let g = c.graph(n_hosts)?;
                Ok(Graphed {
                    flows: in_order(g.flows, host_rate)?,
                    dag: g.dag,
                    collectives: g.collectives,
                    training: None,
                })
            }
            WorkloadConfig::Training(t) => {
                let (g, info) = t.graph(n_hosts)?;
                Ok(Graphed {
                    flows: in_order(g.flows, host_rate)?,
                    dag: g.dag,
                    collectives: g.collectives,
                    training: Some(info),
                })
            }
            WorkloadConfig::Goal { file, ranks, start } => {
                let g = read_goal(&base.join(file), ranks.as_deref(), n_hosts, *start)?;
                Ok(Graphed {
                    flows: in_order(g.flows, host_rate)?,
                    dag: g.dag,
                    collectives: Vec::new(),
                    training: None,
                })
            }
            _ => Ok(Graphed {
                flows: self.flows(n_hosts, host_rate, seed, base)?,
                ..Graphed::default()
            }),
        }
    }

    /// The parts of a `mix`, joined: flow ids renumbered in order of the parts, joins
    /// (groups) numbered apart.
    fn mix(
        &self,
        parts: &[WorkloadConfig],
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
    ) -> Result<Graphed, String> {
        let mut all = Vec::new();
        let mut dag = Dag::default();
        let mut infos = Vec::new();
        let mut training = None;
        let mut group_base = 0u32;
        for (i, p) in parts.iter().enumerate() {
            // Each part draws from its own streams; joins get disjoint numbers.
            let part_seed = crate::engine::rng::mix64(seed ^ (0x9E37 + i as u64));
            let Graphed {
                flows: mut v,
                dag: d,
                collectives: cs,
                training: tr,
            } = p.generate_graph(n_hosts, host_rate, part_seed, base)?;
            if let Some(mut t) = tr {
                if training.is_some() {
                    return Err("a mix may hold one training workload".into());
                }
                // Its compute steps are numbered after those of the parts before it.
                let calc_base = dag.calcs.len() as u32;
                for it in t.iterations.iter_mut() {
                    it.iter_mut().flatten().for_each(|c| *c += calc_base);
                }
                training = Some(t);
            }
            let top = d.n_joins(&v) as u32;
            let id_base = all.len() as u32;
            let ids: std::collections::HashMap<u32, u32> = v
                .iter()
                .enumerate()
                .map(|(k, f)| (f.id, id_base + k as u32))
                .collect();
            for f in v.iter_mut() {
                if let Some(g) = f.group.as_mut() {
                    *g += group_base;
                }
                if let Some(a) = f.after.as_mut() {
                    *a += group_base;
                }
            }
            for mut c in cs {
                c.flows.iter_mut().for_each(|id| *id = ids[id]);
                infos.push(c);
            }
            dag.append(d, group_base, |id| ids[&id]);
            group_base += top;
            all.extend(v);
        }
        for (i, f) in all.iter_mut().enumerate() {
            f.id = i as u32;
        }
        Ok(Graphed {
            flows: in_order(all, host_rate)?,
            dag,
            collectives: infos,
            training,
        })
    }

    /// The flows of a workload other than `mix` and `collective`.
    fn flows(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
    ) -> Result<Vec<FlowSpec>, String> {
        let v = match self {
            WorkloadConfig::Poisson {
                size_cdf,
                load,
                flows,
                start,
                until,
                tag,
                interarrival,
                sigma,
                on: Some(on),
                off: Some(off),
            } => {
                let cdf = load_cdf(size_cdf, base)?;
                let mut arr = RngStream::new(seed, "workload.arrivals");
                let mut sizes = RngStream::new(seed, "workload.sizes");
                let mut ends = RngStream::new(seed, "workload.endpoints");
                let per_host_ia = cdf.mean() * 8.0 / (load * host_rate.bps() as f64);
                let sigma = sigma.unwrap_or(1.0);
                let lognormal = *interarrival == Interarrival::Lognormal;
                return in_order(
                    on_off(
                        OnOff {
                            n_hosts,
                            flows: *flows,
                            start: *start,
                            until: *until,
                            tag: *tag,
                            on_s: on.as_secs_f64(),
                            off_s: off.as_secs_f64(),
                            // Faster while on, so that the long-run load is `load`.
                            ia_on: per_host_ia * on.as_secs_f64()
                                / (on.as_secs_f64() + off.as_secs_f64()),
                            lognormal: lognormal.then_some(sigma),
                        },
                        &cdf,
                        &mut arr,
                        &mut sizes,
                        &mut ends,
                    ),
                    host_rate,
                );
            }
            WorkloadConfig::Poisson { until, .. } => self
                .poisson_stream(n_hosts, host_rate, seed, base, *until)?
                .expect("a Poisson workload")
                .collect(),
            WorkloadConfig::Csv { file } => read_csv(&base.join(file), n_hosts)?,
            WorkloadConfig::Hpcc {
                file,
                start_offset,
                hosts,
            } => read_hpcc(&base.join(file), n_hosts, hosts, *start_offset)?,
            WorkloadConfig::Json { file } => read_json(&base.join(file), n_hosts)?,
            WorkloadConfig::Htsim {
                file,
                start_unit,
                send_done_as_recv_done,
            } => read_htsim(
                &base.join(file),
                n_hosts,
                *start_unit,
                *send_done_as_recv_done,
            )?,
            WorkloadConfig::AllReduce { hosts, size, start } => {
                let ring = host_set(hosts, n_hosts)?;
                let n = ring.len();
                // Chunk c is ⌊size/N⌋ bytes, one more for the first size mod N chunks, so the
                // chunks make up the buffer exactly; at step s host i sends chunk (i − s) mod N
                // (reduce-scatter for s < N − 1, then all-gather).
                let (q, r) = (size.0 / n as u64, size.0 % n as u64);
                let chunk = |c: usize| q + u64::from((c as u64) < r);
                let steps = 2 * (n - 1);
                let mut out = Vec::with_capacity(steps * n);
                // Flow (step s, host i) has id s·n + i; from step 1 on it waits for the flow
                // that brought host i its chunk at step s − 1 (group = that flow's id).
                for s in 0..steps {
                    for i in 0..n {
                        let id = (s * n + i) as u32;
                        let mut f = FlowSpec::new(
                            id,
                            ring[i],
                            ring[(i + 1) % n],
                            chunk((i + n - s % n) % n),
                            if s == 0 { *start } else { SimTime::ZERO },
                        );
                        if s + 1 < steps {
                            f.group = Some(id);
                        }
                        if s > 0 {
                            f.after = Some(((s - 1) * n + (i + n - 1) % n) as u32);
                        }
                        out.push(f);
                    }
                }
                out
            }
            WorkloadConfig::Permutation { size, start } => {
                // Sattolo's shuffle: a uniformly random single cycle, so dst(h) != h.
                let mut rng = RngStream::new(seed, "workload.permutation");
                let mut dst: Vec<u32> = (0..n_hosts as u32).collect();
                for i in (1..n_hosts).rev() {
                    let j = rng.below(i as u64) as usize;
                    dst.swap(i, j);
                }
                (0..n_hosts)
                    .map(|h| FlowSpec::new(h as u32, h as u32, dst[h], size.0, *start))
                    .collect()
            }
            WorkloadConfig::AllToAll { hosts, size, start } => {
                let set = host_set(hosts, n_hosts)?;
                let mut out = Vec::new();
                for &a in &set {
                    for &b in &set {
                        if a != b {
                            out.push(FlowSpec::new(out.len() as u32, a, b, size.0, *start));
                        }
                    }
                }
                out
            }
            WorkloadConfig::PartitionAggregate {
                fan_in,
                queries,
                response_size,
                response_size_max,
                deadline_mean,
                deadline_means,
                deadline_per_query,
                query_rate,
                jitter,
                start,
            } => {
                let mut rng = RngStream::new(seed, "workload.queries");
                let mut dl = RngStream::new(seed, "workload.deadlines");
                let mut out = Vec::with_capacity((*fan_in * *queries) as usize);
                let mut t = *start;
                let means = if deadline_means.is_empty() {
                    vec![*deadline_mean]
                } else {
                    deadline_means.clone()
                };
                for q in 0..*queries {
                    let class = means[dl.below(means.len() as u64) as usize];
                    let mean_dl = class.as_secs_f64();
                    if let Some(rate) = query_rate
                        && q > 0
                    {
                        t += SimTime::from_secs_f64(rng.exp(1.0 / rate));
                    }
                    let agg = rng.below(n_hosts as u64) as u32;
                    let shared = SimTime::from_secs_f64(dl.exp(mean_dl));
                    for _ in 0..*fan_in {
                        let mut w = rng.below(n_hosts as u64 - 1) as u32;
                        if w >= agg {
                            w += 1;
                        }
                        let size =
                            response_size.0 + rng.below(response_size_max.0 - response_size.0 + 1);
                        let offset = if jitter.0 > 0 {
                            SimTime(rng.below(jitter.0 + 1))
                        } else {
                            SimTime::ZERO
                        };
                        // Closed loop: every query after the first waits for the previous one.
                        let closed = query_rate.is_none() && q > 0;
                        let mut f = FlowSpec::new(
                            out.len() as u32,
                            w,
                            agg,
                            size,
                            if closed { offset } else { t + offset },
                        );
                        f.tag = FlowTag::Query;
                        f.deadline_class = Some(class);
                        f.group = Some(q);
                        f.after = closed.then(|| q - 1);
                        f.deadline = Some(if *deadline_per_query {
                            shared
                        } else {
                            SimTime::from_secs_f64(dl.exp(mean_dl))
                        });
                        out.push(f);
                    }
                }
                out
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
                start,
            } => {
                let mut rng = RngStream::new(seed, "workload.workflows");
                let mut dl = RngStream::new(seed, "workload.deadlines");
                let means = if deadline_means.is_empty() {
                    vec![*deadline_mean]
                } else {
                    deadline_means.clone()
                };
                let mut out = Vec::with_capacity((*workflows * *requests * 2) as usize);
                let mut t = start.as_secs_f64();
                let mut group = 0u32;
                for _ in 0..*workflows {
                    t += rng.exp(1.0 / rate);
                    let class = means[dl.below(means.len() as u64) as usize];
                    let mean_dl = class.as_secs_f64();
                    let front = rng.below(n_hosts as u64) as u32;
                    let mut prev: Option<u32> = None;
                    for _ in 0..*requests {
                        let mut server = rng.below(n_hosts as u64 - 1) as u32;
                        if server >= front {
                            server += 1;
                        }
                        let start_at = match prev {
                            None => SimTime::from_secs_f64(t),
                            Some(_) => SimTime::ZERO,
                        };
                        let mut req = FlowSpec::new(
                            out.len() as u32,
                            front,
                            server,
                            request_size.0,
                            start_at,
                        );
                        req.tag = FlowTag::Request;
                        req.group = Some(group);
                        req.after = prev;
                        out.push(req);
                        let size =
                            response_size.0 + rng.below(response_size_max.0 - response_size.0 + 1);
                        let mut resp =
                            FlowSpec::new(out.len() as u32, server, front, size, SimTime::ZERO);
                        resp.tag = FlowTag::Workflow;
                        resp.deadline_class = Some(class);
                        resp.group = Some(group + 1);
                        resp.after = Some(group);
                        resp.deadline = Some(SimTime::from_secs_f64(dl.exp(mean_dl)));
                        out.push(resp);
                        prev = Some(group + 1);
                        group += 2;
                    }
                }
                out
            }
            WorkloadConfig::Incast {
                fan_in,
                size,
                size_max,
                receiver,
                random,
                start,
                bursts,
                interval,
                tag,
                load,
            } => {
                let mut rng = RngStream::new(seed, "workload.incast");
                let mut arr = RngStream::new(seed, "workload.incast.arrivals");
                // Poisson incast: mean burst spacing for the requested load.
                let mean_size =
                    size.0 as f64 + size_max.map_or(0.0, |m| (m.0 - size.0) as f64 / 2.0);
                let spacing = load.map(|l| {
                    *fan_in as f64 * mean_size * 8.0 / (l * n_hosts as f64 * host_rate.bps() as f64)
                });
                let mut t_poisson = start.as_secs_f64();
                let mut out = Vec::new();
                for b in 0..*bursts {
                    let t = match spacing {
                        Some(m) => {
                            t_poisson += arr.exp(m);
                            SimTime::from_secs_f64(t_poisson)
                        }
                        None => *start + SimTime(interval.0 * b as u64),
                    };
                    let (dst, senders): (u32, Vec<u32>) = if *random {
                        let dst = rng.below(n_hosts as u64) as u32;
                        let mut pool: Vec<u32> =
                            (0..n_hosts as u32).filter(|&h| h != dst).collect();
                        let mut chosen = Vec::with_capacity(*fan_in as usize);
                        for _ in 0..*fan_in {
                            let i = rng.below(pool.len() as u64) as usize;
                            chosen.push(pool.swap_remove(i));
                        }
                        (dst, chosen)
                    } else {
                        let s = (0..n_hosts as u32).filter(|h| h != receiver);
                        (*receiver, s.take(*fan_in as usize).collect())
                    };
                    for src in senders {
                        let sz = match size_max {
                            Some(m) if m.0 > size.0 => size.0 + rng.below(m.0 - size.0 + 1),
                            _ => size.0,
                        };
                        let mut f = FlowSpec::new(out.len() as u32, src, dst, sz, t);
                        f.tag = *tag;
                        out.push(f);
                    }
                }
                out
            }
            WorkloadConfig::Mix { .. }
            | WorkloadConfig::Collective(_)
            | WorkloadConfig::Training(_)
            | WorkloadConfig::Goal { .. } => {
                unreachable!("generate_graph expands these")
            }
            WorkloadConfig::Flows { flows } => flows
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let mut s = FlowSpec::new(i as u32, f.src, f.dst, f.size.0, f.start);
                    s.prio = f.prio;
                    s.deadline = f.deadline;
                    s
                })
                .collect(),
        };
        in_order(v, host_rate)
    }
}

/// The hosts of a collective: the given list (distinct, at least 2, each below `n_hosts`) or
/// every host.
pub(in crate::workload) fn host_set(
    hosts: &Option<Vec<u32>>,
    n_hosts: usize,
) -> Result<Vec<u32>, String> {
    let set: Vec<u32> = match hosts {
        Some(h) => h.clone(),
        None => (0..n_hosts as u32).collect(),
    };
    if set.len() < 2 {
        return Err(format!("need at least 2 hosts, got {}", set.len()));
    }
    let mut seen = std::collections::BTreeSet::new();
    for &h in &set {
        if h as usize >= n_hosts {
            return Err(format!("host {h} is not in 0..{n_hosts}"));
        }
        if !seen.insert(h) {
            return Err(format!("host {h} is listed twice"));
        }
    }
    Ok(set)
}

/// The parameters of on/off sources.
pub(in crate::workload) struct OnOff {
    n_hosts: usize,
    flows: u64,
    start: SimTime,
    until: Option<SimTime>,
    tag: FlowTag,
    on_s: f64,
    off_s: f64,
    /// Mean inter-arrival of a host's flows while it is on (s).
    ia_on: f64,
    /// Lognormal inter-arrivals with this sigma (None: exponential).
    lognormal: Option<f64>,
}

/// On/off sources: every host alternates exponential on and off periods (each host starts
/// at the beginning of an on period) and sends flows only while on; the flows of all hosts
/// merged in time order, `flows` of them (or until `until`).
pub(in crate::workload) fn on_off(
    p: OnOff,
    cdf: &Cdf,
    arr: &mut RngStream,
    sizes: &mut RngStream,
    ends: &mut RngStream,
) -> Vec<FlowSpec> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let t0 = p.start.as_secs_f64();
    let ia = |arr: &mut RngStream| match p.lognormal {
        Some(s) => arr.lognormal(p.ia_on, s),
        None => arr.exp(p.ia_on),
    };
    // Per host: the end of its current on period; the heap orders next arrivals.
    let mut on_end: Vec<f64> = (0..p.n_hosts).map(|_| t0 + arr.exp(p.on_s)).collect();
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let key = |t: f64| SimTime::from_secs_f64(t).0;
    let next: Vec<f64> = (0..p.n_hosts).map(|_| t0 + ia(arr)).collect();
    for (h, &t) in next.iter().enumerate() {
        heap.push(Reverse((key(t), h)));
    }
    let mut next = next;
    let mut out = Vec::with_capacity(p.flows.min(10_000_000) as usize);
    while (out.len() as u64) < p.flows {
        let Some(Reverse((_, h))) = heap.pop() else {
            break;
        };
        let mut t = next[h];
        // Skip off periods until the arrival falls inside an on period.
        while t > on_end[h] {
            let resume = on_end[h] + arr.exp(p.off_s);
            on_end[h] = resume + arr.exp(p.on_s);
            t = resume + ia(arr);
        }
        if t != next[h] {
            next[h] = t;
            heap.push(Reverse((key(t), h)));
            continue;
        }
        let st = SimTime::from_secs_f64(t);
        if p.until.is_some_and(|u| st >= u) {
            break;
        }
        let mut dst = ends.below(p.n_hosts as u64 - 1) as u32;
        if dst >= h as u32 {
            dst += 1;
        }
        let mut f = FlowSpec::new(out.len() as u32, h as u32, dst, cdf.sample(sizes), st);
        f.tag = p.tag;
        out.push(f);
        next[h] = t + ia(arr);
        heap.push(Reverse((key(next[h]), h)));
    }
    out
}
