//! The command-line interface: `dcsim run`, `validate`, `bench`, `schemes`, `default-config`.

use crate::config::{Config, DEFAULT_CONFIG};
use crate::experiment::{self, RunResult};
use crate::report;
use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

mod bench;
mod figures;
mod progress;
mod run;
mod summary;
pub use bench::*;
pub use figures::*;
use progress::*;
pub use run::*;
pub use summary::*;

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
        /// Parallel runs, 1..=1024 (default: all cores, divided by the threads of a run).
        /// Results do not depend on it.
        #[arg(short = 'j', long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        jobs: Option<u16>,
        /// Threads per run, 1..=1024 (`[run] threads`): the run is split into partitions
        /// that run at once. Results do not depend on it.
        #[arg(short = 't', long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: Option<u16>,
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
        /// memory scale), `ai` (an MoE training iteration on rail fabrics of 128 and 1,024
        /// GPUs; one point: `ai:<gpus>`) or `all` (default, then fat-tree).
        #[arg(long, default_value = "all")]
        scenario: String,
        /// Threads per run (`[run] threads`), 1..=1024; above 1 the window statistics of the
        /// partitioned kernel are reported too.
        #[arg(short = 't', long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: u16,
        /// Partitions per run (`[run] partitions`), 1..=4096 (default: the threads); more
        /// partitions than threads run in turns, so the window statistics (crossing share,
        /// event imbalance) of many partitions can be measured on few cores.
        #[arg(short = 'p', long, value_parser = clap::value_parser!(u16).range(1..=4096))]
        partitions: Option<u16>,
        /// Simulated time of a `scale` point's web search (e.g. `0.2ms`; default 5 ms up to
        /// k = 8, 2 ms at k = 16, 1 ms beyond).
        #[arg(long, value_name = "TIME")]
        sim_time: Option<String>,
        /// How messages between partitions travel (`[run] exchange`): `memory`, or `bytes`
        /// (packed as between processes; reports the bytes per window).
        #[arg(long, default_value = "memory", value_parser = ["memory", "bytes"])]
        exchange: String,
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
    (
        "rdma",
        include_str!("../../experiments/templates/rdma.toml"),
    ),
    ("gpmp", include_str!("../../experiments/gpmp/load.toml")),
    (
        "pdtcp",
        include_str!("../../experiments/pdtcp/partition_aggregate.toml"),
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

/// `--set` overrides with `-t N` as `run.threads=N` (last, so it wins).
fn with_threads(mut set: Vec<String>, threads: Option<u16>) -> Vec<String> {
    if let Some(t) = threads {
        set.push(format!("run.threads={t}"));
    }
    set
}

pub fn main() -> Result<()> {
    let cli = Cli::parse();
    // Launched by `mpirun` or `srun`: join the job (MPI is finalised when this is dropped).
    let mpi = experiment::init_procs().map_err(|e| anyhow::anyhow!(e))?;
    let r = command(cli);
    if r.is_err() && experiment::procs().is_some() {
        // The other ranks may be waiting in a collective for this one: finalising would
        // wait with them. Exiting with an error makes the launcher end the job.
        mpi.abandon();
    }
    r
}

/// Runs the command `cli` names.
fn command(cli: Cli) -> Result<()> {
    if experiment::procs().is_some() && !matches!(cli.cmd, Cmd::Run { .. }) {
        bail!("only `dcsim run` runs on several MPI processes");
    }
    match cli.cmd {
        Cmd::Run {
            config,
            jobs,
            threads,
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
            &with_threads(set, threads),
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
            let mut parts = 1u64;
            for p in &runs {
                let e = match crate::budget::available() {
                    Some(limit) => crate::budget::check(&p.config, &base, 1, &limit)
                        .map_err(|e| anyhow::anyhow!("{}: run {}: {e}", config.display(), p.id))?,
                    None => crate::budget::estimate(&p.config, &base),
                };
                let n = p.config.run.split() as u64;
                if e.split(n) > biggest.split(parts) {
                    biggest = e;
                    parts = n;
                }
            }
            let split = match parts {
                1 => String::new(),
                n => format!(
                    " unsplit, {} split into {n} partitions",
                    crate::budget::gib(biggest.split(n))
                ),
            };
            println!(
                "{}: ok ({} hosts, {} scheme(s) x {} seed(s) x {} sweep point(s) = {} runs; the largest run needs about {biggest}{split})",
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
        Cmd::Bench {
            scenario,
            threads,
            partitions,
            sim_time,
            exchange,
        } => bench(
            &scenario,
            &BenchOpts {
                threads: threads as u32,
                partitions: partitions.map_or(threads as u32, u32::from),
                sim_time,
                exchange: match exchange.as_str() {
                    "bytes" => crate::config::Exchange::Bytes,
                    _ => crate::config::Exchange::Memory,
                },
            },
        ),
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
                "Schemes are <bundle>[+<load balancer>]. Bundles (RDMA ones default to ECMP; * fixes its own load balancer):"
            );
            for b in crate::scheme::BUNDLES {
                let fixed = if b.lb_fixed { "*" } else { " " };
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
