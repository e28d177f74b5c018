//! The flow-list CSV format (`flow_id,src,dst,size_bytes,start_ns`, optional `prio`,
//! `deadline_ns`, `after`): read whole, or checked and read as a stream. Errors name the
//! file, line and column.

use super::*;

/// Reads the flow-list CSV format (through the `csv` crate: quoted fields, a UTF-8 byte-order
/// mark and blank lines are handled; errors name the file, line and column).
pub fn read_csv(path: &Path, n_hosts: usize) -> Result<Vec<FlowSpec>, String> {
    let text = crate::fileid::read_to_string(path)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut r = csv_reader(text.as_bytes());
    let cols = csv_header(&mut r, path)?;
    let mut out = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    // Per flow with `after`: its line and the flows it waits for.
    let mut deps: Vec<(usize, usize, Vec<u64>)> = Vec::new();
    for rec in r.records() {
        let f = rec.map_err(|e| format!("{}: {e}", path.display()))?;
        let Some((spec, after)) = csv_row(&f, &cols, path, n_hosts, &mut |id| ids.insert(id))?
        else {
            continue;
        };
        if let Some(list) = after {
            let line = f.position().map_or(0, |p| p.line());
            deps.push((out.len(), line as usize, list));
        }
        out.push(spec);
    }
    if out.is_empty() {
        return Err(format!("{}: no flows", path.display()));
    }
    link_dependencies(&mut out, deps, &path.display().to_string(), |l| {
        format!("line {l}")
    })?;
    Ok(out)
}

/// The reader of a flow-list CSV.
pub(in crate::workload) fn csv_reader<R: std::io::Read>(r: R) -> ::csv::Reader<R> {
    ::csv::ReaderBuilder::new()
        .trim(::csv::Trim::All)
        .flexible(true)
        .from_reader(r)
}

/// A flow-list CSV's columns, checked.
pub(in crate::workload) fn csv_header<R: std::io::Read>(
    r: &mut ::csv::Reader<R>,
    path: &Path,
) -> Result<Vec<String>, String> {
    let cols: Vec<String> = r
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .iter()
        .map(String::from)
        .collect();
    if cols.iter().all(|c| c.is_empty()) {
        return Err(format!("{}: empty file", path.display()));
    }
    let need = ["flow_id", "src", "dst", "size_bytes", "start_ns"];
    if cols.len() < 5 || cols[..5] != need {
        return Err(format!(
            "{}: the header must start with `{}`, got `{}`",
            path.display(),
            need.join(","),
            cols.join(",")
        ));
    }
    for c in &cols[5..] {
        if !["prio", "deadline_ns", "after"].contains(&c.as_str()) {
            return Err(format!(
                "{}: unknown column `{c}` (optional columns: prio, deadline_ns, after)",
                path.display()
            ));
        }
    }
    Ok(cols)
}

/// A flow-list CSV row: its flow, and the flow ids it waits for (`after`), if any.
pub(in crate::workload) type CsvRow = (FlowSpec, Option<Vec<u64>>);

/// One flow-list CSV row: its flow and the ids it waits for (`after`), or None for a blank
/// row. `new_id` says whether a flow id was not seen before (and records it).
pub(in crate::workload) fn csv_row(
    f: &::csv::StringRecord,
    cols: &[String],
    path: &Path,
    n_hosts: usize,
    new_id: &mut dyn FnMut(u64) -> bool,
) -> Result<Option<CsvRow>, String> {
    let line = f.position().map_or(0, |p| p.line());
    let at = || format!("{} line {line}", path.display());
    if f.iter().all(|x| x.is_empty()) {
        return Ok(None);
    }
    if f.len() != cols.len() {
        return Err(format!(
            "{}: expected {} fields, got {}",
            at(),
            cols.len(),
            f.len()
        ));
    }
    let num = |i: usize| -> Result<u64, String> {
        f[i].parse::<u64>().map_err(|_| {
            format!(
                "{}: `{}` = `{}` is not a non-negative integer",
                at(),
                cols[i],
                &f[i]
            )
        })
    };
    let time = |i: usize| -> Result<SimTime, String> {
        let v = num(i)?;
        if v > MAX_CSV_TIME_NS {
            return Err(format!(
                "{}: `{}` = {v} is out of range (at most {MAX_CSV_TIME_NS} ns)",
                at(),
                cols[i]
            ));
        }
        Ok(SimTime::from_ns(v))
    };
    let (id, src, dst, size, start) = (num(0)?, num(1)?, num(2)?, num(3)?, time(4)?);
    if start > MAX_START {
        let given = format!("`{}` = {}", cols[4], &f[4]);
        return Err(format!("{}: {}", at(), start_beyond(&given)));
    }
    if src as usize >= n_hosts || dst as usize >= n_hosts {
        return Err(format!("{}: hosts must be in 0..{n_hosts}", at()));
    }
    if src == dst {
        return Err(format!("{}: src and dst are the same host", at()));
    }
    if size == 0 {
        return Err(format!("{}: size_bytes must be positive", at()));
    }
    if id > u32::MAX as u64 || !new_id(id) {
        return Err(format!("{}: flow_id {id} is duplicated or too large", at()));
    }
    let mut spec = FlowSpec::new(id as u32, src as u32, dst as u32, size, start);
    let mut after = None;
    for (i, c) in cols.iter().enumerate().skip(5) {
        match c.as_str() {
            "prio" => match num(i)? {
                v if v < 8 => spec.prio = Some(v as u8),
                _ => return Err(format!("{}: prio must be in 0..8", at())),
            },
            "after" => {
                let text = f[i].trim();
                if !text.is_empty() {
                    let list = text
                        .split(';')
                        .map(|x| x.trim().parse::<u64>())
                        .collect::<Result<Vec<u64>, _>>()
                        .map_err(|_| {
                            format!(
                                "{}: `after` = `{text}`: flow ids separated by `;` (e.g. 3;4)",
                                at()
                            )
                        })?;
                    after = Some(list);
                }
            }
            _ => spec.deadline = Some(time(i)?),
        }
    }
    Ok(Some((spec, after)))
}

/// A flow-list CSV read row by row as its flows start (a file already in start order; see
/// [`WorkloadConfig::stream`]). A row that no longer parses (the file changed since it was
/// checked) ends the stream and is kept as its error.
#[derive(Debug)]
pub struct CsvStream {
    pub(in crate::workload) path: PathBuf,
    pub(in crate::workload) reader: ::csv::Reader<std::io::BufReader<HashingReader>>,
    pub(in crate::workload) cols: Vec<String>,
    pub(in crate::workload) n_hosts: usize,
    /// Records read so far (blank ones included).
    pub(in crate::workload) records: u64,
    pub(in crate::workload) progress: StreamProgress,
}

impl CsvStream {
    pub(in crate::workload) fn open(
        path: &Path,
        n_hosts: usize,
        end: Option<SimTime>,
    ) -> Result<CsvStream, String> {
        use std::io::BufRead;
        let file = open_regular(path)?;
        let mut b = std::io::BufReader::new(file);
        let bom = b
            .fill_buf()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .starts_with("\u{feff}".as_bytes());
        if bom {
            b.consume(3);
        }
        let mut reader = csv_reader(b);
        let cols = csv_header(&mut reader, path)?;
        Ok(CsvStream {
            path: path.to_path_buf(),
            reader,
            cols,
            n_hosts,
            records: 0,
            progress: StreamProgress::new(end),
        })
    }

    /// The next row's flow (blank rows skipped), whatever its start.
    pub(in crate::workload) fn next_row(
        &mut self,
        new_id: &mut dyn FnMut(u64) -> bool,
    ) -> Result<Option<(FlowSpec, bool)>, String> {
        let mut rec = ::csv::StringRecord::new();
        loop {
            let more = self
                .reader
                .read_record(&mut rec)
                .map_err(|e| format!("{}: {e}", self.path.display()))?;
            if !more {
                return Ok(None);
            }
            self.records += 1;
            if let Some((spec, after)) =
                csv_row(&rec, &self.cols, &self.path, self.n_hosts, new_id)?
            {
                return Ok(Some((spec, after.is_some())));
            }
        }
    }
}

impl CsvStream {
    /// The flows still to come: the file read again from the current row.
    pub(in crate::workload) fn rest(&self) -> Vec<FlowSpec> {
        if self.progress.done {
            return Vec::new();
        }
        let Ok(mut again) = CsvStream::open(&self.path, self.n_hosts, self.progress.end) else {
            return Vec::new();
        };
        let mut rec = ::csv::StringRecord::new();
        for _ in 0..self.records {
            if !again.reader.read_record(&mut rec).unwrap_or(false) {
                return Vec::new();
            }
        }
        again.records = self.records;
        again.progress.last = self.progress.last;
        again.collect()
    }
}

impl Iterator for CsvStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        if self.progress.done {
            return None;
        }
        let row = self
            .next_row(&mut |_| true)
            .map(|r| r.map(|(spec, _)| spec));
        let at = || {
            let line = self.reader.position().line();
            format!("{} line {line}", self.path.display())
        };
        self.progress.next(row, at)
    }
}

/// Checks flow-list CSV `path` for streaming: every row valid, no dependencies, rows in
/// increasing (start, flow id) order (the order a run sorts a list into), ids distinct and
/// below 2^28, every start within the horizon. None if it is not fit (the list reader then
/// reads it, and reports whatever is wrong with it).
pub(in crate::workload) fn check_csv_stream(
    path: &Path,
    n_hosts: usize,
    host_rate: BitRate,
    end: Option<SimTime>,
) -> Option<StreamCheck> {
    let mut s = CsvStream::open(path, n_hosts, None).ok()?;
    let mut seen: Vec<u64> = Vec::new();
    let mut fresh = |id: u64| {
        if id >= 1 << 28 {
            return true; // refused below
        }
        let (w, b) = ((id / 64) as usize, id % 64);
        if w >= seen.len() {
            seen.resize(w + 1, 0);
        }
        let new = seen[w] & (1 << b) == 0;
        seen[w] |= 1 << b;
        new
    };
    let mut last: Option<(SimTime, u32)> = None;
    let mut c = StreamCheck::default();
    while let Some((f, after)) = s.next_row(&mut fresh).ok()? {
        if after
            || f.id >= 1 << 28
            || beyond_horizon(&f, host_rate).is_some()
            || last.is_some_and(|l| l >= (f.start, f.id))
        {
            return None;
        }
        last = Some((f.start, f.id));
        if end.is_none_or(|e| f.start < e) {
            c.flows += 1;
            c.bytes = c.bytes.saturating_add(f.size);
            if let Some(p) = f.prio {
                for slot in &mut c.prio_at_least[..=p as usize] {
                    slot.get_or_insert((f.id, p));
                }
            }
        }
    }
    c.file = Some(whole_file(s.reader.get_mut().get_mut())?);
    (last.is_some()).then_some(c)
}

/// The identity of the file reader `r` has read to its end, if the file did not grow or
/// shrink while it was read.
pub(in crate::workload) fn whole_file(r: &mut HashingReader) -> Option<FileIdent> {
    r.drain().ok()?;
    let id = r.ident();
    (id.len == r.opened_len()).then_some(id)
}
