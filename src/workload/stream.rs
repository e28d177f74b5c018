//! Workloads as streams of flows in start order, so that a run's memory does not grow
//! with its flow count: Poisson arrivals made one at a time, and flow files read as their
//! flows start, checked to the end first (a file that changes under the run ends its stream
//! with an error). Not streamed: workloads with dependencies or on/off periods.

use super::*;

/// Poisson arrivals (the `poisson` workload without on/off periods) generated one flow at a
/// time, in start order: [`WorkloadConfig::generate`] collects them, a run that releases its
/// flows pulls them as they start ([`WorkloadConfig::stream`]), so its memory does not grow
/// with the number of flows.
#[derive(Clone, Debug)]
pub struct PoissonStream {
    cdf: Cdf,
    arr: RngStream,
    sizes: RngStream,
    ends: RngStream,
    /// Mean inter-arrival over the cluster (s); lognormal shape, if not exponential.
    mean_ia: f64,
    lognormal: Option<f64>,
    /// No arrival at or after this time (`until`, or the run's stop time).
    end: Option<SimTime>,
    tag: FlowTag,
    n_hosts: usize,
    flows: u64,
    id: u64,
    t: f64,
}

impl Iterator for PoissonStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        if self.id >= self.flows {
            return None;
        }
        self.t += match self.lognormal {
            Some(sigma) => self.arr.lognormal(self.mean_ia, sigma),
            None => self.arr.exp(self.mean_ia),
        };
        let st = SimTime::from_secs_f64(self.t);
        if self.end.is_some_and(|u| st >= u) {
            self.flows = 0;
            return None;
        }
        let n = self.n_hosts as u64;
        let src = self.ends.below(n) as u32;
        let mut dst = self.ends.below(n - 1) as u32;
        if dst >= src {
            dst += 1;
        }
        let mut f = FlowSpec::new(
            self.id as u32,
            src,
            dst,
            self.cdf.sample(&mut self.sizes),
            st,
        );
        f.tag = self.tag;
        self.id += 1;
        Some(f)
    }
}

impl WorkloadConfig {
    /// The workload as a stream of flows in start order, for the workloads that can come
    /// that way: Poisson arrivals without on/off periods, and flow-list CSV files already in
    /// (start, flow id) order without dependencies. Flows at or after `stop` are not made.
    /// Checked to the end here (the count, the horizon [`WorkloadConfig::generate`] checks,
    /// for a file every row), so that pulling from it does not fail (a file that changes
    /// during the run ends its stream with [`FlowStream::error`]). None: the workload comes
    /// as a list ([`WorkloadConfig::generate`], which also reports what is wrong with it).
    pub fn stream(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
        stop: Option<SimTime>,
    ) -> Result<Option<(FlowStream, StreamCheck)>, String> {
        if let WorkloadConfig::Csv { file } = self {
            let path = base.join(file);
            let Some(c) = check_csv_stream(&path, n_hosts, host_rate, stop) else {
                return Ok(None);
            };
            let s = CsvStream::open(&path, n_hosts, stop)?;
            return Ok(Some((FlowStream::Csv(s), c)));
        }
        if let WorkloadConfig::Hpcc {
            file,
            start_offset,
            hosts,
        } = self
        {
            let path = base.join(file);
            let Some(c) = check_hpcc_stream(&path, n_hosts, hosts, host_rate, *start_offset, stop)
            else {
                return Ok(None);
            };
            let s = HpccStream::open(&path, n_hosts, hosts, *start_offset, stop)?;
            return Ok(Some((FlowStream::Hpcc(s), c)));
        }
        let WorkloadConfig::Poisson {
            until,
            on: None,
            off: None,
            ..
        } = self
        else {
            return Ok(None);
        };
        let end = match (*until, stop) {
            (Some(u), Some(s)) => Some(u.min(s)),
            (u, s) => u.or(s),
        };
        let s = self
            .poisson_stream(n_hosts, host_rate, seed, base, end)?
            .expect("a Poisson workload");
        let mut n = 0usize;
        for f in s.clone() {
            if let Some(e) = beyond_horizon(&f, host_rate) {
                return Err(e);
            }
            n += 1;
        }
        let c = StreamCheck {
            flows: n,
            ..Default::default()
        };
        Ok(Some((FlowStream::Poisson(s), c)))
    }

    /// A Poisson workload's arrivals (without its on/off periods, which the caller handles),
    /// none at or after `end`; None for other workloads.
    pub(in crate::workload) fn poisson_stream(
        &self,
        n_hosts: usize,
        host_rate: BitRate,
        seed: u64,
        base: &Path,
        end: Option<SimTime>,
    ) -> Result<Option<PoissonStream>, String> {
        let WorkloadConfig::Poisson {
            size_cdf,
            load,
            flows,
            start,
            tag,
            interarrival,
            sigma,
            ..
        } = self
        else {
            return Ok(None);
        };
        let cdf = load_cdf(size_cdf, base)?;
        let per_host_ia = cdf.mean() * 8.0 / (load * host_rate.bps() as f64);
        let lognormal = *interarrival == Interarrival::Lognormal;
        Ok(Some(PoissonStream {
            cdf,
            arr: RngStream::new(seed, "workload.arrivals"),
            sizes: RngStream::new(seed, "workload.sizes"),
            ends: RngStream::new(seed, "workload.endpoints"),
            mean_ia: per_host_ia / n_hosts as f64,
            lognormal: lognormal.then_some(sigma.unwrap_or(1.0)),
            end,
            tag: *tag,
            n_hosts,
            flows: *flows,
            id: 0,
            t: start.as_secs_f64(),
        }))
    }
}

/// Where a flow file read as its flows start stands: how far it may go (`end`), whether it
/// is done, why it stopped early (`error`: the file changed), the last flow given and how
/// many were given.
#[derive(Clone, Debug)]
pub(in crate::workload) struct StreamProgress {
    pub(in crate::workload) end: Option<SimTime>,
    pub(in crate::workload) done: bool,
    pub(in crate::workload) error: Option<String>,
    /// (start, id) of the last flow given: each must come after it.
    pub(in crate::workload) last: Option<(SimTime, u32)>,
    pub(in crate::workload) given: usize,
}

impl StreamProgress {
    pub(in crate::workload) fn new(end: Option<SimTime>) -> StreamProgress {
        StreamProgress {
            end,
            done: false,
            error: None,
            last: None,
            given: 0,
        }
    }

    /// The next flow of the file, from `row` (the file's next flow, none at its end, or why
    /// it no longer parses; `at` names its line): None once it is done (at the end, at the
    /// first flow at or after `end`, or at an error, kept in `error`: a row that no longer
    /// parses, or a flow that does not come after the one before, as checking the file
    /// found).
    pub(in crate::workload) fn next(
        &mut self,
        row: Result<Option<FlowSpec>, String>,
        at: impl FnOnce() -> String,
    ) -> Option<FlowSpec> {
        let row = row.and_then(|r| match r {
            Some(f) if self.last.is_some_and(|l| l >= (f.start, f.id)) => Err(format!(
                "{}: flow {} starts at {}, before the flow read before it (the file was in start order when checked)",
                at(),
                f.id,
                f.start
            )),
            r => Ok(r),
        });
        match row {
            Ok(Some(spec)) if self.end.is_none_or(|e| spec.start < e) => {
                self.last = Some((spec.start, spec.id));
                self.given += 1;
                Some(spec)
            }
            Ok(_) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.error = Some(format!("{e} (the file changed during the run)"));
                None
            }
        }
    }

    /// After the stream's last flow: the file read to its end by `r` is the one `check`
    /// saw, and gave the flows `check` counted; `path` names it.
    pub(in crate::workload) fn verify(
        &self,
        r: &mut HashingReader,
        check: &StreamCheck,
        path: &Path,
    ) -> Result<(), String> {
        let changed = |what: String| {
            format!(
                "{what}: the file changed while the run read it; the run's results would not be this file's"
            )
        };
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        r.drain()
            .map_err(|e| changed(format!("{}: cannot read it any more ({e})", path.display())))?;
        let Some(before) = &check.file else {
            return Ok(());
        };
        let read = r.ident();
        if read.len != before.len || read.mtime != before.mtime {
            return Err(changed(format!(
                "{}: {} bytes read, {} when checked before the run",
                path.display(),
                read.len,
                before.len
            )));
        }
        if read.hash != before.hash {
            return Err(changed(format!(
                "{}: what the run read (hash {}) is not what was checked (hash {})",
                path.display(),
                read.hex(),
                before.hex()
            )));
        }
        if self.given != check.flows {
            return Err(changed(format!(
                "{}: {} flows read, {} when checked",
                path.display(),
                self.given,
                check.flows
            )));
        }
        before.matches_now(path).map_err(changed)
    }
}

/// A workload generated or read one flow at a time, in start order.
#[derive(Debug)]
pub enum FlowStream {
    Poisson(PoissonStream),
    Csv(CsvStream),
    Hpcc(HpccStream),
}

impl Iterator for FlowStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        match self {
            FlowStream::Poisson(p) => p.next(),
            FlowStream::Csv(c) => c.next(),
            FlowStream::Hpcc(h) => h.next(),
        }
    }
}

impl FlowStream {
    /// The flows still to come, read without consuming them (a run collected before its last
    /// arrivals, e.g. observed in time windows).
    pub fn rest(&self) -> Vec<FlowSpec> {
        match self {
            FlowStream::Poisson(p) => p.clone().collect(),
            FlowStream::Csv(c) => c.rest(),
            FlowStream::Hpcc(h) => h.rest(),
        }
    }

    /// Why the stream ended early, if it did (a file that no longer parses).
    pub fn error(&self) -> Option<&str> {
        match self {
            FlowStream::Csv(c) => c.progress.error.as_deref(),
            FlowStream::Hpcc(h) => h.progress.error.as_deref(),
            FlowStream::Poisson(_) => None,
        }
    }

    /// At the end of the run: a file read as it went was not changed while it was read. The
    /// rest of the stream is read through (flows the run did not reach are counted, not
    /// used), then what was read is compared with `check` (which read the file before the
    /// run): its length, modification time and hash, the number of flows, and each flow
    /// after the one before; and the file as it is now with the file then.
    pub fn finish(&mut self, check: &StreamCheck) -> Result<(), String> {
        while self.next().is_some() {}
        match self {
            FlowStream::Poisson(_) => Ok(()),
            FlowStream::Csv(c) => c
                .progress
                .verify(c.reader.get_mut().get_mut(), check, &c.path),
            FlowStream::Hpcc(h) => {
                let r = &mut h.reader;
                h.progress.verify(r.lines.get_mut(), check, &r.path)
            }
        }
    }
}

/// What checking a stream to its end found: its length, and per priority `p` the first flow
/// (id, priority) whose priority is at least `p` (a run with `p` queues refuses it).
#[derive(Clone, Debug, Default)]
pub struct StreamCheck {
    pub flows: usize,
    pub prio_at_least: [Option<(u32, u8)>; 9],
    /// A flow file's identity as the check read it (None for a generated workload).
    pub file: Option<FileIdent>,
    /// Bytes of the flows counted (the work estimate's; 0 for a generated workload).
    pub bytes: u64,
}
