//! The command-line interface: `dcsim run`, `validate`, `bench`, `schemes`, `default-config`.

use crate::config::{Config, DEFAULT_CONFIG};
use crate::experiment::{self, RunResult};
use crate::report;
use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// dcsim: a fast, deterministic, packet-level data-center network simulator.
#[derive(Parser, Debug)]
#[command(name = "dcsim", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Run an experiment (the embedded default when no CONFIG is given) and print a comparison.
    Run {
        /// Experiment TOML file.
        config: Option<PathBuf>,
        /// Parallel runs, 1..=1024 (default: all cores). Results do not depend on it.
        #[arg(short = 'j', long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        jobs: Option<u16>,
        /// Override the master seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Override the output directory.
        #[arg(long)]
        output_dir: Option<PathBuf>,
        /// Print only the final table.
        #[arg(short, long)]
        quiet: bool,
        /// List the runs (ids and sweep values) without running them.
        #[arg(long)]
        dry_run: bool,
        /// Skip runs whose results are already complete (resume an interrupted experiment).
        #[arg(long)]
        skip_existing: bool,
        /// Run only the I-th of N disjoint slices of the runs (1-based, e.g. `--shard 2/8`),
        /// for a cluster job array; combine the slices with `dcsim merge`.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Run the smoke version: one seed, the first and last value of each sweep axis, a
        /// small workload; results go to `<name>-smoke/`. Checks a config end to end in
        /// seconds (its numbers mean nothing).
        #[arg(long)]
        smoke: bool,
        /// Override one config key, as a sweep axis would (repeatable): `--set workload.load=0.5`,
        /// `--set topology.host_rate=100Gbps`. Recorded in the manifest.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Combine the results of an experiment's shards: copy every complete run found under the
    /// given result directories into the experiment's directory, check that every planned run
    /// is present, then write the experiment summary and figures.
    Merge {
        /// The experiment TOML that was sharded.
        config: PathBuf,
        /// Experiment result directories of the shards (`<output_dir>/<name>` of each); none
        /// when the shards shared one output directory.
        from: Vec<PathBuf>,
        /// Where the merged results go (default: the config's `output_dir`).
        #[arg(long)]
        output_dir: Option<PathBuf>,
        /// Write the summary of the runs present even if some planned runs are missing.
        #[arg(long)]
        allow_partial: bool,
    },
    /// Check a config file without running it: every key, every sweep point, the memory each
    /// run needs against the limits, and an estimate of the work; exits 1 naming the file, the
    /// key and what is allowed when something is wrong.
    Validate {
        /// The experiment TOML to check.
        config: PathBuf,
        /// Override one config key, as a sweep axis would (repeatable): `--set workload.load=0.5`,
        /// `--set topology.host_rate=100Gbps`; checked as `run --set` would run it.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Measure simulator speed: events and packet-hops per wall-clock second, peak memory.
    Bench {
        /// `default` (the default experiment, both schemes), `fat-tree` (k=8, 100 Gbps, DCTCP,
        /// 10 ms), `scale` (fat-trees from k=4 up, one process per point, for how the speed and
        /// memory scale) or `all` (default, then fat-tree).
        #[arg(long, default_value = "all")]
        scenario: String,
    },
    /// Redraw an experiment's figures and tables from its results (no simulation).
    Plot {
        /// The experiment TOML whose `[[plot]]` sections to draw.
        config: PathBuf,
        /// Where its results are (default: the config's `output_dir`).
        #[arg(long)]
        output_dir: Option<PathBuf>,
        /// Override one config key, as a sweep axis would (repeatable): `--set workload.load=0.5`,
        /// `--set topology.host_rate=100Gbps`. Recorded in the manifest.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// List the built-in schemes.
    Schemes,
    /// Print a starting-point experiment: the embedded default (TCP against DCTCP), or a
    /// template.
    DefaultConfig {
        /// `tcp` (the default experiment), `rdma` (DCQCN, HPCC and rate-based DCTCP at 100
        /// Gbps, incast over background), `gpmp` (the GPMP load experiment) or `pdtcp` (the
        /// PDTCP partition-aggregate experiment).
        #[arg(long, default_value = "tcp")]
        template: String,
    },
}

/// The experiments `dcsim default-config --template` prints.
pub const TEMPLATES: &[(&str, &str)] = &[
    ("tcp", DEFAULT_CONFIG),
    ("rdma", include_str!("../experiments/templates/rdma.toml")),
    ("gpmp", include_str!("../experiments/gpmp/load.toml")),
    (
        "pdtcp",
        include_str!("../experiments/pdtcp/partition_aggregate.toml"),
    ),
];

/// What dcsim does to a topology file's node ids, when it renumbers them.
pub fn renumbering_line(c: &Config) -> Option<String> {
    let ids = c.topology.original_ids()?;
    let all: Vec<(usize, u32)> = ids
        .iter()
        .copied()
        .enumerate()
        .filter(|&(i, id)| id as usize != i)
        .collect();
    if all.is_empty() {
        return None;
    }
    let mut moved: Vec<String> = all
        .iter()
        .take(4)
        .map(|(i, id)| format!("file node {id} is dcsim node {i}"))
        .collect();
    if all.len() > 4 {
        moved.push("...".into());
    }
    let by = match c.topology.node_map().translates() {
        true => "HPCC flow files, [[failures]] and [routing] pin name nodes by the file's ids",
        false => {
            "HPCC flow files name nodes by the file's ids; [[failures]] and [routing] pin by dcsim's (node_ids = \"dcsim\")"
        }
    };
    Some(format!(
        "the topology file's nodes are renumbered, hosts first ({}): {by}; built-in workloads and CSV/JSON flow lists name hosts 0..{} (dcsim's), as do the outputs (fct.csv src/dst, ports.csv node_id/peer_id)",
        moved.join(", "),
        c.topology.n_hosts()
    ))
}

/// One line per scheme that takes its transport's defaults for keys `c` does not set.
pub fn transport_default_lines(c: &Config) -> Vec<String> {
    let mut out = Vec::new();
    for name in &c.schemes {
        let Some(s) = crate::scheme::Scheme::builtin(name) else {
            continue;
        };
        let used: Vec<String> = c
            .transport_defaults(&s)
            .into_iter()
            .filter(|d| !c.explicit.covers(d.key))
            .map(|d| format!("{} = {}", d.key, d.value))
            .collect();
        if !used.is_empty() {
            out.push(format!(
                "{name} takes its transport's defaults (docs/config.md, Defaults per transport): {}",
                used.join(", ")
            ));
        }
    }
    out
}

pub fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run {
            config,
            jobs,
            seed,
            output_dir,
            quiet,
            dry_run,
            skip_existing,
            shard,
            smoke,
            set,
        } => run(
            config.as_deref(),
            &set,
            seed,
            output_dir,
            smoke,
            &RunOpts {
                jobs: jobs.map(usize::from),
                quiet,
                dry_run,
                skip_existing,
                shard: shard.as_deref().map(parse_shard).transpose()?,
            },
        ),
        Cmd::Merge {
            config,
            from,
            output_dir,
            allow_partial,
        } => merge(&config, &from, output_dir, allow_partial),
        Cmd::Validate { config, set } => {
            let c = Config::load_with(Some(&config), &set)?;
            // Expanding the sweep checks every combination of axis values too.
            let runs = experiment::plan(
                &c,
                &config.display().to_string(),
                &Config::base_dir(&config),
            )?;
            let base = Config::base_dir(&config);
            let mut biggest = crate::budget::Estimate::default();
            for p in &runs {
                let e = match crate::budget::available() {
                    Some(limit) => crate::budget::check(&p.config, &base, 1, &limit)
                        .map_err(|e| anyhow::anyhow!("{}: run {}: {e}", config.display(), p.id))?,
                    None => crate::budget::estimate(&p.config, &base),
                };
                if e.total() > biggest.total() {
                    biggest = e;
                }
            }
            println!(
                "{}: ok ({} hosts, {} scheme(s) x {} seed(s) x {} sweep point(s) = {} runs; the largest run needs about {biggest})",
                config.display(),
                c.topology.n_hosts(),
                c.schemes.len(),
                c.seeds,
                runs.len() / (c.schemes.len() * c.seeds as usize),
                runs.len()
            );
            for line in transport_default_lines(&c) {
                println!("{line}");
            }
            if let Some(line) = renumbering_line(&c) {
                println!("{line}");
            }
            let refs: Vec<&experiment::RunPlan> = runs.iter().collect();
            let parallel = rayon::current_num_threads().min(runs.len()).max(1);
            let work = announce_work(&refs, &base, parallel, &config.display().to_string());
            if let Some(line) = work.line {
                println!("{line}");
            }
            Ok(())
        }
        Cmd::Bench { scenario } => bench(&scenario),
        Cmd::Plot {
            config,
            output_dir,
            set,
        } => {
            let mut c = Config::load_with(Some(&config), &set)?;
            if let Some(o) = output_dir {
                c.output_dir = o;
            }
            let dir = c.output_dir.join(&c.name);
            if c.plot.is_empty() {
                eprintln!(
                    "{}: no [[plot]] sections, so no figure to draw (add one; see [[plot]] in docs/config.md)",
                    config.display()
                );
                return Ok(());
            }
            draw_figures(&c, &dir, false)
        }
        Cmd::Schemes => {
            println!(
                "Schemes are <bundle>[+<load balancer>]. Bundles (* comes with its own load balancer):"
            );
            for b in crate::scheme::BUNDLES {
                let fixed = if b.lb.is_some() { "*" } else { " " };
                println!("  {:<17}{fixed} {}", b.name, b.about);
            }
            println!("Load balancers (without one: [switch] load_balancer):");
            for (n, _, d, _) in crate::scheme::SUFFIXES {
                println!("  +{:<17} {d}", n);
            }
            Ok(())
        }
        Cmd::DefaultConfig { template } => {
            let Some((_, text)) = TEMPLATES.iter().find(|(n, _)| *n == template) else {
                let names: Vec<&str> = TEMPLATES.iter().map(|(n, _)| *n).collect();
                bail!(
                    "--template {template}: not a template; the templates are {}",
                    names.join(", ")
                );
            };
            print!("{text}");
            Ok(())
        }
    }
}

fn load(config: Option<&Path>, set: &[String]) -> Result<(Config, PathBuf)> {
    let base = config.map_or_else(|| PathBuf::from("."), Config::base_dir);
    Ok((Config::load_with(config, set)?, base))
}

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
enum RunState {
    /// No complete run (no directory, or no `complete` marker).
    Missing,
    /// Complete, made from the same config, inputs, scheme and seed.
    Complete,
    /// Complete but made from something else: the keys that differ.
    Stale(Vec<String>),
}

/// The state of planned run `p` in `exp_dir`: complete means its `complete` marker (written
/// last) exists; it matches when the marker's hash is the plan's.
fn run_state(exp_dir: &Path, p: &experiment::RunPlan) -> RunState {
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

fn run_complete(exp_dir: &Path, p: &experiment::RunPlan) -> bool {
    run_state(exp_dir, p) == RunState::Complete
}

/// Fails naming the first run in `dir` that is complete but stale, and what changed.
fn refuse_stale<'a>(
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
    let jobs = opts.jobs;
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

/// The experiment's `summary.csv`: every complete run's rows, in plan order.
pub fn write_summary(plans: &[experiment::RunPlan], exp_dir: &Path) -> Result<()> {
    write_summary_to(plans, exp_dir, "summary.csv")
}

/// The experiment-level `manifest.json`: the build, the command, the config (and its file's
/// hash), and every planned run with its config hash and whether it is complete.
fn write_experiment_manifest(
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
fn write_summary_to(plans: &[experiment::RunPlan], exp_dir: &Path, name: &str) -> Result<()> {
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
fn merge(
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
fn copy_run(src: &Path, exp_dir: &Path, id: &str) -> Result<()> {
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

/// Progress display: an overall bar (runs done of total, ETA) and one bar per running run
/// (simulated time against the stop time, or flows finished, and events per second) on an
/// interactive terminal; one plain line per finished run otherwise; nothing when quiet. Under
/// CI (`CI` set) or when stderr is not a terminal, the bars are never drawn.
/// The work estimate of an experiment's runs ([`crate::work`]): a line for people, and the
/// most packet-hops one run may make (for the progress bars). Warnings (a run estimated at
/// more than 10 minutes, timeouts below the round trip) go to stderr, even when quiet.
struct WorkNote {
    line: Option<String>,
    hops_hi: Vec<f64>,
}

fn announce_work(
    plans: &[&experiment::RunPlan],
    base: &std::path::Path,
    parallel: usize,
    file: &str,
) -> WorkNote {
    let mut warned = std::collections::BTreeSet::new();
    let mut hops_hi = Vec::with_capacity(plans.len());
    let (mut total, mut biggest) = ((0.0, 0.0), None::<crate::work::Work>);
    for p in plans {
        for w in crate::work::warnings(&p.config) {
            if warned.insert(w.clone()) {
                eprintln!("warning: {file}: {w}");
            }
        }
        let Some(w) = crate::work::estimate(&p.config, base) else {
            hops_hi.push(0.0);
            continue;
        };
        hops_hi.push(w.hops.1);
        total = (total.0 + w.wall_s.0, total.1 + w.wall_s.1);
        if w.wall_s.0 > crate::work::LONG_RUN_S {
            eprintln!(
                "warning: {file}: run {} is estimated to take {} to {} of wall time ({:.2e} to {:.2e} packet-hops for {:.3e} bytes): a long run, not a hang",
                p.id,
                crate::work::human(w.wall_s.0),
                crate::work::human(w.wall_s.1),
                w.hops.0,
                w.hops.1,
                w.bytes
            );
        }
        if biggest.is_none_or(|b| w.hops.1 > b.hops.1) {
            biggest = Some(w);
        }
    }
    let line = biggest.map(|b| {
        let p = parallel.max(1) as f64;
        // Runs share the cores: at least the total over the cores, at least the longest run.
        let lo = (total.0 / p).max(b.wall_s.0);
        let hi = (total.1 / p).max(b.wall_s.1);
        if lo > crate::work::LONG_RUN_S && plans.len() > 1 {
            eprintln!(
                "warning: {file}: the {} runs are estimated to take {} to {} of wall time at -j {parallel}",
                plans.len(),
                crate::work::human(lo),
                crate::work::human(hi)
            );
        }
        format!(
            "estimated work (rough: without retransmissions; docs/usage.md): the largest run {:.2e} to {:.2e} packet-hops; {} run(s) at -j {parallel}: {} to {} of wall time",
            b.hops.0,
            b.hops.1,
            plans.len(),
            crate::work::human(lo),
            crate::work::human(hi)
        )
    });
    WorkNote { line, hops_hi }
}

struct Bars {
    quiet: bool,
    multi: Option<(indicatif::MultiProgress, indicatif::ProgressBar)>,
    total: usize,
    done: std::sync::atomic::AtomicUsize,
}

impl Bars {
    fn new(quiet: bool, total: usize) -> Self {
        use std::io::IsTerminal;
        let interactive = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        let multi = (!quiet && interactive).then(|| {
            let m = indicatif::MultiProgress::new();
            // In thousandths of a run, so that a run in progress moves it (and its ETA).
            let overall = m.add(indicatif::ProgressBar::new(total as u64 * 1000));
            overall.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {msg}, ETA {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            overall.set_message(format!("0/{total} runs"));
            overall.tick();
            (m, overall)
        });
        Bars {
            quiet,
            multi,
            total,
            done: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// A bar for one run (None when bars are off).
    fn run_bar(&self, id: &str) -> Option<(indicatif::ProgressBar, std::time::Instant)> {
        let (m, _) = self.multi.as_ref()?;
        let b = m.add(indicatif::ProgressBar::new(1000));
        b.set_style(
            indicatif::ProgressStyle::with_template("  {prefix:<32} [{bar:20}] {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        b.set_prefix(id.to_string());
        Some((b, std::time::Instant::now()))
    }

    /// A run's progress: its bar moves by simulated time (with a stop time) or by the larger
    /// of the flows finished and the packet-hops made out of the most estimated (`hops_hi`),
    /// with an ETA from the fraction done; the overall bar moves by as much.
    fn update(
        &self,
        bar: &Option<(indicatif::ProgressBar, std::time::Instant)>,
        p: crate::sim::Progress,
        hops_hi: f64,
    ) {
        let Some((b, t0)) = bar else {
            return;
        };
        let wall = t0.elapsed().as_secs_f64().max(1e-9);
        let evs = p.events as f64 / wall;
        let sim_ms = p.now.0 as f64 / 1e9;
        let frac = if p.stop_time != crate::sim::NO_STOP {
            p.now.0 as f64 / p.stop_time.0.max(1) as f64
        } else {
            let flows = p.finished as f64 / p.total.max(1) as f64;
            let hops = if hops_hi > 0.0 {
                p.packet_hops as f64 / hops_hi
            } else {
                0.0
            };
            flows.max(hops)
        }
        .clamp(0.0, 0.999);
        let pos = (frac * 1000.0) as u64;
        let eta = if frac > 0.0 {
            crate::work::human(wall * (1.0 - frac) / frac)
        } else {
            "unknown".into()
        };
        if let Some((_, overall)) = &self.multi {
            overall.inc(pos.saturating_sub(b.position()));
        }
        b.set_position(pos.max(b.position()));
        if p.stop_time != crate::sim::NO_STOP {
            b.set_message(format!(
                "{sim_ms:.3} of {:.3} ms simulated, {:.1} M events/s, ETA {eta}",
                p.stop_time.0 as f64 / 1e9,
                evs / 1e6
            ));
        } else {
            b.set_message(format!(
                "{}/{} flows, {sim_ms:.3} ms simulated, {:.1} M events/s, ETA {eta}",
                p.finished,
                p.total,
                evs / 1e6
            ));
        }
    }

    /// A run ended: its bar goes, the overall bar takes the rest of its thousandths.
    fn run_finished(&self, bar: &Option<(indicatif::ProgressBar, std::time::Instant)>) {
        let done = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if let (Some((b, _)), Some((_, overall))) = (bar, &self.multi) {
            overall.inc(1000u64.saturating_sub(b.position()));
            overall.set_message(format!("{done}/{} runs", self.total));
            b.finish_and_clear();
        }
    }

    fn run_done(&self, line: &str) {
        match &self.multi {
            Some((m, _)) => {
                let _ = m.println(line);
            }
            None if !self.quiet => eprintln!("{line}"),
            None => {}
        }
    }

    fn finish(&self) {
        if let Some((_, overall)) = &self.multi {
            overall.finish_and_clear();
        }
    }
}

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
fn draw_figure(
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
fn smoke_title(title: &str) -> String {
    if title.is_empty() {
        "smoke run (one seed, reduced workload)".to_string()
    } else {
        format!("{title} [smoke run: one seed, reduced workload]")
    }
}

/// The hidden temporary name a figure is drawn under before it is renamed into place.
fn partial(exp_dir: &Path, file: &str) -> PathBuf {
    exp_dir.join(format!(".{file}.partial"))
}

/// The series of a queue time-series figure: per scheme, the first seed's run at `at`.
fn queue_series(
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
fn flow_series(
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

fn run(
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
    let results = run_experiment(&cfg, &file, &base, opts)?;
    if !results.is_empty() {
        print!("{}", report::table(&results));
    }
    Ok(())
}

/// The fat-tree benchmark scenario of the foundation issue.
pub const BENCH_FAT_TREE: &str = include_str!("../experiments/bench_fat_tree.toml");

fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn bench(scenario: &str) -> Result<()> {
    match scenario {
        "all" => {
            // One process per scenario so that peak memory is per scenario.
            let exe = std::env::current_exe()?;
            for s in ["default", "fat-tree"] {
                let st = std::process::Command::new(&exe)
                    .args(["bench", "--scenario", s])
                    .status()?;
                if !st.success() {
                    bail!("benchmark {s} failed");
                }
            }
            Ok(())
        }
        "default" | "fat-tree" => {
            let (mut cfg, name) = if scenario == "default" {
                (
                    Config::default_experiment(),
                    "default (16-host leaf-spine, 10G, web search 0.6, 3000 flows; TCP and DCTCP runs)",
                )
            } else {
                let c = Config::parse(BENCH_FAT_TREE, "<bench fat-tree>")?;
                c.validate("<bench fat-tree>", Path::new("."))?;
                (
                    c,
                    "fat-tree (k=8, 128 hosts, 100G, 1us, 1000B MSS, web search 0.3, DCTCP, 10 ms)",
                )
            };
            cfg.seeds = 1;
            let mut events = 0u64;
            let mut hops = 0u64;
            let mut wall = 0.0;
            let mut sim_ps = 0u64;
            for p in experiment::plan(&cfg, "<bench>", Path::new("."))? {
                let r = experiment::execute(&p.config, Path::new("."), &p)
                    .map_err(anyhow::Error::msg)?;
                events += r.totals.events;
                hops += r.totals.packet_hops;
                wall += r.wall_seconds;
                sim_ps += r.totals.sim_end_ps;
            }
            println!("scenario: {name}");
            println!("  simulated time:     {:.3} ms", sim_ps as f64 / 1e9);
            println!("  wall time:          {wall:.3} s (single-threaded, including setup)");
            println!(
                "  events:             {events}  ({:.2} M/s)",
                events as f64 / wall / 1e6
            );
            println!(
                "  packet-hops:        {hops}  ({:.2} M/s)",
                hops as f64 / wall / 1e6
            );
            if let Some(m) = peak_rss_mib() {
                println!("  peak memory (RSS):  {m:.1} MiB");
            }
            Ok(())
        }
        "scale" => {
            // One process per point so that peak memory is per point.
            let exe = std::env::current_exe()?;
            println!(
                "scaling: fat-trees at 100 Gbps, DCTCP, single-threaded; web search at load 0.3, or a permutation of 2 MB flows"
            );
            println!(
                "{:>3} {:>6} {:>12} {:>10} {:>9} {:>13} {:>9} {:>10}",
                "k",
                "hosts",
                "workload",
                "sim (ms)",
                "wall (s)",
                "packet-hops",
                "ns/hop",
                "peak MiB"
            );
            for (k, wl) in SCALE_POINTS {
                let out = std::process::Command::new(&exe)
                    .args(["bench", "--scenario", &format!("scale:{k}:{wl}")])
                    .output()?;
                if !out.status.success() {
                    bail!(
                        "scale point k={k} {wl} failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
                print!("{}", String::from_utf8_lossy(&out.stdout));
            }
            Ok(())
        }
        point if point.starts_with("scale:") => {
            let parts: Vec<&str> = point.split(':').collect();
            let (Some(k), Some(wl)) = (
                parts.get(1).and_then(|k| k.parse::<u32>().ok()),
                parts.get(2),
            ) else {
                bail!("`{point}`: expected scale:<k>:<websearch|permutation>");
            };
            let cfg = scale_config(k, wl)?;
            let mut hops = 0u64;
            let mut wall = 0.0;
            let mut sim_ps = 0u64;
            for p in experiment::plan(&cfg, "<bench scale>", Path::new("."))? {
                let r = experiment::execute(&p.config, Path::new("."), &p)
                    .map_err(anyhow::Error::msg)?;
                hops += r.totals.packet_hops;
                wall += r.wall_seconds;
                sim_ps += r.totals.sim_end_ps;
            }
            println!(
                "{k:>3} {:>6} {wl:>12} {:>10.3} {wall:>9.2} {hops:>13} {:>9.1} {:>10.1}",
                cfg.topology.n_hosts(),
                sim_ps as f64 / 1e9,
                wall * 1e9 / hops.max(1) as f64,
                peak_rss_mib().unwrap_or(f64::NAN)
            );
            Ok(())
        }
        other => bail!("unknown scenario `{other}`: use default, fat-tree, scale or all"),
    }
}

/// The scaling benchmark's points: fat-tree arity and workload.
const SCALE_POINTS: &[(u32, &str)] = &[
    (4, "websearch"),
    (8, "websearch"),
    (16, "websearch"),
    (32, "websearch"),
    (4, "permutation"),
    (8, "permutation"),
    (16, "permutation"),
];

/// The benchmark fat-tree (scenario b) at arity `k` with web search at load 0.3 (simulated
/// for 5 ms up to k = 8, 2 ms at k = 16, 1 ms at k = 32) or a permutation of 2 MB flows (to
/// completion).
fn scale_config(k: u32, wl: &str) -> Result<Config> {
    let mut t: toml::Table = toml::from_str(BENCH_FAT_TREE)?;
    let set = |t: &mut toml::Table, key: &str, v: toml::Value| {
        crate::sweep::set_key(t, key, v).map_err(anyhow::Error::msg)
    };
    set(&mut t, "topology.k", toml::Value::Integer(k as i64))?;
    set(
        &mut t,
        "name",
        toml::Value::String(format!("bench-scale-k{k}-{wl}")),
    )?;
    let ms = match k {
        0..=8 => 5,
        9..=16 => 2,
        _ => 1,
    };
    match wl {
        "websearch" => {
            set(&mut t, "stop_time", toml::Value::String(format!("{ms}ms")))?;
            set(
                &mut t,
                "workload.until",
                toml::Value::String(format!("{ms}ms")),
            )?;
        }
        "permutation" => {
            t.remove("stop_time");
            let mut w = toml::Table::new();
            w.insert("kind".into(), toml::Value::String("permutation".into()));
            w.insert("size".into(), toml::Value::String("2MB".into()));
            t.insert("workload".into(), toml::Value::Table(w));
        }
        other => bail!("unknown scale workload `{other}`: websearch or permutation"),
    }
    let text = toml::to_string(&t)?;
    let mut c = Config::parse(&text, "<bench scale>")?;
    c.validate("<bench scale>", Path::new("."))?;
    c.seeds = 1;
    Ok(c)
}
