//! The windowed kernel's driver: the coordinator that decides between windows (has the run
//! ended? which flows start? which samples are due? where does the next window end?), and
//! the threads that run the partitions' windows and exchange their messages.

use super::merge::merge;
use super::*;
use crate::engine::barrier::SpinBarrier;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// What the windowed kernel measured of its own work.
#[derive(Clone, Debug, Default)]
pub struct WindowStats {
    /// Windows run (each ended by a barrier).
    pub windows: u64,
    /// Messages between partitions (packets over cut links, PFC frames, dependencies).
    pub messages: u64,
    /// Threads that ran the partitions.
    pub threads: usize,
    /// Per thread: time spent handling its partitions' events and messages (s).
    pub busy_s: Vec<f64>,
    /// Per thread: time spent waiting at barriers (s).
    pub barrier_s: Vec<f64>,
    /// Time the coordinator spent between windows (end checks, samples, next window) (s).
    pub coordinator_s: f64,
    /// Windows run on one thread because the one before held few events.
    pub solo_windows: u64,
    /// Events handled (every partition's; the run's own events once per partition).
    pub events: u64,
    /// Partitions the run was split into.
    pub partitions: usize,
    /// Bytes the messages between partitions were packed into (`[run] exchange = "bytes"`;
    /// what processes would send each other).
    pub packed_bytes: u64,
    /// Summed over windows: the events of the window's busiest partition. With one core per
    /// partition, a window lasts as long as its busiest partition takes.
    pub busiest_events: u64,
    /// Bytes this process sent the run's other processes (MPI), messages only.
    pub shipped_bytes: u64,
}

impl WindowStats {
    /// The busiest thread's busy time over the mean (1: perfectly balanced).
    pub fn imbalance(&self) -> f64 {
        let n = self.busy_s.len().max(1) as f64;
        let mean = self.busy_s.iter().sum::<f64>() / n;
        let max = self.busy_s.iter().cloned().fold(0.0, f64::max);
        if mean > 0.0 { max / mean } else { 1.0 }
    }

    /// Event imbalance with one core per partition: the windows' busiest partitions' events
    /// over the mean partition's (1: every window evenly split). A count, so it does not move
    /// with the machine, unlike [`WindowStats::imbalance`].
    pub fn event_imbalance(&self) -> f64 {
        let mean = self.events as f64 / self.partitions.max(1) as f64;
        if mean > 0.0 {
            self.busiest_events as f64 / mean
        } else {
            1.0
        }
    }
}

/// A run split into partitions, run window by window (see the module).
pub struct Windowed {
    /// This process's partitions (all of them, in one process).
    parts: Vec<Mutex<Sim>>,
    /// Their numbers.
    ids: Vec<usize>,
    /// The processes the run is spread over (None: this one only).
    procs: Option<Arc<dyn Procs>>,
    /// The time series (`[timeseries]`), sampled from every partition between windows.
    sampler: Option<Box<timeseries::Sampler>>,
    map: PartitionMap,
    shuffle: RngStream,
    /// The instants of the run's own events (failures and their route recomputations).
    run_events: Vec<SimTime>,
    /// Messages cross packed into bytes (`[run] exchange = "bytes"`).
    packed: bool,
    pub stats: WindowStats,
}

/// What a worker thread measured of itself.
#[derive(Clone, Copy, Debug, Default)]
struct WorkerTimes {
    busy: f64,
    waited: f64,
    sent: u64,
    /// Bytes the messages it delivered were packed into.
    packed: u64,
    /// Bytes sent to other processes.
    shipped: u64,
    solo: u64,
}

/// A window that follows one of fewer events runs on one thread (the barriers of a shared
/// window cost about as much as a few hundred events on two cores, more when threads outnumber
/// cores); the outputs do not depend on it.
const SOLO_EVENTS: u64 = 512;

/// Locks a partition (a panic elsewhere aborts the run, so a poisoned lock is not waited on).
fn lock(m: &Mutex<Sim>) -> MutexGuard<'_, Sim> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The cells messages cross in: cell `from · n + to` holds what partition `from` sent
/// partition `to` in the last window (one writer, then one reader: a barrier between).
struct Cells {
    n: usize,
    cells: Vec<Mutex<Vec<Remote>>>,
    /// Whether a cell holds messages (read before locking it).
    full: Vec<AtomicBool>,
    /// Messages cross packed into bytes and unpacked (`[run] exchange = "bytes"`).
    packed: bool,
}

impl Cells {
    fn new(n: usize, packed: bool) -> Self {
        Cells {
            n,
            cells: (0..n * n).map(|_| Mutex::new(Vec::new())).collect(),
            full: (0..n * n).map(|_| AtomicBool::new(false)).collect(),
            packed,
        }
    }

    fn cell(&self, from: usize, to: usize) -> MutexGuard<'_, Vec<Remote>> {
        self.cells[from * self.n + to]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs partition `i` up to `end` and posts what it sent; returns the messages posted.
fn run_part(part: &Mutex<Sim>, i: usize, end: SimTime, cells: &Cells) -> u64 {
    let mut s = lock(part);
    s.run_window(end);
    let part = s.part.as_mut().expect("partitioned");
    let mut sent = 0;
    for to in part.touched.drain(..) {
        let v = &mut part.outbox[to as usize];
        sent += v.len() as u64;
        // The cell's emptied vector comes back: its capacity is reused.
        std::mem::swap(v, &mut *cells.cell(i, to as usize));
        cells.full[i * cells.n + to as usize].store(true, Ordering::Release);
    }
    sent
}

/// Hands partition `i` everything posted to it in the last window; returns the bytes the
/// messages were packed into (none unless they cross packed).
fn deliver(part: &Mutex<Sim>, i: usize, cells: &Cells) -> u64 {
    let mut s = lock(part);
    let mut packed = 0;
    for from in 0..cells.n {
        let full = &cells.full[from * cells.n + i];
        if !full.load(Ordering::Acquire) {
            continue;
        }
        full.store(false, Ordering::Relaxed);
        let mut c = cells.cell(from, i);
        if cells.packed {
            // Through bytes and back, as between processes.
            let mut bytes = Vec::new();
            wire::pack(&c, &mut bytes);
            packed += bytes.len() as u64;
            *c = wire::unpack(&bytes).expect("this binary unpacks what it packed");
        }
        for r in c.drain(..) {
            s.receive(r);
        }
    }
    packed
}

/// Sends other processes what this one's partitions (`ids`) posted to theirs, and posts
/// what theirs sent this one's; returns the bytes sent. A process's buffer is a sequence of
/// frames: sender and receiver partition (u32 each), length (u64), the packed messages.
fn exchange(procs: &dyn Procs, cells: &Cells, ids: &[usize]) -> u64 {
    let n = cells.n;
    let mut out: Vec<Vec<u8>> = vec![Vec::new(); procs.size()];
    for &from in ids {
        for to in (0..n).filter(|&to| !procs.holds(to)) {
            let full = &cells.full[from * n + to];
            if !full.load(Ordering::Acquire) {
                continue;
            }
            full.store(false, Ordering::Relaxed);
            let mut c = cells.cell(from, to);
            put_frame(&mut out[procs.holder(to)], &[from as u32, to as u32], |b| {
                wire::pack(&c, b)
            });
            c.clear();
        }
    }
    let sent = out.iter().map(|b| b.len() as u64).sum();
    for buf in procs.all_to_all(&out) {
        for ([from, to], body) in frames::<2>(&buf) {
            let (from, to) = (from as usize, to as usize);
            let msgs = wire::unpack(body)
                .expect("every process of a run is the same binary: it unpacks what they pack");
            cells.cell(from, to).extend(msgs);
            cells.full[from * n + to].store(true, Ordering::Release);
        }
    }
    sent
}

/// Appends a frame to `buf`: the words of `head`, the length of the body (u64), and the body
/// `write` appends (all little-endian).
fn put_frame(buf: &mut Vec<u8>, head: &[u32], write: impl FnOnce(&mut Vec<u8>)) {
    for w in head {
        buf.extend_from_slice(&w.to_le_bytes());
    }
    let at = buf.len();
    buf.extend_from_slice(&[0; 8]);
    write(buf);
    let len = (buf.len() - at - 8) as u64;
    buf[at..at + 8].copy_from_slice(&len.to_le_bytes());
}

/// The frames [`put_frame`] wrote into `buf` with `H` head words: each one's head and body.
fn frames<const H: usize>(mut buf: &[u8]) -> impl Iterator<Item = ([u32; H], &[u8])> {
    std::iter::from_fn(move || {
        if buf.is_empty() {
            return None;
        }
        let word = |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().expect("8 bytes"));
        let head: [u32; H] = std::array::from_fn(|k| {
            u32::from_le_bytes(buf[4 * k..4 * k + 4].try_into().expect("4 bytes"))
        });
        let len = word(4 * H) as usize;
        let (body, rest) = buf[4 * H + 8..].split_at(len);
        buf = rest;
        Some((head, body))
    })
}

/// Runs `f`, aborting the process if it panics: the other threads of the run would wait at
/// a barrier for ever (the panic's message is printed first).
fn or_abort<T>(f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => std::process::abort(),
    }
}

impl Windowed {
    /// The run of which `parts` are replicas (built alike, one per partition of `map`);
    /// `packed`: messages between partitions cross packed into bytes (`[run] exchange`).
    /// With `procs`, the run is spread over processes and `parts` are this process's
    /// partitions ([`Procs::holds`]), in order.
    pub fn new(
        mut parts: Vec<Sim>,
        map: PartitionMap,
        seed: u64,
        packed: bool,
        procs: Option<Arc<dyn Procs>>,
    ) -> Result<Windowed, String> {
        let ids: Vec<usize> = match &procs {
            Some(pr) => (0..map.parts).filter(|&p| pr.holds(p)).collect(),
            None => (0..map.parts).collect(),
        };
        assert_eq!(parts.len(), ids.len(), "one replica per partition held");
        if parts[0].retire.is_some() {
            return Err("run.partitions: partitioned runs keep every flow (no retiring)".into());
        }
        // The time series is taken by the driver from every partition's state at once.
        let sampler = parts[0].sampler.take();
        let owner = Arc::new(map.owner.clone());
        for (s, &i) in parts.iter_mut().zip(&ids) {
            s.make_replica(owner.clone(), i as u16, map.parts);
        }
        let conv = parts[0].convergence;
        let mut run_events: Vec<SimTime> = Vec::new();
        // Failures are scheduled as run events at setup; each is followed by a reroute.
        run_events.extend(parts[0].fail_at.iter().flat_map(|&t| [t, t + conv]));
        run_events.sort();
        run_events.dedup();
        Ok(Windowed {
            parts: parts.into_iter().map(Mutex::new).collect(),
            ids,
            procs,
            sampler,
            map,
            shuffle: RngStream::new(seed, "partition-order"),
            run_events,
            packed,
            stats: WindowStats::default(),
        })
    }

    /// Runs to the end on `threads` threads (at most one per partition); the reason it
    /// ended. One thread runs the partitions one after another, in a shuffled order each
    /// window; more run them at once, each thread its share of the partitions, meeting at a
    /// barrier after every window and after every exchange of messages.
    pub fn run(&mut self, threads: usize) -> EndReason {
        let n = self.map.parts;
        let local = self.parts.len();
        let threads = threads.clamp(1, local);
        self.stats.threads = threads;
        self.stats.busy_s = vec![0.0; threads];
        self.stats.barrier_s = vec![0.0; threads];
        let cells = Cells::new(n, self.packed);
        let procs = self.procs.as_deref().filter(|p| p.size() > 1);
        let ids = &self.ids[..];
        let mut state = Driver {
            sampler: &mut self.sampler,
            map: &self.map,
            run_events: &self.run_events,
            ids,
            local: (0..n).map(|p| ids.iter().position(|&i| i == p)).collect(),
            counts: vec![0; n],
            procs,
            windows: 0,
            coordinator_s: 0.0,
            events: 0,
            busiest: 0,
        };
        let parts = &self.parts;
        let mut messages = 0u64;
        let mut packed = 0u64;
        let mut shipped = 0u64;
        let reason = if threads == 1 {
            let mut order: Vec<usize> = (0..local).collect();
            let shuffle = &mut self.shuffle;
            let mut busy = 0.0;
            let r = state.drive(parts, |end, _, _| {
                let t0 = Instant::now();
                for i in (1..local).rev() {
                    let j = shuffle.below(i as u64 + 1) as usize;
                    order.swap(i, j);
                }
                for &i in &order {
                    messages += run_part(&parts[i], ids[i], end, &cells);
                }
                if let Some(pr) = procs {
                    shipped += exchange(pr, &cells, ids);
                }
                for (i, p) in parts.iter().enumerate() {
                    packed += deliver(p, ids[i], &cells);
                }
                busy += t0.elapsed().as_secs_f64();
            });
            self.stats.busy_s[0] = busy;
            r
        } else {
            // This thread is worker 0 and the coordinator; the others are spawned. Per window:
            // the coordinator sets the end (barrier A), every worker runs its partitions
            // (barrier B), the coordinator exchanges messages with the other processes, if
            // any (barrier B'), every worker delivers its partitions' messages (barrier C).
            let barrier = SpinBarrier::new(threads);
            let end = AtomicU64::new(0);
            let stop = AtomicBool::new(false);
            let (barrier, end, stop, cells) = (&barrier, &end, &stop, &cells);
            // Partitions are taken from a shared counter, each by whichever thread is free
            // (more partitions than threads balance the load window by window); who runs
            // which changes no output.
            let (next_run, next_deliver) = (&AtomicUsize::new(0), &AtomicUsize::new(0));
            let work = move |t: &mut WorkerTimes, coordinator: bool| {
                let t1 = Instant::now();
                let e = SimTime(end.load(Ordering::Acquire));
                loop {
                    let i = next_run.fetch_add(1, Ordering::Relaxed);
                    if i >= local {
                        break;
                    }
                    t.sent += run_part(&parts[i], ids[i], e, cells);
                }
                let t2 = Instant::now();
                barrier.wait();
                if let Some(pr) = procs {
                    if coordinator {
                        t.shipped += exchange(pr, cells, ids);
                    }
                    barrier.wait();
                }
                let t3 = Instant::now();
                loop {
                    let i = next_deliver.fetch_add(1, Ordering::Relaxed);
                    if i >= local {
                        break;
                    }
                    t.packed += deliver(&parts[i], ids[i], cells);
                }
                let t4 = Instant::now();
                barrier.wait();
                t.busy += (t2 - t1).as_secs_f64() + (t4 - t3).as_secs_f64();
                t.waited += (t3 - t2).as_secs_f64() + t4.elapsed().as_secs_f64();
            };
            let (reason, times) = std::thread::scope(|scope| {
                let workers: Vec<_> = (1..threads)
                    .map(|_| {
                        scope.spawn(move || {
                            or_abort(|| {
                                let mut t = WorkerTimes::default();
                                loop {
                                    let t0 = Instant::now();
                                    barrier.wait();
                                    t.waited += t0.elapsed().as_secs_f64();
                                    if stop.load(Ordering::Acquire) {
                                        return t;
                                    }
                                    work(&mut t, false);
                                }
                            })
                        })
                    })
                    .collect();
                let mut t0 = WorkerTimes::default();
                let mut solo = 0u64;
                let reason = or_abort(|| {
                    let r = state.drive(parts, |e, last, busy| {
                        if last < SOLO_EVENTS {
                            // Too little to share: the barriers would cost more than the
                            // work. This thread runs every partition with something due;
                            // the others wait.
                            let t1 = Instant::now();
                            for i in (0..local).filter(|&i| busy[i]) {
                                t0.sent += run_part(&parts[i], ids[i], e, cells);
                            }
                            if let Some(pr) = procs {
                                t0.shipped += exchange(pr, cells, ids);
                            }
                            for (i, p) in parts.iter().enumerate() {
                                t0.packed += deliver(p, ids[i], cells);
                            }
                            t0.busy += t1.elapsed().as_secs_f64();
                            solo += 1;
                            return;
                        }
                        end.store(e.0, Ordering::Release);
                        next_run.store(0, Ordering::Relaxed);
                        next_deliver.store(0, Ordering::Relaxed);
                        barrier.wait();
                        work(&mut t0, true);
                    });
                    stop.store(true, Ordering::Release);
                    barrier.wait();
                    r
                });
                t0.solo = solo;
                let mut times = vec![t0];
                times.extend(
                    workers
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|_| std::process::abort())),
                );
                (reason, times)
            });
            self.stats.solo_windows = times[0].solo;
            for (w, t) in times.iter().enumerate() {
                self.stats.busy_s[w] = t.busy;
                self.stats.barrier_s[w] = t.waited;
                messages += t.sent;
                packed += t.packed;
                shipped += t.shipped;
            }
            reason
        };
        self.stats.windows = state.windows;
        self.stats.events = state.events;
        self.stats.partitions = n;
        self.stats.busiest_events = state.busiest;
        self.stats.coordinator_s = state.coordinator_s;
        self.stats.messages = messages;
        self.stats.packed_bytes = packed;
        self.stats.shipped_bytes = shipped;
        reason
    }

    /// The partitions merged into one run: what the unpartitioned run would hold at the end.
    /// `fresh` builds a replica alike (not run): every partition not in this process, and
    /// when messages cross as bytes every partition but the first, hands its end-of-run
    /// state over as bytes (`Sim::export_part`) to a fresh replica, which stands for it in
    /// the merge. On several processes, process 0 merges (the others return None).
    pub fn into_sim(self, fresh: impl Fn() -> Result<Sim, String>) -> Result<Option<Sim>, String> {
        let Windowed {
            parts,
            ids,
            procs,
            map,
            sampler,
            packed,
            ..
        } = self;
        let n = map.parts;
        let owner = Arc::new(map.owner.clone());
        let stand_in = |i: usize, bytes: &[u8]| -> Result<Sim, String> {
            let mut f = fresh()?;
            f.make_replica(owner.clone(), i as u16, n);
            f.import_part(bytes)?;
            Ok(f)
        };
        let mut held: Vec<Option<Sim>> = (0..n).map(|_| None).collect();
        for (m, i) in parts.into_iter().zip(ids) {
            held[i] = Some(m.into_inner().unwrap_or_else(|e| e.into_inner()));
        }
        match procs.as_deref().filter(|p| p.size() > 1) {
            Some(pr) => {
                // A frame per partition: its number, its state.
                let mut mine = Vec::new();
                if pr.rank() != 0 {
                    for (i, s) in held.iter_mut().enumerate() {
                        if let Some(s) = s {
                            let b = s.export_part();
                            put_frame(&mut mine, &[i as u32], |m| m.extend_from_slice(&b));
                        }
                    }
                }
                let Some(got) = pr.gather(&mine) else {
                    return Ok(None);
                };
                for buf in got {
                    for ([i], state) in frames::<1>(&buf) {
                        held[i as usize] = Some(stand_in(i as usize, state)?);
                    }
                }
            }
            None if packed => {
                for (i, s) in held.iter_mut().enumerate().skip(1) {
                    let bytes = s.as_mut().expect("every partition held").export_part();
                    *s = Some(stand_in(i, &bytes)?);
                }
            }
            None => {}
        }
        let parts = held
            .into_iter()
            .map(|s| s.ok_or("a partition's end-of-run state did not arrive"))
            .collect::<Result<Vec<Sim>, _>>()?;
        let mut sim = merge(parts, &map);
        sim.sample_at = sampler.as_ref().map_or(SimTime::MAX, |s| s.next);
        sim.sampler = sampler;
        Ok(Some(sim))
    }
}

/// The coordinator's state: what it decides between windows.
struct Driver<'a> {
    sampler: &'a mut Option<Box<timeseries::Sampler>>,
    map: &'a PartitionMap,
    run_events: &'a [SimTime],
    /// The partitions this process holds (`parts[k]` is partition `ids[k]`).
    ids: &'a [usize],
    /// Per partition: its index in `parts`, if this process holds it.
    local: Vec<Option<usize>>,
    /// Every partition's event count (reused window after window).
    counts: Vec<u64>,
    /// The other processes (MPI), if any: the driver in each decides alike.
    procs: Option<&'a dyn Procs>,
    windows: u64,
    coordinator_s: f64,
    events: u64,
    /// Summed over windows: the busiest partition's events.
    busiest: u64,
}

impl Driver<'_> {
    /// Runs windows until the run ends: between two windows (every partition idle), decides
    /// whether it has ended, releases the flows due, takes samples, and chooses the next
    /// window's end; `step(end)` runs every partition up to `end` and exchanges messages.
    fn drive(
        &mut self,
        parts: &[Mutex<Sim>],
        mut step: impl FnMut(SimTime, u64, &[bool]),
    ) -> EndReason {
        let mut next_grid = SimTime::ZERO;
        let mut events = 0;
        let n = self.map.parts;
        // Every partition's next due time (this process's, then every process's); then
        // whether each of this process's has anything due in the window.
        let mut due: Vec<u64> = vec![u64::MAX; n];
        let mut busy: Vec<bool> = vec![true; parts.len()];
        // Each partition's events so far (for the busiest partition of each window).
        let mut popped: Vec<u64> = vec![0; n];
        let reason = loop {
            let t0 = Instant::now();
            let mut all: Vec<MutexGuard<'_, Sim>> = parts.iter().map(lock).collect();
            let stop = all[0].stop_time;
            due.fill(u64::MAX);
            for (p, &i) in all.iter_mut().zip(self.ids) {
                due[i] = p.next_due().unwrap_or(SimTime::MAX).0;
            }
            if let Some(pr) = self.procs {
                pr.min(&mut due);
            }
            let next = due
                .iter()
                .map(|&t| SimTime(t))
                .min()
                .filter(|&t| t < SimTime::MAX);
            let at = next.unwrap_or(SimTime::MAX);
            if at >= next_grid || at > stop {
                if let Some(r) = self.grid_end(&mut all) {
                    break r;
                }
                let Some(t) = next else {
                    break EndReason::Idle;
                };
                if t > stop {
                    for p in all.iter_mut() {
                        p.now = stop;
                    }
                    break if t == SimTime::MAX {
                        EndReason::TimeLimit
                    } else {
                        EndReason::StopTime
                    };
                }
                next_grid = all[0].grid_after(t);
                for p in all.iter_mut() {
                    p.next_grid = next_grid;
                    if !p.draining {
                        p.release_due(next_grid);
                    }
                }
                continue;
            }
            if let Some(sp) = self.sampler.as_mut() {
                while at >= sp.next {
                    sample(&all, &self.map.owner, &self.local, self.procs, sp);
                }
            }
            let mut end = (at + self.map.lookahead).min(next_grid);
            if let Some(sp) = self.sampler.as_ref() {
                end = end.min(sp.next);
            }
            if stop < SimTime::MAX {
                end = end.min(stop + SimTime(1));
            }
            if let Some(&r) = self.run_events.iter().find(|&&r| r > at) {
                end = end.min(r);
            }
            // Events of the last window (the grid points between windows handle none).
            let (now_events, most) = self.count_window(&all, &mut popped);
            self.busiest += most;
            let last = now_events - events;
            events = now_events;
            drop(all);
            for (b, &i) in busy.iter_mut().zip(self.ids) {
                *b = SimTime(due[i]) < end;
            }
            self.coordinator_s += t0.elapsed().as_secs_f64();
            step(end, last, &busy);
            self.windows += 1;
        };
        let mut all: Vec<MutexGuard<'_, Sim>> = parts.iter().map(lock).collect();
        let (total, most) = self.count_window(&all, &mut popped);
        self.events = total;
        self.busiest += most;
        let mut now = [u64::MAX - all.iter().map(|p| p.now.0).max().expect("a partition")];
        if let Some(pr) = self.procs {
            pr.min(&mut now);
        }
        let now = SimTime(u64::MAX - now[0]);
        for p in all.iter_mut() {
            p.now = now;
            for port in p.net.ports.iter_mut() {
                port.close_pauses(now);
            }
            p.ended = Some(reason);
        }
        reason
    }

    /// Every partition's events so far, and the most any one handled since `seen` (each
    /// partition's count at the last call, brought up to date).
    fn count_window(&mut self, parts: &[MutexGuard<'_, Sim>], seen: &mut [u64]) -> (u64, u64) {
        let now = &mut self.counts;
        now.fill(0);
        for (p, &i) in parts.iter().zip(self.ids) {
            now[i] = p.ev.popped();
        }
        if let Some(pr) = self.procs {
            pr.sum(now);
        }
        let (mut total, mut most) = (0, 0);
        for (&e, seen) in now.iter().zip(seen) {
            total += e;
            most = most.max(e - *seen);
            *seen = e;
        }
        (total, most)
    }

    /// At a grid point: whether the run has ended, from every partition's counts (the
    /// unpartitioned kernel's `grid_end` over the whole run).
    fn grid_end(&self, parts: &mut [MutexGuard<'_, Sim>]) -> Option<EndReason> {
        let mut counts = [0u64; 4];
        for p in parts.iter() {
            counts[0] += p.finished as u64;
            counts[1] += p.started as u64;
            counts[2] += p.tag_finished as u64;
            counts[3] += p.deps.calcs_done as u64;
        }
        if let Some(pr) = self.procs {
            pr.sum(&mut counts);
        }
        let [finished, started, tag_finished, calcs_done] = counts.map(|c| c as usize);
        if finished == parts[0].total && calcs_done == parts[0].deps.calcs.len() {
            return Some(EndReason::AllFinished);
        }
        if parts[0].end_tag.is_some() && tag_finished == parts[0].tag_total {
            for p in parts.iter_mut() {
                p.draining = true;
            }
            if finished == started {
                return Some(EndReason::TagFinished);
            }
        }
        if parts[0].failing {
            let mut pending = [parts.iter().any(|p| p.stranded_pending(finished)) as u64];
            if let Some(pr) = self.procs {
                pr.sum(&mut pending);
            }
            if pending[0] > 0 {
                return None;
            }
            return self.unreachable(parts);
        }
        None
    }

    /// With failures, once nothing is pending: whether every unit started (at its source)
    /// and not finished (at either end: UDP finishes at its receiver) is between hosts that
    /// cannot reach each other. Each process marks the units whose ends its partitions hold
    /// (a bit per unit: open at the source, finished at the destination; the bits of
    /// different processes never overlap, so a sum joins them).
    fn unreachable(&self, parts: &[MutexGuard<'_, Sim>]) -> Option<EndReason> {
        let (owner, local) = (&self.map.owner, &self.local);
        let msg_units = parts[0].msg_units;
        let msgs = parts[0].transport.messages().unwrap_or(&[]);
        // Each unit's hosts (the same in every replica).
        let ends = |u: usize| match msg_units {
            true => (msgs[u].src, msgs[u].dst),
            false => (parts[0].flows[u].src, parts[0].flows[u].dst),
        };
        let n = if msg_units {
            msgs.len()
        } else {
            parts[0].flows.len()
        };
        let words = n.div_ceil(64);
        let mut bits = vec![0u64; 2 * words];
        for u in 0..n {
            let (src, dst) = ends(u);
            if let Some(k) = local[owner[src as usize] as usize] {
                let p = &parts[k];
                let open = match msg_units {
                    true => {
                        let snd = &p.transport.messages().expect("RDMA")[u];
                        let o = msgs[u].order as usize;
                        p.deps.message_started(o, p.next_start, p.n_static) && snd.finish.is_none()
                    }
                    false => p.flows[u].started && p.flows[u].finish.is_none(),
                };
                if open {
                    bits[u / 64] |= 1 << (u % 64);
                }
            }
            if !msg_units
                && let Some(k) = local[owner[dst as usize] as usize]
                && parts[k].flows[u].finish.is_some()
            {
                bits[words + u / 64] |= 1 << (u % 64);
            }
        }
        if let Some(pr) = self.procs {
            pr.sum(&mut bits);
        }
        let mut reach = std::collections::HashMap::new();
        let mut any = false;
        for u in 0..n {
            let open = bits[u / 64] >> (u % 64) & 1 == 1;
            let done = bits[words + u / 64] >> (u % 64) & 1 == 1;
            if !open || done {
                continue;
            }
            // Routes and link states are the same in every partition.
            let (src, dst) = ends(u);
            let ok = *reach
                .entry((src, dst))
                .or_insert_with(|| parts[0].net.reachable(src, dst));
            if ok {
                return None;
            }
            any = true;
        }
        any.then_some(EndReason::Unreachable)
    }
}

/// Flow `f`'s time-series sample, from the partition that holds its sender (None: not held
/// here, not created yet, or nothing to sample).
fn held_flow(parts: &[MutexGuard<'_, Sim>], f: u32) -> Option<crate::transport::FlowSample> {
    parts.iter().find_map(|s| match s.flows.get(f as usize) {
        Some(fl) if !fl.is_placeholder() && s.owns_host(fl.src) => s.transport.sample(FlowId(f)),
        _ => None,
    })
}

/// Takes the time-series sample due, each port's state from its node's partition and each
/// flow's from its sender's (the unpartitioned kernel's `take_sample` over the whole run;
/// `local`: each partition's index in `parts`, if held here). On several processes each
/// sends process 0 the sampled ports and flows its partitions hold, and process 0 samples
/// from those; the others advance their samplers alike (from their own, partial state: what
/// they sample is never written).
fn sample(
    parts: &[MutexGuard<'_, Sim>],
    owner: &[u16],
    local: &[Option<usize>],
    procs: Option<&dyn Procs>,
    sp: &mut timeseries::Sampler,
) {
    let held_port = |p: usize| {
        let k = owner[parts[0].net.ports[p].node.idx()] as usize;
        local[k].map(|l| &parts[l].net.ports[p])
    };
    let Some(pr) = procs else {
        sample_state(
            sp,
            |p| held_port(p).expect("one process holds every partition"),
            |f| held_flow(parts, f),
        );
        return;
    };
    let ports: Vec<(u32, &Port)> = (sp.ports.iter())
        .filter_map(|&p| Some((p as u32, held_port(p)?)))
        .collect();
    let flows: Vec<(u32, crate::transport::FlowSample)> = (sp.flows.iter())
        .filter_map(|&f| Some((f, held_flow(parts, f)?)))
        .collect();
    // MessagePack: a port holds configuration enums (see `state`).
    let mine = rmp_serde::to_vec(&(&ports, &flows)).expect("a sample packs");
    let Some(all) = pr.gather(&mine) else {
        sample_state(sp, |p| &parts[0].net.ports[p], |_| None);
        return;
    };
    let mut port_of = std::collections::HashMap::new();
    let mut flow_of = std::collections::HashMap::new();
    for b in all {
        type Sample = (Vec<(u32, Port)>, Vec<(u32, crate::transport::FlowSample)>);
        let (p, f): Sample = rmp_serde::from_slice(&b)
            .expect("every process of a run is the same binary: it unpacks what they pack");
        port_of.extend(p);
        flow_of.extend(f);
    }
    sample_state(sp, |p| &port_of[&(p as u32)], |f| flow_of.get(&f).copied());
}
