//! `dcsim bench`: the built-in benchmark scenarios (fat-tree, scale points), reporting
//! simulated events and packet-hops per wall-clock second and peak memory.

use super::*;

/// The fat-tree benchmark scenario of the foundation issue.
pub const BENCH_FAT_TREE: &str = include_str!("../../experiments/bench_fat_tree.toml");

/// The mixture-of-experts iteration of `experiments/ai/`, the AI benchmark's workload.
const BENCH_MOE: &str = include_str!("../../experiments/ai/moe.toml");

/// The AI benchmark's points: GPUs.
pub(in crate::cli) const AI_POINTS: &[u32] = &[128, 1024];

pub(in crate::cli) fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// What a partitioned run's kernel measured, in one line (`dcsim bench -t`).
fn window_line(w: &crate::sim::window::WindowStats, hops: u64) -> String {
    let barrier = w.barrier_s.iter().sum::<f64>() / w.barrier_s.len().max(1) as f64;
    format!(
        "{} partitions on {} threads: {} windows ({} on one thread), {:.0} events per window, \
         {:.1} % of events crossing partitions ({:.2} per packet-hop), event imbalance {:.2} \
         (busiest partition over the mean, window by window), time imbalance {:.2} (busiest \
         thread over the mean), barrier wait {:.3} s per thread, coordinator {:.3} s",
        w.partitions,
        w.threads,
        w.windows,
        w.solo_windows,
        w.events as f64 / w.windows.max(1) as f64,
        100.0 * w.messages as f64 / w.events.max(1) as f64,
        w.messages as f64 / hops.max(1) as f64,
        w.event_imbalance(),
        w.imbalance(),
        barrier,
        w.coordinator_s
    ) + &match w.packed_bytes {
        0 => String::new(),
        b => format!(
            ", {:.0} bytes packed per window ({:.1} per message)",
            b as f64 / w.windows.max(1) as f64,
            b as f64 / w.messages.max(1) as f64
        ),
    }
}

/// How `dcsim bench` runs its scenarios.
pub(in crate::cli) struct BenchOpts {
    /// Threads per run.
    pub threads: u32,
    /// Partitions per run (at least the threads).
    pub partitions: u32,
    /// A scale point's simulated time (web search), when not the point's own.
    pub sim_time: Option<String>,
    /// How messages between partitions travel (`[run] exchange`).
    pub exchange: crate::config::Exchange,
}

impl BenchOpts {
    /// The options as `dcsim bench` arguments, for a child process.
    fn args(&self) -> Vec<String> {
        let mut a = vec![
            "-t".to_string(),
            self.threads.to_string(),
            "-p".into(),
            self.partitions.to_string(),
        ];
        if let Some(t) = &self.sim_time {
            a.extend(["--sim-time".into(), t.clone()]);
        }
        if self.exchange == crate::config::Exchange::Bytes {
            a.extend(["--exchange".into(), "bytes".into()]);
        }
        a
    }

    /// Splits `run` as these options say.
    fn apply(&self, run: &mut crate::config::RunConfig) {
        run.threads = self.threads;
        run.partitions = self.partitions;
        run.exchange = self.exchange;
    }

    /// How a run is split, for the scenario's heading.
    fn split(&self) -> String {
        match (self.threads, self.partitions.max(self.threads)) {
            (1, 1) => "single-threaded".into(),
            (t, p) if p == t => format!("{t} threads a run"),
            (t, p) => format!("{p} partitions on {t} thread(s) a run"),
        }
    }
}

pub(in crate::cli) fn bench(scenario: &str, o: &BenchOpts) -> Result<()> {
    match scenario {
        "all" => {
            // One process per scenario so that peak memory is per scenario.
            let exe = std::env::current_exe()?;
            for s in ["default", "fat-tree"] {
                let st = std::process::Command::new(&exe)
                    .args(["bench", "--scenario", s])
                    .args(o.args())
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
            o.apply(&mut cfg.run);
            let mut events = 0u64;
            let mut hops = 0u64;
            let mut wall = 0.0;
            let mut sim_ps = 0u64;
            let mut windows = Vec::new();
            for p in experiment::plan(&cfg, "<bench>", Path::new("."))? {
                let r = experiment::execute(&p.config, Path::new("."), &p)
                    .map_err(anyhow::Error::msg)?;
                events += r.totals.events;
                hops += r.totals.packet_hops;
                wall += r.wall_seconds;
                sim_ps += r.totals.sim_end_ps;
                if let Some(w) = r.window {
                    windows.push((p.id.clone(), w, r.totals.packet_hops));
                }
            }
            println!("scenario: {name}");
            println!("  simulated time:     {:.3} ms", sim_ps as f64 / 1e9);
            println!(
                "  wall time:          {wall:.3} s ({}, including setup)",
                o.split()
            );
            for (id, w, h) in &windows {
                println!("  {id}: {}", window_line(w, *h));
            }
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
            println!(
                "scaling: fat-trees at 100 Gbps, DCTCP, {}; web search at load 0.3, or a permutation of 2 MB flows",
                o.split()
            );
            println!(
                "{:>3} {:>6} {:>12} {:>10} {:>9} {:>13} {:>9} {:>10} {:>9} {:>9} {:>13}",
                "k",
                "hosts",
                "workload",
                "sim (ms)",
                "wall (s)",
                "packet-hops",
                "ns/hop",
                "peak MiB",
                "Mev/s",
                "Mhop/s",
                "events"
            );
            for (k, wl) in SCALE_POINTS {
                point_in_child(&format!("scale:{k}:{wl}"), o)?;
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
            let mut cfg = scale_config(k, wl, o.sim_time.as_deref())?;
            o.apply(&mut cfg.run);
            let mut hops = 0u64;
            let mut events = 0u64;
            let mut wall = 0.0;
            let mut sim_ps = 0u64;
            let mut window = None;
            for p in experiment::plan(&cfg, "<bench scale>", Path::new("."))? {
                let r = experiment::execute(&p.config, Path::new("."), &p)
                    .map_err(anyhow::Error::msg)?;
                hops += r.totals.packet_hops;
                events += r.totals.events;
                wall += r.wall_seconds;
                sim_ps += r.totals.sim_end_ps;
                window = r.window;
            }
            println!(
                "{k:>3} {:>6} {wl:>12} {:>10.3} {wall:>9.2} {hops:>13} {:>9.1} {:>10.1} {:>9.2} {:>9.2} {events:>13}",
                cfg.topology.n_hosts(),
                sim_ps as f64 / 1e9,
                // No packet-hops (a point cut before any packet, to time setup): no cost per hop.
                if hops > 0 {
                    wall * 1e9 / hops as f64
                } else {
                    f64::NAN
                },
                peak_rss_mib().unwrap_or(f64::NAN),
                events as f64 / wall / 1e6,
                hops as f64 / wall / 1e6
            );
            if let Some(w) = &window {
                println!("      {}", window_line(w, hops));
            }
            Ok(())
        }
        "ai" => {
            println!(
                "AI training: one MoE iteration (experiments/ai/moe.toml, rail wiring, DCQCN) on \
                 rail fabrics of 8-GPU servers, 400 Gbps NICs, {}",
                o.split()
            );
            println!(
                "{:>6} {:>8} {:>14} {:>9} {:>13} {:>9} {:>10} {:>9} {:>9} {:>10}",
                "gpus",
                "flows",
                "iteration (ms)",
                "wall (s)",
                "packet-hops",
                "ns/hop",
                "peak MiB",
                "Mev/s",
                "Mhop/s",
                "setup (s)"
            );
            for g in AI_POINTS {
                point_in_child(&format!("ai:{g}"), o)?;
            }
            Ok(())
        }
        point if point.starts_with("ai:") => {
            let Some(gpus) = point[3..].parse::<u32>().ok() else {
                bail!("`{point}`: expected ai:<gpus> (a multiple of 128)");
            };
            let mut cfg = ai_config(gpus)?;
            o.apply(&mut cfg.run);
            let started = std::time::Instant::now();
            let plans = experiment::plan(&cfg, "<bench ai>", Path::new("."))?;
            let mut line = String::new();
            for p in plans {
                let r = experiment::execute(&p.config, Path::new("."), &p)
                    .map_err(anyhow::Error::msg)?;
                let iteration = r
                    .iterations
                    .first()
                    .and_then(|i| i.time_ps)
                    .map_or(f64::NAN, |t| t as f64 / 1e9);
                let total = started.elapsed().as_secs_f64();
                let hops = r.totals.packet_hops;
                line = format!(
                    "{gpus:>6} {:>8} {iteration:>14.2} {:>9.2} {hops:>13} {:>9.1} {:>10.1} {:>9.2} {:>9.2} {:>10.2}",
                    r.records.len(),
                    r.wall_seconds,
                    r.wall_seconds * 1e9 / hops.max(1) as f64,
                    peak_rss_mib().unwrap_or(f64::NAN),
                    r.totals.events as f64 / r.wall_seconds / 1e6,
                    hops as f64 / r.wall_seconds / 1e6,
                    total - r.wall_seconds
                );
                if let Some(w) = &r.window {
                    line += &format!("\n      {}", window_line(w, hops));
                }
            }
            println!("{line}");
            Ok(())
        }
        other => bail!("unknown scenario `{other}`: use default, fat-tree, scale, ai or all"),
    }
}

/// Runs benchmark point `scenario` in a child process (so that its peak memory is its own)
/// and prints its line.
fn point_in_child(scenario: &str, o: &BenchOpts) -> Result<()> {
    let out = std::process::Command::new(std::env::current_exe()?)
        .args(["bench", "--scenario", scenario])
        .args(o.args())
        .output()?;
    if !out.status.success() {
        bail!(
            "benchmark point {scenario} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    print!("{}", String::from_utf8_lossy(&out.stdout));
    Ok(())
}

/// The scaling benchmark's points: fat-tree arity and workload.
pub(in crate::cli) const SCALE_POINTS: &[(u32, &str)] = &[
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
pub(in crate::cli) fn scale_config(k: u32, wl: &str, sim_time: Option<&str>) -> Result<Config> {
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
    let time = match (sim_time, k) {
        (Some(t), _) => t.to_string(),
        (None, 0..=8) => "5ms".into(),
        (None, 9..=16) => "2ms".into(),
        (None, _) => "1ms".into(),
    };
    match wl {
        "websearch" => {
            set(&mut t, "stop_time", toml::Value::String(time.clone()))?;
            set(&mut t, "workload.until", toml::Value::String(time))?;
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

/// The AI benchmark at `gpus` GPUs: `experiments/ai/moe.toml`'s iteration on its rail fabric
/// (rail wiring, DCQCN), grown by data parallelism: `gpus / 8` servers in groups of 16 (every
/// rail switch joined to 16 spines), dp = `gpus / 8`, 256MB switch buffers.
pub(in crate::cli) fn ai_config(gpus: u32) -> Result<Config> {
    if gpus == 0 || !gpus.is_multiple_of(128) || gpus > 32_768 {
        bail!("ai:{gpus}: the GPUs must be a multiple of 128, at most 32768");
    }
    let mut t: toml::Table = toml::from_str(BENCH_MOE)?;
    t.remove("sweep");
    t.remove("plot");
    let set = |t: &mut toml::Table, key: &str, v: toml::Value| {
        crate::sweep::set_key(t, key, v).map_err(anyhow::Error::msg)
    };
    let servers = (gpus / 8) as i64;
    set(
        &mut t,
        "name",
        toml::Value::String(format!("bench-ai-{gpus}")),
    )?;
    set(
        &mut t,
        "schemes",
        toml::Value::Array(vec![toml::Value::String("DCQCN".into())]),
    )?;
    set(&mut t, "topology.servers", toml::Value::Integer(servers))?;
    set(
        &mut t,
        "topology.servers_per_group",
        toml::Value::Integer(16),
    )?;
    set(
        &mut t,
        "topology.wiring",
        toml::Value::String("rail".into()),
    )?;
    set(&mut t, "workload.dp", toml::Value::Integer(servers))?;
    // A spine joins every rail switch: 64 ports at 1,024 GPUs, whose PFC headroom (three
    // lossless priorities of 400 Gbps over 1 us links) outgrows the default 128MB buffer.
    set(
        &mut t,
        "switch.buffer.size",
        toml::Value::String("256MB".into()),
    )?;
    let text = toml::to_string(&t)?;
    let mut c = Config::parse(&text, "<bench ai>")?;
    c.validate("<bench ai>", Path::new("."))?;
    c.seeds = 1;
    Ok(c)
}
