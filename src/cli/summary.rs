//! An experiment's summary and manifest, and `dcsim merge` (shards' runs joined into one
//! experiment directory).

use super::*;

/// The experiment's `summary.csv`: every complete run's rows, in plan order.
pub fn write_summary(plans: &[experiment::RunPlan], exp_dir: &Path) -> Result<()> {
    write_summary_to(plans, exp_dir, "summary.csv")
}

/// The experiment-level `manifest.json`: the build, the command, the config (and its file's
/// hash), and every planned run with its config hash and whether it is complete.
pub(in crate::cli) fn write_experiment_manifest(
    cfg: &Config,
    file: &str,
    plans: &[experiment::RunPlan],
    exp_dir: &Path,
) -> Result<()> {
    let file_hash = std::fs::read(file)
        .ok()
        .map(|b| format!("{:016x}", crate::provenance::fnv1a(&b)));
    let runs: Vec<serde_json::Value> = plans
        .iter()
        .map(|p| {
            serde_json::json!({
                "run": p.id,
                "config_hash": p.identity.hash,
                "complete": run_complete(exp_dir, p),
            })
        })
        .collect();
    let m = serde_json::json!({
        "dcsim_version": env!("CARGO_PKG_VERSION"),
        "git_revision": crate::provenance::build_info().git_revision,
        "git_dirty": crate::provenance::build_info().git_dirty,
        "source_hash": crate::provenance::build_info().source_hash,
        "command_line": crate::provenance::command_line(),
        "config_file": file,
        "config_file_hash": file_hash,
        "overrides": cfg.overrides,
        "config": cfg,
        "runs": runs,
    });
    let text = serde_json::to_string_pretty(&m)? + "\n";
    report::write_atomic(&exp_dir.join("manifest.json"), text.as_bytes())
}

/// [`write_summary`] into the file `name` of `exp_dir`: the complete runs made from the
/// current config; a stale run (another config) is an error.
pub(in crate::cli) fn write_summary_to(
    plans: &[experiment::RunPlan],
    exp_dir: &Path,
    name: &str,
) -> Result<()> {
    refuse_stale(exp_dir, plans)?;
    // Runs written by different dcsim versions may have different columns: the experiment
    // summary takes the union (in first-seen order) and leaves a run's missing columns empty.
    let mut columns: Vec<String> = Vec::new();
    let mut runs: Vec<(Vec<usize>, Vec<csv::StringRecord>)> = Vec::new();
    for p in plans {
        if !run_complete(exp_dir, p) {
            continue;
        }
        let f = exp_dir.join(&p.id).join("summary.csv");
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let (header, records) =
            report::read_csv(&text).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        let map: Vec<usize> = header
            .iter()
            .map(|c| match columns.iter().position(|x| x == c) {
                Some(i) => i,
                None => {
                    columns.push(c.clone());
                    columns.len() - 1
                }
            })
            .collect();
        runs.push((map, records));
    }
    let mut out = String::new();
    if !columns.is_empty() {
        let mut t = report::CsvTable::new(&columns);
        let mut row = vec![""; columns.len()];
        for (map, records) in &runs {
            for rec in records {
                row.iter_mut().for_each(|c| *c = "");
                for (k, v) in rec.iter().enumerate() {
                    if let Some(&i) = map.get(k) {
                        row[i] = v;
                    }
                }
                t.row(&row);
            }
        }
        out = t.finish();
    }
    report::write_atomic(&exp_dir.join(name), out.as_bytes())
}

/// `dcsim merge`: see [`Cmd::Merge`].
pub(in crate::cli) fn merge(
    config: &Path,
    from: &[PathBuf],
    output_dir: Option<PathBuf>,
    partial: bool,
) -> Result<()> {
    let mut cfg = Config::load(config)?;
    if let Some(o) = output_dir {
        cfg.output_dir = o;
    }
    let plans = experiment::plan(
        &cfg,
        &config.display().to_string(),
        &Config::base_dir(config),
    )?;
    let exp_dir = cfg.output_dir.join(&cfg.name);
    std::fs::create_dir_all(&exp_dir)
        .with_context(|| format!("cannot create {}", exp_dir.display()))?;
    let _lock =
        crate::provenance::DirLock::acquire(&exp_dir, None).map_err(|e| anyhow::anyhow!(e))?;
    refuse_stale(&exp_dir, &plans)?;
    let mut copied = 0usize;
    for src in from {
        if !src.is_dir() {
            bail!("{}: not a directory of results", src.display());
        }
        if src.canonicalize().ok() == exp_dir.canonicalize().ok() {
            continue;
        }
        refuse_stale(src, &plans)?;
        for p in &plans {
            if run_complete(src, p) && !run_complete(&exp_dir, p) {
                copy_run(&src.join(&p.id), &exp_dir, &p.id)?;
                copied += 1;
            }
        }
    }
    let missing: Vec<&str> = plans
        .iter()
        .filter(|p| !run_complete(&exp_dir, p))
        .map(|p| p.id.as_str())
        .collect();
    eprintln!(
        "merge: {copied} run(s) copied, {} of {} complete in {}",
        plans.len() - missing.len(),
        plans.len(),
        exp_dir.display()
    );
    if !missing.is_empty() {
        let list = missing
            .iter()
            .take(10)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        let more = if missing.len() > 10 { ", ..." } else { "" };
        if !partial {
            bail!(
                "{}: {} planned run(s) missing: {list}{more} (run the missing shards, or pass --allow-partial)",
                config.display(),
                missing.len()
            );
        }
        eprintln!("merge: {} run(s) missing: {list}{more}", missing.len());
    }
    write_summary(&plans, &exp_dir)?;
    write_experiment_manifest(&cfg, &config.display().to_string(), &plans, &exp_dir)?;
    draw_figures(&cfg, &exp_dir, false)
}

/// Copies a complete run directory into `exp_dir` atomically (temporary name, then rename).
pub(in crate::cli) fn copy_run(src: &Path, exp_dir: &Path, id: &str) -> Result<()> {
    let tmp = report::temp_name(exp_dir, id);
    std::fs::create_dir_all(&tmp)?;
    for e in std::fs::read_dir(src).with_context(|| format!("cannot read {}", src.display()))? {
        let e = e?;
        std::fs::copy(e.path(), tmp.join(e.file_name()))
            .with_context(|| format!("cannot copy {}", e.path().display()))?;
    }
    let dest = exp_dir.join(id);
    if dest.exists() {
        std::fs::remove_dir_all(&dest)
            .with_context(|| format!("cannot replace {}", dest.display()))?;
    }
    std::fs::rename(&tmp, &dest).with_context(|| format!("cannot write {}", dest.display()))
}
