//! HPCC ns-3 flow files (`flow.txt`): read whole, or checked and read as a stream.

use super::*;

/// Seconds written as a decimal (`2.000035106`) to a time, exactly to the nanosecond (digits
/// beyond the ninth are dropped).
pub(in crate::workload) fn decimal_seconds(s: &str) -> Option<SimTime> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let all_digits = |x: &str| x.chars().all(|c| c.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) || int.len() > 9 {
        return None;
    }
    let secs: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut ns_text: String = frac.chars().take(9).collect();
    while ns_text.len() < 9 {
        ns_text.push('0');
    }
    let ns: u64 = ns_text.parse().ok()?;
    Some(SimTime::from_ns(secs * 1_000_000_000 + ns))
}

/// Reads an HPCC ns-3 flow file: a first line with the flow count, then `src dst pg dport
/// size start` per flow (start in seconds). Flow ids are 1.. in file order; `pg` and `dport`
/// are not used (the scheme decides priorities); node ids must be hosts: the topology file's
/// own host ids when `hosts` holds them, else dcsim's `0..n_hosts`.
/// Starts are read exactly to the nanosecond (the HPCC simulator goes through a `double` and
/// truncates, so some of its flows start 1 ns earlier), and `offset` is subtracted.
pub fn read_hpcc(
    path: &Path,
    n_hosts: usize,
    hosts: &FileHostIds,
    offset: SimTime,
) -> Result<Vec<FlowSpec>, String> {
    let mut r = HpccReader::open(path, n_hosts, hosts.ids(), offset)?;
    let mut out = Vec::with_capacity(r.n);
    while let Some(f) = r.next_flow()? {
        out.push(f);
    }
    Ok(out)
}

/// An HPCC ns-3 flow file read a line at a time ([`read_hpcc`]'s format and checks): the
/// declared count from the first line, then each flow, and at the end the check that the
/// file held exactly that many.
pub(in crate::workload) struct HpccReader {
    pub(in crate::workload) path: PathBuf,
    pub(in crate::workload) lines: std::io::BufReader<HashingReader>,
    /// Line number of the last line read.
    pub(in crate::workload) ln: usize,
    pub(in crate::workload) n_hosts: usize,
    /// The topology file's ids of the hosts, ascending (none: `0..n_hosts`).
    pub(in crate::workload) ids: Option<Vec<u32>>,
    pub(in crate::workload) offset: SimTime,
    /// Flows the first line declares, and flows read so far.
    pub(in crate::workload) n: usize,
    pub(in crate::workload) read: usize,
}

impl HpccReader {
    /// dcsim's host index of the host the file names `id`.
    pub(in crate::workload) fn host(&self, id: u64) -> Result<u64, String> {
        match &self.ids {
            None if (id as usize) < self.n_hosts => Ok(id),
            None => Err(format!(
                "{}: node {id} is not a host: hosts are 0..{} (a built-in topology numbers hosts first)",
                self.at(),
                self.n_hosts
            )),
            Some(ids) => u32::try_from(id)
                .ok()
                .and_then(|i| ids.binary_search(&i).ok())
                .map(|i| i as u64)
                .ok_or_else(|| {
                    let list = match (ids.first(), ids.last()) {
                        (Some(a), Some(b)) if (*b - *a) as usize + 1 == ids.len() => {
                            format!("{a}..={b}")
                        }
                        _ => {
                            let shown: Vec<String> =
                                ids.iter().take(8).map(u32::to_string).collect();
                            format!(
                                "{}{}",
                                shown.join(", "),
                                if ids.len() > 8 { ", ..." } else { "" }
                            )
                        }
                    };
                    format!(
                        "{}: node {id} is not a host of the topology file (its hosts are nodes {list}, by the file's own ids)",
                        self.at()
                    )
                }),
        }
    }

    pub(in crate::workload) fn open(
        path: &Path,
        n_hosts: usize,
        ids: Option<Vec<u32>>,
        offset: SimTime,
    ) -> Result<HpccReader, String> {
        let file = open_regular(path)?;
        let mut r = HpccReader {
            path: path.to_path_buf(),
            lines: std::io::BufReader::new(file),
            ln: 0,
            n_hosts,
            ids,
            offset,
            n: 0,
            read: 0,
        };
        let head = r
            .next_line()?
            .ok_or_else(|| format!("{}: empty file", path.display()))?;
        let n: usize = head
            .parse()
            .map_err(|_| format!("{}: expected the flow count, got `{head}`", r.at()))?;
        if n == 0 || n > 10_000_000 {
            return Err(format!(
                "{}: the flow count must be in 1..=10000000",
                r.at()
            ));
        }
        r.n = n;
        Ok(r)
    }

    pub(in crate::workload) fn at(&self) -> String {
        format!("{} line {}", self.path.display(), self.ln)
    }

    /// The next line that is not blank, trimmed.
    pub(in crate::workload) fn next_line(&mut self) -> Result<Option<String>, String> {
        use std::io::BufRead;
        let mut l = String::new();
        loop {
            l.clear();
            let k = self
                .lines
                .read_line(&mut l)
                .map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
            if k == 0 {
                return Ok(None);
            }
            self.ln += 1;
            let t = l.trim();
            if !t.is_empty() {
                return Ok(Some(t.to_string()));
            }
        }
    }

    /// The next flow; None after the last, once the count has been checked.
    pub(in crate::workload) fn next_flow(&mut self) -> Result<Option<FlowSpec>, String> {
        if self.read == self.n {
            // One line past the count is enough to know the count is wrong.
            if self.next_line()?.is_some() {
                return Err(format!(
                    "{}: more than {} flow lines, the first line says {}",
                    self.path.display(),
                    self.n,
                    self.n
                ));
            }
            return Ok(None);
        }
        let Some(l) = self.next_line()? else {
            return Err(format!(
                "{}: {} flow lines, the first line says {}",
                self.path.display(),
                self.read,
                self.n
            ));
        };
        let v: Vec<&str> = l.split_whitespace().collect();
        if v.len() != 6 {
            return Err(format!(
                "{}: expected `src dst pg dport size start_seconds`, got `{l}`",
                self.at()
            ));
        }
        let num = |i: usize, what: &str| -> Result<u64, String> {
            v[i].parse::<u64>().map_err(|_| {
                format!(
                    "{}: {what} `{}` is not a non-negative integer",
                    self.at(),
                    v[i]
                )
            })
        };
        let (src, dst, size) = (num(0, "src")?, num(1, "dst")?, num(4, "size")?);
        num(2, "pg")?;
        num(3, "dport")?;
        let (src, dst) = (self.host(src)?, self.host(dst)?);
        if src == dst {
            return Err(format!("{}: src and dst are the same host", self.at()));
        }
        if size == 0 {
            return Err(format!("{}: size must be positive", self.at()));
        }
        let t = decimal_seconds(v[5])
            .ok_or_else(|| format!("{}: start `{}` is not a time in seconds", self.at(), v[5]))?;
        let offset = self.offset;
        if t < offset {
            return Err(format!(
                "{}: starts at {t}, before start_offset {offset} (HPCC's scripts put flows at 2 s + start; set [workload] start_offset)",
                self.at()
            ));
        }
        let start = t - offset;
        if start > MAX_START {
            let given = format!("`{}` (less start_offset {offset})", v[5]);
            return Err(format!("{}: {}", self.at(), start_beyond(&given)));
        }
        self.read += 1;
        Ok(Some(FlowSpec::new(
            self.read as u32,
            src as u32,
            dst as u32,
            size,
            start,
        )))
    }
}

/// An HPCC flow file read as its flows start (a file in start order; see
/// [`WorkloadConfig::stream`]). A line that no longer parses (the file changed since it was
/// checked) ends the stream and is kept as its error.
#[derive(Debug)]
pub struct HpccStream {
    pub(in crate::workload) reader: HpccReader,
    pub(in crate::workload) progress: StreamProgress,
}

impl std::fmt::Debug for HpccReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HpccReader({} line {})", self.path.display(), self.ln)
    }
}

impl HpccStream {
    pub(in crate::workload) fn open(
        path: &Path,
        n_hosts: usize,
        hosts: &FileHostIds,
        offset: SimTime,
        end: Option<SimTime>,
    ) -> Result<HpccStream, String> {
        Ok(HpccStream {
            reader: HpccReader::open(path, n_hosts, hosts.ids(), offset)?,
            progress: StreamProgress::new(end),
        })
    }

    /// The flows still to come: the file read again from the current flow.
    pub(in crate::workload) fn rest(&self) -> Vec<FlowSpec> {
        if self.progress.done {
            return Vec::new();
        }
        let r = &self.reader;
        let again = HpccReader::open(&r.path, r.n_hosts, r.ids.clone(), r.offset).map(|reader| {
            HpccStream {
                reader,
                progress: StreamProgress::new(self.progress.end),
            }
        });
        let Ok(mut again) = again else {
            return Vec::new();
        };
        for _ in 0..r.read {
            if !matches!(again.reader.next_flow(), Ok(Some(_))) {
                return Vec::new();
            }
        }
        again.progress.last = self.progress.last;
        again.collect()
    }
}

impl Iterator for HpccStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        if self.progress.done {
            return None;
        }
        let row = self.reader.next_flow();
        let at = || self.reader.at();
        self.progress.next(row, at)
    }
}

/// Checks HPCC flow file `path` for streaming: every line valid, the count right, starts in
/// increasing order (ids are the line order, so (start, id) increases), every start within
/// the horizon. None if it is not fit (the list reader then reads it, and reports whatever is
/// wrong with it).
pub(in crate::workload) fn check_hpcc_stream(
    path: &Path,
    n_hosts: usize,
    hosts: &FileHostIds,
    host_rate: BitRate,
    offset: SimTime,
    end: Option<SimTime>,
) -> Option<StreamCheck> {
    let mut r = HpccReader::open(path, n_hosts, hosts.ids(), offset).ok()?;
    let mut last = SimTime::ZERO;
    let mut c = StreamCheck::default();
    while let Some(f) = r.next_flow().ok()? {
        if f.start < last || beyond_horizon(&f, host_rate).is_some() {
            return None;
        }
        last = f.start;
        if end.is_none_or(|e| f.start < e) {
            c.flows += 1;
            c.bytes = c.bytes.saturating_add(f.size);
        }
    }
    c.file = Some(whole_file(r.lines.get_mut())?);
    Some(c)
}
