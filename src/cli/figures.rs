//! `dcsim plot` and the figures an experiment draws after its runs: the `[[plot]]` sections
//! read back from the run's CSV files.

use super::*;

/// Draws an experiment's figures from its `summary.csv`: tables (CSV and terminal) and SVGs.
pub fn draw_figures(cfg: &Config, exp_dir: &Path, quiet: bool) -> Result<()> {
    if cfg.plot.is_empty() {
        return Ok(());
    }
    let sum = exp_dir.join("summary.csv");
    let text = std::fs::read_to_string(&sum)
        .with_context(|| format!("cannot read {} (run the experiment first)", sum.display()))?;
    let axes: Vec<String> = cfg.sweep.axes.iter().map(|a| a.key.clone()).collect();
    let rows = crate::plot::read_summary(&text, &axes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", sum.display()))?;
    // Each figure on its own: one that cannot be drawn is reported and the others still are.
    let mut failed = Vec::new();
    for spec in &cfg.plot {
        if let Err(e) = draw_figure(cfg, spec, &rows, exp_dir, quiet) {
            let _ = std::fs::remove_file(partial(exp_dir, &spec.file));
            eprintln!("error: figure {}: {e:#}", spec.file);
            failed.push(spec.file.clone());
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of {} figure(s) could not be drawn ({}); the others were",
            failed.len(),
            cfg.plot.len(),
            failed.join(", ")
        );
    }
    Ok(())
}

/// Draws figure `spec` and its table into `exp_dir`.
pub(in crate::cli) fn draw_figure(
    cfg: &Config,
    spec: &crate::plot::PlotSpec,
    rows: &[crate::plot::Row],
    exp_dir: &Path,
    quiet: bool,
) -> Result<()> {
    use crate::plot::PlotKind;
    // A smoke run's figure says so in its title: its numbers are not the experiment's.
    let marked;
    let spec = if cfg.name.ends_with("-smoke") {
        let mut s = spec.clone();
        s.title = smoke_title(&s.title);
        marked = s;
        &marked
    } else {
        spec
    };
    // Drawn under a hidden name and renamed, like every result file.
    let tmp = partial(exp_dir, &spec.file);
    let table = if spec.kind == PlotKind::Attribution {
        let bars = crate::plot::attribution_bars(spec, rows, &cfg.schemes);
        crate::plot::draw_attribution(spec, &bars, &tmp).map_err(anyhow::Error::msg)?;
        crate::plot::attribution_csv(&bars)
    } else {
        let series = match spec.kind {
            PlotKind::Sweep => crate::plot::aggregate(spec, rows, &cfg.schemes),
            PlotKind::QueueTimeseries => queue_series(spec, rows, &cfg.schemes, exp_dir)?,
            _ => flow_series(spec, rows, &cfg.schemes, exp_dir)?,
        };
        crate::plot::draw_svg(spec, &series, &tmp).map_err(|e| {
            let mut have: Vec<&str> = rows.iter().map(|r| r.class.as_str()).collect();
            have.sort_unstable();
            have.dedup();
            anyhow::anyhow!(
                "{e} (class `{}`; summary.csv has the classes {})",
                spec.class,
                have.join(", ")
            )
        })?;
        match spec.kind {
            PlotKind::Sweep => {
                println!("{}", crate::plot::table_text(spec, &series));
                crate::plot::table_csv(spec, &series)
            }
            PlotKind::QueueTimeseries => crate::plot::queue_table_csv(&series),
            _ => crate::plot::flow_table_csv(spec, &series),
        }
    };
    let svg = exp_dir.join(&spec.file);
    std::fs::rename(&tmp, &svg)?;
    let csv = exp_dir.join(format!("{}.csv", spec.file.trim_end_matches(".svg")));
    report::write_atomic(&csv, table.as_bytes())?;
    if !quiet {
        eprintln!("figure {} (table {})", svg.display(), csv.display());
    }
    Ok(())
}

/// The title of a figure drawn from a smoke run.
pub(in crate::cli) fn smoke_title(title: &str) -> String {
    if title.is_empty() {
        "smoke run (one seed, reduced workload)".to_string()
    } else {
        format!("{title} [smoke run: one seed, reduced workload]")
    }
}

/// The hidden temporary name a figure is drawn under before it is renamed into place.
pub(in crate::cli) fn partial(exp_dir: &Path, file: &str) -> PathBuf {
    exp_dir.join(format!(".{file}.partial"))
}

/// The series of a queue time-series figure: per scheme, the first seed's run at `at`.
pub(in crate::cli) fn queue_series(
    spec: &crate::plot::PlotSpec,
    rows: &[crate::plot::Row],
    schemes: &[String],
    exp_dir: &Path,
) -> Result<Vec<(String, Vec<crate::plot::Point>)>> {
    let mut runs = Vec::new();
    for scheme in schemes {
        if !spec.shows(scheme) {
            continue;
        }
        let Some(r) = crate::plot::rows_at(spec, rows, scheme, "all").next() else {
            continue;
        };
        let f = exp_dir.join(&r.run).join("ts_queues.csv");
        let text = std::fs::read_to_string(&f).with_context(|| {
            format!(
                "cannot read {} (a queue_timeseries figure needs [timeseries])",
                f.display()
            )
        })?;
        runs.push((scheme, f, text));
    }
    // Every scheme's line is the same port: the given one, else the one whose queue rose
    // highest in any of the runs.
    let port = match spec.port {
        Some(p) => p,
        None => {
            let mut best: Option<(f64, u32)> = None;
            for (_, f, text) in &runs {
                let (p, pts) = crate::plot::queue_series(text, None)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
                let m = pts.iter().map(|x| x.mean).fold(0.0, f64::max);
                if best.is_none_or(|(b, _)| m > b) {
                    best = Some((m, p));
                }
            }
            best.map_or(0, |(_, p)| p)
        }
    };
    let mut out = Vec::new();
    for (scheme, f, text) in &runs {
        let (_, pts) = crate::plot::queue_series(text, Some(port))
            .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        out.push((format!("{scheme} (port {port})"), pts));
    }
    Ok(out)
}

/// The series of a flow-level figure: per scheme, the flows of every run at the figure's
/// sweep point (seeds pooled), read from the runs' `fct.csv`.
pub(in crate::cli) fn flow_series(
    spec: &crate::plot::PlotSpec,
    rows: &[crate::plot::Row],
    schemes: &[String],
    exp_dir: &Path,
) -> Result<Vec<(String, Vec<crate::plot::Point>)>> {
    let mut out = Vec::new();
    for scheme in schemes {
        if !spec.shows(scheme) {
            continue;
        }
        let mut flows = Vec::new();
        for r in crate::plot::rows_at(spec, rows, scheme, "all") {
            let f = exp_dir.join(&r.run).join("fct.csv");
            let text = std::fs::read_to_string(&f)
                .with_context(|| format!("cannot read {}", f.display()))?;
            flows.extend(
                crate::plot::read_flows(&text, &spec.class)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?,
            );
        }
        let pts = match spec.kind {
            crate::plot::PlotKind::FctCdf => crate::plot::fct_cdf(&flows),
            _ => crate::plot::slowdown_by_size(&flows, spec.bins, crate::plot::stat_of(spec)),
        };
        if !pts.is_empty() {
            out.push((scheme.clone(), pts));
        }
    }
    Ok(out)
}
