//! What a run says while it works: the announced work (runs, cores, the largest run's
//! estimate) and the progress bars.

use super::*;

/// Progress display: an overall bar (runs done of total, ETA) and one bar per running run
/// (simulated time against the stop time, or flows finished, and events per second) on an
/// interactive terminal; one plain line per finished run otherwise; nothing when quiet. Under
/// CI (`CI` set) or when stderr is not a terminal, the bars are never drawn.
/// The work estimate of an experiment's runs ([`crate::work`]): a line for people, and the
/// most packet-hops one run may make (for the progress bars). Warnings (a run estimated at
/// more than 10 minutes, timeouts below the round trip) go to stderr, even when quiet.
pub(in crate::cli) struct WorkNote {
    pub(in crate::cli) line: Option<String>,
    pub(in crate::cli) hops_hi: Vec<f64>,
}

pub(in crate::cli) fn announce_work(
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

pub(in crate::cli) struct Bars {
    quiet: bool,
    multi: Option<(indicatif::MultiProgress, indicatif::ProgressBar)>,
    total: usize,
    done: std::sync::atomic::AtomicUsize,
}

impl Bars {
    pub(in crate::cli) fn new(quiet: bool, total: usize) -> Self {
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
    pub(in crate::cli) fn run_bar(
        &self,
        id: &str,
    ) -> Option<(indicatif::ProgressBar, std::time::Instant)> {
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
    pub(in crate::cli) fn update(
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
    pub(in crate::cli) fn run_finished(
        &self,
        bar: &Option<(indicatif::ProgressBar, std::time::Instant)>,
    ) {
        let done = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if let (Some((b, _)), Some((_, overall))) = (bar, &self.multi) {
            overall.inc(1000u64.saturating_sub(b.position()));
            overall.set_message(format!("{done}/{} runs", self.total));
            b.finish_and_clear();
        }
    }

    pub(in crate::cli) fn run_done(&self, line: &str) {
        match &self.multi {
            Some((m, _)) => {
                let _ = m.println(line);
            }
            None if !self.quiet => eprintln!("{line}"),
            None => {}
        }
    }

    pub(in crate::cli) fn finish(&self) {
        if let Some((_, overall)) = &self.multi {
            overall.finish_and_clear();
        }
    }
}
