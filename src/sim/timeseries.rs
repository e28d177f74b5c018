//! Time series: opt-in, bounded sampling of queue, pause, link and flow state.
//!
//! What it models: the state of the selected ports and flows at every multiple of `interval`
//! inside the window `[start, end]`, taken just before the events of that instant run (the
//! state is constant between events, so a sample is exact, not interpolated). Three tidy CSV
//! tables come out of a run:
//!
//! - `ts_queues.csv`: `time_ps,port,node,prio,queue_bytes,paused` for every egress queue;
//! - `ts_links.csv`: `time_ps,port,node,tx_bytes,utilization`, the bytes that started
//!   transmission on the port during the interval ending at `time_ps` and their share of the
//!   link's capacity;
//! - `ts_flows.csv`: `time_ps,flow,cwnd_pkts,alpha,priority,rate_bps` for the selected flows
//!   (TCP family: window in segments, DCTCP alpha, PDTCP/D2TCP penalty exponent; RDMA queue
//!   pairs: DCQCN rate and alpha; MP-RDMA: window), empty cells where a field does not apply.
//!
//! Their rows are numbers only and written directly: no field can hold a separator.
//!
//! With `on_change` (the default) a row is written only when its values differ from the last
//! row written for the same series, so idle queues and links cost nothing; every series' first
//! sample is always written. `max_rows` bounds the output: sampling stops there and the
//! manifest says it was truncated.
//!
//! What it does not do: sample between the interval points (a queue's peak between two
//! samples shows in `ports.csv`'s `max_queue_bytes`, not here), or sample host-internal state
//! other than the listed transport variables.

use crate::units::{Bytes, SimTime};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// `[timeseries]`: what to sample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeSeriesConfig {
    /// Sampling interval, 10ns..=1s.
    pub interval: SimTime,
    /// Window start. Default 0.
    #[serde(default)]
    pub start: SimTime,
    /// Window end. Default: the end of the run.
    #[serde(default)]
    pub end: Option<SimTime>,
    /// Ports of these nodes (the `node_id` of `ports.csv`). Default: every switch.
    #[serde(default)]
    pub nodes: Option<Vec<u32>>,
    /// Flows (or RDMA queue pairs) to sample, by id. Default: none.
    #[serde(default)]
    pub flows: Vec<u32>,
    /// Write a row only when the series' values changed. Default true.
    #[serde(default = "d_true")]
    pub on_change: bool,
    /// Rows in all tables together, 1000..=100000000. Default 1000000.
    #[serde(default = "d_rows")]
    pub max_rows: u64,
}

fn d_true() -> bool {
    true
}
fn d_rows() -> u64 {
    1_000_000
}

impl TimeSeriesConfig {
    /// Checks the fields; errors name the key.
    pub fn validate(&self, n_nodes: usize) -> Result<(), (String, String)> {
        if !(SimTime::from_ns(10)..=SimTime::from_ms(1000)).contains(&self.interval) {
            return Err((
                "timeseries.interval".into(),
                format!("{} is out of range 10ns..=1s", self.interval),
            ));
        }
        if let Some(e) = self.end
            && e <= self.start
        {
            return Err((
                "timeseries.end".into(),
                format!("must be after timeseries.start ({})", self.start),
            ));
        }
        if let Some(n) = self
            .nodes
            .iter()
            .flatten()
            .find(|&&n| n as usize >= n_nodes)
        {
            return Err((
                "timeseries.nodes".into(),
                format!(
                    "node {n} does not exist (the topology has nodes 0..={})",
                    n_nodes - 1
                ),
            ));
        }
        if !(1000..=100_000_000).contains(&self.max_rows) {
            return Err((
                "timeseries.max_rows".into(),
                format!("{} is out of range 1000..=100000000", self.max_rows),
            ));
        }
        Ok(())
    }
}

pub use crate::transport::FlowSample;

/// The sampler of a run.
#[derive(Debug)]
pub struct Sampler {
    pub cfg: TimeSeriesConfig,
    /// Next sampling time (`SimTime::MAX` when done).
    pub next: SimTime,
    end: SimTime,
    /// Selected ports (indices) and flows.
    pub ports: Vec<usize>,
    pub flows: Vec<u32>,
    nq: usize,
    last_queue: Vec<Option<(u64, bool)>>,
    last_tx: Vec<u64>,
    last_busy: Vec<u64>,
    last_link: Vec<Option<(u64, u64)>>,
    last_flow: Vec<Option<FlowSample>>,
    prev_t: SimTime,
    pub queues: String,
    pub links: String,
    pub flows_csv: String,
    rows: u64,
    pub truncated: bool,
}

impl Sampler {
    /// `ports`: the selected port indices; `nq`: queues per port.
    pub fn new(cfg: &TimeSeriesConfig, ports: Vec<usize>, nq: usize) -> Self {
        let first = cfg.start.0.div_ceil(cfg.interval.0) * cfg.interval.0;
        Sampler {
            next: SimTime(first),
            end: cfg.end.unwrap_or(SimTime::MAX),
            last_queue: vec![None; ports.len() * nq],
            last_tx: vec![0; ports.len()],
            last_busy: vec![0; ports.len()],
            last_link: vec![None; ports.len()],
            last_flow: vec![None; cfg.flows.len()],
            flows: cfg.flows.clone(),
            ports,
            nq,
            prev_t: SimTime(first.saturating_sub(cfg.interval.0)),
            queues: String::from("time_ps,port,node,prio,queue_bytes,paused\n"),
            links: String::from("time_ps,port,node,tx_bytes,utilization\n"),
            flows_csv: String::from("time_ps,flow,cwnd_pkts,alpha,priority,rate_bps\n"),
            rows: 0,
            truncated: false,
            cfg: cfg.clone(),
        }
    }

    fn room(&mut self) -> bool {
        if self.rows >= self.cfg.max_rows {
            self.truncated = true;
            self.next = SimTime::MAX;
            return false;
        }
        self.rows += 1;
        true
    }

    /// Records a port's queue `q` state (slot `i` in the selection).
    pub fn queue(
        &mut self,
        t: SimTime,
        i: usize,
        q: usize,
        port: usize,
        node: u32,
        v: (Bytes, bool),
    ) {
        let key = (v.0.0, v.1);
        let slot = i * self.nq + q;
        if self.cfg.on_change && self.last_queue[slot] == Some(key) {
            return;
        }
        if !self.room() {
            return;
        }
        self.last_queue[slot] = Some(key);
        let _ = writeln!(
            self.queues,
            "{},{port},{node},{q},{},{}",
            t.0, key.0, key.1 as u8
        );
    }

    /// Records a port's counters (slot `i`) at `t`: bytes that started transmission so far,
    /// and time spent serializing up to `t` (ps). Utilization is the busy share of the
    /// interval, so it never exceeds 1.
    pub fn link(
        &mut self,
        t: SimTime,
        i: usize,
        port: usize,
        node: u32,
        tx_total: u64,
        busy_total: u64,
    ) {
        let bytes = tx_total - self.last_tx[i];
        let busy = busy_total - self.last_busy[i];
        self.last_tx[i] = tx_total;
        self.last_busy[i] = busy_total;
        if self.cfg.on_change && self.last_link[i] == Some((bytes, busy)) {
            return;
        }
        if !self.room() {
            return;
        }
        self.last_link[i] = Some((bytes, busy));
        let dt = (t.0 - self.prev_t.0).max(1);
        let util = busy as f64 / dt as f64;
        let _ = writeln!(self.links, "{},{port},{node},{bytes},{util:.6}", t.0);
    }

    /// Records flow slot `i`'s state.
    pub fn flow(&mut self, t: SimTime, i: usize, s: FlowSample) {
        if self.cfg.on_change && self.last_flow[i] == Some(s) {
            return;
        }
        if !self.room() {
            return;
        }
        self.last_flow[i] = Some(s);
        let f = |x: Option<f64>| x.map(|v| format!("{v:.6}")).unwrap_or_default();
        let _ = writeln!(
            self.flows_csv,
            "{},{},{},{},{},{}",
            t.0,
            self.flows[i],
            f(s.cwnd_pkts),
            f(s.alpha),
            f(s.priority),
            f(s.rate_bps)
        );
    }

    /// After a sample at `t`: schedules the next one.
    pub fn advance(&mut self, t: SimTime) {
        self.prev_t = t;
        let n = t + self.cfg.interval;
        self.next = if n > self.end || self.truncated {
            SimTime::MAX
        } else {
            n
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(on_change: bool, max_rows: u64) -> TimeSeriesConfig {
        TimeSeriesConfig {
            interval: SimTime::from_us(1),
            start: SimTime::from_ns(1500),
            end: Some(SimTime::from_us(4)),
            nodes: None,
            flows: vec![3],
            on_change,
            max_rows,
        }
    }

    #[test]
    fn schedule_starts_on_the_grid_and_stops_at_the_end() {
        let mut s = Sampler::new(&cfg(true, 1000), vec![0], 1);
        assert_eq!(s.next, SimTime::from_us(2));
        s.advance(SimTime::from_us(2));
        s.advance(SimTime::from_us(3));
        assert_eq!(s.next, SimTime::from_us(4));
        s.advance(SimTime::from_us(4));
        assert_eq!(s.next, SimTime::MAX);
    }

    #[test]
    fn on_change_decimates_and_utilization_is_exact() {
        let mut s = Sampler::new(&cfg(true, 1000), vec![5], 1);
        let t = SimTime::from_us(2);
        s.queue(t, 0, 0, 5, 9, (Bytes(0), false));
        s.queue(t + SimTime::from_us(1), 0, 0, 5, 9, (Bytes(0), false));
        s.queue(t + SimTime::from_us(2), 0, 0, 5, 9, (Bytes(1500), true));
        assert_eq!(s.queues.lines().count(), 3, "{}", s.queues);
        // The port serialized for the whole 1 us interval: full utilisation, whatever the
        // bytes that started in it (here 1250 + a packet that runs on into the next one).
        s.link(t, 0, 5, 9, 2750, 1_000_000);
        assert!(s.links.lines().nth(1).unwrap().ends_with(",2750,1.000000"));
        let mut all = Sampler::new(&cfg(false, 1000), vec![5], 1);
        all.queue(t, 0, 0, 5, 9, (Bytes(0), false));
        all.queue(t, 0, 0, 5, 9, (Bytes(0), false));
        assert_eq!(all.queues.lines().count(), 3);
    }

    #[test]
    fn max_rows_truncates() {
        let mut s = Sampler::new(&cfg(false, 2), vec![5], 1);
        for k in 0..5 {
            s.flow(SimTime::from_us(2 + k), 0, FlowSample::default());
        }
        assert_eq!(s.flows_csv.lines().count(), 3);
        assert!(s.truncated);
        assert_eq!(s.next, SimTime::MAX);
    }
}
