//! `dcsim run`: options, sharding, resuming (which runs are complete, which are stale) and
//! running an experiment's plans in parallel.

use super::*;

/// How to run an experiment.
#[derive(Clone, Debug, Default)]
pub struct RunOpts {
    /// Parallel runs (None: all cores).
    pub jobs: Option<usize>,
    pub quiet: bool,
    pub dry_run: bool,
    pub skip_existing: bool,
    /// `(i, n)`: run only the i-th (1-based) of n slices.
    pub shard: Option<(usize, usize)>,
}

/// Parses `I/N` with 1 <= I <= N.
pub fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let bad = || anyhow::anyhow!("--shard `{s}`: expected I/N with 1 <= I <= N, e.g. 3/8");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let i: usize = i.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Whether the run at plan index `k` belongs to shard `i` of `n` (round robin, so every shard
/// gets a mix of schemes and sweep points and similar work).
pub fn in_shard(k: usize, (i, n): (usize, usize)) -> bool {
    k % n == i - 1
}

/// What is on disk for a planned run.
#[derive(Debug, PartialEq)]
pub(in crate::cli) enum RunState {
    /// No complete run (no directory, or no `complete` marker).
    Missing,
    /// Complete, made from the same config, inputs, scheme and seed.
    Complete,
    /// Complete but made from something else: the keys that differ.
    Stale(Vec<String>),
}

/// The state of planned run `p` in `exp_dir`: complete means its `complete` marker (written
/// last) exists; it matches when the marker's hash is the plan's.
pub(in crate::cli) fn run_state(exp_dir: &Path, p: &experiment::RunPlan) -> RunState {
    let dir = exp_dir.join(&p.id);
    let Ok(marker) = std::fs::read_to_string(dir.join(report::COMPLETE_MARKER)) else {
        return RunState::Missing;
    };
    if marker.trim() == p.identity.hash {
        return RunState::Complete;
    }
    let old: Option<serde_json::Value> = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| m.get("identity").cloned());
    RunState::Stale(match old {
        Some(old) => {
            let keys = crate::provenance::changed_keys(&old, &p.identity.identity);
            if keys.is_empty() {
                vec!["(hash differs)".into()]
            } else {
                keys
            }
        }
        None => vec!["(no record of its config)".into()],
    })
}

pub(in crate::cli) fn run_complete(exp_dir: &Path, p: &experiment::RunPlan) -> bool {
    run_state(exp_dir, p) == RunState::Complete
}

/// Fails naming the first run in `dir` that is complete but stale, and what changed.
pub(in crate::cli) fn refuse_stale<'a>(
    dir: &Path,
    plans: impl IntoIterator<Item = &'a experiment::RunPlan>,
) -> Result<()> {
    for p in plans {
        if let RunState::Stale(keys) = run_state(dir, p) {
            let mut k: Vec<&str> = keys.iter().map(String::as_str).take(8).collect();
            if keys.len() > 8 {
                k.push("...");
            }
            bail!(
                "{}: run {} was made from a different config or input (changed: {}); delete it or use another output directory",
                dir.display(),
                p.id,
                k.join(", ")
            );
        }
    }
    Ok(())
}

/// Runs every planned run of `cfg` on `jobs` threads, writes the experiment summary and its
/// figures; results of the runs executed, in plan order.
pub fn run_all(
    cfg: &Config,
    file: &str,
    base: &Path,
    jobs: Option<usize>,
    quiet: bool,
) -> Result<Vec<RunResult>> {
    run_experiment(
        cfg,
        file,
        base,
        &RunOpts {
            jobs,
            quiet,
            ..Default::default()
        },
    )
}

/// [`run_all`] with every option.
pub fn run_experiment(
    cfg: &Config,
    file: &str,
    base: &Path,
    opts: &RunOpts,
) -> Result<Vec<RunResult>> {
    let quiet = opts.quiet;
    let all_plans = experiment::plan(cfg, file, base)?;
    let exp_dir = cfg.output_dir.join(&cfg.name);
    let mine: Vec<&experiment::RunPlan> = all_plans
        .iter()
        .enumerate()
        .filter(|(k, _)| opts.shard.is_none_or(|s| in_shard(*k, s)))
        .map(|(_, p)| p)
        .collect();
    if opts.dry_run {
        for p in &mine {
            let axes: Vec<String> = p
                .axes
                .iter()
                .map(|(k, v)| format!("{k}={}", crate::sweep::value_text(v)))
                .collect();
            let done = match run_state(&exp_dir, p) {
                RunState::Complete => "  (complete)".to_string(),
                RunState::Stale(k) => format!("  (stale: {})", k.join(", ")),
                RunState::Missing => String::new(),
            };
            println!(
                "{:<40} {} seed={} {}{done}",
                p.id,
                p.scheme.name,
                p.seed,
                axes.join(" ")
            );
        }
        match opts.shard {
            Some((i, n)) => println!(
                "{} run(s) in shard {i}/{n} of {}",
                mine.len(),
                all_plans.len()
            ),
            None => println!("{} run(s)", all_plans.len()),
        }
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(&exp_dir)
        .with_context(|| format!("cannot create {}", exp_dir.display()))?;
    let _lock = crate::provenance::DirLock::acquire(&exp_dir, opts.shard)
        .map_err(|e| anyhow::anyhow!(e))?;
    if opts.skip_existing {
        refuse_stale(&exp_dir, mine.iter().copied())?;
    }
    crate::interrupt::set(Some(crate::interrupt::Progress {
        exp_dir: exp_dir.clone(),
        runs: mine
            .iter()
            .map(|p| (p.id.clone(), p.identity.hash.clone()))
            .collect(),
        lock: Some(_lock.path().to_path_buf()),
    }));
    let plans: Vec<&experiment::RunPlan> = mine
        .iter()
        .copied()
        .filter(|p| !(opts.skip_existing && run_complete(&exp_dir, p)))
        .collect();
    if !quiet && plans.len() < mine.len() {
        eprintln!(
            "skipping {} complete run(s), running {}",
            mine.len() - plans.len(),
            plans.len()
        );
    }
    // Within the core budget: a run on t threads leaves room for cores / t runs at once.
    let per_run = plans
        .iter()
        .map(|p| p.config.run.threads as usize)
        .max()
        .unwrap_or(1);
    let jobs = opts
        .jobs
        .or_else(|| (per_run > 1).then(|| (rayon::current_num_threads() / per_run).max(1)));
    let parallel = jobs
        .unwrap_or_else(rayon::current_num_threads)
        .min(plans.len())
        .max(1);
    let work = announce_work(&plans, base, parallel, file);
    if !quiet && let Some(line) = &work.line {
        eprintln!("{line}");
    }
    if !quiet {
        for line in transport_default_lines(cfg) {
            eprintln!("{line}");
        }
    }
    if let Some(limit) = crate::budget::available() {
        for p in &plans {
            crate::budget::check(&p.config, base, parallel, &limit)
                .map_err(|e| anyhow::anyhow!("{file}: run {}: {e}", p.id))?;
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()?;
    let bars = Bars::new(quiet, plans.len());
    let results: Vec<Result<RunResult>> = pool.install(|| {
        plans
            .par_iter()
            .enumerate()
            .map(|(i, p)| {
                let _running = crate::interrupt::running();
                let bar = bars.run_bar(&p.id);
                let hops = work.hops_hi[i];
                let r = experiment::execute_with(&p.config, base, p, |pr| {
                    bars.update(&bar, pr, hops)
                })
                .map_err(|e| anyhow::anyhow!("run {}: {e}", p.id))?;
                bars.run_finished(&bar);
                let why = match r.end_reason {
                    crate::sim::EndReason::Idle => Some("nothing was left to do"),
                    crate::sim::EndReason::Unreachable => Some(
                        "once the last failure took effect their hosts could not reach each other and nothing else could finish",
                    ),
                    crate::sim::EndReason::TimeLimit => {
                        Some("the clock reached the largest time it holds (2^64 ps, about 213 days)")
                    }
                    _ => None,
                };
                if let Some(why) = why
                    && r.totals.finished < r.totals.flows
                {
                    // Loud even when quiet: averages cover finished flows only.
                    eprintln!(
                        "warning: run {}: {} of {} flows never finished: {why} (end_reason = {} in summary.csv); its averages cover finished flows only",
                        p.id,
                        r.totals.flows - r.totals.finished,
                        r.totals.flows,
                        r.end_reason.name()
                    );
                }
                if !r.conservation.holds() {
                    bail!("run {}: byte conservation violated: {:?}", p.id, r.conservation);
                }
                let dir = report::write_run(&exp_dir, &p.config, &r)
                    .with_context(|| format!("writing results of run {}", p.id))?;
                bars.run_done(&format!(
                    "run {:<16} {:>7.2}s wall, {:>11} events, {:>11} packet-hops, {} flows ({} finished) -> {}",
                    p.id,
                    r.wall_seconds,
                    r.totals.events,
                    r.totals.packet_hops,
                    r.totals.flows,
                    r.totals.finished,
                    dir.display()
                ));
                Ok(r)
            })
            .collect()
    });
    bars.finish();
    let results = results.into_iter().collect::<Result<Vec<_>>>()?;
    if let Some((i, n)) = opts.shard {
        // A shard writes its own slice's summary; `dcsim merge` writes the experiment's.
        let mine: Vec<experiment::RunPlan> = mine.into_iter().cloned().collect();
        write_summary_to(&mine, &exp_dir, &format!("summary.shard-{i}-of-{n}.csv"))?;
        if !quiet {
            eprintln!("shard {i}/{n} done; combine the shards with `dcsim merge {file}`");
        }
        return Ok(results);
    }
    write_summary(&all_plans, &exp_dir)?;
    write_experiment_manifest(cfg, file, &all_plans, &exp_dir)?;
    draw_figures(cfg, &exp_dir, quiet)?;
    Ok(results)
}

pub(in crate::cli) fn run(
    config: Option<&Path>,
    set: &[String],
    seed: Option<u64>,
    output_dir: Option<PathBuf>,
    smoke: bool,
    opts: &RunOpts,
) -> Result<()> {
    let quiet = opts.quiet || opts.dry_run;
    if !opts.dry_run {
        // Ctrl-C and SIGTERM say what is complete and how to resume before they stop us.
        crate::interrupt::install();
    }
    let (mut cfg, base) = load(config, set)?;
    if smoke {
        cfg = experiment::smoke(&cfg);
    }
    if let Some(s) = seed {
        cfg.seed = s;
    }
    if let Some(o) = output_dir {
        cfg.output_dir = o;
    }
    let file = config
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "<embedded default>".into());
    if seed.is_some() {
        cfg.validate(&file, &base)?;
    }
    if !quiet {
        let combos: usize = cfg.sweep.axes.iter().map(|a| a.values.len()).product();
        let n = cfg.schemes.len() * cfg.seeds as usize * combos;
        eprintln!(
            "dcsim {}: experiment `{}`, {} run(s), {} hosts, results in {}",
            env!("CARGO_PKG_VERSION"),
            cfg.name,
            n,
            cfg.topology.n_hosts(),
            cfg.output_dir.join(&cfg.name).display()
        );
    }
    let one_at_a_time;
    let mut opts = opts;
    if let Some(procs) = experiment::procs() {
        // One run at a time, each spread over every rank; rank 0 writes what they give.
        if opts.skip_existing {
            bail!(
                "--skip-existing: not on several MPI processes (the ranks must run the same runs)"
            );
        }
        if procs.rank() != 0 {
            if opts.dry_run {
                return Ok(());
            }
            let plans = experiment::plan(&cfg, &file, &base)?;
            for (k, p) in plans.iter().enumerate() {
                if opts.shard.is_none_or(|s| in_shard(k, s)) {
                    experiment::execute_share(&p.config, &base, p)
                        .map_err(|e| anyhow::anyhow!("run {}: {e}", p.id))?;
                }
            }
            return Ok(());
        }
        one_at_a_time = RunOpts {
            jobs: Some(1),
            ..opts.clone()
        };
        opts = &one_at_a_time;
    }
    let results = run_experiment(&cfg, &file, &base, opts)?;
    if !results.is_empty() {
        print!("{}", report::table(&results));
    }
    Ok(())
}
